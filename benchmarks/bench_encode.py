"""Encoding side by side: functionalbpe, tiktoken and HF tokenizers with the same ranks.

    python benchmarks/bench_encode.py                         # stdlib + English prose, 32768
    python benchmarks/bench_encode.py --vocab-size 50000 --repeat 7 --max-mb 30
    python benchmarks/bench_encode.py --tokenizer tok.json --text a.txt --text b.txt

One tokenizer is trained (or loaded) and every library gets *its* ranks and pattern:
tiktoken through ``as_tiktoken_encoding()``, HF tokenizers through ``to_hf()``. All encode
the same documents, already in memory, in this process; the libraries alternate (A B C,
A B C, ...) and the best time of each is kept: a busy machine only ever makes a run slower.
Before timing, every peer's ids are checked against ours.

Corpora: the .py files of this Python's standard library (what every machine has), and
natural-language text: the shared corpora's ``nl/en.txt`` (and ``--text`` files) cut into
documents of about 16 KB at line ends.

Printed per corpus: MB/s and tokens/s with one thread (a loop over documents:
``encode_ordinary`` / ``encode_ordinary`` / ``encode``) and with all threads (each
library's batch call), and tiktoken's time over ours (the target: at least 3 on one
thread). Then the hostile inputs: a megabyte of spaces, of one letter, of newlines, of ``^``,
each as one text, against our speed on ordinary text (target: within 3x).
``--cpu`` times one-thread runs in CPU time of this process rather than wall time, which a
shared machine disturbs less.

``--peers`` runs benchmarks/bench_encode_peers.py instead: cl100k and o200k on fresh text,
one call on each library's threads, against tiktoken, quicktok and fastokens.
"""
from __future__ import annotations

import argparse
import os
import platform
import importlib.util
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, ROOT)

import functionalbpe as fb  # noqa: E402
from functionalbpe.core._native import NATIVE  # noqa: E402
from functionalbpe.cli.stdlib import stdlib_sources  # noqa: E402
from functionalbpe.formats.tiktoken import merges_from_ranks  # noqa: E402
from functionalbpe.schemes.registry import make_scheme  # noqa: E402

PATTERN = "gpt4"
DOC_BYTES = 16_000


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def read_documents(paths: Sequence[str], max_bytes: int, split: bool) -> List[str]:
    """Documents from files (each file one document, or cut at line ends into ~16 KB)."""
    docs: List[str] = []
    total = 0
    for path in paths:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8", "replace")
        parts = [text]
        if split:
            parts, start = [], 0
            while start < len(text):
                cut = text.find("\n", start + DOC_BYTES)
                cut = len(text) if cut < 0 else cut + 1
                parts.append(text[start:cut])
                start = cut
        for part in parts:
            docs.append(part)
            total += len(part.encode("utf-8"))
            if total >= max_bytes:
                return docs
    return docs


def natural_language_files(extra: Sequence[str]) -> List[str]:
    if extra:
        return list(extra)
    env = os.environ.get("FUNCTIONALBPE_CORPORA")
    for base in filter(None, [env, os.path.join(ROOT, "..", "shared", "corpora"), "/work/shared/corpora"]):
        path = os.path.join(base, "nl", "en.txt")
        if os.path.exists(path):
            return [path]
    return []


def tokenizer_for(docs: Sequence[str], vocab_size: int) -> Tuple[fb.Tokenizer, str]:
    """Our tokenizer on the benchmark text: trained by functionalbpe's fast trainer, or,
    where it is not built, by rustbpe (whose merge table equals ours on the plain scheme)."""
    if NATIVE.trainer is not None:
        tok = fb.train(docs, vocab_size=vocab_size, pattern=PATTERN, progress=False)
        return tok, "trained by functionalbpe"
    try:
        import rustbpe
    except ImportError:
        small = min(vocab_size, 256 + 2000)
        tok = fb.train(docs[:200], vocab_size=small, pattern=PATTERN, progress=False)
        return tok, f"trained by the reference trainer on a slice ({small} ids: no fast trainer, no rustbpe)"
    trainer = rustbpe.Tokenizer()
    trainer.train_from_iterator(iter(docs), vocab_size=vocab_size, pattern=fb.PATTERNS[PATTERN])
    ranks = {bytes(token): rank for token, rank in trainer.get_mergeable_ranks()}
    byte_ids, merges, merge_ids, _ = merges_from_ranks(ranks, "rustbpe")
    tok = fb.Tokenizer(make_scheme("plain", PATTERN), merges, byte_ids=byte_ids, merge_ids=merge_ids)
    return tok, "trained by rustbpe (the same merge table as ours; the fast trainer is not built here)"


