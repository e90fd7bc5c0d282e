"""``train(...)``: from documents to a Tokenizer, in four stages.

1. **count** — cut each document at special tokens, let the scheme cut (and transform) the
   rest into pieces, count each distinct piece;
2. **symbols** — turn each distinct piece into symbol ids (UTF-8 bytes, atoms as one id);
3. **merge** — learn the merges (the reference trainer or the fast one: same table);
4. **build** — wrap scheme, merges and special tokens into a :class:`Tokenizer`.

Example::

    >>> tok = train(["low lower lowest"] * 3, vocab_size=260, pattern="gpt2", progress=False)
    >>> [tok.token_bytes(256 + k) for k in range(4)]
    [b'lo', b'low', b' low', b' lowe']
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, Iterator, Optional, Sequence, Tuple, Union

from .core import reference
from .core._native import check_threads, native
from .core.alphabet import Alphabet, num_merges_for, policy_code
from .checks import bpe_text, integer, plain_str
from .errors import FunctionalBPEError, OutOfMemoryError
from .text.patterns import special_cutter
from .progress import Progress, ProgressSpec
from .text.counting import PieceTable, count_pieces, count_pieces_flat
from .schemes.base import PlainScheme, Scheme, make_scheme
from .tokenizer import Tokenizer

BACKENDS = ("auto", "fast", "reference")

# Counts are 64-bit in the compiled trainer: a higher min_frequency stops training just where
# this one does, since no count can reach either.
MAX_COUNT = 2**63 - 1


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
    **scheme_options: Any,
) -> Tokenizer:
    """Train a byte-level BPE tokenizer.

    ``corpus`` is one text, an iterable of documents, or :func:`functionalbpe.files`.
    ``vocab_size`` counts everything: 256 bytes + the scheme's atoms + merges + special
    tokens; ``None`` trains until no pair is left. ``pattern`` defaults to the scheme's own
    (``gpt4`` for the plain scheme). Training stops early when no pair is left or the best
    pair occurs fewer than ``min_frequency`` times, so the vocabulary may come out smaller.

    Text is read as ``encode`` reads it: a ``str`` subclass as its ``str``, a lone surrogate
    as U+FFFD. Running out of memory raises :class:`~functionalbpe.errors.OutOfMemoryError`,
    which says what to reduce.
    """
    min_frequency = _check_options(backend, merge_policy, min_frequency)
    threads = check_threads(threads)
    specials = _check_specials(special_tokens)
    if isinstance(scheme, Scheme):
        if pattern is not None or scheme_options:
            raise FunctionalBPEError("give pattern and scheme options to the scheme object, not to train()")
        the_scheme = scheme
    else:
        the_scheme = make_scheme(scheme, pattern, **scheme_options)
    # A bad size or backend fails here, before the corpus is read.
    num_merges_for(vocab_size, len(the_scheme.atoms), len(specials))
    try:
        if _trainer(backend) is not reference and the_scheme.counts_flat():
            # The fast trainer takes the counts flat: no Python string per distinct piece.
            raw = count_pieces_flat(corpus, the_scheme.pattern, threads, specials, progress=progress)
            counts = the_scheme.describe_table(raw)
        else:
            counts = count_corpus(corpus, the_scheme, specials, threads=threads, progress=progress)
    except MemoryError:
        raise OutOfMemoryError(
            "out of memory while counting the corpus: the count holds every distinct piece, in one "
            "table per thread; train on less text (max_chars=..., CLI --max-chars) or on fewer "
            "threads (threads=..., CLI --threads)"
        ) from None
    return train_from_counts(
        counts,
        the_scheme,
        vocab_size=vocab_size,
        special_tokens=specials,
        min_frequency=min_frequency,
        merge_policy=merge_policy,
        backend=backend,
        progress=progress,
    )


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
    """Stages 2–4 on pieces already counted (:func:`count_corpus`, or for the plain scheme
    :func:`~functionalbpe.text.counting.count_pieces_flat`): what :func:`train` does after reading
    the corpus. The report uses it to train on text it has already streamed.

    >>> scheme = make_scheme("plain", "gpt2")
    >>> train_from_counts({"ab": 2, " ab": 1}, scheme).vocab_size
    258
    """
    min_frequency = _check_options(backend, merge_policy, min_frequency)
    specials = _check_specials(special_tokens)
    num_merges = num_merges_for(vocab_size, len(scheme.atoms), len(specials))
    trainer = _trainer(backend)
    alphabet = Alphabet(scheme.atoms)
    options = dict(merge_policy=merge_policy, min_frequency=min(min_frequency, MAX_COUNT), progress=progress)
    try:
        if isinstance(counts, PieceTable) and trainer is not reference:
            merges = trainer.train_merges_utf8(counts.data, counts.offsets, counts.counts, num_merges, alphabet, **options)
        elif trainer is reference:
            if isinstance(counts, PieceTable):
                counts = counts.to_dict()
            pieces = symbol_counts(counts, alphabet)
            merges = reference.train_merges(
                pieces, num_merges, alphabet.first_merge, flags=alphabet.base_flags(), **options
            )
        else:  # the fast trainer reads the text-form pieces itself: stage 2 happens in C
            merges = trainer.train_merges_from_text(counts, num_merges, alphabet, **options)
    except MemoryError:
        raise OutOfMemoryError(
            f"out of memory while learning merges from {len(counts):,} distinct pieces: train on "
            "less text (max_chars=..., CLI --max-chars), ask for a smaller vocab_size, or raise "
            "min_frequency so that training stops sooner"
        ) from None
    return Tokenizer(
        scheme,
        [(a, b) for a, b, _ in merges],
        specials,
        merge_policy=merge_policy,
        merge_counts=[c for _, _, c in merges],
    )


def count_corpus(
    corpus: Union[str, Iterable[str]],
    scheme: Scheme,
    special_tokens: Sequence[str] = (),
    *,
    threads: Optional[int] = None,
    progress: ProgressSpec = None,
) -> Dict[str, int]:
    """Stage 1: the scheme's text-form pieces of a corpus, counted."""
    threads = check_threads(threads)
    if type(scheme).count is PlainScheme.count:
        # Pieces are the pattern's matches: count_pieces cuts out special tokens itself
        # (in C on the compiled path) and streams files in blocks.
        return count_pieces(corpus, scheme.pattern, threads, special_tokens, progress=progress)
    documents = [corpus] if isinstance(corpus, str) else corpus
    segments = _ordinary_segments(documents, tuple(special_tokens), progress)
    return scheme.count(segments, threads=threads)


