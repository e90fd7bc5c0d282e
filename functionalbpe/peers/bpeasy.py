"""bpeasy: the bench's training hook (byte-level BPE with a regex, trained in Rust)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..text.patterns import PATTERNS
from .base import Peer

# bpeasy caps the bytes of one token (the other trainers have no cap); this is its argument.
MAX_TOKEN_LENGTH = 128


def bench_train(docs: Sequence[str], vocab_size: int, threads: int, pattern: str) -> Callable[[], Any]:
    def run() -> Any:
        import bpeasy

        ranks = bpeasy.train_bpe(iter(docs), PATTERNS[pattern], MAX_TOKEN_LENGTH, vocab_size)
        return len(ranks)

    return run


PEER = Peer(name="bpeasy", module="bpeasy", train=bench_train)
