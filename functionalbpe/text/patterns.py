"""Pre-tokenization: cutting text into the pieces that BPE merges within.

BPE never merges across a piece boundary, so the pattern decides what a token can be: with
``gpt4`` a token never spans a letter and a digit, a space goes in front of a word, numbers
come in groups of at most three digits.

Every pattern here is used with ``findall``: the pieces are the matches, and they must
cover the text. A pattern that skips a character would silently lose input, so
:func:`pretokenize` refuses it and names the first character it would have dropped.

Example::

    >>> pretokenize("Hello world!! 123456", "gpt4")
    ['Hello', ' world', '!!', ' ', '123', '456']
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Collection, Dict, FrozenSet, Iterable, Iterator, List, Optional, Tuple, Union

import regex

from ..unicode import pattern_limits as limits
from ..core._native import NATIVE, Scanner
from ..util.checks import plain_str
from ..errors import CompiledPatternGaveUp, PatternError
from ..unicode.pattern_limits import PROBE_TEXT, shown

# The GPT-2 pattern as OpenAI published it with GPT-2 (also tiktoken's r50k comment).
GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# cl100k as rustbpe and nanochat use it. tiktoken's own cl100k string differs in one corner
# (a run of whitespace containing a newline at the very end of a document); we follow
# rustbpe so that our merge table can be compared with it merge for merge.
GPT4 = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*"""
    r"""|\s*[\r\n]|\s+(?!\S)|\s+"""
)

# o200k (GPT-4o), as tiktoken builds it.
O200K = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# Llama 3's tokenizer.json: the original cl100k string, without possessive quantifiers.
LLAMA3 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# The Functionalizer paper's split (``DEFAULT_SPLIT_PAT`` of its code) is
# ``\n+|\t+|[ ]| |[^\p{L}\p{N}\s _]+``, applied as an HF ``Split(behavior="isolated")``: the
# matches *and* the text between them are pieces. Both space alternatives are one ASCII
# space, so every single space is a piece of its own (the scheme's REPEAT then joins a run of
# them). The last alternative below spells the "between" out: a maximal run of the
# characters that start no other alternative (letters, digits, underscore, and white space
# other than newline, tab and space). So ``findall`` with this pattern yields exactly the
# paper's pieces, and every pattern is used the same way.
FUNCTIONALIZER = r"""\n+|\t+| |[^\p{L}\p{N}\s _]+|(?:[\p{L}\p{N}_]|[^\S\n\t ])+"""

# The same with a run of spaces (and of U+2581, SentencePiece's space) as one piece: the
# plain baseline can then merge indentation, which the paper's split keeps from it.
FUNCTIONALIZER_RUNS = r"""\n+|\t+|\u2581+| +|[^\p{L}\p{N}\s _]+|(?:[\p{L}\p{N}_]|[^\S\n\t ])+"""

# The paper's second configuration (``LLAMA_SPLIT_PAT``): llama3 with single digits.
FUNCTIONALIZER_LLAMA = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# SuperBPE's second stage (Liu, Hayase et al. 2025; the pattern of its
# ``scripts/extend_tokenizer.sh``): only numbers of up to three digits, runs of two or more
# punctuation marks, and runs of spaces before a space are cut out, as an HF
# ``Split(behavior="isolated")`` cuts them; the text between them — words with their single
# spaces and punctuation, "by the way, I think " — is one piece, so merges may cross words.
# The last alternative spells "the text between" out (a run of characters at none of which
# a cut begins), so ``findall`` yields exactly the isolated split's pieces.
SUPERWORD_CUTS = r"""\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"""
# A cut never starts at a letter or at white space other than a space, so runs of those are
# taken whole and the look-ahead is tried only elsewhere: 40% less time in `regex` on English
# prose than the plain form (?:(?!cut)[\s\S])+, the same pieces (tests/test_continued.py).
# [\s\S] rather than "." with DOTALL: the same in regex, tiktoken's engine and HF's Oniguruma.
SUPERWORDS = SUPERWORD_CUTS + r"|(?:\p{L}++|[^\S ]++|(?!" + SUPERWORD_CUTS + r")[\s\S])++"

