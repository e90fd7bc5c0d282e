"""What the report's measures cost on top of encoding: the report's time over encoding alone.

Trains one plain tokenizer on a slice of the shared corpora, writes it as a tiktoken rank
file and an HF ``tokenizer.json`` (so the peers encode with their own libraries), then, on
every file of the shared corpora (natural languages, parallel text, code), times

1. encoding alone: each tokenizer's ``encode`` over the same units the report reads;
2. ``fb.report`` with all three, every measure of ``docs/metrics.md`` included;

and prints both and their ratio. Run it alone on the machine::

    python benchmarks/bench_report.py [--limit-mb 5] [--vocab 8192]

``--limit-mb`` reads at most that many MB of each file (default: all of it, about 100 MB).
"""
from __future__ import annotations

import argparse
import os
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import functionalbpe as fb  # noqa: E402
from functionalbpe.measure.adapters import as_report_tokenizer, load_tokenizer  # noqa: E402
from functionalbpe.text.unit_reader import text_units  # noqa: E402

CORPORA = Path(os.environ.get("FUNCTIONALBPE_CORPORA", Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"))


def read(path: Path, limit: int) -> str:
    text = path.read_text(encoding="utf-8")
    if limit and len(text) > limit:
        cut = text.rfind("\n", 0, limit)
        text = text[: cut + 1 if cut > 0 else limit]
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit-mb", type=float, default=0, help="at most this many MB of each file (0: all)")
    ap.add_argument("--vocab", type=int, default=8192)
    args = ap.parse_args()
    print(f"functionalbpe {fb.__version__}: {fb.core._native.NATIVE.describe()}", file=sys.stderr)
    limit = int(args.limit_mb * 2**20)
    files = sorted(p for d in ("nl", "parallel", "code") for p in (CORPORA / d).glob("*.txt"))
    corpora = {f"{p.parent.name}/{p.stem}": read(p, limit) for p in files}
    corpora = {("python" if name == "code/python" else name): text for name, text in corpora.items()}
    total = sum(len(t.encode("utf-8")) for t in corpora.values())
    sample = "".join(t[:200_000] for t in corpora.values())
    tok = fb.train([sample], vocab_size=args.vocab, pattern="gpt4", progress=False)
    with tempfile.TemporaryDirectory() as d:
        tok.to_tiktoken(Path(d) / "ours.tiktoken")
        tok.to_hf(Path(d) / "tokenizer.json")
        tokenizers = {
            "ours": as_report_tokenizer(tok),
            "tiktoken": load_tokenizer(Path(d) / "ours.tiktoken", pattern="gpt4"),
            "hf": load_tokenizer(Path(d) / "tokenizer.json"),
        }
        start = time.perf_counter()
        tokens = 0
        for text in corpora.values():
            for unit, _ in text_units(text):
                for t in tokenizers.values():
                    tokens += len(t.encode(unit))
        encode_s = time.perf_counter() - start
        start = time.perf_counter()
        code = [name for name in corpora if name.startswith("code/") or name == "python"]
        report = fb.report(tokenizers, corpora, code=code, python=["python"], progress=False)
        report.to_json()
        report_s = time.perf_counter() - start
    print(f"{len(corpora)} corpora, {total / 1e6:.1f} MB, {tokens:,} tokens over 3 tokenizers "
          f"(ours {tok.vocab_size} ids, and the same table through tiktoken and HF tokenizers)")
    print(f"encoding alone: {encode_s:.1f} s; the report with every measure: {report_s:.1f} s; "
          f"ratio {report_s / encode_s:.2f}")


if __name__ == "__main__":
    main()