class Peer:
    def __init__(self, name: str, one: Callable[[str], List[int]], batch: Callable[[List[str]], List[List[int]]]):
        self.name, self.one, self.batch = name, one, batch


def peers(tok: fb.Tokenizer, workdir: str) -> List[Peer]:
    out = [
        Peer(
            "functionalbpe",
            lambda text: tok.encode_ordinary(text, threads=1),
            lambda docs: tok.encode_batch(docs, num_threads=None, disallowed_special=()),
        )
    ]
    try:
        enc = tok.as_tiktoken_encoding()
        out.append(Peer("tiktoken", enc.encode_ordinary, lambda docs: enc.encode_ordinary_batch(docs, num_threads=cores())))
    except fb.FunctionalBPEError as exc:
        print(f"  (tiktoken left out: {exc})")
    try:
        from tokenizers import Tokenizer as HFTokenizer

        path = os.path.join(workdir, "tokenizer.json")
        tok.to_hf(path)
        hf = HFTokenizer.from_file(path)
        out.append(
            Peer(
                "tokenizers",
                lambda text: hf.encode(text, add_special_tokens=False).ids,
                lambda docs: [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)],
            )
        )
    except ImportError:
        print("  (HF tokenizers left out: not installed)")
    return out


def timed(fn: Callable[[], Any], clock: Callable[[], float]) -> Tuple[float, Any]:
    start = clock()
    result = fn()
    return clock() - start, result


def measure(ps: List[Peer], docs: List[str], repeat: int, cpu: bool) -> Dict[str, Dict[str, float]]:
    n_bytes = sum(len(d.encode("utf-8")) for d in docs)
    want = [ps[0].one(d) for d in docs]
    n_tokens = sum(map(len, want))
    for p in ps[1:]:
        if [p.one(d) for d in docs] != want:
            print(f"  WARNING: {p.name} gives other ids than ours on this text")
    one_clock = time.process_time if cpu else time.perf_counter
    best: Dict[str, Dict[str, float]] = {p.name: {"one": float("inf"), "all": float("inf")} for p in ps}
    for _ in range(repeat):
        for p in ps:  # alternate: A B C, A B C
            t, _ = timed(lambda: [p.one(d) for d in docs], one_clock)
            best[p.name]["one"] = min(best[p.name]["one"], t)
            t, _ = timed(lambda: p.batch(docs), time.perf_counter)
            best[p.name]["all"] = min(best[p.name]["all"], t)
    for p in ps:
        best[p.name]["bytes"] = n_bytes
        best[p.name]["tokens"] = n_tokens
    return best


def report(title: str, docs: List[str], results: Dict[str, Dict[str, float]]) -> None:
    n_bytes = next(iter(results.values()))["bytes"]
    n_tokens = next(iter(results.values()))["tokens"]
    print(f"\n{title}: {len(docs)} documents, {n_bytes / 1e6:.1f} MB, {n_tokens:,} tokens")
    print(f"  {'library':<14}{'1 thread MB/s':>14}{'tokens/s':>13}{f'{cores()} threads MB/s':>18}{'tokens/s':>13}")
    for name, r in results.items():
        print(
            f"  {name:<14}{n_bytes / r['one'] / 1e6:>14.1f}{n_tokens / r['one'] / 1e6:>12.2f}M"
            f"{n_bytes / r['all'] / 1e6:>18.1f}{n_tokens / r['all'] / 1e6:>12.2f}M"
        )
    ours = results["functionalbpe"]
    for name, r in results.items():
        if name != "functionalbpe":
            print(f"  {name} time / ours: {r['one'] / ours['one']:.2f}x on one thread, {r['all'] / ours['all']:.2f}x on all")


