"""Counting pieces: the first stage of training, and usually the slowest.

BPE only needs each distinct piece once, with its count, so a corpus of any size becomes a
table whose size is the number of distinct pieces.

For the built-in patterns the compiled scanner does the work (``csrc/_scanner.pyx``): it
cuts text exactly as ``regex`` does, counts into a C hash table on all cores and makes one
Python string per distinct piece. A custom regex, or a build without the extension, takes
the ``regex`` + ``Counter`` path below; both give the same dict, in the same order (first
occurrence), whatever the number of threads.

:func:`count_pieces` reads text as training and encoding do: a lone surrogate is read as
U+FFFD (:mod:`functionalbpe.checks`). It is what :func:`functionalbpe.train` counts.

Example::

    >>> count_pieces(["a a a", "a"], pattern="gpt2")
    {'a': 2, ' a': 2}
"""
from __future__ import annotations

import time
from array import array
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, Iterator, Optional, Sequence, Tuple, Union

from ..core._native import check_threads
from ..checks import bpe_text, bpe_utf8, plain_str
from ..errors import FunctionalBPEError
from .patterns import compile_pattern, find_pieces, iter_pieces, scanner_for, special_cutter
from ..progress import Progress, ProgressSpec


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
            f"{self.documents:,} documents, {self.bytes / 1e6:,.1f} MB read, "
            f"{self.unique_pieces:,} unique pieces in {self.table_bytes / 1e6:,.1f} MB "
            f"({self.seconds:.2f}s, {rate:,.0f} MB/s, {self.backend})"
        )


def count_segments(segments: Iterable[str], pattern: str, *, threads: Optional[int] = None) -> Dict[str, int]:
    """Count the pieces of texts that contain no special tokens, as the pattern cuts them
    (lone surrogates included: the caller has read the text already).

    ``threads``: worker threads for the compiled counter (None: all cores).
    """
    return _count(segments, pattern, threads, (), False, None, flat=False, as_read=True)


def _count_with_regex(counts: Counter, text: str, pattern: str) -> None:
    pieces = find_pieces(text, pattern)  # a custom pattern runs under its time limit
    # Matches never overlap and come in order, so they tile the text exactly when their
    # lengths add up to its length; otherwise find and name the lost character.
    if sum(map(len, pieces)) != len(text):
        for _ in iter_pieces(text, pattern):
            pass
    counts.update(pieces)
    counts.pop("", None)


def count_pieces(
    corpus: Union[str, Iterable[str]],
    pattern: str = "gpt4",
    threads: Optional[int] = None,
    special_tokens: Sequence[str] = (),
    *,
    progress: ProgressSpec = False,
    report: Optional[Callable[[CountReport], None]] = None,
) -> Dict[str, int]:
    """Count the pieces of a corpus: one text, an iterable of documents, or
    :func:`functionalbpe.files` (read in blocks: memory grows with the distinct pieces,
    not with the corpus).

    Special tokens are cut out first: they are never part of a piece. ``threads``: worker
    threads of the compiled counter (None: all cores). ``report``, if given, is called at
    the end with a :class:`CountReport`.
    """
    return _count(corpus, pattern, threads, special_tokens, progress, report, flat=False)


@dataclass
class PieceTable:
    """Counted pieces laid out flat: piece ``i`` is ``data[offsets[i]:offsets[i + 1]]``
    (UTF-8) and occurs ``counts[i]`` times; ``offsets`` and ``counts`` are ``array('q')``.
    Pieces are in order of first occurrence, as in :func:`count_pieces`'s dict.

    This is the hand-off to the fast trainer (``fast.train_merges_utf8``): no Python object
    per distinct piece, where the dict needs a str and an int for each.

    >>> t = count_pieces_flat(["a a"], "gpt2")
    >>> t.data, list(t.offsets), list(t.counts)
    (b'a a', [0, 1, 3], [1, 1])
    """

    data: bytes
    offsets: array
    counts: array

    def __len__(self) -> int:
        return len(self.counts)

    def items(self) -> Iterator[Tuple[str, int]]:
        view, offsets = memoryview(self.data), self.offsets
        for i, count in enumerate(self.counts):
            yield bytes(view[offsets[i] : offsets[i + 1]]).decode("utf-8", "surrogatepass"), count

    def to_dict(self) -> Dict[str, int]:
        return dict(self.items())

    @classmethod
    def from_dict(cls, counts: Dict[str, int]) -> "PieceTable":
        encoded = [piece.encode("utf-8", "surrogatepass") for piece in counts]
        offsets = array("q", [0])
        for piece in encoded:
            offsets.append(offsets[-1] + len(piece))
        return cls(b"".join(encoded), offsets, array("q", counts.values()))


