"""The compiled boundary-marker scheme (csrc/lib/scan/markers.c) against the Python reference.

Every compiled path — pieces, the case coder, counting, encoding — must give exactly what
``BoundaryMarkers.python_pieces`` and ``markers.case_code`` give, on every code point,
hypothesis text and real text.
"""
from __future__ import annotations

from collections import Counter

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

import functionalbpe as fb
from functionalbpe.unicode import markerclasses as MC
from functionalbpe.schemes import markers as M
from functionalbpe.util.checks import bpe_text
from functionalbpe.core._native import NATIVE
from functionalbpe.unicode.charclasses import every_code_point
from functionalbpe.schemes.markers import BoundaryMarkers
from functionalbpe.text.counting import count_table
from functionalbpe.training import train_from_counts

from ..conftest import read_corpus
from .test_markers import ALL_OPTIONS, FRAGMENTS, any_text

scanner = NATIVE.scanner
encoder = NATIVE.encoder
pytestmark = pytest.mark.skipif(scanner is None, reason="the compiled extension is not built")

EVERY = every_code_point()


def _classes():
    return MC.unit_class_table()


def one_per_class():
    """A character of each distinct class byte, and the characters the scanner tests by
    value (keycap bases, U+FE0F, U+20E3, ZWJ, the sigmas, the space)."""
    table, seen, out = _classes(), set(), []
    for cp in range(0x110000):
        if table[cp] not in seen:
            seen.add(table[cp])
            out.append(chr(cp))
    return out + list("#*0 9\u03a3\u03c3\u03c2\ufe0f\ufe0e\u20e3\u200d\u0130\u00df\U0001f1eb\U0001f1f7")


# Texts made of one character of every class, in every order hypothesis finds.
class_texts = st.lists(st.sampled_from(one_per_class()), max_size=16).map("".join)
texts = st.one_of(any_text, class_texts)


def compiled_and_reference(options, text):
    markers = BoundaryMarkers(**options)
    return scanner.markers_pieces(text, markers.bits), markers.python_pieces(text)


