"""One long text on several threads: cut at safe places, the units encoded on the workers.

The property: ``encode(text, threads=k)`` is ``encode(text, threads=1)`` for every k, every
scheme and pattern, on random merge tables, hypothesis text and hostile text, and equals
tiktoken's ids where tiktoken is installed. The size thresholds are made tiny here, so that
short texts are cut into many units and every cut is exercised.
"""
from __future__ import annotations

import gzip
import random
import string
from pathlib import Path
from typing import List, Optional

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import functionalbpe as fb
from functionalbpe.core._native import NATIVE
from functionalbpe.text.patterns import PATTERNS

from ..conftest import read_corpus
from ..helpers import stdlib_text, tricky_text
from .test_encoder import MULTILINGUAL, reference_ids

ENCODER = NATIVE.encoder
needs_native = pytest.mark.skipif(ENCODER is None, reason="the compiled encoder is not built (or pure Python is forced)")

# Text that offers safe cuts often (a line end after a non-space, ASCII punctuation after a
# letter), between the hostile units of the encoder's tests.
CUT_UNITS = ["a.\nb", "x,", "word(", "\n", ". ", "é;", "東京\n", "  \n", "'s", "0123", "\r\n"]
cut_text = st.lists(st.one_of(st.sampled_from(CUT_UNITS), tricky_text), max_size=40).map("".join)


@pytest.fixture
def tiny_units(monkeypatch):
    """Units of a few bytes: any text over 64 bytes is cut wherever a cut is safe."""
    if ENCODER is None:
        pytest.skip("the compiled encoder is not built")
    monkeypatch.setattr(ENCODER, "PARALLEL_TEXT_BYTES", 64)
    monkeypatch.setattr(ENCODER, "TEXT_UNIT_MIN_BYTES", 8)
    monkeypatch.setattr(ENCODER, "UNITS_PER_THREAD", 64)
    monkeypatch.setattr(ENCODER, "CUT_WINDOW", 32)
    monkeypatch.setattr(ENCODER, "INTS_PARALLEL_MIN_IDS", 1)  # the list's ints put by the workers too


def units_of(tok: fb.Tokenizer, text: str, threads: int) -> int:
    """How many units the encoder cuts ``text`` into (1: it stays on one thread)."""
    encoder = tok._encoder
    if encoder.scanner is None:
        return 1
    batch = encoder.native._text_units(text, encoder.scanner, threads)
    return 1 if batch is None else batch.num_units


def random_tokenizer(seed: int, scheme: str = "plain", pattern: Optional[str] = "gpt4", merges: int = 150) -> fb.Tokenizer:
    """A tokenizer trained on random text over a small alphabet (so that long tokens, runs and
    odd merges come up), mixed with real text."""
    rng = random.Random(seed)
    alphabet = "aab \n.,é東京" + string.digits[:3]
    docs = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(20, 200))) for _ in range(60)]
    docs += stdlib_text(4_000) + [MULTILINGUAL]
    size = 256 + len(fb.make_scheme(scheme).atoms) + merges
    return fb.train(docs, vocab_size=size, scheme=scheme, pattern=pattern, progress=False)


@pytest.fixture(scope="module")
def toks() -> List[fb.Tokenizer]:
    out = [random_tokenizer(seed, pattern=pattern) for seed, pattern in enumerate(PATTERNS)]
    out += [random_tokenizer(10, scheme="functional"), random_tokenizer(11, scheme="markers", pattern=None)]
    return out


@needs_native
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=cut_text, threads=st.sampled_from([2, 3, 8]))
def test_any_thread_count_gives_the_ids_of_one_thread(toks, tiny_units, text, threads):
    for tok in toks:
        one = tok.encode_ordinary(text, threads=1)
        assert tok.encode_ordinary(text, threads=threads) == one, tok
        assert tok.encode(text, threads=threads, disallowed_special=()) == one
        assert tok.count_tokens(text) == len(one)


