"""Reading a corpus from files.

``files("a.txt", "docs/", "src/**/*.py")`` names the documents to train on: plain files,
directories (every non-hidden text file below them) and glob patterns. Nothing is read until
the corpus is iterated, and each file is read when its turn comes.

A file is one document, except ``.jsonl`` files: one JSON object per line, the document in
its ``field`` (``"text"`` by default); ``.json`` files, known by what they hold: JSON Lines
(what HF ``datasets``' ``to_json()`` writes), or one JSON array of documents (strings, or
objects holding ``field``) — a ``.json`` file of one JSON object (a configuration, a
manifest) is no corpus: refused when named, skipped with a warning under a directory; and
Parquet files (``.parquet``): one document per row, in the string column ``field``. A name ending in ``.gz`` or ``.zst`` is decompressed on
the fly (``a.txt.gz``, ``b.jsonl.zst``). ``.zst`` needs the ``zstandard`` package and
Parquet ``pyarrow`` (``pip install functionalbpe[formats]``), imported only when such a file
is read; ``.gz`` is inflated by ``isal`` (Intel's ISA-L, in the same extra) where it is
installed, three to four times as fast as by the standard library, which reads it otherwise,
with the same text and the same errors.

Input must be UTF-8. By default a bad byte is an error that names the file and the byte
offset; ``errors="replace"`` substitutes U+FFFD instead. A JSON string may also hold a lone
surrogate (``"\\ud800"``), which is no character at all: it is read as U+FFFD, as
``Tokenizer.encode`` reads one, whatever ``errors`` says (the bytes are valid UTF-8). A JSON
line that nests too deeply to read is an error naming file and line; numbers in a line are
never converted to ``int``, so a 5,000-digit one in another field costs nothing.

Only regular files are read (a device such as ``/dev/zero`` would never end), and a damaged
or truncated ``.gz`` file is an error naming it.

Large corpora: :meth:`Files.units` reads a file in blocks cut at safe boundaries
(:mod:`functionalbpe.text.cuts`), so that counting holds one block at a time, and never
decodes the bytes at all on the compiled path. ``max_chars`` stops reading after that many
characters in all; ``max_doc_chars`` keeps only the start of a longer document. Both apply
to every way of reading, so ``list(files(...))`` and the blocks hold the same text.

Example::

    >>> corpus = files(__file__)
    >>> len(corpus), "Reading a corpus" in next(iter(corpus))
    (1, True)
"""
from __future__ import annotations

import codecs
import glob
import gzip
import io
import json
import os
import re
import stat
import warnings
import zlib
from contextlib import closing
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO, FrozenSet, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

from . import cuts
from ..core._native import NATIVE
from ..util.checks import bpe_text
from ..errors import CorpusError
from .patterns import trie_regex
from ..util.checks import PathLike
from ..util.display import plural

_GLOB_CHARS = set("*?[")
# How much of a file found in a directory is sniffed for NUL bytes (binary files are skipped).
_SNIFF = 8192
# Bytes read from a file at a time when streaming; a block is then cut at a safe boundary.
# 1 MiB: the counter's batch (8 MiB) then holds several blocks per thread, so that two
# threads share a batch evenly; with 4 MiB blocks a batch was two blocks, and the last
# batch of a file often one (a thread idle while the other counted it).
BLOCK_BYTES = 1 << 20
# What reading a file can raise: OSError (gzip.BadGzipFile is one), EOFError (a truncated
# .gz file) and zlib.error (a damaged one).
READ_ERRORS = (OSError, EOFError, zlib.error)
# Compressed suffixes, decompressed while reading.
_COMPRESSED = (".gz", ".zst")


class _DamagedFile(OSError):
    """A compressed file (.zst) or a Parquet file that cannot be read: truncated or damaged."""


@dataclass
class ReadStats:
    """What the last pass over a :class:`Files` read (after the caps)."""

    files: int = 0
    documents: int = 0
    chars: int = 0
    truncated_documents: int = 0
    stopped_at_max_chars: bool = False


