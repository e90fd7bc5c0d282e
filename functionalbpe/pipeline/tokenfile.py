"""Token files: a corpus encoded into one flat file of ids that a training loop memory-maps.

:func:`encode_to_file` streams a corpus through :meth:`Tokenizer.encode_batch` and writes
the ids of every document, each followed by ``eot`` (when given), in one of the layouts of :mod:`functionalbpe.formats.tokenfiles` (``npy``, nanoGPT's raw
``bin``, llm.c's ``llmc``), which also reads them back (:func:`read_token_file`).

The ids are ``uint16`` when the vocabulary fits (``vocab_size <= 65536``), else ``uint32``.
The offsets file (``offsets=``, conventionally ``.idx``) holds, as little-endian uint64,
where each document starts in the token file, then the total: document ``k`` is
``ids[off[k]:off[k + 1]]`` (its eot included).

Everything is written to temporary files beside the targets and renamed at the end: a
failed or interrupted run leaves no output, and never half a file. Memory does not grow with
the corpus: text files are read in blocks cut where no piece can straddle the cut (for the
schemes that declare it, ``Scheme.compiled().cuts_safely``), a batch of blocks is encoded on
all cores while the previous batch's ids are written; plain text files go through one C
pipeline per file instead (:mod:`.textfiles`), cut, encoded and written by the worker threads
(docs/tokenfiles.md).

Example::

    >>> import os, tempfile, numpy as np, functionalbpe as fb
    >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<|endoftext|>"], progress=False)
    >>> path = os.path.join(tempfile.mkdtemp(), "ids.npy")
    >>> summary = tok.encode_to_file(["ab", "b"], path, eot="<|endoftext|>", progress=False)
    >>> np.load(path).tolist(), summary.documents, summary.tokens
    ([256, 257, 98, 257], 2, 4)
"""
from __future__ import annotations

import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import (
    Callable,
    TYPE_CHECKING,
    AbstractSet,
    Any,
    Collection,
    Generator,
    Iterable,
    Iterator,
    List,
    Optional,
    Tuple,
    Union,
)

import numpy as np

from ..util.checks import integer
from ..core._native import thread_count
from ..errors import CompiledPatternGaveUp, CorpusError, FunctionalBPEError
from ..util.output import PendingOutput, check_output_path, refuse_overwriting, remove_quietly
from ..util.display import plural
from ..util.progress import Progress, ProgressSpec
from ..formats.tokenfiles import LAYOUTS, choose_dtype, choose_format, read_token_file
from ..text.corpus import Files, files
from ..util.checks import PathLike
from . import blocks, textfiles

if TYPE_CHECKING:  # pragma: no cover
    from ..interop.protocol import Tokenizes

__all__ = ["EncodedBatch", "EncodeSummary", "PendingFile", "choose_dtype", "choose_format", "encode_stream", "encode_to_file",
           "read_token_file", "spaced_digits"]

SpecialSet = Union[str, AbstractSet[str], Collection[str]]

# Text read from a file is cut into units of about this size, so that a batch holds several
# per thread; a batch is about UNIT_BYTES * BATCH_UNITS_PER_THREAD * threads of text, at
# least MIN_BATCH_BYTES (small batches cost a call each) and at most MAX_BATCH_BYTES. The
# workers of a batch wait for each other at its end: with two units of 1 MiB per thread a
# thread could stand idle for up to a quarter of a batch; sixteen of 256 KiB bound that by
# a thirty-second (the units themselves cost a few microseconds each in Python).
UNIT_BYTES = 256 << 10
BATCH_UNITS_PER_THREAD = 16
MIN_BATCH_BYTES = 4 << 20
MAX_BATCH_BYTES = 64 << 20


@dataclass
class EncodeSummary:
    """What :func:`encode_to_file` wrote and how fast."""

    path: str
    format: str
    dtype: str
    documents: int
    tokens: int
    bytes_in: int
    seconds: float
    offsets_path: Optional[str] = None

    @property
    def mb_per_second(self) -> float:
        return self.bytes_in / 1e6 / self.seconds if self.seconds > 0 else 0.0

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        return (
            f"wrote {self.path} ({self.format}, {self.dtype}): {self.tokens:,} tokens from "
            f"{plural(self.documents, 'document')}, {self.bytes_in / 1e6:,.1f} MB in {self.seconds:.1f}s "
            f"({self.mb_per_second:,.1f} MB/s, {self.tokens_per_second / 1e6:,.2f} M tokens/s)"
        )


