"""The Functionalizer: case, accents and repetition pulled out of a piece as instructions.

A glyph variant of a piece — its capitals, its accents, a run of one repeated character or
substring — becomes a short *instruction* (an operator followed by numeric arguments) in
front of a *base* piece, so that BPE needs one entry for ``hello`` instead of one for every
surface form (Makowski and Guter, 2026; the spec is ``shared/spec/functionalizer.md``)::

    >>> f = Functionalizer()
    >>> [f.show(p) for p in f.split("Héllo ######")]
    ['⟨ACUTE 1⟩', '⟨CAP 0⟩', 'hello', ' ', '⟨REPEAT 0 6⟩', '#']
    >>> f.decode(f.encode("Héllo ######"))
    'Héllo ######'

**Text form.** Operators and their arguments are private-use characters: U+E000 + n is the
argument n (0–255), U+E100.. are the operators. BPE sees each of them as one atomic symbol
(see :mod:`functionalbpe.core.alphabet`). A private-use character U+E000–U+EFFF that was already
in the input is written ``LITERAL(hi, lo)``, so it can never be taken for an instruction.

**Reading a text form back.** It is a sequence of *groups*: zero or more instructions, then a
run of base characters (plain characters and LITERALs) up to the next instruction. The
instructions of a group are applied to the run that follows them, last written first:
case, then accents, then repetition [paper]. Positions count characters of the base (a
LITERAL is one character) and are at most 255, so only the first 256 characters of a run
can be touched. Because no operator looks at the end of the run, the pieces of a text can be
joined and read back without knowing where one piece ended.

**Exactness.** Every transformation is checked by running the decoder on it; a character or
piece that would not come back exactly stays as it is. This check is part of encoding, not a
test helper: it is what makes ``decode(encode(x)) == x`` hold for every input (with
``normalize``, for the normalized input).
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from itertools import chain, compress, islice
from operator import eq
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import regex

from ..util.checks import plain_str
from ..core._native import JOIN_RUNS, NATIVE, Scanner
from ..core.alphabet import OPERATOR, Atom
from ..core.cache import BoundedCache
from ..core.piecetable import PieceTable
from ..errors import DecodeError, FunctionalBPEError
from ..text.patterns import Pattern, pretokenize
from .base import Compiled, Scheme, transform_table
from .textform import LITERAL, RESERVED, Literals, bad_part, check_errors, show_atoms

# --- the code points --------------------------------------------------------------------

ARG0 = 0xE000
MAX_ARG = 255  # positions and counts are one argument each [paper]

CAPITALIZE = "\ue100"
# Operator, name, combining mark; E101..E10D in the paper's order.
DIACRITIC_TABLE = (
    ("\ue101", "TILDE", "\u0303"),
    ("\ue102", "ACUTE", "\u0301"),
    ("\ue103", "GRAVE", "\u0300"),
    ("\ue104", "CIRCUMFLEX", "\u0302"),
    ("\ue105", "DIAERESIS", "\u0308"),
    ("\ue106", "MACRON", "\u0304"),
    ("\ue107", "DOT_ABOVE", "\u0307"),
    ("\ue108", "RING_ABOVE", "\u030a"),
    ("\ue109", "DOUBLE_ACUTE", "\u030b"),
    ("\ue10a", "CARON", "\u030c"),
    ("\ue10b", "COMMA_BELOW", "\u0326"),
    ("\ue10c", "CEDILLA", "\u0327"),
    ("\ue10d", "OGONEK", "\u0328"),
)
REPEAT = "\ue200"
MULTIREPEAT = "\ue201"
# LITERAL (U+E2FF, textform.py) is this project's addition: a private-use character of the
# input, written as LITERAL(hi, lo) with two arguments (the offset from U+E000 in base 256).
LITERALS = Literals(base=256, digits=2)

MARK_OF_OP: Dict[str, str] = {op: mark for op, _, mark in DIACRITIC_TABLE}
OP_OF_MARK: Dict[str, str] = {mark: op for op, _, mark in DIACRITIC_TABLE}
# How :meth:`Functionalizer.show` names each operator.
OP_NAMES: Dict[str, str] = {
    CAPITALIZE: "CAP",
    **{op: name for op, name, _ in DIACRITIC_TABLE},
    REPEAT: "REPEAT",
    MULTIREPEAT: "MULTIREPEAT",
    LITERAL: "LITERAL",
}
# Arguments each instruction takes. LITERAL is not an instruction: it is a base character.
ARITY: Dict[str, int] = {CAPITALIZE: 1, **{op: 1 for op in MARK_OF_OP}, REPEAT: 2, MULTIREPEAT: 3}


def _make_atoms() -> Tuple[Atom, ...]:
    args = [Atom(chr(ARG0 + n), f"ARG {n}", OPERATOR, f"⟨{n}⟩") for n in range(MAX_ARG + 1)]
    ops = [Atom(op, name if name != "CAP" else "CAPITALIZE", OPERATOR, f"⟨{name}⟩") for op, name in OP_NAMES.items()]
    return tuple(args + sorted(ops, key=lambda a: a.char))


# Every atom has an id whether the options use it or not, so that ids do not depend on them.
ATOMS: Tuple[Atom, ...] = _make_atoms()

# The configuration of the paper: NFC first, its own split, every operator, instructions
# as pieces of their own.
PAPER_PROFILE: Dict[str, Any] = {
    "pattern": "functionalizer",
    "normalize": "NFC",
    "case": True,
    "diacritics": True,
    "repeat": True,
    "split_operators": True,
}

# Every configuration of the paper's tables, as ``fb.train`` arguments: its split alone (the
# "split-only" baseline, the plain scheme), with the Functionalizer, with repetition only,
# and the same on its Llama split. NFC on every one, the baselines included, as its code does.
PAPER_PROFILES: Dict[str, Dict[str, Any]] = {
    "split": {"scheme": "plain", "pattern": "functionalizer", "normalize": "NFC"},
    "split + Functionalizer": {"scheme": "functional", **PAPER_PROFILE},
    "split + Functionalizer (repeat only)": {"scheme": "functional", **PAPER_PROFILE, "case": False, "diacritics": False},
    "llama": {"scheme": "plain", "pattern": "functionalizer-llama", "normalize": "NFC"},
    "llama + Functionalizer": {"scheme": "functional", **PAPER_PROFILE, "pattern": "functionalizer-llama"},
}

_ARG = "[\ue000-\ue0ff]"
_INSTRUCTION = f"(?:[\ue100-\ue10d]{_ARG}|\ue200{_ARG}{{2}}|\ue201{_ARG}{{3}})"
# hi 0..15: U+E000 + 256*hi + lo stays in U+E000..U+EFFF
_LITERAL = LITERALS.regex
# Classes of plain code points are matched with `re`, which is several times faster than
# `regex` on short strings; only the Unicode properties need `regex`.
# One match per unit of a text form: a group (instructions and the base run after them), a
# LITERAL outside a group, or an atom that belongs to nothing (never written by the encoder).
# A base run, written so that a long run of plain characters is one fast class loop.
_BASE = f"[^\ue000-\uefff]*(?:{_LITERAL}[^\ue000-\uefff]*)*"
_DECODE_RE = re.compile(f"({_INSTRUCTION}+)({_BASE})|({_LITERAL})|[\ue000-\uefff]")
_GROUP_RE = re.compile(f"({_INSTRUCTION}+)({_BASE})")
_SHOW_RE = re.compile(f"{_INSTRUCTION}|{_LITERAL}|[\ue100-\uefff]{_ARG}*|{_ARG}")
_CHAR_RUN_RE = re.compile(r"(.)\1{2,}", re.DOTALL)
_RUN3_RE = re.compile(r"(.)\1\1", re.DOTALL)  # whether there is a run, not where it ends
# Characters that may have a plan (see char_plan): a filter, so that a long piece costs one
# regex scan; the plan itself is decided by unicodedata. A test checks that it misses none.
_CASE_OR_ACCENT_RE = regex.compile(r"[\p{Uppercase}\p{Decomposition_Type=Canonical}]")
# A non-ASCII piece that this does not match, and that is no repetition of a unit, needs no
# instruction: no candidate character, no run of 3, nothing to escape.
_MAYBE_WORK_RE = regex.compile(r"[\p{Uppercase}\p{Decomposition_Type=Canonical}\ue000-\uefff]|(.)\1\1", regex.DOTALL)

Instruction = Tuple[Any, ...]  # (operator, arg, ...)

# Patterns that never yield two equal pieces in a row: nothing to join.
_NEVER_TWO_EQUAL = frozenset({"functionalizer-runs"})
# Patterns whose runs of equal pieces never span a safe cut (text/cuts.py): in the paper's
# split only single spaces repeat in a row, and no safe cut falls between two spaces.
_RUNS_NEVER_CUT = frozenset({"functionalizer"})


_ARGS = [chr(ARG0 + n) for n in range(MAX_ARG + 1)]
# An ASCII piece's capitals as a string: "A" for a capital, "a" for anything else.
_CASE_SHAPE = str.maketrans({chr(c): "A" if "A" <= chr(c) <= "Z" else "a" for c in range(128)})
_capitals_by_shape: BoundedCache[str, Tuple[str, ...]] = BoundedCache(1 << 16)


def _capitals_of_shape(shape: str) -> Tuple[str, ...]:
    """CAPITALIZE(pos) for each "A" of a case shape (see _CASE_SHAPE), written once per shape."""
    capitals = _capitals_by_shape.get(shape)
    if capitals is None:
        capitals = _capitals_by_shape.put(shape, tuple(CAPITALIZE + _ARGS[pos] for pos, c in enumerate(shape) if c == "A"))
    return capitals


def _write(instructions: Sequence[Instruction]) -> List[str]:
    return [ins[0] + "".join([_ARGS[n] for n in ins[1:]]) for ins in instructions]


def escape(text: str) -> str:
    """Write every character of U+E000..U+EFFF as ``LITERAL(hi, lo)``.

    >>> escape("a\\ue123") == "a" + LITERAL + "\\ue001\\ue023"
    True
    """
    return LITERALS.escape(text)


# --- reading instructions back ------------------------------------------------------------


class FunctionalDecodeError(DecodeError):
    """A text form that no encoding produces (a stray argument, a position past the base)."""


class _GroupError(FunctionalDecodeError):
    """An instruction of a group that no encoder writes; ``index`` says which one."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


