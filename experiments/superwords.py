"""Superwords on held-out text: tokens per byte of SuperBPE against plain BPE at the same
vocabulary, the share of superword tokens, and training time — one command.

    python experiments/superwords.py [--corpora DIR] [--vocab-size 32768] [--t 0.4 0.6 ...]
        [--test OTHER] [--without-rules]

Each corpus is split into paragraphs (``splits.py``: every tenth held out, the verbatim
overlap reported); plain BPE and SuperBPE (``train(superwords=t)``, SuperBPE's published
stage-two rules unless ``--without-rules`` adds rows without them) are trained on the rest
with the same vocabulary size, and the held-out paragraphs — of ``--test`` when given, a
corpus of another domain — are encoded by both. Times are single runs: read them as rough.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, str(ROOT))

import functionalbpe as fb  # noqa: E402
from functionalbpe.core.wordrules import NO_RULES, count_words  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # splits.py beside this script
from splits import documents, overlap, split, without_leaks  # noqa: E402

DEFAULT_CORPORA = Path(os.environ.get("FUNCTIONALBPE_CORPORA", ROOT.parent / "shared" / "corpora"))
CORPORA = ["nl/en.txt", "code/python.txt"]


def superword_share(tok: fb.Tokenizer, first_superword_id: int, ids: List[int]) -> float:
    """The share of tokens that are stage-two merges crossing a space (superwords)."""
    crossing = [i for i in ids if i >= first_superword_id and b" " in tok.token_bytes(i).strip(b" ")]
    return len(crossing) / len(ids) if ids else 0.0


def encode_seconds(tok: fb.Tokenizer, docs: List[str]) -> float:
    """One pass over ``docs`` after a warm-up on the first tenth of them (single runs)."""
    tok.encode_batch(docs[: max(1, len(docs) // 10)])
    start = time.perf_counter()
    tok.encode_batch(docs)
    return time.perf_counter() - start


def held_out(path: Path, chars: int) -> Tuple[List[str], List[str], float]:
    """The training documents, the held-out ones (leaked ones dropped) and the overlap found
    before dropping them."""
    text = path.read_text(encoding="utf-8")[:chars]
    train, held = split(documents(text, str(path)))
    held, leak = without_leaks(train, held, str(path))  # boilerplate: licence headers, docstrings
    return train, held, leak


def row(tok: fb.Tokenizer, seconds: float, held: List[str], held_bytes: int, plain: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    ids = [i for doc in tok.encode_batch(held) for i in doc]
    out: Dict[str, Any] = {"seconds": round(seconds, 2), "vocab": tok.vocab_size, "tokens_per_byte": len(ids) / held_bytes,
                           "encode_seconds": encode_seconds(tok, held)}
    if plain is not None:
        assert all(tok.decode(tok.encode(d)) == d for d in held[:50]), "not lossless"
        first = tok.training["continued_from"]["vocab_size"]
        new = [tok.token_bytes(i) for i in range(first, tok.vocab_size) if i not in tok.special_tokens.values()]
        out.update(superword_share=superword_share(tok, first, ids),
                   over_4_words=sum(count_words(t) > 4 for t in new), colon_space=sum(b": " in t for t in new))
    return out


def measure(path: Path, test: Optional[Path], chars: int, vocab_size: int, ts: List[int],
            without_rules: bool) -> Dict[str, Any]:
    train, held, leak = held_out(path, chars)
    if test is not None:  # another domain: its own held-out documents (none of them trained on)
        _, held, _ = held_out(test, chars)
        leak = overlap(train, held)
    held_bytes = sum(len(d.encode("utf-8")) for d in held)
    start = time.perf_counter()
    plain = fb.train(train, vocab_size=vocab_size, progress=False)
    rows: Dict[str, Any] = {"overlap_found": leak, "overlap": overlap(train, held), "held_bytes": held_bytes, "train_bytes": sum(len(d.encode()) for d in train)}
    rows["plain"] = row(plain, time.perf_counter() - start, held, held_bytes, None)
    for t in ts:
        for rules in ([None, NO_RULES] if without_rules else [None]):
            start = time.perf_counter()
            tok = fb.train(train, vocab_size=vocab_size, superwords=t, token_rules=rules, progress=False)
            name = f"t={t}" + (", no rules" if rules is NO_RULES else "")
            rows[name] = row(tok, time.perf_counter() - start, held, held_bytes, rows["plain"])
    return rows


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--corpus", nargs="+", default=CORPORA)
    parser.add_argument("--test", default=None, help="measure on the held-out documents of this corpus instead")
    parser.add_argument("--chars", type=int, default=3_000_000)
    parser.add_argument("--vocab-size", type=int, default=32768)
    parser.add_argument("--t", type=float, nargs="+", default=[0.75, 0.875],
                        help="transition points: ids, or fractions of --vocab-size when below 1")
    parser.add_argument("--without-rules", action="store_true",
                        help="also train each t without SuperBPE's stage-two rules (4 words, no ': ')")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    print(f"functionalbpe {fb.__version__}: {fb.core._native.NATIVE.describe()}", file=sys.stderr)
    ts = [int(round(t * args.vocab_size)) if t < 1 else int(t) for t in args.t]
    results = {}
    for name in args.corpus:
        test = None if args.test is None else args.corpora / args.test
        results[name] = measure(args.corpora / name, test, args.chars, args.vocab_size, ts, args.without_rules)
        rows = results[name]
        print(f"\n{name} (trained on {rows['train_bytes']:,} bytes), tested on {args.test or name}: held-out "
              f"{rows['held_bytes']:,} bytes, overlap {rows['overlap']:.2%} (found {rows['overlap_found']:.2%}, "
              "the verbatim ones dropped)")
        print("| tokenizer | ids | tokens/byte | vs plain | superword tokens | new tokens > 4 words | new tokens "
              "with ': ' | training s | × plain | encoding × plain |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        base = rows["plain"]
        for key, r in rows.items():
            if isinstance(r, dict):
                extra = ["–"] * 3 if "superword_share" not in r else [
                    f"{r['superword_share']:.1%}", str(r["over_4_words"]), str(r["colon_space"])]
                print(f"| {key} | {r['vocab']:,} | {r['tokens_per_byte']:.4f} | "
                      f"{r['tokens_per_byte'] / base['tokens_per_byte'] - 1:+.1%} | {' | '.join(extra)} | "
                      f"{r['seconds']} | {r['seconds'] / base['seconds']:.1f} | "
                      f"{r['encode_seconds'] / base['encode_seconds']:.1f} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
