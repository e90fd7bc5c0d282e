"""The encoder equals the reference (reference.encode_piece) on every piece, for every scheme
and merge policy, on merge tables made by training and on merge tables made up at random;
hostile inputs encode correctly; a tokenizer can be shared by threads."""
from __future__ import annotations

import pickle
import random
import threading
from array import array
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Tuple

import pytest
from hypothesis import given, settings, strategies as st

import functionalbpe as fb
from functionalbpe.core._native import NATIVE
from functionalbpe.core.alphabet import BOUNDARY, OPERATOR, SHIFT, Atom
from functionalbpe.core.encoder import Encoder
from functionalbpe.core.reference import encode_piece, ranks_from_merges
from functionalbpe.formats.tiktoken import write_ranks
from functionalbpe.schemes.base import Scheme

from ..helpers import stdlib_text, tricky_text

ENCODER = NATIVE.encoder
needs_native = pytest.mark.skipif(ENCODER is None, reason="the compiled encoder is not built (or pure Python is forced)")

MULTILINGUAL = (
    "Ein naïves Café, 東京で日本語を話す。 Привет, как дела? 안녕하세요 😀👍🏽 مرحبا بالعالم "
    "नमस्ते दुनिया Γειά σου κόσμε Xin chào thế giới! ¡Hola! ça va? "
)


def reference_ids(tok: fb.Tokenizer, text: str) -> List[int]:
    """The definition: the scheme's pieces, each merged by reference.encode_piece."""
    ranks = ranks_from_merges(tok.alphabet.merges, tok.alphabet.first_merge)
    out: List[int] = []
    for piece in tok.scheme.split(text):
        out.extend(encode_piece(tok.alphabet.symbols(piece), ranks))
    return out


@pytest.fixture(scope="module")
def tok() -> fb.Tokenizer:
    size, merges = (300_000, 2000) if NATIVE.trainer else (100_000, 500)
    docs = stdlib_text(size) + [MULTILINGUAL * 5]
    return fb.train(docs, vocab_size=256 + merges + 1, special_tokens=["<|endoftext|>"], progress=False)


# -- made-up merge tables ------------------------------------------------------------------


@st.composite
def merge_tables(draw, symbols: int = 3, max_merges: int = 40) -> Tuple[List[Tuple[int, int]], int]:
    """Random merge tables over a few byte symbols: tokens that do not encode to themselves,
    pairs that overlap ("a a a"), merges of merges. Returns (merges, number of symbols)."""
    n = draw(st.integers(1, symbols))
    tokens = list(range(97, 97 + n))
    merges: List[Tuple[int, int]] = []
    for _ in range(draw(st.integers(0, max_merges))):
        pair = (draw(st.sampled_from(tokens)), draw(st.sampled_from(tokens)))
        if pair not in merges:
            merges.append(pair)
            tokens.append(256 + len(merges) - 1)
    return merges, n


@st.composite
def runs(draw, n: int) -> List[int]:
    """Sequences of a few runs (the rounds over runs), long or short."""
    out: List[int] = []
    for _ in range(draw(st.integers(1, 6))):
        out += [97 + draw(st.integers(0, n - 1))] * draw(st.sampled_from([1, 2, 3, 5, 64, 65, 300]))
    return out


@needs_native
@given(table=merge_tables(), data=st.data())
def test_every_merge_method_equals_the_reference(table, data):
    merges, n = table
    bpe = ENCODER.BPE([], merges)
    ranks = ranks_from_merges(merges, 256)
    symbols = data.draw(st.one_of(st.lists(st.integers(97, 96 + n), max_size=200), runs(n)))
    want = encode_piece(symbols, ranks)
    bpe.build_backtracking()
    methods = [0, 2, 3, 4] + ([1] if len(symbols) <= 64 else [])
    for method in methods:
        assert bpe.merge_symbols(symbols, method) == want, method
    assert bpe.encode_pieces(["".join(map(chr, symbols))]) == want


CUT_ALPHABET = "ab é中文字"


@st.composite
def byte_merge_tables(draw) -> List[Tuple[int, int]]:
    """Random merges over the bytes of a few one-, two- and three-byte characters: tokens
    that join whole characters, and tokens that join parts of two characters."""
    tokens = sorted(set(CUT_ALPHABET.encode()))
    merges: List[Tuple[int, int]] = []
    for _ in range(draw(st.integers(0, 60))):
        pair = (draw(st.sampled_from(tokens)), draw(st.sampled_from(tokens)))
        if pair not in merges:
            merges.append(pair)
            tokens.append(256 + len(merges) - 1)
    return merges


