"""Applying learned merges to pieces: the compiled encoder, or the reference one with a cache.

The compiled encoder (``csrc/_encoder.pyx``, ``csrc/lib/bpe.c``) keeps the merges in a C hash
table, takes a piece that is a token whole, caches the other pieces, and merges long pieces
in O(n log n). Without it (no compiler, or ``FUNCTIONALBPE_PUREPYTHON=1``) the merges are
replayed by :func:`functionalbpe.core.reference.encode_piece`, with a bounded cache of whole pieces
in front (most pieces of real text repeat: `` the``, ``\\n    ``). Both give the same ids for
every piece: the reference is the definition.

Example::

    >>> from functionalbpe.core.alphabet import Alphabet
    >>> Encoder(Alphabet(merges=[(104, 105)])).encode_piece("hi!")
    [256, 33]
"""
from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ._native import native
from .alphabet import Alphabet
from .reference import encode_piece, ranks_from_merges

if TYPE_CHECKING:  # pragma: no cover
    from ..schemes.base import Scheme

# Pieces remembered before the cache is emptied; enough for the distinct pieces of a
# book-sized text, small enough that a stream of random strings cannot exhaust memory.
CACHE_LIMIT = 1 << 18


class Encoder:
    """Encode texts or text-form pieces into ids for one alphabet (thread-safe).

    With a ``scheme``, :meth:`encode_text` cuts text into pieces too: with the C scanner
    when the scheme is the plain one with a built-in pattern, or a scheme whose ``scanner``
    the extension has (the boundary markers), else with ``scheme.split``.
    """

    def __init__(
        self,
        alphabet: Alphabet,
        scheme: "Optional[Scheme]" = None,
        output_ids: Optional[Sequence[int]] = None,
    ) -> None:
        """``output_ids[i]`` is the id that token ``i`` is written as (the ids of an
        imported vocabulary, :mod:`functionalbpe.core.idmap`); by default ``i`` itself."""
        self.alphabet = alphabet
        self.scheme = scheme
        self._ranks: Optional[Dict[Tuple[int, int], int]] = None
        self._cache: Dict[str, Tuple[int, ...]] = {}
        self._output_ids = list(output_ids) if output_ids is not None else None
        module = native("_encoder")
        self.native: Any = None
        # The name of the C scanner that can stand in for scheme.split, if any.
        self.scanner: Optional[str] = None
        if module is not None:
            atoms = [ord(a.char) for a in alphabet.atoms]
            self.native = module.BPE(atoms, alphabet.merges, alphabet.specials, output_ids)
            if scheme is not None:
                # The plain scheme's pattern, or a scheme's own compiled pieces (markers).
                name = scheme.pattern_name if _splits_plainly(scheme) else getattr(scheme, "scanner", None)
                if name in module.SCANNERS:
                    self.scanner = name
        # A scheme that writes each raw piece's text form on its own (the Functionalizer's
        # piece_forms): the ids of each raw piece are cached, so that a repeated word costs
        # one dictionary lookup instead of a description and a lookup per text-form piece.
        self._piece_forms: Optional[Callable[[str], Tuple[str, ...]]] = (
            getattr(scheme, "piece_forms", None) if self.scanner is None else None
        )
        self._raw_cache: Dict[str, Tuple[int, ...]] = {}
        # ... and when its raw pieces are a built-in pattern's, the lookups happen in C.
        self._raw_scanner: Optional[str] = None
        if (
            self._piece_forms is not None
            and module is not None
            and scheme.pattern_name in module.SCANNERS  # type: ignore[union-attr]
            and not scheme.joins_runs()  # type: ignore[union-attr]
        ):
            self._raw_scanner = scheme.pattern_name  # type: ignore[union-attr]

    @property
    def ranks(self) -> Dict[Tuple[int, int], int]:
        if self._ranks is None:
            self._ranks = ranks_from_merges(self.alphabet.merges, self.alphabet.first_merge)
        return self._ranks

    def encode_piece(self, piece: str) -> List[int]:
        if self.native is not None:
            return self.native.encode_pieces((piece,))
        ids = self._cache.get(piece)
        if ids is None:
            ids = tuple(encode_piece(self.alphabet.symbols(piece), self.ranks))
            if self._output_ids is not None:
                ids = tuple(self._output_ids[i] for i in ids)
            if len(self._cache) >= CACHE_LIMIT:
                self._cache.clear()
            self._cache[piece] = ids
        return list(ids)

    def encode_pieces(self, pieces: Iterable[str]) -> List[int]:
        if self.native is not None:
            return self.native.encode_pieces(pieces)
        out: List[int] = []
        cache = self._cache
        for piece in pieces:
            ids = cache.get(piece)
            if ids is None:
                out.extend(self.encode_piece(piece))
            else:
                out.extend(ids)
        return out

    def encode_text(self, text: str) -> List[int]:
        """The ids of a text that holds no special token (needs a scheme)."""
        if self.scanner is not None:
            return self.native.encode_text(text, self.scanner)
        assert self.scheme is not None
        if self._raw_scanner is not None:
            prepared = self.scheme.prepare(text)  # type: ignore[attr-defined]
            return self.native.encode_cached(prepared, self._raw_scanner, self._piece_forms)
        if self._piece_forms is not None:
            return self._encode_raw_pieces(self.scheme.raw_pieces(text))  # type: ignore[attr-defined]
        return self.encode_pieces(self.scheme.split(text))

    def _encode_raw_pieces(self, pieces: List[str]) -> List[int]:
        found = list(map(self._raw_cache.get, pieces))
        if None in found:
            found = [self._raw_ids(p) if ids is None else ids for ids, p in zip(found, pieces)]
        return list(chain.from_iterable(found))

    def _raw_ids(self, piece: str) -> Tuple[int, ...]:
        """The ids of one raw piece's text form, cached (as ``Functionalizer.piece_forms``)."""
        cache = self._raw_cache
        ids = cache.get(piece)
        if ids is None:
            assert self._piece_forms is not None
            if len(cache) >= CACHE_LIMIT:
                cache.clear()
            ids = cache[piece] = tuple(self.encode_pieces(self._piece_forms(piece)))
        return ids

    def encode_texts(self, texts: List[str], threads: Optional[int] = None) -> List[List[int]]:
        """:meth:`encode_text` of each text; on ``threads`` threads with the C scanner."""
        if self.scanner is not None:
            return self.native.encode_texts(texts, self.scanner, threads)
        return [self.encode_text(t) for t in texts]

    def count_text(self, text: str) -> int:
        if self.scanner is not None:
            return self.native.count_text(text, self.scanner)
        return len(self.encode_text(text))

    def decode_bytes(self, ids: Sequence[int]) -> Optional[bytes]:
        """The joined text-form bytes of ``ids``; None if one is not an id (the caller says
        which)."""
        if self.native is not None:
            return self.native.decode_bytes(ids)
        table = self.alphabet.all_token_bytes()
        size = len(table)
        if not all(isinstance(i, int) and 0 <= i < size for i in ids):
            return None
        return b"".join([table[i] for i in ids])


def _splits_plainly(scheme: "Scheme") -> bool:
    """Are the scheme's pieces exactly its pattern's matches (what the scanner gives)?"""
    from ..schemes.base import PlainScheme, Scheme

    return isinstance(scheme, PlainScheme) and type(scheme).split is Scheme.split
