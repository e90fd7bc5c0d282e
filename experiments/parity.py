"""Fair across languages? Plain BPE, a temperature mix and parity-aware BPE on the shared corpora.

Trains on ``corpora/nl/<lang>.txt`` (one corpus per language, kept apart), for every
language that also has a LibreOffice help translation in ``corpora/parallel``. That help is
paragraph-aligned across its 18 languages: its first ``--dev-lines`` paragraphs are the
parity objective's dev set, its last ``--test-lines`` the held-out text measured here
(disjoint). For each vocabulary size it trains

* ``plain``: frequency BPE on all languages together (their concatenation);
* ``temperature``: the same with each language weighed by ``n_l^(α-1)`` (XLM-R's α = 0.3);
* ``parity``: parity-aware BPE, base variant, on the dev set;
* ``window``: its moving-window variant (``--window-size``, ``--alpha``);
* ``hybrid``: the first ``--global-share`` of the merges by global frequency, then parity;

and prints, per tokenizer, the tokens each language's held-out text takes, the premium
against English (tokens / English tokens), the Gini coefficient of the per-language token
counts, the global compression (bytes per token over all held-out text) and the training
time against plain training's.

    python experiments/parity.py                                # 16384 and 32768, all 18 languages
    python experiments/parity.py --vocab-sizes 8192 --max-chars 300000 --langs en el ru de
    python experiments/parity.py --json experiments/out/parity.json

Training sees the whole of each ``nl`` file (about 3 MB; less for some languages). The
LibreOffice help also appears in those files, so the held-out paragraphs may have been seen
in training: that favours every tokenizer alike and leaves the comparison fair.
"""
from __future__ import annotations

import argparse
import json
import os
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, str(ROOT))

import functionalbpe as fb  # noqa: E402
from functionalbpe.measure.fairness import gini, token_premium  # noqa: E402


def corpora_path(given: Optional[str] = None) -> Path:
    if given:
        return Path(given)
    env = os.environ.get("FUNCTIONALBPE_CORPORA")
    return Path(env) if env else ROOT.parent / "shared" / "corpora"


def languages(corpora: Path) -> List[str]:
    """The languages with both a training file and a LibreOffice help translation."""
    helped = {p.stem.split("_", 1)[1] for p in (corpora / "parallel").glob("lohelp_*.txt")}
    return sorted(lang for lang in helped if (corpora / "nl" / f"{lang}.txt").is_file())


