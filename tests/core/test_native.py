"""The native seam: every compiled module built when CI demands it, each plays a role, and
the whole compiled core can be switched off."""
import glob
import os

import pytest

from functionalbpe.core import _native
from functionalbpe.core._native import NATIVE, ROLES

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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
    from functionalbpe.text.patterns import PATTERNS

    assert NATIVE.scanner.JOINED == _native.JOINED
    for name in PATTERNS:
        assert NATIVE.scanner_for(_native.Scanner(name)) is NATIVE.scanner
        assert NATIVE.encoder_scanner(_native.Scanner(name)) == name
        assert NATIVE.scanner_for(_native.Scanner(name, _native.JOIN_RUNS)) is NATIVE.scanner
        assert NATIVE.encoder_scanner(_native.Scanner(name, _native.JOIN_RUNS)) == name + "+joined"
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



def _module_sources():
    """{module: [C files]} from the ``# distutils: sources`` header of each csrc/*.pyx."""
    sources = {}
    for name in MODULES:
        with open(os.path.join(ROOT, "csrc", name + ".pyx"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("# distutils: sources ="):
                    sources[name] = line.split("=", 1)[1].split()
    return sources


def _holds_state(path):
    """Whether a C file has a file-scope variable of its own (a table installed once)."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return any(
            line.startswith("static ") and not line.startswith(("static inline", "static const"))
            and "(" not in line
            for line in f
        )


def test_state_of_the_c_core_is_compiled_into_one_module():
    # The scanner's 1.1 MB class table and the marker scheme's tables are installed once per
    # process: a second copy in another extension would be a second table to fill and keep.
    owners = {}
    for module, files in _module_sources().items():
        for path in files:
            owners.setdefault(path, []).append(module)
    stateful = {path: mods for path, mods in owners.items() if _holds_state(path)}
    assert {"csrc/lib/scan/scan.c", "csrc/lib/scan/markers.c"} <= set(stateful)
    assert {path: mods for path, mods in stateful.items() if len(mods) > 1} == {}


def test_no_c_file_includes_another():
    lib = os.path.join(ROOT, "csrc", "lib")
    offenders = []
    for folder, _, names in os.walk(lib):
        for name in sorted(names):
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                offenders += [f"{os.path.relpath(path, lib)}: {line.strip()}" for line in f
                              if line.startswith("#include") and '.c"' in line]
    assert offenders == []


@pytest.mark.parametrize("pure, warned", [("", True), ("1", False)])
def test_a_missing_compiled_core_is_said_once_at_import(pure, warned):
    import subprocess
    import sys

    code = ("import sys, warnings; warnings.simplefilter('always'); sys.modules['functionalbpe._trainer'] = None\n"
            "import functionalbpe as fb; fb.train(['ab ab'], vocab_size=257, progress=False)\n"
            "from functionalbpe.core._native import NATIVE; print(NATIVE.describe())")
    env = {**os.environ, "FUNCTIONALBPE_PUREPYTHON": pure}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("compiled core did not load") == (1 if warned else 0), out.stderr
    assert out.stdout.startswith("pure Python")