def _eot_id(tok: "Tokenizes", eot: Union[None, str, int]) -> Optional[int]:
    if eot is None:
        return None
    if isinstance(eot, str):
        specials = tok.special_tokens
        if eot not in specials:
            raise FunctionalBPEError(
                f"eot {eot!r} is not a special token of this tokenizer (its special tokens: "
                f"{sorted(specials)!r}); train with special_tokens=[...] or give an id"
            )
        return specials[eot]
    value = integer(eot, "eot", 0)
    if value >= tok.vocab_size:
        raise FunctionalBPEError(f"eot {value} is not an id of this tokenizer (vocab_size {tok.vocab_size})")
    return value


# -- reading the source -------------------------------------------------------------------------


def _as_source(source: Any, errors: str) -> Union[Files, Iterable[str]]:
    """A path (str or os.PathLike: a file, directory or glob) is read with ``files``; Files
    is used as it is; any other iterable is the documents."""
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        if isinstance(source, str) and not os.path.exists(name) and not set("*?[") & set(name):
            raise CorpusError(
                f"{name[:60]}: no such file or directory (a str source is a path; to encode a text, "
                "pass it in a list: encode_to_file([text], ...))"
            )
        return files(source, errors=errors)
    if isinstance(source, Files):
        return source
    if isinstance(source, (bytes, bytearray)) or not hasattr(source, "__iter__"):
        raise FunctionalBPEError(
            "source must be a path, fb.files(...) or an iterable of documents (str), got "
            f"{type(source).__name__}"
        )
    return source


def _units(source: Union[Files, Iterable[str]], tok: "Tokenizes") -> Iterator[Tuple[str, bool]]:
    """The text in order, as ``(text, ends_document)``: files in blocks when the scheme's
    pieces survive a safe cut, else (and for documents given as ``str``) whole documents."""
    if isinstance(source, Files):
        if tok.scheme.compiled().cuts_safely:
            # The caller's settings, read in smaller blocks: a batch then holds several per thread.
            blocks = source.with_block_bytes(UNIT_BYTES)
            for unit, ends in blocks.document_units(list(tok.special_tokens)):
                yield (unit if isinstance(unit, str) else unit.decode("utf-8")), ends
        else:
            for doc in source:
                yield doc, True
        return
    for number, doc in enumerate(source):
        if not isinstance(doc, str):
            raise FunctionalBPEError(f"document {number} is a {type(doc).__name__}; a document must be a str")
        yield doc, True


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


@dataclass
class _Batch:
    texts: List[str]
    ends: List[bool]
    size: int  # UTF-8 bytes


def _batches(units: Iterator[Tuple[str, bool]], batch_bytes: int) -> Iterator[_Batch]:
    batch = _Batch([], [], 0)
    for text, ends in units:
        batch.texts.append(text)
        batch.ends.append(ends)
        batch.size += _utf8_size(text)
        if batch.size >= batch_bytes:
            yield batch
            batch = _Batch([], [], 0)
    if batch.texts:
        yield batch


# -- writing ------------------------------------------------------------------------------------


class PendingFile(PendingOutput):
    """A file written beside ``path`` under a temporary name (``util.output.PendingOutput``:
    symlinks written through, devices and pipes streamed, the temporary file removed on any
    failure): :meth:`finish` puts it on disk, :meth:`rename` puts it in place,
    :meth:`discard` removes it. Failures name ``path``."""


# -- encoding -----------------------------------------------------------------------------------


@dataclass
class EncodedBatch:
    """The ids of one batch, from :func:`encode_stream`: ``ids`` (eot ids included), ``starts`` (the
    index in ``ids`` where each document that starts here starts) and ``ends`` (the index
    just past each document that ends here, its eot included)."""

    ids: np.ndarray
    starts: List[int]
    ends: List[int]
    bytes_in: int


Chunk = EncodedBatch  # its old name


