"""What loading a large vocabulary costs: peak memory over the file's size, seconds per million merges.

    python benchmarks/bench_load.py                       # 1M merges: load, from_hf, from_gpt2
    python benchmarks/bench_load.py --merges 4100000 --only load    # near the limit of 2**22 ids
    python benchmarks/bench_load.py --dir /tmp/loads      # keep the files between runs
    python benchmarks/bench_load.py --layouts             # encoding: compact tables vs wide

The files are made deterministically (``--seed``) from random merges of short tokens: each
merge joins two earlier tokens into a new one of at most 12 bytes of ASCII letters, digits,
space and punctuation (as most tokens of real vocabularies are), never one that exists, so
every token has its own bytes (as an HF vocab needs). They are written by the library
itself: ``save`` (ids as trained here), and in GPT-2's layout of ids (the bytes in the order
of their printable stand-ins, as GPT-2's, RoBERTa's and Llama 3's files have them) ``to_hf``
(a ``tokenizer.json``) and GPT-2's ``encoder.json`` + ``vocab.bpe`` as ``get_vocab`` and
``merges`` give them.

Each load runs in a fresh interpreter that has already imported functionalbpe and numpy. It
reports:

* **peak**: ``VmHWM`` (the peak resident set, /proc/self/status) after the load less
  ``VmRSS`` before it, i.e. the most memory the call held at any moment above what the
  interpreter held before, and that divided by the file's size (for GPT-2: both files);
* **kept**: ``VmRSS`` after the load (the tokenizer alive, the garbage collected) less before;
* **cpu**: user + system CPU time of the call, and that per million merges; **wall** beside it.

Figures depend on the machine and its load; say which when quoting them.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
from typing import Any, Callable, Dict, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, ROOT)

MAX_TOKEN = 12  # bytes: the sums of a million short tokens stay far from the 64 MiB limit
ALPHABET = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,"

CALLS = {
    "load": "fb.Tokenizer.load({a!r})",
    "from_hf": "fb.Tokenizer.from_hf({a!r})",
    "from_gpt2": "fb.Tokenizer.from_gpt2({a!r}, {b!r})",
}

CHILD = r"""
import gc, os, resource, sys, time
import numpy, functionalbpe as fb

def status():
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024
    return fields

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

