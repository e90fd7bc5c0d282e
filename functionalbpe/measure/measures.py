"""The report's measures, in one registry: what each is, how it is computed, how it is shown.

Every figure of the report is a :class:`Measure`: its JSON key, the function that computes it
from the counts, which way is cheaper, its column header and cell format in the tables. The
JSON output (its keys, in registry order), the terminal and Markdown tables, the HTML page and
``--sort-by`` all read them from here, so **adding a measure is one entry**: put it in its
family below, with the formula in :mod:`functionalbpe.measure.metrics` and its definition in
``docs/metrics.md``. The JSON keys are a contract: add keys, never rename or remove one.

Two registries, by what a value describes:

* :data:`RESULT_MEASURES` — a tokenizer on a corpus (one row per corpus and tokenizer, and
  one per tokenizer over all corpora together), computed from :class:`TextTokens`;
* :data:`VOCABULARY_MEASURES` — a tokenizer's vocabulary, computed from
  :class:`VocabularyUse`.

A header may name the report's settings (``"words in {context:,} tokens"``), filled in with
``str.format``. A measure without a header is in the JSON only.

Example::

    >>> [m.key for m in RESULT_MEASURES][:4], RESULTS["fertility"].direction
    (['tokens', 'words', 'chars', 'bytes'], 'lower is cheaper')
    >>> RESULTS["context_words"].column_header({"context": 8192}), fmt_pct(0.1234)
    ('words in 8,192 tokens', '12.3%')
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from . import metrics

if TYPE_CHECKING:  # pragma: no cover
    from .face import ReportTokenizer
    from .report import Report, TextCounts, Vocabulary

LOWER = "lower is cheaper"
HIGHER = "higher is cheaper"

EXAMPLES = 10  # unused entries and duplicate families shown per tokenizer


# -- cell formats ------------------------------------------------------------------------------


def fmt_int(value: Any) -> str:
    return "–" if value is None else f"{value:,}"


def fmt_float(value: Any, digits: int = 2) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def fmt_whole(value: Any) -> str:
    return fmt_float(value, 0)


def fmt_pct(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def fmt_times(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}×"


def fmt_mib(value: Any) -> str:
    return "–" if value is None else f"{value / 2**20:,.1f} MiB"


def fmt_text(value: Any) -> str:
    return str(value)


def _always(report: "Report") -> bool:
    return True


@dataclass(frozen=True)
class Measure:
    """One figure of the report."""

    key: str  # the JSON key: stable, snake_case
    compute: Callable[[Any], Any]  # the value, from the counts of one row (TextTokens or VocabularyUse)
    direction: Optional[str] = None  # LOWER or HIGHER (which way is cheaper), None: not a cost
    header: Optional[str] = None  # the tables' column header (str.format with the settings); None: JSON only
    format: Callable[[Any], str] = fmt_int  # a table cell
    label: str = ""  # the measure in words, for axes and notes
    shown: Callable[["Report"], bool] = _always  # whether the tables show it in this report
    # The tables follow the registry, which follows the JSON order; a column that reads better
    # elsewhere names the column it follows (the JSON order is a contract and cannot move).
    column_after: Optional[str] = None

    @property
    def numeric(self) -> bool:
        return self.format is not fmt_text

    def column_header(self, settings: Mapping[str, Any]) -> str:
        assert self.header is not None
        return self.header.format(**settings)


# -- what the measures are computed from --------------------------------------------------------


@dataclass
class TextTokens:
    """One tokenizer's tokens on one text (a corpus, or all corpora together)."""

    text: "TextCounts"  # documents, words, characters, bytes
    counts: Counter  # n(t): how often each token occurred
    vocab: "Vocabulary"  # what the tokenizer's ids are
    baseline_tokens: int  # T of the baseline tokenizer on the same text
    full_coverage: Optional[int]  # V_full on this text (report(coverage=True)), else None
    settings: Mapping[str, Any] = field(default_factory=dict)

    @cached_property
    def tokens(self) -> int:
        return sum(self.counts.values())

    @cached_property
    def byte_tokens(self) -> int:
        counts = self.counts
        return sum(counts[t] for t in self.vocab.byte_tokens if t in counts)

    @cached_property
    def non_ascii_byte_tokens(self) -> int:
        counts = self.counts
        return sum(counts[t] for t, b in self.vocab.byte_tokens.items() if b >= 0x80 and t in counts)

    @cached_property
    def unknown_tokens(self) -> int:
        counts = self.counts
        return sum(counts[t] for t in self.vocab.unknown if t in counts)

    @cached_property
    def entropy(self) -> Optional[float]:
        return metrics.entropy_bits(self.counts.values())


