"""``functionalbpe encode -t tok.json [FILE]``: text to ids, one line of ids per document."""
from __future__ import annotations

import argparse
from typing import Any

from ..errors import SpecialTokenError
from .common import add_text_io, tokenizer_and_documents, write_output

HELP = "text to token ids: one line of ids per document"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("encode", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    add_text_io(p)
    p.add_argument("--allow-special", action="store_true", help="read special-token text as special tokens")
    p.add_argument("--encoding-errors", default="strict", choices=["strict", "replace"],
                   help="invalid UTF-8 in the input: an error, or read as U+FFFD (default: strict)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    tok, docs = tokenizer_and_documents(args)
    allowed = "all" if args.allow_special else frozenset()
    out = []
    for number, doc in enumerate(docs, 1):
        try:
            ids = tok.encode(doc, allowed_special=allowed)
        except SpecialTokenError as exc:
            if exc.token is None:
                raise
            # The API's message names allowed_special=; here the user types a flag.
            raise SpecialTokenError(
                f"document {number} contains the special token {exc.token!r} at offset {exc.offset}; "
                "pass --allow-special to encode special-token text as special tokens"
            ) from None
        out.append(" ".join(map(str, ids)))
    write_output(args.output, "".join(line + "\n" for line in out))
    return 0