class Files:
    """The documents of a list of files, read lazily (see the module docstring).

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "a.txt"), "w", encoding="utf-8").write("hello\\n")
    >>> type(files(d)).__name__, list(files(d))
    ('Files', ['hello\\n'])
    """

    def __init__(
        self,
        paths: List[Path],
        errors: str = "strict",
        *,
        field: str = "text",
        max_chars: Optional[int] = None,
        max_doc_chars: Optional[int] = None,
        block_bytes: int = BLOCK_BYTES,
    ) -> None:
        if errors not in ("strict", "replace"):
            raise CorpusError(f"errors must be 'strict' or 'replace', got {errors!r}")
        for name, value in (("max_chars", max_chars), ("max_doc_chars", max_doc_chars)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise CorpusError(f"{name} must be a non-negative integer or None, got {value!r}")
        if not isinstance(field, str) or not field:
            raise CorpusError(f"field must be a non-empty str, got {field!r}")
        self.paths = paths
        self.errors = errors
        self.field = field
        self.max_chars = max_chars
        self.max_doc_chars = max_doc_chars
        self.block_bytes = max(16, int(block_bytes))
        self.stats = ReadStats()

    def __iter__(self) -> Iterator[str]:
        """The documents, whole (a text file is read at once)."""
        for doc in self._documents():
            if isinstance(doc, str):
                yield doc
            else:
                yield "".join(block.decode("utf-8") for block in doc)

    def units(self, special_tokens: Sequence[str] = (), cut: Optional[cuts.Cutter] = None, *,
              runs: bool = False) -> Iterator[Union[str, bytes, "DocumentRun"]]:
        """The text in order, in pieces of bounded size: valid UTF-8 ``bytes`` blocks of a
        text file, cut at safe boundaries, and whole ``str`` documents of a JSONL file. A
        unit never spans two documents, nor an occurrence of one of ``special_tokens``; the
        pieces of the units are those of the documents. ``cut`` finds the safe boundaries
        (default: those of every built-in pattern, :func:`cuts.safe_cut`; a compiled
        pattern's own, :func:`cuts.program_cutter`). ``runs``: the documents of a JSONL
        file as :class:`DocumentRun` instead, read in C, where that is built and no cap is set.
        """
        for unit, _ in self.document_units(special_tokens, cut, runs=runs):
            if unit != b"":  # the unit of an empty file
                yield unit

    def document_units(self, special_tokens: Sequence[str] = (), cut: Optional[cuts.Cutter] = None, *,
                       runs: bool = False) -> Iterator[Tuple[Union[str, bytes, "DocumentRun"], bool]]:
        """:meth:`units`, each with whether it is the last of its document, so that a
        consumer can mark where documents end; an empty document is one empty unit (a
        consumer of :meth:`units` loses nothing by skipping it). A run ends its documents."""
        avoid = [s.encode("utf-8", "surrogatepass") for s in special_tokens if s]
        for doc in self._documents(runs):
            if isinstance(doc, (str, DocumentRun)):
                yield doc, True
                continue
            held: Optional[bytes] = None  # one unit held back: the next one says whether it ends
            for unit in _cut_safely(doc, avoid, cut or cuts.safe_cut):
                if held is not None:
                    yield held, False
                held = unit
            yield (b"" if held is None else held), True

    def unit_texts(self, special_tokens: Sequence[str] = ()) -> Iterator[str]:
        """:meth:`units` as text."""
        for unit in self.units(special_tokens):
            yield unit if isinstance(unit, str) else unit.decode("utf-8")

    def __len__(self) -> int:
        return len(self.paths)

    @property
    def reads_fields(self) -> bool:
        """Does ``field`` apply to any of the files (JSON Lines, a JSON array, Parquet)?

        >>> import os, tempfile
        >>> d = tempfile.mkdtemp()
        >>> _ = open(os.path.join(d, "a.txt"), "w").write("hello")
        >>> files(d).reads_fields
        False
        """
        return any(is_jsonl(p) or is_json_array(p) or is_parquet(p) for p in self.paths)

    def total_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.paths)

    def text_bytes(self) -> Optional[int]:
        """The bytes of text these files hold, when their sizes say it: plain text files read
        whole (for progress bars); None for compressed or JSON or Parquet files, under
        ``max_chars``, or when a file cannot be looked at."""
        if self.max_chars is not None or self.reads_fields or any(p.name.endswith(_COMPRESSED) for p in self.paths):
            return None
        try:
            return self.total_bytes()
        except OSError:
            return None

    def with_block_bytes(self, block_bytes: int, paths: Optional[List[Path]] = None) -> "Files":
        """The same reading (errors, field, caps) in blocks of ``block_bytes``, of ``paths``
        when given (a part of these files), else of all of them."""
        return Files(list(self.paths if paths is None else paths), self.errors, field=self.field,
                     max_chars=self.max_chars, max_doc_chars=self.max_doc_chars, block_bytes=block_bytes)

    def __repr__(self) -> str:
        return f"<functionalbpe.Files: {len(self.paths)} files>"

    # ---- reading ----

    def _documents(self, runs: bool = False) -> Iterator[Union[str, Iterator[bytes], "DocumentRun"]]:
        """Each document, capped: a str (JSONL) or an iterator of valid UTF-8 blocks; with
        ``runs``, the documents of a JSONL file as runs where they can be (no cap)."""
        self.stats = stats = ReadStats()
        runs = runs and self.max_chars is None and self.max_doc_chars is None and NATIVE.encoder is not None
        for path in self.paths:
            if self.max_chars is not None and stats.chars >= self.max_chars:
                stats.stopped_at_max_chars = True
                return
            stats.files += 1
            if runs and is_jsonl(path):
                for run in jsonl_runs(path, self.field, self.errors):
                    stats.documents += len(run.ends)
                    stats.chars += cuts.utf8_length(run.text)
                    yield run
            elif is_jsonl(path) or is_parquet(path) or is_json_array(path):
                reader = _parquet_documents if is_parquet(path) else (
                    _json_array_documents if is_json_array(path) else _jsonl_documents)
                for doc in reader(path, self.field, self.errors):
                    room = self._room()
                    if room is not None and len(doc) > room:
                        doc = doc[:room]
                        stats.truncated_documents += 1
                    stats.documents += 1
                    stats.chars += len(doc)
                    yield doc
                    if self.max_chars is not None and stats.chars >= self.max_chars:
                        stats.stopped_at_max_chars = True
                        return
            else:
                stats.documents += 1
                yield self._capped(_utf8_blocks(path, self.errors, self.block_bytes))

    def where(self, number: int) -> Optional[str]:
        """Where document ``number`` (from 1, in reading order) is: its file, and its line
        (JSONL), row (Parquet) or item (JSON array); None past the last one. The files are
        read again up to it: what an error message calls for, not a loop.

        >>> import os, tempfile
        >>> d = tempfile.mkdtemp()
        >>> _ = open(os.path.join(d, "a.txt"), "w").write("one")
        >>> _ = open(os.path.join(d, "b.jsonl"), "w").write('{"text": "x"}\\n\\n{"text": "y"}\\n')
        >>> files(d).where(3).endswith("b.jsonl, line 3")
        True
        """
        seen = 0
        for path in self.paths:
            if is_parquet(path):
                rows = _parquet_rows(path)
                if number <= seen + rows:
                    return f"{display_name(path)}, row {number - seen - 1}"
                seen += rows
            elif is_json_array(path):
                for k, _ in enumerate(_json_array_documents(path, self.field, self.errors)):
                    seen += 1
                    if seen == number:
                        return f"{display_name(path)}, item {k}"
            elif is_jsonl(path):
                for line, _ in _jsonl_numbered(path, self.field, self.errors):
                    seen += 1
                    if seen == number:
                        return f"{display_name(path)}, line {line}"
            else:
                seen += 1
                if seen == number:
                    return display_name(path)
        return None

    def _room(self) -> Optional[int]:
        """How many more characters the current document may have."""
        room = self.max_doc_chars
        if self.max_chars is not None:
            left = self.max_chars - self.stats.chars
            room = left if room is None else min(room, left)
        return room

    def _capped(self, blocks: Iterator[bytes]) -> Iterator[bytes]:
        room = self._room()
        with closing(blocks):  # stopping early closes the file at once
            for block in blocks:
                if room is not None:
                    chars = cuts.utf8_length(block)
                    if chars > room:
                        block = block[: cuts.utf8_prefix(block, room)]
                        self.stats.truncated_documents += 1
                        self.stats.chars += room
                        if block:
                            yield block
                        return
                    room -= chars
                    self.stats.chars += chars
                else:
                    self.stats.chars += cuts.utf8_length(block)
                if block:
                    yield block