# Where each operator stands in a group. The encoder writes repetitions, then accents, then
# capitals (Functionalizer.describe), so decoding applies case, then accents, then repetition.
_STAGE: Dict[str, int] = {REPEAT: 0, MULTIREPEAT: 0, **{op: 1 for op in MARK_OF_OP}, CAPITALIZE: 2}
_AFTER = ("a repetition", "an accent", "a capital")
# The fewest copies a REPEAT or MULTIREPEAT makes: the encoder describes runs of 3 or more.
MIN_COUNT = 3
# The most characters of text one character of a text form decodes to. A group's repeated
# ranges lie in its base without overlapping, each copied at most 255 times, and case and
# accents replace one character by one, so a group with a base of B characters decodes to
# at most B + 254 * B characters, and its instructions take 3 or more characters of their
# own; everything outside groups decodes to at most one character per character. The most
# an encoder writes is MULTIREPEAT(0, 255, 255) in front of 255 characters: 65,025
# characters from 259, a factor of 251.
MAX_EXPANSION = 255


def _chars(n: int) -> str:
    return f"{n} character" if n == 1 else f"{n} characters"


def _named(ins: Instruction) -> str:
    return f"{OP_NAMES[ins[0]]}({', '.join(map(str, ins[1:]))})"


def reach(instructions: Sequence[Instruction]) -> int:
    """How many leading characters of the base the instructions look at."""
    return max(ins[2] if ins[0] == MULTIREPEAT else ins[1] + 1 for ins in instructions)


