"""The bytes pipeline of token files: files read as blocks of UTF-8 bytes that reach the C
encoder without ever being a Python ``str``.

:func:`byte_batches` turns the files of :func:`functionalbpe.files` into batches of units
(byte ranges of one buffer, each with whether it ends its document):

* a text file: its blocks, checked as UTF-8 where they are read (``errors`` as ``fb.files``
  says) and cut where no piece can straddle the cut (:meth:`Files.document_units`, the cuts
  of training);
* a ``.jsonl`` file (``.gz`` too): blocks of whole lines whose text fields are taken out in
  C with the GIL released (:func:`functionalbpe.text.corpus.jsonl_runs`, as training reads
  them); a line the C reader is not sure of is read by :func:`functionalbpe.text.corpus.jsonl_line_document`,
  the function ``fb.files`` itself reads every line with, so documents and errors are the
  same.

Each batch is then one call of ``BPE.encode_buffer_packed``: the units are encoded on all
workers without the GIL, and the ids, the eot after each document included, go from C
straight into the bytes written to the file. Per document, Python does nothing at all.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, List, Sequence, Tuple

import numpy as np

from ..core._native import NATIVE
from ..errors import CorpusError
from ..text import cuts
from ..text.corpus import Files, is_json_array, is_jsonl, is_parquet, jsonl_runs, parquet_batches

if TYPE_CHECKING:  # pragma: no cover
    from ..interop.protocol import Tokenizes



@dataclass
class ByteBatch:
    """Units of UTF-8 text: unit k is ``b"".join(parts)[ends[k - 1]:ends[k]]``, the last of
    its document when ``last[k]``."""

    parts: List[bytes] = field(default_factory=list)
    lengths: List[np.ndarray] = field(default_factory=list)  # per part: its units' lengths
    last: List[np.ndarray] = field(default_factory=list)
    size: int = 0

    def add(self, data: bytes, ends: np.ndarray, last: np.ndarray) -> None:
        """Add units whose ends in ``data`` are ``ends``."""
        self.parts.append(data)
        self.lengths.append(np.diff(ends, prepend=np.uint64(0)).astype(np.uint64))
        self.last.append(last.astype(np.uint8))
        self.size += len(data)

    def arrays(self) -> Tuple[bytes, np.ndarray, np.ndarray]:
        """The buffer, the units' ends in it and their end flags."""
        buffer = self.parts[0] if len(self.parts) == 1 else b"".join(self.parts)
        lengths = np.concatenate(self.lengths) if self.lengths else np.zeros(0, np.uint64)
        last = np.concatenate(self.last) if self.last else np.zeros(0, np.uint8)
        return buffer, np.cumsum(lengths, dtype=np.uint64), np.ascontiguousarray(last, dtype=np.uint8)

    def texts(self) -> Tuple[List[str], List[bool]]:
        """The units as ``str`` (for the path that handles what this one does not)."""
        buffer, ends, last = self.arrays()
        starts = np.concatenate([np.zeros(1, np.uint64), ends[:-1]]) if len(ends) else ends
        return ([buffer[int(a):int(b)].decode("utf-8") for a, b in zip(starts, ends)],
                [bool(x) for x in last])


def usable(tok: "Tokenizes", source: Any, allowed_special: Any) -> bool:
    """Whether ``source`` goes through the bytes pipeline: files, the compiled encoder with
    its scanner reading the text as it is (plain scheme with a built-in pattern, the boundary
    markers), no special token allowed (their text is cut out in Python), and text files
    only for a scheme whose pieces survive a safe cut; for JSONL, no ``max_chars`` or
    ``max_doc_chars`` (those count characters in Python)."""
    if not isinstance(source, Files) or allowed_special or NATIVE.encoder is None:
        return False
    if tok.encoder.scanner is None:
        return False
    if any(map(is_json_array, source.paths)):
        return False  # a JSON array is parsed whole, in Python
    jsonl = [is_jsonl(p) or is_parquet(p) for p in source.paths]
    if any(jsonl) and (source.max_chars is not None or source.max_doc_chars is not None):
        return False
    return all(jsonl) or bool(tok.scheme.compiled().cuts_safely)


def byte_batches(source: Files, special_tokens: Sequence[str], batch_bytes: int,
                 unit_bytes: int) -> Iterator[ByteBatch]:
    """The units of ``source`` in order, in batches of about ``batch_bytes``."""
    batch = ByteBatch()
    for data, ends, last in _units(source, special_tokens, unit_bytes):
        batch.add(data, ends, last)
        if batch.size >= batch_bytes:
            yield batch
            batch = ByteBatch()
    if batch.parts:
        yield batch


_ONE_END = np.ones(1, np.uint8)
_NOT_END = np.zeros(1, np.uint8)


def _units(source: Files, special_tokens: Sequence[str], unit_bytes: int) -> Iterator[Tuple[bytes, np.ndarray, np.ndarray]]:
    """``(data, ends, last)`` runs of units, file after file."""
    text_files: List[Path] = []

    def text_units() -> Iterator[Tuple[bytes, np.ndarray, np.ndarray]]:
        # The caller's settings, read in blocks of unit_bytes.
        blocks = source.with_block_bytes(unit_bytes, text_files)
        for unit, ends in blocks.document_units(list(special_tokens)):
            assert isinstance(unit, bytes)  # text files give bytes
            yield unit, np.array([len(unit)], np.uint64), _ONE_END if ends else _NOT_END
        text_files.clear()

    for path in source.paths:
        if is_jsonl(path) or is_parquet(path):
            if text_files:
                yield from text_units()
            if is_parquet(path):
                yield from _parquet_units(path, source.field)
            else:
                yield from _jsonl_units(path, source.field, source.errors)
        else:
            text_files.append(path)  # consecutive text files share one reader (and max_chars)
    if text_files:
        yield from text_units()


def _jsonl_units(path: Path, field: str, errors: str) -> Iterator[Tuple[bytes, np.ndarray, np.ndarray]]:
    """The documents of a JSONL file, a block of whole lines at a time, read in C."""
    for text, ends in jsonl_runs(path, field, errors):
        yield text, ends, np.ones(len(ends), np.uint8)


def _parquet_units(path: Path, field: str) -> Iterator[Tuple[bytes, np.ndarray, np.ndarray]]:
    """The documents of a Parquet file, straight from Arrow's buffers: the UTF-8 of a batch
    of rows and its offsets, no ``str`` per row. The bytes are checked as UTF-8 here (the C
    encoder reads valid UTF-8 only)."""
    import pyarrow as pa

    row = 0  # of the file, where this batch starts
    for column in parquet_batches(path, field):
        if not pa.types.is_large_string(column.type):
            column = column.cast(pa.large_string())
        _, offsets_buffer, data_buffer = column.buffers()
        offsets = np.frombuffer(offsets_buffer, dtype="<i8")[column.offset:column.offset + len(column) + 1]
        first, last = int(offsets[0]), int(offsets[-1])
        data = data_buffer.to_pybytes()[first:last] if data_buffer is not None else b""
        bad, _ = cuts.utf8_invalid(data)
        if bad != len(data):
            k = int(np.searchsorted(offsets, first + bad, side="right")) - 1
            raise CorpusError(f"{path}: row {row + k}: the column {field!r} holds invalid UTF-8 "
                              f"(at byte {first + bad - int(offsets[k])} of the row)")
        yield data, (offsets[1:] - first).astype(np.uint64), np.ones(len(column), np.uint8)
        row += len(column)
