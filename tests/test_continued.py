"""Growing a vocabulary: continued training from any BPE tokenizer, and superwords.

The lesson (``core/reference.resume``), the heap trainer and the C loop give the same new
merges; a continued tokenizer keeps every id of its base; superwords are continued training
with SuperBPE's second-stage pattern.
"""
from __future__ import annotations

import random
from array import array

import regex
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

import functionalbpe as fb
from functionalbpe.core import reference, trainer
from functionalbpe.core._native import NATIVE
from functionalbpe.core.alphabet import Alphabet
from functionalbpe.core.bpe import encode_piece, ranks_from_merges
from functionalbpe.core.encoder import Encoder
from functionalbpe.core.piecetable import PieceTable, SymbolTable
from functionalbpe.text.patterns import SUPERWORD_CUTS, SUPERWORDS, pretokenize

TEXT = ["By the way, I think the cat sat on the mat. By the way, the dog sat on the log, 2024!!"] * 30
MORE = ["The mat and the log are by the way, and the rat ate the cat's hat at 12:30..."] * 30

words = st.text(alphabet="abcd ", min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(words, st.integers(1, 50), min_size=1, max_size=12),
       st.dictionaries(words, st.integers(1, 50), min_size=1, max_size=12),
       st.integers(0, 6), st.one_of(st.none(), st.integers(0, 10)))
def test_the_fast_resume_equals_the_lesson(first, second, base_merges, num_merges):
    base = [(a, b) for a, b, _ in reference.train({tuple(k.encode()): v for k, v in first.items()}, base_merges, 256)]
    expected = reference.resume({tuple(k.encode()): v for k, v in second.items()}, base, num_merges, 256)
    table = PieceTable.from_dict(second)
    assert trainer.resume(table, Alphabet(), base, num_merges, backend="python") == expected
    if NATIVE.trainer is not None:
        assert trainer.resume(table, Alphabet(), base, num_merges, backend="fast") == expected


long_words = st.text(alphabet=st.sampled_from("ab \u00e9\u4e2d\U0001f600\ue001,"), min_size=1, max_size=120)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(long_words, st.integers(1, 50), min_size=1, max_size=10),
       st.dictionaries(long_words, st.integers(0, 50), min_size=1, max_size=30),
       st.integers(0, 40), st.sampled_from([1, 2, 4]))
def test_the_replay_in_one_call_equals_the_replay_piece_by_piece(first, second, base_merges, threads):
    """Long, non-ASCII pieces (cut where no merge joins, merged by the heap), on 1-4
    threads: the flat replay gives each piece the ids that encoding it alone gives."""
    if NATIVE.encoder is None:
        pytest.skip("the compiled encoder is not built")
    base = [(a, b) for a, b, _ in reference.train({tuple(k.encode()): v for k, v in first.items()}, base_merges, 256)]
    encoder = Encoder(Alphabet((), base))
    table = PieceTable.from_dict(second)
    flat = trainer._replayed(encoder, table, threads)
    assert isinstance(flat, SymbolTable)
    assert list(flat.items()) == [(tuple(encoder.encode_piece(p)), c) for p, c in second.items()]
    expected = reference.resume({tuple(k.encode()): v for k, v in second.items() if v}, base, None, 256)
    assert trainer.resume(table, Alphabet(), base, None, backend="fast", threads=threads) == expected


phrases = st.lists(st.text(alphabet="ab.\n", min_size=0, max_size=5), min_size=1, max_size=30).map(" ".join)


@settings(max_examples=80, deadline=None)
@given(st.lists(phrases, min_size=1, max_size=6), st.lists(phrases, min_size=1, max_size=25),
       st.integers(0, 60), st.sampled_from([1, 3]))
def test_the_replay_by_words_equals_the_replay_piece_by_piece(first, second, base_merges, threads):
    """Phrases of words (the replay takes a long piece as its words, each a token or
    cached, checked where they meet: csrc/lib/encode/encode.c, fbpe_encode_table_piece),
    with base merges learned on whole phrases, so that many join across a space or a line
    break: each piece gets the ids that encoding it alone gives."""
    if NATIVE.encoder is None:
        pytest.skip("the compiled encoder is not built")
    base = [(a, b) for a, b, _ in reference.train({tuple(p.encode()): 1 for p in first}, base_merges, 256)]
    encoder = Encoder(Alphabet((), base))
    counts = {p: 1 for p in second}
    flat = trainer._replayed(encoder, PieceTable.from_dict(counts), threads)
    ranks = ranks_from_merges(base, 256)
    assert list(flat.items()) == [(tuple(encode_piece(tuple(p.encode()), ranks)), 1) for p in counts]


