"""Reading an untrusted file: its size bounded before it is read, its JSON guarded.

    >>> import json
    >>> json.loads('{"a": 1, "a": 2}', object_pairs_hook=json_object)
    Traceback (most recent call last):
    ...
    functionalbpe.formats.reading.DuplicateKey: a
"""
from __future__ import annotations

import json
import os
import re
import stat
from codecs import utf_8_decode as _decode_utf8
from typing import Any, Callable, Dict, Sequence, Sized

from ..core._native import NATIVE
from ..core.limits import MAX_FILE_BYTES
from ..core.pairs import Pairs
from ..errors import TokenizerFileError


def read_bytes(path: "os.PathLike[str] | str", what: str = "tokenizer file", limit: "int | None" = None) -> bytes:
    """The contents of a file; a missing or unreadable one is a TokenizerFileError, and so is
    one of more than ``limit`` bytes (default MAX_FILE_BYTES; read no further: a device such
    as /dev/zero never ends)."""
    name = _name(path, what)
    limit = MAX_FILE_BYTES if limit is None else limit
    try:
        info = os.stat(name)
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            raise TokenizerFileError(f"{name}: is a directory, not a {what}")
        if not stat.S_ISREG(mode):
            # /dev/zero would be read forever, a pipe would block: neither is a file.
            raise TokenizerFileError(f"{name}: not a regular file; give the path of a {what}")
        with open(name, "rb") as fh:
            # No more than the file's size is asked for (read() allocates what it is asked).
            data = fh.read(min(limit, info.st_size) + 1)
    except FileNotFoundError:
        raise TokenizerFileError(f"{name}: no such {what}") from None
    except IsADirectoryError:
        raise TokenizerFileError(f"{name}: is a directory, not a {what}") from None
    except OSError as exc:
        raise TokenizerFileError(f"{name}: cannot read: {exc.strerror}") from None
    if len(data) > limit:
        raise TokenizerFileError(f"{name}: larger than {limit} bytes, the limit for a {what}")
    return data


def _name(path: Any, what: str) -> str:
    """A path as a str; anything that is not a path is a TokenizerFileError."""
    if isinstance(path, bytes):
        return os.fsdecode(path)
    if not isinstance(path, str) and not hasattr(path, "__fspath__"):
        raise TokenizerFileError(f"the path of a {what} should be a str or os.PathLike, got {type(path).__name__}")
    name = os.fspath(path)
    return os.fsdecode(name) if isinstance(name, bytes) else name


def json_object(pairs: "list[tuple[str, Any]]") -> Dict[str, Any]:
    """A JSON object; a key given twice is an error (json keeps the last one silently)."""
    out: Dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


class DuplicateKey(Exception):
    pass


_DECODER = json.JSONDecoder(object_pairs_hook=json_object)
_SPACE = re.compile(r"[ \t\n\r]*")  # what JSON allows between tokens


def json_with_pairs(text: str, fields: Sequence[str]) -> Any:
    """``json.loads(text, object_pairs_hook=json_object)``, except that each field of the
    top-level object named in ``fields`` that is an array of pairs of ids (``[[104,105],
    ...]``) comes back as :class:`~functionalbpe.core.pairs.Pairs`, read by the compiled core
    without a Python object per number: a file of 4.1 million merges took 535 MB and 0.8 s
    in json.loads, 33 MB and 0.2 s so. Every other value is parsed by json's own scanner.
    Anything this reading does not take (another layout, an error anywhere) is parsed again
    by json.loads, whose result or error it then is: a malformed file fails exactly as before.

    >>> got = json_with_pairs('{"merges": [[104, 105]], "n": [[1, 2]]}', ("merges",))
    >>> [tuple(pair) for pair in got["merges"]], got["n"]  # Pairs compiled, a list in pure Python
    ([(104, 105)], [[1, 2]])
    """
    module = NATIVE.tables
    if module is not None:
        try:
            return _object_with_pairs(text, fields, module.read_id_rows)
        except (ValueError, DuplicateKey, RecursionError):  # json.JSONDecodeError is a ValueError
            pass
    return json.loads(text, object_pairs_hook=json_object)


# A reading of at least this many merges (a file of some MB) hands what it freed back. Below,
# that is little, and malloc_trim walks the whole heap of the process, which may be large and
# not ours, for it.
TRIM_MERGES = 1 << 18


def release_freed_memory(merges: Any) -> None:
    """Hand the memory a large reading of ``merges`` freed back to the system before the
    tokenizer is built from it (``csrc/_tables.pyx``, ``trim_heap``): glibc kept 70 MB of the
    text, vocabulary and merges of a GPT-2 vocabulary of a million merges, and the tokenizer's
    tables were built beside them (a peak of 150 MB, 124 MB with them given back)."""
    module = NATIVE.tables
    if module is not None and isinstance(merges, Sized) and len(merges) >= TRIM_MERGES:
        module.trim_heap()


def _after_space(text: "str | bytes", pos: int) -> int:
    """Where the JSON whitespace at ``text[pos:]`` ends."""
    match = (_SPACE_UTF8 if isinstance(text, bytes) else _SPACE).match(text, pos)  # type: ignore[arg-type]
    return match.end() if match is not None else pos


_SPACE_UTF8 = re.compile(rb"[ \t\n\r]*")

# The first window of a file's bytes decoded to read one value of it (_value_at).
_WINDOW = 1 << 12


