"""Counting: a corpus becomes the table of a scheme's raw pieces, each with its count.

This is the first stage of training, and usually the slowest. :func:`count_table` is its one
entry point: it reads the corpus (one text, an iterable of documents, or
:func:`functionalbpe.files`), cuts special tokens out, cuts the rest into the scheme's *raw
pieces* (``Scheme.raw_pieces``: what the scheme's transform then turns into text-form
pieces) and counts each distinct piece, into a :class:`~functionalbpe.core.piecetable.PieceTable`.

Whether C or Python does the work is decided once, from what the scheme declares
(``Scheme.compiled()``): when it names a compiled scanner that is built, the C counter
(``csrc/_scanner.pyx``) cuts and counts on all cores and hands the table over flat, with no
Python object per piece; otherwise the scheme's ``raw_pieces`` cut each text and a
``Counter`` counts. Both give the same table, in the same order (first occurrence),
whatever the number of threads.

Text is read as training and encoding read it: a lone surrogate as U+FFFD
(:mod:`functionalbpe.util.checks`); a scheme that normalizes (``Scheme.normalize``) sees each
special-free part normalized, as encoding does.

Example::

    >>> from functionalbpe.schemes.plain import PlainScheme
    >>> count_table(["a a a", "a"], PlainScheme("gpt2")).to_dict()
    {'a': 2, ' a': 2}
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Optional, Protocol, Sequence, Union

from ..util.checks import bpe_text, bpe_utf8, plain_str
from ..core._native import NATIVE, thread_count
from ..core.contract import SchemeLike
from ..core.piecetable import PieceTable
from ..errors import CompiledPatternGaveUp, FunctionalBPEError, PatternError
from ..util.display import plural
from ..util.progress import Progress, ProgressSpec
from .corpus import DocumentRun, Files
from .cuts import Cutter, program_cutter
from ..unicode.pattern_limits import shown
from .patterns import Pattern, special_cutter


class CountedScheme(SchemeLike, Protocol):
    """A scheme as counting reads it: the kernel's contract and the pattern it cuts with."""

    @property
    def pattern(self) -> Pattern: ...


Corpus = Union[str, Iterable[str], Files]


@dataclass
class CountReport:
    """What a count held and read: for sizing a run on a large corpus.

    ``unique_pieces`` and ``table_bytes`` are the distinct pieces held at the end and the
    memory of the table holding them (the compiled counter's hash tables; on the pure-Python
    path an estimate of the Counter's size). Memory is bounded by these, not by the corpus.
    """

    documents: int = 0
    chars: int = 0
    bytes: int = 0
    unique_pieces: int = 0
    table_bytes: int = 0
    seconds: float = 0.0
    backend: str = "python"

    def __str__(self) -> str:
        rate = self.bytes / self.seconds / 1e6 if self.seconds > 0 else 0.0
        return (
            f"{plural(self.documents, 'document')}, {self.bytes / 1e6:,.1f} MB read, "
            f"{plural(self.unique_pieces, 'unique piece')} in {self.table_bytes / 1e6:,.1f} MB "
            f"({self.seconds:.2f}s, {rate:,.0f} MB/s, {self.backend})"
        )