def encode_stream(
    tok: "Tokenizes",
    source: Any,
    *,
    dtype: Any = None,
    eot: Union[None, str, int] = None,
    threads: Optional[int] = None,
    progress: ProgressSpec = False,
    allowed_special: SpecialSet = frozenset(),
    disallowed_special: SpecialSet = "all",
    errors: str = "strict",
) -> Generator[EncodedBatch, None, None]:
    """The ids of ``source`` (see :func:`encode_to_file`) in order, a batch at a time. The
    next batch is read while this one is encoded (in C, without the GIL, on ``threads``
    threads), and encoded while the caller handles this one, so at most three batches are
    held at once. ``progress`` shows MB read and tokens made.

    Files go through the bytes pipeline (:mod:`.blocks`) where it applies: read as bytes,
    JSONL fields taken out in C, never a ``str``; everything else through
    :meth:`Tokenizer.encode_batch_packed`. Both give the ids of ``tok.encode`` of each
    document."""
    # Everything is checked now, before the first batch is asked for.
    chosen = choose_dtype(tok.vocab_size, dtype)
    eot_id = _eot_id(tok, eot)
    workers = thread_count(threads, os.cpu_count() or 1)
    assert workers is not None
    resolved = _as_source(source, errors)
    batch_bytes = min(MAX_BATCH_BYTES, max(MIN_BATCH_BYTES, UNIT_BYTES * BATCH_UNITS_PER_THREAD * workers))
    allowed, disallowed = tok.special_policy.sets(allowed_special, disallowed_special)
    bar = Progress(progress, "encoding", _total_megabytes(resolved), " MB")

    def encode_texts(texts: List[str], ends: List[bool]) -> Encoded:
        data, lengths = tok.encode_batch_packed(texts, workers, width=chosen.itemsize, allowed_special=allowed,
                                                disallowed_special=disallowed)
        last = np.asarray(ends, dtype=bool)
        return _with_eot(data, lengths, last, chosen, eot_id)

    def encode_one(text: str) -> Any:
        return tok.encode_batch_packed([text], 1, width=chosen.itemsize, allowed_special=allowed,
                                       disallowed_special=disallowed)

    if blocks.usable(tok, resolved, allowed):
        scanner = tok.encoder.scanner
        native = tok.encoder.native
        needles = [t.encode("utf-8") for t in disallowed]

        def encode_bytes(batch: blocks.ByteBatch) -> Encoded:
            buffer, ends, last = batch.arrays()
            try:
                # The workers look for the disallowed tokens' text in each unit as they
                # encode it: one search of the buffer per token, here, took 0.29 s per
                # 4 MB batch with Llama 3's 256 special tokens, several times the encoding.
                data, counts = native.encode_buffer_packed(buffer, ends, last, scanner, workers, chosen.itemsize,
                                                           -1 if eot_id is None else eot_id, needles, _str_path)
            except (CompiledPatternGaveUp, _StrPath):
                # A compiled pattern gave up, or a unit holds a disallowed token's text: the
                # str path decides, and raises the error of the right document.
                return encode_texts(*batch.texts())
            return data, counts, last.astype(bool)

        byte_batches = blocks.byte_batches(resolved, list(tok.special_tokens), batch_bytes, UNIT_BYTES)
        return _stream(byte_batches, encode_bytes, chosen, eot_id, bar, _byte_batch_texts, encode_one)
    batches = _batches(_units(resolved, tok), batch_bytes)
    return _stream(batches, lambda b: encode_texts(b.texts, b.ends), chosen, eot_id, bar, _batch_texts, encode_one)


class _StrPath(Exception):
    """A unit of a byte batch holds a disallowed special token's text: the batch goes the
    str path, which names the document."""


def _str_path(unit: int) -> None:
    raise _StrPath(unit)


# What encoding a batch gives: the ids as little-endian bytes (each document's eot after it),
# the number of ids of each unit (its eot not counted) and whether each unit ends its document.
Encoded = Tuple[bytes, np.ndarray, np.ndarray]


def _with_eot(data: bytes, lengths: List[int], last: np.ndarray, dtype: np.dtype, eot_id: Optional[int]) -> Encoded:
    counts = np.asarray(lengths, dtype=np.uint64)
    if eot_id is not None and last.any():
        at = np.cumsum(counts, dtype=np.int64)[last]
        data = np.insert(np.frombuffer(data, dtype=dtype), at, eot_id).tobytes()
    return data, counts, last


def _batch_texts(batch: _Batch) -> Tuple[List[str], List[bool]]:
    return batch.texts, batch.ends


def _byte_batch_texts(batch: "blocks.ByteBatch") -> Tuple[List[str], List[bool]]:
    return batch.texts()


