"""Byte-level BPE in a page: the lesson every faster path is tested against.

Read this file top to bottom to learn how BPE is trained and applied here. It follows
minbpe (Karpathy): count the pairs with :func:`get_stats`, take the best, :func:`merge` it
everywhere, repeat. Those steps, a few lines each, are in :mod:`functionalbpe.core.bpe`
(as minbpe keeps its helpers in ``base.py``), shared with the fast paths; this file puts
them together. Three rules make it this project's BPE rather than the textbook one,
and every trainer here keeps them: the tie rule (:func:`~functionalbpe.core.bpe.best_pair_key`), the merge policy
(which kinds of symbols may merge: :func:`functionalbpe.core.alphabet.can_merge`) and the
longest token a tokenizer may hold (``max_token_bytes``, :mod:`functionalbpe.core.limits`).

It recounts every pair of every piece before every merge, which is slow on purpose: there is
no bookkeeping to get wrong. The trainer that ``train()`` runs
(:mod:`functionalbpe.core.trainer`: an incremental heap in Python, a C merge loop when it is
built) gives exactly the same merges, and the tests check that it does.

**Training.** Text is cut into pieces (see :mod:`functionalbpe.text.patterns`) and each
distinct piece is counted once. A piece is a sequence of symbols: at the start, its UTF-8
bytes (ids 0–255) and, with a scheme, its atoms (one id each). Then, again and again: count
every adjacent pair, weighted by the piece's count; take the pair with the highest count —
on a tie, the smallest ``(left, right)``; give it the next free id and replace it in every
piece, left to right, without overlap. Training stops when the vocabulary is full, when no
pair is left, or when the best count falls below ``min_frequency``.

**Encoding** replays the merges on a new piece, lowest id (earliest merge) first.

Known answer (minbpe's)::

    >>> merges = train({tuple(b"aaabdaaabac"): 1}, num_merges=3, first_id=256)
    >>> [(a, b) for a, b, count in merges]
    [(97, 97), (97, 98), (256, 257)]
    >>> encode_piece(list(b"aaabdaaabac"), ranks_from_merges(merges, 256))
    [258, 100, 258, 97, 99]
"""
from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from .alphabet import TEXT, can_merge, merged_flags
from .bpe import (Merge, OnMerge, Pair, best_pair_key, check_options, check_token_bytes, encode_piece, get_stats, merge,
                  ranks_from_merges, symbol_lengths, symbol_spellings)
from .limits import MAX_TOKEN_BYTES
from .wordrules import NO_RULES, TokenRules

__all__ = ["Merge", "OnMerge", "Pair", "best_pair_key", "check_options", "check_token_bytes", "encode_piece",
           "get_stats", "merge", "ranks_from_merges", "resume", "runner_up", "symbol_lengths", "symbol_spellings",
           "train"]