def count_table(
    corpus: Corpus,
    scheme: CountedScheme,
    special_tokens: Sequence[str] = (),
    threads: Optional[int] = None,
    progress: ProgressSpec = False,
    report: Optional[Callable[[CountReport], None]] = None,
) -> PieceTable:
    """The raw pieces of ``scheme`` in ``corpus``, counted (memory grows with the distinct
    pieces, not with the corpus).

    Special tokens are cut out first: they are never part of a piece. ``threads``: worker
    threads of the compiled counter (None: all cores). ``report``, if given, is called at
    the end with a :class:`CountReport`.
    """
    threads = thread_count(threads)
    specials = tuple(special_tokens)
    if any(not isinstance(s, str) or not s for s in specials):
        raise FunctionalBPEError(f"a special token must be a non-empty str, got {specials!r}")
    declared = scheme.compiled()
    stats = CountReport()
    start = time.perf_counter()
    # A compiled custom pattern proves its own cuts (cuts.program_cutter), between the
    # special tokens, which counting cuts out first; not in normalized text (normalizing may
    # change text across a cut).
    cut = None
    if not declared.cuts_safely and scheme.normalize is None:
        cut = program_cutter(declared.scanner, specials)
    counter = NATIVE.scanner_for(declared.scanner)
    # The compiled counter takes a JSONL file's documents as runs, read in C; a scheme that
    # normalizes reads each document as text.
    units = _units(corpus, specials, whole_documents=not declared.cuts_safely and cut is None, cut=cut,
                   runs=counter is not None and scheme.normalize is None)
    with Progress(progress, "counting", total=_known_size(corpus), unit=" MB", scale=1e6) as bar:
        if counter is not None:
            try:
                table = _count_compiled(scheme, units, specials, threads, stats, bar)
            except CompiledPatternGaveUp:
                # A compiled pattern's matcher gave up on a text (no non-empty match at some
                # place, or its step budget spent): regex counts instead, from the start,
                # when the corpus can be read again; it gives the counts, or the error that
                # names the character the pattern drops.
                if not isinstance(corpus, (str, list, tuple, Files)):
                    raise PatternError(
                        f"the compiled pattern {shown(scheme.pattern)} gave up on a text of this "
                        "corpus (a place where no non-empty piece matches, or a pattern that "
                        "backtracks without end), and the corpus is an iterator that cannot be "
                        "read again with regex; pass a list or functionalbpe.files(...)"
                    ) from None
                stats = CountReport()
                units = _units(corpus, specials, whole_documents=not declared.cuts_safely and cut is None, cut=cut)
                table = _count_python(scheme, units, specials, stats, bar)
        else:
            table = _count_python(scheme, units, specials, stats, bar)
    if isinstance(corpus, Files):
        stats.documents, stats.chars = corpus.stats.documents, corpus.stats.chars
    stats.seconds = time.perf_counter() - start
    if report is not None:
        report(stats)
    return table


def _known_size(corpus: Corpus) -> Optional[int]:
    """The bytes counting will read, when the files say it (plain text files: their size);
    None for texts in memory and for files whose text is not their bytes (compressed, JSON)."""
    return corpus.text_bytes() if isinstance(corpus, Files) else None


def _units(corpus: Corpus, specials: Sequence[str], whole_documents: bool,
           cut: Optional[Cutter] = None, runs: bool = False) -> Iterable[Union[str, bytes, DocumentRun]]:
    """The corpus as texts (``str``) and blocks of valid UTF-8 (``bytes``, from text files,
    cut where the pieces of every built-in pattern survive: :mod:`functionalbpe.text.cuts`).
    ``whole_documents``: for a scheme whose raw pieces may not survive such a cut, each file
    is one text."""
    if isinstance(corpus, str):
        return [plain_str(corpus)]
    if isinstance(corpus, Files):
        return iter(corpus) if whole_documents else corpus.units(specials, cut, runs=runs)
    return _checked(corpus)


def _checked(documents: Iterable[Any]) -> Iterator[str]:
    """The documents of an iterable: each a str, or a batch of them (a list or tuple of str,
    as HF's ``train_from_iterator`` takes them)."""
    for doc in documents:
        if isinstance(doc, str):
            yield doc  # a str subclass is read as its str where it is read (plain_str, bpe_text)
        elif isinstance(doc, (list, tuple)) and all(isinstance(d, str) for d in doc):
            yield from doc
        else:
            raise FunctionalBPEError(
                f"a document must be a str (or a list of str: a batch), got {type(doc).__name__}; "
                "for files use functionalbpe.files(...)"
            )


