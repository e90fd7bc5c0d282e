"""Fresh text encoded by a superword tokenizer and by the plain one, for callgrind.

    python benchmarks/callgrind_superwords.py train DIR [LANG IDS T CHARS]   # once: DIR/plain.json, DIR/sw.json
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=fbpe_encode_text \\
        python benchmarks/callgrind_superwords.py encode DIR/sw.json     # or plain.json; one-stage
    python benchmarks/callgrind_superwords.py paired DIR [CHARS] [N]   # wall time, the two on one CPU

Both tokenizers have 8,192 ids, trained on the first 2,000,000 characters of
``../shared/corpora/nl/en.txt``; the superword one with ``superwords=6000``. Or IDS ids from
the first CHARS characters of ``nl/LANG.txt``, the superword one with ``superwords=T``
(kept in DIR/corpus.json for the other two commands; docs/superwords.md measures
``fr 32768 24576 2000000``, ``de 16384 12288 2000000`` and ``ru 16384 12288 1000000``). ``encode`` first
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

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import functionalbpe as fb  # noqa: E402

CORPORA = Path(os.environ.get("FUNCTIONALBPE_CORPORA", ROOT.parent / "shared" / "corpora"))
WARM, FRESH = 300_000, 300_000
DEFAULT = {"lang": "en", "ids": 8192, "t": 6000, "train": 2_000_000}


def corpus_of(folder: Path) -> dict:
    """The language and training size the tokenizers in `folder` were trained with."""
    kept = folder / "corpus.json"
    return json.loads(kept.read_text()) if kept.exists() else DEFAULT


def corpus_text(corpus: dict) -> str:
    return (CORPORA / "nl" / f"{corpus['lang']}.txt").read_text(encoding="utf-8")


def main(argv: list) -> None:
    if argv[0] == "train":
        out = Path(argv[1])
        corpus = dict(DEFAULT)
        for key, value in zip(("lang", "ids", "t", "train"), argv[2:6]):
            corpus[key] = value if key == "lang" else int(value)
        text = corpus_text(corpus)[: corpus["train"]]
        out.mkdir(parents=True, exist_ok=True)
        (out / "corpus.json").write_text(json.dumps(corpus))
        fb.train([text], vocab_size=corpus["ids"], progress=False).save(out / "plain.json")
        fb.train([text], vocab_size=corpus["ids"], superwords=corpus["t"], progress=False).save(out / "sw.json")
        return
    if argv[0] == "paired":
        paired_wall(Path(argv[1]), *(int(a) for a in argv[2:4]))
        return
    corpus = corpus_of(Path(argv[1]).parent)
    text, train = corpus_text(corpus), corpus["train"]
    tok = fb.Tokenizer.load(argv[1])
    if argv[2:] == ["one-stage"]:
        tok.encoder.set_stages(None)
    tok.encoder.encode_pieces(tok.scheme.split(text[train : train + WARM]))
    ids = tok.encode_ordinary(text[train + WARM : train + WARM + FRESH], threads=1)
    print(f"{argv[1]}: {len(ids)} ids")


def paired_wall(folder: Path, chars: int = 20_000, n: int = 27) -> None:
    sys.path.insert(0, str(ROOT.parent / "shared" / "tools"))
    from paired import paired  # noqa: E402

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_encode_peers import pin_to_one_cpu  # noqa: E402

    pin_to_one_cpu()
    corpus = corpus_of(folder)
    text, train = corpus_text(corpus), corpus["train"]
    fresh = text[train + WARM :]
    if (n + 1) * chars > len(fresh):
        raise SystemExit(f"nl/{corpus['lang']}.txt holds {len(fresh)} characters after the warm-up: fewer chunks or smaller")
    chunks = [fresh[k * chars : (k + 1) * chars] for k in range(n + 1)]

    def side(path: Path):
        tok = fb.Tokenizer.load(path)
        tok.encode_ordinary(text[train : train + WARM], threads=1)
        at = iter(chunks)
        return lambda: tok.encode_ordinary(next(at), threads=1)

    result = paired(side(folder / "sw.json"), side(folder / "plain.json"), n=n)
    print(f"plain time / superword time, {n} pairs of {chars:,} fresh characters: {result}")


if __name__ == "__main__":
    main(sys.argv[1:])
