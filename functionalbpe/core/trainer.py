"""The trainer: from the counted symbol table to the merge table, in C or in Python.

:func:`learn_merges` is the one face. It takes the table of text-form pieces with their counts (a
:class:`~functionalbpe.core.piecetable.PieceTable`, what a scheme's transform returns) and
the :class:`~functionalbpe.core.alphabet.Alphabet` whose atoms those pieces may contain, and
chooses its backend once:

* ``"fast"`` — the C merge loop (``csrc/_trainer.pyx`` over ``csrc/lib/train/train.c``, whose
  opening comment gives the design and the measurements). It reads the flat table itself:
  no Python object per piece.
* ``"python"`` (also called ``"reference"``) — :func:`heap_train`, below: the lesson of
  :mod:`functionalbpe.core.reference` with one piece of bookkeeping, so that it can handle
  megabytes. Instead of recounting every pair after each merge, it recounts only the pieces
  the merge touched, and keeps the candidates in a heap whose stale entries are skipped when
  they reach the top.

``"auto"`` is the fast one when it is built (and ``FUNCTIONALBPE_PUREPYTHON`` is not set),
else the Python one. All give the merges of :func:`functionalbpe.core.reference.train`, which
the tests check: the heap trainer against the lesson, the C loop against both.

:func:`learn_merges_from_symbols` is the same one level down, on pieces already written as symbol ids
with any kind flags — what the tests of the merge loop use.

Example::

    >>> from functionalbpe.core.alphabet import Alphabet
    >>> table = PieceTable.from_dict({"hug": 10, "pug": 5, "hugs": 5})
    >>> learn_merges(table, Alphabet(), 2)  # u g, then h ug
    [(117, 103, 20), (104, 256, 15)]
"""
from __future__ import annotations

import heapq
import os
from collections import Counter, defaultdict
from types import ModuleType
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

from ..errors import FunctionalBPEError
from .limits import MAX_TOKEN_BYTES
from ..util.progress import Progress, ProgressSpec
from ._native import NATIVE, thread_count
from . import parity
from .alphabet import Alphabet, can_merge, merged_flags
from .parity import check_parity_options
from .piecetable import PieceTable, SymbolTable
from .bpe import (Merge, OnMerge, Pair, best_pair_key, check_options, check_token_bytes, merge, symbol_lengths,
                  symbol_spellings)
from .wordrules import NO_RULES, TokenRules, joined_shape, shape_of

if TYPE_CHECKING:  # pragma: no cover
    from .encoder import Encoder

BACKENDS = ("auto", "fast", "python", "reference")

# Counts are 64-bit in the compiled trainer: a higher min_frequency stops training just where
# this one does, since no count can reach either.
MAX_COUNT = 2**63 - 1

FAST_MISSING = (
    "backend='fast' needs the compiled extension, which is not built here "
    "(or FUNCTIONALBPE_PUREPYTHON=1 is set); reinstall with a C compiler or use backend='auto'"
)


def compiled_trainer(backend: str) -> Optional[ModuleType]:
    """The C trainer if ``backend`` chooses it here and now; None for the Python one."""
    if backend not in BACKENDS:
        raise FunctionalBPEError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend in ("python", "reference"):
        return None
    module = NATIVE.trainer
    if module is None and backend == "fast":
        raise FunctionalBPEError(FAST_MISSING)
    return module


def learn_merges(
    symbols: PieceTable,
    alphabet: Alphabet,
    num_merges: Optional[int],
    *,
    merge_policy: str = "prefix",
    min_frequency: int = 1,
    progress: ProgressSpec = False,
    backend: str = "auto",
    on_merge: Optional[OnMerge] = None,
    threads: Optional[int] = None,
) -> List[Merge]:
    """Learn up to ``num_merges`` merges (``None``: until no pair is left) from text-form
    pieces counted in ``symbols``; merge ids start at ``alphabet.num_fixed``, and the
    symbols' kinds are ``alphabet.base_flags()``. Returns ``(left, right, count)`` per merge.
    The C trainer counts the first pairs on ``threads`` threads (None: all cores); the merges
    are the same for any number.

    Counts are held in 64 bits: a count, and the sum over pieces of count × (symbols − 1),
    which bounds every pair's count, must stay below 2**63 (else FunctionalBPEError, on every
    backend alike, before any work: no merge count can pass what a file holds). ``on_merge`` hears of every merge and its
    runner-up (:data:`functionalbpe.core.reference.OnMerge`), from either backend alike.
    """
    first_id = alphabet.num_fixed
    policy, flags = check_options(first_id, alphabet.base_flags(), merge_policy, min_frequency)
    min_frequency = min(min_frequency, MAX_COUNT)
    check_pair_counts(symbols, alphabet)
    compiled = compiled_trainer(backend)
    if compiled is not None:
        atom_ids = {atom.char: alphabet.atom_id(atom.char) for atom in alphabet.atoms}
        return compiled.train_merges_utf8(
            symbols.data, symbols.offsets, symbols.counts, num_merges, first_id, atom_ids, flags, policy,
            min_frequency, progress, on_merge, threads=_workers(threads),
        )
    pieces: Dict[Sequence[int], int] = {}
    for piece, count in symbols.items():
        if count > 0:  # as the C side drops the others
            pieces[alphabet.symbols(piece)] = count
    return heap_train(pieces, num_merges, first_id, flags=flags, merge_policy=merge_policy,
                      min_frequency=min_frequency, progress=progress, on_merge=on_merge)


