"""The boundary-marker scheme: the paper's table, the units, the rules, exact round trips."""
from __future__ import annotations

import itertools

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from functionalbpe.schemes import markers as M
from functionalbpe.core.alphabet import Alphabet
from functionalbpe.errors import DecodeError, FunctionalBPEError
from functionalbpe.schemes.markers import BOUNDARY, LITERAL, TITLE, UPPER, BoundaryMarkers, units
from functionalbpe.text.patterns import pretokenize
from functionalbpe.schemes.registry import make_scheme
from functionalbpe.text.counting import count_table

from ..conftest import read_corpus

# Every combination of the options; the paper's six schemes are those with digits => punct.
ALL_OPTIONS = [
    dict(punct=p, digits=d, case=c) for p, d, c in itertools.product((False, True), repeat=3)
]
PAPER = {
    "[w]": BoundaryMarkers(),
    "[w,p]": BoundaryMarkers(punct=True),
    "[w,p,d]": BoundaryMarkers(punct=True, digits=True),
    "[w,↑]": BoundaryMarkers(case=True),
    "[w,p,↑]": BoundaryMarkers(punct=True, case=True),
    "[w,p,d,↑]": BoundaryMarkers(punct=True, digits=True, case=True),
}

# Pieces that make trouble, glued together by hypothesis.
FRAGMENTS = [
    "the", "The", "THE", "cat", " cat", "  cat", "cat ", "SolidGoldMagikarp", "WiFi", "A", "a", "I",
    "İ", "i̇", "ß", "SS", "Straße", "STRASSE", "ΟΔΟΣ", "Οδός", "σοφός", "ǅ", "ﬁx", "Ǆ",
    "مرحبا", "می\u200cخواهم", "안녕하세요", "漢字", "カード", "かな", "สวัสดี", "ສະບາຍດີ", "ខ្មែរ", "မြန်မာ", "བོད",
    "😀", "👍🏽", "👨\u200d👩\u200d👧", "❤\ufe0f", "☺\ufe0e", "1\ufe0f\u20e3", "#\u20e3", "🇫🇷", "🏴\U000e0067\U000e0062\U000e007f",
    "3", "42", "3rd", "a3", "1,000", "½", "²", "Ⅻ", "a,b", "a, b", ",", ".", "!", "...", "'", "don't", "-",
    "¦", "↑", "⇑", "¦¦", "↑¦", "\ue300", "\ue301", "\ue302", "\ue2ff", "\ue000", "\ue00f", "\uefff", "\ue123",
    "\uf8ff", "\U000f0000", "\U0010fffd",
    " ", " ", "  ", "   ", "\t", "\n", "\n\n", "\r", "\r\n", "\u00a0", "\u3000", "\u2028", "\x00", "\x1f",
    "\u200b", "\u200d", "\u200c", "\u00ad", "\ufeff", "\u0301", "e\u0301", "\u0301\u0301", "漢\u0301", "=\u0338",
    "\U0001fbff", "\u0378", "x" * 300, "",
]
fragment_texts = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=5)), max_size=25
).map("".join)
any_text = st.one_of(
    fragment_texts,
    st.text(),
    st.text(st.characters(min_codepoint=0xE000, max_codepoint=0xEFFF) | st.sampled_from(" ¦↑⇑a")),
)


def show_all(markers, text):
    return [markers.show(p) for p in markers.pieces(text)]


def pieces_by_the_rules(markers, text):
    """The encoding rules of the spec, written out once more as plainly as possible."""
    cut = units(text)
    marked = {"word"} | ({"punct"} if markers.punct else set()) | ({"digit"} if markers.digits else set())
    n = len(cut)
    dropped = [
        kind == "space" and 0 < i < n - 1 and cut[i - 1][0] in marked and cut[i + 1][0] in marked
        for i, (kind, _) in enumerate(cut)
    ]
    out = []
    for i, (kind, unit) in enumerate(cut):
        if dropped[i]:
            continue
        if kind == "word":
            code, unit = M.case_code(unit) if markers.case else ("", unit)
            out.append(code + BOUNDARY + unit + BOUNDARY)
        elif kind in marked:
            left = BOUNDARY if i > 0 and dropped[i - 1] else ""
            right = BOUNDARY if i < n - 1 and dropped[i + 1] else ""
            out.append(left + unit + right)
        else:
            out.append(M.escape_private_use(unit))
    return out


