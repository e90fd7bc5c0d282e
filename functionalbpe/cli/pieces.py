"""``functionalbpe pieces -t tok.json [FILE]``: the pieces BPE sees, each with its tokens.

Each line is a piece as :meth:`Tokenizer.explain` shows it — whitespace made visible
(:mod:`functionalbpe.util.display`), a scheme's atoms as glyphs — then its ids, then its tokens
as strings. With ``--color`` the piece is written as its tokens on alternating background
colours (ANSI, as the tiktokenizer page colours them).
"""
from __future__ import annotations

import argparse
from typing import Any

from ..util.display import paint, visible
from ..teach.vocab import shower
from .common import add_text_io, tokenizer_and_documents, write_output

HELP = "show the pieces BPE sees and the tokens of each"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("pieces", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    add_text_io(p)
    p.add_argument("--encoding-errors", default="strict", choices=["strict", "replace"],
                   help="invalid UTF-8 in the input: an error, or read as U+FFFD (default: strict)")
    p.add_argument("--color", action="store_true", help="colour each token (ANSI), as tiktokenizer does")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    tok, docs = tokenizer_and_documents(args)
    show = shower(tok)
    out = []
    k = 0  # tokens so far: the colours alternate across the whole document
    for doc in docs:
        for shown, ids in tok.explain(doc):
            tokens = [show(i) for i in ids]
            if args.color:
                first = "".join(paint(k + j, t) for j, t in enumerate(tokens))
                width = sum(map(len, tokens))
                k += len(ids)
                out.append(f"{first}{' ' * max(24 - width, 0)} {' '.join(map(str, ids))}\n")
            else:
                text = visible(shown)
                out.append(f"{text:<24} {' '.join(map(str, ids)):<16} {''.join(f'[{t}]' for t in tokens)}\n")
        if args.lines:
            out.append("\n")
    write_output(args.output, "".join(out))
    return 0
