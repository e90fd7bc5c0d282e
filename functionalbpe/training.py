"""``train(...)``: from documents to a Tokenizer, in one straight line.

1. **resolve** the scheme — a name with its pattern and options, or a scheme object
   (:func:`functionalbpe.schemes.registry.resolve`);
2. **count** the scheme's raw pieces of the corpus, special tokens cut out
   (:func:`functionalbpe.text.counting.count_table`: a table of distinct pieces and their counts);
3. **transform** that table into the table of text-form pieces (``Scheme.transform``; the
   plain scheme's is the identity);
4. **merge**: learn the merges from it (:func:`functionalbpe.core.trainer.learn_merges`, in C or in
   Python: the same merges);
5. **build** the :class:`Tokenizer` from the scheme, the merges and the special tokens.

Each stage hands the next a value and never calls back into an earlier one
(tests/contract/test_training_path.py traces it).

Example::

    >>> tok = train(["low lower lowest"] * 3, vocab_size=260, pattern="gpt2", progress=False)
    >>> [tok.token_bytes(256 + k) for k in range(4)]
    [b'lo', b'low', b' low', b' lowe']
"""
from __future__ import annotations

import glob
import os
import sys
import warnings
from dataclasses import dataclass, replace
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from .util.checks import integer, special_tokens_checked
from .core import trainer
from .core._native import NATIVE, thread_count
from .core.alphabet import Alphabet, num_merges_for, policy_code
from .core.language_mix import combine, describe, multipliers, parity_options_for, scale, table_bytes
from .core.piecetable import PieceTable
from .core.bpe import OnMerge
from .core.wordrules import NO_RULES, SUPERWORD_RULES, TokenRules
from .counts import PieceCounts
from .errors import FunctionalBPEError, OutOfMemoryError, SmallerVocabularyWarning
from .util.progress import ProgressSpec
from .schemes.base import Scheme
from .schemes.registry import make_scheme, resolve
from .schemes.plain import PlainScheme
from .teach.merge_trace import MergeTracer, TraceSpec
from .text.counting import count_table
from .text.corpus import Files
from .text.patterns import SUPERWORDS, as_pattern, compile_pattern
from .tokenizer import Tokenizer

# What ``backend=`` accepts: "python" and "reference" name the same pure-Python trainer.
BACKENDS = trainer.BACKENDS


