"""``functionalbpe encode -t tok.json [INPUT...] [-o OUT]``: text to token ids, streamed.

The inputs are what ``train`` takes (files, directories, globs, ``.jsonl`` with ``--field``,
``.gz``), or stdin when there are none. With ``-o ids.npy`` / ``-o ids.bin`` (or ``--format``)
the ids go to a token file for training (:mod:`functionalbpe.pipeline.tokenfile`); otherwise they are
written as text, one line of ids per document. Either way the corpus is read in blocks and
encoded on all cores, in bounded memory, with progress on stderr (``--quiet``: none).

Example::

    >>> eot_option("<|endoftext|>"), eot_option("50256")
    ('<|endoftext|>', 50256)
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Iterator, Optional, Union

from ..core._native import MAX_THREADS
from ..errors import FunctionalBPEError, SpecialTokenError
from ..text.corpus import Files
from ..formats.tokenfiles import FORMATS, SUFFIXES
from ..pipeline.tokenfile import encode_stream
from .common import (THREADS, add_field, add_tokenizer, check_output, corpus_files, documents, open_tokenizer,
                     read_input, streamed_output)

HELP = "text to token ids: a token file for training, or one line of ids per document"
TEXT = "text"
# Ids turned into text at a time: a few MB of text.
TEXT_SLICE = 1 << 20


def add_parser(sub: Any) -> None:
    p = sub.add_parser("encode", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="files, directories or glob patterns (default: stdin)")
    add_tokenizer(p)
    p.add_argument("--output", "-o", default=None,
                   help="output file: .npy or .bin is a token file, anything else text (default: text on stdout)")
    p.add_argument("--format", choices=FORMATS + (TEXT,), default=None,
                   help="npy, bin (raw ids, as nanoGPT reads), llmc (llm.c's .bin) or text (default: from -o)")
    p.add_argument("--dtype", choices=["uint16", "uint32"], default=None,
                   help="the ids' type in a token file (default: uint16 when the vocabulary fits)")
    p.add_argument("--eot", type=eot_option, default=None, metavar="TOKEN",
                   help="a special token (its text or id) written after each document")
    p.add_argument("--offsets", default=None, metavar="PATH",
                   help="also write where each document starts (uint64, then the total)")
    p.add_argument("--threads", type=THREADS, default=None, help=f"1 to {MAX_THREADS} (default: all cores)")
    add_field(p)
    p.add_argument("--lines", action="store_true", help="one document per line instead of one per file")
    p.add_argument("--allow-special", action="store_true", help="read special-token text as special tokens")
    p.add_argument("--encoding-errors", default="strict", choices=["strict", "replace"],
                   help="invalid UTF-8 in the input: an error, or read as U+FFFD (default: strict)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run)


def eot_option(text: str) -> Union[str, int]:
    """``--eot``: an id written in ASCII digits, else a special token's text."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 10 else text


# Suffixes of text output; any other suffix is refused unless --format says what to write
# (-o ids.pt would otherwise hold text where a reader expects a tensor).
TEXT_SUFFIXES = ("", ".txt", ".ids", ".tokens")


def output_format(args: argparse.Namespace) -> str:
    if args.format is not None:
        return str(args.format)
    if args.output is not None:
        for suffix, kind in SUFFIXES.items():
            if args.output.lower().endswith(suffix):
                return kind
        suffix = os.path.splitext(args.output)[1].lower()
        if suffix not in TEXT_SUFFIXES:
            raise FunctionalBPEError(
                f"{args.output}: cannot tell the format from the suffix {suffix!r}: -o ids.npy or ids.bin writes a "
                "token file, ids.txt text; or say it with --format"
            )
    return TEXT


def run(args: argparse.Namespace) -> int:
    check_output(args.output, args.tokenizer)
    check_output(args.offsets, args.tokenizer)
    kind = output_format(args)  # refused before anything is read
    if kind != TEXT and args.output is None:
        raise FunctionalBPEError("a token file needs -o PATH (binary ids are not written to the terminal)")
    if kind == TEXT and args.offsets is not None:
        raise FunctionalBPEError("--offsets goes with a token file (-o ids.npy or ids.bin)")
    tok = open_tokenizer(args)
    eot = args.eot
    if isinstance(eot, int) and str(eot) in tok.special_tokens:
        eot = str(eot)  # a special token written in digits
    source: Any
    if args.inputs:
        source = corpus_files(args, max_chars=None)
        for written in (args.output, args.offsets):
            check_output(written, source.paths, args.tokenizer)
        if args.lines:
            source = lines_of(source)
    else:
        text = read_input(None, args.encoding_errors)
        source = documents(text, args.lines)
    allowed = "all" if args.allow_special else frozenset()
    progress = False if args.quiet else None
    try:
        if kind != TEXT:
            summary = tok.encode_to_file(source, args.output, format=kind, dtype=args.dtype, eot=eot,
                                         offsets=args.offsets, threads=args.threads, progress=progress,
                                         allowed_special=allowed, errors=args.encoding_errors)
            if not args.quiet:
                sys.stderr.write(str(summary) + "\n")
            return 0
        batches = encode_stream(tok, source, dtype="uint32", eot=eot, threads=args.threads,
                               allowed_special=allowed, progress=progress)
        write_lines(batches, args.output)
    except SpecialTokenError as exc:
        if exc.token is None:
            raise
        # The API's message names allowed_special=; here the user types a flag.
        raise SpecialTokenError(
            f"the input contains the special token {exc.token!r} at offset {exc.offset} of its document; "
            "pass --allow-special to encode special-token text as special tokens"
        ) from None
    return 0


def lines_of(corpus: Files) -> Iterator[str]:
    """Every line of every document, read a block at a time: memory holds one block and the
    line that crosses it."""
    carry = ""
    for unit, ends in corpus.document_units():
        text = carry + (unit if isinstance(unit, str) else unit.decode("utf-8"))
        if ends:
            yield from documents(text, lines=True)
            carry = ""
        else:
            *done, carry = text.split("\n")
            yield from done


def write_lines(batches: Iterator[Any], path: Optional[str]) -> None:
    """The ids of each document on a line, separated by spaces; to ``path`` whole or not at
    all, or to stdout as they come."""
    from ..pipeline.tokenfile import spaced_digits

    with streamed_output(path) as write:
        in_line = False  # ids of the current document already written
        for encoded in batches:
            cuts = [0] + list(encoded.ends) + [len(encoded.ids)]
            for k in range(len(cuts) - 1):
                for at in range(cuts[k], cuts[k + 1], TEXT_SLICE):
                    text = spaced_digits(encoded.ids[at:min(at + TEXT_SLICE, cuts[k + 1])])
                    write(text if in_line else text[1:])  # no space before a line's first id
                    in_line = True
                if k < len(cuts) - 2:  # the segment ends a document
                    write(b"\n")
                    in_line = False
