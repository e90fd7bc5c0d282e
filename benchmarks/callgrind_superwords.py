"""Fresh English encoded by a superword tokenizer and by the plain one, for callgrind.

    python benchmarks/callgrind_superwords.py train DIR          # once: DIR/plain.json, DIR/sw.json
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=fbpe_encode_text \\
        python benchmarks/callgrind_superwords.py encode DIR/sw.json     # or plain.json; one-stage
    python benchmarks/callgrind_superwords.py paired DIR [CHARS] [N]   # wall time, the two on one CPU

Both tokenizers have 8,192 ids, trained on the first 2,000,000 characters of
``../shared/corpora/nl/en.txt``; the superword one with ``superwords=6000``. ``encode`` first
encodes the next 300,000 characters piece by piece (``Encoder.encode_pieces``, which fills the
same piece cache but is not counted), then the 300,000 after them with ``encode_ordinary``:
the count inside ``fbpe_encode_text`` is the cost of text the encoder has not seen, scanner
included, and does not move with the load of a shared machine. ``one-stage`` turns the
two-stage path of a superword tokenizer off (csrc/lib/encode/encode.c, "a piece in two stages").
``paired`` times the same in wall time: ``encode_ordinary(chunk, threads=1)`` of the two
tokenizers on N + 1 chunks of CHARS characters (default 20,000 and 27) that follow the
warm-up, each chunk fresh to both, as the median of back-to-back pairs
(``../shared/tools/paired.py``), both in this process on one CPU; printed as plain time ÷
superword time, the superword tokenizer's speed as a share of the plain one's.
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
    if argv[0] == "paired":
        paired_wall(Path(argv[1]), *(int(a) for a in argv[2:4]))
        return
    tok = fb.Tokenizer.load(argv[1])
    if argv[2:] == ["one-stage"]:
        tok.encoder.set_stages(None)
    tok.encoder.encode_pieces(tok.scheme.split(text[TRAIN : TRAIN + WARM]))
    ids = tok.encode_ordinary(text[TRAIN + WARM : TRAIN + WARM + FRESH], threads=1)
    print(f"{argv[1]}: {len(ids)} ids")


def paired_wall(folder: Path, chars: int = 20_000, n: int = 27) -> None:
    sys.path.insert(0, str(ROOT.parent / "shared" / "tools"))
    from paired import paired  # noqa: E402

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_encode_peers import pin_to_one_cpu  # noqa: E402

    pin_to_one_cpu()
    text = CORPUS.read_text(encoding="utf-8")
    fresh = text[TRAIN + WARM :]
    if (n + 1) * chars > len(fresh):
        raise SystemExit(f"{CORPUS} holds {len(fresh)} characters after the warm-up: fewer chunks or smaller")
    chunks = [fresh[k * chars : (k + 1) * chars] for k in range(n + 1)]

    def side(path: Path):
        tok = fb.Tokenizer.load(path)
        tok.encode_ordinary(text[TRAIN : TRAIN + WARM], threads=1)
        at = iter(chunks)
        return lambda: tok.encode_ordinary(next(at), threads=1)

    result = paired(side(folder / "sw.json"), side(folder / "plain.json"), n=n)
    print(f"plain time / superword time, {n} pairs of {chars:,} fresh characters: {result}")


if __name__ == "__main__":
    main(sys.argv[1:])
