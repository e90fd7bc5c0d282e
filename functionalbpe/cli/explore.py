"""``functionalbpe explore -t tok.json -o explorer.html``: the tokenizer explorer page.

One self-contained HTML file (:mod:`functionalbpe.teach.explorer`): type text and see its
tokens, as the library encodes them; click a token for its merge tree. ``--train-on
small.txt`` adds a step-by-step replay of training on that text.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from ..util.output import check_output_path
from ..teach.explorer import EXAMPLES, MAX_REPLAY_MERGES, write_explorer
from .common import add_tokenizer, open_tokenizer, read_input, whole_number

HELP = "write a self-contained HTML page that tokenizes as you type"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("explore", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    add_tokenizer(p)
    p.add_argument("--output", "-o", default="explorer.html", help="the page to write (default: explorer.html)")
    p.add_argument("--train-on", default=None, metavar="FILE", help="a small text whose training the page replays")
    p.add_argument("--replay-merges", type=whole_number(1, MAX_REPLAY_MERGES), default=50, metavar="N",
                   help=f"merges in the replay (1 to {MAX_REPLAY_MERGES}, default 50)")
    p.add_argument("--example", action="append", default=None, metavar="TEXT",
                   help="a text the page offers (repeatable; default: a few in several scripts)")
    p.add_argument("--quiet", "-q", action="store_true", help="say nothing on success")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_output_path(args.output)
    tok = open_tokenizer(args)
    small = read_input(args.train_on) if args.train_on is not None else None
    write_explorer(tok, args.output, train_on=small, replay_merges=args.replay_merges,
                   examples=args.example or EXAMPLES)
    if not args.quiet:
        sys.stderr.write(f"wrote {args.output}: open it in a browser (it needs no network)\n")
    return 0
