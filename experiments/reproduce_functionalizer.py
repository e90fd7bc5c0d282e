"""The Functionalizer paper's tables, configuration for configuration, beside ours.

Configurations (``fb.functional.PAPER_PROFILES``; NFC on every one, baselines included):
the paper's split alone ("split", its split-only baseline), with the Functionalizer, with
repetition only, its Llama split alone and with the Functionalizer.

Corpora standing in for the paper's (``../shared/corpora``): ``nl/en.txt`` (English prose)
for Wikitext, ``code/python.txt`` for Python-Codes and CSN-Python, ``code/go.txt`` for
CSN-Go. Each is cut into documents at blank lines; every tenth document is held out, the rest
trained on (a 90/10 split by position: the paper's own split is not in the material we
have, so this is our choice, the same for every configuration).

Measures, as the paper's:

* **slots**: ids needed to cover the training text fully — BPE to exhaustion (a 128k
  target, as the paper's; on these corpora training ends first because no pair is left),
  counted as the base symbols that occur in the training text form (bytes and atoms) + the
  merges. The paper's BPE is on characters, so its base is the characters that occur; ours
  is byte-level, and a tokenizer always holds all 256 bytes and the scheme's atoms (the
  ``ids`` column: 256 + atoms + merges);
* **tokens** and **chars/token** on the held-out documents, with that tokenizer.

Each change is against the baseline of the same split. Run from the repository root::

    python experiments/reproduce_functionalizer.py              # 1 M characters per corpus
    python experiments/reproduce_functionalizer.py --chars 200000 --json out.json
    python experiments/reproduce_functionalizer.py --split functionalizer-runs   # our variant

``--split functionalizer-runs`` runs the "split" configurations with this project's variant
of the split (a run of spaces one piece) instead of the paper's: what the variant trades.
"""
from __future__ import annotations

import argparse
import json
import os
import importlib.util
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import functionalbpe as fb  # noqa: E402
from functionalbpe.errors import SmallerVocabularyWarning  # noqa: E402
from functionalbpe.schemes.functional import PAPER_PROFILES  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # splits.py beside this script
from splits import SplitError, split, without_leaks  # noqa: E402
from splits import documents as cut_documents  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPORA = Path(os.environ.get("FUNCTIONALBPE_CORPORA", ROOT.parent / "shared" / "corpora"))
# Our corpus -> the paper's corpora it stands in for.
CORPORA = {
    "nl/en.txt": "Wikitext",
    "code/python.txt": "Python-Codes / CSN-Python",
    "code/go.txt": "CSN-Go",
}
# The runs the paper's Go figures leave open: how much of the change the case instructions
# carry (``--open-runs``).
OPEN_RUNS: Dict[str, Dict[str, Any]] = {
    "split + Functionalizer (no case)": {**PAPER_PROFILES["split + Functionalizer"], "case": False},
    "split + Functionalizer (no repeat)": {**PAPER_PROFILES["split + Functionalizer"], "repeat": False},
}
BASELINE = {"split + Functionalizer (no case)": "split", "split + Functionalizer (no repeat)": "split",
            "split": "split", "split + Functionalizer": "split",
            "split + Functionalizer (repeat only)": "split", "llama": "llama", "llama + Functionalizer": "llama"}
TARGET = 131072  # the paper's 128k target

# The paper's figures for the configurations it reports (v1, 128k target, BPE to
# exhaustion), change against its split-only baseline; "" where it gives none.
PAPER: Dict[Tuple[str, str], Dict[str, str]] = {
    ("nl/en.txt", "split"): {"slots": "51,780", "chars/token": ""},
    ("nl/en.txt", "split + Functionalizer"): {"slots": "43,700 (−15.6%)", "tokens": "+6.4% to +9.0% (prose)"},
    ("nl/en.txt", "split + Functionalizer (repeat only)"): {"slots": "under 3%"},
    ("code/python.txt", "split"): {"slots": "33,399 / 94,605", "chars/token": "1.89 (CSN-Python)"},
    ("code/python.txt", "split + Functionalizer"): {"slots": "−16.1% / −12.7%", "tokens": "−26.8% (CSN-Python)"},
    ("code/python.txt", "split + Functionalizer (repeat only)"): {"slots": "under 3%", "tokens": "−30.4% (CSN-Python)"},
    ("code/go.txt", "split"): {"slots": "15,735"},
    ("code/go.txt", "split + Functionalizer"): {"slots": "15,281 (−2.9%)"},
    ("code/go.txt", "split + Functionalizer (repeat only)"): {"slots": "under 3%"},
}


def documents(path: Path, chars: int) -> Tuple[List[str], List[str]]:
    """The first ``chars`` characters of a corpus (cut at a line end) as documents
    (:mod:`splits`: at blank lines, else at lines): every tenth held out, the rest to train on."""
    text = path.read_text(encoding="utf-8")
    if len(text) > chars:
        text = text[: text.rfind("\n", 0, chars) + 1]
    return split(cut_documents(text, str(path)))