def _value_at(data: bytes, pos: int) -> "tuple[Any, int]":
    """json's reading of the value at ``data[pos:]`` (UTF-8) and the byte just past it,
    decoding only a window of the bytes, four times larger until the value ends inside it
    (about 4/3 of the value's bytes decoded in all): a tokenizer.json's text is not held as a
    str beside its bytes. ValueError as json's where it is not a value."""
    size = _WINDOW
    while True:
        whole = pos + size >= len(data)
        text, _ = _decode_utf8(data[pos:pos + size], "strict", whole)  # never cuts a character
        try:
            value, end = _DECODER.raw_decode(text)
        except ValueError:
            if whole:
                raise
        else:
            if whole or end < len(text):  # a number or literal may go on past the window
                return value, pos + len(text[:end].encode("utf-8"))
        size *= 4


def object_at(text: "str | bytes", pos: int, field: Callable[[str, int], "tuple[Any, int] | None"]) -> "tuple[Dict[str, Any], int]":
    """The JSON object at ``text[pos:]`` (whitespace before it allowed) and the index just
    past it, its fields one by one: ``field(key, at)`` reads the value at ``text[at:]`` as
    ``(value, end)``, or gives None for json's scanner to read it. ``text`` is a str, or a
    file's UTF-8 bytes (the indexes then count bytes, and what json reads is decoded a value
    at a time). ValueError where it is not an object, DuplicateKey for a key given twice."""
    space = _after_space
    if isinstance(text, bytes):
        data = text

        def value_at(at: int) -> "tuple[Any, int]":
            return _value_at(data, at)

        brace, close, quote, colon, comma = b"{", b"}", b'"', b":", b","
    else:
        string = text

        def value_at(at: int) -> "tuple[Any, int]":
            return _DECODER.raw_decode(string, at)

        brace, close, quote, colon, comma = "{", "}", '"', ":", ","  # type: ignore[assignment]
    pos = space(text, pos)
    if text[pos:pos + 1] != brace:
        raise ValueError("not an object")
    out: Dict[str, Any] = {}
    pos = space(text, pos + 1)
    if text[pos:pos + 1] == close:
        return out, pos + 1
    while True:
        if text[pos:pos + 1] != quote:
            raise ValueError("not a key")
        key, pos = value_at(pos)  # a string, as the text at pos begins with '"'
        pos = space(text, pos)
        if text[pos:pos + 1] != colon:
            raise ValueError("no ':'")
        pos = space(text, pos + 1)
        got = field(key, pos)
        if got is not None:
            value, pos = got
        else:
            value, pos = value_at(pos)
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
        pos = space(text, pos)
        delimiter = text[pos:pos + 1]
        pos += 1
        if delimiter == close:
            return out, pos
        if delimiter != comma:
            raise ValueError("no ','")
        pos = space(text, pos)


def _object_with_pairs(text: str, fields: Sequence[str], read_rows: Callable[[str, int, int], Any]) -> Dict[str, Any]:
    """The top-level object of ``text``, its fields one by one; ValueError where it is not
    one (the caller then lets json.loads say what is wrong)."""

    def field(key: str, pos: int) -> "tuple[Any, int] | None":
        got = read_rows(text, pos, 2) if key in fields else None
        return None if got is None else (Pairs(got[0]), got[1])

    out, pos = object_at(text, 0, field)
    if _after_space(text, pos) != len(text):
        raise ValueError("extra data")
    return out


def read_head(path: "os.PathLike[str] | str", what: str, count: int, limit: int) -> "tuple[bytes, int]":
    """The first ``count`` bytes of a regular file and its size, read without reading the
    rest (a header is checked before a file is read whole); errors as :func:`read_bytes`."""
    name = os.fspath(path)
    try:
        info = os.stat(name)
        if stat.S_ISDIR(info.st_mode):
            raise TokenizerFileError(f"{name}: is a directory, not a {what}")
        if not stat.S_ISREG(info.st_mode):
            raise TokenizerFileError(f"{name}: not a regular file; give the path of a {what}")
        if info.st_size > limit:
            raise TokenizerFileError(f"{name}: larger than {limit} bytes, the limit for a {what}")
        with open(name, "rb") as fh:
            return fh.read(count), info.st_size
    except FileNotFoundError:
        raise TokenizerFileError(f"{name}: no such {what}") from None
    except OSError as exc:
        raise TokenizerFileError(f"{name}: cannot read: {exc.strerror}") from None


def read_json(path: "os.PathLike[str] | str", what: str = "tokenizer file") -> Any:
    """A JSON file, read with every guard of :func:`read_bytes` (its size bounded) and parsed
    with the loader's: invalid UTF-8 or JSON, nesting deeper than Python parses, an integer
    of more digits than it converts, a key given twice — each a TokenizerFileError naming
    the file."""
    raw = read_bytes(path, what)
    name = _name(path, what)
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=json_object)
    except UnicodeDecodeError as exc:
        raise TokenizerFileError(f"{name}: not a {what} (invalid UTF-8 at byte offset {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise TokenizerFileError(f"{name}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise TokenizerFileError(f"{name}: the JSON is nested too deeply for a {what}") from None
    except DuplicateKey as exc:
        raise TokenizerFileError(f"{name}: the key {str(exc)[:40]!r} is given twice in one object") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise TokenizerFileError(f"{name}: not a {what}: {str(exc)[:100]}") from None
