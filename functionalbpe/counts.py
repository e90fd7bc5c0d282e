"""Piece counts as a value of their own: count anywhere, save, merge, train once.

Training needs the corpus only once, to count the scheme's raw pieces; the merge loop then
works on the table of distinct pieces and their counts, which is small next to the text.
:func:`count` makes that table (a :class:`PieceCounts`), recording everything that decided
what was counted: the scheme with its options and pattern, the special tokens cut out, the
normalization. Tables counted on shards of a corpus — in other processes, on other machines
(:mod:`functionalbpe.dask`) — are added together with :meth:`PieceCounts.merge` (in C), and
``train(counts, vocab_size=...)`` gives exactly the tokenizer that training on all the text
gives. Tables counted differently are never merged: the error names the difference.

The file a table is saved in (:meth:`PieceCounts.save`, :meth:`PieceCounts.load`; the same
bytes travel between workers, :meth:`PieceCounts.to_bytes`) is described in docs/counts.md.
It is read with full distrust, like a tokenizer file: every size is checked against the
file's own size before anything is allocated, and anything wrong is a
:class:`~functionalbpe.errors.CountsFileError` naming the field or the offset.

Example::

    >>> a = count("the cat the", pattern="gpt2")
    >>> b = count(" the hat", pattern="gpt2")
    >>> dict(a + b), (a + b).total
    ({'the': 1, ' cat': 1, ' the': 2, ' hat': 1}, 5)
    >>> (a + b) == count("the cat the the hat", pattern="gpt2")
    True
"""
from __future__ import annotations

import codecs
from array import array
import hashlib
import heapq
import json
import operator
import os
import struct
import sys
import zlib
from itertools import accumulate
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union


from .util.checks import integer, special_tokens_checked
from .core._native import NATIVE
from .core.piecetable import PieceTable
from .errors import CountsFileError, FunctionalBPEError, OutOfMemoryError, TokenizerFileError
from .util.output import atomic_write_text
from .formats.reading import read_bytes, read_head
from .core.limits import MAX_COUNT, MAX_TOTAL_TOKEN_BYTES, special_token_bytes
from .util.checks import excerpt
from .util.progress import ProgressSpec
from .schemes.base import Scheme
from .schemes.registry import make_scheme, resolve
from .text.counting import Corpus
from .text.counting import count_table

# -- the file's layout (docs/counts.md) ----------------------------------------------------------

MAGIC = b"FBPECNTS"
VERSION = 1
# magic, version, flags, then the sizes of the metadata, the table and the body: little-endian.
HEADER = struct.Struct("<8sIIQQQQ")
CHECKSUM_BYTES = 32  # sha256 of everything before it
FLAG_ZLIB = 1  # the body is one zlib stream (else it is stored as it is)
# The limits of a counts file. A table of 2^32 - 2 pieces is what the C table holds; the file
# itself may be large (a count of a terabyte of text), but a compressed body may unpack to at
# most MAX_RATIO times its size, so that a small file can never ask for a huge allocation:
# the writer stores a body uncompressed rather than break that rule.
MAX_PIECES = (1 << 32) - 2
MAX_COUNTS_FILE_BYTES = 1 << 40
MAX_METADATA_BYTES = MAX_TOTAL_TOKEN_BYTES + (1 << 20)
MAX_RATIO = 64
ZLIB_LEVEL = 1  # fast: tables are written at every level of a merge tree


