"""The training trace: every trainer reports the same merges and the same runner-ups.

The lesson (core/reference.py) defines the runner-up: the pair that comes second by the tie
rule, among the pairs it counted, if it occurs min_frequency times. The heap trainer and the
C loop must report exactly that, merge for merge, and tracing must not change what they
learn. Then the records of ``train(..., trace=...)``, the TSV file and the CLI flag.
"""
from __future__ import annotations

import functools

import pytest

import functionalbpe as fb
from functionalbpe.cli import main
from functionalbpe.core import reference
from functionalbpe.core import trainer as face
from functionalbpe.core._native import NATIVE
from functionalbpe.core.alphabet import POLICY_CODES
from functionalbpe.util.display import show_text_form
from functionalbpe.teach.merge_trace import TSV_COLUMNS

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

needs_native = pytest.mark.skipif(NATIVE.trainer is None, reason="the compiled trainer is not built")
COUNTS = st.integers(1, 5) | st.integers(2**32, 2**40)


def piece_counts(symbols, max_len=14, max_pieces=12):
    piece = st.lists(st.sampled_from(symbols), max_size=max_len).map(tuple)
    return st.dictionaries(piece, COUNTS, max_size=max_pieces)


def traced(train, *args, **options):
    """(merges, [(merge, runner_up), ...]) of one trainer."""
    calls = []
    merges = train(*args, on_merge=lambda m, r: calls.append((m, r)), **options)
    return merges, calls


TRAINERS = {
    "reference": reference.train,
    "heap": functools.partial(face.learn_merges_from_symbols, backend="python"),
}
if NATIVE.trainer is not None:
    TRAINERS["fast"] = functools.partial(face.learn_merges_from_symbols, backend="fast")


def check_all_agree(pieces, num_merges, first_id, **options):
    expected_merges = reference.train(pieces, num_merges, first_id, **options)
    results = {name: traced(train, pieces, num_merges, first_id, **options) for name, train in TRAINERS.items()}
    for name, (merges, calls) in results.items():
        assert merges == expected_merges, name  # tracing changes nothing
        assert [m for m, _ in calls] == merges, name
        assert calls == results["reference"][1], name
    return results["reference"][1]


@given(
    pieces=piece_counts(tuple(b"ab")) | piece_counts(tuple(b"aab ")),
    num_merges=st.none() | st.integers(0, 30),
    min_frequency=st.sampled_from([1, 2, 3, 2**33]),
)
def test_runner_ups_agree_on_tiny_alphabets(pieces, num_merges, min_frequency):
    calls = check_all_agree(pieces, num_merges, 256, min_frequency=min_frequency)
    for (a, b, count), second in calls:
        if second is not None:  # second by the same rule, and frequent enough
            assert reference.best_pair_key((a, b), count) < reference.best_pair_key(second[:2], second[2])
            assert second[2] >= min_frequency


@given(
    data=st.data(),
    num_symbols=st.integers(1, 5),
    policy=st.sampled_from(sorted(POLICY_CODES)),
    num_merges=st.none() | st.integers(0, 20),
)
def test_runner_ups_agree_under_every_policy(data, num_symbols, policy, num_merges):
    flags = data.draw(st.lists(st.integers(0, 63), min_size=num_symbols, max_size=num_symbols))
    pieces = data.draw(piece_counts(tuple(range(num_symbols))))
    check_all_agree(pieces, num_merges, num_symbols, flags=flags, merge_policy=policy)


def test_runner_up_shows_a_tie():
    # "ab" and "cd" occur equally often: (a, b) wins on the smaller pair, (c, d) is second
    calls = check_all_agree({tuple(b"ab"): 3, tuple(b"cd"): 3}, None, 256)
    assert calls == [((97, 98, 3), (99, 100, 3)), ((99, 100, 3), None)]


SCHEMES = [
    ("plain", {}),
    ("functional", {}),
    ("markers", {"punct": True, "case": True}),
]
TEXT = "The cat sat.  The CAT sat on the mat!!! Héllo héllo, 1234 — naïve café\n\tend\n" * 3


@pytest.mark.parametrize("scheme, options", SCHEMES)
def test_records_are_the_same_from_both_backends(scheme, options):
    records = {}
    for backend in ["python"] + (["fast"] if NATIVE.trainer is not None else []):
        got = []
        tok = fb.train(TEXT, vocab_size=None, scheme=scheme, trace=got.append, progress=False,
                       backend=backend, **options)
        records[backend] = got
        assert [(r.left, r.right) for r in got] == tok.merges
        assert [r.count for r in got] == tok.merge_counts
        for r in got:  # the shown tokens are those of the tokenizer
            assert r.id == tok.alphabet.first_merge + r.rank
            def shown(i):
                return show_text_form(tok.token_bytes(i), tok.scheme.show)
            assert (r.token, r.left_token, r.right_token) == (shown(r.id), shown(r.left), shown(r.right))
            assert tok.token_bytes(r.left) + tok.token_bytes(r.right) == tok.token_bytes(r.id)
    assert len(set(map(tuple, records.values()))) == 1


def test_tsv_file_and_cli(tmp_path):
    text = "low lower lowest newer newest\n" * 4
    records = []
    fb.train(text, vocab_size=280, pattern="gpt2", trace=records.append, progress=False)
    path = tmp_path / "merges.tsv"
    fb.train(text, vocab_size=280, pattern="gpt2", trace=path, progress=False)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == list(TSV_COLUMNS)
    assert [line + "\n" for line in lines[1:]] == [r.tsv_row() for r in records]
    assert all(len(line.split("\t")) == len(TSV_COLUMNS) for line in lines)
    assert lines[1].split("\t")[:4] == ["0", "256", str(records[0].left), str(records[0].right)]
    corpus = tmp_path / "c.txt"
    corpus.write_text(text, encoding="utf-8")
    cli_path = tmp_path / "cli.tsv"
    assert main(["train", str(corpus), "--vocab-size", "280", "--pattern", "gpt2", "-q",
                 "-o", str(tmp_path / "t.json"), "--trace", str(cli_path)]) == 0
    assert cli_path.read_text(encoding="utf-8") == path.read_text(encoding="utf-8")


def test_bad_trace_is_refused_before_training(tmp_path):
    with pytest.raises(fb.OutputError):
        fb.train("ab ab", vocab_size=257, trace=tmp_path / "no" / "such.tsv", progress=False)
    with pytest.raises(TypeError, match="trace must be"):
        fb.train("ab ab", vocab_size=257, trace=42, progress=False)


def test_shown_tokens_are_one_line():
    records = []
    fb.train(["a\tb\x00c\x1b[0m \n\n é"] * 3, vocab_size=None, pattern="gpt2", trace=records.append, progress=False)
    for r in records:
        for cell in (r.left_token, r.right_token, r.token):
            assert not any(ch < " " or ch == "\x7f" for ch in cell), cell


def test_examples_in_the_docstrings():
    import doctest

    from functionalbpe.util import display

    for module in (display, reference):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module.__name__
