"""The ``functionalbpe`` command: a thin layer over the Python API, one module per subcommand.

    functionalbpe train FILE... --vocab-size N [--scheme S] [--pattern P] [--out tok.json]
    functionalbpe count FILE... -o part.counts [--scheme S] [--dask ADDRESS]   piece counts
    functionalbpe train --counts a.counts b.counts ... --vocab-size N          train on them
    functionalbpe counts-info part.counts                what a counts file holds
    functionalbpe encode --tokenizer tok.json [FILE]     ids, one document per line
    functionalbpe decode --tokenizer tok.json [FILE]
    functionalbpe pieces --tokenizer tok.json [FILE]     what BPE sees, piece by piece
    functionalbpe explain -t tok.json "text"             how a text is encoded, merge by merge
    functionalbpe vocab -t tok.json                      the vocabulary, [a][b] -> [ab]
    functionalbpe explore -t tok.json -o explorer.html   a page that tokenizes as you type
    functionalbpe report -t tok.json [NAME=]FILE...       measure tokenizers on named corpora
    functionalbpe bench                                  side by side with the installed peers
    functionalbpe demo                                   trains on Python's standard library

Every error caused by input is one line on stderr and a non-zero exit status (2), options
included; an interrupted command exits 130 (:mod:`functionalbpe.cli.common`). Output paths
are checked before the work starts, and output files are written whole or not at all.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from .._version import __version__
from . import bench, count, counts_info, decode, demo, encode, explain, explore, pieces, report, train, vocab
from .common import EXIT_ERROR, Parser, run

# In the order `functionalbpe --help` lists them. Each module has add_parser(sub), which
# sets ``run`` to its command.
COMMANDS = (train, count, counts_info, encode, decode, pieces, explain, vocab, explore, bench, demo, report)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_ERROR
    return run(args.run, args)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="functionalbpe", description="Train and apply byte-level BPE tokenizers.")
    parser.add_argument("--version", action="version", version=f"functionalbpe {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
