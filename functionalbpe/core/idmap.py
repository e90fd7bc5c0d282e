"""External ids: the id layout of a vocabulary that was made elsewhere.

Inside functionalbpe the ids follow one layout (:mod:`functionalbpe.core.alphabet`): bytes 0–255
in byte order, then atoms, merges and special tokens. A vocabulary imported from a tiktoken
file keeps *its* ids, so that a model trained on them still reads them: OpenAI's files give
the 256 bytes the ranks 0–255 in another order (printable bytes first), and their special
tokens sit at ids with gaps between them. An :class:`IdMap` translates at the edge — ids
going out of ``encode``, ids coming into ``decode`` — and is absent (``None``) for every
tokenizer functionalbpe trains.

Example::

    >>> from functionalbpe.core.alphabet import Alphabet
    >>> m = IdMap(Alphabet(specials=["<s>"]), byte_ids=[255 - b for b in range(256)], special_ids=[1000])
    >>> [m.external(i) for i in (0, 1, 255, 256)], m.to_internal([1000, 255]), m.size
    ([255, 254, 0, 1000], [256, 0], 1001)
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from .alphabet import NUM_BYTES, Alphabet
from ..errors import FunctionalBPEError
from ..filecheck import MAX_VOCAB_SIZE, excerpt


class IdMap:
    """How the ids of one tokenizer differ from the internal layout (bytes, specials)."""

    def __init__(
        self,
        alphabet: Alphabet,
        byte_ids: Optional[Sequence[int]] = None,
        special_ids: Optional[Sequence[int]] = None,
    ) -> None:
        self.byte_ids: List[int] = list(range(NUM_BYTES)) if byte_ids is None else list(byte_ids)
        if not _ints(self.byte_ids) or sorted(self.byte_ids) != list(range(NUM_BYTES)):
            raise FunctionalBPEError("byte_ids must give each of the 256 bytes a distinct id in 0..255")
        first = alphabet.first_special
        default = list(range(first, alphabet.vocab_size))
        self.special_ids: List[int] = default if special_ids is None else list(special_ids)
        if not _ints(self.special_ids):
            raise FunctionalBPEError(f"special token ids must be integers, got {excerpt(self.special_ids)}")
        if len(self.special_ids) != len(alphabet.specials):
            raise FunctionalBPEError(
                f"{len(alphabet.specials)} special tokens but {len(self.special_ids)} special ids"
            )
        seen = set()
        for token, ident in zip(alphabet.specials, self.special_ids):
            if ident in seen or not first <= ident < MAX_VOCAB_SIZE:
                raise FunctionalBPEError(
                    f"special token {excerpt(token)} has the id {ident}: special token ids must be distinct, "
                    f"at least {first} (after the bytes, atoms and merges) and below {MAX_VOCAB_SIZE}"
                )
            seen.add(ident)
        self._byte_internal = [0] * NUM_BYTES
        for internal, external in enumerate(self.byte_ids):
            self._byte_internal[external] = internal
        self._special_internal: Dict[int, int] = {e: first + k for k, e in enumerate(self.special_ids)}
        self.first_special = first
        self.size = max([first] + [i + 1 for i in self.special_ids])
        self.identity = self.byte_ids == list(range(NUM_BYTES)) and self.special_ids == default

    def external(self, internal: int) -> int:
        if internal < NUM_BYTES:
            return self.byte_ids[internal]
        if internal >= self.first_special:
            return self.special_ids[internal - self.first_special]
        return internal

    def is_id(self, token: object) -> bool:
        return isinstance(token, int) and (
            0 <= token < self.first_special or token in self._special_internal
        )

    def to_internal(self, ids: Sequence[int]) -> List[int]:
        """Ids given to ``decode``; the caller has checked them with :meth:`is_id`."""
        first, table, specials = self.first_special, self._byte_internal, self._special_internal
        return [table[i] if i < NUM_BYTES else (i if i < first else specials[i]) for i in ids]


def _ints(values: Sequence[object]) -> bool:
    return all(type(v) is int for v in values)
