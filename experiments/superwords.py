"""Superwords on held-out text: tokens per byte of SuperBPE against plain BPE at the same
vocabulary, the share of superword tokens, and training time — one command.

    python experiments/superwords.py [--corpora DIR] [--vocab-size 32768] [--t 24576 ...]

Each corpus is split into paragraphs (``splits.py``: every tenth held out, the verbatim
overlap reported); plain BPE and SuperBPE (``train(superwords=t)``) are trained on the
rest with the same vocabulary size, and the held-out paragraphs are encoded by both.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, str(ROOT))

import functionalbpe as fb  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # splits.py beside this script
from splits import MAX_OVERLAP, documents, overlap, split  # noqa: E402

DEFAULT_CORPORA = Path(os.environ.get("FUNCTIONALBPE_CORPORA", ROOT.parent / "shared" / "corpora"))
CORPORA = ["nl/en.txt", "code/python.txt"]


def superword_share(tok: fb.Tokenizer, first_superword_id: int, ids: List[int]) -> float:
    """The share of tokens that are stage-two merges crossing a space (superwords)."""
    crossing = [i for i in ids if i >= first_superword_id and b" " in tok.token_bytes(i).strip(b" ")]
    return len(crossing) / len(ids) if ids else 0.0


def measure(path: Path, chars: int, vocab_size: int, ts: List[int]) -> Dict[str, Any]:
    text = path.read_text(encoding="utf-8")[:chars]
    train, held = split(documents(text, str(path)))
    leak = overlap(train, held)
    if leak > MAX_OVERLAP:  # boilerplate (licence headers, repeated docstrings): held out no more
        seen = {" ".join(d.split()) for d in train}
        held = [d for d in held if " ".join(d.split()) not in seen]
        print(f"{path}: {leak:.1%} of the held-out paragraphs were verbatim in training; dropped", file=sys.stderr)
    assert overlap(train, held) <= MAX_OVERLAP
    held_bytes = sum(len(d.encode("utf-8")) for d in held)
    start = time.perf_counter()
    plain = fb.train(train, vocab_size=vocab_size, progress=False)
    rows: Dict[str, Any] = {"overlap": leak, "held_bytes": held_bytes, "plain": {
        "seconds": round(time.perf_counter() - start, 2), "vocab": plain.vocab_size,
        "tokens_per_byte": sum(map(len, plain.encode_batch(held))) / held_bytes}}
    for t in ts:
        start = time.perf_counter()
        tok = fb.train(train, vocab_size=vocab_size, superwords=t, progress=False)
        seconds = time.perf_counter() - start
        ids = [i for doc in tok.encode_batch(held) for i in doc]
        assert all(tok.decode(tok.encode(d)) == d for d in held[:50]), "not lossless"
        rows[f"t={t}"] = {"seconds": round(seconds, 2), "vocab": tok.vocab_size,
                          "tokens_per_byte": len(ids) / held_bytes,
                          "superword_share": superword_share(tok, tok.training["continued_from"]["vocab_size"], ids)}
    return rows


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--corpus", nargs="+", default=CORPORA)
    parser.add_argument("--chars", type=int, default=3_000_000)
    parser.add_argument("--vocab-size", type=int, default=32768)
    parser.add_argument("--t", type=int, nargs="+", default=[24576, 28672])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    print(f"functionalbpe {fb.__version__}: {fb.core._native.NATIVE.describe()}", file=sys.stderr)
    results = {}
    for name in args.corpus:
        results[name] = measure(args.corpora / name, args.chars, args.vocab_size, args.t)
        rows = results[name]
        print(f"\n{name}: held-out {rows['held_bytes']:,} bytes, overlap {rows['overlap']:.2%}")
        print("| tokenizer | ids | tokens/byte | vs plain | superword tokens | training s |\n|---|---:|---:|---:|---:|---:|")
        base = rows["plain"]["tokens_per_byte"]
        for key, row in rows.items():
            if isinstance(row, dict):
                share = f"{row['superword_share']:.1%}" if "superword_share" in row else "–"
                print(f"| {key} | {row['vocab']:,} | {row['tokens_per_byte']:.4f} | "
                      f"{row['tokens_per_byte'] / base - 1:+.1%} | {share} | {row['seconds']} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
