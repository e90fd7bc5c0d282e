"""SuperBPE's stage-two token rules (core/wordrules.py): at most four words, no ``": "``.

The lesson checks a token's bytes; the heap trainer and the C loop keep shapes. The three
give the same merges, and the rules hold on text made to break them.
"""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

import functionalbpe as fb
from functionalbpe.errors import SmallerVocabularyWarning
from functionalbpe.core import reference, trainer
from functionalbpe.core._native import NATIVE
from functionalbpe.core.alphabet import Alphabet
from functionalbpe.core.piecetable import PieceTable
from functionalbpe.core.wordrules import (NO_RULES, SUPERWORD_RULES, TokenRules, count_words, joined_shape,
                                          shape_of)

tokens = st.binary(min_size=1, max_size=8).map(lambda b: bytes(b" :a\n"[x % 4] for x in b))
rules = st.builds(TokenRules, st.one_of(st.none(), st.integers(1, 4)), st.booleans())


@settings(max_examples=300, deadline=None)
@given(tokens, tokens, rules)
def test_shapes_join_as_the_bytes_do(left, right, rule):
    assert joined_shape(shape_of(left), shape_of(right)) == shape_of(left + right)
    assert rule.allow_shapes(shape_of(left), shape_of(right)) == rule.allows(left + right)


def test_words_are_runs_between_spaces_as_the_fork_splits_them():
    assert [count_words(t) for t in (b" ", b"a", b" by the  way", b"one\n\ntwo", b"a: b")] == [0, 1, 3, 1, 2]
    assert not SUPERWORD_RULES.allows(b" a b c d e") and SUPERWORD_RULES.allows(b" a b c d ")
    assert not SUPERWORD_RULES.allows(b"x: ") and SUPERWORD_RULES.allows(b"12:30 ")
    assert NO_RULES.allows(b": a b c d e f") and not NO_RULES.refuses_any


pieces = st.dictionaries(st.text(alphabet="ab :\n", min_size=1, max_size=14), st.integers(1, 40),
                         min_size=1, max_size=12)


@settings(max_examples=80, deadline=None)
@given(pieces, pieces, st.integers(0, 5), st.one_of(st.none(), st.integers(0, 25)), rules)
def test_every_trainer_keeps_the_rules_as_the_lesson_does(first, second, base_merges, num_merges, rule):
    base = [(a, b) for a, b, _ in reference.train({tuple(k.encode()): v for k, v in first.items()}, base_merges, 256)]
    expected = reference.resume({tuple(k.encode()): v for k, v in second.items()}, base, num_merges, 256, rules=rule)
    table = PieceTable.from_dict(second)
    assert trainer.resume(table, Alphabet(), base, num_merges, backend="python", rules=rule) == expected
    if NATIVE.trainer is not None:
        assert trainer.resume(table, Alphabet(), base, num_merges, backend="fast", rules=rule) == expected


# Text that breaks both rules at once if nothing stops it: a six-word phrase repeated, and
# "Note: " before every line.
TRIGGERS = ["Note: the cat sat on the mat today.\nNote: the dog sat on the log today.\n"] * 40


@pytest.mark.parametrize("backend", ["python", "fast"])
def test_the_stage_two_rules_hold_on_text_that_breaks_them(backend):
    if backend == "fast" and NATIVE.trainer is None:
        pytest.skip("the compiled trainer is not built (or FUNCTIONALBPE_PUREPYTHON=1)")
    with pytest.warns(SmallerVocabularyWarning):  # the text runs out of pairs
        free = fb.train(TRIGGERS, vocab_size=420, superwords=270, backend=backend, progress=False,
                        token_rules={"max_words": None, "colon_space": True})
    free_new = [free.token_bytes(i) for i in range(270, free.vocab_size)]
    assert max(map(count_words, free_new)) > 4 and any(b": " in t for t in free_new)  # the text does trigger them
    with pytest.warns(SmallerVocabularyWarning):
        sw = fb.train(TRIGGERS, vocab_size=420, superwords=270, backend=backend, progress=False)
    new = [sw.token_bytes(i) for i in range(270, sw.vocab_size)]
    assert new and all(SUPERWORD_RULES.allows(t) for t in new)
    assert sw.training["token_rules"] == {"max_words": 4, "colon_space": False}
    assert "token_rules" not in free.training
    text = TRIGGERS[0] * 3
    assert sw.decode(sw.encode(text)) == text


def test_the_rules_are_recorded_in_the_file(tmp_path):
    sw = fb.train(TRIGGERS, vocab_size=275, superwords=270, token_rules=TokenRules(max_words=2), progress=False)
    assert all(count_words(sw.token_bytes(i)) <= 2 for i in range(270, sw.vocab_size))
    sw.save(tmp_path / "sw.json")
    assert fb.Tokenizer.load(tmp_path / "sw.json").training["token_rules"] == {"max_words": 2, "colon_space": True}


def test_bad_rules_are_refused():
    with pytest.raises(fb.FunctionalBPEError, match="max_words"):
        fb.train(TRIGGERS, vocab_size=340, superwords=300, token_rules={"max_words": 0}, progress=False)
    with pytest.raises(fb.FunctionalBPEError, match="unknown field 'words'"):
        fb.train(TRIGGERS, vocab_size=340, superwords=300, token_rules={"words": 3}, progress=False)
    with pytest.raises(fb.FunctionalBPEError, match="give base= or superwords="):
        fb.train(TRIGGERS, vocab_size=340, token_rules=SUPERWORD_RULES, progress=False)
