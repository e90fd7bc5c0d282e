"""Special tokens by the thousand: HTML with N special tokens, trained on and encoded.

Every stage that cuts special tokens out is timed: training on a list of documents and on a
file (the compiled counter, and the streaming cut of the file into units), encoding with the
tokens allowed, count_tokens, and split_special alone. Run from the repository root:

    python benchmarks/special_tokens.py [--specials 20000] [--mb 1] [--repeat 3]

``FUNCTIONALBPE_PUREPYTHON=1`` times the pure-Python path. The numbers in
docs/pretokenization.md (*Special tokens*) come from this script.
"""
from __future__ import annotations

import argparse
import os
import random
import importlib.util
import sys
import tempfile
import time

if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, os.getcwd())

import functionalbpe as fb  # noqa: E402
from functionalbpe.text.patterns import split_special  # noqa: E402


def html(num_specials: int, chars: int, seed: int = 0):
    rng = random.Random(seed)
    specials = [f"<x{i}>" for i in range(num_specials)]
    words = "the quick brown fox jumps over lazy dog lorem ipsum dolor sit amet".split()
    parts, size = [], 0
    while size < chars:
        part = rng.choice(specials) + " ".join(rng.choices(words, k=rng.randint(1, 6)))
        part += rng.choice(["<div>", "</p>", "\n"])
        parts.append(part)
        size += len(part)
    return specials, "".join(parts)


def best(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--specials", type=int, default=20_000)
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    specials, text = html(args.specials, int(args.mb * 1e6))
    vocab = 256 + len(specials) + 44
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "page.html")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        tok = fb.train([text], vocab_size=vocab, special_tokens=specials, progress=False)
        rows = [
            ("train, list of documents", lambda: fb.train([text], vocab_size=vocab, special_tokens=specials, progress=False)),
            ("train, file", lambda: fb.train(fb.files(path), vocab_size=vocab, special_tokens=specials, progress=False)),
            ("encode, allowed_special='all'", lambda: tok.encode(text, allowed_special="all")),
            ("encode, disallowed (refused at the first)", lambda: _refused(tok, text)),
            ("count_tokens, allowed_special='all'", lambda: tok.count_tokens(text, allowed_special="all")),
            ("split_special", lambda: split_special(text, specials)),
            ("encode 'hello' x 1000 (per-call cost)", lambda: [tok.encode("hello") for _ in range(1000)]),
        ]
        path_name = "pure Python" if os.environ.get("FUNCTIONALBPE_PUREPYTHON") else "compiled"
        print(f"{len(text) / 1e6:.2f} MB of HTML, {len(specials):,} special tokens, {path_name}, best of {args.repeat}")
        for name, fn in rows:
            print(f"  {name:45s} {best(args.repeat, fn):8.3f} s")


def _refused(tok, text) -> None:
    try:
        tok.encode(text)
    except fb.SpecialTokenError:
        pass


if __name__ == "__main__":
    main()
