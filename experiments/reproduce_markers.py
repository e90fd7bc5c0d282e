"""The boundary-marker paper's comparison, configuration for configuration, beside ours.

Configurations (``fb.markers.PAPER_PROFILES``): plain BPE with a GPT-style split (gpt4) and
the marker schemes ``[w]``, ``[w,p]``, ``[w,p,d]``, ``[w,p,d,↑]`` (shift codes merging into
their word, as in the paper's reference code), all at the same total vocabulary (bytes,
atoms and merges all count).

Text as the paper measures it: one line per document, white space normalized (every run of
white space one space, none at either end), so that no newline is glued to punctuation. Each
language is the first ``--chars`` characters of ``nl/<lang>.txt`` of ``../shared/corpora``;
every tenth line is held out, the rest trained on. The paper's six languages are not named in
the material we have; the default set is six languages of different scripts and morphology.

Reported: characters per token on the held-out lines and their change against plain, with the
paper's mean change beside the mean of ours; and the case-duplicate share of the vocabulary:
alphabetic entries (letters only once a leading space and markers are taken off) that are
not lower case while their lower-case form is also an entry (paper: 29.1% for plain, 0.5%
with shift codes). A last row is this project's variant, shift codes kept apart
(``merge_shift_codes=False``). Run from the repository root::

    python experiments/reproduce_markers.py                       # 6 languages, vocabulary 8192
    python experiments/reproduce_markers.py --langs en de --chars 300000 --json out.json
"""
from __future__ import annotations

import argparse
import json
import os
import importlib.util
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import functionalbpe as fb  # noqa: E402
from functionalbpe.schemes.markers import PAPER_PROFILES  # noqa: E402
from functionalbpe.measure.vocabulary import vocabulary_stats  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # splits.py beside this script
from splits import SplitError, split, without_leaks  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPORA = Path(os.environ.get("FUNCTIONALBPE_CORPORA", ROOT.parent / "shared" / "corpora"))
LANGS = ["en", "de", "fr", "ru", "tr", "ko"]
# The paper's mean change in characters per token against plain BPE (six languages), and its
# case-duplicate shares.
PAPER_MEAN = {"[w]": -9.3, "[w,p]": -2.2, "[w,p,d]": -0.47, "[w,p,d,↑]": -0.73}
PAPER_CASE_DUPLICATES = {"plain": 29.1, "[w,p,d,↑]": 0.5}
# This project's variant, measured beside them: shift codes kept tokens of their own.
CONFIGS = {**PAPER_PROFILES, "[w,p,d,↑], shift codes apart": {**PAPER_PROFILES["[w,p,d,↑]"], "merge_shift_codes": False}}


def lines(path: Path, chars: int) -> Tuple[List[str], List[str]]:
    """The lines of the first ``chars`` characters, white space normalized, empty ones
    dropped: every tenth held out, the rest to train on."""
    text = path.read_text(encoding="utf-8")[:chars]
    docs = [" ".join(line.split()) for line in text.splitlines()]
    docs = [d for d in docs if d]
    if len(docs) < 2:
        raise SplitError(f"{path}: {len(docs)} line(s); at least 2 are needed, one to train on and one to hold out")
    return split(docs)


def measure(train: Sequence[str], held: Sequence[str], vocab_size: int, profile: Dict[str, Any]) -> Dict[str, Any]:
    tok = fb.train(list(train), vocab_size=vocab_size, progress=False, **profile)
    tokens = sum(map(len, tok.encode_batch(list(held))))
    stats = vocabulary_stats(tok)  # the definitions the benchmark uses too
    return {
        "tokens": tokens,
        "chars_per_token": sum(map(len, held)) / tokens,
        "alphabetic": stats["alphabetic"],
        "case_duplicates": stats["case_dups"],
    }


def reproduce(corpora: Path, chars: int, vocab_size: int, langs: Sequence[str] = LANGS,
              log: Any = None) -> Dict[str, Any]:
    """``{"languages": {lang: {config: measures}}, "mean_change": {config: %},
    "case_duplicate_share": {config: %}}``."""
    per_lang: Dict[str, Dict[str, Any]] = {}
    dropped: Dict[str, float] = {}  # the held-out lines found verbatim in training, left out
    for lang in langs:
        train, held = lines(corpora / "nl" / f"{lang}.txt", chars)
        held, dropped[lang] = without_leaks(train, held, lang)
        rows = per_lang[lang] = {}
        for config, profile in CONFIGS.items():
            rows[config] = measure(train, held, vocab_size, profile)
            if log:
                log(f"  {lang} {config}: {rows[config]}")
        for row in rows.values():
            row["change"] = 100 * (row["chars_per_token"] / rows["plain"]["chars_per_token"] - 1)
    configs = list(CONFIGS)
    return {
        "vocab_size": vocab_size,
        "languages": per_lang,
        "held_out_dropped": dropped,
        "mean_change": {c: sum(per_lang[lang][c]["change"] for lang in langs) / len(langs) for c in configs},
        "case_duplicate_share": {
            c: 100 * sum(per_lang[lang][c]["case_duplicates"] for lang in langs)
            / max(1, sum(per_lang[lang][c]["alphabetic"] for lang in langs))
            for c in configs
        },
    }


def table(results: Dict[str, Any]) -> str:
    langs = list(results["languages"])
    lines_out = [
        "| scheme | " + " | ".join(langs) + " | mean change | paper | case duplicates | paper |",
        "|---|" + "---|" * len(langs) + "---|---|---|---|",
    ]
    for config in CONFIGS:
        cells = []
        for lang in langs:
            row = results["languages"][lang][config]
            cells.append(f"{row['chars_per_token']:.3f}" + ("" if config == "plain" else f" ({row['change']:+.1f}%)"))
        mean = "" if config == "plain" else f"{results['mean_change'][config]:+.2f}%"
        paper = f"{PAPER_MEAN[config]:+.2f}%" if config in PAPER_MEAN else ""
        dup = PAPER_CASE_DUPLICATES.get(config)
        lines_out.append(
            f"| {config} | " + " | ".join(cells) + f" | {mean} | {paper} | "
            f"{results['case_duplicate_share'][config]:.1f}% | {'' if dup is None else f'{dup}%'} |"
        )
    dropped = ", ".join(f"{lang} {share:.1%}" for lang, share in results["held_out_dropped"].items())
    lines_out.append(f"\nHeld-out lines found verbatim in training, left out of the measures: {dropped}.")
    return "\n".join(lines_out)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--langs", nargs="+", default=LANGS)
    parser.add_argument("--chars", type=int, default=1_000_000, help="characters read per language")
    parser.add_argument("--vocab-size", type=int, default=8192, help="the same total for every scheme")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--quiet", "-q", action="store_true")
    args = parser.parse_args(argv)
    print(f"functionalbpe {fb.__version__}: {fb.core._native.NATIVE.describe()}", file=sys.stderr)
    missing = [lang for lang in args.langs if not (args.corpora / "nl" / f"{lang}.txt").is_file()]
    if missing:
        parser.error(f"no nl/<lang>.txt under {args.corpora} for {', '.join(missing)} (set --corpora or FUNCTIONALBPE_CORPORA)")
    log = None if args.quiet else (lambda line: print(line, file=sys.stderr))
    try:
        results = reproduce(args.corpora, args.chars, args.vocab_size, args.langs, log=log)
    except SplitError as exc:
        parser.error(str(exc))
    print(f"Characters per token per line (white space normalized), vocabulary {args.vocab_size}, "
          f"{args.chars:,} characters per language, every 10th line held out\n")
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
