"""The names tiktoken and HF users type, checked against tiktoken's Encoding and HF's
Tokenizer built from the same tokenizer: same answers, same errors (KeyError, None)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

import functionalbpe as fb
from functionalbpe.errors import UnknownTokenError

from ..helpers import hf_export, tricky_text

SPECIALS = ["<|endoftext|>", "<|fim|>"]
TEXTS = ["hello world", "", "日本語 😀\r\n", "<|endoftext|> x <|fim|>"]


@pytest.fixture(scope="module")
def tok() -> fb.Tokenizer:
    docs = ["the cat sat on the mat, 日本語の猫 😀\n"] * 20
    return fb.train(docs, vocab_size=256 + 60 + len(SPECIALS), special_tokens=SPECIALS, progress=False)


@pytest.fixture(scope="module")
def enc(tok):
    pytest.importorskip("tiktoken")
    return tok.as_tiktoken_encoding()


@pytest.fixture(scope="module")
def hf(tok, tmp_path_factory):
    return hf_export(tok, tmp_path_factory.mktemp("names"))


def test_tiktoken_names(tok, enc):
    assert tok.n_vocab == enc.n_vocab == len(tok)
    assert tok.eot_token == enc.eot_token == tok.special_tokens["<|endoftext|>"]
    assert tok.special_tokens_set == enc.special_tokens_set == set(SPECIALS)
    for i in range(tok.n_vocab):
        data = enc.decode_single_token_bytes(i)
        assert tok.decode_single_token_bytes(i) == data
        key = data.decode("utf-8") if i in tok.special_tokens.values() else data
        assert tok.encode_single_token(key) == enc.encode_single_token(key) == i
    some = [0, tok.n_vocab - 1, 257, tok.eot_token]
    assert tok.decode_tokens_bytes(some) == enc.decode_tokens_bytes(some)
    batch = tok.encode_batch(TEXTS, allowed_special="all")
    assert batch == enc.encode_batch(TEXTS, allowed_special="all")
    assert tok.decode_batch(batch) == enc.decode_batch(batch) == TEXTS


def test_tiktoken_errors(tok, enc):
    for name, value in [("encode_single_token", "the cat"), ("encode_single_token", b"\xff\xfe"),
                        ("decode_single_token_bytes", tok.n_vocab)]:
        with pytest.raises(KeyError):
            getattr(enc, name)(value)
        with pytest.raises(UnknownTokenError, match="no single token is|is not an id of this tokenizer"):
            getattr(tok, name)(value)
    without = fb.train(["ab"], vocab_size=256, progress=False)
    with pytest.raises(KeyError, match="'<|endoftext|>' is not a special token here"):
        without.eot_token


def test_hf_names(tok, hf):
    assert tok.get_vocab() == hf.get_vocab(with_added_tokens=True)
    assert len(tok) == hf.get_vocab_size(with_added_tokens=True)
    for i in range(len(tok)):
        assert tok.id_to_token(i) == hf.id_to_token(i)
        assert tok.token_to_id(hf.id_to_token(i)) == i
    for absent in ["not a token", "日", ""]:
        assert tok.token_to_id(absent) is hf.token_to_id(absent) is None
    assert tok.id_to_token(len(tok)) is hf.id_to_token(len(tok)) is None
    assert tok.id_to_token(-1) is None


@settings(max_examples=50, deadline=None)
@given(st_texts=tricky_text)
def test_batches_are_symmetric(tok, st_texts):
    texts = [st_texts, st_texts[::-1], ""]
    texts = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]  # no lone surrogates
    assert tok.decode_batch(tok.encode_batch(texts, allowed_special="all")) == texts


def test_names_speak_an_imported_vocabularys_ids(tok, enc):
    """A vocabulary imported with its special token first: the names use its ids."""
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {tok.token_bytes(i): i + 1 for i in range(tok.alphabet.first_special)}
    shifted = tiktoken.Encoding("s", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 0})
    imported = fb.Tokenizer.from_tiktoken(shifted)
    assert imported.eot_token == shifted.eot_token == 0 and len(imported) == shifted.n_vocab
    for i in range(shifted.n_vocab):
        assert imported.decode_single_token_bytes(i) == shifted.decode_single_token_bytes(i)
    assert imported.encode_single_token("the") == shifted.encode_single_token("the")
    assert imported.token_to_id(imported.id_to_token(5)) == 5
