"""Cutting a long UTF-8 text into units whose pieces are exactly the pieces of the whole.

A file is read in blocks, and a block ends anywhere; counting its pieces as if it were a
text of its own would be wrong wherever a piece straddles the end (``" wor" | "ld"``) or a
rule looks past it (``\\s+(?!\\S)`` keeps its last space for the next word). So a block is
cut only at a *safe* place, where every built-in pattern ends a piece and decides nothing
by what follows. Two kinds of place qualify (the reasons, pattern by pattern, are in
``csrc/lib/scan/scan.c``):

1. after a newline that follows a non-space, before a character that is neither white
   space nor ``/``;
2. after a letter, before ASCII punctuation other than ``'``, ``/`` and ``_``.

Ordinary text has one every line or so. Tests check the property itself with ``regex``:
``pieces(a) + pieces(b) == pieces(a + b)`` at every cut this module finds.

The compiled scanner provides the same functions in C; the Python ones here are the
fallback and the reference the C ones are tested against.

Example::

    >>> safe_cut("one two.\\nthree".encode())
    9
"""
from __future__ import annotations

import re
from types import ModuleType
from typing import Callable, Optional, Sequence, Tuple

import regex

from ..core._native import NATIVE, PROGRAM, Scanner
from .patterns import SUPERWORDS, trie_regex

# ASCII punctuation that may follow a cut after a letter: everything but ' / _ (and not
# letters, digits or space).
CUT_PUNCTUATION = "!\"#$%&()*+,-.:;<=>?@[\\]^`{|}~"
_PUNCT_BEFORE = regex.compile(b"(?r)[" + regex.escape(CUT_PUNCTUATION.encode()) + b"]")
_SPACE = regex.compile(r"\s")
_LETTER = regex.compile(r"\p{L}")


def _char_ending_at(data: bytes, end: int) -> str:
    start = end - 1
    while start > 0 and end - start < 4 and data[start] & 0xC0 == 0x80:
        start -= 1
    return data[start:end].decode("utf-8", "replace")


def _char_starting_at(data: bytes, start: int) -> str:
    return data[start : start + 4].decode("utf-8", "replace")[:1]


def _is_safe(data: bytes, c: int) -> bool:
    if data[c] & 0xC0 == 0x80:  # inside a character
        return False
    if data[c - 1] == 0x0A:
        return (
            c - 1 > 0
            and not _SPACE.match(_char_ending_at(data, c - 1))
            and data[c] != 0x2F
            and not _SPACE.match(_char_starting_at(data, c))
        )
    return chr(data[c]) in CUT_PUNCTUATION and bool(_LETTER.match(_char_ending_at(data, c)))


def _safe_cut_python(data: bytes, lo: int, hi: int) -> int:
    c = hi
    while c > lo and c >= 2:
        newline = data.rfind(b"\n", lo, c)  # a cut right after it, at newline + 1 <= c
        punct = _PUNCT_BEFORE.search(data, lo + 1, c + 1)
        candidate = max(newline + 1 if newline >= 0 else -1, punct.start() if punct else -1)
        if candidate <= lo or candidate < 2:
            return 0
        if _is_safe(data, candidate):
            return candidate
        c = candidate - 1
    return 0


def safe_cut(data: bytes, lo: int = 0, hi: Optional[int] = None) -> int:
    """The largest offset ``c`` in ``(lo, hi]`` (``hi`` defaults to the end) at which UTF-8
    ``data`` can be cut without changing any built-in pattern's pieces; 0 if there is none.
    ``data[c]`` must exist: the cut is before a character.
    """
    n = len(data)
    top = n - 1 if hi is None else min(hi, n - 1)
    if n < 3 or top <= lo:
        return 0
    scanner = NATIVE.scanner
    if scanner is not None:
        return scanner.safe_cut(data, lo, top)
    return _safe_cut_python(data, lo, top)


# A cut function: (data, lo, hi) -> the largest safe offset found in (lo, hi], or 0.
Cutter = Callable[[bytes, int, int], int]


def program_cutter(scanner: Optional[Scanner], special_tokens: Sequence[str] = ()) -> Optional[Cutter]:
    """The cut function of a compiled pattern's scanner, when the compiled engine can prove
    its cuts (``_scanner.program_safe_cut``: the pieces before the cut were found without
    reading past the data, so they are the same in the whole text); None otherwise.

    Unlike :func:`safe_cut`, which knows places where every built-in pattern ends a piece, it
    scans the data from its start (which must be where a piece starts): one more scan of
    the text, on the thread that reads it.

    With ``special_tokens`` — for a reader whose consumer cuts them out of the text first,
    as counting does — pieces are found between the tokens: the tokens are found as the
    consumer finds them (left to right, the longest at each start), a cut right after one is
    safe, and the pieces are proven in the stretch after the last one. The caller keeps the
    cut at least the longest token before the end of the data (``corpus._cut_safely``), so
    that every token starting before it is seen whole.
    """
    module = NATIVE.scanner_for(scanner)
    if module is None or scanner is None or not scanner.is_program:
        return None
    from ..unicode.regex_program import Unsupported, compile_program

    try:
        if not compile_program(scanner.name[len(PROGRAM):]).cuts:
            return None
    except Unsupported:
        return None
    name = scanner.name
    if name[len(PROGRAM):] == SUPERWORDS and not special_tokens:
        return _superword_cutter(module, name)
    tokens = sorted({t.encode("utf-8", "surrogatepass") for t in special_tokens if t})
    finder = re.compile(trie_regex([t.decode("latin-1") for t in tokens]).encode("latin-1")) if tokens else None

    def proven(data: bytes, start: int, end: int) -> int:
        # A cut in data[start:end], a text that starts where a piece starts, as an offset of data.
        while end > start and end < len(data) and data[end] & 0xC0 == 0x80:
            end -= 1  # at a character's start: the matcher reads whole characters
        found = module.program_safe_cut(data[start:end], name, end - start) if end > start else 0
        return start + found if found > 0 else 0

    def cut(data: bytes, lo: int, hi: int) -> int:
        if finder is None:  # all of data is one text, read on past hi
            found = module.program_safe_cut(data, name, hi)
            return found if found > 0 else 0
        best = start = 0
        for m in finder.finditer(data):
            if m.start() >= hi:
                break
            if m.end() > hi:  # a token across hi: the text before it is a whole segment
                return max(best, proven(data, start, m.start()))
            best = start = m.end()  # right after a token: the consumer's pieces start afresh
        # No token starts in data[start:hi]: it begins the segment that goes on past hi.
        return max(best, proven(data, start, hi))

    return cut


