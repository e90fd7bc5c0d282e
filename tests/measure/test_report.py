"""The report's figures, each checked against a count worked out by hand."""
import json
import math
from collections import Counter

import pytest

import functionalbpe as fb
from functionalbpe.measure import metrics
from functionalbpe.errors import CorpusError, FunctionalBPEError
from functionalbpe.measure.measures import HIGHER, LOWER, RESULT_MEASURES, VOCABULARY_MEASURES
from functionalbpe.measure.report import RESULT_KEYS, TOKENIZER_KEYS
from functionalbpe.measure.tables import tables
from functionalbpe.schemes.registry import make_scheme

# Ten words. With the merges a+b → 256 and ␣+ab → 257 and the GPT-2 pattern its pieces are
#   "ab" → [256]          1 token
#   " ab" × 2 → [257]      2 tokens
#   " cd" × 5 → [32, 99, 100]        15 tokens
#   " é" → [32, 0xC3, 0xA9]           3 tokens
#   " x" → [32, 120]                  2 tokens
# 23 tokens in all; 27 characters (18 letters, 9 spaces), 28 bytes (é is two).
TEXT = "ab ab ab cd cd cd cd cd é x"
HAND_COUNTS = {256: 1, 257: 2, 32: 5 + 1 + 1, 99: 5, 100: 5, 0xC3: 1, 0xA9: 1, 120: 1}


def hand_tokenizer():
    return fb.Tokenizer(make_scheme("plain", "gpt2"), [(97, 98), (32, 256)], merge_counts=[3, 2])


def byte_tokenizer():
    return fb.Tokenizer(make_scheme("plain", "gpt2"), [])


def test_the_hand_worked_text_encodes_as_worked_out():
    ids = hand_tokenizer().encode(TEXT)
    assert Counter(ids) == HAND_COUNTS and len(ids) == 23


def test_every_figure_on_ten_words_and_23_tokens():
    r = fb.report({"bpe": hand_tokenizer(), "bytes": byte_tokenizer()}, {"t": TEXT},
                  baseline="bytes", width=4, bytes_per_param=2, progress=False)
    row = next(x for x in r.results() if x["tokenizer"] == "bpe")
    assert (row["tokens"], row["words"], row["chars"], row["bytes"]) == (23, 10, 27, 28)
    assert row["fertility"] == 2.3
    assert row["bytes_per_token"] == row["compression_ratio"] == 28 / 23
    assert row["chars_per_token"] == 27 / 23
    assert row["relative_tokens"] == 23 / 28  # the byte tokenizer needs one token per byte
    # 20 tokens are byte ids (15 of " cd", 3 of " é", 2 of " x"), 2 of them ≥ 0x80.
    assert row["byte_fallback_tokens"] == 20 and row["byte_fallback_rate"] == 20 / 23
    assert row["byte_fallback_non_ascii_tokens"] == 2 and row["byte_fallback_non_ascii_share"] == 0.1
    assert row["unknown_tokens"] == 0 and row["unknown_rate"] == 0.0
    h = -(1 / 23 * math.log2(1 / 23) * 4 + 2 / 23 * math.log2(2 / 23) + 7 / 23 * math.log2(7 / 23)
          + 2 * (5 / 23 * math.log2(5 / 23)))
    assert row["entropy_bits"] == pytest.approx(h, abs=1e-12)
    assert row["effective_vocab"] == pytest.approx(2 ** h, abs=1e-9)
    assert row["distinct_tokens"] == 8
    assert row["unused_entries"] == 258 - 8
    assert row["context_words"] == 3561  # ⌊8192 · 10 / 23⌋ = ⌊3561.7⌋
    assert row["full_coverage_vocab"] is None
    base = next(x for x in r.results() if x["tokenizer"] == "bytes")
    assert base["tokens"] == 28 and base["relative_tokens"] == 1.0 and base["byte_fallback_rate"] == 1.0
    assert base["byte_fallback_non_ascii_share"] == 2 / 28
    tok = next(x for x in r.tokenizer_rows() if x["name"] == "bpe")
    assert tok["embedding_params"] == 258 * 4 and tok["embedding_bytes"] == 258 * 4 * 2
    assert tok["merge_counts"] == [3, 2] and tok["merges"] == 2 and tok["last_merge_count"] == 2
    assert tok["unused_entries"] == 250 and tok["unused_share"] == 250 / 258