def count_pieces_flat(
    corpus: Union[str, Iterable[str]],
    pattern: str = "gpt4",
    threads: Optional[int] = None,
    special_tokens: Sequence[str] = (),
    *,
    progress: ProgressSpec = False,
    report: Optional[Callable[[CountReport], None]] = None,
) -> PieceTable:
    """:func:`count_pieces`, returning a :class:`PieceTable` instead of a dict."""
    return _count(corpus, pattern, threads, special_tokens, progress, report, flat=True)


def _count(corpus, pattern, threads, special_tokens, progress, report, flat: bool, as_read: bool = False):
    """``as_read``: count the texts exactly as they are, lone surrogates included."""
    from .corpus import Files

    threads = check_threads(threads)
    specials = tuple(special_tokens)
    if any(not isinstance(s, str) or not s for s in specials):
        raise FunctionalBPEError(f"a special token must be a non-empty str, got {specials!r}")
    if isinstance(corpus, str):
        units: Iterable[Union[str, bytes]] = [plain_str(corpus)]
    elif isinstance(corpus, Files):
        units = corpus.units(specials)
    else:
        units = _checked(corpus)
    stats = CountReport()
    start = time.perf_counter()
    scanner, name = scanner_for(pattern)
    with Progress(progress, "counting", unit=" MB") as bar:
        if scanner is not None:
            counts = _count_compiled(scanner, units, name, threads, specials, stats, bar, flat, as_read)
        else:
            counts = _count_python(units, pattern, specials, stats, bar, as_read)
            if flat:
                counts = PieceTable.from_dict(counts)
    if isinstance(corpus, Files):
        stats.documents, stats.chars = corpus.stats.documents, corpus.stats.chars
    stats.seconds = time.perf_counter() - start
    if report is not None:
        report(stats)
    return counts


def _checked(documents: Iterable[str]) -> Iterable[str]:
    for doc in documents:
        if not isinstance(doc, str):
            raise FunctionalBPEError(
                f"a document must be a str, got {type(doc).__name__}; for files use functionalbpe.files(...)"
            )
        yield plain_str(doc)


def _count_compiled(scanner, units, name, threads, specials, stats: CountReport, bar: Progress, flat: bool,
                    as_read: bool):
    counter = scanner.PieceCounter(name, threads=threads, special_tokens=specials)
    stats.backend = f"compiled, {counter.threads} threads"
    shown = time.perf_counter()
    try:
        for unit in units:
            if isinstance(unit, str):
                if as_read or unit.isascii():
                    counter.add_text(unit)
                else:
                    # Encoded here rather than by the counter, so that a lone surrogate is
                    # read as U+FFFD on the way. The counter then checks the UTF-8 again:
                    # about 2% more instructions for counting non-ASCII text (callgrind,
                    # 1.8 M characters of six languages, one thread).
                    counter.add_bytes(bpe_utf8(unit))
                stats.documents += 1
                stats.chars += len(unit)
            else:  # valid UTF-8 from a file: counted without ever being decoded
                counter.add_bytes(unit)
            if time.perf_counter() - shown > 0.5:
                shown = time.perf_counter()
                held, memory = counter.stats()
                bar.update(counter.bytes_counted // 1_000_000, f"{held:,} pieces held, {memory / 1e6:,.0f} MB")
        counts = PieceTable(*counter.flat()) if flat else counter.result()
        stats.bytes = counter.bytes_counted
        stats.unique_pieces, stats.table_bytes = counter.stats()
        return counts
    finally:
        counter.close()


def _count_python(units, pattern, specials, stats: CountReport, bar: Progress, as_read: bool):
    compile_pattern(pattern)  # a bad pattern is an error even for an empty corpus
    counts: Counter = Counter()
    cutter = special_cutter(frozenset(specials)) if specials else None
    for unit in units:
        if isinstance(unit, str):
            stats.documents += 1
            stats.chars += len(unit)
            text = unit if as_read else bpe_text(unit)
        else:
            text = unit.decode("utf-8")
            stats.chars += len(text)
        stats.bytes += len(text.encode("utf-8", "surrogatepass"))
        for segment, is_special in cutter.split(text) if cutter else [(text, False)]:
            if not is_special:
                _count_with_regex(counts, segment, pattern)
        bar.update(stats.bytes // 1_000_000, f"{len(counts):,} unique pieces")
    stats.unique_pieces = len(counts)
    # A dict slot, a str and an int per distinct piece: roughly what CPython spends.
    stats.table_bytes = sum(49 + len(p) + 28 + 24 for p in counts)
    return dict(counts)