def count(
    corpus: Corpus,
    *,
    scheme: Union[str, Scheme] = "plain",
    pattern: Optional[str] = None,
    special_tokens: Sequence[str] = (),
    normalize: Optional[str] = None,
    threads: Optional[int] = None,
    progress: ProgressSpec = None,
    **scheme_options: Any,
) -> "PieceCounts":
    """The scheme's raw pieces of ``corpus``, counted: the first stage of :func:`train`, kept.

    ``corpus``, ``scheme``, ``pattern``, ``special_tokens``, ``threads`` and ``progress`` are
    those of :func:`functionalbpe.train`; ``normalize`` is the scheme's normal form (the
    functional scheme's option). Memory grows with the distinct pieces, not the corpus.

    >>> count(["a a a", "a"], pattern="gpt2").most_common(1)
    [('a', 2)]
    """
    if normalize is not None:
        scheme_options["normalize"] = normalize
    specials = special_tokens_checked(special_tokens)
    the_scheme = resolve(scheme, pattern, **scheme_options)
    try:
        table = count_table(corpus, the_scheme, specials, threads, progress)
    except MemoryError:
        raise OutOfMemoryError("out of memory while counting pieces: count less text at a time "
                               "(several counts files merge) or with fewer threads") from None
    return PieceCounts(table, the_scheme, specials)


