"""Rewrite the README's Performance section from a real run of ``functionalbpe bench``.

    python benchmarks/update_readme.py                 # runs the bench (about 8 minutes), then edits
    python benchmarks/update_readme.py --from out.json # uses a saved ``bench --json`` result
    python benchmarks/update_readme.py -- --corpus a.txt --corpus b.txt  # bench's own options

The section lies between the markers ``<!-- bench:start -->`` and ``<!-- bench:end -->``;
everything else in the README is left as it is.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import importlib.util
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, ROOT)

from functionalbpe.measure import bench  # noqa: E402
from functionalbpe.util.output import atomic_write_text  # noqa: E402

START, END = "<!-- bench:start -->", "<!-- bench:end -->"
COMMAND = "functionalbpe bench --json bench.json"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--from", dest="source", help="a JSON file written by `functionalbpe bench --json`")
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    ap.add_argument("bench_args", nargs="*", help="options for functionalbpe bench (after --)")
    args = ap.parse_args()
    command = " ".join([COMMAND] + args.bench_args)
    if args.source:
        with open(args.source, encoding="utf-8") as fh:
            reports = json.load(fh)["reports"]
    else:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "bench.json")
            subprocess.run([sys.executable, "-m", "functionalbpe", "bench", "--json", out, *args.bench_args],
                           check=True, cwd=ROOT)
            with open(out, encoding="utf-8") as fh:
                reports = json.load(fh)["reports"]
    with open(args.readme, encoding="utf-8") as fh:
        text = fh.read()
    if START not in text or END not in text:
        sys.exit(f"{args.readme}: the markers {START} and {END} are missing")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    machine = reports[0]["machine"]
    body = f"\nMeasured with `{command}` on {machine['cpu']} ({machine['cores']} cores):\n\n"
    body += bench.format_markdown_all(reports)
    atomic_write_text(args.readme, head + START + body + END + tail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
