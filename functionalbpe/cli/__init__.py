"""The ``functionalbpe`` command: a thin layer over the Python API.

    functionalbpe train FILE... --vocab-size N [--scheme S] [--pattern P] [--out tok.json]
    functionalbpe encode --tokenizer tok.json [FILE]     ids, one document per line
    functionalbpe decode --tokenizer tok.json [FILE]
    functionalbpe pieces --tokenizer tok.json [FILE]     what BPE sees, piece by piece
    functionalbpe report -t tok.json [NAME=]FILE...       measure tokenizers on named corpora
    functionalbpe demo                                   trains on Python's standard library

Every error caused by input is one line on stderr and a non-zero exit status (2), options
included; an interrupted command exits 130. Output paths are checked before the work starts,
and output files are written whole or not at all.
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
import sysconfig
import time
from typing import Any, Callable, Dict, List, NoReturn, Optional, Sequence

from .. import __version__
from ..core._native import MAX_THREADS
from ..core.alphabet import MAX_VOCAB_SIZE
from .report import add_report_parser
from ..text.corpus import decode_utf8, files
from ..errors import FunctionalBPEError
from ..fileformat import atomic_write_text, check_output_path
from ..text.patterns import PATTERNS
from ..schemes.registry import SCHEMES
from ..tokenizer import Tokenizer
from ..training import BACKENDS, train

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_ERROR
    try:
        return args.run(args) or 0
    except FunctionalBPEError as exc:
        _error(str(exc))
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        _error(f"{where}{exc.strerror or exc}")
    except MemoryError:
        _error("out of memory; give the command less input (or, for train, see --max-chars and --threads)")
    except KeyboardInterrupt:
        sys.stderr.write("functionalbpe: interrupted; no output was written\n")
        return EXIT_INTERRUPTED
    return EXIT_ERROR


def _error(message: str) -> None:
    sys.stderr.write(f"functionalbpe: error: {message}\n")


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, like every other error (subcommand
    parsers are of the same class)."""

    def error(self, message: str) -> "NoReturn":  # type: ignore[override]
        self.exit(EXIT_ERROR, f"functionalbpe: error: {message} (see {self.prog} --help)\n")


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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="functionalbpe",
        description="Train and apply byte-level BPE tokenizers.",
    )
    parser.add_argument("--version", action="version", version=f"functionalbpe {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("train", help="train a tokenizer on files", description="Train a tokenizer on files.")
    p.add_argument("inputs", nargs="+", metavar="FILE", help="files, directories or glob patterns")
    p.add_argument("--vocab-size", type=VOCAB_SIZE, required=True, help="bytes + atoms + merges + special tokens")
    p.add_argument("--scheme", default="plain", choices=sorted(SCHEMES))
    p.add_argument("--pattern", default=None, help=f"one of {', '.join(PATTERNS)} or a regex (default: the scheme's)")
    p.add_argument("--special", action="append", default=[], metavar="TOKEN", help="a special token (repeatable)")
    p.add_argument("--min-frequency", type=COUNT, default=1, help="stop when the best pair occurs fewer times")
    p.add_argument("--merge-policy", default="prefix", choices=["atomic", "prefix", "free"])
    p.add_argument("--backend", default="auto", choices=BACKENDS)
    p.add_argument("--threads", type=THREADS, default=None,
                   help=f"worker threads for counting, 1 to {MAX_THREADS} (default: all cores)")
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a scheme option, e.g. --option case=false --option normalize=NFC (repeatable)",
    )
    p.add_argument("--encoding-errors", default="strict", choices=["strict", "replace"], help="invalid UTF-8 in input")
    p.add_argument("--field", default="text", help="the field holding the text in .jsonl files (default: text)")
    p.add_argument("--max-chars", type=LIMIT, default=None, metavar="N", help="read at most N characters in all")
    p.add_argument("--max-doc-chars", type=LIMIT, default=None, metavar="N", help="keep the first N characters of a longer document")
    p.add_argument("--out", "-o", default="tokenizer.json", help="where to write the tokenizer (default: tokenizer.json)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.set_defaults(run=cmd_train)

    for name, helptext in (
        ("encode", "text to token ids: one line of ids per document"),
        ("decode", "token ids (one document per line) to text"),
        ("pieces", "show the pieces BPE sees and the tokens of each"),
    ):
        p = sub.add_parser(name, help=helptext, description=helptext[0].upper() + helptext[1:] + ".")
        p.add_argument("input", nargs="?", metavar="FILE", help="input file (default: stdin)")
        p.add_argument("--tokenizer", "-t", required=True, help="a tokenizer file written by `train`")
        p.add_argument("--lines", action="store_true", help="one document per line instead of one per input")
        p.add_argument("--output", "-o", default=None, help="output file (default: stdout)")
        if name == "encode":
            p.add_argument("--allow-special", action="store_true", help="read special-token text as special tokens")
            p.add_argument("--encoding-errors", default="strict", choices=["strict", "replace"])
        elif name == "decode":
            p.add_argument("--errors", default="strict", choices=["strict", "replace"], help="ids that are not valid UTF-8")
        else:
            p.add_argument("--encoding-errors", default="strict", choices=["strict", "replace"])
        p.set_defaults(run={"encode": cmd_encode, "decode": cmd_decode, "pieces": cmd_pieces}[name])

    p = sub.add_parser(
        "bench",
        help="train and encode side by side with the installed peers",
        description="Train and encode with functionalbpe and every installed peer (rustbpe, HF tokenizers, "
        "SentencePiece, bpeasy, tiktoken) on the same text in one run, and print the ratios.",
    )
    p.add_argument("--corpus", nargs="+", metavar="FILE", default=None, help="files (default: the Python standard library)")
    p.add_argument("--max-mb", type=positive_number, default=None, help="use at most this many MB of the corpus")
    p.add_argument("--vocab-size", type=VOCAB_SIZE, default=32768)
    p.add_argument("--threads", type=THREADS, default=None, help="threads for every library (default: all cores)")
    p.add_argument("--repeats", type=COUNT, default=3, help="alternating runs per library; the best is kept")
    p.add_argument("--libraries", default=None, help="comma-separated subset, e.g. functionalbpe,rustbpe")
    p.add_argument("--no-training", action="store_true", help="skip the training table")
    p.add_argument("--no-pathological", action="store_true", help="skip the pathological-input table")
    p.add_argument("--json", default=None, metavar="OUT", help="also write the results as JSON")
    p.add_argument("--markdown", default=None, metavar="OUT", help="also write the tables as Markdown")
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(run=cmd_bench)

    p = sub.add_parser(
        "demo",
        help="train on Python's standard library and show the result",
        description="Train a tokenizer on the source files of this Python's standard library (no download) "
        "and show how it splits a few strings.",
    )
    p.add_argument("--vocab-size", type=VOCAB_SIZE, default=4096)
    p.add_argument("--max-mb", type=positive_number, default=None, help="read at most this many MB of source (default: all)")
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(run=cmd_demo)

    add_report_parser(sub)
    return parser


# -- train ------------------------------------------------------------------------------------


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


def cmd_train(args: argparse.Namespace) -> int:
    check_output_path(args.out)  # before hours of training, not after
    corpus = files(
        *args.inputs,
        errors=args.encoding_errors,
        field=args.field,
        max_chars=args.max_chars,
        max_doc_chars=args.max_doc_chars,
    )
    start = time.perf_counter()
    tok = train(
        corpus,
        vocab_size=args.vocab_size,
        scheme=args.scheme,
        pattern=args.pattern,
        special_tokens=args.special,
        min_frequency=args.min_frequency,
        merge_policy=args.merge_policy,
        backend=args.backend,
        progress=False if args.quiet else True,
        threads=args.threads,
        **parse_options(args.option),
    )
    tok.save(args.out)
    if not args.quiet:
        sys.stderr.write(
            f"wrote {args.out}: {tok.vocab_size} ids ({len(tok.merges)} merges) from {len(corpus)} files "
            f"in {time.perf_counter() - start:.1f}s\n"
        )
    return 0


# -- encode / decode / pieces ------------------------------------------------------------------


def _read_input(path: Optional[str], errors: str = "strict") -> str:
    if path is None:
        return decode_utf8(sys.stdin.buffer.read(), "<stdin>", errors)
    from ..text.corpus import read_text

    return read_text(path, errors)


def _documents(text: str, lines: bool) -> List[str]:
    if not lines:
        return [text]
    docs = text.split("\n")
    if docs and docs[-1] == "":
        docs.pop()
    return docs


def _write_output(path: Optional[str], text: str) -> None:
    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        atomic_write_text(path, text)


def _check_output(path: Optional[str]) -> None:
    if path is not None:
        check_output_path(path)


def cmd_encode(args: argparse.Namespace) -> int:
    _check_output(args.output)
    tok = Tokenizer.load(args.tokenizer)
    docs = _documents(_read_input(args.input, args.encoding_errors), args.lines)
    allowed = "all" if args.allow_special else frozenset()
    out = [" ".join(map(str, tok.encode(d, allowed_special=allowed))) for d in docs]
    _write_output(args.output, "".join(line + "\n" for line in out))
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    _check_output(args.output)
    tok = Tokenizer.load(args.tokenizer)
    name = args.input or "<stdin>"
    lines = _read_input(args.input).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    texts = []
    for number, line in enumerate(lines, 1):
        try:
            texts.append(tok.decode(parse_ids(line), errors=args.errors))
        except FunctionalBPEError as exc:
            raise FunctionalBPEError(f"{name}: line {number}: {exc}") from None
    sep = "\n" if args.lines else ""
    _write_output(args.output, "".join(t + sep for t in texts))
    return 0


# An id longer than this is out of range for any tokenizer; int() is not even tried on it
# (Python refuses more than 4,300 digits).
_MAX_ID_DIGITS = 20


def parse_ids(line: str) -> List[int]:
    """Token ids written in ASCII digits, separated by white space.

    >>> parse_ids(" 72 105 ")
    [72, 105]
    """
    ids = []
    for field in line.split():
        digits = field[1:] if field.startswith("-") else field
        if not (digits.isascii() and digits.isdigit()):  # not "١٢", "1_000" or "+5", which int() reads
            shown = field if len(field) <= 40 else field[:40] + "..."
            raise FunctionalBPEError(f"{shown!r} is not a token id; expected integers separated by spaces")
        if len(digits) > _MAX_ID_DIGITS:
            raise FunctionalBPEError(f"the id {field[:_MAX_ID_DIGITS]}... ({len(digits)} digits) is not a token of this tokenizer")
        ids.append(int(field))
    return ids


VISIBLE = str.maketrans({" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"})


def show_token(data: bytes) -> str:
    """A token for a person: whitespace made visible, a partial UTF-8 character as hex."""
    try:
        return data.decode("utf-8").translate(VISIBLE)
    except UnicodeDecodeError:
        return "".join(f"<{b:02x}>" for b in data)


def cmd_pieces(args: argparse.Namespace) -> int:
    _check_output(args.output)
    tok = Tokenizer.load(args.tokenizer)
    docs = _documents(_read_input(args.input, args.encoding_errors), args.lines)
    out = []
    for doc in docs:
        for shown, ids in tok.explain(doc):
            out.append(f"{shown.translate(VISIBLE):<24} {' '.join(map(str, ids))}\n")
        if args.lines:
            out.append("\n")
    _write_output(args.output, "".join(out))
    return 0


# -- demo ---------------------------------------------------------------------------------------

DEMO_SAMPLES = [
    "def __init__(self, name):",
    "        return self._cache[key]",
    "Hello, world! 1234567",
    "naïve café — ünïcode",
]


def stdlib_sources(max_bytes: Optional[int] = None) -> List[str]:
    """The .py files of this Python's standard library (not site-packages), sorted."""
    root = sysconfig.get_paths()["stdlib"]
    paths = sorted(
        p
        for p in glob.glob(os.path.join(root, "**", "*.py"), recursive=True)
        if "site-packages" not in p and "dist-packages" not in p
    )
    if not paths:
        raise FunctionalBPEError(f"found no .py files under {root}; is the standard library installed?")
    if max_bytes is not None:
        kept, total = [], 0
        for p in paths:
            size = os.path.getsize(p)
            if total + size > max_bytes:
                break
            kept.append(p)
            total += size
        paths = kept
    return paths


def cmd_demo(args: argparse.Namespace) -> int:
    max_bytes = int(args.max_mb * 1e6) if args.max_mb else None
    paths = stdlib_sources(max_bytes)
    # Every 20th file is held out, so bytes per token is measured on text not trained on.
    held_out = paths[::20]
    training = [p for i, p in enumerate(paths) if i % 20]
    corpus = files(*training, errors="replace")
    size = corpus.total_bytes()
    say = print
    say(f"Training on {len(training)} files of the Python standard library ({size / 1e6:.1f} MB), "
        f"vocabulary {args.vocab_size} ...", flush=True)
    start = time.perf_counter()
    tok = train(corpus, vocab_size=args.vocab_size, progress=False if args.quiet else True)
    elapsed = time.perf_counter() - start
    say(f"Trained {tok.vocab_size} tokens ({len(tok.merges)} merges) in {elapsed:.1f}s "
        f"({size / 1e6 / elapsed:.1f} MB/s).\n")
    for sample in DEMO_SAMPLES:
        ids = tok.encode(sample)
        parts = [show_token(tok.decode_bytes([i])) for i in ids]
        say(f"  {sample!r}\n    {len(ids)} tokens: {' | '.join(parts)}")
    held_text = list(files(*held_out, errors="replace"))
    n_bytes = sum(len(t.encode("utf-8")) for t in held_text)
    n_tokens = sum(len(ids) for ids in tok.encode_batch(held_text))
    say(f"\nVocabulary size: {tok.vocab_size}")
    say(f"Time: {elapsed:.1f}s")
    say(f"Bytes per token on {len(held_out)} held-out files ({n_bytes / 1e6:.1f} MB): {n_bytes / max(n_tokens, 1):.2f}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from .. import bench

    _check_output(args.json)
    _check_output(args.markdown)
    libraries = [x.strip() for x in args.libraries.split(",")] if args.libraries else None
    unknown = set(libraries or ()) - set(bench.MODULES)
    if unknown:
        raise FunctionalBPEError(f"--libraries: unknown {sorted(unknown)}; choose from {', '.join(bench.MODULES)}")
    if args.corpus:
        corpus = files(*args.corpus)
        name = ", ".join(args.corpus)
    else:
        corpus = files(*stdlib_sources(), errors="replace")
        name = f"Python {sys.version_info.major}.{sys.version_info.minor} standard library (*.py)"
    docs, total = [], 0
    limit = int(args.max_mb * 1e6) if args.max_mb else None
    for doc in corpus:
        if limit is not None and total + len(doc) > limit and docs:
            break
        docs.append(doc)
        total += len(doc)
    config = bench.BenchConfig(
        docs=docs,
        corpus_name=name,
        vocab_size=args.vocab_size,
        threads=args.threads or os.cpu_count() or 1,
        repeats=args.repeats,
        libraries=libraries,
        skip_training=args.no_training,
        skip_pathological=args.no_pathological,
    )
    report = bench.run_bench(config, quiet=args.quiet)
    text = bench.format_markdown(report)
    sys.stdout.write(text)
    if args.json:
        bench.write_json(report, args.json)
    if args.markdown:
        atomic_write_text(args.markdown, text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
