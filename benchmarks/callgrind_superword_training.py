"""SuperBPE training, one phase at a time, for callgrind.

    python benchmarks/callgrind_superword_training.py sample DIR [TENTHS]  # once: DIR/*.txt
    python benchmarks/callgrind_superword_training.py keep DIR OUT.pkl    # once: the replay's input
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*encode_each_piece*' \\
        python benchmarks/callgrind_superword_training.py replay OUT.pkl
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*train_merges_flat*' \\
        python benchmarks/callgrind_superword_training.py stage-two OUT.pkl
    python benchmarks/callgrind_superword_training.py train DIR [plain]   # wall time per phase

``sample`` writes the first TENTHS tenths (default 1: 9.8 MB) of each file of the shared
corpora ``nl``, ``code`` and ``parallel``, cut after a line, the text the 100 MB measurement of
docs/superwords.md trains on, scaled down. ``keep`` trains ``fb.train(..., vocab_size=32768,
superwords=24000)`` on one thread and keeps what the replay gets (the stage-one merges and the
table of distinct second-stage pieces) and what it gives (a digest of the ids), so that
``replay`` runs the replay alone (``encode_each_piece``, one thread) and checks its ids, and
``stage-two`` the second stage's merge loop alone and checks its merges. Instruction counts
do not move with the load of a shared machine.
"""
from __future__ import annotations

import glob
import hashlib
import os
import pickle
import sys
import time
import warnings
from array import array
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import functionalbpe as fb  # noqa: E402
import functionalbpe.core.trainer as trainer  # noqa: E402
from functionalbpe.core.alphabet import Alphabet  # noqa: E402
from functionalbpe.core.encoder import Encoder  # noqa: E402

CORPORA = Path(os.environ.get("FUNCTIONALBPE_CORPORA", ROOT.parent / "shared" / "corpora"))
VOCAB, T = 32768, 24000


def digest(*arrays) -> str:
    return hashlib.sha256(b"".join(bytes(memoryview(a).cast("B")) for a in arrays)).hexdigest()[:16]


def sample(out: str, tenths: int) -> None:
    os.makedirs(out, exist_ok=True)
    for name in ("nl", "code", "parallel"):
        for path in sorted(glob.glob(str(CORPORA / name / "*.txt"))):
            data = Path(path).read_bytes()
            text = data[: len(data) * tenths // 10].decode("utf-8", "ignore")
            Path(out, f"{name}_{Path(path).name}").write_text(text[: text.rfind("\n") + 1], encoding="utf-8")


def keep(corpus: str, out: str) -> None:
    kept = {}
    replayed, loop = trainer._replayed, trainer.learn_merges_from_symbols

    def spy_replay(encoder, symbols, threads):
        kept.update(merges=list(encoder.alphabet.merges), data=bytes(symbols.data),
                    offsets=bytes(memoryview(symbols.offsets).cast("B")))
        table = replayed(encoder, symbols, threads)
        kept.update(ids_digest=digest(table.ids, table.ends), ids=bytes(memoryview(table.ids).cast("B")),
                    ends=bytes(memoryview(table.ends).cast("B")), counts=bytes(memoryview(table.counts).cast("B")))
        return table

    def spy_loop(pieces, num_merges, first_id, **options):
        merges = loop(pieces, num_merges, first_id, **options)
        kept.update(num_merges=num_merges, first_id=first_id, options=options, merges_digest=digest(array("q", [x for m in merges for x in m])))
        return merges

    trainer._replayed, trainer.learn_merges_from_symbols = spy_replay, spy_loop
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fb.train(fb.files(*sorted(glob.glob(corpus + "/*.txt"))), vocab_size=VOCAB, superwords=T, progress=False, threads=1)
    with open(out, "wb") as f:
        pickle.dump(kept, f)
    print(f"{len(kept['data']):,} bytes in {len(kept['offsets']) // 8 - 1:,} distinct second-stage pieces; "
          f"ids {kept['ids_digest']}, merges {kept['merges_digest']}")


def replay(kept: dict) -> None:
    offsets = array("q")
    offsets.frombytes(kept["offsets"])
    ids, ends = Encoder(Alphabet((), kept["merges"])).native.encode_each_piece(kept["data"], offsets, 1)
    got = digest(ids, ends)
    print(f"{len(ids):,} ids, {got}: {'the same' if got == kept['ids_digest'] else 'NOT THE SAME as ' + kept['ids_digest']}")


def stage_two(kept: dict) -> None:
    import numpy as np

    from functionalbpe.core.piecetable import SymbolTable

    table = SymbolTable(np.frombuffer(kept["ids"], dtype=np.uint32), np.frombuffer(kept["ends"], dtype=np.int64),
                        np.frombuffer(kept["counts"], dtype=np.int64))
    merges = trainer.learn_merges_from_symbols(table, kept["num_merges"], kept["first_id"], **kept["options"])
    got = digest(array("q", [x for m in merges for x in m]))
    print(f"{len(merges):,} merges, {got}: "
          f"{'the same' if got == kept['merges_digest'] else 'NOT THE SAME as ' + kept['merges_digest']}")


def train(corpus: str, plain: bool) -> None:
    def timed(name, module, attr):
        original = getattr(module, attr)

        def spy(*args, **kwargs):
            start = time.perf_counter()
            result = original(*args, **kwargs)
            print(f"{name}: {time.perf_counter() - start:.3f} s", flush=True)
            return result

        setattr(module, attr, spy)

    import functionalbpe.training as training

    timed("count", training, "_count")
    timed("stage-one loop", trainer, "learn_merges")
    timed("replay", trainer, "_replayed")
    timed("stage-two loop", trainer, "learn_merges_from_symbols")
    corpus_files = fb.files(*sorted(glob.glob(corpus + "/*.txt")))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fb.train(corpus_files, vocab_size=VOCAB, superwords=None if plain else T, progress=False)
    print(f"{'plain' if plain else 'superwords'}: {time.perf_counter() - start:.3f} s")


def main(argv: list) -> None:
    if len(argv) >= 2 and argv[0] == "sample":
        sample(argv[1], int(argv[2]) if len(argv) > 2 else 1)
    elif len(argv) == 3 and argv[0] == "keep":
        keep(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] in ("replay", "stage-two"):
        with open(argv[1], "rb") as f:
            kept = pickle.load(f)
        (replay if argv[0] == "replay" else stage_two)(kept)
    elif len(argv) >= 2 and argv[0] == "train":
        train(argv[1], argv[2:] == ["plain"])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
