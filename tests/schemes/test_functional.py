"""The Functionalizer: the paper's worked examples, exact round trips, counting = splitting."""
from __future__ import annotations

import itertools
import unicodedata
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from functionalbpe.core.alphabet import OPERATOR, Alphabet
from functionalbpe.errors import FunctionalBPEError
from functionalbpe.schemes.functional import (
    _CASE_OR_ACCENT_RE,
    ATOMS,
    CAPITALIZE,
    LITERAL,
    MULTIREPEAT,
    PAPER_PROFILE,
    REPEAT,
    FunctionalDecodeError,
    Functionalizer,
    char_plan,
    describe_repeats,
)
from functionalbpe.schemes.registry import make_scheme
from functionalbpe.text.counting import count_table

from ..conftest import read_corpus


def arg(n: int) -> str:
    return chr(0xE000 + n)


# --- the paper's worked examples (spec: functionalizer.md) -----------------------------

GOLDEN = [
    ("Hello", "\ue100\ue000", "hello"),
    ("Héllo", "\ue102\ue001\ue100\ue000", "hello"),
    ("######", "\ue200\ue000\ue006", "#"),
    ("    ", "\ue200\ue000\ue004", " "),
    ("abcabcabc", "\ue201\ue000\ue003\ue003", "abc"),
]


@pytest.mark.parametrize("text, prefix, base", GOLDEN)
def test_paper_examples(text, prefix, base):
    f = Functionalizer()
    assert f.encode(text) == prefix + base
    assert f.decode(prefix + base) == text
    # split_operators: every instruction is a piece of its own, then the base.
    pieces = f.split(text)
    assert "".join(pieces[:-1]) == prefix and pieces[-1] == base
    assert all(len(p) in (2, 3, 4) and p[0] in "\ue100\ue102\ue200\ue201" for p in pieces[:-1])
    assert Functionalizer(split_operators=False).split(text) == [prefix + base]


def test_paper_profile():
    f = Functionalizer.paper()
    assert f.options() == {k: v for k, v in PAPER_PROFILE.items() if k != "pattern"}
    assert f.pattern_name == "functionalizer"
    decomposed = "He\u0301llo"
    assert f.encode(decomposed) == Functionalizer().encode("Héllo")
    assert f.decode(f.encode(decomposed)) == "Héllo"  # NFC: decoding gives the normalized text


# --- what stays literal, and what the paper would have lost ------------------------------


@pytest.mark.parametrize("char", ["ẞ", "ǅ", "ß", "ŉ"])
def test_characters_the_operators_cannot_rebuild_stay_literal(char):
    f = Functionalizer()
    assert f.encode(char) == char
    assert char_plan(char, True, True) is None


def test_dotted_capital_i_is_rebuilt_from_its_decomposition():
    # İ lower-cases to two characters, so CAPITALIZE alone cannot give it back; but its
    # canonical decomposition is I + U+0307 (DOT_ABOVE is in the table), which can.
    f = Functionalizer()
    assert f.encode("İ") == "\ue107\ue000\ue100\ue000i"
    assert f.decode(f.encode("İstanbul")) == "İstanbul"


def test_mixed_case_repeat_is_not_folded():
    # Folding case first would give MULTIREPEAT(0,3,3) CAPITALIZE(0) abc = "AbcAbcAbc".
    f = Functionalizer()
    assert f.encode("Abcabcabc") == CAPITALIZE + arg(0) + "abcabcabc"
    assert f.encode("AbcAbcAbc") == MULTIREPEAT + arg(0) + arg(3) + arg(3) + CAPITALIZE + arg(0) + "abc"


def test_long_runs_are_written_in_chunks_of_255():
    f = Functionalizer()
    assert f.encode("#" * 600) == REPEAT + arg(0) + arg(255) + REPEAT + arg(1) + arg(255) + REPEAT + arg(2) + arg(90) + "###"
    assert f.encode("#" * 256) == REPEAT + arg(0) + arg(255) + "##"
    for n in (255, 256, 257, 258, 510, 511, 65536):
        assert f.decode(f.encode("=" * n)) == "=" * n
        assert f.decode(f.encode("ab" * n)) == "ab" * n