# cl100k as tiktoken ships it (tiktoken_ext/openai_public.py): what
# Tokenizer.from_tiktoken(tiktoken.get_encoding("cl100k_base")) carries. It cuts as gpt4
# except that a run of white space that reaches the end of a text is one piece (\s++$):
# ``"a\n  "`` ends in one piece ``"\n  "`` here, in two with ``gpt4``. Not a built-in pattern
# (gpt4 is ours), but this text is cut by a hand-written scanner of its own (HAND_SCANNED),
# the fastest way there is.
CL100K_TIKTOKEN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K = CL100K_TIKTOKEN
# GPT-2's pattern as tiktoken spells it for r50k and p50k: possessive, with \s++$.
R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""


@dataclass(frozen=True)
class PatternRecord:
    """One pattern we know by name: everything about it is here, and every table of
    patterns below is derived from :data:`RECORDS`.

    ``name``: what users pass; ``regex``: its text, as its authors spell it; ``aliases``:
    other names for it (tiktoken's encodings); ``builtin``: a pattern of :data:`PATTERNS`
    (ours to train with), else one known by name only (another library's spelling);
    ``scanner``: the hand-written scanner that cuts it (csrc/lib/scan/scanners.h), if one does,
    else it is compiled (regex_program.py) like any other pattern. Its JavaScript form for
    the explorer is derived from ``regex`` by the explorer's layer
    (:func:`functionalbpe.teach.js_patterns.js_regex` of its name).

    Adding a pattern is adding a record: the compiled engine runs it, its safe cuts are
    proven from its program, and the explorer rewrites it (docs/pretokenization.md).
    """

    name: str
    regex: str
    aliases: Tuple[str, ...] = ()
    builtin: bool = True
    scanner: Optional[str] = None


RECORDS: Tuple[PatternRecord, ...] = (
    PatternRecord("gpt2", GPT2, scanner="gpt2"),
    PatternRecord("gpt4", GPT4, scanner="gpt4"),
    PatternRecord("o200k", O200K, ("o200k_base",), scanner="o200k"),
    PatternRecord("llama3", LLAMA3, scanner="llama3"),
    PatternRecord("functionalizer", FUNCTIONALIZER, scanner="functionalizer"),
    PatternRecord("functionalizer-runs", FUNCTIONALIZER_RUNS, scanner="functionalizer-runs"),
    PatternRecord("functionalizer-llama", FUNCTIONALIZER_LLAMA, scanner="functionalizer-llama"),
    # tiktoken's own spellings: trusted (no time limit), known by name, not built in.
    PatternRecord("cl100k", CL100K_TIKTOKEN, ("cl100k_base",), builtin=False, scanner="cl100k-tiktoken"),
    PatternRecord("r50k", R50K, ("r50k_base", "p50k_base", "p50k"), builtin=False),
)
RECORD: Dict[str, PatternRecord] = {r.name: r for r in RECORDS}

PATTERNS = {r.name: r.regex for r in RECORDS if r.builtin}

# Patterns that are not built in but cut by a hand-written scanner (csrc/lib/scan/scanners.h)
# rather than compiled: regex text -> the scanner's name. Their cuts are those of the
# built-in patterns (csrc/lib/scan/scan.c), which the tests check for them too.
HAND_SCANNED = {r.regex: r.scanner for r in RECORDS if not r.builtin and r.scanner}


