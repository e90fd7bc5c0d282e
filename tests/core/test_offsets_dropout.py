"""Offsets (the span of the input each token came from: equal to HF's offset mapping, and to
the decoded spans) and BPE-dropout (p=0 is plain BPE, a seed fixes it, every draw decodes
back, p=1 leaves bytes, the token count grows with p)."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functionalbpe as fb
from functionalbpe.core.dropout import encode_piece_dropout
from functionalbpe.core.reference import encode_piece, ranks_from_merges

from ..helpers import hf_export, peer_text, stdlib_text, tricky_text
from .test_encoder import merge_tables, runs

SPECIALS = ["<|endoftext|>", "<s>"]
# Text UTF-8 can hold (a lone surrogate would be read as U+FFFD and not decode back).
utf8_text = tricky_text.map(lambda t: t.encode("utf-8", "replace").decode("utf-8"))
TEXT = "Hello wörld! 日本語の文章 😀👍🏽\r\n  def f(x): return x  # ça va <s> ok"


@pytest.fixture(scope="module")
def tok() -> fb.Tokenizer:
    docs = stdlib_text(20_000) + [TEXT * 5]
    return fb.train(docs, vocab_size=256 + 200 + len(SPECIALS), special_tokens=SPECIALS, progress=False)


@pytest.fixture(scope="module", params=["functional", "markers"])
def scheme_tok(request) -> fb.Tokenizer:
    scheme = fb.make_scheme(request.param)
    docs = ["Hello World HELLO world héllo\n  x = 1\n"] * 20 + [TEXT]
    return fb.train(docs, vocab_size=256 + len(scheme.atoms) + 60, scheme=scheme, special_tokens=SPECIALS, progress=False)


# -- offsets ------------------------------------------------------------------------------------


def check_spans(tok: fb.Tokenizer, text: str, ids, spans) -> None:
    """Spans are non-empty, in order, cover the text; each token's bytes lie in its span,
    and equal it where the token starts and ends on character boundaries."""
    assert len(spans) == len(ids)
    if not ids:
        return
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
        assert s0 < e0 and s0 <= s1 and e1 >= e0 and s1 in (e0, e0 - 1)
    offset = 0
    data = text.encode("utf-8")
    for token, (start, end) in zip(ids, spans):
        piece = tok.decode_bytes([token])
        span_bytes = text[start:end].encode("utf-8")
        assert piece in span_bytes
        aligned = len(text[:start].encode("utf-8")) == offset and len(text[:end].encode("utf-8")) == offset + len(piece)
        assert aligned == (piece == span_bytes)
        offset += len(piece)
    assert offset == len(data)


@settings(max_examples=80, deadline=None)
@given(utf8_text)
def test_offsets_are_the_decoded_spans(tok, text):
    ids, spans = tok.encode_with_offsets(text, allowed_special="all")
    assert ids == tok.encode(text, allowed_special="all")
    check_spans(tok, text, ids, spans)


@settings(max_examples=100, deadline=None)
@given(peer_text)
def test_offsets_equal_hfs_offset_mapping(tok, hf, text):
    encoding = hf.encode(text, add_special_tokens=False)
    assert tok.encode_with_offsets(text, allowed_special="all") == (encoding.ids, encoding.offsets)


@pytest.fixture(scope="module")
def hf(tok, tmp_path_factory):
    return hf_export(tok, tmp_path_factory.mktemp("offsets"))


def test_offsets_of_an_imported_layout(tok):
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {tok.token_bytes(i): i + 1 for i in range(tok.alphabet.first_special)}
    enc = tiktoken.Encoding("s", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens={"<s>": 0})
    imported = fb.Tokenizer.from_tiktoken(enc)
    ids, spans = imported.encode_with_offsets(TEXT, allowed_special="all")
    assert ids == enc.encode(TEXT, allowed_special="all") and 0 in ids
    check_spans(imported, TEXT, ids, spans)


def test_offsets_refuse_disallowed_specials(tok):
    with pytest.raises(fb.SpecialTokenError):
        tok.encode_with_offsets("a <s>")
    assert tok.encode_with_offsets("a <s>", disallowed_special=())[0] == tok.encode_ordinary("a <s>")


@settings(max_examples=60, deadline=None)
@given(utf8_text)
def test_scheme_offsets_give_a_rewritten_piece_its_span(scheme_tok, text):
    ids, spans = scheme_tok.encode_with_offsets(text, allowed_special="all")
    assert ids == scheme_tok.encode(text, allowed_special="all")
    assert len(spans) == len(ids)
    assert all(0 <= s < e <= len(text) for s, e in spans)
    assert all(a[0] <= b[0] for a, b in zip(spans, spans[1:]))
    if ids:
        assert spans[0][0] == 0 and spans[-1][1] == len(text)


def test_scheme_offsets_known_answer():
    scheme = fb.make_scheme("functional")
    tok = fb.train(["hello hello"] * 5, vocab_size=256 + len(scheme.atoms) + 5, scheme=scheme, progress=False)
    ids, spans = tok.encode_with_offsets("Hello hello")
    # "Hello" is rewritten (a case instruction, then "hello"): all its tokens get its span;
    # " hello" is not rewritten: its tokens get their own spans.
    first = [s for s in spans if s[1] <= 5]
    assert set(first) == {(0, 5)} and len(first) >= 2
    assert spans[len(first):] and all(s[0] >= 5 for s in spans[len(first):])


# -- BPE-dropout --------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(table=merge_tables(), data=st.data())
def test_dropout_zero_is_plain_bpe(table, data):
    merges, n = table
    ranks = ranks_from_merges(merges, 256)
    symbols = data.draw(st.one_of(st.lists(st.integers(97, 96 + n), max_size=200), runs(n)))
    assert encode_piece_dropout(symbols, ranks, 0.0, random.Random(0)) == encode_piece(symbols, ranks)
    assert encode_piece_dropout(symbols, ranks, 1.0, random.Random(0)) == symbols


@settings(max_examples=100, deadline=None)
@given(text=utf8_text, p=st.floats(0, 1), seed=st.integers(0, 2**32))
def test_every_dropout_encoding_decodes_back(tok, text, p, seed):
    ids = tok.encode(text, allowed_special="all", dropout=p, seed=seed)
    assert tok.decode(ids) == text
    assert ids == tok.encode(text, allowed_special="all", dropout=p, seed=seed)  # the seed fixes it
    if p == 0:
        assert ids == tok.encode(text, allowed_special="all")


def test_dropout_distribution(tok):
    text = "".join(stdlib_text(20_000))[:3_000]
    plain = tok.encode(text)
    assert tok.encode(text, dropout=0.0, seed=1) == plain
    assert len(tok.encode(text, dropout=1.0)) == len(text.encode("utf-8"))  # every piece as bytes
    assert tok.encode(text, dropout=0.3, seed=1) != tok.encode(text, dropout=0.3, seed=2)
    means = [sum(len(tok.encode(text, dropout=p, seed=s)) for s in range(3)) / 3 for p in (0.0, 0.1, 0.3, 0.6, 1.0)]
    assert means == sorted(means) and len(set(means)) == len(means), means


def test_dropout_on_a_scheme_leaves_atoms_at_one(scheme_tok):
    ids = scheme_tok.encode(TEXT, allowed_special="all", dropout=1.0)
    specials = set(scheme_tok.special_tokens.values())
    assert all(i < scheme_tok.alphabet.first_merge or i in specials for i in ids)
    assert scheme_tok.decode(ids) == TEXT
    assert scheme_tok.decode(scheme_tok.encode(TEXT, allowed_special="all", dropout=0.4, seed=3)) == TEXT


def test_dropout_in_batches(tok):
    texts = [TEXT, "abc " * 50, ""]
    first = tok.encode_batch(texts, allowed_special="all", dropout=0.5, seed=7)
    assert first == tok.encode_batch(texts, allowed_special="all", dropout=0.5, seed=7)
    assert tok.decode_batch(first) == texts
    assert tok.encode_batch(texts, allowed_special="all", dropout=0.0) == tok.encode_batch(texts, allowed_special="all")
    with pytest.raises(fb.SpecialTokenError):
        tok.encode_batch(texts, dropout=0.5)


@pytest.mark.parametrize("bad", [1.5, -0.1, True, "0.1", float("nan")])
def test_bad_dropout_is_refused(tok, bad):
    with pytest.raises(fb.FunctionalBPEError, match="dropout="):
        tok.encode("abc", dropout=bad)