def test_positions_past_255_stay_literal():
    f = Functionalizer()
    word = "ab" * 127 + "c" + "É" + "É"  # 255 characters, then capitals at 255 and 256
    text_form = f.encode(word)
    assert text_form.startswith("\ue102" + arg(255) + CAPITALIZE + arg(255))  # position 255: described
    assert text_form.endswith("É")  # position 256: literal
    assert f.decode(text_form) == word
    assert describe_repeats("ab" * 128 + "c" + "dddd") == ([], "ab" * 128 + "c" + "dddd")
    assert describe_repeats("x" * 300 + "aaaa") == ([(REPEAT, 0, 255), (REPEAT, 1, 45), (REPEAT, 2, 4)], "xxa")


def test_private_use_input_is_written_with_literal():
    f = Functionalizer()
    assert f.encode("\ue100\ue000") == LITERAL + arg(1) + arg(0) + LITERAL + arg(0) + arg(0)
    assert f.encode("\uefff") == LITERAL + arg(15) + arg(255)
    for text in ["\ue000", "x\ue2ffy", "\ue201\ue000\ue003\ue003abc", "\ue100\ue000hello", "\uf8ff\ue05a" * 4]:
        assert f.decode(f.encode(text)) == text


def test_repeated_pieces_become_one_piece():
    f = Functionalizer(pattern="gpt4")
    assert f.split("111111111") == [REPEAT + arg(0) + arg(9), "1"]
    assert f.split(" ha ha ha ha") == [MULTIREPEAT + arg(0) + arg(3) + arg(4), " ha"]
    assert f.split(" Ha Ha Ha") == [MULTIREPEAT + arg(0) + arg(3) + arg(3), CAPITALIZE + arg(1), " ha"]
    assert f.split(" ha ha") == [" ha", " ha"]  # two are not a run
    assert Functionalizer(pattern="gpt4", repeat=False).split("111111") == ["111", "111"]
    # more than 255 pieces: blocks of 255, each described whole; a last block of 1 stays apart
    assert f.split(" x" * 256) == [MULTIREPEAT + arg(0) + arg(2) + arg(255), " x", " x"]
    assert f.split(" x" * 600)[4:] == [MULTIREPEAT + arg(0) + arg(2) + arg(90), " x"]


def test_options_switch_operators_off():
    text = "Héllo ######"
    assert Functionalizer(case=False).encode(text) == "\ue102\ue001Hello \ue200\ue000\ue006#"
    assert Functionalizer(diacritics=False).encode(text) == "\ue100\ue000héllo \ue200\ue000\ue006#"
    assert Functionalizer(repeat=False).encode(text) == "\ue102\ue001\ue100\ue000hello ######"
    repeat_only = Functionalizer(case=False, diacritics=False)
    assert repeat_only.encode(text) == "Héllo \ue200\ue000\ue006#"


# --- atoms -----------------------------------------------------------------------------


def test_atoms_have_ids_in_code_point_order():
    chars = [a.char for a in ATOMS]
    assert chars == sorted(chars) and len(chars) == 256 + 1 + 13 + 2 + 1
    assert chars[:256] == [arg(n) for n in range(256)]
    assert chars[256:] == [chr(0xE100 + i) for i in range(14)] + ["\ue200", "\ue201", "\ue2ff"]
    assert all(a.kind == OPERATOR for a in ATOMS)
    alphabet = Alphabet(ATOMS)
    assert alphabet.symbols(Functionalizer().encode("Hi")) == (256 + 256, 256, ord("h"), ord("i"))
    assert alphabet.symbols(Functionalizer().encode("\ue000")) == (256 + 256 + 16, 256, 256)


