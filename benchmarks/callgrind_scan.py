"""Scan+count of 1 MB of English prose with one pattern, for callgrind's instruction counts.

    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=count_segment \\
        python benchmarks/callgrind_scan.py o200k compiled     # or: hand

The count inside ``count_segment`` (the scanner and the insertion into the flat table; the
insertion is about 37M of it and the same for every scanner) does not move with the load of a
shared machine, as MB/s do. ``compiled`` forces the pattern (a name of
``bench_scan.COMPILED``) through the compiled engine; ``hand`` uses its hand-written scanner.
The text is the 1,000,000 characters of ``../shared/corpora/nl/en.txt`` after its first 64 KB
(1,000,862 bytes), in documents of about 64 KB; a 2,000-character warm-up measures the
pattern's tables first (counted too: about 0.2% of the total).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_scan import COMPILED, documents_of  # noqa: E402
from functionalbpe.core._native import NATIVE  # noqa: E402

CORPUS = Path(os.environ.get("FUNCTIONALBPE_CORPORA", ROOT.parent / "shared" / "corpora")) / "nl" / "en.txt"


def main(name: str, mode: str) -> None:
    scanner = NATIVE.scanner
    assert scanner is not None, "the compiled scanner is not built"
    whole = CORPUS.read_text(encoding="utf-8")
    text = whole[65536 : 65536 + 1_000_000]
    pattern = scanner.PROGRAM + COMPILED[name] if mode == "compiled" else name
    counter = scanner.PieceCounter(pattern, threads=1)
    counter.add_texts([whole[:2000]])
    counter.flat()
    counter.close()
    counter = scanner.PieceCounter(pattern, threads=1)
    counter.add_texts(documents_of(text))
    counter.flat()
    counter.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "compiled")
