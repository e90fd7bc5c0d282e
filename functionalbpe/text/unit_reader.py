"""Reading a corpus in units that no pre-tokenization piece crosses.

The report must measure a 100 MB file without holding it, or its token ids, in memory. So
a long document is cut into units of about ``unit_chars`` characters and each unit is
encoded on its own. A cut is made only **between a letter or digit and the line break
(``\n``) that follows it**. Every built-in pattern and scheme ends a piece after a letter or
digit that a line break follows, and starts the next piece at that line break with no look
back, so the units give the same pieces, tokens and word count as the whole document.

Other places are not safe for every pattern: after ``.`` the GPT-4 pattern glues the
following line breaks to the full stop (``.\n\n``), and before a word GPT-2 splits a run
of line breaks differently from GPT-4 (``\n`` ``\n`` against ``\n\n``), so cutting after
the run or inside it changes one piece or the other. A document with no safe cut (every
line ending in punctuation, or CRLF line ends) is read whole.

A source is one of:

* a ``str`` — one document;
* a path (``pathlib.Path`` or ``os.PathLike``) — one document per file, read line by line;
* :func:`functionalbpe.files` — one document per file;
* any other iterable — its items are the documents (``str`` or paths).

Example::

    >>> [c for c, _ in text_units("one.\\ntwo\\nthree\\n", unit_chars=3)]
    ['one.\\ntwo', '\\nthree', '\\n']
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator, List, Optional, Tuple

import regex

from .corpus import Files, decode_utf8
from ..errors import CorpusError

# Cut points: just before a line break that follows a letter or digit.
_CUT = regex.compile(r"(?<=[\p{L}\p{N}])\n")
_ENDS_WITH_CUT = regex.compile(r"[\p{L}\p{N}]\n\Z")

# About a megabyte of text per unit: large enough that per-call overhead vanishes, small
# enough that a unit's ids are a few megabytes at most.
UNIT_CHARS = 1 << 20


def text_units(source: Any, unit_chars: int = UNIT_CHARS, errors: str = "strict") -> Iterator[Tuple[str, bool]]:
    """Yield ``(unit, starts_document)`` for every unit of every document of ``source``."""
    if isinstance(source, str):
        yield from _string_units(source, unit_chars)
    elif isinstance(source, os.PathLike):
        yield from _file_units(Path(source), unit_chars, errors)
    elif isinstance(source, Files):
        for path in source.paths:
            yield from _file_units(path, unit_chars, source.errors)
    else:
        try:
            documents = iter(source)
        except TypeError:
            raise CorpusError(
                f"a corpus must be a text, a path, functionalbpe.files(...) or an iterable of documents; "
                f"got {type(source).__name__}"
            ) from None
        for number, doc in enumerate(documents):
            if isinstance(doc, str):
                yield from _string_units(doc, unit_chars)
            elif isinstance(doc, os.PathLike):
                yield from _file_units(Path(doc), unit_chars, errors)
            else:
                raise CorpusError(f"document {number} is a {type(doc).__name__}; a document must be a str or a path")


def source_bytes(source: Any) -> Optional[int]:
    """The size in bytes of a source made of files, for progress; None when unknown."""
    try:
        if isinstance(source, os.PathLike):
            return Path(source).stat().st_size
        if isinstance(source, Files):
            return source.text_bytes()
    except OSError:
        return None
    return None


def _string_units(text: str, unit_chars: int) -> Iterator[Tuple[str, bool]]:
    start = 0
    first = True
    while len(text) - start > unit_chars:
        match = _CUT.search(text, start + unit_chars)
        if match is None:
            break
        yield text[start : match.start()], first
        first = False
        start = match.start()
    yield text[start:], first


def _file_units(path: Path, unit_chars: int, errors: str) -> Iterator[Tuple[str, bool]]:
    name = str(path)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise CorpusError(f"{name}: cannot read: {exc.strerror}") from None
    with fh:
        lines: List[str] = []
        size = 0
        offset = 0
        first = True
        for number, raw in enumerate(fh, 1):
            line = decode_utf8(raw, name, errors, base_offset=offset, line=number)
            offset += len(raw)
            lines.append(line)
            size += len(line)
            # The same cut as in a string: the first safe line break at offset unit_chars
            # or later; the line break itself opens the next unit.
            if size - 1 >= unit_chars and _ENDS_WITH_CUT.search(line):
                lines[-1] = line[:-1]
                yield "".join(lines), first
                first = False
                lines, size = ["\n"], 1
        yield "".join(lines), first