def train(
    corpus: Union[str, Iterable[str], Mapping[str, Any]],
    vocab_size: Optional[int] = 32768,
    scheme: Union[str, Scheme] = "plain",
    pattern: Optional[str] = None,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 1,
    merge_policy: str = "prefix",
    backend: str = "auto",
    progress: ProgressSpec = None,
    threads: Optional[int] = None,
    trace: TraceSpec = None,
    *,
    weights: Optional[Mapping[str, float]] = None,
    temperature: Optional[float] = None,
    objective: str = "frequency",
    dev: Optional[Mapping[str, Any]] = None,
    target_ratios: Optional[Mapping[str, float]] = None,
    parity_variant: str = "base",
    window_size: int = 100,
    alpha: float = 2,
    global_merges: int = 0,
    base: Union[Tokenizer, str, "os.PathLike[str]", None] = None,
    superwords: Optional[int] = None,
    token_rules: Union[TokenRules, Mapping[str, Any], None] = None,
    **scheme_options: Any,
) -> Tokenizer:
    """Train a byte-level BPE tokenizer.

    ``corpus`` is one text, an iterable of documents, :func:`functionalbpe.files`, or piece
    counts made already (a :class:`~functionalbpe.counts.PieceCounts` from ``fb.count`` or a
    file, or a list of them, merged first): then the scheme, pattern and special tokens are
    those the counts were made with, and the tokenizer is the one the text would give.
    ``vocab_size`` counts everything: 256 bytes + the scheme's atoms + merges + special
    tokens; ``None`` trains until no pair is left. ``scheme`` is a name (``"plain"``,
    ``"functional"``, ``"markers"``) with ``pattern`` and options, or a scheme object
    (``fb.Functionalizer(...)``, ``fb.BoundaryMarkers(...)``) that carries its own.
    ``pattern`` defaults to the scheme's own (``gpt4`` for the plain scheme). Training stops
    early when no pair is left or the best pair occurs fewer than ``min_frequency`` times, so
    the vocabulary may come out smaller. ``backend``: ``"auto"``, ``"fast"`` (the compiled
    trainer) or ``"python"`` (``"reference"``), all giving the same merges. ``trace``: a
    callable that receives a :class:`~functionalbpe.teach.merge_trace.MergeRecord` per merge,
    or a path where the records are written as a TSV table
    (:mod:`functionalbpe.teach.merge_trace`).

    ``special_tokens`` get the last ids, in order, and are never merged. ``merge_policy``
    (``"atomic"``, ``"prefix"``, ``"free"``): which merges a scheme's operators may take part
    in (docs/training.md); the plain scheme has none. ``progress``: shown on stderr when it
    is a terminal (None), always (True) or never (False), or given to a callable
    (:mod:`functionalbpe.util.progress`). ``threads``: counting threads, None for all cores.
    ``**scheme_options`` go to the scheme named by ``scheme`` (e.g. ``case=False``).

    Text is read as ``encode`` reads it: a ``str`` subclass as its ``str``, a lone surrogate
    as U+FFFD. Running out of memory raises :class:`~functionalbpe.errors.OutOfMemoryError`,
    which says what to reduce.

    **Several languages.** A dict ``{language: corpus}`` keeps its languages apart: each is
    counted on its own, and ``weights={language: w}`` or ``temperature=α`` (``p_l ∝ n_l^α``,
    as XLM-R and mT5 sample) scale each language's counts exactly before they are added
    (:mod:`functionalbpe.core.language_mix` gives the rule and its rounding). Without either,
    the languages are simply added: the same merges as training on their concatenation.

    ``objective="parity"`` trains parity-aware BPE (:mod:`functionalbpe.core.parity`): each
    merge is the most frequent pair of the language worst off now, measured on ``dev``
    (``{language: texts}``, the same text in every language) or against ``target_ratios``
    (``{language: compression ratio}``); ``parity_variant="window"`` with ``window_size``
    and ``alpha`` balances over a moving window; ``global_merges=M`` makes the first ``M``
    merges by global frequency. Merge counts stay the global counts. The tokenizer records
    the objective, the mix and their parameters in ``tok.training``.

    ``base=`` (a tokenizer or its file) continues its merges on ``corpus``;
    ``superwords=t`` trains SuperBPE: ordinary BPE up to ``t`` ids, then on with
    :data:`~functionalbpe.text.patterns.SUPERWORDS` (docs/superwords.md). ``token_rules``
    (a :class:`~functionalbpe.core.wordrules.TokenRules` or a dict of its fields) refuse new
    tokens of more than ``max_words`` words or holding ``": "``: by default SuperBPE's
    published ones (4 words, no ``": "``) with ``superwords=``, none with ``base=``.

    >>> import functionalbpe as fb
    >>> tok = fb.train(["low lower lowest"] * 3, vocab_size=260, special_tokens=["<|eot|>"], progress=False)
    >>> tok.merges[:2], tok.special_tokens
    ([(108, 111), (256, 119)], {'<|eot|>': 259})
    """
    # Everything is checked before the corpus is read: a bad size or backend fails at once.
    spec = TrainSpec(vocab_size, tuple(special_tokens), _check_options(backend, merge_policy, min_frequency),
                     merge_policy, backend, progress, thread_count(threads))
    _warn_if_a_path(corpus)
    if superwords is not None or base is not None:
        languages = isinstance(corpus, Mapping) and not isinstance(corpus, PieceCounts)  # counts are a Mapping too
        if scheme != "plain" or scheme_options or trace is not None or languages or (
                weights, temperature, objective) != (None, None, "frequency"):
            raise FunctionalBPEError(
                "base= and superwords= continue the base tokenizer's scheme on one corpus: give no scheme, "
                "scheme option, trace, languages or parity objective with them"
            )
        return _grow(corpus, spec, base, superwords, pattern, _token_rules(token_rules, superwords is not None))
    if token_rules is not None:
        raise FunctionalBPEError("token_rules= are rules for the merges after a base: give base= or superwords=")
    if objective not in ("frequency", "parity"):
        raise FunctionalBPEError(f"objective must be 'frequency' or 'parity', got {objective!r}")
    counted = _counted(corpus)
    if counted is not None:  # counted already: the scheme and specials are the counts'
        the_scheme, specials = counted.training_input(scheme, pattern, special_tokens, scheme_options)
    else:
        the_scheme, specials = resolve(scheme, pattern, **scheme_options), special_tokens_checked(special_tokens)
    num_merges = num_merges_for(vocab_size, len(the_scheme.atoms), len(specials))  # before any counting
    if counted is not None or not isinstance(corpus, Mapping):
        if weights is not None or temperature is not None or objective != "frequency":
            raise FunctionalBPEError(
                "weights, temperature and objective='parity' are about languages: give the corpus as "
                "a dict {language: corpus}"
            )
        raw = counted.table if counted is not None else _count(corpus, the_scheme, specials, spec)
        return _train_one(raw, the_scheme, specials, num_merges, spec, trace)
    mix = LanguageMix(_languages(corpus), weights, temperature, objective, dev, target_ratios,
                      (parity_variant, window_size, alpha, global_merges))
    return _train_languages(mix, the_scheme, specials, num_merges, spec, trace)


