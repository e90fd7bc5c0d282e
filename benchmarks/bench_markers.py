"""What the boundary-marker scheme costs beside the plain scheme: training and encoding.

    python benchmarks/bench_markers.py                      # the standard library, 32768, [w]
    python benchmarks/bench_markers.py --options punct,digits,case --repeat 5 FILE...
    python benchmarks/bench_markers.py --python             # and the Python pieces' count

One process, the documents in memory; the two schemes alternate (plain, markers, plain, ...)
and the best of ``--repeat`` runs of each is kept. Training is the whole
``fb.train(docs, vocab_size, scheme=...)``; counting is its first stage alone
(``functionalbpe.text.counting.count_table``); encoding is ``tok.encode(doc)`` over every document on one thread, with
the tokenizers just trained. The plain scheme uses its default pattern (gpt4). With
``--python`` the markers' pieces are also counted once with the Python reference
(``BoundaryMarkers.python_pieces`` and a Counter): what the FUNCTIONALBPE_PUREPYTHON=1
path costs.
"""
from __future__ import annotations

import argparse
import os
import importlib.util
import sys
import time
from collections import Counter
from typing import Callable, Dict, List, Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, ROOT)

import functionalbpe as fb  # noqa: E402
from functionalbpe.measure import bench  # noqa: E402
from functionalbpe.core._native import NATIVE  # noqa: E402
from functionalbpe.cli.stdlib import stdlib_sources  # noqa: E402
from functionalbpe.text.corpus import files  # noqa: E402
from functionalbpe.schemes.registry import make_scheme  # noqa: E402
from functionalbpe.text.counting import count_table  # noqa: E402

OPTIONS = ("punct", "digits", "case")


def best_of(repeat: int, runs: Dict[str, Callable[[], object]]) -> Dict[str, float]:
    """The best wall time of each run, the runs alternating."""
    best = {name: float("inf") for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def report(title: str, best: Dict[str, float], n_bytes: int) -> None:
    plain, markers = best["plain"], best["markers"]
    print(f"{title:<10} plain {plain:7.3f} s ({n_bytes / plain / 1e6:6.1f} MB/s)   "
          f"markers {markers:7.3f} s ({n_bytes / markers / 1e6:6.1f} MB/s)   markers / plain {markers / plain:5.2f}x")


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="*", help="text files (default: the standard library's .py files)")
    parser.add_argument("--vocab-size", type=int, default=32768)
    parser.add_argument("--options", default="", help=f"markers options, comma-separated: {', '.join(OPTIONS)}")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--python", action="store_true", help="also count with the Python reference pieces (slow)")
    args = parser.parse_args(argv or None)
    print(f"functionalbpe {fb.__version__}: {fb.core._native.NATIVE.describe()}", file=sys.stderr)
    chosen = [o for o in args.options.split(",") if o]
    if any(o not in OPTIONS for o in chosen):
        parser.error(f"--options takes {', '.join(OPTIONS)}")
    options = {o: o in chosen for o in OPTIONS}

    docs: List[str] = list(files(*(args.inputs or stdlib_sources()), errors="replace"))
    n_bytes = sum(len(d.encode("utf-8")) for d in docs)
    scheme = make_scheme("markers", **options)
    print(f"corpus: {len(docs)} documents, {n_bytes / 1e6:.1f} MB "
          f"({'the standard library' if not args.inputs else ', '.join(args.inputs)})")
    print(f"markers {scheme.variant}, vocabulary {args.vocab_size}, best of {args.repeat}; "
          f"machine: {bench.machine_info()['cpu']}, {bench.machine_info()['cores']} cores")
    if NATIVE.scanner is None:
        print("warning: the compiled extension is not built; markers run on the Python reference")

    def train(name: str) -> Callable[[], object]:
        return lambda: fb.train(docs, vocab_size=args.vocab_size, scheme=name, progress=False,
                                **(options if name == "markers" else {}))

    # One run first, untimed: the class tables are measured once per process (about half a
    # second for the markers), which a best-of-n figure should not hold.
    tokenizers = {name: train(name)() for name in ("plain", "markers")}
    report("training", best_of(args.repeat, {name: train(name) for name in tokenizers}), n_bytes)
    schemes = {name: tok.scheme for name, tok in tokenizers.items()}
    report("counting", best_of(args.repeat, {n: (lambda s=s: count_table(docs, s)) for n, s in schemes.items()}), n_bytes)

    def encode(tok) -> Callable[[], object]:
        return lambda: [tok.encode(d, disallowed_special=()) for d in docs]

    report("encoding", best_of(args.repeat, {name: encode(tok) for name, tok in tokenizers.items()}), n_bytes)
    tokens = {name: sum(map(len, encode(tok)())) for name, tok in tokenizers.items()}
    print(f"tokens: plain {tokens['plain']:,}, markers {tokens['markers']:,}")

    if args.python:
        start = time.perf_counter()
        counts: Counter = Counter()
        for doc in docs:
            counts.update(scheme.python_pieces(doc))
        seconds = time.perf_counter() - start
        same = dict(counts) == count_table(docs, scheme).to_dict()
        print(f"python    markers pieces counted by the reference: {seconds:.3f} s "
              f"({n_bytes / seconds / 1e6:.1f} MB/s); same counts as the compiled path: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