@dataclass
class VocabularyUse:
    """One tokenizer's vocabulary, and how often each entry occurred in all corpora."""

    tokenizer: "ReportTokenizer"
    vocab: "Vocabulary"
    seen: Counter  # n(t) over every corpus
    settings: Mapping[str, Any] = field(default_factory=dict)

    @cached_property
    def unused(self) -> List[int]:
        return metrics.unused_entries(self.vocab.entries, self.seen)

    @cached_property
    def duplicates(self) -> List[List[int]]:
        return metrics.families(self.vocab.surfaces, metrics.duplicate_key)

    @cached_property
    def redundant(self) -> int:
        return metrics.redundant_entries(self.duplicates)

    @cached_property
    def merge_counts(self) -> Optional[List[int]]:
        return self.tokenizer.merge_counts()


def unused_examples(use: VocabularyUse) -> List[str]:
    """The longest unused learned entries: the likeliest under-trained tokens."""
    surfaces = use.vocab.surfaces
    shown = [surfaces[t] for t in use.unused if t in surfaces]
    return sorted(shown, key=lambda s: (-len(s), s))[:EXAMPLES]


def duplicate_examples(use: VocabularyUse) -> List[List[str]]:
    """The largest duplicate families, each as its surfaces."""
    surfaces = use.vocab.surfaces
    largest = sorted(use.duplicates, key=lambda f: (-len(f), f))[:EXAMPLES]
    return [[surfaces[t] for t in family] for family in largest]


def _any_unknown(report: "Report") -> bool:
    return any(row["unknown_tokens"] for row in report.results())


def _coverage_on(report: "Report") -> bool:
    return bool(report.settings["coverage"])


# -- a tokenizer on a text ------------------------------------------------------------------------

RESULT_MEASURES: Tuple[Measure, ...] = (
    # The text and its tokens.
    Measure("tokens", lambda t: t.tokens, LOWER, "tokens", label="tokens"),
    Measure("words", lambda t: t.text.words, label="words"),
    Measure("chars", lambda t: t.text.chars, label="characters"),
    Measure("bytes", lambda t: t.text.bytes, label="UTF-8 bytes"),
    # Length: how many tokens the text costs.
    Measure("fertility", lambda t: metrics.fertility(t.tokens, t.text.words),
            LOWER, "tokens/word", fmt_float, "tokens per word"),
    Measure("bytes_per_token", lambda t: metrics.bytes_per_token(t.text.bytes, t.tokens),
            HIGHER, "bytes/token", fmt_float, "bytes per token"),
    Measure("chars_per_token", lambda t: metrics.chars_per_token(t.text.chars, t.tokens),
            HIGHER, "chars/token", fmt_float, "characters per token"),
    Measure("compression_ratio", lambda t: metrics.compression_ratio(t.text.bytes, t.tokens),
            HIGHER, label="compression ratio"),
    Measure("relative_tokens", lambda t: metrics.relative_tokens(t.tokens, t.baseline_tokens),
            LOWER, "tokens vs {baseline}", fmt_times, "tokens relative to the baseline"),
    # Byte fallback and unknown tokens: text the vocabulary had no token for.
    Measure("byte_fallback_tokens", lambda t: t.byte_tokens, LOWER, label="single-byte tokens"),
    Measure("byte_fallback_rate", lambda t: metrics.byte_fallback_rate(t.byte_tokens, t.tokens),
            LOWER, "byte tokens", fmt_pct, "share of tokens that are single bytes"),
    Measure("byte_fallback_non_ascii_tokens", lambda t: t.non_ascii_byte_tokens,
            LOWER, label="single-byte tokens of bytes 0x80-0xFF"),
    Measure("byte_fallback_non_ascii_share",
            lambda t: metrics.byte_fallback_non_ascii_share(t.non_ascii_byte_tokens, t.byte_tokens),
            LOWER, "of those ≥0x80", fmt_pct, "share of the single-byte tokens that are bytes 0x80-0xFF"),
    Measure("unknown_tokens", lambda t: t.unknown_tokens, LOWER, label="unknown tokens"),
    Measure("unknown_rate", lambda t: metrics.unknown_rate(t.unknown_tokens, t.tokens),
            LOWER, "unknown", fmt_pct, "share of tokens that are the unknown token", shown=_any_unknown),
    # The token distribution.
    Measure("entropy_bits", lambda t: t.entropy, None, "H bits", fmt_float, "entropy of the tokens, in bits"),
    Measure("effective_vocab", lambda t: metrics.effective_vocab(t.entropy), None, "2^H", fmt_whole,
            "effective vocabulary (2^H)"),
    Measure("distinct_tokens", lambda t: sum(1 for c in t.counts.values() if c), label="distinct tokens"),
    Measure("unused_entries", lambda t: len(metrics.unused_entries(t.vocab.entries, t.counts)),
            None, "unused entries", fmt_int, "entries never used on this text"),
    # Context and coverage.
    Measure("context_words", lambda t: metrics.context_capacity(t.settings["context"], t.text.words, t.tokens),
            HIGHER, "words in {context:,} tokens", fmt_int, "words that fit in the context"),
    Measure("full_coverage_vocab", lambda t: t.full_coverage, None, "full-coverage vocab", fmt_int,
            "vocabulary at which every piece is one token", shown=_coverage_on),
)