@dataclass(frozen=True)
class TrainSpec:
    """What every way of training shares, checked before any corpus is read."""

    vocab_size: Optional[int]
    special_tokens: Tuple[str, ...]
    min_frequency: int
    merge_policy: str
    backend: str
    progress: ProgressSpec
    threads: Optional[int]


@dataclass(frozen=True)
class LanguageMix:
    """A dict corpus and how its languages are weighed (:mod:`functionalbpe.core.language_mix`)
    and, for parity-aware BPE, measured (:mod:`functionalbpe.core.parity`)."""

    languages: Dict[str, Any]
    weights: Optional[Mapping[str, float]]
    temperature: Optional[float]
    objective: str
    dev: Optional[Mapping[str, Any]]
    target_ratios: Optional[Mapping[str, float]]
    parity: Tuple[str, int, float, int]  # variant, window size, alpha, global merges


def _train_one(raw: PieceTable, the_scheme: Scheme, specials: Tuple[str, ...], num_merges: Optional[int],
               spec: TrainSpec, trace: TraceSpec) -> Tokenizer:
    """Frequency BPE on one counted table (stages 3 to 5 of the module docstring)."""
    alphabet = Alphabet(the_scheme.atoms)
    tracer = None if trace is None else MergeTracer(trace, alphabet, the_scheme)
    merges = _learn(the_scheme.transform(raw), alphabet, num_merges, spec, tracer)
    if tracer is not None:
        tracer.close()
    return _said_if_smaller(_tokenizer(the_scheme, merges, specials, spec.merge_policy), spec)