def measure(train: Sequence[str], held: Sequence[str], profile: Dict[str, Any]) -> Dict[str, Any]:
    start = time.perf_counter()
    with warnings.catch_warnings():  # to exhaustion: training always stops before TARGET
        warnings.simplefilter("ignore", SmallerVocabularyWarning)
        tok = fb.train(list(train), vocab_size=TARGET, progress=False, **profile)
    tokens = sum(len(tok.encode_ordinary(d)) for d in held)
    chars = sum(len(d) for d in held)
    base = set()  # the base symbols of the training text form: its atoms and its bytes
    for doc in train:
        base.update(tok.scheme.encode(doc))
    atoms = {a.char for a in tok.scheme.atoms}
    used = len(atoms & base) + len(set("".join(c for c in base if c not in atoms).encode("utf-8", "surrogatepass")))
    return {
        "slots": used + len(tok.merges),
        "ids": tok.vocab_size,
        "merges": len(tok.merges),
        "tokens": tokens,
        "chars_per_token": chars / tokens,
        "seconds": round(time.perf_counter() - start, 2),
    }


def reproduce(corpora: Path, chars: int, names: Sequence[str] = tuple(CORPORA),
              configs: Sequence[str] = tuple(PAPER_PROFILES), log: Any = None,
              split: str = "functionalizer") -> Dict[str, Dict[str, Any]]:
    """``{corpus: {configuration: measures}}``; each measure with its change against the
    baseline of the same split where that baseline is in ``configs``. ``split``: the pattern
    of the "split" configurations (the paper's, or a variant)."""
    results: Dict[str, Dict[str, Any]] = {}
    for name in names:
        train, held = documents(corpora / name, chars)
        held, dropped = without_leaks(train, held, name)
        rows = results[name] = {}
        for config in configs:
            profile = dict(PAPER_PROFILES[config] if config in PAPER_PROFILES else OPEN_RUNS[config])
            if profile["pattern"] == "functionalizer":
                profile["pattern"] = split
            rows[config] = measure(train, held, profile)
            rows[config]["held_out_dropped"] = dropped  # found verbatim in training
            if log:
                log(f"  {name} {config}: {rows[config]}")
        for config, row in rows.items():
            base = rows.get(BASELINE[config])
            if base is not None and base is not row:
                row["slots_change"] = row["slots"] / base["slots"] - 1
                row["tokens_change"] = row["tokens"] / base["tokens"] - 1
    return results


def _pct(x: Optional[float]) -> str:
    return "" if x is None else f"{100 * x:+.1f}%"


def table(results: Dict[str, Dict[str, Any]]) -> str:
    lines = [
        "| corpus (stands in for) | configuration | ids | slots | change | paper | tokens | change | paper | chars/token | paper |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, rows in results.items():
        for config, row in rows.items():
            paper = PAPER.get((name, config), {})
            lines.append(
                f"| {name} ({CORPORA.get(name, '')}) | {config} | {row['ids']:,} | {row['slots']:,} | {_pct(row.get('slots_change'))} | "
                f"{paper.get('slots', '')} | {row['tokens']:,} | {_pct(row.get('tokens_change'))} | "
                f"{paper.get('tokens', '')} | {row['chars_per_token']:.2f} | {paper.get('chars/token', '')} |"
            )
    dropped = ", ".join(f"{name} {next(iter(rows.values()))['held_out_dropped']:.1%}"
                        for name, rows in results.items() if rows)
    lines.append(f"\nHeld-out documents found verbatim in training, left out of the measures: {dropped}.")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--chars", type=int, default=1_000_000, help="characters read from each corpus")
    parser.add_argument("--corpus", nargs="+", default=list(CORPORA), help="corpora (paths under --corpora)")
    parser.add_argument("--split", default="functionalizer", choices=["functionalizer", "functionalizer-runs"],
                        help="the pattern of the split configurations (default: the paper's)")
    parser.add_argument("--open-runs", action="store_true",
                        help="also the Functionalizer without case and without repeat (what the Go figures leave open)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--quiet", "-q", action="store_true")
    args = parser.parse_args(argv)
    print(f"functionalbpe {fb.__version__}: {fb.core._native.NATIVE.describe()}", file=sys.stderr)
    missing = [c for c in args.corpus if not (args.corpora / c).is_file()]
    if missing:
        parser.error(f"corpora not found under {args.corpora}: {', '.join(missing)} (set --corpora or FUNCTIONALBPE_CORPORA)")
    log = None if args.quiet else (lambda line: print(line, file=sys.stderr))
    try:
        configs = list(PAPER_PROFILES) + (list(OPEN_RUNS) if args.open_runs else [])
        results = reproduce(args.corpora, args.chars, args.corpus, configs, log=log, split=args.split)
    except SplitError as exc:
        parser.error(str(exc))
    print(f"{args.chars:,} characters per corpus, every 10th document held out; BPE to exhaustion (128k target); "
          f"split: {args.split}\n")
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