def check_group(instructions: Sequence[Instruction], length: int) -> None:
    """Raise :class:`FunctionalDecodeError` unless the group is one an encoder writes.

    ``length`` is the number of characters of the base that the group looks at. What the
    encoder writes, and so all that decodes with ``errors="strict"``: repetitions, then
    accents, then capitals; repeated ranges that ascend without overlapping, each of at least
    one character (two for MULTIREPEAT), copied 3 to 255 times; accent positions that do not
    descend, capital positions that ascend; every position inside the base. This is what
    bounds the text a group decodes to (:data:`MAX_EXPANSION`).

    >>> check_group([(REPEAT, 0, 3), (CAPITALIZE, 0)], 1)
    >>> check_group([(CAPITALIZE, 0), (REPEAT, 0, 3)], 1)
    Traceback (most recent call last):
    ...
    functionalbpe.schemes.functional._GroupError: REPEAT(0, 3) comes after a capital: the encoder writes repetitions, then accents, then capitals
    """
    stage, last = 0, -1  # last: the end of the last range, or the last accent or capital position
    for index, ins in enumerate(instructions):
        op, pos = ins[0], ins[1]
        if _STAGE[op] != stage:
            if _STAGE[op] < stage:
                raise _GroupError(
                    f"{_named(ins)} comes after {_AFTER[stage]}: the encoder writes repetitions, "
                    "then accents, then capitals",
                    index,
                )
            stage, last = _STAGE[op], -1
        if stage == 0:
            end, count = (pos + 1, ins[2]) if op == REPEAT else (ins[2], ins[3])
            problem = (
                "starts inside the range repeated before it" if pos < last
                else "repeats fewer than 2 characters" if op == MULTIREPEAT and end - pos < 2
                else f"makes {count} copies (the encoder writes runs of {MIN_COUNT} or more)" if count < MIN_COUNT
                else f"reaches past the end of its base ({_chars(length)})" if end > length
                else None
            )
            last = end
        else:
            problem = (
                f"reaches past the end of its base ({_chars(length)})" if pos >= length
                else "comes after a capital at the same or a later position" if stage == 2 and pos <= last
                else "comes after an accent at a later position" if pos < last
                else None
            )
            last = pos
        if problem is not None:
            raise _GroupError(f"{_named(ins)} {problem}", index)


def apply_instructions(instructions: Sequence[Instruction], base: str) -> str:
    """Apply one group's instructions to the base run after them, last written first.

    Raises :class:`FunctionalDecodeError` for a group that no encoder writes
    (:func:`check_group`), or a capital or accent that does not give one character.

    >>> apply_instructions([(REPEAT, 0, 3), (CAPITALIZE, 0)], "ab")
    'AAAb'
    """
    # Only the first reach(...) characters can change: positions are checked against that head.
    cut = reach(instructions)
    head = list(base[:cut])
    check_group(instructions, len(head))
    repeats = 0
    for index in range(len(instructions) - 1, -1, -1):
        op, pos = instructions[index][0], instructions[index][1]
        if _STAGE[op] == 0:
            repeats = index + 1
            break
        char = head[pos]
        head[pos] = char.upper() if op == CAPITALIZE else unicodedata.normalize("NFC", char + MARK_OF_OP[op])
        if len(head[pos]) != 1:
            raise _GroupError(
                f"{_named(instructions[index])} makes {head[pos]!r} of {char!r}, not one character "
                "(the encoder writes only those that do)",
                index,
            )
    if not repeats:
        return "".join(head) + base[cut:]
    # The ranges ascend without overlapping, so expanding each in place, last first, is
    # writing them out in order.
    parts: List[str] = []
    done = 0
    for ins in instructions[:repeats]:
        pos = ins[1]
        end, count = (pos + 1, ins[2]) if ins[0] == REPEAT else (ins[2], ins[3])
        parts.append("".join(head[done:pos]))
        parts.append("".join(head[pos:end]) * count)
        done = end
    parts.append("".join(head[done:]))
    parts.append(base[cut:])
    return "".join(parts)