def symbol_counts(counts: Dict[str, int], alphabet: Alphabet) -> Dict[Tuple[int, ...], int]:
    """Stage 2: text-form pieces to symbol-id tuples (distinct pieces stay distinct)."""
    symbols = alphabet.symbols
    return {symbols(piece): count for piece, count in counts.items()}


def _ordinary_segments(documents: Iterable[str], specials: Tuple[str, ...], progress: ProgressSpec) -> Iterator[str]:
    bar = Progress(progress, "reading", unit=" chars")
    cutter = special_cutter(frozenset(specials)) if specials else None
    done = 0
    for doc in documents:
        if not isinstance(doc, str):
            raise FunctionalBPEError(
                f"a document must be a str, got {type(doc).__name__}; for files use functionalbpe.files(...)"
            )
        done += len(doc)
        bar.update(done)
        doc = bpe_text(doc)
        if cutter is not None:
            for segment, is_special in cutter.split(doc):
                if not is_special:
                    yield segment
        elif doc:
            yield doc
    bar.close()


def _check_options(backend: str, merge_policy: str, min_frequency: int) -> int:
    """Check the options; return min_frequency as an int."""
    if backend not in BACKENDS:
        raise FunctionalBPEError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    policy_code(merge_policy)
    return integer(min_frequency, "min_frequency", 1)


def _check_specials(special_tokens: Sequence[str]) -> Tuple[str, ...]:
    if isinstance(special_tokens, str):
        special_tokens = (special_tokens,)
    special_tokens = tuple(special_tokens)
    for s in special_tokens:
        if not isinstance(s, str) or not s:
            raise FunctionalBPEError(f"a special token must be a non-empty str, got {s!r}")
        if bpe_text(s) != s:
            raise FunctionalBPEError(f"the special token {s!r} holds a lone surrogate, which UTF-8 cannot hold")
    specials = tuple(map(plain_str, special_tokens))
    if len(set(specials)) != len(specials):
        raise FunctionalBPEError("special tokens must be distinct")
    return specials


def _trainer(backend: str) -> Any:
    """The module whose ``train_merges`` runs stage 3."""
    if backend == "reference":
        return reference
    fast = native("_trainer")
    if fast is not None:
        from .core import fast as fast_trainer

        return fast_trainer
    if backend == "fast":
        raise FunctionalBPEError(
            "backend='fast' needs the compiled extension, which is not built here "
            "(or FUNCTIONALBPE_PUREPYTHON=1 is set); reinstall with a C compiler or use backend='auto'"
        )
    return reference


__all__ = ["train", "train_from_counts", "count_corpus", "symbol_counts", "BACKENDS"]