@needs_native
def test_units_equal_the_reference_on_real_and_hostile_text(toks, tiny_units):
    every_block = "".join(chr(cp) + (".\n" if k % 7 == 0 else " ")
                          for k, cp in enumerate(range(0x20, 0x30000, 97)) if not 0xD800 <= cp < 0xE000)
    texts = [
        "".join(stdlib_text(20_000)) + MULTILINGUAL,
        every_block,
        "x" * 5_000 + ".\n" + " " * 5_000 + "a.\nb" * 2_000,
        "a" * 3_000 + ",\n" * 3_000 + "東京。" * 1_000,
        ("'s\n" * 500) + ("0" * 2_000) + ("^\n" * 500),
    ]
    for tok in toks:
        for text in texts:
            want = reference_ids(tok, tok.scheme.prepare(text))
            assert tok.encode_ordinary(text, threads=1) == want
            assert tok.encode_ordinary(text, threads=4) == want, tok
            if tok.scheme.name == "plain":
                assert units_of(tok, text, 4) > 1  # the text was cut: the path was taken


# Characters of each str width and UTF-8 length around the places the cut rules look at.
CUT_CHARS = ["a", "Z", ".", ",", "/", "'", "_", "\n", " ", "\t", "\u00a0", "\u00e9", "\u044b", "\u4e2d",
             "\U0001f600", "\u0301", "7", "\ud800", "\udc00"]


@needs_native
@settings(max_examples=300)
@given(st.lists(st.sampled_from(CUT_CHARS), max_size=30).map("".join))
def test_a_str_is_cut_where_its_utf8_is(text):
    # safe_cut_text (in characters, before the UTF-8 exists) takes the cuts safe_cut takes
    # in the UTF-8, except beside a surrogate (before or after the cut, or before its \n).
    from functionalbpe import _scanner

    clean = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    data = clean.encode("utf-8")
    if len(clean) != len(text):  # a pair of surrogates became one character: no comparison
        return
    surrogate = [0xD800 <= ord(c) < 0xE000 for c in text]

    def utf8_cut(c: int) -> bool:  # safe_cut cuts the UTF-8 where character c starts
        b = len(clean[:c].encode("utf-8"))
        return _scanner.safe_cut(data, b - 1, b) == b

    for hi in range(len(text) + 1):
        got = _scanner.safe_cut_text(text, 0, hi)
        want = next((c for c in range(hi, 1, -1)
                     if c < len(text) and not any(surrogate[c - 1:c + 1]) and utf8_cut(c)
                     and not (text[c - 1] == "\n" and surrogate[c - 2])), 0)
        assert got == want, (text, hi)


@needs_native
def test_the_markers_scheme_and_joined_runs_stay_on_one_thread(toks, tiny_units):
    text = "".join(stdlib_text(5_000))
    for tok in toks:
        if tok.scheme.name != "plain":
            assert units_of(tok, text, 4) == 1


@needs_native
def test_a_lone_surrogate_and_special_tokens_in_a_long_text(tiny_units):
    tok = fb.train(stdlib_text(30_000), vocab_size=400, special_tokens=["<|e|>"], progress=False)
    text = "".join(stdlib_text(10_000))
    with_special = text + "<|e|>" + text
    want = tok.encode(with_special, allowed_special="all", threads=1)
    assert tok.encode(with_special, allowed_special="all", threads=3) == want
    odd = text + "a\ud800b" + text
    assert tok.encode_ordinary(odd, threads=3) == tok.encode_ordinary(odd.replace("\ud800", "\ufffd"), threads=1)
    pair = (text + "\ud83d\ude00.\n") * 3  # a surrogate pair: the character it encodes
    assert tok.encode_ordinary(pair, threads=3) == tok.encode_ordinary(pair.replace("\ud83d\ude00", "\U0001f600"), threads=1)
    with pytest.raises(fb.FunctionalBPEError):
        tok.encode_ordinary(text, threads=0)


