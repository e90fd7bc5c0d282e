"""Applying learned merges to pieces: the compiled encoder, or the reference one with a cache.

The compiled encoder (``csrc/_encoder.pyx``, ``csrc/lib/encode/encode.c``) keeps the merges in a C hash
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

import random
import sys
from array import array
from dataclasses import dataclass
from itertools import chain
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ..errors import CompiledPatternGaveUp, FunctionalBPEError
from ..util.checks import plain_str, without_surrogates
from ._native import NATIVE
from .alphabet import Alphabet
from .cache import BoundedCache
from .dropout import encode_piece_dropout
from .contract import SchemeLike
from .bpe import encode_piece, ranks_from_merges

# Pieces remembered before the cache is emptied; enough for the distinct pieces of a
# book-sized text, small enough that a stream of random strings cannot exhaust memory.
CACHE_LIMIT = 1 << 18


@dataclass(frozen=True)
class Refusal:
    """Text a batch refuses (the special tokens it may not hold): ``refuse(text)`` raises
    when ``text`` holds one. ``needles`` are their UTF-8, which the compiled encoder's
    workers look for while they encode, so that the check is not serial; each text where
    one is found is handed to ``refuse``, in order, and ``refuse`` alone decides.

    >>> def refuse(text):
    ...     if "<s>" in text:
    ...         raise ValueError(text)
    >>> Refusal((b"<s>",), refuse).refuse_each(["a", "b<s>"])
    Traceback (most recent call last):
    ValueError: b<s>
    """

    needles: Tuple[bytes, ...]
    refuse: Callable[[str], None]

    def refuse_each(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.refuse(text)

    def native_args(self, texts: List[str]) -> Dict[str, Any]:
        """The compiled batch's arguments: the needles, and a unit's index to refuse."""
        return {"needles": self.needles, "refuse": lambda k: self.refuse(texts[k])}


def _native_refusal(refusal: Optional[Refusal], texts: List[str]) -> Dict[str, Any]:
    return refusal.native_args(texts) if refusal is not None else {}


class Encoder:
    """Encode texts or text-form pieces into ids for one alphabet (thread-safe).

    With a ``scheme``, :meth:`encode_text` cuts text into pieces too, the way the scheme
    declares it may be done (``Scheme.compiled()``), chosen once, here:

    * a scheme whose raw pieces are its text form, with a compiled scanner (the plain scheme
      with a built-in pattern, the boundary markers): text to ids in C;
    * a scheme that writes each raw piece's text form on its own (the Functionalizer): the
      ids of each raw piece are cached, so that a repeated word costs one lookup — in C when
      a compiled scanner cuts the raw pieces, else in Python;
    * otherwise ``scheme.split``, each piece encoded.
    """

    def __init__(
        self,
        alphabet: Alphabet,
        scheme: Optional[SchemeLike] = None,
        output_ids: Optional[Sequence[int]] = None,
        joins: Sequence[Tuple[int, int, int]] = (),
        whole_pieces: bool = False,
    ) -> None:
        """``output_ids[i]`` is the id that token ``i`` is written as (the ids of an
        imported vocabulary, :mod:`functionalbpe.core.idmap`); by default ``i`` itself.

        ``joins`` and ``whole_pieces`` make an imported vocabulary encode as its library does
        (:func:`check_joins`): ``(left, right, token)`` pairs that make a token without being
        its merge, after which pieces merge by the lowest-ranked leftmost pair one at a time,
        as tiktoken does; and a piece that is a token's bytes taken as that token."""
        self.alphabet = alphabet
        self.scheme = scheme
        self.joins = check_joins(alphabet, joins)
        self._whole_given = bool(whole_pieces)
        self._whole_needed: Optional[bool] = None
        self._whole: Optional[Dict[bytes, int]] = None
        self._ranks: Optional[Dict[Tuple[int, int], int]] = None
        self._cache: BoundedCache[str, Tuple[int, ...]] = BoundedCache(CACHE_LIMIT)
        self._raw_cache: BoundedCache[str, Tuple[int, ...]] = BoundedCache(CACHE_LIMIT)
        module = NATIVE.encoder
        self.native: Any = None
        if module is not None:
            atoms = [ord(a.char) for a in alphabet.atoms]
            self.native = module.BPE(atoms, alphabet.merges.ids, alphabet.specials, output_ids, self.joins,
                                     self._whole_given)
        # For the Python encoder and dropout (the compiled encoder keeps its own in C): an array
        # of 32-bit ids stays one (IdMap's, 4 bytes an id), anything else becomes a list.
        self._output_ids = None if output_ids is None else \
            output_ids if isinstance(output_ids, array) else list(output_ids)
        # The C scanner's name for the scheme's text-form pieces (text to ids in C: the text
        # as it is, so not for a scheme that normalizes), or for its raw pieces (ids cached
        # per raw piece, in C, of the prepared text); None where Python cuts.
        self.scanner: Optional[str] = None
        self._raw_scanner: Optional[str] = None
        # Whether ids are cached per raw piece (the scheme's text form is not its raw pieces).
        self._per_raw_piece = False
        if scheme is not None:
            declared = scheme.compiled()
            self._per_raw_piece = not declared.identity
            name = NATIVE.encoder_scanner(declared.scanner) if self.native is not None else None
            if declared.identity and scheme.normalize is None:
                self.scanner = name
            elif declared.scanner is not None and declared.scanner.name != "markers":
                self._raw_scanner = name  # encode_cached takes a pattern's scanner

    def set_stages(self, limit: Optional[int]) -> None:
        """Say that the merges from internal id ``limit`` on were learned after those before
        it (:func:`stage_limit`); ``None``: one stage. The compiled encoder then encodes a long
        piece as its words' first-stage ids, merged on (csrc/lib/encode/encode.c, "a piece in two
        stages"): the same ids, faster for superwords. Without it, or with atoms or joins,
        nothing changes."""
        if self.native is None or self.joins or self.alphabet.atoms:
            return
        self.native.set_stages(self.native.num_tokens if limit is None else limit)

    @property
    def ranks(self) -> Dict[Tuple[int, int], int]:
        """Every pair that merges, and the id it makes (a lower id merges first)."""
        if self._ranks is None:
            ranks = ranks_from_merges(self.alphabet.merges, self.alphabet.first_merge)
            ranks.update(((left, right), token) for left, right, token in self.joins)
            self._ranks = ranks
        return self._ranks

    @property
    def whole_pieces(self) -> bool:
        """Whether a piece that is a token's bytes is taken whole *and* that changes a result:
        some token's own bytes merge into other tokens. (Where every token merges back into
        itself, as in every vocabulary trained here, taking it whole changes nothing, and a
        tokenizer says False whatever it was given, so that its file does not depend on
        where it came from.)"""
        if self._whole_needed is None:
            if not self._whole_given:
                self._whole_needed = False
            elif self.native is not None:
                self._whole_needed = not self.native.all_self_encoding
            else:
                table, first = self.alphabet.all_token_bytes(), self.alphabet.first_merge
                # A token's bytes may end inside a character: its symbols from its bytes (atoms
                # are whole characters of their own, so only a scheme's text is decoded).
                symbols = (lambda data: self.alphabet.symbols(data.decode("utf-8", "surrogateescape"))) \
                    if self.alphabet.atoms else list
                self._whole_needed = any(
                    encode_piece_dropout(symbols(table[i]), self.ranks, 0.0, random.Random(0)) != [i]
                    for i in range(first, self.alphabet.first_special))
        return self._whole_needed

    def _merged(self, piece: str) -> List[int]:
        """The internal ids of one text-form piece: the reference, or (with joins, where a
        merge can make a pair that ranks before it) the lowest-ranked leftmost pair one at a
        time, which is the dropout encoder with nothing dropped."""
        if self._whole_given:
            if self._whole is None:
                table = self.alphabet.all_token_bytes()
                self._whole = {table[i]: i for i in range(self.alphabet.first_merge, self.alphabet.first_special)}
            token = self._whole.get(piece.encode("utf-8", "surrogatepass"))
            if token is not None:
                return [token]
        if self.joins:
            return encode_piece_dropout(self.alphabet.symbols(piece), self.ranks, 0.0, random.Random(0))
        return encode_piece(self.alphabet.symbols(piece), self.ranks)

    def encode_piece(self, piece: str) -> List[int]:
        if self.native is not None:
            return self.native.encode_pieces((piece,))
        ids = self._cache.get(piece)
        if ids is None:
            ids = tuple(self._merged(piece))
            if self._output_ids is not None:
                ids = tuple(self._output_ids[i] for i in ids)
            self._cache.put(piece, ids)
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

    def encode_text(self, text: str, threads: Optional[int] = 1, refusal: Optional[Refusal] = None) -> List[int]:
        """The ids of a text that holds no special token (needs a scheme). A lone surrogate
        (which UTF-8 cannot hold) is read as U+FFFD, as tiktoken reads it: the text is
        rewritten only when it holds one, which the UTF-8 encoding in C finds out.

        ``threads``: a long text cut by the C scanner is encoded in units on this many
        threads (None: all cores), with the same ids as on one. ``refusal``: a text it
        refuses raises first."""
        refusing: Dict[str, Any] = {}
        if refusal is not None:
            if self.scanner is None:
                refusal.refuse(text)
            else:  # the compiled encoder looks for the tokens' text while it encodes
                refusing = {"needles": refusal.needles, "refuse": lambda: refusal.refuse(text)}
        try:
            return self._encode_text(text, threads, refusing)
        except UnicodeEncodeError:
            return self._encode_text(without_surrogates(text), threads, refusing)

    def _encode_text(self, text: str, threads: Optional[int], refusing: Dict[str, Any]) -> List[int]:
        # A compiled pattern's matcher may give up on a text (CompiledPatternGaveUp: no
        # non-empty match somewhere, or its step budget spent); the text then goes the
        # Python way, where regex gives the pieces or the error that names the character.
        if self.scanner is not None:
            try:
                return self.native.encode_text(text, self.scanner, threads, **refusing)
            except CompiledPatternGaveUp:
                if refusing:
                    refusing["refuse"]()
        scheme = self.scheme
        assert scheme is not None
        if self._raw_scanner is not None:
            try:
                return self.native.encode_cached(scheme.prepare(text), self._raw_scanner, scheme.piece_forms_for_call())
            except CompiledPatternGaveUp:
                pass
        if self._per_raw_piece:
            return self._encode_raw_pieces(scheme.raw_pieces(text))
        return self.encode_pieces(scheme.split(text))

    def _encode_raw_pieces(self, pieces: List[str]) -> List[int]:
        found: List[Any] = list(map(self._raw_cache.get, pieces))
        if None in found:
            found = [self._raw_ids(p) if ids is None else ids for ids, p in zip(found, pieces)]
        return list(chain.from_iterable(found))

    def _raw_ids(self, piece: str) -> Tuple[int, ...]:
        """The ids of one raw piece's text form, cached."""
        ids = self._raw_cache.get(piece)
        if ids is None:
            assert self.scheme is not None
            ids = self._raw_cache.put(piece, tuple(self.encode_pieces(self.scheme.piece_forms(piece))))
        return ids

    def encode_text_dropout(self, text: str, p: float, rng: random.Random) -> List[int]:
        """The ids of a text with BPE-dropout (:mod:`.dropout`): every piece from its
        symbols, nothing cached (each call draws its own segmentation)."""
        assert self.scheme is not None
        out: List[int] = []
        for piece in self.scheme.split(text):
            ids = encode_piece_dropout(self.alphabet.symbols(piece), self.ranks, p, rng)
            out.extend(ids if self._output_ids is None else [self._output_ids[i] for i in ids])
        return out

    def encode_texts(self, texts: List[str], threads: Optional[int] = None,
                     refusal: Optional[Refusal] = None) -> List[List[int]]:
        """:meth:`encode_text` of each text; on ``threads`` threads with the C scanner. With
        a ``refusal``, a text it refuses raises before anything is encoded or returned."""
        if self.scanner is not None:
            refusing = _native_refusal(refusal, texts)
            try:
                try:
                    return self.native.encode_texts(texts, self.scanner, threads, **refusing)
                except UnicodeEncodeError:
                    return self.native.encode_texts(list(map(without_surrogates, texts)), self.scanner, threads,
                                                    **refusing)
            except CompiledPatternGaveUp:
                pass  # text by text: each that the matcher gives up on goes the Python way
        if refusal is not None:
            refusal.refuse_each(texts)
        return [self.encode_text(t) for t in texts]

    def encode_texts_flat(self, texts: List[str], threads: Optional[int],
                          refusal: Optional[Refusal] = None) -> "FlatIds":
        """:meth:`encode_texts` as one array of ids and the offsets of each text: no Python
        object per id with the C scanner."""
        if self.scanner is not None:
            try:
                return FlatIds(*self.native.encode_texts_flat(texts, self.scanner, threads,
                                                              **_native_refusal(refusal, texts)))
            except CompiledPatternGaveUp:
                if refusal is not None:
                    refusal.refuse_each(texts)
                return FlatIds.from_lists([self.encode_text(t) for t in texts])
        return FlatIds.from_lists(self.encode_texts(texts, threads, refusal))

    def encode_texts_packed(self, texts: List[str], threads: Optional[int], width: int,
                            refusal: Optional[Refusal] = None) -> Tuple[bytes, List[int]]:
        """:meth:`encode_texts` as one ``bytes`` of little-endian ids of ``width`` bytes (2 or
        4), one text's after another, and the number of ids of each text: no Python int per
        id with the C scanner."""
        if self.scanner is not None:
            refusing = _native_refusal(refusal, texts)
            try:
                try:
                    return self.native.encode_texts_packed(texts, self.scanner, threads, width, **refusing)
                except UnicodeEncodeError:
                    return self.native.encode_texts_packed(list(map(without_surrogates, texts)), self.scanner,
                                                           threads, width, **refusing)
            except CompiledPatternGaveUp:
                if refusal is not None:
                    refusal.refuse_each(texts)
                lists = [self.encode_text(t) for t in texts]
                return pack(lists, width), [len(ids) for ids in lists]
        lists = self.encode_texts(texts, threads, refusal)
        return pack(lists, width), [len(ids) for ids in lists]

    def count_text(self, text: str, threads: Optional[int] = 1) -> int:
        if self.scanner is not None:
            try:
                try:
                    return self.native.count_text(text, self.scanner, threads)
                except UnicodeEncodeError:
                    return self.native.count_text(without_surrogates(text), self.scanner, threads)
            except CompiledPatternGaveUp:
                pass
        return len(self.encode_text(text))

    def decode_bytes(self, ids: Sequence[int]) -> Optional[bytes]:
        """The joined text-form bytes of ``ids``; None if one is not an id (the caller says
        which)."""
        if self.native is not None:
            return self.native.decode_bytes(ids)
        table = self.alphabet.all_token_bytes()
        size = len(table)
        if not all(type(i) is int and 0 <= i < size for i in ids):  # a bool is no id
            return None
        return b"".join([table[i] for i in ids])


