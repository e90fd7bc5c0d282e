"""What every subcommand shares: one-line errors, argument types, reading input, writing output.

Every error caused by input is one line on stderr and exit status 2, options included; an
interrupted command exits 130. Output paths are checked before the work starts, and output
files are written whole or not at all.

Example::

    >>> VOCAB_SIZE("300"), documents("a\\nb\\n", lines=True)
    (300, ['a', 'b'])
    >>> parse_options(["case=false", "normalize=NFC", "repeat=3"])
    {'case': False, 'normalize': 'NFC', 'repeat': 3}
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import warnings
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, NoReturn, Optional, Sequence

from ..core._native import MAX_THREADS
from ..core.alphabet import MAX_VOCAB_SIZE
from ..errors import FunctionalBPEError
from ..util.display import plural
from ..util.output import atomic_write_text, check_output_path, refuse_overwriting, remove_pending
from ..schemes.base import NORMAL_FORMS
from ..schemes.registry import SCHEMES
from ..text.corpus import Files, decode_utf8, files, read_text
from ..text.patterns import PATTERNS
from ..tokenizer import Tokenizer

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 128 + 15
EXIT_BROKEN_PIPE = 128 + 13  # SIGPIPE, as the shell reports a tool it ended


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, ``timeout``, schedulers), raised where the command is, so that it
    unwinds as on Ctrl-C: every temporary output file is removed on the way out."""


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated()


def run(command: Callable[[argparse.Namespace], Optional[int]], args: argparse.Namespace) -> int:
    """Run a subcommand; whatever bad input causes becomes one line on stderr, and so does
    each warning the API gives (``functionalbpe: warning: ...``, without Python's file and
    line)."""
    previous = None
    _Streamed.bytes = _Streamed.lines = 0
    _Streamed.tail = b""
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return _run(command, args)
    finally:
        remove_pending()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _run(command: Callable[[argparse.Namespace], Optional[int]], args: argparse.Namespace) -> int:
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return command(args) or 0
    except FunctionalBPEError as exc:
        error(str(exc))
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, as a tool that SIGPIPE ends does.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit's flush
        except (OSError, ValueError):
            pass
        return EXIT_BROKEN_PIPE
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        error(f"{where}{exc.strerror or exc}")
    except MemoryError:
        error("out of memory; give the command less input (or, for train, see --max-chars and --threads)")
    except Terminated:
        sys.stderr.write(f"functionalbpe: terminated; {_what_was_written()}\n")
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        sys.stderr.write(f"functionalbpe: interrupted; {_what_was_written()}\n")
        return EXIT_INTERRUPTED
    return EXIT_ERROR


def error(message: str) -> None:
    sys.stderr.write(f"functionalbpe: error: {message}\n")


def _show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    sys.stderr.write(f"functionalbpe: warning: {message}\n")


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


# -- what train and count share: the scheme and the corpus ----------------------------------------


def add_scheme_args(p: argparse.ArgumentParser) -> None:
    """--scheme, --pattern, --special, --option: what decides the pieces counted."""
    p.add_argument("--scheme", default="plain", choices=sorted(SCHEMES),
                   help="how text is turned into BPE's pieces: plain byte-level BPE, the Functionalizer "
                   "(case and accents as instructions) or boundary markers (default: plain)")
    p.add_argument("--pattern", default=None, help=f"one of {', '.join(PATTERNS)} or a regex (default: the scheme's)")
    p.add_argument("--normalize", default=None, choices=NORMAL_FORMS,
                   help="Unicode normalization before the pattern, for every scheme (NFC: as the "
                   "Functionalizer paper); decoding then gives the normalized text (default: none, lossless)")
    p.add_argument("--special", action="append", default=[], metavar="TOKEN", help="a special token (repeatable)")
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a scheme option, e.g. --option case=false --option normalize=NFC (repeatable)",
    )


def add_corpus_args(p: argparse.ArgumentParser) -> None:
    """How files are read (``corpus_files``), the threads that count them, --out and --quiet."""
    p.add_argument("--threads", type=THREADS, default=None,
                   help=f"worker threads for counting, 1 to {MAX_THREADS} (default: all cores)")
    p.add_argument("--encoding-errors", default="strict", choices=["strict", "replace"], help="invalid UTF-8 in input")
    add_field(p)
    p.add_argument("--max-chars", type=LIMIT, default=None, metavar="N", help="read at most N characters in all")
    p.add_argument("--max-doc-chars", type=LIMIT, default=None, metavar="N", help="keep the first N characters of a longer document")


