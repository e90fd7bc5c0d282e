"""``functionalbpe decode -t tok.json [FILE]``: ids (one document per line) back to text.

Example::

    >>> parse_ids(" 72 105 ")
    [72, 105]
"""
from __future__ import annotations

import argparse
from typing import Any, List

from ..errors import FunctionalBPEError
from ..tokenizer import Tokenizer
from .common import add_text_io, check_output, read_input, write_output

HELP = "token ids (one document per line) to text"

# An id longer than this is out of range for any tokenizer; int() is not even tried on it
# (Python refuses more than 4,300 digits).
_MAX_ID_DIGITS = 20


def add_parser(sub: Any) -> None:
    p = sub.add_parser("decode", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    add_text_io(p)
    p.add_argument("--errors", default="strict", choices=["strict", "replace"], help="ids that are not valid UTF-8")
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


def run(args: argparse.Namespace) -> int:
    check_output(args.output)
    tok = Tokenizer.load(args.tokenizer)
    name = args.input or "<stdin>"
    lines = read_input(args.input).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    texts = []
    for number, line in enumerate(lines, 1):
        try:
            texts.append(tok.decode(parse_ids(line), errors=args.errors))
        except FunctionalBPEError as exc:
            raise FunctionalBPEError(f"{name}: line {number}: {exc}") from None
    sep = "\n" if args.lines else ""
    write_output(args.output, "".join(t + sep for t in texts))
    return 0
