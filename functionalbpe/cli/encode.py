"""``functionalbpe encode -t tok.json [FILE]``: text to ids, one line of ids per document."""
from __future__ import annotations

import argparse
from typing import Any

from .common import add_text_io, tokenizer_and_documents, write_output

HELP = "text to token ids: one line of ids per document"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("encode", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    add_text_io(p)
    p.add_argument("--allow-special", action="store_true", help="read special-token text as special tokens")
    p.add_argument("--encoding-errors", default="strict", choices=["strict", "replace"])
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    tok, docs = tokenizer_and_documents(args)
    allowed = "all" if args.allow_special else frozenset()
    out = [" ".join(map(str, tok.encode(d, allowed_special=allowed))) for d in docs]
    write_output(args.output, "".join(line + "\n" for line in out))
    return 0
