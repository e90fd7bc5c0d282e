"""``functionalbpe explain -t tok.json "text"``: how a text is encoded, merge by merge.

Per piece: its text form (for a scheme: instructions, markers), the bytes and atoms it
starts from, each merge applied with the symbols after it, and its ids
(:mod:`functionalbpe.teach.encode_trace`). ``--tree ID`` prints how one token was built.
On a terminal the final tokens are coloured (``--color`` / ``--no-color`` to choose).
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from ..util.display import paint
from ..errors import FunctionalBPEError
from ..teach.encode_trace import explain_lines, merge_tree
from ..tokenizer import Tokenizer
from .common import add_text_or_file, add_tokenizer, check_output, open_tokenizer, text_or_file, write_output

HELP = "show how a text is encoded, one merge at a time"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("explain", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    add_text_or_file(p)
    add_tokenizer(p)
    p.add_argument("--tree", type=int, default=None, metavar="ID", help="show the merge tree of one token instead")
    p.add_argument("--color", action=argparse.BooleanOptionalAction, default=None,
                   help="colour the tokens (default: when writing to a terminal)")
    p.add_argument("--output", "-o", default=None, help="output file (default: stdout)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_output(args.output)
    tok = open_tokenizer(args)
    if args.tree is not None:
        if not 0 <= args.tree < tok.vocab_size or not _is_token(tok, args.tree):
            raise FunctionalBPEError(f"--tree {args.tree}: no such token (ids are 0..{tok.vocab_size - 1})")
        lines = merge_tree(tok, args.tree)
    else:
        text = text_or_file(args)
        color = args.color if args.color is not None else (args.output is None and sys.stdout.isatty())
        lines = explain_lines(tok, text, paint if color else None)
    write_output(args.output, "".join(line + "\n" for line in lines))
    return 0


def _is_token(tok: Tokenizer, token: int) -> bool:
    try:
        tok.token_bytes(token)
    except (FunctionalBPEError, IndexError, KeyError):
        return False
    return True
