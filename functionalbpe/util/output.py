"""Output written whole or not at all: a file is the old one or the new one, never half.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> atomic_write_text(path, "hello")
    >>> open(path).read()
    'hello'
"""
from __future__ import annotations

import os
import tempfile
from typing import Any

from ..errors import OutputError


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
