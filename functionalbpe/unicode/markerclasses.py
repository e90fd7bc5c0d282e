"""The tables of the compiled boundary-marker scanner, measured from ``regex`` and ``str``.

The compiled scanner (``csrc/lib/scan/markers.c``) must cut text into exactly the units of the
unit regex of :mod:`functionalbpe.schemes.markers` (its classes are defined here) and case-code words exactly as
:func:`functionalbpe.schemes.markers.case_code` does. As for the pattern scanners
(:mod:`functionalbpe.unicode.charclasses`), nothing is compiled in: the unit classes are measured by
running the markers module's own character classes over every code point, and the case
tables by asking Python's ``str.lower`` and ``str.upper``, so the C code follows whatever
``regex`` and Python are installed.

* :func:`unit_class_table` — one byte per code point: the unit kind in the low three bits
  (``REST``, ``WORD``, ``SPACELESS``, ``SPACE``, ``PUNCT``, ``NUMBER``: which alternative of
  the unit regex a unit starting on it takes, emoji aside), and flags for what continues or
  starts a unit (``INHERITED``, the three emoji properties) and ``CHANGES_LOWER``
  (``c.lower() != c``: a word without one is never case-coded).
* :func:`case_maps` — ``chr(c).lower()`` and ``.upper()`` as a difference of code points
  (``MULTI`` when the result has several characters), and for word characters what Python's
  final-sigma rule sees (``CASED``, ``CASE_IGNORABLE``); as two-level tables, since only a
  few thousand code points have a value.

Building them takes about a fifth of a second, once per process, on the first use of the
compiled markers path.

Example::

    >>> table = unit_class_table()
    >>> table[ord("a")] & KIND == WORD, table[ord("漢")] & KIND == SPACELESS
    (True, True)
"""
from __future__ import annotations

import array
import re
from functools import lru_cache
from typing import Dict, Iterable, NamedTuple, Tuple

from .charclasses import LETTER, MARK, NUMBER, SPACE, every_code_point, class_table, layer

# -- the unit classes of the boundary-marker scheme (functionalbpe.schemes.markers) ---------
# Defined here, below the scheme, because the compiled scanner's tables are measured from
# them and the scanner sits with text; the scheme imports them.

# Scripts that do not separate words with spaces [paper]. A letter of one of these is
# "other", never a word.
SPACELESS_SCRIPTS = ("Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar", "Tibetan")

_SPACELESS_SCRIPT = "".join(r"\p{sc=%s}" % s for s in SPACELESS_SCRIPTS)
_SPACELESS_EXT = "".join(r"\p{scx=%s}" % s for s in SPACELESS_SCRIPTS)
# A letter or mark of script Common/Inherited is spaceless when its Script_Extensions name
# only spaceless scripts: the prolonged sound mark ー (Hira, Kana), the voiced sound marks,
# 〆. Five Common/Inherited characters list a spaceless script *and* a spaced one (U+02BC,
# U+0303, U+0305, U+0323, U+0331 also list Latin, Cyrillic, Devanagari or Bengali); they
# stay word characters, which the set difference below spells out.
_SPACED_EXT = r"\p{scx=Latn}\p{scx=Cyrl}\p{scx=Deva}\p{scx=Beng}"
SPACELESS_CHAR = r"[[\p{L}\p{M}]&&[%s[[%s]--[%s]]]]" % (_SPACELESS_SCRIPT, _SPACELESS_EXT, _SPACED_EXT)
WORD_CHAR = r"[[\p{L}\p{M}]--%s]" % SPACELESS_CHAR
# A mark with no script of its own; it joins the unit of the character before it.
INHERITED_MARK = r"[\p{M}&&[\p{sc=Zinh}\p{sc=Zyyy}]]"
# Every SPACELESS_CHAR lies in these blocks (a test checks all of Unicode). A text with none
# of them is cut by a simpler, faster regex: the set operations above cost the regex module
# several times more per character than a plain property.
SPACELESS_RANGES = (
    (0x0E00, 0x109F), (0x1780, 0x19FF), (0x2E80, 0x31FF), (0x3400, 0x9FFF), (0xA9E0, 0xAAFF),
    (0xF900, 0xFAFF), (0xFF00, 0xFFEF), (0x16FE0, 0x3FFFF),
)
SPACELESS_BLOCKS = "[%s]" % "".join("%s-%s" % (chr(lo), chr(hi)) for lo, hi in SPACELESS_RANGES)

