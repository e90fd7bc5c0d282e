"""Decoding ids that no encoder wrote: refused or dropped, never amplified.

The Functionalizer's instructions and the boundary markers' shift codes act on the text
after them. A decoder that applied anything it was given could turn a few thousand ids
into tens of millions of characters (``[MULTIREPEAT, ARG 0, ARG 255, ARG 255] * k`` in
front of a base). What an encoder never writes is an error with ``errors="strict"`` and
U+FFFD or nothing with "replace" / "ignore"; what decodes is at most
``functional.MAX_EXPANSION`` characters per character of text form (the markers: one).
"""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import functionalbpe as fb
from functionalbpe.schemes import functional as F
from functionalbpe.schemes import markers as M
from functionalbpe.errors import DecodeError

from .test_decoding import stream


def arg(n: int) -> str:
    return chr(F.ARG0 + n)


def ins(op: str, *args: int) -> str:
    return op + "".join(map(arg, args))


ACUTE = "\ue102"
GRAVE = "\ue103"
CAP, REP, MULTI = F.CAPITALIZE, F.REPEAT, F.MULTIREPEAT
BASE255 = "".join(chr(0x4E00 + k) for k in range(255))  # 255 distinct characters


@pytest.fixture(scope="module")
def functional_tok() -> fb.Tokenizer:
    return fb.train(["Hello world"] * 3, vocab_size=256 + len(F.ATOMS) + 10, scheme="functional", progress=False)


def atom_ids(tok: fb.Tokenizer, form: str):
    """The ids of a text form, one per atom or byte (the ids a model could emit)."""
    return list(tok.alphabet.symbols(form))


# -- the amplification, reproduced -----------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 50])
def test_multirepeat_amplification_is_refused(functional_tok, k):
    tok = functional_tok
    form = ins(MULTI, 0, 255, 255) * k + BASE255
    ids = atom_ids(tok, form)
    # The first instruction is one the encoder writes; the second repeats the same range.
    if k == 1:
        assert len(tok.decode(ids)) == 255 * 255
        return
    with pytest.raises(DecodeError, match=r"offset 4 of the text form, instruction 2 .*MULTIREPEAT\(0, 255, 255\) starts inside the range"):
        tok.decode(ids)
    for errors in ("replace", "ignore"):
        out = tok.decode(ids, errors=errors)
        assert out == ("\ufffd" if errors == "replace" else "") + BASE255
    with pytest.raises(DecodeError, match="instruction 2"):
        stream = tok.stream_decoder()
        stream.feed(ids)
        stream.finish()


def test_the_most_an_encoder_writes_is_within_the_bound():
    f = F.Functionalizer(pattern="gpt4")
    piece = BASE255 * 255  # one unit of 255 characters, 255 times
    form = f.encode(piece)
    assert form == ins(MULTI, 0, 255, 255) + BASE255
    assert f.decode(form) == piece
    assert len(piece) <= F.MAX_EXPANSION * len(form) < len(piece) * 1.02


# -- each rule: the instruction named, the group dropped --------------------------------------

BAD_GROUPS = [
    # (text form, offset of the refused instruction, what the message says)
    (ins(MULTI, 2, 1, 3) + "abc", 0, "fewer than 2"),  # backward range
    (ins(MULTI, 0, 1, 3) + "abc", 0, "fewer than 2"),  # one character: REPEAT's job
    (ins(MULTI, 0, 2, 3) + ins(MULTI, 1, 3, 3) + "abc", 4, "starts inside the range"),  # overlap
    (ins(REP, 1, 3) + ins(REP, 0, 3) + "abc", 3, "starts inside the range"),  # backward order
    (ins(REP, 0, 3) + ins(REP, 0, 3) + "abc", 3, "starts inside the range"),  # the same range twice
    (ins(REP, 0, 0) + "a", 0, "makes 0 copies"),
    (ins(REP, 0, 1) + "a", 0, "makes 1 copies"),
    (ins(REP, 0, 2) + "a", 0, "makes 2 copies"),
    (ins(REP, 3, 4) + "abc", 0, "past the end of its base"),
    (ins(MULTI, 0, 4, 3) + "abc", 0, "past the end of its base"),
    (ins(CAP, 3) + "abc", 0, "past the end of its base"),
    ("x" + ins(ACUTE, 0), 1, "past the end of its base"),  # no base at all
    (ins(CAP, 0) + ins(REP, 0, 3) + "ab", 2, "comes after a capital"),
    (ins(CAP, 0) + ins(ACUTE, 0) + "ab", 2, "comes after a capital"),
    (ins(ACUTE, 0) + ins(REP, 1, 3) + "ab", 2, "comes after an accent"),
    (ins(CAP, 1) + ins(CAP, 0) + "ab", 2, "same or a later position"),
    (ins(CAP, 0) + ins(CAP, 0) + "ab", 2, "same or a later position"),
    (ins(ACUTE, 1) + ins(GRAVE, 0) + "ab", 2, "accent at a later position"),
    (ins(CAP, 0) + "ßx", 0, "not one character"),  # ß upper-cases to SS
    (ins(REP, 0, 3) + ins(ACUTE, 0) + "1", 3, "not one character"),  # no precomposed 1 with acute
]


