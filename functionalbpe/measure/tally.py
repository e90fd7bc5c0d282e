"""What the report tallies while a corpus streams past, a unit at a time, with numpy.

The report (:mod:`functionalbpe.measure.report`) reads each corpus once, a unit at a time
(:mod:`functionalbpe.text.unit_reader`), and hands every unit to every tokenizer. Two things are
kept per unit and per tokenizer, never the token ids themselves:

* :class:`UnitText` — what the text is, whatever the tokenizer: its bytes, where each
  character starts, its digit runs, its operators (code corpora) and the leaves of Python's
  own tokenizer (Python corpora). Worked out once per unit.
* :class:`Tally` — one tokenizer on one corpus: per-document ratios, token bigram and trigram
  counts, the round trip, and every count that needs the token boundaries.

**Token boundaries.** Where a tokenizer's tokens are the bytes of the text they cover, one
after the other (ours with the plain scheme, tiktoken, HF byte-level BPE without a
normalizer: :meth:`ReportTokenizer.token_lengths`), the boundaries of a unit are the
running sum of its tokens' byte lengths; a unit counts as *aligned* when those lengths add
up to its bytes and it decodes back to itself. The boundary measures (numbers, code,
character splits) are counted on aligned units only; the others are counted on every unit.
All boundary work is numpy over the unit's bytes: ``O(B + T)`` per unit, no Python loop
per token.

Example::

    >>> import numpy as np
    >>> unit = UnitText("x 1234", True, code=False, python=False)
    >>> unit.digit_runs
    (array([2]), array([6]))
    >>> t = Tally(np.array([1, 1, 2, 2, 4]), vocab_size=5, decode=None, markers=())  # byte lengths
    >>> t.add(unit, [0, 1, 2, 3])  # "x", " ", "12", "34": 1234 cut after 2 digits, not 1
    >>> t.finish()
    >>> t.numbers, t.digit_f1_sum, t.tokens_per_number(), t.split_entropy_by_digits()
    (1, 0.0, {4: 2.0}, {4: 0.0})
"""
from __future__ import annotations

import io
import keyword
import re
import tokenize
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple, Union

import numpy as np

from . import metrics
from ..errors import FunctionalBPEError

Decode = Optional[Callable[[List[int]], Optional[str]]]

# The largest edit-distance table the round trip works out for one unit: a tokenizer that
# changes a long stretch of text is reported as unmeasured there rather than stalling the run.
EDIT_BUDGET = 40_000_000
# Pending n-gram keys are reduced to (distinct key, count) once this many are waiting.
PENDING_KEYS = 1 << 22
# Digit lengths of the tokens-per-number table; longer numbers share the last bucket.
LONGEST_BUCKET = 10
# Split patterns are told apart as bit masks of the digits a boundary follows: up to 62 digits.
LONGEST_PATTERN = 62

# Operators, the longest forms first so that ``**=`` is one operator, not ``**`` and ``=``.
COMPOUND_OPERATORS = (
    "**=", "//=", ">>=", "<<=", "===", "!==", "...",
    "->", "=>", "::", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ":=",
    "**", "//", "<<", ">>", "&&", "||", "++", "--",
)
SINGLE_OPERATORS = "+-*/%=<>!&|^~@"
OPERATOR = re.compile("|".join(re.escape(op) for op in COMPOUND_OPERATORS) + "|[" + re.escape(SINGLE_OPERATORS) + "]")

_ASCII_SPACE = np.zeros(256, dtype=bool)
_ASCII_SPACE[[0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D]] = True
_LEAVES = {tokenize.NAME, tokenize.NUMBER, tokenize.STRING, tokenize.OP}
_KEYWORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)


def count_spaces(text: str) -> int:
    """Whitespace characters of ``text`` (``str.isspace``), counted in C."""
    return len(text) - len("".join(text.split()))


def _spans(starts: Any, ends: Any) -> Tuple[Any, Any]:
    return np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)


