"""``functionalbpe decode -t tok.json [FILE]``: ids back to text.

``FILE`` is a token file (``.npy``, ``.bin``: raw or llm.c's, or ``--format``) read with
:func:`functionalbpe.pipeline.tokenfile.read_token_file` and decoded a slice at a time (``--range
START:END`` for part of it), or text: one document of ids per line.

Example::

    >>> parse_ids(" 72 105 "), parse_range("10:20"), parse_range(":5")
    ([72, 105], (10, 20), (0, 5))
"""
from __future__ import annotations

import argparse
from typing import Any, List, Optional, Tuple

from ..errors import FunctionalBPEError
from ..tokenizer import Tokenizer
from .encode import FORMATS, SUFFIXES
from ..core.decoding import output_budget
from .common import add_text_io, check_output, open_tokenizer, read_input, streamed_output, whole_number, write_output

HELP = "token ids (a token file, or one document per line) to text"

# An id longer than this is out of range for any tokenizer; int() is not even tried on it
# (Python refuses more than 4,300 digits).
_MAX_ID_DIGITS = 20
# Ids decoded at a time from a token file, and the most text one slice may make: memory is
# one slice's text whatever the file's size, and ids that amplify (a scheme's repeat
# instructions, a vocabulary of megabyte tokens) are refused, not decoded into gigabytes.
SLICE_IDS = 1 << 16
SLICE_OUTPUT = 1 << 26


def add_parser(sub: Any) -> None:
    p = sub.add_parser("decode", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    add_text_io(p)
    p.add_argument("--errors", default="strict", choices=["strict", "replace"], help="ids that are not valid UTF-8")
    p.add_argument("--format", choices=FORMATS, default=None, help="read FILE as a token file of this format")
    p.add_argument("--dtype", choices=["uint16", "uint32"], default=None,
                   help="the ids' type in a raw .bin file (default: uint16 when the vocabulary fits)")
    p.add_argument("--range", type=parse_range, default=None, metavar="START:END",
                   help="decode only the ids from START up to END (a token file)")
    p.add_argument("--max-output", type=whole_number(0), default=None, metavar="N",
                   help="the most characters the command may write (default: 256 per id, at least 16 M; "
                   "a token file is decoded in slices of at most 64 M characters each)")
    p.set_defaults(run=run)


def parse_ids(line: str) -> List[int]:
    """Token ids written in ASCII digits, separated by white space."""
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


def parse_range(text: str) -> Tuple[int, Optional[int]]:
    """``START:END``, either side may be left out (``:END``, ``START:``)."""
    start, sep, end = text.partition(":")
    bounds = []
    for part in (start, end):
        if part and not (part.isascii() and part.isdigit() and len(part) <= _MAX_ID_DIGITS):
            raise argparse.ArgumentTypeError(f"{text!r}: write START:END with whole numbers, e.g. 0:1000")
        bounds.append(int(part) if part else None)
    if not sep:
        raise argparse.ArgumentTypeError(f"{text!r}: write START:END with whole numbers, e.g. 0:1000")
    first, last = bounds[0] or 0, bounds[1]
    if last is not None and last < first:
        raise argparse.ArgumentTypeError(f"{text!r}: END comes before START")
    return first, last


def is_token_file(args: argparse.Namespace) -> bool:
    if args.format is not None:
        return True
    return args.input is not None and args.input.lower().endswith(tuple(SUFFIXES))


def run(args: argparse.Namespace) -> int:
    check_output(args.output, args.input, args.tokenizer)
    tok = open_tokenizer(args)
    if is_token_file(args):
        decode_token_file(tok, args)
        return 0
    if args.range is not None:
        raise FunctionalBPEError("--range reads a token file (.npy, .bin or --format)")
    name = args.input or "<stdin>"
    lines = read_input(args.input).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    texts = []
    left = args.max_output
    for number, line in enumerate(lines, 1):
        try:
            texts.append(tok.decode(parse_ids(line), errors=args.errors, max_output=left))
            if left is not None:
                left -= len(texts[-1])
        except FunctionalBPEError as exc:
            raise FunctionalBPEError(f"{name}: line {number}: {exc}") from None
    # One document per line of ids, as `encode` writes them: with --lines each is a line of
    # text again; without, documents are parted by a newline (one document: its text alone).
    write_output(args.output, "".join(t + "\n" for t in texts) if args.lines else "\n".join(texts))
    return 0


def decode_token_file(tok: Tokenizer, args: argparse.Namespace) -> None:
    """The text of a token file's ids (or of ``--range``), decoded a slice at a time with the
    streaming decoder: the same text as decoding them at once, in bounded memory."""
    from ..formats.tokenfiles import choose_dtype, read_token_file

    dtype = args.dtype or choose_dtype(tok.vocab_size).name
    ids = read_token_file(args.input, args.format, dtype)
    start, end = args.range or (0, None)
    end = len(ids) if end is None else min(end, len(ids))
    if start > len(ids):
        raise FunctionalBPEError(f"{args.input}: --range starts at {start}, after its {len(ids):,} ids")
    decoder = tok.stream_decoder(args.errors)
    left = output_budget(args.max_output, max(0, end - start))
    with streamed_output(args.output) as write:
        for at in range(start, end, SLICE_IDS):
            piece = ids[at:min(at + SLICE_IDS, end)].tolist()
            try:
                text = decoder.feed(piece, max_output=min(left, SLICE_OUTPUT))
            except FunctionalBPEError as exc:
                raise FunctionalBPEError(f"{args.input}: in the ids from {at:,}: {exc}; see --max-output") from None
            left -= len(text)
            write(text.encode("utf-8"))
        try:
            write(decoder.finish(max_output=min(left, SLICE_OUTPUT)).encode("utf-8"))
        except FunctionalBPEError as exc:
            raise FunctionalBPEError(f"{args.input}: at the end: {exc}") from None