@needs_native
@settings(max_examples=300)
@given(merges=byte_merge_tables(), pieces=st.lists(st.text(CUT_ALPHABET, max_size=80), max_size=6))
def test_pieces_cut_where_no_merge_joins_encode_as_the_reference(merges, pieces):
    # Long pieces are cut where no merge can join across (encode.c); the cut parts are cached,
    # so a piece that shares parts with an earlier one comes partly from the cache.
    bpe = ENCODER.BPE([], merges)
    ranks = ranks_from_merges(merges, 256)
    want = [i for p in pieces for i in encode_piece(list(p.encode()), ranks)]
    assert bpe.encode_pieces(pieces) == want
    assert bpe.encode_pieces(pieces) == want


# -- compact tables (encode.c): a large vocabulary's pairs and whole tokens in 4 bytes a slot --


@needs_native
@settings(max_examples=300)
@given(merges=byte_merge_tables(), pieces=st.lists(st.text(CUT_ALPHABET, max_size=80), max_size=6), data=st.data())
def test_compact_tables_encode_as_the_reference(merges, pieces, data):
    ranks = ranks_from_merges(merges, 256)
    wide, compact = ENCODER.BPE([], merges, compact=False), ENCODER.BPE([], merges, compact=True)
    assert (wide.compact_tables, compact.compact_tables) == (False, True)
    want = [i for p in pieces for i in encode_piece(list(p.encode()), ranks)]
    assert compact.encode_pieces(pieces) == want
    assert compact.num_self_encoding == wide.num_self_encoding
    text = " ".join(pieces)  # the text loop, whose inline probe meets 16 empty slots
    assert compact.encode_text(text, "gpt4") == wide.encode_text(text, "gpt4")
    symbols = [b for p in pieces for b in p.encode()]
    for method in [0, 2, 3] + ([1] if len(symbols) <= 64 else []):
        assert compact.merge_symbols(symbols, method) == encode_piece(symbols, ranks), method
    ids = sorted(set(CUT_ALPHABET.encode())) + list(range(256, 256 + len(merges)))
    for _ in range(20):  # every pair, merged or not
        left, right = data.draw(st.sampled_from(ids)), data.draw(st.sampled_from(ids))
        assert compact.rank(left, right) == wide.rank(left, right)


@needs_native
def test_compact_tables_refuse_a_pair_merged_twice_and_take_joins():
    for compact in (False, True):
        with pytest.raises(ValueError, match="a pair merged twice"):
            ENCODER.BPE([], [(97, 98), (97, 98)], compact=compact)
    # A join (a pair that makes a token without being its merge) takes the wide pair table.
    merges, joins = [(97, 98), (256, 99), (98, 99)], [(97, 258, 257)]
    want = ENCODER.BPE([], merges, joins=joins, compact=False).encode_pieces(["abc", "abcabc", "bc"])
    assert ENCODER.BPE([], merges, joins=joins, compact=True).encode_pieces(["abc", "abcabc", "bc"]) == want