def test_totals_add_the_corpora_up():
    r = fb.report({"bpe": hand_tokenizer(), "bytes": byte_tokenizer()}, {"a": TEXT, "b": "ab\n"},
                  baseline="bytes", progress=False)
    total = next(x for x in r.totals() if x["tokenizer"] == "bpe")
    assert total["corpus"] is None
    assert (total["tokens"], total["words"], total["bytes"]) == (23 + 2, 11, 28 + 3)  # "ab" + "\n"
    assert total["relative_tokens"] == 25 / 31


def test_duplicate_families_by_hand():
    # th the ␣the Th The ␣The TH THE ca cat: ten learned entries.
    merges = [(116, 104), (256, 101), (32, 257), (84, 104), (259, 101), (32, 260), (84, 72), (262, 69),
              (99, 97), (264, 116)]
    tok = fb.Tokenizer(make_scheme("plain", "gpt2"), merges)
    assert [tok.token_bytes(256 + i) for i in range(10)] == [
        b"th", b"the", b" the", b"Th", b"The", b" The", b"TH", b"THE", b"ca", b"cat"]
    row = fb.report(tok, {"t": "the cat"}, progress=False).tokenizer_rows()[0]
    assert row["learned_entries"] == 10
    # case: {th Th TH} {the The THE} {␣the ␣The}; space: {the ␣the} {The ␣The};
    # both: {th Th TH} and {the ␣the The ␣The THE} → 2 + 4 = 6 redundant entries.
    assert (row["case_families"], row["space_families"], row["duplicate_families"]) == (3, 2, 2)
    assert row["duplicate_entries"] == 6 and row["duplicate_share"] == 0.6
    assert row["duplicate_examples"] == [["the", " the", "The", " The", "THE"], ["th", "Th", "TH"]]


def test_unused_examples_are_the_longest_unused_learned_entries():
    tok = fb.Tokenizer(make_scheme("plain", "gpt2"), [(97, 98), (256, 99), (32, 257)])  # ab abc ␣abc
    row = fb.report(tok, {"t": "ab"}, progress=False).tokenizer_rows()[0]
    assert row["unused_examples"] == [" abc", "abc"]
    assert row["unused_entries"] == 259 - 1


def test_merge_savings_and_full_coverage_by_hand():
    # "abc abc ab" with GPT-2 pieces abc, ␣abc, ␣ab: a+b (3), then ␣+ab (2, wins the tie with
    # ab+c on the smaller left id), ab+c (1), ␣ab+c (1): four merges, vocabulary 260.
    corpus = "abc abc ab"
    tok = fb.train(corpus, vocab_size=None, pattern="gpt2", progress=False)
    assert tok.merge_counts == [3, 2, 1, 1]
    savings = metrics.merge_savings(tok.merge_counts)
    assert savings == [3, 5, 6, 7]
    # No run like "aaa": the savings are exact, 10 bytes became 3 tokens.
    assert savings[-1] == len(corpus.encode()) - len(tok.encode(corpus)) == 7
    assert fb.full_coverage_vocab_size(corpus, pattern="gpt2", progress=False) == 260
    assert fb.full_coverage_vocab_size([corpus], scheme=tok, progress=False) == 260
    r = fb.report(tok, {"c": corpus, "d": "ab ab"}, coverage=True, progress=False)
    by = {x["corpus"]: x["full_coverage_vocab"] for x in r.results()}
    assert by == {"c": 260, "d": 258}  # "ab ab": a+b, then ␣+ab
    assert r.totals()[0]["full_coverage_vocab"] == fb.full_coverage_vocab_size([corpus, "ab ab"], pattern="gpt2",
                                                                                progress=False)


def test_merge_counts_overcount_overlapping_runs():
    # "aaa" counts (a, a) twice though one merge fits, then (aa, a) once: the curve says 3
    # tokens saved, but 3 bytes became 1 token. It is an upper bound there.
    tok = fb.train("aaa", vocab_size=None, pattern="gpt2", progress=False)
    assert tok.merge_counts == [2, 1] and len(tok.encode("aaa")) == 1
    assert metrics.merge_savings(tok.merge_counts)[-1] == 3 > 3 - 1


