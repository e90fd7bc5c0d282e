"""The pattern compiler: a pre-tokenization regex as a program for the C matcher.

The hand-written scanners (``csrc/lib/scan/scanners.h``) cover seven built-in patterns; every
other pattern (tiktoken's own cl100k string, Mistral's tekken, BLOOM's, DeepSeek's, SuperBPE's
stage two, a user's own) is parsed here, in the subset that real tokenizers use, and compiled
into a small program that ``csrc/lib/scan/regex_vm.h`` runs without the GIL, with exactly the
semantics of ``regex.findall``: alternatives in order, greedy quantifiers giving back one
character at a time, possessive quantifiers and atomic groups giving back nothing,
look-aheads atomic (docs/pretokenization.md, *The compiled engine*).

The subset:

* atoms that match one character: literals, escapes (``\\n``, ``\\x41``, ``\\u2581``,
  ``\\'``), ``.``, ``\\s \\S \\d \\D \\w \\W``, ``\\p{..}``/``\\P{..}``, and bracketed classes
  (``[^\\r\\n\\p{L}\\p{N}]``, POSIX ``[[:alpha:]]`` inside them);
* groups ``(...)``, ``(?:...)``, ``(?P<n>...)`` (whole matches only: ``findall`` with groups
  is not what pretokenize uses), atomic ``(?>...)``, look-aheads ``(?=...)`` ``(?!...)``;
* ``(?i)`` at the start, ``(?i:...)``, ``(?-i:...)``, ``(?s)``/``(?s:...)``;
* ``? * + {m} {m,} {m,n} {,n}``, each greedy, lazy (``?``) or possessive (``+``);
* ``|``, ``^``/``\\A`` (start of the text), ``$`` (end, or before a final ``\\n``),
  ``\\Z``/``\\z`` (end).

What an atom matches is not interpreted here: it is **measured** by running ``regex`` itself
over a string that holds every code point (as ``charclasses.py`` measures the built-in
classes), under the flags in force where the atom stands. So ``\\p{Han}``, ``[[:punct:]]``,
``(?i:k)`` (which also matches U+212A KELVIN SIGN) and any class ``regex`` accepts mean here
exactly what they mean to ``regex``.

Anything else — look-behind, backreferences, ``\\b``, ``(?m)``, ``(?x)``, ``(?V1)``, full
case folding, a loop whose body can match nothing, more than 64 distinct atoms — raises
:class:`Unsupported` naming the construct, and the pattern runs in ``regex`` as before.

Example::

    >>> compile_program(r"\\p{L}+|\\s+").num_alternatives
    2
    >>> compile_program(r"(?<=a)b")
    Traceback (most recent call last):
    ...
    functionalbpe.unicode.regex_program.Unsupported: look-behind (?<=...) at offset 0
"""
from __future__ import annotations

import array
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, List, Optional, Tuple

import regex

from ..errors import PatternError
from . import pattern_limits as limits
from .charclasses import every_code_point

# Opcodes: the same values as csrc/lib/scan/regex_vm.h. Every instruction is four uint32 words:
# op, a, b, c.
OP_ATOM = 1  # a: atom number; one character of that atom
OP_RUN_GREEDY = 2  # a: atom, b: min, c: max (INF: no limit); a run, given back one by one
OP_RUN_LAZY = 3  # the same, taken one by one
OP_RUN_POSSESSIVE = 4  # the same, never given back
OP_SPLIT = 5  # a: tried first, b: on failure; c: 0, or 1 + the guard of a (guards)
OP_JMP = 6  # a: next instruction
OP_MATCH = 7  # a non-empty match ends here
OP_BEGIN = 8  # at the start of the text
OP_EOL = 9  # $: at the end, or before a final \n
OP_END = 10  # \z: at the end
OP_LOOK = 11  # a: 0 (?=) or 1 (?!), b: where to go on; the body follows, ending in LOOK_END
OP_LOOK_END = 12
OP_ATOMIC = 13  # an atomic group starts: what is tried inside it is forgotten at ATOMIC_END
OP_ATOMIC_END = 14
OP_LOOK_ATOM = 15  # a: 0 (?=) or 1 (?!), b: atom; a look-ahead of one character, inline

