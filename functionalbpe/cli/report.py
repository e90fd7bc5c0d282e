"""``functionalbpe report``: the tokenizer report from the command line.

    functionalbpe report --tokenizer a.json [--tokenizer b.json] [--tiktoken FILE --pattern P]
        [--hf tokenizer.json] [--sentencepiece m.model] [NAME=]FILE... [--baseline NAME]
        [--json out.json] [--html out.html] [--markdown out.md] [--context N] [--width D]

Tokenizers and corpora are named by ``NAME=FILE`` or, by default, by the file name without
its extension. The tables go to stdout; every output file is rendered first and then
written atomically, so an error leaves no file half-written.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ..errors import FunctionalBPEError
from ..util.output import atomic_write_text
from ..measure.measures import RESULTS
from ..peers.registry import ADAPTERS
from ..text.corpus import files
from .common import COUNT, check_output, positive_number


class _AddTokenizer(argparse.Action):
    """Collect every tokenizer option into one list, in command-line order."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        items = list(getattr(namespace, "tokenizers", None) or [])
        items.append((self.const, values))
        setattr(namespace, "tokenizers", items)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="measure tokenizers on named corpora: tables, Markdown, JSON, HTML",
        description="Measure tokenizers on named corpora: tokens per word, bytes per token, byte fallback, "
        "entropy, unused entries, duplicate families, context capacity, embedding cost. "
        "The measures are defined in docs/metrics.md.",
    )
    p.add_argument("inputs", nargs="+", metavar="[NAME=]FILE", help="a corpus: a file, directory or glob pattern")
    p.add_argument("--tokenizer", "-t", action=_AddTokenizer, const="tokenizer", dest="tokenizers",
                   metavar="[NAME=]FILE", help="a functionalbpe tokenizer file (repeatable)")
    for kind, adapter in ADAPTERS.items():  # a flag per peer library: --tiktoken, --hf, ...
        p.add_argument(f"--{kind}", action=_AddTokenizer, const=kind, dest="tokenizers",
                       metavar="[NAME=]FILE", help=f"{adapter.file_help} (repeatable)")
    p.add_argument("--pattern", action="append", default=[], metavar="P",
                   help=f"pattern of the {_pattern_flags()} files: one for all, or one per file in order "
                   "(gpt4 for cl100k, o200k, or a regex)")
    p.add_argument("--baseline", default=None, metavar="NAME", help="the tokenizer the others are compared with (default: the first)")
    p.add_argument("--json", default=None, metavar="FILE", help="write the figures as JSON")
    p.add_argument("--html", default=None, metavar="FILE", help="write one self-contained HTML page with plots")
    p.add_argument("--markdown", default=None, metavar="FILE", help="write the tables as Markdown")
    p.add_argument("--context", type=COUNT, default=8192, metavar="N", help="context length for 'words in N tokens' (default 8192)")
    p.add_argument("--width", type=COUNT, default=4096, metavar="D", help="model width for the embedding cost (default 4096)")
    p.add_argument("--bytes-per-param", type=positive_number, default=2, metavar="B",
                   help="bytes per embedding parameter (default 2: bf16)")
    p.add_argument("--sort-by", default="fertility", choices=list(RESULTS), metavar="MEASURE",
                   help="the baseline's measure that orders the corpora, most expensive first (default fertility)")
    p.add_argument("--coverage", action="store_true",
                   help="also train each of our schemes on each corpus until no pair is left (slow)")
    p.add_argument("--reference", default=None, metavar="CORPUS",
                   help="the corpus token premiums are relative to (default: en, else the first)")
    p.add_argument("--code", action="append", default=None, metavar="CORPUS",
                   help="a corpus of source code, for the operator measures (default: by name: c, go, js, python, ...)")
    p.add_argument("--python", action="append", default=None, metavar="CORPUS",
                   help="a corpus of Python source, for the measures that read Python's tokens (default: named python or py)")
    p.add_argument("--example", default=None, metavar="TEXT",
                   help="a sentence shown split into each tokenizer's tokens (default: the first line of the first corpus)")
    p.add_argument("--encoding-errors", default="strict", choices=["strict", "replace"], help="invalid UTF-8 in a corpus")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run, tokenizers=None)


