"""``functionalbpe counts-info FILE...``: what a counts file holds.

Distinct pieces, pieces in all, the memory the table takes, how it was counted (scheme,
options, pattern, special tokens, pruning) and its most frequent pieces, whitespace made
visible (:mod:`functionalbpe.util.display`).
"""
from __future__ import annotations

import argparse
import json
from typing import Any, List

from ..counts import PieceCounts
from ..util.display import terminal_safe, visible
from .common import whole_number, write_output

HELP = "show what a counts file holds"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("counts-info", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    p.add_argument("inputs", nargs="+", metavar="FILE", help="counts files written by `count`")
    p.add_argument("--top", type=whole_number(0), default=10, metavar="N", help="show the N most frequent pieces (10)")
    p.set_defaults(run=run)


def describe(counts: PieceCounts, top: int) -> List[str]:
    """The lines that describe one table."""
    options = counts.options
    lines = [
        f"  pieces:   {len(counts):,} distinct, {counts.total:,} in all",
        f"  memory:   {counts.nbytes:,} bytes",
        f"  scheme:   {options['scheme']} {json.dumps(options['scheme_options'], ensure_ascii=False)}",
        f"  pattern:  {options['pattern']['name']}"
        + (f" {options['pattern']['regex']!r}" if options["pattern"]["name"] == "custom" else ""),
        f"  specials: {json.dumps(options['special_tokens'], ensure_ascii=False)}",
        "  pruned:   " + (f"pieces counted fewer than {counts.pruned_below} times were dropped (inexact)"
                          if counts.pruned_below is not None else "no (exact)"),
    ]
    if top:
        lines.append(f"  top {top}:")
        lines += [f"    {c:>14,}  {visible(counts.scheme.show(piece))}" for piece, c in counts.most_common(top)]
    return lines


def run(args: argparse.Namespace) -> int:
    out = []
    for path in args.inputs:
        out += [f"{path}:"] + describe(PieceCounts.load(path), args.top)
    # Pieces, specials and patterns come from the file: shown, never sent to the terminal raw.
    write_output(None, terminal_safe("\n".join(out)) + "\n")
    return 0