class Pattern(str):
    """A pattern, resolved once: the regex text, with its ``name`` (a key of
    :data:`PATTERNS`, or ``"custom"``) and the compiled ``scanner`` that cuts exactly as it
    does (found when first asked for). Code below the API passes this value down and reads ``name`` and ``scanner``
    from it; nothing maps regex text back to a name.

    It *is* the regex text (a ``str``), so that it goes as it is wherever regex text is
    wanted: tiktoken's ``pat_str``, HF's ``Split``, the tokenizer file.

    >>> p = as_pattern("gpt2")
    >>> p.name, p.scanner, p == GPT2
    ('gpt2', Scanner(name='gpt2', options=0), True)
    """

    name: str

    def __new__(cls, regex_text: str, name: str = "custom") -> "Pattern":
        self = super().__new__(cls, regex_text)
        self.name = name
        return self

    @property
    def scanner(self) -> Optional[Scanner]:
        """Its compiled scanner (built? ask NATIVE), or None."""
        return self._found()[0]

    @property
    def not_compiled(self) -> Optional[str]:
        """Why no compiled scanner cuts it (the construct outside the compiled subset), or None."""
        return self._found()[1]

    @property
    def same_as(self) -> Optional[str]:
        """The record whose hand-written scanner cuts this other spelling of it, or None."""
        return self._found()[2]

    def _found(self) -> Tuple[Optional[Scanner], Optional[str], Optional[str]]:
        """(scanner, not_compiled, same_as), found on first use and kept: pretokenize asks on
        every call, and a pattern that is never used to cut (tiktoken's spellings, resolved
        at import) never loads the pattern compiler."""
        found = self.__dict__.get("_scanner_found")
        if found is None:
            found = self.__dict__["_scanner_found"] = _find_scanner(self.regex, self.name)
        return found  # type: ignore[no-any-return]

    @property
    def regex(self) -> str:
        """The regex text as a plain ``str``."""
        return str.__str__(self)

    @property
    def trusted(self) -> bool:
        """Does it run without a time limit? (built-in patterns and schemes' own)"""
        return self.name != "custom"

    @property
    def cuts_safely(self) -> bool:
        """Are its pieces those of the parts of a text cut at the safe places of
        :mod:`functionalbpe.text.cuts`? Proven case by case for the built-in patterns and those
        in HAND_SCANNED only; any other (``[^\\n]{1,7}`` would shift every piece after a cut)
        is read whole, or cut where its compiled program proves a cut (counting.py)."""
        return self.name in PATTERNS or self.regex in HAND_SCANNED or self.same_as is not None


def _find_scanner(regex_text: str, name: str) -> Tuple[Optional[Scanner], Optional[str], Optional[str]]:
    """The scanner that cuts ``regex_text``, why none is compiled, and the record it is another
    spelling of (:class:`Pattern`'s ``scanner``, ``not_compiled``, ``same_as``). A built-in
    pattern has a hand-written scanner; any other is compiled (regex_program.py) when it is in
    the subset the compiled engine runs, else regex cuts it and not_compiled says why."""
    if name in PATTERNS:
        return Scanner(name), None, None
    if regex_text in HAND_SCANNED:
        return Scanner(HAND_SCANNED[regex_text]), None, None
    from ..unicode.regex_program import why_not  # loaded by the first pattern compiled

    not_compiled = why_not(regex_text)
    if not_compiled is not None:
        return None, not_compiled, None
    # Another spelling of a hand-scanned pattern (possessive marks that change nothing): its
    # scanner, chosen by the program's behaviour, not the string.
    same_as = _hand_scanned_like(regex_text)
    hand = RECORD[same_as].scanner if same_as is not None else None
    return (Scanner(hand) if hand is not None else Scanner.program(regex_text)), None, same_as


def _hand_scanned_like(text: str) -> Optional[str]:
    """The name of the record with a hand-written scanner whose program behaves as the
    program of ``text`` (regex_program.same_behaviour), or None."""
    from ..unicode.regex_program import same_behaviour

    atoms = compile_program_atoms(text)
    for record in RECORDS:
        if record.scanner and compile_program_atoms(record.regex) == atoms and same_behaviour(text, record.regex):
            return record.name
    return None


def compile_program_atoms(text: str) -> Optional[Tuple[str, ...]]:
    """The atoms of the program of ``text`` (None outside the subset): a cheap first test of
    sameness before the tables are measured."""
    from ..unicode.regex_program import Unsupported, compile_program

    try:
        return compile_program(text).atoms
    except Unsupported:
        return None


