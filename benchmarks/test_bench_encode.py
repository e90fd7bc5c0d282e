"""pytest-benchmark figures for the encoder (run: pytest benchmarks/test_bench_encode.py).

One tokenizer (8192 ids, GPT-4 pattern) is trained once per module on about 4 MB of the
standard library; each benchmark encodes one kind of input: ordinary code and prose (short
pieces, mostly whole tokens), long pieces (a megabyte of spaces, of one letter, a long run
of random words with no space), and a batch on all cores. Skipped without the
pytest-benchmark plugin. The side-by-side comparison with tiktoken and HF tokenizers is
benchmarks/bench_encode.py.
"""
from __future__ import annotations

import random

import pytest

pytest.importorskip("pytest_benchmark")

from bench_encode import read_documents, tokenizer_for  # noqa: E402

from functionalbpe.cli.stdlib import stdlib_sources  # noqa: E402

VOCAB = 8192


@pytest.fixture(scope="module")
def docs():
    return read_documents(stdlib_sources(), 4_000_000, split=False)


@pytest.fixture(scope="module")
def tok(docs):
    return tokenizer_for(docs, VOCAB)[0]


def _describe(benchmark, tok, text):
    benchmark.extra_info["bytes"] = len(text.encode("utf-8"))
    benchmark.extra_info["native"] = tok.native
    benchmark.extra_info["scanner"] = tok._encoder.scanner


class TestShortPieces:
    def test_stdlib_one_text(self, benchmark, tok, docs):
        text = "".join(docs[:100])
        _describe(benchmark, tok, text)
        ids = benchmark(tok.encode_ordinary, text)
        assert tok.decode(ids) == text

    def test_stdlib_documents(self, benchmark, tok, docs):
        part = docs[:200]
        _describe(benchmark, tok, "".join(part))
        ids = benchmark(lambda: [tok.encode_ordinary(d) for d in part])
        assert len(ids) == len(part)

    def test_batch_all_cores(self, benchmark, tok, docs):
        _describe(benchmark, tok, "".join(docs))
        out = benchmark.pedantic(tok.encode_batch, args=(docs,), kwargs={"disallowed_special": ()}, rounds=3)
        assert len(out) == len(docs)


class TestLongPieces:
    @pytest.mark.parametrize("unit", [" ", "x", "\n", "^"])
    def test_a_megabyte_of_one_character(self, benchmark, tok, unit):
        text = unit * 1_000_000
        _describe(benchmark, tok, text)
        ids = benchmark(tok.encode_ordinary, text)
        assert tok.decode(ids) == text

    def test_random_words_without_spaces(self, benchmark, tok, docs):
        words = [w for w in "".join(docs[:50]).split() if w.isalpha()]
        rng = random.Random(0)
        text = "".join(rng.choice(words) for _ in range(50_000))  # one piece of ~300 KB
        _describe(benchmark, tok, text)
        ids = benchmark(tok.encode_ordinary, text)
        assert tok.decode(ids) == text