def test_corpora_are_sorted_most_expensive_first():
    corpora = {"cheap": "ab ab ab", "dear": "cd cd cd", "middle": "ab cd"}
    r = fb.report(hand_tokenizer(), corpora, progress=False)
    # fertility: cheap 1.0, middle 2.0 ("ab" 1 + " cd" 3 over 2 words), dear 2.67
    assert r.corpus_order() == ["dear", "middle", "cheap"]
    assert [x["corpus"] for x in r.results()] == ["dear", "middle", "cheap"]
    r = fb.report(hand_tokenizer(), corpora, sort_by="bytes_per_token", progress=False)
    assert r.corpus_order() == ["dear", "middle", "cheap"]  # fewest bytes per token first
    r = fb.report(hand_tokenizer(), corpora, sort_by="tokens", progress=False)
    assert r.corpus_order() == ["dear", "middle", "cheap"]  # 8, 4, 3 tokens


def test_json_keys_are_stable():
    r = fb.report({"a": hand_tokenizer(), "b": byte_tokenizer()}, {"t": TEXT}, progress=False)
    data = json.loads(r.to_json())
    assert list(data) == ["format", "settings", "corpora", "tokenizers", "results", "totals", "example"]
    assert data["format"] == "functionalbpe-report/1"
    assert list(data["settings"]) == ["baseline", "context", "width", "bytes_per_param", "sort_by", "coverage",
                                      "reference", "code", "python", "example"]
    assert list(data["corpora"][0]) == ["name", "documents", "words", "chars", "bytes"]
    expected = [
        "corpus", "tokenizer", "tokens", "words", "chars", "bytes", "fertility", "bytes_per_token",
        "chars_per_token", "compression_ratio", "relative_tokens", "byte_fallback_tokens",
        "byte_fallback_rate", "byte_fallback_non_ascii_tokens", "byte_fallback_non_ascii_share",
        "unknown_tokens", "unknown_rate", "entropy_bits", "effective_vocab", "distinct_tokens",
        "unused_entries", "context_words", "full_coverage_vocab",
        # Added later, after every earlier key: keys are added, never renamed or moved.
        "lines", "documents", "tokens_per_line", "lines_per_token", "fertility_mean", "zero_token_documents",
        "mean_token_bytes", "mean_token_chars", "vocab_utilization", "type_token_ratio",
        "renyi_efficiency_1", "renyi_efficiency_2", "renyi_efficiency_2_5", "renyi_efficiency_3",
        "average_token_rank", "bigram_successor_efficiency", "bigram_conditional_entropy_bits",
        "trigram_successor_efficiency", "trigram_conditional_entropy_bits",
        "numbers", "digit_group_f1", "digit_split_entropy_mean", "digit_split_entropy", "tokens_per_number",
        "operators", "operator_isolation", "compound_operators", "compound_preservation", "identifiers",
        "identifier_fragmentation", "tokens_per_identifier", "indent_depth_correlation", "indent_tokens_by_depth",
        "python_leaves", "python_leaf_alignment",
        "round_trip_exact_rate", "char_error_rate", "round_trip_unmeasured_documents", "whitespace_fidelity",
        "aligned_tokens", "complete_utf8_share", "crossing_token_share", "boundary_in_char_rate", "split_char_rate",
        "marker_tokens", "marker_share", "fertility_without_markers",
    ]
    assert list(RESULT_KEYS) == expected
    assert all(list(row) == expected for row in data["results"] + data["totals"])
    assert list(TOKENIZER_KEYS) == [
        "name", "kind", "description", "vocab_size", "entries", "special_tokens", "embedding_params",
        "embedding_bytes", "unused_entries", "unused_share", "unused_examples", "learned_entries",
        "case_families", "space_families", "duplicate_families", "duplicate_entries", "duplicate_share",
        "duplicate_examples", "merges", "last_merge_count", "merge_counts",
        "gini_tokens", "gini_tokens_per_byte", "gini_tokens_per_line", "lorenz_curve", "reference_corpus",
        "token_premium", "max_token_premium", "utilization_cv",
    ]
    assert all(list(row) == list(TOKENIZER_KEYS) for row in data["tokenizers"])
    for key in ("fertility", "bytes_per_token", "chars_per_token", "byte_fallback_rate", "entropy_bits"):
        assert isinstance(data["results"][0][key], float)


