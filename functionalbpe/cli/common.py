"""What every subcommand shares: one-line errors, argument types, reading input, writing output.

Every error caused by input is one line on stderr and exit status 2, options included; an
interrupted command exits 130. Output paths are checked before the work starts, and output
files are written whole or not at all.

Example::

    >>> VOCAB_SIZE("300"), documents("a\\nb\\n", lines=True)
    (300, ['a', 'b'])
"""
from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from typing import Callable, Iterator, List, NoReturn, Optional, Tuple

from ..core._native import MAX_THREADS
from ..core.alphabet import MAX_VOCAB_SIZE
from ..errors import FunctionalBPEError
from ..fileformat import atomic_write_text, check_output_path
from ..text.corpus import decode_utf8, read_text
from ..tokenizer import Tokenizer

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130


def run(command: Callable[[argparse.Namespace], Optional[int]], args: argparse.Namespace) -> int:
    """Run a subcommand; whatever bad input causes becomes one line on stderr."""
    try:
        return command(args) or 0
    except FunctionalBPEError as exc:
        error(str(exc))
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        error(f"{where}{exc.strerror or exc}")
    except MemoryError:
        error("out of memory; give the command less input (or, for train, see --max-chars and --threads)")
    except KeyboardInterrupt:
        sys.stderr.write("functionalbpe: interrupted; no output was written\n")
        return EXIT_INTERRUPTED
    return EXIT_ERROR


def error(message: str) -> None:
    sys.stderr.write(f"functionalbpe: error: {message}\n")


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, like every other error (subcommand
    parsers are of the same class)."""

    def error(self, message: str) -> "NoReturn":  # type: ignore[override]
        self.exit(EXIT_ERROR, f"functionalbpe: error: {message} (see {self.prog} --help)\n")


# -- argument types -------------------------------------------------------------------------------


def whole_number(minimum: int, maximum: Optional[int] = None) -> Callable[[str], int]:
    """An argparse type: an integer written in digits, in ``minimum..maximum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number written in digits") from None
        if value < minimum or (maximum is not None and value > maximum):
            bounds = f"from {minimum} to {maximum}" if maximum is not None else f"at least {minimum}"
            raise argparse.ArgumentTypeError(f"{text} is out of range: give a whole number {bounds}")
        return value

    return parse


# Above any sensible size or ratio, and small enough that a size in MB times 1e6 stays finite.
LARGEST_NUMBER = 1e15


def positive_number(text: str) -> float:
    """An argparse type: a number above 0, at most LARGEST_NUMBER."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= LARGEST_NUMBER:  # False for nan too
        raise argparse.ArgumentTypeError(f"{text} is out of range: give a number above 0, at most {LARGEST_NUMBER:g}")
    return value


VOCAB_SIZE = whole_number(1, MAX_VOCAB_SIZE)
THREADS = whole_number(1, MAX_THREADS)
COUNT = whole_number(1)
LIMIT = whole_number(0)


# -- input and output -------------------------------------------------------------------------------


def add_text_io(p: argparse.ArgumentParser) -> None:
    """The arguments of the commands that read text or ids and write the result."""
    p.add_argument("input", nargs="?", metavar="FILE", help="input file (default: stdin)")
    p.add_argument("--tokenizer", "-t", required=True, help="a tokenizer file written by `train`")
    p.add_argument("--lines", action="store_true", help="one document per line instead of one per input")
    p.add_argument("--output", "-o", default=None, help="output file (default: stdout)")


def tokenizer_and_documents(args: argparse.Namespace) -> Tuple[Tokenizer, List[str]]:
    """For the commands that read text: the output path checked, the tokenizer loaded, the
    input read as documents (``add_text_io``'s arguments, and ``--encoding-errors``)."""
    check_output(args.output)
    tok = Tokenizer.load(args.tokenizer)
    return tok, documents(read_input(args.input, args.encoding_errors), args.lines)


def read_input(path: Optional[str], errors: str = "strict") -> str:
    """A file's text, or stdin's when ``path`` is None; invalid UTF-8 as ``errors`` says."""
    if path is None:
        return decode_utf8(sys.stdin.buffer.read(), "<stdin>", errors)
    return read_text(path, errors)


def documents(text: str, lines: bool) -> List[str]:
    """The input as documents: the whole text, or (``lines``) one per line."""
    if not lines:
        return [text]
    docs = text.split("\n")
    if docs and docs[-1] == "":
        docs.pop()
    return docs


def check_output(path: Optional[str]) -> None:
    """Refuse an output path that cannot be written, before any work (None: stdout)."""
    if path is not None:
        check_output_path(path)


def write_output(path: Optional[str], text: str) -> None:
    """``text`` to the file at ``path``, atomically, or to stdout when ``path`` is None."""
    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        atomic_write_text(path, text)


@contextmanager
def streamed_output(path: Optional[str]) -> Iterator[Callable[[bytes], object]]:
    """A ``write(bytes)`` for output made a piece at a time: to ``path`` whole or not at all
    (a temporary file renamed at the end, removed on failure), or to stdout as it comes."""
    from ..tokenfile import PendingFile  # numpy only where it is used: the CLI starts without it

    if path is None:
        yield sys.stdout.buffer.write
        sys.stdout.flush()
        return
    out = PendingFile(path)
    try:
        yield out.write
        out.finish()
        out.rename()
    except BaseException:
        out.discard()
        raise
