"""External ids: the id layout of a vocabulary that was made elsewhere.

Inside functionalbpe the ids follow one layout (:mod:`functionalbpe.core.alphabet`): bytes 0–255
in byte order, then atoms, merges and special tokens. A vocabulary imported from a tiktoken
file or an HF ``tokenizer.json`` keeps *its* ids, so that a model trained on them still reads
them: OpenAI's files give the 256 bytes the ranks 0–255 in another order (printable bytes
first) and leave gaps before their special tokens; an HF vocabulary usually puts its special
tokens first (``<|endoftext|>`` at 0) and the bytes after them, in the order of their
printable stand-ins. An :class:`IdMap` translates at the edge — ids going out of ``encode``,
ids coming into ``decode`` — and is absent (``None``) for every tokenizer functionalbpe
trains. Any layout is allowed as long as the ids are distinct; ids that no token has are
gaps, which ``decode`` refuses.

Example::

    >>> from functionalbpe.core.alphabet import Alphabet
    >>> m = IdMap(Alphabet(specials=["<s>"]), byte_ids=[256 - b for b in range(256)], special_ids=[0])
    >>> [m.external(i) for i in (0, 1, 255, 256)], m.to_internal([0, 256]), m.size
    ([256, 255, 1, 0], [256, 0], 257)
"""
from __future__ import annotations

from array import array
from operator import eq
from typing import List, Optional, Sequence

from .alphabet import NUM_BYTES, Alphabet
from ..errors import FunctionalBPEError
from .limits import MAX_VOCAB_SIZE
from ..util.checks import excerpt


def keeps_internal_ids(
    alphabet: Alphabet,
    byte_ids: Optional[Sequence[int]] = None,
    special_ids: Optional[Sequence[int]] = None,
    merge_ids: Optional[Sequence[int]] = None,
) -> bool:
    """Whether the ids given are the internal layout (no IdMap is needed): a list compare in
    C, where building the map takes a Python loop over every id (a second of a large load)."""
    first_merge, first = alphabet.first_merge, alphabet.first_special

    def same(ids: Optional[Sequence[int]], start: int, stop: int) -> bool:
        if ids is None:
            return True
        if not isinstance(ids, (list, tuple, array, range)):
            ids = list(ids)
        # Compared a pair at a time: a list of the range beside a list of the ids held an int
        # and a pointer per id twice over (80 MB of a million merges).
        return len(ids) == stop - start and all(map(eq, ids, range(start, stop))) and \
            (stop - start > 512 or all(type(v) is int for v in ids))

    return same(byte_ids, 0, NUM_BYTES) and same(special_ids, first, alphabet.vocab_size) and \
        same(merge_ids, first_merge, first)


# The array typecodes whose items are ints (not floats, not characters).
_INTEGER_TYPECODES = "bBhHiIlLqQ"


class IdMap:
    """How the ids of one tokenizer differ from the internal layout: the external id of each
    byte, merge and special token (None for a part that keeps the internal ids)."""

    def __init__(
        self,
        alphabet: Alphabet,
        byte_ids: Optional[Sequence[int]] = None,
        special_ids: Optional[Sequence[int]] = None,
        merge_ids: Optional[Sequence[int]] = None,
    ) -> None:
        first_merge, first = alphabet.first_merge, alphabet.first_special
        self.first_merge = first_merge
        self.first_special = first
        if keeps_internal_ids(alphabet, byte_ids, special_ids, merge_ids):
            # The identity (every tokenizer trained here, and files in that layout): ranges,
            # not lists, so that a vocabulary of millions of ids costs nothing here.
            self.byte_ids = list(range(NUM_BYTES))
            self.special_ids: Sequence[int] = range(first, alphabet.vocab_size)
            self.external_ids: Sequence[int] = range(alphabet.vocab_size)
            self._internal: Sequence[int] = self.external_ids
            self.size = alphabet.vocab_size
            self.identity = True
            return
        self.byte_ids: List[int] = list(range(NUM_BYTES)) if byte_ids is None else list(byte_ids)
        # The map both ways is two arrays of 32-bit ids (ids are below MAX_VOCAB_SIZE, 2**22,
        # checked below), the merges' ids a slice of one: 4 bytes an id where a list held a
        # pointer and an int of 32 bytes. As lists, these and the copies made on the way
        # (formats/hf.py, core/encoder.py) were 87 MB of a million merges imported in GPT-2's
        # layout (tracemalloc), more than the encoder's whole-token table.
        merges: Sequence[int] = range(first_merge, first) if merge_ids is None else \
            merge_ids if isinstance(merge_ids, (list, array)) else list(merge_ids)
        self.special_ids = list(range(first, alphabet.vocab_size)) if special_ids is None else list(special_ids)
        for what, ids, count in (
            ("byte_ids", self.byte_ids, NUM_BYTES),
            ("merge_ids", merges, first - first_merge),
            ("special ids", self.special_ids, len(alphabet.specials)),
        ):
            if len(ids) != count:
                raise FunctionalBPEError(f"{what}: {len(ids)} ids for {count} tokens")
            if isinstance(ids, array) and ids.typecode in _INTEGER_TYPECODES and (
                    not ids or (min(ids) >= 0 and max(ids) < MAX_VOCAB_SIZE)):
                continue  # ints by their type, in range: min and max in C (56 ms a million ids; the loops 91 ms)
            bad = next((v for v in ids if type(v) is not int or not 0 <= v < MAX_VOCAB_SIZE), None)
            if bad is not None or any(type(v) is not int for v in ids):
                raise FunctionalBPEError(
                    f"{what}: {excerpt(bad)} is not an id (an integer in 0..{MAX_VOCAB_SIZE - 1})"
                )
        # external[i]: the id internal token i is written as. Atoms keep their ids (never imported).
        external = array("i", self.byte_ids)
        external.extend(range(NUM_BYTES, first_merge))
        external.extend(iter(merges))  # an iterator: array.extend takes no array of another typecode
        external.extend(self.special_ids)
        self.external_ids = external
        self.size = max(external, default=-1) + 1
        # internal[e]: the internal token of external id e; -1 for a gap.
        table = array("i", [-1]) * self.size
        self._internal = table
        for internal, ext in enumerate(external):
            if table[ext] >= 0:
                raise FunctionalBPEError(
                    f"the id {ext} is given to two tokens ({self._name(alphabet, table[ext])} "
                    f"and {self._name(alphabet, internal)}); every token needs its own id"
                )
            table[ext] = internal
        self.identity = len(external) == alphabet.vocab_size and all(map(eq, external, range(alphabet.vocab_size)))

    @property
    def merge_ids(self) -> Sequence[int]:
        """Each merge's id: a range, or a slice of :attr:`external_ids` made when asked."""
        return self.external_ids[self.first_merge:self.first_special]

    @staticmethod
    def _name(alphabet: Alphabet, internal: int) -> str:
        if internal >= alphabet.first_special:
            return f"special token {excerpt(alphabet.specials[internal - alphabet.first_special])}"
        return f"token {excerpt(alphabet.token_bytes(internal))}"

    def external(self, internal: int) -> int:
        return self.external_ids[internal]

    def is_id(self, token: int) -> bool:
        return 0 <= token < self.size and self._internal[token] >= 0

    def to_internal(self, ids: Sequence[int]) -> List[int]:
        """Ids given to ``decode``; the caller has checked them with :meth:`is_id`."""
        table = self._internal
        return [table[i] for i in ids]

    def gaps(self) -> int:
        """How many ids below :attr:`size` no token has."""
        return self._internal.count(-1)