def test_the_replay_without_the_compiled_encoder_is_piece_by_piece():
    """Without the compiled encoder, or where the table is not valid UTF-8 (a lone surrogate
    as "surrogatepass" writes it, which counting never makes), each piece is encoded alone."""
    table = PieceTable.from_dict({"hi!": 2, "hihi": 3})
    encoder = Encoder(Alphabet((), [(104, 105)]))
    python_only = type("PythonEncoder", (), {"native": None, "encode_piece": staticmethod(encoder.encode_piece)})()
    assert trainer._replayed(python_only, table, 2) == {(256, 33): 2, (256, 256): 3}
    if NATIVE.encoder is not None:
        with pytest.raises(ValueError, match="not valid UTF-8"):
            NATIVE.encoder.BPE([], [(104, 105)]).encode_each_piece(b"hi\xed\xa0\x80", array("q", [0, 5]))


@pytest.mark.skipif(NATIVE.trainer is None, reason="the compiled trainer is not built")
def test_the_flat_merge_loop_checks_its_table():
    import numpy as np

    flat = NATIVE.trainer.train_merges_flat
    args = (None, 258, [0] * 258, 1, 1, False)
    ids = np.array([256, 257, 256, 257], np.uint32)
    assert flat(ids, np.array([2, 4], np.int64), np.array([1, 2], np.int64), *args) == [(256, 257, 3)]
    with pytest.raises(ValueError, match="ends\\[1\\] = 5"):
        flat(ids, np.array([2, 5], np.int64), np.array([1, 2], np.int64), *args)
    with pytest.raises(ValueError, match="ends\\[1\\] = 1 is not inside"):
        flat(ids, np.array([2, 1], np.int64), np.array([1, 2], np.int64), *args)
    with pytest.raises(ValueError, match="2 counts need 2 ends"):
        flat(ids, np.array([4], np.int64), np.array([1, 2], np.int64), *args)
    with pytest.raises(ValueError, match="symbol id 258"):
        flat(np.array([256, 258], np.uint32), np.array([2], np.int64), np.array([1], np.int64), *args)


def test_resuming_from_no_merges_is_training():
    table = PieceTable.from_dict({"hug": 10, "pug": 5, "hugs": 5})
    assert trainer.resume(table, Alphabet(), [], None) == trainer.learn_merges(table, Alphabet(), None)


def test_a_continued_tokenizer_keeps_every_id_of_its_base():
    base = fb.train(TEXT, vocab_size=300, special_tokens=["<|endoftext|>"], progress=False)
    tok = fb.train(MORE, vocab_size=base.vocab_size + 30, base=base, special_tokens=["<|pad|>"], progress=False)
    assert tok.merges[: len(base.merges)] == base.merges
    assert all(tok.token_bytes(i) == base.token_bytes(i) for i in range(base.vocab_size) if i not in base.special_tokens.values())
    assert tok.special_tokens == {**base.special_tokens, "<|pad|>": tok.vocab_size - 1}
    assert base.vocab_size + 1 < tok.vocab_size <= base.vocab_size + 30  # (MORE runs out of pairs)
    for text in TEXT[:1] + MORE[:1]:
        assert tok.decode(tok.encode(text)) == text
    # Where no new merge applies, the encoding is the base's.
    assert tok.encode("zq") == base.encode("zq")
    assert tok.training["continued_from"]["merges"] == len(base.merges)
    with pytest.raises(fb.FunctionalBPEError, match="smaller than the base's"):
        fb.train(MORE, vocab_size=base.vocab_size - 1, base=base, progress=False)


@pytest.mark.parametrize("form", ["tiktoken", "hf"])
def test_continued_training_from_another_librarys_file(form, tmp_path):
    ours = fb.train(TEXT, vocab_size=320, special_tokens=["<|endoftext|>"], progress=False)
    if form == "tiktoken":
        path = tmp_path / "base.tiktoken"
        ours.to_tiktoken(path)
        base = fb.Tokenizer.from_tiktoken(path, "gpt4", special_tokens={"<|endoftext|>": 400})  # a special after a gap
    else:
        path = tmp_path / "tokenizer.json"
        ours.to_hf(path)
        base = fb.Tokenizer.from_hf(path)
    tok = fb.train(MORE, vocab_size=base.vocab_size + 20, base=path if form == "hf" else base, progress=False)
    assert tok.merges[: len(base.merges)] == base.merges
    for i in range(base.vocab_size):
        try:
            before = base.decode_single_token_bytes(i)
        except fb.UnknownTokenError:
            continue  # a gap stays a gap
        assert tok.decode_single_token_bytes(i) == before
    assert tok.special_tokens == base.special_tokens
    for text in TEXT[:1] + MORE[:1]:
        assert tok.decode(tok.encode(text, allowed_special="all")) == text
    if form == "hf":
        transformers = pytest.importorskip("transformers")
        out = tmp_path / "extended"
        tok.to_hf(out)
        hf = transformers.AutoTokenizer.from_pretrained(str(out))
        assert hf(MORE[0], add_special_tokens=False)["input_ids"] == tok.encode(MORE[0])