def stage_limit(training: Optional[Dict[str, Any]], alphabet: Alphabet) -> Optional[int]:
    """The first internal id of a continued training's new merges (superwords' second
    stage), from ``training["continued_from"]["merges"]``, the number of merges of the base
    (they come first); None when the training was not continued. A value that is no such
    number is a FunctionalBPEError naming the field.

    >>> a = Alphabet(merges=[(104, 105), (256, 33)])
    >>> stage_limit({"continued_from": {"merges": 1}}, a), stage_limit(None, a)
    (257, None)
    >>> stage_limit({"continued_from": {"merges": 3}}, a)
    Traceback (most recent call last):
    ...
    functionalbpe.errors.FunctionalBPEError: training.continued_from.merges: 3 is not a number of merges in 0..2
    """
    base = training.get("continued_from") if isinstance(training, dict) else None
    if base is None:
        return None
    merges = base.get("merges") if isinstance(base, dict) else None
    num_merges = len(alphabet.merges)
    if type(merges) is not int or not 0 <= merges <= num_merges:
        raise FunctionalBPEError(
            f"training.continued_from.merges: {merges!r} is not a number of merges in 0..{num_merges}")
    return alphabet.first_merge + merges


def check_joins(alphabet: Alphabet, joins: Sequence[Tuple[int, int, int]]) -> List[Tuple[int, int, int]]:
    """``joins`` as a list of ``(left, right, token)``, checked: ids of tokens (not special
    ones), ``token`` a merged one whose bytes are ``left``'s and ``right``'s together, and
    no pair that is a merge or another join.

    >>> check_joins(Alphabet(merges=[(97, 97), (256, 97), (97, 256)]), [(97, 256, 257)])
    Traceback (most recent call last):
    ...
    functionalbpe.errors.FunctionalBPEError: joins[0]: (97, 256, 257): the pair (97, 256) is a merge already
    """
    out: List[Tuple[int, int, int]] = []
    if not joins:
        return out
    table = alphabet.all_token_bytes()
    pairs = set(alphabet.merges)
    first, end = alphabet.first_merge, alphabet.first_special
    for k, join in enumerate(joins):
        if not (isinstance(join, (tuple, list)) and len(join) == 3 and all(type(v) is int for v in join)):
            raise FunctionalBPEError(f"joins[{k}]: {join!r} is not three ids (left, right, token)")
        left, right, token = join
        if not (0 <= left < end and 0 <= right < end and first <= token < end):
            raise FunctionalBPEError(f"joins[{k}]: {tuple(join)}: an id out of range (tokens 0..{end - 1}, merged ones from {first})")
        if table[left] + table[right] != table[token]:
            raise FunctionalBPEError(f"joins[{k}]: {tuple(join)}: the bytes of {left} and {right} together are not those of {token}")
        if (left, right) in pairs:
            raise FunctionalBPEError(f"joins[{k}]: {tuple(join)}: the pair ({left}, {right}) is a merge already")
        pairs.add((left, right))
        out.append((left, right, token))
    return out


