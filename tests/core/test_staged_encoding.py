"""Pieces of a vocabulary grown in two stages (superwords, continued training) are encoded as
their words' first-stage ids, checked where two words meet, then merged on (csrc/lib/encode/encode.c,
"a piece in two stages"). The ids must be the reference's for any merge table and any limit,
with the check doing the work where a first-stage merge joins two words; the limit comes
from ``tok.training`` and is checked when a file is read."""
from __future__ import annotations

import copy
import warnings
from typing import List, Tuple

import pytest
from hypothesis import given, settings, strategies as st

import functionalbpe as fb
from functionalbpe.core._native import NATIVE
from functionalbpe.core.reference import encode_piece, ranks_from_merges
from functionalbpe.errors import SmallerVocabularyWarning, TokenizerFileError
from functionalbpe.formats.tokenizer_file import write_payload
from functionalbpe.text.patterns import SUPERWORDS

ENCODER = NATIVE.encoder
needs_native = pytest.mark.skipif(ENCODER is None, reason="the compiled encoder is not built (or pure Python is forced)")

# Spaces and line breaks (where pieces are cut into words), letters, punctuation, a
# two-byte and a three-byte character.
ALPHABET = "ab .\n\né中"
WORDS = ["a", "b", "ab", "ba", "aab", " ", "  ", ".", "\n", "\n\n", "é", "中", "中中"]


def reference_ids(tok: fb.Tokenizer, text: str) -> List[int]:
    """The definition: the scheme's pieces, each merged by reference.encode_piece."""
    ranks = ranks_from_merges(tok.alphabet.merges, tok.alphabet.first_merge)
    return [i for piece in tok.scheme.split(text) for i in encode_piece(tok.alphabet.symbols(piece), ranks)]


def one_stage(tok: fb.Tokenizer) -> fb.Tokenizer:
    """The same tokenizer with the two-stage path off."""
    other = fb.Tokenizer.from_payload(tok.to_payload())
    other.encoder.set_stages(None)
    assert other.encoder.native.stage_limit is None
    return other


@st.composite
def byte_merge_tables(draw) -> List[Tuple[int, int]]:
    """Random merges over the bytes of ALPHABET: merges across spaces and line breaks (which
    a real first stage seldom has, and which the check at each cut must catch), merges of
    merges, tokens that do not encode to themselves."""
    tokens = sorted(set(ALPHABET.encode()))
    merges: List[Tuple[int, int]] = []
    for _ in range(draw(st.integers(1, 60))):
        pair = (draw(st.sampled_from(tokens)), draw(st.sampled_from(tokens)))
        if pair not in merges:
            merges.append(pair)
            tokens.append(256 + len(merges) - 1)
    return merges


# Long pieces (the path is taken from 16 bytes) of every kind: random text, words with
# spaces, long runs of one character, words longer than the short scan takes (64 bytes).
LONG_TEXT = st.one_of(
    st.text(ALPHABET, min_size=10, max_size=200),
    st.lists(st.sampled_from(WORDS), min_size=4, max_size=80).map("".join),
    st.builds(lambda c, k: c * k, st.sampled_from(list(ALPHABET) + ["a ", " a", "ab ", ".\n"]), st.integers(8, 400)),
    st.builds(lambda k, j: "a" * k + " " + "b" * j, st.integers(1, 150), st.integers(1, 150)),
)


@needs_native
@settings(max_examples=400, deadline=None)
@given(merges=byte_merge_tables(), data=st.data(), pieces=st.lists(LONG_TEXT, min_size=1, max_size=5))
def test_any_limit_gives_the_reference_ids(merges, data, pieces):
    # Any limit gives the same ids: a merge's parts are made before it.
    limit = data.draw(st.integers(256, 256 + len(merges)))
    ranks = ranks_from_merges(merges, 256)
    want = [i for p in pieces for i in encode_piece(list(p.encode()), ranks)]
    bpe = ENCODER.BPE([], merges)
    bpe.set_stages(limit)
    assert bpe.encode_pieces(pieces) == want
    assert bpe.encode_pieces(pieces) == want  # the second time from the cache, words and pieces