# The built-in patterns, resolved.
BUILTIN: Dict[str, Pattern] = {name: Pattern(text, name) for name, text in PATTERNS.items()}
# Patterns known by name, not built in: tiktoken's own spellings. Trusted (no time limit); cut
# by a scanner of their own (HAND_SCANNED) or compiled, and cut safely as cuts_safely says.
KNOWN: Dict[str, Pattern] = {r.name: Pattern(r.regex, r.name) for r in RECORDS if not r.builtin}
# The names people know them by: tiktoken's encodings.
ALIASES: Dict[str, Pattern] = {alias: {**BUILTIN, **KNOWN}[r.name] for r in RECORDS for alias in r.aliases}
_BY_NAME: Dict[str, Pattern] = {**BUILTIN, **KNOWN, **ALIASES}
_BUILTIN_BY_TEXT = {p.regex: p for p in (*BUILTIN.values(), *KNOWN.values())}
# A string of this form is a name, never a regex (as a regex it would drop most text).
_NAME_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]*")


def as_pattern(pattern: Union[str, Pattern]) -> Pattern:
    """``pattern`` (a name, a regex, or a :class:`Pattern`) as a :class:`Pattern`. The text
    of a built-in pattern is that pattern; anything else is custom (not checked here: see
    :func:`resolve_pattern`).

    >>> as_pattern(GPT4).name, as_pattern(r"\\S+|\\s+").name
    ('gpt4', 'custom')
    """
    if isinstance(pattern, Pattern):
        return pattern
    found = _BY_NAME.get(pattern) or _BUILTIN_BY_TEXT.get(pattern)
    return found if found is not None else _custom(pattern)


@lru_cache(maxsize=64)
def _custom(text: str) -> Pattern:
    return Pattern(text, "custom")


def trusted(pattern: Union[str, Pattern]) -> bool:
    """Is ``pattern`` a built-in pattern (by name or by its text), which runs without a limit?"""
    return as_pattern(pattern).trusted


def resolve_pattern(pattern: Union[str, Pattern]) -> Pattern:
    """The :class:`Pattern` of a named pattern, or of a regex (named ``"custom"``).

    A custom pattern is checked now, not at first use: it must compile within the limits of
    :mod:`functionalbpe.unicode.pattern_limits` and cut its ``PROBE_TEXT`` into pieces that join
    back to it, within its time limit; otherwise :class:`PatternError`. An empty pattern is
    an error, not the default.

    >>> resolve_pattern("gpt2").name
    'gpt2'
    """
    if isinstance(pattern, Pattern):
        return pattern  # resolved already: whoever made it has checked it, or chose not to
    if not isinstance(pattern, str) or not pattern:
        raise PatternError(
            f"pattern must be one of {', '.join(PATTERNS)} or a regular expression, got {pattern!r}"
        )
    resolved = as_pattern(pattern)
    if not resolved.trusted:
        if _NAME_LIKE.fullmatch(pattern):
            raise PatternError(
                f"no pattern is named {pattern!r}; the names are {', '.join(_BY_NAME)} (anything else is "
                "read as a regular expression)"
            )
        _check_custom(resolved.regex)
    return resolved


@lru_cache(maxsize=64)
def _check_custom(pattern: str) -> None:
    # The probe: every piece found, none lost (iter_pieces names the first character lost).
    for _ in iter_pieces(PROBE_TEXT, pattern, where="its probe text (pattern_limits.PROBE_TEXT)"):
        pass


def find_pieces(text: str, pattern: Union[str, Pattern]) -> List[str]:
    """``findall`` of ``pattern`` on ``text`` (empty matches included, coverage not
    checked), under the time limit of a custom pattern."""
    pattern = as_pattern(pattern)
    timeout = None if pattern.trusted else limits.timeout(len(text))
    try:
        return compile_pattern(pattern).findall(text, timeout=timeout)
    except TimeoutError:
        raise limits.too_slow(pattern, len(text)) from None