class PieceCounts(Mapping[str, int]):
    """Distinct raw pieces and their counts, with how they were counted: a read-only
    ``Mapping[str, int]`` in order of first occurrence (see the module's docstring).

    ``table`` is the flat :class:`~functionalbpe.core.piecetable.PieceTable`; ``scheme`` the
    scheme object; ``special_tokens`` those cut out; ``pruned_below`` the ``min_count`` of
    the :meth:`prune` that made it, if any (None: exact).

    >>> import functionalbpe as fb
    >>> counts = fb.count(["the cat the hat"], progress=False)
    >>> counts["the"], counts[" the"], counts.total
    (1, 1, 4)
    """

    __slots__ = ("table", "scheme", "special_tokens", "pruned_below", "_dict")

    def __init__(self, table: PieceTable, scheme: Scheme, special_tokens: Sequence[str] = (),
                 pruned_below: Optional[int] = None) -> None:
        self.table = table
        self.scheme = scheme
        self.special_tokens: Tuple[str, ...] = tuple(special_tokens)
        self.pruned_below = pruned_below
        self._dict: Optional[Dict[str, int]] = None

    # -- the mapping ---------------------------------------------------------------------------

    def _mapping(self) -> Dict[str, int]:
        if self._dict is None:  # built on the first look-up: iterating needs none
            self._dict = self.table.to_dict()
        return self._dict

    def __getitem__(self, piece: str) -> int:
        return self._mapping()[piece]

    def __contains__(self, piece: object) -> bool:
        return piece in self._mapping()

    def __iter__(self) -> Iterator[str]:
        return (piece for piece, _ in self.table.items())

    def __len__(self) -> int:
        return len(self.table)

    def items(self) -> Iterator[Tuple[str, int]]:  # type: ignore[override]
        """``(piece, count)`` in order of first occurrence."""
        return self.table.items()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PieceCounts):
            return self.options == other.options and self._mapping() == other._mapping()
        if isinstance(other, Mapping):
            return self._mapping() == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"PieceCounts({len(self):,} pieces, total {self.total:,}, scheme {self.scheme.name!r}, "
                f"pattern {self.scheme.pattern_name!r})")

    # -- what it holds ---------------------------------------------------------------------------

    @property
    def total(self) -> int:
        """How many pieces were counted, in all."""
        return self.table.total

    @property
    def nbytes(self) -> int:
        """Bytes of memory the table holds: its UTF-8 and 16 bytes per piece (offset, count)."""
        t = self.table
        return len(t.data) + t.offsets.itemsize * len(t.offsets) + t.counts.itemsize * len(t.counts)

    @property
    def options(self) -> Dict[str, Any]:
        """What decided the counting, as recorded in a file: tables merge only if these are equal."""
        return {
            "scheme": self.scheme.name,
            "scheme_options": self.scheme.options(),
            "pattern": {"name": self.scheme.pattern_name, "regex": str(self.scheme.pattern)},
            "normalize": self.scheme.normalize,
            "special_tokens": list(self.special_tokens),
        }

    def most_common(self, n: Optional[int] = None) -> List[Tuple[str, int]]:
        """The ``n`` most frequent pieces (all if None), ties in order of first occurrence."""
        counts = self.table.counts
        order = range(len(counts))
        top = sorted(order, key=counts.__getitem__, reverse=True) if n is None else \
            heapq.nlargest(integer(n, "n", 0), order, key=counts.__getitem__)
        view, offsets = memoryview(self.table.data), self.table.offsets
        return [(bytes(view[offsets[i]:offsets[i + 1]]).decode("utf-8", "surrogatepass"), counts[i]) for i in top]

    # -- merging and pruning -------------------------------------------------------------------

    @classmethod
    def merge(cls, tables: Iterable["PieceCounts"]) -> "PieceCounts":
        """The sum of tables counted the same way (scheme, options, pattern, normalization,
        special tokens): the count of all their texts, pieces in order of first appearance
        over the tables in the order given. Added in C when it is built, one table at a time
        (``tables`` may be a generator that loads them), so memory is the result's. A sum
        past 2^63 - 1 is an error, never a wrapped count."""
        total = _Sum()
        first: Optional[PieceCounts] = None
        pruned: Optional[int] = None
        for k, table in enumerate(tables):
            if not isinstance(table, PieceCounts):
                raise FunctionalBPEError(f"merge takes PieceCounts, got {type(table).__name__} at position {k}")
            if first is None:  # not `first or table`: an empty table is a false mapping
                first = table
            _check_same(first, table, k)
            if table.pruned_below is not None:
                pruned = max(pruned or 0, table.pruned_below)
            total.add(table.table)
        if first is None:
            raise FunctionalBPEError("merge needs at least one table of piece counts")
        return cls(total.result(), first.scheme, first.special_tokens, pruned)

    def __add__(self, other: "PieceCounts") -> "PieceCounts":
        if not isinstance(other, PieceCounts):
            return NotImplemented
        return PieceCounts.merge([self, other])

    def prune(self, min_count: int) -> "PieceCounts":
        """The table without the pieces counted fewer than ``min_count`` times, to bound memory.

        The one inexact operation: the pairs inside the dropped pieces no longer count, so
        training on a pruned table may learn other merges than training on the text
        (docs/scale.md measures how many). The result records ``pruned_below``.
        """
        min_count = integer(min_count, "min_count", 1, MAX_COUNT)
        kept = {piece: c for piece, c in self.table.items() if c >= min_count}
        pruned_below = max(min_count, self.pruned_below or 0) if min_count > 1 else self.pruned_below
        return PieceCounts(PieceTable.from_dict(kept), self.scheme, self.special_tokens, pruned_below)

    # -- training ------------------------------------------------------------------------------

    def training_input(self, scheme: Union[str, Scheme], pattern: Optional[str], special_tokens: Sequence[str],
                       scheme_options: Dict[str, Any]) -> Tuple[Scheme, Tuple[str, ...]]:
        """The scheme and special tokens to train with on this table. ``train`` takes them from
        the counts; options given to ``train`` as well must agree with them."""
        if not (scheme == "plain" and pattern is None and not scheme_options):
            asked = PieceCounts(self.table, resolve(scheme, pattern, **scheme_options), self.special_tokens)
            _check_same(self, asked, 1, "train was asked for")
        specials = special_tokens_checked(special_tokens)
        if not specials or specials == self.special_tokens:
            return self.scheme, self.special_tokens
        dropped = [s for s in self.special_tokens if s not in specials]
        if dropped:
            raise FunctionalBPEError(
                f"the counts were made with the special tokens {excerpt(list(self.special_tokens))}, which cut "
                f"the text; train was given {excerpt(list(specials))}, without {excerpt(dropped)} (leave "
                "special_tokens out to use the counts', or add tokens to them)"
            )
        for token in specials:
            if token not in self.special_tokens:
                self._check_never_counted(token)
        return self.scheme, specials

    def _check_never_counted(self, token: str) -> None:
        """A special token can be added to counts made without it only if the text never held
        it: then cutting it out would have changed nothing. Proof: one of its characters is in
        no counted piece (had the text held the token, each of its characters would be in some
        piece). The characters are looked for as UTF-8 in the pieces' bytes, where a whole
        character's bytes can only stand for that character."""
        text = self.scheme.prepare(token)
        if any(char.encode("utf-8", "surrogatepass") not in self.table.data for char in set(text)):
            return
        raise FunctionalBPEError(
            f"the special token {excerpt(token)} cannot be added to these counts: every character of it is in "
            "some counted piece, so the text may have held it, and it was counted as ordinary text; count "
            f"again with special_tokens including {excerpt(token)}"
        )

    # -- bytes and files -----------------------------------------------------------------------

    def to_bytes(self, compress: bool = True) -> bytes:
        """The table in the counts file format (docs/counts.md): what ``save`` writes and
        what travels between workers."""
        meta = dict(self.options, pruned_below=self.pruned_below)
        del meta["normalize"]  # one of the scheme's options; shown, not stored twice
        metadata = json.dumps(meta, ensure_ascii=False, sort_keys=True).encode("utf-8")
        t = self.table
        try:
            lengths = array("I", map(operator.sub, t.offsets[1:], t.offsets[:-1]))
        except OverflowError:
            raise FunctionalBPEError("a piece of 4 GiB or more cannot be written to a counts file") from None
        raw = b"".join([_little(lengths), _little(t.counts), t.data])
        flags, body = 0, raw
        if compress:
            packed = zlib.compress(raw, ZLIB_LEVEL)
            if len(raw) <= MAX_RATIO * len(packed):
                flags, body = FLAG_ZLIB, packed
        head = HEADER.pack(MAGIC, VERSION, flags, len(metadata), len(t.counts), len(t.data), len(body))
        digest = hashlib.sha256()
        for part in (head, metadata, body):
            digest.update(part)
        return b"".join([head, metadata, body, digest.digest()])

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "counts") -> "PieceCounts":
        """The table of :meth:`to_bytes`, checked as a file is (``name`` goes in the messages)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise CountsFileError(f"{name}: PieceCounts.from_bytes takes bytes, got {type(data).__name__}")
        return _read(memoryview(data).toreadonly(), name)

    def save(self, path: Any) -> None:
        """Write the counts file, atomically (whole or not at all)."""
        atomic_write_text(path, self.to_bytes())

    @classmethod
    def load(cls, path: Any) -> "PieceCounts":
        """Read a counts file; anything wrong is a :class:`CountsFileError` naming what."""
        if not isinstance(path, (str, bytes)) and not hasattr(path, "__fspath__"):
            raise CountsFileError(f"PieceCounts.load: path should be a file path, not {type(path).__name__}")
        name = os.fsdecode(path)
        try:
            # The header first, then the checksum a block at a time: a file is read whole
            # only once it is known to be one a writer made (a sparse 2 GB file costs nothing).
            head, size = read_head(name, "counts file", HEADER.size, MAX_COUNTS_FILE_BYTES)
            _check_header(head, size, lambda message: CountsFileError(f"{name}: {message}"))
            if not _checksum_holds(name, size):
                raise CountsFileError(
                    f"{name}: checksum mismatch (offset {size - CHECKSUM_BYTES}): the file was changed or "
                    "damaged after it was written; count again, or restore it from a copy")
            data = read_bytes(name, "counts file", MAX_COUNTS_FILE_BYTES)
        except TokenizerFileError as exc:
            raise CountsFileError(str(exc)) from None
        except MemoryError:
            raise OutOfMemoryError(f"{name}: out of memory reading a counts file of {size:,} bytes") from None
        return cls.from_bytes(data, name)

    def __reduce__(self) -> Tuple[Any, Tuple[bytes]]:
        # Pickled (by multiprocessing, by Dask) as the compact, checked file bytes.
        return (PieceCounts.from_bytes, (self.to_bytes(),))


# -- adding tables ---------------------------------------------------------------------------------


def add_tables(tables: Iterable[PieceTable]) -> PieceTable:
    """The sum of flat tables, in order of first appearance (C when built). Tables come from
    a count or a checked file; a sum past 2^63 - 1 is a FunctionalBPEError naming the piece.

    >>> add_tables([PieceTable.from_dict({"a": 1}), PieceTable.from_dict({"b": 2, "a": 3})]).to_dict()
    {'a': 4, 'b': 2}
    """
    total = _Sum()
    for table in tables:
        total.add(table)
    return total.result()


class _Sum:
    """Tables added one at a time: into the C sum, or a dict on the pure-Python path."""

    def __init__(self) -> None:
        module = NATIVE.summer
        self.summer = module.CountsSum() if module is not None else None
        self.dict: Dict[str, int] = {}
        self.only: Optional[PieceTable] = None  # while one table is added, it is the sum: no copy
        self.added = 0

    def add(self, table: PieceTable) -> None:
        if self.added == 0:
            self.only = table
        else:
            if self.only is not None:
                self._add(self.only, 0)
                self.only = None
            self._add(table, self.added)
        self.added += 1

    def _add(self, t: PieceTable, k: int) -> None:
        if self.summer is not None:
            try:
                self.summer.add(t.data, t.offsets, t.counts)
            except (OverflowError, ValueError) as exc:
                raise FunctionalBPEError(f"merging table {k}: {exc}") from None
            return
        out = self.dict
        for i, (piece, c) in enumerate(t.items()):
            total = out.get(piece, 0) + c
            if total > MAX_COUNT:
                raise FunctionalBPEError(f"merging table {k}: piece {i}: its counts add up past 2**63 - 1, the largest count")
            out[piece] = total

    def result(self) -> PieceTable:
        if self.only is not None:
            return self.only
        if self.summer is not None:
            return PieceTable(*self.summer.flat())
        return PieceTable.from_dict(self.dict)


def _check_same(first: PieceCounts, other: PieceCounts, k: int, what: str = "") -> None:
    """Refuse tables counted differently, naming the first difference."""
    a, b = first.options, other.options
    for key in ("scheme", "pattern", "scheme_options", "normalize", "special_tokens"):
        if a[key] != b[key]:
            if key == "pattern":
                a_key, b_key = a[key]["name"], b[key]["name"]
                if a_key == b_key:  # two custom patterns
                    a_key, b_key = a[key]["regex"], b[key]["regex"]
            else:
                a_key, b_key = a[key], b[key]
            where = what or f"table {k} was counted with"
            raise FunctionalBPEError(
                f"piece counts made differently cannot be merged: {where} {key} {excerpt(b_key)}, "
                f"the first table with {excerpt(a_key)}"
            )


# -- reading, with full distrust -------------------------------------------------------------------


def _check_header(head: bytes, size: int, bad: Any) -> Tuple[int, int, int, int, int]:
    """The header's fields (flags, metadata size, pieces, table bytes, body size), checked
    against each other and against the file's ``size``."""
    if size < HEADER.size + CHECKSUM_BYTES:
        if head[:len(MAGIC)] != MAGIC[:min(size, len(head))]:
            raise bad("not a functionalbpe counts file (no FBPECNTS at offset 0)")
        raise bad(f"truncated: {size} bytes, shorter than the {HEADER.size + CHECKSUM_BYTES} of an empty table")
    magic, version, flags, meta_len, pieces, data_len, body_len = HEADER.unpack_from(head)
    if magic != MAGIC:
        raise bad("not a functionalbpe counts file (no FBPECNTS at offset 0)")
    if version != VERSION:
        raise bad(f"version (offset 8) is {version}; this version of functionalbpe reads version {VERSION}")
    if flags & ~FLAG_ZLIB:
        raise bad(f"flags (offset 12) is {flags:#x}; only bit 0 (zlib) is known")
    if meta_len > MAX_METADATA_BYTES:
        raise bad(f"metadata size (offset 16) is {meta_len}, more than the limit {MAX_METADATA_BYTES}")
    if pieces > MAX_PIECES:
        raise bad(f"pieces (offset 24) is {pieces}, more than the limit {MAX_PIECES}")
    expected = HEADER.size + meta_len + body_len + CHECKSUM_BYTES
    if expected != size:
        what = "truncated" if expected > size else "has bytes past its end"
        raise bad(f"{what}: the header (offsets 16 and 40) says {expected} bytes, the file has {size}")
    return flags, meta_len, pieces, data_len, body_len


