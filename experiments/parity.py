"""Fair across languages? Plain BPE, a temperature mix and parity-aware BPE on the shared corpora.

Trains on the LibreOffice help of ``corpora/parallel`` (one corpus per language, kept
apart; paragraph-aligned across its 18 languages), with a dev set and a held-out set cut
from it where the training part ends (see the splits below). For each vocabulary size it trains

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

Splits (:func:`load`): training on the first 60% of the aligned help, dev 80–90%, held
out 90–100%; the verbatim overlap between them is measured and reported, and a run refuses
to start above 1%. The held-out measures are given in domain (the help) and out of domain
(the UDHR, NFC-normalized). ``--train-from nl`` trains on the documentation files instead,
deduplicated against the dev and held-out paragraphs (they hold the help too).
"""
from __future__ import annotations

import argparse
import json
import os
import importlib.util
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, str(ROOT))

import functionalbpe as fb  # noqa: E402
from functionalbpe.measure.fairness import gini, token_premium  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # splits.py beside this script
from splits import MAX_OVERLAP, overlap  # noqa: E402


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


def load(corpora: Path, langs: Sequence[str], max_chars: Optional[int], dev_lines: int, test_lines: int,
         source: str = "parallel"):
    """Training text, dev paragraphs, held-out paragraphs (in and out of domain) and the
    verbatim overlaps between them, per language.

    The LibreOffice help is aligned across its languages: its first 60% of paragraphs are
    training text (with ``source="parallel"``), 80–90% the dev set, 90–100% the held-out
    set (each cut to ``dev_lines`` / ``test_lines``), so no split is inside another. With
    ``source="nl"`` the training text is the documentation file instead, which holds the
    help too: its paragraphs found verbatim in the dev or held-out sets are dropped. Either
    way, training paragraphs equal to a dev or held-out one are dropped (short labels recur),
    and what overlap was found before and is left after is reported. Out of domain, the
    Universal Declaration of Human Rights (``udhr_<lang>``), NFC-normalized first (the
    Vietnamese file is decomposed Unicode, which alone would make it cost more).
    """
    train, dev, test, ood, overlaps = {}, {}, {}, {}, {}
    for lang in langs:
        lines = paragraphs(corpora / "parallel" / f"lohelp_{lang}.txt")
        n = len(lines)
        dev[lang] = lines[int(0.8 * n): int(0.9 * n)][:dev_lines]
        test[lang] = lines[int(0.9 * n):][:test_lines]
        if source == "parallel":
            pool = lines[: int(0.6 * n)]
        else:
            pool = paragraphs(corpora / "nl" / f"{lang}.txt")
        held = {key(x) for x in dev[lang] + test[lang]}
        before = overlap(pool, test[lang]), overlap(pool, dev[lang])
        kept = [x for x in pool if key(x) not in held]
        text = "\n".join(kept) + "\n"
        train[lang] = text[:max_chars] if max_chars else text
        overlaps[lang] = {"test_in_train_before": before[0], "dev_in_train_before": before[1],
                          "test_in_train": overlap(kept, test[lang]), "dev_in_train": overlap(kept, dev[lang]),
                          "test_in_dev": overlap(dev[lang], test[lang])}
        worst = max(overlaps[lang][k] for k in ("test_in_train", "dev_in_train", "test_in_dev"))
        if worst > MAX_OVERLAP:
            raise SystemExit(f"{lang}: {worst:.1%} of a held-out split is verbatim in another (above {MAX_OVERLAP:.0%})")
        udhr = corpora / "parallel" / f"udhr_{lang}.txt"
        if udhr.is_file():
            ood[lang] = [unicodedata.normalize("NFC", x) for x in paragraphs(udhr)]
    return train, dev, test, ood, overlaps


def key(paragraph: str) -> str:
    return " ".join(paragraph.split())


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
    train, dev, test, ood, overlaps = load(corpora, langs, args.max_chars, args.dev_lines, args.test_lines,
                                           args.train_from)
    results: Dict[str, Any] = {"languages": langs, "train_from": args.train_from, "overlap": overlaps, "runs": {}}
    for vocab_size in args.vocab_sizes:
        runs: Dict[str, Any] = {}
        for name, options in configurations(args, dev, vocab_size).items():
            start = time.perf_counter()
            tok = fb.train(train, vocab_size=vocab_size, progress=False, **options)
            seconds = time.perf_counter() - start
            runs[name] = dict(measure(tok, test), seconds=seconds, vocab_size=tok.vocab_size)
            if len(ood) == len(langs):
                runs[name]["out_of_domain"] = measure(tok, ood)
        plain = runs["plain"]
        for row in runs.values():
            row["time_vs_plain"] = row["seconds"] / plain["seconds"]
            row["compression_vs_plain"] = row["bytes_per_token"] / plain["bytes_per_token"]
        results["runs"][str(vocab_size)] = runs
    return results


def table(results: Dict[str, Any]) -> str:
    """The results as Markdown: one summary table per size, then the premiums."""
    out = [f"Training from {results['train_from']}. Verbatim overlap of the splits, each pair apart "
           "(the largest over the languages):\n",
           "| pair | after the drop | before the drop |", "|---|---:|---:|"]
    for pair, name in (("test_in_train", "held-out paragraphs found in training"),
                       ("dev_in_train", "dev paragraphs found in training"),
                       ("test_in_dev", "held-out paragraphs found in dev")):
        def worst(key: str) -> str:
            if not all(key in o for o in results["overlap"].values()):
                return "(not dropped)"
            share, lang = max((o[key], lang) for lang, o in results["overlap"].items())
            return f"{share:.2%} ({lang})" if share else "0.00%"
        out.append(f"| {name} | {worst(pair)} | {worst(pair + '_before')} |")
    out.append("")
    for vocab_size, runs in results["runs"].items():
        out.append(f"### {vocab_size} ids\n")
        out.append("| tokenizer | Gini | max premium | bytes/token | vs plain | Gini out of domain | train s | time vs plain |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for name, r in runs.items():
            ood = f"{r['out_of_domain']['gini']:.4f}" if "out_of_domain" in r else "–"
            out.append(f"| {name} | {r['gini']:.4f} | {r['max_premium']:.3f} | {r['bytes_per_token']:.3f} | "
                       f"{r['compression_vs_plain']:.3f} | {ood} | {r['seconds']:.1f} | {r['time_vs_plain']:.2f}x |")
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
    ap.add_argument("--dev-lines", type=int, default=1000, help="help paragraphs for the dev set (from 80%% on)")
    ap.add_argument("--test-lines", type=int, default=1000, help="held-out help paragraphs (from 90%% on)")
    ap.add_argument("--train-from", choices=["parallel", "nl"], default="parallel",
                    help="training text: the first 60%% of the aligned help (default), or the documentation "
                    "files, deduplicated against the dev and held-out paragraphs")
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