def _train_languages(mix: LanguageMix, the_scheme: Scheme, specials: Tuple[str, ...], num_merges: Optional[int],
                     spec: TrainSpec, trace: TraceSpec) -> Tokenizer:
    """Several languages: each counted and transformed on its own, then weighed; merged by
    frequency, or by parity."""
    languages = mix.languages
    alphabet = Alphabet(the_scheme.atoms)
    if mix.weights is not None and mix.temperature is not None:
        raise FunctionalBPEError("give weights or temperature, not both")
    parity_options: Dict[str, Any] = {}
    if mix.objective == "parity":
        if trace is not None:
            raise FunctionalBPEError("trace= follows the frequency objective's merge loop; parity-aware "
                                     "training has no runner-up to show")
        parity_options = parity_options_for(list(languages), mix.dev, mix.target_ratios, *mix.parity)
    elif mix.dev is not None or mix.target_ratios is not None:
        raise FunctionalBPEError("dev and target_ratios measure parity: they need objective='parity'")
    tracer = None if trace is None else MergeTracer(trace, alphabet, the_scheme)
    raws = {lang: _count(text, the_scheme, specials, spec) for lang, text in languages.items()}
    factors = multipliers({lang: table_bytes(raw) for lang, raw in raws.items()}, mix.weights, mix.temperature)
    tables = [scale(the_scheme.transform(raw), factors[lang]) for lang, raw in raws.items()]
    if mix.objective == "frequency":
        merges = _learn(combine(tables), alphabet, num_merges, spec, tracer)
        if tracer is not None:
            tracer.close()
    else:
        merges = _learn_parity(tables, mix, the_scheme, specials, alphabet, num_merges, spec, parity_options)
    tok = _tokenizer(the_scheme, merges, specials, spec.merge_policy)
    if mix.weights is not None or mix.temperature is not None or mix.objective != "frequency":
        tok.training = describe(list(languages), mix.objective, factors, mix.weights, mix.temperature,
                                parity_options, mix.dev is not None)
    return _said_if_smaller(tok, spec)


def _learn_parity(tables: List[PieceTable], mix: LanguageMix, the_scheme: Scheme, specials: Tuple[str, ...],
                  alphabet: Alphabet, num_merges: Optional[int], spec: TrainSpec,
                  parity_options: Dict[str, Any]) -> Sequence[Tuple[int, int, int]]:
    dev_tables = None
    if mix.dev is not None:
        quiet = replace(spec, progress=False)
        dev_tables = [the_scheme.transform(_count(mix.dev[lang], the_scheme, specials, quiet)) for lang in mix.languages]
        empty = [lang for lang, table in zip(mix.languages, dev_tables) if not table.total]
        if empty:
            # Nothing to measure: every merge would leave that language's cost at 0.
            raise FunctionalBPEError(
                f"dev: the dev text of {', '.join(map(repr, empty))} is empty; parity is measured on "
                "the same text in every language, so give each one a dev text")
    try:
        return trainer.learn_parity_merges(
            tables, alphabet, num_merges, dev=dev_tables, merge_policy=spec.merge_policy,
            min_frequency=spec.min_frequency, progress=spec.progress, backend=spec.backend, **parity_options,
        )
    except MemoryError:
        raise OutOfMemoryError("out of memory while learning merges: train on less text") from None


def _grow(corpus: Any, spec: TrainSpec, base: Any, superwords: Optional[int], pattern: Optional[str],
          rules: TokenRules) -> Tokenizer:
    """``base=`` (continued training) and ``superwords=`` (SuperBPE: stage one trained here
    first, then continued with the stage-two pattern)."""
    if superwords is not None:
        base = _superword_stage1(corpus, spec, superwords, base)
        pattern = SUPERWORDS if pattern is None else pattern
    return _continue(corpus, spec, _as_tokenizer(base, pattern), pattern, rules)


def _as_tokenizer(base: Any, pattern: Optional[str]) -> Tokenizer:
    """The base tokenizer; ``pattern`` is a rank file's own (which holds none)."""
    if isinstance(base, Tokenizer):
        return base
    if isinstance(base, (str, os.PathLike)):
        from .formats.sniff import kind_of

        return Tokenizer.from_file(base, pattern if kind_of(os.fspath(base)) == "tiktoken" else None)
    raise FunctionalBPEError(f"base is a Tokenizer or the path of a tokenizer file, not a {type(base).__name__}")