def _workers(threads: Optional[int]) -> int:
    """The C trainer's threads for ``threads`` (None: all cores)."""
    return thread_count(threads, os.cpu_count() or 1) or 1


def check_pair_counts(symbols: PieceTable, alphabet: Alphabet) -> None:
    """Refuse counts whose pairs could pass MAX_COUNT: the sum over pieces of count ×
    (symbols − 1) bounds every pair count and every merge count."""
    counts, offsets = symbols.counts, symbols.offsets
    if not len(counts) or len(offsets) != len(counts) + 1:
        return  # empty, or not a table: the trainer's own checks name what is wrong
    import numpy as np

    # A cheap bound first (bytes ≥ symbols, in floats); the exact sum only near the limit.
    try:
        lengths = np.diff(np.frombuffer(offsets, dtype=np.int64)).astype(np.float64)
        # A product and a sum, not np.dot: that goes to OpenBLAS, whose threads then spin on
        # every core for a while (6% of the CPU samples of a 20 MB training, `perf record`),
        # taking a core from the counting and encoding workers.
        rough = float((np.frombuffer(counts, dtype=np.int64).astype(np.float64) * np.maximum(lengths - 1, 0)).sum())
    except (TypeError, ValueError):
        return  # not int64 arrays: the trainer's own checks name what is wrong
    if rough < 2.0**62:
        return
    total = 0
    for piece, count in symbols.items():
        if count > 0:
            total += count * max(0, len(alphabet.symbols(piece)) - 1)
    if total > MAX_COUNT:
        raise FunctionalBPEError(
            f"the counts are too large to train on: pairs could occur {total} times, more than 2**63 - 1 "
            "(counts are 64-bit, in a file as in training); scale them down")


def learn_merges_from_symbols(
    pieces: Union[Mapping[Sequence[int], int], SymbolTable],
    num_merges: Optional[int],
    first_id: int,
    *,
    flags: Optional[Sequence[int]] = None,
    merge_policy: str = "prefix",
    min_frequency: int = 1,
    progress: ProgressSpec = False,
    max_token_bytes: int = MAX_TOKEN_BYTES,
    backend: str = "auto",
    on_merge: Optional[OnMerge] = None,
    lengths: Optional[Sequence[int]] = None,
    rules: TokenRules = NO_RULES,
    shapes: Optional[Sequence[int]] = None,
    threads: Optional[int] = None,
) -> List[Merge]:
    """:func:`learn_merges` on pieces written as symbol ids (a mapping, or a flat
    :class:`~functionalbpe.core.piecetable.SymbolTable`; each below ``first_id``, whose kind
    flags are ``flags``; default: all text, and whose text-form bytes are ``lengths``;
    default: a byte 1, an atom 3), the arguments of :func:`functionalbpe.core.reference.train`;
    with ``rules``, ``shapes`` are the symbols' shapes (:mod:`functionalbpe.core.wordrules`;
    default: those of :func:`~functionalbpe.core.bpe.symbol_spellings`).

    >>> learn_merges_from_symbols({(1, 2, 1, 2): 3}, None, 3)
    [(1, 2, 6), (3, 3, 3)]
    """
    compiled = compiled_trainer(backend)
    if compiled is not None:
        policy, checked = check_options(first_id, flags, merge_policy, min_frequency)
        options = (num_merges, first_id, checked, policy, min(min_frequency, MAX_COUNT), progress,
                   check_token_bytes(max_token_bytes), on_merge, lengths, *compiled_rules(rules, first_id, shapes))
        workers = _workers(threads)
        if isinstance(pieces, SymbolTable):
            return compiled.train_merges_flat(pieces.ids, pieces.ends, pieces.counts, *options, threads=workers)
        return compiled.train_merges(pieces, *options, threads=workers)
    return heap_train(pieces, num_merges, first_id, flags=flags, merge_policy=merge_policy,
                      min_frequency=min_frequency, progress=progress, max_token_bytes=max_token_bytes,
                      on_merge=on_merge, lengths=lengths, rules=rules, shapes=shapes)