@needs_native
def test_the_ints_put_by_the_workers_hold_one_reference_per_id(tiny_units):
    # The workers put each id's int in the list and count it; the references are then taken
    # as one addition per int (_TextBatch.ints_on_workers). Ids over 256 have ints of their
    # own (smaller ones are CPython's shared small ints, which anything may reference).
    import sys

    tok = random_tokenizer(3)
    text = "".join(stdlib_text(6_000)) + MULTILINGUAL
    assert units_of(tok, text, 3) > 3
    one = tok.encode_ordinary(text, threads=1)
    ints = sorted({i for i in one if i > 256})
    assert len(ints) > 20
    before = [sys.getrefcount(i) for i in ints]
    three = tok.encode_ordinary(text, threads=3)
    assert three == one
    gained = [sys.getrefcount(i) for i in ints]
    assert [g - b for g, b in zip(gained, before)] == [three.count(i) for i in ints]
    del three
    assert [sys.getrefcount(i) for i in ints] == before


@needs_native
def test_the_lists_of_a_batch_filled_by_the_workers(tiny_units):
    # encode_batch's lists are made on the calling thread and their ints put by the workers
    # (_TextBatch.lists_on_workers), units taken several at a time: the same lists as one
    # thread, empty texts included, and one reference per id.
    import sys

    tok = random_tokenizer(4)
    lines = "".join(stdlib_text(60_000)).splitlines()
    texts = ["", *lines, "", MULTILINGUAL, "a", ""]
    assert len(texts) > 2 * 3 * 64  # so that a worker takes several units at a time
    one = tok.encode_batch(texts, threads=1)
    assert one == [tok.encode_ordinary(t, threads=1) for t in texts]
    ints = sorted({i for ids in one for i in ids if i > 256})
    assert len(ints) > 20
    want = [sum(ids.count(i) for ids in one) for i in ints]
    before = [sys.getrefcount(i) for i in ints]
    three = tok.encode_batch(texts, threads=3)
    gained = [sys.getrefcount(i) for i in ints]
    assert three == one
    assert [g - b for g, b in zip(gained, before)] == want
    del three
    assert [sys.getrefcount(i) for i in ints] == before


@needs_native
def test_calls_from_several_threads_at_once_share_the_workers(tiny_units, monkeypatch):
    # The worker threads serve one call at a time (csrc/lib/common/workers.c); a call made while
    # another has them runs on its own thread. Four threads each make such calls at once.
    import threading
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(ENCODER, "PARALLEL_MIN_BYTES", 64)
    tok = fb.train(stdlib_text(30_000), vocab_size=400, progress=False)
    texts = ["".join(stdlib_text(3_000 + 500 * k)) + MULTILINGUAL for k in range(4)]
    want = [tok.encode_ordinary(t, threads=1) for t in texts]
    docs = stdlib_text(4_000)
    want_docs = [tok.encode_ordinary(d, threads=1) for d in docs]
    start = threading.Barrier(4)

    def work(k: int) -> bool:
        start.wait()
        ok = True
        for _ in range(5):
            ok &= tok.encode_ordinary(texts[k], threads=2 + k) == want[k]
            ok &= tok.encode_batch(docs, threads=3) == want_docs
        return ok

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(4)))


@needs_native
def test_the_threads_of_a_call_share_one_cache(tiny_units):
    if not ENCODER.file_pipeline_available():
        pytest.skip("no C worker threads here: each Python thread of a call takes its own cache")
    # Words of 5-9 letters (not tokens of 150 merges: each is merged, then cached), each
    # twice, far apart, so that two threads meet most of them.
    rng = random.Random(5)
    words = sorted({"".join(rng.choice("abcdefghij") for _ in range(rng.randrange(5, 10))) for _ in range(24_000)})
    half = "".join(f" {w}.\n" for w in words)
    text = half + "".join(f" {w}.\n" for w in reversed(words))
    tok = random_tokenizer(3)
    bpe = tok._encoder.native
    want = reference_ids(tok, text)
    # The first call's room (a piece in 128 bytes) is spent long before the end: the pieces
    # it has no room for are merged again where they recur, the ids the same.
    assert tok.encode_ordinary(text, threads=4) == want
    first, pooled = bpe.cache_counts()
    assert 0 < first < len(words)
    assert pooled == 0  # no thread of the call took a cache of its own
    # The next call makes room for what the first could not keep (counting the pieces it
    # found no room for, not only those it kept, which made too little).
    assert tok.encode_ordinary(text, threads=4) == want
    held = bpe.cache_counts()[0]
    assert held >= len(words)
    # Every piece is there, whichever thread met it: a call on one thread adds nothing, nor
    # do the threads of another call.
    assert tok.encode_ordinary(text, threads=1) == want
    assert tok.encode_ordinary(half, threads=3) == reference_ids(tok, half)
    assert bpe.cache_counts() == (held, 0)
    assert units_of(tok, text, 4) > 1  # (which encodes it once more)


