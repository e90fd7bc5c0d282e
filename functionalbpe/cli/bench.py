"""``functionalbpe bench``: training and encoding side by side with the installed peers
(:mod:`functionalbpe.measure.bench` does the measuring; this is its command line)."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, List, Optional, Tuple

from ..errors import FunctionalBPEError
from ..util.output import atomic_write_text
from ..text.corpus import files
from .common import COUNT, THREADS, VOCAB_SIZE, check_output, positive_number
from .stdlib import stdlib_sources


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "bench",
        help="train and encode side by side with the installed peers",
        description="Train and encode with functionalbpe and every installed peer (rustbpe, HF tokenizers, "
        "SentencePiece, bpeasy, tiktoken) on the same text in one run, and print the ratios.",
    )
    p.add_argument(
        "--corpus", nargs="+", action="append", metavar="FILE", default=None,
        help="the files of one corpus; give --corpus again for another corpus, each measured and "
        "reported on its own (default: the Python standard library)",
    )
    p.add_argument("--max-mb", type=positive_number, default=None, help="use at most this many MB of each corpus")
    p.add_argument("--vocab-size", type=VOCAB_SIZE, default=32768, help="the vocabulary every library trains to (default: 32768)")
    p.add_argument("--threads", type=THREADS, default=None, help="threads for every library (default: all cores)")
    p.add_argument("--repeats", type=COUNT, default=3, help="alternating runs per library; the best is kept")
    p.add_argument("--libraries", default=None, help="comma-separated subset, e.g. functionalbpe,rustbpe")
    p.add_argument("--no-training", action="store_true", help="skip the training table")
    p.add_argument("--no-pathological", action="store_true", help="skip the pathological-input table")
    p.add_argument("--json", default=None, metavar="OUT", help="also write the results as JSON")
    p.add_argument("--markdown", default=None, metavar="OUT", help="also write the tables as Markdown")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..measure import bench

    check_output(args.json)
    check_output(args.markdown)
    libraries = [x.strip() for x in args.libraries.split(",")] if args.libraries else None
    known = bench.libraries()
    unknown = set(libraries or ()) - set(known)
    if unknown:
        raise FunctionalBPEError(f"--libraries: unknown {sorted(unknown)}; choose from {', '.join(known)}")
    corpora = args.corpus or [None]
    reports = []
    for k, paths in enumerate(corpora):
        name, docs = _read_corpus(paths, args.max_mb)
        config = bench.BenchConfig(
            docs=docs,
            corpus_name=name,
            vocab_size=args.vocab_size,
            threads=args.threads or os.cpu_count() or 1,
            repeats=args.repeats,
            libraries=libraries,
            skip_training=args.no_training,
            # The inputs are the same whatever the corpus: measured once, with the first.
            skip_pathological=args.no_pathological or k > 0,
        )
        reports.append(bench.run_bench(config, quiet=args.quiet))
        # Each corpus as soon as it is measured: a long run shows its results as it goes.
        show = bench.format_markdown if len(corpora) == 1 else bench.format_markdown_of_corpus
        sys.stdout.write(show(reports[-1]) + ("\n" if k + 1 < len(corpora) else ""))
        sys.stdout.flush()
    text = bench.format_markdown_all(reports)
    if args.json:
        bench.write_json(reports, args.json)
    if args.markdown:
        atomic_write_text(args.markdown, text)
    return 0


def _read_corpus(paths: Optional[List[str]], max_mb: Optional[float]) -> Tuple[str, List[str]]:
    """The name and the documents of one corpus (None: the standard library), at most
    ``max_mb`` MB of it."""
    limit = int(max_mb * 1e6) if max_mb else None
    # A character is at least a byte: reading stops after `limit` characters at the latest.
    if paths:
        corpus = files(*paths, max_chars=limit)
        name = ", ".join(paths)
    else:
        corpus = files(*stdlib_sources(), errors="replace", max_chars=limit)
        name = f"Python {sys.version_info.major}.{sys.version_info.minor} standard library (*.py)"
    docs: List[str] = []
    total = 0
    for doc in corpus:
        size = len(doc.encode("utf-8", "surrogatepass"))
        if limit is not None and total + size > limit:
            # The last document cut to what is left, at a line end where it has one (a corpus
            # of one large file is capped too).
            room = doc.encode("utf-8", "surrogatepass")[: limit - total].decode("utf-8", "ignore")
            line_end = room.rfind("\n")
            room = room[: line_end + 1] if line_end > 0 else room
            if room:
                docs.append(room)
            break
        docs.append(doc)
        total += size
    return name, docs
