"""The tokenizer file: one versioned UTF-8 JSON document, written atomically.

Layout (``"format": "functionalbpe/1"``)::

    {
      "format": "functionalbpe/1",
      "scheme": "plain", "scheme_options": {},
      "pattern": {"name": "gpt4", "regex": "..."},
      "merge_policy": "prefix",
      "atoms": [[57344, "ARG 0"], ...],        code point and name, in id order from 256
      "merges": [[104, 105], ...],             merge k has id 256 + len(atoms) + k
      "merge_counts": [1234, ...] or null,     the pair's count when it was merged
      "special_tokens": {"<|endoftext|>": 50000},
      "vocab_size": 50001,
      "byte_ids": [33, 34, ...],               only in a vocabulary imported with ids of its
                                               own (from_tiktoken, from_hf): each byte's id;
      "merge_ids": [300, 301, ...],            each merge's id where it is not 256 + k; then
                                               ids may leave gaps (functionalbpe/core/idmap.py)
      "training": {"objective": "parity", ...}  only after a weighted or parity-aware training
                                               of several languages: the objective, the mix
                                               and the parity options (docs/parity.md)
      "checksum": "sha256:..."                 over the canonical JSON of everything else
    }

The file is written to a temporary file next to the target and renamed over it, so a
reader never sees half a file. Loading checks everything and says what is wrong.

Example::

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.json")
    >>> write_payload(path, {"format": FORMAT, "merges": []}, check=False)
    >>> read_payload(path, check=False)["format"]
    'functionalbpe/1'
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from typing import Any, Dict

from .errors import OutputError, TokenizerFileError
from .filecheck import FIELDS, MAX_FILE_BYTES, excerpt, first_bad_text, is_int

FORMAT = "functionalbpe/1"

# The fields every file has, with their types (filecheck.check_fields looks further).
REQUIRED = {**FIELDS, "checksum": str}


def checksum(payload: Dict[str, Any]) -> str:
    """The checksum of a payload: sha256 of its canonical JSON (UTF-8), checksum left out.

    A string that is not valid Unicode (a lone surrogate) cannot be written as UTF-8: that
    is a TokenizerFileError naming where it is.
    """
    body = {k: v for k, v in payload.items() if k != "checksum"}
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    try:
        data = canonical.encode("utf-8")
    except UnicodeEncodeError:
        where = first_bad_text(body) or "a string"
        raise TokenizerFileError(f"{where} is not valid Unicode (it holds a lone surrogate)") from None
    return "sha256:" + hashlib.sha256(data).hexdigest()


def check_output_path(path: "os.PathLike[str] | str") -> str:
    """The path as a str, if a file can be written there; else an OutputError naming it.

    Directories are not created: the one the file goes in must exist, as for ``open()``.
    A command checks its output paths this way before it starts the work.
    """
    name = os.fspath(path)
    if not name:
        raise OutputError("the output path is empty; give a file name")
    if os.path.isdir(name):
        raise OutputError(f"{name}: is a directory; give the path of a file in it")
    directory = os.path.dirname(name) or "."
    if not os.path.isdir(directory):
        missing = "does not exist" if not os.path.exists(directory) else "is not a directory"
        raise OutputError(f"{name}: cannot write there: the directory {directory} {missing}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(f"{name}: cannot write there: no permission to create files in {directory}")
    return name


def atomic_write_text(path: "os.PathLike[str] | str", text: "str | bytes") -> None:
    """Write ``text`` (or bytes) to ``path`` so that the file is either the old one or the new one.

    An existing target that is not a regular file (``/dev/null``, a pipe) is written to
    directly: renaming over it would replace the device, and it has no old contents to keep.
    Every failure is an :class:`OutputError` naming ``path``, never the temporary file.
    """
    name = check_output_path(path)
    try:
        if os.path.exists(name) and not os.path.isfile(name):
            with _open(name, "w", text) as fh:
                fh.write(text)
            return
        _replace_with(name, text)
    except OSError as exc:
        raise OutputError(f"{name}: cannot write: {exc.strerror or exc}") from None


def _open(target: "str | int", mode: str, text: "str | bytes") -> Any:
    """A file (a path or a descriptor) opened to write ``text``: binary for bytes."""
    if isinstance(text, bytes):
        return open(target, mode + "b")
    return open(target, mode, encoding="utf-8", newline="\n")


def _replace_with(path: str, text: "str | bytes") -> None:
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=directory)
    try:
        # mkstemp makes the file owner-only; give it the mode a plain open() would have.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with _open(fd, "w", text) as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_payload(path: "os.PathLike[str] | str", payload: Dict[str, Any], check: bool = True) -> None:
    payload = dict(payload)
    if check:
        payload["checksum"] = checksum(payload)
    atomic_write_text(path, _format(payload))


def _format(payload: Dict[str, Any]) -> str:
    """JSON with one field per line and one merge (or atom) per line: diffable by eye."""
    fields = []
    for key, value in payload.items():
        if isinstance(value, list) and value and isinstance(value[0], list):
            rows = ",\n  ".join(json.dumps(v, ensure_ascii=False, separators=(",", ":")) for v in value)
            text = "[\n  " + rows + "\n ]"
        else:
            text = json.dumps(value, ensure_ascii=False)
        fields.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(fields) + "\n}\n"


def read_bytes(path: "os.PathLike[str] | str", what: str = "tokenizer file", limit: "int | None" = None) -> bytes:
    """The contents of a file; a missing or unreadable one is a TokenizerFileError, and so is
    one of more than ``limit`` bytes (default MAX_FILE_BYTES; read no further: a device such
    as /dev/zero never ends)."""
    name = os.fspath(path)
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


def _object(pairs: "list[tuple[str, Any]]") -> Dict[str, Any]:
    """A JSON object; a key given twice is an error (json keeps the last one silently)."""
    out: Dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


class _DuplicateKey(Exception):
    pass


def read_payload(path: "os.PathLike[str] | str", check: bool = True) -> Dict[str, Any]:
    name = os.fspath(path)
    raw = read_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TokenizerFileError(
            f"{name}: not a functionalbpe tokenizer file (invalid UTF-8 at byte offset {exc.start})"
        ) from None
    if not text.strip():
        raise TokenizerFileError(f"{name}: the file is empty")
    try:
        payload = json.loads(text, object_pairs_hook=_object)
    except json.JSONDecodeError as exc:
        hint = " (the file looks truncated)" if exc.pos >= len(text.rstrip()) else ""
        raise TokenizerFileError(
            f"{name}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}"
        ) from None
    except _DuplicateKey as exc:
        raise TokenizerFileError(f"{name}: the key {excerpt(exc.args[0])} appears twice in one object") from None
    except RecursionError:
        raise TokenizerFileError(f"{name}: the JSON is nested too deeply for a tokenizer file") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise TokenizerFileError(f"{name}: not a tokenizer file: {str(exc)[:100]}") from None
    if not isinstance(payload, dict) or "format" not in payload:
        raise TokenizerFileError(f"{name}: not a functionalbpe tokenizer file (no \"format\" field)")
    if payload["format"] != FORMAT:
        raise TokenizerFileError(
            f"{name}: format is {excerpt(payload['format'])} but this version of functionalbpe reads "
            f"{FORMAT!r}; load it with the version that wrote it"
        )
    if not check:
        return payload
    for key, kind in REQUIRED.items():
        if key not in payload:
            raise TokenizerFileError(f"{name}: the field {key!r} is missing")
        if not isinstance(payload[key], kind) or (kind is int and not is_int(payload[key])):
            raise TokenizerFileError(
                f"{name}: the field {key!r} should be a {kind.__name__}, found {type(payload[key]).__name__}"
            )
    try:
        expected = checksum(payload)
    except TokenizerFileError as exc:
        raise TokenizerFileError(f"{name}: {exc}") from None
    except RecursionError:
        raise TokenizerFileError(f"{name}: the JSON is nested too deeply for a tokenizer file") from None
    if payload["checksum"] != expected:
        raise TokenizerFileError(
            f"{name}: checksum mismatch: the file was changed or damaged after it was written; "
            "retrain, or restore it from a copy"
        )
    return payload