def _checksum_holds(name: str, size: int) -> bool:
    digest = hashlib.sha256()
    with open(name, "rb") as fh:
        left = size - CHECKSUM_BYTES
        while left:
            block = fh.read(min(left, 1 << 20))
            if not block:
                return False
            digest.update(block)
            left -= len(block)
        return fh.read(CHECKSUM_BYTES) == digest.digest()


def _read(data: memoryview, name: str) -> PieceCounts:
    def bad(message: str) -> CountsFileError:
        return CountsFileError(f"{name}: {message}")

    size = len(data)
    flags, meta_len, pieces, data_len, body_len = _check_header(bytes(data[:HEADER.size]), size, bad)
    if hashlib.sha256(data[:-CHECKSUM_BYTES]).digest() != bytes(data[-CHECKSUM_BYTES:]):
        raise bad(f"checksum mismatch (offset {size - CHECKSUM_BYTES}): the file was changed or damaged "
                  "after it was written; count again, or restore it from a copy")
    # The checksum only says that the file is as some writer made it: a crafted file has a
    # good one. Everything below is checked still.
    meta_at = HEADER.size
    body_at = meta_at + meta_len
    scheme, specials, pruned = _metadata(bytes(data[meta_at:body_at]), bad)
    raw_len = 12 * pieces + data_len
    body = data[body_at:body_at + body_len]
    raw: "bytes | memoryview"
    if flags & FLAG_ZLIB:
        if raw_len > MAX_RATIO * body_len + 4096:
            raise bad(f"the table (offsets 24, 32) would unpack to {raw_len} bytes from {body_len}: "
                      f"more than {MAX_RATIO} times, which no writer makes")
        raw = _unpack(body, raw_len, body_at, bad)
    else:
        if raw_len != body_len:
            raise bad(f"the table (offsets 24, 32) takes {raw_len} bytes, the body (offset 40) {body_len}")
        raw = body
    lengths, counts = array("I"), array("q")
    lengths.frombytes(raw[:4 * pieces])
    counts.frombytes(raw[4 * pieces:12 * pieces])
    if sys.byteorder == "big":
        lengths.byteswap()
        counts.byteswap()
    text = bytes(raw[12 * pieces:])
    return PieceCounts(_table(lengths, counts, text, body_at, bad), scheme, specials, pruned)


