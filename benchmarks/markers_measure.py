"""Boundary markers against plain BPE: characters per token and duplicate vocabulary entries.

For each language, train one tokenizer per scheme at the same total vocabulary size (bytes,
atoms and merges all count) on the first part of the parallel LibreOffice help corpus, and
encode the held-out rest. Reports

* characters per token on the held-out text, and its change against plain BPE;
* case duplicates: alphabetic entries that are not lower case and whose lower-cased form is
  also an entry (``The`` next to ``the``), as a count and a share of the alphabetic entries;
* space duplicates: alphabetic entries ``x`` for which `` x`` is also an entry;
* boundary variants: extra entries for the same letters in another boundary form (plain:
  ``x`` and `` x``; markers: ``x``, ``¦x``, ``x¦``, ``¦x¦``), beyond the first form.

An entry is *alphabetic* when its text, without a leading space and without markers, is
letters only (``str.isalpha``). The parallel corpus has the same paragraphs in every
language, so the languages are compared on the same content.

Run from the repository root (about ten minutes on two cores with the reference trainer)::

    python benchmarks/markers_measure.py                      # 6 languages, vocab 8192
    python benchmarks/markers_measure.py --langs en de --vocab-size 4096 --json out.json
"""
from __future__ import annotations

import argparse
import json
import os
import importlib.util
import sys
import time
from pathlib import Path
from typing import Dict, List, Tuple

if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import functionalbpe as fb  # noqa: E402
from functionalbpe.measure.vocabulary import tokens_by_piece, vocabulary_stats  # noqa: E402
from functionalbpe.schemes.markers import TITLE, UPPER  # noqa: E402

SCHEMES: Dict[str, Tuple[str, Dict[str, bool]]] = {
    "plain": ("plain", {}),
    "[w]": ("markers", {}),
    "[w,p]": ("markers", {"punct": True}),
    "[w,p,d]": ("markers", {"punct": True, "digits": True}),
    "[w,p,d,↑]": ("markers", {"punct": True, "digits": True, "case": True}),
}
# The paper's figures (Land and Meister, 2026): change in characters per token against plain
# BPE at a matched vocabulary, mean of six languages.
PAPER_DELTA = {"[w]": "about −9%", "[w,p]": "about −2%", "[w,p,d]": "within 1%", "[w,p,d,↑]": "about −0.7%"}
PAPER_CASE_DUPS = {"plain": "29.1%", "[w,p,d,↑]": "0.5%"}

DEFAULT_CORPORA = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"