# Words of 13 to 18 bytes: segments that end inside, at and past the 16 bytes that merge_words
# reads at once, and line breaks after a letter, after punctuation and after a line break.
SEGMENT_WORDS = WORDS + [" " + "ab" * 7, "a" * 15, " " + "b" * 15, "ab" * 8 + "a", " " + "a" * 17, ".\n", "a\n", "\n\n\n"]


@needs_native
@settings(max_examples=300, deadline=None)
@given(merges=byte_merge_tables(), data=st.data(), compact=st.booleans(),
       words=st.lists(st.sampled_from(SEGMENT_WORDS), min_size=1, max_size=60))
def test_words_read_sixteen_bytes_at_a_time_give_the_reference_ids(merges, data, compact, words):
    # encode_text reads past a piece's end into the text after it (the last piece: to the
    # text's end, fewer than 16 bytes), which encode_pieces never does; a compact table
    # finds a word's token out of line. Both against the reference, piece by piece.
    limit = data.draw(st.integers(256, 256 + len(merges)))
    text = "".join(words)
    ranks = ranks_from_merges(merges, 256)
    want = [i for p in fb.make_scheme("plain", pattern=SUPERWORDS).split(text) for i in encode_piece(list(p.encode()), ranks)]
    scanner = fb.Tokenizer(fb.make_scheme("plain", pattern=SUPERWORDS), merges).encoder.scanner
    bpe = ENCODER.BPE([], merges, compact=compact)
    bpe.set_stages(limit)
    assert bpe.compact_tables == compact
    assert bpe.encode_text(text, scanner) == want
    assert bpe.encode_text(text, scanner) == want  # the words from the cache


@needs_native
def test_the_check_where_words_meet_does_the_work():
    # First stage: "a " (256), then "xa" (257); second stage: "a " + "b" (258). Cut into
    # words, "xa bxa b..." is "xa", " bxa", ...: alone, each word makes "xa", and only the
    # check at each cut ("xa" then " ": "a " would have merged first) sends the piece back to
    # its bytes, where "a " wins. A mutant without the check gives 257 32 98 257 32 98 ...,
    # which the second stage cannot mend (nothing merges with 257).
    merges = [(97, 32), (120, 97), (256, 98)]
    piece = "xa b" * 8
    bpe = ENCODER.BPE([], merges)
    bpe.set_stages(258)
    assert bpe.stage_limit == 258
    assert bpe.encode_pieces([piece]) == [120, 258] * 8
    tok = fb.Tokenizer(fb.make_scheme("plain", pattern=SUPERWORDS), merges)
    tok.training = {"continued_from": {"merges": 2}}
    assert tok.encoder.native.stage_limit == 258
    for text in (piece, piece + " and " + piece, "xa " * 40, "\n".join([piece] * 3)):
        assert tok.encode_ordinary(text) == reference_ids(tok, text) == one_stage(tok).encode_ordinary(text)


@needs_native
def test_the_first_stage_join_bits_send_a_cut_to_the_check():
    # The last first-stage merge, "a " (257), joins across the cut before " bc": the cut's
    # bytes set its join bit, so the check runs and sends the piece back to its bytes, where
    # "a " is made and the second stage makes "a bc" (258). A table of join bits missing the
    # last first-stage merge skips the check and gives 120 97 32 256 ...
    merges = [(98, 99), (97, 32), (257, 256)]
    piece = "xa bc" * 8
    want = encode_piece(list(piece.encode()), ranks_from_merges(merges, 256))
    assert 258 in want
    bpe = ENCODER.BPE([], merges)
    bpe.set_stages(258)
    assert bpe.encode_pieces([piece]) == want


