"""The source distribution carries every file the compiled core is built from."""
from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


def test_manifest_includes_every_source_of_the_compiled_core():
    manifest = ROOT / "MANIFEST.in"
    if not manifest.exists():
        pytest.skip("not a source tree")
    patterns = []
    for line in manifest.read_text().splitlines():
        words = line.split()
        if words[:2] == ["recursive-include", "csrc"]:
            patterns += words[2:]
    generated = {p.with_suffix(".c").name for p in (ROOT / "csrc").glob("*.pyx")}
    missing = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "csrc").rglob("*")
        if path.is_file()
        and path.name not in generated  # Cython's output, rebuilt from the .pyx
        and path.suffix not in {".html", ".so", ".o", ".pyc"}  # annotations, build products
        and "__pycache__" not in path.parts
        and not any(fnmatch.fnmatch(path.name, p) for p in patterns)
    ]
    assert not missing, f"add these to MANIFEST.in, or an sdist cannot build: {missing}"
