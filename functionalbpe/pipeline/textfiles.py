"""Plain text and JSON Lines files encoded into a token file by one C pipeline per file.

Each file is mapped read-only and handed to ``_encoder.FileEncoding``
(``csrc/lib/encode/file_encode.h``): with the GIL released, the persistent worker threads
check its UTF-8, then each takes the next block of the file, finds where its unit starts and
ends (the safe cuts of :mod:`functionalbpe.text.cuts`, never inside a special token's text,
the same places whatever the number of threads), encodes the unit, lays its ids out as the
file's bytes (the eot after the file's last) in a ring of slots, and the worker that
completes the next unit in order writes the finished slots with ``write(2)`` to the token
file's descriptor while the others go on encoding. Python runs once per stretch of
``CALL_BYTES_PER_THREAD`` bytes per thread: the progress bar, the token limit of the layout,
and a chance for Ctrl-C.

A ``.jsonl`` file is cut by lines instead (a unit: the lines that start in a block of the
file), and each worker takes its records' field out in C (``csrc/lib/scan/jsonl.c``),
encodes each document alone and lays out its ids with the eot after each; the writer also
writes where each document starts to the offsets file. A unit the workers are not certain
of (a line the C reader leaves to Python, a disallowed special token's text) comes back
here: its lines are read by the function ``fb.files`` reads every line
with and its documents encoded by the stream path, which gives their ids or raises the
error ``fb.files`` or ``encode`` gives, and the workers go on from the unit after it.

A compressed JSONL file is decompressed on a thread of its own into stretches of whole lines
(:func:`_jsonl_stretches`), each handed to ``FileEncoding`` as a file of its own while the next
is decompressed.

What this path does not take stays on :func:`functionalbpe.pipeline.tokenfile.encode_stream`
(:func:`usable`). A unit of a text file that holds the text of a disallowed special token
is encoded again by that path, which raises the error naming the document, as it does for
every other source.
"""
from __future__ import annotations

import mmap
import os
import stat
import time
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterator, List, Optional, Tuple

import numpy as np

from ..core._native import NATIVE, PROGRAM
from ..errors import CorpusError, FunctionalBPEError
from ..text.corpus import (READ_ERRORS, Files, decode_utf8, display_name, is_json_array, is_jsonl, is_parquet,
                           jsonl_line_document, open_file, unreadable, whole_line_reads)
from ..util.output import PendingOutput
from ..util.progress import Progress
from . import blocks

if TYPE_CHECKING:  # pragma: no cover
    from ..interop.protocol import Tokenizes

# Bytes of text per thread between two returns to Python. Each return waits for the last
# units of the stretch (the ring drains): at 16 MiB a thread, about a third of a second of
# encoding, that wait is under 2% of the stretch with units of 256 KiB.
CALL_BYTES_PER_THREAD = 16 << 20
# A compressed file's first stretch, about (then each twice the one before): _jsonl_stretches.
FIRST_STRETCH = 1 << 20
# The UTF-8 of a file is checked first, by the workers, in pieces of this many bytes.
CHECK_BYTES = 1 << 20

_COMPRESSED = (".gz", ".zst")


def usable(tok: "Tokenizes", source: Any, allowed_special: Collection[str], threads: int = 2) -> bool:
    """Whether ``source`` is read by this pipeline: ``fb.files`` of regular plain text and
    JSON Lines files only (a compressed JSONL file on two threads or more), read strictly,
    without ``max_chars`` or ``max_doc_chars``, by a tokenizer with a built-in C scanner (not
    a compiled pattern) that cuts safely where there are text files, with no special token
    allowed, where the C core runs worker threads.

    On one thread a compressed file stays on the stream path: there the calling thread
    decompresses and takes the fields out while one worker encodes, where here that one
    worker takes the fields out too (0.58 s against 0.48 s for 30 MB of JSONL, gzipped;
    on two threads 0.39 s here against 0.50 s there)."""
    module = NATIVE.encoder
    if module is None or not module.file_pipeline_available():
        return False
    if not isinstance(source, Files) or not blocks.usable(tok, source, allowed_special):
        return False
    scanner = tok.encoder.scanner
    if scanner is None or scanner.startswith(PROGRAM):
        return False
    if source.errors != "strict" or source.max_chars is not None or source.max_doc_chars is not None:
        return False
    lines = [is_jsonl(path) for path in source.paths]
    if not all(lines) and not tok.scheme.compiled().cuts_safely:
        return False  # a JSONL document is encoded whole, a text file in units
    for path, jsonl in zip(source.paths, lines):
        if path.name.endswith(_COMPRESSED) and (not jsonl or threads < 2):
            return False
        if not jsonl and (is_parquet(path) or is_json_array(path)):
            return False
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return False
        except OSError:
            return False  # the other path names the file
    return True


