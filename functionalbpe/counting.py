"""Counting pieces: the first stage of training, and usually the slowest.

BPE only needs each distinct piece once, with its count, so a corpus of any size becomes a
table whose size is the number of distinct pieces.

Example::

    >>> count_pieces(["a a a", "a"], pattern="gpt2")
    {'a': 2, ' a': 2}
"""
from __future__ import annotations

from collections import Counter
from typing import Dict, Iterable, Optional, Sequence, Union

from .patterns import compile_pattern, iter_pieces, split_special


def count_segments(segments: Iterable[str], pattern: str, *, threads: Optional[int] = None) -> Dict[str, int]:
    """Count the pieces of texts that contain no special tokens."""
    finder = compile_pattern(pattern)
    counts: Counter = Counter()
    for text in segments:
        pieces = finder.findall(text)
        # Matches never overlap and come in order, so they tile the text exactly when their
        # lengths add up to its length; otherwise find and name the lost character.
        if sum(map(len, pieces)) != len(text):
            for _ in iter_pieces(text, pattern):
                pass
        counts.update(pieces)
    counts.pop("", None)
    return dict(counts)


def count_pieces(
    corpus: Union[str, Iterable[str]],
    pattern: str = "gpt4",
    threads: Optional[int] = None,
    special_tokens: Sequence[str] = (),
) -> Dict[str, int]:
    """Count the pieces of a corpus (one text, or an iterable of documents).

    Special tokens are cut out first: they are never part of a piece.
    """
    documents = [corpus] if isinstance(corpus, str) else corpus
    return count_segments(_ordinary_segments(documents, special_tokens), pattern, threads=threads)


def _ordinary_segments(documents: Iterable[str], special_tokens: Sequence[str]) -> Iterable[str]:
    for doc in documents:
        if not special_tokens:
            yield doc
            continue
        for segment, is_special in split_special(doc, special_tokens):
            if not is_special:
                yield segment
