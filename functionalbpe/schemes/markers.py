"""Boundary markers: one vocabulary entry per word, spaces as touching marker pairs.

Plain byte-level BPE stores most words twice (``the`` and `` the``) and again for every
capitalization. The boundary-marker scheme (Land and Meister, 2026) wraps every word in a
marker ``¦`` on both sides. Where two marked units are separated by exactly one space, the
space is dropped: the two touching markers *are* the space. Shift codes ``↑`` (title case)
and ``⇑`` (upper case) in front of a word lower-case it, so ``The`` reuses ``¦the¦``::

    >>> m = BoundaryMarkers(punct=True, digits=True, case=True)
    >>> [m.show(p) for p in m.pieces("The cat sat, 3 times.")]
    ['↑¦the¦', '¦cat¦', '¦sat¦', ',¦', '¦3¦', '¦times¦', '.']
    >>> m.decode(m.encode("The cat sat, 3 times."))
    'The cat sat, 3 times.'

**Units.** Text is cut into units, each a piece for BPE (see ``docs/markers.md`` for every
choice the spec leaves open):

* *word* — a maximal run of letters and marks (L*, M*) of scripts that put spaces between
  words, merged across script changes;
* *digit* — a run of numbers (N*); *punct* — a run of punctuation, symbols and format
  characters (P*, S*, Cf);
* *space* — a whitespace run that is exactly one U+0020;
* *other* — everything else, each of these a unit of its own: a run of letters of a script
  without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar, Tibetan), a run of
  emoji, a whitespace run that is not a single space (several spaces, newlines, tabs), a run
  of the remaining characters (controls, private use, unassigned).

A combining mark of no script of its own (Script=Inherited, e.g. U+0301) belongs to the unit
of the character before it, so that no unit boundary falls inside a base character and its
accents; after whitespace or at the start of a text it starts a word.

**Encoding.** A space unit is dropped iff both its neighbours are of a marked kind (word
always; punct and digit with the ``punct`` and ``digits`` options). A word gets a marker on
both sides; a marked punct or digit unit only on a side whose neighbouring space was dropped.
So two touching markers always stand for one dropped space, and nothing else. With ``case``
a word that lower-cases to a string of the same length and comes back exactly by title- or
upper-casing is written lower case behind ``↑`` or ``⇑``, outside its markers.

**Atoms.** BOUNDARY U+E300, TITLE U+E301, UPPER U+E302 are symbols with ids of their own.
A character of U+E000–U+EFFF in the input is written as LITERAL (U+E2FF) followed by three
argument atoms U+E000–U+E00F: its offset from U+E000 in base 16, most significant digit
first (``U+E300`` → LITERAL, ARG 3, ARG 0, ARG 0). So the text form never holds a
private-use character of the input, and sixteen argument atoms cover all 4096.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import regex

from ..util.checks import excerpt, plain_str
from ..core._native import MARKERS_CASE, MARKERS_DIGITS, MARKERS_PUNCT, NATIVE, Scanner, markers_variant
from ..core.alphabet import BOUNDARY as BOUNDARY_KIND
from ..core.alphabet import OPERATOR, SHIFT, SHIFT_MERGES, Atom
from ..core.cache import BoundedCache
from ..errors import DecodeError, FunctionalBPEError
# The unit classes, all of them the scheme's names too; the C scanner's tables are measured from them.
from ..unicode.markerclasses import (  # noqa: F401
    EMOJI, EMOJI_START, INHERITED_MARK, KEYCAP, PUNCT_CLASS, PUNCT_PROPERTIES, SPACELESS_BLOCKS, SPACELESS_CHAR,
    SPACELESS_RANGES, SPACELESS_SCRIPTS, WORD_CHAR,
)
from ..unicode.markerclasses import EMOJI_EXTEND_CLASS as EMOJI_EXTEND  # noqa: F401
from ..unicode.markerclasses import EMOJI_PRESENTATION_CLASS as EMOJI_PRESENTATION  # noqa: F401
from ..unicode.markerclasses import PICTOGRAPHIC_CLASS as PICTOGRAPHIC  # noqa: F401
from ..text.patterns import Pattern
from .base import Compiled, Scheme
from .textform import LITERAL, RESERVED, Literals, atom_glyphs, bad_part, check_errors, show_atoms

# The paper's configurations as ``fb.train`` arguments, its plain baseline included (a
# GPT-style split, here gpt4). Shift codes merge into their word, as in its reference code.
PAPER_PROFILE: Dict[str, Any] = {"punct": True, "digits": True, "case": True, "merge_shift_codes": True}
PAPER_PROFILES: Dict[str, Dict[str, Any]] = {
    "plain": {"scheme": "plain", "pattern": "gpt4"},
    "[w]": {"scheme": "markers"},
    "[w,p]": {"scheme": "markers", "punct": True},
    "[w,p,d]": {"scheme": "markers", "punct": True, "digits": True},
    "[w,p,d,↑]": {"scheme": "markers", **PAPER_PROFILE},
}

# -- atoms -----------------------------------------------------------------------------

BOUNDARY = "\ue300"
TITLE = "\ue301"
UPPER = "\ue302"
ARG_BASE = 0xE000
LITERAL_DIGITS = 3  # base-16 arguments of LITERAL: enough for the 4096 code points E000..EFFF
LITERALS = Literals(base=16, digits=LITERAL_DIGITS)

ATOMS: Tuple[Atom, ...] = tuple(
    [Atom(chr(ARG_BASE + v), f"ARG {v}", OPERATOR, f"⟨{v:X}⟩") for v in range(16)]
    + [
        Atom(LITERAL, "LITERAL", OPERATOR, "⟨LITERAL⟩"),
        Atom(BOUNDARY, "BOUNDARY", BOUNDARY_KIND, "¦"),
        Atom(TITLE, "TITLE", SHIFT, "↑"),
        Atom(UPPER, "UPPER", SHIFT, "⇑"),
    ]
)
# The same atoms with shift codes that BPE may merge (merge_shift_codes=True, the paper's rule):
# the same code points and names, so the ids and the file's atoms do not depend on it.
ATOMS_SHIFTS_MERGE: Tuple[Atom, ...] = tuple(
    Atom(a.char, a.name, a.kind | SHIFT_MERGES, a.glyph) if a.kind & SHIFT else a for a in ATOMS
)

# -- units -----------------------------------------------------------------------------

# Unit kinds.
WORD, DIGIT, PUNCT, SPACE, OTHER = "word", "digit", "punct", "space", "other"


def _units_pattern(letters: str) -> str:
    """The unit regex around ``letters``, the alternatives for runs of letters and marks.

    Each alternative starts only on characters that no other one starts on (the lookaheads
    keep emoji out of punct, digit and rest runs), so their order only matters for speed.
    The last one is the complement of the others: the matches tile every text.
    """
    inherited = INHERITED_MARK + "*"
    return "|".join(
        [
            letters,
            r"(?P<space>\s+)",
            r"(?P<punct>(?:(?!%s)[%s]%s)+)" % (EMOJI_START, PUNCT_CLASS, inherited),
            r"(?P<digit>(?:(?!%s)\p{N}%s)+)" % (KEYCAP, inherited),
            r"(?P<emoji>%s+%s)" % (EMOJI, inherited),
            r"(?P<rest>(?:(?!%s)[^\p{L}\p{M}\p{N}%s\s]%s)+)" % (EMOJI_START, PUNCT_CLASS, inherited),
        ]
    )


# The definition: words and runs of spaceless scripts told apart by script.
UNITS = _units_pattern(
    r"(?P<word>%s+)|(?P<spaceless>%s(?:%s|%s)*)" % (WORD_CHAR, SPACELESS_CHAR, SPACELESS_CHAR, INHERITED_MARK)
)
# The scheme's pattern, under its own name: it cuts units, not pieces (see units()).
PATTERN = Pattern(UNITS, "markers")
# The same cut for a text without SPACELESS_BLOCKS, where every letter is a word letter.
UNITS_WITHOUT_SPACELESS = _units_pattern(r"(?P<word>[\p{L}\p{M}]+)")
_MAYBE_SPACELESS = regex.compile(SPACELESS_BLOCKS)


@lru_cache(maxsize=None)
def _compiled(pattern: str) -> "regex.Pattern[str]":
    # Compiled on first use: the set operations take the regex module tens of milliseconds,
    # which `import functionalbpe` should not pay when markers are not used.
    return regex.compile(pattern, regex.V1)


def _finder(text: str) -> "regex.Pattern[str]":
    """The unit regex for ``text``: the fast one when no letter can be spaceless."""
    return _compiled(UNITS_WITHOUT_SPACELESS if _MAYBE_SPACELESS.search(text) is None else UNITS)


# The kind of a unit, from the name of the group that matched it ("space" is decided apart).
_GROUP_KIND = {
    "word": WORD, "space": SPACE, "punct": PUNCT, "digit": DIGIT,
    "emoji": OTHER, "spaceless": OTHER, "rest": OTHER,
}

# Decoding, one alternative per thing an atom can start: a shifted word with the marker
# before it (that marker and the opening one touch through the shift: a dropped space) and
# its closing marker after it (left to pair with the next one), markers that no encoder
# writes (three in a row, or a touching pair before a shift code: a unit's form begins and
# ends with at most one marker), a touching pair, a lone marker, an escaped private-use
# character, anything else.
_DECODE = regex.compile(
    "(?P<shift>(?P<space>\ue300)?(?P<code>[\ue301\ue302])\ue300(?P<word>[^\ue000-\uefff]*)(?=\ue300))"
    "|(?P<markers>\ue300{3,}|\ue300\ue300(?=[\ue301\ue302]))"
    "|(?P<pair>\ue300\ue300)"
    "|(?P<lone>\ue300)"
    "|(?P<literal>" + LITERALS.regex + ")"
    "|(?P<bad>[\ue000-\uefff])"
)


_ANY_ATOM = regex.compile("[\ue000-\uefff]")


def decodable_prefix(form: str) -> int:
    """How much of a text form that is still growing decodes for good (for streaming).

    The decoder reads the form left to right (``_DECODE``); a cut is safe where no match
    crosses it and none would change with what comes next. So the prefix may not end in a
    marker (it pairs with a following one into a space, or opens a shift's ``¦↑¦``), nor
    inside a LITERAL escape (three arguments follow), nor inside or right after a shifted
    word (its case applies up to the next atom, which must be its closing marker).

    >>> decodable_prefix("\ue300a\ue300"), decodable_prefix("\ue301\ue300ab")
    (2, 0)
    """
    n = len(form)
    # n only decreases, so the last TITLE (UPPER) before n stays the one found until n
    # passes it: each is searched for again only then, and the whole scan is linear.
    title = upper = len(form)
    while True:
        while n and form[n - 1] == BOUNDARY:
            n -= 1
        # Only a LITERAL whose digits are not all before n matters: look no further back.
        literal = form.rfind(LITERAL, max(0, n - LITERAL_DIGITS), n)
        if literal >= 0 and literal + 1 + LITERAL_DIGITS > n:
            n = literal
            continue
        if title >= n:
            title = form.rfind(TITLE, 0, n)
        if upper >= n:
            upper = form.rfind(UPPER, 0, n)
        shift = max(title, upper)
        if shift >= 0:
            # The atom that ends the shifted word decides whether the shift is one an encoder
            # writes (a closing marker), so it must be in the prefix.
            end = _ANY_ATOM.search(form, shift + 2, n)
            if end is None or end.start() >= n:
                n = shift
                continue
        return n


def units(text: str) -> List[Tuple[str, str]]:
    """Cut ``text`` into ``(kind, unit)`` pairs; the units join back to ``text``.

    >>> units("Ash caught 3 fish.")
    [('word', 'Ash'), ('space', ' '), ('word', 'caught'), ('space', ' '), ('digit', '3'), \
('space', ' '), ('word', 'fish'), ('punct', '.')]
    """
    out: List[Tuple[str, str]] = []
    for match in _finder(text).finditer(text):
        unit = match.group()
        kind = _GROUP_KIND[match.lastgroup]
        out.append((OTHER if kind == SPACE and unit != " " else kind, unit))
    return out


def escape_private_use(text: str) -> str:
    """Write each character of U+E000–U+EFFF as LITERAL and three base-16 argument atoms.

    >>> [hex(ord(c)) for c in escape_private_use("\\ue300")]
    ['0xe2ff', '0xe003', '0xe000', '0xe000']
    """
    return LITERALS.escape(text)


def case_code(word: str) -> Tuple[str, str]:
    """``(shift code, word to write)`` for a word: title, upper, or no code.

    A word is coded only when decoding gives it back exactly; a word that is already its
    own lower case (``cat``, and every word of a script without case) gets no code.

    >>> case_code("The"), case_code("WOW"), case_code("WiFi"), case_code("İ")
    (('\\ue301', 'the'), ('\\ue302', 'wow'), ('', 'WiFi'), ('', 'İ'))
    """
    low = word.lower()
    if low == word or len(low) != len(word):
        return "", word
    if low[:1].upper() + low[1:] == word:
        return TITLE, low
    if len(word) >= 2 and low.upper() == word:
        return UPPER, low
    return "", word


def _apply_case(code: str, word: str) -> str:
    return word[:1].upper() + word[1:] if code == TITLE else word.upper()


class BoundaryMarkers(Scheme):
    """The boundary-marker scheme (``scheme="markers"``): ``[w]`` by default; ``punct``,
    ``digits``, ``case`` give ``[w,p]``, ``[w,p,d]`` and the ``↑`` variants.

    ``merge_shift_codes`` (default True, as the paper's reference code): BPE may merge a
    shift code into its word (``↑¦the¦`` one token); False keeps every shift code a token of
    its own. Either way a token ending in ``¦`` never merges with one starting with ``¦``.
    ``normalize`` as for every scheme.

    It cuts text into its own units, so it takes no pattern. Its raw pieces are already its
    text-form pieces (markers, shift codes and escapes written in): the transform is the
    identity, and the compiled scanner cuts, counts and encodes them in C.

    >>> m = BoundaryMarkers(punct=True, digits=True, case=True)
    >>> [m.show(p) for p in m.split("Ash caught 3")], m.variant
    (['↑¦ash¦', '¦caught¦', '¦3'], '[w,p,d,↑]')
    """

    name = "markers"
    atoms = ATOMS
    # Files written before merge_shift_codes existed kept shift codes apart.
    file_defaults = {"merge_shift_codes": False}

    def __init__(
        self,
        punct: bool = False,
        digits: bool = False,
        case: bool = False,
        pattern: Union[str, Pattern, None] = None,
        normalize: Optional[str] = None,
        merge_shift_codes: bool = True,
    ) -> None:
        if pattern not in (None, "markers", UNITS):
            raise FunctionalBPEError(
                "the markers scheme cuts text into its own units (word, digit, punct, space, "
                f"other; see docs/markers.md) and takes no pattern, got pattern={excerpt(pattern)}"
            )
        super().__init__(PATTERN, normalize)
        for name, value in (("punct", punct), ("digits", digits), ("case", case), ("merge_shift_codes", merge_shift_codes)):
            if not isinstance(value, bool):
                raise FunctionalBPEError(f"markers option {name} must be True or False, got {value!r}")
        self.punct = punct
        self.digits = digits
        self.case = case
        self.merge_shift_codes = merge_shift_codes
        self.atoms = ATOMS_SHIFTS_MERGE if merge_shift_codes else ATOMS
        # The options as the compiled scheme takes them (csrc/lib/scan/markers.h).
        self.bits = MARKERS_PUNCT * punct | MARKERS_DIGITS * digits | MARKERS_CASE * case
        self._marked = frozenset([WORD] + [PUNCT] * punct + [DIGIT] * digits)
        # word -> its marked form; words repeat a lot.
        self._words: BoundedCache[str, str] = BoundedCache(1 << 20)
        self._compiled = Compiled(scanner=Scanner("markers", self.bits), cuts_safely=False, identity=True)

    def compiled(self) -> Compiled:
        return self._compiled

    @property
    def variant(self) -> str:
        """The paper's name of the variant, e.g. ``[w,p,d,↑]``."""
        return markers_variant(self.bits)

    def raw_pieces(self, text: str) -> List[str]:
        return self.pieces(self.prepare(text))

    split = raw_pieces

    def pieces(self, text: str) -> List[str]:
        """The text-form pieces of ``text``, one per unit (dropped spaces have none).

        This is what the trainer counts and the encoder merges within. The compiled scheme
        (``csrc/lib/scan/markers.c``) cuts them when it is built; :meth:`python_pieces` is the
        definition it follows.

        >>> [BoundaryMarkers(punct=True).show(p) for p in BoundaryMarkers(punct=True).pieces("a, b")]
        ['¦a¦', ',¦', '¦b¦']
        """
        scanner = NATIVE.scanner
        if scanner is not None:
            return scanner.markers_pieces(plain_str(text), self.bits)
        return self.python_pieces(text)

    def python_pieces(self, text: str) -> List[str]:
        """:meth:`pieces` in Python: the reference, and the path without the extension."""
        # One pass with one unit of delay: a single space after a marked unit is held back
        # until the next unit says whether it is dropped (both neighbours marked).
        marked = self._marked
        out: List[str] = []
        prev = ""  # the kind of the unit before, "" at the start
        held = False  # a single space after a marked unit, not yet emitted
        for match in _finder(text).finditer(text):
            unit = match.group()
            kind = _GROUP_KIND[match.lastgroup]
            if kind == SPACE and unit != " ":
                kind = OTHER
            if held:
                held = False
                if kind in marked:  # the space is dropped: markers on both sides of it
                    if prev != WORD:
                        out[-1] += BOUNDARY
                    out.append(self._word(unit) if kind == WORD else BOUNDARY + unit)
                    prev = kind
                    continue
                out.append(" ")
                prev = SPACE
            if kind == SPACE and prev in marked:
                held = True
                continue  # prev stays the marked unit before the space
            if kind == WORD:
                out.append(self._word(unit))
            elif kind == OTHER:
                out.append(escape_private_use(unit))
            else:
                out.append(unit)
            prev = kind
        if held:
            out.append(" ")
        return out

    def _word(self, word: str) -> str:
        form = self._words.get(word)
        if form is None:
            code, written = case_code(word) if self.case else ("", word)
            form = self._words.put(word, code + BOUNDARY + written + BOUNDARY)
        return form

    def decode(self, form: str, errors: str = "strict") -> str:
        """The text that ``form`` (from :meth:`encode`) stands for.

        ``¦¦`` and ``¦↑¦``/``¦⇑¦`` are one space, a lone ``¦`` is nothing, a shift code
        re-cases the word up to its closing marker, LITERAL gives back its character.
        Anything no encoder writes is an error: any other use of an atom, three markers in
        a row, a shifted word that is not written as the encoder writes it (lower case, and
        the same length once re-cased). With ``errors="replace"`` the atom, the markers or
        the shift code becomes U+FFFD and with ``errors="ignore"`` it is dropped (for ids
        that a model generated). So the text is never longer than the form, in characters.

        >>> BoundaryMarkers().decode("\\ue300a\\ue300\\ue300b\\ue300")
        'a b'
        """
        check_errors(errors)
        if BOUNDARY * 3 not in form and RESERVED.search(form.replace(BOUNDARY, "")) is None:
            # Only markers, none three in a row: pairs are spaces and lone ones vanish,
            # exactly as _DECODE does.
            return form.replace(BOUNDARY + BOUNDARY, " ").replace(BOUNDARY, "")
        return _DECODE.sub(_decoder(errors), form)

    def show(self, piece: str) -> str:
        """``piece`` with atoms as glyphs: ``¦ ↑ ⇑``, an escaped character as ``⟨U+E300⟩``.

        Different from :meth:`decode`: a literal ``¦`` of the input shows as ``¦`` too.
        """
        return show(piece)

    def decodable_prefix(self, text: str) -> int:
        return decodable_prefix(text)

    def options(self) -> Dict[str, Any]:
        options: Dict[str, Any] = {
            "punct": self.punct, "digits": self.digits, "case": self.case, "merge_shift_codes": self.merge_shift_codes,
        }
        if self.normalize is not None:  # written only when set: older files stay as they were
            options["normalize"] = self.normalize
        return options

    def __repr__(self) -> str:
        return (
            f"BoundaryMarkers(punct={self.punct}, digits={self.digits}, case={self.case}, "
            f"merge_shift_codes={self.merge_shift_codes})"
        )


_GLYPHS = atom_glyphs(ATOMS)
_SHOW = regex.compile(LITERALS.regex + "|[\ue000-\uefff]")


def show(piece: str) -> str:
    """A text-form piece as a person reads it (atoms as glyphs)."""
    return show_atoms(piece, _SHOW, _show_atom)


def _show_atom(match: "regex.Match[str]") -> str:
    atom = match.group()
    if len(atom) > 1:
        return "⟨U+%04X⟩" % ord(LITERALS.char(atom))
    return _GLYPHS.get(atom, "⟨U+%04X?⟩" % ord(atom))


def _shifted(code: str, word: str) -> Optional[str]:
    """The word a shift code makes of ``word``, or None where no encoder writes that code
    before that word: the encoder codes a word only when it comes back exactly, with as many
    characters as it has (:func:`case_code`), so a shifted word never grows."""
    cased = _apply_case(code, word)
    return cased if word and case_code(cased) == (code, word) else None


def _decoder(errors: str) -> Callable[["regex.Match[str]"], str]:
    bad = bad_part(errors)

    def replace(match: "regex.Match[str]") -> str:
        kind = match.lastgroup
        if kind == "shift":
            space = " " if match.group("space") else ""
            code, word = match.group("code", "word")
            cased = _shifted(code, word)
            if cased is not None:
                return space + cased
            if errors == "strict":
                raise DecodeError(
                    f"not a boundary-marker text form: the shift code U+{ord(code):04X} at offset "
                    f"{match.start('code')} stands before {word!r}, which no encoded word is written as "
                    "(a shifted word is lower case and comes back exactly); "
                    "decode with errors='replace' to get U+FFFD"
                )
            return space + bad + word
        if kind == "pair":
            return " "
        if kind == "lone":
            return ""
        if kind == "literal":
            return LITERALS.char(match.group())
        if errors == "strict":
            what = (
                f"{len(match.group())} markers in a row" if kind == "markers"
                else f"the atom U+{ord(match.group()):04X}"
            )
            raise DecodeError(
                f"not a boundary-marker text form: {what} at offset {match.start()} "
                "is not where the scheme puts it (a shift code must be followed by a marker, a word "
                "and a marker, LITERAL by three arguments, and markers come alone or in touching "
                "pairs); decode with errors='replace' to get U+FFFD"
            )
        return bad

    return replace
