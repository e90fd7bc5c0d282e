"""The native seam: every compiled module built when CI demands it, each plays a role, and
the whole compiled core can be switched off."""
import glob
import os

import pytest

from functionalbpe.core import _native
from functionalbpe.core._native import NATIVE, ROLES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(ROOT, "csrc", "*.pyx")))


def test_every_extension_module_plays_a_role():
    # A module built from csrc/ that no role names would never be used; a role whose module
    # is not built from csrc/ would never be present.
    assert MODULES, "csrc/ holds no .pyx module"
    assert sorted(set(ROLES.values())) == MODULES


@pytest.mark.skipif(os.environ.get("FUNCTIONALBPE_REQUIRE_NATIVE") != "1", reason="set FUNCTIONALBPE_REQUIRE_NATIVE=1 (CI does)")
def test_every_extension_module_is_built_and_loads():
    assert NATIVE.present() == {role: True for role in ROLES}
    assert NATIVE.trainer is not None and NATIVE.encoder is not None
    assert NATIVE.scanner is not None and NATIVE.describer is not None


def test_pure_python_switch_is_read_at_call_time(monkeypatch):
    monkeypatch.setenv("FUNCTIONALBPE_PUREPYTHON", "1")
    assert NATIVE.present() == {role: False for role in ROLES}
    assert NATIVE.trainer is None and NATIVE.encoder is None and NATIVE.scanner is None and NATIVE.describer is None
    assert NATIVE.scanner_for(_native.Scanner("gpt4")) is None
    assert NATIVE.encoder_scanner(_native.Scanner("gpt4")) is None
    monkeypatch.setenv("FUNCTIONALBPE_PUREPYTHON", "0")  # "0" is off, as unset
    assert NATIVE.switched_off() is False


@pytest.mark.skipif(NATIVE.scanner is None or NATIVE.encoder is None, reason="the compiled core is not built")
def test_scanner_names_are_the_modules_own():
    for name in ("gpt2", "gpt4", "o200k", "llama3", "functionalizer"):
        assert NATIVE.scanner_for(_native.Scanner(name)) is NATIVE.scanner
        assert NATIVE.encoder_scanner(_native.Scanner(name)) == name
    assert NATIVE.scanner_for(_native.Scanner("custom")) is None
    for bits in range(8):
        assert NATIVE.encoder_scanner(_native.Scanner("markers", bits)) == "markers" + _native.markers_variant(bits)


def test_one_thread_checker():
    check = _native.thread_count
    assert (check(None), check(None, 8), check(None, 4096), check(3), check(3, 8)) == (None, 8, 1024, 3, 3)
    for bad in (0, -1, _native.MAX_THREADS + 1, True, 2.5, "4"):
        with pytest.raises(ValueError, match="threads"):
            check(bad)
    with pytest.raises(ValueError, match="num_threads"):
        check(0, name="num_threads")
