"""The tokenizer report: what each vocabulary costs each language, with tables and plots.

``report(tokenizers, texts_by_name)`` encodes every named corpus with every tokenizer and
keeps only counts: per corpus its documents, words, characters and bytes; per tokenizer and
corpus how often each token occurred. Every measure (:mod:`functionalbpe.measure.metrics`,
``docs/metrics.md``) is computed from those counts, so a corpus of any size is measured in
the memory of one unit (:mod:`functionalbpe.text.unit_reader`) plus one counter per vocabulary.

The :class:`Report` renders itself as a terminal table (:meth:`Report.to_text`), Markdown,
JSON with stable snake_case keys, and one self-contained HTML page with plots
(:mod:`functionalbpe.measure.html`, needs matplotlib for the plots). Corpora are listed with
the most expensive first, by the baseline tokenizer's ``sort_by`` measure.

Example::

    >>> import functionalbpe as fb
    >>> tok = fb.train(["ab ab ab"], vocab_size=258, pattern="gpt2", progress=False)
    >>> r = fb.report(tok, {"text": "ab ab ab cd"}, progress=False)
    >>> row = r.results()[0]
    >>> row["tokens"], row["words"], row["fertility"]
    (6, 4, 1.5)
"""
from __future__ import annotations

import json
import math
import os
import weakref
from collections import Counter
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple, Union

import numpy as np

from .adapters import as_report_tokenizer
from ..peers.face import ReportTokenizer
from .measures import (
    HIGHER,
    RESULT_MEASURES,
    RESULTS,
    VOCABULARY_MEASURES,
    TextTokens,
    VocabularyUse,
    compute,
)
from .tally import UnitText, Tally, TextCounts, VocabularyFacts
from ..text.unit_reader import UNIT_CHARS, source_bytes, text_units
from ..errors import CorpusError, FunctionalBPEError
from ..util.output import atomic_write_text
from ..util.progress import Progress, ProgressSpec
from ..schemes.base import Scheme
from ..schemes.registry import make_scheme
from ..tokenizer import Tokenizer
from ..training import train_from_counts

REPORT_FORMAT = "functionalbpe-report/1"

# The keys of the JSON output, in order. They are a contract: add keys, never rename one. The
# measures among them are those of the registry (functionalbpe/measure/measures.py).
RESULT_KEYS = ("corpus", "tokenizer") + tuple(m.key for m in RESULT_MEASURES)
TOKENIZER_KEYS = ("name",) + tuple(m.key for m in VOCABULARY_MEASURES)
SETTINGS_KEYS = ("baseline", "context", "width", "bytes_per_param", "sort_by", "coverage", "reference", "code", "python",
                 "example")
EXAMPLE_CHARS = 100  # the longest default example sentence

# Corpora read as source code (operators) and as Python (its tokens, identifiers, indents),
# by name, when the caller does not name them.
CODE_NAMES = frozenset({"code", "python", "py", "c", "cpp", "c++", "go", "js", "javascript", "ts", "typescript",
                        "java", "rust", "rs", "ruby", "php", "swift", "kotlin", "scala", "cs", "csharp"})
PYTHON_NAMES = frozenset({"python", "py"})

# What ``sort_by`` may name: every measure of a tokenizer on a corpus.
SORTABLE = tuple(RESULTS)


# -- gathering counts -------------------------------------------------------------------------