def _stream(batches: Iterator[Any], encode: Callable[[Any], Encoded], dtype: np.dtype,
            eot_id: Optional[int], bar: Progress,
            texts_of: Callable[[Any], Tuple[List[str], List[bool]]],
            encode_one: Callable[[str], Any]) -> Generator[EncodedBatch, None, None]:
    documents = tokens = bytes_in = 0
    starting = True  # the next text starts a document
    start = time.perf_counter()
    pool = ThreadPoolExecutor(1, thread_name_prefix="functionalbpe-tokenfile")
    try:
        batch = next(batches, None)
        pending: Optional[Future] = pool.submit(encode, batch) if batch is not None else None
        while batch is not None and pending is not None:
            # Read the next batch while this one is encoded: reading (and, for JSONL, taking
            # the fields out) then costs no time of its own. An error of reading waits for
            # this batch, whose own error (an earlier document's) comes first.
            unread: Optional[BaseException] = None
            try:
                following = next(batches, None)
            except Exception as exc:
                following, unread = None, exc
            try:
                encoded = pending.result()
            except FunctionalBPEError as exc:
                number = _failing_document(texts_of(batch), encode_one, documents + 1)
                named = type(exc)(f"document {number}: {exc}")
                named.__dict__.update(exc.__dict__)  # what the error carries (a special token's text, offset)
                named.document = number
                raise named from None
            if unread is not None:
                raise unread
            pending = pool.submit(encode, following) if following is not None else None
            data, counts, last = encoded
            with_eot = counts + (last if eot_id is not None else 0)
            after = np.cumsum(with_eot, dtype=np.int64)
            before = after - with_eot.astype(np.int64)
            begins = np.empty(len(last), dtype=bool)
            if len(last):
                begins[0] = starting
                begins[1:] = last[:-1]
                starting = bool(last[-1])
            starts = before[begins].tolist()
            ends = after[last].tolist()
            documents += len(ends)
            ids = np.frombuffer(data, dtype=dtype)
            tokens += len(ids)
            bytes_in += batch.size
            yield EncodedBatch(ids, starts, ends, batch.size)
            elapsed = max(time.perf_counter() - start, 1e-9)
            bar.update(bytes_in // 1_000_000, f"{documents:,} docs, {tokens / 1e6:,.1f} M tokens "
                                              f"({tokens / elapsed / 1e6:,.2f} M tokens/s)")
            batch = following
        bar.close()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _failing_document(batch: Tuple[List[str], List[bool]], encode: Callable[[str], Any], first: int) -> int:
    """The number of the first document of ``batch`` (its texts and end flags) whose text
    fails to encode alone, its first text being part of document ``first``: where an error
    of the whole batch comes from."""
    number = first
    texts, ends = batch
    for text, last in zip(texts, ends):
        try:
            encode(text)
        except FunctionalBPEError:
            return number
        number += last
    return first


