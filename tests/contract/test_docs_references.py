"""Every reference in the docs resolves: the paths of files in the repository, the dotted
names of modules and their members, and the relative links of README.md, docs/*.md and the
command's help texts. A renamed module or a moved doc fails here, naming the reference."""
from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "csrc" / "README.md"]
TOP = ("functionalbpe/", "csrc/", "docs/", "benchmarks/", "experiments/", "tests/", ".ci/")
# A path as docs write it: one of the top folders, then path characters, ending in a name
# with a suffix or a slash (a folder). Braces list alternatives: csrc/lib/count/{count,functional}.c.
PATH = re.compile(r"(?<![\w./-])((?:\.\./)?(?:" + "|".join(map(re.escape, TOP)) + r")(?:[\w./{},*-]*(?:\.[\w}]+|/))?)")
DOTTED = re.compile(r"(?<![\w.])(functionalbpe(?:\.\w+)+)")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def expand(path: str) -> List[str]:
    """``a/{b,c}.py`` as ``a/b.py`` and ``a/c.py``."""
    found = re.search(r"\{([^}]*)\}", path)
    if not found:
        return [path]
    return [p for part in found.group(1).split(",") for p in expand(path[: found.start()] + part + path[found.end():])]


def exists(path: str, base: Path) -> bool:
    if path.startswith("../shared/"):
        return True  # beside the repository, not in it; checked where it is used
    for candidate in expand(path.rstrip(".,")):
        if "*" in candidate:
            if not list(ROOT.glob(candidate)):
                return False
        elif not ((ROOT / candidate).exists() or (base / candidate).exists()):
            return False
    return True


def resolves(name: str) -> bool:
    """``functionalbpe.a.b.c``: the longest importable module prefix, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            value = importlib.import_module(module)
        except ImportError as exc:
            if exc.name and not exc.name.startswith("functionalbpe"):
                # The module is there but needs an optional package that is not installed
                # (dask for functionalbpe.dask): its names cannot be looked at here.
                try:
                    if importlib.util.find_spec(module):
                        return True
                except ImportError:  # its package needs it too: a shorter name is looked at
                    pass
            continue
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def help_texts() -> str:
    from functionalbpe.cli import build_parser

    parser = build_parser()
    texts = [parser.format_help()]
    for action in parser._subparsers._group_actions:  # argparse keeps the subcommands here
        for sub in action.choices.values():
            texts.append(sub.format_help())
    return "\n".join(texts)


def references() -> Iterator[Tuple[str, str, str]]:
    """(where, kind, reference) for every reference in the docs and the help texts."""
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        where = str(doc.relative_to(ROOT))
        for path in PATH.findall(text):
            yield where, "path", path
        for name in DOTTED.findall(text):
            yield where, "name", name
        for link in LINK.findall(text):
            if not re.match(r"\w+:", link):
                yield where, "link", link
    for path in PATH.findall(help_texts()):
        yield "functionalbpe --help", "path", path


def test_every_reference_in_the_docs_resolves():
    bad = []
    seen = 0
    for where, kind, ref in references():
        seen += 1
        base = ROOT / where if where.endswith(".md") else ROOT
        base = base.parent if base.suffix else base
        ok = resolves(ref) if kind == "name" else exists(ref, base)
        if not ok:
            bad.append(f"{where}: {kind} {ref}")
    assert seen > 100
    assert not bad, "references that do not resolve:\n" + "\n".join(sorted(set(bad)))


@pytest.mark.parametrize("text, found", [
    ("see `functionalbpe/core/encoder.py` and csrc/lib/count/{count,functional}.c.", ["functionalbpe/core/encoder.py", "csrc/lib/count/{count,functional}.c"]),
    ("no path here: functionalbpe is a package", []),
])
def test_paths_are_found_as_written(text, found):
    assert PATH.findall(text) == found


def test_a_dead_reference_is_caught():
    assert not exists("functionalbpe/no_such_module.py", ROOT)
    assert not exists("csrc/lib/count/{count,nothing}.c", ROOT)
    assert exists("csrc/lib/count/{count,functional}.c", ROOT)
    assert not resolves("functionalbpe.core.no_such_thing")
    assert resolves("functionalbpe.core.encoder.Encoder")
