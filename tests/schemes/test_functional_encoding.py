"""The Functionalizer's encoder: ids cached per raw piece (in C when the pattern has a
scanner) must give exactly the reference encoding of the scheme's pieces."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
import regex
from hypothesis import given, settings, strategies as st

import functionalbpe as fb
from functionalbpe.core._native import NATIVE
from functionalbpe.core.reference import encode_piece, ranks_from_merges
from functionalbpe.text.patterns import PATTERNS

from ..helpers import TRICKY, stdlib_text, tricky_text
from ..core.test_encoder import MULTILINGUAL, reference_ids

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
    # With repeat, the scanner joins runs of identical pieces as the scheme does.
    assert fb.train(["Hello hello"] * 3, vocab_size=600, scheme="functional", progress=False)._encoder._raw_scanner == "functionalizer+joined"
    gpt4 = fb.train(["Hello hello"] * 3, vocab_size=600, scheme="functional", pattern="gpt4", progress=False)
    assert gpt4._encoder._raw_scanner == "gpt4+joined"
    assert fb.train(["Hello hello"] * 3, vocab_size=600, scheme="functional", repeat=False, progress=False)._encoder._raw_scanner == "functionalizer"


@pytest.mark.parametrize("pattern", ["functionalizer", "gpt4", "functionalizer-llama"])
def test_runs_of_pieces_encode_as_the_reference(pattern):
    # Indentation is a run of single-space pieces in the paper's split, joined to REPEAT.
    docs = ["    x = 1\n        y = 22\n" * 5, "ha ha ha ha 111111 !!\n!!\n!!\n"]
    tok = fb.train(docs, vocab_size=700, scheme="functional", pattern=pattern, progress=False)
    text = "".join(docs) + " " * 600 + "x" + " ha" * 300
    # The reference: regex's pieces joined in Python, each described and merged by reference.
    scheme = tok.scheme
    ranks = ranks_from_merges(tok.alphabet.merges, tok.alphabet.first_merge)
    raw = scheme._join_runs(regex.findall(PATTERNS[pattern], text))
    expected = [i for p in raw for form in scheme.describe(p) for i in encode_piece(tok.alphabet.symbols(form), ranks)]
    assert scheme.raw_pieces(text) == raw
    assert tok.encode_ordinary(text) == expected
    assert tok.decode(expected) == text


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
