"""Decoding: exact bytes, UTF-8 errors that name the token, and the streaming decoder, whose
pieces always join to decode(all ids) however the ids are cut."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

import functionalbpe as fb
from functionalbpe.errors import DecodeError

from ..helpers import stdlib_text, tricky_text
from .test_encoder import CAP, MULTILINGUAL, CaseScheme

SPECIALS = ["<|endoftext|>", "<|pad|>"]


@pytest.fixture(scope="module")
def tok() -> fb.Tokenizer:
    docs = stdlib_text(60_000) + [MULTILINGUAL * 5]
    return fb.train(docs, vocab_size=256 + 300 + 2, special_tokens=SPECIALS, progress=False)


@pytest.fixture(scope="module")
def case_tok() -> fb.Tokenizer:
    docs = stdlib_text(30_000) + ["Hello World HELLO world Über ÉCOLE"] * 20
    return fb.train(docs, vocab_size=256 + 3 + 200, scheme=CaseScheme(pattern="gpt2"), special_tokens=SPECIALS, progress=False)


def stream(tok: fb.Tokenizer, ids, cuts, errors="strict") -> str:
    decoder = tok.stream_decoder(errors)
    out, start = [], 0
    for cut in sorted(cuts) + [len(ids)]:
        out.append(decoder.feed(ids[start:cut]))
        start = max(start, cut)
    return "".join(out) + decoder.finish()


id_lists = st.lists(st.integers(0, 256 + 300 + 1), max_size=40)


@given(ids=id_lists, cuts=st.lists(st.integers(0, 40), max_size=10))
def test_stream_equals_decode_with_replace(tok, ids, cuts):
    assert stream(tok, ids, cuts, "replace") == tok.decode(ids, errors="replace")


def assert_streams(tok: fb.Tokenizer, text: str, cuts) -> None:
    """The ids of text, streamed in chunks cut at cuts, and one id at a time, give text."""
    ids = tok.encode(text, allowed_special="all")
    assert stream(tok, ids, cuts) == text
    decoder = tok.stream_decoder()
    assert "".join(decoder.feed(i) for i in ids) + decoder.finish() == text


@given(text=tricky_text, cuts=st.lists(st.integers(0, 60), max_size=10))
def test_stream_of_valid_text_equals_decode(tok, text, cuts):
    assert_streams(tok, text, cuts)


@given(ids=id_lists)
def test_stream_fails_where_decode_fails(tok, ids):
    try:
        want = tok.decode(ids)
    except DecodeError:
        with pytest.raises(DecodeError, match="errors='replace'"):
            stream(tok, ids, [1, 2, 5])
    else:
        assert stream(tok, ids, [1, 2, 5]) == want


def test_stream_holds_back_a_cut_character(tok):
    data = "😀".encode("utf-8")
    decoder = tok.stream_decoder()
    assert [decoder.feed(b) for b in data] == ["", "", "", "😀"]
    assert decoder.feed(tok.encode("<|pad|>", allowed_special="all")) == "<|pad|>"
    assert decoder.feed([0xF0, 0x9F]) == ""
    with pytest.raises(DecodeError, match="token 5 of the stream"):  # where the character starts
        decoder.finish()
    d2 = tok.stream_decoder("replace")
    assert d2.feed([0xF0, 0x9F]) + d2.feed(tok.special_tokens["<|pad|>"]) == "\ufffd<|pad|>"


def test_stream_names_the_token_of_an_invalid_byte(tok):
    decoder = tok.stream_decoder()
    ids = tok.encode("abc def") + [0x80]
    with pytest.raises(DecodeError, match=f"token {len(ids) - 1} of the stream"):
        decoder.feed(ids)
    with pytest.raises(DecodeError, match="not a token"):
        tok.stream_decoder().feed([tok.vocab_size])


@given(text=tricky_text, cuts=st.lists(st.integers(0, 60), max_size=10))
def test_stream_with_a_scheme_holds_back_atoms(case_tok, text, cuts):
    text = text.replace(CAP, "").replace("\ue001", "").replace("\ue002", "")  # no escaping in the test scheme
    assert_streams(case_tok, text, cuts)


def test_scheme_hook_is_used(case_tok):
    ids = case_tok.encode("aB")
    cap = case_tok.alphabet.first_atom  # the CAP atom: "B" is CAP + "b"
    decoder = case_tok.stream_decoder()
    pos = ids.index(cap) if cap in ids else None
    if pos is None:
        pytest.skip("CAP merged with its neighbours in this vocabulary")
    assert decoder.feed(ids[: pos + 1]) == case_tok.decode(ids[:pos])  # CAP held back
    assert decoder.feed(ids[pos + 1 :]) + decoder.finish() == "B"


def test_decode_bytes_is_exact(tok):
    ids = tok.encode(MULTILINGUAL + "<|endoftext|>", allowed_special="all") + [0xC3]
    table = tok.alphabet.all_token_bytes()
    assert tok.decode_bytes(ids) == b"".join(table[i] for i in ids)
    assert tok.decode(ids, errors="replace") == MULTILINGUAL + "<|endoftext|>\ufffd"
    with pytest.raises(DecodeError, match=f"token {len(ids) - 1} \\(id 195\\)"):
        tok.decode(ids)
    with pytest.raises(DecodeError, match="position 1"):
        tok.decode_bytes([1, -5])
    with pytest.raises(DecodeError, match="position 0"):
        tok.decode(["a"])


def test_numpy_ids_decode(tok, case_tok):
    np = pytest.importorskip("numpy")
    for t in (tok, case_tok):
        ids = t.encode("Hello wörld<|pad|>", allowed_special="all")
        for dtype in (np.int64, np.uint32, np.int32):
            arr = np.array(ids, dtype=dtype)
            assert t.decode(arr) == "Hello wörld<|pad|>"
            assert t.decode_bytes(arr) == t.decode_bytes(ids)
            d = t.stream_decoder()
            assert d.feed(arr) + d.finish() == "Hello wörld<|pad|>"
    with pytest.raises(DecodeError, match="position 1"):
        tok.decode(np.array([1, tok.vocab_size]))
    with pytest.raises(DecodeError, match="position 0"):
        tok.decode([1.0])


# -- the boundary-marker scheme's hook --------------------------------------------------------

from functionalbpe.schemes import markers  # noqa: E402


@pytest.mark.parametrize("options", [{}, {"punct": True, "digits": True, "case": True}])
@given(text=tricky_text)
def test_markers_decodable_prefix_cuts_safely(options, text):
    m = markers.BoundaryMarkers(**options)
    form = m.encode(text)
    for cut in range(len(form) + 1):
        n = markers.decodable_prefix(form[:cut])
        assert n <= cut
        assert m.decode(form[:n]) + m.decode(form[n:]) == text, (form[:cut], n)


@pytest.fixture(scope="module")
def markers_tok() -> fb.Tokenizer:
    docs = stdlib_text(20_000) + [MULTILINGUAL * 3, "The Cat SAT on the mat, 3 times. " * 20]
    return fb.train(docs, vocab_size=256 + 20 + 200, scheme="markers", punct=True, digits=True, case=True,
                    special_tokens=SPECIALS, progress=False)


@given(text=tricky_text, cuts=st.lists(st.integers(0, 60), max_size=10))
def test_stream_with_markers_equals_decode(markers_tok, text, cuts):
    assert_streams(markers_tok, text, cuts)


def test_stream_with_markers_emits_before_the_end(markers_tok):
    ids = markers_tok.encode("The cat sat on the mat. " * 5)
    decoder = markers_tok.stream_decoder()
    first = decoder.feed(ids[: len(ids) // 2])
    assert first and ("The cat sat on the mat. " * 5).startswith(first)


# -- the Functionalizer's hook --------------------------------------------------------------

from functionalbpe.schemes import functional  # noqa: E402

REPEATS = ["aaaa", "#" * 9, "abababab", "Éééé", "ÀÀÀ", "xyzxyzxyz", "ŞŞŞŞ", "  ", "\n\n\n"]
functional_text = st.lists(st.one_of(tricky_text, st.sampled_from(REPEATS)), max_size=6).map("".join)


@pytest.mark.parametrize(
    "options", [{}, {"split_operators": False}, {"case": True, "diacritics": True, "repeat": True, "normalize": None}]
)
@given(text=functional_text)
def test_functional_decodable_prefix_cuts_safely(options, text):
    f = functional.Functionalizer(**options)
    form = f.encode(text)
    whole = f.decode(form)
    for cut in range(len(form) + 1):
        n = functional.decodable_prefix(form[:cut])
        assert n <= cut
        assert f.decode(form[:n]) + f.decode(form[n:]) == whole, (form[:cut], n)


@pytest.fixture(scope="module")
def functional_tok() -> fb.Tokenizer:
    docs = stdlib_text(20_000) + [MULTILINGUAL * 3, "Éléphant ÉCOLE!!!! Hello World ====== " * 20]
    return fb.train(docs, vocab_size=256 + len(functional.ATOMS) + 200, scheme="functional",
                    special_tokens=SPECIALS, progress=False)


@given(text=functional_text, cuts=st.lists(st.integers(0, 60), max_size=10))
def test_stream_with_the_functionalizer_equals_decode(functional_tok, text, cuts):
    ids = functional_tok.encode(text, allowed_special="all")
    want = functional_tok.decode(ids)  # the normalized text where the scheme normalizes
    assert stream(functional_tok, ids, cuts) == want
    decoder = functional_tok.stream_decoder()
    assert "".join(decoder.feed(i) for i in ids) + decoder.finish() == want


def test_stream_with_the_functionalizer_emits_before_the_end(functional_tok):
    text = "Hello World, Éléphant!!!! " * 5
    ids = functional_tok.encode(text)
    decoder = functional_tok.stream_decoder()
    first = decoder.feed(ids[: len(ids) // 2])
    assert first and functional_tok.decode(ids).startswith(first)


@pytest.mark.parametrize("which", ["case_tok", "markers_tok", "functional_tok"])
@given(data=st.data())
def test_stream_equals_decode_on_any_ids_with_a_scheme(which, request, data):
    """Even ids no encoding writes (stray atoms, cut escapes): streamed with "replace", they
    come out as decode gives them."""
    tok = request.getfixturevalue(which)
    ids = data.draw(st.lists(st.integers(0, tok.vocab_size - 1), max_size=16))
    cuts = data.draw(st.lists(st.integers(0, 16), max_size=5))
    assert stream(tok, ids, cuts, "replace") == tok.decode(ids, errors="replace")


def test_a_bool_is_no_id(tok, case_tok):
    for t in (tok, case_tok):
        for ids in ([True], [97, False]):
            with pytest.raises(fb.DecodeError, match="is not a token of this tokenizer"):
                t.decode(ids)
            with pytest.raises(fb.DecodeError):
                t.decode_bytes(ids)