@needs_native
def test_a_cached_word_is_checked_where_it_meets_the_word_before():
    # " bcd" is no first-stage token: merged the first time (after "zz"), cached, then found
    # in the loop of tokens (segment_hit) after "xa", where "a " (256) joins across the cut:
    # the piece goes back to its bytes and the second stage makes "a b" (257). A mutant
    # without the check there gives 120 97 32 98 99 100.
    merges = [(97, 32), (256, 98)]
    piece = "zz bcd zz bcd xa bcd zz bcd zz bcd zz bcd"
    want = encode_piece(list(piece.encode()), ranks_from_merges(merges, 256))
    assert want.count(257) == 1
    bpe = ENCODER.BPE([], merges)
    bpe.set_stages(257)
    assert bpe.encode_pieces([piece]) == want
    assert bpe.encode_pieces([piece, piece]) == want * 2  # every word from the cache
    tok = fb.Tokenizer(fb.make_scheme("plain", pattern=SUPERWORDS), merges)
    tok.training = {"continued_from": {"merges": 1}}
    for text in (piece, piece + " and " + piece, "\n".join([piece] * 3)):
        assert tok.encode_ordinary(text) == reference_ids(tok, text)


@needs_native
def test_a_word_and_its_punctuation_are_checked_where_they_meet():
    # A segment not seen before is tried as its word and the punctuation after it: " xa" is
    # 32 257 alone, "." is 46, but "a." (256) is made before "xa" (257), so the two do not
    # meet as they are and the segment is merged from its bytes: 32 120 256. A mutant
    # without that check gives 32 257 46 (and 258, " x", is then never made).
    merges = [(97, 46), (120, 97), (32, 120)]
    for piece in (" xa. xa. xa. xa.", "zz xa, xa. xa.\n\n xa.", "b xa.. xa.b xa."):
        want = encode_piece(list(piece.encode()), ranks_from_merges(merges, 256))
        assert 256 in want and 258 in want
        bpe = ENCODER.BPE([], merges)
        bpe.set_stages(258)
        assert bpe.encode_pieces([piece]) == want
        assert bpe.encode_pieces([piece]) == want  # from the cache


@needs_native
def test_second_stage_groups_follow_nested_tokens():
    # Second stage: "ab" + " " (257), then 257 + "c" (258): the pair that 258 joins, side by
    # side as first-stage ids, is " " then "c", the last first-stage id of 257 (its right
    # part's), not 257's left part "ab". A table of those pairs built from the left part
    # cuts between " " and "c", and 258 is never made.
    merges = [(97, 98), (256, 32), (257, 99)]
    for piece in ("ab c" * 8, "ab cab c ab ab c" * 3, "x ab c y" * 5):
        want = encode_piece(list(piece.encode()), ranks_from_merges(merges, 256))
        assert 258 in want
        bpe = ENCODER.BPE([], merges)
        bpe.set_stages(257)
        assert bpe.encode_pieces([piece]) == want
        assert bpe.encode_pieces([piece]) == want  # from the cache


@needs_native
def test_second_stage_groups_of_three_merge_as_the_short_scan():
    # Groups of three first-stage ids are merged without the short scan: equal ranks (the
    # same pair twice, "a" "a" "a") merge left first, "aa" then "a" (258); a lower rank on
    # the right ("bc", 259 before "ab", 260) merges there first, and what is made merges on.
    # A mutant that merges the right pair on a tie gives 97 257 for " aaa".
    merges = [(120, 120), (97, 97), (257, 97), (98, 99), (97, 259), (97, 98)]
    for piece in (" aaa" * 6, " abc" * 6, " aab aaa abc aaaa" * 2, " bcc abb cab" * 3):
        want = encode_piece(list(piece.encode()), ranks_from_merges(merges, 256))
        bpe = ENCODER.BPE([], merges)
        bpe.set_stages(257)
        assert bpe.encode_pieces([piece]) == want
    assert encode_piece(list(b" aaa"), ranks_from_merges(merges, 256)) == [32, 258]
    assert encode_piece(list(b" abc"), ranks_from_merges(merges, 256)) == [32, 260]


