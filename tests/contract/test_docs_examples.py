"""Every Python example of README.md and docs/*.md runs as written.

The examples of one page run in order, in one namespace, as a reader would paste them into
one session, in a folder that holds the small files the pages name (``corpus/*.txt``,
``en.txt``, ``tok.json``...). A block written as a session (``>>>``) is run as a doctest, so
its outputs are checked too. docs/tutorial.md is a doctest of its own (test_tutorial.py).
"""
from __future__ import annotations

import doctest
import gzip
import json
import re
import warnings
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

import functionalbpe as fb

ROOT = Path(__file__).resolve().parent.parent.parent
PAGES = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "tutorial.md")
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)

EN = ("Hello world. hello there, hello again! The cat sat on the mat; the cat ate the rat. "
      "Ash caught 3 fish, and Brock caught 12. WOW! Héllo, naïve café. " * 40 + "\n")
TEXTS = {
    "corpus/a.txt": EN,
    "corpus/b.txt": EN.upper() + EN,
    "en.txt": EN,
    "de.txt": "Die Katze sitzt auf der Matte. Hallo Welt! " * 40,
    "el.txt": "Η γάτα κάθεται στο χαλί. Γεια σου κόσμε! " * 40,
    "ru.txt": "Кошка сидит на коврике. Привет, мир! " * 40,
}


def blocks(page: Path) -> List[Tuple[int, str]]:
    text = page.read_text(encoding="utf-8")
    return [(text[: m.start()].count("\n") + 2, m.group(1)) for m in BLOCK.finditer(text)]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("docs")
    for name, text in TEXTS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    for k in range(2):
        lines = "".join(json.dumps({"text": s}) + "\n" for s in EN.split(". ")[k::2])
        (root / f"shard-00{k + 1}.jsonl").write_text(lines, encoding="utf-8")
        (root / "shards" / f"part{k}").mkdir(parents=True)
        with gzip.open(root / "shards" / f"part{k}" / "x.jsonl.gz", "wt", encoding="utf-8") as fh:
            fh.write(lines)
    tok = fb.train(fb.files(str(root / "corpus")), vocab_size=400, special_tokens=["<|endoftext|>"], progress=False)
    tok.save(root / "tok.json")
    tok.save(root / "plain.json")
    tok.to_hf(root / "tokenizer.json")
    return root


def test_every_page_with_examples_is_found():
    counted: Dict[str, int] = {p.name: len(blocks(p)) for p in PAGES}
    assert counted["README.md"] >= 5 and sum(counted.values()) >= 15


# The optional packages the examples may use (the extras peers, hf, dask, formats, plot).
OPTIONAL = ("tiktoken", "tokenizers", "transformers", "sentencepiece", "rustbpe", "bpeasy", "dask", "distributed",
            "zstandard", "pyarrow", "matplotlib")


def _optional_package(exc: BaseException) -> "str | None":
    """The optional package whose absence ``exc`` reports (Python's ImportError, or our one-line
    "needs the X package" error), or None for any other failure."""
    if isinstance(exc, ImportError):
        name = (exc.name or "").split(".")[0]
        return name if name in OPTIONAL else None
    found = re.search(r"needs the (\w+) package, which is not installed", str(exc))
    return found.group(1) if found and found.group(1) in OPTIONAL else None


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=lambda p: p.name)
def test_the_examples_of_a_page_run(page, workspace, monkeypatch):
    monkeypatch.chdir(workspace)
    namespace: Dict[str, object] = {"__name__": "__docs__"}
    for line, code in blocks(page):
        where = f"{page.name}:{line}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fb.errors.SmallerVocabularyWarning)  # the files are small
            if code.lstrip().startswith(">>>"):
                test = doctest.DocTestParser().get_doctest(code, namespace, where, str(page), line)
                runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
                runner.run(test, clear_globs=False)
                assert runner.failures == 0, f"{where}: {runner.failures} examples give other output"
            else:
                try:
                    exec(compile(code, where, "exec"), namespace)
                except Exception as exc:  # noqa: BLE001 - named with its place, then failed
                    missing = _optional_package(exc)
                    if missing:  # the README's test command installs only the test extra
                        pytest.skip(f"{where} needs {missing}, which is not installed")
                    pytest.fail(f"{where}: {type(exc).__name__}: {exc}")
    client = namespace.get("client")
    if client is not None:  # docs/scale.md starts a local cluster
        client.close()
