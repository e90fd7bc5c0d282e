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

from . import fairness, metrics

if TYPE_CHECKING:  # pragma: no cover
    from ..peers.face import ReportTokenizer
    from .report_view import ReportView
    from .tally import Tally, TextCounts, VocabularyFacts

LOWER = "lower is cheaper"
# The families of measures that have a table of their own.
LENGTH = "Compression and length"
INFORMATION = "Information"
NUMBERS = "Numbers"
CODE = "Code"
INTEGRITY = "Integrity"
SCHEME = "Instructions and markers"
FAIRNESS = "Across corpora"
FAMILIES = (LENGTH, INFORMATION, NUMBERS, CODE, INTEGRITY, SCHEME)
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


def _always(report: "ReportView") -> bool:
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
    shown: Callable[["ReportView"], bool] = _always  # whether the tables show it in this report
    # The tables follow the registry, which follows the JSON order; a column that reads better
    # elsewhere names the column it follows (the JSON order is a contract and cannot move).
    column_after: Optional[str] = None
    # The table it is shown in: "" for the main tables, else a family's own table.
    family: str = ""

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
    vocab: "VocabularyFacts"  # what the tokenizer's ids are
    baseline_tokens: int  # T of the baseline tokenizer on the same text
    full_coverage: Optional[int]  # V_full on this text (report(coverage=True)), else None
    settings: Mapping[str, Any] = field(default_factory=dict)
    tally: Optional["Tally"] = None  # what was tallied beyond the counts (measure/tally.py)
    vocab_size: int = 0  # V, declared

    @property
    def t(self) -> "Tally":
        assert self.tally is not None
        return self.tally

    @cached_property
    def distinct(self) -> int:
        return sum(1 for c in self.counts.values() if c)

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
    vocab: "VocabularyFacts"
    seen: Counter  # n(t) over every corpus
    settings: Mapping[str, Any] = field(default_factory=dict)
    # Per corpus, in report order: (tokens, bytes, lines, distinct tokens).
    per_corpus: Mapping[str, Tuple[int, int, int, int]] = field(default_factory=dict)

    @cached_property
    def fairness(self) -> Dict[str, Any]:
        return corpus_fairness(self.per_corpus, self.settings.get("reference"), self.tokenizer.vocab_size)

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


def corpus_fairness(per_corpus: Mapping[str, Tuple[int, int, int, int]], reference: Optional[str], vocab_size: int) -> Dict[str, Any]:
    """The cross-corpus measures of one tokenizer (the corpora read as languages)."""
    out: Dict[str, Any] = {
        "gini_tokens": None, "gini_tokens_per_byte": None, "gini_tokens_per_line": None, "lorenz": None,
        "reference": None, "premium": None, "max_premium": None, "utilization_cv": None,
    }
    if len(per_corpus) < 2:
        return out
    tokens = {c: v[0] for c, v in per_corpus.items()}
    out["gini_tokens"] = fairness.gini(tokens.values())
    out["gini_tokens_per_byte"] = fairness.gini(v[0] / v[1] for v in per_corpus.values() if v[1])
    if all(v[2] for v in per_corpus.values()):
        out["gini_tokens_per_line"] = fairness.gini(v[0] / v[2] for v in per_corpus.values())
    out["lorenz"] = [list(p) for p in fairness.lorenz(tokens.values())]
    ref = reference if reference in tokens else next(iter(tokens))
    if tokens[ref]:
        out["reference"] = ref
        out["premium"] = fairness.token_premium(tokens, ref)
        out["max_premium"] = max(out["premium"].values())
    out["utilization_cv"] = metrics.coefficient_of_variation([v[3] / vocab_size for v in per_corpus.values()])
    return out


def _keyed(table: Mapping[int, float]) -> Optional[Dict[str, float]]:
    """A table by digits or depth, keyed as JSON keys are (strings); None when empty."""
    return {str(k): v for k, v in table.items()} or None


def _per_document(t: TextTokens, total: float) -> Optional[float]:
    """A sum of per-document ratios over the documents that have tokens."""
    counted = t.t.documents - t.t.zero_token_documents
    return total / counted if counted else None


