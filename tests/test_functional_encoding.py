"""The Functionalizer's encoder: ids cached per raw piece (in C when the pattern has a
scanner) must give exactly the reference encoding of the scheme's pieces."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings, strategies as st

import functionalbpe as fb
from functionalbpe.core._native import NATIVE

from .helpers import TRICKY, stdlib_text, tricky_text
from .test_encoder import MULTILINGUAL, reference_ids

ENCODER = NATIVE.encoder
VARIANTS = {
    "default": {},
    "nfc": {"normalize": "NFC"},
    "joined": {"split_operators": False, "merge_policy": "free"},
    "gpt4 split": {"pattern": "gpt4"},  # runs of pieces are joined: the Python cache
    "repeat only": {"case": False, "diacritics": False},
}


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def tok(request) -> fb.Tokenizer:
    docs = stdlib_text(20_000) + [MULTILINGUAL * 3, "Hello HELLO hello Héllo ###### abcabcabc " * 5]
    return fb.train(docs, vocab_size=256 + 273 + 400, scheme="functional", progress=False,
                    **VARIANTS[request.param])


texts = st.one_of(
    st.text(max_size=300),
    tricky_text,
    st.text(st.sampled_from("aAbB éÉ#\n\t\r\ue000\ue100İß"), max_size=300),
    st.lists(st.sampled_from(["Hello", " hello", "HELLO", "####", "  ", "abcabcabc", "\n"]), max_size=40).map("".join),
)


@settings(max_examples=60, deadline=None)
@given(text=texts)
def test_encode_equals_the_reference_twice(tok, text):
    expected = reference_ids(tok, text)
    assert tok.encode_ordinary(text) == expected  # describing the new pieces
    assert tok.encode_ordinary(text) == expected  # from the cache
    assert tok.decode(expected) == tok.scheme.prepare(text)  # normalize="NFC" gives NFC back


def test_real_text_equals_the_reference(tok):
    text = "".join(stdlib_text(30_000)) + MULTILINGUAL + "".join(TRICKY) * 3
    assert tok.encode_ordinary(text) == reference_ids(tok, text)


@pytest.mark.skipif(ENCODER is None, reason="the compiled encoder is not built")
def test_the_raw_piece_cache_is_compiled_where_the_scanner_cuts():
    assert fb.train(["Hello hello"] * 3, vocab_size=600, scheme="functional", progress=False)._encoder._raw_scanner == "functionalizer"
    assert fb.train(["Hello hello"] * 3, vocab_size=600, scheme="functional", pattern="gpt4", progress=False)._encoder._raw_scanner is None


@pytest.mark.skipif(ENCODER is None, reason="the compiled encoder is not built")
def test_a_full_cache_is_emptied_and_refilled(monkeypatch):
    monkeypatch.setattr(ENCODER, "RAW_CACHE_PIECES", 8)
    docs = stdlib_text(10_000)
    tok = fb.train(docs, vocab_size=800, scheme="functional", progress=False)
    text = "".join(stdlib_text(20_000))
    expected = reference_ids(tok, text)
    for _ in range(2):
        assert tok.encode_ordinary(text) == expected


def test_threads_share_the_cache():
    docs = stdlib_text(20_000) + [MULTILINGUAL]
    tok = fb.train(docs, vocab_size=900, scheme="functional", progress=False)
    texts = ["".join(stdlib_text(3_000 * (k + 1))) + MULTILINGUAL for k in range(8)]
    expected = [reference_ids(tok, t) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(tok.encode_ordinary, texts * 3))
    assert got == expected * 3