def paragraphs(path: Path) -> List[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load(corpora: Path, langs: Sequence[str], max_chars: Optional[int], dev_lines: int, test_lines: int):
    """Training text, dev paragraphs and held-out paragraphs per language."""
    train, dev, test = {}, {}, {}
    for lang in langs:
        text = (corpora / "nl" / f"{lang}.txt").read_text(encoding="utf-8")
        train[lang] = text[:max_chars] if max_chars else text
        lines = paragraphs(corpora / "parallel" / f"lohelp_{lang}.txt")
        if dev_lines + test_lines > len(lines):
            raise SystemExit(f"lohelp_{lang} has {len(lines)} paragraphs: fewer than dev + test lines")
        dev[lang] = lines[:dev_lines]
        test[lang] = lines[len(lines) - test_lines:]
    return train, dev, test


def configurations(args: argparse.Namespace, dev: Dict[str, List[str]], vocab_size: int) -> Dict[str, Dict[str, Any]]:
    global_merges = int((vocab_size - 256) * args.global_share)
    return {
        "plain": {},
        f"temperature {args.temperature}": {"temperature": args.temperature},
        "parity": {"objective": "parity", "dev": dev},
        "window": {"objective": "parity", "dev": dev, "parity_variant": "window",
                   "window_size": args.window_size, "alpha": args.alpha},
        f"hybrid ({global_merges} global)": {"objective": "parity", "dev": dev, "global_merges": global_merges},
    }


def measure(tok: fb.Tokenizer, test: Dict[str, List[str]]) -> Dict[str, Any]:
    """Per-language tokens on the held-out text, premiums vs English, Gini, compression."""
    tokens = {lang: len(tok.encode_ordinary("\n".join(lines))) for lang, lines in test.items()}
    size = sum(len("\n".join(lines).encode("utf-8")) for lines in test.values())
    reference = "en" if "en" in tokens else min(tokens, key=tokens.__getitem__)
    premium = token_premium(tokens, reference)
    return {
        "tokens": tokens,
        "premium": premium,
        "reference": reference,
        "gini": gini(tokens.values()),
        "max_premium": max(premium.values()),
        "bytes_per_token": size / sum(tokens.values()),
    }


def run(args: argparse.Namespace) -> Dict[str, Any]:
    corpora = corpora_path(args.corpora)
    langs = args.langs or languages(corpora)
    train, dev, test = load(corpora, langs, args.max_chars, args.dev_lines, args.test_lines)
    results: Dict[str, Any] = {"languages": langs, "runs": {}}
    for vocab_size in args.vocab_sizes:
        runs: Dict[str, Any] = {}
        for name, options in configurations(args, dev, vocab_size).items():
            start = time.perf_counter()
            tok = fb.train(train, vocab_size=vocab_size, progress=False, **options)
            seconds = time.perf_counter() - start
            runs[name] = dict(measure(tok, test), seconds=seconds, vocab_size=tok.vocab_size)
        plain = runs["plain"]
        for row in runs.values():
            row["time_vs_plain"] = row["seconds"] / plain["seconds"]
            row["compression_vs_plain"] = row["bytes_per_token"] / plain["bytes_per_token"]
        results["runs"][str(vocab_size)] = runs
    return results


def table(results: Dict[str, Any]) -> str:
    """The results as Markdown: one summary table per size, then the premiums."""
    out = []
    for vocab_size, runs in results["runs"].items():
        out.append(f"### {vocab_size} ids\n")
        out.append("| tokenizer | Gini | max premium | bytes/token | vs plain | train s | time vs plain |")
        out.append("|---|---:|---:|---:|---:|---:|---:|")
        for name, r in runs.items():
            out.append(f"| {name} | {r['gini']:.4f} | {r['max_premium']:.3f} | {r['bytes_per_token']:.3f} | "
                       f"{r['compression_vs_plain']:.3f} | {r['seconds']:.1f} | {r['time_vs_plain']:.2f}x |")
        out.append("")
        names = list(runs)
        out.append("| language | " + " | ".join(f"{n} tokens (premium)" for n in names) + " |")
        out.append("|---|" + "---:|" * len(names))
        for lang in results["languages"]:
            cells = [f"{runs[n]['tokens'][lang]:,} ({runs[n]['premium'][lang]:.2f})" for n in names]
            out.append(f"| {lang} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", help="the shared corpora (default ../shared/corpora or $FUNCTIONALBPE_CORPORA)")
    ap.add_argument("--vocab-sizes", type=int, nargs="+", default=[16384, 32768])
    ap.add_argument("--langs", nargs="+", help="languages (default: every one with training and help text)")
    ap.add_argument("--max-chars", type=int, help="train on at most this many characters per language")
    ap.add_argument("--dev-lines", type=int, default=2000, help="help paragraphs for the dev set (the first ones)")
    ap.add_argument("--test-lines", type=int, default=2000, help="held-out help paragraphs (the last ones)")
    ap.add_argument("--temperature", type=float, default=0.3)
    ap.add_argument("--window-size", type=int, default=100)
    ap.add_argument("--alpha", type=float, default=2)
    ap.add_argument("--global-share", type=float, default=0.25, help="hybrid: share of merges made globally")
    ap.add_argument("--json", help="also write the results here")
    return ap


def main(argv: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    args = parser().parse_args(argv)
    print(f"functionalbpe {fb.__version__}: {fb.core._native.NATIVE.describe()}", file=sys.stderr)
    results = run(args)
    print(table(results))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    return results


if __name__ == "__main__":
    main()
