"""Training side by side: functionalbpe, rustbpe and HF tokenizers on the same text.

    python benchmarks/bench_train.py                       # the standard library, 32768
    python benchmarks/bench_train.py --vocab-size 8192 --repeat 5 FILE...

Every library trains on the same documents, already in memory, with the GPT-4 pattern and
the same vocabulary size. Each run happens in a child forked from this process (so one
library's threads and memory cannot touch the next, and each child's peak memory can be
read); the libraries alternate, A B C A B C ..., and the best time of each is kept.

Printed: the wall time and peak memory (above the documents already loaded) of each whole
training, our time as a fraction of each peer's (the targets: at most 0.3x rustbpe,
0.15x HF tokenizers, and no more memory than rustbpe); then our own stages: counting, and
the merge stage alone (counted pieces in, merge table out), itself split into loading the
pieces into C arrays plus counting pairs, and the merge loop. Finally whether our merge
table equals rustbpe's, token for token.
"""
from __future__ import annotations

import argparse
import os
import importlib.util
import sys
import time
from typing import Any, Callable, Dict, List, Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, ROOT)

import functionalbpe as fb  # noqa: E402
from functionalbpe.measure import bench  # noqa: E402
from functionalbpe.core import trainer  # noqa: E402
from functionalbpe.core._native import NATIVE  # noqa: E402
from functionalbpe.core.alphabet import Alphabet  # noqa: E402
from functionalbpe.cli.stdlib import stdlib_sources  # noqa: E402
from functionalbpe.text.corpus import files  # noqa: E402
from functionalbpe.text.patterns import PATTERNS  # noqa: E402
from functionalbpe.schemes.plain import PlainScheme  # noqa: E402
from functionalbpe.text.counting import count_table  # noqa: E402

PEERS = ("rustbpe", "tokenizers")


def our_stages(docs: Sequence[str], vocab_size: int, threads: int) -> Callable[[], Dict[str, float]]:
    """Our training in its stages, each timed: what the whole-training figure is made of."""

    def run() -> Dict[str, float]:
        start = time.perf_counter()
        counts = count_table(docs, PlainScheme(bench.PATTERN), threads=threads)
        counted = time.perf_counter()
        trainer.learn_merges(counts, Alphabet(), 0)  # pieces into C arrays, pairs counted
        loaded = time.perf_counter()
        merges = trainer.learn_merges(counts, Alphabet(), vocab_size - 256)
        merged = time.perf_counter()
        return {
            "counting": counted - start,
            "merge stage": merged - loaded,
            "of which loading": loaded - counted,
            "of which merge loop": (merged - loaded) - (loaded - counted),
            "pieces": len(counts),
            "merges": len(merges),
        }

    return run


def our_table(docs: Sequence[str], vocab_size: int) -> Callable[[], List[bytes]]:
    def run() -> List[bytes]:
        counts = count_table(docs, PlainScheme(bench.PATTERN))
        merges = trainer.learn_merges(counts, Alphabet(), vocab_size - 256)
        return Alphabet(merges=[(a, b) for a, b, _ in merges]).all_token_bytes()

    return run