def test_docstring_examples():
    import doctest

    assert doctest.testmod(M).failed == 0


# -- the paper's example ----------------------------------------------------------------

EXAMPLE = "Ash caught 3 SolidGoldMagikarp. WOW!"


def test_paper_table_plain():
    assert pretokenize(EXAMPLE, "gpt4") == [
        "Ash", " caught", " ", "3", " SolidGoldMagikarp", ".", " WOW", "!",
    ]


@pytest.mark.parametrize(
    "name, expected",
    [
        ("[w]", ["¦Ash¦", "¦caught¦", " ", "3", " ", "¦SolidGoldMagikarp¦", ".", " ", "¦WOW¦", "!"]),
        ("[w,p,d]", ["¦Ash¦", "¦caught¦", "¦3¦", "¦SolidGoldMagikarp¦", ".¦", "¦WOW¦", "!"]),
        ("[w,p,d,↑]", ["↑¦ash¦", "¦caught¦", "¦3¦", "¦SolidGoldMagikarp¦", ".¦", "⇑¦wow¦", "!"]),
        # Not in the paper's table; follows from its rules.
        ("[w,p]", ["¦Ash¦", "¦caught¦", " ", "3", " ", "¦SolidGoldMagikarp¦", ".¦", "¦WOW¦", "!"]),
        ("[w,↑]", ["↑¦ash¦", "¦caught¦", " ", "3", " ", "¦SolidGoldMagikarp¦", ".", " ", "⇑¦wow¦", "!"]),
    ],
)
def test_paper_table(name, expected):
    markers = PAPER[name]
    assert markers.variant == name and markers.name == "markers"
    assert show_all(markers, EXAMPLE) == expected
    assert markers.decode(markers.encode(EXAMPLE)) == EXAMPLE


def test_pieces_carry_atoms_not_glyphs():
    pieces = PAPER["[w,p,d,↑]"].pieces(EXAMPLE)
    assert pieces[0] == TITLE + BOUNDARY + "ash" + BOUNDARY
    assert pieces[5] == UPPER + BOUNDARY + "wow" + BOUNDARY
    assert "¦" not in "".join(pieces) and "↑" not in "".join(pieces)


# -- units ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a, b", [("word", "a"), ("punct", ","), ("space", " "), ("word", "b")]),
        ("3rd", [("digit", "3"), ("word", "rd")]),
        ("Grüße Ελλάδα Мир", [("word", "Grüße"), ("space", " "), ("word", "Ελλάδα"), ("space", " "), ("word", "Мир")]),
        ("abcабв", [("word", "abcабв")]),  # merged across scripts
        ("Hello世界", [("word", "Hello"), ("other", "世界")]),
        ("カード かな", [("other", "カード"), ("space", " "), ("other", "かな")]),
        ("สวัสดี ครับ", [("other", "สวัสดี"), ("space", " "), ("other", "ครับ")]),
        ("안녕 하세요", [("word", "안녕"), ("space", " "), ("word", "하세요")]),
        ("a  b", [("word", "a"), ("other", "  "), ("word", "b")]),
        ("a\tb\n", [("word", "a"), ("other", "\t"), ("word", "b"), ("other", "\n")]),
        (" \n ", [("other", " \n ")]),
        ("hi 😀👍🏽!", [("word", "hi"), ("space", " "), ("other", "😀👍🏽"), ("punct", "!")]),
        ("👨\u200d👩\u200d👧", [("other", "👨\u200d👩\u200d👧")]),
        ("21\ufe0f\u20e3", [("digit", "2"), ("other", "1\ufe0f\u20e3")]),
        ("☺ ™ ©", [("punct", "☺"), ("space", " "), ("punct", "™"), ("space", " "), ("punct", "©")]),
        ("e\u0301", [("word", "e\u0301")]),
        ("漢\u0301x", [("other", "漢\u0301"), ("word", "x")]),  # a mark stays with its base
        ("=\u0338", [("punct", "=\u0338")]),
        ("\u0301x", [("word", "\u0301x")]),
        ("a\u00adb", [("word", "a"), ("punct", "\u00ad"), ("word", "b")]),  # Cf is punct
        ("\ue300\x01", [("other", "\ue300\x01")]),
        ("", []),
    ],
)
def test_units(text, expected):
    assert units(text) == expected