# An emoji: one that shows as an emoji by default, a pictograph asking for emoji
# presentation (U+FE0F), a keycap (1️⃣) or a flag; with modifiers, tags and ZWJ sequences.
EMOJI_PRESENTATION_CLASS = r"\p{Emoji_Presentation}"
PICTOGRAPHIC_CLASS = r"\p{Extended_Pictographic}"
EMOJI_EXTEND_CLASS = r"[\ufe0e\ufe0f\u20e3\p{Emoji_Modifier}\U000e0020-\U000e007f]"
KEYCAP = r"[0-9#*]\ufe0f?\u20e3"
EMOJI_START = r"(?:%s|%s|%s\ufe0f)" % (KEYCAP, EMOJI_PRESENTATION_CLASS, PICTOGRAPHIC_CLASS)
EMOJI = r"(?:%s%s*(?:\u200d%s%s*)*)" % (EMOJI_START, EMOJI_EXTEND_CLASS, PICTOGRAPHIC_CLASS, EMOJI_EXTEND_CLASS)
# The categories of punct units.
PUNCT_PROPERTIES = (r"\p{P}", r"\p{S}", r"\p{Cf}")
PUNCT_CLASS = "".join(PUNCT_PROPERTIES)


# Unit kinds (the low three bits) and flags; csrc/lib/scan/markers.h has the same values.
KIND = 7
REST, WORD, SPACELESS, SPACE_KIND, PUNCT, NUMBER_KIND = 0, 1, 2, 3, 4, 5
INHERITED = 8
EMOJI_PRESENTATION = 16
PICTOGRAPHIC = 32
EMOJI_EXTEND = 64
CHANGES_LOWER = 128

# Case maps: a result of several characters, and the final-sigma classes.
MULTI = -(1 << 31)
CASED, CASE_IGNORABLE = 1, 2

_SIZE = 0x110000
_BLOCK = 256


def _where(table: bytes, bits: int, value: int) -> int:
    """The code points whose class in ``table`` has one of ``bits``, as a layer of ``value``."""
    return int.from_bytes(table.translate(bytes(value if f & bits else 0 for f in range(256))), "little")


def _mask(layer_value: int) -> int:
    """A layer with every nonzero byte made 1 (to test layers for overlap)."""
    raw = layer_value.to_bytes(_SIZE, "little")
    return int.from_bytes(raw.translate(bytes([0] + [1] * 255)), "little")


@lru_cache(maxsize=1)
def unit_class_table() -> bytes:
    """One byte per code point (0x110000 bytes): its unit kind and flags (see above)."""
    classes = class_table()
    # WORD_CHAR is [\p{L}\p{M}] less SPACELESS_CHAR, and every spaceless character lies in
    # SPACELESS_RANGES (a test checks all of Unicode): adding the spaceless layer (1) to the
    # letter-or-mark layer (WORD = 1) gives SPACELESS = 2 exactly there.
    letters = _where(classes, LETTER | MARK, WORD)
    spaceless = layer("(?V1)" + SPACELESS_CHAR, 1, SPACELESS_RANGES)
    punct = 0
    for prop in PUNCT_PROPERTIES:
        punct |= layer(prop, PUNCT)
    kinds = [letters + spaceless, _where(classes, SPACE, SPACE_KIND), _where(classes, NUMBER, NUMBER_KIND), punct]
    masks = [_mask(k) for k in kinds]
    inherited = layer("(?V1)" + INHERITED_MARK, INHERITED)
    overlapping = any(masks[a] & masks[b] for a in range(len(masks)) for b in range(a))
    if overlapping or spaceless & masks[0] != spaceless or _mask(inherited) & masks[0] != _mask(inherited):
        raise RuntimeError(
            "the markers' unit classes overlap in a way the compiled scanner does not expect; "
            "set FUNCTIONALBPE_PUREPYTHON=1 and report this"
        )
    combined = sum(kinds) | inherited
    combined |= layer(EMOJI_PRESENTATION_CLASS, EMOJI_PRESENTATION)
    combined |= layer(PICTOGRAPHIC_CLASS, PICTOGRAPHIC)
    combined |= layer(EMOJI_EXTEND_CLASS, EMOJI_EXTEND)
    table = bytearray(combined.to_bytes(_SIZE, "little"))
    for cp in _lower_map():
        table[cp] |= CHANGES_LOWER
    return bytes(table)


