"""``functionalbpe train FILE... --vocab-size N``: train a tokenizer on files and save it;
``functionalbpe train --counts a.counts b.counts ... --vocab-size N``: on piece counts written
by ``functionalbpe count`` (docs/counts.md), which gives the tokenizer of their text;
``functionalbpe train --lang en=en/ --lang el=el.txt [--weight el=3 | --temperature 0.3]
[--objective parity --dev en=dev.en --dev el=dev.el] --vocab-size N``: several languages,
weighed or trained for parity (docs/parity.md).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Dict, Optional

from ..core.wordrules import NO_RULES, SUPERWORD_RULES, TokenRules
from ..counts import PieceCounts
from ..errors import FunctionalBPEError
from ..formats.sniff import kind_of
from ..text.corpus import Files
from ..util.display import plural
from ..util.output import check_output_path
from ..training import BACKENDS, train
from .common import (COUNT, LIMIT, VOCAB_SIZE, add_corpus_args, add_scheme_args, check_output, corpus_files, input_paths,
                     named_values, positive_number, scheme_options, whole_number)

# Not HF's tokenizer.json: run in a model's folder, `train` had replaced that file.
DEFAULT_OUT = "functionalbpe.json"

def add_parser(sub: Any) -> None:
    p = sub.add_parser("train", help="train a tokenizer on files", description="Train a tokenizer on files.")
    p.add_argument("inputs", nargs="*", metavar="FILE", help="files, directories or glob patterns")
    p.add_argument("--counts", nargs="+", default=None, metavar="COUNTS",
                   help="train on piece counts written by `count` (merged) instead of files")
    p.add_argument("--vocab-size", type=VOCAB_SIZE, required=True, help="bytes + atoms + merges + special tokens")
    add_scheme_args(p)
    p.add_argument("--min-frequency", type=COUNT, default=1, help="stop when the best pair occurs fewer times")
    p.add_argument("--merge-policy", default="prefix", choices=["atomic", "prefix", "free"],
                   help="which merges a scheme's operators (case and accent instructions) may take part "
                   "in: atomic never merges them, prefix only with other operators, free with text too "
                   "(default: prefix; docs/training.md)")
    p.add_argument("--backend", default="auto", choices=BACKENDS,
                   help="the trainer: compiled (fast), pure Python, or the fast one when built; all give "
                   "the same merges (default: auto)")
    add_corpus_args(p)
    p.add_argument("--out", "-o", default=DEFAULT_OUT,
                   help=f"where to write the tokenizer (default: {DEFAULT_OUT}; never over another library's file)")
    p.add_argument("--trace", default=None, metavar="FILE.tsv",
                   help="write one line per merge: the pair, the tokens, its count and the runner-up")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    grow = p.add_argument_group("growing a vocabulary (docs/superwords.md)")
    grow.add_argument("--base", default=None, metavar="TOKENIZER",
                      help="continue training this tokenizer (ours, an HF tokenizer.json, a tiktoken rank file, "
                      "GPT-2's files): every id of it kept, its merges first, the new ones learned on FILEs")
    grow.add_argument("--superwords", type=COUNT, default=None, metavar="T",
                      help="SuperBPE: ordinary BPE up to T ids, then merges across words (the stage-2 pattern, "
                      "or --pattern) up to --vocab-size")
    grow.add_argument("--max-words", type=LIMIT, default=None, metavar="N",
                      help="no new token of more than N words (default with --superwords: 4, as SuperBPE's "
                      "published tokenizers; 0: any number)")
    grow.add_argument("--colon-space", action="store_true",
                      help="allow new tokens that hold ': ' (SuperBPE's published tokenizers do not)")
    g = p.add_argument_group("several languages (docs/parity.md)")
    g.add_argument("--lang", action="append", default=[], metavar="NAME=PATH",
                   help="one language's files, directory or glob (repeatable); the languages are counted apart")
    g.add_argument("--weight", action="append", default=[], metavar="NAME=W",
                   help="multiply a language's counts by W relative to the others (repeatable; default 1)")
    g.add_argument("--temperature", type=float, default=None, metavar="ALPHA",
                   help="weigh each language by its size to the power ALPHA - 1 (p ∝ n^ALPHA, as XLM-R samples)")
    g.add_argument("--objective", choices=["frequency", "parity"], default="frequency",
                   help="frequency: the most frequent pair overall; parity: the most frequent pair of the "
                   "language whose --dev text costs the most tokens now (default: frequency)")
    g.add_argument("--dev", action="append", default=[], metavar="NAME=PATH",
                   help="a language's development text for --objective parity, the same text in every language")
    g.add_argument("--target-ratio", action="append", default=[], metavar="NAME=R",
                   help="instead of --dev: the compression ratio (bytes per token) --objective parity aims at "
                   "for a language, one per --lang")
    g.add_argument("--parity-variant", choices=["base", "window"], default="base",
                   help="window: balance over the last --window-size merges (default: base)")
    g.add_argument("--window-size", type=COUNT, default=100, help="merges in the window (default: 100)")
    g.add_argument("--alpha", type=positive_number, default=2.0, help="the window variant's alpha (default: 2)")
    g.add_argument("--global-merges", type=whole_number(0, 2**31 - 1), default=0, metavar="M",
                   help="make the first M merges by global frequency, then parity (default: 0)")
    p.set_defaults(run=run)


def language_options(args: argparse.Namespace) -> Dict[str, Any]:
    """train()'s keyword options for ``--lang`` corpora: the weights or temperature, the
    objective and the parity options."""
    if not args.lang:
        if args.weight or args.temperature is not None or args.objective != "frequency" or args.dev or args.target_ratio:
            raise FunctionalBPEError("--weight, --temperature, --objective and --dev are about languages: "
                                     "give each language's corpus with --lang NAME=PATH")
        return {}
    weights = None
    if args.weight:
        weights = {lang: 1.0 for lang in named_values(args.lang, "--lang")}
        for lang, text in named_values(args.weight, "--weight").items():
            try:
                weights[lang] = positive_number(text)
            except argparse.ArgumentTypeError as exc:
                raise FunctionalBPEError(f"--weight {lang}={text}: {exc}") from None
    dev = {lang: corpus_files(args, [path]) for lang, path in named_values(args.dev, "--dev").items()} or None
    ratios: Optional[Dict[str, float]] = None
    if args.target_ratio:
        ratios = {}
        for lang, text in named_values(args.target_ratio, "--target-ratio").items():
            try:
                ratios[lang] = positive_number(text)
            except ValueError as exc:
                raise FunctionalBPEError(f"--target-ratio {lang}={text}: {exc}") from None
    options: Dict[str, Any] = dict(weights=weights, temperature=args.temperature, objective=args.objective, dev=dev,
                                   target_ratios=ratios)
    if args.objective == "parity":
        options.update(parity_variant=args.parity_variant, window_size=args.window_size, alpha=args.alpha,
                       global_merges=args.global_merges)
    return options


def growing(args: argparse.Namespace) -> Dict[str, Any]:
    """train()'s options for --base and --superwords."""
    if args.base is None and args.superwords is None:
        if args.max_words is not None or args.colon_space:
            raise FunctionalBPEError("--max-words and --colon-space are rules for the merges after --base or --superwords")
        return {}
    if args.lang or args.counts is not None and args.superwords is not None:
        raise FunctionalBPEError("--base and --superwords train on FILEs (--base also on --counts), not on --lang")
    options: Dict[str, Any] = {"base": args.base, "superwords": args.superwords}
    if args.max_words is not None or args.colon_space:
        default = SUPERWORD_RULES if args.superwords is not None else NO_RULES
        max_words = default.max_words if args.max_words is None else (args.max_words or None)
        options["token_rules"] = TokenRules(max_words, args.colon_space or default.colon_space)
    return options