def rustbpe_table(docs: Sequence[str], vocab_size: int) -> Callable[[], List[bytes]]:
    def run() -> List[bytes]:
        import rustbpe

        tok = rustbpe.Tokenizer()
        tok.train_from_iterator(iter(docs), vocab_size=vocab_size, pattern=PATTERNS[bench.PATTERN])
        return [token for token, _ in sorted(tok.get_mergeable_ranks(), key=lambda pair: pair[1])]

    return run


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="*", help="text files (default: the standard library's .py files)")
    parser.add_argument("--vocab-size", type=int, default=32768)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--no-check", action="store_true", help="skip the comparison with rustbpe's table")
    parser.add_argument("--scaling", action="store_true",
                        help="only fb.train(fb.files(...)) on 1 thread against all, paired, on .txt, .jsonl, .jsonl.gz")
    parser.add_argument("--pairs", type=int, default=5, help="back-to-back pairs per scaling row")
    args = parser.parse_args(argv or None)
    print(f"functionalbpe {fb.__version__}: {fb.core._native.NATIVE.describe()}", file=sys.stderr)
    if args.scaling:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import scaling

        texts = list(files(*(args.inputs or stdlib_sources()), errors="replace"))
        scaling.train_scaling(scaling.paragraphs(texts, 1 << 62), args.vocab_size, n=args.pairs)
        return 0

    for var in ("RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS"):
        os.environ[var] = str(args.threads)
    docs = list(files(*(args.inputs or stdlib_sources()), errors="replace"))
    n_bytes = sum(len(d.encode("utf-8")) for d in docs)
    versions = bench.library_versions()
    print(f"corpus: {len(docs)} documents, {n_bytes / 1e6:.1f} MB ({'the standard library' if not args.inputs else ', '.join(args.inputs)})")
    print(f"vocabulary {args.vocab_size}, pattern {bench.PATTERN}, {args.threads} threads, best of {args.repeat}")
    print(f"machine: {bench.machine_info()['cpu']}, {bench.machine_info()['cores']} cores; "
          + ", ".join(f"{k} {v}" for k, v in versions.items() if v))
    if NATIVE.trainer is None:
        print("warning: the compiled trainer is not built; 'functionalbpe' is the pure-Python trainer")

    runners: Dict[str, Callable[[], Any]] = {"functionalbpe": bench.trainer("functionalbpe", docs, args.vocab_size, args.threads)}
    for name in PEERS:
        if bench.installed(name):
            runners[name] = bench.trainer(name, docs, args.vocab_size, args.threads)
        else:
            print(f"skipped {name}: not installed")
    runners["functionalbpe stages"] = our_stages(docs, args.vocab_size, args.threads)

    runs: Dict[str, List[Dict[str, Any]]] = {name: [] for name in runners}
    for rep in range(args.repeat):
        for name, fn in runners.items():
            sys.stderr.write(f"{name} (run {rep + 1}/{args.repeat}) ...\n")
            runs[name].append(bench.measure(fn, args.timeout))
    best = {name: bench._best(r) for name, r in runs.items()}

    print("\nwhole training (reading from memory, pre-tokenization, counting, merging)")
    print(f"{'library':<16}{'best s':>9}{'median s':>10}{'peak MB':>9}{'ours / it':>11}")
    ours = best["functionalbpe"]
    for name in ["functionalbpe", *PEERS]:
        if name not in best:
            continue
        b = best[name]
        if not b["ok"]:
            print(f"{name:<16} failed: {b['error']}")
            continue
        ratio = f"{ours['seconds'] / b['seconds']:.3f}x" if ours["ok"] else "-"
        print(f"{name:<16}{b['seconds']:>9.3f}{b['median_seconds']:>10.3f}{b['peak_bytes'] / 1e6:>9.1f}{ratio:>11}")
    if ours["ok"] and best.get("rustbpe", {}).get("ok"):
        memory = ours["peak_bytes"] / max(1, best["rustbpe"]["peak_bytes"])
        print(f"peak memory, ours / rustbpe: {memory:.2f}x")

    stages = runs["functionalbpe stages"]
    if all(r.get("ok") for r in stages):
        print("\nour stages (best of each)")
        for key in ("counting", "merge stage", "of which loading", "of which merge loop"):
            print(f"  {key:<22}{min(r['result'][key] for r in stages):>8.3f} s")
        first = stages[0]["result"]
        print(f"  {first['pieces']} distinct pieces, {first['merges']} merges")
        merge_stage = min(r["result"]["merge stage"] for r in stages)
        for name in PEERS:
            if best.get(name, {}).get("ok"):
                print(f"  merge stage / {name} whole training: {merge_stage / best[name]['seconds']:.3f}x")

    if not args.no_check and bench.installed("rustbpe"):
        theirs = bench.measure(rustbpe_table(docs, args.vocab_size), args.timeout)
        mine = bench.measure(our_table(docs, args.vocab_size), args.timeout)
        if theirs.get("ok") and mine.get("ok"):
            a, b = mine["result"], theirs["result"]
            diff = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
            same = len(a) == len(b) and diff is None
            print(f"\nmerge table equal to rustbpe's: {'yes' if same else 'NO'} ({len(a)} vs {len(b)} tokens"
                  + (f", first difference at id {diff}" if diff is not None else "") + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
