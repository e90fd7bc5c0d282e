"""Parity-aware BPE in a page: the lesson the compiled parity trainer is tested against.

Plain BPE merges the pair that is most frequent in the whole corpus, so the languages with
the most text get the most merges and the others pay in tokens. Parity-aware BPE
(Foroutan, Meister, Paul, Niklaus, Ahmadi, Bosselut, Sennrich 2025, arXiv 2508.04796)
changes one thing: before each merge it asks *which language is worst off now*, and merges
the pair that is most frequent in **that language's** training text. The merge is then made
in every language, as always. Like :mod:`functionalbpe.core.reference`, this file recounts
everything before every merge, on purpose: there is no bookkeeping to get wrong.

**Worst off** is measured one of two ways:

* with a multi-parallel development set (``dev``: the same text in every language), the
  language whose dev text takes the most tokens now;
* with target compression ratios (``target_ratios``, one positive number per language:
  the compression ``tokens_at_start / tokens_now`` it should reach, relative to the
  others), the language whose training text is least compressed relative to its target:
  the smallest ``(tokens_at_start / tokens_now) / ratio``, i.e. the largest
  ``tokens_now × ratio / tokens_at_start``, computed in floating point exactly as written.
  Only the ratios between languages matter.

Tokens are counted over every piece (one-symbol pieces too), each weighted by its count.

**Variants.** ``"base"`` takes the worst-off language. ``"window"`` (moving-window balancing)
remembers the languages chosen by the last ``window_size`` parity merges and passes over a
language chosen more than its share: it takes the worst-off language whose number of
appearances ``k`` in the window satisfies ``k × L ≤ alpha × window_size`` (``L`` languages);
if none does, the worst-off one. ``global_merges = M`` (the hybrid) makes the first ``M``
merges by the global count, as plain BPE does, and only then turns to parity; those merges
do not enter the window.

**Ties and stops, exactly.** Two languages equally worst off: the one given first. Two pairs
equally frequent in the chosen language: the smallest ``(left, right)``, the project's rule
(:func:`~functionalbpe.core.reference.best_pair_key`). A language takes part only while
its best pair occurs at least ``min_frequency`` times in it; training stops when no
language takes part (in the global phase, when the global best is below
``min_frequency``). Each merge records its **global** count: the pair's count summed over
the languages' training text, as plain BPE records it.

Example: English has more text, so plain BPE merges one of its pairs first (``h e``); with a
parallel dev text where Greek takes more tokens, parity merges a pair of Greek's (two bytes
of ``το``) first::

    >>> en = {tuple(b"the"): 5}
    >>> el = {tuple("το".encode()): 2}
    >>> dev = [{tuple(b"the"): 1}, {tuple("το".encode()): 1}]
    >>> [(a, b) for a, b, _ in learn_parity_merges([en, el], 1, 256, dev=dev)]
    [(132, 206)]
    >>> [(a, b) for a, b, _ in learn_parity_merges([en, el], 1, 256, global_merges=1, dev=dev)]
    [(104, 101)]
"""
from __future__ import annotations

from collections import deque
from typing import Deque, Dict, List, Mapping, Optional, Sequence, Tuple

from .limits import MAX_TOKEN_BYTES
from .alphabet import can_merge, merged_flags
from .bpe import Merge, Pair, best_pair_key, check_options, check_token_bytes, get_stats, merge, symbol_lengths

VARIANTS = ("base", "window")

Table = Mapping[Sequence[int], int]


