"""BPE-dropout (Provilkov, Emelianenko and Voita, 2020): merges skipped at random, for
subword regularization.

Plain BPE merges, again and again, the adjacent pair that was merged earliest in training.
BPE-dropout does the same, except that each time a pair is about to be merged it is skipped
with probability ``p``; a skipped pair is offered again after the next merge that does happen
(the text around it has changed), and the piece is done when every pair left was skipped or
was never merged. So ``p = 0`` is plain BPE (the same ids as :func:`.reference.encode_piece`),
``p = 1`` leaves every piece as its symbols (bytes, atoms), and in between the same piece
comes out in different segmentations, each made of tokens of the vocabulary — so every
one decodes back to the text.

The pairs wait in a heap under ``(rank, position)``, so that ties go to the leftmost pair as
in plain BPE, and a piece of n symbols costs O(n log n) rather than the reference's n
rescans; a popped pair that has changed since it was filed is dropped. The random numbers
come from the ``random.Random`` the caller passes, so a seed fixes the result.

Example::

    >>> import random
    >>> ranks = {(97, 98): 256, (256, 99): 257}
    >>> encode_piece_dropout([97, 98, 99], ranks, 0.0, random.Random(0))
    [257]
    >>> encode_piece_dropout([97, 98, 99], ranks, 1.0, random.Random(0))
    [97, 98, 99]
"""
from __future__ import annotations

import heapq
import random
from typing import List, Mapping, Sequence, Tuple

from ..errors import FunctionalBPEError

Pair = Tuple[int, int]


def check_dropout(p: object) -> float:
    """``p`` as a probability, or a FunctionalBPEError naming the option."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise FunctionalBPEError(f"dropout={p!r}: give a probability, a number from 0 to 1")
    return float(p)


def encode_piece_dropout(symbols: Sequence[int], ranks: Mapping[Pair, int], p: float, rng: random.Random) -> List[int]:
    """Apply the merges to one piece, skipping each merge about to happen with probability
    ``p`` (``ranks``: pair → the id it becomes, lower merged earlier)."""
    n = len(symbols)
    ids = list(symbols)
    if n < 2:
        return ids
    nexts = list(range(1, n + 1))  # symbol i is followed by symbol nexts[i]; n: none
    prevs = list(range(-1, n - 1))
    heap: List[Tuple[int, int, int, int]] = []  # (rank, position, left id, right id)
    for i in range(n - 1):
        rank = ranks.get((ids[i], ids[i + 1]))
        if rank is not None:
            heap.append((rank, i, ids[i], ids[i + 1]))
    heapq.heapify(heap)
    skipped: List[Tuple[int, int, int, int]] = []
    while heap:
        entry = heapq.heappop(heap)
        rank, i, left, right = entry
        j = nexts[i]
        if ids[i] != left or j >= n or ids[j] != right:
            continue  # stale: merged away, or its neighbour changed
        if p and rng.random() < p:
            skipped.append(entry)
            continue
        ids[i] = rank
        ids[j] = -1  # gone; no filed pair can match it again
        nexts[i] = nexts[j]
        if nexts[i] < n:
            prevs[nexts[i]] = i
        for entry in skipped:
            heapq.heappush(heap, entry)
        skipped.clear()
        for a in (prevs[i], i):
            if a >= 0 and nexts[a] < n:
                b = nexts[a]
                new = ranks.get((ids[a], ids[b]))
                if new is not None:
                    heapq.heappush(heap, (new, a, ids[a], ids[b]))
    out = []
    i = 0
    while i < n:
        out.append(ids[i])
        i = nexts[i]
    return out