def _token_rules(given: Any, superwords: bool) -> TokenRules:
    """The token rules asked for, or the default: SuperBPE's with superwords=, none with base=."""
    if given is None:
        return SUPERWORD_RULES if superwords else NO_RULES
    if isinstance(given, TokenRules):
        return given
    if isinstance(given, Mapping):
        unknown = set(given) - {"max_words", "colon_space"}
        if unknown:
            raise FunctionalBPEError(f"token_rules: unknown field {sorted(unknown)[0]!r} (max_words, colon_space)")
        return TokenRules(**given)
    raise FunctionalBPEError(f"token_rules is a TokenRules or a dict of its fields, not a {type(given).__name__}")


def _superword_stage1(corpus: Any, spec: TrainSpec, superwords: int, base: Any) -> Tokenizer:
    """SuperBPE's first stage: ordinary BPE up to ``superwords`` ids (or the base given)."""
    t = integer(superwords, "superwords", 257, spec.vocab_size)
    if base is not None:
        raise FunctionalBPEError("give superwords=T (train both stages here) or base= (its merges are stage 1), not both")
    if isinstance(corpus, PieceCounts):
        raise FunctionalBPEError("superwords= counts the text twice, with two patterns: give the text, not counts")
    corpus = list(corpus) if not isinstance(corpus, (str, Files)) else corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallerVocabularyWarning)  # said of the whole training
        return train(corpus, t, special_tokens=spec.special_tokens, min_frequency=spec.min_frequency,
                     merge_policy=spec.merge_policy, backend=spec.backend, progress=spec.progress,
                     threads=spec.threads)


def _continue(corpus: Any, spec: TrainSpec, base: Tokenizer, pattern: Optional[str], rules: TokenRules) -> Tokenizer:
    """Continued training: ``base``'s ids all kept, its merges replayed first, the new merges
    learned on ``corpus`` (cut by ``pattern`` when given, else by the base's) after them,
    none that ``rules`` refuse."""
    if spec.merge_policy != "prefix" and spec.merge_policy != base.merge_policy:
        raise FunctionalBPEError(f"the merge policy is the base's ({base.merge_policy!r}), not {spec.merge_policy!r}")
    old = base.scheme
    the_scheme = old if pattern is None else make_scheme(old.name, pattern, **old.options())
    new_specials = [s for s in special_tokens_checked(spec.special_tokens) if s not in base.special_tokens]
    specials = tuple(base.special_tokens) + tuple(new_specials)
    if spec.vocab_size is None:
        num_merges: Optional[int] = None
    else:
        size = integer(spec.vocab_size, "vocab_size", 1)
        num_merges = size - base.vocab_size - len(new_specials)
        if num_merges < 0:
            raise FunctionalBPEError(
                f"vocab_size {size} is smaller than the base's {base.vocab_size} ids"
                + (f" and {len(new_specials)} new special tokens" if new_specials else "")
            )
    counted = _counted(corpus)
    if counted is not None:
        the_scheme, _ = counted.training_input(the_scheme, None, specials, {})
        raw = counted.table
    else:
        raw = _count(corpus, the_scheme, specials, spec)
    alphabet = Alphabet(the_scheme.atoms)
    new = trainer.resume(the_scheme.transform(raw), alphabet, base.alphabet.merges, num_merges,
                         merge_policy=base.merge_policy, min_frequency=spec.min_frequency, progress=spec.progress,
                         backend=spec.backend, rules=rules, threads=spec.threads)
    ids = base.id_map
    first_new = base.vocab_size  # the new ids come after every id of the base
    merge_counts = None if base.merge_counts is None else list(base.merge_counts) + [c for _, _, c in new]
    tok = Tokenizer(
        the_scheme, list(base.alphabet.merges) + [(a, b) for a, b, _ in new], list(specials),
        merge_policy=base.merge_policy, merge_counts=merge_counts,
        byte_ids=ids.byte_ids, merge_ids=list(ids.merge_ids) + list(range(first_new, first_new + len(new))),
        special_ids=list(base.special_tokens.values()) + list(range(first_new + len(new), first_new + len(new) + len(new_specials))),
        # The base's joins keep its tokens as it makes them (the new merges were learned on
        # the replay of its merges, which its joins change in a few pieces).
        joins=base.encoder.joins,
        whole_pieces=base.whole_pieces,
    )
    tok.training = {
        "objective": "frequency",
        "continued_from": {"vocab_size": base.vocab_size, "merges": len(base.alphabet.merges),
                           "pattern": base.pattern, "merge_counts_kept": base.merge_counts is not None},
    }
    if rules.refuses_any:
        tok.training["token_rules"] = rules.describe()
    return _said_if_smaller(tok, spec)


