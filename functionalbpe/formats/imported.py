"""A vocabulary read from another library's file, as plain data: what a tokenizer is built from.

The internal layout has bytes 0–255, then merge ``k`` at ``256 + k``; the ids the library
gave each part are kept beside it (:mod:`functionalbpe.core.idmap`).

    >>> Imported(list(range(256)), [(97, 98)], [256], r"\\S+", {}, False, "x").merges
    [(97, 98)]
"""
from __future__ import annotations

from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple


class Imported(NamedTuple):
    """A byte-level BPE vocabulary read from tiktoken or HF, in the internal layout with its own ids."""

    byte_ids: List[int]  # each byte's id
    merges: List[Tuple[int, int]]  # internal ids: bytes are 0..255, merge k is 256 + k
    merge_ids: Sequence[int]  # each merge's id (a list, or an array of 32-bit ids)
    pattern: str
    special_tokens: Dict[str, int]  # the added tokens
    ignore_merges: bool  # a word that is a token is taken whole (tiktoken always, HF when set)
    origin: str  # the file (or object) it came from, for messages
    # (left, right, token), internal ids: pairs that make a token without being its merge, for
    # tokens no merge of two earlier ones makes (Llama 3's; Tokenizer(joins=...)).
    joins: List[Tuple[int, int, int]] = []
    normalize: Optional[str] = None  # a Unicode normal form applied before the pattern (Qwen's NFC)