def test_spaceless_chars_all_lie_in_the_fast_blocks():
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    outside = regex.compile(r"[%s--%s]" % (M.SPACELESS_CHAR, M.SPACELESS_BLOCKS), regex.V1)
    assert outside.search(everything) is None
    assert regex.compile(M.SPACELESS_CHAR, regex.V1).search("ー") is not None


@given(st.text(st.characters(blacklist_categories=("Cs",)).filter(
    lambda c: regex.match(M.SPACELESS_BLOCKS, c) is None)) | fragment_texts.map(
    lambda t: regex.sub(M.SPACELESS_BLOCKS, "", t)))
def test_fast_units_equal_the_definition(text):
    full = regex.compile(M.UNITS, regex.V1)
    fast = regex.compile(M.UNITS_WITHOUT_SPACELESS, regex.V1)
    assert [(m.lastgroup, m.group()) for m in fast.finditer(text)] == [
        (m.lastgroup, m.group()) for m in full.finditer(text)
    ]


@given(any_text)
def test_units_tile_and_are_maximal(text):
    cut = units(text)
    assert "".join(u for _, u in cut) == text
    assert all(u for _, u in cut)
    for (k1, _), (k2, _) in zip(cut, cut[1:]):
        assert not (k1 == k2 and k1 in ("word", "digit", "punct")), (k1, k2)
    for kind, unit in cut:
        if kind == "space":
            assert unit == " "
        elif kind == "word":
            assert regex.fullmatch(r"[\p{L}\p{M}]+", unit)
            assert regex.search(M.SPACELESS_CHAR, unit, flags=regex.V1) is None
        elif kind == "digit":
            assert regex.match(r"\p{N}", unit)
        elif kind == "punct":
            assert regex.match(r"[\p{P}\p{S}\p{Cf}]", unit)


# -- encoding rules ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "markers, text, expected",
    [
        (PAPER["[w]"], "the cat", ["¦the¦", "¦cat¦"]),
        (PAPER["[w]"], " the cat ", [" ", "¦the¦", "¦cat¦", " "]),
        (PAPER["[w]"], "the  cat", ["¦the¦", "  ", "¦cat¦"]),
        (PAPER["[w]"], "a, b", ["¦a¦", ",", " ", "¦b¦"]),
        (PAPER["[w,p]"], "a, b", ["¦a¦", ",¦", "¦b¦"]),
        (PAPER["[w,p]"], "a,b", ["¦a¦", ",", "¦b¦"]),
        (PAPER["[w,p]"], "a , b", ["¦a¦", "¦,¦", "¦b¦"]),
        (PAPER["[w,p]"], "(a)", ["(", "¦a¦", ")"]),
        (PAPER["[w,p,d]"], "in 2024 (3rd)", ["¦in¦", "¦2024¦", "¦(", "3", "¦rd¦", ")"]),
        (PAPER["[w,p,d]"], "1 2", ["1¦", "¦2"]),
        (PAPER["[w,p,d]"], "漢 a", ["漢", " ", "¦a¦"]),
        (PAPER["[w,↑]"], "The A a", ["↑¦the¦", "↑¦a¦", "¦a¦"]),
        (PAPER["[w,↑]"], "NASA WiFi iPhone", ["⇑¦nasa¦", "¦WiFi¦", "¦iPhone¦"]),
        (PAPER["[w,p,d,↑]"], "İstanbul İ", ["¦İstanbul¦", "¦İ¦"]),
        (PAPER["[w,p,d,↑]"], "Straße STRASSE ß", ["↑¦straße¦", "⇑¦strasse¦", "¦ß¦"]),
        (PAPER["[w,p,d,↑]"], "ΟΔΟΣ Οδός", ["⇑¦οδος¦", "↑¦οδός¦"]),
        (PAPER["[w,p,d,↑]"], "مرحبا 안녕", ["¦مرحبا¦", "¦안녕¦"]),
        (PAPER["[w]"], "¦ ↑ ⇑", ["¦", " ", "↑", " ", "⇑"]),
        # the input's own glyphs are text (two or three bytes), shown as they are
        (PAPER["[w,p,d,↑]"], "¦ ↑ ⇑", ["¦¦", "¦↑¦", "¦⇑"]),
        (PAPER["[w,p,d,↑]"], "x\ue300", ["¦x¦", "⟨U+E300⟩"]),
    ],
)
def test_pieces(markers, text, expected):
    assert show_all(markers, text) == expected
    assert markers.decode(markers.encode(text)) == text