@needs_native
@pytest.mark.parametrize("limit", [0, 255, 259, 2**32 - 1])
def test_a_limit_out_of_range_is_refused(limit):
    bpe = ENCODER.BPE([], [(97, 98), (256, 99)])
    with pytest.raises(ValueError):
        bpe.set_stages(limit)
    bpe.set_stages(257)
    assert bpe.stage_limit == 257
    for one in (256, 258):  # the first merged id, or the end: one stage
        bpe.set_stages(one)
        assert bpe.stage_limit is None


CORPUS_WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "and", "by", "way", "of", "it", "is", "é", "中文"]


@st.composite
def corpora(draw) -> str:
    """Small corpora of repeated phrases, so that the second stage learns tokens of several
    words, with punctuation, numbers and line breaks between them."""
    words = st.sampled_from(CORPUS_WORDS)
    seps = st.sampled_from([" ", " ", " ", ", ", ". ", "\n", "\n\n", "  ", " 12 ", "!! "])
    phrases = draw(st.lists(st.lists(st.tuples(words, seps), min_size=1, max_size=6), min_size=1, max_size=6))
    texts = ["".join(w + s for w, s in phrase) for phrase in phrases]
    return "".join(draw(st.lists(st.sampled_from(texts), min_size=5, max_size=60)))


ADVERSARIAL = [
    "the cat sat on the mat " * 200,
    "a" * 3000,
    " " * 500 + "the",
    "the" + "\n" * 300 + "cat",
    ("the cat, and the dog.\n\n" * 50),
    "中文中文 the cat é" * 100,
    "by the way of it " * 50 + "!!!???..." * 30,
    "x" * 70 + " the" * 30 + " " + "y" * 200,
]


@needs_native
@settings(max_examples=40, deadline=None)
@given(corpus=corpora(), text=st.one_of(corpora(), st.sampled_from(ADVERSARIAL)))
def test_superword_tokenizers_encode_as_the_reference(corpus, text):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallerVocabularyWarning)  # a tiny corpus runs out of pairs
        tok = fb.train(corpus, vocab_size=330, superwords=275, progress=False)
    first = tok.alphabet.first_merge + tok.training["continued_from"]["merges"]
    assert tok.encoder.native.stage_limit in (first, None)  # None: no second stage was learned
    want = reference_ids(tok, text)
    assert tok.encode_ordinary(text) == want
    assert tok.encode_ordinary(text) == want
    assert one_stage(tok).encode_ordinary(text) == want


@pytest.fixture(scope="module")
def superword_tok() -> fb.Tokenizer:
    from ..helpers import stdlib_text

    return fb.train(stdlib_text(300_000), vocab_size=2000, superwords=1200, progress=False)


@needs_native
@pytest.mark.parametrize("text", ADVERSARIAL)
def test_a_superword_tokenizer_on_hostile_text(superword_tok, text):
    assert superword_tok.encoder.native.stage_limit == 1200
    assert superword_tok.encode_ordinary(text) == reference_ids(superword_tok, text)


@needs_native
def test_a_superword_tokenizer_on_real_text(superword_tok):
    from ..helpers import stdlib_text

    text = "".join(stdlib_text(700_000)[-20:])  # other files than training's, most of them
    assert superword_tok.encode_ordinary(text) == one_stage(superword_tok).encode_ordinary(text)


def test_the_limit_survives_a_file(superword_tok, tmp_path):
    path = tmp_path / "sw.json"
    superword_tok.save(path)
    back = fb.Tokenizer.load(path)
    assert back.training == superword_tok.training and back == superword_tok
    if NATIVE.encoder is not None:
        assert back.encoder.native.stage_limit == 1200
    text = ADVERSARIAL[0] + ADVERSARIAL[4]
    assert back.encode_ordinary(text) == superword_tok.encode_ordinary(text)