INF = 0xFFFFFFFF
MAX_ATOMS = 64  # atoms are bits of a 64-bit mask per code point
MAX_ALTERNATIVES = 64  # top-level alternatives filtered by their first character
MAX_CODE = 1 << 16  # instructions, counted repeats written out
MAX_LOOK_DEPTH = 8  # look-aheads inside look-aheads (the C matcher recurses into them)
MAX_REPEAT = 1000  # the largest count written in {m,n} of a group


class Unsupported(ValueError):
    """A construct outside the compiled subset; the message names it and its offset."""


# ---- the syntax tree ------------------------------------------------------------------------
# ("atom", k) | ("seq", [nodes]) | ("alt", [nodes]) | ("rep", node, lo, hi, mode)
# | ("look", negative, node) | ("atomic", node) | ("begin",) | ("eol",) | ("end",)
# mode: "greedy", "lazy" or "possessive".

_ESCAPED_CLASSES = set("sSdDwW")
_CHAR_ESCAPES = set("nrtfvae0")
_UNSUPPORTED_ESCAPES = {
    "b": "word boundary \\b", "B": "\\B", "G": "\\G", "K": "\\K", "X": "grapheme \\X",
    "m": "word start \\m", "M": "word end \\M", "R": "\\R", "h": "\\h", "L": "named list \\L",
}
# Escapes whose length their own text decides, by their letter: the whole escape's shape.
_P_ESCAPE = regex.compile(r"\\[pP](\{\^?[\w\s=:&.-]+\}|[A-Za-z])")
_SHAPED_ESCAPES = {
    "p": _P_ESCAPE, "P": _P_ESCAPE,
    "x": regex.compile(r"\\x(\{[0-9A-Fa-f]+\}|[0-9A-Fa-f]{2})"),
    "u": regex.compile(r"\\u[0-9A-Fa-f]{4}"),
    "U": regex.compile(r"\\U[0-9A-Fa-f]{8}"),
    "N": regex.compile(r"\\N\{[^}]+\}"),
}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.atoms: Dict[str, int] = {}  # measured text -> atom number
        self.look_depth = 0

    # -- atoms
    def atom(self, source: str, flags: str) -> Tuple:
        key = f"(?{flags}:{source})" if flags else f"(?:{source})"
        if key not in self.atoms:
            if len(self.atoms) == MAX_ATOMS:
                raise Unsupported(f"more than {MAX_ATOMS} distinct characters and classes")
            self.atoms[key] = len(self.atoms)
        return ("atom", self.atoms[key])

    def fail(self, what: str, at: Optional[int] = None) -> Unsupported:
        return Unsupported(f"{what} at offset {self.at if at is None else at}")

    def peek(self, k: int = 0) -> str:
        return self.text[self.at + k] if self.at + k < len(self.text) else ""

    # -- grammar
    def parse(self) -> Tuple:
        flags = ""
        while self.text.startswith("(?", self.at):
            # Flags for the whole pattern, at its start only: (?i), (?s), (?is).
            j = self.text.find(")", self.at)
            body = self.text[self.at + 2 : j] if j > 0 else ""
            if body and all(c in "is" for c in body):
                flags += body
                self.at = j + 1
            else:
                break
        node = self.alternation(flags)
        if self.at != len(self.text):
            raise self.fail("an unbalanced ')'")
        return node

    def alternation(self, flags: str) -> Tuple:
        branches = [self.sequence(flags)]
        while self.peek() == "|":
            self.at += 1
            branches.append(self.sequence(flags))
        if len(branches) == 1:
            return branches[0]
        if all(b[0] == "atom" for b in branches):
            # Alternatives of one character each are one class: whichever matches, the match
            # goes on after that one character, so the order cannot matter. As one atom,
            # (?:[\p{L}\p{N}_]|[^\S\n\t ])+ is one run, not a loop of choices.
            keys = sorted(self.atoms, key=self.atoms.__getitem__)
            return self.atom("|".join(keys[b[1]] for b in branches), "")
        return ("alt", branches)

    def sequence(self, flags: str) -> Tuple:
        items: List[Tuple] = []
        while self.at < len(self.text) and self.peek() not in "|)":
            start = self.at
            item = self.primary(flags)
            if item is None:
                continue  # nothing to match (an empty group)
            item = self.quantified(item, start)
            items.append(item)
        return items[0] if len(items) == 1 else ("seq", items)

    def quantified(self, item: Tuple, start: int) -> Tuple:
        while True:
            c = self.peek()
            if c == "?":
                lo, hi = 0, 1
                self.at += 1
            elif c == "*":
                lo, hi = 0, INF
                self.at += 1
            elif c == "+":
                lo, hi = 1, INF
                self.at += 1
            elif c == "{":
                m = regex.match(r"\{(\d*)(,(\d*))?\}", self.text[self.at :])
                if m is None or (m.group(1) == "" and m.group(2) is None):
                    return item  # not a quantifier: "{" is a literal, read next
                lo = int(m.group(1) or 0)
                hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else INF)
                if hi != INF and hi < lo:
                    raise self.fail("a repeat {m,n} with n < m")
                if lo > MAX_REPEAT or (hi != INF and hi > MAX_REPEAT):
                    raise self.fail(f"a repeat count over {MAX_REPEAT}")
                self.at += m.end()
            else:
                return item
            mode = "greedy"
            if self.peek() == "?":
                mode = "lazy"
                self.at += 1
            elif self.peek() == "+":
                mode = "possessive"
                self.at += 1
            if item[0] in ("look", "begin", "eol", "end"):
                raise self.fail("a quantified assertion", start)
            if item[0] != "atom" and _nullable(item) and hi > 1:
                raise self.fail("a loop whose body can match nothing", start)
            item = ("rep", item, lo, hi, mode)

    def primary(self, flags: str) -> Optional[Tuple]:
        c = self.peek()
        start = self.at
        if c == "(":
            return self.group(flags)
        if c == "[":
            return self.atom(self.bracket(), flags)
        if c == "\\":
            return self.escape(flags)
        if c == ".":
            self.at += 1
            return self.atom(".", flags)
        if c == "^":
            self.at += 1
            return ("begin",)
        if c == "$":
            self.at += 1
            return ("eol",)
        if c in "*+?":
            raise self.fail("a quantifier with nothing to repeat", start)
        if c == "{" and regex.match(r"\{\d*(,\d*)?\}", self.text[self.at :]):
            raise self.fail("a quantifier with nothing to repeat", start)
        self.at += 1
        return self.atom(regex.escape(c), flags)

    def group(self, flags: str) -> Optional[Tuple]:
        start = self.at
        t = self.text
        if t.startswith("(?:", start):
            self.at += 3
            kind = "group"
        elif t.startswith("(?=", start) or t.startswith("(?!", start):
            kind = "look"
            negative = t[start + 2] == "!"
            self.at += 3
        elif t.startswith("(?>", start):
            kind = "atomic"
            self.at += 3
        elif t.startswith("(?<=", start) or t.startswith("(?<!", start):
            raise self.fail(f"look-behind {t[start:start + 4]}...)")
        elif t.startswith("(?P<", start) or t.startswith("(?<", start):
            j = t.find(">", start)
            if j < 0 or not regex.fullmatch(r"\w+", t[t.find("<", start) + 1 : j]):
                raise self.fail("a group name")
            self.at = j + 1
            kind = "group"
        elif t.startswith("(?", start):
            m = regex.match(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?(:|\))", t[start:])
            if m is None:
                raise self.fail(f"the group {t[start:start + 4]!r}")
            on, off, end = m.group(1), m.group(2) or "", m.group(3)
            if any(f not in "is" for f in on + off):
                raise self.fail(f"the flags (?{on}{'-' + off if off else ''})")
            if end == ")":
                raise self.fail("flags set in the middle of the pattern")
            self.at = start + m.end()
            flags = "".join(sorted(set(flags + on) - set(off)))
            kind = "group"
        else:
            self.at += 1
            kind = "group"
        if kind == "look":
            self.look_depth += 1
            if self.look_depth > MAX_LOOK_DEPTH:
                raise self.fail(f"look-aheads nested over {MAX_LOOK_DEPTH} deep")
        body = self.alternation(flags)
        if kind == "look":
            self.look_depth -= 1
        if self.peek() != ")":
            raise self.fail("a group without its ')'", start)
        self.at += 1
        if kind == "look":
            return ("look", negative, body)
        if kind == "atomic":
            return ("atomic", body)
        if body == ("seq", []):
            return None
        return body

    def bracket(self) -> str:
        # The extent of [...] as regex (version 0) reads it: a ']' right after '[' or '[^' is
        # a literal, '\' escapes the next character, '[:name:]' is a POSIX class. What the
        # class matches is measured, not interpreted.
        t = self.text
        start = self.at
        j = start + 1
        if j < len(t) and t[j] == "^":
            j += 1
        if j < len(t) and t[j] == "]":
            j += 1
        while j < len(t):
            c = t[j]
            if c == "\\":
                j += 2
                continue
            if c == "[":
                if t.startswith("[:", j):
                    k = t.find(":]", j + 2)
                    if k < 0:
                        raise self.fail("a POSIX class without ':]'", j)
                    j = k + 2
                    continue
                j += 1
                continue
            if c == "]":
                self.at = j + 1
                return t[start : j + 1]
            j += 1
        raise self.fail("a '[' without its ']'", start)

    def escape(self, flags: str) -> Optional[Tuple]:
        t = self.text
        start = self.at
        if start + 1 >= len(t):
            raise self.fail("a trailing backslash")
        c = t[start + 1]
        shaped = _SHAPED_ESCAPES.get(c)
        if shaped is not None:  # an escape that runs on: \p{..}, \x.., \u...., \N{..}
            m = shaped.match(t, start)
            if m is None:
                raise self.fail(f"a \\{'p' if c == 'P' else c} escape")
            self.at = m.end()
            return self.atom(m.group(), flags)
        if c in _ESCAPED_CLASSES or c in _CHAR_ESCAPES:
            self.at = start + 2
            if c == "0" and self.peek().isdigit():
                raise self.fail("an octal escape")
            return self.atom(t[start : start + 2], flags)
        if c == "A":
            self.at = start + 2
            return ("begin",)
        if c in "zZ":
            self.at = start + 2
            return ("end",)
        if c in _UNSUPPORTED_ESCAPES:
            raise self.fail(_UNSUPPORTED_ESCAPES[c])
        if c.isdigit():
            raise self.fail(f"the backreference \\{c}")
        if c.isalnum() or c == "_":
            raise self.fail(f"the escape \\{c}")
        # An escaped punctuation or space character: that character.
        self.at = start + 2
        return self.atom(regex.escape(c), flags)