def _warn_if_a_path(corpus: Any) -> None:
    """A short one-line str naming a file, a directory or files by a glob pattern is almost
    surely meant as those files, not as text: say what training will read instead."""
    if not isinstance(corpus, str) or len(corpus) >= 4096 or "\n" in corpus:
        return
    if os.path.isfile(corpus):
        what = "the path of a file"
    elif os.path.isdir(corpus):
        what = "the path of a directory"
    elif set("*?[") & set(corpus) and glob.glob(corpus, recursive=True):
        what = "a glob pattern that matches files"
    else:
        return
    warnings.warn(
        f"the corpus is the string {corpus!r}, which is {what}: training reads its {len(corpus)} "
        f"characters, not the files; to train on them, pass functionalbpe.files({corpus!r})",
        stacklevel=3,
    )


def _said_if_smaller(tok: Tokenizer, spec: TrainSpec) -> Tokenizer:
    """A :class:`SmallerVocabularyWarning` when training stopped before ``vocab_size``."""
    vocab_size, min_frequency = spec.vocab_size, spec.min_frequency
    if vocab_size is not None and tok.vocab_size < vocab_size:
        why = "no pair of tokens was left to merge" if min_frequency <= 1 else (
            f"no pair was left that occurs at least min_frequency={min_frequency} times")
        if not tok.merges:
            why = "the corpus holds no two symbols side by side (is it empty?)"
        warnings.warn(SmallerVocabularyWarning(
            f"the tokenizer has {tok.vocab_size} ids, not the {vocab_size} asked: {why} (train on more text)"
        ), stacklevel=_outside_this_module())
    return tok