def test_show():
    f = Functionalizer()
    assert [f.show(p) for p in f.split("Héllo ######")] == ["⟨ACUTE 1⟩", "⟨CAP 0⟩", "hello", " ", "⟨REPEAT 0 6⟩", "#"]
    assert f.show(f.encode("abcabcabc")) == "⟨MULTIREPEAT 0 3 3⟩abc"
    assert f.show(f.encode("\ue123")) == "⟨LITERAL U+E123⟩"
    # tokens cut out of a piece: an operator without all its arguments, arguments alone
    assert f.show("\ue201\ue000") == "⟨MULTIREPEAT 0⟩"
    assert f.show("\ue003\ue004x") == "⟨3⟩⟨4⟩x"


# --- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text_form, where",
    [
        ("ab\ue005", "offset 2"),  # an argument with no operator
        ("\ue10e\ue000a", "offset 0"),  # a reserved operator
        ("x\ue100\ue000", "offset 1"),  # CAPITALIZE with no base after it
        ("\ue100\ue009abc", "offset 0"),  # a position past the base
        ("\ue200\ue000\ue000a", "offset 0"),  # zero copies
        ("\ue201\ue002\ue001\ue003abc", "offset 0"),  # end before start
        ("\ue2ff\ue010\ue000", "offset 0"),  # LITERAL past U+EFFF
        ("\ue200\ue000", "offset 0"),  # an operator missing an argument
    ],
)
def test_text_forms_no_encoder_writes_are_refused(text_form, where):
    f = Functionalizer()
    with pytest.raises(FunctionalDecodeError, match=where):
        f.decode(text_form)
    assert "\ufffd" in f.decode(text_form, errors="replace")
    assert f.decode(text_form, errors="ignore") == f.decode(text_form, errors="replace").replace("\ufffd", "")


def test_bad_options():
    with pytest.raises(FunctionalBPEError, match="case"):
        Functionalizer(case="yes")
    with pytest.raises(FunctionalBPEError, match="normalize"):
        Functionalizer(normalize="NFX")
    with pytest.raises(FunctionalBPEError, match="errors"):
        Functionalizer().decode("x", errors="surrogateescape")
    with pytest.raises(FunctionalBPEError, match="bad option"):
        make_scheme("functional", casing=True)


def test_registry_rebuilds_the_scheme():
    scheme = make_scheme("functional")
    assert type(scheme) is Functionalizer
    assert scheme.name == "functional" and scheme.pattern_name == "functionalizer"
    custom = make_scheme("functional", "gpt4", case=False, normalize="NFC")
    again = make_scheme("functional", custom.pattern_name, **custom.options())
    assert again.options() == custom.options() == {
        "case": False, "diacritics": True, "repeat": True, "split_operators": True, "normalize": "NFC"
    }


# --- every character: the filter misses nothing, every plan is exact --------------------


def test_every_character_with_a_plan_is_found_and_rebuilt():
    f = Functionalizer()
    planned = 0
    for cp in itertools.chain(range(0xD800), range(0xE000, 0x110000)):
        char = chr(cp)
        plan = char_plan.__wrapped__(char, True, True)
        if plan is not None:
            planned += 1
            assert _CASE_OR_ACCENT_RE.match(char), char
            assert f.decode(f.encode(char)) == char
    assert planned > 1500  # Latin, Greek, Cyrillic, Armenian, Georgian, ... capitals and accents


# --- hypothesis: lossless on everything ---------------------------------------------------

_UPPER = [c for c in map(chr, range(0x250, 0x1F000)) if c.isupper() or unicodedata.category(c) == "Lt"]
_ACCENTED = [c for c in map(chr, range(0xC0, 0x2000)) if unicodedata.decomposition(c)[:1] not in ("", "<")]
_SPECIAL = list("İẞǅßσςΣıiIŉǰ") + [chr(c) for c in range(0x300, 0x370)] + list("\u2581 \t\n\r#_")
_OPERATORS = [chr(c) for c in (*range(0xE000, 0xE010), 0xE0FF, *range(0xE100, 0xE110), 0xE200, 0xE201, 0xE2FF, 0xEFFF)]

