"""Parity-aware training against plain training on the same text: the time ratio, in one run.

    python benchmarks/bench_parity.py                        # 18 languages of corpora/nl, 32768
    python benchmarks/bench_parity.py --vocab-size 8192 --max-chars 500000 --repeat 3

Both train through ``fb.train`` on the same ``{language: text}`` corpus (the ``nl`` file of
every language with a LibreOffice help translation); parity-aware training also counts its
dev set (the first ``--dev-lines`` help paragraphs of each language). The two alternate,
plain, parity, plain, parity ..., and the best time of each is kept. Printed: both times
and their ratio (the target: at most 2x), for the whole training and for the merge stage
alone (counted tables in, merges out).
"""
from __future__ import annotations

import argparse
import os
import importlib.util
import sys
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, str(ROOT))

import functionalbpe as fb  # noqa: E402
from functionalbpe.core import trainer  # noqa: E402
from functionalbpe.core.alphabet import Alphabet  # noqa: E402
from functionalbpe.core.language_mix import combine  # noqa: E402
from functionalbpe.schemes.plain import PlainScheme  # noqa: E402
from functionalbpe.text.counting import count_table  # noqa: E402


def best(fn, repeat):
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = os.environ.get("FUNCTIONALBPE_CORPORA", str(ROOT.parent / "shared" / "corpora"))
    ap.add_argument("--corpora", default=default)
    ap.add_argument("--vocab-size", type=int, default=32768)
    ap.add_argument("--max-chars", type=int)
    ap.add_argument("--dev-lines", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    print(f"functionalbpe {fb.__version__}: {fb.core._native.NATIVE.describe()}", file=sys.stderr)
    corpora = Path(args.corpora)
    langs = sorted(p.stem.split("_", 1)[1] for p in (corpora / "parallel").glob("lohelp_*.txt")
                   if (corpora / "nl" / f"{p.stem.split('_', 1)[1]}.txt").is_file())
    corpus, dev = {}, {}
    for lang in langs:
        text = (corpora / "nl" / f"{lang}.txt").read_text(encoding="utf-8")
        corpus[lang] = text[: args.max_chars] if args.max_chars else text
        lines = (corpora / "parallel" / f"lohelp_{lang}.txt").read_text(encoding="utf-8").splitlines()
        dev[lang] = [line for line in lines if line.strip()][: args.dev_lines]
    kw = dict(vocab_size=args.vocab_size, progress=False)
    whole = {"plain": [], "parity": []}
    for _ in range(args.repeat):
        whole["plain"].append(best(lambda: fb.train(corpus, **kw), 1))
        whole["parity"].append(best(lambda: fb.train(corpus, objective="parity", dev=dev, **kw), 1))
    # The merge stage alone, on tables counted once.
    scheme = PlainScheme("gpt4")
    tables = [count_table(text, scheme) for text in corpus.values()]
    dev_tables = [count_table(lines, scheme) for lines in dev.values()]
    joined = combine(tables)
    merges = args.vocab_size - 256
    loop_plain = best(lambda: trainer.learn_merges(joined, Alphabet(), merges), args.repeat)
    loop_parity = best(lambda: trainer.learn_parity_merges(tables, Alphabet(), merges, dev=dev_tables), args.repeat)
    print(f"{len(langs)} languages, {sum(map(len, corpus.values())):,} characters, vocab_size {args.vocab_size}")
    p, q = min(whole["plain"]), min(whole["parity"])
    print(f"whole training: plain {p:.1f} s, parity {q:.1f} s: parity / plain = {q / p:.2f}x")
    print(f"merge stage:    plain {loop_plain:.1f} s, parity {loop_parity:.1f} s: "
          f"parity / plain = {loop_parity / loop_plain:.2f}x")


if __name__ == "__main__":
    main()
