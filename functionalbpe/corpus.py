"""Reading a corpus from files.

``files("a.txt", "docs/", "src/**/*.py")`` names the documents to train on: plain files,
directories (every non-hidden text file below them) and glob patterns. Nothing is read until
the corpus is iterated, and each file is read when its turn comes.

Input must be UTF-8. By default a bad byte is an error that names the file and the byte
offset; ``errors="replace"`` substitutes U+FFFD instead.

Example::

    >>> corpus = files(__file__)
    >>> len(corpus), "Reading a corpus" in next(iter(corpus))
    (1, True)
"""
from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Iterator, List, Union

from .errors import CorpusError

PathLike = Union[str, "os.PathLike[str]"]
_GLOB_CHARS = set("*?[")
# How much of a file found in a directory is sniffed for NUL bytes (binary files are skipped).
_SNIFF = 8192


class Files:
    """The documents of a list of files, one document per file, read lazily."""

    def __init__(self, paths: List[Path], errors: str = "strict") -> None:
        if errors not in ("strict", "replace"):
            raise CorpusError(f"errors must be 'strict' or 'replace', got {errors!r}")
        self.paths = paths
        self.errors = errors

    def __iter__(self) -> Iterator[str]:
        for path in self.paths:
            yield read_text(path, self.errors)

    def __len__(self) -> int:
        return len(self.paths)

    def total_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.paths)

    def __repr__(self) -> str:
        return f"<functionalbpe.Files: {len(self.paths)} files>"


def files(*patterns: PathLike, errors: str = "strict") -> Files:
    """Name the files of a corpus: paths, directories and glob patterns (``**`` recurses).

    A missing file, a pattern that matches nothing and a directory without a text file are
    errors, each naming the argument.
    """
    if not patterns:
        raise CorpusError("no input files given")
    found: List[Path] = []
    for pattern in patterns:
        text = os.fspath(pattern)
        if _GLOB_CHARS & set(text) and not os.path.exists(text):
            matches = sorted(glob.glob(text, recursive=True))
            if not matches:
                raise CorpusError(f"{text}: the pattern matches no file")
            for match in matches:
                found.extend(_expand(Path(match), explicit=False))
        else:
            path = Path(text)
            if not path.exists():
                raise CorpusError(f"{text}: no such file or directory")
            found.extend(_expand(path, explicit=True))
    unique = list(dict.fromkeys(found))
    return Files(unique, errors)


def _expand(path: Path, explicit: bool) -> List[Path]:
    if path.is_file():
        # A file named on purpose is read whatever it holds; one found by a pattern or
        # under a directory is skipped when it looks binary.
        return [path] if explicit or not _looks_binary(path) else []
    if path.is_dir():
        out = []
        for root, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                candidate = Path(root) / name
                if not name.startswith(".") and candidate.is_file() and not _looks_binary(candidate):
                    out.append(candidate)
        if not out:
            raise CorpusError(f"{path}: the directory holds no text file")
        return out
    raise CorpusError(f"{path}: not a regular file or directory")


def _looks_binary(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return b"\0" in fh.read(_SNIFF)
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read: {exc.strerror}") from None


def read_text(path: PathLike, errors: str = "strict") -> str:
    """Read a UTF-8 file; a bad byte is a :class:`CorpusError` naming file and offset."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read: {exc.strerror}") from None
    return decode_utf8(data, str(path), errors)


def decode_utf8(data: bytes, name: str, errors: str = "strict", base_offset: int = 0) -> str:
    """Decode UTF-8, naming ``name`` and the absolute byte offset of the first bad byte."""
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.end]
        raise CorpusError(
            f"{name}: invalid UTF-8 at byte offset {base_offset + exc.start} "
            f"(bytes {bad.hex(' ')}: {exc.reason}); convert the file to UTF-8, or pass "
            "errors='replace' (CLI: --encoding-errors replace) to read bad bytes as U+FFFD"
        ) from None
