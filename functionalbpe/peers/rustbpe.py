"""rustbpe: the bench's hooks. (Its tests compare its merges with ours: tests/core/test_reference.py.)

rustbpe trains byte-level BPE with a regex pre-tokenizer and the same tie rule as ours, so on
the plain scheme its ranks equal our merges; the bench's encoding row says whether they did.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Sequence

from ..text.patterns import PATTERNS
from .base import EncoderParts, Peer


def bench_train(docs: Sequence[str], vocab_size: int, threads: int, pattern: str) -> Callable[[], Any]:
    def run() -> Any:
        os.environ["RAYON_NUM_THREADS"] = str(threads)
        import rustbpe

        tok = rustbpe.Tokenizer()
        tok.train_from_iterator(iter(docs), vocab_size=vocab_size, pattern=PATTERNS[pattern])
        return tok.vocab_size

    return run


def bench_encoder(docs: Sequence[str], tok: Any, vocab_size: int, threads: int, workdir: str) -> EncoderParts:
    """Its own training on the same text (it cannot load ranks), compared with ours."""
    import rustbpe

    rb = rustbpe.Tokenizer()
    rb.train_from_iterator(iter(docs), vocab_size=vocab_size, pattern=tok.pattern)
    same = all(rb_bytes == tok.token_bytes(i) for rb_bytes, i in rb.get_mergeable_ranks())
    return (
        lambda text: len(rb.encode(text)),
        lambda texts, k: sum(map(len, rb.batch_encode(texts))),
        "its own training on the same text" + (" (same ranks as ours)" if same else " (ranks differ!)"),
    )


PEER = Peer(name="rustbpe", module="rustbpe", train=bench_train, encoder=bench_encoder)
