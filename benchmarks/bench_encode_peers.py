"""Production vocabularies on fresh text: functionalbpe against tiktoken, quicktok and fastokens.

    python benchmarks/bench_encode.py --peers                  # cl100k and o200k, every row, 3 runs
    python benchmarks/bench_encode.py --peers --vocab o200k_base --rows en,zh-CN --runs 5

Every peer is optional and left out, saying so, when it is not installed. The ranks are
cl100k_base and o200k_base as shipped (gzipped) in bpe-openai's wheel, or ``--ranks-dir``
holding ``<name>.tiktoken`` files: ours reads them with ``Tokenizer.from_tiktoken``,
fastokens with its own ``Tokenizer.from_tiktoken``, tiktoken gets ours through
``as_tiktoken_encoding()``, quicktok uses the same encodings bundled in its wheel.

**Fresh text.** Encoding the same text again and again measures caches, not encoders. Each
measurement is a new process that loads one library, encodes the first quarter of the
corpus (so that common pieces are cached, as in a long job), then encodes the rest, text it
has never seen, once (at most ``--max-mb``, cut at a line end), with ``encode_ordinary``:
one call, whatever threads the library uses for it (ours: all cores above 128 KiB; pass
``--threads 1`` to keep ours on one). Wall time is that call's; CPU time is the process's
over the call (all its threads), so bytes per CPU-second is the work per core.

**The load.** Each vocabulary's section names the machine's one-minute load average when it
started, and the last line the load at the end: on a shared machine another job's load
moves the ratios by more than most differences between rows.

**Ids first.** Each process also hands back a digest of its ids; a peer whose ids differ
from ours on a row is flagged and its ratio is not printed.

Rows: English, Python and JavaScript code, zh-CN, ja, ru, ar from the shared corpora, and
all 22 languages mixed (the first quarter of each file to warm up, equal shares of the rest).
**Paired rounds.** A shared machine's speed drifts by more than the differences measured, so
the processes are run in rounds: each round runs one process per library back to back (the
order turned by one each round), and a ratio is taken within a round. Printed: MB/s (wall
and CPU, medians of ``--runs`` rounds) and ours ÷ each peer as the median of the rounds'
ratios, the range of the wall ratios beside it; above 1 means we are faster. Ratios only:
nothing here asserts a time.

**Two builds.** ``--against DIR`` measures another checkout of functionalbpe, built in place
(``python setup.py build_ext --inplace``), as the library ``before``: each of its processes
imports DIR's package, each of ours this checkout's, and ``before``'s ratio is this build's
speed over that one's, paired the same way::

    python benchmarks/bench_encode_peers.py --against ../base --libraries functionalbpe \
        --vocab o200k_base --rows en,js --threads 1 --runs 9
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from typing import Callable, Dict, List, Optional, Sequence, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCABS = {"cl100k_base": "gpt4", "o200k_base": "o200k"}
ROWS = {"en": "nl/en.txt", "python": "code/python.txt", "js": "code/js.txt", "zh-CN": "nl/zh-CN.txt",
        "ja": "nl/ja.txt", "ru": "nl/ru.txt", "ar": "nl/ar.txt", "22 languages": "nl/*"}
LIBRARIES = ("functionalbpe", "tiktoken", "quicktok", "fastokens")
BEFORE = "before"  # --against: another checkout of functionalbpe


def corpora_dir() -> Optional[str]:
    env = os.environ.get("FUNCTIONALBPE_CORPORA")
    for base in filter(None, [env, os.path.join(ROOT, "..", "shared", "corpora"), "/work/shared/corpora"]):
        if os.path.isdir(os.path.join(base, "nl")):
            return base
    return None


def _cut_at_line(text: str, chars: int) -> str:
    if len(text) <= chars:
        return text
    end = text.find("\n", chars)
    return text if end < 0 else text[: end + 1]


def warm_and_fresh(corpora: str, row: str, max_bytes: int) -> Tuple[str, str]:
    """The warm-up text (the first quarter of the corpus) and the fresh text (what follows,
    at most about ``max_bytes``)."""
    spec = ROWS[row]
    if spec.endswith("*"):
        folder = os.path.join(corpora, spec[:-2])
        files = sorted(f for f in os.listdir(folder) if f.endswith(".txt"))
        warm, fresh = [], []
        for name in files:
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                text = fh.read()
            q = len(text) // 4
            warm.append(text[:q])
            rest = text[q:]
            share = max_bytes // len(files)
            # a character is 1-3 bytes here: cut by bytes, at a line end
            fresh.append(_cut_at_line(rest, len(rest.encode("utf-8")[:share].decode("utf-8", "ignore"))))
        return "".join(warm), "".join(fresh)
    with open(os.path.join(corpora, spec), encoding="utf-8") as fh:
        text = fh.read()
    q = len(text) // 4
    rest = text[q:]
    chars = len(rest.encode("utf-8")[:max_bytes].decode("utf-8", "ignore"))
    return text[:q], _cut_at_line(rest, chars)


def rank_file(vocab: str, ranks_dir: Optional[str], workdir: str) -> Optional[str]:
    if ranks_dir:
        path = os.path.join(ranks_dir, f"{vocab}.tiktoken")
        return path if os.path.exists(path) else None
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or spec.origin is None:
        return None
    packed = os.path.join(os.path.dirname(spec.origin), "data", f"{vocab}.tiktoken.gz")
    if not os.path.exists(packed):
        return None
    path = os.path.join(workdir, f"{vocab}.tiktoken")
    if not os.path.exists(path):
        with gzip.open(packed, "rb") as src, open(path, "wb") as dst:
            dst.write(src.read())
    return path


def encoder_of(library: str, vocab: str, ranks: str, threads: Optional[int]) -> Callable[[str], List[int]]:
    """The library's one-call ``encode_ordinary`` for the vocabulary (ImportError if absent)."""
    pattern = VOCABS[vocab]
    if library == "functionalbpe":
        if importlib.util.find_spec("functionalbpe") is None:
            sys.path.insert(0, ROOT)
        import functionalbpe as fb

        tok = fb.Tokenizer.from_tiktoken(ranks, pattern=pattern)
        return lambda text: tok.encode_ordinary(text, threads=threads)
    if library == "tiktoken":
        import tiktoken  # noqa: F401  (as_tiktoken_encoding needs it)

        if importlib.util.find_spec("functionalbpe") is None:
            sys.path.insert(0, ROOT)
        import functionalbpe as fb

        enc = fb.Tokenizer.from_tiktoken(ranks, pattern=pattern).as_tiktoken_encoding(vocab)
        return enc.encode_ordinary
    if library == "quicktok":
        import quicktok

        return quicktok.get_encoding(vocab).encode_ordinary
    if library == "fastokens":
        import fastokens

        ft = fastokens.Tokenizer.from_tiktoken(ranks, encoding=vocab)
        return lambda text: ft.encode_ordinary(text).ids  # an Encoding, as HF's
    raise ValueError(f"unknown library {library!r}")


