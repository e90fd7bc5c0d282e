"""pytest-benchmark figures for the trainer's core (run: pytest benchmarks/test_bench_train.py).

The pieces of about 5 MB of the standard library are counted once per module; each
benchmark then times one stage of the merge stage on them. Skipped without the
pytest-benchmark plugin or without the compiled trainer. The side-by-side comparison with
rustbpe and HF tokenizers is benchmarks/bench_train.py.
"""
from __future__ import annotations

import pytest

pytest.importorskip("pytest_benchmark")

from functionalbpe.core import trainer  # noqa: E402
from functionalbpe.core._native import NATIVE  # noqa: E402
from functionalbpe.core.piecetable import PieceTable  # noqa: E402
from functionalbpe.core.alphabet import Alphabet  # noqa: E402
from functionalbpe.cli.stdlib import stdlib_sources  # noqa: E402
from functionalbpe.text.corpus import files  # noqa: E402
from functionalbpe.training import count_pieces  # noqa: E402

pytestmark = pytest.mark.skipif(NATIVE.trainer is None, reason="the compiled trainer is not built")

VOCAB = 8192


@pytest.fixture(scope="module")
def counts():
    return count_pieces(files(*stdlib_sources(max_bytes=5_000_000), errors="replace"), "gpt4")


@pytest.fixture(scope="module")
def symbols(counts):
    return {Alphabet().symbols(piece): count for piece, count in counts.items()}


def _describe(benchmark, counts):
    benchmark.extra_info["pieces"] = len(counts)
    benchmark.extra_info["bytes_in_pieces"] = sum(len(p.encode("utf-8")) for p in counts)


class TestMergeStage:
    def test_text_form_to_merges(self, benchmark, counts):
        _describe(benchmark, counts)
        merges = benchmark.pedantic(trainer.learn_merges, args=(PieceTable.from_dict(counts), Alphabet(), VOCAB - 256), rounds=5)
        assert len(merges) == VOCAB - 256

    def test_loading_only(self, benchmark, counts):
        """Pieces into C arrays and the first pair count, no merge."""
        _describe(benchmark, counts)
        assert benchmark.pedantic(trainer.learn_merges, args=(PieceTable.from_dict(counts), Alphabet(), 0), rounds=5) == []

    def test_symbol_tuples_to_merges(self, benchmark, symbols, counts):
        """The reference's signature: one Python tuple per piece to read."""
        _describe(benchmark, counts)
        merges = benchmark.pedantic(trainer.learn_merges_from_symbols, args=(symbols, VOCAB - 256, 256), rounds=5)
        assert len(merges) == VOCAB - 256


class TestReference:
    def test_reference_at_1024(self, benchmark, symbols, counts):
        """For scale: the pure-Python (heap) trainer on the same pieces, fewer merges."""
        _describe(benchmark, counts)
        merges = benchmark.pedantic(trainer.heap_train, args=(symbols, 1024 - 256, 256), rounds=1)
        assert merges == trainer.learn_merges_from_symbols(symbols, 1024 - 256, 256)
