"""``functionalbpe train FILE... --vocab-size N``: train a tokenizer on files and save it;
``functionalbpe train --counts a.counts b.counts ... --vocab-size N``: on piece counts written
by ``functionalbpe count`` (docs/counts.md), which gives the tokenizer of their text.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ..counts import PieceCounts
from ..errors import FunctionalBPEError
from ..fileformat import check_output_path
from ..training import BACKENDS, train
from .common import COUNT, VOCAB_SIZE, add_corpus_args, add_scheme_args, corpus_files, scheme_options


def add_parser(sub: Any) -> None:
    p = sub.add_parser("train", help="train a tokenizer on files", description="Train a tokenizer on files.")
    p.add_argument("inputs", nargs="*", metavar="FILE", help="files, directories or glob patterns")
    p.add_argument("--counts", nargs="+", default=None, metavar="COUNTS",
                   help="train on piece counts written by `count` (merged) instead of files")
    p.add_argument("--vocab-size", type=VOCAB_SIZE, required=True, help="bytes + atoms + merges + special tokens")
    add_scheme_args(p)
    p.add_argument("--min-frequency", type=COUNT, default=1, help="stop when the best pair occurs fewer times")
    p.add_argument("--merge-policy", default="prefix", choices=["atomic", "prefix", "free"],
                   help="which merges a scheme's operators (case and accent instructions) may take part "
                   "in: atomic never merges them, prefix only with other operators, free with text too "
                   "(default: prefix; docs/training.md)")
    p.add_argument("--backend", default="auto", choices=BACKENDS,
                   help="the trainer: compiled (fast), pure Python, or the fast one when built; all give "
                   "the same merges (default: auto)")
    add_corpus_args(p)
    p.add_argument("--out", "-o", default="tokenizer.json", help="where to write the tokenizer (default: tokenizer.json)")
    p.add_argument("--trace", default=None, metavar="FILE.tsv",
                   help="write one line per merge: the pair, the tokens, its count and the runner-up")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_output_path(args.out)  # before hours of training, not after
    if bool(args.inputs) == bool(args.counts):
        raise FunctionalBPEError("give either FILEs to train on or --counts COUNTS..., not both or neither")
    if args.trace is not None:
        check_output_path(args.trace)
    start = time.perf_counter()
    if args.counts:
        # One table held at a time besides the sum: memory is the result's.
        corpus: Any = PieceCounts.merge(PieceCounts.load(path) for path in args.counts)
        source = f"{len(args.counts)} counts files"
    else:
        corpus = corpus_files(args)
        source = f"{len(corpus)} files"
    tok = train(
        corpus,
        vocab_size=args.vocab_size,
        scheme=args.scheme,
        pattern=args.pattern,
        special_tokens=args.special,
        min_frequency=args.min_frequency,
        merge_policy=args.merge_policy,
        backend=args.backend,
        progress=False if args.quiet else True,
        threads=args.threads,
        trace=args.trace,
        **scheme_options(args),
    )
    tok.save(args.out)
    if not args.quiet:
        sys.stderr.write(
            f"wrote {args.out}: {tok.vocab_size} ids ({len(tok.merges)} merges) from {source} "
            f"in {time.perf_counter() - start:.1f}s\n"
        )
    return 0
