"""``functionalbpe count FILE... -o part.counts``: count the pieces of files, for training later.

The counts file (docs/counts.md) holds the scheme's raw pieces with their counts and how they
were counted; ``functionalbpe train --counts a.counts b.counts ...`` merges such files and
trains on them, giving the tokenizer training on all their text gives. With ``--dask
ADDRESS`` the files are counted on a Dask cluster, one task per file (docs/scale.md).
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from ..counts import count
from .common import add_corpus_args, add_scheme_args, check_output, corpus_files, input_paths, scheme_options

HELP = "count the pieces of files into a counts file, to train on later"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("count", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    p.add_argument("inputs", nargs="+", metavar="FILE", help="files, directories or glob patterns")
    add_scheme_args(p)
    add_corpus_args(p)
    p.add_argument("--dask", default=None, metavar="SCHEDULER",
                   help="count on the Dask cluster at this address (tcp://host:8786), one task per file")
    p.add_argument("--out", "-o", required=True, help="where to write the counts")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_output(args.out, input_paths(args.inputs))  # before the counting, not after
    options = scheme_options(args)
    start = time.perf_counter()
    if args.dask:
        from ..pipeline import cluster as on_dask  # the one home of dask: imported only when asked for

        counts = on_dask.count(list(args.inputs), scheme=args.scheme, pattern=args.pattern,
                               special_tokens=args.special, client=args.dask, field=args.field or "text",
                               errors=args.encoding_errors, **options)
    else:
        counts = count(corpus_files(args), scheme=args.scheme, pattern=args.pattern, special_tokens=args.special,
                       threads=args.threads, progress=False if args.quiet else True, **options)
    counts.save(args.out)
    if not args.quiet:
        sys.stderr.write(f"wrote {args.out}: {len(counts):,} distinct pieces, {counts.total:,} in all, "
                         f"in {time.perf_counter() - start:.1f}s\n")
    return 0
