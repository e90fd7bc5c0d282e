"""Superwords against plain BPE: training time, and encoding against HF tokenizers.

    python benchmarks/bench_superwords.py [--corpus FILE...] [--vocab-size 32768] [--t 24576] [-n 3]

Training: ``fb.train(files, vocab_size)`` against ``fb.train(files, vocab_size, superwords=t)``
on the same files, as the median of back-to-back pairs (``../shared/tools/paired.py``; without
it, one run each). Encoding: the superword tokenizer against HF ``tokenizers`` loading its own
``to_hf`` export (the same ids, checked first), one text at a time over the documents.
Measure with nothing else running: the script refuses a busy machine unless ``--force``.
"""
from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, List, Optional

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, str(ROOT))

import functionalbpe as fb  # noqa: E402

CORPORA = Path(os.environ.get("FUNCTIONALBPE_CORPORA", ROOT.parent / "shared" / "corpora"))
TOOLS = ROOT.parent / "shared" / "tools"


def timed_pair(ours: Callable[[], Any], peer: Callable[[], Any], n: int, force: bool) -> str:
    """peer time / our time as paired.py gives it, or one run each without it."""
    if (TOOLS / "paired.py").is_file():
        sys.path.insert(0, str(TOOLS))
        from paired import busy, paired  # noqa: E402

        if busy() and not force:
            raise SystemExit("the machine is busy (load >= 1): stop other jobs, or pass --force")
        return str(paired(ours, peer, n=n))
    start = time.perf_counter()
    ours()
    middle = time.perf_counter()
    peer()
    end = time.perf_counter()
    return f"peer/ours {(end - middle) / (middle - start):.2f}x (one run each: no paired.py here)"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", nargs="+", default=sorted(glob.glob(str(CORPORA / "nl" / "*.txt"))))
    parser.add_argument("--vocab-size", type=int, default=32768)
    parser.add_argument("--t", type=int, default=24576)
    parser.add_argument("-n", type=int, default=3, help="pairs")
    parser.add_argument("--encode-mb", type=float, default=5.0, help="MB of the documents encoded (default 5)")
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args(argv)
    print(f"functionalbpe {fb.__version__}: {fb.core._native.NATIVE.describe()}", file=sys.stderr)
    if not args.corpus:
        raise SystemExit("no corpus: give --corpus FILE... (or set FUNCTIONALBPE_CORPORA)")
    files = fb.files(*args.corpus)
    size = sum(os.path.getsize(p) for p in args.corpus)
    print(f"{len(args.corpus)} files, {size / 1e6:.1f} MB, {args.vocab_size} ids, t = {args.t}")

    def plain() -> Any:
        return fb.train(files, vocab_size=args.vocab_size, progress=False)

    def superwords() -> Any:
        return fb.train(files, vocab_size=args.vocab_size, superwords=args.t, progress=False)

    print("training, plain time / superword time:", timed_pair(superwords, plain, args.n, args.force))

    tokenizers = __import__("tokenizers")
    tok = superwords()
    docs, held = [], 0
    for d in fb.files(*args.corpus):  # the first --encode-mb of the documents
        docs.append(d)
        held += len(d.encode("utf-8"))
        if held > args.encode_mb * 1e6:
            break
    with tempfile.TemporaryDirectory() as out:
        tok.to_hf(os.path.join(out, "tokenizer.json"))
        hf = tokenizers.Tokenizer.from_file(os.path.join(out, "tokenizer.json"))
    assert all(hf.encode(d, add_special_tokens=False).ids == tok.encode(d) for d in docs[:200]), "ids differ"

    def ours() -> Any:
        return [tok.encode(d) for d in docs]

    def theirs() -> Any:
        return [hf.encode(d, add_special_tokens=False).ids for d in docs]

    print("encoding one text at a time, HF time / ours:", timed_pair(ours, theirs, max(args.n, 3), args.force))
    return 0


if __name__ == "__main__":
    sys.exit(main())