chars = st.one_of(
    st.characters(blacklist_categories=("Cs",)),
    st.sampled_from("abcAB  \n"),
    st.sampled_from(_UPPER),
    st.sampled_from(_ACCENTED),
    st.sampled_from(_SPECIAL),
    st.sampled_from(_OPERATORS),
    st.characters(min_codepoint=0xE000, max_codepoint=0xF8FF),
)
runs = st.tuples(st.text(chars, min_size=1, max_size=3), st.integers(1, 600)).map(lambda t: t[0] * t[1])
long_words = st.text(st.sampled_from("aeiouÉÀŁØbcdXYZ"), min_size=250, max_size=320)
texts = st.lists(st.one_of(st.text(chars, max_size=30), runs, long_words), max_size=6).map("".join)
OPTIONS = [
    dict(zip(("case", "diacritics", "repeat", "split_operators"), flags))
    for flags in itertools.product((True, False), repeat=4)
]
PATTERN_NAMES = ["functionalizer", "gpt4", "gpt2", "llama3", "o200k"]


@given(texts, st.sampled_from(OPTIONS), st.sampled_from(PATTERN_NAMES))
def test_decode_encode_is_the_identity(text, options, pattern):
    f = Functionalizer(pattern=pattern, **options)
    pieces = f.split(text)
    assert all(pieces)
    assert f.decode("".join(pieces)) == text
    # every code point of U+E000..U+EFFF in a text form is an atom with an id of its own
    atom_chars = {a.char for a in ATOMS}
    assert all(c in atom_chars for c in "".join(pieces) if "\ue000" <= c <= "\uefff")


@given(texts, st.sampled_from(["NFC", "NFD", "NFKC"]))
def test_normalize_gives_back_the_normalized_text(text, form):
    f = Functionalizer(normalize=form)
    assert f.decode(f.encode(text)) == unicodedata.normalize(form, text)


@given(st.lists(texts, max_size=4), st.sampled_from(OPTIONS[::3]), st.sampled_from(PATTERN_NAMES))
def test_count_equals_counting_the_split(documents, options, pattern):
    f = Functionalizer(pattern=pattern, **options)
    expected = Counter()
    for doc in documents:
        expected.update(f.split(doc))
    assert f.transform(count_table(documents, f)).to_dict() == dict(expected)


@given(texts)
def test_split_operators_puts_each_instruction_apart(text):
    pieces = Functionalizer().split(text)
    for piece in pieces:
        if "\ue100" <= piece[0] <= "\ue201":  # an instruction: exactly one, alone
            assert len(piece) == {"\ue200": 3, "\ue201": 4}.get(piece[0], 2)
        else:  # a base: no instruction inside
            assert not any("\ue100" <= c <= "\ue201" for c in piece)


# --- real text ----------------------------------------------------------------------------


def _corpus_files(corpora):
    files = sorted(corpora.glob("*/*.txt"))
    if not files:
        pytest.skip("no corpus files")
    return files


def test_lossless_on_every_corpus(corpora):
    f, paper = Functionalizer(), Functionalizer.paper()
    gpt4 = Functionalizer(pattern="gpt4")
    for path in _corpus_files(corpora):
        text = read_corpus(path, 20_000)
        assert f.decode(f.encode(text)) == text, path.name
        assert gpt4.decode(gpt4.encode(text)) == text, path.name
        assert paper.decode(paper.encode(text)) == unicodedata.normalize("NFC", text), path.name


@pytest.mark.slow
def test_lossless_on_every_whole_corpus(corpora):
    for options in ({}, {"pattern": "gpt4"}, {"split_operators": False}):
        f = Functionalizer(**options)
        for path in _corpus_files(corpora):
            text = read_corpus(path)
            assert f.decode(f.encode(text)) == text, (path.name, options)