# Runs the other path over one file (for the error of a refused special token) or over the
# documents of a unit of a JSONL file (a list of str): it yields its batches
# (tokenfile.EncodedBatch) and raises the error of a document, numbered from 1.
Fallback = Callable[[Any], Any]


def encode_files(tok: "Tokenizes", source: Files, token_file: PendingOutput, index_file: Optional[PendingOutput], *,
                 width: int, eot_id: Optional[int], threads: int, block: int, disallowed: Collection[str],
                 bar: Progress, max_tokens: Optional[int], too_many: Callable[[], FunctionalBPEError],
                 fallback: Fallback) -> Tuple[int, int, int]:
    """Write the ids of every document of ``source`` (a text file is one, a JSONL file one a
    record) to ``token_file``, the start of each to ``index_file``: ``(documents, tokens,
    bytes_in)``, ``bytes_in`` counting a text file's bytes and a JSONL document's text."""
    module = NATIVE.encoder
    assert module is not None
    native = tok.encoder.native
    scanner = tok.encoder.scanner
    avoid = [t.encode("utf-8", "surrogatepass") for t in tok.special_tokens]
    needles = [t.encode("utf-8", "surrogatepass") for t in disallowed]
    key = source.field.encode("utf-8", "surrogatepass")
    per_call = max(1, CALL_BYTES_PER_THREAD * threads // block)
    done = _Done()
    start = time.perf_counter()

    def job_of(data: Any, jsonl: bool) -> Any:
        # Python's buffered writes (the header, an index entry) reach the files before the
        # workers write to their descriptors.
        fd = token_file.fileno()
        index_fd = index_file.fileno() if index_file is not None and jsonl else -1
        return module.FileEncoding(native, data, scanner, block, width, -1 if eot_id is None else eot_id,
                                   needles, avoid, fd, threads, key if jsonl else None, index_fd)

    for path in source.paths:
        jsonl = is_jsonl(path)
        if path.name.endswith(_COMPRESSED):  # JSON Lines (usable): whole lines, a stretch at a time
            lines = offset = 0
            for data in _read_ahead(_jsonl_stretches(path, CALL_BYTES_PER_THREAD * threads)):
                job = job_of(data, True)
                try:
                    lines = _encode_jsonl(job, data, path, source, token_file, index_file, done, per_call, block,
                                          fallback, bar, start, max_tokens, too_many, lines, offset)
                finally:
                    job.release()
                offset += len(data)
            continue
        if index_file is not None and not jsonl:
            index_file.write(np.array([done.tokens], dtype="<u8").tobytes())
        try:
            fh = open(path, "rb")
        except READ_ERRORS as exc:
            raise unreadable(path, exc) from None
        with fh:
            try:
                size = os.fstat(fh.fileno()).st_size
                data: Any = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
            except READ_ERRORS as exc:
                raise unreadable(path, exc) from None
            job = None
            try:
                job = job_of(data, jsonl)
                fd = token_file.fileno()
                if jsonl:
                    _encode_jsonl(job, data, path, source, token_file, index_file, done, per_call, block, fallback, bar,
                                  start, max_tokens, too_many)
                else:
                    _encode_text(job, data, size, path, source, token_file, fd, done, per_call, block, fallback, bar,
                                 start, max_tokens, too_many)
            finally:
                if job is not None:
                    job.release()  # its view of the mapping, which can then close
                if isinstance(data, mmap.mmap):
                    data.close()
            try:
                now = os.fstat(fh.fileno()).st_size
            except OSError:
                now = size
            if now < size:
                raise CorpusError(f"{path}: the file shrank while it was read (to {now:,} of its {size:,} bytes); "
                                  "read it again when nothing is writing it")
    bar.close()
    return done.documents, done.tokens, done.bytes_in


class _Done:
    """What the files so far wrote: documents, ids, bytes of text."""

    def __init__(self) -> None:
        self.documents = self.tokens = self.bytes_in = 0

    def show(self, bar: Progress, megabytes: int, start: float) -> None:
        elapsed = max(time.perf_counter() - start, 1e-9)
        bar.update(megabytes, f"{self.documents:,} docs, {self.tokens / 1e6:,.1f} M tokens "
                              f"({self.tokens / elapsed / 1e6:,.2f} M tokens/s)")


def _failed(failure: Any, token_file: PendingOutput, index_file: Optional[PendingOutput]) -> BaseException:
    """The error of a call's failure other than a unit for Python."""
    if failure == "wide":
        return OverflowError("an id does not fit in 2 bytes; use 4")
    if isinstance(failure, tuple) and index_file is not None:  # ("index", OSError)
        return index_file.failed(failure[1])
    return token_file.failed(failure)


def _encode_text(job: Any, data: Any, size: int, path: Any, source: Files, token_file: PendingOutput, fd: int, done: _Done,
                 per_call: int, block: int, fallback: Fallback, bar: Progress, start: float,
                 max_tokens: Optional[int], too_many: Callable[[], FunctionalBPEError]) -> None:
    """One text file, one document."""
    bad = job.invalid(CHECK_BYTES)
    if bad is not None:
        # Python's own account of the byte, as reading the file in blocks gives it.
        decode_utf8(bytes(data[bad:bad + 8]), display_name(path), "strict", bad)
    number = done.documents + 1
    file_bytes = file_tokens = 0  # what this file wrote
    units = job.units
    for first in range(0, units, per_call):
        ids, count, failure = job.encode(first, min(units, first + per_call))
        done.tokens += ids
        file_tokens += ids
        file_bytes += count
        if failure == "needle":
            done.tokens += _refused(fallback, source, path, number, token_file, fd, file_bytes) - file_tokens
            break
        if failure is not None:
            raise _failed(failure, token_file, None)
        end = min(units, first + per_call)
        _forget(data, (end - 1) * block)
        done.show(bar, (done.bytes_in + min(size, end * block)) // 1_000_000, start)
        if max_tokens is not None and done.tokens > max_tokens:
            raise too_many()
    done.documents += 1
    done.bytes_in += size


def _encode_jsonl(job: Any, data: Any, path: Any, source: Files, token_file: PendingOutput,
                  index_file: Optional[PendingOutput], done: _Done, per_call: int, block: int, fallback: Fallback,
                  bar: Progress, start: float, max_tokens: Optional[int],
                  too_many: Callable[[], FunctionalBPEError], lines: int = 0, offset: int = 0) -> int:
    """One JSONL file, a document a record; or a stretch of whole lines of one, ``data``, at
    ``offset`` in the file after line ``lines``. Returns the number of the last line read."""
    units = job.units
    first = 0
    while first < units:
        end = min(units, first + per_call)
        token_file.fileno()  # what Python wrote for a unit goes first
        if index_file is not None:
            index_file.fileno()
        ids, _, failure = job.encode(first, end, done.tokens)
        written, documents, text_bytes, read = job.last
        done.tokens += ids
        done.documents += documents
        done.bytes_in += text_bytes
        lines += read
        if failure == "python":
            unit_start, unit_stop = job.jsonl_unit(written)
            lines += _jsonl_unit_by_python(bytes(data[unit_start:unit_stop]), offset + unit_start, lines, path,
                                           source, token_file, index_file, done, fallback)
            end = written + 1
        elif failure is not None:
            raise _failed(failure, token_file, index_file)
        first = end
        _forget(data, (end - 1) * block)  # every unit before `end` is written
        done.show(bar, done.bytes_in // 1_000_000, start)
        if max_tokens is not None and done.tokens > max_tokens:
            raise too_many()
    return lines


def _jsonl_stretches(path: Path, stretch: int) -> Iterator[bytes]:
    """A compressed JSONL file, decompressed, as stretches of whole lines of about
    ``stretch`` bytes (the last line may lack its newline), the first of about
    ``FIRST_STRETCH`` and each next twice the one before up to ``stretch``: the workers wait
    for the first alone, and one stretch is decompressed while they encode the one before.
    (With every stretch 32 MiB, the first one's decompression, 0.11-0.15 s of 30 MB gzipped,
    overlapped nothing; growing, two threads encode it 1.13x [0.94-1.44] as fast, paired.) It is read as the
    stream path reads it (:func:`functionalbpe.text.corpus.whole_line_reads`), so that an
    error of reading comes after the lines before it, as there: the whole lines read so far
    are handed out first."""
    whole: List[bytes] = []  # whole lines not handed out yet
    held = 0
    size = min(FIRST_STRETCH, stretch)
    try:
        with open_file(path) as fh:
            for data in whole_line_reads(fh):
                whole.append(data)
                held += len(data)
                if held >= size:
                    yield b"".join(whole)
                    whole, held = [], 0
                    size = min(2 * size, stretch)
    except READ_ERRORS as exc:
        if whole:
            yield b"".join(whole)
        raise unreadable(path, exc) from None
    if whole:
        yield b"".join(whole)


def _read_ahead(stretches: Iterator[bytes]) -> Iterator[bytes]:
    """``stretches``, the next one read on a thread of its own while the caller encodes this
    one: decompressing releases the GIL, so it overlaps the workers. An error of reading is
    raised where the stretch it stopped would have been."""
    pool = ThreadPoolExecutor(1, thread_name_prefix="functionalbpe-read")
    pending = pool.submit(next, stretches, None)
    try:
        while True:
            data = pending.result()
            if data is None:
                return
            pending = pool.submit(next, stretches, None)
            yield data
    finally:
        wait([pending])  # the read in flight, before the reader is closed here
        stretches.close()
        pool.shutdown()


def _jsonl_unit_by_python(data: bytes, offset: int, lines_before: int, path: Any, source: Files,
                          token_file: PendingOutput, index_file: Optional[PendingOutput], done: _Done,
                          fallback: Fallback) -> int:
    """A unit of a JSONL file that the workers handed back (its bytes ``data``, at ``offset``
    in the file, after line ``lines_before``), read and encoded as the stream path does:
    its lines by the function ``fb.files`` reads each line with, where the C reader is not
    certain, and its documents by ``fallback``, whose error names the document by its
    number in the corpus. Its ids and starts are written; returns the lines it holds."""
    module = NATIVE.encoder
    assert module is not None
    name = display_name(path)

    def by_python(line: bytes, number: int, at: int) -> Optional[bytes]:
        doc = jsonl_line_document(line, number, offset + at, name, source.field, source.errors)
        return None if doc is None else doc.encode("utf-8")

    key = source.field.encode("utf-8", "surrogatepass")
    text, ends, _, last_line = module.jsonl_extract(data, key, lines_before, by_python)
    bounds = [0] + ends.tolist()
    documents = [text[a:b].decode("utf-8") for a, b in zip(bounds, bounds[1:])]
    try:
        batches = list(fallback(documents))
    except FunctionalBPEError as exc:
        if exc.document is None:
            raise
        raise _renumbered(exc, done.documents + exc.document) from None
    for batch in batches:
        if index_file is not None and batch.starts:
            index_file.write((np.asarray(batch.starts, dtype="<u8") + np.uint64(done.tokens)).tobytes())
        token_file.write(batch.ids.data)
        done.tokens += len(batch.ids)
        done.documents += len(batch.ends)
        done.bytes_in += batch.bytes_in
    return int(last_line) - lines_before


def _forget(data: Any, end: int) -> None:
    """Let the kernel drop the mapped pages before ``end``: they are read again if needed, and
    the resident memory stays a stretch, not the file."""
    advice = getattr(mmap, "MADV_DONTNEED", None)
    end -= end % mmap.PAGESIZE
    if advice is not None and isinstance(data, mmap.mmap) and end > 0:
        data.madvise(advice, 0, end)


def _refused(fallback: Fallback, source: Files, path: Any, number: int, token_file: PendingOutput, fd: int,
             file_bytes: int) -> int:
    """A unit of file ``number`` holds a disallowed special token's text: the other path
    encodes the file alone and raises its error, renumbered as document ``number``. Should it
    find nothing to refuse, its ids replace the ``file_bytes`` bytes this file wrote so far,
    at the end of the token file: how many ids it wrote."""
    try:
        batches = list(fallback(source.with_block_bytes(source.block_bytes, [path])))
    except FunctionalBPEError as exc:
        if exc.document is None:
            raise
        raise _renumbered(exc, number) from None
    try:
        # This file's bytes so far come off the end (a regular file: the temporary one).
        position = os.lseek(fd, 0, os.SEEK_CUR)
        os.ftruncate(fd, position - file_bytes)
        os.lseek(fd, position - file_bytes, os.SEEK_SET)
        total = 0
        for batch in batches:
            data = memoryview(batch.ids.tobytes())
            while data:
                data = data[os.write(fd, data):]
            total += len(batch.ids)
    except OSError as exc:
        raise token_file.failed(exc) from None
    return total


def _renumbered(exc: FunctionalBPEError, number: int) -> FunctionalBPEError:
    """``exc``, the error of a document of a part of the corpus, as the error of document
    ``number`` of the corpus."""
    prefix = f"document {exc.document}: "
    message = str(exc)
    renamed = type(exc)(f"document {number}: {message[len(prefix):] if message.startswith(prefix) else message}")
    renamed.__dict__.update(exc.__dict__)
    renamed.document = number
    return renamed