def _nullable(node: Tuple) -> bool:
    kind = node[0]
    if kind == "atom":
        return False
    if kind == "seq":
        return all(_nullable(n) for n in node[1])
    if kind == "alt":
        return any(_nullable(n) for n in node[1])
    if kind == "rep":
        return node[2] == 0 or _nullable(node[1])
    if kind == "atomic":
        return _nullable(node[1])
    return True  # assertions consume nothing


def _first(node: Tuple) -> int:
    """The atoms (as a bit mask) one of which is the first character of every non-empty
    match of ``node``. Assertions consume nothing, so they are skipped: the set is a
    necessary condition, which is all the filter needs."""
    kind = node[0]
    if kind == "atom":
        return 1 << node[1]
    if kind == "seq":
        mask = 0
        for n in node[1]:
            mask |= _first(n)
            if not _nullable(n):
                break
        return mask
    if kind == "alt":
        mask = 0
        for n in node[1]:
            mask |= _first(n)
        return mask
    if kind in ("rep", "atomic"):
        return _first(node[1])
    return 0


def _head(branch: Tuple) -> Tuple[int, int]:
    """(atoms of an optional first character, atoms that must come after it), or (0, 0)."""
    if branch[0] != "seq" or len(branch[1]) < 2:
        return (0, 0)
    head, rest = branch[1][0], ("seq", branch[1][1:])
    if head[0] != "rep" or head[1][0] != "atom" or head[2:4] != (0, 1) or _nullable(rest):
        return (0, 0)
    return (1 << head[1][1], _first(rest))