class UnitText:
    """One unit of a corpus, analysed once for every tokenizer.

    Offsets are byte offsets into the unit's UTF-8 bytes; a span is ``[start, end)``.
    ``code``: look for operators; ``python``: read it with Python's ``tokenize`` module (a
    unit that module rejects has no Python leaves).
    """

    def __init__(self, text: str, starts_document: bool, *, code: bool, python: bool) -> None:
        self.text = text
        self.starts_document = starts_document
        self.code = code
        self.python = python
        self.raw = text.encode("utf-8", "surrogatepass")
        self.data = np.frombuffer(self.raw, dtype=np.uint8)
        self.words = metrics.count_words(text)
        self.chars = len(text)
        self.feeds = text.count("\n")

    @cached_property
    def spaces(self) -> int:
        """Whitespace characters (``str.isspace``)."""
        return count_spaces(self.text)

    @cached_property
    def char_starts(self) -> Any:
        """``[B + 1]`` booleans: a character starts at this byte (and at the end)."""
        return np.r_[(self.data & 0xC0) != 0x80, True]

    @cached_property
    def char_starts_before(self) -> Any:
        """``[B + 1]``: how many characters start before each offset."""
        return np.r_[0, np.cumsum(self.char_starts[:-1])]

    @cached_property
    def wide_chars(self) -> Tuple[Any, Any]:
        """Byte spans of the characters of two bytes or more."""
        offsets = self.char_offsets
        wide = np.diff(offsets) > 1
        return offsets[:-1][wide], offsets[1:][wide]

    @cached_property
    def char_offsets(self) -> Any:
        """The byte offset of each character, and ``B`` after the last."""
        return np.flatnonzero(self.char_starts)

    def to_bytes(self, offsets: Any) -> Any:
        """Character offsets to byte offsets."""
        offsets = np.asarray(offsets, dtype=np.int64)
        return offsets if len(self.raw) == self.chars else self.char_offsets[offsets]

    @cached_property
    def nonspace_before(self) -> Any:
        """``[B + 1]``: how many bytes before each offset are not ASCII whitespace."""
        return np.r_[0, np.cumsum(~_ASCII_SPACE[self.data])]

    @cached_property
    def digit_runs(self) -> Tuple[Any, Any]:
        """The maximal runs of ASCII digits: ``(starts, ends)``."""
        digit = (self.data >= 0x30) & (self.data <= 0x39)
        edges = np.diff(np.r_[0, digit.astype(np.int8), 0])
        return _spans(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1))

    @cached_property
    def operators(self) -> Tuple[Any, Any]:
        """The operators of a code unit (:data:`OPERATOR`), as byte spans."""
        if not self.code:
            return _spans([], [])
        found = [(m.start(), m.end()) for m in OPERATOR.finditer(self.text)]
        return self.to_bytes([s for s, _ in found]), self.to_bytes([e for _, e in found])

    @cached_property
    def python_tokens(self) -> Optional[List[Tuple[int, int, int, str]]]:
        """``(type, start, end, string)`` of Python's tokenizer, character offsets; None when
        this is not a Python unit or ``tokenize`` rejects it."""
        if not self.python:
            return None
        line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        out = []
        try:
            for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
                if tok.type in _LEAVES:
                    (sr, sc), (er, ec) = tok.start, tok.end
                    out.append((tok.type, line_starts[sr - 1] + sc, line_starts[er - 1] + ec, tok.string))
        except (tokenize.TokenError, SyntaxError):
            return None
        return out

    @cached_property
    def leaves(self) -> Tuple[Any, Any]:
        """Byte spans of Python's leaves: names, numbers, strings and operators."""
        toks = self.python_tokens or []
        return self.to_bytes([t[1] for t in toks]), self.to_bytes([t[2] for t in toks])

    @cached_property
    def identifiers(self) -> Tuple[Any, Any]:
        """Byte spans of Python's names that are not keywords."""
        toks = [t for t in self.python_tokens or [] if t[0] == tokenize.NAME and t[3] not in _KEYWORDS]
        return self.to_bytes([t[1] for t in toks]), self.to_bytes([t[2] for t in toks])

    @cached_property
    def indents(self) -> Tuple[Any, Any, Any]:
        """Indented lines of a Python unit: ``(line start, indent width, depth)``.

        The indent is the run of spaces and tabs that starts a line that holds something else;
        its depth is its width in characters over the unit's indent unit, the greatest common
        divisor of the widths.
        """
        if self.python_tokens is None:
            return _spans([], []) + (np.zeros(0, dtype=np.int64),)
        found = [(m.start(), m.end() - m.start()) for m in re.finditer(r"(?m)^[ \t]+(?=[^ \t\r\n])", self.text)]
        widths = np.array([w for _, w in found], dtype=np.int64)
        unit = int(np.gcd.reduce(widths)) if len(widths) else 1
        starts = self.to_bytes([s for s, _ in found])
        ends = self.to_bytes([s + w for s, w in found])
        return starts, ends - starts, widths // max(unit, 1)


