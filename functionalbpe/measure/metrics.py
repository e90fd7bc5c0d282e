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
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

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


def share(part: int, whole: int) -> Optional[float]:
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


def entropy_bits(counts: Iterable[int]) -> Optional[float]:
    """Entropy of the token distribution in bits: ``H = −Σ p(t) · log₂ p(t)``.

    ``counts`` are the ``n(t)``; tokens that never occur add nothing.

    >>> entropy_bits([1, 1, 1, 1])
    2.0
    """
    values = [c for c in counts if c > 0]
    total = sum(values)
    if not total:
        return None
    h = -sum(c / total * math.log2(c / total) for c in values)
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


def case_key(surface: str) -> str:
    """The key of a case family: the surface lower-cased (``str.lower``)."""
    return surface.lower()


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
