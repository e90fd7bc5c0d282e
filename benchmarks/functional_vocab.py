"""Does the Functionalizer shrink the vocabulary? Plain vs functional vs repeat-only.

For each corpus (the first ``--mb`` MB of a file of ``../shared/corpora``, cut at a line end;
every 10th paragraph held out):

* **ids to cover the corpus**: BPE on the training part until no pair is left
  (``vocab_size=None``); the count is 256 bytes + the scheme's atoms + the merges, i.e. every
  id the tokenizer needs so that each training piece is one token (each instruction piece,
  too). This is the paper's "vocabulary slots needed to cover the corpus fully".
* **tokens per byte at a fixed vocabulary** (``--vocab``, the same total number of ids for
  every scheme, so the functional schemes pay for their 273 atoms): on the held-out part.
* **training time** (``--time``): ``fb.train`` end to end, best of ``--repeat`` runs,
  alternating, of the plain scheme with its own pattern (gpt4), the plain scheme with the
  functionalizer split, and the functional scheme, on this Python's standard library (what
  ``functionalbpe demo`` trains on) or ``--time-corpus code/python.txt``.

For the vocabulary and tokens, all schemes use the paper's own split
(``pattern="functionalizer"``), so the difference is the transform alone (the paper's
"split-only" baseline). Run::

    python benchmarks/functional_vocab.py --mb 1 --vocab 8192 --time
    python benchmarks/functional_vocab.py --files --time --repeat 5   # training time only
    python benchmarks/functional_vocab.py --files --time --time-corpus code/python.txt
"""
from __future__ import annotations

import argparse
import os
import importlib.util
import sys
import time
from pathlib import Path

if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import functionalbpe as fb  # noqa: E402
from functionalbpe.core._native import NATIVE  # noqa: E402
from functionalbpe.tokenizer import Tokenizer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPORA = Path(os.environ.get("FUNCTIONALBPE_CORPORA", ROOT.parent / "shared" / "corpora"))
CORPORA = ["code/python.txt", "nl/en.txt", "nl/de.txt", "nl/vi.txt", "nl/ru.txt"]
CONFIGS = {
    "plain": dict(scheme="plain"),
    "functional": dict(scheme="functional"),
    "repeat-only": dict(scheme="functional", case=False, diacritics=False),
    # instructions kept with their base, and allowed to merge with it
    "functional, joined, free": dict(scheme="functional", split_operators=False, merge_policy="free"),
}
PAPER = (
    "Paper (v1, 128k target, BPE to exhaustion, split-only baseline): ids to cover, "
    "Wikitext −15.6%, Python-Codes −16.1%, TinyStories −10.0%, CSN-Python −12.7%, "
    "CSN-Java −12.9%, CSN-Go −2.9%; tokens: prose +6.4% to +9.0%, CSN-Python −26.8%, "
    "CSN-Java −8.4%; repeat-only changes the vocabulary by under 3%."
)


def load(path: Path, mb: float):
    text = path.read_text(encoding="utf-8")
    limit = int(mb * 1_000_000)
    if len(text) > limit:
        text = text[: text.rfind("\n", 0, limit) + 1]
    paragraphs = text.split("\n\n")
    train = [p + "\n\n" for i, p in enumerate(paragraphs) if i % 10 != 9]
    held = [p + "\n\n" for i, p in enumerate(paragraphs) if i % 10 == 9]
    return train, held


def measure(train, held, vocab: int):
    rows = {}
    held_bytes = sum(len(d.encode("utf-8")) for d in held)
    for name, config in CONFIGS.items():
        start = time.perf_counter()
        full = fb.train(train, vocab_size=None, pattern="functionalizer", progress=False, **config)
        seconds = time.perf_counter() - start
        atoms = full.alphabet.first_merge - 256
        cover = 256 + atoms + len(full.merges)
        fixed = Tokenizer(full.scheme, full.merges[: vocab - 256 - atoms], merge_policy=full.merge_policy)
        tokens = sum(len(fixed.encode_ordinary(d)) for d in held)
        for d in held[:50]:  # the measurement is only worth something if it is lossless
            assert fixed.decode(fixed.encode_ordinary(d)) == d
        rows[name] = dict(cover=cover, merges=len(full.merges), tpb=tokens / held_bytes, seconds=seconds)
    return rows


