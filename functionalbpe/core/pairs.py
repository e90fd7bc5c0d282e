"""A table of id pairs (the merges) in one flat array: 8 bytes a pair.

A list of tuples takes 64 bytes a pair and two Python ints more (a file of 4.1 million
merges: 262 MB of tuples, where the array is 33 MB). :class:`Pairs` is an immutable sequence
of ``(left, right)`` tuples made on demand from ``ids``, an ``array('I')`` holding left and
right of each pair in turn, which the compiled core reads without a Python object per id
(the merge-table check, the encoder's tables, the file's reader and writer).

    >>> p = Pairs.of([(104, 105), (256, 33)])
    >>> len(p), p[1], list(p), p.ids.tolist()
    (2, (256, 33), [(104, 105), (256, 33)], [104, 105, 256, 33])
    >>> p == [(104, 105), (256, 33)], p[:1]
    (True, Pairs([(104, 105)]))
"""
from __future__ import annotations

from array import array
from itertools import chain
from typing import Any, Iterable, Iterator, List, Sequence, Tuple, Union, overload

from ._native import NATIVE

Pair = Tuple[int, int]


class Pairs(Sequence[Pair]):
    """An immutable sequence of ``(left, right)`` pairs of ids below 2**32, stored flat in
    ``ids`` (an ``array('I')``, never changed)."""

    __slots__ = ("ids",)

    def __init__(self, ids: "array[int]") -> None:
        if ids.typecode != "I" or len(ids) % 2:
            raise ValueError(f"Pairs holds an array('I') of an even length, got {ids.typecode!r} of {len(ids)}")
        self.ids = ids

    @classmethod
    def of(cls, pairs: Iterable[Sequence[int]]) -> "Pairs":
        """The pairs of ints ``pairs`` (each checked to be two ids in 0..2**32-1 by the caller:
        a negative or larger one is an OverflowError here)."""
        if isinstance(pairs, Pairs):
            return pairs
        return cls(array("I", chain.from_iterable(pairs)))

    def __len__(self) -> int:
        return len(self.ids) >> 1

    @overload
    def __getitem__(self, k: int) -> Pair: ...

    @overload
    def __getitem__(self, k: slice) -> "Pairs": ...

    def __getitem__(self, k: Union[int, slice]) -> "Union[Pair, Pairs]":
        if isinstance(k, slice):
            start, stop, step = k.indices(len(self))
            if step != 1:
                return Pairs.of(self[i] for i in range(start, stop, step))
            return Pairs(self.ids[2 * start:2 * max(start, stop)])
        n = len(self)
        if not -n <= k < n:
            raise IndexError(f"pair {k} of {n}")
        k %= n
        return self.ids[2 * k], self.ids[2 * k + 1]

    def __iter__(self) -> Iterator[Pair]:
        ids = iter(self.ids)
        return zip(ids, ids)  # pairs of consecutive ids, at C speed

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Pairs):
            return self.ids == other.ids
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(tuple(o) == p for o, p in zip(other, self))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def tolist(self) -> List[List[int]]:
        """The pairs as lists, as JSON holds them."""
        return list(map(list, self))

    def __repr__(self) -> str:
        return f"Pairs({list(self)!r})"

    def __reduce__(self) -> Tuple[Any, ...]:
        return (Pairs, (self.ids,))


# Rows written to one bytes object at a time (json_rows): 1 MB or so of text, so that the
# canonical JSON of millions of merges is hashed without a copy of all of it.
ROWS_PER_PART = 1 << 16


def json_rows(pairs: Pairs, sep: bytes) -> Iterator[bytes]:
    """The pairs as compact JSON rows (``[104,105]``, what json.dumps writes with separators
    ``(",", ":")``) joined by ``sep``, in parts of :data:`ROWS_PER_PART` rows: written in C
    when the compiled core is there.

    >>> b"".join(json_rows(Pairs.of([(104, 105), (256, 33)]), b",\\n"))
    b'[104,105],\\n[256,33]'
    """
    module = NATIVE.tables
    for start in range(0, len(pairs), ROWS_PER_PART):
        stop = min(start + ROWS_PER_PART, len(pairs))
        if start:
            yield sep
        if module is not None:
            yield module.write_id_rows(pairs.ids, 2, sep, start, stop)
        else:
            yield sep.join(map(b"[%d,%d]".__mod__, pairs[start:stop]))
