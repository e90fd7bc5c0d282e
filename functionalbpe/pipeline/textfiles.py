"""Plain text files encoded into a token file by one C pipeline per file.

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

What this path does not take stays on :func:`functionalbpe.pipeline.tokenfile.encode_stream`
(:func:`usable`). A unit that holds the text of a disallowed special token is encoded again
by that path, which raises the error naming the document, as it does for every other source.
"""
from __future__ import annotations

import mmap
import os
import stat
import time
from typing import TYPE_CHECKING, Any, Callable, Collection, Optional, Tuple

import numpy as np

from ..core._native import NATIVE, PROGRAM
from ..errors import CorpusError, FunctionalBPEError
from ..text.corpus import READ_ERRORS, Files, decode_utf8, display_name, is_json_array, is_jsonl, is_parquet, unreadable
from ..util.output import PendingOutput
from ..util.progress import Progress
from . import blocks

if TYPE_CHECKING:  # pragma: no cover
    from ..interop.protocol import Tokenizes

# Bytes of text per thread between two returns to Python. Each return waits for the last
# units of the stretch (the ring drains): at 16 MiB a thread, about a third of a second of
# encoding, that wait is under 2% of the stretch with units of 256 KiB.
CALL_BYTES_PER_THREAD = 16 << 20
# The UTF-8 of a file is checked first, by the workers, in pieces of this many bytes.
CHECK_BYTES = 1 << 20

_COMPRESSED = (".gz", ".zst")


def usable(tok: "Tokenizes", source: Any, allowed_special: Collection[str]) -> bool:
    """Whether ``source`` is read by this pipeline: ``fb.files`` of plain, uncompressed,
    regular text files only, read strictly, without ``max_chars`` or ``max_doc_chars``, by a
    tokenizer whose built-in C scanner (not a compiled pattern) cuts safely, with no special
    token allowed, where the C core runs worker threads."""
    module = NATIVE.encoder
    if module is None or not module.file_pipeline_available():
        return False
    if not isinstance(source, Files) or not blocks.usable(tok, source, allowed_special):
        return False
    scanner = tok.encoder.scanner
    if scanner is None or scanner.startswith(PROGRAM) or not tok.scheme.compiled().cuts_safely:
        return False
    if source.errors != "strict" or source.max_chars is not None or source.max_doc_chars is not None:
        return False
    for path in source.paths:
        if is_jsonl(path) or is_parquet(path) or is_json_array(path) or path.name.endswith(_COMPRESSED):
            return False
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return False
        except OSError:
            return False  # the other path names the file
    return True


# Runs the other path over one file, for the error of a refused special token: it yields
# what it wrote (its batches' ids) and raises that error.
Fallback = Callable[[Files], Any]


def encode_files(tok: "Tokenizes", source: Files, token_file: PendingOutput, index_file: Optional[PendingOutput], *,
                 width: int, eot_id: Optional[int], threads: int, block: int, disallowed: Collection[str],
                 bar: Progress, max_tokens: Optional[int], too_many: Callable[[], FunctionalBPEError],
                 fallback: Fallback) -> Tuple[int, int, int]:
    """Write the ids of every file of ``source`` (each one document) to ``token_file``, the
    start of each to ``index_file``: ``(documents, tokens, bytes_in)``."""
    module = NATIVE.encoder
    native = tok.encoder.native
    scanner = tok.encoder.scanner
    avoid = [t.encode("utf-8", "surrogatepass") for t in tok.special_tokens]
    needles = [t.encode("utf-8", "surrogatepass") for t in disallowed]
    per_call = max(1, CALL_BYTES_PER_THREAD * threads // block)
    tokens = bytes_in = 0
    start = time.perf_counter()
    fd = token_file.fileno()
    for number, path in enumerate(source.paths, 1):
        if index_file is not None:
            index_file.write(np.array([tokens], dtype="<u8").tobytes())
        try:
            fh = open(path, "rb")
        except READ_ERRORS as exc:
            raise unreadable(path, exc) from None
        file_bytes = file_tokens = 0  # what this file wrote
        with fh:
            try:
                size = os.fstat(fh.fileno()).st_size
                data: Any = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
            except READ_ERRORS as exc:
                raise unreadable(path, exc) from None
            job = None
            try:
                job = module.FileEncoding(native, data, scanner, block, width, -1 if eot_id is None else eot_id,
                                          needles, avoid, fd, threads)
                bad = job.invalid(CHECK_BYTES)
                if bad is not None:
                    # Python's own account of the byte, as reading the file in blocks gives it.
                    decode_utf8(bytes(data[bad:bad + 8]), display_name(path), "strict", bad)
                units = job.units
                for first in range(0, units, per_call):
                    ids, count, failure = job.encode(first, min(units, first + per_call))
                    tokens += ids
                    file_tokens += ids
                    file_bytes += count
                    if failure == "needle":
                        tokens += _refused(fallback, source, path, number, token_file, fd, file_bytes) - file_tokens
                        break
                    if failure == "wide":
                        raise OverflowError("an id does not fit in 2 bytes; use 4")
                    if failure is not None:
                        raise token_file.failed(failure)
                    done = min(units, first + per_call)
                    _forget(data, (done - 1) * block)
                    shown = bytes_in + min(size, done * block)
                    elapsed = max(time.perf_counter() - start, 1e-9)
                    bar.update(shown // 1_000_000, f"{number - 1:,} docs, {tokens / 1e6:,.1f} M tokens "
                                                   f"({tokens / elapsed / 1e6:,.2f} M tokens/s)")
                    if max_tokens is not None and tokens > max_tokens:
                        raise too_many()
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
        bytes_in += size
    bar.close()
    return len(source.paths), tokens, bytes_in


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
        prefix = f"document {exc.document}: "
        message = str(exc)
        renamed = type(exc)(f"document {number}: {message[len(prefix):] if message.startswith(prefix) else message}")
        renamed.__dict__.update(exc.__dict__)
        renamed.document = number
        raise renamed from None
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
