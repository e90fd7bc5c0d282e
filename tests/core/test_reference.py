"""The lesson (core/reference.py) and the Python backend of the trainer (the incremental
heap trainer of core/trainer.py): every rule on both, and the heap trainer equal to the
lesson on hypothesis corpora, under every policy, frequency and token-length limit."""
import os
import random
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given, strategies as st

from functionalbpe.core.alphabet import BOUNDARY, OPERATOR, SHIFT, STARTS_WITH_BOUNDARY, ENDS_WITH_BOUNDARY, TEXT
from functionalbpe.core import reference
from functionalbpe.core.reference import encode_piece, get_stats, merge, ranks_from_merges
from functionalbpe.core.trainer import heap_train
from functionalbpe.training import count_pieces

from ..helpers import stdlib_text, tiny_corpus

# Both Python trainers: every rule below holds for the lesson and for the heap trainer.
BOTH = pytest.mark.parametrize("train_merges", [reference.train, heap_train], ids=["lesson", "heap"])

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def byte_pieces(texts, pattern="gpt4"):
    return {tuple(p.encode()): c for p, c in count_pieces(texts, pattern).items()}


@BOTH
def test_known_answer_minbpe(train_merges):
    merges = train_merges({tuple(b"aaabdaaabac"): 1}, 3, 256)
    ranks = ranks_from_merges(merges, 256)
    assert encode_piece(list(b"aaabdaaabac"), ranks) == [258, 100, 258, 97, 99]


@BOTH
def test_overlaps_count_every_window_but_merge_without_overlap(train_merges):
    assert get_stats([97, 97, 97]) == {(97, 97): 2}
    assert merge([97, 97, 97], (97, 97), 256) == [256, 97]
    assert merge([97, 97, 97, 97], (97, 97), 256) == [256, 256]
    # "aaa" x1: (a,a) counts 2, merges to "aa a"; then (aa, a) counts 1.
    assert train_merges({(97, 97, 97): 1}, None, 256) == [(97, 97, 2), (256, 97, 1)]


@BOTH
def test_tie_goes_to_the_smallest_pair(train_merges):
    # (98,99) and (97,98) both occur once; (97,98) is smaller.
    assert train_merges({(98, 99): 1, (97, 98): 1}, 1, 256) == [(97, 98, 1)]
    # Higher count beats a smaller pair.
    assert train_merges({(98, 99): 2, (97, 98): 1}, 1, 256) == [(98, 99, 2)]


@BOTH
def test_min_frequency_stops_training(train_merges):
    pieces = {(97, 98): 5, (99, 100): 2, (101, 102): 1}
    assert [m[2] for m in train_merges(pieces, None, 256, min_frequency=2)] == [5, 2]
    assert len(train_merges(pieces, None, 256, min_frequency=6)) == 0


@BOTH
def test_counts_beyond_32_bits(train_merges):
    big = 3 * 2**40
    merges = train_merges({(97, 98): big, (98, 99): big - 1}, None, 256)
    assert merges[0] == (97, 98, big)


@given(tiny_corpus, st.integers(1, 3), st.sampled_from([None, 5, 20]))
def test_equals_the_literal_algorithm_on_overlapping_corpora(docs, min_frequency, num_merges):
    pieces = byte_pieces(docs, "gpt2")
    assert heap_train(pieces, num_merges, 256, min_frequency=min_frequency) == reference.train(
        pieces, num_merges, 256, min_frequency=min_frequency
    )


FLAG_CHOICES = [TEXT, OPERATOR, BOUNDARY | STARTS_WITH_BOUNDARY | ENDS_WITH_BOUNDARY, SHIFT]


@given(
    st.lists(st.lists(st.integers(0, 5), max_size=12), max_size=12),
    st.lists(st.sampled_from(FLAG_CHOICES), min_size=6, max_size=6),
    st.sampled_from(["atomic", "prefix", "free"]),
    st.integers(1, 2),
)
def test_policies_equal_the_literal_algorithm(words, flags, policy, min_frequency):
    # Six synthetic symbols with random kinds stand for bytes and atoms.
    pieces = Counter(tuple(w) for w in words)
    got = heap_train(pieces, None, 6, flags=flags, merge_policy=policy, min_frequency=min_frequency)
    want = reference.train(pieces, None, 6, flags=flags, merge_policy=policy, min_frequency=min_frequency)
    assert got == want


@given(
    st.lists(st.lists(st.integers(0, 259), max_size=14), max_size=10),
    st.integers(1, 9),
)
def test_the_token_length_limit_equals_the_literal_algorithm(words, max_token_bytes):
    # Ids 256..259 are atoms, three bytes each in a text form: a pair of them makes 6.
    pieces = Counter(tuple(w) for w in words)
    got = heap_train(pieces, None, 260, max_token_bytes=max_token_bytes)
    assert got == reference.train(pieces, None, 260, max_token_bytes=max_token_bytes)
    lengths = [1] * 256 + [3] * 4
    for a, b, _ in got:
        lengths.append(lengths[a] + lengths[b])
        assert lengths[-1] <= max_token_bytes


def test_document_order_does_not_matter():
    docs = stdlib_text(200_000)
    shuffled = docs[:]
    random.Random(5).shuffle(shuffled)
    assert heap_train(byte_pieces(docs), 300, 256) == heap_train(byte_pieces(shuffled), 300, 256)


def test_hash_seed_does_not_matter():
    code = (
        "import sys; sys.path.insert(0, %r);"
        "import functionalbpe as fb;"
        "docs = ['the cat and the hat and the bat ' * 3, 'aaa bbb aaa ccc ' * 5, 'x y z ' * 4];"
        "print(fb.train(docs, vocab_size=300, backend='reference', progress=False).merges)" % ROOT
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(outputs) == 1


@given(tiny_corpus, st.text(alphabet="aab ", max_size=40))
def test_encoding_replays_training(docs, text):
    pieces = byte_pieces(docs, "gpt2")
    merges = reference.train(pieces, None, 256)
    ranks = ranks_from_merges(merges, 256)
    # A training piece encodes to what training turned it into: rerun the merges literally.
    for piece in list(pieces)[:5]:
        word = list(piece)
        for k, (a, b, _) in enumerate(merges):
            word = merge(word, (a, b), 256 + k)
        assert encode_piece(piece, ranks) == word




def test_equals_rustbpe_on_a_megabyte_of_real_text():
    rb = pytest.importorskip("rustbpe")
    from functionalbpe.text.patterns import PATTERNS

    docs = stdlib_text(1_100_000)
    vocab = 256 + 2000
    ours = heap_train(byte_pieces(docs), vocab - 256, 256)
    tok = rb.Tokenizer()
    tok.train_from_iterator(iter(docs), vocab_size=vocab, pattern=PATTERNS["gpt4"])
    theirs = sorted(tok.get_mergeable_ranks(), key=lambda item: item[1])
    table = [bytes([i]) for i in range(256)]
    for a, b, _ in ours:
        table.append(table[a] + table[b])
    assert len(theirs) == len(table)
    assert [bytes(t) for t, _ in theirs] == table