# ---- code generation ----------------------------------------------------------------------

class _Emitter:
    def __init__(self) -> None:
        self.code: List[List[int]] = []
        # A SPLIT's guard: the atoms one of which must come next for its first arm to match
        # (that arm's first set, when it cannot match nothing). Where the next character is
        # none of them the arm is skipped without a backtrack frame: an optional contraction
        # after every word, or each of seven alternatives after a quote, costs one test.
        self.guards: List[int] = []
        self._guard_numbers: Dict[int, int] = {}

    def guard(self, split: int, arm: Optional[Tuple]) -> None:
        if arm is None or _nullable(arm):
            return
        mask = _first(arm)
        number = self._guard_numbers.setdefault(mask, len(self.guards))
        if number == len(self.guards):
            self.guards.append(mask)
        self.code[split][3] = number + 1

    def emit(self, op: int, a: int = 0, b: int = 0, c: int = 0) -> int:
        if len(self.code) >= MAX_CODE:
            raise Unsupported(f"a program of more than {MAX_CODE} instructions (counted repeats written out)")
        self.code.append([op, a, b, c])
        return len(self.code) - 1

    def here(self) -> int:
        return len(self.code)

    def node(self, node: Tuple) -> None:
        kind = node[0]
        if kind == "atom":
            self.emit(OP_ATOM, node[1])
        elif kind == "seq":
            for n in node[1]:
                self.node(n)
        elif kind == "alt":
            # SPLIT L1, N1; L1: a1; JMP end; N1: SPLIT L2, N2; ... last
            jumps = []
            branches = node[1]
            for k, branch in enumerate(branches):
                if k < len(branches) - 1:
                    split = self.emit(OP_SPLIT)
                    self.code[split][1] = self.here()
                    self.guard(split, branch)
                    self.node(branch)
                    jumps.append(self.emit(OP_JMP))
                    self.code[split][2] = self.here()
                else:
                    self.node(branch)
            for j in jumps:
                self.code[j][1] = self.here()
        elif kind == "rep":
            self.repeat(*node[1:])
        elif kind == "look" and node[2][0] == "atom":
            # (?!\S), (?=\s): one table test where the matcher is, no nested run.
            self.emit(OP_LOOK_ATOM, 1 if node[1] else 0, node[2][1])
        elif kind == "look":
            look = self.emit(OP_LOOK, 1 if node[1] else 0)
            self.node(node[2])
            self.emit(OP_LOOK_END)
            self.code[look][2] = self.here()
        elif kind == "atomic":
            self.emit(OP_ATOMIC)
            self.node(node[1])
            self.emit(OP_ATOMIC_END)
        elif kind == "begin":
            self.emit(OP_BEGIN)
        elif kind == "eol":
            self.emit(OP_EOL)
        elif kind == "end":
            self.emit(OP_END)
        else:  # pragma: no cover - the parser makes no other node
            raise AssertionError(kind)

    def repeat(self, body: Tuple, lo: int, hi: int, mode: str) -> None:
        if body[0] == "atom":
            op = {"greedy": OP_RUN_GREEDY, "lazy": OP_RUN_LAZY, "possessive": OP_RUN_POSSESSIVE}[mode]
            self.emit(op, body[1], lo, hi)
            return
        if mode == "possessive":  # X{m,n}+ is (?>X{m,n})
            self.emit(OP_ATOMIC)
            self.repeat(body, lo, hi, "greedy")
            self.emit(OP_ATOMIC_END)
            return
        for _ in range(lo):
            self.node(body)
        if hi == INF:
            # L: SPLIT body, exit (lazy: exit, body); body; JMP L
            loop = self.emit(OP_SPLIT)
            self.node(body)
            self.emit(OP_JMP, loop)
            self._arms(loop, loop + 1, self.here(), mode, body)
            return
        # Each optional copy nested: SPLIT c1, exit; c1; SPLIT c2, exit; c2; ... exit:
        splits = []
        for _ in range(hi - lo):
            splits.append(self.emit(OP_SPLIT))
            self.node(body)
        for s in splits:
            self._arms(s, s + 1, self.here(), mode, body)

    def _arms(self, split: int, body: int, exit: int, mode: str, node: Tuple) -> None:
        self.code[split][1:3] = [body, exit] if mode == "greedy" else [exit, body]
        if mode == "greedy":
            self.guard(split, node)


