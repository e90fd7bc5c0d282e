"""Pre-tokenization speed: scan-and-count against regex + Counter and rustbpe, side by side.

    /tmp/pt/bin/python benchmarks/bench_scan.py [--max-mb 30] [--repeat 3] [--json out.json]

Corpus: the ``.py`` files of this Python's standard library (``sysconfig``'s ``stdlib``,
without site-packages), about 30 MB, held in memory as documents. Measured in one run:

* **scan+count** — ``functionalbpe.count_pieces`` with the compiled scanner, for every
  built-in pattern: one thread (MB/s of wall time, and of the thread's CPU time, which a
  busy machine inflates less), and all cores (wall time); and ``text.counting.count_table``, the
  same counts as a flat ``PieceTable`` instead of a dict (what training hands on);
* **regex+Counter** — ``regex.findall`` with the same pattern into a ``collections.Counter``:
  what the pure-Python path does (one pass; it is slow);
* **rustbpe** — ``Tokenizer.train_from_iterator`` at a vocabulary of 300 (44 merges: the
  time is nearly all its own splitting and counting), one thread and all cores, each in a
  child process (rayon reads its thread count once);
* **pathological inputs** — 1 MB each of space, newline, ``^``, ``0``, ``a`` and ``'s``,
  scan+count on one thread for every pattern: linear time means MB/s near the corpus's;
* **compiled engine** (``--compiled``, a comma-separated list of the names of
  :data:`COMPILED`, or ``all``) — the same scan+count into a flat table on one thread, with
  the pattern compiled (``unicode/regex_program.py``, ``csrc/lib/scan/regex_vm.c``): the built-in
  patterns forced through it, beside their hand-written scanners (the ratio), and the
  patterns other tokenizers ship, which only it runs in C. ``--text FILE`` measures on a text
  file instead of the standard library (``../shared/corpora/nl/en.txt`` is English prose).
  ``--paired N`` also times each compiled pattern against its hand-written scanner as the
  median of N back-to-back pairs (``../shared/tools/paired.py``), each pair on documents
  neither has counted yet: the ratio to trust where other tenants move the MB/s.

Each measurement is the best of ``--repeat`` runs: a shared machine only ever makes a run
slower. Targets: >= 150 MB/s per core, within 20% of a hand-written scanner, and >= 10x regex.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import importlib.util
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional

import regex

if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import functionalbpe as fb  # noqa: E402
from functionalbpe.measure import bench  # noqa: E402  (machine_info, library_versions, measure)
from functionalbpe.unicode.charclasses import unicode_version  # noqa: E402
from functionalbpe.cli.stdlib import stdlib_sources  # noqa: E402
from functionalbpe.core._native import NATIVE  # noqa: E402
from functionalbpe.schemes.plain import PlainScheme  # noqa: E402
from functionalbpe.text.counting import count_table  # noqa: E402
from functionalbpe.training import count_pieces  # noqa: E402
from functionalbpe.text.patterns import PATTERNS, SUPERWORDS  # noqa: E402
from scaling import load_paired  # noqa: E402  (benchmarks/, on sys.path as the script's folder)

PATHOLOGICAL = {"space": " ", "newline": "\n", "caret": "^", "zero": "0", "letter": "a", "'s": "'s"}

# The patterns the compiled engine is measured on: the built-in ones (beside their
# hand-written scanners) and those other tokenizers ship, as each spells it.
COMPILED: Dict[str, str] = {
    **PATTERNS,
    "cl100k-tiktoken": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    "r50k-tiktoken": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
    "tekken": r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    "bloom": r""" ?[^(\s|.,!?…。，、।۔،)]+|(?:(?! ?[^(\s|.,!?…。，、।۔،)])[\s\S])+""",
    "superwords": SUPERWORDS,
}


def documents_of(whole: str) -> List[str]:
    """One text as documents of about 64 KB, cut at line ends."""
    docs, start = [], 0
    while start < len(whole):
        end = whole.find("\n", start + 65536)
        end = len(whole) if end < 0 else end + 1
        docs.append(whole[start:end])
        start = end
    return docs


def load_docs(max_mb: float, text: Optional[str] = None) -> List[str]:
    if text:  # one text file
        return documents_of(Path(text).read_text(encoding="utf-8")[: int(max_mb * 1e6)])
    docs = []
    for path in stdlib_sources(int(max_mb * 1e6)):
        with open(path, "rb") as fh:
            docs.append(fh.read().decode("utf-8", "replace"))
    return docs


def best_of(repeat: int, fn: Callable[[], object]) -> Dict[str, float]:
    """Best wall time and best CPU time of this thread over ``repeat`` runs."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.thread_time()
        fn()
        wall = min(wall, time.perf_counter() - w0)
        cpu = min(cpu, time.thread_time() - c0)
    return {"wall": wall, "cpu": cpu}