# Prefixes longer than this are parsed every time: a cache of hostile megabyte-long prefixes
# would hold on to them.
_CACHED_PREFIX = 32


@lru_cache(maxsize=1 << 14)
def _parse_short_prefix(prefix: str) -> Tuple[Tuple[Instruction, ...], int]:
    return _parse_any_prefix(prefix)


def _parse_any_prefix(prefix: str) -> Tuple[Tuple[Instruction, ...], int]:
    out: List[Instruction] = []
    i = 0
    while i < len(prefix):
        op = prefix[i]
        n = ARITY[op]
        out.append((op, *[ord(c) - ARG0 for c in prefix[i + 1 : i + 1 + n]]))
        i += 1 + n
    return tuple(out), reach(out)


def _parse_prefix(prefix: str) -> Tuple[Tuple[Instruction, ...], int]:
    """The instructions of a group's prefix and their :func:`reach`."""
    return _parse_short_prefix(prefix) if len(prefix) <= _CACHED_PREFIX else _parse_any_prefix(prefix)


# (prefix, the head of the base it looks at) -> that head decoded. Groups repeat a lot
# (CAP 0 before a lower-case letter, REPEAT 0 4 before a space), so decoding is mostly lookups.
_group_cache: BoundedCache[Tuple[str, str], str] = BoundedCache(1 << 16)
_CACHED_HEAD = 64


def decode_text_form(text: str, errors: str = "strict") -> str:
    """The text a text form stands for.

    ``errors="strict"`` raises :class:`FunctionalDecodeError` on a text form that no encoder
    writes (an argument with no operator, a reserved code point, a position past its base);
    ``"replace"`` writes U+FFFD for each such atom or instruction group instead, and
    ``"ignore"`` drops it (for ids a model generated).

    >>> decode_text_form("\\ue102\\ue001\\ue100\\ue000hello")
    'Héllo'
    """
    check_errors(errors)
    if RESERVED.search(text) is None:
        return text
    return _decode(text, errors)


def decodable_prefix(text: str) -> int:
    """How much of a text form that is still growing decodes for good (for streaming).

    A cut is safe where no unit of the decoder (``_DECODE_RE``) crosses it and none would
    read differently with more text after it: not after the start of an instruction or a
    LITERAL whose arguments have not all arrived (at most the last three characters), and
    not inside a group whose base does not yet reach every character its instructions look
    at. Past that reach a base is plain text: no instruction looks at its end, so a cut in
    it is safe.

    >>> decodable_prefix("\ue100\ue000he"), decodable_prefix("\ue100\ue001h"), decodable_prefix("ab\ue100")
    (4, 0, 2)
    """
    if RESERVED.search(text) is None:
        return len(text)
    matches = list(_DECODE_RE.finditer(text))
    n, k = len(text), len(matches)
    # Atoms at the end that start no complete unit (an instruction has at most four
    # characters, a LITERAL three) may be the beginning of one.
    while k and matches[k - 1].group(1) is None and matches[k - 1].group(3) is None and len(text) - matches[k - 1].start() <= 3:
        k -= 1
        n = matches[k].start()
    if k and matches[k - 1].group(1) is not None and matches[k - 1].end() == n:
        prefix, base = matches[k - 1].group(1), matches[k - 1].group(2)
        chars = len(LITERALS.unescape(base)) if LITERAL in base else len(base)
        # Held while its base is not all there, and while it has none: until a base character
        # arrives, more instructions join the group (even where they look at nothing, as a
        # MULTIREPEAT with its end at its start does).
        if chars < max(1, _parse_prefix(prefix)[1]):
            n = matches[k - 1].start()
    return n


def _decode_or_none(text: str) -> Optional[str]:
    """The strict decoding of a text form, or None where it has none (the encoder's check)."""
    try:
        return _decode(text, "strict")
    except FunctionalDecodeError:
        return None


def _decode(text: str, errors: str) -> str:
    # The text form of one piece with instructions is one group; the encoder's check decodes
    # tens of thousands of those, so they skip the general loop.
    m = _GROUP_RE.fullmatch(text)
    if m is not None:
        return _decode_group(m.group(1), m.group(2), errors, 0)

    def unit(m: "re.Match[str]") -> str:
        prefix, base, literal = m.groups()
        if prefix is not None:
            return _decode_group(prefix, base, errors, m.start())
        if literal is not None:
            return LITERALS.char(literal)
        if errors == "strict":
            raise FunctionalDecodeError(
                f"at offset {m.start()} of the text form: U+{ord(m.group()):04X} starts no complete "
                "instruction or LITERAL, so no Functionalizer encoding contains it; "
                "decode with errors='replace' to get U+FFFD"
            )
        return bad_part(errors)

    return _DECODE_RE.sub(unit, text)


