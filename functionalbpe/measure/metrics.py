"""The measures of the tokenizer report, one function per measure.

Every function takes plain counts (never a tokenizer), so that each formula can be checked
by hand; :mod:`functionalbpe.measure.report` gathers the counts and ``docs/metrics.md`` defines
every measure again in words. Symbols used below, for one tokenizer on one text:

* ``T`` — tokens the tokenizer produces; ``W`` — words, whitespace-separated
  (:func:`count_words`); ``B`` — UTF-8 bytes of the text; ``C`` — characters (code points);
* ``n(t)`` — how often token ``t`` occurs, ``p(t) = n(t) / T``;
* ``V`` — vocabulary size (every id, special tokens included).

A ratio whose denominator is zero is ``None`` (no text, no tokens), never a crash and
never a made-up number.

Example::

    >>> fertility(tokens=23, words=10)
    2.3
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

# -- the text ---------------------------------------------------------------------------------


def count_words(text: str) -> int:
    """``W``: the whitespace-separated words of ``text`` (``len(text.split())``).

    Whitespace is what :meth:`str.isspace` says it is: spaces, tabs, newlines, NBSP and the
    other Unicode spaces. A text in a script written without spaces (Chinese, Japanese,
    Thai) has few "words" by this definition, so its fertility is not comparable with that
    of a spaced language; compare such languages on parallel text by their token count.

    >>> count_words("ab  cd\\n e\\u00a0f")
    4
    """
    return len(text.split())


def _ratio(numerator: float, denominator: float) -> Optional[float]:
    return numerator / denominator if denominator else None


def share(part: float, whole: float) -> Optional[float]:
    """A part of a whole: ``part / whole`` (None for an empty whole).

    >>> share(1, 4)
    0.25
    """
    return _ratio(part, whole)


# -- length -----------------------------------------------------------------------------------


def fertility(tokens: int, words: int) -> Optional[float]:
    """Tokens per word: ``T / W``. Lower is cheaper.

    >>> fertility(23, 10)
    2.3
    """
    return _ratio(tokens, words)


def bytes_per_token(num_bytes: int, tokens: int) -> Optional[float]:
    """UTF-8 bytes of the text per token: ``B / T``. Higher is cheaper.

    >>> bytes_per_token(28, 23) == 28 / 23
    True
    """
    return _ratio(num_bytes, tokens)


def chars_per_token(chars: int, tokens: int) -> Optional[float]:
    """Characters (code points) of the text per token: ``C / T``. Higher is cheaper.

    >>> chars_per_token(27, 23) == 27 / 23
    True
    """
    return _ratio(chars, tokens)


def compression_ratio(num_bytes: int, tokens: int) -> Optional[float]:
    """How many times shorter the token sequence is than the byte sequence: ``B / T``.

    The same number as :func:`bytes_per_token`, read as a ratio of lengths: a byte-level
    model needs ``B`` steps for the text, this tokenizer ``T``.

    >>> compression_ratio(100, 25)
    4.0
    """
    return _ratio(num_bytes, tokens)


def relative_tokens(tokens: int, baseline_tokens: int) -> Optional[float]:
    """Tokens relative to the baseline tokenizer on the same text: ``T / T_baseline``.

    Below 1 this tokenizer needs fewer tokens than the baseline.

    >>> relative_tokens(23, 28) == 23 / 28
    True
    """
    return _ratio(tokens, baseline_tokens)


def context_capacity(context: int, words: int, tokens: int) -> Optional[int]:
    """Words of this text that fit in a context of ``N`` tokens: ``floor(N · W / T)``.

    >>> context_capacity(8192, 10, 23)
    3561
    """
    if not tokens:
        return None
    return (context * words) // tokens


# -- the token distribution ---------------------------------------------------------------------


def byte_fallback_rate(single_byte_tokens: int, tokens: int) -> Optional[float]:
    """Share of tokens that are single bytes: ``T_byte / T``.

    What "a single byte" is depends on the tokenizer (``docs/metrics.md``): for ours a byte
    id 0–255; for tiktoken and HF byte-level BPE a token of one byte; for SentencePiece and
    HF models with byte fallback a ``<0xHH>`` byte piece.

    >>> byte_fallback_rate(20, 23) == 20 / 23
    True
    """
    return _ratio(single_byte_tokens, tokens)


def byte_fallback_non_ascii_share(non_ascii_single_byte_tokens: int, single_byte_tokens: int) -> Optional[float]:
    """Of the single-byte tokens, the share that are non-ASCII bytes (0x80–0xFF):
    ``T_byte≥0x80 / T_byte``.

    An ASCII byte token is usually a whole character (``.``, ``(``); a non-ASCII one is a
    piece of a character that the vocabulary had no better token for: real fallback.

    >>> byte_fallback_non_ascii_share(2, 20)
    0.1
    """
    return _ratio(non_ascii_single_byte_tokens, single_byte_tokens)


def unknown_rate(unknown_tokens: int, tokens: int) -> Optional[float]:
    """Share of tokens that are the unknown token (text the tokenizer lost): ``T_unk / T``.

    Always 0 for byte-level tokenizers, which can spell every text.

    >>> unknown_rate(0, 23)
    0.0
    """
    return _ratio(unknown_tokens, tokens)


def _positive(counts: Iterable[int]) -> Any:
    """The positive counts, as float64 (exact for counts below 2⁵³)."""
    values = np.fromiter(counts, dtype=np.float64)
    return values[values > 0]


def entropy_bits(counts: Iterable[int]) -> Optional[float]:
    """Entropy of the token distribution in bits: ``H = −Σ p(t) · log₂ p(t)``.

    ``counts`` are the ``n(t)``; tokens that never occur add nothing.

    >>> entropy_bits([1, 1, 1, 1])
    2.0
    """
    values = _positive(counts)
    total = values.sum()
    if not total:
        return None
    p = values / total
    h = float(-(p * np.log2(p)).sum())
    return h + 0.0  # -0.0 for a single token type reads better as 0.0


def effective_vocab(entropy: Optional[float]) -> Optional[float]:
    """``2^H``: how many equally frequent tokens would have the same entropy.

    >>> effective_vocab(2.0)
    4.0
    """
    return None if entropy is None else 2.0 ** entropy


# -- the vocabulary -------------------------------------------------------------------------------


def unused_entries(entries: Iterable[int], counts: Mapping[int, int]) -> List[int]:
    """Vocabulary entries that never occur in the text: ``{t ∈ entries : n(t) = 0}``.

    Candidates for under-trained tokens: their embeddings would never be updated on text
    like this. ``entries`` are the ids to consider (the report leaves out special tokens).

    >>> unused_entries(range(5), {1: 3, 4: 1})
    [0, 2, 3]
    """
    return [t for t in entries if not counts.get(t)]


# The boundary-marker scheme's shift codes as surfaces show them: ``↑¦the¦`` is ``The``
# written as a lower-case word after a code, so it is a case variant of ``¦the¦``.
SHIFT_GLYPHS = str.maketrans("", "", "↑⇑")


def case_key(surface: str) -> str:
    """The key of a case family: the surface lower-cased (``str.lower``), shift codes left
    out (a token that carries one is a case variant of its unshifted twin).

    >>> case_key("The"), case_key("↑¦the¦"), case_key("⇑¦wow¦")
    ('the', '¦the¦', '¦wow¦')
    """
    return surface.translate(SHIFT_GLYPHS).lower()


def space_key(surface: str) -> str:
    """The key of a space family: the surface with one leading space removed."""
    return surface[1:] if surface.startswith(" ") else surface


def duplicate_key(surface: str) -> str:
    """The key of a duplicate family: one leading space removed, then lower-cased."""
    return case_key(space_key(surface))


def families(surfaces: Mapping[int, str], key) -> List[List[int]]:
    """Groups of at least two entries whose surfaces have the same ``key``, each sorted.

    ``surfaces`` maps an id to the text the token stands for. With :func:`duplicate_key`,
    ``the``, `` the``, ``The`` and `` THE`` form one family of four.

    >>> families({1: "the", 2: " the", 3: "The", 4: "cat"}, duplicate_key)
    [[1, 2, 3]]
    """
    groups: Dict[str, List[int]] = defaultdict(list)
    for token, surface in surfaces.items():
        groups[key(surface)].append(token)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def redundant_entries(groups: Sequence[Sequence[int]]) -> int:
    """Entries beyond the first of each family: ``Σ (|F| − 1)``.

    The vocabulary slots a case- and space-aware vocabulary would not need.

    >>> redundant_entries([[1, 2, 3], [7, 8]])
    3
    """
    return sum(len(g) - 1 for g in groups)


def embedding_cost(vocab_size: int, width: int, bytes_per_param: float = 2) -> float:
    """Bytes of one embedding matrix: ``V × d × bytes per parameter``.

    ``d`` is the model width; 2 bytes per parameter is bf16/fp16. A model whose output
    layer is not tied to its input embedding pays this twice.

    >>> embedding_cost(258, 4, 2)
    2064
    """
    return vocab_size * width * bytes_per_param


# -- training -------------------------------------------------------------------------------------


def merge_savings(merge_counts: Sequence[int]) -> List[int]:
    """The cumulative merge-savings curve: ``S(k) = Σ_{i ≤ k} c_i``.

    ``c_i`` is the count of merge ``i`` when it was made (``Tokenizer.merge_counts``): how
    many tokens it saved on the training text, counted as the trainer counts pairs, every
    window included, so a run such as ``aaa`` counts 2 for ``(a, a)`` though one merge
    fits. ``S(k)`` is the saving of the first ``k + 1`` merges; the last ``c_i`` is what the
    last vocabulary slot bought.

    >>> merge_savings([5, 3, 3, 1])
    [5, 8, 11, 12]
    """
    out: List[int] = []
    total = 0
    for count in merge_counts:
        total += count
        out.append(total)
    return out


# -- compression and length, per document ----------------------------------------------------------


def count_lines(text: str, ends_document: bool = True) -> int:
    """``L``: the lines of ``text``: its line feeds, plus one for a last line without one.

    ``ends_document=False`` counts a piece of a document whose last line goes on in the next
    piece (the report counts a long document a unit at a time).

    >>> count_lines("a\\nb"), count_lines("a\\nb\\n"), count_lines(""), count_lines("a", ends_document=False)
    (2, 2, 0, 0)
    """
    feeds = text.count("\n")
    return feeds + (1 if ends_document and text and not text.endswith("\n") else 0)


def mean(values: Sequence[float]) -> Optional[float]:
    """The arithmetic mean (None for no values).

    >>> mean([1, 2, 6])
    3.0
    """
    return sum(values) / len(values) if values else None


def coefficient_of_variation(values: Sequence[float]) -> Optional[float]:
    """Sample standard deviation over the mean: ``s / x̄`` with ``s² = Σ (x − x̄)² / (n − 1)``.

    None for fewer than two values or a zero mean.

    >>> coefficient_of_variation([1.0, 3.0])  # x̄ = 2, s = √2
    0.7071067811865476
    """
    n = len(values)
    if n < 2:
        return None
    m = sum(values) / n
    if not m:
        return None
    return math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1)) / m


# -- information ------------------------------------------------------------------------------------


RENYI_ALPHAS = (1.0, 2.0, 2.5, 3.0)


def renyi_entropy(counts: Iterable[int], alpha: float) -> Optional[float]:
    """Rényi entropy of the token distribution in bits: ``H_α = log₂(Σ p(t)^α) / (1 − α)``.

    At ``α = 1`` it is the Shannon entropy (:func:`entropy_bits`, its limit). Zouhar et al.
    (2023, "Tokenization and the Noiseless Channel") found ``α = 2.5`` to predict downstream
    quality best; larger ``α`` weighs the most frequent tokens more.

    >>> renyi_entropy([1, 1, 1, 1], 2.0), renyi_entropy([2, 1, 1], 1.0)
    (2.0, 1.5)
    """
    if alpha == 1.0:
        return entropy_bits(counts)
    values = _positive(counts)
    total = values.sum()
    if not total:
        return None
    return float(np.log2(((values / total) ** alpha).sum())) / (1.0 - alpha) + 0.0


def renyi_efficiency(counts: Iterable[int], alpha: float, vocab_size: int) -> Optional[float]:
    """Rényi efficiency: ``H_α / log₂ V`` with ``V`` the declared vocabulary size.

    1 when every id of the vocabulary is used equally often; lower when a few tokens carry
    most of the text. Comparable across tokenizers on the same text.

    >>> renyi_efficiency([1, 1, 1, 1], 2.0, 16)
    0.5
    """
    h = renyi_entropy(counts, alpha)
    if h is None or vocab_size < 2:
        return None
    return h / math.log2(vocab_size)


def average_token_rank(counts: Iterable[int]) -> Optional[float]:
    """Mean frequency rank of the tokens: ``Σ_r r · n_(r) / T``.

    The token types seen are ranked by count, the most frequent first, from 1; the mean is
    over every occurrence. (Types with equal counts may be ranked either way: the sum is the
    same.) It cannot exceed the number of types seen, so compare it only between vocabularies
    of one size.

    >>> average_token_rank([5, 3, 2])  # (1·5 + 2·3 + 3·2) / 10
    1.7
    """
    values = -np.sort(-_positive(counts))
    total = values.sum()
    if not total:
        return None
    return float((np.arange(1, len(values) + 1) * values).sum() / total)


def successor_entropy(contexts: Any, counts: Any, min_count: int = 3) -> Tuple[Optional[float], Optional[float]]:
    """How predictable the next token is after a context (a token, or two): ``(η, H)``.

    ``contexts[i]`` is the context of the ``i``-th distinct (context, next token) pair and
    ``counts[i]`` its count, the pairs sorted by context (numpy arrays or sequences). For a
    context ``c`` seen ``n_c`` times with ``k_c`` distinct successors of counts ``n_{c,s}``,
    ``H_c = −Σ_s (n_{c,s}/n_c) log₂(n_{c,s}/n_c)``.

    * ``η`` — Shannon efficiency of the successors (after Poelman et al. 2025): the mean over
      contexts seen at least ``min_count`` times, weighted by ``n_c``, of ``H_c / log₂ k_c``
      (0 for a context with one successor). The normalizer is the context's own number of
      distinct successors. 1: every context's successors are equally frequent.
    * ``H`` — the conditional entropy of the next token given the context, in bits, over every
      context: ``Σ_c (n_c / N) H_c``.

    >>> successor_entropy([7, 7, 8], [2, 2, 4])  # after 7: two successors, equally often
    (0.5, 0.5)
    """
    ctx = np.asarray(contexts, dtype=np.int64)
    n = np.asarray(counts, dtype=np.float64)
    if not len(n) or not n.sum():
        return None, None
    starts = np.flatnonzero(np.r_[True, ctx[1:] != ctx[:-1]])
    n_c = np.add.reduceat(n, starts)
    k_c = np.diff(np.r_[starts, len(n)])
    s_c = np.add.reduceat(n * np.log2(n), starts)
    h_c = np.maximum(np.log2(n_c) - s_c / n_c, 0.0)  # rounding can leave -1e-16
    h = float((n_c * h_c).sum() / n_c.sum())
    keep = n_c >= min_count
    if not keep.any():
        return None, h
    eta_c = np.where(k_c > 1, h_c / np.log2(np.maximum(k_c, 2)), 0.0)
    return float((n_c * eta_c)[keep].sum() / n_c[keep].sum()), h


# -- numbers --------------------------------------------------------------------------------------


def digit_group_f1(length: int, cuts: Iterable[int]) -> float:
    """F1 of a number's token boundaries against its three-digit groups.

    ``cuts`` are the token boundaries inside a number of ``length`` digits, each as the number
    of digits before it. The ideal cuts group digits by three from the right: ``length − 3``,
    ``length − 6``, …, above 0. ``F1 = 2·|A ∩ I| / (|A| + |I|)`` for placed cuts ``A`` and ideal
    ``I``; a number that needs no cut and gets none scores 1.

    >>> digit_group_f1(7, [1, 4]), digit_group_f1(7, [2, 5]), digit_group_f1(2, []), digit_group_f1(2, [1])
    (1.0, 0.0, 1.0, 0.0)
    """
    placed = set(cuts)
    ideal = set(range(length - 3, 0, -3))
    if not placed and not ideal:
        return 1.0
    return 2 * len(placed & ideal) / (len(placed) + len(ideal))


def pattern_entropy(patterns: Mapping[Any, int]) -> Optional[float]:
    """Entropy in bits of how numbers of one length are split (``{pattern: count}``).

    0 when every number of that length is split the same way.

    >>> pattern_entropy({(2,): 1, (1,): 1, (3,): 1}) == math.log2(3)
    True
    """
    return entropy_bits(patterns.values())


# -- code -------------------------------------------------------------------------------------------


def spearman(pairs: Mapping[Tuple[float, float], int]) -> Optional[float]:
    """Spearman's rank correlation of weighted pairs ``{(x, y): how many}``.

    Ties get their average rank; it is the Pearson correlation of the ranks. None when ``x``
    or ``y`` takes a single value.

    >>> spearman({(1, 1): 1, (2, 2): 1, (3, 3): 1}), spearman({(1, 3): 1, (2, 2): 1, (3, 1): 1})
    (1.0, -1.0)
    """

    def ranks(values: Dict[float, int]) -> Dict[float, float]:
        out, below = {}, 0
        for v in sorted(values):
            n = values[v]
            out[v] = below + (n + 1) / 2
            below += n
        return out

    xs: Dict[float, int] = defaultdict(int)
    ys: Dict[float, int] = defaultdict(int)
    for (x, y), n in pairs.items():
        xs[x] += n
        ys[y] += n
    if len(xs) < 2 or len(ys) < 2:
        return None
    rx, ry = ranks(xs), ranks(ys)
    total = sum(pairs.values())
    mx = sum(rx[x] * n for x, n in xs.items()) / total
    my = sum(ry[y] * n for y, n in ys.items()) / total
    cov = sum((rx[x] - mx) * (ry[y] - my) * n for (x, y), n in pairs.items())
    vx = sum((rx[x] - mx) ** 2 * n for x, n in xs.items())
    vy = sum((ry[y] - my) ** 2 * n for y, n in ys.items())
    return cov / math.sqrt(vx * vy)


# -- integrity -----------------------------------------------------------------------------------


def code_points(text: str) -> Any:
    """The code points of ``text`` as a uint32 array (a lone surrogate as itself).

    >>> code_points("aé").tolist()
    [97, 233]
    """
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance: the fewest insertions, deletions and substitutions from a to b.

    One numpy row per character of ``a`` (O(|a|·|b|) work, O(|b|) memory): a row's insertions
    are a running minimum, ``D[j] = min_k≤j (D'[k] + j − k)``.

    >>> edit_distance("hello", "helo"), edit_distance("a", "abcd"), edit_distance("", "ab")
    (1, 3, 2)
    """
    x, y = code_points(a), code_points(b)
    steps = np.arange(len(y) + 1, dtype=np.int64)
    row = steps.copy()
    for i, ca in enumerate(x, start=1):
        best = np.empty_like(row)
        best[0] = i
        np.minimum(row[:-1] + (y != ca), row[1:] + 1, out=best[1:])
        row = np.minimum.accumulate(best - steps) + steps
    return int(row[-1])


_SPACES = np.array([ord(c) for c in map(chr, range(0x3001)) if c.isspace()], dtype=np.uint32)


def whitespace_kept(a: str, b: str) -> int:
    """Whitespace characters of ``a`` matched in an alignment of ``a`` with ``b``.

    The alignment is a longest common subsequence of the two texts, chosen among the longest
    to match the most whitespace (``str.isspace``): one score, ``matches · (|a| + 1) +
    whitespace matches``, maximized a numpy row at a time.

    >>> whitespace_kept("a b\\tc", "a b c"), whitespace_kept("hello world", "helloworld ")
    (1, 0)
    """
    x, y = code_points(a), code_points(b)
    big = len(x) + 1
    space = np.isin(x, _SPACES)
    row = np.zeros(len(y) + 1, dtype=np.int64)
    for ca, is_space in zip(x, space):
        best = row.copy()
        match = y == ca
        best[1:][match] = np.maximum(row[1:][match], row[:-1][match] + big + int(is_space))
        row = np.maximum.accumulate(best)
    return int(row[-1] % big)