class FlatIds:
    """The ids of a batch of texts, flat (``encode_batch(texts, flat=True)``): ``ids``, a
    uint32 array of every text's ids one after another, and ``offsets``, a uint64 array with
    one more entry than the texts, so that text ``k``'s ids are
    ``ids[offsets[k]:offsets[k + 1]]`` (``flat[k]`` gives that slice, ``len(flat)`` the
    number of texts, ``flat.tolist()`` the lists ``encode_batch`` returns).

    >>> flat = FlatIds.from_lists([[1, 2], [], [3]])
    >>> len(flat), flat[0].tolist(), flat.offsets.tolist(), flat.tolist()
    (3, [1, 2], [0, 2, 2, 3], [[1, 2], [], [3]])
    """

    __slots__ = ("ids", "offsets")

    def __init__(self, ids: Any, offsets: Any) -> None:
        self.ids = ids
        self.offsets = offsets

    @classmethod
    def from_lists(cls, lists: Sequence[Sequence[int]]) -> "FlatIds":
        import numpy as np

        offsets = np.zeros(len(lists) + 1, dtype=np.uint64)
        np.cumsum([len(ids) for ids in lists], out=offsets[1:])
        return cls(np.fromiter(chain.from_iterable(lists), dtype=np.uint32, count=int(offsets[-1])), offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, k: int) -> Any:
        if not -len(self) <= k < len(self):
            raise IndexError(f"text {k} of {len(self)}")
        k %= len(self)
        return self.ids[int(self.offsets[k]):int(self.offsets[k + 1])]

    def tolist(self) -> List[List[int]]:
        return [self[k].tolist() for k in range(len(self))]

    def __repr__(self) -> str:
        return f"<FlatIds: {len(self)} texts, {len(self.ids)} ids>"


