"""``functionalbpe train FILE... --vocab-size N``: train a tokenizer on files and save it.

Example::

    >>> parse_options(["case=false", "normalize=NFC", "repeat=3"])
    {'case': False, 'normalize': 'NFC', 'repeat': 3}
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Dict, List

from ..core._native import MAX_THREADS
from ..errors import FunctionalBPEError
from ..fileformat import check_output_path
from ..schemes.base import NORMAL_FORMS
from ..schemes.registry import SCHEMES
from ..text.corpus import files
from ..text.patterns import PATTERNS
from ..training import BACKENDS, train
from .common import COUNT, LIMIT, THREADS, VOCAB_SIZE


def add_parser(sub: Any) -> None:
    p = sub.add_parser("train", help="train a tokenizer on files", description="Train a tokenizer on files.")
    p.add_argument("inputs", nargs="+", metavar="FILE", help="files, directories or glob patterns")
    p.add_argument("--vocab-size", type=VOCAB_SIZE, required=True, help="bytes + atoms + merges + special tokens")
    p.add_argument("--scheme", default="plain", choices=sorted(SCHEMES))
    p.add_argument("--pattern", default=None, help=f"one of {', '.join(PATTERNS)} or a regex (default: the scheme's)")
    p.add_argument("--normalize", default=None, choices=NORMAL_FORMS,
                   help="Unicode normalization before the pattern, for every scheme (NFC: as the "
                        "Functionalizer paper); decoding then gives the normalized text (default: none, lossless)")
    p.add_argument("--special", action="append", default=[], metavar="TOKEN", help="a special token (repeatable)")
    p.add_argument("--min-frequency", type=COUNT, default=1, help="stop when the best pair occurs fewer times")
    p.add_argument("--merge-policy", default="prefix", choices=["atomic", "prefix", "free"])
    p.add_argument("--backend", default="auto", choices=BACKENDS)
    p.add_argument("--threads", type=THREADS, default=None,
                   help=f"worker threads for counting, 1 to {MAX_THREADS} (default: all cores)")
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a scheme option, e.g. --option case=false --option normalize=NFC (repeatable)",
    )
    p.add_argument("--encoding-errors", default="strict", choices=["strict", "replace"], help="invalid UTF-8 in input")
    p.add_argument("--field", default="text", help="the field holding the text in .jsonl files (default: text)")
    p.add_argument("--max-chars", type=LIMIT, default=None, metavar="N", help="read at most N characters in all")
    p.add_argument("--max-doc-chars", type=LIMIT, default=None, metavar="N", help="keep the first N characters of a longer document")
    p.add_argument("--out", "-o", default="tokenizer.json", help="where to write the tokenizer (default: tokenizer.json)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run)


def parse_options(items: List[str]) -> Dict[str, Any]:
    """``["case=false", "normalize=NFC"]`` → ``{"case": False, "normalize": "NFC"}``."""
    out: Dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise FunctionalBPEError(f"--option {item!r}: write KEY=VALUE, e.g. --option case=false")
        low = value.lower()
        if low in ("true", "yes", "on"):
            out[key] = True
        elif low in ("false", "no", "off"):
            out[key] = False
        elif low in ("none", "null"):
            out[key] = None
        else:
            try:
                out[key] = int(value)
            except ValueError:
                out[key] = value
    return out


def run(args: argparse.Namespace) -> int:
    check_output_path(args.out)  # before hours of training, not after
    corpus = files(
        *args.inputs,
        errors=args.encoding_errors,
        field=args.field,
        max_chars=args.max_chars,
        max_doc_chars=args.max_doc_chars,
    )
    options = parse_options(args.option)
    if args.normalize is not None:
        if options.get("normalize", args.normalize) != args.normalize:
            raise FunctionalBPEError(f"--normalize {args.normalize} and --option normalize={options['normalize']} disagree; give one")
        options["normalize"] = args.normalize
    start = time.perf_counter()
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
        **options,
    )
    tok.save(args.out)
    if not args.quiet:
        sys.stderr.write(
            f"wrote {args.out}: {tok.vocab_size} ids ({len(tok.merges)} merges) from {len(corpus)} files "
            f"in {time.perf_counter() - start:.1f}s\n"
        )
    return 0
