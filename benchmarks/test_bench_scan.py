"""pytest-benchmark: scan-and-count throughput (run with ``pytest benchmarks/test_bench_scan.py``).

Skipped as a whole without the pytest-benchmark plugin. Figures are per call on a slice of
the standard library (``FUNCTIONALBPE_BENCH_MB``, default 4 MB); ``extra_info`` records the
size so that MB/s = mb / mean. Each benchmark also checks its result against regex+Counter,
so a fast wrong answer fails.
"""
from __future__ import annotations

import os
import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("pytest_benchmark")
import regex  # noqa: E402

if importlib.util.find_spec("functionalbpe") is None:  # not installed: the checkout itself
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from functionalbpe.core._native import NATIVE  # noqa: E402
from functionalbpe.text.patterns import PATTERNS  # noqa: E402
from functionalbpe.training import count_pieces  # noqa: E402

MB = float(os.environ.get("FUNCTIONALBPE_BENCH_MB", "4"))


@pytest.fixture(scope="module")
def docs():
    from bench_scan import load_docs  # benchmarks/ is on sys.path under pytest's rootdir

    return load_docs(MB)


@pytest.fixture(scope="module")
def expected(docs):
    cache = {}

    def get(pattern):
        if pattern not in cache:
            finder = regex.compile(PATTERNS[pattern])
            counts: Counter = Counter()
            for doc in docs:
                counts.update(finder.findall(doc))
            cache[pattern] = dict(counts)
        return cache[pattern]

    return get


def _size(docs):
    return sum(len(d.encode("utf-8")) for d in docs) / 1e6


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_scan_count_one_thread(benchmark, docs, expected, pattern):
    if NATIVE.scanner is None:
        pytest.skip("compiled scanner not built")
    benchmark.extra_info["mb"] = _size(docs)
    result = benchmark(count_pieces, docs, pattern, threads=1)
    assert result == expected(pattern)


@pytest.mark.parametrize("pattern", ["gpt4", "o200k"])
def test_scan_count_all_cores(benchmark, docs, expected, pattern):
    if NATIVE.scanner is None:
        pytest.skip("compiled scanner not built")
    benchmark.extra_info["mb"] = _size(docs)
    result = benchmark(count_pieces, docs, pattern, threads=None)
    assert result == expected(pattern)


def test_scan_count_with_special_tokens(benchmark, docs, expected):
    text = ["<|endoftext|>".join(docs)]
    benchmark.extra_info["mb"] = _size(docs)
    result = benchmark(count_pieces, text, "gpt4", None, ["<|endoftext|>"])
    assert result == expected("gpt4")


def test_regex_counter_gpt4(benchmark, docs, expected):
    """The pure-Python path, for the ratio (one round: it is slow)."""
    benchmark.extra_info["mb"] = _size(docs)
    finder = regex.compile(PATTERNS["gpt4"])

    def run():
        counts: Counter = Counter()
        for doc in docs:
            counts.update(finder.findall(doc))
        return dict(counts)

    result = benchmark.pedantic(run, rounds=1, iterations=1)
    assert result == expected("gpt4")
