"""Patterns are data: each record of patterns.RECORDS is the one place its pattern is written;
the tables, the explorer's JavaScript form and the choice of scanner are derived from it."""
from __future__ import annotations

import re

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from functionalbpe.core._native import NATIVE
from functionalbpe.teach import js_patterns as J
from functionalbpe.text import patterns as P
from functionalbpe.unicode.regex_program import same_behaviour

from ..conftest import corpora_path, read_corpus

needs_scanner = pytest.mark.skipif(NATIVE.scanner is None, reason="compiled scanner not built")

# Corners of the records: contractions in any case, digits, spaces before a final newline,
# letters that two of o200k's classes share (Lo, Lm: the compiled engine's taken-on-trust
# runs must give back there), titlecase.
TRICKY = "aA'sStTlLdD ſ\n\r\t\u00a0\u3000 12345.,!?中文ʰǅΣσ"
TEXTS = st.text(alphabet=st.sampled_from(TRICKY), max_size=40) | st.text(max_size=30)


def test_the_tables_are_derived_from_the_records():
    assert P.PATTERNS == {r.name: r.regex for r in P.RECORDS if r.builtin}
    for record in P.RECORDS:
        for alias in record.aliases:
            assert P.as_pattern(alias).regex == record.regex
        assert P.as_pattern(record.name).regex == record.regex


@pytest.mark.parametrize("record", P.RECORDS, ids=lambda r: r.name)
@given(text=TEXTS)
def test_each_record_cuts_as_regex_findall(record, text):
    assert P.pretokenize(text, record.name) == regex.findall(record.regex, text)


@pytest.mark.parametrize("record", P.RECORDS, ids=lambda r: r.name)
def test_each_record_cuts_a_corpus_as_regex_findall(record):
    path = corpora_path() / "nl" / "de.txt"
    if not path.exists():
        pytest.skip("no shared corpora")
    text = read_corpus(path, 60_000)
    assert P.pretokenize(text, record.name) == regex.findall(record.regex, text)


@pytest.mark.parametrize("name", sorted(J.TEMPLATES))
@given(text=TEXTS)
def test_each_js_form_cuts_as_its_record(name, text):
    text = text.encode("utf-8", "replace").decode("utf-8")
    assert [m.group() for m in re.finditer(J.python_regex(name), text)] == P.pretokenize(text, name)


def test_every_record_has_a_js_form():
    assert set(J.TEMPLATES) == {r.name for r in P.RECORDS}
    assert J.TEMPLATES["gpt4"] == J.template(P.RECORD["gpt4"].regex)


# ---- the translation rules ------------------------------------------------------------------

def test_classes_are_named():
    assert J.template(r"\p{L}+|\s|\S") == "[{L}]+|[{S}]|[^{S}]"
    assert J.template(r"[^\r\n\p{L}\p{N}]") == r"[^\r\n{L}{N}]"
    assert J.template(r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]|[^\S\n\t ]") == "[{UP}]|[{SX}]"


def test_case_insensitive_groups_are_spelt_out():
    assert J.template(r"'(?i:[sd]|ll)") == "'(?:{i:s}|{i:d}|{i:l}{i:l})"
    assert J.template(r"(?i:'s|'ve)") == "(?:'{i:s}|'{i:v}{i:e})"


def test_possessive_marks_are_dropped_only_where_they_change_nothing():
    # Giving back a space cannot help a letter run; a tail that matches nothing cannot fail.
    assert J.template(r" ?+\p{L}++|\p{N}{1,3}+|[^\s]++[\r\n]*+|\s") == r" ?[{L}]+|[{N}]{1,3}|[^{S}]+[\r\n]*|[{S}]"
    # Here the possessive run would refuse "aa" what the greedy one matches.
    assert not same_behaviour(r"a*+a|\s", r"a*a|\s")
    with pytest.raises(J.NoJsForm):
        J.template(r"a*+a|\s")
    with pytest.raises(J.NoJsForm):
        J.template(r"(?>a|ab)c|\s")


@given(text=st.text(alphabet=st.sampled_from(" \n\ta"), max_size=12))
def test_dollar_means_what_it_means_to_regex(text):
    # $: the end, or before a final newline (JavaScript's $ is the end only).
    rendered = J.template(r"\s+$|\s|a")
    assert [m.group() for m in re.finditer(rendered.replace("{S}", r"\s"), text)] == regex.findall(r"\s+$|\s|a", text)


# ---- behaviour, not strings -------------------------------------------------------------------

# tiktoken's cl100k string without its possessive marks: the same behaviour.
CL100K_GREEDY = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s"""


def test_equivalent_spellings_are_recognised_by_behaviour():
    assert same_behaviour(P.CL100K_TIKTOKEN, CL100K_GREEDY)
    # gpt4 differs from tiktoken's string in one corner (\s++$): kept apart.
    assert not same_behaviour(P.CL100K_TIKTOKEN, P.GPT4)
    pattern = P.as_pattern(CL100K_GREEDY)
    assert pattern.name == "custom" and pattern.same_as == "cl100k" and pattern.cuts_safely
    if NATIVE.scanner is not None:
        assert pattern.scanner == P.as_pattern("cl100k").scanner


@given(text=TEXTS)
def test_a_recognised_spelling_cuts_as_regex_findall(text):
    assert P.pretokenize(text, CL100K_GREEDY) == regex.findall(CL100K_GREEDY, text)


@needs_scanner
@pytest.mark.parametrize("name", ["o200k", "gpt4", "llama3"])
@pytest.mark.parametrize("text", ["中文", "ʰaʰ", "Aʰb's", "ABC", "ǅx", "中a文B", "  \n x", "\n\n"])
def test_runs_taken_on_trust_give_back_as_regex(name, text):
    # The compiled engine takes a greedy run whole where what follows shares no ASCII
    # character with it, and re-runs the alternative where that fails (regex_vm.h).
    program = NATIVE.scanner.PROGRAM + P.PATTERNS[name]
    assert NATIVE.scanner.scan(text, program) == regex.findall(P.PATTERNS[name], text)