@needs_native
def test_a_vocabulary_of_half_a_million_tokens_is_compact_and_encodes_as_a_wide_one():
    # Every pair of bytes, then pairs of those: 2**19 tokens, the least that is compact.
    merges = array("I")
    for a in range(256):
        for b in range(256):
            merges.extend((a, b))
    rng = random.Random(5)
    pairs = rng.sample(range(1 << 32), (1 << 19) - 256 - (1 << 16))
    for p in pairs:
        merges.extend((256 + (p >> 16), 256 + (p & 0xFFFF)))
    auto, wide = ENCODER.BPE([], merges), ENCODER.BPE([], merges, compact=False)
    assert (auto.compact_tables, wide.compact_tables) == (True, False)
    assert ENCODER.BPE([], merges[:-2]).compact_tables is False  # one token fewer
    text = bytes(rng.randrange(256) for _ in range(20_000)).decode("latin-1")
    pieces = [text[k:k + rng.randrange(1, 40)] for k in range(0, len(text), 40)]
    assert auto.encode_pieces(pieces) == wide.encode_pieces(pieces)
    assert auto.num_self_encoding == wide.num_self_encoding
    for threads in (1, 2):
        assert auto.encode_text(text, "gpt4", threads=threads) == wide.encode_text(text, "gpt4", threads=threads)
    # Tags of 10 bits meet other keys' every few hundred probes: the keys themselves decide.
    for _ in range(100_000):
        left, right = rng.randrange(1 << 19), rng.randrange(1 << 19)
        assert auto.rank(left, right) == wide.rank(left, right)
    for k in rng.sample(range(len(merges) // 2), 10_000):
        assert auto.rank(merges[2 * k], merges[2 * k + 1]) == 256 + k


# -- characters taken whole (encode.c): a character's token in place of its bytes ---------


CHARS_ALPHABETS = [" a.éЖж中文", " 中", "a中", " Жж", ".é", "中文"]  # of one, two, three bytes


@st.composite
def merges_and_pieces(draw) -> Tuple[List[Tuple[int, int]], List[str]]:
    """Merges as a trainer might make them, over a few characters: each joins two neighbours
    in a text encoded with the merges before it, so tokens join whole characters, parts of
    one, a space and a lead byte, the end of one character and the start of the next, in any
    order of ids. Then pieces of the same characters."""
    alphabet = draw(st.sampled_from(CHARS_ALPHABETS))
    letters = alphabet.replace(" ", "") or "a"
    # plain text, or words each after a space (" Жж Жж"), as a pattern's pieces begin
    words = st.lists(st.text(letters, min_size=1, max_size=5), min_size=1, max_size=8)
    pieces = st.one_of(st.text(alphabet, max_size=90), words.map(lambda w: " " + " ".join(w)))
    text = draw(st.one_of(st.text(alphabet, min_size=1, max_size=40), words.map(" ".join))).encode()
    merges: List[Tuple[int, int]] = []
    ranks: Dict[Tuple[int, int], int] = {}
    for _ in range(draw(st.integers(0, 50))):
        ids = encode_piece(list(text), ranks)
        if len(ids) < 2:
            break
        i = draw(st.integers(0, len(ids) - 2))
        ranks[ids[i], ids[i + 1]] = 256 + len(merges)
        merges.append((ids[i], ids[i + 1]))
    return merges, draw(st.lists(pieces, max_size=6))


@needs_native
@settings(max_examples=1000)
@given(merges_and_pieces())
def test_characters_taken_whole_encode_as_the_reference(table):
    # Pieces start from a character's token where no neighbour can join its bytes first
    # (char_tokens), or from the token of a leading space and character (space_tokens): short pieces, pieces past the key's 16 bytes, past the short scan's 64,
    # and cut ones, each against the reference, twice (then partly from the cache).
    merges, pieces = table
    bpe = ENCODER.BPE([], merges)
    ranks = ranks_from_merges(merges, 256)
    want = [i for p in pieces for i in encode_piece(list(p.encode()), ranks)]
    assert bpe.encode_pieces(pieces) == want
    assert bpe.encode_pieces(pieces) == want


# -- the backtracking encoder (encode.c): tokens read left to right, no merge loop --------


# Text that makes it take tokens back: long runs of one character, runs of two, every
# UTF-8 length, characters of several Unicode blocks.
ADVERSARIAL = st.one_of(
    st.text(CUT_ALPHABET, max_size=120),
    st.builds(lambda c, k: c * k, st.sampled_from(list(CUT_ALPHABET)), st.integers(1, 300)),
    st.lists(st.sampled_from(["a", "aa", "ab", "中", "é", " ", "字文"]), max_size=60).map("".join),
)


@needs_native
@settings(max_examples=300)
@given(merges=byte_merge_tables(), text=ADVERSARIAL)
def test_backtracking_equals_the_merges_and_the_reference(merges, text):
    bpe = ENCODER.BPE([], merges)
    bpe.build_backtracking()
    symbols = list(text.encode())
    want = encode_piece(symbols, ranks_from_merges(merges, 256))
    assert bpe.merge_symbols(symbols, 4) == want
    assert bpe.merge_symbols(symbols, 0) == want


@needs_native
@pytest.mark.filterwarnings("ignore::functionalbpe.errors.SmallerVocabularyWarning")  # tiny corpora
@settings(max_examples=30, deadline=None)
@given(corpus=st.lists(st.text("aab é中", max_size=30), min_size=1, max_size=12), text=ADVERSARIAL)
def test_backtracking_equals_tiktoken_on_trained_vocabularies(corpus, text):
    tiktoken = pytest.importorskip("tiktoken")
    tok = fb.train(corpus, vocab_size=300, progress=False)
    ranks = {tok.token_bytes(i): i for i in range(tok.vocab_size)}
    enc = tiktoken.Encoding("t", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={})
    bpe = ENCODER.BPE([], tok.alphabet.merges)
    bpe.build_backtracking()
    # One piece, the whole text: tiktoken's pattern above keeps it whole.
    assert bpe.merge_symbols(list(text.encode()), 4) == enc.encode_ordinary(text)


# Characters of many Unicode blocks and every UTF-8 length, for pieces encoded whole by the
# backtracking encoder (2-64 bytes) and cut where no merge joins.
BLOCKS_ALPHABET = "aé中文字Жж한글あア😀ßΩ"
ALPHABETS = [BLOCKS_ALPHABET, "a", "ab", "aé", "a中", "中文字", "Жж😀"]


def block_text(alphabet: str):
    """Text over `alphabet`: any mix, runs of one character (up to past 64 bytes), words."""
    return st.one_of(
        st.text(alphabet, max_size=40),
        st.builds(lambda c, k: c * k, st.sampled_from(list(alphabet)), st.integers(1, 70)),
        st.lists(st.text(alphabet, min_size=1, max_size=3), max_size=20).map("".join),
    )


BLOCKS_TEXT = block_text(BLOCKS_ALPHABET)


@st.composite
def block_tables_and_pieces(draw) -> Tuple[List[Tuple[int, int]], List[str]]:
    """Random merges over the bytes of a few characters of BLOCKS_ALPHABET, or all of them,
    and pieces of the same characters: whole characters, parts of two, runs, long tokens."""
    alphabet = draw(st.sampled_from(ALPHABETS))
    tokens = sorted(set(alphabet.encode()))
    merges: List[Tuple[int, int]] = []
    for _ in range(draw(st.integers(0, 120))):
        pair = (draw(st.sampled_from(tokens)), draw(st.sampled_from(tokens)))
        if pair not in merges:
            merges.append(pair)
            tokens.append(256 + len(merges) - 1)
    return merges, draw(st.lists(block_text(alphabet), max_size=6))


@needs_native
@settings(max_examples=300)
@given(block_tables_and_pieces())
def test_short_pieces_by_backtracking_equal_the_merges(table):
    # Once built, pieces of 2-64 bytes, and the parts cut from longer ones, are encoded by
    # the backtracking encoder (encode.c, merge_piece): the ids of the short scan, the sweep
    # with its heap of ranks, and the reference, twice (then partly from the cache).
    merges, pieces = table
    bpe = ENCODER.BPE([], merges)
    bpe.build_backtracking()
    ranks = ranks_from_merges(merges, 256)
    want = []
    for p in pieces:
        symbols = list(p.encode())
        ids = encode_piece(symbols, ranks)
        assert bpe.merge_symbols(symbols, 2) == ids
        if len(symbols) <= 64:
            assert bpe.merge_symbols(symbols, 1) == ids
        want += ids
    assert bpe.encode_pieces(pieces) == want
    assert bpe.encode_pieces(pieces) == want


@needs_native
@pytest.mark.filterwarnings("ignore::functionalbpe.errors.SmallerVocabularyWarning")  # tiny corpora
@settings(max_examples=25, deadline=None)
@given(corpus=st.lists(BLOCKS_TEXT, min_size=1, max_size=12), text=st.lists(BLOCKS_TEXT, max_size=8).map(" ".join))
def test_encoding_equals_tiktoken_on_many_blocks(corpus, text):
    # Whole texts through the text loop (pieces whole, cut, cached, by backtracking), with a
    # pattern that keeps runs of letters and symbols of any length together.
    tiktoken = pytest.importorskip("tiktoken")
    tok = fb.train(corpus, vocab_size=400, progress=False)
    ranks = {tok.token_bytes(i): i for i in range(tok.vocab_size)}
    enc = tiktoken.Encoding("t", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens={})
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    tok._encoder.native.build_backtracking()  # short pieces by backtracking from here on
    assert tok.encode_ordinary(text * 3) == enc.encode_ordinary(text * 3)


@needs_native
def test_backtracking_is_refused_with_atoms_or_joins():
    with pytest.raises(ValueError, match="atoms or joins"):
        ENCODER.BPE([0xE000], [(97, 98)]).build_backtracking()
    bpe = ENCODER.BPE([], [(97, 98)])
    with pytest.raises(ValueError, match="once built"):
        bpe.merge_symbols([97, 98], 4)
    bpe.build_backtracking()
    assert bpe.merge_symbols([97, 98], 4) == [256]


@needs_native
def test_the_piece_cache_tells_apart_pieces_that_share_their_first_16_bytes():
    # A cached key keeps its first 16 bytes as two words in its slot, half its hash, and
    # only the rest in the cache's bytes (piece_cache.h): pieces equal up to there, of one
    # length or of 16 and 17 bytes, each looked up after all were cached, equal the reference.
    merges = [(97, 97), (256, 256), (98, 99), (120, 98)]
    bpe = ENCODER.BPE([], merges)
    ranks = ranks_from_merges(merges, 256)
    head = "a" * 16
    pieces = [head + "bcx", head + "xbc", head + "xcb", head, head + "b", "a" * 15 + "b", head + "bc" * 40]
    want = [encode_piece(list(p.encode()), ranks) for p in pieces]
    flat = [i for ids in want for i in ids]
    assert bpe.encode_pieces(pieces) == flat
    assert bpe.encode_pieces(pieces[::-1]) == [i for ids in want[::-1] for i in ids]  # from the cache
    assert bpe.encode_pieces(pieces) == flat


@needs_native
@pytest.mark.parametrize("length, count", [(5, 300_000), (200, 40_000)])
def test_a_full_piece_cache_starts_again_and_keeps_the_ids(length, count):
    # A thread's cache holds at most 2**18 pieces, and 16 MB of their bytes after the first
    # 16 and their ids (encode.c, CACHE_MAX_ENTRIES, CACHE_MAX_BYTES): 300,000 pieces of 5
    # letters pass the first, 40,000 of 200 the second, so the cache is emptied and refilled
    # on the way. Every piece is cached (4 bytes or more) and looked up again in the second
    # pass, partly from the refilled cache; both passes equal the reference on a sample.
    merges = [(97, 98), (256, 99), (100, 101), (258, 97), (257, 259), (102, 102), (261, 261)]
    bpe = ENCODER.BPE([], merges)
    ranks = ranks_from_merges(merges, 256)
    rng = random.Random(length)
    letters = "abcdefghijklmnop"  # the digits of 3 * k in base 16, the word repeated to the length

    def piece(k: int) -> str:
        word = "".join(letters[(3 * k) >> (4 * d) & 15] for d in range(5))
        return (word * 40)[:length]

    pieces = [piece(k) for k in range(count)]
    assert len(set(pieces)) == count
    first = [bpe.encode_pieces([p]) for p in pieces]
    assert [bpe.encode_pieces([p]) for p in pieces] == first
    ends = list(range(1000)) + list(range(count - 1000, count))
    for k in rng.sample(range(count), 2000) + ends:
        assert first[k] == encode_piece(list(pieces[k].encode()), ranks), pieces[k]


@needs_native
def test_a_token_is_taken_whole_only_if_its_merges_make_it():
    # "abc" is a token (a, bc), but "ab" merges first, so BPE never makes it from "abc".
    merges = [(97, 98), (98, 99), (97, 257)]
    bpe = ENCODER.BPE([], merges)
    assert bpe.whole_token(b"ab") == 256 and bpe.whole_token(b"abc") is None
    assert bpe.num_self_encoding == 2 and not bpe.all_self_encoding
    assert encode_piece(list(b"abc"), ranks_from_merges(merges, 256)) == [256, 99]
    assert bpe.encode_pieces(["abc", "abc"]) == [256, 99, 256, 99]
    assert bpe.encode_pieces(["abcabc", "abcabc"]) == [256, 99, 256, 99] * 2  # then cached


@needs_native
def test_a_piece_as_long_as_the_longest_token_is_looked_up_and_a_longer_one_is_merged(tmp_path):
    # A piece longer than every token and than the cache keeps is not keyed (encode_part);
    # the longest token must still be found whole where tiktoken takes a piece whole. Its
    # 300 bytes, "b" * 150 + "c" * 150, are no merge's result: "bc" merges first.
    ranks = {bytes([i]): i for i in range(256)}
    ranks[b"bc"] = len(ranks)
    for c in b"bc":
        for k in (2, 4, 8, 16, 32, 64, 128, 144, 148, 150):
            ranks[bytes([c]) * k] = len(ranks)
    longest = b"b" * 150 + b"c" * 150
    ranks[longest] = len(ranks)
    path = tmp_path / "long.tiktoken"
    write_ranks(path, ranks)
    pattern = r"\p{L}+| +|[^\p{L} ]+"
    tok = fb.Tokenizer.from_tiktoken(path, pattern=pattern)
    whole, longer = longest.decode(), longest.decode() + "c"
    assert tok.encode_ordinary(whole) == [ranks[longest]]
    assert ranks[b"bc"] in tok.encode_ordinary(longer) and ranks[longest] not in tok.encode_ordinary(longer)
    text = f"ab {whole} cd {longer} {whole}"
    assert tok.encode_ordinary(text).count(ranks[longest]) == 2
    tiktoken = pytest.importorskip("tiktoken")
    enc = tiktoken.Encoding("long", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


@needs_native
@settings(max_examples=200, deadline=None)
@given(merge_tables(symbols=4, max_merges=60))
def test_whole_tokens_are_those_whose_bytes_encode_to_them(table):
    # The table is built from the merge trees (encode.c, whole_tokens_by_trees): it must
    # hold exactly the tokens that the reference encodes back to themselves.
    merges, _ = table
    bpe = ENCODER.BPE([], merges)
    ranks = ranks_from_merges(merges, 256)
    token = [bytes([i]) for i in range(256)]
    for a, b in merges:
        token.append(token[a] + token[b])
    for i in range(256, 256 + len(merges)):
        itself = encode_piece(list(token[i]), ranks) == [i]
        assert (bpe.whole_token(token[i]) == i) == itself, (i, token[i])


def test_encoder_matches_reference_on_pieces(tok):
    enc = Encoder(tok.alphabet)
    ranks = ranks_from_merges(tok.alphabet.merges, tok.alphabet.first_merge)
    pieces = fb.pretokenize("".join(stdlib_text(30_000)) + MULTILINGUAL)
    assert enc.encode_pieces(pieces) == [i for p in pieces for i in encode_piece(tok.alphabet.symbols(p), ranks)]


@given(tricky_text)
def test_encode_equals_reference(tok, text):
    assert tok.encode_ordinary(text) == reference_ids(tok, text)


def test_encode_equals_reference_on_real_text(tok, corpora):
    from ..conftest import read_corpus

    for name in ["nl/en.txt", "nl/ru.txt", "nl/ja.txt", "nl/zh-CN.txt", "nl/ar.txt", "code/go.txt"]:
        text = read_corpus(corpora / name, 20_000)
        assert tok.encode_ordinary(text) == reference_ids(tok, text), name


# -- schemes with atoms ---------------------------------------------------------------------

CAP, SPACE, UP = "\ue000", "\ue001", "\ue002"


class CaseScheme(Scheme):
    """A small scheme with atoms of three kinds, standing in for the real ones in tests:
    a capital letter becomes CAP + its lower case (an operator), a single space between
    words becomes a boundary atom, an all-caps word gets UP (a shift code) in front."""

    name = "case-test"
    atoms = (
        Atom(CAP, "CAPITALIZE", OPERATOR, "^"),
        Atom(SPACE, "BOUNDARY", BOUNDARY, "¦"),
        Atom(UP, "UPPER", SHIFT, "⇑"),
    )

    def options(self) -> Dict[str, Any]:
        return {}

    def raw_pieces(self, text: str) -> List[str]:
        return fb.pretokenize(self.prepare(text), self.pattern)

    def piece_forms(self, piece: str) -> Tuple[str, ...]:
        form = "".join(CAP + c.lower() if _capital(c) else c for c in piece)
        return (form.replace(" ", SPACE) if form.startswith(" ") and len(form) > 1 else form,)

    def decode(self, text: str, errors: str = "strict") -> str:
        out, i = [], 0
        while i < len(text):
            if text[i] == CAP and i + 1 < len(text):
                out.append(text[i + 1].upper())
                i += 2
            else:
                out.append(" " if text[i] == SPACE else text[i])
                i += 1
        return "".join(out)

    def decodable_prefix(self, text: str) -> int:
        # CAP acts on the next character: hold back a CAP still waiting for it (a CAP that is
        # itself the character after a CAP is already settled, as decode reads it).
        i = 0
        while i < len(text):
            if text[i] == CAP:
                if i + 1 == len(text):
                    return i
                i += 2
            else:
                i += 1
        return len(text)


def _capital(c: str) -> bool:
    return c.isupper() and len(c.lower()) == 1 and c.lower().upper() == c


@pytest.mark.parametrize("policy", ["atomic", "prefix", "free"])
def test_atoms_encode_as_the_reference_for_every_policy(policy):
    docs = stdlib_text(40_000) + ["Hello World HELLO world Über ÉCOLE"] * 20
    scheme = CaseScheme(pattern="gpt2")
    tok = fb.train(docs, vocab_size=256 + 3 + 300, scheme=scheme, merge_policy=policy, progress=False)
    assert any(tok.alphabet.is_atom(t) for m in tok.alphabet.merges for t in m)  # atoms do merge
    text = "".join(stdlib_text(20_000)) + " Hello World \ue000 \ue001"
    assert tok.encode_ordinary(text) == reference_ids(tok, text)
    if ENCODER is not None:
        assert ENCODER.BPE([ord(a.char) for a in scheme.atoms], tok.alphabet.merges).all_self_encoding


def test_real_schemes_encode_as_the_reference():
    from functionalbpe.schemes.registry import SCHEMES, scheme_class

    for name in SCHEMES:
        try:
            scheme_class(name)
        except fb.FunctionalBPEError:
            continue  # that scheme has not landed in this tree
        docs = stdlib_text(8_000) + [MULTILINGUAL * 3]
        size = 256 + len(fb.make_scheme(name).atoms) + 120
        for policy in ["atomic", "prefix", "free"]:
            tok = fb.train(docs, vocab_size=size, scheme=name, merge_policy=policy, progress=False)
            text = "".join(stdlib_text(5_000)) + MULTILINGUAL
            assert tok.encode_ordinary(text) == reference_ids(tok, text), (name, policy)
            assert tok.decode(tok.encode_ordinary(text)) == text


# -- hostile inputs -------------------------------------------------------------------------


@pytest.mark.parametrize("unit", ["^", "0", "a", "'s", " ", "\n", "\r\n", "ab", " x"])
def test_ten_thousand_copies(tok, unit):
    text = unit * 10_000
    ids = tok.encode_ordinary(text)
    assert ids == reference_ids(tok, text)
    assert tok.decode(ids) == text


def test_a_million_x_and_a_megabyte_of_spaces(tok):
    for text in ["x" * 1_000_000, " " * 1_000_000, "\n" + " " * 999_999 + "x"]:
        ids = tok.encode_ordinary(text)
        assert tok.decode(ids) == text
        assert ids == reference_ids(tok, text)


def test_long_pieces_of_real_text(tok):
    # One piece of a few hundred kilobytes of letters: the sweep, not the runs.
    rng = random.Random(0)
    words = [w for w in "".join(stdlib_text(50_000)).split() if w.isalpha()]
    text = "".join(rng.choice(words) for _ in range(3_000))
    assert tok.encode_ordinary(text) == reference_ids(tok, text)


# -- batches, threads, pickling --------------------------------------------------------------


def test_encode_batch_equals_encode(tok):
    docs = stdlib_text(400_000) + [MULTILINGUAL, "", "a<|endoftext|>b", "<|endoftext|>"]
    want = [tok.encode(d, allowed_special="all") for d in docs]
    for threads in [1, 2, None]:
        assert tok.encode_batch(docs, num_threads=threads, allowed_special="all") == want
    ordinary = [tok.encode_ordinary(d) for d in docs]
    assert tok.encode_batch(docs, disallowed_special=()) == ordinary
    with pytest.raises(fb.SpecialTokenError, match="endoftext"):
        tok.encode_batch(docs)
    plain = docs[:-2] + ["a\ud800b"]  # a lone surrogate reads as U+FFFD, as in encode
    assert tok.encode_batch(plain, threads=2) == [tok.encode(d) for d in plain]


def test_threads_share_a_tokenizer(tok):
    docs = stdlib_text(300_000)
    want = [tok.encode(d) for d in docs]
    start = threading.Barrier(4)

    def work(seed: int) -> List[List[int]]:
        order = list(range(len(docs)))
        random.Random(seed).shuffle(order)  # each thread in its own order: caches churn
        start.wait()
        got = {k: tok.encode(docs[k]) for k in order}
        return [got[k] for k in range(len(docs))]

    with ThreadPoolExecutor(4) as pool:
        for got in pool.map(work, range(4)):
            assert got == want


def test_pickled_tokenizer_encodes_the_same(tok):
    again = pickle.loads(pickle.dumps(tok))
    text = "".join(stdlib_text(50_000)) + MULTILINGUAL
    assert again.encode_ordinary(text) == tok.encode_ordinary(text)
    assert again == tok


def test_lone_surrogates_read_as_replacement_characters(tok):
    assert tok.encode("a\ud800b") == tok.encode("a\ufffdb")
    assert tok.encode_batch(["x\udfff"]) == [tok.encode("x\ufffd")]
    assert tok.count_tokens("\ud800") == len(tok.encode("\ufffd"))


# A str is stored 1, 2 or 4 bytes a character; C writes its UTF-8 sixteen or eight ASCII
# characters at a time, eight units below U+0800 in any mix at a time, eight of the Basic
# Multilingual Plane in any mix (three-byte ones among them), four two-byte or three-byte
# ones, and the rest one by one, so runs of ASCII that start and end anywhere in those
# blocks, beside characters of every UTF-8 length, of each width.
WIDTHS = ["a", "ab cd ", "0123456", "é", "ÿ", "Ā", "中", "\uffff", "😀", "\U0010ffff", " ", "\n",
          "дом", "\u07ff\u0080", "中文字符", "\u0800\ud7ff\ue000", "Привет, мир", "السلام "]


@settings(max_examples=200)
@given(st.lists(st.sampled_from(WIDTHS), max_size=40).map("".join))
def test_text_of_every_width_encodes_as_the_reference(tok, text):
    assert tok.encode_ordinary(text) == reference_ids(tok, text)
    assert tok.decode_bytes(tok.encode_ordinary(text)) == text.encode("utf-8")


@settings(max_examples=100)
@given(st.lists(st.sampled_from(WIDTHS), max_size=40).map("".join))
def test_mostly_ascii_text_of_every_width_encodes_as_the_reference(tok, text):
    # Three quarters ASCII: C writes the UTF-8 of the str's buffer on the calling thread too.
    text = "plain words, " * 80 + text + " end"
    assert tok.encode_ordinary(text, threads=1) == reference_ids(tok, text)


def read_as_tiktoken(text: str) -> str:
    """A lone surrogate as U+FFFD, a high one before a low one as the character they make."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


@settings(max_examples=100)
@given(st.lists(st.sampled_from(WIDTHS + ["\ud800", "\udfff", "\ud83d\ude00", "\ud83d"]),
                max_size=40).map("".join))
def test_surrogates_among_every_width_read_as_tiktoken_reads_them(tok, text):
    # A block of eight units that holds a surrogate is refused and written one by one.
    for whole in (text, "plain words, " * 80 + text, text + "🡆" + text):
        assert tok.encode_ordinary(whole, threads=1) == tok.encode_ordinary(read_as_tiktoken(whole), threads=1)


# A str of Latin-1 alone is one byte a character: C writes its UTF-8 sixteen at a time, as
# they are where all are ASCII, else each half of eight through one shuffle, and the last
# fifteen or fewer one by one. With one character beyond U+FFFF (an arrow) the same text is
# four bytes a character: eight units below U+0800 through the shuffle, eight of the Basic
# Multilingual Plane through the other, four of three bytes together, the rest one by one;
# written by C where at most one unit in sixteen is beyond U+FFFF, else by str.encode.
LATIN1 = ["a", "ab cd ", "0123456789abcde", "é", "ÿ", "\x80", "\xa0", " ", "\n", "Ü", "ß straße "]
WIDE = ["ō", "дом ", "\u07ff", "\u0800", "中文字", "\ud7ff\ue000\uffff"]


@settings(max_examples=200)
@given(st.lists(st.sampled_from(LATIN1), max_size=60).map("".join),
       st.lists(st.sampled_from(LATIN1 + WIDE), max_size=60).map("".join))
def test_latin1_and_wide_text_encodes_as_the_reference(tok, text, wide):
    # the first three quarters ASCII (written by C on the calling thread), then as it is
    for whole in ("plain words, " * 80 + text + " end", text, text + "🡆", "🡆" + wide + text):
        assert tok.encode_ordinary(whole, threads=1) == reference_ids(tok, whole)
        assert tok.decode_bytes(tok.encode_ordinary(whole, threads=1)) == whole.encode("utf-8")


@pytest.mark.parametrize("arrow", ["", "🡆"])
def test_long_latin1_text_on_two_threads(tok, arrow):
    # The workers write each unit's UTF-8 whatever its mix.
    rng = random.Random(7)
    words = ["Größe ", "naïve ", "façade ", "\xa0", "ÿ", "plain ", "é\n", "Ős "[: 3 if arrow else 0]]
    text = "".join(rng.choice(words) for _ in range(120_000)) + arrow
    ids = tok.encode_ordinary(text, threads=2)
    assert ids == tok.encode_ordinary(text, threads=1)
    assert tok.decode_bytes(ids) == text.encode("utf-8")


@pytest.mark.parametrize("threads", [1, 2])
def test_a_surrogate_among_cjk_reads_as_a_replacement_character(tok, threads):
    # UCS-2 is written four three-byte characters at a time where none is a surrogate
    text = "plain words, " * 20_000 + "中文\ud800字符中文字符" + "\udfff中文字" * 3
    assert tok.encode_ordinary(text, threads=threads) == tok.encode_ordinary(
        text.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd"), threads=1)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_surrogate_among_two_byte_letters_reads_as_a_replacement_character(tok, threads):
    # below U+0800 UCS-2 is written eight units at a time; a surrogate ends such a block
    text = "plain words, " * 20_000 + "слово \ud800слово" + "\udfffдом и сад" * 3
    assert tok.encode_ordinary(text, threads=threads) == tok.encode_ordinary(
        text.replace("\ud800", "\ufffd").replace("\udfff", "\ufffd"), threads=1)
    short = "Привет, мир " * 3 + "\ud800"
    assert tok.encode_ordinary(short, threads=1) == tok.encode_ordinary(short[:-1] + "\ufffd")


LONG_WORDS = ["internationalization", "counterrevolutionaries", "electroencephalographs",
              "characteristically", "中华人民共和国国务院"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(LONG_WORDS + [" ", "a", "\n", "internationali", "國務院"]),
                max_size=30).map("".join))
def test_pieces_of_more_than_16_bytes_that_are_tokens_are_found(long_tok, text):
    # A piece longer than a key's 16 inline bytes is looked up among the whole tokens only
    # where a bit table of those tokens' hashes has its bit (encode.c, "long tokens").
    assert long_tok.encode_ordinary(text) == reference_ids(long_tok, text)


@pytest.fixture(scope="module")
def long_tok() -> fb.Tokenizer:
    return fb.train([" ".join(LONG_WORDS * 200)], vocab_size=256 + 92, progress=False)


@needs_native
def test_tokens_of_more_than_16_bytes_are_whole_tokens(long_tok):
    merges = long_tok.alphabet.merges
    bpe = ENCODER.BPE([], merges)
    token = [bytes([i]) for i in range(256)]
    for a, b in merges:
        token.append(token[a] + token[b])
    long = [i for i in range(256, len(token)) if len(token[i]) > 16]
    assert len(long) >= len(LONG_WORDS)  # the training made a token of every long word
    for i in long:
        assert bpe.whole_token(token[i]) == i, (i, token[i])
        assert bpe.whole_token(token[i] + b"s") is None and bpe.whole_token(token[i][1:] + b"!") is None


def test_count_tokens(tok):
    text = "".join(stdlib_text(20_000)) + "<|endoftext|>" + MULTILINGUAL
    assert tok.count_tokens(text) == len(tok.encode_ordinary(text))
    assert tok.count_tokens(text, allowed_special="all") == len(tok.encode(text, allowed_special="all"))
    assert tok.count_tokens("") == 0


@needs_native
def test_scanner_and_regex_pieces_give_the_same_ids(tok):
    if tok._encoder.scanner is None:
        pytest.skip("this build has no C scanner")
    text = "".join(stdlib_text(100_000)) + MULTILINGUAL * 10
    assert ENCODER.BPE([], tok.alphabet.merges).encode_pieces(fb.pretokenize(text)) == tok.encode_ordinary(text)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork on this platform")
def test_batches_work_in_a_forked_child(tok):
    import os

    docs = stdlib_text(600_000)  # enough for the worker threads
    want = tok.encode_batch(docs)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's worker threads do not exist here
        ok = tok.encode_batch(docs) == want
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.close(write)
    answer = os.read(read, 1)
    os.waitpid(pid, 0)
    assert answer == b"1"
