"""A corpus into a token file: functionalbpe's ``encode_to_file`` against tiktoken, same job.

    python benchmarks/bench_encode_corpus.py                      # the shared corpora, ×1 and ×5
    python benchmarks/bench_encode_corpus.py --corpus DIR --times 1 --json out.json

One tokenizer (32768 ids, ``gpt4`` pattern, ``<|endoftext|>``) is trained on a few MB of the
corpus (or loaded with ``--tokenizer``). Each job runs in a fresh child process, so that its
peak memory (``ru_maxrss``) is its own, and writes the whole corpus into an ``.npy`` file,
each document followed by ``<|endoftext|>``:

* **functionalbpe** — ``tok.encode_to_file(fb.files(corpus), out, eot=...)``, all cores;
* **tiktoken** — our ranks and pattern (``tok.as_tiktoken_encoding()``), the same documents
  read in the same 1 MB blocks, each batch through ``encode_ordinary_batch`` on all cores,
  turned into an array with numpy and appended to the file.

The two alternate (``--repeats``, best time kept) and their files must be byte for byte the
same (checked). Then functionalbpe alone encodes the
corpus repeated ``--times`` times (symbolic links, nothing copied) to show that its peak
memory does not grow with the corpus. ``--one-file`` adds the command line on one big file
(the corpus joined, about 57 MB), text output, against the old way of the command: the whole text read
and encoded at once on one thread. Printed: MB/s, tokens/s, peak RSS, and the ratios.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

EOT = "<|endoftext|>"


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


# -- the jobs, each run in a child process ----------------------------------------------------


def job_ours(tok_path: str, corpus: List[str], out: str) -> Dict[str, Any]:
    import functionalbpe as fb

    tok = fb.Tokenizer.load(tok_path)
    start = time.perf_counter()
    summary = tok.encode_to_file(fb.files(*corpus), out, eot=EOT, progress=False)
    return {"seconds": time.perf_counter() - start, "bytes": summary.bytes_in, "tokens": summary.tokens}


def job_tiktoken(tok_path: str, corpus: List[str], out: str) -> Dict[str, Any]:
    import numpy as np

    import functionalbpe as fb
    from functionalbpe.formats import tokenfiles
    from functionalbpe.pipeline import tokenfile
    from functionalbpe.text.corpus import Files

    tok = fb.Tokenizer.load(tok_path)
    enc = tok.as_tiktoken_encoding()
    eot = tok.special_tokens[EOT]
    dtype = np.dtype("<u2")
    threads = cores()
    found = fb.files(*corpus)
    blocks = Files(found.paths, block_bytes=tokenfile.UNIT_BYTES)
    start = time.perf_counter()
    size = tokens = 0
    with open(out, "wb") as fh:
        fh.write(tokenfiles.header_for("npy", dtype, 0))

        def flush(texts: List[str], ends: List[bool]) -> int:
            flat: List[int] = []
            for ids, last in zip(enc.encode_ordinary_batch(texts, num_threads=threads), ends):
                flat += ids
                if last:
                    flat.append(eot)
            np.array(flat, dtype=dtype).tofile(fh)
            return len(flat)

        texts: List[str] = []
        ends: List[bool] = []
        pending = 0
        for unit, last in blocks.document_units([EOT]):
            text = unit if isinstance(unit, str) else unit.decode("utf-8")
            texts.append(text)
            ends.append(last)
            pending += len(unit) if isinstance(unit, bytes) else len(text.encode("utf-8"))
            if pending >= 4 << 20:
                tokens += flush(texts, ends)
                size += pending
                texts, ends, pending = [], [], 0
        if texts:
            tokens += flush(texts, ends)
            size += pending
        fh.seek(0)
        fh.write(tokenfiles.header_for("npy", dtype, tokens))
    return {"seconds": time.perf_counter() - start, "bytes": size, "tokens": tokens}


def job_cli(tok_path: str, corpus: List[str], out: str) -> Dict[str, Any]:
    from functionalbpe.cli import main

    start = time.perf_counter()
    with open(out, "wb") as fh:
        old = os.dup(1)
        os.dup2(fh.fileno(), 1)
        try:
            code = main(["encode", "-t", tok_path, *corpus, "-q"])
            sys.stdout.flush()
        finally:
            os.dup2(old, 1)
    assert code == 0
    return {"seconds": time.perf_counter() - start, "bytes": sum(os.path.getsize(p) for p in corpus), "tokens": None}


def job_old_cli(tok_path: str, corpus: List[str], out: str) -> Dict[str, Any]:
    """What ``encode`` did before it streamed: read the whole file, encode it on one thread,
    write one line of ids."""
    import functionalbpe as fb
    from functionalbpe.text.corpus import read_text

    tok = fb.Tokenizer.load(tok_path)
    start = time.perf_counter()
    text = read_text(corpus[0])
    line = " ".join(map(str, tok.encode(text))) + "\n"
    with open(out, "w", encoding="ascii") as fh:
        fh.write(line)
    return {"seconds": time.perf_counter() - start, "bytes": len(text.encode("utf-8")), "tokens": None}


JOBS = {"functionalbpe": job_ours, "tiktoken": job_tiktoken, "cli": job_cli, "old-cli": job_old_cli}


def run_child(job: str, tok_path: str, corpus: List[str], out: str) -> Dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", job, "--tokenizer", tok_path, "--out", out, *corpus]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"{job} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the parent -------------------------------------------------------------------------------


def default_corpus() -> str:
    env = os.environ.get("FUNCTIONALBPE_CORPORA")
    return env or os.path.join(os.path.dirname(ROOT), "shared", "corpora")


def repeated(paths: List[str], times: int, where: str) -> List[str]:
    """The files of ``paths``, ``times`` over, as symbolic links (``files`` reads a path once)."""
    import functionalbpe as fb

    found = [os.path.abspath(p) for p in fb.files(*paths).paths]
    out = []
    for k in range(times):
        folder = os.path.join(where, f"copy{k}")
        os.makedirs(folder, exist_ok=True)
        for i, path in enumerate(found):
            link = os.path.join(folder, f"{i:04d}-{os.path.basename(path)}")
            if not os.path.exists(link):
                os.symlink(path, link)
            out.append(link)
    return out


def best(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    fastest = dict(min(runs, key=lambda r: r["seconds"]))
    fastest["peak_mb"] = max(r["peak_mb"] for r in runs)
    fastest["runs"] = len(runs)
    return fastest


def row(name: str, r: Dict[str, Any], base: Optional[Dict[str, Any]] = None) -> str:
    mbs = r["bytes"] / 1e6 / r["seconds"]
    toks = f"{r['tokens'] / r['seconds'] / 1e6:.2f} M" if r.get("tokens") else "–"
    ratio = f"{mbs / (base['bytes'] / 1e6 / base['seconds']):.2f}×" if base else "1.00×"
    return f"| {name} | {r['bytes'] / 1e6:,.1f} MB | {r['seconds']:.2f} s | {mbs:.1f} | {toks} | {ratio} | {r['peak_mb']:.0f} MB |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", nargs="*", help="files or directories (default: the shared corpora)")
    parser.add_argument("--tokenizer", default=None, help="a tokenizer file (default: train one)")
    parser.add_argument("--times", type=int, default=5, help="also encode the corpus this many times over (ours)")
    parser.add_argument("--one-file", action="store_true", help="also the CLI on the corpus joined into one file")
    parser.add_argument("--one-file-mb", type=float, default=57, help="the joined file's size, about (default: 57)")
    parser.add_argument("--repeats", type=int, default=2, help="alternating runs of the two; the best is kept")
    parser.add_argument("--scaling", action="store_true",
                        help="only 1 thread against all, as paired ratios, on .txt, .jsonl and .jsonl.gz (scaling.py)")
    parser.add_argument("--scaling-mb", type=float, default=30, help="the text the scaling rows use, about")
    parser.add_argument("--pairs", type=int, default=7, help="back-to-back pairs per scaling row")
    parser.add_argument("--json", default=None)
    parser.add_argument("--child", choices=sorted(JOBS), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = JOBS[args.child](args.tokenizer, args.corpus, args.out)
        result["peak_mb"] = peak_mb()
        print(json.dumps(result))
        return

    import functionalbpe as fb

    corpus = args.corpus or [default_corpus()]
    work = tempfile.mkdtemp(prefix="bench-encode-corpus-")
    tok_path = args.tokenizer
    if tok_path is None:
        tok_path = os.path.join(work, "tok.json")
        tok = fb.train(fb.files(*corpus, max_doc_chars=300_000), vocab_size=32768, pattern="gpt4",
                       special_tokens=[EOT], progress=False)
        tok.save(tok_path)
    if args.scaling:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import scaling

        docs = scaling.paragraphs(list(fb.files(*corpus)), int(args.scaling_mb * 1e6))
        rows = scaling.encode_scaling(fb.Tokenizer.load(tok_path), docs, n=args.pairs)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"scaling": rows}, fh, indent=1)
        return
    # The two alternate, and the best time of each is kept: a busy machine only ever makes a
    # run slower. Peak memory: the highest of the runs.
    runs: Dict[str, List[Dict[str, Any]]] = {"functionalbpe": [], "tiktoken": []}
    for _ in range(args.repeats):
        runs["functionalbpe"].append(run_child("functionalbpe", tok_path, corpus, os.path.join(work, "ours.npy")))
        runs["tiktoken"].append(run_child("tiktoken", tok_path, corpus, os.path.join(work, "tiktoken.npy")))
    ours, theirs = (best(runs[name]) for name in ("functionalbpe", "tiktoken"))
    with open(os.path.join(work, "ours.npy"), "rb") as a, open(os.path.join(work, "tiktoken.npy"), "rb") as b:
        same = a.read() == b.read()
    results: Dict[str, Any] = {"functionalbpe": ours, "tiktoken": theirs, "same_file": same}
    import tiktoken

    lines = [
        f"Machine: {platform.processor() or platform.machine()}, {cores()} cores, Python {platform.python_version()}, "
        f"tiktoken {tiktoken.__version__}, numpy {__import__('numpy').__version__}. Load average before: "
        f"{os.getloadavg()[0]:.1f}.",
        f"Corpus: {', '.join(corpus)}; vocabulary 32768, pattern gpt4, eot after each document, .npy uint16, "
        f"all cores; best of {args.repeats} alternating runs. Files identical: {same}.",
        "",
        "| job | text | time | MB/s | tokens/s | × tiktoken's MB/s | peak RSS |",
        "|---|---:|---:|---:|---:|---:|---:|",
        row("tiktoken (encode_ordinary_batch + numpy)", theirs),
        row("functionalbpe encode_to_file", ours, theirs),
    ]
    if args.times > 1:
        many = repeated(corpus, args.times, os.path.join(work, "links"))
        big = run_child("functionalbpe", tok_path, many, os.path.join(work, "many.npy"))
        os.unlink(os.path.join(work, "many.npy"))
        results[f"functionalbpe x{args.times}"] = big
        lines.append(row(f"functionalbpe, the corpus {args.times}× over", big, theirs))
    if args.one_file:
        joined = os.path.join(work, "all.txt")
        with open(joined, "wb") as fh:
            for path in fb.files(*corpus).paths:
                if fh.tell() >= args.one_file_mb * 1e6:
                    break
                with open(path, "rb") as src:
                    fh.write(src.read())
        old = run_child("old-cli", tok_path, [joined], os.path.join(work, "old.txt"))
        new = run_child("cli", tok_path, [joined], os.path.join(work, "new.txt"))
        with open(os.path.join(work, "old.txt"), "rb") as a, open(os.path.join(work, "new.txt"), "rb") as b:
            results["one_file_same_output"] = a.read() == b.read()
        results["old-cli"], results["cli"] = old, new
        lines += [
            "",
            f"One file ({old['bytes'] / 1e6:.0f} MB), `functionalbpe encode -t tok.json all.txt > ids.txt` "
            f"(same output: {results['one_file_same_output']}):",
            "",
            "| job | text | time | MB/s | tokens/s | × the old way's MB/s | peak RSS |",
            "|---|---:|---:|---:|---:|---:|---:|",
            row("whole text, one thread (the command before it streamed)", old),
            row("functionalbpe encode (streaming, all cores)", new, old),
        ]
    text = "\n".join(lines)
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
    for name in ("ours.npy", "tiktoken.npy"):
        os.unlink(os.path.join(work, name))


if __name__ == "__main__":
    main()