def add_field(p: argparse.ArgumentParser) -> None:
    p.add_argument("--field", default=None,
                   help="the field holding the text in .jsonl, .json and .parquet files (default: text)")


def corpus_files(args: argparse.Namespace, paths: Optional[Sequence[str]] = None, **limits: Any) -> Files:
    """The files of ``paths`` (default: ``args.inputs``), read as ``add_corpus_args`` says (or
    with ``limits`` given instead of the --max options); --field given for files without
    fields is refused rather than ignored."""
    if not limits:
        limits = {"max_chars": args.max_chars, "max_doc_chars": args.max_doc_chars}
    found = files(*(args.inputs if paths is None else paths), errors=args.encoding_errors, field=args.field or "text",
                  **limits)
    if args.field is not None and not found.reads_fields:
        raise FunctionalBPEError(
            f"--field {args.field} names the field of .jsonl, .json or .parquet documents, and none of the "
            "inputs is one (a text file is one document)"
        )
    return found


def named_values(items: List[str], flag: str) -> Dict[str, str]:
    """``["en=a.txt", "de=b.txt"]`` → ``{"en": "a.txt", "de": "b.txt"}``; each name once.

    >>> named_values(["en=corpus/en", "de=de.txt"], "--lang")
    {'en': 'corpus/en', 'de': 'de.txt'}
    """
    out: Dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise FunctionalBPEError(f"{flag} {item!r}: write NAME=VALUE, e.g. {flag} en=corpus/en/")
        if name in out:
            raise FunctionalBPEError(f"{flag}: {name!r} is given twice")
        out[name] = value
    return out


def parse_options(items: List[str]) -> Dict[str, Any]:
    """``["case=false", "normalize=NFC"]`` → ``{"case": False, "normalize": "NFC"}``."""
    out: Dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise FunctionalBPEError(f"--option {item!r}: write KEY=VALUE, e.g. --option case=false")
        low = value.lower()
        if low in ("true", "yes", "on"):
            out[key] = True
        elif low in ("false", "no", "off"):
            out[key] = False
        elif low in ("none", "null"):
            out[key] = None
        else:
            try:
                out[key] = int(value)
            except ValueError:
                out[key] = value
    return out


def scheme_options(args: argparse.Namespace) -> Dict[str, Any]:
    """The scheme's keyword options: ``--option KEY=VALUE`` and ``--normalize``, which must agree.
    A key that is a parameter of ``train`` or ``count`` (``pattern``, ``vocab_size``...) is no
    scheme option: it has a flag of its own."""
    options = parse_options(args.option)
    for key in options:
        if key in _NOT_OPTIONS:
            flag = "--" + key.replace("_", "-")
            raise FunctionalBPEError(f"--option {key}=...: {key!r} is not a scheme option (see {flag} or --help)")
    if args.normalize is not None:
        if options.get("normalize", args.normalize) != args.normalize:
            raise FunctionalBPEError(
                f"--normalize {args.normalize} and --option normalize={options['normalize']} disagree; give one")
        options["normalize"] = args.normalize
    return options


def _parameters() -> "frozenset[str]":
    import inspect

    from ..counts import count
    from ..training import train

    names = set()
    for function in (train, count):
        names |= {p.name for p in inspect.signature(function).parameters.values() if p.kind != p.VAR_KEYWORD}
    # and those of functionalbpe.dask.count (imported only with --dask)
    return frozenset(names - {"normalize"}) | {"name", "client", "split_every", "task_bytes", "retries", "field", "errors"}


_NOT_OPTIONS = _parameters()


# -- input and output -------------------------------------------------------------------------------


def add_text_io(p: argparse.ArgumentParser) -> None:
    """The arguments of the commands that read text or ids and write the result."""
    p.add_argument("input", nargs="?", metavar="FILE", help="input file (default: stdin)")
    add_tokenizer(p)
    p.add_argument("--lines", action="store_true", help="one document per line instead of one per input")
    p.add_argument("--output", "-o", default=None, help="output file (default: stdout)")


TOKENIZER_HELP = ("a tokenizer: a file written by `train`, an HF tokenizer.json (or its directory), a "
                  "tiktoken rank file (OpenAI's published ones are known; any other needs --pattern), or "
                  "GPT-2's encoder.json/vocab.bpe (or their directory)")


def add_tokenizer(p: argparse.ArgumentParser) -> None:
    """The --tokenizer option of every command that applies one, and the pattern of a rank file."""
    p.add_argument("--tokenizer", "-t", required=True, help=TOKENIZER_HELP)
    p.add_argument("--pattern", default=None,
                   help="the pattern of a tiktoken rank file given to --tokenizer (which holds none): a name "
                        "(gpt4, llama3, o200k, ...) or a regex; not needed for OpenAI's published files")