def _decode_group(prefix: str, base: str, errors: str, offset: int) -> str:
    """One group: its instructions applied to its base run (LITERALs still escaped)."""
    if LITERAL in base:
        base = LITERALS.unescape(base)
    instructions, cut = _parse_prefix(prefix)
    key = (prefix, base[:cut])
    head = _group_cache.get(key)
    if head is None:
        try:
            head = apply_instructions(instructions, key[1])
        except _GroupError as exc:
            if errors == "strict":
                at = offset + sum(1 + ARITY[ins[0]] for ins in instructions[: exc.index])
                raise FunctionalDecodeError(
                    f"at offset {at} of the text form, instruction {exc.index + 1} of its group: {exc}; "
                    "decode with errors='replace' to get U+FFFD"
                ) from None
            return bad_part(errors) + base
        # Only small groups are kept, so that the cache stays small whatever is decoded.
        if len(head) <= _CACHED_HEAD and len(prefix) <= _CACHED_PREFIX:
            _group_cache.put(key, head)
    return head + base[cut:]


# --- describing one piece ----------------------------------------------------------------


def _period(s: str) -> int:
    """Length of the shortest ``u`` with ``s == u * k``."""
    if not s:
        return 0
    p = (s + s).find(s, 1)
    return p if len(s) % p == 0 else len(s)


def _repeats_whole(period: int, length: int) -> bool:
    """Does a piece of ``length`` with shortest period ``period`` get the whole-piece rule?

    ``period`` is ``(s + s).find(s, 1)``: it is below ``len(s)`` exactly when ``s`` is a
    power of a shorter string, and then it is the length of the shortest one.
    """
    return 3 * period <= length and period <= MAX_ARG


def _describe_run(unit: str, count: int, pos: int, instructions: List[Instruction], parts: List[str]) -> int:
    """Describe ``unit * count`` at base position ``pos``; return the new base length.

    Runs longer than 255 are described in chunks of 255; what cannot be described (a
    remainder under 3, a position past 255) stays literal.
    """
    width = len(unit)
    while count >= 3 and pos + (width if width > 1 else 0) <= MAX_ARG:
        chunk = min(count, MAX_ARG)
        if width == 1:
            instructions.append((REPEAT, pos, chunk))
        else:
            instructions.append((MULTIREPEAT, pos, pos + width, chunk))
        parts.append(unit)
        pos += width
        count -= chunk
    parts.append(unit * count)
    return pos + width * count