def _count_compiled(scheme: CountedScheme, units: Iterable[Union[str, bytes, DocumentRun]], specials: Sequence[str],
                    threads: Optional[int], stats: CountReport, bar: Progress) -> PieceTable:
    """The C counter: it cuts special tokens out itself, unless the scheme normalizes (then
    they are cut here first, since normalizing may change text across a token's edge, and
    encoding cuts them before it normalizes)."""
    normalize = scheme.normalize is not None
    cutter = special_cutter(frozenset(specials)) if specials and normalize else None
    scanner = scheme.compiled().scanner
    assert scanner is not None  # count_table() comes here only for a declared scanner
    counter = NATIVE.piece_counter(scanner, threads, () if normalize else specials)
    stats.backend = f"compiled, {counter.threads} threads"
    shown = time.perf_counter()
    try:
        for unit in units:
            if isinstance(unit, DocumentRun):  # documents of a JSONL file (the scheme does not normalize)
                stats.documents += len(unit.ends)
                counter.add_run(unit.text, unit.ends)
            elif isinstance(unit, str):
                stats.documents += 1
                stats.chars += len(unit)
                if normalize:
                    text = bpe_text(unit)
                    for segment, is_special in cutter.split(text) if cutter else [(text, False)]:
                        if not is_special:
                            counter.add_text(scheme.prepare(segment))
                elif unit.isascii():
                    counter.add_text(plain_str(unit))
                else:
                    # Encoded here rather than by the counter, so that a lone surrogate is
                    # read as U+FFFD on the way. The counter then checks the UTF-8 again:
                    # about 2% more instructions for counting non-ASCII text (callgrind,
                    # 1.8 M characters of six languages, one thread).
                    counter.add_bytes(bpe_utf8(unit))
            elif normalize:
                counter.add_text(scheme.prepare(unit.decode("utf-8")))
            else:  # valid UTF-8 from a file: counted without ever being decoded
                counter.add_bytes(unit)
            if time.perf_counter() - shown > 0.5:
                shown = time.perf_counter()
                held, memory = counter.stats()
                bar.update(counter.bytes_counted, f"{held:,} pieces held, {memory / 1e6:,.0f} MB")
        table = PieceTable(*counter.flat())
        stats.bytes = counter.bytes_counted
        bar.update(stats.bytes, f"{len(table):,} distinct pieces")
        stats.unique_pieces, stats.table_bytes = counter.stats()
        return table
    finally:
        counter.close()


def _count_python(scheme: CountedScheme, units: Iterable[Union[str, bytes]], specials: Sequence[str],
                  stats: CountReport, bar: Progress) -> PieceTable:
    """``scheme.raw_pieces`` of each special-free part of each text, into a Counter."""
    counts: Counter = Counter()
    cutter = special_cutter(frozenset(specials)) if specials else None
    raw_pieces = scheme.raw_pieces
    shown = -1  # the megabytes last shown: the bar moves once per megabyte, not per text
    documents = chars = size = 0  # kept in locals: this loop runs once per text
    for unit in units:
        if isinstance(unit, str):
            documents += 1
            chars += len(unit)
            text = bpe_text(unit)
        else:
            text = unit.decode("utf-8")
            chars += len(text)
        size += len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        if cutter is None:
            counts.update(raw_pieces(text))
        else:
            for segment, is_special in cutter.split(text):
                if not is_special:
                    counts.update(raw_pieces(segment))
        if size // 1_000_000 != shown:
            shown = size // 1_000_000
            bar.update(size, f"{len(counts):,} distinct pieces")
    stats.documents, stats.chars, stats.bytes = documents, chars, size
    bar.update(size, f"{len(counts):,} distinct pieces")
    stats.unique_pieces = len(counts)
    # A dict slot, a str and an int per distinct piece: roughly what CPython spends.
    stats.table_bytes = sum(map(len, counts)) + (49 + 28 + 24) * len(counts)
    return PieceTable.from_dict(counts)