def encode_to_file(
    tok: "Tokenizes",
    source: Any,
    out: PathLike,
    *,
    format: Optional[str] = None,
    dtype: Any = None,
    eot: Union[None, str, int] = None,
    offsets: Optional[PathLike] = None,
    threads: Optional[int] = None,
    progress: ProgressSpec = None,
    allowed_special: SpecialSet = frozenset(),
    disallowed_special: SpecialSet = "all",
    errors: str = "strict",
) -> EncodeSummary:
    """Encode every document of ``source`` and write the ids to ``out`` (module docstring).

    ``source``: a path, directory or glob (read with :func:`functionalbpe.files`, UTF-8
    errors as ``errors`` says), ``fb.files(...)`` (``.txt``, ``.jsonl`` with its field,
    ``.gz``), or any iterable of documents (``str``), such as a ``datasets`` column. To
    encode one text, pass ``[text]``. Each document's ids are ``tok.encode(doc,
    allowed_special=..., disallowed_special=...)``, followed by ``eot`` (a special token's
    text or an id) when it is given. ``format``: ``npy``, ``bin`` or ``llmc`` (default: from
    the suffix, ``.npy`` or ``.bin``); ``dtype``: ``uint16`` or ``uint32`` (default: the
    smallest that holds every id); ``offsets``: a path for the documents' start offsets.
    The file is the same whatever ``threads`` is.
    """
    kind = choose_format(out, format)
    dtype = choose_dtype(tok.vocab_size, dtype)
    target = check_output_path(out)
    index_path = check_output_path(offsets) if offsets is not None else None
    if index_path is not None and os.path.abspath(index_path) == os.path.abspath(target):
        raise FunctionalBPEError(f"{target}: the offsets file must be another file than the token file")
    given = _as_source(source, errors)
    if isinstance(given, Files):  # a token file written over the corpus it reads would destroy it
        for written in (target, index_path):
            if written is not None:
                refuse_overwriting(written, given.paths, "a file of the corpus")
    allowed, disallowed = tok.special_policy.sets(allowed_special, disallowed_special)
    # Plain text and JSONL files go through one C pipeline per file; everything else as a stream.
    in_c = textfiles.usable(tok, given, allowed, thread_count(threads, os.cpu_count() or 1) or 1)
    stream = None if in_c else encode_stream(tok, given, dtype=dtype, eot=eot, threads=threads, progress=progress,
                                             allowed_special=allowed_special, disallowed_special=disallowed_special)
    start = time.perf_counter()
    tokens = documents = bytes_in = 0
    layout = LAYOUTS[kind]
    token_file = PendingFile(target, seekable=layout.rewrites_header)
    index_file = PendingFile(index_path) if index_path is not None else None

    def too_many() -> FunctionalBPEError:
        return FunctionalBPEError(
            f"{target}: the {kind} layout holds at most {layout.max_tokens:,} tokens; write several files "
            "or use npy"
        )

    try:
        token_file.write(layout.header(dtype, 0))
        if in_c:
            assert isinstance(given, Files)
            workers = thread_count(threads, os.cpu_count() or 1)
            assert workers is not None

            def by_stream(part: Any) -> Iterator[EncodedBatch]:
                return encode_stream(tok, part, dtype=dtype, eot=eot, threads=workers, progress=False,
                                     allowed_special=allowed_special, disallowed_special=disallowed_special)

            documents, tokens, bytes_in = textfiles.encode_files(
                tok, given, token_file, index_file, width=dtype.itemsize, eot_id=_eot_id(tok, eot),
                threads=workers, block=UNIT_BYTES, disallowed=disallowed,
                bar=Progress(progress, "encoding", _total_megabytes(given), " MB"),
                max_tokens=layout.max_tokens, too_many=too_many, fallback=by_stream)
        for encoded in (stream if stream is not None else ()):
            if index_file is not None and encoded.starts:
                index_file.write((np.asarray(encoded.starts, dtype="<u8") + tokens).tobytes())
            token_file.write(encoded.ids.data)
            tokens += len(encoded.ids)
            documents += len(encoded.ends)
            bytes_in += encoded.bytes_in
            if layout.max_tokens is not None and tokens > layout.max_tokens:
                raise too_many()
        token_file.finish(layout.header(dtype, tokens))
        if index_file is not None:
            index_file.write(np.array([tokens], dtype="<u8").tobytes())
            index_file.finish()
            index_file.rename()
        try:
            token_file.rename()
        except BaseException:
            if index_path is not None:
                remove_quietly(index_path)  # renamed already: without its token file it means nothing
            raise
    except BaseException as exc:
        if stream is not None:
            stream.close()
        token_file.discard()
        if index_file is not None:
            index_file.discard()
        if isinstance(exc, FunctionalBPEError) and exc.document is not None and isinstance(given, Files):
            raise _located(exc, given) from None
        raise
    return EncodeSummary(target, kind, dtype.name, documents, tokens, bytes_in,
                         time.perf_counter() - start, index_path)


def _located(exc: FunctionalBPEError, corpus: Files) -> FunctionalBPEError:
    """``exc``, about document ``exc.document`` of ``corpus``, with the file (and line, row
    or item) that holds it named as well."""
    where = corpus.where(exc.document) if exc.document is not None else None
    if where is None:
        return exc
    located = type(exc)(f"{where}: {exc}")
    located.__dict__.update(exc.__dict__)
    return located


def _total_megabytes(source: Any) -> Optional[int]:
    """The size of a source of plain text files in MB, for the progress bar; None when the
    text's size is not the files' or unknown."""
    size = source.text_bytes() if isinstance(source, Files) else None
    return None if size is None else max(1, size // 1_000_000)


def spaced_digits(ids: np.ndarray) -> bytes:
    """Each id as a space and its decimal digits, in ASCII: the text form of ids, made with
    numpy a digit column at a time (``" ".join(map(str, ids))`` takes about four times as long).

    >>> spaced_digits(np.array([12, 0, 345, 7]))
    b' 12 0 345 7'
    """
    values = np.asarray(ids, dtype=np.int64)
    if not len(values):
        return b""
    width = len(str(int(values.max())))
    columns = np.empty((len(values), width + 1), dtype=np.uint8)
    columns[:, 0] = ord(" ")
    rest = values.copy()
    for k in range(width, 0, -1):
        columns[:, k] = rest % 10 + ord("0")
        rest //= 10
    digits = 1 + np.searchsorted(10 ** np.arange(1, width, dtype=np.int64), values, side="right")
    keep = np.arange(width + 1)[None, :] > (width - digits)[:, None]
    keep[:, 0] = True
    return columns[keep].tobytes()