def _outside_this_module() -> int:
    """The ``stacklevel`` of the first caller outside this module, counted from the function
    that calls this one: a warning names the user's line however deep training went."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    return level


def _languages(corpus: Mapping[str, Any]) -> Dict[str, Any]:
    """The languages of a dict corpus, checked: at least one, each named by a non-empty str."""
    if not corpus:
        raise FunctionalBPEError("a dict corpus needs at least one language")
    for lang in corpus:
        if not isinstance(lang, str) or not lang:
            raise FunctionalBPEError(f"a language is named by a non-empty str, got {lang!r}")
    return dict(corpus)


def _count(corpus: Any, scheme: Scheme, specials: Tuple[str, ...], spec: TrainSpec) -> PieceTable:
    try:
        return count_table(corpus, scheme, specials, thread_count(spec.threads), spec.progress)
    except MemoryError:
        raise OutOfMemoryError(
            "out of memory while counting the corpus: the count holds every distinct piece, in one "
            "table per thread; train on less text (max_chars=..., CLI --max-chars) or on fewer "
            "threads (threads=..., CLI --threads)"
        ) from None


def train_from_counts(
    counts: Union[Dict[str, int], PieceTable],
    scheme: Scheme,
    vocab_size: Optional[int] = None,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 1,
    merge_policy: str = "prefix",
    backend: str = "auto",
    progress: ProgressSpec = None,
) -> Tokenizer:
    """Stages 4 and 5 on text-form pieces already counted (``scheme.split`` of each text,
    counted; or ``scheme.transform`` of a count): what :func:`train` does after its transform.
    The report uses it to train on text it has already streamed.

    >>> from functionalbpe.schemes.plain import PlainScheme
    >>> train_from_counts({"ab": 2, " ab": 1}, PlainScheme("gpt2")).vocab_size
    258
    """
    spec = TrainSpec(vocab_size, tuple(special_tokens), _check_options(backend, merge_policy, min_frequency),
                     merge_policy, backend, progress, None)
    specials = special_tokens_checked(special_tokens)
    alphabet = Alphabet(scheme.atoms)
    num_merges = num_merges_for(vocab_size, len(alphabet.atoms), len(specials))
    symbols = counts if isinstance(counts, PieceTable) else PieceTable.from_dict(counts)
    return _tokenizer(scheme, _learn(symbols, alphabet, num_merges, spec), specials, merge_policy)


def count_pieces(
    corpus: Union[str, Iterable[str]],
    pattern: str = "gpt4",
    threads: Optional[int] = None,
    special_tokens: Sequence[str] = (),
    *,
    progress: ProgressSpec = False,
    report: Any = None,
) -> Dict[str, int]:
    """Count the pieces of a corpus under a pattern: one text, an iterable of documents, or
    :func:`functionalbpe.files` (read in blocks: memory grows with the distinct pieces, not
    with the corpus). ``{piece: count}`` in order of first occurrence.

    Special tokens are cut out first: they are never part of a piece. ``threads``: worker
    threads of the compiled counter (None: all cores). ``report``, if given, is called at
    the end with a :class:`~functionalbpe.text.counting.CountReport`. The same count as
    :func:`functionalbpe.count` (which returns :class:`~functionalbpe.counts.PieceCounts`, for
    any scheme), as a plain ``dict``; kept for the code that uses it.

    >>> count_pieces(["a a a", "a"], pattern="gpt2")
    {'a': 2, ' a': 2}
    """
    # The pattern is compiled (a bad one is an error even for an empty corpus) but not tried
    # on the probe text that a scheme's pattern must pass: text that it covers counts.
    scheme = PlainScheme(as_pattern(pattern))
    compile_pattern(scheme.pattern)
    return count_table(corpus, scheme, special_tokens, threads, progress, report).to_dict()


def _counted(corpus: object) -> Optional[PieceCounts]:
    """The piece counts ``corpus`` is, merged if a list of them; None for text."""
    if isinstance(corpus, PieceCounts):
        return corpus
    if isinstance(corpus, (list, tuple)) and corpus and all(isinstance(c, PieceCounts) for c in corpus):
        return PieceCounts.merge(corpus)
    return None


def _learn(symbols: PieceTable, alphabet: Alphabet, num_merges: Optional[int], spec: TrainSpec,
           on_merge: Optional[OnMerge] = None) -> Sequence[Tuple[int, int, int]]:
    try:
        return trainer.learn_merges(symbols, alphabet, num_merges, merge_policy=spec.merge_policy,
                             min_frequency=spec.min_frequency, progress=spec.progress, backend=spec.backend,
                             on_merge=on_merge, threads=spec.threads)
    except MemoryError:
        raise OutOfMemoryError(
            f"out of memory while learning merges from {len(symbols):,} distinct pieces: train on "
            "less text (max_chars=..., CLI --max-chars), ask for a smaller vocab_size, or raise "
            "min_frequency so that training stops sooner"
        ) from None
    except OverflowError as exc:  # counts from a file may be as large as 64 bits allow
        raise FunctionalBPEError(str(exc)) from None


def _tokenizer(scheme: Scheme, merges: Sequence[Tuple[int, int, int]], specials: Tuple[str, ...],
               merge_policy: str) -> Tokenizer:
    return Tokenizer(scheme, [(a, b) for a, b, _ in merges], specials, merge_policy=merge_policy,
                     merge_counts=[c for _, _, c in merges])


def _check_options(backend: str, merge_policy: str, min_frequency: int) -> int:
    """Check the options; return min_frequency as an int."""
    if backend not in BACKENDS:
        raise FunctionalBPEError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "fast" and NATIVE.trainer is None:
        raise FunctionalBPEError(trainer.FAST_MISSING)
    policy_code(merge_policy)
    return integer(min_frequency, "min_frequency", 1)


__all__ = ["train", "train_from_counts", "count_pieces", "BACKENDS"]