# -- superwords ------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab 1,.!\n", max_size=40))
def test_the_superword_pattern_is_an_isolated_split(text):
    pieces, at = [], 0
    for m in regex.finditer(SUPERWORD_CUTS, text):
        if m.start() > at:
            pieces.append(text[at : m.start()])
        pieces.append(m.group())
        at = m.end()
    if at < len(text):
        pieces.append(text[at:])
    assert pretokenize(text, SUPERWORDS) == pieces


def test_superwords_are_continued_training_with_the_stage_two_pattern():
    stage1 = fb.train(TEXT + MORE, vocab_size=300, progress=False)
    both = fb.train(TEXT + MORE, vocab_size=360, superwords=300, progress=False)
    assert both.merges == fb.train(TEXT + MORE, vocab_size=360, base=stage1, pattern=SUPERWORDS,
                                   token_rules={"max_words": 4, "colon_space": False}, progress=False).merges
    assert both.pattern == SUPERWORDS
    shown = [both.token_text(i) for i in range(stage1.vocab_size, both.vocab_size)]
    assert any("␣" in t.strip("␣") for t in shown)  # a token that crosses a space: a superword
    long_text = " ".join(TEXT + MORE) * 20  # a stage-two piece can be a whole paragraph
    assert both.decode(both.encode(long_text)) == long_text


def test_superwords_take_fewer_tokens_than_plain_bpe_of_the_same_size():
    plain = fb.train(TEXT + MORE, vocab_size=360, progress=False)
    sw = fb.train(TEXT + MORE, vocab_size=360, superwords=300, progress=False)
    held = "By the way, the cat sat on the log and the dog sat on the mat."
    assert len(sw.encode(held)) < len(plain.encode(held))


def test_a_superword_tokenizer_exports_to_hf_and_tiktoken_with_the_same_ids(tmp_path):
    sw = fb.train(TEXT + MORE, vocab_size=360, superwords=300, progress=False)
    texts = ["By the way, the dog sat.\nNext line 12345 ok!!  yes\n\n", "a\n\n\n  b ... !!\r\n/x 1234567", MORE[0] * 3]
    tokenizers = pytest.importorskip("tokenizers")
    sw.to_hf(tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert [hf.encode(t, add_special_tokens=False).ids for t in texts] == [sw.encode(t) for t in texts]
    pytest.importorskip("tiktoken")
    enc = sw.as_tiktoken_encoding()
    assert [enc.encode(t) for t in texts] == [sw.encode(t) for t in texts]


def test_the_length_limit_counts_a_base_token_s_bytes_in_both_trainers():
    """Continued training's symbols include the base's tokens, many bytes each: the compiled
    loop must count them as the Python one does, or it merges past MAX_TOKEN_BYTES."""
    from functionalbpe.core import trainer
    from functionalbpe.core._native import NATIVE

    if NATIVE.trainer is None:
        pytest.skip("the compiled trainer is not built (or FUNCTIONALBPE_PUREPYTHON=1)")
    rng = random.Random(5)
    first = 262
    lengths = [1] * 256 + [rng.randrange(2, 9) for _ in range(first - 256)]
    for _ in range(30):
        pieces = {tuple(rng.randrange(250, first) for _ in range(rng.randrange(2, 40))): rng.randrange(1, 5)
                  for _ in range(rng.randrange(1, 12))}
        limit = rng.randrange(4, 40)
        got = [trainer.learn_merges_from_symbols(pieces, None, first, max_token_bytes=limit, lengths=lengths, backend=b)
               for b in ("fast", "python")]
        assert got[0] == got[1]


def test_counts_with_base_and_superwords_say_what_they_mean():
    base = fb.train(["the cat sat"] * 5, vocab_size=260, progress=False)
    counts = fb.count(["the dog sat on the log"] * 5, progress=False)
    grown = fb.train(counts, vocab_size=266, base=base, progress=False)
    assert grown == fb.train(["the dog sat on the log"] * 5, vocab_size=266, base=base, progress=False)
    with pytest.raises(fb.FunctionalBPEError, match="superwords= counts the text twice"):
        fb.train(counts, vocab_size=300, superwords=280, progress=False)
    with pytest.raises(fb.FunctionalBPEError, match="has an option 'name'"):
        fb.count(["a b"], name="x")