def split_name(arg: str) -> Tuple[Optional[str], str]:
    """``"en=a.txt"`` → ``("en", "a.txt")``; an argument that is an existing path has no name.

    >>> split_name("en=corpora/en.txt"), split_name("en.txt")
    (('en', 'corpora/en.txt'), (None, 'en.txt'))
    """
    name, sep, path = arg.partition("=")
    if sep and name and path and not os.path.exists(arg):
        return name, path
    return None, arg


def default_name(path: str) -> str:
    """A file's name without extension; an HF ``tokenizer.json`` takes its folder's name."""
    p = Path(path.rstrip("/"))
    if p.stem == "tokenizer" and p.parent.name:
        return p.parent.name
    return p.stem or path


def _unique(pairs: List[Tuple[str, Any]], what: str) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for name, value in pairs:
        if name in out:
            raise FunctionalBPEError(f"two {what} are named {name!r}; name them apart with NAME=FILE")
        out[name] = value
    return out


def _pattern_flags() -> str:
    """The flags of the files that hold no pattern (``--pattern`` is theirs)."""
    return " and ".join(f"--{kind}" for kind, adapter in ADAPTERS.items() if adapter.needs_pattern)


def load_cli_tokenizers(items: List[Tuple[str, str]], patterns: List[str]) -> Dict[str, Any]:
    """The tokenizers given as ``(kind, [NAME=]FILE)``, named; ``patterns`` go to the files
    that hold none (one for all, or one per file in order)."""
    from ..measure.adapters import load_tokenizer

    patterned = [v for k, v in items if k in ADAPTERS and ADAPTERS[k].needs_pattern]
    if patterns and not patterned:
        raise FunctionalBPEError(f"--pattern applies to {_pattern_flags()} files, and none was given")
    if len(patterns) > 1 and len(patterns) != len(patterned):
        raise FunctionalBPEError(
            f"give one --pattern for all {len(patterned)} {_pattern_flags()} files, or one per file in order "
            f"(got {len(patterns)})"
        )
    pairs = []
    t = 0
    for kind, arg in items:
        name, path = split_name(arg)
        adapter = ADAPTERS.get(kind)
        if adapter is None:  # --tokenizer: ours, or any file by its kind
            tok = load_tokenizer(path)
        elif adapter.needs_pattern:
            pattern = patterns[t] if len(patterns) > 1 else (patterns[0] if patterns else None)
            t += 1
            tok = adapter.from_file(path, pattern)
        else:
            tok = adapter.from_file(path)
        pairs.append((name or default_name(path), tok))
    return _unique(pairs, "tokenizers")


def run(args: argparse.Namespace) -> int:
    from ..measure.report import report

    if not args.tokenizers:
        flags = ", ".join(f"--{kind}" for kind in ADAPTERS)
        raise FunctionalBPEError(f"no tokenizer given: add --tokenizer FILE (or {flags})")
    for path in (args.json, args.markdown, args.html):
        check_output(path)
    tokenizers = load_cli_tokenizers(args.tokenizers, args.pattern)
    corpora = _unique(
        [(name or default_name(path), files(path, errors=args.encoding_errors))
         for name, path in map(split_name, args.inputs)],
        "corpora",
    )
    result = report(
        tokenizers,
        corpora,
        baseline=args.baseline,
        context=args.context,
        width=args.width,
        bytes_per_param=args.bytes_per_param,
        coverage=args.coverage,
        sort_by=args.sort_by,
        progress=False if args.quiet else True,
        reference=args.reference,
        code=args.code,
        python=args.python,
        example=args.example,
    )
    # Render everything before writing anything, so that a failure leaves no partial output.
    outputs = [(path, render()) for path, render in (
        (args.json, result.to_json),
        (args.markdown, result.to_markdown),
        (args.html, result.to_html),
    ) if path]
    for path, text in outputs:
        atomic_write_text(path, text)
    sys.stdout.write(result.to_text())
    sys.stdout.flush()
    return 0
