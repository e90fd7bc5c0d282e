"""The steps every BPE of this package is made of, shared by the lesson and the fast paths.

:mod:`functionalbpe.core.reference` (the lesson) trains with them in a page; the trainers,
the encoder and parity-aware training use the same steps, so that no production module
imports the lesson itself. Read them first:

* :func:`get_stats` counts adjacent pairs and :func:`merge` replaces one pair, as in minbpe;
* :func:`best_pair_key` is the tie rule: highest count, then the smallest ``(left, right)``;
* :func:`encode_piece` replays the merges on one piece, lowest rank first;
* :func:`symbol_lengths` and :func:`symbol_spellings` say what the symbols before the first
  merge stand for (for the length limit and the token rules); :func:`check_options` and
  :func:`check_token_bytes` check what every trainer is given.

>>> ids = merge([97, 97, 97, 98], (97, 97), 256)
>>> ids, get_stats(ids), encode_piece([97, 97, 97, 98], {(97, 97): 256})
([256, 97, 98], {(256, 97): 1, (97, 98): 1}, [256, 97, 98])
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .alphabet import TEXT, policy_code
from .limits import ATOM_BYTES, MAX_TOKEN_BYTES

Pair = Tuple[int, int]
# One learned merge: the pair, and how often it occurred when it was chosen.
Merge = Tuple[int, int, int]
# What a trainer tells a trace after each merge: the merge, and the pair that came second
# when it was chosen (with its count; None when no other pair reached min_frequency).
OnMerge = Callable[[Merge, Optional[Merge]], None]


def get_stats(ids: Sequence[int], counts: Optional[Dict[Pair, int]] = None, weight: int = 1) -> Dict[Pair, int]:
    """Count adjacent pairs (every window, overlaps included), ``weight`` times each.

    >>> get_stats([1, 2, 3, 1, 2])
    {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    """
    counts = {} if counts is None else counts
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + weight
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


def check_token_bytes(max_token_bytes: int) -> int:
    if not 1 <= max_token_bytes <= MAX_TOKEN_BYTES:
        raise ValueError(f"max_token_bytes must be in 1..{MAX_TOKEN_BYTES}, got {max_token_bytes}")
    return max_token_bytes


def symbol_lengths(first_id: int) -> List[int]:
    """How many bytes each symbol below ``first_id`` stands for in a text form: a byte 1,
    an atom 3 (its private-use character in UTF-8)."""
    return [1 if i < 256 else ATOM_BYTES for i in range(first_id)]


def symbol_spellings(first_id: int) -> List[bytes]:
    """The bytes each symbol below ``first_id`` stands for, as far as the token rules look at
    them: a byte itself; an atom a private-use character (neither a space nor a colon)."""
    return [bytes([i]) if i < 256 else "\ue000".encode() for i in range(first_id)]


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
        # The adjacent pair that was merged earliest in training (pairs never merged rank last).
        pair = min(zip(ids, ids[1:]), key=lambda p: ranks.get(p, float("inf")))
        if pair not in ranks:
            break  # no pair of this piece was ever merged: it is encoded
        ids = merge(ids, pair, ranks[pair])
    return ids