# -- a tokenizer's vocabulary ----------------------------------------------------------------------

VOCABULARY_MEASURES: Tuple[Measure, ...] = (
    # What it is.
    Measure("kind", lambda v: v.tokenizer.kind, None, "kind", fmt_text, "library"),
    Measure("description", lambda v: v.tokenizer.describe(), format=fmt_text, label="description"),
    Measure("vocab_size", lambda v: v.tokenizer.vocab_size, None, "vocab", fmt_int, "vocabulary size"),
    Measure("entries", lambda v: len(v.vocab.entries), label="entries (special tokens left out)"),
    Measure("special_tokens", lambda v: len(v.vocab.special), label="special tokens"),
    # What it costs a model.
    Measure("embedding_params", lambda v: v.tokenizer.vocab_size * v.settings["width"],
            LOWER, label="embedding parameters"),
    Measure("embedding_bytes",
            lambda v: metrics.embedding_cost(v.tokenizer.vocab_size, v.settings["width"], v.settings["bytes_per_param"]),
            LOWER, "embedding ({width:,} × {bytes_per_param:g} B)", fmt_mib, "embedding size"),
    # Entries never used on the corpora: candidates for under-trained tokens.
    Measure("unused_entries", lambda v: len(v.unused), LOWER, "unused", fmt_int, "unused entries"),
    Measure("unused_share", lambda v: metrics.share(len(v.unused), len(v.vocab.entries)),
            LOWER, "unused %", fmt_pct, "share of entries unused"),
    Measure("unused_examples", unused_examples, format=fmt_text, label="the longest unused entries"),
    # Families of entries that differ only in case or a leading space.
    Measure("learned_entries", lambda v: len(v.vocab.surfaces), None, "learned entries", fmt_int,
            "learned entries"),
    Measure("case_families", lambda v: len(metrics.families(v.vocab.surfaces, metrics.case_key)),
            LOWER, "case", fmt_int, "case families", column_after="duplicate_families"),
    Measure("space_families", lambda v: len(metrics.families(v.vocab.surfaces, metrics.space_key)),
            LOWER, "space", fmt_int, "space families", column_after="case_families"),
    Measure("duplicate_families", lambda v: len(v.duplicates), LOWER, "duplicate families", fmt_int,
            "duplicate families"),
    Measure("duplicate_entries", lambda v: v.redundant, LOWER, "redundant entries", fmt_int, "redundant entries"),
    Measure("duplicate_share", lambda v: metrics.share(v.redundant, len(v.vocab.surfaces)),
            LOWER, "redundant %", fmt_pct, "share of learned entries that are redundant"),
    Measure("duplicate_examples", duplicate_examples, format=fmt_text, label="the largest duplicate families"),
    # Training: what the merges saved (ours only).
    Measure("merges", lambda v: len(v.merge_counts) if v.merge_counts is not None else None,
            None, "merges", fmt_int, "merges"),
    Measure("last_merge_count", lambda v: v.merge_counts[-1] if v.merge_counts else None,
            None, "last merge count", fmt_int, "count of the last merge"),
    Measure("merge_counts", lambda v: v.merge_counts, format=fmt_text, label="count of each merge"),
)

RESULTS: Dict[str, Measure] = {m.key: m for m in RESULT_MEASURES}


def compute(measures: Iterable[Measure], counts: Any) -> Dict[str, Any]:
    """``{key: value}`` of every measure, in registry order."""
    return {m.key: m.compute(counts) for m in measures}


def columns(measures: Sequence[Measure], report: "Report") -> List[Measure]:
    """The measures a table of this report shows, in column order."""
    out = [m for m in measures if m.header is not None and m.shown(report)]
    for m in [m for m in out if m.column_after is not None]:
        if m.column_after in [c.key for c in out]:
            out.remove(m)
            out.insert([c.key for c in out].index(m.column_after) + 1, m)
    return out