@pytest.mark.parametrize("form, offset, says", BAD_GROUPS)
def test_groups_no_encoder_writes_are_refused_or_dropped(form, offset, says):
    f = F.Functionalizer()
    with pytest.raises(F.FunctionalDecodeError, match=f"offset {offset} of the text form.*{says}"):
        f.decode(form)
    # The group's instructions become one U+FFFD (or nothing); its base stays as it is.
    start = form.index(next(c for c in form if "\ue100" <= c <= "\ue2fe"))
    base = form[start:].lstrip("".join(chr(c) for c in range(0xE000, 0xE2FF)))
    assert f.decode(form, errors="replace") == form[:start] + "\ufffd" + base
    assert f.decode(form, errors="ignore") == form[:start] + base


def test_groups_an_encoder_writes_still_decode():
    f = F.Functionalizer()
    assert f.decode(ins(REP, 0, 3) + ins(REP, 1, 3) + "ab") == "aaabbb"  # adjacent ranges
    assert f.decode(ins(ACUTE, 0) + ins("\ue105", 0) + "u") == "ǘ"  # stacked marks, outermost first
    assert f.decode(ins(ACUTE, 1) + ins(CAP, 0) + "hello") == "Héllo"
    assert f.decode(ins(REP, 0, 255) + "#") == "#" * 255


# -- arbitrary text forms: bounded, or DecodeError --------------------------------------------

_FUNCTIONAL_ATOMS = [a.char for a in F.ATOMS]
_SMALL_ARGS = [arg(n) for n in (0, 1, 2, 3, 4, 254, 255)]
_BASE_CHARS = list("abcxyzAß1 é\u0301ǅİ#") + ["\U0001f600", "\ud800"]
# Whole instructions with small arguments, so that many groups are ones an encoder writes.
whole_instructions = st.sampled_from([CAP, REP, MULTI, ACUTE, GRAVE]).flatmap(
    lambda op: st.lists(st.one_of(st.integers(0, 6), st.just(255)), min_size=F.ARITY[op], max_size=F.ARITY[op]).map(
        lambda args: ins(op, *args)
    )
)
functional_forms = st.lists(
    st.one_of(
        whole_instructions,
        whole_instructions,
        st.sampled_from(_FUNCTIONAL_ATOMS),
        st.sampled_from(_SMALL_ARGS),
        st.sampled_from([CAP, REP, MULTI, ACUTE]),
        st.sampled_from(_BASE_CHARS),
        st.text(st.sampled_from("abcdefgh"), min_size=1, max_size=300),
    ),
    max_size=40,
).map("".join)


@given(functional_forms)
def test_any_functional_text_form_decodes_within_the_bound_or_raises(form):
    f = F.Functionalizer()
    try:
        strict = f.decode(form)
    except DecodeError:
        strict = None
    for errors in ("replace", "ignore"):
        out = f.decode(form, errors=errors)
        assert len(out) <= F.MAX_EXPANSION * len(form)
        if strict is not None:
            assert out == strict
    if strict is not None:
        assert len(strict) <= F.MAX_EXPANSION * len(form)


_MARKER_PARTS = [M.BOUNDARY, M.TITLE, M.UPPER, M.LITERAL, "\ue000", "\ue00f", "\ue010"]
marker_forms = st.lists(
    st.one_of(st.sampled_from(_MARKER_PARTS), st.text(st.sampled_from("aBßﬃ ,1İ"), max_size=6)), max_size=30
).map("".join)