def _metadata(raw: bytes, bad: Any) -> Tuple[Scheme, Tuple[str, ...], Optional[int]]:
    where = f"metadata (offset {HEADER.size})"
    try:
        meta = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_repeats)
    except UnicodeDecodeError as exc:
        raise bad(f"{where}: invalid UTF-8 at byte offset {HEADER.size + exc.start}") from None
    except (ValueError, RecursionError) as exc:
        raise bad(f"{where}: not valid JSON: {str(exc)[:100]}") from None
    fields = {"scheme": str, "scheme_options": dict, "pattern": dict, "special_tokens": list}
    if not isinstance(meta, dict):
        raise bad(f"{where}: not a JSON object")
    for key, kind in fields.items():
        if not isinstance(meta.get(key), kind):
            raise bad(f"{where}: the field {key!r} should be a {kind.__name__}, found {excerpt(meta.get(key))}")
    pruned = meta.get("pruned_below")
    if pruned is not None and not (type(pruned) is int and 1 <= pruned <= MAX_COUNT):
        raise bad(f"{where}: pruned_below should be null or a count, found {excerpt(pruned)}")
    for key, value in meta["scheme_options"].items():
        if key in ("name", "pattern"):  # they have fields of their own; make_scheme's parameters
            raise bad(f"{where}: scheme_options: {excerpt(key)} is not an option (it has a field of its own)")
        if not (value is None or isinstance(value, (bool, int, str))):
            raise bad(f"{where}: scheme_options: {excerpt(key)}: {excerpt(value)} is not an option (a scalar)")
    pattern = meta["pattern"]
    if not isinstance(pattern.get("regex"), str):
        raise bad(f"{where}: pattern: the field 'regex' should be a string, found {excerpt(pattern.get('regex'))}")
    try:
        special_token_bytes(meta["special_tokens"], "special_tokens", CountsFileError)
        scheme = make_scheme(meta["scheme"], pattern["regex"], **meta["scheme_options"])
    except FunctionalBPEError as exc:
        raise bad(f"{where}: {exc}") from None
    return scheme, tuple(meta["special_tokens"]), pruned