def pin_to_one_cpu() -> None:
    """Run this process, and every thread it starts from now on, on one CPU (before a library
    is loaded, so that a thread pool sized by the CPUs it may use has one); nothing where the
    platform cannot."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def child(library: str, vocab: str, ranks: str, row: str, corpora: str, max_bytes: int, threads: Optional[int],
          one_core: bool = False) -> Dict:
    """One measurement, in a process of its own: warm up, then one call on fresh text; with
    one_core, on one CPU (pin_to_one_cpu)."""
    if one_core:
        pin_to_one_cpu()
    encode = encoder_of(library, vocab, ranks, threads)
    warm, fresh = warm_and_fresh(corpora, row, max_bytes)
    encode(warm)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    ids = encode(fresh)
    wall1, cpu1 = time.perf_counter(), time.process_time()
    digest = hashlib.sha256(array("I", ids).tobytes()).hexdigest()
    return {"bytes": len(fresh.encode("utf-8")), "ids": len(ids), "digest": digest,
            "wall": wall1 - wall0, "cpu": cpu1 - cpu0}


def run_child(args: argparse.Namespace, library: str, vocab: str, ranks: str, row: str, corpora: str) -> Optional[Dict]:
    env = None
    if args.against:  # both builds named: this checkout's package, or the other's (`before`)
        tree = os.path.abspath(args.against) if library == BEFORE else ROOT
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [tree, os.environ.get("PYTHONPATH")])))
        library = "functionalbpe" if library == BEFORE else library
    cmd = [sys.executable, os.path.abspath(__file__), "--child", library, vocab, ranks, row, corpora,
           str(int(args.max_mb * 1e6)), str(args.threads or 0), str(int(args.one_core))]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        if "ModuleNotFoundError" in last or "ImportError" in last:
            return None
        raise RuntimeError(f"{library} on {row} ({vocab}) failed: {last}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure_row(args: argparse.Namespace, libraries: Sequence[str], vocab: str, ranks: str, row: str,
                corpora: str) -> Dict[str, List[Dict]]:
    """``args.runs`` rounds; in each, one process per library, back to back, the order turned
    by one library each round, so that a library's k-th run and ours are minutes apart at
    most, never a whole library's runs apart. A library that is not installed is left out."""
    runs: Dict[str, List[Dict]] = {}
    missing = set()
    for k in range(args.runs):
        order = list(libraries[k % len(libraries):]) + list(libraries[: k % len(libraries)]) if libraries else []
        for lib in order:
            if lib in missing:
                continue
            r = run_child(args, lib, vocab, ranks, row, corpora)
            if r is None:
                missing.add(lib)
                continue
            runs.setdefault(lib, []).append(r)
    return runs


def paired_ratios(ours: List[Dict], peer: List[Dict]) -> str:
    """The median over rounds of peer time ÷ our time in the same round, wall and CPU, with
    the range of the wall ratios: drift between rounds cancels within each."""
    wall = [p["wall"] / o["wall"] for o, p in zip(ours, peer)]
    cpu = [p["cpu"] / o["cpu"] for o, p in zip(ours, peer)]
    return f"{statistics.median(wall):.2f}x [{min(wall):.2f}-{max(wall):.2f}], {statistics.median(cpu):.2f}x"


def versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for dist in ("functionalbpe", "tiktoken", "quicktok-v1", "fastokens", "bpe-openai"):
        try:
            out.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            out.append(f"{dist} not installed")
    return ", ".join(out)


def load_average() -> str:
    """The one-minute load average, or "unknown" where the platform has none: the other
    jobs of a shared machine move these ratios by more than most differences between rows,
    so each section says what it ran beside."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (AttributeError, OSError):
        return "unknown"


def revision(tree: str) -> str:
    """The checkout's commit, or '?' outside git."""
    done = subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "?"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocab", action="append", choices=sorted(VOCABS), help="default: both")
    parser.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated, of: {', '.join(ROWS)}")
    parser.add_argument("--libraries", default=",".join(LIBRARIES))
    parser.add_argument("--runs", type=int, default=3,
                        help="rounds: in each, one process per library, back to back (default 3)")
    parser.add_argument("--max-mb", type=float, default=2.0, help="fresh text per row (default 2 MB)")
    parser.add_argument("--threads", type=int, default=None, help="our threads for the call (default: all cores)")
    parser.add_argument("--ranks-dir", help="a folder of <vocab>.tiktoken files (default: bpe-openai's wheel)")
    parser.add_argument("--against", metavar="DIR",
                        help="another checkout of functionalbpe, built in place, measured as 'before'")
    parser.add_argument("--one-core", action="store_true",
                        help="every library on one CPU (ours on one thread): the work each does per core, "
                             "which CPU time overstates for a library whose threads wait busily")
    parser.add_argument("--child", nargs=8, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        library, vocab, ranks, row, corpora, max_bytes, threads, one_core = args.child
        print(json.dumps(child(library, vocab, ranks, row, corpora, int(max_bytes), int(threads) or None,
                               one_core == "1")))
        return 0
    if args.one_core:
        args.threads = 1

    corpora = corpora_dir()
    if corpora is None:
        print("no shared corpora found: set FUNCTIONALBPE_CORPORA")
        return 1
    rows = [r for r in args.rows.split(",") if r]
    libraries = [lib for lib in args.libraries.split(",") if lib] + ([BEFORE] if args.against else [])
    print(f"{versions()}; Python {platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}")
    if args.against:
        print(f"before: {os.path.abspath(args.against)} at {revision(args.against)}; ours: {ROOT} at {revision(ROOT)}")
    print(f"fresh text: the first quarter of each corpus encoded first, then at most {args.max_mb} MB "
          f"never seen, once; {args.runs} rounds of one process per library, back to back; MB/s: "
          f"medians; ours ÷ peer: median of the rounds' ratios [range of wall]; ours on "
          f"{args.threads or 'all'} thread(s)" + ("; every library on one CPU" if args.one_core else ""))
    with tempfile.TemporaryDirectory() as workdir:
        for vocab in args.vocab or list(VOCABS):
            ranks = rank_file(vocab, args.ranks_dir, workdir)
            if ranks is None:
                print(f"\n{vocab}: no rank file (install bpe-openai or pass --ranks-dir); left out")
                continue
            print(f"\n{vocab} (pattern {VOCABS[vocab]}; load average {load_average()})")
            head = f"  {'text':<14}{'MB':>6}" + "".join(f"{lib + ' wall':>20}{'CPU':>8}" for lib in libraries)
            print(head + "   MB/s; ours ÷ peer: wall, CPU (>1: we are faster)")
            absent = set()
            for row in rows:
                runs = measure_row(args, [lib for lib in libraries if lib not in absent], vocab, ranks, row, corpora)
                for lib in libraries:
                    if lib not in absent and lib not in runs:
                        absent.add(lib)
                        print(f"  ({lib} left out: not installed)")
                results = {lib: {"bytes": rs[0]["bytes"], "digest": rs[0]["digest"],
                                 "wall": statistics.median(r["wall"] for r in rs),
                                 "cpu": statistics.median(r["cpu"] for r in rs)} for lib, rs in runs.items()}
                ours = results.get("functionalbpe")
                n = next(iter(results.values()))["bytes"] if results else 0
                line = f"  {row:<14}{n / 1e6:>6.2f}"
                ratios = []
                for lib in libraries:
                    r = results.get(lib)
                    if r is None:
                        line += f"{'-':>20}{'-':>8}"
                        continue
                    line += f"{r['bytes'] / r['wall'] / 1e6:>20.1f}{r['bytes'] / r['cpu'] / 1e6:>8.1f}"
                    if ours is not None and lib != "functionalbpe":
                        if any(x["digest"] != ours["digest"] for x in runs[lib]):
                            ratios.append(f"{lib}: OTHER IDS")
                        else:
                            ratios.append(f"{lib} {paired_ratios(runs['functionalbpe'], runs[lib])}")
                print(line + "   " + "; ".join(ratios))
    print(f"\nload average at the end: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