def hostile(tok: fb.Tokenizer, ordinary: List[str], repeat: int, cpu: bool) -> None:
    clock = time.process_time if cpu else time.perf_counter
    text = "".join(ordinary)
    n = len(text.encode("utf-8"))
    base = min(timed(lambda: tok.encode_ordinary(text, threads=1), clock)[0] for _ in range(repeat)) / n
    print(f"\nHostile inputs (one text of 1 MB each) against ordinary text ({1 / base / 1e6:.1f} MB/s):")
    for name, unit in [("spaces", " "), ("one letter", "x"), ("newlines", "\n"), ("^", "^"), ("'s", "'s")]:
        s = unit * (1_000_000 // len(unit))
        t = min(timed(lambda: tok.encode_ordinary(s, threads=1), clock)[0] for _ in range(repeat))
        print(f"  {name:<12}{len(s) / t / 1e6:>9.1f} MB/s   {t / len(s) / base:>5.2f}x the time of ordinary text")


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--peers" in argv:  # production vocabularies on fresh text: bench_encode_peers.py
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from bench_encode_peers import main as peers_main

        return peers_main([a for a in argv if a != "--peers"])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocab-size", type=int, default=32768)
    parser.add_argument("--max-mb", type=float, default=8.0, help="megabytes of each corpus (default 8)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--text", action="append", default=[], help="natural-language files (default: corpora nl/en.txt)")
    parser.add_argument("--tokenizer", help="a saved tokenizer to use instead of training one")
    parser.add_argument("--cpu", action="store_true", help="time one-thread runs in CPU time, not wall time")
    args = parser.parse_args(argv)
    print(f"functionalbpe {fb.__version__}: {fb.core._native.NATIVE.describe()}", file=sys.stderr)

    max_bytes = int(args.max_mb * 1e6)
    code = read_documents(stdlib_sources(), max_bytes, split=False)
    nl_files = natural_language_files(args.text)
    prose = read_documents(nl_files, max_bytes, split=True) if nl_files else []

    versions = {}
    for name in ("tiktoken", "tokenizers"):
        try:
            versions[name] = __import__(name).__version__
        except ImportError:
            versions[name] = "not installed"
    print(f"functionalbpe {fb.__version__} (compiled encoder: {NATIVE.encoder is not None}), "
          f"tiktoken {versions['tiktoken']}, tokenizers {versions['tokenizers']}; "
          f"Python {platform.python_version()}, {cores()} cores, {platform.machine()}")
    if args.tokenizer:
        tok, origin = fb.Tokenizer.load(args.tokenizer), f"loaded from {args.tokenizer}"
    else:
        tok, origin = tokenizer_for(code + prose, args.vocab_size)
    scanner = tok._encoder.scanner or "none (regex pieces)"
    print(f"tokenizer: {tok.vocab_size} ids, pattern {tok.scheme.pattern_name}, {origin}; C scanner: {scanner}")

    import tempfile

    with tempfile.TemporaryDirectory() as workdir:
        ps = peers(tok, workdir)
        report("Standard library (.py)", code, measure(ps, code, args.repeat, args.cpu))
        if prose:
            report(f"Natural language ({', '.join(os.path.basename(p) for p in nl_files)})", prose,
                   measure(ps, prose, args.repeat, args.cpu))
        else:
            print("\n(no natural-language text: pass --text FILE or set FUNCTIONALBPE_CORPORA)")
    hostile(tok, code[: max(1, len(code) // 8)], args.repeat, args.cpu)
    return 0


if __name__ == "__main__":
    sys.exit(main())
