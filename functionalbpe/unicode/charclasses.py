"""The character classes of the built-in patterns, read off the ``regex`` module itself.

The scanner (``csrc/_scanner.pyx``) must cut text exactly where ``regex.findall`` cuts it,
on every code point. ``regex`` carries Unicode tables of its own, newer than Python's
``unicodedata`` (regex 2026.11 has Unicode 17.0; Python 3.11's ``unicodedata`` has 14.0), so
the classes are not rebuilt from ``unicodedata``: they are measured by running ``regex``
over a string that holds every code point once, for each property the patterns use. The
scanner therefore agrees with the reference path (``regex``) whatever version is installed,
and :func:`unicode_version` says which Unicode that is.

Measuring happens once per process, the first time the scanner is used (the first encode or
count), so it is kept short: a first ``encode("hello world")`` takes 0.06-0.09 s here, from
0.11-0.19 s (three processes each, cl100k and a small trained tokenizer), nearly all of it
this. The string of every code point is written a byte lane at a time
rather than from 1.1M Python ints (65 ms to 19), and the classes are measured only where
characters are: planes 4 to 13 hold none in any Unicode version so far, and when ``regex``
agrees (one search) they are skipped, since an unassigned code point is in none of the
classes below (each is general categories or White_Space) and folds to no contraction
letter. A pattern's own classes (``regex_program.py``) may hold unassigned code points
(``[^\\s\\p{L}]``): they are still measured everywhere.

Example::

    >>> table = class_table()
    >>> bool(table[ord("é")] & LETTER), bool(table[ord("\\u00a0")] & SPACE)
    (True, True)
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable, List, Sequence, Tuple

import regex

# One bit per property. The C scanner (csrc/lib/scan/scan.h) uses the same values.
LETTER = 1  # \p{L}
NUMBER = 2  # \p{N}
SPACE = 4  # \s as regex reads it: Unicode White_Space (not str.isspace, which adds \x1c-\x1f)
UPPERISH = 8  # o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
LOWERISH = 16  # o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
MARK = 32  # \p{M}: not a letter, so it counts as "other" outside o200k's letter classes

# Each general category or property the patterns use, and the bits it sets. o200k's classes
# are unions of categories; setting their bits per category keeps every probe a single
# property, which regex scans several times faster than a bracketed union.
PROPERTIES: Tuple[Tuple[str, int], ...] = (
    (r"\s", SPACE),
    (r"\p{N}", NUMBER),
    (r"\p{Lu}", LETTER | UPPERISH),
    (r"\p{Lt}", LETTER | UPPERISH),
    (r"\p{Ll}", LETTER | LOWERISH),
    (r"\p{Lm}", LETTER | UPPERISH | LOWERISH),
    (r"\p{Lo}", LETTER | UPPERISH | LOWERISH),
    (r"\p{M}", MARK | UPPERISH | LOWERISH),
)

# The letters of the English contractions ('s 't 're 've 'm 'll 'd) that the patterns match
# case-insensitively with (?i:...).
CONTRACTION_LETTERS = "delmrstv"

# A character that each Unicode version added (and no earlier version had).
_VERSION_SENTINELS: Tuple[Tuple[str, int], ...] = (
    ("13.0", 0x08BE),  # ARABIC LETTER PEH WITH SMALL V
    ("14.0", 0x061D),  # ARABIC END OF TEXT MARK
    ("15.0", 0x1E030),  # MODIFIER LETTER CYRILLIC SMALL A
    ("15.1", 0x2FFC),  # IDEOGRAPHIC DESCRIPTION CHARACTER SURROUND FROM RIGHT
    ("16.0", 0x1C89),  # CYRILLIC CAPITAL LETTER TJE
    ("17.0", 0x323B0),  # first ideograph of CJK Unified Ideographs Extension J
)


@lru_cache(maxsize=1)
def every_code_point() -> str:
    """All of U+0000..U+10FFFF in order, lone surrogates included (a Python str may hold
    them): the text that ``regex`` is run over to measure a class.

    >>> every = every_code_point()
    >>> len(every), every[0x1F600] == "\U0001F600"
    (1114112, True)
    """
    # Its UTF-32 (little-endian), each byte of the four a lane of its own: the low byte counts
    # 0..255 over and over, the next steps once every 256 code points, the third once a plane.
    size = 0x110000
    utf32 = bytearray(4 * size)
    utf32[0::4] = bytes(range(256)) * (size // 256)
    utf32[1::4] = b"".join(bytes([b]) * 256 for b in range(256)) * (size // 0x10000)
    utf32[2::4] = b"".join(bytes([plane]) * 0x10000 for plane in range(size // 0x10000))
    return utf32.decode("utf-32-le", "surrogatepass")


# Planes 4 to 13: no Unicode version so far assigns a character there.
EMPTY_PLANES = (0x40000, 0xE0000)


@lru_cache(maxsize=1)
def assigned_ranges() -> Tuple[Tuple[int, int], ...]:
    """The ranges ``[start, end)`` of code points outside which the installed ``regex`` knows
    no assigned character: all of them but planes 4-13, unless a newer Unicode puts one
    there. Only for classes that no unassigned code point is in.

    >>> assigned_ranges()
    ((0, 262144), (917504, 1114112))
    """
    lo, hi = EMPTY_PLANES
    if regex.search(r"\P{Cn}", every_code_point(), pos=lo, endpos=hi) is None:
        return ((0, lo), (hi, 0x110000))
    return ((0, 0x110000),)


def _spans(pattern: str, within: Tuple[int, int] = (0, 0x110000)) -> List[Tuple[int, int]]:
    every = every_code_point()
    return [m.span() for m in regex.finditer(pattern + "+", every, pos=within[0], endpos=within[1])]


def _assigned_spans(pattern: str) -> List[Tuple[int, int]]:
    """The runs of code points ``pattern`` (one character of a class no unassigned code
    point is in) matches."""
    return [span for within in assigned_ranges() for span in _spans(pattern, within)]


def layer(pattern: str, value: int, within: Sequence[Tuple[int, int]] = ((0, 0x110000),)) -> int:
    """The code points that ``pattern`` (one character) matches, searched in the ranges
    ``within``, as a big integer holding the byte ``value`` at each (little-endian).

    Tables are built as such integers: OR-ing (or adding) two of them combines them byte by
    byte in milliseconds, where a Python loop over 1.1M bytes would take a second.
    """
    table = bytearray(0x110000)
    for lo, hi in within:
        for start, end in _spans(pattern, (lo, hi + 1)):
            table[start:end] = bytes([value]) * (end - start)
    return int.from_bytes(table, "little")


@lru_cache(maxsize=1)
def class_table() -> bytes:
    """One byte per code point (0x110000 bytes): the OR of the property bits above."""
    combined = 0
    within = [(start, end - 1) for start, end in assigned_ranges()]
    for prop, bits in PROPERTIES:
        combined |= layer(prop, bits, within)
    table = combined.to_bytes(0x110000, "little")
    _check(table)
    return table


def _count_flagged(table: bytes, test) -> int:
    return table.translate(bytes(int(bool(test(flags))) for flags in range(256))).count(1)


def _check(table: bytes) -> None:
    # The scanner relies on these: a code point is at most one of letter, number, space
    # and mark, and \p{L} is exactly Lu|Lt|Ll|Lm|Lo (so the layers above rebuild it). A
    # regex release that broke this would need a scanner change: say so rather than cut
    # text unlike regex.
    # It also reads eight ASCII bytes at a time assuming that the ASCII letters are A-Z, a-z,
    # and (o200k) that the ASCII members of [\p{Ll}\p{Lm}\p{Lo}\p{M}] are a-z and those of
    # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] A-Z.
    exclusive = LETTER | NUMBER | SPACE | MARK
    overlapping = _count_flagged(table, lambda f: bin(f & exclusive).count("1") > 1)
    letters = sum(end - start for start, end in _assigned_spans(r"\p{L}"))
    ascii_letters = [cp for cp in range(128) if table[cp] & LETTER]
    expected_ascii = [cp for cp in range(128) if chr(cp).isalpha()]
    ascii_lowerish = [cp for cp in range(128) if table[cp] & LOWERISH]
    expected_lowerish = [cp for cp in range(128) if chr(cp).islower()]
    ascii_upperish = [cp for cp in range(128) if table[cp] & UPPERISH]
    expected_upperish = [cp for cp in range(128) if chr(cp).isupper()]
    if (overlapping or ascii_letters != expected_ascii or ascii_lowerish != expected_lowerish
            or ascii_upperish != expected_upperish
            or letters != _count_flagged(table, lambda f: f & LETTER)):
        raise RuntimeError(
            f"regex {regex.__version__} classifies code points in a way the scanner does not "
            "expect; set FUNCTIONALBPE_PUREPYTHON=1 and report this"
        )


@lru_cache(maxsize=1)
def contraction_folds() -> Tuple[Tuple[int, str], ...]:
    """The non-ASCII code points that ``(?i)`` matches to a contraction letter.

    With regex's default (simple) case folding this is ``((0x17F, 's'),)``: LATIN SMALL
    LETTER LONG S matches ``s``.
    """
    found = []
    every = every_code_point()
    for char in (every[cp] for start, end in _assigned_spans(f"(?i)[{CONTRACTION_LETTERS}]")
                 for cp in range(start, end)):
        letters = [x for x in CONTRACTION_LETTERS if regex.fullmatch("(?i)" + x, char)]
        if len(letters) != 1 or (char.isascii() and char.lower() != letters[0]):
            raise RuntimeError(f"regex matches {char!r} to {letters} under (?i); the scanner does not expect it")
        if not char.isascii():
            found.append((ord(char), letters[0]))
    return tuple(found)


@lru_cache(maxsize=1)
def unicode_version() -> str:
    """The Unicode version of the installed ``regex`` module's tables, e.g. ``'17.0'``: the
    newest version one of whose new characters ``regex`` knows as assigned."""
    return newest_version(lambda cp: regex.match(r"\P{Cn}", chr(cp)) is not None)


def newest_version(assigned: Callable[[int], bool]) -> str:
    """The newest Unicode version (of those this module knows) whose sentinel character
    ``assigned`` accepts. ``newest_version(lambda cp: unicodedata.category(chr(cp)) != "Cn")``
    gives Python's own ``unicodedata`` version."""
    known = "12.1 or earlier"
    for version, cp in _VERSION_SENTINELS:
        if assigned(cp):
            known = version
    return known