def check_parity_options(
    n_languages: int,
    dev: Optional[Sequence[object]],
    target_ratios: Optional[Sequence[float]],
    variant: str,
    window_size: int,
    alpha: float,
    global_merges: int,
) -> None:
    """The errors that bad parity options deserve (ValueError), shared by every backend."""
    if n_languages < 1:
        raise ValueError("parity-aware training needs at least one language")
    if (dev is None) == (target_ratios is None):
        raise ValueError("parity-aware training needs dev texts or target_ratios (one of them)")
    if dev is not None and len(dev) != n_languages:
        raise ValueError(f"dev gives {len(dev)} tables for {n_languages} languages")
    if target_ratios is not None:
        if len(target_ratios) != n_languages:
            raise ValueError(f"target_ratios gives {len(target_ratios)} ratios for {n_languages} languages")
        for r in target_ratios:
            if not (isinstance(r, (int, float)) and not isinstance(r, bool) and 0 < r < float("inf")):
                raise ValueError(f"a target ratio must be a positive, finite number, got {r!r}")
    if variant not in VARIANTS:
        raise ValueError(f"parity_variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if isinstance(window_size, bool) or not isinstance(window_size, int) or not 1 <= window_size <= 2**31 - 1:
        raise ValueError(f"window_size must be an integer from 1 on, got {window_size!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < float("inf"):
        raise ValueError(f"alpha must be a positive, finite number, got {alpha!r}")
    if isinstance(global_merges, bool) or not isinstance(global_merges, int) or not 0 <= global_merges <= 2**31 - 1:
        raise ValueError(f"global_merges must be an integer from 0 to 2**31 - 1, got {global_merges!r}")


def tokens(table: Mapping[Tuple[int, ...], int]) -> int:
    """How many symbols the table's pieces take, each piece counted as often as it occurs.

    >>> tokens({(1, 2, 3): 2, (4,): 5})
    11
    """
    return sum(len(piece) * count for piece, count in table.items())


def behind(now: Sequence[int], start: Optional[Sequence[int]], ratios: Optional[Sequence[float]]) -> List[float]:
    """How far behind each language is (larger: worse off): its dev tokens now, or, with
    target ratios, ``now × ratio / start`` of its training tokens."""
    if ratios is None:
        return [float(n) for n in now]
    assert start is not None
    return [float(n) * r / float(s) if s else 0.0 for n, s, r in zip(now, start, ratios)]


def choose_language(
    candidates: Sequence[int], scores: Sequence[float], window: Optional[Deque[int]],
    n_languages: int, alpha: float, window_size: int,
) -> int:
    """The worst-off candidate (highest score, then the one given first); in the window
    variant, the worst-off one not chosen more than its share of the window."""
    order = sorted(candidates, key=lambda lang: (-scores[lang], lang))
    if window is not None:
        for lang in order:
            if window.count(lang) * n_languages <= alpha * window_size:
                return lang
    return order[0]


def learn_parity_merges(
    languages: Sequence[Table],
    num_merges: Optional[int],
    first_id: int,
    *,
    dev: Optional[Sequence[Table]] = None,
    target_ratios: Optional[Sequence[float]] = None,
    variant: str = "base",
    window_size: int = 100,
    alpha: float = 2,
    global_merges: int = 0,
    flags: Optional[Sequence[int]] = None,
    merge_policy: str = "prefix",
    min_frequency: int = 1,
    max_token_bytes: int = MAX_TOKEN_BYTES,
) -> List[Merge]:
    """Learn up to ``num_merges`` merges (``None``: until no language can take part) from one
    table ``{piece as symbol ids: count}`` per language, with ``dev`` tables (one per
    language, same order) or ``target_ratios``. The other arguments are those of
    :func:`functionalbpe.core.reference.train`. Returns ``(left, right, global count)``.
    """
    check_parity_options(len(languages), dev, target_ratios, variant, window_size, alpha, global_merges)
    policy, flags = check_options(first_id, flags, merge_policy, min_frequency)
    max_token_bytes = check_token_bytes(max_token_bytes)
    lengths = symbol_lengths(first_id)
    n = len(languages)
    words = [{tuple(p): c for p, c in table.items() if c > 0} for table in languages]
    dev_words = None if dev is None else [{tuple(p): c for p, c in table.items() if c > 0} for table in dev]
    start = [tokens(table) for table in words]
    window: Optional[Deque[int]] = deque(maxlen=window_size) if variant == "window" else None
    merges: List[Merge] = []
    while num_merges is None or len(merges) < num_merges:
        # 1. Count the mergeable pairs of every language (as reference.train does, per language).
        stats: List[Dict[Pair, int]] = []
        for table in words:
            counts: Dict[Pair, int] = {}
            for word, count in table.items():
                get_stats(word, counts, count)
            stats.append({
                pair: c for pair, c in counts.items()
                if can_merge(policy, flags[pair[0]], flags[pair[1]])
                and lengths[pair[0]] + lengths[pair[1]] <= max_token_bytes
            })
        total: Dict[Pair, int] = {}
        for counts in stats:
            for pair, c in counts.items():
                total[pair] = total.get(pair, 0) + c
        # 2. Whose pairs count: everyone's (the global phase) or the worst-off language's.
        if len(merges) < global_merges:
            chosen = total
        else:
            best = [max(counts.values(), default=0) for counts in stats]
            candidates = [lang for lang in range(n) if best[lang] >= min_frequency]
            if not candidates:
                break  # no language has a pair frequent enough
            now = [tokens(table) for table in (dev_words if dev_words is not None else words)]
            lang = choose_language(candidates, behind(now, start, target_ratios), window, n, alpha, window_size)
            if window is not None:
                window.append(lang)
            chosen = stats[lang]
        if not chosen:
            break  # no pair left
        # 3. Its best pair: the highest count, then the smallest (left, right).
        pair = min(chosen, key=lambda p: best_pair_key(p, chosen[p]))
        if chosen[pair] < min_frequency:
            break
        # 4. Record it with its global count; replace it everywhere, dev text included.
        new_id = first_id + len(merges)
        merges.append((pair[0], pair[1], total[pair]))
        flags.append(merged_flags(flags[pair[0]], flags[pair[1]]))
        lengths.append(lengths[pair[0]] + lengths[pair[1]])
        words = [{tuple(merge(w, pair, new_id)): c for w, c in table.items()} for table in words]
        if dev_words is not None:
            dev_words = [{tuple(merge(w, pair, new_id)): c for w, c in table.items()} for table in dev_words]
    return merges


__all__ = ["learn_parity_merges", "tokens", "behind", "choose_language", "check_parity_options", "VARIANTS"]
