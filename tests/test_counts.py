"""Piece counts as values: counted on shards, merged, saved, loaded, trained on.

The property that matters: counting shards and merging the tables gives the table of the
whole corpus (content and order), and training on it gives the tokenizer of the whole
corpus, merge for merge, for every scheme and both trainers.
"""
from __future__ import annotations

import pickle
from array import array

import pytest

import functionalbpe as fb
from functionalbpe.core.piecetable import PieceTable
from functionalbpe.counts import add_tables
from functionalbpe.errors import FunctionalBPEError

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SCHEMES = [("plain", {"pattern": "gpt2"}), ("functional", {}), ("markers", {"punct": True})]
# Small alphabets make repeated pieces, runs (joined by the functional scheme) and ties.
DOCS = st.lists(st.text(alphabet="aAb é 1.\n", max_size=30), max_size=12)


def shards(docs, k):
    return [docs[len(docs) * i // k:len(docs) * (i + 1) // k] for i in range(k)]


@pytest.mark.parametrize("scheme,options", SCHEMES)
@given(docs=DOCS, k=st.integers(1, 4))
@settings(max_examples=40)
def test_shards_merged_equal_the_whole_count(scheme, options, docs, k):
    whole = fb.count(docs, scheme=scheme, threads=1, **options)
    parts = [fb.count(part, scheme=scheme, threads=1, **options) for part in shards(docs, k)]
    merged = fb.PieceCounts.merge(parts)
    assert list(merged.items()) == list(whole.items())  # the order of first occurrence too
    assert merged == whole and merged.total == whole.total


@pytest.mark.parametrize("backend", ["python", "fast"])
@pytest.mark.parametrize("scheme,options", SCHEMES)
@given(docs=DOCS, k=st.integers(1, 3))
@settings(max_examples=25)
def test_training_on_merged_counts_equals_training_on_the_text(scheme, options, docs, k, backend):
    if backend == "fast" and fb.core._native.NATIVE.trainer is None:
        pytest.skip("the compiled trainer is not built")
    parts = [fb.PieceCounts.from_bytes(fb.count(p, scheme=scheme, **options).to_bytes()) for p in shards(docs, k)]
    expected = fb.train(docs, vocab_size=None, scheme=scheme, backend=backend, progress=False, **options)
    got = fb.train(parts, vocab_size=None, backend=backend, progress=False)
    assert got.merges == expected.merges
    assert got.to_payload() == expected.to_payload()


def test_a_mapping_in_order_of_first_occurrence():
    c = fb.count(["b a b", "c b"], pattern="gpt2", special_tokens=["<s>"])
    assert list(c) == ["b", " a", " b", "c"]
    assert dict(c) == {"b": 1, " a": 1, " b": 2, "c": 1} and c["b"] == 1 and "zz" not in c
    assert len(c) == 4 and c.total == 5
    assert c.most_common(1) == [(" b", 2)] and c.most_common()[1:] == [("b", 1), (" a", 1), ("c", 1)]
    assert c.nbytes == len("b a bc".encode()) + 8 * 5 + 8 * 4
    assert c.options["pattern"]["name"] == "gpt2" and c.options["special_tokens"] == ["<s>"]
    with pytest.raises(TypeError):
        c["x"] = 1  # read-only


def test_specials_are_recorded_and_given_to_the_tokenizer():
    docs = ["a<s>b a<s>b"] * 3
    counts = fb.count(docs, pattern="gpt2", special_tokens=["<s>"])
    assert "<s>" not in counts
    tok = fb.train(counts, vocab_size=None, progress=False)
    assert tok.merges == fb.train(docs, vocab_size=None, pattern="gpt2", special_tokens=["<s>"], progress=False).merges
    assert tok.special_tokens == {"<s>": tok.vocab_size - 1}
    with pytest.raises(FunctionalBPEError, match="special tokens"):
        fb.train(counts, special_tokens=["<t>"], progress=False)


def test_train_refuses_options_that_contradict_the_counts():
    counts = fb.count(["a b"], scheme="functional")
    with pytest.raises(FunctionalBPEError, match="pattern 'gpt2'"):
        fb.train(counts, scheme="functional", pattern="gpt2", progress=False)
    assert fb.train(counts, scheme="functional", vocab_size=None, progress=False).merges == \
        fb.train(["a b"], scheme="functional", vocab_size=None, progress=False).merges


@pytest.mark.parametrize("other,named", [
    (dict(pattern="gpt4"), "pattern 'gpt4'"),
    (dict(scheme="functional", pattern="gpt2"), "scheme 'functional'"),
    (dict(pattern="gpt2", special_tokens=["<s>"]), "special_tokens"),
])
def test_merge_refuses_tables_counted_differently(other, named):
    a = fb.count(["a b"], pattern="gpt2")
    with pytest.raises(FunctionalBPEError, match=named):
        a + fb.count(["a b"], **other)


def test_merge_refuses_another_normalization():
    a = fb.count(["é"], scheme="functional")
    b = fb.count(["é"], scheme="functional", normalize="NFC")
    with pytest.raises(FunctionalBPEError, match="normalize"):
        fb.PieceCounts.merge([a, b])


@pytest.mark.parametrize("pure", [False, True])
def test_counts_never_wrap(monkeypatch, pure):
    if pure:
        monkeypatch.setenv("FUNCTIONALBPE_PUREPYTHON", "1")
    big = 2**63 - 1
    a = PieceTable(b"ab", array("q", [0, 1, 2]), array("q", [big - 5, 1]))
    b = PieceTable(b"ba", array("q", [0, 1, 2]), array("q", [big - 1, 5]))
    assert add_tables([a, b]).to_dict() == {"a": big - 5 + 5, "b": big}
    c = PieceTable(b"a", array("q", [0, 1]), array("q", [6]))
    with pytest.raises(FunctionalBPEError, match="past 2\\*\\*63 - 1"):
        add_tables([a, c])


def test_counts_too_large_for_the_trainer_are_one_clear_error():
    from functionalbpe.schemes.plain import PlainScheme

    huge = fb.PieceCounts(PieceTable(b"abcab", array("q", [0, 3, 5]), array("q", [2**62, 2**62])), PlainScheme("gpt2"))
    if fb.core._native.NATIVE.trainer is None:
        pytest.skip("the compiled trainer is not built")
    with pytest.raises(FunctionalBPEError, match="too large"):
        fb.train(huge, vocab_size=300, backend="fast", progress=False)


def test_the_c_sum_refuses_what_is_not_a_count():
    summer = fb.core._native.NATIVE.summer
    if summer is None:
        pytest.skip("the compiled sum of counts is not built")
    for data, offsets, counts in [
        (b"ab", [0, 1, 1, 2], [1, 1, 1]),  # an empty piece
        (b"ab", [0, 1, 2], [1, 0]),  # a count of 0
        (b"ab", [0, 1, 3], [1, 1]),  # past the data
        (b"aa", [0, 1, 2], [1, 1]),  # a piece twice
        (b"ab", [1, 2], [1]),  # not from 0
    ]:
        with pytest.raises(ValueError, match="piece"):
            summer.CountsSum().add(data, array("q", offsets), array("q", counts))
    with pytest.raises(ValueError, match="one more"):
        summer.CountsSum().add(b"a", array("q", [0]), array("q", [1]))
    # a piece given twice in one table, though an earlier table has it already
    total = summer.CountsSum()
    total.add(b"a", array("q", [0, 1]), array("q", [1]))
    with pytest.raises(ValueError, match="piece 1"):
        total.add(b"aa", array("q", [0, 1, 2]), array("q", [1, 1]))


def test_an_empty_table_merges_like_any_other():
    empty = fb.count([], pattern="gpt2")
    with pytest.raises(FunctionalBPEError, match="pattern"):
        empty + fb.count(["a"], pattern="gpt4")
    assert list((empty + fb.count(["a b"], pattern="gpt2")).items()) == [("a", 1), (" b", 1)]


def test_prune_drops_rare_pieces_and_says_so():
    c = fb.count(["a a a b b c"], pattern="gpt2")
    pruned = c.prune(2)
    assert dict(pruned) == {" a": 2, " b": 2}
    assert dict(pruned) == {k: v for k, v in c.items() if v >= 2}
    assert pruned.pruned_below == 2 and c.pruned_below is None
    assert (pruned + c).pruned_below == 2
    assert fb.PieceCounts.from_bytes(pruned.to_bytes()).pruned_below == 2
    assert c.prune(1) == c and c.prune(1).pruned_below is None


def test_save_load_and_pickle_round_trip(tmp_path):
    c = fb.count(["héllo wörld\U0001F600 ok", "tail"], scheme="markers", case=True)
    path = tmp_path / "a.counts"
    c.save(path)
    loaded = fb.PieceCounts.load(path)
    assert list(loaded.items()) == list(c.items()) and loaded.options == c.options
    assert pickle.loads(pickle.dumps(c)) == c
    assert fb.PieceCounts.from_bytes(c.to_bytes(compress=False)) == c


def test_saving_and_loading_then_merging_equals_one_count(tmp_path):
    docs = [f"doc {i} " + "word " * (i % 7) for i in range(60)]
    paths = []
    for i in range(3):
        paths.append(tmp_path / f"{i}.counts")
        fb.count(docs[i * 20:(i + 1) * 20], scheme="functional").save(paths[-1])
    merged = fb.PieceCounts.merge(fb.PieceCounts.load(p) for p in paths)
    assert list(merged.items()) == list(fb.count(docs, scheme="functional").items())
    assert fb.train(merged, vocab_size=600, progress=False).merges == \
        fb.train(docs, scheme="functional", vocab_size=600, progress=False).merges


def test_the_cli_counts_merges_and_trains_as_on_the_text(tmp_path, capsys):
    from functionalbpe.cli import main

    docs = [f"line {i} of shard {i % 3}: " + "ab " * (i % 5) for i in range(30)]
    shards_ = []
    for k in range(3):
        shards_.append(tmp_path / f"s{k}.txt")
        shards_[-1].write_text("\n".join(docs[k::3]), encoding="utf-8")
    parts = []
    for k, shard in enumerate(shards_):
        parts.append(str(tmp_path / f"s{k}.counts"))
        assert main(["count", str(shard), "--scheme", "markers", "--option", "punct=true", "-o", parts[-1], "-q"]) == 0
    assert main(["counts-info", parts[0], "--top", "2"]) == 0
    shown = capsys.readouterr().out
    assert "markers" in shown and '"punct": true' in shown and "top 2:" in shown and "no (exact)" in shown
    out = tmp_path / "tok.json"
    assert main(["train", "--counts", *parts, "--vocab-size", "400", "-o", str(out), "-q"]) == 0
    expected = fb.train(fb.files(*shards_), scheme="markers", punct=True, vocab_size=400, progress=False)
    assert fb.Tokenizer.load(out).merges == expected.merges
    # files and counts together, or neither, is one clear error; so is a damaged counts file
    assert main(["train", str(shards_[0]), "--counts", parts[0], "--vocab-size", "400", "-o", str(out)]) == 2
    (tmp_path / "bad.counts").write_bytes(b"FBPECNTS")
    assert main(["counts-info", str(tmp_path / "bad.counts")]) == 2
    assert "bad.counts: truncated" in capsys.readouterr().err


@pytest.mark.parametrize("scheme", ["plain", "functional", "markers"])
def test_a_special_token_the_text_never_held_is_added_from_the_counts(scheme):
    docs = ["the cat sat on the mat", "The dog, 123 times!"] * 3
    counts = fb.count(docs, scheme=scheme)
    added = fb.train(counts, vocab_size=None, special_tokens=["<|endoftext|>"], progress=False)
    direct = fb.train(docs, vocab_size=None, scheme=scheme, special_tokens=["<|endoftext|>"], progress=False)
    assert added == direct
    assert added.encode("cat<|endoftext|>", allowed_special="all")[-1] == added.special_tokens["<|endoftext|>"]


def test_a_special_token_the_text_may_have_held_is_refused_with_the_reason():
    docs = ["a <|x|> b", "c d"]
    counts = fb.count(docs)  # "<|x|>" was counted as ordinary text
    with pytest.raises(FunctionalBPEError, match=r"every character of it is in some counted piece.*count again"):
        fb.train(counts, special_tokens=["<|x|>"], progress=False)
    kept = fb.count(["a <s> b"], special_tokens=["<s>"])
    both = fb.train(kept, vocab_size=None, special_tokens=["<s>", "<|endoftext|>"], progress=False)
    assert list(both.special_tokens) == ["<s>", "<|endoftext|>"]


def test_the_count_report_says_one_document_in_the_singular():
    from functionalbpe.text.counting import CountReport

    one = CountReport(documents=1, unique_pieces=1)
    many = CountReport(documents=2, unique_pieces=1234)
    assert str(one).startswith("1 document, ") and "1 unique piece in" in str(one)
    assert str(many).startswith("2 documents, ") and "1,234 unique pieces in" in str(many)