def _no_repeats(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("a key appears twice in one object")
    return out


def _unpack(body: memoryview, raw_len: int, body_at: int, bad: Any) -> bytes:
    unpacker = zlib.decompressobj()
    try:
        raw = unpacker.decompress(body, raw_len)  # never more than the declared size
    except zlib.error as exc:
        raise bad(f"body (offset {body_at}): not a zlib stream: {exc}") from None
    if len(raw) != raw_len or not unpacker.eof or unpacker.unconsumed_tail or unpacker.unused_data:
        raise bad(f"body (offset {body_at}): unpacks to other than the {raw_len} bytes the header "
                  "(offsets 24, 32) says")
    return raw


def _little(values: array) -> bytes:
    """An array's bytes, little-endian."""
    if sys.byteorder == "big":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _table(lengths: array, counts: array, text: bytes, body_at: int, bad: Any) -> PieceTable:
    """The flat table from the unpacked arrays, every rule checked (the offsets named are
    those of the unpacked body)."""
    pieces = len(counts)
    if pieces and min(lengths) < 1:
        i = lengths.index(0)
        raise bad(f"piece {i} (body offset {4 * i}): a piece is never empty")
    if pieces and min(counts) < 1:
        i = next(i for i, c in enumerate(counts) if c < 1)
        raise bad(f"piece {i} (body offset {4 * pieces + 8 * i}): the count {counts[i]} is not a count "
                  "in 1..2**63-1")
    offsets = array("q", [0])
    offsets.extend(accumulate(lengths))
    if offsets[-1] != len(text):
        raise bad(f"the pieces' lengths add up to {offsets[-1]} bytes, the table (offset 32) says {len(text)}")
    text_at = 12 * pieces
    _check_utf8(text, lambda at: bad(f"piece data (body offset {text_at + at}): invalid UTF-8"))
    # A piece that starts on a continuation byte (10xxxxxx) starts inside a character.
    inside = [(text[o] & 0xC0) == 0x80 for o in offsets[:-1]]
    if any(inside):
        i = inside.index(True)
        raise bad(f"piece {i} (body offset {text_at + offsets[i]}): starts inside a character")
    table = PieceTable(text, offsets, counts)
    repeat = _first_repeat(table)
    if repeat is not None:
        piece = text[offsets[repeat]:offsets[repeat + 1]].decode("utf-8")
        raise bad(f"piece {repeat} (body offset {text_at + offsets[repeat]}): {excerpt(piece)} is given twice")
    return table


def _check_utf8(text: bytes, error: Any, block: int = 1 << 24) -> None:
    """Valid UTF-8 (no surrogates), checked in blocks: no decoded copy of the whole."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(text)
    for at in range(0, len(text), block):
        try:
            decoder.decode(view[at:at + block], final=at + block >= len(text))
        except UnicodeDecodeError as exc:
            raise error(at + exc.start) from None


def _first_repeat(table: PieceTable) -> Optional[int]:
    """The index of the first piece that appeared earlier in the table, or None."""
    module = NATIVE.summer
    if module is not None:
        try:
            module.CountsSum().add(table.data, table.offsets, table.counts)
            return None
        except ValueError:
            pass  # checked above: the one rule left is a repeat; found below, in Python
    seen = set()
    data, offsets = table.data, table.offsets
    for i in range(len(table)):
        piece = data[offsets[i]:offsets[i + 1]]
        if piece in seen:
            return i
        seen.add(piece)
    return None


__all__ = ["PieceCounts", "count", "add_tables"]