def open_tokenizer(args: argparse.Namespace) -> Tokenizer:
    """The tokenizer of --tokenizer, whichever library's file it is (``Tokenizer.from_file``)."""
    return Tokenizer.from_file(args.tokenizer, args.pattern)


def input_paths(patterns: Sequence[str]) -> List[str]:
    """The files that paths, directories and globs name (for checking an output against
    them; a bad one is said later, where it is read)."""
    try:
        return [str(p) for p in files(*patterns).paths] if patterns else []
    except FunctionalBPEError:
        return list(patterns)


def add_text_or_file(p: argparse.ArgumentParser) -> None:
    """The input of the commands that show one text (``pieces``, ``explain``): one argument,
    read as a file when it is the path of one and as the text itself otherwise; ``--text``
    and ``--input`` say which; neither reads stdin."""
    p.add_argument("source", nargs="?", metavar="TEXT_OR_FILE",
                   help="a file to read, or else the text itself (default: stdin)")
    p.add_argument("--text", default=None, help="this text, even if a file has its name")
    p.add_argument("--input", "-i", default=None, metavar="FILE", help="read the text from this file")
    p.add_argument("--encoding-errors", default="strict", choices=["strict", "replace"],
                   help="invalid UTF-8 in the input: an error, or read as U+FFFD (default: strict)")


def text_or_file(args: argparse.Namespace) -> str:
    """The text ``add_text_or_file``'s arguments name."""
    given = [x for x in (args.source, args.text, args.input) if x is not None]
    if len(given) > 1:
        raise FunctionalBPEError("give the text (or a file) once: as the argument, with --text or with --input")
    if args.text is not None:
        return args.text
    if args.input is not None or (args.source is not None and os.path.exists(args.source)):
        return read_input(args.input or args.source, args.encoding_errors)
    return args.source if args.source is not None else read_input(None, args.encoding_errors)


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


def check_output(path: Optional[str], *reads: Any) -> None:
    """Refuse an output path that cannot be written, or that is (or links to) a file the
    command reads (``reads``: paths, or lists of them; a tokenizer's directory counts its
    tokenizer.json), before any work (None: stdout)."""
    if path is None:
        return
    check_output_path(path)
    inputs: List[str] = []
    for read in reads:
        for item in (read if isinstance(read, (list, tuple)) else [read]):
            if item is None:
                continue
            item = os.fspath(item)
            inputs.append(item)
            if os.path.isdir(item):
                inputs.extend(os.path.join(item, name) for name in ("tokenizer.json", "encoder.json", "vocab.bpe"))
    refuse_overwriting(path, inputs, "a file this command reads")


def write_output(path: Optional[str], text: str) -> None:
    """``text`` to the file at ``path``, atomically, or to stdout when ``path`` is None."""
    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        atomic_write_text(path, text)


class _Streamed:
    """What has gone to standard output, so that an interrupted command can say it, and the
    end of the last line made, held back until the line is whole."""

    bytes = 0
    lines = 0
    tail = b""


def _whole_writes(data: bytes, last: bool = False) -> None:
    """Write to stdout whole lines only (a line's end waits for the next piece), with Ctrl-C
    and SIGTERM held off until the write is done: output made a piece at a time then ends on
    a whole line, however the command stops. ``last``: write what is held, whole or not."""
    data = _Streamed.tail + data
    cut = len(data) if last else data.rfind(b"\n") + 1
    data, _Streamed.tail = data[:cut], data[cut:]
    if not data:
        return
    held = hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
    if held:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        _Streamed.bytes += len(data)
        _Streamed.lines += data.count(b"\n")
    finally:
        if held:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def _what_was_written() -> str:
    if not _Streamed.bytes:
        return "no output was written"
    return (f"{plural(_Streamed.lines, 'whole line')} ({_Streamed.bytes:,} bytes) had been written to standard "
            "output, and nothing after them")


@contextmanager
def streamed_output(path: Optional[str]) -> Iterator[Callable[[bytes], object]]:
    """A ``write(bytes)`` for output made a piece at a time: to ``path`` whole or not at all
    (a temporary file renamed at the end, removed on failure), or to stdout as it comes."""
    from ..pipeline.tokenfile import PendingFile  # numpy only where it is used: the CLI starts without it

    if path is None:
        yield _whole_writes
        _whole_writes(b"", last=True)
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
