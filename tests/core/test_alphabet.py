import itertools

import pytest

from functionalbpe.core.alphabet import (
    BOUNDARY,
    ENDS_WITH_BOUNDARY,
    OPERATOR,
    POLICY_CODES,
    SHIFT,
    SHIFT_MERGES,
    STARTS_WITH_BOUNDARY,
    TEXT,
    Alphabet,
    Atom,
    can_merge,
    merged_flags,
    num_merges_for,
)
from functionalbpe.errors import FunctionalBPEError, VocabSizeError

B = BOUNDARY | STARTS_WITH_BOUNDARY | ENDS_WITH_BOUNDARY

# training.md's table, row by row: (operator+operator, operator+text, boundary+text, shift+any)
TABLE = {
    "atomic": (False, False, True, False),
    "prefix": (True, False, True, False),
    "free": (True, True, True, False),
}


@pytest.mark.parametrize("policy", sorted(TABLE))
def test_policy_table_of_the_spec(policy):
    code = POLICY_CODES[policy]
    op_op, op_text, boundary_text, shift_any = TABLE[policy]
    assert can_merge(code, OPERATOR, OPERATOR) is op_op
    assert can_merge(code, OPERATOR, TEXT) is op_text
    assert can_merge(code, TEXT, OPERATOR) is op_text
    assert can_merge(code, B, TEXT) is boundary_text
    assert can_merge(code, TEXT, B) is boundary_text
    for other in (TEXT, OPERATOR, B, SHIFT):
        assert can_merge(code, SHIFT, other) is shift_any
        assert can_merge(code, other, SHIFT) is shift_any


@pytest.mark.parametrize("policy", sorted(TABLE))
def test_shift_codes_that_merge_merge_as_text(policy):
    # The boundary-marker paper's rule: a shift code merges with what follows it (↑¦the¦);
    # only touching markers stay apart.
    code, shift = POLICY_CODES[policy], SHIFT | SHIFT_MERGES
    for other in (TEXT, B, shift):
        assert can_merge(code, shift, other) and can_merge(code, other, shift)
    assert can_merge(code, shift, OPERATOR) is can_merge(code, TEXT, OPERATOR)
    up = merged_flags(shift, B)  # ↑¦
    assert up & SHIFT_MERGES and up & ENDS_WITH_BOUNDARY and not up & STARTS_WITH_BOUNDARY
    word = merged_flags(merged_flags(up, TEXT), B)  # ↑¦the¦
    assert can_merge(code, up, merged_flags(TEXT, B))
    assert not can_merge(code, word, merged_flags(B, TEXT))  # touching markers, as ever


@pytest.mark.parametrize("policy", sorted(TABLE))
def test_touching_boundaries_never_merge(policy):
    code = POLICY_CODES[policy]
    word = merged_flags(merged_flags(B, TEXT), B)  # ¦the¦
    assert word & STARTS_WITH_BOUNDARY and word & ENDS_WITH_BOUNDARY
    assert not can_merge(code, word, word)
    assert not can_merge(code, B, B)
    left_open = merged_flags(B, TEXT)  # ¦the
    assert can_merge(code, left_open, B)  # ¦the + ¦ closes the word
    assert not can_merge(code, B, left_open)  # ¦ + ¦the: touching markers


def test_merged_flags_takes_kinds_of_parts_and_outer_boundaries():
    assert merged_flags(TEXT, TEXT) == TEXT
    assert merged_flags(OPERATOR, OPERATOR) == OPERATOR
    f = merged_flags(TEXT, B)
    assert f == TEXT | BOUNDARY | ENDS_WITH_BOUNDARY
    assert merged_flags(B, f) & STARTS_WITH_BOUNDARY


def test_merge_rule_is_associative_on_kinds():
    flags = [TEXT, OPERATOR, B, SHIFT, TEXT | BOUNDARY | ENDS_WITH_BOUNDARY]
    for a, b, c in itertools.product(flags, repeat=3):
        assert merged_flags(merged_flags(a, b), c) == merged_flags(a, merged_flags(b, c))


def test_symbols_keep_atoms_whole():
    atoms = [Atom("\ue000", "ARG 0", OPERATOR, "0"), Atom("\ue100", "CAP", OPERATOR, "C")]
    a = Alphabet(atoms)
    assert a.symbols("\ue100\ue000hé") == (257, 256, 104, 195, 169)
    assert a.symbols("\ue001") == tuple("\ue001".encode())  # not an atom of this alphabet
    assert Alphabet().symbols("\ue100") == tuple("\ue100".encode())  # plain: all text


def test_id_layout_and_bytes():
    atoms = [Atom("\ue300", "BOUNDARY", BOUNDARY, "¦")]
    a = Alphabet(atoms, merges=[(256, 97), (257, 256)], specials=["<s>"])
    assert (a.first_atom, a.first_merge, a.first_special, a.vocab_size) == (256, 257, 259, 260)
    assert a.token_bytes(258) == "\ue300a\ue300".encode()
    assert a.special_ids() == {"<s>": 259}
    assert a.all_flags()[258] == TEXT | B


def test_merges_must_refer_to_earlier_ids():
    with pytest.raises(FunctionalBPEError, match="does not exist"):
        Alphabet(merges=[(97, 256)])


def test_vocab_size_below_fixed_ids_is_refused():
    assert num_merges_for(300, 0, 1) == 43
    assert num_merges_for(None, 5, 0) is None
    with pytest.raises(VocabSizeError, match="at least 259"):
        num_merges_for(258, 2, 1)


# -- the merge table checked in C (csrc/lib/train/merge_table.c) against the Python loop ---------

from hypothesis import given, settings, strategies as st  # noqa: E402

from functionalbpe.core._native import NATIVE  # noqa: E402
from functionalbpe.core.limits import MAX_TOTAL_TOKEN_BYTES, check_merges  # noqa: E402


@st.composite
def merge_tables_maybe_broken(draw):
    """Tables that mostly keep the rules: ids made before use or just after, pairs that
    repeat, chains that double a token past the length limit, special tokens near the total."""
    first = 256 + draw(st.integers(0, 3))
    merges = []
    for k in range(draw(st.integers(0, 40))):
        made = first + k
        if draw(st.integers(0, 5)) == 0:  # double the last token
            last = made - 1
            merges.append((last, last))
        else:
            merges.append((draw(st.integers(0, made + 1)), draw(st.integers(0, made))))
    specials = draw(st.sampled_from([0, 10, MAX_TOTAL_TOKEN_BYTES - 300, MAX_TOTAL_TOKEN_BYTES]))
    return merges, first, specials


@pytest.mark.skipif(NATIVE.trainer is None, reason="the compiled trainer is not built")
@settings(max_examples=300, deadline=None)
@given(merge_tables_maybe_broken())
def test_the_compiled_merge_check_agrees_with_the_loop(table):
    merges, first, specials = table
    try:
        check_merges(tuple(merges), first, specials)  # a tuple: the Python loop
        kept = True
    except FunctionalBPEError:
        kept = False
    assert NATIVE.trainer.merge_table_keeps_the_rules(merges, first, specials) == kept