gc.collect()
before = status()["VmRSS"]
c0, t0 = cpu(), time.perf_counter()
tok = CALL
c1, t1 = cpu(), time.perf_counter()
peak = status()["VmHWM"]
gc.collect()
kept = status()["VmRSS"]
print(len(tok), peak - before, kept - before, c1 - c0, t1 - t0)
"""


def make_merges(n: int, seed: int) -> List[Tuple[int, int]]:
    """``n`` merges of two earlier tokens, each making a token of at most MAX_TOKEN bytes that
    no earlier id has."""
    rng = random.Random(seed)
    tokens: List[bytes] = [bytes([b]) for b in range(256)]
    seen = set(tokens)
    short: List[int] = list(ALPHABET)  # ids that can still be the left or right of a merge
    merges: List[Tuple[int, int]] = []
    while len(merges) < n:
        a, b = rng.choice(short), rng.choice(short)
        t = tokens[a] + tokens[b]
        if len(t) > MAX_TOKEN or t in seen:
            continue
        seen.add(t)
        merges.append((a, b))
        if len(t) <= MAX_TOKEN // 2:
            short.append(len(tokens))
        tokens.append(t)
    return merges


def gpt2_byte_ids() -> List[int]:
    """Each byte's id in GPT-2's files: the bytes that stand for themselves first, in order."""
    from functionalbpe.formats.bytelevel import bytes_to_unicode

    chars = bytes_to_unicode()
    order = [b for b in range(256) if ord(chars[b]) == b] + [b for b in range(256) if ord(chars[b]) != b]
    ids = [0] * 256
    for rank, b in enumerate(order):
        ids[b] = rank
    return ids


def make_files(directory: str, n: int, seed: int, calls: List[str]) -> Dict[str, Tuple[str, ...]]:
    """The files of ``calls`` for the same ``n`` merges (made once per directory, size and seed)."""
    import functionalbpe as fb

    base = os.path.join(directory, f"m{n}_s{seed}")
    files = {
        "load": (base + ".json",),
        "from_hf": (base + "_hf.json",),
        "from_gpt2": (base + "_encoder.json", base + "_vocab.bpe"),
    }
    missing = [call for call in calls if not all(os.path.exists(p) for p in files[call])]
    if not missing:
        return files
    merges = make_merges(n, seed)
    if "load" in missing:
        fb.Tokenizer(fb.make_scheme("plain"), merges, special_tokens=["<|endoftext|>"]).save(files["load"][0])
    if missing == ["load"]:
        return files
    tok = fb.Tokenizer(fb.make_scheme("plain"), merges, special_tokens=["<|endoftext|>"], byte_ids=gpt2_byte_ids())
    del merges
    if "from_hf" in missing:
        tok.to_hf(files["from_hf"][0])
    if "from_gpt2" in missing:
        encoder, bpe = files["from_gpt2"]
        with open(encoder, "w", encoding="utf-8") as f:
            json.dump(tok.get_vocab(), f, ensure_ascii=False)
        with open(bpe, "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n")
            f.writelines(" ".join(tok.id_to_token(i) for i in m) + "\n" for m in tok.merges)
    return files


def measure(call: str, paths: Tuple[str, ...]) -> Tuple[int, int, int, float, float]:
    code = CHILD.replace("CALL", CALLS[call].format(a=paths[0], b=paths[-1]))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    ids, peak, kept, cpu, wall = out.stdout.split()
    return int(ids), int(peak), int(kept), float(cpu), float(wall)


def compare_layouts(path: str, corpus: str, rounds: int) -> None:
    """What the compact tables (a vocabulary of 2**19 tokens or more) cost in encoding: the
    same merges in both layouts, each round a fresh slice of 20,000 pieces of ``corpus`` cut
    by gpt4's pattern encoded by each (``encode_pieces``; each table has its own cache), the
    median of the paired ratios (../shared/tools/paired.py)."""
    import regex

    import functionalbpe as fb
    from functionalbpe.core._native import NATIVE
    from functionalbpe.text.patterns import GPT4

    sys.path.insert(0, os.path.join(os.path.dirname(ROOT), "shared", "tools"))
    from paired import paired

    merges = [tuple(m) for m in fb.Tokenizer.load(path).merges]
    wide, compact = (NATIVE.encoder.BPE([], merges, compact=c) for c in (False, True))
    with open(corpus, encoding="utf-8") as f:
        pieces = regex.findall(GPT4, f.read())
    chunks = [pieces[k:k + 20_000] for k in range(0, len(pieces), 20_000)]
    rounds = min(rounds, len(chunks) // 2 - 1)
    if rounds < 3:
        raise SystemExit(f"{corpus}: too short for 3 rounds of 20,000 fresh pieces")
    assert wide.encode_pieces(chunks[-1]) == compact.encode_pieces(chunks[-1])
    turn = {"wide": 0, "compact": 0}

    def next_chunk(name: str, bpe: Any) -> Callable[[], Any]:
        def run() -> Any:
            turn[name] += 1
            return bpe.encode_pieces(chunks[turn[name] - 1])
        return run

    result = paired(next_chunk("compact", compact), next_chunk("wide", wide), n=rounds)
    print(f"{len(merges):,} merges, {corpus}: wide time / compact time {result}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--merges", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=sorted(CALLS), action="append", help="the calls to measure (all by default)")
    ap.add_argument("--runs", type=int, default=1, help="fresh interpreters per call")
    ap.add_argument("--dir", help="where the files are made and kept (a temporary directory by default)")
    ap.add_argument("--layouts", action="store_true",
                    help="instead: encoding with the compact tables against the wide ones")
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(ROOT), "shared", "corpora", "nl", "en.txt"),
                    help="the text --layouts encodes")
    args = ap.parse_args()
    calls = args.only or list(CALLS)
    with tempfile.TemporaryDirectory() as tmp:
        if args.layouts:
            compare_layouts(make_files(args.dir or tmp, args.merges, args.seed, ["load"])["load"][0], args.corpus, 13)
            return
        files = make_files(args.dir or tmp, args.merges, args.seed, calls)
        print(f"{args.merges:,} merges, seed {args.seed}; peak = VmHWM after less VmRSS before, kept = VmRSS after")
        print(f"{'call':<10} {'file MB':>8} {'peak MB':>8} {'x file':>7} {'kept MB':>8} {'cpu s':>6} {'s/M merges':>10} {'wall s':>7}")
        for call in calls:
            size = sum(os.path.getsize(p) for p in files[call])
            for _ in range(args.runs):
                _ids, peak, kept, cpu, wall = measure(call, files[call])
                print(f"{call:<10} {size / 1e6:8.1f} {peak / 1e6:8.1f} {peak / size:7.2f} {kept / 1e6:8.1f} "
                      f"{cpu:6.2f} {cpu / args.merges * 1e6:10.2f} {wall:7.2f}")


if __name__ == "__main__":
    main()