def symbol_shapes(first_id: int) -> List[int]:
    """The shapes of the symbols below ``first_id`` (:mod:`functionalbpe.core.wordrules`)."""
    return [shape_of(s) for s in symbol_spellings(first_id)]


def compiled_rules(rules: TokenRules, first_id: int,
                   shapes: Optional[Sequence[int]]) -> Tuple[Optional[List[int]], int, bool]:
    """The C trainer's arguments for ``rules``: the shapes (None: no rule), the most words
    (0: any number) and whether ``": "`` may be made."""
    if not rules.refuses_any:
        return None, 0, True
    return (symbol_shapes(first_id) if shapes is None else list(shapes), rules.max_words or 0,
            rules.colon_space)


def resume(
    symbols: PieceTable,
    alphabet: Alphabet,
    base: Sequence[Pair],
    num_merges: Optional[int],
    *,
    merge_policy: str = "prefix",
    min_frequency: int = 1,
    progress: ProgressSpec = False,
    backend: str = "auto",
    rules: TokenRules = NO_RULES,
    threads: Optional[int] = None,
) -> List[Merge]:
    """Continued training (:func:`functionalbpe.core.reference.resume`, the lesson) on
    text-form pieces counted in ``symbols``: the ``base`` merges (ids from
    ``alphabet.num_fixed`` on) are replayed on each distinct piece by the encoder — in C when
    it is built, every piece in one call on ``threads`` threads, which also count the first
    pairs — and the merge loop goes on from there, under ``rules`` when given. Only the new merges are returned.

    >>> from functionalbpe.core.alphabet import Alphabet
    >>> resume(PieceTable.from_dict({"hihi": 3}), Alphabet(), [(104, 105)], None, backend="python")
    [(256, 256, 3)]
    """
    from .encoder import Encoder

    first_id = alphabet.num_fixed
    replayed = _replayed(Encoder(Alphabet(alphabet.atoms, base)), symbols, threads)
    flags = list(alphabet.base_flags())
    lengths = symbol_lengths(first_id)
    shapes = symbol_shapes(first_id)
    for a, b in base:
        flags.append(merged_flags(flags[a], flags[b]))
        lengths.append(lengths[a] + lengths[b])
        shapes.append(joined_shape(shapes[a], shapes[b]))
    # Both loops are given the base tokens' lengths (and shapes), as the lesson is: a base
    # token is many bytes, and a token made of two of them must stay within MAX_TOKEN_BYTES.
    return learn_merges_from_symbols(replayed, num_merges, first_id + len(base), flags=flags, merge_policy=merge_policy,
                        min_frequency=min_frequency, progress=progress, backend=backend, lengths=lengths,
                        rules=rules, shapes=shapes, threads=threads)


def _replayed(encoder: "Encoder", symbols: PieceTable,
              threads: Optional[int]) -> Union[Dict[Sequence[int], int], SymbolTable]:
    """The pieces of ``symbols`` as the ids ``encoder`` gives each (its merges replayed).

    Distinct pieces have distinct ids (ids spell their bytes), so the table keeps its pieces
    and counts. With the compiled encoder, every piece is encoded in one call and the ids stay
    flat: the stage two of SuperBPE holds long pieces that seldom repeat (200 bytes on
    average in English), a table nearly as large as its corpus, and one call of the encoder
    per piece, with a tuple and a dict entry each, took twice the C encoding's own time on
    57 MB of the shared corpora. Data that is not valid UTF-8 (a lone surrogate counted as
    "surrogatepass" writes it) takes the loop below."""
    native = encoder.native
    if native is not None and len(symbols):
        try:
            ids, ends = native.encode_each_piece(symbols.data, symbols.offsets, threads)
        except ValueError:
            pass
        else:
            return SymbolTable(ids, ends, symbols.counts)
    replayed: Dict[Sequence[int], int] = {}
    for piece, count in symbols.items():
        if count > 0:
            key = tuple(encoder.encode_piece(piece))
            replayed[key] = replayed.get(key, 0) + count
    return replayed