def files(
    *patterns: Union[PathLike, Sequence[PathLike]],
    errors: str = "strict",
    field: str = "text",
    max_chars: Optional[int] = None,
    max_doc_chars: Optional[int] = None,
) -> Files:
    """Name the files of a corpus: paths, directories and glob patterns (``**`` recurses).

    ``field``: the key of the document in each line of a ``.jsonl`` file. ``max_chars``:
    stop after this many characters in all. ``max_doc_chars``: keep only the first this
    many characters of a longer document.

    A missing file, a pattern that matches nothing and a directory without a text file are
    errors, each naming the argument.

    >>> import os, tempfile, functionalbpe as fb
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "a.txt"), "w", encoding="utf-8").write("ab ab\\n")
    >>> fb.train(fb.files(os.path.join(d, "*.txt")), vocab_size=257, progress=False).merges
    [(97, 98)]
    """
    # A list of paths (as glob.glob returns them) stands for its paths.
    patterns = tuple(p for given in patterns for p in (given if isinstance(given, (list, tuple)) else (given,)))
    if not patterns:
        raise CorpusError("no input files given")
    found: List[Path] = []
    for pattern in patterns:
        if not isinstance(pattern, (str, os.PathLike)):
            raise CorpusError(f"files() takes paths, directories and glob patterns, not a {type(pattern).__name__}")
        text = os.fspath(pattern)
        if _GLOB_CHARS & set(text) and not os.path.exists(text):
            matches = sorted(glob.glob(text, recursive=True))
            if not matches:
                raise CorpusError(f"{text}: the pattern matches no file")
            for match in matches:
                found.extend(_expand(Path(match), explicit=False))
        else:
            path = Path(text)
            if not path.exists():
                raise CorpusError(f"{text}: no such file or directory")
            found.extend(_expand(path, explicit=True))
    unique = list(dict.fromkeys(found))
    if len(unique) < len(found):
        again = [p for p in unique if found.count(p) > 1]
        warnings.warn(
            f"{again[0]}{f' and {len(again) - 1} more' if len(again) > 1 else ''} named more than once (by the "
            "same path, a pattern or a directory): each file is read once", stacklevel=2)
    return Files(unique, errors, field=field, max_chars=max_chars, max_doc_chars=max_doc_chars)


def _expand(path: Path, explicit: bool) -> List[Path]:
    if path.is_file():
        # A file named on purpose is read whatever it holds (but a JSON file that is no
        # corpus is refused); one found by a pattern or under a directory is skipped when it
        # looks binary or is such a JSON file, and the skipped JSON files are named.
        if _not_a_corpus(path):
            if explicit:
                raise CorpusError(f"{path}: {_NOT_A_CORPUS}; name the corpus files")
            _warn_skipped([path])
            return []
        return [path] if explicit or is_parquet(path) or not _looks_binary(path) else []
    if path.is_dir():
        out, skipped = [], []
        for root, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                candidate = Path(root) / name
                if name.startswith(".") or not candidate.is_file():
                    continue
                if _not_a_corpus(candidate):
                    skipped.append(candidate)
                elif is_parquet(candidate) or not _looks_binary(candidate):
                    out.append(candidate)
        _warn_skipped(skipped)
        if not out:
            raise CorpusError(f"{path}: the directory holds no text file")
        return out
    raise CorpusError(f"{path}: not a regular file or directory")