def test_shift_code_sits_outside_the_markers_and_keeps_the_space():
    m = PAPER["[w,↑]"]
    assert m.encode("the The") == BOUNDARY + "the" + BOUNDARY + TITLE + BOUNDARY + "the" + BOUNDARY
    assert m.decode(m.encode("the The")) == "the The"
    assert m.decode(m.encode("theThe")) == "theThe"


@pytest.mark.parametrize("options", ALL_OPTIONS, ids=str)
@given(text=any_text)
def test_pieces_follow_the_rules(options, text):
    markers = BoundaryMarkers(**options)
    assert markers.pieces(text) == pieces_by_the_rules(markers, text)


@pytest.mark.parametrize("options", ALL_OPTIONS, ids=str)
@given(text=any_text)
def test_lossless(options, text):
    markers = BoundaryMarkers(**options)
    form = markers.encode(text)
    assert markers.decode(form) == text
    assert "".join(markers.pieces(text)) == form


@pytest.mark.parametrize("options", ALL_OPTIONS, ids=str)
@given(text=any_text)
def test_text_form_holds_only_atoms_in_private_use(options, text):
    markers = BoundaryMarkers(**options)
    atoms = {a.char for a in M.ATOMS}
    for piece in markers.pieces(text):
        assert piece
        assert BOUNDARY * 2 not in piece  # touching markers are always two pieces
        assert all(c in atoms for c in piece if "\ue000" <= c <= "\uefff")
        # a shift code is always the first symbol of a word piece
        for i, c in enumerate(piece):
            if c in (TITLE, UPPER):
                assert i == 0 and piece[1] == BOUNDARY and piece[-1] == BOUNDARY


@pytest.mark.parametrize("options", ALL_OPTIONS, ids=str)
@given(text=any_text)
def test_touching_markers_mean_exactly_one_space(options, text):
    """Decode with every touching pair read as "#" instead of " ": what comes out is the
    text with some of its spaces, and nothing else, turned into "#". (The "#" goes between
    the two markers, which then stand alone: a shifted word keeps its closing marker.)"""
    markers = BoundaryMarkers(**options)
    text = text.replace("#", "")
    form = markers.encode(text)
    hashed = markers.decode(regex.sub("\ue300([\ue301\ue302]?)\ue300", "\ue300#\\1\ue300", form))
    assert len(hashed) == len(text)
    assert all(h == t or (h == "#" and t == " ") for h, t in zip(hashed, text))
    if markers.punct and markers.digits:
        # with every non-other kind marked, every single space between two of them is dropped
        assert hashed.count("#") == sum(
            1 for a, b, c in zip(units(text), units(text)[1:], units(text)[2:])
            if b[0] == "space" and a[0] != "other" and c[0] != "other"
        )


