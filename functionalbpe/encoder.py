"""Applying learned merges to pieces, with a cache of whole pieces.

Most pieces of real text repeat (`` the``, ``\\n    ``), so the encoder remembers the ids of
each piece it has seen, up to a bound. The merges themselves are replayed by
:func:`functionalbpe.reference.encode_piece`, lowest merge id first.

Example::

    >>> from functionalbpe.alphabet import Alphabet
    >>> Encoder(Alphabet(merges=[(104, 105)])).encode_piece("hi!")
    [256, 33]
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from .alphabet import Alphabet
from .reference import encode_piece, ranks_from_merges

# Pieces remembered before the cache is emptied; enough for the distinct pieces of a
# book-sized text, small enough that a stream of random strings cannot exhaust memory.
CACHE_LIMIT = 1 << 18


class Encoder:
    """Encode text-form pieces into ids for one alphabet."""

    def __init__(self, alphabet: Alphabet) -> None:
        self.alphabet = alphabet
        self.ranks = ranks_from_merges(alphabet.merges, alphabet.first_merge)
        self._cache: Dict[str, Tuple[int, ...]] = {}

    def encode_piece(self, piece: str) -> List[int]:
        ids = self._cache.get(piece)
        if ids is None:
            ids = tuple(encode_piece(self.alphabet.symbols(piece), self.ranks))
            if len(self._cache) >= CACHE_LIMIT:
                self._cache.clear()
            self._cache[piece] = ids
        return list(ids)

    def encode_pieces(self, pieces: List[str]) -> List[int]:
        out: List[int] = []
        cache = self._cache
        for piece in pieces:
            ids = cache.get(piece)
            if ids is None:
                out.extend(self.encode_piece(piece))
            else:
                out.extend(ids)
        return out
