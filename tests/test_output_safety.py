"""Output paths that are links, devices or pipes; SIGTERM; a full disk.

A symlink is written through (its target replaced, the link kept), a device or FIFO is
written directly as a stream, no temporary file is ever left, and every failure is an
OutputError naming the path. The real /dev/stdout is never touched: /proc/self/fd/1 of a
child process whose stdout is a pipe stands in for it.
"""
from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import functionalbpe as fb
from functionalbpe.errors import OutputError
from functionalbpe.util import output
from functionalbpe.util.output import PendingOutput, atomic_write_text


def _parts(directory):
    return sorted(p for p in os.listdir(directory) if p.endswith(".part"))


@pytest.fixture(scope="module")
def tok():
    return fb.train(["hello world " * 20], vocab_size=270, special_tokens=["<|endoftext|>"], progress=False)


def test_symlink_to_a_file_is_written_through(tmp_path, tok):
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = real_dir / "tok.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    tok.save(link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert fb.Tokenizer.load(target).vocab_size == tok.vocab_size
    assert _parts(real_dir) == [] and _parts(tmp_path) == []


def test_dangling_symlink_creates_its_target(tmp_path):
    (tmp_path / "sub").mkdir()
    target = tmp_path / "sub" / "new.txt"
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    atomic_write_text(link, "made")
    assert link.is_symlink() and target.read_text() == "made"


def test_dangling_symlink_into_a_missing_directory_is_refused(tmp_path):
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "nowhere" / "x.txt")
    with pytest.raises(OutputError, match="link.txt"):
        atomic_write_text(link, "x")
    assert link.is_symlink()


def test_token_file_through_a_symlink(tmp_path, tok):
    target = tmp_path / "real.npy"
    link = tmp_path / "link.npy"
    link.symlink_to(target)
    tok.encode_to_file(["hello world"], link, progress=False)
    assert link.is_symlink()
    assert np.load(target).tolist() == tok.encode("hello world")


