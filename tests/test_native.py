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
    assert {"csrc/lib/scan.c", "csrc/lib/markers.c"} <= set(stateful)
    assert {path: mods for path, mods in stateful.items() if len(mods) > 1} == {}


def test_no_c_file_includes_another():
    lib = os.path.join(ROOT, "csrc", "lib")
    offenders = []
    for name in sorted(os.listdir(lib)):
        with open(os.path.join(lib, name), encoding="utf-8") as f:
            offenders += [f"{name}: {line.strip()}" for line in f if line.startswith("#include") and '.c"' in line]
    assert offenders == []