def _reduce(keys: Any, counts: Any, runs: bool = False) -> Tuple[Any, Any]:
    """Equal keys added up: ``(sorted distinct keys, their counts)``.

    ``runs``: the keys are a few sorted runs one after the other (reduced arrays joined), which
    the stable sort (a merge sort) orders in about linear time.
    """
    if not len(keys):
        return keys, counts
    order = np.argsort(keys, kind="stable" if runs else None)
    keys, counts = keys[order], counts[order]
    first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return keys[first], np.add.reduceat(counts, first)


class NGrams:
    """Counts of token n-grams inside documents, as ``(key, count)`` numpy arrays.

    A key is ``((t₁ · V) + t₂) · V + t₃`` for a trigram; an n-gram never spans two documents.
    """

    def __init__(self, n: int, base: int) -> None:
        self.n = n
        self.base = base
        self.keys = np.zeros(0, dtype=np.int64)
        self.counts = np.zeros(0, dtype=np.int64)
        self._pending: List[Any] = []
        self._waiting = 0
        self._entropy: Optional[Tuple[Optional[float], Optional[float]]] = None

    def add(self, seq: Any) -> None:
        if len(seq) < self.n:
            return
        key = seq[: len(seq) - self.n + 1].copy()
        for k in range(1, self.n):
            key = key * self.base + seq[k: len(seq) - self.n + 1 + k]
        self._pending.append(key)
        self._entropy = None
        self._waiting += len(key)
        if self._waiting >= PENDING_KEYS:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            new, ones = _reduce(np.concatenate(self._pending), np.ones(self._waiting, dtype=np.int64))
            self._pending, self._waiting = [], 0
            self.keys, self.counts = _reduce(np.r_[self.keys, new], np.r_[self.counts, ones], runs=True)

    def merge(self, other: "NGrams") -> None:
        other._flush()
        self._flush()
        self._entropy = None
        self.keys, self.counts = _reduce(np.r_[self.keys, other.keys], np.r_[self.counts, other.counts], runs=True)

    def successor_entropy(self) -> Tuple[Optional[float], Optional[float]]:
        """``(η, H)`` of :func:`metrics.successor_entropy`, the context being all but the last token."""
        if self._entropy is None:
            self._flush()
            self._entropy = metrics.successor_entropy(self.keys // self.base, self.counts)
        return self._entropy


# Every additive count of a tally, in one place so that tallies add up for the totals.
COUNTS = (
    "documents", "zero_token_documents", "ratio_documents", "tokens", "marker_tokens",
    "round_trip_documents", "round_trip_exact", "cer_documents", "whitespace", "whitespace_kept",
    "unmeasured_documents", "aligned_tokens", "unaligned_tokens", "complete_tokens", "crossing_tokens",
    "internal_boundaries", "boundaries_in_char", "multibyte_chars", "split_chars",
    "numbers", "operators", "operators_isolated", "compounds", "compounds_kept",
    "leaves", "leaves_aligned", "identifiers", "identifiers_split", "identifier_tokens",
)
SUMS = ("fertility_sum", "token_bytes_sum", "token_chars_sum", "cer_sum", "digit_f1_sum")


class Tally:
    """One tokenizer on one corpus: everything the measures need beyond the token counts.

    ``lengths``: the byte length of each id when tokens spell the text's bytes, else None;
    ``decode``: ids → text, or None when the library cannot decode; ``markers``: the ids of a
    scheme's instructions or markers.
    """

    # The additive counts (COUNTS, SUMS), all 0 at first.
    documents: int
    zero_token_documents: int
    ratio_documents: int
    tokens: int
    marker_tokens: int
    round_trip_documents: int
    round_trip_exact: int
    cer_documents: int
    whitespace: int
    whitespace_kept: int
    unmeasured_documents: int
    aligned_tokens: int
    unaligned_tokens: int
    complete_tokens: int
    crossing_tokens: int
    internal_boundaries: int
    boundaries_in_char: int
    multibyte_chars: int
    split_chars: int
    numbers: int
    operators: int
    operators_isolated: int
    compounds: int
    compounds_kept: int
    leaves: int
    leaves_aligned: int
    identifiers: int
    identifiers_split: int
    identifier_tokens: int
    fertility_sum: float
    token_bytes_sum: float
    token_chars_sum: float
    cer_sum: float
    digit_f1_sum: float

    def __init__(self, lengths: Optional[Any], vocab_size: int, decode: Decode, markers: Iterable[int]) -> None:
        self.lengths = lengths
        self.decode = decode
        self.vocab_size = vocab_size
        self.is_marker = np.zeros(vocab_size, dtype=bool)
        self.is_marker[[m for m in markers if 0 <= m < vocab_size]] = True
        for name in COUNTS:
            setattr(self, name, 0)
        for name in SUMS:
            setattr(self, name, 0.0)
        self.bigrams = NGrams(2, vocab_size)
        # Trigram keys need V³ < 2⁶³.
        self.trigrams: Optional[NGrams] = NGrams(3, vocab_size) if vocab_size < 2_000_000 else None
        self.number_patterns: Counter = Counter()  # (digits, bit mask of cuts) → numbers
        self.number_tokens: Counter = Counter()  # digits (10 = 10 or more) → tokens
        self.number_count: Counter = Counter()  # digits → numbers
        self.indent_pairs: Counter = Counter()  # (depth, whitespace tokens) → lines
        self._doc: Optional[Dict[str, Any]] = None
        self._open_cut = False  # an aligned unit of this document with tokens has ended
        self._carry = np.zeros(0, dtype=np.int64)

    # -- documents ----------------------------------------------------------------------

    def _close_document(self) -> None:
        doc = self._doc
        if doc is None:
            return
        self._doc = None
        self.documents += 1
        t = doc["tokens"]
        if not t:
            self.zero_token_documents += 1
        else:
            self.token_bytes_sum += doc["bytes"] / t
            self.token_chars_sum += doc["chars"] / t
            if doc["words"]:
                self.ratio_documents += 1
                self.fertility_sum += t / doc["words"]
        if doc["checked"]:
            self.round_trip_documents += 1
            self.round_trip_exact += doc["exact"]
            if doc["edits"] is None:
                self.unmeasured_documents += 1
            elif doc["chars"]:
                self.cer_documents += 1
                self.cer_sum += doc["edits"] / doc["chars"]

    def finish(self) -> None:
        """The corpus has ended: close its last document."""
        self._close_document()

    # -- a unit ------------------------------------------------------------------------

    def add(self, unit: UnitText, ids: List[int]) -> None:
        """Tally one unit and the ids the tokenizer gave it."""
        if unit.starts_document or self._doc is None:
            self._open_cut = False
            self._close_document()
            self._doc = {"tokens": 0, "words": 0, "bytes": 0, "chars": 0, "checked": False, "exact": True, "edits": 0}
            self._carry = np.zeros(0, dtype=np.int64)
        doc = self._doc
        arr = np.asarray(ids, dtype=np.int64)
        doc["tokens"] += len(arr)
        doc["words"] += unit.words
        doc["bytes"] += len(unit.raw)
        doc["chars"] += unit.chars
        self.tokens += len(arr)
        if len(arr) and not 0 <= int(arr.min()) <= int(arr.max()) < self.vocab_size:
            raise FunctionalBPEError(
                f"the tokenizer gave an id outside its vocabulary of {self.vocab_size} ids "
                f"({int(arr.min())}..{int(arr.max())})"
            )
        if len(arr):
            self.marker_tokens += int(self.is_marker[arr].sum())
            # The last two tokens of the document so far carry over: a trigram needs both, a
            # bigram only the last (the pair of the two was counted with the previous unit).
            seq = np.r_[self._carry, arr]
            self.bigrams.add(seq[max(len(self._carry) - 1, 0):])
            if self.trigrams is not None:
                self.trigrams.add(seq)
            self._carry = seq[-2:]
        exact = self._round_trip(unit, arr, doc)
        if exact and self.lengths is not None:
            lengths = self.lengths[arr]
            if int(lengths.sum()) == len(unit.raw):
                self.aligned_tokens += len(arr)
                if self._open_cut and len(arr):
                    # The end of the previous unit of this document: a boundary between two
                    # tokens (always between characters: units are cut at a line break).
                    self.internal_boundaries += 1
                self._boundaries(unit, lengths)
                self._open_cut = self._open_cut or bool(len(arr))
                return
        self._open_cut = False
        if self.lengths is not None:
            self.unaligned_tokens += len(arr)

    def _round_trip(self, unit: UnitText, arr: Any, doc: Dict[str, Any]) -> bool:
        if self.decode is None:
            return True
        back = self.decode(arr.tolist()) or ""
        doc["checked"] = True
        if back == unit.text:
            self.whitespace += unit.spaces
            self.whitespace_kept += unit.spaces
            return True
        doc["exact"] = False
        original = unit.text
        x, y = metrics.code_points(original), metrics.code_points(back)
        # The alignment of a common prefix and suffix is forced; only the middle is worked out.
        n = min(len(x), len(y))
        differ = np.flatnonzero(x[:n] != y[:n])
        head = int(differ[0]) if len(differ) else n
        differ = np.flatnonzero(x[::-1][: n - head] != y[::-1][: n - head])
        tail = int(differ[0]) if len(differ) else n - head
        a, b = original[head: len(original) - tail], back[head: len(back) - tail]
        if len(a) * len(b) > EDIT_BUDGET:
            doc["edits"] = None
            return False
        self.whitespace += unit.spaces
        kept_outside = unit.spaces - count_spaces(a)
        self.whitespace_kept += kept_outside + (metrics.whitespace_kept(a, b) if a and b else 0)
        if doc["edits"] is not None:
            doc["edits"] += metrics.edit_distance(a, b)
        return False

    def _boundaries(self, unit: UnitText, lengths: Any) -> None:
        size = len(unit.raw)
        ends = np.cumsum(lengths)
        starts = ends - lengths
        # The token boundaries, sorted and distinct, 0 and B included: every question below is a
        # bisection in them (O(log T) each), so nothing is as long as the unit's bytes.
        cuts = np.r_[0, ends]
        cuts = cuts[np.r_[True, cuts[1:] != cuts[:-1]]]

        def inside(s: Any, e: Any) -> Any:
            """Boundaries strictly inside each span (s, e)."""
            return np.searchsorted(cuts, e, side="left") - np.searchsorted(cuts, s, side="right")

        def is_cut(x: Any) -> Any:
            at = np.minimum(np.searchsorted(cuts, x), len(cuts) - 1)
            return cuts[at] == x

        # Characters: which tokens are whole characters, which boundaries cut one.
        cs = unit.char_starts
        content = lengths > 0
        complete = cs[starts] & cs[ends] & content
        self.complete_tokens += int(complete.sum())
        cs_before = unit.char_starts_before
        low = np.minimum(starts + 1, size)
        holds_start_inside = (cs_before[np.maximum(ends, low)] - cs_before[low]) > 0
        self.crossing_tokens += int((content & ~complete & holds_start_inside).sum())
        inner = cuts[1:-1] if cuts[-1] == size else cuts[1:]
        self.internal_boundaries += len(inner)
        self.boundaries_in_char += int((~cs[inner]).sum())
        wide_s, wide_e = unit.wide_chars
        self.multibyte_chars += len(wide_s)
        if len(wide_s):
            self.split_chars += int((inside(wide_s, wide_e) > 0).sum())
        self._numbers(unit, inner, inside)
        if unit.code:
            self._operators(unit, starts, ends, inside)
        if unit.python_tokens is not None:
            self._python(unit, is_cut, starts, ends, inside)

    def _numbers(self, unit: UnitText, cut_at: Any, inside: Any) -> None:
        s, e = unit.digit_runs
        if not len(s):
            return
        digits = e - s
        placed = inside(s, e)
        # The cuts inside runs, each with its run (the last run that starts before it).
        run = np.searchsorted(s, cut_at, side="right") - 1
        keep = (run >= 0) & (cut_at > s[np.maximum(run, 0)]) & (cut_at < e[np.maximum(run, 0)])
        cut_at, run = cut_at[keep], run[keep]
        on_group = ((e[run] - cut_at) % 3) == 0
        hits = np.bincount(run[on_group], minlength=len(s))
        ideal = (digits - 1) // 3
        total = placed + ideal
        f1 = np.where(total > 0, 2 * hits / np.maximum(total, 1), 1.0)
        self.numbers += len(s)
        self.digit_f1_sum += float(f1.sum())
        short = digits <= LONGEST_PATTERN
        mask = np.zeros(len(s), dtype=np.int64)
        small = short[run]
        np.add.at(mask, run[small], np.left_shift(1, (cut_at - s[run])[small]))
        self.number_patterns.update(zip(digits[short].tolist(), mask[short].tolist()))
        for k in np.flatnonzero(~short):  # a number longer than a mask: its cuts, listed
            cuts = tuple((cut_at[run == k] - s[k]).tolist())
            self.number_patterns[int(digits[k]), cuts] += 1
        bucket = np.minimum(digits, LONGEST_BUCKET)
        self.number_count.update(Counter(bucket.tolist()))
        sums = np.bincount(bucket, weights=placed + 1, minlength=LONGEST_BUCKET + 1)
        for b in np.flatnonzero(sums):
            self.number_tokens[int(b)] += int(sums[b])

    def _operators(self, unit: UnitText, starts: Any, ends: Any, inside: Any) -> None:
        s, e = unit.operators
        if not len(s):
            return
        first = np.searchsorted(ends, s, side="right")  # the token that holds the operator's first byte
        last = np.searchsorted(ends, e, side="left")  # ... and its last byte
        ns = unit.nonspace_before
        outside = (ns[s] - ns[starts[first]]) + (ns[ends[last]] - ns[e])
        self.operators += len(s)
        self.operators_isolated += int((outside == 0).sum())
        compound = (e - s) > 1
        self.compounds += int(compound.sum())
        self.compounds_kept += int((inside(s[compound], e[compound]) == 0).sum())

    def _python(self, unit: UnitText, is_cut: Any, starts: Any, ends: Any, inside: Any) -> None:
        s, e = unit.leaves
        if len(s):
            # A token may hold the one space before a word (" total"): that still starts it.
            spaced = np.r_[False, unit.data == 0x20]
            start_ok = is_cut(s) | (is_cut(np.maximum(s - 1, 0)) & spaced[s] & (s > 0))
            self.leaves += len(s)
            self.leaves_aligned += int((start_ok & is_cut(e)).sum())
        s, e = unit.identifiers
        if len(s):
            cuts = inside(s, e)
            self.identifiers += len(s)
            self.identifiers_split += int((cuts > 0).sum())
            self.identifier_tokens += int((cuts + 1).sum())
        ls, width, depth = unit.indents
        if len(ls):
            ns = unit.nonspace_before
            blank = (ns[ends] - ns[starts]) == 0  # a token of whitespace only
            blank_before = np.r_[0, np.cumsum(blank)]
            first = np.searchsorted(ends, ls, side="right")  # the first token that ends after the line start
            stop = np.searchsorted(starts, ls + width, side="left")  # tokens that start inside the indent
            spent = blank_before[np.maximum(stop, first)] - blank_before[first]
            self.indent_pairs.update(zip(depth.tolist(), spent.tolist()))

    # -- the totals ---------------------------------------------------------------------

    def merge(self, other: "Tally") -> None:
        """Add another corpus's tally to this one (for the row of all corpora together)."""
        for name in COUNTS + SUMS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.bigrams.merge(other.bigrams)
        if self.trigrams is not None and other.trigrams is not None:
            self.trigrams.merge(other.trigrams)
        for mine, theirs in (
            (self.number_patterns, other.number_patterns),
            (self.number_tokens, other.number_tokens),
            (self.number_count, other.number_count),
            (self.indent_pairs, other.indent_pairs),
        ):
            mine.update(theirs)

    # -- derived ------------------------------------------------------------------------

    def split_entropy_by_digits(self) -> Dict[int, float]:
        """``{digits: entropy in bits of how numbers of that length are split}``."""
        by_length: Dict[int, Counter] = {}
        for (digits, pattern), n in self.number_patterns.items():
            by_length.setdefault(digits, Counter())[pattern] += n
        return {d: metrics.pattern_entropy(p) or 0.0 for d, p in sorted(by_length.items())}

    def tokens_per_number(self) -> Dict[int, float]:
        """``{digits: mean tokens per number}``; the last bucket is every longer number too."""
        return {d: self.number_tokens[d] / n for d, n in sorted(self.number_count.items())}

    def indent_tokens_by_depth(self) -> Dict[int, float]:
        """``{depth: mean whitespace tokens spent on an indent of that depth}``."""
        lines: Counter = Counter()
        spent: Counter = Counter()
        for (depth, tokens), n in self.indent_pairs.items():
            lines[depth] += n
            spent[depth] += tokens * n
        return {d: spent[d] / lines[d] for d in sorted(lines)}


@dataclass
class TextCounts:
    """What a corpus is, counted while it streams past."""

    documents: int = 0
    words: int = 0
    chars: int = 0
    bytes: int = 0
    lines: int = 0
    # Whether the document read so far ends in a line without its line feed.
    open_line: bool = field(default=False, compare=False, repr=False)

    def add(self, unit: Union[str, UnitText], starts_document: bool) -> None:
        if isinstance(unit, str):
            unit = UnitText(unit, starts_document, code=False, python=False)
        if starts_document:
            self.finish()
        self.documents += starts_document
        self.words += unit.words
        self.chars += unit.chars
        self.bytes += len(unit.raw)
        self.lines += unit.feeds
        if unit.text:
            self.open_line = not unit.text.endswith("\n")

    def finish(self) -> None:
        """The document has ended: its last line counts even without a line feed."""
        self.lines += self.open_line
        self.open_line = False

    def __iadd__(self, other: "TextCounts") -> "TextCounts":
        self.documents += other.documents
        self.words += other.words
        self.chars += other.chars
        self.bytes += other.bytes
        self.lines += other.lines
        return self


@dataclass
class VocabularyFacts:
    """What a tokenizer's vocabulary is (its entries, byte tokens, unknown and special ids,
    surfaces), computed once per report; a tokenizer's own table of tokens is
    :class:`functionalbpe.core.vocabulary.Vocabulary`."""

    entries: List[int]
    byte_tokens: Dict[int, int]
    unknown: Set[int]
    surfaces: Dict[int, str]
    special: Set[int] = field(default_factory=set)