@given(marker_forms)
def test_any_markers_text_form_decodes_within_the_bound_or_raises(form):
    m = M.BoundaryMarkers(punct=True, digits=True, case=True)
    try:
        strict = m.decode(form)
    except DecodeError:
        strict = None
    for errors in ("replace", "ignore"):
        out = m.decode(form, errors=errors)
        assert len(out) <= len(form)
        if strict is not None:
            assert out == strict


@pytest.mark.parametrize(
    "form, says",
    [
        (M.BOUNDARY * 3 + "a", "3 markers in a row"),
        ("\ue300a\ue300\ue300\ue301\ue300b\ue300", "2 markers in a row"),
        (M.TITLE + M.BOUNDARY + "Hello" + M.BOUNDARY, "no encoded word"),  # not lower case
        (M.TITLE + M.BOUNDARY + "ß" + M.BOUNDARY, "no encoded word"),  # ß title-cases to Ss
        (M.UPPER + M.BOUNDARY + "ﬃ" + M.BOUNDARY, "no encoded word"),  # ﬃ upper-cases to FFI
        (M.UPPER + M.BOUNDARY + "abc", "U\\+E302"),  # no closing marker
        (M.TITLE + M.BOUNDARY + M.BOUNDARY, "no encoded word"),  # an empty word
    ],
)
def test_markers_forms_no_encoder_writes_are_refused(form, says):
    m = M.BoundaryMarkers(case=True)
    with pytest.raises(DecodeError, match=says):
        m.decode(form)
    assert "\ufffd" in m.decode(form, errors="replace")
    assert len(m.decode(form, errors="replace")) <= len(form)


# -- what the encoders write still decodes exactly --------------------------------------------

hostile = st.text(
    st.one_of(
        st.characters(),
        st.sampled_from(_FUNCTIONAL_ATOMS[:8] + [M.BOUNDARY, M.TITLE, M.LITERAL, "\uefff"]),
        st.sampled_from("ßﬃİǅΣσςẞŉ\u0301\u0308 \n\t"),
    ),
    max_size=80,
).map(lambda s: s.encode("utf-8", "replace").decode("utf-8"))
runs = st.tuples(hostile, st.integers(1, 300)).map(lambda t: t[0] * t[1])


@given(st.lists(st.one_of(hostile, runs), max_size=4).map("".join), st.sampled_from(["functionalizer", "gpt4"]))
def test_functional_encoder_output_decodes_exactly_and_within_the_bound(text, pattern):
    f = F.Functionalizer(pattern=pattern)
    form = f.encode(text)
    assert f.decode(form) == text
    assert len(text) <= F.MAX_EXPANSION * max(1, len(form))


@given(hostile, st.sampled_from([{}, {"punct": True, "digits": True, "case": True}]))
def test_markers_encoder_output_decodes_exactly_and_within_the_bound(text, options):
    m = M.BoundaryMarkers(**options)
    form = m.encode(text)
    assert m.decode(form) == text
    assert len(text) <= len(form)


# -- the streaming decoder follows the same rules ----------------------------------------------


@pytest.fixture(scope="module")
def markers_tok() -> fb.Tokenizer:
    return fb.train(["The Cat SAT, 3 times."] * 3, vocab_size=256 + len(M.ATOMS) + 10, scheme="markers",
                    punct=True, digits=True, case=True, progress=False)


@pytest.mark.parametrize("which", ["functional_tok", "markers_tok"])
@given(data=st.data())
def test_stream_fails_exactly_where_decode_fails(which, request, data):
    tok = request.getfixturevalue(which)
    forms = functional_forms if which == "functional_tok" else marker_forms
    ids = atom_ids(tok, data.draw(forms).replace("\ud800", "\ufffd"))
    cuts = data.draw(st.lists(st.integers(0, len(ids)), max_size=6))
    try:
        want = tok.decode(ids)
    except DecodeError:
        with pytest.raises(DecodeError):
            stream(tok, ids, cuts, "strict")
    else:
        assert stream(tok, ids, cuts, "strict") == want
    assert stream(tok, ids, cuts, "replace") == tok.decode(ids, errors="replace")
