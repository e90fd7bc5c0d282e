"""The Scheme contract (schemes/base.py; docs/design.md, "Adding a scheme"), checked the same
way for every scheme: split is the forms of the raw pieces, the transform of a count is the
count of the split, decode undoes encode, and what a scheme declares of the compiled core
(its scanner) gives exactly what its Python hooks give."""
from __future__ import annotations

import os
import unicodedata
from collections import Counter
from itertools import chain

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functionalbpe as fb
from functionalbpe.core._native import NATIVE
from functionalbpe.schemes.base import Compiled, Scheme
from functionalbpe.schemes.registry import SCHEMES, make_scheme, resolve
from functionalbpe.text.counting import count_table

from ..helpers import tricky_text

SCHEME_OPTIONS = {
    "plain gpt4": ("plain", dict()),
    "plain o200k": ("plain", dict(pattern="o200k")),
    "plain custom": ("plain", dict(pattern=r"\w+|\s+|[^\w\s]+")),
    "functional": ("functional", dict()),
    "functional gpt4, runs joined": ("functional", dict(pattern="gpt4")),
    "functional NFKC, operators kept": ("functional", dict(normalize="NFKC", split_operators=False)),
    "markers [w]": ("markers", dict()),
    "markers [w,p,d,↑]": ("markers", dict(punct=True, digits=True, case=True)),
}
SCHEME_IDS = list(SCHEME_OPTIONS)
documents = st.lists(tricky_text, max_size=5)
fewer = settings(max_examples=max(10, settings.default.max_examples // 3))


def build(key: str) -> Scheme:
    name, options = SCHEME_OPTIONS[key]
    return make_scheme(name, **options)


@pytest.mark.parametrize("key", SCHEME_IDS)
@fewer
@given(text=tricky_text)
def test_split_is_the_forms_of_the_raw_pieces_and_decodes_back(key, text):
    scheme = build(key)
    raw = scheme.raw_pieces(text)
    pieces = scheme.split(text)
    assert pieces == list(chain.from_iterable(map(scheme.piece_forms, raw)))
    # the function for one call, on a scheme whose cache of forms is still empty
    assert pieces == list(chain.from_iterable(map(build(key).piece_forms_for_call(), raw)))
    assert all(pieces) and scheme.encode(text) == "".join(pieces)
    assert scheme.prepare(text) == (unicodedata.normalize(scheme.normalize, text) if scheme.normalize else text)
    assert scheme.decode(scheme.encode(text)) == scheme.prepare(text)
    assert scheme.decodable_prefix(scheme.encode(text)) <= len(scheme.encode(text))
    if scheme.compiled().identity:
        assert raw == pieces


@pytest.mark.parametrize("key", SCHEME_IDS)
@fewer
@given(docs=documents)
def test_the_transform_of_the_count_is_the_count_of_the_split(key, docs):
    scheme = build(key)
    expected: Counter = Counter()
    raw: Counter = Counter()
    for doc in docs:
        clean = doc.encode("utf-8", "replace").decode("utf-8")  # counting reads a lone surrogate as U+FFFD
        raw.update(scheme.raw_pieces(clean))
        expected.update(scheme.split(clean))
    table = count_table(docs, scheme, threads=2)
    assert list(table.items()) == list(raw.items())  # in order of first occurrence
    assert list(scheme.transform(table).items()) == list(expected.items())


@pytest.mark.parametrize("key", SCHEME_IDS)
@fewer
@given(docs=documents)
def test_a_declared_scanner_counts_what_raw_pieces_count(key, docs):
    scheme = build(key)
    if NATIVE.scanner_for(scheme.compiled().scanner) is None:
        pytest.skip("no compiled scanner declared, or none built")
    compiled = count_table(docs, scheme)
    os.environ["FUNCTIONALBPE_PUREPYTHON"] = "1"
    try:
        assert count_table(docs, scheme) == compiled
    finally:
        del os.environ["FUNCTIONALBPE_PUREPYTHON"]


@pytest.mark.parametrize("key", SCHEME_IDS)
def test_each_scheme_is_rebuilt_from_its_name_and_options(key):
    scheme = build(key)
    again = make_scheme(scheme.name, scheme.pattern, **scheme.options())
    assert type(again) is type(scheme) and again.options() == scheme.options()
    assert again.pattern == scheme.pattern and again.pattern_name == scheme.pattern_name
    assert resolve(scheme) is scheme and SCHEMES[scheme.name] is type(scheme)
    assert isinstance(scheme.compiled(), Compiled)


def test_every_public_scheme_is_a_scheme():
    assert issubclass(fb.Functionalizer, fb.Scheme) and issubclass(fb.BoundaryMarkers, fb.Scheme)
    with pytest.raises(TypeError):
        fb.Scheme()  # abstract: the meaning must be given

    class Incomplete(fb.Scheme):
        name = "incomplete"

        def options(self):
            return {}

    with pytest.raises(TypeError, match="raw_pieces"):
        Incomplete()