_NOT_A_CORPUS = ("a .json file holding one JSON object (a configuration, a manifest, a tokenizer), "
                 "neither JSON Lines nor a JSON array of documents")


def _not_a_corpus(path: Path) -> bool:
    return _stem(path).endswith(".json") and _json_form(path) is None


def _warn_skipped(paths: List[Path]) -> None:
    if paths:
        shown = ", ".join(map(str, paths[:3])) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        warnings.warn(f"skipped {shown}: {_NOT_A_CORPUS}", stacklevel=4)


def _looks_binary(path: Path) -> bool:
    try:
        with open_file(path) as fh:
            return b"\0" in fh.read(_SNIFF)
    except (gzip.BadGzipFile, _DamagedFile):
        return True  # a .gz or .zst file that is not one: not a text file we can read
    except READ_ERRORS as exc:
        raise unreadable(path, exc) from None


def read_text(path: PathLike, errors: str = "strict") -> str:
    """Read a UTF-8 file (``.gz``: decompressed); a bad byte is a :class:`CorpusError`
    naming file and offset."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise CorpusError(f"{path}: not a regular file")
        with open_file(Path(path)) as fh:
            data = fh.read()
    except READ_ERRORS as exc:
        raise unreadable(path, exc) from None
    return decode_utf8(data, display_name(Path(path)), errors)


def unreadable(path: PathLike, exc: BaseException) -> CorpusError:
    if isinstance(exc, _DamagedFile):
        return CorpusError(f"{path}: {exc}")
    if isinstance(exc, (EOFError, zlib.error, gzip.BadGzipFile)):
        return CorpusError(f"{path}: cannot decompress ({exc}): the .gz file is truncated, damaged or not gzip")
    if isinstance(exc, FileNotFoundError):
        return CorpusError(f"{path}: no such file")
    return CorpusError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}")


def decode_utf8(data: bytes, name: str, errors: str = "strict", base_offset: int = 0,
                line: Optional[int] = None) -> str:
    """Decode UTF-8, naming ``name``, the line (when ``data`` is line ``line``) and the
    absolute byte offset of the first bad byte."""
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise _bad_utf8(name, data, exc, base_offset, line) from None


def _bad_utf8(name: str, data: bytes, exc: UnicodeDecodeError, base_offset: int,
              line: Optional[int] = None) -> CorpusError:
    bad = data[exc.start : exc.end]
    where = "" if line is None else f"line {line}: "
    return CorpusError(
        f"{name}: {where}invalid UTF-8 at byte offset {base_offset + exc.start} "
        f"(bytes {bad.hex(' ')}: {exc.reason}); convert the file to UTF-8, or pass "
        "errors='replace' (CLI: --encoding-errors replace) to read bad bytes as U+FFFD"
    )


# ---- streaming ----


def open_file(path: Path) -> BinaryIO:
    if path.name.endswith(".zst"):
        return io.BufferedReader(_ZstdRaw(path), 1 << 16)  # type: ignore[return-value]
    if path.name.endswith(".gz"):
        igzip = _isal_gzip()
        if igzip is None:
            return gzip.open(path, "rb")  # type: ignore[return-value]
        return io.BufferedReader(_GzipRaw(path, igzip), 1 << 16)  # type: ignore[return-value]
    return io.BufferedReader(_WholeFile(path), 1 << 16)  # type: ignore[return-value]


def _isal_gzip() -> Any:
    """isal's gzip module (optional: ``functionalbpe[formats]``), or None. Its inflater
    (Intel ISA-L) is three to four times zlib's speed: 40 MB of the shared corpora as one
    gzip stream, 0.037 s against 0.12-0.14 s (read 1 MiB at a time, best of two each); a
    compressed JSONL file is inflated on a thread of its own while the others encode it
    (pipeline/textfiles.py), so its inflating is the part of the job that more threads
    cannot shorten."""
    try:
        from isal import igzip
    except ImportError:
        return None
    return igzip


class _GzipRaw(io.RawIOBase):
    """A .gz file's bytes inflated by isal. Where isal fails (a damaged, truncated or
    padded file), the standard library's gzip reads the file again, skipping the bytes
    already handed out, and the reading fails as it does without isal, with gzip's error
    (isal says EOFError for bytes after the last member, which gzip calls no gzip file and
    a directory's listing skips, and raises its own class where zlib raises zlib.error).
    The bytes before an error are the file's text up to about where each reader stops."""

    def __init__(self, path: Path, igzip: Any) -> None:
        self._path = path
        self._fh: Any = None  # for close() where the file cannot be opened
        self._done = 0
        self._isal = True
        self._fh = igzip.open(path, "rb")

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        try:
            n = self._fh.readinto(target)
        except Exception:
            if not self._isal:
                raise
            self._standard_library()
            n = self._fh.readinto(target)
        self._done += n
        return int(n)

    def _standard_library(self) -> None:
        self._fh.close()
        self._isal = False
        self._fh = gzip.open(self._path, "rb")
        self._fh.seek(self._done)  # read and dropped, as far as the file goes

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
        super().close()


class _WholeFile(io.FileIO):
    """A file read to its end, or an error: one that shrinks while it is read (truncated by
    another process) would otherwise end early, and its text would silently be shorter.
    A file that grows is read to its new end."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "rb")
        self._size = os.fstat(self.fileno()).st_size
        self._done = 0
        self._path = path

    def readinto(self, buffer: Any) -> Optional[int]:
        n = super().readinto(buffer)
        if n == 0 and len(memoryview(buffer)):
            self._check_end()
        self._done += n or 0
        return n

    def readall(self) -> bytes:
        data = super().readall()
        self._done += len(data)
        self._check_end()
        return data

    def _check_end(self) -> None:
        if self._done < self._size:
            raise CorpusError(f"{self._path}: the file shrank while it was read (it ended after {self._done:,} of "
                              f"its {self._size:,} bytes); read it again when nothing is writing it")


def display_name(path: Path) -> str:
    # Offsets in a compressed file count bytes of the decompressed text: say so.
    return f"{path} (decompressed)" if path.name.endswith(_COMPRESSED) else str(path)


def is_jsonl(path: Path) -> bool:
    """One JSON document a line: a ``.jsonl`` file, or a ``.json`` file that holds JSON Lines
    (what HF ``datasets``' ``to_json()`` writes by default)."""
    stem = _stem(path)
    return stem.endswith(".jsonl") or (stem.endswith(".json") and _json_form(path) == "lines")


def is_json_array(path: Path) -> bool:
    """A ``.json`` file holding one JSON array of documents (strings, or objects with the field)."""
    return _stem(path).endswith(".json") and _json_form(path) == "array"


def _json_form(path: Path) -> Optional[str]:
    """What a ``.json`` file holds, from its start: ``"lines"`` (its first line is a whole JSON
    object), ``"array"``, or None (one JSON object over many lines: a configuration, a
    manifest, a tokenizer — no corpus)."""
    try:
        info = path.stat()
    except OSError:
        return None
    return _json_form_of(str(path), info.st_mtime_ns, info.st_size)


@lru_cache(maxsize=1024)
def _json_form_of(name: str, mtime_ns: int, size: int) -> Optional[str]:
    try:
        with open_file(Path(name)) as fh:
            head = fh.read(_SNIFF)
            head += fh.readline() if b"\n" not in head else b""  # the first line whole
    except READ_ERRORS:
        return None  # read again (and refused, naming the file) as a document
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if start.startswith(b"["):
        return "array"
    if not start.startswith(b"{"):
        return None
    try:
        return "lines" if isinstance(json.loads(start.split(b"\n", 1)[0]), dict) else None
    except ValueError:
        return None


def _json_array_documents(path: Path, field: str, errors: str) -> Iterator[str]:
    """The documents of a JSON array file: each item a string, or an object holding ``field``."""
    name = display_name(path)
    try:
        with open_file(path) as fh:
            data = fh.read()
    except READ_ERRORS as exc:
        raise unreadable(path, exc) from None
    try:
        items = json.loads(decode_utf8(data, name, errors), parse_int=float)
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{name}: not JSON ({exc.msg}, line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise CorpusError(f"{name}: the JSON nests too deeply to read") from None
    if not isinstance(items, list):
        raise CorpusError(f"{name}: not a JSON array of documents")
    for k, item in enumerate(items):
        doc = item.get(field) if isinstance(item, dict) else item
        if not isinstance(doc, str):
            raise CorpusError(
                f"{name}: item {k}: neither a string nor an object with the string field {field!r}; pass "
                "field=... (CLI: --field) to name the field that holds the text"
            )
        yield bpe_text(doc)


def is_parquet(path: Path) -> bool:
    return path.name.endswith(".parquet")


def _stem(path: Path) -> str:
    """The name without a compressed suffix."""
    name = path.name
    for suffix in _COMPRESSED:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _optional(module: str, path: Path) -> Any:
    """An optional package a file format needs, or an error saying how to get it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        package = {"zstandard": "zstandard", "pyarrow.parquet": "pyarrow"}[module]
        raise CorpusError(
            f"{path}: reading this file needs the {package} package: pip install {package} "
            "(or functionalbpe[formats])"
        ) from None


class _ZstdRaw(io.RawIOBase):
    """A .zst file's decompressed bytes (frames one after another, as ``zstd`` writes
    them), never more at a time than asked for: zstd's smallest block (4 bytes) stands for
    128 KiB, so a 91 KB file can hold a gigabyte, which inflating a megabyte of input at a
    time held in memory at once. A file that ends inside a frame is an error (checked from
    the frames' headers at the end): zstandard's reader would end there silently, as if the
    text were whole."""

    def __init__(self, path: Path) -> None:
        self._zstd = _optional("zstandard", path)
        self._path = path
        self._fh = open(path, "rb")
        self._reader = self._zstd.ZstdDecompressor().stream_reader(self._fh, read_size=1 << 16,
                                                                   read_across_frames=True, closefd=False)

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        try:
            n = self._reader.readinto(target)
        except self._zstd.ZstdError as exc:
            raise _DamagedFile(f"cannot decompress ({exc}): the .zst file is damaged or not zstd") from None
        if n == 0 and len(target) and not _zstd_frames_whole(self._path):
            raise _DamagedFile("cannot decompress: the .zst file is truncated")
        return int(n)

    def close(self) -> None:
        self._reader.close()
        self._fh.close()
        super().close()


def _zstd_frames_whole(path: Path) -> bool:
    """Does the file hold whole frames, one after another? Read from their headers alone
    (RFC 8878: a frame's header, then blocks, each a 3-byte header and its content, the last
    one flagged, then a checksum when the header says so; skippable frames say their size)."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        at = 0
        while at < size:
            fh.seek(at)
            head = fh.read(18)  # magic, descriptor, window, dictionary id, content size
            if len(head) < 5:
                return False
            magic = int.from_bytes(head[:4], "little")
            if 0x184D2A50 <= magic <= 0x184D2A5F:  # a skippable frame
                if len(head) < 8:
                    return False
                at += 8 + int.from_bytes(head[4:8], "little")
                continue
            if magic != 0xFD2FB528:
                return False
            descriptor = head[4]
            single = descriptor >> 5 & 1
            at += 5 + (0 if single else 1) + (0, 1, 2, 4)[descriptor & 3] + (single, 2, 4, 8)[descriptor >> 6]
            while True:
                fh.seek(at)
                block = fh.read(3)
                if len(block) < 3:
                    return False
                value = int.from_bytes(block, "little")
                kind, length = value >> 1 & 3, value >> 3
                at += 3 + (1 if kind == 1 else length)
                if value & 1:
                    break
            at += 4 if descriptor >> 2 & 1 else 0
            if at > size:
                return False
    return at == size


# Rows of a Parquet file read at a time.
PARQUET_BATCH_ROWS = 4096


def parquet_batches(path: Path, field: str) -> Iterator[Any]:
    """The string column ``field`` of a Parquet file, as pyarrow arrays of a few thousand
    rows; a missing column, a column of another type and a null value are errors naming the
    file (and the row)."""
    pq = _optional("pyarrow.parquet", path)
    import pyarrow as pa

    try:
        # Page checksums verified where the writer wrote them: a flipped bit is an error, not
        # other text.
        reader = pq.ParquetFile(path, page_checksum_verification=True)
        names = reader.schema_arrow.names
        if field not in names:
            raise CorpusError(f"{path}: no column {field!r} (its columns: {', '.join(names)}); pass field=... "
                              "(CLI: --field) to name the column that holds the text")
        if names.count(field) > 1:
            raise CorpusError(f"{path}: {names.count(field)} columns are named {field!r}; which holds the text?")
        kind = reader.schema_arrow.field(field).type
        coded = pa.types.is_dictionary(kind)  # a categorical column: each row an index into its values
        values = kind.value_type if coded else kind
        if not (pa.types.is_string(values) or pa.types.is_large_string(values)):
            raise CorpusError(f"{path}: column {field!r} holds {kind}, not strings")
        index = reader.schema_arrow.get_field_index(field)
        row = 0
        for group in range(reader.num_row_groups):
            for batch in reader.iter_batches(batch_size=_parquet_batch_rows(reader, group, index, path, field),
                                             row_groups=[group], columns=[field]):
                column = batch.column(0)
                if column.null_count:
                    bad = row + column.is_null().to_pylist().index(True)
                    raise CorpusError(f"{path}: row {bad}: the column {field!r} is null, not a string")
                if coded:
                    yield from _decoded(column, row, path, field)
                else:
                    yield column
                row += len(column)
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: cannot read as Parquet ({exc})") from None


# The text of a batch of Parquet rows read at once, about; and the most a row may average in a
# row group: a 17 KB file can hold one row of 512 MiB (its page compressed), which Arrow would
# inflate whole before a single character of it could be looked at.
PARQUET_BATCH_BYTES = 64 << 20
PARQUET_MAX_ROW_BYTES = 64 << 20


def _decoded(column: Any, row: int, path: Path, field: str) -> Iterator[Any]:
    """A dictionary-encoded batch as plain strings, about PARQUET_BATCH_BYTES at a time. Its
    size is known from the values' lengths before anything is decoded: a few bytes of
    indices can stand for one long value repeated a million times."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    lengths = np.asarray(pc.binary_length(column.dictionary).to_numpy(zero_copy_only=False), np.int64)
    sizes = lengths[np.asarray(column.indices.to_numpy(zero_copy_only=False), np.int64)] if len(lengths) else \
        np.zeros(len(column), np.int64)
    too_long = np.flatnonzero(sizes > PARQUET_MAX_ROW_BYTES)
    if len(too_long):
        raise CorpusError(f"{path}: row {row + int(too_long[0])}: the column {field!r} holds "
                          f"{int(sizes[too_long[0]]):,} bytes, more than the {PARQUET_MAX_ROW_BYTES >> 20} MiB a "
                          "document may have in a Parquet file")
    ends = np.cumsum(sizes)
    start = 0
    while start < len(column):
        base = int(ends[start - 1]) if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, base + PARQUET_BATCH_BYTES, side="right")))
        yield column.slice(start, stop - start).cast(pa.large_string())
        start = stop


def _parquet_rows(path: Path) -> int:
    """The rows of a Parquet file, from its metadata."""
    pq = _optional("pyarrow.parquet", path)
    import pyarrow as pa

    try:
        return int(pq.ParquetFile(path).metadata.num_rows)
    except (pa.ArrowException, OSError) as exc:
        raise CorpusError(f"{path}: cannot read as Parquet ({exc})") from None


def _parquet_batch_rows(reader: Any, group: int, index: int, path: Path, field: str) -> int:
    """Rows read at a time from a row group: about PARQUET_BATCH_BYTES of its text column,
    from the size the file's metadata gives it uncompressed (checked before it is read)."""
    meta = reader.metadata.row_group(group)
    rows = max(1, meta.num_rows)
    size = meta.column(index).total_uncompressed_size
    if size // rows > PARQUET_MAX_ROW_BYTES:
        raise CorpusError(
            f"{path}: row group {group}: the column {field!r} holds {size:,} bytes in {plural(rows, 'row')} uncompressed, more "
            f"than the {PARQUET_MAX_ROW_BYTES >> 20} MiB a document may have in a Parquet file (a row is read whole)"
        )
    return int(max(1, min(PARQUET_BATCH_ROWS, rows * PARQUET_BATCH_BYTES // max(1, size))))


def _parquet_documents(path: Path, field: str, errors: str) -> Iterator[str]:
    """The documents of a Parquet file (valid Unicode already: Arrow checks its strings),
    as tokenization reads them."""
    row = 0  # of the file, where this batch starts
    for column in parquet_batches(path, field):
        try:
            docs = column.to_pylist()
        except UnicodeDecodeError:
            for k in range(len(column)):  # which row: read one at a time, only now
                try:
                    column[k].as_py()
                except UnicodeDecodeError as exc:
                    raise CorpusError(f"{path}: row {row + k}: the column {field!r} holds invalid UTF-8 "
                                      f"(at byte {exc.start} of the row)") from None
            raise
        yield from docs
        row += len(column)


def _utf8_blocks(path: Path, errors: str, block_bytes: int) -> Iterator[bytes]:
    """The file as valid UTF-8 blocks (a character is never split between two)."""
    name = display_name(path)
    carry = b""
    position = 0  # file offset of carry[0]
    replacing = None  # an incremental decoder, once errors="replace" met a bad byte
    try:
        with open_file(path) as fh:
            while True:
                raw = fh.read(block_bytes)
                final = not raw
                if replacing is not None:
                    text = replacing.decode(raw, final)
                    if text:
                        yield text.encode("utf-8")
                    if final:
                        return
                    continue
                data = carry + raw if carry else raw
                bad, incomplete = cuts.utf8_invalid(data)
                if bad == len(data):
                    carry = b""
                elif incomplete and not final:
                    carry = data[bad:]  # a character cut by the block's end: finish it next time
                    data = data[:bad]
                elif errors == "strict":
                    raise _bad_utf8(name, data, _decode_error(data), position)
                else:
                    replacing = codecs.getincrementaldecoder("utf-8")("replace")
                    text = replacing.decode(data, final)
                    carry = b""
                    if text:
                        yield text.encode("utf-8")
                    if final:
                        return
                    continue
                position += len(data)
                if data:
                    yield data
                if final:
                    return
    except READ_ERRORS as exc:
        raise unreadable(path, exc) from None


def _decode_error(data: bytes) -> UnicodeDecodeError:
    """Python's own account of the first bad byte of ``data`` (which has one)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc
    raise ValueError("no invalid UTF-8 in data")  # the caller found some: a bug if reached


def _cut_safely(blocks: Iterator[bytes], avoid: Sequence[bytes] = (),
                cut_at: cuts.Cutter = cuts.safe_cut) -> Iterator[bytes]:
    """Re-cut the blocks of one document at safe boundaries (cuts.py), so that every
    unit's pieces are the document's pieces there, and never inside an occurrence of a
    byte string of ``avoid`` (special tokens). A stretch without a safe place (a megabyte of
    spaces) stays in one unit, however long."""
    pending = bytearray()
    # A cut at c is judged on the bytes from c on: one for the patterns, a whole token for
    # a special token that might start before c.
    margin = max([1] + [len(token) for token in avoid])
    finder = _bytes_finder(frozenset(avoid)) if avoid else None
    searched = 0  # no usable cut at or before this offset of pending
    for block in blocks:
        pending += block
        top = len(pending) - margin
        cut = cut_at(pending, searched, top) if top > searched else 0
        while cut and finder is not None and _inside_any(pending, cut, finder, margin):
            cut = cut_at(pending, searched, cut - 1)
        if cut:
            yield bytes(memoryview(pending)[:cut])
            del pending[:cut]  # cheap: a bytearray drops its front without copying
            searched = top - cut
        else:
            searched = max(searched, top)
    if pending:
        yield bytes(pending)


@lru_cache(maxsize=16)
def _bytes_finder(avoid: FrozenSet[bytes]) -> "re.Pattern[bytes]":
    """patterns.special_finder for byte strings: the longest of ``avoid`` at a position."""
    return re.compile(trie_regex([token.decode("latin-1") for token in avoid]).encode("latin-1"))


def _inside_any(data: bytearray, cut: int, finder: "re.Pattern[bytes]", margin: int) -> bool:
    """Does an occurrence of a special token start before ``cut`` and end after it? One
    match of the combined finder per start that could reach past ``cut`` (the longest token
    at a start is the one to look at), instead of a search per token."""
    for start in range(max(0, cut - margin + 1), cut):
        match = finder.match(data, start)
        if match is not None and match.end() > cut:
            return True
    return False


def _jsonl_documents(path: Path, field: str, errors: str) -> Iterator[str]:
    for _, doc in _jsonl_numbered(path, field, errors):
        yield doc


def _jsonl_numbered(path: Path, field: str, errors: str) -> Iterator[Tuple[int, str]]:
    """The documents of a JSONL file, each with its line number (blank lines hold none)."""
    name = display_name(path)
    position = 0
    try:
        with open_file(path) as fh:
            for number, line in enumerate(fh, 1):
                start = position
                position += len(line)
                doc = jsonl_line_document(line, number, start, name, field, errors)
                if doc is not None:
                    yield number, doc
    except READ_ERRORS as exc:
        raise unreadable(path, exc) from None


# Bytes of a JSONL file read at a time (then cut after the last whole line).
JSONL_READ_BYTES = 1 << 20


class DocumentRun(NamedTuple):
    """Documents one after another: their UTF-8 in ``text`` (valid) and where each ends in
    it (``ends``, uint64); document k is ``text[ends[k - 1]:ends[k]]``, the first from 0."""

    text: bytes
    ends: Any


def jsonl_runs(path: Path, field: str, errors: str) -> Iterator[DocumentRun]:
    """The documents of a JSONL file, a read of whole lines at a time, their text fields
    taken out in C with the GIL released (``_encoder.jsonl_extract``,
    ``csrc/lib/scan/jsonl.c``): no ``str`` per document. A line the C reader is not sure of
    is read by :func:`jsonl_line_document`, whose errors name the line. Training on 114 MB of
    JSON Lines read so takes 3.3 s on one thread, where reading each line with ``json`` took
    10.8 s (the same text as a ``.txt`` file: 3.1 s)."""
    encoder = NATIVE.encoder
    assert encoder is not None
    name = display_name(path)
    key = field.encode("utf-8", "surrogatepass")
    lines_before = 0
    block_start = 0  # the file offset of the block's first byte

    def by_python(line: bytes, number: int, at: int) -> Optional[bytes]:
        doc = jsonl_line_document(line, number, block_start + at, name, field, errors)
        return None if doc is None else doc.encode("utf-8")

    try:
        with open_file(path) as fh:
            for data in whole_line_reads(fh):
                text, ends, _, lines_before = encoder.jsonl_extract(data, key, lines_before, by_python)
                block_start += len(data)
                if len(ends):
                    yield DocumentRun(text, ends)
    except READ_ERRORS as exc:
        raise unreadable(path, exc) from None


def whole_line_reads(fh: Any) -> Iterator[bytes]:
    """What ``fh`` holds, ``JSONL_READ_BYTES`` read at a time, each read cut after its last
    newline and the rest carried to the next (the last may lack its newline). A line longer
    than a read is kept in parts: only each new read is searched for a newline and the parts
    are joined once, when the line is whole (joining and searching them again on every read
    took 82 s for one line of 400 MB)."""
    carry: List[bytes] = []
    while True:
        raw = fh.read(JSONL_READ_BYTES)
        if raw:
            cut = raw.rfind(b"\n") + 1
            if not cut:  # one line longer than a read so far
                carry.append(raw)
                continue
            data = b"".join(carry + [raw[:cut]]) if carry else raw[:cut]
            carry = [raw[cut:]] if cut < len(raw) else []
        else:
            data = b"".join(carry)
            carry = []
        if data:
            yield data
        if not raw:
            return


# One decoder for every line: json.loads with an option makes a new one a call, which was a
# fifth of reading short JSON lines.
_RECORDS = json.JSONDecoder(parse_int=float)


def jsonl_line_document(line: bytes, number: int, offset: int, name: str, field: str, errors: str) -> Optional[str]:
    """The document of one JSONL line (line ``number``, at byte ``offset`` of the file
    ``name``), as tokenization reads it (:func:`bpe_text`); None for a blank line. Every
    error names file and line. The compiled reader (``csrc/lib/scan/jsonl.c``) reads the lines it
    is sure of the same way and hands every other line to this function."""
    text = decode_utf8(line, name, errors, offset, number)
    if not text.strip():
        return None
    try:
        # Only the text field is used: numbers are read as floats, which cannot
        # fail, where int() refuses more than 4,300 digits.
        # (json.loads refuses a byte order mark first, with a message of its own.)
        record = json.loads(text, parse_int=float) if text.startswith("\ufeff") else _RECORDS.decode(text)
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{name}: line {number}: not JSON ({exc.msg}, column {exc.colno})") from None
    except RecursionError:
        raise CorpusError(f"{name}: line {number}: the JSON nests too deeply to read") from None
    doc = record.get(field) if isinstance(record, dict) else None
    if not isinstance(doc, str):
        raise CorpusError(
            f"{name}: line {number}: no string field {field!r}; pass field=... "
            "(CLI: --field) to name the field that holds the text"
        )
    # Only a \u escape can make a lone surrogate.
    return bpe_text(doc) if b"\\u" in line else doc
