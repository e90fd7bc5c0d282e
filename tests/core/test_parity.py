"""Parity-aware BPE: the compiled trainer equals the lesson (core/parity.py) merge for merge,
on every variant; the lesson's own rules are checked on cases worked by hand."""
from __future__ import annotations

from array import array

import pytest

from functionalbpe.core import parity
from functionalbpe.core import trainer as face
from functionalbpe.core._native import NATIVE
from functionalbpe.core.alphabet import Alphabet
from functionalbpe.core.piecetable import PieceTable

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

needs_c = pytest.mark.skipif(NATIVE.trainer is None, reason="the compiled trainer is not built")

# Small alphabets so that pairs repeat and overlap; 2-4 languages with tables of their own.
pieces = st.dictionaries(st.text("aab ", min_size=1, max_size=8), st.integers(1, 9), min_size=1, max_size=8)
table = pieces.map(PieceTable.from_dict)


@st.composite
def setups(draw):
    n = draw(st.integers(2, 4))
    tables = draw(st.lists(table, min_size=n, max_size=n))
    options = {}
    if draw(st.booleans()):
        options["dev"] = draw(st.lists(table, min_size=n, max_size=n))
    else:
        options["target_ratios"] = draw(st.lists(st.sampled_from([0.5, 1.0, 1.0, 1.5, 3]), min_size=n, max_size=n))
    options["variant"] = draw(st.sampled_from(parity.VARIANTS))
    options["window_size"] = draw(st.integers(1, 6))
    options["alpha"] = draw(st.sampled_from([1, 1.5, 2, 3]))
    options["global_merges"] = draw(st.sampled_from([0, 0, 1, 3]))
    options["min_frequency"] = draw(st.sampled_from([1, 1, 2, 5]))
    return tables, options


def compiled_equals_the_lesson(setup, num_merges):
    tables, options = setup
    alphabet = Alphabet()
    slow = face.learn_parity_merges(tables, alphabet, num_merges, backend="python", **options)
    fast = face.learn_parity_merges(tables, alphabet, num_merges, backend="fast", **options)
    assert fast == slow


@needs_c
@settings(max_examples=50)
@given(setup=setups(), num_merges=st.sampled_from([None, 1, 4, 12]))
def test_compiled_equals_the_lesson(setup, num_merges):
    compiled_equals_the_lesson(setup, num_merges)


@needs_c
@pytest.mark.slow
@settings(max_examples=3000)
@given(setup=setups(), num_merges=st.sampled_from([None, 1, 4, 12]))
def test_compiled_equals_the_lesson_thoroughly(setup, num_merges):
    compiled_equals_the_lesson(setup, num_merges)


def symbols(text_counts):
    return {tuple(p.encode()): c for p, c in text_counts.items()}


def test_the_worst_off_language_chooses_and_counts_are_global():
    en = symbols({"the": 10, "ab": 1})
    el = symbols({"ab": 3})
    dev = [symbols({"the": 1}), symbols({"abab": 1})]  # Greek's dev text: 4 tokens to 3
    merges = parity.learn_parity_merges([en, el], 2, 256, dev=dev)
    # Greek's best pair first (recorded with its global count 3 + 1), then Greek is at 2
    # tokens, English at 3: English's best pair.
    assert merges == [(97, 98, 4), (104, 101, 10)]
    plain = parity.learn_parity_merges([en, el], 2, 256, dev=dev, global_merges=2)
    assert plain == [(104, 101, 10), (116, 256, 10)]


def test_equal_languages_go_to_the_first_given():
    en, de = symbols({"ab": 2}), symbols({"cd": 2})
    assert parity.learn_parity_merges([en, de], 1, 256, dev=[en, de]) == [(97, 98, 2)]
    assert parity.learn_parity_merges([de, en], 1, 256, dev=[de, en]) == [(99, 100, 2)]


def test_target_ratios_weigh_who_is_behind():
    en, de = symbols({"ab": 2}), symbols({"cd": 2})
    # Both at 2 tokens of 2; a ratio of 2 asks German for twice the compression.
    assert parity.learn_parity_merges([en, de], 1, 256, target_ratios=[1, 2]) == [(99, 100, 2)]
    assert parity.learn_parity_merges([en, de], 1, 256, target_ratios=[2, 1]) == [(97, 98, 2)]


def test_the_window_passes_over_a_language_that_had_its_share():
    # English stays behind on dev text; a window of one merge with alpha 1 (2 languages: a
    # share of half a merge) passes over whoever was chosen last.
    en = symbols({"abcdefgh": 5})
    de = symbols({"xyzw": 5})
    dev = [symbols({"abcdefgh": 9}), symbols({"xyzw": 1})]
    base = parity.learn_parity_merges([en, de], 4, 256, dev=dev)
    window = parity.learn_parity_merges([en, de], 4, 256, dev=dev, variant="window", window_size=1, alpha=1)
    assert [m[0] for m in base] == [97, 99, 101, 103]  # English, English, ...
    assert [m[0] for m in window] == [97, 120, 99, 122]  # English, German, English, German


def test_a_language_without_frequent_pairs_steps_aside():
    en = symbols({"ab": 1})
    de = symbols({"cd": 3})
    dev = [symbols({"abab": 1}), symbols({"cd": 1})]
    assert parity.learn_parity_merges([en, de], None, 256, dev=dev, min_frequency=2) == [(99, 100, 3)]