@pytest.mark.parametrize("bad", [-1, 10**6, "800", True, 1.5, None])
def test_a_bad_limit_in_a_file_names_the_field(superword_tok, tmp_path, bad):
    payload = copy.deepcopy(superword_tok.to_payload())
    payload["training"]["continued_from"]["merges"] = bad
    path = tmp_path / "bad.json"
    write_payload(path, payload)
    with pytest.raises(TokenizerFileError, match=r"training\.continued_from\.merges"):
        fb.Tokenizer.load(path)
    with pytest.raises(fb.FunctionalBPEError, match=r"training\.continued_from\.merges"):
        superword_tok.training = payload["training"]
    assert superword_tok.training["continued_from"]["merges"] == 944  # unchanged


def test_plain_tokenizers_have_one_stage():
    tok = fb.train("the cat sat on the mat " * 20, vocab_size=270, progress=False)
    assert tok.training is None
    if NATIVE.encoder is not None:
        assert tok.encoder.native.stage_limit is None


@needs_native
@pytest.mark.parametrize("merges, limit, piece", [
    # "é" (257) is a second-stage token: the first stage leaves its two bytes
    ([(97, 98), (0xC3, 0xA9), (257, 97)], 257, "abéa abéa abéa abéa"),
    # " é" (257) is: the first stage makes "é" (256) and leaves the space before it
    ([(0xC3, 0xA9), (32, 256), (257, 32)], 257, "é aé aé é aé aé"),
])
def test_a_first_stage_word_takes_only_first_stage_characters_whole(merges, limit, piece):
    # A word that is neither a first-stage token nor cached is merged from its characters
    # where the first stage makes them whole (piece_chars_below in encode.c). Taken whole
    # from the second stage, "é" or " é" would stand where the first stage has bytes, and
    # the second stage's merges, grouped by where first-stage ids meet, would miss them.
    want = encode_piece(list(piece.encode()), ranks_from_merges(merges, 256))
    bpe = ENCODER.BPE([], merges)
    bpe.set_stages(limit)
    assert bpe.stage_limit == limit
    assert bpe.encode_pieces([piece]) == want
    twice = piece + " " + piece  # its words now cached
    assert bpe.encode_pieces([twice]) == encode_piece(list(twice.encode()), ranks_from_merges(merges, 256))


@needs_native
@pytest.mark.parametrize("merges", [
    # "é" 256, "é\n" 257, " é" 258; second stage "\n\n" 259
    [(0xC3, 0xA9), (256, 10), (32, 256), (10, 10)],
    # the same and "q " 259 (made after " é"); second stage "\n\n" 260
    [(0xC3, 0xA9), (256, 10), (32, 256), (113, 32), (10, 10)],
])
def test_words_that_clash_are_merged_as_one(merges):
    # The words " é" and "\n\n" are cut apart (a line break after a non-ASCII character), but
    # the first stage joins "é\n" across the cut: the two are merged as one word (rejoin_words
    # in encode.c), " " "é\n" "\n", rather than the whole piece from its bytes. That word now
    # begins with " ", which "q " joins to the word before where that merge exists, so there
    # the piece goes back to its bytes; a mutant that skips that check gives q " " "é\n" ...
    limit = len(merges) - 1 + 256
    ranks = ranks_from_merges(merges, 256)
    for piece in ("q é\n\nq é\n\nq é\n\n", "ab é\n\nab é\n\n", "q é\n\n" * 6 + "x"):
        bpe = ENCODER.BPE([], merges)
        bpe.set_stages(limit)
        assert bpe.stage_limit == limit
        assert bpe.encode_pieces([piece]) == encode_piece(list(piece.encode()), ranks), repr(piece)
        assert bpe.encode_pieces([piece]) == encode_piece(list(piece.encode()), ranks)  # words cached
