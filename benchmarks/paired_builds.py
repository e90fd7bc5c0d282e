"""One encode_ordinary call of two builds of functionalbpe, paired, on text fresh to both.

    python benchmarks/paired_builds.py OTHER_TREE VOCAB ROW [N] [THREADS] [MB]

OTHER_TREE is another checkout built in place (``python setup.py build_ext --inplace``); this
checkout is "ours", and its bench_encode_peers.py cuts the text for both. Each build runs
in a process of its own that loads VOCAB's rank file (as ``bench_encode_peers.py`` finds it),
encodes the first quarter of ROW's corpus (the warm-up), and cuts the rest into N + 1 chunks; ``paired`` (../shared/tools/paired.py) then times one
call per chunk in each process, back to back, alternating which goes first: the same chunk
for both, never seen before by either, the round trip through a pipe included (well under
a millisecond). Printed: other ÷ ours, the median of N pairs (above 1, ours is faster).
THREADS: the call's threads (default: all cores). With 1, both processes run on the same
CPU: a pair then meets the same core, whichever the load of the others (short calls on two
threads move by 15% between runs of one build against itself). MB: the fresh text, at most
this many megabytes as bench_encode_peers.py takes it (default: all the rest; the 22
languages then come as chunks of about one language each, with 2 a little of each).

The two processes are not alike: one build against a copy of itself (the same sources built
in two folders) read 0.94-0.95 from this checkout's side, on one thread, English and Chinese.
So a difference of a few percent means little from one side: run it from each checkout
against the other, and trust what both sides agree on.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT.parent / "shared" / "tools"))

from paired import paired  # noqa: E402

CORPORA = os.environ.get("FUNCTIONALBPE_CORPORA", str(ROOT.parent / "shared" / "corpora"))
CHILD = r"""
import sys, tempfile
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[8])  # the build; this checkout's benchmarks
import bench_encode_peers as peers
vocab, row, corpora, n = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
threads, max_bytes = int(sys.argv[6]) or None, int(sys.argv[7])
if threads == 1:
    peers.pin_to_one_cpu()
import functionalbpe as fb
tok = fb.Tokenizer.from_tiktoken(peers.rank_file(vocab, None, tempfile.mkdtemp()), pattern=peers.VOCABS[vocab])
warm, fresh = peers.warm_and_fresh(corpora, row, max_bytes)
tok.encode_ordinary(warm, threads=threads)
size = len(fresh) // n
chunks = [fresh[k * size:(k + 1) * size] for k in range(n)]
print("ready", flush=True)
for line in sys.stdin:
    tok.encode_ordinary(chunks[int(line)], threads=threads)
    print("ok", flush=True)
"""


def encoder(tree: str, vocab: str, row: str, chunks: int, threads: int, max_bytes: int):
    """A callable that has the build in `tree` encode its next chunk, and the process."""
    proc = subprocess.Popen([sys.executable, "-c", CHILD, tree, vocab, row, CORPORA, str(chunks), str(threads),
                             str(max_bytes), str(ROOT / "benchmarks")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit(f"{tree}: the encoder did not start")
    taken = [0]

    def call() -> None:
        proc.stdin.write(f"{taken[0]}\n")
        proc.stdin.flush()
        taken[0] += 1
        if proc.stdout.readline().strip() != "ok":
            raise SystemExit(f"{tree}: the encoder stopped")

    return call, proc


def main(argv: list) -> None:
    other_tree, vocab, row = argv[0], argv[1], argv[2]
    n = int(argv[3]) if len(argv) > 3 else 9
    threads = int(argv[4]) if len(argv) > 4 else 0  # 0: all cores
    max_bytes = int(float(argv[5]) * 1e6) if len(argv) > 5 else 10**9
    ours, ours_proc = encoder(str(ROOT), vocab, row, n + 1, threads, max_bytes)
    other, other_proc = encoder(other_tree, vocab, row, n + 1, threads, max_bytes)
    try:
        print(vocab, row, paired(ours, other, n=n))
    finally:
        ours_proc.kill()
        other_proc.kill()


if __name__ == "__main__":
    main(sys.argv[1:])