@pytest.mark.parametrize("kwargs, message", [
    (dict(), "dev texts or target_ratios"),
    (dict(dev=[{}], target_ratios=[1, 1]), "dev texts or target_ratios"),
    (dict(dev=[{}]), "1 tables for 2"),
    (dict(target_ratios=[1, 0]), "positive"),
    (dict(target_ratios=[1, 1], variant="fair"), "parity_variant"),
    (dict(target_ratios=[1, 1], window_size=0), "window_size"),
    (dict(target_ratios=[1, 1], alpha=-1), "alpha"),
    (dict(target_ratios=[1, 1], global_merges=-1), "global_merges"),
])
def test_bad_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        parity.learn_parity_merges([{}, {}], 1, 256, **kwargs)


@needs_c
def test_the_compiled_trainer_frees_every_block():
    before = NATIVE.trainer.parity_live_blocks()
    tables = [PieceTable.from_dict({"aaab": 3, "ab": 2}), PieceTable.from_dict({"ba": 4})]
    face.learn_parity_merges(tables, Alphabet(), None, dev=tables, variant="window", backend="fast")
    bad = PieceTable(b"a\xff", array("q", [0, 2]), array("q", [1]))  # not UTF-8
    with pytest.raises(ValueError, match="UTF-8"):
        face.learn_parity_merges([tables[0], bad], Alphabet(), 1, dev=tables, backend="fast")
    assert NATIVE.trainer.parity_live_blocks() == before


# -- through train(): a dict corpus with objective="parity" --------------------------------

import functionalbpe as fb  # noqa: E402
from functionalbpe.errors import FunctionalBPEError  # noqa: E402

from ..conftest import read_corpus  # noqa: E402

CORPUS = {
    "en": ["The cat sat on the mat. The dog sat on the log."] * 6,
    "el": ["Η γάτα κάθισε στο χαλί."] * 2,
    "ru": ["Кошка сидела на коврике."] * 3,
}
DEV = {"en": ["The cat sat."], "el": ["Η γάτα κάθισε."], "ru": ["Кошка сидела."]}


@pytest.mark.parametrize("options", [
    dict(dev=DEV),
    dict(dev=DEV, parity_variant="window", window_size=4, alpha=1),
    dict(dev=DEV, global_merges=10),
    dict(target_ratios={"en": 1, "el": 1.2, "ru": 1}),
    dict(dev=DEV, weights={"en": 1, "el": 3, "ru": 2}),
])
@pytest.mark.parametrize("scheme", ["plain", "functional", "markers"])
def test_train_with_parity_same_on_both_backends(options, scheme):
    kw = dict(vocab_size=600, scheme=scheme, progress=False, objective="parity", **options)
    slow = fb.train(CORPUS, backend="python", **kw)
    if NATIVE.trainer is not None:
        assert fb.train(CORPUS, backend="fast", **kw) == slow
    assert slow.training["objective"] == "parity"
    for lang, text in DEV.items():
        assert slow.decode(slow.encode(text[0])) == text[0]


def test_parity_helps_the_language_behind():
    kw = dict(vocab_size=300, pattern="gpt2", progress=False)
    plain = fb.train(CORPUS, **kw)
    fair = fb.train(CORPUS, objective="parity", dev=DEV, **kw)
    cost = lambda tok: [len(tok.encode(DEV[lang][0])) for lang in DEV]  # noqa: E731
    assert max(cost(fair)) < max(cost(plain))


@pytest.mark.parametrize("kwargs, message", [
    (dict(objective="fair"), "objective"),
    (dict(objective="parity"), "dev=.*--dev NAME=PATH.*neither was given"),
    (dict(objective="parity", dev=DEV, target_ratios={"en": 1, "el": 1, "ru": 1}), "not both"),
    (dict(objective="parity", dev={"en": ["x"]}), "languages of the corpus"),
    (dict(objective="parity", dev=DEV, parity_variant="sliding"), "parity_variant"),
    (dict(dev=DEV), "objective='parity'"),
])
def test_bad_parity_options(kwargs, message):
    with pytest.raises(FunctionalBPEError, match=message):
        fb.train(CORPUS, vocab_size=300, progress=False, **kwargs)
    with pytest.raises(FunctionalBPEError):
        fb.train(["a plain corpus"], vocab_size=300, progress=False, objective="parity", dev=DEV)


@needs_c
@pytest.mark.slow
def test_compiled_equals_the_lesson_on_real_text(corpora):
    langs = ["en", "el", "ru", "de"]
    corpus = {lang: read_corpus(corpora / "nl" / f"{lang}.txt", 3000) for lang in langs}
    lines = {lang: (corpora / "parallel" / f"udhr_{lang}.txt").read_text(encoding="utf-8").splitlines()[:20]
             for lang in langs}
    for options in (dict(dev=lines), dict(dev=lines, parity_variant="window", window_size=10),
                    dict(target_ratios={lang: 1 for lang in langs}, global_merges=20)):
        kw = dict(vocab_size=256 + 120, progress=False, objective="parity", **options)
        assert fb.train(corpus, backend="fast", **kw) == fb.train(corpus, backend="python", **kw)


@needs_c
def test_a_huge_window_costs_no_memory_up_front():
    tables = [PieceTable.from_dict({"aaab": 3, "ab": 2}), PieceTable.from_dict({"ba": 4})]
    options = dict(dev=tables, variant="window", window_size=2**31 - 1, alpha=1)
    slow = face.learn_parity_merges(tables, Alphabet(), None, backend="python", **options)
    assert face.learn_parity_merges(tables, Alphabet(), None, backend="fast", **options) == slow