def test_fifo_is_streamed(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    atomic_write_text(fifo, "through the pipe")
    reader.join(10)
    assert got == [b"through the pipe"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and _parts(tmp_path) == []


def test_fifo_refused_up_front_for_a_format_that_rewrites_its_header(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    with pytest.raises(OutputError, match="cannot seek"):
        PendingOutput(str(fifo), seekable=True)
    reader.join(10)
    assert got == [b""]  # nothing was written, not even a header


_CHILD = """
import sys, functionalbpe as fb
tok = fb.train(["hello world " * 20], vocab_size=270, progress=False)
link = sys.argv[1]
fmt = sys.argv[2]
if fmt == "text":
    from functionalbpe.util.output import atomic_write_text
    atomic_write_text(link, "via the link\\n")
else:
    try:
        tok.encode_to_file(["hello world"], link, format=fmt, progress=False)
    except fb.FunctionalBPEError as exc:
        print("ERR", exc, file=sys.stderr)
        sys.exit(2)
"""


def test_symlink_to_proc_self_fd_1_writes_to_the_stream(tmp_path):
    """What `-o /dev/stdout` is, with the link in tmp_path and stdout a pipe: the data goes
    down the pipe and the link stays a link."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    done = subprocess.run([sys.executable, "-c", _CHILD, str(link), "text"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"via the link\n"
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    assert _parts(tmp_path) == []


def test_npy_to_a_pipe_is_refused_before_anything_is_written(tmp_path):
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    done = subprocess.run([sys.executable, "-c", _CHILD, str(link), "npy"], capture_output=True, timeout=120)
    assert done.returncode == 2 and b"cannot seek" in done.stderr and done.stderr.count(b"stdout:") == 1
    assert done.stdout == b""
    bin_run = subprocess.run([sys.executable, "-c", _CHILD, str(link), "bin"], capture_output=True, timeout=120)
    assert bin_run.returncode == 0, bin_run.stderr
    assert len(bin_run.stdout) > 0 and link.is_symlink()


def test_disk_full_at_the_final_flush(tmp_path, tok, monkeypatch):
    target = tmp_path / "ids.npy"
    target.write_bytes(b"old")

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(output.os, "fsync", full)
    with pytest.raises(OutputError, match="ids.npy.*No space left"):
        tok.encode_to_file(["hello world"] * 10, target, progress=False)
    assert _parts(tmp_path) == [] and target.read_bytes() == b"old"
    with pytest.raises(OutputError, match="tok.json"):
        tok.save(tmp_path / "tok.json")
    assert _parts(tmp_path) == []


def test_disk_full_on_every_write_and_close(tmp_path, monkeypatch):
    """The buffered data fails again when the file is closed: the temporary file still goes."""
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        flush = write

        def close(self):
            self.fh.close()
            raise OSError(errno.ENOSPC, "No space left on device")

        def __getattr__(self, name):
            return getattr(self.fh, name)

    monkeypatch.setattr(output.os, "fdopen", lambda fd, mode: Full(real_fdopen(fd, mode)))
    with pytest.raises(OutputError, match="out.txt"):
        atomic_write_text(tmp_path / "out.txt", "x" * 100)
    assert os.listdir(tmp_path) == []
    assert not output._PENDING


def test_sigterm_during_cli_encode_leaves_no_part_file(tmp_path, tok):
    tok_path = tmp_path / "tok.json"
    tok.save(tok_path)
    corpus = tmp_path / "big.txt"
    corpus.write_text(("hello world " * 500 + "\n") * 20000)  # ~120 MB of text: many seconds
    out = tmp_path / "out" / "ids.npy"
    out.parent.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "functionalbpe", "encode", "-t", str(tok_path), str(corpus),
                             "-o", str(out), "--threads", "1"], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not _parts(out.parent) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert _parts(out.parent), "the command never started writing"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert b"terminated" in err and b"Traceback" not in err
    assert os.listdir(out.parent) == []


def test_an_output_that_is_an_input_is_refused(tmp_path):
    """By device and inode: the same path, another spelling, a link; the corpus, the tokenizer,
    a counts file — each left as it was."""
    import subprocess
    import sys

    tok = fb.train(["the cat sat on the mat"] * 20, vocab_size=268, progress=False)
    tok.save(tmp_path / "tok.json")
    (tmp_path / "in.txt").write_text("the cat sat\n", encoding="utf-8")
    os.symlink(tmp_path / "in.txt", tmp_path / "link.txt")
    before = {p: p.read_bytes() for p in (tmp_path / "in.txt", tmp_path / "tok.json")}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "functionalbpe", *map(str, args)], capture_output=True, text=True)

    t, corpus = tmp_path / "tok.json", tmp_path / "in.txt"
    for args in (
        ("encode", "-t", t, corpus, "-o", corpus),
        ("encode", "-t", t, corpus, "-o", tmp_path / "link.txt"),
        ("encode", "-t", t, corpus, "-o", tmp_path / "." / "in.txt"),
        ("encode", "-t", t, corpus, "-o", t, "--format", "bin"),
        ("encode", "-t", t, corpus, "-o", tmp_path / "ids.npy", "--offsets", corpus),
        ("decode", "-t", t, corpus, "-o", corpus),
        ("train", corpus, "--vocab-size", "260", "-o", corpus),
        ("count", corpus, "-o", corpus),
    ):
        run = cli(*args)
        assert run.returncode == 2 and "writing it would destroy it" in run.stderr, (args, run.stderr)
        assert len(run.stderr.splitlines()) == 1
    with pytest.raises(fb.OutputError, match="is a file of the corpus"):
        tok.encode_to_file(fb.files(corpus), tmp_path / "link.txt", format="bin", progress=False)
    assert {p: p.read_bytes() for p in before} == before


def test_standard_output_named_as_a_path_is_written_in_place(tmp_path):
    """``-o /dev/stdout`` with ``>> log.txt``: the shell's file, opened to append, keeps what it
    held and gets the output after it, never a file renamed over it."""
    import subprocess
    import sys

    tok = fb.train(["the cat sat on the mat"] * 20, vocab_size=268, progress=False)
    tok.save(tmp_path / "tok.json")
    (tmp_path / "in.txt").write_text("the cat sat\n", encoding="utf-8")
    log = tmp_path / "log.txt"
    log.write_text("line 1\nline 2\nline 3\n", encoding="utf-8")
    inode = log.stat().st_ino
    for target in ("/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"):
        with open(log, "a") as out:
            subprocess.run([sys.executable, "-m", "functionalbpe", "encode", "-t", str(tmp_path / "tok.json"),
                            str(tmp_path / "in.txt"), "-o", target], stdout=out, check=True)
    want = " ".join(map(str, tok.encode("the cat sat\n"))) + "\n"
    assert log.read_text(encoding="utf-8") == "line 1\nline 2\nline 3\n" + want * 3
    assert log.stat().st_ino == inode and not [p for p in os.listdir(tmp_path) if p.startswith(".tmp-")]


def test_a_read_only_filesystem_is_named_as_such(tmp_path, monkeypatch):
    # A read-only mount is refused as one, not as a missing permission: the directory is
    # made unwritable and its filesystem read-only as the checks see them.
    from functionalbpe.errors import OutputError
    from functionalbpe.util import output

    class ReadOnly:
        f_flag = os.ST_RDONLY

    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if os.fspath(p) == str(tmp_path) else real_access(p, mode))
    with pytest.raises(OutputError, match="no permission to create files"):
        output.check_output_path(tmp_path / "ids.bin")
    monkeypatch.setattr(os, "statvfs", lambda p: ReadOnly())
    with pytest.raises(OutputError, match="is on a read-only filesystem"):
        output.check_output_path(tmp_path / "ids.bin")


def test_an_interruption_at_any_line_of_writing_leaves_no_temporary_file(tmp_path):
    """A signal's exception (KeyboardInterrupt; the CLI's SIGTERM raises one too) at any line
    of making, writing and renaming an output leaves no temporary file once remove_pending has
    run, as it does at exit and on SIGTERM: the file is pending from before it exists until
    it is renamed. (A temporary file registered after it was made was left behind by a
    SIGTERM handled in between, which a loaded machine made happen.)"""
    target = tmp_path / "out.bin"
    for stop in range(1, 1000):
        seen = 0

        def tracer(frame, event, arg):
            nonlocal seen
            if frame.f_code.co_filename != output.__file__:
                return None
            if event == "line":
                seen += 1
                if seen == stop:
                    raise KeyboardInterrupt
            return tracer

        interrupted = False
        sys.settrace(tracer)
        try:
            out = PendingOutput(str(target))
            out.write(b"ids")
            out.finish()
            out.rename()
        except KeyboardInterrupt:
            interrupted = True
        finally:
            sys.settrace(None)
        output.remove_pending()
        assert [name for name in os.listdir(tmp_path) if name.endswith(".part")] == [], stop
        if not interrupted:
            assert target.read_bytes() == b"ids" and stop > 10
            return
        if target.exists():
            target.unlink()
    raise AssertionError("never got through")
