"""The reference BPE trainer and encoder: pure Python, short, and exact.

This file is the definition that every faster path is tested against. Read it top to
bottom to learn how byte-level BPE works.

**Training.** Text is cut into pieces (see :mod:`functionalbpe.text.patterns`) and each distinct
piece is counted once. A piece is a sequence of symbols: at the start, its UTF-8 bytes
(ids 0–255) and, with a scheme, its atoms (one id each). Then, again and again:

1. count every adjacent pair of symbols in every piece, weighted by the piece's count;
2. take the pair with the highest count — on a tie, the smallest ``(left, right)``;
3. give it the next free id and replace it in every piece, left to right, without overlap.

Training stops when the vocabulary is full, when no pair is left, or when the best count
falls below ``min_frequency``. Two rules keep pairs out of step 1: the merge policy (which
kinds of symbols may merge, :func:`functionalbpe.core.alphabet.can_merge`) and the longest token
a tokenizer may hold (``max_token_bytes``, :mod:`functionalbpe.filecheck`), so that what
training makes a tokenizer file can hold.

**Encoding** replays the merges on a new piece, lowest id (earliest merge) first.

Two small helpers carry the idea, :func:`get_stats` and :func:`merge`. The trainer adds one
piece of bookkeeping so that it can handle megabytes: instead of recounting every pair after
each merge, it recounts only the pieces the merge touched, and keeps the candidates in a heap
whose stale entries are skipped when they reach the top. Nothing else is clever.

Known answer (minbpe's)::

    >>> merges = train_merges({tuple(b"aaabdaaabac"): 1}, num_merges=3, first_id=256)
    >>> [(a, b) for a, b, count in merges]
    [(97, 97), (97, 98), (256, 257)]
    >>> encode_piece(list(b"aaabdaaabac"), ranks_from_merges(merges, 256))
    [258, 100, 258, 97, 99]
"""
from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from .alphabet import TEXT, can_merge, merged_flags, policy_code
from ..filecheck import ATOM_BYTES, MAX_TOKEN_BYTES
from ..progress import Progress, ProgressSpec

Pair = Tuple[int, int]
# One learned merge: the pair, and how often it occurred when it was chosen.
Merge = Tuple[int, int, int]


def get_stats(ids: Sequence[int], counts: Optional[Counter] = None, weight: int = 1) -> Counter:
    """Count adjacent pairs (every window, overlaps included), ``weight`` times each.

    >>> get_stats([1, 2, 3, 1, 2])
    Counter({(1, 2): 2, (2, 3): 1, (3, 1): 1})
    """
    counts = Counter() if counts is None else counts
    for pair in zip(ids, ids[1:]):
        counts[pair] += weight
    return counts


def merge(ids: Sequence[int], pair: Pair, idx: int) -> List[int]:
    """Replace every occurrence of ``pair`` by ``idx``, left to right, without overlap.

    >>> merge([97, 97, 97, 98], (97, 97), 256)
    [256, 97, 98]
    """
    out: List[int] = []
    i = 0
    n = len(ids)
    while i < n:
        if i + 1 < n and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def best_pair_key(pair: Pair, count: int) -> Tuple[int, int, int]:
    """The ordering rule, in one place: highest count first, then the smallest pair.

    The winner is the *minimum* of this key over all candidate pairs.
    """
    return (-count, pair[0], pair[1])


def check_options(
    first_id: int, flags: Optional[Sequence[int]], merge_policy: str, min_frequency: int
) -> Tuple[int, List[int]]:
    """The policy code and the list of flags, or the error that bad options deserve."""
    policy = policy_code(merge_policy)
    flags = list(flags) if flags is not None else [TEXT] * first_id
    if len(flags) != first_id:
        raise ValueError(f"flags gives {len(flags)} entries for {first_id} symbols")
    if min_frequency < 1:
        raise ValueError(f"min_frequency must be at least 1, got {min_frequency}")
    return policy, flags