def _changed(method: str) -> Dict[int, str]:
    """``{cp: getattr(chr(cp), method)()}`` where that differs from ``chr(cp)``."""
    every = every_code_point()
    out: Dict[int, str] = {}
    for start in range(0, _SIZE, _BLOCK):
        chunk = every[start : start + _BLOCK]
        if getattr(chunk, method)() == chunk:  # a block at a time: most have no case at all
            continue
        for k, char in enumerate(chunk):
            mapped = getattr(char, method)()
            if mapped != char:
                out[start + k] = mapped
    return out


@lru_cache(maxsize=1)
def _lower_map() -> Dict[int, str]:
    return _changed("lower")


class TwoLevel(NamedTuple):
    """``value(cp) = blocks[index[cp >> 8] * 256 + (cp & 255)]``: ``index`` an ``array('H')``,
    ``blocks`` an ``array('i')`` whose first block is all zero."""

    index: array.array
    blocks: array.array

    def value(self, cp: int) -> int:
        return self.blocks[self.index[cp >> 8] * _BLOCK + (cp & (_BLOCK - 1))]


def two_level(values: Dict[int, int]) -> TwoLevel:
    """A :class:`TwoLevel` table holding ``values`` (0 elsewhere), equal blocks shared."""
    by_block: Dict[int, Dict[int, int]] = {}
    for cp, value in values.items():
        by_block.setdefault(cp >> 8, {})[cp & (_BLOCK - 1)] = value
    blocks = array.array("i", bytes(4 * _BLOCK))
    index = array.array("H", bytes(2 * (_SIZE // _BLOCK)))
    seen: Dict[Tuple[int, ...], int] = {}
    for number in sorted(by_block):
        entries = by_block[number]
        block = tuple(entries.get(k, 0) for k in range(_BLOCK))
        if block not in seen:
            seen[block] = len(blocks) // _BLOCK
            blocks.extend(block)
        index[number] = seen[block]
    return TwoLevel(index, blocks)


def _deltas(mapping: Dict[int, str]) -> Dict[int, int]:
    return {cp: ord(m) - cp if len(m) == 1 else MULTI for cp, m in mapping.items()}


def _word_chars(table: bytes) -> Iterable[str]:
    every = every_code_point()
    words = table.translate(bytes(int(f & KIND == WORD) for f in range(256)))
    return "".join(every[m.start() : m.end()] for m in re.finditer(b"\x01+", words))


def _sigma_classes(chars: Iterable[str]) -> Dict[int, int]:
    """What Python's ``lower()`` sees of each character when it decides whether a capital
    sigma ends a word: case-ignorable (skipped), else cased or not.

    Python lowers Σ to final ς when a cased character comes before it and none after it,
    case-ignorable characters skipped both ways. Two probes tell the classes apart: in
    ``"A" + c + "Σ"`` the sigma is final iff c is case-ignorable or cased; in ``"AΣ" + c``
    iff c is case-ignorable or not cased. Lowering all probes joined by newlines (which
    are neither) asks Python once for every character.
    """
    chars = list(chars)
    before = "\n".join("A" + c + "\u03a3" for c in chars).lower().split("\n")
    after = "\n".join("A\u03a3" + c for c in chars).lower().split("\n")
    out: Dict[int, int] = {}
    for c, b, a in zip(chars, before, after):
        either, ignorable = b[-1] == "\u03c2", a[1] == "\u03c2"
        if either and ignorable:
            out[ord(c)] = CASE_IGNORABLE
        elif either:
            out[ord(c)] = CASED
    return out


class CaseMaps(NamedTuple):
    lower: TwoLevel
    upper: TwoLevel
    sigma: TwoLevel


@lru_cache(maxsize=1)
def case_maps() -> CaseMaps:
    """Python's case mappings for the compiled case coder (see the module docstring)."""
    return CaseMaps(
        two_level(_deltas(_lower_map())),
        two_level(_deltas(_changed("upper"))),
        two_level(_sigma_classes(_word_chars(unit_class_table()))),
    )