def report(
    tokenizers: Any,
    texts_by_name: Any,
    *,
    baseline: Optional[str] = None,
    context: int = 8192,
    width: int = 4096,
    bytes_per_param: float = 2,
    coverage: bool = False,
    sort_by: str = "fertility",
    progress: ProgressSpec = None,
    unit_chars: int = UNIT_CHARS,
    errors: str = "strict",
    reference: Optional[str] = None,
    code: Optional[Any] = None,
    python: Optional[Any] = None,
    example: Optional[str] = None,
    chunk_chars: Optional[int] = None,
) -> "Report":
    """Measure one or more tokenizers on one or more named corpora.

    ``tokenizers``: one tokenizer, or a dict ``name → tokenizer`` (ours, a tiktoken
    ``Encoding``, a ``tokenizers.Tokenizer``, a ``SentencePieceProcessor``, or a file; see
    :func:`functionalbpe.measure.adapters.as_report_tokenizer`). ``texts_by_name``: a dict ``name →
    source``, where a source is a text, an iterable of documents, a path or
    :func:`functionalbpe.files` (:mod:`functionalbpe.text.unit_reader`); one text alone is named
    ``"text"``.

    ``baseline`` names the tokenizer the others are compared with (default: the first);
    ``context`` is the ``N`` of the context capacity; ``width`` and ``bytes_per_param`` set
    the embedding cost; ``coverage=True`` also trains each of our tokenizers' schemes until
    no pair is left on each corpus (:func:`full_coverage_vocab_size`; slow on big text);
    ``sort_by`` is the measure that orders the corpora, most expensive first. Long
    documents are encoded ``unit_chars`` characters at a time (:mod:`functionalbpe.text.unit_reader`);
    ``errors`` ("strict" or "replace") says what to do with invalid UTF-8 in files given as
    paths (:func:`functionalbpe.files` carries its own).

    ``reference`` names the corpus the token premiums are relative to (default: ``en`` when
    there is one, else the first corpus); ``code`` and ``python`` name the corpora that hold
    source code and Python source (default: by name, :data:`CODE_NAMES`,
    :data:`PYTHON_NAMES`), for the code measures. ``example`` is a sentence shown split into
    each tokenizer's tokens (default: the first line of the first corpus, cut to
    :data:`EXAMPLE_CHARS` characters at a space). ``chunk_chars`` is the old name of
    ``unit_chars``.

    >>> import functionalbpe as fb
    >>> tok = fb.train(["hello world"] * 5, vocab_size=260, progress=False)
    >>> fb.report({"ours": tok}, {"en": "hello world hello"}, progress=False).totals()[0]["tokenizer"]
    'ours'
    """
    named = _named_tokenizers(tokenizers)
    corpora = _named_corpora(texts_by_name)
    baseline = baseline if baseline is not None else next(iter(named))
    if baseline not in named:
        raise FunctionalBPEError(f"baseline {baseline!r} is not one of the tokenizers ({', '.join(named)})")
    if sort_by not in SORTABLE:
        raise FunctionalBPEError(f"sort_by must be one of {', '.join(SORTABLE)}, got {sort_by!r}")
    for label, value in (("context", context), ("width", width), ("bytes_per_param", bytes_per_param)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
            raise FunctionalBPEError(f"{label} must be a positive finite number, got {value!r}")
    if not isinstance(context, int) or not isinstance(width, int):
        raise FunctionalBPEError("context and width must be whole numbers")
    if chunk_chars is not None:
        unit_chars = chunk_chars
    if not isinstance(unit_chars, int) or unit_chars < 1:
        raise FunctionalBPEError(f"unit_chars must be a positive integer, got {unit_chars!r}")

    code_names = _corpus_names(code, corpora, CODE_NAMES, "code")
    python_names = _corpus_names(python, corpora, PYTHON_NAMES, "python")
    if reference is None:
        reference = "en" if "en" in corpora else next(iter(corpora))
    elif reference not in corpora:
        raise FunctionalBPEError(f"reference {reference!r} is not one of the corpora ({', '.join(corpora)})")
    schemes = _coverage_schemes(named) if coverage else {}
    tally_by: Dict[Tuple[str, str], Tally] = {}
    text_counts: Dict[str, TextCounts] = {}
    token_counts: Dict[Tuple[str, str], Counter] = {}
    piece_counts: Dict[Tuple[str, str], Counter] = {}
    for corpus, source in corpora.items():
        bar = Progress(progress, f"measuring {corpus}", total=source_bytes(source), unit=" B")
        with bar:
            kinds = {"code": corpus in code_names or corpus in python_names, "python": corpus in python_names}
            counted, tallies, pieces, extra, first = _count_corpus(source, named, schemes, bar, unit_chars, errors, kinds)
        if not counted.chars:
            raise CorpusError(f"corpus {corpus!r} holds no text")
        text_counts[corpus] = counted
        for name in named:
            token_counts[name, corpus] = tallies[name]
            tally_by[name, corpus] = extra[name]
        if example is None:
            example = first
        for key in schemes:
            piece_counts[key, corpus] = pieces[key]

    full_coverage: Dict[Tuple[str, Optional[str]], int] = {}
    for key, (scheme, policy) in schemes.items():
        union: Counter = Counter()
        for corpus in corpora:
            counts = piece_counts.pop((key, corpus))
            full_coverage[key, corpus] = _coverage_from_counts(counts, scheme, policy, progress)
            union.update(counts)
        full_coverage[key, None] = _coverage_from_counts(union, scheme, policy, progress)
    coverage_by_name = {
        (name, corpus): value
        for name, tok in named.items()
        for (key, corpus), value in full_coverage.items()
        if _coverage_key(tok) == key
    }
    settings = {
        "baseline": baseline,
        "context": context,
        "width": width,
        "bytes_per_param": bytes_per_param,
        "sort_by": sort_by,
        "coverage": bool(coverage),
        "reference": reference,
        "code": sorted(code_names),
        "python": sorted(python_names),
        "example": example or "",
    }
    return Report(named, text_counts, token_counts, coverage_by_name, settings, tally_by)


def _count_corpus(
    source: Any,
    named: Mapping[str, ReportTokenizer],
    schemes: Mapping[str, Tuple[Scheme, str]],
    bar: Progress,
    unit_chars: int,
    errors: str,
    kinds: Mapping[str, bool],
) -> Tuple[TextCounts, Dict[str, Counter], Dict[str, Counter], Dict[str, Tally], Optional[str]]:
    """One pass over a corpus, a unit at a time: the text's counts, each tokenizer's token
    counts and tally (:mod:`functionalbpe.measure.tally`), (for the full coverage) each
    scheme's piece counts, and its first line (:func:`first_line`)."""
    counted = TextCounts()
    tallies: Dict[str, Counter] = {name: Counter() for name in named}
    extra = {name: new_tally(tok) for name, tok in named.items()}
    pieces: Dict[str, Counter] = {key: Counter() for key in schemes}
    first: Optional[str] = None
    for unit, starts in text_units(source, unit_chars, errors):
        if first is None:
            first = first_line(unit)
        text = UnitText(unit, starts, code=kinds["code"], python=kinds["python"])
        counted.add(text, starts)
        for name, tok in named.items():
            ids = tok.encode(unit)
            tallies[name].update(ids)
            extra[name].add(text, ids)
        for key, (scheme, _) in schemes.items():
            pieces[key].update(scheme.split(unit) if unit else ())
        bar.update(counted.bytes)
    counted.finish()
    for tally in extra.values():
        tally.finish()
    return counted, tallies, pieces, extra, first


def first_line(text: str) -> Optional[str]:
    """The first line of a text that holds a word, cut to :data:`EXAMPLE_CHARS` at a space.

    >>> first_line("\\n  \\n  The cat sat.\\nMore.")
    'The cat sat.'
    """
    for line in text.splitlines():
        line = line.strip()
        if line.split():
            if len(line) > EXAMPLE_CHARS:
                cut = line.rfind(" ", 0, EXAMPLE_CHARS)
                line = line[: cut if cut > 0 else EXAMPLE_CHARS]
            return line
    return None


def token_texts(tok: ReportTokenizer, text: str) -> List[str]:
    """``text`` cut into its tokens, each shown as text: the text's own bytes where the tokens
    are its bytes, else each token decoded alone (bytes that are not UTF-8 shown as U+FFFD)."""
    ids = tok.encode(text)
    lengths = tok.token_lengths()
    data = text.encode("utf-8", "surrogatepass")
    if lengths is not None and sum(lengths[i] for i in ids) == len(data):
        out, at = [], 0
        for i in ids:
            out.append(data[at: at + lengths[i]].decode("utf-8", "replace"))
            at += lengths[i]
        return out
    pieces = [tok.piece(i) for i in ids]
    if tok.can_decode():
        return [p if p is not None else tok.decode([i]) or "" for p, i in zip(pieces, ids)]
    return [p if p is not None else str(i) for p, i in zip(pieces, ids)]


# Each tokenizer's table of token lengths, built once (a tally is made per corpus).
_LENGTHS: "weakref.WeakKeyDictionary[ReportTokenizer, Any]" = weakref.WeakKeyDictionary()


def new_tally(tok: ReportTokenizer) -> Tally:
    """An empty tally for one tokenizer."""
    if tok not in _LENGTHS:
        lengths = tok.token_lengths()
        _LENGTHS[tok] = np.asarray(lengths, dtype=np.int64) if lengths is not None else None
    return Tally(
        _LENGTHS[tok],
        tok.vocab_size,
        tok.decode if tok.can_decode() else None,
        tok.marker_ids(),
    )


def _corpus_names(given: Any, corpora: Mapping[str, Any], default: frozenset, what: str) -> Set[str]:
    if given is None:
        return {c for c in corpora if c.lower() in default}
    names = {given} if isinstance(given, str) else set(given)
    unknown = sorted(n for n in names if n not in corpora)
    if unknown:
        raise FunctionalBPEError(f"{what}: {', '.join(map(repr, unknown))} is not one of the corpora ({', '.join(corpora)})")
    return names


def _named_tokenizers(tokenizers: Any) -> Dict[str, ReportTokenizer]:
    if isinstance(tokenizers, Mapping):
        if not tokenizers:
            raise FunctionalBPEError("no tokenizer to measure")
        return {str(name): as_report_tokenizer(tok) for name, tok in tokenizers.items()}
    if isinstance(tokenizers, (list, tuple)):
        raise FunctionalBPEError("give several tokenizers as a dict, name → tokenizer, so that the report can name them")
    tok = as_report_tokenizer(tokenizers)
    name = os.path.basename(os.fspath(tokenizers)) if isinstance(tokenizers, (str, os.PathLike)) else tok.kind
    return {name: tok}


def _named_corpora(texts_by_name: Any) -> Dict[str, Any]:
    if isinstance(texts_by_name, Mapping):
        if not texts_by_name:
            raise CorpusError("no corpus to measure on")
        return {str(name): source for name, source in texts_by_name.items()}
    return {"text": texts_by_name}


# -- full coverage ---------------------------------------------------------------------------


def full_coverage_vocab_size(
    corpus: Any,
    scheme: Union[str, Scheme, Tokenizer] = "plain",
    pattern: Optional[str] = None,
    merge_policy: Optional[str] = None,
    progress: ProgressSpec = None,
    **scheme_options: Any,
) -> int:
    """The vocabulary at which every piece of ``corpus`` is one token.

    ``V_full = 256 + A + M_∞``: the bytes, the scheme's ``A`` atoms, and the ``M_∞`` merges
    that training makes on ``corpus`` until no pair is left (special tokens not counted).
    It is measured on the corpus given, not on any tokenizer's training text: give a
    :class:`Tokenizer` as ``scheme`` to use its scheme, pattern and merge policy.

    >>> full_coverage_vocab_size("ab ab", pattern="gpt2", progress=False)  # 'ab', then ' ab'
    258
    """
    if isinstance(scheme, Tokenizer):
        if pattern is not None or scheme_options:
            raise FunctionalBPEError("a tokenizer brings its own pattern and scheme options")
        merge_policy = merge_policy or scheme.merge_policy
        the_scheme = scheme.scheme
    elif isinstance(scheme, Scheme):
        the_scheme = scheme
    else:
        the_scheme = make_scheme(scheme, pattern, **scheme_options)
    counts: Counter = Counter()
    for unit, _ in text_units(corpus):
        if unit:
            counts.update(the_scheme.split(unit))
    return _coverage_from_counts(counts, the_scheme, merge_policy or "prefix", progress)


def _coverage_from_counts(counts: Mapping[str, int], scheme: Scheme, merge_policy: str, progress: ProgressSpec) -> int:
    return train_from_counts(dict(counts), scheme, None, merge_policy=merge_policy, progress=progress).vocab_size


def _coverage_key(tok: ReportTokenizer) -> Optional[str]:
    """Tokenizers with the same scheme, options, pattern and policy share one coverage."""
    ours = tok.tokenizer
    if ours is None:
        return None
    scheme = ours.scheme
    return json.dumps([scheme.name, scheme.options(), scheme.pattern, ours.merge_policy], sort_keys=True)


def _coverage_schemes(named: Mapping[str, ReportTokenizer]) -> Dict[str, Tuple[Scheme, str]]:
    out: Dict[str, Tuple[Scheme, str]] = {}
    for tok in named.values():
        key = _coverage_key(tok)
        if key is not None and key not in out and tok.tokenizer is not None:
            out[key] = (tok.tokenizer.scheme, tok.tokenizer.merge_policy)
    return out


# -- the report ----------------------------------------------------------------------------------


class Report:
    """The counts of one report run, and every way of showing them.

    >>> import functionalbpe as fb
    >>> tok = fb.train(["hello world"] * 5, vocab_size=260, progress=False)
    >>> r = fb.report(tok, "hello world hello", progress=False)
    >>> type(r).__name__, r.totals()[0]["words"]
    ('Report', 3)

    :meth:`results` (one row per corpus and tokenizer), :meth:`totals` (one row per
    tokenizer over all corpora) and :meth:`tokenizer_rows` (the vocabulary measures) are
    the figures; :meth:`to_dict` / :meth:`to_json` / :meth:`to_markdown` /
    :meth:`to_text` / :meth:`to_html` show them; ``write_*`` write them atomically.
    """

    def __init__(
        self,
        tokenizers: Dict[str, ReportTokenizer],
        text_counts: Dict[str, TextCounts],
        token_counts: Dict[Tuple[str, str], Counter],
        full_coverage: Dict[Tuple[str, Optional[str]], int],
        settings: Dict[str, Any],
        tallies: Optional[Dict[Tuple[str, str], Tally]] = None,
    ) -> None:
        self.tallies = tallies if tallies is not None else {}
        self.tokenizers = tokenizers
        self.text_counts = text_counts
        self.token_counts = token_counts
        self.full_coverage = full_coverage
        self.settings = settings
        self._vocab: Dict[str, VocabularyFacts] = {}
        self._cache: Dict[str, List[Dict[str, Any]]] = {}

    def _cached(self, key: str, make: Any) -> List[Dict[str, Any]]:
        """The figures never change once counted; every renderer asks for them again."""
        if key not in self._cache:
            self._cache[key] = make()
        return [dict(row) for row in self._cache[key]]

    # -- figures ----------------------------------------------------------------------

    @property
    def baseline(self) -> str:
        return self.settings["baseline"]

    def vocabulary(self, name: str) -> VocabularyFacts:
        if name not in self._vocab:
            tok = self.tokenizers[name]
            self._vocab[name] = VocabularyFacts(
                entries=tok.entries(),
                byte_tokens=tok.byte_tokens(),
                unknown=tok.unknown_ids(),
                surfaces=tok.surfaces(),
                special=tok.special_ids(),
            )
        return self._vocab[name]

    def corpus_order(self) -> List[str]:
        """Corpus names, the most expensive for the baseline (by ``sort_by``) first."""
        key = self.settings["sort_by"]
        sign = 1 if RESULTS[key].direction == HIGHER else -1  # the most expensive first
        values = {row["corpus"]: row[key] for row in self._cached("rows", self._rows) if row["tokenizer"] == self.baseline}
        names = list(self.text_counts)
        return sorted(names, key=lambda c: (values[c] is None, sign * (values[c] or 0), names.index(c)))

    def results(self) -> List[Dict[str, Any]]:
        """One row per corpus and tokenizer, corpora in :meth:`corpus_order`."""
        rows = self._cached("rows", self._rows)
        order = {c: i for i, c in enumerate(self.corpus_order())}
        names = list(self.tokenizers)
        return sorted(rows, key=lambda r: (order[r["corpus"]], names.index(r["tokenizer"])))

    def _rows(self) -> List[Dict[str, Any]]:
        rows = []
        for corpus, text in self.text_counts.items():
            base = sum(self.token_counts[self.baseline, corpus].values())
            for name in self.tokenizers:
                counts = self.token_counts[name, corpus]
                tally = self._tally(name, corpus)
                rows.append(self._measures(corpus, name, text, counts, base, self.full_coverage.get((name, corpus)), tally))
        return rows

    def totals(self) -> List[Dict[str, Any]]:
        """One row per tokenizer over all corpora together (``corpus`` is null)."""
        return self._cached("totals", self._totals)

    def _totals(self) -> List[Dict[str, Any]]:
        text = TextCounts()
        for counted in self.text_counts.values():
            text += counted
        summed = {}
        for name in self.tokenizers:
            counts: Counter = Counter()
            for corpus in self.text_counts:
                counts.update(self.token_counts[name, corpus])
            summed[name] = counts
        base = sum(summed[self.baseline].values())
        rows = []
        for name, tok in self.tokenizers.items():
            tally = new_tally(tok)
            for corpus in self.text_counts:
                tally.merge(self._tally(name, corpus))
            rows.append(self._measures(None, name, text, summed[name], base, self.full_coverage.get((name, None)), tally))
        return rows

    def _tally(self, name: str, corpus: str) -> Tally:
        if (name, corpus) not in self.tallies:  # a report made from counts alone
            self.tallies[name, corpus] = new_tally(self.tokenizers[name])
        return self.tallies[name, corpus]

    def _measures(
        self,
        corpus: Optional[str],
        name: str,
        text: TextCounts,
        counts: Counter,
        baseline_tokens: int,
        full_coverage: Optional[int],
        tally: Tally,
    ) -> Dict[str, Any]:
        tokens = TextTokens(text, counts, self.vocabulary(name), baseline_tokens, full_coverage, self.settings,
                            tally, self.tokenizers[name].vocab_size)
        return {"corpus": corpus, "tokenizer": name, **compute(RESULT_MEASURES, tokens)}

    def tokenizer_rows(self) -> List[Dict[str, Any]]:
        """The vocabulary measures of each tokenizer; "unused" is over all corpora."""
        return self._cached("tokenizers", self._tokenizer_rows)

    def _tokenizer_rows(self) -> List[Dict[str, Any]]:
        rows = []
        for name, tok in self.tokenizers.items():
            seen: Counter = Counter()
            for corpus in self.text_counts:
                seen.update(self.token_counts[name, corpus])
            per_corpus = {}
            for corpus in self.corpus_order():
                counts = self.token_counts[name, corpus]
                text = self.text_counts[corpus]
                per_corpus[corpus] = (sum(counts.values()), text.bytes, text.lines, sum(1 for c in counts.values() if c))
            use = VocabularyUse(tok, self.vocabulary(name), seen, self.settings, per_corpus)
            rows.append({"name": name, **compute(VOCABULARY_MEASURES, use)})
        return rows

    def corpus_rows(self) -> List[Dict[str, Any]]:
        return [
            {"name": c, "documents": t.documents, "words": t.words, "chars": t.chars, "bytes": t.bytes}
            for c in self.corpus_order()
            for t in [self.text_counts[c]]
        ]

    # -- outputs ------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """Everything, JSON-ready, with the stable keys of ``RESULT_KEYS`` and friends."""
        return {
            "format": REPORT_FORMAT,
            "settings": {k: self.settings[k] for k in SETTINGS_KEYS},
            "corpora": self.corpus_rows(),
            "tokenizers": self.tokenizer_rows(),
            "results": self.results(),
            "totals": self.totals(),
            "example": self.example(),
        }

    def example(self) -> Dict[str, Any]:
        """``{"text": the example sentence, "tokens": {tokenizer: [each token as text]}}``."""
        text = self.settings.get("example") or ""
        return {"text": text, "tokens": {name: token_texts(tok, text) if text else [] for name, tok in self.tokenizers.items()}}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n"

    def to_text(self) -> str:
        """The tables for a terminal."""
        from .tables import render_text

        return render_text(self)

    def to_markdown(self, title: str = "Tokenizer report") -> str:
        from .tables import render_markdown

        return render_markdown(self, title)

    def to_html(self, title: str = "Tokenizer report") -> str:
        """One self-contained HTML page: tables, and plots when matplotlib is installed."""
        from .html import render_html

        return render_html(self, title)

    def write_json(self, path: "os.PathLike[str] | str") -> None:
        atomic_write_text(path, self.to_json())

    def write_markdown(self, path: "os.PathLike[str] | str", title: str = "Tokenizer report") -> None:
        atomic_write_text(path, self.to_markdown(title))

    def write_html(self, path: "os.PathLike[str] | str", title: str = "Tokenizer report") -> None:
        atomic_write_text(path, self.to_html(title))

    def __repr__(self) -> str:
        return f"<functionalbpe.Report: {len(self.tokenizers)} tokenizers × {len(self.text_counts)} corpora>"

