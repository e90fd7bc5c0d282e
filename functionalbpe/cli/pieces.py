"""``functionalbpe pieces -t tok.json [FILE]``: the pieces BPE sees, each with its tokens.

Each line is a piece as :meth:`Tokenizer.explain` shows it — whitespace made visible
(:mod:`functionalbpe.util.display`), a scheme's atoms as glyphs — then its ids, then its tokens
as strings. With ``--color`` the piece is written as its tokens on alternating background
colours (ANSI, as the tiktokenizer page colours them).
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from ..util.display import pad, paint, visible, width
from ..teach.vocab import shower
from .common import add_text_or_file, add_tokenizer, check_output, documents, open_tokenizer, text_or_file, write_output

HELP = "show the pieces BPE sees and the tokens of each"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("pieces", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    add_text_or_file(p)
    add_tokenizer(p)
    p.add_argument("--lines", action="store_true", help="one document per line: a blank line after each")
    p.add_argument("--color", action=argparse.BooleanOptionalAction, default=None,
                   help="colour each token (ANSI), as tiktokenizer does (default: when writing to a terminal)")
    p.add_argument("--output", "-o", default=None, help="output file (default: stdout)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_output(args.output)
    tok = open_tokenizer(args)
    docs = documents(text_or_file(args), args.lines)
    color = args.color if args.color is not None else (args.output is None and sys.stdout.isatty())
    show = shower(tok)
    out = []
    k = 0  # tokens so far: the colours alternate across the whole document
    for doc in docs:
        for shown, ids in tok.explain(doc):
            tokens = [show(i) for i in ids]
            if color:
                first = "".join(paint(k + j, t) for j, t in enumerate(tokens))
                shown_width = sum(map(width, tokens))
                k += len(ids)
                out.append(f"{first}{' ' * max(24 - shown_width, 0)} {' '.join(map(str, ids))}\n")
            else:
                text = visible(shown)
                out.append(f"{pad(text, 24)} {' '.join(map(str, ids)):<16} {''.join(f'[{t}]' for t in tokens)}\n")
        if args.lines:
            out.append("\n")
    write_output(args.output, "".join(out))
    return 0