@dataclass(frozen=True)
class Program:
    """A compiled pattern: what ``_scanner`` hands to C (``csrc/lib/scan/regex_vm.h``).

    ``code``: the instructions, four ``uint32`` each; ``starts``: where each top-level
    alternative starts; ``first``: the atoms that can begin each alternative; ``atoms``: the
    text of each atom, as it is measured (``(?i:s)``, ``(?:[^\\s\\p{L}\\p{N}])``); ``guards``:
    the atom masks that SPLIT instructions test before trying their first arm."""

    pattern: str
    code: bytes
    starts: Tuple[int, ...]
    first: Tuple[int, ...]
    atoms: Tuple[str, ...]
    guards: Tuple[int, ...] = ()
    # Per alternative that begins with one optional character ([^\r\n\p{L}\p{N}]?\p{L}+):
    # that character's atoms, and the atoms that must follow it (else 0, 0). The alternative
    # is tried only where its first character can begin what follows the optional one, or
    # is the optional one and the second can: gpt4's and o200k's letter alternatives are then
    # not tried at every punctuation mark and space.
    heads: Tuple[Tuple[int, int], ...] = ()

    @property
    def num_alternatives(self) -> int:
        return len(self.starts)

    @property
    def cuts(self) -> bool:
        """Can a text be cut where the matcher proves it safe (``fbpe_rx_safe_cut``)? Not
        when the pattern tests for the start of the text (``^``, ``\\A``): a cut moves it."""
        words = array.array("I")
        words.frombytes(self.code)
        return OP_BEGIN not in words[::4]