def _mean_split_entropy(tally: "Tally") -> Optional[float]:
    by_digits = tally.split_entropy_by_digits()
    numbers = {d: 0 for d in by_digits}
    for (digits, _), n in tally.number_patterns.items():
        numbers[digits] += n
    total = sum(numbers.values())
    return sum(by_digits[d] * n for d, n in numbers.items()) / total if total else None


def _any_markers(report: "ReportView") -> bool:
    return any(row["marker_tokens"] for row in report.results())


def _any_unknown(report: "ReportView") -> bool:
    return any(row["unknown_tokens"] for row in report.results())


def _coverage_on(report: "ReportView") -> bool:
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
    # Compression and length, per line and per document.
    Measure("lines", lambda t: t.text.lines, label="lines", family=LENGTH),
    Measure("documents", lambda t: t.t.documents, label="documents", family=LENGTH),
    Measure("tokens_per_line", lambda t: metrics.fertility(t.tokens, t.text.lines),
            LOWER, "tokens/line", fmt_float, "tokens per line", family=LENGTH),
    Measure("lines_per_token", lambda t: metrics.share(t.text.lines, t.tokens),
            HIGHER, label="lines per token (compression rate per line)", family=LENGTH),
    Measure("fertility_mean", lambda t: metrics.share(t.t.fertility_sum, t.t.ratio_documents),
            LOWER, "tokens/word, mean of documents", fmt_float, "tokens per word, mean of per-document ratios",
            family=LENGTH),
    Measure("zero_token_documents", lambda t: t.t.zero_token_documents, None, "documents with no token", fmt_int,
            "documents that encode to no token", family=LENGTH),
    Measure("mean_token_bytes", lambda t: _per_document(t, t.t.token_bytes_sum), None, "bytes/token, mean of documents",
            fmt_float, "token length in bytes, mean of per-document ratios", family=LENGTH),
    Measure("mean_token_chars", lambda t: _per_document(t, t.t.token_chars_sum), None, "chars/token, mean of documents",
            fmt_float, "token length in characters, mean of per-document ratios", family=LENGTH),
    Measure("vocab_utilization", lambda t: metrics.share(t.distinct, t.vocab_size), None, "vocabulary used",
            fmt_pct, "share of the declared vocabulary used", family=LENGTH),
    Measure("type_token_ratio", lambda t: metrics.share(t.distinct, t.tokens), None, "type/token", fmt_float,
            "distinct tokens over tokens", family=LENGTH),
    # Information.
    *(
        Measure(f"renyi_efficiency_{str(a).replace('.', '_').removesuffix('_0')}",
                (lambda a: lambda t: metrics.renyi_efficiency(t.counts.values(), a, t.vocab_size))(a),
                None, f"Rényi α={a:g}", fmt_float, f"Rényi efficiency at α = {a:g}", family=INFORMATION)
        for a in metrics.RENYI_ALPHAS
    ),
    Measure("average_token_rank", lambda t: metrics.average_token_rank(t.counts.values()), None, "mean rank",
            fmt_float, "mean frequency rank of the tokens", family=INFORMATION),
    Measure("bigram_successor_efficiency", lambda t: t.t.bigrams.successor_entropy()[0], None, "η after 1 token",
            fmt_float, "Shannon efficiency of the next token after one token", family=INFORMATION),
    Measure("bigram_conditional_entropy_bits", lambda t: t.t.bigrams.successor_entropy()[1], None,
            "H(next | 1 token) bits", fmt_float, "entropy of the next token given one token", family=INFORMATION),
    Measure("trigram_successor_efficiency", lambda t: t.t.trigrams.successor_entropy()[0] if t.t.trigrams else None,
            None, "η after 2 tokens", fmt_float, "Shannon efficiency of the next token after two tokens",
            family=INFORMATION),
    Measure("trigram_conditional_entropy_bits",
            lambda t: t.t.trigrams.successor_entropy()[1] if t.t.trigrams else None, None, "H(next | 2 tokens) bits",
            fmt_float, "entropy of the next token given two tokens", family=INFORMATION),
    # Numbers (runs of ASCII digits), on the text whose token boundaries are known.
    Measure("numbers", lambda t: t.t.numbers, None, "numbers", fmt_int, "numbers (digit runs) measured",
            family=NUMBERS),
    Measure("digit_group_f1", lambda t: metrics.share(t.t.digit_f1_sum, t.t.numbers), HIGHER,
            "3-digit group F1", fmt_float, "F1 of number boundaries against three-digit groups", family=NUMBERS),
    Measure("digit_split_entropy_mean", lambda t: _mean_split_entropy(t.t), LOWER, "split entropy bits", fmt_float,
            "entropy of how numbers of one length are split, mean over numbers", family=NUMBERS),
    Measure("digit_split_entropy", lambda t: _keyed(t.t.split_entropy_by_digits()), format=fmt_text,
            label="entropy of the split patterns, by digits", family=NUMBERS),
    Measure("tokens_per_number", lambda t: _keyed(t.t.tokens_per_number()), format=fmt_text,
            label="tokens per number, by digits (10: ten or more)", family=NUMBERS),
    # Code: operators on code corpora; Python's own tokens on Python corpora.
    Measure("operators", lambda t: t.t.operators, None, "operators", fmt_int, "operators measured", family=CODE),
    Measure("operator_isolation", lambda t: metrics.share(t.t.operators_isolated, t.t.operators), HIGHER,
            "operators isolated", fmt_pct, "share of operators in tokens of their own", family=CODE),
    Measure("compound_operators", lambda t: t.t.compounds, label="compound operators measured", family=CODE),
    Measure("compound_preservation", lambda t: metrics.share(t.t.compounds_kept, t.t.compounds), HIGHER,
            "compounds whole", fmt_pct, "share of compound operators inside one token", family=CODE),
    Measure("identifiers", lambda t: t.t.identifiers, label="Python identifiers measured", family=CODE),
    Measure("identifier_fragmentation", lambda t: metrics.share(t.t.identifiers_split, t.t.identifiers), LOWER,
            "identifiers split", fmt_pct, "share of identifiers split into several tokens", family=CODE),
    Measure("tokens_per_identifier", lambda t: metrics.share(t.t.identifier_tokens, t.t.identifiers), LOWER,
            "tokens/identifier", fmt_float, "tokens per identifier", family=CODE),
    Measure("indent_depth_correlation", lambda t: metrics.spearman(t.t.indent_pairs), None, "indent ρ", fmt_float,
            "Spearman correlation of indent depth with the whitespace tokens spent on it", family=CODE),
    Measure("indent_tokens_by_depth", lambda t: _keyed(t.t.indent_tokens_by_depth()), format=fmt_text,
            label="whitespace tokens per indent, by depth", family=CODE),
    Measure("python_leaves", lambda t: t.t.leaves, label="Python tokens measured", family=CODE),
    Measure("python_leaf_alignment", lambda t: metrics.share(t.t.leaves_aligned, t.t.leaves), HIGHER,
            "Python tokens aligned", fmt_pct, "share of Python's tokens whose both ends are token boundaries",
            family=CODE),
    # Integrity: the round trip, and the tokens against the characters.
    Measure("round_trip_exact_rate", lambda t: metrics.share(t.t.round_trip_exact, t.t.round_trip_documents), HIGHER,
            "round trip exact", fmt_pct, "share of documents that decode back exactly", family=INTEGRITY),
    Measure("char_error_rate", lambda t: metrics.share(t.t.cer_sum, t.t.cer_documents), LOWER,
            "CER", fmt_float, "character error rate of the round trip, mean of documents", family=INTEGRITY),
    Measure("round_trip_unmeasured_documents", lambda t: t.t.unmeasured_documents, None,
            label="documents too changed for the edit distance", family=INTEGRITY),
    Measure("whitespace_fidelity", lambda t: metrics.share(t.t.whitespace_kept, t.t.whitespace), HIGHER,
            "whitespace kept", fmt_pct, "share of whitespace characters kept by the round trip", family=INTEGRITY),
    Measure("aligned_tokens", lambda t: t.t.aligned_tokens, None, "tokens with known bounds", fmt_int,
            "tokens whose boundaries are byte offsets of the text", family=INTEGRITY),
    Measure("complete_utf8_share", lambda t: metrics.share(t.t.complete_tokens, t.t.aligned_tokens), HIGHER,
            "whole-character tokens", fmt_pct, "share of tokens that are whole UTF-8 characters", family=INTEGRITY),
    Measure("crossing_token_share", lambda t: metrics.share(t.t.crossing_tokens, t.t.aligned_tokens), LOWER,
            "tokens across characters", fmt_pct, "share of tokens holding parts of two characters", family=INTEGRITY),
    Measure("boundary_in_char_rate", lambda t: metrics.share(t.t.boundaries_in_char, t.t.internal_boundaries), LOWER,
            "boundaries inside a character", fmt_pct, "share of token boundaries inside a character",
            family=INTEGRITY),
    Measure("split_char_rate", lambda t: metrics.share(t.t.split_chars, t.t.multibyte_chars), LOWER,
            "multi-byte chars split", fmt_pct, "share of multi-byte characters split across tokens", family=INTEGRITY),
    # The schemes' own: instructions and markers.
    Measure("marker_tokens", lambda t: t.t.marker_tokens, None, label="instruction or marker tokens", family=SCHEME),
    Measure("marker_share", lambda t: metrics.share(t.t.marker_tokens, t.tokens), None, "instructions/markers",
            fmt_pct, "share of tokens that are instructions or markers", family=SCHEME, shown=_any_markers),
    Measure("fertility_without_markers", lambda t: metrics.fertility(t.tokens - t.t.marker_tokens, t.text.words),
            LOWER, "tokens/word without them", fmt_float, "tokens per word, instructions and markers left out",
            family=SCHEME, shown=_any_markers),
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
    # Across corpora (read as languages; fair on parallel text): how evenly they are served.
    Measure("gini_tokens", lambda v: v.fairness["gini_tokens"], LOWER, "Gini of tokens", fmt_float,
            "Gini coefficient of the corpora's token counts", family=FAIRNESS),
    Measure("gini_tokens_per_byte", lambda v: v.fairness["gini_tokens_per_byte"], LOWER, "Gini of tokens/byte",
            fmt_float, "Gini coefficient of the corpora's tokens per byte", family=FAIRNESS),
    Measure("gini_tokens_per_line", lambda v: v.fairness["gini_tokens_per_line"], LOWER, "Gini of tokens/line",
            fmt_float, "Gini coefficient of the corpora's tokens per line", family=FAIRNESS),
    Measure("lorenz_curve", lambda v: v.fairness["lorenz"], format=fmt_text,
            label="Lorenz curve of the token counts: (share of corpora, share of tokens)", family=FAIRNESS),
    Measure("reference_corpus", lambda v: v.fairness["reference"], None, "reference", fmt_text,
            "the corpus premiums are relative to", family=FAIRNESS),
    Measure("token_premium", lambda v: v.fairness["premium"], format=fmt_text,
            label="tokens of each corpus over the reference corpus's", family=FAIRNESS),
    Measure("max_token_premium", lambda v: v.fairness["max_premium"], LOWER, "largest premium", fmt_times,
            "the largest token premium", family=FAIRNESS),
    Measure("utilization_cv", lambda v: v.fairness["utilization_cv"], LOWER, "utilization CV", fmt_float,
            "coefficient of variation of vocabulary utilization across corpora", family=FAIRNESS),
)

RESULTS: Dict[str, Measure] = {m.key: m for m in RESULT_MEASURES}


def compute(measures: Iterable[Measure], counts: Any) -> Dict[str, Any]:
    """``{key: value}`` of every measure, in registry order."""
    return {m.key: m.compute(counts) for m in measures}


def columns(measures: Sequence[Measure], report: "ReportView", family: str = "") -> List[Measure]:
    """The measures a table of this report shows, in column order ("": the main tables)."""
    out = [m for m in measures if m.header is not None and m.family == family and m.shown(report)]
    for m in [m for m in out if m.column_after is not None]:
        if m.column_after in [c.key for c in out]:
            out.remove(m)
            out.insert([c.key for c in out].index(m.column_after) + 1, m)
    return out