# An ASCII letter before an ASCII digit, or before two ASCII punctuation marks (the letter is
# matched; the cut is after it).
_SUPERWORD_CUT = re.compile(rb"[A-Za-z](?=[0-9]|[!-/:-@\[-`{-~]{2})")
# How far back from hi superword_safe_cut looks: at the end of nearly every 1 MB block of the
# shared corpora (71 of 72, every language and code) there is such a place in the last 64 KB.
SUPERWORD_CUT_WINDOW = 1 << 16


def superword_safe_cut(data: bytes, lo: int, hi: int, window: int = SUPERWORD_CUT_WINDOW) -> int:
    """The largest offset ``c`` in ``(max(lo, hi - window), hi]`` at which UTF-8 ``data`` can
    be cut without changing the pieces of :data:`~functionalbpe.text.patterns.SUPERWORDS`
    (SuperBPE's second stage), found by looking at the bytes around it alone; 0 if none is.

    ``data[c - 1]`` is an ASCII letter and ``data[c]`` an ASCII digit, or ``data[c]`` and
    ``data[c + 1]`` two ASCII punctuation marks. A letter is taken by the run between the cuts
    (``\\p{L}++``) without looking ahead, and that run stops at ``c``, where a cut begins
    (``\\p{N}{1,3}``, or `` ?[^\\s\\p{L}\\p{N}]{2,}``), just as it stops where a text ends at
    ``c``; no look-ahead made before ``c`` reads past the letter (a run of spaces or of
    punctuation ends before it). The pieces after ``c`` start there, as in a text that
    starts there, since the pattern looks at nothing before a piece. Not with special tokens
    cut out first: one right after ``c`` would end the punctuation at one mark.

    >>> superword_safe_cut(b"see f(x) and y2", 0, 14)
    14
    """
    # Backwards, in stretches that double from 256 bytes: the place is mostly near hi, and
    # `re` tries the pattern at every letter (150 instructions a byte), so a search of the
    # whole window cost more than the scan it spares.
    bottom, end, size = max(lo, hi - window), min(len(data), hi + 2), 256
    while True:
        start = max(bottom, end - size)
        last = 0
        for m in _SUPERWORD_CUT.finditer(data, start, end):
            if m.end() <= hi:
                last = m.end()
        if last > lo or start == bottom:
            return last if last > lo else 0
        end, size = start + 3, 2 * size  # a place that starts just before `start`


def _superword_cutter(module: ModuleType, name: str) -> Cutter:
    """program_cutter for SUPERWORDS without special tokens: superword_safe_cut, and the
    compiled program's proof (one more scan of the text from its start) only where it finds
    no place. The scan was 454 M instructions of the 8,193 M of SuperBPE training on 9.8 MB of
    the shared corpora (callgrind, fbpe_rx_safe_cut, one thread: see
    benchmarks/callgrind_superword_training.py)."""

    def cut(data: bytes, lo: int, hi: int) -> int:
        found = superword_safe_cut(data, lo, hi)
        if found:
            return found
        found = module.program_safe_cut(data, name, hi)
        return found if found > 0 else 0

    return cut


def utf8_invalid(data: bytes) -> Tuple[int, bool]:
    """``(offset, incomplete)``: the first byte of ``data`` that is not valid UTF-8
    (``len(data)`` when all is valid), and whether it starts a character that the end of
    ``data`` cut short (then more bytes may complete it).

    >>> utf8_invalid("é".encode()[:1])
    (0, True)
    """
    scanner = NATIVE.scanner
    if scanner is not None:
        return scanner.utf8_invalid(data)
    return _utf8_invalid_python(data)


def _utf8_invalid_python(data: bytes) -> Tuple[int, bool]:
    try:
        bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start, exc.reason == "unexpected end of data"
    return len(data), False


def utf8_length(data: bytes) -> int:
    """The number of characters of valid UTF-8 ``data``."""
    scanner = NATIVE.scanner
    if scanner is not None:
        return scanner.utf8_length(data)
    return len(bytes(data).decode("utf-8"))


def utf8_prefix(data: bytes, chars: int) -> int:
    """The byte length of the first ``chars`` characters of valid UTF-8 ``data``."""
    scanner = NATIVE.scanner
    if scanner is not None:
        return scanner.utf8_prefix(data, chars)
    return len(bytes(data).decode("utf-8")[: max(chars, 0)].encode("utf-8"))
