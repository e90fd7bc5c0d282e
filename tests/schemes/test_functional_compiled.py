"""The compiled description of pieces (csrc/_functional.pyx) against Functionalizer.describe.

The compiled describer handles most pieces in C and leaves the others to the reference
(``Functionalizer.describe``). Wherever it answers, its answer must be the reference's, and
counting through it must equal describing every distinct piece with the reference.
"""
from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

import functionalbpe as fb
from functionalbpe.core._native import NATIVE
from functionalbpe.core.piecetable import PieceTable
from functionalbpe.training import count_pieces
from functionalbpe.schemes.functional import ATOMS, Functionalizer, block_plans

from ..conftest import read_corpus
from ..helpers import stdlib_text
from .test_functional import OPTIONS, PATTERN_NAMES, texts
from .test_functional_training import MIXED

compiled = pytest.mark.skipif(
    NATIVE.describer is None, reason="the extension is not built here (or FUNCTIONALBPE_PUREPYTHON=1)"
)


def described(f: Functionalizer, raw) -> dict:
    """The oracle: every distinct piece described by the reference, in order, its count
    given to each form (so the forms are in order of first occurrence)."""
    out: Counter = Counter()
    for piece, count in raw.items():
        for form in f.describe(piece):
            out[form] += count
    return dict(out)


def same(a: dict, b: dict) -> bool:
    """Equal, and in the same order."""
    return list(a.items()) == list(b.items())


def compare_pieces(f: Functionalizer, pieces) -> int:
    """Assert the compiled description is the reference's wherever it gives one; return how
    many pieces it described itself."""
    d = f._describer()
    handled = 0
    for piece in pieces:
        got = d.describe(piece)
        if got is not None:
            assert got == f.describe(piece), (piece, f.options())
            handled += 1
    return handled


def compare_counts(f: Functionalizer, raw) -> None:
    """Both compiled ways of counting (a dict, a flat table) against the oracle."""
    expected = described(f, raw)
    assert same(f._describer().describe_dict(dict(raw), f.describe), expected)
    assert same(f.transform(PieceTable.from_dict(dict(raw))).to_dict(), expected)


# Pieces the compiled describer must describe itself (not leave to Python), with the
# paper's worked examples first.
IN_C = [
    "Hello", "Héllo", "######", "    ", "abcabcabc", "ABCABCABC", "ÉCOLE", "İstanbul", "ǘ",
    "Ǘ", "Ⓐ", "ℂ", "ϒ", "\U00010400x", "#" * 600, "ab" * 300, "a" * 255 + "B", "x" * 256 + "Y",
    "É" * 300, "aaaBBBccc", "1000", "\n\n\n", "Ёлка", "ΣΟΦΙΑ", "\ud800Abc", "ÀÀÀÀb",
    # runs of 255 and more: chunks of 255, and a remainder of 1 or 2 that stays literal
    "#" * 255, "#" * 256, "#" * 257, "#" * 512, "ab" * 257, "abc" * 511, "q" + "Z" * 257 + "q",
]
# Pieces it may leave (or describe): the hard cases of the spec.
HARD = [
    "Abcabcabc", "ẞ", "ǅ", "ß", "SS", "u\u0308\u0301", "e\u0301", "E\u0301\u0301\u0301",
    "\ue000", "\ue100\ue000", "a\uefffA", "\uf000B", "\U000f0000", "x" * 1000, "Ab" * 200,
    "ṨṨṨ", "ǰ", "ŉ", "Σς", "", "a",
]


@compiled
@pytest.mark.parametrize("options", OPTIONS)
def test_hard_pieces_equal_the_reference(options):
    f = Functionalizer(**options)
    pieces = [p for p in IN_C + HARD if p]
    compare_pieces(f, pieces)
    compare_counts(f, Counter(pieces * 2 + IN_C[:5]))


@compiled
def test_the_common_cases_are_described_in_c():
    f = Functionalizer()
    assert compare_pieces(f, IN_C) == len(IN_C)
    d = f._describer()
    assert d.describe("Hello") == ("\ue100\ue000", "hello")
    assert d.describe("######") == ("\ue200\ue000\ue006", "#")
    assert d.describe("abcabcabc") == ("\ue201\ue000\ue003\ue003", "abc")
    # LITERAL is the reference's alone
    assert d.describe("a\ue123") is None and d.describe("\uefff") is None


@compiled
@given(texts, st.sampled_from(OPTIONS), st.sampled_from(PATTERN_NAMES[:2]))
def test_equals_the_reference_on_any_text(text, options, pattern):
    f = Functionalizer(pattern=pattern, **options)
    raw = Counter(f.raw_pieces(text))  # with gpt4: runs of identical pieces joined
    compare_pieces(f, raw)
    compare_counts(f, raw)


