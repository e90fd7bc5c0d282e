"""The counted table: distinct pieces with their counts, laid out flat.

BPE needs each distinct piece of a corpus once, with its count, so a corpus of any size
becomes a table whose size is the number of distinct pieces. Training passes that table
along as a value: counting makes it (the scheme's raw pieces), the scheme transforms it (its
text-form pieces), the trainer learns merges from it. It can be kept, compared and handed
over without touching the corpus again.

The layout is flat so that a C counter can hand it over, and a C trainer read it, without
one Python object per piece: piece ``i`` is ``data[offsets[i]:offsets[i + 1]]`` (UTF-8) and
occurs ``counts[i]`` times; ``offsets`` (n + 1 entries) and ``counts`` (n entries) are
``array('q')``. Pieces are distinct and in order of first occurrence in the corpus, which
the compiled and the pure-Python counters both keep, whatever the number of threads.

Example::

    >>> table = PieceTable.from_dict({"ab": 2, " ab": 1})
    >>> table.data, list(table.offsets), list(table.counts)
    (b'ab ab', [0, 2, 5], [2, 1])
    >>> table.to_dict()
    {'ab': 2, ' ab': 1}
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Iterator, Mapping, Tuple

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


@dataclass(eq=True)
class PieceTable:
    """Distinct pieces and their counts, flat (see the module's docstring)."""

    data: bytes
    offsets: array
    counts: array

    def __len__(self) -> int:
        return len(self.counts)

    @property
    def total(self) -> int:
        """How many pieces the table counts, in all."""
        return sum(self.counts)

    def items(self) -> Iterator[Tuple[str, int]]:
        """``(piece, count)`` pairs, in the table's order."""
        view, offsets = memoryview(self.data), self.offsets
        for i, count in enumerate(self.counts):
            yield bytes(view[offsets[i] : offsets[i + 1]]).decode("utf-8", "surrogatepass"), count

    def to_dict(self) -> "dict[str, int]":
        return dict(self.items())

    @classmethod
    def from_dict(cls, counts: Mapping[str, int]) -> "PieceTable":
        """The table of ``{piece: count}`` (distinct pieces, in the mapping's order)."""
        encoded = [piece.encode("utf-8", "surrogatepass") for piece in counts]
        offsets = array("q", [0])
        offsets.extend(accumulate(map(len, encoded)))
        return cls(b"".join(encoded), offsets, array("q", counts.values()))


@dataclass(eq=False)
class SymbolTable:
    """Distinct pieces already written as symbol ids, flat: piece ``k`` is
    ``ids[ends[k - 1]:ends[k]]`` (from 0 for the first) and occurs ``counts[k]`` times.
    What continued training hands the merge loop after replaying its base's merges on a
    :class:`PieceTable`: a ``Mapping``-like :meth:`items` for the Python trainer, the arrays
    themselves for the compiled one.

    >>> import numpy as np
    >>> table = SymbolTable(np.array([104, 105, 33], np.uint32), np.array([2, 3], np.int64), array("q", [2, 1]))
    >>> list(table.items())
    [((104, 105), 2), ((33,), 1)]
    """

    ids: "np.ndarray"  # uint32
    ends: "np.ndarray"  # int64
    counts: array

    def __len__(self) -> int:
        return len(self.counts)

    def items(self) -> Iterator[Tuple[Tuple[int, ...], int]]:
        """``(symbols, count)`` pairs, in the table's order."""
        ids = self.ids.tolist()
        start = 0
        for end, count in zip(self.ends.tolist(), self.counts):
            yield tuple(ids[start:end]), count
            start = end
