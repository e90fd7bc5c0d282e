"""Token files on disk: the layouts, their headers, and reading them back.

One record per layout (:data:`LAYOUTS`); the encoder (:mod:`functionalbpe.pipeline.tokenfile`),
the CLI's ``--format`` and the Dask writer take their choices from here, so a new layout is
a record, its header and its reader, in this file:

* ``npy`` — a NumPy ``.npy`` file, 1-D: ``np.load(path, mmap_mode="r")`` reads it;
* ``bin`` — the ids alone, little-endian, no header: what nanoGPT's ``prepare.py`` writes
  and its training loop reads with ``np.memmap(path, dtype=np.uint16, mode="r")``;
* ``llmc`` — llm.c's ``.bin``: a header of 256 little-endian int32 (magic, version, number
  of tokens, then zeros), then the ids. As ``dev/data/data_common.py::write_datafile`` of
  karpathy/llm.c writes it: magic 20240520, version 1 for uint16 ids ("gpt-2"), magic
  20240801, version 7 for uint32 ids ("llama-3"); fewer than 2³¹ tokens.

Every file read is untrusted: a header is checked against the file's size before anything is
mapped, and anything wrong is a :class:`~functionalbpe.errors.FunctionalBPEError` naming the
file.

>>> LAYOUTS["llmc"].suffix, LAYOUTS["llmc"].max_tokens, len(header_for("npy", np.dtype("<u2"), 3))
('.bin', 2147483647, 128)
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional

import numpy as np

from ..errors import FunctionalBPEError
from ..util.checks import PathLike

DTYPES: Dict[str, np.dtype] = {"uint16": np.dtype("<u2"), "uint32": np.dtype("<u4")}

# llm.c's header: 256 int32; (magic, version) by id width, as its write_datafile sets them.
LLMC_HEADER_INTS = 256
LLMC_HEADER_BYTES = 4 * LLMC_HEADER_INTS
LLMC_KINDS = {2: (20240520, 1), 4: (20240801, 7)}
LLMC_MAX_TOKENS = (1 << 31) - 1

# The .npy header is written with room for any length and rewritten at the end: 128 bytes
# (a multiple of 64, as NumPy aligns it), the dictionary padded with spaces.
NPY_HEADER_BYTES = 128
NPY_MAGIC = b"\x93NUMPY\x01\x00"


# -- choosing the layout ----------------------------------------------------------------------


def choose_format(path: PathLike, format: Optional[str]) -> str:
    """``format`` if given, else the one the suffix names (``.npy``, ``.bin``).

    >>> choose_format("train.bin", None), choose_format("x.dat", "llmc")
    ('bin', 'llmc')
    """
    if format is not None:
        if format not in FORMATS:
            raise FunctionalBPEError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
        return format
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in SUFFIXES:
        raise FunctionalBPEError(
            f"{os.fspath(path)}: cannot tell the format from the suffix {suffix or '(none)'!r}; name the "
            f"file .npy or .bin, or pass format= one of {', '.join(FORMATS)} (llm.c's .bin is format='llmc')"
        )
    return SUFFIXES[suffix]


def choose_dtype(vocab_size: int, dtype: Any = None) -> np.dtype:
    """uint16 when every id fits (``vocab_size <= 65536``), else uint32; a forced uint16 on
    a larger vocabulary is an error.

    >>> str(choose_dtype(50257)), str(choose_dtype(100277))
    ('uint16', 'uint32')
    """
    if dtype is None:
        return DTYPES["uint16"] if vocab_size <= 1 << 16 else DTYPES["uint32"]
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = None
    if name not in DTYPES:
        raise FunctionalBPEError(f"dtype must be uint16 or uint32, got {dtype!r}")
    chosen = DTYPES[name]
    if vocab_size > 1 << (8 * chosen.itemsize):
        raise FunctionalBPEError(
            f"dtype {name} cannot hold the ids of this tokenizer (vocab_size {vocab_size:,} > "
            f"{1 << (8 * chosen.itemsize):,}); use uint32 or leave dtype out"
        )
    return chosen


def _npy_header(dtype: np.dtype, length: int) -> bytes:
    body = f"{{'descr': '{dtype.str}', 'fortran_order': False, 'shape': ({length},), }}"
    room = NPY_HEADER_BYTES - len(NPY_MAGIC) - 2
    text = body.ljust(room - 1) + "\n"
    return NPY_MAGIC + struct.pack("<H", room) + text.encode("latin-1")


def _llmc_header(dtype: np.dtype, length: int) -> bytes:
    magic, version = LLMC_KINDS[dtype.itemsize]
    header = np.zeros(LLMC_HEADER_INTS, dtype="<i4")
    header[:3] = (magic, version, length)
    return header.tobytes()


def _no_header(dtype: np.dtype, length: int) -> bytes:
    return b""


@dataclass(frozen=True)
class Layout:
    """A token-file layout: its name, the suffix it is written with, the bytes in front of the
    ids (``header(dtype, length)``), whether that header is written again at the end (then
    the file must be seekable), and the most tokens it can say."""

    name: str
    suffix: str
    header: Callable[[np.dtype, int], bytes]
    rewrites_header: bool
    max_tokens: Optional[int] = None


LAYOUTS: Dict[str, Layout] = {
    "npy": Layout("npy", ".npy", _npy_header, rewrites_header=True),
    "bin": Layout("bin", ".bin", _no_header, rewrites_header=False),
    "llmc": Layout("llmc", ".bin", _llmc_header, rewrites_header=True, max_tokens=LLMC_MAX_TOKENS),
}
FORMATS = tuple(LAYOUTS)
# The layout a suffix names when none is given (llm.c's .bin is told by its header on reading).
SUFFIXES = {".npy": "npy", ".bin": "bin"}


def header_for(format: str, dtype: np.dtype, length: int) -> bytes:
    """The bytes in front of ``length`` ids of ``dtype`` in ``format``."""
    return LAYOUTS[format].header(dtype, length)


# -- reading ------------------------------------------------------------------------------------


def read_token_file(path: PathLike, format: Optional[str] = None, dtype: Any = None) -> np.ndarray:
    """The ids of a token file, memory-mapped (a 1-D integer array; nothing is read until it
    is used). ``format`` defaults to the suffix: ``.npy``, or for ``.bin`` llm.c's layout when
    the file starts with its header and has the size the header says, else raw ids of
    ``dtype`` (required for raw ids: the file does not say). Anything that does not hold is
    a :class:`FunctionalBPEError` naming the file; the ids themselves are checked by
    whatever decodes them.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "ids.npy")
    >>> np.save(path, np.array([104, 105], dtype=np.uint16))
    >>> read_token_file(path).tolist()
    [104, 105]
    """
    if not isinstance(path, str) and not hasattr(path, "__fspath__"):
        raise FunctionalBPEError(f"read_token_file: path should be a str or os.PathLike, got {type(path).__name__}")
    name = os.fspath(path)
    kind = choose_format(name, format)
    try:
        size = os.path.getsize(name)
        if kind == "npy":
            return _read_npy(name)
        if kind == "bin" and format is None and _starts_like_llmc(name, size):
            kind = "llmc"  # then its size must be the header's: a truncated one is refused
        if kind == "llmc":
            count = _llmc_count(name, size, required=True)
            assert count is not None
            with open(name, "rb") as fh:
                version = struct.unpack("<ii", fh.read(8))
            width = next(w for w, kv in LLMC_KINDS.items() if kv == version)
            return _memmap(name, np.dtype(f"<u{width}"), LLMC_HEADER_BYTES, count)
        if dtype is None:
            raise FunctionalBPEError(f"{name}: a raw .bin file does not say its dtype; give dtype (uint16 or uint32)")
        try:
            found = DTYPES.get(np.dtype(dtype).name)
        except (TypeError, ValueError):
            found = None
        if found is None:
            raise FunctionalBPEError(f"dtype must be uint16 or uint32, got {dtype!r}")
        if size % found.itemsize:
            raise FunctionalBPEError(
                f"{name}: {size:,} bytes is not a whole number of {found.name} ids; is the dtype right?"
            )
        return _memmap(name, found, 0, size // found.itemsize)
    except OSError as exc:
        raise FunctionalBPEError(f"{name}: cannot read: {exc.strerror or exc}") from None


def _memmap(name: str, dtype: np.dtype, offset: int, count: int) -> np.ndarray:
    if count == 0:  # an empty map is refused by mmap itself
        return np.zeros(0, dtype=dtype)
    return np.memmap(name, dtype=dtype, mode="r", offset=offset, shape=(count,))


def _starts_like_llmc(name: str, size: int) -> bool:
    """Whether a file starts with llm.c's magic and version (raw ids almost never do)."""
    if size < 8:
        return False
    with open(name, "rb") as fh:
        return struct.unpack("<ii", fh.read(8)) in LLMC_KINDS.values()