def describe_repeats(piece: str) -> Tuple[List[Instruction], str]:
    """Repetition instructions and the base they apply to.

    A piece that is ``u`` repeated k ≥ 3 times becomes MULTIREPEAT(0, len(u), k) + ``u``
    (REPEAT(0, k) when ``u`` is one character); otherwise each run of c ≥ 3 identical
    characters becomes one character and REPEAT(pos, c).

    >>> describe_repeats("abcabcabc")
    ([('\\ue201', 0, 3, 3)], 'abc')
    """
    instructions: List[Instruction] = []
    parts: List[str] = []
    period = _period(piece)
    if period <= MAX_ARG and len(piece) >= 3 * period:  # u * k, including one character k times
        _describe_run(piece[:period], len(piece) // period, 0, instructions, parts)
        return instructions, "".join(parts)
    pos, last = 0, 0
    for m in _CHAR_RUN_RE.finditer(piece):
        parts.append(piece[last : m.start()])
        pos += m.start() - last
        pos = _describe_run(m.group(1), m.end() - m.start(), pos, instructions, parts)
        last = m.end()
    if not instructions:
        return instructions, piece
    parts.append(piece[last:])
    return instructions, "".join(parts)


@lru_cache(maxsize=1 << 16)
def char_plan(char: str, case: bool, diacritics: bool) -> Optional[Tuple[str, bool, Tuple[str, ...]]]:
    """How one character is written: ``(base_char, capitalized, marks)``, or None to keep it.

    A character whose canonical decomposition is a letter plus marks that are all in the
    table loses the marks; an upper-case letter whose lower case is one character that
    upper-cases back to it is lowered. The plan is kept only if the decoder rebuilds the
    character from it exactly.

    >>> char_plan("É", True, True)
    ('e', True, ('\\u0301',))
    >>> char_plan("ẞ", True, True) is None  # its lower case ß upper-cases to SS
    True
    """
    candidates = []
    if diacritics and not char.isascii():
        d = unicodedata.normalize("NFD", char)
        if len(d) > 1 and unicodedata.category(d[0])[0] == "L" and all(m in OP_OF_MARK for m in d[1:]):
            candidates.append((d[0], tuple(d[1:])))
    candidates.append((char, ()))
    for letter, marks in candidates:
        capitalized = False
        if case and letter.isupper():
            lower = letter.lower()
            if len(lower) == 1 and lower.upper() == letter:
                letter, capitalized = lower, True
        if not capitalized and not marks:
            continue
        if _rebuild(letter, capitalized, marks) == char:
            return letter, capitalized, marks
    return None


def _rebuild(letter: str, capitalized: bool, marks: Tuple[str, ...]) -> str:
    """What the decoder makes of one planned character: the same code it runs on a piece."""
    instructions = _char_instructions([(0, capitalized, marks)])
    try:
        return apply_instructions(instructions, letter)
    except FunctionalDecodeError:
        return ""


def _char_instructions(plans: Sequence[Tuple[int, bool, Tuple[str, ...]]]) -> List[Instruction]:
    """Accent instructions, then case instructions, positions ascending.

    The decoder applies them last written first: case, then the marks of a character in
    their canonical order, so a character's marks are written outermost first.
    """
    accents = [(OP_OF_MARK[m], pos) for pos, _, marks in plans for m in reversed(marks)]
    capitals = [(CAPITALIZE, pos) for pos, capitalized, _ in plans if capitalized]
    return accents + capitals


# The compiled describers, one per (case, diacritics, repeat, split_operators): each keeps
# the Unicode blocks it has been given.
_describers: Dict[Tuple[bool, bool, bool, bool], Any] = {}

# One entry of block_plans: code point, letter, the character decoded, capitalized, the
# accent operators in the order written (U+E100 + each), or None where they are no
# substitution of one character.
BlockPlan = Tuple[int, int, int, bool, Optional[Tuple[int, ...]]]


@lru_cache(maxsize=None)
def block_plans(block: int, case: bool, diacritics: bool) -> Tuple[BlockPlan, ...]:
    """The plans of the characters of one Unicode block (256 code points from 256·block), for
    the compiled describer (``csrc/_functional.pyx``), which asks for a block the first time
    it meets one.

    The characters are those :meth:`Functionalizer._plan_chars` plans, with the plan
    :func:`char_plan` gives; the decoded character is what :func:`apply_instructions` makes
    of the plan. The compiled check may apply a plan as a substitution only if every step of
    its decoding keeps one character; where one does not, the operators are None and the
    piece is left to :meth:`Functionalizer.describe`.

    >>> block_plans(0, True, True)[0]
    (65, 97, 65, True, ())
    """
    start = block << 8
    plans = []
    for m in _CASE_OR_ACCENT_RE.finditer("".join(map(chr, range(start, start + 256)))):
        plan = char_plan(m.group(), case, diacritics)
        if plan is None:
            continue
        letter, capitalized, marks = plan
        head, substitution = letter, True
        for ins in reversed(_char_instructions([(0, capitalized, marks)])):
            head = apply_instructions([ins], head)
            substitution = substitution and len(head) == 1
        ops = tuple(ord(OP_OF_MARK[mark]) - ord(CAPITALIZE) for mark in reversed(marks))
        plans.append((ord(m.group()), ord(letter), ord(head) if substitution else 0, capitalized, ops if substitution else None))
    return tuple(plans)


class Functionalizer(Scheme):
    """The Functionalizer scheme: text ↔ a text form of instructions and base pieces.

    Options (all stored in a tokenizer file):

    * ``case`` — CAPITALIZE(pos) for upper-case letters;
    * ``diacritics`` — the 13 accent operators for precomposed accented letters;
    * ``repeat`` — REPEAT / MULTIREPEAT inside a piece and for runs of ≥ 3 identical pieces;
    * ``split_operators`` — each instruction a piece of its own (the paper's default), or
      kept in one piece with its base;
    * ``normalize`` — None (lossless on the raw input) or a Unicode normal form applied
      first (``"NFC"`` in the paper); decoding then returns the normalized text.

    ``Functionalizer.paper()`` is the configuration of the paper (:data:`PAPER_PROFILE`).

    >>> Functionalizer(split_operators=False).split("Hello")
    ['\\ue100\\ue000hello']
    """

    name = "functional"
    default_pattern = "functionalizer"
    atoms = ATOMS
    # The text forms of raw pieces remembered (piece_forms); emptied when full.
    cache_size = 1 << 17

    def __init__(
        self,
        case: bool = True,
        diacritics: bool = True,
        repeat: bool = True,
        split_operators: bool = True,
        normalize: Optional[str] = None,
        pattern: Union[str, Pattern, None] = None,
    ) -> None:
        super().__init__(pattern, normalize)
        for option, value in (("case", case), ("diacritics", diacritics), ("repeat", repeat), ("split_operators", split_operators)):
            if not isinstance(value, bool):
                raise FunctionalBPEError(f"the functional scheme's option {option} must be True or False, got {value!r}")
        self.case = case
        self.diacritics = diacritics
        self.repeat = repeat
        self.split_operators = split_operators
        self._cache: BoundedCache[str, Tuple[str, ...]] = BoundedCache(self.cache_size)
        # Runs of identical pieces are joined (_join_runs) unless the pattern never yields
        # two equal pieces in a row. The compiled scanner joins them too, so counting and
        # encoding stay in C. The safe cuts of text/cuts.py are proven for a pattern's
        # pieces; runs of them survive a cut only where no run can span one (the paper's
        # split, whose only pieces that repeat in a row are single spaces), and no cut is
        # proven for normalized text.
        self._joins = joins = repeat and self.pattern.name not in _NEVER_TWO_EQUAL
        scanner = self.pattern.scanner
        if joins and scanner is not None:
            scanner = Scanner(scanner.name, JOIN_RUNS)
        self._compiled = Compiled(
            scanner=scanner,
            cuts_safely=normalize is None and self.pattern.cuts_safely
            and (not joins or self.pattern.name in _RUNS_NEVER_CUT),
            identity=False,
        )

    def compiled(self) -> Compiled:
        return self._compiled

    @classmethod
    def paper(cls) -> "Functionalizer":
        """The paper's configuration: NFC, its split, all operators, instructions apart."""
        return cls(**PAPER_PROFILE)

    def options(self) -> Dict[str, Any]:
        return {
            "case": self.case,
            "diacritics": self.diacritics,
            "repeat": self.repeat,
            "split_operators": self.split_operators,
            "normalize": self.normalize,
        }

    # -- text → pieces --------------------------------------------------------------------

    def raw_pieces(self, text: str) -> List[str]:
        """The pattern's pieces with runs of ≥ 3 identical pieces joined into one.

        >>> Functionalizer(pattern="gpt4").raw_pieces("111111111 ha ha ha")
        ['111111111', ' ha ha ha']
        >>> Functionalizer().raw_pieces("x    = 1")
        ['x', '    ', '=', ' ', '1']
        """
        text = self.prepare(text) if self.normalize else text
        if not self._joins:
            return pretokenize(text, self.pattern)
        module = NATIVE.scanner_for(self._compiled.scanner)
        if module is not None:  # the joined scanner: the same pieces (tests/text/test_scanner.py)
            assert self._compiled.scanner is not None
            return module.scan(plain_str(text), self._compiled.scanner.module_name)
        return self._join_runs(pretokenize(text, self.pattern))

    def _join_runs(self, pieces: List[str]) -> List[str]:
        """Join each run of k ≥ 3 identical pieces whose repetition can be written.

        The joined piece is then described like any piece; for ``u * k`` with ``u`` of at
        most 255 characters that gives exactly the paper's REPEAT(0, k) or
        MULTIREPEAT(0, len(u), k) in front of ``u``. Longer ``u`` stay apart. A run of more
        than 255 pieces is joined in blocks of 255 (a last block of 1 or 2 stays apart), so
        that every joined piece is described whole instead of growing one long base.

        >>> Functionalizer(pattern="gpt4")._join_runs([" a"] * 260)[:3] == [" a" * 255, " a" * 5]
        True
        """
        if len(pieces) < 3:
            return pieces
        # pieces[i] == pieces[i + 2] is necessary for a run to start at i; finding the
        # candidates is one pass in C, and most texts have none.
        candidates = compress(range(len(pieces)), map(eq, pieces, islice(pieces, 2, None)))
        out: List[str] = []
        done = 0  # pieces[:done] are in out
        seen = 0  # runs starting before this are handled
        for i in candidates:
            if i < seen or pieces[i + 1] != pieces[i]:
                continue
            j = i + 3
            while j < len(pieces) and pieces[j] == pieces[i]:
                j += 1
            seen = j
            if _period(pieces[i]) <= MAX_ARG:
                out.extend(pieces[done:i])
                for start in range(i, j, MAX_ARG):
                    block = min(MAX_ARG, j - start)
                    out.extend([pieces[i] * block] if block >= 3 else pieces[start:j])
                done = j
        if not done:
            return pieces
        out.extend(pieces[done:])
        return out

    def describe(self, piece: str) -> Tuple[str, ...]:
        """The text-form pieces of one raw piece (see :meth:`raw_pieces`), checked.

        >>> Functionalizer().describe("Hello") == ("\\ue100\\ue000", "hello")
        True
        """
        n = len(piece)
        if piece.isascii():
            if not self.repeat or (not _repeats_whole((piece + piece).find(piece, 1), n) and _RUN3_RE.search(piece) is None):
                # The common case: at most capitals to describe, since ASCII has no accents and
                # no private use.
                return self._ascii_capitals(piece) if self.case else (piece,)
        elif not _repeats_whole((piece + piece).find(piece, 1), n) and _MAYBE_WORK_RE.search(piece) is None:
            return (piece,)
        repeats, base = describe_repeats(piece) if self.repeat else ([], piece)
        tries: List[Tuple[List[Instruction], str]] = []
        if self.case or self.diacritics:
            plans, chars = self._plan_chars(base)
            if plans:
                tries.append((repeats + _char_instructions(plans), chars))
        if repeats:
            tries.append((repeats, base))
        return self._checked(piece, tries)

    def _ascii_capitals(self, piece: str) -> Tuple[str, ...]:
        """An ASCII piece with no repetition to describe: CAPITALIZE per capital."""
        head = piece[: MAX_ARG + 1]
        lowered = head.lower()
        if lowered == head:
            return (piece,)
        # The instructions depend only on where the capitals are: "Hello" and "World" share
        # the shape "A", so they are written once per shape.
        capitals = _capitals_of_shape(head.translate(_CASE_SHAPE).rstrip("a"))
        return self._checked_form(piece, capitals, lowered + piece[MAX_ARG + 1 :]) or (piece,)

    def _checked(self, piece: str, tries: List[Tuple[List[Instruction], str]]) -> Tuple[str, ...]:
        """The first description that decodes back to ``piece``; else the piece as it is."""
        for instructions, text in tries:
            form = self._checked_form(piece, _write(instructions), escape(text))
            if form is not None:
                return form
        return (escape(piece),)

    def _checked_form(self, piece: str, instructions: Sequence[str], base: str) -> Optional[Tuple[str, ...]]:
        """The text-form pieces of ``instructions + base`` if they decode to ``piece``, else
        None: the self-check of every description."""
        text = "".join(instructions) + base
        if _decode_or_none(text) != piece:
            return None
        return (*instructions, base) if self.split_operators else (text,)

    def _plan_chars(self, base: str) -> Tuple[List[Tuple[int, bool, Tuple[str, ...]]], str]:
        head = base[: MAX_ARG + 1]
        plans = []
        chars = None
        for m in _CASE_OR_ACCENT_RE.finditer(head):
            pos = m.start()
            plan = char_plan(m.group(), self.case, self.diacritics)
            if plan is not None:
                if chars is None:
                    chars = list(head)
                chars[pos] = plan[0]
                plans.append((pos, plan[1], plan[2]))
        if chars is None:
            return plans, base
        return plans, "".join(chars) + base[MAX_ARG + 1 :]

    def piece_forms(self, piece: str) -> Tuple[str, ...]:
        """The text-form pieces of one raw piece (:meth:`describe`, compiled where it can
        be, cached). :meth:`split` is these, piece after piece, over :meth:`raw_pieces`; the
        encoder caches ids per raw piece on the strength of that.

        >>> Functionalizer().piece_forms("Hello") == ("\\ue100\\ue000", "hello")
        True
        """
        form = self._cache.get(piece)
        return form if form is not None else self._new_forms(piece, self._describer())

    def piece_forms_for_call(self) -> Callable[[str], Tuple[str, ...]]:
        """:meth:`piece_forms` with the compiled describer looked up once, for a call over
        many pieces: looking it up reads the environment (``FUNCTIONALBPE_PUREPYTHON``), which
        was most of the cost of a piece not yet cached."""
        describer, cached = self._describer(), self._cache.get

        def forms(piece: str) -> Tuple[str, ...]:
            form = cached(piece)
            return form if form is not None else self._new_forms(piece, describer)

        return forms

    def _new_forms(self, piece: str, describer: Any) -> Tuple[str, ...]:
        form = describer.describe(piece) if describer is not None else None
        return self._cache.put(piece, form or self.describe(piece))

    def split(self, text: str) -> List[str]:
        pieces = self.raw_pieces(text)
        forms: List[Any] = list(map(self._cache.get, pieces))
        if None in forms:
            forms_of = self.piece_forms_for_call()
            forms = [forms_of(p) if f is None else f for f, p in zip(forms, pieces)]
        return list(chain.from_iterable(forms))

    def transform(self, table: PieceTable) -> PieceTable:
        """Describe each distinct raw piece once and give its count to its text-form pieces:
        in C without a Python object per piece (:meth:`_describer`, which leaves what it does
        not handle to :meth:`describe`), else with :meth:`describe` itself. Both give the same
        table, in the same order.

        >>> Functionalizer().transform(PieceTable.from_dict({"Hello": 2, "hello": 1})).to_dict()
        {'\\ue100\\ue000': 2, 'hello': 3}
        """
        describer = self._describer()
        if describer is None:
            return transform_table(table, self.describe)
        return PieceTable(*describer.describe_flat(table.data, table.offsets, table.counts, self.describe))

    def _describer(self) -> Any:
        """The compiled :meth:`describe` (``csrc/_functional.pyx``) for this scheme's
        options, or None without the extension. It asks :func:`block_plans` for Unicode
        data, and leaves what it does not handle to :meth:`describe`."""
        module = NATIVE.describer
        if module is None:
            return None
        options = (self.case, self.diacritics, self.repeat, self.split_operators)
        describer = _describers.get(options)
        if describer is None:
            case, diacritics = self.case, self.diacritics
            describer = _describers[options] = module.Describer(
                self.repeat, self.split_operators, lambda block: block_plans(block, case, diacritics)
            )
        return describer

    # -- pieces → text --------------------------------------------------------------------

    def decode(self, text: str, errors: str = "strict") -> str:
        return decode_text_form(text, errors)

    def decodable_prefix(self, text: str) -> int:
        return decodable_prefix(text)

    def show(self, piece: str) -> str:
        """A piece (or any token) with instructions as readable glyphs.

        >>> Functionalizer().show("\\ue102\\ue001\\ue100\\ue000hello")
        '⟨ACUTE 1⟩⟨CAP 0⟩hello'
        """
        return show_atoms(piece, _SHOW_RE, _glyph)


def _glyph(m: "regex.Match[str]") -> str:
    atoms = m.group()
    if atoms[0] <= "\ue0ff":  # an argument on its own, e.g. in a token cut from a piece
        return f"⟨{ord(atoms[0]) - ARG0}⟩"
    name = OP_NAMES.get(atoms[0], f"U+{ord(atoms[0]):04X}")
    args = [ord(c) - ARG0 for c in atoms[1:]]
    if atoms[0] == LITERAL and len(args) == 2:
        return f"⟨LITERAL U+{ARG0 + (args[0] << 8) + args[1]:04X}⟩"
    return "⟨" + " ".join([name, *map(str, args)]) + "⟩"