@lru_cache(maxsize=256)
def compile_program(pattern: str) -> Program:
    """The program of ``pattern``, or :class:`Unsupported` naming the first construct outside
    the subset (the caller then runs ``regex``)."""
    # Parsing is bounded without asking regex: the program's size is capped while it is
    # written (MAX_CODE), so a pattern that regex takes minutes to compile is refused here
    # in microseconds; whether regex accepts it is checked before it first runs (tables).
    if len(pattern) > limits.MAX_PATTERN_CHARS:
        raise Unsupported(f"a pattern of more than {limits.MAX_PATTERN_CHARS} characters")
    parser = _Parser(pattern)
    try:
        tree = parser.parse()
    except RecursionError:
        raise Unsupported("groups nested too deep to parse") from None
    branches = tree[1] if tree[0] == "alt" and len(tree[1]) <= MAX_ALTERNATIVES else [tree]
    emitter = _Emitter()
    starts, first, heads = [], [], []
    try:
        for branch in branches:
            starts.append(emitter.here())
            first.append(_first(branch))
            heads.append(_head(branch))
            emitter.node(branch)
            emitter.emit(OP_MATCH)
    except RecursionError:
        raise Unsupported("groups nested too deep to compile") from None
    words = array.array("I", [w for ins in emitter.code for w in ins])
    atoms = tuple(sorted(parser.atoms, key=parser.atoms.__getitem__))
    return Program(pattern, words.tobytes(), tuple(starts), tuple(first), atoms, tuple(emitter.guards),
                   tuple(heads))