def _llmc_count(name: str, size: int, required: bool = False) -> Optional[int]:
    """The token count of llm.c's header if the file has it and the size it says; None (or,
    when ``required``, an error saying what is wrong) otherwise."""
    why = None
    count = 0
    if size < LLMC_HEADER_BYTES:
        why = f"{size} bytes, shorter than its {LLMC_HEADER_BYTES}-byte header"
    else:
        with open(name, "rb") as fh:
            magic, version, count = struct.unpack("<iii", fh.read(12))
        widths = [w for w, kv in LLMC_KINDS.items() if kv == (magic, version)]
        if not widths:
            why = f"magic {magic} and version {version} are not those of its uint16 or uint32 layouts"
        elif count < 0 or LLMC_HEADER_BYTES + count * widths[0] != size:
            why = (f"the header says {count} tokens, which the file's {size:,} bytes do not hold exactly; "
                   "the file is truncated or damaged")
    if why is None:
        return count
    if required:
        raise FunctionalBPEError(f"{name}: not an llm.c token file: {why}")
    return None


def _read_npy(name: str) -> np.ndarray:
    """The ids of a .npy file, memory-mapped after its header is checked against the file's
    size: a 112-byte file that declares 4 GiB of ids is refused, not mapped."""
    from numpy.lib import format as npy_format

    try:
        with open(name, "rb") as fh:
            version = npy_format.read_magic(fh)
            if version == (1, 0):
                shape, fortran, dtype = npy_format.read_array_header_1_0(fh)
            elif version == (2, 0):
                shape, fortran, dtype = npy_format.read_array_header_2_0(fh)
            else:
                raise ValueError(f"version {version} of the .npy format is not read here")
            offset = fh.tell()
            size = os.fstat(fh.fileno()).st_size
    except OSError:
        raise
    except Exception as exc:  # numpy parses the header with ast: any of its errors, said once
        detail = str(exc)[:200] or type(exc).__name__  # some of numpy's errors have no message
        raise FunctionalBPEError(f"{name}: not a .npy token file ({detail})") from None
    if not isinstance(shape, tuple) or len(shape) != 1:
        raise FunctionalBPEError(f"{name}: a token file holds a 1-D array, this one has shape {str(shape)[:60]}")
    if dtype.kind not in "ui" or dtype.hasobject:
        raise FunctionalBPEError(f"{name}: a token file holds integers, this one {str(dtype)[:60]}")
    count = shape[0]
    if count < 0 or offset + count * dtype.itemsize != size:
        raise FunctionalBPEError(
            f"{name}: the header says {count:,} ids of {dtype.itemsize} bytes, which the file's {size:,} bytes "
            "do not hold exactly; the file is truncated or damaged")
    return _memmap(name, dtype, offset, count)
