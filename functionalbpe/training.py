"""``train(...)``: from documents to a Tokenizer, in one straight line.

1. **resolve** the scheme — a name with its pattern and options, or a scheme object
   (:func:`functionalbpe.schemes.registry.resolve`);
2. **count** the scheme's raw pieces of the corpus, special tokens cut out
   (:func:`functionalbpe.text.counting.count`: a table of distinct pieces and their counts);
3. **transform** that table into the table of text-form pieces (``Scheme.transform``; the
   plain scheme's is the identity);
4. **merge**: learn the merges from it (:func:`functionalbpe.core.trainer.train`, in C or in
   Python: the same merges);
5. **build** the :class:`Tokenizer` from the scheme, the merges and the special tokens.

Each stage hands the next a value and never calls back into an earlier one
(tests/test_training_path.py traces it).

Example::

    >>> tok = train(["low lower lowest"] * 3, vocab_size=260, pattern="gpt2", progress=False)
    >>> [tok.token_bytes(256 + k) for k in range(4)]
    [b'lo', b'low', b' low', b' lowe']
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Sequence, Tuple, Union

from .checks import integer, special_tokens_checked
from .core import trainer
from .core._native import NATIVE, thread_count
from .core.alphabet import Alphabet, num_merges_for, policy_code
from .core.piecetable import PieceTable
from .core.reference import OnMerge
from .counts import PieceCounts
from .errors import FunctionalBPEError, OutOfMemoryError
from .progress import ProgressSpec
from .schemes.base import Scheme
from .schemes.registry import resolve
from .schemes.plain import PlainScheme
from .teach.merge_trace import MergeTracer, TraceSpec
from .text.counting import count
from .text.patterns import as_pattern, compile_pattern
from .tokenizer import Tokenizer

# What ``backend=`` accepts: "python" and "reference" name the same pure-Python trainer.
BACKENDS = trainer.BACKENDS


def train(
    corpus: Union[str, Iterable[str]],
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
    (:mod:`functionalbpe.progress`). ``threads``: counting threads, None for all cores.
    ``**scheme_options`` go to the scheme named by ``scheme`` (e.g. ``case=False``).

    Text is read as ``encode`` reads it: a ``str`` subclass as its ``str``, a lone surrogate
    as U+FFFD. Running out of memory raises :class:`~functionalbpe.errors.OutOfMemoryError`,
    which says what to reduce.

    >>> import functionalbpe as fb
    >>> tok = fb.train(["low lower lowest"] * 3, vocab_size=260, special_tokens=["<|eot|>"], progress=False)
    >>> tok.merges[:2], tok.special_tokens
    ([(108, 111), (256, 119)], {'<|eot|>': 259})
    """
    # Everything is checked before the corpus is read: a bad size or backend fails at once.
    min_frequency = _check_options(backend, merge_policy, min_frequency)
    threads = thread_count(threads)
    counted = _counted(corpus)
    if counted is not None:  # counted already: the scheme and specials are the counts'
        the_scheme, specials = counted.training_input(scheme, pattern, special_tokens, scheme_options)
    else:
        specials = special_tokens_checked(special_tokens)
        the_scheme = resolve(scheme, pattern, **scheme_options)
    alphabet = Alphabet(the_scheme.atoms)
    num_merges = num_merges_for(vocab_size, len(alphabet.atoms), len(specials))
    tracer = None if trace is None else MergeTracer(trace, alphabet, the_scheme)
    try:
        raw = counted.table if counted is not None else count(corpus, the_scheme, specials, threads, progress)
    except MemoryError:
        raise OutOfMemoryError(
            "out of memory while counting the corpus: the count holds every distinct piece, in one "
            "table per thread; train on less text (max_chars=..., CLI --max-chars) or on fewer "
            "threads (threads=..., CLI --threads)"
        ) from None
    symbols = the_scheme.transform(raw)
    merges = _learn(symbols, alphabet, num_merges, merge_policy, min_frequency, progress, backend, tracer)
    if tracer is not None:
        tracer.close()
    return _tokenizer(the_scheme, merges, specials, merge_policy)


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
    min_frequency = _check_options(backend, merge_policy, min_frequency)
    specials = special_tokens_checked(special_tokens)
    alphabet = Alphabet(scheme.atoms)
    num_merges = num_merges_for(vocab_size, len(alphabet.atoms), len(specials))
    symbols = counts if isinstance(counts, PieceTable) else PieceTable.from_dict(counts)
    merges = _learn(symbols, alphabet, num_merges, merge_policy, min_frequency, progress, backend)
    return _tokenizer(scheme, merges, specials, merge_policy)


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
    the end with a :class:`~functionalbpe.text.counting.CountReport`.

    >>> count_pieces(["a a a", "a"], pattern="gpt2")
    {'a': 2, ' a': 2}
    """
    # The pattern is compiled (a bad one is an error even for an empty corpus) but not tried
    # on the probe text that a scheme's pattern must pass: text that it covers counts.
    scheme = PlainScheme(as_pattern(pattern))
    compile_pattern(scheme.pattern)
    return count(corpus, scheme, special_tokens, threads, progress, report).to_dict()


def _counted(corpus: object) -> Optional[PieceCounts]:
    """The piece counts ``corpus`` is, merged if a list of them; None for text."""
    if isinstance(corpus, PieceCounts):
        return corpus
    if isinstance(corpus, (list, tuple)) and corpus and all(isinstance(c, PieceCounts) for c in corpus):
        return PieceCounts.merge(corpus)
    return None


def _learn(symbols: PieceTable, alphabet: Alphabet, num_merges: Optional[int], merge_policy: str,
           min_frequency: int, progress: ProgressSpec, backend: str,
           on_merge: Optional[OnMerge] = None) -> Sequence[Tuple[int, int, int]]:
    try:
        return trainer.train(symbols, alphabet, num_merges, merge_policy=merge_policy,
                             min_frequency=min_frequency, progress=progress, backend=backend,
                             on_merge=on_merge)
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
