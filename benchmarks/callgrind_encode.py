"""One encode_ordinary call of a production vocabulary on fresh text, for callgrind.

    valgrind --tool=callgrind --instr-atstart=no \\
        python benchmarks/callgrind_encode.py VOCAB ROW [THREADS]

VOCAB is cl100k_base or o200k_base (the rank file from bpe-openai's wheel, as
``bench_encode_peers.py`` finds it), ROW one of its rows (``en``, ``js``, ``ru``, ``ar``,
``zh-CN``, ``"22 languages"``...), THREADS the call's threads (default 1). The process encodes
the corpus's first quarter first, then turns callgrind's counting on (``callgrind_control -i
on``) for one call on 500 KB it has never seen, and off again: the count is the cost of text
the encoder has not seen, Python's part of the call included, and does not move with the load
of a shared machine. With two threads callgrind runs them one at a time, so the count is the
work of both.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_encode_peers as peers  # noqa: E402
import functionalbpe as fb  # noqa: E402

CORPORA = os.environ.get("FUNCTIONALBPE_CORPORA", str(ROOT.parent / "shared" / "corpora"))
FRESH_BYTES = 500_000


def main(argv: list) -> None:
    vocab, row = argv[0], argv[1]
    threads = int(argv[2]) if len(argv) > 2 else 1
    with tempfile.TemporaryDirectory() as workdir:
        ranks = peers.rank_file(vocab, None, workdir)
        if ranks is None:
            raise SystemExit(f"no rank file for {vocab}: pip install bpe-openai")
        tok = fb.Tokenizer.from_tiktoken(ranks, pattern=peers.VOCABS[vocab])
    warm, fresh = peers.warm_and_fresh(CORPORA, row, FRESH_BYTES)
    tok.encode_ordinary(warm, threads=threads)
    pid = str(os.getpid())
    subprocess.run(["callgrind_control", "-i", "on", pid], capture_output=True)
    ids = tok.encode_ordinary(fresh, threads=threads)
    subprocess.run(["callgrind_control", "-i", "off", pid], capture_output=True)
    print(f"{vocab}, {row}, {threads} thread(s): {len(ids)} ids")


if __name__ == "__main__":
    main(sys.argv[1:])