def test_every_private_use_character_round_trips():
    m = PAPER["[w,p,d,↑]"]
    text = " ".join(chr(c) for c in range(0xE000, 0xF000))
    form = m.encode(text)
    assert m.decode(form) == text
    assert form.count(LITERAL) == 4096


@pytest.mark.parametrize("form", ["\ue301cat", "a\ue2ff\ue001", "\ue000", "\ue303", "\ue301"])
def test_malformed_text_form_is_an_error(form):
    m = PAPER["[w,p,d,↑]"]
    with pytest.raises(DecodeError, match="offset"):
        m.decode(form)
    assert "\ufffd" in m.decode(form, errors="replace")
    assert "\ufffd" not in m.decode(form, errors="ignore")


def test_bad_options():
    with pytest.raises(FunctionalBPEError, match="punct"):
        BoundaryMarkers(punct="yes")
    with pytest.raises(FunctionalBPEError, match="errors"):
        BoundaryMarkers().decode("", errors="bogus")


# -- the scheme -------------------------------------------------------------------------


def test_scheme_atoms_and_options():
    scheme = make_scheme("markers", punct=True, digits=True, case=True)
    assert type(scheme) is BoundaryMarkers and scheme.variant == "[w,p,d,↑]"
    chars = [a.char for a in scheme.atoms]
    assert chars == sorted(chars)
    assert [a.glyph for a in scheme.atoms[-3:]] == ["¦", "↑", "⇑"]
    assert [a.name for a in scheme.atoms[:17]] == [f"ARG {v}" for v in range(16)] + ["LITERAL"]
    assert scheme.options() == {"punct": True, "digits": True, "case": True, "merge_shift_codes": True}
    assert make_scheme("markers", **scheme.options()).split(EXAMPLE) == scheme.split(EXAMPLE)
    alphabet = Alphabet(scheme.atoms)
    assert alphabet.first_merge == 256 + 20
    # each atom is one symbol; a literal "¦" of the text is its two UTF-8 bytes
    assert alphabet.symbols(scheme.split("¦")[0]) == tuple("¦".encode())
    assert alphabet.symbols(scheme.split("A")[0]) == (
        alphabet.atom_id(TITLE), alphabet.atom_id(BOUNDARY), ord("a"), alphabet.atom_id(BOUNDARY),
    )
    assert scheme.decode("".join(scheme.split(EXAMPLE))) == EXAMPLE
    assert [scheme.show(p) for p in scheme.split("Ash")] == ["↑¦ash¦"]


def test_scheme_takes_no_pattern():
    with pytest.raises(FunctionalBPEError, match="takes no pattern"):
        make_scheme("markers", "gpt4")
    assert make_scheme("markers", "markers").pattern == M.UNITS


def test_count_equals_split():
    scheme = make_scheme("markers", punct=True)
    texts = ["the cat, the dog", "The cat", "  the\n"]
    expected = {}
    for t in texts:
        for p in scheme.split(t):
            expected[p] = expected.get(p, 0) + 1
    assert scheme.transform(count_table(texts, scheme)).to_dict() == expected


# -- real text --------------------------------------------------------------------------


def _corpus_files(corpora):
    return sorted(p for p in corpora.rglob("*.txt"))


@pytest.mark.parametrize("name", ["[w]", "[w,p,d,↑]"])
def test_corpora_lossless_prefix(corpora, name):
    markers = PAPER[name]
    for path in _corpus_files(corpora):
        text = read_corpus(path, limit=40_000)
        assert markers.decode(markers.encode(text)) == text, path.name


@pytest.mark.slow
@pytest.mark.parametrize("name", ["[w]", "[w,p,d]", "[w,p,d,↑]"])
def test_corpora_lossless_full(corpora, name):
    markers = PAPER[name]
    for path in _corpus_files(corpora):
        text = read_corpus(path)
        assert markers.decode(markers.encode(text)) == text, path.name