@lru_cache(maxsize=64)
def compile_pattern(pattern: Union[str, Pattern]) -> "regex.Pattern[str]":
    """Compile a pattern (named or regex) with the ``regex`` module; a custom one only
    within the limits of :func:`functionalbpe.unicode.pattern_limits.check_size`."""
    resolved = as_pattern(pattern)
    if not resolved.trusted:
        limits.check_size(resolved.regex)
    try:
        compiled = regex.compile(resolved.regex)
    except (regex.error, RecursionError, OverflowError) as exc:
        raise PatternError(f"pattern {shown(pattern)} does not compile: {exc}") from None
    return compiled


def iter_pieces(text: str, pattern: Union[str, Pattern] = "gpt4", *, where: str = "") -> Iterator[str]:
    """Yield the pieces of ``text``; raise :class:`PatternError` if one would be lost, or
    if a custom pattern runs out of time. ``where`` names ``text`` in that error."""
    pattern = as_pattern(pattern)
    timeout = None if pattern.trusted else limits.timeout(len(text))
    matches = compile_pattern(pattern).finditer(text, timeout=timeout)
    position = 0
    while True:
        try:
            match = next(matches, None)
        except TimeoutError:
            raise limits.too_slow(pattern, len(text)) from None
        if match is None:
            break
        start, end = match.span()
        if end == start:  # an empty match adds nothing; coverage is checked below
            continue
        if start != position:
            _lost(text, position, pattern, where)
        yield match.group()
        position = end
    if position != len(text):
        _lost(text, position, pattern, where)


def pretokenize(text: str, pattern: Union[str, Pattern] = "gpt4") -> List[str]:
    """Cut ``text`` into pieces with a named pattern or a regex. The pieces join to ``text``.

    >>> pretokenize("don't stop", "gpt2")
    ['don', "'t", ' stop']

    Built-in patterns go through the compiled scanner when it is built: the same pieces
    (tests/text/test_scanner.py), several times faster.
    """
    text = plain_str(text)
    if type(pattern) is not Pattern:
        pattern = as_pattern(pattern)
    scanner = NATIVE.scanner_for(pattern.scanner)
    if scanner is not None:
        assert pattern.scanner is not None
        try:
            return scanner.scan(text, pattern.scanner.module_name)
        except CompiledPatternGaveUp:
            pass  # regex decides: the pieces, or the error that names a dropped character
    if not compile_pattern(pattern).groups:
        # findall is three times faster than a loop over match objects. Its matches are
        # disjoint and in order, so they cover the text exactly when their lengths add up.
        pieces = find_pieces(text, pattern)
        if sum(map(len, pieces)) == len(text):
            return [p for p in pieces if p] if "" in pieces else pieces
    return list(iter_pieces(text, pattern))


def _lost(text: str, position: int, pattern: Pattern, where: str = "") -> None:
    char = text[position]
    name = pattern.name if pattern.trusted else f"the custom pattern {shown(pattern.regex)}"
    raise PatternError(
        f"{name} drops input: the character {char!r} (U+{ord(char):04X}) at offset {position}"
        f"{' of ' + where if where else ''} is matched by no alternative, so the pieces would not "
        "join back to the text; add an alternative that matches it (for example end the "
        "pattern with |\\s+|.)"
    )


def split_special(text: str, specials: Collection[str]) -> List[Tuple[str, bool]]:
    """Cut ``text`` at occurrences of special tokens.

    Returns ``(segment, is_special)`` pairs in order; ordinary segments are never empty.
    Scanning left to right, where special tokens start the longest is cut out, and the scan
    goes on after it. A caller that cuts many texts with the same tokens should keep
    :func:`special_cutter` of them (a frozenset is looked up without hashing every token).

    >>> split_special("a<|e|>b", ["<|e|>"])
    [('a', False), ('<|e|>', True), ('b', False)]
    """
    if not specials:
        return [(text, False)] if text else []
    return special_cutter(specials if isinstance(specials, frozenset) else frozenset(specials)).split(text)