@compiled
def test_every_planned_character_equals_the_reference():
    for case, diacritics in ((True, True), (True, False), (False, True)):
        f = Functionalizer(case=case, diacritics=diacritics)
        plans = [p for block in range(0x1100) for p in block_plans(block, case, diacritics)]
        assert plans and all(p[4] is not None for p in plans)  # every plan is a substitution
        pieces = [w for p in plans for c in [chr(p[0])] for w in (c, "x" + c, c * 3, c + "bc" * 3)]
        assert compare_pieces(f, pieces) == len(pieces)


@compiled
def test_the_check_refuses_a_plan_that_does_not_decode_back():
    module = NATIVE.describer
    # "A" planned as "a" + CAPITALIZE, but said to decode to "B": the check must refuse it.
    wrong = module.Describer(True, True, lambda block: ((65, 97, 66, True, ()),) if block == 0 else ())
    right = module.Describer(True, True, lambda block: ((65, 97, 65, True, ()),) if block == 0 else ())
    # A plan that is no one-character substitution is left to the reference.
    apart = module.Describer(True, True, lambda block: ((65, 97, 65, True, None),) if block == 0 else ())
    f = Functionalizer()
    assert right.describe("Abc") == f.describe("Abc")
    assert wrong.describe("Abc") is None and apart.describe("Abc") is None
    assert wrong.describe("abc") == ("abc",)
    before = wrong.left
    assert same(wrong.describe_dict({"Abc": 2, "abc": 1}, f.describe), described(f, {"Abc": 2, "abc": 1}))
    assert wrong.left == before + 1


@compiled
def test_bad_tables_are_refused():
    d = Functionalizer()._describer()
    with pytest.raises(ValueError):
        d.describe_flat(b"ab", PieceTable.from_dict({"ab": 1}).offsets, PieceTable.from_dict({"ab": 1, "c": 2}).counts, None)
    with pytest.raises(ValueError):
        d.describe_flat(b"a", PieceTable.from_dict({"ab": 1}).offsets, PieceTable.from_dict({"ab": 1}).counts, None)
    empty = PieceTable.from_dict({})
    assert PieceTable(*d.describe_flat(empty.data, empty.offsets, empty.counts, None)).to_dict() == {}


def test_transform_is_the_same_without_the_extension(monkeypatch):
    raw = Counter()
    for text in MIXED + stdlib_text(20_000):
        raw.update(Functionalizer().raw_pieces(text))
    table = PieceTable.from_dict(dict(raw))
    for options in OPTIONS[::5]:
        f = Functionalizer(**options)
        expected = described(f, raw)
        assert same(f.transform(table).to_dict(), expected)
        monkeypatch.setenv("FUNCTIONALBPE_PUREPYTHON", "1")
        assert f._describer() is None
        assert same(f.transform(table).to_dict(), expected)
        monkeypatch.delenv("FUNCTIONALBPE_PUREPYTHON")


@compiled
@pytest.mark.parametrize("policy", ("atomic", "prefix", "free"))
@pytest.mark.parametrize("split", (True, False))
def test_training_gives_the_merges_of_the_pure_python_path(monkeypatch, policy, split):
    docs = stdlib_text(60_000) + MIXED
    options = dict(vocab_size=256 + len(ATOMS) + 300, scheme="functional", merge_policy=policy,
                   split_operators=split, progress=False)
    tables, described = [], []
    transform, describe = Functionalizer.transform, Functionalizer.describe

    def recording(self, table):
        tables.append(table)
        return transform(self, table)

    def describing(self, piece):
        described.append(piece)
        return describe(self, piece)

    monkeypatch.setattr(Functionalizer, "transform", recording)
    monkeypatch.setattr(Functionalizer, "describe", describing)
    fast = fb.train(docs, **options)
    # One table, counted flat and described in C: Python describes what C leaves, a few.
    assert len(tables) == 1 and len(described) < len(tables[0]) / 10
    monkeypatch.setenv("FUNCTIONALBPE_PUREPYTHON", "1")
    slow = fb.train(docs, **options)
    assert len(tables) == 2 and tables[1] == tables[0]  # the same count, in the same order
    assert fast.merges == slow.merges and fast.to_payload() == slow.to_payload()


# --- the distinct pieces of every corpus --------------------------------------------------


def _corpus_pieces(corpora, limit, pattern="functionalizer"):
    files = sorted(corpora.glob("*/*.txt"))
    if not files:
        pytest.skip("no corpus files")
    for path in files:
        yield path.name, count_pieces(read_corpus(path, limit), pattern)


@compiled
def test_equals_the_reference_on_every_corpus(corpora):
    f = Functionalizer()
    for name, raw in _corpus_pieces(corpora, 100_000):
        assert compare_pieces(f, raw) >= len(raw) - 10, name
        compare_counts(f, raw)


@compiled
@pytest.mark.slow
def test_equals_the_reference_on_every_whole_corpus(corpora):
    for pattern, options in (("functionalizer", OPTIONS), ("gpt4", OPTIONS[:1])):
        for name, raw in _corpus_pieces(corpora, None, pattern):
            for option in options[::3]:
                f = Functionalizer(pattern=pattern, **option)
                compare_pieces(f, raw)
                compare_counts(f, raw)
