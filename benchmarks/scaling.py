"""1 thread against all threads, as paired ratios (``../shared/tools/paired.py``): the
scaling rows of ``bench_encode_corpus.py --scaling`` and ``bench_train.py --scaling``.

The same documents are written three ways -- one ``.txt`` file (the documents joined), one
``.jsonl`` (a record per document) and the ``.jsonl.gz`` of it -- and each job is timed back
to back against its partner, alternating which goes first, the median of the per-pair
ratios printed with its range. A ratio above 1 means the first-named job is faster. Each row
with all threads also says how much of its wall time the calling thread was busy
(:func:`main_thread_share`): the serial part that keeps the ratio from the core count, and
how much of it the cyclic garbage collector took, where it took any. Without
``paired.py`` beside the repository (``<repo>/../shared/tools``) the section is skipped.
"""
from __future__ import annotations

import gzip
import json
import os
import shutil
import sys
import tempfile
from typing import Any, Callable, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIRED_DIR = os.path.join(os.path.dirname(ROOT), "shared", "tools")


def load_paired() -> Optional[Callable[..., Any]]:
    """``paired`` from the shared tools, or None (with a note) when they are not there."""
    if not os.path.exists(os.path.join(PAIRED_DIR, "paired.py")):
        print(f"scaling: skipped ({PAIRED_DIR}/paired.py not found)")
        return None
    if PAIRED_DIR not in sys.path:
        sys.path.insert(0, PAIRED_DIR)
    from paired import paired  # type: ignore[import-not-found]

    return paired


def all_threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def three_forms(docs: List[str], directory: Optional[str] = None) -> Dict[str, str]:
    """The documents as ``.txt`` (joined by blank lines), ``.jsonl`` and ``.jsonl.gz``."""
    directory = directory or tempfile.mkdtemp(prefix="bench-scaling-")
    paths = {kind: os.path.join(directory, "corpus" + kind) for kind in (".txt", ".jsonl", ".jsonl.gz")}
    with open(paths[".txt"], "w", encoding="utf-8") as fh:
        fh.write("\n\n".join(docs))
    lines = "".join(json.dumps({"text": d}, ensure_ascii=False) + "\n" for d in docs)
    with open(paths[".jsonl"], "w", encoding="utf-8") as fh:
        fh.write(lines)
    with gzip.open(paths[".jsonl.gz"], "wt", encoding="utf-8") as fh:
        fh.write(lines)
    return paths


def paragraphs(texts: List[str], limit_bytes: int) -> List[str]:
    """Paragraphs (blank-line separated) of ``texts``, about ``limit_bytes`` of them."""
    out: List[str] = []
    size = 0
    for text in texts:
        for para in text.split("\n\n"):
            if para.strip():
                out.append(para)
                size += len(para.encode("utf-8"))
                if size >= limit_bytes:
                    return out
    return out