def test_threads_default_and_one_on_the_real_thresholds(corpora):
    """The default thresholds, on a real language mix: the same ids on any thread count."""
    tok = fb.train(stdlib_text(60_000), vocab_size=600, progress=False)
    text = "".join(read_corpus(p, 60_000) for p in sorted((corpora / "nl").glob("*.txt"))[:8])
    want = tok.encode_ordinary(text, threads=1)
    assert tok.encode_ordinary(text) == want
    assert tok.encode_ordinary(text, threads=2) == want
    assert tok.decode(want) == text


def _rank_file(name: str, tmp_path: Path) -> Path:
    """A rank file shipped in bpe-openai's wheel (gzipped), unpacked; skip without it."""
    bpe_openai = pytest.importorskip("bpe_openai")
    path = Path(bpe_openai.__file__).parent / "data" / f"{name}.tiktoken.gz"
    if not path.is_file():
        pytest.skip(f"{path} is not in this bpe-openai")
    out = tmp_path / f"{name}.tiktoken"
    out.write_bytes(gzip.decompress(path.read_bytes()))
    return out


def _with_tiktoken(name, pattern, tmp_path):
    """A production vocabulary imported here, and tiktoken's Encoding of the same ranks."""
    tiktoken = pytest.importorskip("tiktoken")
    tok = fb.Tokenizer.from_tiktoken(_rank_file(name, tmp_path), pattern=pattern)
    enc = tok.as_tiktoken_encoding()
    assert isinstance(enc, tiktoken.Encoding)
    return tok, enc


@needs_native  # the pure-Python path has no worker threads; its ids are tiktoken's in test_real_vocabularies
@pytest.mark.parametrize("name, pattern", [("cl100k_base", "gpt4"), ("o200k_base", "o200k")])
def test_production_vocabularies_on_threads_equal_tiktoken(name, pattern, corpora, tmp_path):
    tok, enc = _with_tiktoken(name, pattern, tmp_path)
    for lang in ["en", "zh-CN", "ru"]:
        text = read_corpus(corpora / "nl" / f"{lang}.txt", 300_000)
        want = enc.encode_ordinary(text)
        assert tok.encode_ordinary(text, threads=1) == want, lang
        assert tok.encode_ordinary(text, threads=2) == want, lang


@pytest.mark.slow
@pytest.mark.parametrize("name, pattern", [("cl100k_base", "gpt4"), ("o200k_base", "o200k")])
def test_backtracking_encoder_equals_tiktoken_on_production_vocabularies(name, pattern, corpora, tmp_path):
    # The backtracking encoder (csrc/lib/encode/encode.c) on every piece of real text in five
    # scripts and on long runs: the ids tiktoken gives.
    tok, enc = _with_tiktoken(name, pattern, tmp_path)
    bpe = tok._encoder.native
    if bpe is None:
        pytest.skip("the compiled encoder is not built (or pure Python is forced)")
    bpe.build_backtracking()
    pieces = set()
    for lang in ["en", "zh-CN", "ja", "ru", "ar"]:
        pieces.update(fb.pretokenize(read_corpus(corpora / "nl" / f"{lang}.txt", 50_000), pattern=pattern))
    pieces.update(["x" * 5000, " " * 3000, "ab" * 2000, "中" * 1000, "7" * 3])
    for piece in sorted(pieces):
        assert bpe.merge_symbols(list(piece.encode()), 4) == enc.encode_ordinary(piece), piece


