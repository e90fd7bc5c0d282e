"""Output written whole or not at all: a file is the old one or the new one, never half.

The path is resolved first (``os.path.realpath``): a symlink is written through, never
replaced, and the temporary file is made beside the real target. A target that exists and
is not a regular file (a character device such as ``/dev/null`` or a terminal, a FIFO, a
pipe reached through ``/proc/self/fd/1``) has no old contents to keep and cannot be renamed
over: it is written directly, as a stream. A writer that must go back and rewrite a header
says so (``seekable=True``) and is refused up front on a target that cannot seek.

Every temporary file is registered until it is renamed or removed: any exception removes
it, and :func:`remove_pending` (called at exit and by the CLI on SIGTERM) removes what is
left. Every failure, a full disk included, is an :class:`OutputError` naming the path.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> atomic_write_text(path, "hello")
    >>> open(path).read()
    'hello'
"""
from __future__ import annotations

import atexit
import os
import stat
import tempfile
import threading
from typing import Any, Optional, Set

from ..errors import OutputError

# Temporary files not yet renamed into place or removed.
_PENDING: Set[str] = set()
_LOCK = threading.Lock()


def remove_pending() -> None:
    """Remove every temporary file still pending (at exit, on a signal)."""
    with _LOCK:
        names = list(_PENDING)
        _PENDING.clear()
    for name in names:
        _remove(name)


atexit.register(remove_pending)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _failed(path: str, exc: OSError) -> OutputError:
    return OutputError(f"{path}: cannot write: {exc.strerror or exc}")


def check_output_path(path: "os.PathLike[str] | str") -> str:
    """The path as a str, if a file can be written there; else an OutputError naming it.

    Directories are not created: the one the file goes in must exist, as for ``open()``.
    A symlink is checked where it points (a dangling one: where its target would be made).
    A command checks its output paths this way before it starts the work.
    """
    name = os.fspath(path)
    if not name:
        raise OutputError("the output path is empty; give a file name")
    if os.path.isdir(name):
        raise OutputError(f"{name}: is a directory; give the path of a file in it")
    if _is_stream(name):
        return name
    real = os.path.realpath(name)
    if os.path.isdir(real):
        raise OutputError(f"{name}: is a directory; give the path of a file in it")
    directory = os.path.dirname(real) or "."
    if not os.path.isdir(directory):
        missing = "does not exist" if not os.path.exists(directory) else "is not a directory"
        raise OutputError(f"{name}: cannot write there: the directory {directory} {missing}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(f"{name}: cannot write there: no permission to create files in {directory}")
    return name


def _is_stream(name: str) -> bool:
    """Whether the path (its links followed by the kernel: ``/proc/self/fd/1`` of a pipe has
    no name ``realpath`` could give) exists and is not a regular file: a device, a FIFO."""
    try:
        mode = os.stat(name).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


class PendingOutput:
    """A binary file being written for ``path``: :meth:`finish` puts it on disk (rewriting a
    header at the start first, if given), :meth:`rename` puts it in place, :meth:`discard`
    removes it. ``seekable``: the writer will rewrite its start, so a target that cannot
    seek (a pipe) is refused now. Failures name ``path``."""

    def __init__(self, path: str, seekable: bool = False) -> None:
        self.path = path
        self.tmp: Optional[str] = None
        self.fh: Any = None
        try:
            if _is_stream(path):
                self.fh = open(path, "wb")
                if seekable and not self.fh.seekable():
                    self.fh.close()
                    raise OutputError(
                        f"{path}: is a pipe or stream that cannot seek, and this format rewrites its "
                        "header at the end; write to a regular file (or the raw bin format)")
                return
            real = os.path.realpath(path)
            directory = os.path.dirname(real) or "."
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=directory)
            with _LOCK:
                _PENDING.add(tmp)
            self.tmp = tmp
            self.fh = os.fdopen(fd, "wb")
            self.real = real
            umask = os.umask(0)  # mkstemp makes the file owner-only; give it a plain open()'s mode
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        except OutputError:
            raise
        except OSError as exc:
            self.discard()
            raise _failed(path, exc) from None

    def write(self, data: Any) -> None:
        try:
            self.fh.write(data)
        except OSError as exc:
            self.discard()
            raise _failed(self.path, exc) from None

    def finish(self, header: bytes = b"") -> None:
        """Write ``header`` over the start of the file and put it all on disk."""
        try:
            if header:
                self.fh.seek(0)
                self.fh.write(header)
            self.fh.flush()
            if self.tmp is not None:
                os.fsync(self.fh.fileno())
            self.fh.close()
        except OSError as exc:
            self.discard()
            raise _failed(self.path, exc) from None

    def rename(self) -> None:
        if self.tmp is None:
            return
        try:
            os.replace(self.tmp, self.real)
        except OSError as exc:
            self.discard()
            raise _failed(self.path, exc) from None
        with _LOCK:
            _PENDING.discard(self.tmp)
        self.tmp = None

    def discard(self) -> None:
        """Close and remove the temporary file, if it is still there (never raises: a close
        that fails again on a full disk must not keep the file)."""
        if self.fh is not None:
            try:
                self.fh.close()
            except OSError:
                pass
        if self.tmp is not None:
            _remove(self.tmp)
            with _LOCK:
                _PENDING.discard(self.tmp)
            self.tmp = None


def atomic_write_text(path: "os.PathLike[str] | str", text: "str | bytes") -> None:
    """Write ``text`` (or bytes) to ``path`` so that the file is either the old one or the new one.

    A symlink is written through (its target replaced, the link kept); a target that is not
    a regular file (``/dev/null``, a pipe) is written to directly. Every failure is an
    :class:`OutputError` naming ``path``, never the temporary file.
    """
    name = check_output_path(path)
    data = text.encode("utf-8") if isinstance(text, str) else text
    out = PendingOutput(name)
    try:
        out.write(data)
        out.finish()
        out.rename()
    except BaseException:
        out.discard()
        raise