def run(args: argparse.Namespace) -> int:
    # Before hours of training, not after; never over what it reads.
    check_output(args.out, input_paths(args.inputs), args.counts or [], args.base,
                 [value.split("=", 1)[-1] for value in args.lang or []])
    if (bool(args.inputs) + bool(args.counts) + bool(args.lang)) != 1:
        raise FunctionalBPEError("give one of FILEs to train on, --counts COUNTS... or --lang NAME=PATH...")
    languages = language_options(args)  # checked before anything is read
    if args.trace is not None:
        check_output_path(args.trace)
    other = os.path.isfile(args.out) and kind_of(args.out)
    if other and other != "functionalbpe":
        raise FunctionalBPEError(f"{args.out} is a tokenizer file of another library ({other}); it is not replaced: give another -o")
    start = time.perf_counter()
    if args.counts:
        # One table held at a time besides the sum: memory is the result's.
        corpus: Any = PieceCounts.merge(PieceCounts.load(path) for path in args.counts)
        source = plural(len(args.counts), "counts file", "counts files")
    elif args.lang:
        corpus = {lang: corpus_files(args, [path]) for lang, path in named_values(args.lang, "--lang").items()}
        source = plural(len(corpus), "language")
    else:
        corpus = corpus_files(args)
        source = plural(len(corpus), "file")
    tok = train(
        corpus,
        vocab_size=args.vocab_size,
        scheme=args.scheme,
        pattern=args.pattern,
        special_tokens=args.special,
        min_frequency=args.min_frequency,
        merge_policy=args.merge_policy,
        backend=args.backend,
        progress=False if args.quiet else True,
        threads=args.threads,
        trace=args.trace,
        **growing(args),
        **languages,
        **scheme_options(args),
    )
    if isinstance(corpus, Files) and not corpus.stats.chars:
        raise FunctionalBPEError(f"read 0 characters from {source}: nothing to train on (no tokenizer written)")
    tok.save(args.out)
    if not args.quiet:
        sys.stderr.write(
            f"wrote {args.out}: {plural(tok.vocab_size, 'id')} ({plural(len(tok.merges), 'merge')}) from {source} "
            f"in {time.perf_counter() - start:.1f}s\n"
        )
    return 0
