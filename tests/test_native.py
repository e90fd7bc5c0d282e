"""The compiled modules: built when CI demands it, and switchable off."""
import glob
import os

import pytest

from functionalbpe.core import _native

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(ROOT, "csrc", "*.pyx")))


@pytest.mark.skipif(os.environ.get("FUNCTIONALBPE_REQUIRE_NATIVE") != "1", reason="set FUNCTIONALBPE_REQUIRE_NATIVE=1 (CI does)")
def test_every_extension_module_is_built_and_loads():
    assert MODULES, "csrc/ holds no .pyx module"
    missing = [m for m in MODULES if _native.native(m) is None]
    assert not missing, f"not built: {missing}"


def test_pure_python_switch(monkeypatch):
    monkeypatch.setenv("FUNCTIONALBPE_PUREPYTHON", "1")
    assert all(_native.native(m) is None for m in MODULES + ["_anything"])
