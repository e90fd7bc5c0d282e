"""What every scheme's text form shares: the reserved range, LITERAL escapes, ``errors=``.

A scheme writes its atoms as private-use characters of U+E000–U+EFFF (see
:mod:`functionalbpe.core.alphabet`); in a text form *every* character of that range is an
atom. A private-use character that was already in the input is therefore written as an
escape: the atom ``LITERAL`` (U+E2FF, the same in every scheme) followed by argument atoms
(U+E000 + a digit) that spell the character's offset from U+E000. The schemes differ only in
the base of those digits — the Functionalizer has 256 argument atoms and writes two digits,
the boundary markers have 16 and write three — so one :class:`Literals` serves both.

Decoding a text form that no encoding writes follows one rule in every scheme
(:func:`check_errors`, :func:`bad_part`): ``errors="strict"`` raises a
:class:`~functionalbpe.errors.DecodeError`, ``"replace"`` writes U+FFFD for what is wrong and
``"ignore"`` drops it.

Example::

    >>> two = Literals(base=256, digits=2)
    >>> [hex(ord(c)) for c in two.escape("\\ue123")]
    ['0xe2ff', '0xe001', '0xe023']
    >>> two.unescape(two.escape("a\\ue123b")) == "a\\ue123b"
    True
"""
from __future__ import annotations

import re
from typing import Callable, Dict, Tuple

from ..core.alphabet import Atom
from ..errors import FunctionalBPEError

LITERAL = "\ue2ff"
ARG0 = 0xE000  # the argument atom of digit d is U+E000 + d
RESERVED_FIRST, RESERVED_LAST = 0xE000, 0xEFFF
# Every character of a text form in this class is an atom; in the input, it is escaped.
RESERVED = re.compile("[\ue000-\uefff]")

ERRORS = ("strict", "replace", "ignore")
_BAD_PART: Dict[str, str] = {"strict": "", "replace": "\ufffd", "ignore": ""}


def check_errors(errors: str) -> None:
    """Refuse an ``errors=`` that no scheme knows."""
    if errors not in _BAD_PART:
        raise FunctionalBPEError(f"errors must be 'strict', 'replace' or 'ignore', got {errors!r}")


def bad_part(errors: str) -> str:
    """What stands in for a part of a text form that no encoding writes (``"replace"``:
    U+FFFD, ``"ignore"``: nothing; ``"strict"`` raises before it gets here)."""
    return _BAD_PART[errors]


class Literals:
    """LITERAL escapes with ``digits`` argument atoms in base ``base`` (their product must
    cover the 4096 reserved code points)."""

    def __init__(self, base: int, digits: int) -> None:
        if base**digits < RESERVED_LAST - RESERVED_FIRST + 1:
            raise ValueError(f"{digits} digits in base {base} cannot spell every reserved code point")
        self.base = base
        self.digits = digits
        # One escape is LITERAL and `digits` arguments; the leading digits stay small.
        first = (RESERVED_LAST - RESERVED_FIRST) // base ** (digits - 1)
        arg = f"[\\ue000-{chr(ARG0 + base - 1)}]"
        self.regex = f"{LITERAL}[\\ue000-{chr(ARG0 + first)}]{arg}{{{digits - 1}}}"
        self._one = re.compile(self.regex)
        self._written: Dict[str, str] = {}

    def write(self, char: str) -> str:
        """The escape of one reserved character."""
        written = self._written.get(char)
        if written is None:
            offset = ord(char) - RESERVED_FIRST
            args = [chr(ARG0 + (offset // self.base**k) % self.base) for k in range(self.digits - 1, -1, -1)]
            written = self._written[char] = LITERAL + "".join(args)  # at most 4096 entries
        return written

    def escape(self, text: str) -> str:
        """``text`` with every reserved character escaped."""
        if RESERVED.search(text) is None:
            return text
        return RESERVED.sub(lambda m: self.write(m.group()), text)

    def char(self, literal: str) -> str:
        """The character one escape (LITERAL and its digits) stands for."""
        offset = 0
        for arg in literal[1:]:
            offset = offset * self.base + ord(arg) - ARG0
        return chr(RESERVED_FIRST + offset)

    def unescape(self, text: str) -> str:
        """``text`` with every escape read back (anything else left as it is)."""
        return self._one.sub(lambda m: self.char(m.group()), text) if LITERAL in text else text


def show_atoms(piece: str, atoms: "re.Pattern[str]", glyph: Callable[["re.Match[str]"], str]) -> str:
    """``piece`` with each match of ``atoms`` (an atom with its arguments, an escape) shown as
    ``glyph`` writes it: how ``Scheme.show`` makes a text form readable."""
    return piece if RESERVED.search(piece) is None else atoms.sub(glyph, piece)


def atom_glyphs(atoms: Tuple[Atom, ...]) -> Dict[str, str]:
    """``{atom character: glyph}``."""
    return {atom.char: atom.glyph for atom in atoms}
