"""Output written whole or not at all: a file is the old one or the new one, never half.

The path is resolved first (``os.path.realpath``): a symlink is written through, never
replaced, and the temporary file is made beside the real target. A target that exists and
is not a regular file (a character device such as ``/dev/null`` or a terminal, a FIFO, a
pipe reached through ``/proc/self/fd/1``) has no old contents to keep and cannot be renamed
over: it is written directly, as a stream; so is a file that is our own standard output or
error (``-o /dev/stdout`` with ``>> log.txt``), through our descriptor, in place. A writer that must go back and rewrite a header
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
import errno
import fcntl
import os
import re
import secrets
import stat
from typing import Any, Iterable, Optional, Set

from ..errors import OutputError

# Temporary files not yet renamed into place or removed. Each change is one call on the set
# (add, discard, pop), atomic under the GIL, and there is no lock for a signal's exception to
# leave held: one raised at `with lock:` can land after the lock is taken and before the
# block that would release it.
_PENDING: Set[str] = set()


def remove_pending() -> None:
    """Remove every temporary file still pending (at exit, on a signal)."""
    while True:
        try:
            name = _PENDING.pop()
        except KeyError:
            return
        remove_quietly(name)


atexit.register(remove_pending)


def remove_quietly(path: str) -> None:
    """Remove a file if it is there (nothing to say if it is not: this is cleaning up)."""
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
        if _read_only(directory):
            raise OutputError(f"{name}: cannot write there: {directory} is on a read-only filesystem")
        raise OutputError(f"{name}: cannot write there: no permission to create files in {directory}")
    return name


def _read_only(directory: str) -> bool:
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _is_stream(name: str) -> bool:
    """Whether the path (its links followed by the kernel: ``/proc/self/fd/1`` of a pipe has
    no name ``realpath`` could give) exists and is not a regular file (a device, a FIFO), or
    is one of this process's open standard streams (:func:`standard_stream`)."""
    if standard_stream(name) is not None:
        return True
    try:
        mode = os.stat(name).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


_FD_PATH = re.compile(r"/(?:proc/self|dev)/fd/(\d+)")
_NAMED_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def standard_stream(name: str) -> Optional[int]:
    """The descriptor ``name`` stands for when it is one this process has open — a path
    under ``/proc/self/fd`` or ``/dev/fd``, ``/dev/stdout`` — or when the file it names is
    our standard output or error (by device and inode). Such an output is written through
    that descriptor, in place: with ``>> log.txt`` the file is the shell's, opened to append,
    and a file renamed over it (or opened anew, truncating it) would lose what it held."""
    found = _FD_PATH.fullmatch(name)
    fd = int(found.group(1)) if found else _NAMED_STREAMS.get(name)
    if fd is None:
        try:
            info = os.stat(name)
        except OSError:
            return None
        for candidate in (1, 2):
            try:
                held = os.fstat(candidate)
            except OSError:
                continue
            if (held.st_dev, held.st_ino) == (info.st_dev, info.st_ino) and stat.S_ISREG(held.st_mode):
                return candidate
        return None
    try:
        os.fstat(fd)
    except (OSError, OverflowError):
        return None
    return fd


def refuse_overwriting(output: "os.PathLike[str] | str", inputs: Iterable[Any], what: str = "an input") -> None:
    """An OutputError when ``output`` is (or links to) one of ``inputs`` (paths), compared by
    device and inode: writing it would destroy what is being read (``encode in.txt -o
    in.txt``, or ``-o tok.json`` over the tokenizer)."""
    name = os.fspath(output)
    try:
        out = os.stat(name)
    except OSError:
        return  # a new file is no input
    if not stat.S_ISREG(out.st_mode):
        return
    for given in inputs:
        try:
            info = os.stat(os.fspath(given))
        except (OSError, TypeError, ValueError):
            continue
        if (info.st_dev, info.st_ino) == (out.st_dev, out.st_ino):
            raise OutputError(f"{name}: is {what} ({os.fspath(given)}); writing it would destroy it: give another output")


def _make_temporary(directory: str) -> "tuple[int, str]":
    """A new file ``.tmp-*.part`` in ``directory``, owner-only (as ``tempfile.mkstemp`` makes
    one), registered as pending *before* it is made: a file registered after its making is
    left behind by a SIGTERM handled in between (a process descheduled there, on a loaded
    machine, and stopped)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = os.path.join(directory, f".tmp-{secrets.token_hex(6)}.part")
        _PENDING.add(tmp)
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            _PENDING.discard(tmp)  # another's file: never ours to remove
        except BaseException:  # an OSError, or a signal's exception just after the file was made
            remove_quietly(tmp)
            _PENDING.discard(tmp)
            raise
    raise FileExistsError(errno.EEXIST, "no free name for a temporary file", directory)


class PendingOutput:
    """A binary file being written for ``path``: :meth:`finish` puts it on disk (rewriting a
    header at the start first, if given), :meth:`rename` puts it in place, :meth:`discard`
    removes it. ``seekable``: the writer will rewrite its start, so a target that cannot
    seek (a pipe) is refused now. Failures name ``path``."""

    def __init__(self, path: str, seekable: bool = False) -> None:
        self.path = path
        self.tmp: Optional[str] = None
        self.fh: Any = None
        self.start = 0  # where the output begins in the file (a standard stream's offset)
        try:
            fd = standard_stream(path)
            if fd is not None:  # written through our own descriptor, in place (append stays append)
                appends = bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND)
                self.fh = os.fdopen(os.dup(fd), "wb")
                if seekable and (appends or not self.fh.seekable()):
                    self.fh.close()
                    raise OutputError(
                        f"{path}: is a stream that cannot seek (or a file opened to append), and this format "
                        "rewrites its header at the end; write to a regular file (or the raw bin format)")
                self.start = self.fh.tell() if seekable else 0
                return
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
            fd, tmp = _make_temporary(directory)
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

    def fileno(self) -> int:
        """The descriptor, everything written so far flushed to it: for a writer that goes
        on with write(2) itself (in C, without the GIL). Failures name ``path``."""
        try:
            self.fh.flush()
            return int(self.fh.fileno())
        except OSError as exc:
            raise self.failed(exc) from None

    def failed(self, exc: OSError) -> OutputError:
        """The error of a write that failed with ``exc``, naming ``path``; the temporary file
        is removed."""
        self.discard()
        return _failed(self.path, exc)

    def finish(self, header: bytes = b"") -> None:
        """Write ``header`` over the start of the file and put it all on disk."""
        try:
            if header:
                self.fh.seek(self.start)
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
            remove_quietly(self.tmp)
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
