"""``functionalbpe demo``: train on this Python's standard library and show the result."""
from __future__ import annotations

import argparse
import time
from typing import Any

from ..util.display import show_token
from ..text.corpus import files
from ..training import train
from .common import VOCAB_SIZE, positive_number
from .stdlib import stdlib_sources

SAMPLES = [
    "def __init__(self, name):",
    "        return self._cache[key]",
    "Hello, world! 1234567",
    "naïve café — ünïcode",
]


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="train on Python's standard library and show the result",
        description="Train a tokenizer on the source files of this Python's standard library (no download) "
        "and show how it splits a few strings.",
    )
    p.add_argument("--vocab-size", type=VOCAB_SIZE, default=4096, help="bytes + merges to train (default: 4096)")
    p.add_argument("--max-mb", type=positive_number, default=None, help="read at most this many MB of source (default: all)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    max_bytes = int(args.max_mb * 1e6) if args.max_mb else None
    paths = stdlib_sources(max_bytes)
    # Every 20th file is held out, so bytes per token is measured on text not trained on.
    held_out = paths[::20]
    training = [p for i, p in enumerate(paths) if i % 20]
    corpus = files(*training, errors="replace")
    size = corpus.total_bytes()
    say = print
    say(f"Training on {len(training)} files of the Python standard library ({size / 1e6:.1f} MB), "
        f"vocabulary {args.vocab_size} ...", flush=True)
    start = time.perf_counter()
    tok = train(corpus, vocab_size=args.vocab_size, progress=False if args.quiet else True)
    elapsed = time.perf_counter() - start
    say(f"Trained {tok.vocab_size} tokens ({len(tok.merges)} merges) in {elapsed:.1f}s "
        f"({size / 1e6 / elapsed:.1f} MB/s).\n")
    for sample in SAMPLES:
        ids = tok.encode(sample)
        parts = [show_token(tok.decode_bytes([i])) for i in ids]
        say(f"  {sample!r}\n    {len(ids)} tokens: {' | '.join(parts)}")
    held_text = list(files(*held_out, errors="replace"))
    n_bytes = sum(len(t.encode("utf-8")) for t in held_text)
    n_tokens = sum(len(ids) for ids in tok.encode_batch(held_text))
    say(f"\nVocabulary size: {tok.vocab_size}")
    say(f"Time: {elapsed:.1f}s")
    say(f"Bytes per token on {len(held_out)} held-out files ({n_bytes / 1e6:.1f} MB): {n_bytes / max(n_tokens, 1):.2f}")
    return 0