# -- the o200k scanner's short paths for words -------------------------------------------------

# What may follow the capitals or the lower-case run of an ASCII word: a letter of each
# category o200k tells apart (Lu Ll Lt Lm Lo), marks, a contraction, digits, the end.
AFTER_WORD = ["", "a", "Z", "\u00e9", "\u00c9", "\u01c5", "\u02b0", "\u4e2d", "\u0301", "\u0903",
              "'s", "'S", "'ll", "'x", "1", " ", "\n", ".", "/", "_", "\u00a0", "\ud800"]
# ASCII letters of both cases, and non-ASCII ones of each class the short paths tell apart:
# Ll only (Cyrillic, Greek, accented Latin), Lu only, Lt, Lm, Lo (in U and W both), marks.
WORD_LETTERS = list("aAzZbY") + ["\u044b", "\u042b", "\u00e9", "\u00c9", "\u03c9", "\u03a9", "\u0301",
                                 "\u01c5", "\u02b0", "\u4e2d", "\u00df"]
BEFORE_WORD = ["", " ", "(", "\t", "\n", "\r", "1", "'", "\u0301", "\u00a0", "\u3000", "\u00e9"]


@needs_native
@given(st.lists(st.tuples(st.sampled_from(BEFORE_WORD),
                          st.text(st.sampled_from(WORD_LETTERS), min_size=1, max_size=12),
                          st.sampled_from(AFTER_WORD)), max_size=12))
def test_o200k_short_paths_equal_regex(words):
    import regex

    text = "".join(a + w + b for a, w, b in words)
    assert NATIVE.scanner.scan(text, "o200k") == regex.findall(PATTERNS["o200k"], text)


# -- a batch's ids laid out flat by its workers (csrc/lib/encode/pack.h) -----------------------

@needs_native
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(units=st.lists(cut_text, min_size=1, max_size=40), ends=st.data(), width=st.sampled_from([2, 4]),
       eot=st.sampled_from([-1, 7, 300]), permuted=st.booleans())
def test_the_workers_lay_out_the_ids_as_one_thread_would(monkeypatch, units, ends, width, eot, permuted):
    """Token-file bytes (eot after the units that end a document, each id as its output id,
    2 or 4 bytes little-endian) laid out on 3 threads from the first id: the bytes that
    encoding each unit alone gives, in order."""
    monkeypatch.setattr(ENCODER, "PACK_PARALLEL_MIN_IDS", 1)
    monkeypatch.setattr(ENCODER, "PARALLEL_MIN_BYTES", 1)
    merges = [(32, 116), (104, 101), (256, 257), (97, 110), (258, 97)]
    size = 256 + len(merges)
    output = list(range(size))
    if permuted:  # an imported vocabulary: every id written as another
        random.Random(size).shuffle(output)
    bpe = ENCODER.BPE([], merges, ["<|e|>"], output_ids=output)
    last = [ends.draw(st.booleans()) for _ in units]
    data = [u.encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode() for u in units]
    buffer = b"".join(data)
    import numpy as np
    cuts = np.cumsum([len(d) for d in data], dtype=np.uint64)
    flags = np.array(last, dtype=np.uint8)
    got, counts = bpe.encode_buffer_packed(buffer, cuts, flags, "gpt2", 3, width, eot)
    expected = bytearray()
    for text, ends_here in zip(data, last):
        for i in bpe.encode_texts([text.decode()], "gpt2", 1)[0] + ([eot] if eot >= 0 and ends_here else []):
            expected += i.to_bytes(width, "little")
    assert got == bytes(expected)
    assert counts.tolist() == [len(bpe.encode_texts([t.decode()], "gpt2", 1)[0]) for t in data]
    one, _ = bpe.encode_buffer_packed(buffer, cuts, flags, "gpt2", 1, width, eot)
    assert one == got