def train(
    pieces: Mapping[Sequence[int], int],
    num_merges: Optional[int],
    first_id: int,
    *,
    flags: Optional[Sequence[int]] = None,
    merge_policy: str = "prefix",
    min_frequency: int = 1,
    max_token_bytes: int = MAX_TOKEN_BYTES,
    on_merge: Optional[OnMerge] = None,
    lengths: Optional[Sequence[int]] = None,
    rules: TokenRules = NO_RULES,
    spellings: Optional[Sequence[bytes]] = None,
) -> List[Merge]:
    """Learn up to ``num_merges`` merges (``None``: until no pair is left).

    ``pieces`` maps each distinct piece (a sequence of symbol ids below ``first_id``) to its
    count. ``flags`` gives the kind flags of ids ``0 .. first_id-1`` (default: all text), and
    ``lengths`` the bytes each stands for (default: 1 for a byte, 3 for an atom).
    Returns ``(left, right, count)`` per merge; merge ``k`` gets id ``first_id + k``.
    ``on_merge(merge, runner_up)``, if given, hears of each merge as it is made, with the
    pair that came second (:data:`OnMerge`). ``rules`` (SuperBPE's second stage,
    :mod:`functionalbpe.core.wordrules`) refuse tokens by their bytes, ``spellings`` (default
    :func:`symbol_spellings`).
    """
    policy, flags = check_options(first_id, flags, merge_policy, min_frequency)
    max_token_bytes = check_token_bytes(max_token_bytes)
    # lengths[id]: the bytes the symbol stands for, so that no token outgrows the limit.
    lengths = symbol_lengths(first_id) if lengths is None else list(lengths)
    # spelled[id]: those bytes themselves, for the token rules.
    spelled = symbol_spellings(first_id) if spellings is None else list(spellings)
    # The distinct pieces as lists of ids, each with its count (a piece of count 0 is not there).
    words = {tuple(piece): count for piece, count in pieces.items() if count > 0}
    merges: List[Merge] = []
    while num_merges is None or len(merges) < num_merges:
        # 1. Count every adjacent pair of every piece, weighted by how often the piece occurs.
        stats: Dict[Pair, int] = {}
        for word, count in words.items():
            get_stats(word, stats, count)
        # 2. Keep the pairs that may merge: the policy allows their kinds, and the token they
        #    would make is not too long and breaks no token rule.
        stats = {
            pair: count for pair, count in stats.items()
            if can_merge(policy, flags[pair[0]], flags[pair[1]])
            and lengths[pair[0]] + lengths[pair[1]] <= max_token_bytes
            and rules.allows(spelled[pair[0]] + spelled[pair[1]])
        }
        if not stats:
            break  # no pair left
        # 3. Take the best pair: the highest count, and on a tie the smallest (left, right).
        pair = min(stats, key=lambda p: best_pair_key(p, stats[p]))
        if stats[pair] < min_frequency:
            break  # the best pair is too rare to learn
        # 4. Give it the next id; the new symbol has the kinds and the length of its parts.
        new_id = first_id + len(merges)
        merges.append((pair[0], pair[1], stats[pair]))
        if on_merge is not None:
            on_merge(merges[-1], runner_up(stats, pair, min_frequency))
        flags.append(merged_flags(flags[pair[0]], flags[pair[1]]))
        lengths.append(lengths[pair[0]] + lengths[pair[1]])
        spelled.append(spelled[pair[0]] + spelled[pair[1]])
        # 5. Replace the pair in every piece. Distinct pieces stay distinct: the new id
        #    spells back into the pair, so merging loses nothing.
        words = {tuple(merge(word, pair, new_id)): count for word, count in words.items()}
    return merges


def resume(
    pieces: Mapping[Sequence[int], int],
    base: Sequence[Pair],
    num_merges: Optional[int],
    first_id: int,
    *,
    flags: Optional[Sequence[int]] = None,
    merge_policy: str = "prefix",
    min_frequency: int = 1,
    max_token_bytes: int = MAX_TOKEN_BYTES,
    rules: TokenRules = NO_RULES,
) -> List[Merge]:
    """Continued training: learn up to ``num_merges`` merges after those of ``base``.

    ``base`` holds merges made already (pairs, in order; merge ``k`` has id
    ``first_id + k``), perhaps on other text. They come first: replay them on every piece, as
    encoding would, then train on what is left, numbering the new merges after them. Pieces
    that the base merges make equal are counted together. Only the new merges are returned.
    ``rules`` apply to the new merges (SuperBPE's second stage).

    >>> base = [(104, 105)]                        # "hi" was learned before
    >>> [(a, b) for a, b, _ in resume({tuple(b"hihi"): 3}, base, None, 256)]
    [(256, 256)]
    """
    ranks = ranks_from_merges(base, first_id)
    replayed: Dict[Tuple[int, ...], int] = {}
    for piece, count in pieces.items():
        if count > 0:
            key = tuple(encode_piece(piece, ranks))
            replayed[key] = replayed.get(key, 0) + count
    # The base merges' symbols have the kinds and lengths of their parts, as in training.
    flags = list(flags) if flags is not None else [TEXT] * first_id
    lengths = symbol_lengths(first_id)
    spelled = symbol_spellings(first_id)
    for a, b in base:
        flags.append(merged_flags(flags[a], flags[b]))
        lengths.append(lengths[a] + lengths[b])
        spelled.append(spelled[a] + spelled[b])
    return train(replayed, num_merges, first_id + len(base), flags=flags, merge_policy=merge_policy,
                 min_frequency=min_frequency, max_token_bytes=max_token_bytes, lengths=lengths,
                 rules=rules, spellings=spelled)


def runner_up(stats: Mapping[Pair, int], best: Pair, min_frequency: int = 1) -> Optional[Merge]:
    """The pair that comes second to ``best`` by the same rule, with its count; None when no
    other pair occurs ``min_frequency`` times or more. What a training trace shows, so that
    ties and near-ties can be seen.

    >>> runner_up({(1, 2): 5, (3, 4): 5, (0, 9): 5}, (0, 9))
    (1, 2, 5)
    """
    others = [p for p in stats if p != best and stats[p] >= max(min_frequency, 1)]
    if not others:
        return None
    pair = min(others, key=lambda p: best_pair_key(p, stats[p]))
    return (pair[0], pair[1], stats[pair])