@lru_cache(maxsize=64)
def special_cutter(specials: FrozenSet[str]) -> "SpecialCutter":
    """What cuts ``specials`` out of texts: ``split(text)`` as :func:`split_special`, and
    ``search(text)``, the ``(offset, token)`` of the first token cut, or None.

    Compiled, one pass over the text whatever the number and length of the tokens
    (``_scanner.SpecialCutter``, ``csrc/lib/scan/specials.h``); in pure Python the trie regex of
    :func:`special_finder`, whose time per position grows with the part of a token that
    matches there (at most the longest token).
    """
    scanner = NATIVE.scanner
    if scanner is not None:
        return scanner.SpecialCutter(specials)
    return RegexCutter(specials)


class RegexCutter:
    """``_scanner.SpecialCutter`` in Python, with :func:`special_finder`.

    >>> RegexCutter({"<a>", "<a><b>"}).split("x<a><b>")
    [('x', False), ('<a><b>', True)]
    """

    def __init__(self, specials: Iterable[str]) -> None:
        self.finder = special_finder(tuple(sorted(specials)))

    def split(self, text: str) -> List[Tuple[str, bool]]:
        out: List[Tuple[str, bool]] = []
        position = 0
        for match in self.finder.finditer(text):
            if match.start() > position:
                out.append((text[position : match.start()], False))
            out.append((match.group(), True))
            position = match.end()
        if position < len(text):
            out.append((text[position:], False))
        return out

    def search(self, text: str) -> Optional[Tuple[int, str]]:
        match = self.finder.search(text)
        return None if match is None else (match.start(), match.group())


if TYPE_CHECKING:  # the compiled cutter has the same two methods
    SpecialCutter = RegexCutter


@lru_cache(maxsize=64)
def special_finder(specials: Tuple[str, ...]) -> "re.Pattern[str]":
    """One compiled regex that finds any of ``specials``, the longest where several start.

    The alternatives are laid out as a trie (:func:`trie_regex`), so that the regex engine
    follows one path from each position instead of trying every token in turn: 20,000 special
    tokens cut a megabyte of HTML in 0.03 s, where the plain alternation of the tokens took 5 s
    (``benchmarks/special_tokens.py``). It is a stdlib ``re`` pattern: faster than ``regex``
    on literals.
    """
    return re.compile(trie_regex(specials))


# Below this many branch points or token ends, a trie is written as nested groups; deeper, the
# remaining suffixes are one alternation, longest first (re's parser is recursive: 400 nested
# groups compile, 800 do not).
_TRIE_DEPTH = 128


def trie_regex(words: Iterable[str]) -> str:
    """A regex that matches exactly ``words`` (non-empty), the longest of those that match at
    a position: the words as a trie, each node trying longer words before ending.

    >>> trie_regex(["<a>", "<a><b>", "a>"])
    '(?:<a>(?:<b>)?|a>)'
    """
    ordered = sorted({w for w in words if w})
    return _trie(ordered, 0, 0) if ordered else "(?!)"


def _trie(words: List[str], at: int, depth: int) -> str:
    # words: sorted, distinct, all sharing words[0][:at]; the regex of their suffixes from at.
    ends = len(words[0]) == at  # sorted: the word that ends here, if any, comes first
    rest = words[1:] if ends else words
    if not rest:
        return ""
    if depth >= _TRIE_DEPTH:
        suffixes = sorted((w[at:] for w in rest), key=lambda w: (-len(w), w))
        return "(?:" + "|".join(map(re.escape, suffixes)) + ("|)" if ends else ")")
    branches = []
    start = 0
    while start < len(rest):
        stop = start + 1
        while stop < len(rest) and rest[stop][at] == rest[start][at]:
            stop += 1
        group = rest[start:stop]
        # The common part of the group (sorted: that of its first and last word).
        first, last = group[0], group[-1]
        k = at + 1
        while k < len(first) and k < len(last) and first[k] == last[k]:
            k += 1
        branches.append(re.escape(first[at:k]) + _trie(group, k, depth + 1))
        start = stop
    body = "|".join(branches)
    if ends:
        return "(?:" + body + ")?"
    return body if len(branches) == 1 else "(?:" + body + ")"