def heap_train(
    pieces: Mapping[Sequence[int], int],
    num_merges: Optional[int],
    first_id: int,
    *,
    flags: Optional[Sequence[int]] = None,
    merge_policy: str = "prefix",
    min_frequency: int = 1,
    progress: ProgressSpec = False,
    max_token_bytes: int = MAX_TOKEN_BYTES,
    on_merge: Optional[OnMerge] = None,
    lengths: Optional[Sequence[int]] = None,
    rules: TokenRules = NO_RULES,
    shapes: Optional[Sequence[int]] = None,
) -> List[Merge]:
    """The Python backend: :func:`functionalbpe.core.reference.train`, incrementally.

    Same arguments and result (``shapes`` as in :func:`learn_merges_from_symbols`); pairs that the policy
    forbids, that would make a token longer than ``max_token_bytes`` or that a token rule
    refuses, are never counted, so they never win.
    """
    policy, flags = check_options(first_id, flags, merge_policy, min_frequency)
    max_token_bytes = check_token_bytes(max_token_bytes)
    lengths = symbol_lengths(first_id) if lengths is None else list(lengths)
    shapes = symbol_shapes(first_id) if shapes is None else list(shapes)
    check_rules = rules.refuses_any

    def mergeable(pair: Pair) -> bool:
        return can_merge(policy, flags[pair[0]], flags[pair[1]]) and (
            lengths[pair[0]] + lengths[pair[1]] <= max_token_bytes
        ) and (not check_rules or rules.allow_shapes(shapes[pair[0]], shapes[pair[1]]))

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
        if on_merge is not None:
            on_merge(merges[-1], _runner_up(heap, stats, pair, min_frequency))
        flags.append(merged_flags(flags[pair[0]], flags[pair[1]]))
        lengths.append(lengths[pair[0]] + lengths[pair[1]])
        shapes.append(joined_shape(shapes[pair[0]], shapes[pair[1]]))

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


def _runner_up(heap: List[Tuple[int, int, int]], stats: Mapping[Pair, int], best: Pair,
               min_frequency: int) -> Optional[Merge]:
    """For a trace: the next live entry of the heap once ``best`` is out of it, i.e. the pair
    that came second. Stale entries (and copies of ``best``) met on the way are dropped, as
    the merge loop would drop them; the runner-up itself stays."""
    while heap:
        neg_count, a, b = heap[0]
        if (a, b) != best and stats.get((a, b), 0) == -neg_count > 0:
            return (a, b, -neg_count) if -neg_count >= min_frequency else None
        heapq.heappop(heap)
    return None


def learn_parity_merges(
    tables: Sequence[PieceTable],
    alphabet: Alphabet,
    num_merges: Optional[int],
    *,
    dev: Optional[Sequence[PieceTable]] = None,
    target_ratios: Optional[Sequence[float]] = None,
    variant: str = "base",
    window_size: int = 100,
    alpha: float = 2,
    global_merges: int = 0,
    merge_policy: str = "prefix",
    min_frequency: int = 1,
    progress: ProgressSpec = False,
    backend: str = "auto",
) -> List[Merge]:
    """Parity-aware training (:mod:`functionalbpe.core.parity`) on one table of text-form
    pieces per language, with ``dev`` tables (one per language) or ``target_ratios``.

    ``"fast"``: the C trainer of ``csrc/lib/train/train_parity.c``, incremental; ``"python"``: the
    lesson itself, which recounts everything before each merge (fine for tests and small
    corpora, slow on real ones). Both give the same merges, which the tests check.

    >>> from functionalbpe.core.alphabet import Alphabet
    >>> en, el = PieceTable.from_dict({"the": 5}), PieceTable.from_dict({"το": 2})
    >>> learn_parity_merges([en, el], Alphabet(), 1, dev=[en, el])  # English takes 15 dev tokens, Greek 8
    [(104, 101, 5)]
    """
    first_id = alphabet.num_fixed
    check_parity_options(len(tables), dev, target_ratios, variant, window_size, alpha, global_merges)
    policy, flags = check_options(first_id, alphabet.base_flags(), merge_policy, min_frequency)
    min_frequency = min(min_frequency, MAX_COUNT)
    compiled = compiled_trainer(backend)
    if compiled is not None:
        flat = [(t.data, t.offsets, t.counts) for t in tables]
        dev_flat = None if dev is None else [(t.data, t.offsets, t.counts) for t in dev]
        ratios = None if target_ratios is None else [float(r) for r in target_ratios]
        atom_ids = {atom.char: alphabet.atom_id(atom.char) for atom in alphabet.atoms}
        merges = compiled.train_parity_utf8(
            flat, dev_flat, ratios, num_merges, first_id, atom_ids, flags, policy, min_frequency,
            variant == "window", window_size, float(alpha), global_merges, progress,
        )
        return [(a, b, c) for a, b, c, _ in merges]

    def symbols(table: PieceTable) -> Dict[Sequence[int], int]:
        out: Dict[Sequence[int], int] = {}
        for piece, count in table.items():
            key = alphabet.symbols(piece)
            out[key] = out.get(key, 0) + count
        return out

    return parity.learn_parity_merges(
        [symbols(t) for t in tables], num_merges, first_id,
        dev=None if dev is None else [symbols(t) for t in dev], target_ratios=target_ratios,
        variant=variant, window_size=window_size, alpha=alpha, global_merges=global_merges,
        flags=flags, merge_policy=merge_policy, min_frequency=min_frequency,
    )
