"""``functionalbpe vocab -t tok.json``: the vocabulary, one token a line, minbpe-style.

Special tokens, the scheme's atoms and the 256 bytes first, then each merge as
``id  [a][b] -> [ab]  count`` (:mod:`functionalbpe.teach.vocab`).
"""
from __future__ import annotations

import argparse
from typing import Any

from .common import add_tokenizer, open_tokenizer, check_output, write_output

HELP = "list the vocabulary: atoms, specials, bytes, then [a][b] -> [ab] per merge"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("vocab", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    add_tokenizer(p)
    p.add_argument("--output", "-o", default=None, help="output file (default: stdout)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_output(args.output)
    tok = open_tokenizer(args)
    write_output(args.output, "".join(line + "\n" for line in tok.vocab_lines()))
    return 0