def test_the_tables_take_their_columns_from_the_registry():
    r = fb.report({"a": hand_tokenizer(), "b": byte_tokenizer()}, {"t": TEXT}, coverage=True, width=4096,
                  progress=False)
    by_corpus, totals, vocab, corpora = tables(r)[:4]
    assert by_corpus.headers == [
        "corpus", "tokenizer", "tokens", "tokens/word", "bytes/token", "chars/token", "tokens vs a", "byte tokens",
        "of those ≥0x80", "H bits", "2^H", "unused entries", "words in 8,192 tokens", "full-coverage vocab",
    ]  # no "unknown" column: no tokenizer here has an unknown token
    assert totals.headers == ["tokenizer"] + by_corpus.headers[2:]
    assert vocab.headers == [
        "tokenizer", "kind", "vocab", "embedding (4,096 × 2 B)", "unused", "unused %", "learned entries",
        "duplicate families", "case", "space", "redundant entries", "redundant %", "merges", "last merge count",
    ]
    assert vocab.numeric == [False, False] + [True] * 12
    row = by_corpus.rows[0]
    result = r.results()[0]
    assert row[:4] == ["t", "a", "23", "2.30"] and result["tokens"] == 23 and result["fertility"] == 2.3
    # Every measure with a header is a column (unless it hides itself), each named once.
    for measures, table in ((RESULT_MEASURES, by_corpus), (VOCABULARY_MEASURES, vocab)):
        shown = [m.column_header(r.settings) for m in measures if m.header is not None and not m.family and m.shown(r)]
        assert sorted(shown) == sorted(table.headers[len(table.headers) - len(shown):])
        assert all(m.direction in (LOWER, HIGHER, None) for m in measures)
    assert len({m.key for m in RESULT_MEASURES}) == len(RESULT_MEASURES)


def test_texts_can_be_documents_paths_and_files(tmp_path):
    (tmp_path / "a.txt").write_text("ab ab ab\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("cd cd cd cd cd é x\n", encoding="utf-8")
    sources = {
        "docs": ["ab ab ab\n", "cd cd cd cd cd é x\n"],
        "paths": [tmp_path / "a.txt", tmp_path / "b.txt"],
        "files": fb.files(tmp_path),
        "generator": (d for d in ["ab ab ab\n", "cd cd cd cd cd é x\n"]),
    }
    r = fb.report(hand_tokenizer(), sources, progress=False)
    rows = {x["corpus"]: {k: v for k, v in x.items() if k != "corpus"} for x in r.results()}
    assert rows["docs"] == rows["paths"] == rows["files"] == rows["generator"]
    # ab ␣ab ␣ab ↵ | cd ␣cd×4 ␣é ␣x ↵  →  (1 + 1 + 1 + 1) + (2 + 12 + 3 + 2 + 1)
    assert rows["docs"]["tokens"] == 4 + 20
    assert all(c["documents"] == 2 for c in r.corpus_rows())


def test_bad_input_is_a_clear_error(tmp_path):
    with pytest.raises(FunctionalBPEError, match="baseline 'nope' is not one of the tokenizers"):
        fb.report(hand_tokenizer(), {"t": TEXT}, baseline="nope", progress=False)
    with pytest.raises(CorpusError, match="corpus 'e' holds no text"):
        fb.report(hand_tokenizer(), {"e": ""}, progress=False)
    with pytest.raises(FunctionalBPEError, match="sort_by must be one of"):
        fb.report(hand_tokenizer(), {"t": TEXT}, sort_by="beauty", progress=False)
    with pytest.raises(FunctionalBPEError, match="width must be a positive finite number"):
        fb.report(hand_tokenizer(), {"t": TEXT}, width=0, progress=False)
    with pytest.raises(FunctionalBPEError, match="bytes_per_param must be a positive finite number"):
        fb.report(hand_tokenizer(), {"t": TEXT}, bytes_per_param=float("nan"), progress=False)
    with pytest.raises(CorpusError, match="document 1 is a int"):
        fb.report(hand_tokenizer(), {"t": ["ok", 3]}, progress=False)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\nnot \xff fine\n")
    with pytest.raises(CorpusError, match=r"bad.txt: line 2: invalid UTF-8 at byte offset 9"):
        fb.report(hand_tokenizer(), {"t": bad}, progress=False)
    with pytest.raises(FunctionalBPEError, match="give several tokenizers as a dict"):
        fb.report([hand_tokenizer(), byte_tokenizer()], {"t": TEXT}, progress=False)
    with pytest.raises(FunctionalBPEError, match="cannot measure a dict"):
        fb.report({"x": {}}, {"t": TEXT}, progress=False)
