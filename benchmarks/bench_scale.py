"""What training past one machine costs, measured here: the figures docs/scale.md builds on.

    python benchmarks/bench_scale.py                  # the shared corpora + the standard library
    python benchmarks/bench_scale.py --max-mb 40 --workers 2 --vocab-size 32768

Measured, on the shared corpora (../shared/corpora: 22 languages, code, parallel text) and the
standard library, cut into shards of a few MB:

1. counting throughput per worker: one process, one thread, shard by shard (MB/s per core);
   the same text on ``--workers`` threads in one process; and on a ``LocalCluster`` of
   ``--workers`` processes through :func:`functionalbpe.dask.count` (cluster started and
   warmed up before the clock starts);
2. the size of the counted table per distinct piece: in memory (``PieceCounts.nbytes``), in a
   counts file (``to_bytes``), and in the counter's hash table while counting;
3. merging k shard tables: C and pure Python;
4. the growth of distinct pieces with the text (shards added in a shuffled order), and the
   Heaps'-law fit ``V = K * n**beta`` (n in bytes) by least squares on the log-log points;
5. the merge loop (training from counts, ``--vocab-size`` merges) on tables of growing size,
   each in a forked child: time and peak memory;
6. pruning: the table after ``prune(m)``, and how many of the merges trained on it are those
   of the exact table (the first merge that differs, and the share of the first N in common).

Figures depend on the machine and its load; say which when quoting them.
"""
from __future__ import annotations

import argparse
import glob
import math
import os
import random
import importlib.util
import sys
import time
from typing import Any, Dict, List, Sequence, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, ROOT)

import functionalbpe as fb  # noqa: E402
from functionalbpe.measure import bench  # noqa: E402
from functionalbpe.cli.stdlib import stdlib_sources  # noqa: E402
from functionalbpe.core._native import NATIVE  # noqa: E402
from functionalbpe.counts import add_tables  # noqa: E402
from functionalbpe.text.counting import CountReport  # noqa: E402

SHARED = os.path.join(os.path.dirname(ROOT), "shared", "corpora")


def shards(max_mb: float, shard_mb: float = 4.0) -> List[List[str]]:
    """Lists of files of about ``shard_mb`` each, up to ``max_mb`` in all: the shared corpora's
    files (one shard each) and the standard library's, grouped, interleaved by a fixed shuffle."""
    found = sorted(glob.glob(os.path.join(SHARED, "**", "*.txt"), recursive=True))
    groups: List[List[str]] = [[p] for p in found]
    group: List[str] = []
    size = 0
    for path in stdlib_sources():
        group.append(path)
        size += os.path.getsize(path)
        if size >= shard_mb * 1e6:
            groups.append(group)
            group, size = [], 0
    random.Random(16).shuffle(groups)
    kept, total = [], 0
    for g in groups:
        b = sum(map(os.path.getsize, g))
        if total + b > max_mb * 1e6:
            break
        kept.append(g)
        total += b
    return kept


def megabytes(paths: Sequence[str]) -> float:
    return sum(map(os.path.getsize, paths)) / 1e6


def count_shards(groups: List[List[str]]) -> Tuple[List[fb.PieceCounts], float, float, List[CountReport]]:
    """Each shard counted on one thread: the tables, the wall and CPU seconds, the counters'
    reports. CPU seconds do not grow when other work shares the machine; wall seconds do."""
    tables, reports, seconds, cpu = [], [], 0.0, 0.0
    for g in groups:
        start, start_cpu = time.perf_counter(), time.process_time()
        tables.append(fb.count(fb.files(*g, errors="replace"), threads=1, progress=False))
        seconds += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
    for g in groups[:3]:  # the counter's hash table, per piece (a few shards suffice)
        fb.text.counting.count_table(fb.files(*g, errors="replace"), fb.make_scheme("plain"), threads=1, report=reports.append)
    return tables, seconds, cpu, reports


def on_cluster(paths: List[str], workers: int) -> float:
    import distributed

    import functionalbpe.pipeline.cluster as fbdask

    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        fbdask.count(paths[:1], client=client, errors="replace")  # workers import functionalbpe before the clock
        start = time.perf_counter()
        fbdask.count(paths, client=client, errors="replace")
        return time.perf_counter() - start


