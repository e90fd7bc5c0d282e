"""The package is typed for its users (PEP 561): ``mypy --strict`` passes a script that uses
the public API and catches each wrong type in another. Skipped without mypy; the cache in
.mypy_cache keeps later runs fast (the first one checks the package's sources)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
HERE = Path(__file__).resolve().parent / "typing_scripts"


def mypy(*paths: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy")
    # silent: the package's own modules are read for their types, not reported on.
    command = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
               "--cache-dir", str(ROOT / ".mypy_cache"), *map(str, paths)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_the_package_says_it_is_typed():
    assert (ROOT / "functionalbpe" / "py.typed").is_file()
    assert 'functionalbpe = ["py.typed"]' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_mypy_strict_passes_a_script_of_the_api_and_catches_wrong_types():
    good, bad = HERE / "uses_the_api.py", HERE / "wrong_types.py"
    result = mypy(good, bad)
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert not [e for e in errors if good.name in e], result.stdout
    marked = [n for n, line in enumerate(bad.read_text(encoding="utf-8").splitlines(), 1) if "# error" in line]
    caught = sorted({int(e.split(":")[1]) for e in errors if bad.name in e})
    assert caught == marked, result.stdout