def train_merges(
    pieces: Mapping[Sequence[int], int],
    num_merges: Optional[int],
    first_id: int,
    *,
    flags: Optional[Sequence[int]] = None,
    merge_policy: str = "prefix",
    min_frequency: int = 1,
    progress: ProgressSpec = False,
    max_token_bytes: int = MAX_TOKEN_BYTES,
) -> List[Merge]:
    """Learn up to ``num_merges`` merges (``None``: until no pair is left).

    ``pieces`` maps each distinct piece (a sequence of symbol ids below ``first_id``) to its
    count. ``flags`` gives the kind flags of ids ``0 .. first_id-1`` (default: all text);
    pairs that ``merge_policy`` forbids are never counted, so they never win, and neither
    are pairs that would make a token longer than ``max_token_bytes`` (a byte counts 1, an
    atom 3: its text form; at most the limit of :mod:`functionalbpe.filecheck`).
    Returns ``(left, right, count)`` per merge; merge ``k`` gets id ``first_id + k``.
    """
    policy, flags = check_options(first_id, flags, merge_policy, min_frequency)
    if not 1 <= max_token_bytes <= MAX_TOKEN_BYTES:
        raise ValueError(f"max_token_bytes must be in 1..{MAX_TOKEN_BYTES}, got {max_token_bytes}")
    lengths = [1 if i < 256 else ATOM_BYTES for i in range(first_id)]

    def mergeable(pair: Pair) -> bool:
        return can_merge(policy, flags[pair[0]], flags[pair[1]]) and (
            lengths[pair[0]] + lengths[pair[1]] <= max_token_bytes
        )

    # The distinct pieces, each stored once with its count.
    words: List[List[int]] = []
    weights: List[int] = []
    for symbols, count in pieces.items():
        if count > 0 and len(symbols) >= 2:
            words.append(list(symbols))
            weights.append(int(count))

    # stats[pair]: weighted count of the pair over all pieces.
    # where[pair]: pieces that contained the pair when it was counted (a superset is fine).
    stats: Counter = Counter()
    where: Dict[Pair, Set[int]] = defaultdict(set)

    def add_pairs(i: int, sign: int) -> List[Pair]:
        """Add (sign=+1) or take out (sign=-1) the pairs of piece i; return them."""
        word, weight = words[i], weights[i] * sign
        pairs = [pair for pair in zip(word, word[1:]) if mergeable(pair)]
        for pair in pairs:
            stats[pair] += weight
            if sign > 0:
                where[pair].add(i)
        return pairs

    for i in range(len(words)):
        add_pairs(i, +1)

    # Candidates as (-count, left, right): heapq pops the smallest key, which is the rule of
    # best_pair_key. An entry whose count is no longer the pair's count is stale; skip it.
    heap = [best_pair_key(pair, count) for pair, count in stats.items()]
    heapq.heapify(heap)

    merges: List[Merge] = []
    bar = Progress(progress, "merging", total=num_merges)
    while num_merges is None or len(merges) < num_merges:
        best: Optional[Tuple[Pair, int]] = None
        while heap:
            neg_count, a, b = heapq.heappop(heap)
            if stats.get((a, b), 0) == -neg_count and -neg_count > 0:
                best = ((a, b), -neg_count)
                break
        if best is None:
            break  # no pair left
        pair, count = best
        if count < min_frequency:
            break
        new_id = first_id + len(merges)
        merges.append((pair[0], pair[1], count))
        flags.append(merged_flags(flags[pair[0]], flags[pair[1]]))
        lengths.append(lengths[pair[0]] + lengths[pair[1]])

        # Rewrite every piece that holds the pair: take its pairs out, merge, put them back.
        touched: Set[Pair] = set()
        for i in sorted(where.pop(pair, ())):
            touched.update(add_pairs(i, -1))
            words[i] = merge(words[i], pair, new_id)
            touched.update(add_pairs(i, +1))
        for p in touched:
            c = stats.get(p, 0)
            if c > 0:
                heapq.heappush(heap, best_pair_key(p, c))
            else:
                stats.pop(p, None)
        stats.pop(pair, None)
        bar.update(len(merges), f"best count {count}")
    bar.close()
    return merges


def ranks_from_merges(merges: Iterable[Sequence[int]], first_id: int) -> Dict[Pair, int]:
    """Map each merged pair to the id it became (its rank: lower merged earlier)."""
    return {(m[0], m[1]): first_id + k for k, m in enumerate(merges)}


def encode_piece(symbols: Sequence[int], ranks: Mapping[Pair, int]) -> List[int]:
    """Apply the merges to one piece: repeatedly merge the adjacent pair of lowest rank.

    Every pair a merge creates contains the new id, so its rank is higher than the one just
    applied: the merges are replayed in exactly the order training made them.

    >>> encode_piece([97, 97, 97], {(97, 97): 256})
    [256, 97]
    """
    ids = list(symbols)
    while len(ids) >= 2:
        pair = min(zip(ids, ids[1:]), key=lambda p: ranks.get(p, float("inf")))
        if pair not in ranks:
            break
        ids = merge(ids, pair, ranks[pair])
    return ids