# -- the tables ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern, bits, value",
    [
        (M.WORD_CHAR, MC.KIND, MC.WORD),
        (M.SPACELESS_CHAR, MC.KIND, MC.SPACELESS),
        (r"\s", MC.KIND, MC.SPACE_KIND),
        (r"[%s]" % "".join(M.PUNCT_PROPERTIES), MC.KIND, MC.PUNCT),
        (r"\p{N}", MC.KIND, MC.NUMBER_KIND),
        (M.INHERITED_MARK, MC.INHERITED, MC.INHERITED),
        (M.EMOJI_PRESENTATION, MC.EMOJI_PRESENTATION, MC.EMOJI_PRESENTATION),
        (M.PICTOGRAPHIC, MC.PICTOGRAPHIC, MC.PICTOGRAPHIC),
        (M.EMOJI_EXTEND, MC.EMOJI_EXTEND, MC.EMOJI_EXTEND),
    ],
)
def test_unit_classes_are_the_regex_classes(pattern, bits, value):
    table = _classes()
    expected = bytearray(0x110000)
    for m in regex.finditer(pattern + "+", EVERY, flags=regex.V1):
        expected[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
    got = table.translate(bytes(int(f & bits == value) for f in range(256)))
    assert got == bytes(expected)


def test_changes_lower_is_python_lower():
    table = _classes()
    flagged = [cp for cp in range(0x110000) if table[cp] & MC.CHANGES_LOWER]
    assert flagged == [cp for cp in range(0x110000) if chr(cp).lower() != chr(cp)]


def test_case_maps_are_python_case_maps():
    maps = MC.case_maps()
    for cp in range(0x110000):
        for method, table in (("lower", maps.lower), ("upper", maps.upper)):
            mapped = getattr(chr(cp), method)()
            delta = table.value(cp)
            if len(mapped) > 1:
                assert delta == MC.MULTI, (hex(cp), method)
            else:
                assert cp + delta == ord(mapped), (hex(cp), method)


# -- case codes ---------------------------------------------------------------------------


def test_case_code_on_every_word_character():
    """Each word character alone and in the contexts that the title, upper and final-sigma
    tests look at."""
    table = _classes()
    words = [chr(cp) for cp in range(0x110000) if table[cp] & MC.KIND == MC.WORD]
    for c in words:
        for word in (c, c + "a", "A" + c, c + c, c.upper(), c + "\u03a3", "\u03a3" + c, "A\u03a3" + c, "a" + c + "\u03a3"):
            if all(table[ord(x)] & MC.KIND == MC.WORD for x in word):
                assert scanner.markers_case_code(word) == M.case_code(word), ascii(word)


SIGMA_WORDS = st.text(st.sampled_from("\u03a3\u03c3\u03c2\u0391\u03b1A\u0301\u0345'\u00b7\u02b0\u1fbc\u0130\u00dfK"), min_size=1)


@given(word=SIGMA_WORDS | st.text(st.sampled_from([c for c in one_per_class() if c.isalpha()] + list("AaΣ")), min_size=1))
def test_case_code_on_words(word):
    word = "".join(c for c in word if _classes()[ord(c)] & MC.KIND == MC.WORD)
    if word:
        assert scanner.markers_case_code(word) == M.case_code(word)


# -- pieces -------------------------------------------------------------------------------


@pytest.mark.parametrize("options", ALL_OPTIONS, ids=str)
@given(text=texts)
def test_pieces_equal_the_reference(options, text):
    compiled, reference = compiled_and_reference(options, text)
    assert compiled == reference


@pytest.mark.parametrize("options", [ALL_OPTIONS[0], ALL_OPTIONS[-1]], ids=str)
def test_pieces_of_every_code_point(options):
    """Every code point once, next to its neighbours in code-point order, and in threes
    between spaces (so that each starts a unit somewhere)."""
    for text in (EVERY, " ".join(EVERY[i : i + 3] for i in range(0, len(EVERY), 3))):
        compiled, reference = compiled_and_reference(options, text)
        assert compiled == reference


@pytest.mark.parametrize(
    "text",
    [
        "x" * 10_000,
        "A" + "b" * 5000,
        "\u03a3" * 400 + " " + "\u039f\u0394\u039f\u03a3" * 300,
        "\ue300" * 3000 + "a\ue123 b",
        " " * 100_000 + "a",
        "a " * 20_000,
        "\u0301" * 2000 + "x",
        "😀" * 1000 + "1\ufe0f\u20e3" * 500,
        "\ud800a\udfff",  # lone surrogates: other units, as Python strings may hold them
        "",
    ],
    ids=lambda t: ascii(t[:12]),
)
def test_long_and_odd_pieces(text):
    for options in ALL_OPTIONS:
        compiled, reference = compiled_and_reference(options, text)
        assert compiled == reference


# -- counting -----------------------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 2])
@given(corpus=st.lists(texts, max_size=6), options=st.sampled_from(ALL_OPTIONS))
def test_count_equals_the_reference(threads, corpus, options):
    scheme = BoundaryMarkers(**options)
    expected: Counter = Counter()
    for text in corpus:
        expected.update(scheme.python_pieces(bpe_text(text)))  # counting reads a lone surrogate as U+FFFD
    counted = count_table(corpus, scheme, threads=threads)
    assert list(counted.items()) == list(expected.items())  # the same order too


def test_count_in_parallel_equals_the_reference():
    """Enough text for every thread to count part of it, tables merged in order."""
    corpus = ["".join(FRAGMENTS[(i * 7 + k) % len(FRAGMENTS)] + " " for k in range(40)) for i in range(4000)]
    scheme = BoundaryMarkers(punct=True, digits=True, case=True)
    expected: Counter = Counter()
    for text in corpus:
        expected.update(scheme.python_pieces(text))
    assert list(count_table(corpus, scheme, threads=3).items()) == list(expected.items())


def test_counter_cuts_out_special_tokens():
    counter = scanner.PieceCounter("markers", threads=1, special_tokens=["<s>"], markers=5)
    counter.add_text("The cat<s>The  dog, <s>")
    markers = BoundaryMarkers(punct=True, case=True)
    expected = Counter(markers.python_pieces("The cat") + markers.python_pieces("The  dog, "))
    assert counter.result() == dict(expected)


# -- encoding -----------------------------------------------------------------------------

CORPUS = [
    "The cat sat on the mat. THE CAT SAT! The Cat's 3 mats, 42 hats; the cat 3rd.\n" * 3,
    "Der Hund, die Straße, STRASSE. Οδός ΟΔΟΣ σοφός. Мир мир МИР.\n",
    "漢字かな カード สวัสดี ครับ 안녕 하세요 مرحبا 😀👍🏽 ¦ ↑ ⇑ \ue300\ue2ff\n",
]


@pytest.fixture(scope="module", params=ALL_OPTIONS, ids=str)
def tok(request):
    return fb.train(CORPUS, vocab_size=400, scheme="markers", progress=False, **request.param)


@pytest.mark.skipif(encoder is None, reason="the compiled encoder is not built")
def test_tokenizer_encodes_with_the_compiled_scheme(tok):
    assert tok._encoder.scanner == "markers" + tok.scheme.variant


@pytest.mark.skipif(encoder is None, reason="the compiled encoder is not built")
@given(text=texts)
def test_encoding_equals_encoding_the_reference_pieces(tok, text):
    text = text.encode("utf-8", "replace").decode("utf-8")  # encode() reads lone surrogates as U+FFFD
    expected = tok._encoder.encode_pieces(tok.scheme.python_pieces(text))
    assert tok.encode_ordinary(text) == expected
    assert tok.encode_batch([text, text], num_threads=2) == [expected, expected]
    assert tok.count_tokens(text) == len(expected)
    assert tok.decode(expected) == text


# -- real text ----------------------------------------------------------------------------


def _corpus_files(corpora):
    return sorted(corpora.rglob("*.txt"))


@pytest.mark.parametrize("options", [ALL_OPTIONS[0], ALL_OPTIONS[-1]], ids=str)
def test_corpora_prefix(corpora, options):
    for path in _corpus_files(corpora):
        text = read_corpus(path, limit=20_000)
        compiled, reference = compiled_and_reference(options, text)
        assert compiled == reference, path.name


@pytest.mark.slow
@pytest.mark.parametrize("options", ALL_OPTIONS, ids=str)
def test_corpora_full(corpora, options):
    for path in _corpus_files(corpora):
        text = read_corpus(path)
        compiled, reference = compiled_and_reference(options, text)
        assert compiled == reference, path.name


def test_merges_equal_those_from_the_reference_counts(corpora):
    """Training through the compiled counter gives the merge table that the Python pieces'
    counts give."""
    docs = [read_corpus(p, limit=30_000) for p in _corpus_files(corpora)[:6]]
    for options in (ALL_OPTIONS[0], ALL_OPTIONS[-1]):
        scheme = BoundaryMarkers(**options)
        reference: Counter = Counter()
        for doc in docs:
            reference.update(scheme.python_pieces(doc))
        compiled = count_table(docs, scheme)
        assert compiled.to_dict() == dict(reference)
        tok = fb.train(docs, vocab_size=2000, scheme="markers", progress=False, **options)
        expected = train_from_counts(dict(reference), scheme, vocab_size=2000)
        assert tok.merges == expected.merges and tok.merge_counts == expected.merge_counts