def why_not(pattern: str) -> Optional[str]:
    """None if ``pattern`` compiles to a program, else the construct that keeps it in ``regex``.

    >>> why_not(r"\\S+|\\s+") is None, why_not(r"a\\1")
    (True, 'the backreference \\\\1 at offset 1')
    """
    try:
        compile_program(pattern)
    except Unsupported as exc:
        return str(exc)
    return None


# ---- the character tables -----------------------------------------------------------------

@dataclass(frozen=True)
class Tables:
    """What each code point is, for one program: ``ascii`` (128 masks of atoms, uint64),
    ``index`` (0x1100 uint16: the block of each 256 code points), ``blocks`` (256 uint8 per
    block: an equivalence class), ``masks`` (uint64 per class: its atoms), ``alternatives``
    (uint64 per class: the top-level alternatives a character of it can begin) and
    ``ascii_alternatives`` (the same for the 128 ASCII characters)."""

    ascii: bytes
    ascii_alternatives: bytes
    index: bytes
    blocks: bytes
    masks: bytes
    alternatives: bytes


@lru_cache(maxsize=64)
def tables(program: Program) -> Tables:
    """The code-point tables of ``program``, measured by running ``regex`` on every code point
    for each atom (a few milliseconds each)."""
    import numpy as np

    # The pattern itself must be one that regex compiles within the limits of an untrusted
    # pattern: the compiled engine never accepts what the regex path would refuse.
    try:
        limits.check_size(program.pattern)
        regex.compile(program.pattern)
    except (PatternError, regex.error, RecursionError, OverflowError) as exc:
        raise Unsupported(f"regex does not compile it ({exc})") from None
    every = every_code_point()
    masks = np.zeros(0x110000, dtype=np.uint64)
    for k, atom in enumerate(program.atoms):
        # Each run of members at once (a few hundred to a few thousand runs per class).
        bit = np.uint64(1 << k)
        for m in regex.finditer(atom + "+", every):
            masks[m.start() : m.end()] |= bit
    # The distinct masks, found from the runs of equal masks (tens of thousands of runs, not
    # a sort of 1.1M values): each gets a class number, in order of first appearance.
    change = np.flatnonzero(masks[1:] != masks[:-1]) + 1
    run_starts = np.concatenate([np.zeros(1, np.int64), change])
    numbers: Dict[int, int] = {}
    run_class = np.fromiter((numbers.setdefault(int(v), len(numbers)) for v in masks[run_starts]),
                            dtype=np.int64, count=len(run_starts))
    if len(numbers) > 256:
        raise Unsupported(f"{len(numbers)} distinct kinds of characters (the tables hold 256)")
    lengths = np.diff(np.concatenate([run_starts, np.array([0x110000])]))
    eq = np.repeat(run_class, lengths).astype(np.uint8)
    classes = np.array(list(numbers), dtype=np.uint64)
    # Blocks of 256 code points, identical ones shared.
    rows = eq.reshape(0x1100, 256)
    block_of: Dict[bytes, int] = {}
    index = np.fromiter((block_of.setdefault(row.tobytes(), len(block_of)) for row in rows),
                        dtype=np.uint16, count=0x1100)
    blocks = np.frombuffer(b"".join(block_of), dtype=np.uint8)
    alternatives = np.zeros(len(classes), dtype=np.uint64)
    for k, first in enumerate(program.first):
        alternatives |= ((classes & np.uint64(first)) != 0).astype(np.uint64) << np.uint64(k)
    return Tables(
        ascii=masks[:128].tobytes(),
        ascii_alternatives=alternatives[eq[:128]].tobytes(),
        index=index.tobytes(),
        blocks=blocks.tobytes(),
        masks=classes.tobytes(),
        alternatives=alternatives.tobytes(),
    )