def plain_texts(texts: Iterable[str]) -> List[str]:
    """:func:`~functionalbpe.util.checks.plain_str` of each text, as a list: in C where the
    compiled encoder is present (a Python call per text was a sixth of a batch of short
    lines on two threads).

    >>> plain_texts(iter(["a", "b"]))
    ['a', 'b']
    """
    module = NATIVE.encoder
    return module.plain_strs(texts) if module is not None else list(map(plain_str, texts))


def encode_batch_flat(encoder: Encoder, texts: List[str], threads: int, specials_or_dropout: bool,
                      batch: Any, refusal: Optional[Refusal] = None) -> FlatIds:
    """``Tokenizer.encode_batch(..., flat=True)``: straight from C when every text reaches
    it whole (no special token allowed, no dropout; ``refusal`` refuses the disallowed
    ones), else the lists of ``batch()`` laid flat."""
    if specials_or_dropout:
        return FlatIds.from_lists(batch())
    return encoder.encode_texts_flat(texts, threads, refusal)


def pack(lists: Iterable[Sequence[int]], width: int) -> bytes:
    """The ids of ``lists``, one list after another, as little-endian integers of ``width``
    bytes (2 or 4); an id that does not fit is an OverflowError.

    >>> pack([[1, 2], [258]], 2)
    b'\\x01\\x00\\x02\\x00\\x02\\x01'
    """
    if width not in (2, 4):
        raise ValueError(f"width must be 2 or 4, got {width}")
    code = next(c for c in "HIL" if array(c).itemsize == width)
    packed = array(code, chain.from_iterable(lists))
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()