def pct(new: float, old: float) -> str:
    return f"{100 * (new - old) / old:+.1f}%"


def stdlib_documents():
    """The .py files of this Python's standard library, as ``functionalbpe demo`` reads them."""
    from functionalbpe.cli.stdlib import stdlib_sources

    return [Path(p).read_bytes().decode("utf-8", "replace") for p in stdlib_sources()], "this Python's standard library"


# Training-time configurations: the plain scheme with its own pattern (gpt4) and with the
# functionalizer split, then the functional scheme (which uses that split).
TIMED = {
    "plain, gpt4": dict(scheme="plain"),
    "plain, functionalizer split": dict(scheme="plain", pattern="functionalizer"),
    "functional": dict(scheme="functional"),
}


def time_training(docs, label: str, vocab: int, repeat: int) -> str:
    best = {name: float("inf") for name in TIMED}
    for _ in range(repeat):
        for name, config in TIMED.items():
            start = time.perf_counter()
            fb.train(docs, vocab_size=vocab, progress=False, **config)
            best[name] = min(best[name], time.perf_counter() - start)
    size = sum(len(d.encode("utf-8", "surrogatepass")) for d in docs) / 1e6
    functional = best["functional"]
    return (
        f"Training time on {label} ({size:.1f} MB, vocab {vocab}, best of {repeat}, alternating): "
        + ", ".join(f"{name} {seconds:.2f}s" for name, seconds in best.items())
        + f"; functional / plain: {functional / best['plain, gpt4']:.2f}x (gpt4), "
        f"{functional / best['plain, functionalizer split']:.2f}x (functionalizer split)"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    ap.add_argument("--files", nargs="*", default=CORPORA)
    ap.add_argument("--mb", type=float, default=1.0, help="characters per corpus, in millions")
    ap.add_argument("--vocab", type=int, default=8192, help="total ids for the tokens-per-byte column")
    ap.add_argument("--time", action="store_true", help="also time training: plain (gpt4, functionalizer split) vs functional")
    ap.add_argument("--time-corpus", default="stdlib", help="'stdlib' (this Python's, as the demo reads it) or a corpus file")
    ap.add_argument("--time-vocab", type=int, default=32768)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if (args.files or args.time_corpus != "stdlib") and not args.corpora.is_dir():
        sys.exit(f"corpora not found at {args.corpora} (set FUNCTIONALBPE_CORPORA or --corpora)")
    backend = "fast" if NATIVE.trainer is not None else "reference"
    print(f"trainer: {backend}", end="")
    if args.files:
        print(f"; {args.mb} M characters per corpus, 90% trained on, 10% held out; "
              f"tokens per byte at vocab {args.vocab}\n")
        print("| corpus | scheme | ids to cover | vs plain | merges | tokens/byte | vs plain |")
        print("|---|---|---|---|---|---|---|")
    for name in args.files:
        train, held = load(args.corpora / name, args.mb)
        rows = measure(train, held, args.vocab)
        plain = rows["plain"]
        for scheme, r in rows.items():
            same = scheme == "plain"
            print(
                f"| {name} | {scheme} | {r['cover']:,} | {'' if same else pct(r['cover'], plain['cover'])} "
                f"| {r['merges']:,} | {r['tpb']:.4f} | {'' if same else pct(r['tpb'], plain['tpb'])} |",
                flush=True,
            )
    if args.files:
        print(f"\n{PAPER}")
    if args.time:
        if args.time_corpus == "stdlib":
            docs, label = stdlib_documents()
        else:
            docs, label = (args.corpora / args.time_corpus).read_text(encoding="utf-8").split("\n\n"), args.time_corpus
        print("\n" + time_training(docs, label, args.time_vocab, args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