def growth(tables: List[fb.PieceCounts], sizes: List[float]) -> List[Tuple[float, int]]:
    """(MB so far, distinct pieces so far) after each shard."""
    total = NATIVE.summer.CountsSum()
    points, so_far = [], 0.0
    for t, mb in zip(tables, sizes):
        total.add(t.table.data, t.table.offsets, t.table.counts)
        so_far += mb
        points.append((so_far, len(total)))
    return points


def heaps(points: List[Tuple[float, int]]) -> Tuple[float, float]:
    """K and beta of V = K * n**beta (n in bytes), least squares on log-log points."""
    xs = [math.log(mb * 1e6) for mb, _ in points]
    ys = [math.log(v) for _, v in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    beta = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return math.exp(my - beta * mx), beta


def train_child(counts: fb.PieceCounts, vocab_size: int) -> Dict[str, Any]:
    """Training on ``counts`` in a forked child: its time, peak memory and the merged tokens
    (as bytes, in merge order: ids would not compare once two tables differ)."""

    def run() -> Tuple[List[bytes], float]:
        start = time.process_time()
        tok = fb.train(counts, vocab_size=vocab_size, progress=False)
        cpu = time.process_time() - start
        first = tok.alphabet.num_fixed
        return [tok.token_bytes(first + k) for k in range(len(tok.merges))], cpu

    return bench.measure(run, timeout=1800)


def agreement(exact: List[bytes], other: List[bytes], first: int) -> Tuple[int, float]:
    """The index of the first merge that differs, and the share of the first ``first`` merges
    of ``exact`` that ``other``'s first ``first`` also hold."""
    differs = next((i for i, (a, b) in enumerate(zip(exact, other)) if a != b), min(len(exact), len(other)))
    shared = len(set(exact[:first]) & set(other[:first])) / max(1, len(exact[:first]))
    return differs, shared


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--max-mb", type=float, default=200.0, help="text to use at most (MB)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--vocab-size", type=int, default=32768)
    p.add_argument("--prune-vocab-size", type=int, default=8192)
    p.add_argument("--no-cluster", action="store_true", help="skip the LocalCluster measurement")
    args = p.parse_args()
    print(f"functionalbpe {fb.__version__}: {fb.core._native.NATIVE.describe()}", file=sys.stderr)

    groups = shards(args.max_mb)
    paths = [path for g in groups for path in g]
    sizes = [megabytes(g) for g in groups]
    total_mb = sum(sizes)
    print(f"# scale figures: {total_mb:,.1f} MB in {len(groups)} shards, {len(paths)} files; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, functionalbpe {fb.__version__}\n")

    tables, one_thread, one_cpu, reports = count_shards(groups)
    print("## counting throughput\n\n| how | MB/s | per worker |\n|---|---:|---:|")
    print(f"| 1 thread, shard by shard | {total_mb / one_thread:,.1f} | {total_mb / one_thread:,.1f} |")
    print(f"| 1 thread, per CPU second (what an idle core does) | {total_mb / one_cpu:,.1f} | {total_mb / one_cpu:,.1f} |")
    start = time.perf_counter()
    whole = fb.count(fb.files(*paths, errors="replace"), threads=args.workers, progress=False)
    threaded = time.perf_counter() - start
    print(f"| {args.workers} threads, one process | {total_mb / threaded:,.1f} | {total_mb / threaded / args.workers:,.1f} |")
    if not args.no_cluster:
        clustered = on_cluster(paths, args.workers)
        print(f"| LocalCluster, {args.workers} processes (Dask) | {total_mb / clustered:,.1f} | "
              f"{total_mb / clustered / args.workers:,.1f} |")

    start = time.perf_counter()
    merged = fb.PieceCounts.merge(tables)
    merge_c = time.perf_counter() - start
    assert merged == whole, "the merged shards must equal the count of everything"
    os.environ["FUNCTIONALBPE_PUREPYTHON"] = "1"
    start = time.perf_counter()
    add_tables([t.table for t in tables])
    merge_py = time.perf_counter() - start
    del os.environ["FUNCTIONALBPE_PUREPYTHON"]
    shard_pieces = sum(len(t) for t in tables)
    print(f"\n## merging {len(tables)} shard tables ({shard_pieces:,} pieces in, {len(merged):,} out)\n")
    print(f"C: {merge_c:.2f} s ({shard_pieces / merge_c / 1e6:,.1f} M pieces/s); pure Python: {merge_py:.2f} s "
          f"({merge_py / merge_c:,.0f}x the C time)")

    file_bytes = len(merged.to_bytes())
    counter = sum(r.table_bytes for r in reports) / max(1, sum(r.unique_pieces for r in reports))
    print(f"\n## the table per distinct piece ({len(merged):,} pieces, {merged.total:,} counted)\n")
    print("| where | bytes per piece |\n|---|---:|")
    print(f"| PieceCounts in memory (nbytes) | {merged.nbytes / len(merged):,.1f} |")
    print(f"| counts file (zlib) | {file_bytes / len(merged):,.1f} |")
    print(f"| the counter's hash table while counting | {counter:,.1f} |")

    points = growth(tables, sizes)
    k, beta = heaps(points)
    tail = [p for p in points if p[0] >= total_mb / 2]
    k_tail, beta_tail = heaps(tail) if len(tail) > 2 else (k, beta)
    print(f"\n## distinct pieces against text: V = {k:,.3g} * n^{beta:.3f} (n in bytes); "
          f"from {tail[0][0]:,.0f} MB on: V = {k_tail:,.3g} * n^{beta_tail:.3f}\n")
    print("| MB | distinct pieces | fit |\n|---:|---:|---:|")
    for mb, v in points[:: max(1, len(points) // 8)] + [points[-1]]:
        print(f"| {mb:,.1f} | {v:,} | {k * (mb * 1e6) ** beta:,.0f} |")

    print(f"\n## the merge loop, {args.vocab_size} ids, on growing tables (forked child)\n")
    print("| MB counted | distinct pieces | seconds | CPU seconds | peak MB | µs (CPU) per piece | bytes per piece |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for fraction in (0.25, 0.5, 1.0):
        n = max(1, round(len(tables) * fraction))
        table = fb.PieceCounts.merge(tables[:n])
        out = train_child(table, args.vocab_size)
        if out.get("ok"):
            cpu = out["result"][1]
            print(f"| {sum(sizes[:n]):,.1f} | {len(table):,} | {out['seconds']:.2f} | {cpu:.2f} | "
                  f"{out['peak_bytes'] / 1e6:,.0f} | {cpu / len(table) * 1e6:.2f} | {out['peak_bytes'] / len(table):,.0f} |")
        else:
            print(f"| {sum(sizes[:n]):,.1f} | {len(table):,} | {out.get('error')} | | | | |")

    pruning(merged, args.prune_vocab_size, f"all {total_mb:,.1f} MB")
    english = os.path.join(SHARED, "nl", "en.txt")
    if os.path.exists(english):
        pruning(fb.count(fb.files(english), progress=False), args.prune_vocab_size,
                f"English alone ({megabytes([english]):,.1f} MB)")


def pruning(counts: fb.PieceCounts, vocab_size: int, what: str) -> None:
    """The merges trained on ``counts`` pruned at several minimum counts, against the exact ones."""
    print(f"\n## pruning, {vocab_size} ids, on {what}\n")
    print("| min_count | pieces kept | pieces counted kept | memory | first merge that differs | first 1,000 in common "
          "| all in common |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    exact = train_child(counts, vocab_size)["result"][0]
    for m in (1, 2, 3, 5, 10, 100):
        pruned = counts.prune(m)
        got = exact if m == 1 else train_child(pruned, vocab_size)["result"][0]
        differs, first = agreement(exact, got, 1000)
        _, everything = agreement(exact, got, len(exact))
        print(f"| {m} | {len(pruned):,} ({len(pruned) / len(counts):.0%}) | {pruned.total / counts.total:.1%} | "
              f"{pruned.nbytes / 1e6:,.1f} MB | {differs if differs < len(exact) else 'none'} | {first:.1%} | "
              f"{everything:.1%} |")


if __name__ == "__main__":
    main()