def main_thread_share(job: Callable[[], Any], runs: int = 3) -> Tuple[float, float]:
    """The shares of a job's wall time that its calling thread spends on the CPU, and that
    the cyclic garbage collector runs (medians of ``runs``). With the work on the workers the
    first is the serial part, by Amdahl's law the part that no number of cores shortens (the
    calling thread's CPU time includes any share of the work it does itself, so this is an
    upper bound). The second is part of the first: the collector's pass over the new lists
    of a batch of lists, on the calling thread, whatever the threads (``gc.callbacks``)."""
    import gc
    import time

    shares, collected = [], []
    spent = [0.0, 0.0]  # seconds in collections, start of the current one

    def timed(phase: str, info: Dict[str, Any]) -> None:
        if phase == "start":
            spent[1] = time.perf_counter()
        else:
            spent[0] += time.perf_counter() - spent[1]

    gc.callbacks.append(timed)
    try:
        for _ in range(runs):
            spent[0] = 0.0
            cpu, wall = time.thread_time(), time.perf_counter()
            job()
            wall = max(time.perf_counter() - wall, 1e-9)
            shares.append((time.thread_time() - cpu) / wall)
            collected.append(spent[0] / wall)
    finally:
        gc.callbacks.remove(timed)
    return sorted(shares)[len(shares) // 2], sorted(collected)[len(collected) // 2]


def row(name: str, result: Any, target: str = "", serial: Optional[Tuple[float, float]] = None) -> Dict[str, Any]:
    busy = ""
    if serial is not None:
        busy = f"   calling thread busy {serial[0]:.0%} of the wall"
        busy += f" (the collector {serial[1]:.0%})" if serial[1] >= 0.005 else ""
    print(f"  {name:<58} {result.median:5.2f}x [{min(result.ratios):.2f}-{max(result.ratios):.2f}]"
          f"{'   target ' + target if target else ''}{busy}")
    return {"job": name, "median": result.median, "low": min(result.ratios), "high": max(result.ratios),
            "target": target, "calling_thread_share": serial[0] if serial else None,
            "collector_share": serial[1] if serial else None}


def encode_scaling(tok: Any, docs: List[str], n: int = 7) -> List[Dict[str, Any]]:
    """encode_to_file 1 vs all threads on the three forms; .txt against encode_ordinary;
    .jsonl against .txt; encode_batch (lists, flat) on paragraphs and on short lines. Special
    tokens as a call without options treats them: refused, so the search for them counts."""
    return _on_three_forms(docs, lambda paths, threads, paired: _encode_rows(tok, paths, threads, n, paired))


def _encode_rows(tok: Any, paths: Dict[str, str], threads: int, n: int, paired: Any) -> List[Dict[str, Any]]:
    import functionalbpe as fb

    out = os.path.join(os.path.dirname(paths[".txt"]), "out.npy")
    text = open(paths[".txt"], encoding="utf-8").read()

    def to_file(kind: str, t: int) -> Callable[[], Any]:
        return lambda: tok.encode_to_file(fb.files(paths[kind]), out, threads=t, progress=False)

    print(f"scaling ({threads} threads against 1; {len(text.encode()) / 1e6:.1f} MB, {text.count(chr(10) * 2) + 1:,} documents; "
          f"median of {n} back-to-back pairs):")
    rows = []
    for kind in (".txt", ".jsonl", ".jsonl.gz"):
        rows.append(row(f"encode_to_file {kind}: {threads} threads vs 1", paired(to_file(kind, threads), to_file(kind, 1), n=n),
                        ">= 1.8" if kind != ".jsonl.gz" else "", main_thread_share(to_file(kind, threads))))
    rows.append(row("encode_to_file .txt, 1 thread: speed vs encode_ordinary(text, threads=1)",
                    paired(to_file(".txt", 1), lambda: tok.encode_ordinary(text, threads=1), n=n), ">= 1.2"))
    rows.append(row("encode_to_file, 1 thread: .jsonl speed vs .txt",
                    paired(to_file(".jsonl", 1), to_file(".txt", 1), n=n), ">= 0.80"))
    lines = [line for line in text.splitlines() if line.strip()]
    paras = paragraphs([text], len(text))
    for label, batch in (("paragraphs", paras), ("short lines", lines)):
        for flat in (False, True):
            form = "flat" if flat else "lists"
            def batched(t: int, flat: bool = flat, batch: List[str] = batch) -> Callable[[], Any]:
                return lambda: tok.encode_batch(batch, threads=t, flat=flat)

            rows.append(row(f"encode_batch {label} ({len(batch):,}), {form}: {threads} threads vs 1",
                            paired(batched(threads), batched(1), n=n), ">= 1.8" if flat else ">= 1.6",
                            main_thread_share(batched(threads))))
    return rows


def train_scaling(docs: List[str], vocab_size: int, n: int = 5) -> List[Dict[str, Any]]:
    """fb.train(fb.files(...), threads=all) against threads=1 on the three forms (the same
    merges checked)."""
    return _on_three_forms(docs, lambda paths, threads, paired: _train_rows(paths, threads, vocab_size, n, paired))


def _on_three_forms(docs: List[str], rows: Any) -> List[Dict[str, Any]]:
    """``rows(paths, threads, paired)`` on the documents written as .txt, .jsonl and
    .jsonl.gz, the files removed after; nothing without paired.py."""
    paired = load_paired()
    if paired is None:
        return []
    paths = three_forms(docs)
    try:
        return rows(paths, all_threads(), paired)
    finally:
        shutil.rmtree(os.path.dirname(paths[".txt"]), ignore_errors=True)


def _train_rows(paths: Dict[str, str], threads: int, vocab_size: int, n: int, paired: Any) -> List[Dict[str, Any]]:
    import functionalbpe as fb

    print(f"scaling of training ({threads} threads against 1, vocabulary {vocab_size}, median of {n} pairs):")
    rows = []
    for kind in (".txt", ".jsonl", ".jsonl.gz"):
        def train(t: int) -> Callable[[], Any]:
            return lambda: fb.train(fb.files(paths[kind]), vocab_size=vocab_size, threads=t, progress=False)

        assert train(1)().merges == train(threads)().merges, "the merges differ with the threads"
        rows.append(row(f"train {kind}: {threads} threads vs 1", paired(train(threads), train(1), n=n),
                        ">= 1.6" if kind == ".txt" else "", main_thread_share(train(threads), runs=1)))
    return rows