def regex_counter(docs: List[str], pattern: str) -> Dict[str, int]:
    finder = regex.compile(PATTERNS[pattern])
    counts: Counter = Counter()
    for doc in docs:
        counts.update(finder.findall(doc))
    return dict(counts)


def rustbpe_train(docs: List[str], threads: int) -> Callable[[], object]:
    def run() -> object:
        os.environ["RAYON_NUM_THREADS"] = str(threads)
        import rustbpe

        tok = rustbpe.Tokenizer()
        tok.train_from_iterator(iter(docs), vocab_size=300, pattern=PATTERNS["gpt4"])
        return tok.vocab_size

    return run


def main(argv: Optional[List[str]] = None) -> Dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-mb", type=float, default=40.0, help="corpus size cap in MB (default: all of it)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--patterns", default=",".join(PATTERNS), help="comma-separated built-in patterns")
    parser.add_argument("--regex-patterns", default="gpt4", help="patterns to time with regex+Counter (slow)")
    parser.add_argument("--threads", type=int, default=None, help="threads for the all-cores runs (default: all)")
    parser.add_argument("--no-rustbpe", action="store_true")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--text", help="a UTF-8 text file to measure on instead of the standard library")
    parser.add_argument("--compiled", default="",
                        help="patterns (names of COMPILED, or all) to measure with the compiled engine too")
    parser.add_argument("--only-compiled", action="store_true", help="measure nothing but the compiled engine")
    parser.add_argument("--paired", type=int, default=0, metavar="N",
                        help="also time each compiled pattern against its hand-written scanner as the "
                             "median of N back-to-back pairs on text fresh to both (../shared/tools/paired.py)")
    args = parser.parse_args(argv)
    print(f"functionalbpe {fb.__version__}: {fb.core._native.NATIVE.describe()}", file=sys.stderr)
    patterns = [p for p in args.patterns.split(",") if p]
    scanner = NATIVE.scanner
    if scanner is None:
        sys.exit("the compiled scanner is not built (python setup.py build_ext --inplace)")
    threads = args.threads or scanner.default_threads()

    docs = load_docs(args.max_mb, args.text)
    mb = sum(len(d.encode("utf-8")) for d in docs) / 1e6
    info = bench.machine_info()
    where = args.text if args.text else "stdlib .py files"
    print(f"corpus: {len(docs)} {where}, {mb:.1f} MB; {info.get('cpu')}, {threads} threads; "
          f"Python {platform.python_version()}, regex {regex.__version__} (Unicode {unicode_version()})")
    results: Dict[str, object] = {"corpus_mb": mb, "files": len(docs), "threads": threads, "machine": info,
                                  "versions": bench.library_versions(), "unicode": unicode_version(), "rows": []}
    rows: List[Dict[str, object]] = results["rows"]  # type: ignore[assignment]

    def row(what: str, pattern: str, wall: float, cpu: Optional[float] = None, note: str = "") -> None:
        r = {"what": what, "pattern": pattern, "seconds": wall, "mb_per_s": mb / wall,
             "cpu_mb_per_s": (mb / cpu) if cpu else None, "note": note}
        rows.append(r)
        cpu_text = f"{mb / cpu:8.1f}" if cpu else " " * 8
        print(f"| {what:<28} | {pattern:<14} | {mb / wall:8.1f} | {cpu_text} | {note}")

    compiled = list(COMPILED) if args.compiled == "all" else [p for p in args.compiled.split(",") if p]
    if compiled:
        results["compiled"] = compiled_engine(docs, compiled, args.repeat, mb, args.paired)
    if args.only_compiled:
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        return results
    print("| what                         | pattern        | MB/s     | MB/s cpu | note")
    print("|---|---|---:|---:|---|")
    for pattern in patterns:
        one = best_of(args.repeat, lambda: count_pieces(docs, pattern, threads=1))
        row("scan+count -> dict, 1 thread", pattern, one["wall"], one["cpu"])
        flat = best_of(args.repeat, lambda: count_table(docs, PlainScheme(pattern), threads=1))
        row("scan+count -> flat, 1 thread", pattern, flat["wall"], flat["cpu"], "PieceTable: no str per piece")
        allc = best_of(args.repeat, lambda: count_pieces(docs, pattern, threads=threads))
        row(f"scan+count -> dict, {threads} thr", pattern, allc["wall"])
        results.setdefault("scan_one_thread", {})[pattern] = mb / one["cpu"]  # type: ignore[index]
    for pattern in [p for p in args.regex_patterns.split(",") if p]:
        slow = best_of(1, lambda: regex_counter(docs, pattern))
        row("regex+Counter, 1 thread", pattern, slow["wall"], slow["cpu"])
        fast = results["scan_one_thread"].get(pattern)  # type: ignore[union-attr]
        if fast:
            print(f"|   scan+count / regex+Counter (cpu) | {pattern} | {fast / (mb / slow['cpu']):.1f}x | | |")
    if not args.no_rustbpe and bench.installed("rustbpe"):
        for n in sorted({1, threads}):
            runs = [bench.measure(rustbpe_train(docs, n), 600.0) for _ in range(args.repeat)]
            ok = [r["seconds"] for r in runs if r.get("ok")]
            if ok:
                row(f"rustbpe train vocab 300, {n} thr", "gpt4", min(ok), note="splitting+counting+44 merges")
            else:
                print(f"| rustbpe, {n} threads | gpt4 | failed: {runs[-1].get('error')} |")

    print()
    print("Pathological inputs (1 MB each), scan+count on 1 thread, MB/s (CPU time):")
    print("| pattern | " + " | ".join(PATHOLOGICAL) + " | corpus |")
    print("|---|" + "---:|" * (len(PATHOLOGICAL) + 1))
    results["pathological"] = {}
    for pattern in patterns:
        cells = []
        for name, unit in PATHOLOGICAL.items():
            text = unit * (1_000_000 // len(unit))
            t = best_of(args.repeat, lambda: count_pieces([text], pattern, threads=1))
            rate = len(text.encode()) / 1e6 / t["cpu"]
            results["pathological"].setdefault(pattern, {})[name] = rate  # type: ignore[union-attr]
            cells.append(f"{rate:.0f}")
        corpus_rate = results["scan_one_thread"][pattern]  # type: ignore[index]
        print(f"| {pattern} | " + " | ".join(cells) + f" | {corpus_rate:.0f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return results


def fresh_groups(docs: List[str], count: int) -> List[List[str]]:
    """The documents cut into `count` consecutive groups of about the same size."""
    size = max(1, len(docs) // count)
    return [docs[k * size:(k + 1) * size] for k in range(count) if docs[k * size:(k + 1) * size]]


def compiled_engine(docs: List[str], names: List[str], repeat: int, mb: float,
                    pairs: int = 0) -> Dict[str, Dict[str, float]]:
    """Scan+count into a flat table on one thread with each pattern compiled, beside the
    hand-written scanner where there is one; MB/s of the thread's CPU time. With `pairs`, also
    compiled against hand-written as the median of that many back-to-back pairs, each pair on
    a group of documents neither has counted (the speeds' ratio, above 1: compiled faster)."""
    scanner = NATIVE.scanner
    assert scanner is not None

    def counted(name: str, texts: Optional[Iterator[List[str]]] = None) -> Callable[[], object]:
        def run() -> object:
            counter = scanner.PieceCounter(name, threads=1)
            try:
                counter.add_texts(next(texts) if texts is not None else docs)
                return counter.flat()
            finally:
                counter.close()
        return run

    paired = load_paired() if pairs else None
    print("Compiled engine: scan+count -> flat, 1 thread, MB/s (CPU time):")
    print("| pattern | compiled | hand-written | compiled / hand | paired, fresh text |")
    print("|---|---:|---:|---:|---:|")
    out: Dict[str, Dict[str, float]] = {}
    for name in names:
        program = scanner.PROGRAM + COMPILED[name]
        counted(program)()  # the tables are measured once, before timing
        rate = mb / best_of(repeat, counted(program))["cpu"]
        out[name] = {"compiled": rate}
        if name in scanner.SCANNERS:
            counted(name)()  # as the program's: its first call sets up what later ones reuse
            hand = mb / best_of(repeat, counted(name))["cpu"]
            out[name]["hand"] = hand
            cell = ""
            groups = fresh_groups(docs, pairs + 1)  # the first pair is paired's warm-up
            if paired is not None and len(groups) > 1:
                both = paired(counted(program, iter(groups)), counted(name, iter(groups)), n=len(groups) - 1)
                out[name]["paired"] = both.median
                cell = f"{both.median:.2f} [{min(both.ratios):.2f}-{max(both.ratios):.2f}]"
            print(f"| {name} | {rate:.1f} | {hand:.1f} | {rate / hand:.2f} | {cell} |")
        else:
            print(f"| {name} | {rate:.1f} | | | |")
    print()
    return out


if __name__ == "__main__":
    main()
