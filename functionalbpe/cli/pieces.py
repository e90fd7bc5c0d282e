"""``functionalbpe pieces -t tok.json [FILE]``: the pieces BPE sees, each with its ids.

Each line is a piece as :meth:`Tokenizer.explain` shows it — whitespace made visible
(:mod:`functionalbpe.display`), a scheme's atoms as glyphs — then its ids.
"""
from __future__ import annotations

import argparse
from typing import Any

from ..display import visible
from .common import add_text_io, tokenizer_and_documents, write_output

HELP = "show the pieces BPE sees and the tokens of each"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("pieces", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    add_text_io(p)
    p.add_argument("--encoding-errors", default="strict", choices=["strict", "replace"],
                   help="invalid UTF-8 in the input: an error, or read as U+FFFD (default: strict)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    tok, docs = tokenizer_and_documents(args)
    out = []
    for doc in docs:
        for shown, ids in tok.explain(doc):
            out.append(f"{visible(shown):<24} {' '.join(map(str, ids))}\n")
        if args.lines:
            out.append("\n")
    write_output(args.output, "".join(out))
    return 0
