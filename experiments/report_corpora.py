"""The tokenizer report on the shared corpora, from one command.

Trains a plain, a functional and a markers tokenizer on the same text — the first
``--train-lines`` paragraphs of every language of ``parallel/lohelp_*`` — and reports on the
held-out last ``--eval-lines`` paragraphs of every language. The LibreOffice help is
paragraph-aligned across its 18 languages, so each language's held-out part says the same
thing, and its token count is the fair per-language cost: the corpora are sorted by the
plain tokenizer's token count, most expensive first.

A scheme that this version of functionalbpe does not have yet is skipped with a note.

    python experiments/report_corpora.py                    # writes experiments/out/report.{html,json,md}
    python experiments/report_corpora.py --vocab-size 4096 --train-lines 500 --no-coverage
    python experiments/report_corpora.py --udhr             # and report_udhr.* on the UDHR (22 languages)

The UDHR, also parallel, adds Arabic, Persian, Hindi and Ukrainian, which the training text
does not have; it gets a report of its own, since its texts are not the same size as the
LibreOffice ones and token counts are comparable only within one parallel set.

Options are in ``--help``. On two shared cores the defaults take about 15 seconds with the
compiled trainer and about ten minutes on the pure-Python path (the same figures: both
trainers make the same merges).
"""
from __future__ import annotations

import argparse
import os
import importlib.util
import sys
import time
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, str(ROOT))

import functionalbpe as fb  # noqa: E402
from functionalbpe.errors import FunctionalBPEError  # noqa: E402

# Each scheme with the options of its paper's main variant; the name says which.
SCHEMES = {
    "plain": ("plain", {}),
    "functional": ("functional", {}),
    "markers[w,p,d,↑]": ("markers", {"punct": True, "digits": True, "case": True}),
}


def corpora_path(given: str = None) -> Path:
    if given:
        return Path(given)
    env = os.environ.get("FUNCTIONALBPE_CORPORA")
    return Path(env) if env else ROOT.parent / "shared" / "corpora"


def paragraphs(path: Path) -> List[str]:
    """The file's paragraphs, one per line, each with its line break."""
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", default=None, help="the shared corpora folder (default ../shared/corpora or $FUNCTIONALBPE_CORPORA)")
    parser.add_argument("--vocab-size", type=int, default=8192)
    parser.add_argument("--train-lines", type=int, default=1500, help="paragraphs per language to train on (from the start)")
    parser.add_argument("--eval-lines", type=int, default=500, help="held-out paragraphs per language to report on (from the end)")
    parser.add_argument("--udhr", action="store_true",
                        help="also report on the parallel UDHR texts (22 languages, incl. ar, fa, hi, uk), separately")
    parser.add_argument("--no-coverage", action="store_true", help="skip the full-coverage vocabulary (training to exhaustion)")
    parser.add_argument("--out", default=str(ROOT / "experiments" / "out"), help="output folder")
    parser.add_argument("--quiet", "-q", action="store_true")
    args = parser.parse_args(argv)
    print(f"functionalbpe {fb.__version__}: {fb.core._native.NATIVE.describe()}", file=sys.stderr)

    folder = corpora_path(args.corpora) / "parallel"
    files = sorted(folder.glob("lohelp_*.txt"))
    if not files:
        sys.exit(f"report_corpora: no parallel/lohelp_*.txt under {folder}; pass --corpora")
    progress = False if args.quiet else None
    say = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))

    training: List[str] = []
    held_out: Dict[str, str] = {}
    for path in files:
        lines = paragraphs(path)
        if args.train_lines + args.eval_lines > len(lines):
            sys.exit(f"report_corpora: {path} has {len(lines)} paragraphs, fewer than --train-lines + --eval-lines")
        language = path.stem.split("_", 1)[1]
        training.append("".join(lines[: args.train_lines]))
        held_out[language] = "".join(lines[-args.eval_lines :])
    sets = {"report": (held_out, f"LibreOffice help, {len(files)} languages, held-out {args.eval_lines} paragraphs each")}
    if args.udhr:
        udhr = {p.stem.split("_", 1)[1]: p.read_text(encoding="utf-8") for p in sorted(folder.glob("udhr_*.txt"))}
        sets["report_udhr"] = (udhr, f"Universal Declaration of Human Rights, {len(udhr)} languages")
    size = sum(len(t.encode("utf-8")) for t in training)
    say(f"training on {len(files)} languages × {args.train_lines} paragraphs ({size / 1e6:.2f} MB), "
        f"vocabulary {args.vocab_size}")

    tokenizers = {}
    notes = []
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, (scheme, options) in SCHEMES.items():
        try:
            fb.make_scheme(scheme, **options)
        except FunctionalBPEError as exc:
            notes.append(f"skipped the {scheme} scheme: {exc}")
            say(notes[-1])
            continue
        start = time.perf_counter()
        tok = fb.train(training, vocab_size=args.vocab_size, scheme=scheme, progress=progress, **options)
        say(f"trained {name}: {tok.vocab_size} ids in {time.perf_counter() - start:.1f}s")
        tok.save(out / f"{scheme}.json")
        tokenizers[name] = tok

    for stem, (texts, what) in sets.items():
        start = time.perf_counter()
        report = fb.report(tokenizers, texts, baseline="plain", sort_by="tokens",
                           coverage=not args.no_coverage, progress=progress)
        say(f"measured {stem} in {time.perf_counter() - start:.1f}s")
        title = (f"Tokenizer report: {what}; trained on {args.train_lines} LibreOffice help paragraphs "
                 f"of each of {len(files)} languages, vocabulary {args.vocab_size}")
        report.write_json(out / f"{stem}.json")
        report.write_markdown(out / f"{stem}.md", title)
        report.write_html(out / f"{stem}.html", title)
        print(f"# {title}\n")
        print(report.to_text())
    for note in notes:
        print(f"note: {note}")
    print(f"wrote {', '.join(stem + '.html/.json/.md' for stem in sets)} and the tokenizers to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
