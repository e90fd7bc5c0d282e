"""Fresh English encoded by a superword tokenizer and by the plain one, for callgrind.

    python benchmarks/callgrind_superwords.py train DIR          # once: DIR/plain.json, DIR/sw.json
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=fbpe_encode_text \\
        python benchmarks/callgrind_superwords.py encode DIR/sw.json     # or plain.json; one-stage

Both tokenizers have 8,192 ids, trained on the first 2,000,000 characters of
``../shared/corpora/nl/en.txt``; the superword one with ``superwords=6000``. ``encode`` first
encodes the next 300,000 characters piece by piece (``Encoder.encode_pieces``, which fills the
same piece cache but is not counted), then the 300,000 after them with ``encode_ordinary``:
the count inside ``fbpe_encode_text`` is the cost of text the encoder has not seen, scanner
included, and does not move with the load of a shared machine. ``one-stage`` turns the
two-stage path of a superword tokenizer off (csrc/lib/encode/encode.c, "a piece in two stages").
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import functionalbpe as fb  # noqa: E402

CORPUS = Path(os.environ.get("FUNCTIONALBPE_CORPORA", ROOT.parent / "shared" / "corpora")) / "nl" / "en.txt"
TRAIN, WARM, FRESH = 2_000_000, 300_000, 300_000


def main(argv: list) -> None:
    text = CORPUS.read_text(encoding="utf-8")
    if argv[0] == "train":
        out = Path(argv[1])
        out.mkdir(parents=True, exist_ok=True)
        fb.train([text[:TRAIN]], vocab_size=8192, progress=False).save(out / "plain.json")
        fb.train([text[:TRAIN]], vocab_size=8192, superwords=6000, progress=False).save(out / "sw.json")
        return
    tok = fb.Tokenizer.load(argv[1])
    if argv[2:] == ["one-stage"]:
        tok.encoder.set_stages(None)
    tok.encoder.encode_pieces(tok.scheme.split(text[TRAIN : TRAIN + WARM]))
    ids = tok.encode_ordinary(text[TRAIN + WARM : TRAIN + WARM + FRESH], threads=1)
    print(f"{argv[1]}: {len(ids)} ids")


if __name__ == "__main__":
    main(sys.argv[1:])