def split_corpus(path: Path, train_chars: int, test_chars: int) -> Tuple[str, str]:
    """The first 80% of the paragraphs to train on, the last 20% to test; both capped."""
    paragraphs = [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
    cut = len(paragraphs) * 4 // 5
    return _take(paragraphs[:cut], train_chars), _take(paragraphs[cut:], test_chars)


def _take(paragraphs: List[str], limit: int) -> str:
    out, size = [], 0
    for p in paragraphs:
        if size + len(p) + 1 > limit:
            break
        out.append(p)
        size += len(p) + 1
    return "\n".join(out) + "\n"


def measure(lang: str, corpora: Path, vocab_size: int, train_chars: int, test_chars: int, backend: str) -> Dict:
    train, test = split_corpus(corpora / "parallel" / f"lohelp_{lang}.txt", train_chars, test_chars)
    rows = {}
    for name, (scheme, options) in SCHEMES.items():
        start = time.perf_counter()
        tok = fb.train([train], vocab_size=vocab_size, scheme=scheme, backend=backend, progress=False, **options)
        trained = time.perf_counter() - start
        ids = tok.encode_ordinary(test)
        assert tok.decode(ids) == test, f"{lang} {name}: not lossless"
        shifts = {tok.alphabet.atom_id(c) for c in (TITLE, UPPER)} if scheme == "markers" else set()
        spent = tokens_by_piece(tok, test)
        assert sum(spent.values()) == len(ids)
        rows[name] = {
            "chars_per_token": len(test) / len(ids),
            "tokens": len(ids),
            "shift_tokens": sum(1 for i in ids if i in shifts),
            **{f"{k}_tokens": v for k, v in spent.items()},
            "vocab_size": tok.vocab_size,
            "train_seconds": round(trained, 1),
            **vocabulary_stats(tok),
        }
        print(f"  {lang} {name:10} {rows[name]['chars_per_token']:.3f} chars/token "
              f"({trained:.0f}s)", file=sys.stderr)
    return {"train_chars": len(train), "test_chars": len(test), "schemes": rows}


def table(results: Dict[str, Dict], vocab_size: int) -> str:
    langs = list(results)
    names = list(SCHEMES)
    lines = [
        f"Characters per token on held-out text, vocabulary {vocab_size} (change against plain):",
        "",
        "| scheme | " + " | ".join(langs) + " | mean change | paper |",
        "|---|" + "---|" * len(langs) + "---|---|",
    ]
    for name in names:
        cells, deltas = [], []
        for lang in langs:
            cpt = results[lang]["schemes"][name]["chars_per_token"]
            base = results[lang]["schemes"]["plain"]["chars_per_token"]
            delta = (cpt / base - 1) * 100
            deltas.append(delta)
            cells.append(f"{cpt:.3f}" if name == "plain" else f"{cpt:.3f} ({delta:+.1f}%)")
        mean = "" if name == "plain" else f"{sum(deltas) / len(deltas):+.1f}%"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {mean} | {PAPER_DELTA.get(name, '')} |")
    shifted = [n for n in names if any(results[lang]["schemes"][n]["shift_tokens"] for lang in langs)]
    for name in shifted:
        shares = [100 * results[lang]["schemes"][name]["shift_tokens"] / results[lang]["schemes"][name]["tokens"]
                  for lang in langs]
        lines.append(f"| shift codes, % of {name} tokens | " + " | ".join(f"{x:.1f}%" for x in shares) + " | | |")
    lines += [
        "",
        "Where the tokens go: held-out tokens spent on pieces with a letter, on whitespace-only",
        "pieces and on the rest, summed over the languages (change against plain):",
        "",
        "| scheme | letter pieces | whitespace pieces | the rest | all |",
        "|---|---|---|---|---|",
    ]
    kinds = ("letter_tokens", "whitespace_tokens", "rest_tokens", "tokens")
    base = {k: sum(results[lang]["schemes"]["plain"][k] for lang in langs) for k in kinds}
    for name in names:
        total = {k: sum(results[lang]["schemes"][name][k] for lang in langs) for k in kinds}
        cells = [f"{total[k]}" if name == "plain" else f"{total[k]} ({(total[k] / base[k] - 1) * 100:+.1f}%)"
                 for k in kinds]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Duplicate entries in each vocabulary, summed over the languages:",
        "",
        "| scheme | alphabetic entries | case duplicates | share | paper | space duplicates | boundary variants |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in names:
        total = {k: sum(results[lang]["schemes"][name][k] for lang in langs)
                 for k in ("alphabetic", "case_dups", "space_dups", "boundary_variants")}
        share = 100 * total["case_dups"] / max(1, total["alphabetic"])
        lines.append(
            f"| {name} | {total['alphabetic']} | {total['case_dups']} | {share:.1f}% | "
            f"{PAPER_CASE_DUPS.get(name, '')} | {total['space_dups']} | {total['boundary_variants']} |"
        )
    return "\n".join(lines)


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=Path(os.environ.get("FUNCTIONALBPE_CORPORA", DEFAULT_CORPORA)))
    parser.add_argument("--langs", nargs="+", default=["en", "de", "fr", "ru", "tr", "ko"])
    parser.add_argument("--vocab-size", type=int, default=8192)
    parser.add_argument("--train-chars", type=int, default=800_000)
    parser.add_argument("--test-chars", type=int, default=200_000)
    parser.add_argument("--backend", default="auto", choices=["auto", "fast", "reference"])
    parser.add_argument("--json", type=Path, default=None, help="also write the raw numbers here")
    args = parser.parse_args(argv)
    if not (args.corpora / "parallel").is_dir():
        parser.error(f"no parallel corpora under {args.corpora} (set --corpora or FUNCTIONALBPE_CORPORA)")
    results = {}
    for lang in args.langs:
        results[lang] = measure(lang, args.corpora, args.vocab_size, args.train_chars, args.test_chars, args.backend)
    print(table(results, args.vocab_size))
    if args.json:
        payload = {"vocab_size": args.vocab_size, "backend": args.backend, "results": results}
        tmp = args.json.with_suffix(args.json.suffix + ".tmp")
        tmp.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