def possessive_code(program: Program, measured: Tables) -> bytes:
    """``program.code`` with every greedy run made possessive where giving back cannot help:
    the run of atom A is followed by one character (or a run of at least one) of an atom B
    that no character of A belongs to, so at every place the run could give back to, B
    fails (`` ?\\p{L}+``: the space is never given back to a letter run). A possessive run
    keeps no backtrack frame. The tables say which atoms share characters."""
    masks = array.array("Q")
    masks.frombytes(measured.masks)
    shared = [0] * len(program.atoms)  # atoms that share a character with each atom
    for m in masks:
        for a in range(len(program.atoms)):
            if m >> a & 1:
                shared[a] |= m
    words = array.array("I")
    words.frombytes(program.code)
    for pc in range(0, len(words) // 4 - 1):
        op, atom = words[4 * pc], words[4 * pc + 1]
        following, b, lo = words[4 * pc + 4], words[4 * pc + 5], words[4 * pc + 6]
        single = following == OP_ATOM or (following in (OP_RUN_GREEDY, OP_RUN_LAZY, OP_RUN_POSSESSIVE) and lo >= 1)
        if op == OP_RUN_GREEDY and single and not shared[atom] >> b & 1:
            words[4 * pc] = OP_RUN_POSSESSIVE
    return words.tobytes()


def settled_code(program: Program, measured: Tables) -> bytes:
    """``program.code`` with every run that can never give back made possessive
    (:func:`possessive_code`), and also a greedy run before what cannot fail — runs that may
    match nothing, up to the end of the alternative (``[^\\s\\p{L}\\p{N}]+[\\r\\n]*``) —
    or before ``$``/``\\z`` (``\\s+$``: where the whole run does not reach the end, or a
    final newline, no shorter one does). Two spellings that differ only in possessive marks
    that change nothing (``\\p{L}+`` and ``\\p{L}++``, tiktoken's cl100k and its older form
    where they agree) then have the same settled code: the same behaviour, read from the
    program rather than from the string (:func:`same_behaviour`)."""
    words = array.array("I")
    words.frombytes(possessive_code(program, measured))
    count = len(words) // 4
    runs = (OP_RUN_GREEDY, OP_RUN_LAZY, OP_RUN_POSSESSIVE)

    def cannot_fail(pc: int) -> bool:
        while pc < count and words[4 * pc] in runs and words[4 * pc + 2] == 0:
            pc += 1
        return pc < count and words[4 * pc] == OP_MATCH

    for pc in range(count - 1):
        if words[4 * pc] == OP_RUN_GREEDY and (words[4 * pc + 4] in (OP_EOL, OP_END) or cannot_fail(pc + 1)):
            words[4 * pc] = OP_RUN_POSSESSIVE
    return words.tobytes()


def same_behaviour(a: str, b: str) -> bool:
    """Do patterns ``a`` and ``b`` (both in the compiled subset) cut every text alike, as
    far as their programs show: the same atoms, alternatives and settled code. False where
    that is not shown (it may still hold).

    >>> same_behaviour(r"\\p{L}++|\\s", r"\\p{L}+|\\s"), same_behaviour(r"\\s+$|\\s", r"\\s|\\s+$")
    (True, False)
    """
    try:
        pa, pb = compile_program(a), compile_program(b)
    except Unsupported:
        return False
    if pa.atoms != pb.atoms or pa.starts != pb.starts or pa.guards != pb.guards or len(pa.code) != len(pb.code):
        return False
    try:
        return settled_code(pa, tables(pa)) == settled_code(pb, tables(pb))
    except Unsupported:
        return False
