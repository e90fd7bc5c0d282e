import os
import json
import pickle

import pytest
from hypothesis import given

import functionalbpe as fb
from functionalbpe.errors import DecodeError, SpecialTokenError, TokenizerFileError

from .helpers import stdlib_text, tricky_text

SPECIALS = ("<|endoftext|>", "<|pad|>")


@pytest.fixture(scope="module")
def tok():
    docs = stdlib_text(300_000) + ["naïve café 😀 日本語 " * 20]
    return fb.train(docs, vocab_size=256 + 600 + 2, special_tokens=SPECIALS, progress=False)


@given(tricky_text)
def test_round_trip_ordinary(tok, text):
    assert tok.decode(tok.encode_ordinary(text)) == text
    assert tok.decode_bytes(tok.encode_ordinary(text)) == text.encode("utf-8")


@given(tricky_text)
def test_round_trip_with_specials_allowed(tok, text):
    ids = tok.encode(text, allowed_special="all")
    assert tok.decode(ids) == text


def test_vocab_layout(tok):
    assert tok.vocab_size == 256 + 600 + 2
    assert tok.special_tokens == {"<|endoftext|>": 856, "<|pad|>": 857}
    assert len(tok.merges) == 600 and len(tok.merge_counts) == 600


def test_merge_counts_are_the_counts_at_merge_time(tok):
    from functionalbpe.training import count_pieces
    from functionalbpe.core.reference import train as train_merges

    docs = ["abab abab ab", "ba ba"]
    t = fb.train(docs, vocab_size=260, progress=False)
    pieces = {tuple(p.encode()): c for p, c in count_pieces(docs).items()}
    assert [tuple(m) for m in train_merges(pieces, 4, 256)] == [
        (a, b, c) for (a, b), c in zip(t.merges, t.merge_counts)
    ]


def test_special_tokens_follow_tiktoken_rules(tok):
    text = "a<|endoftext|>b"
    with pytest.raises(SpecialTokenError, match=r"allowed_special=\{'<\|endoftext\|>'\}"):
        tok.encode(text)
    ids = tok.encode(text, allowed_special={"<|endoftext|>"})
    assert 856 in ids and tok.decode(ids) == text
    assert tok.encode(text, disallowed_special=()) == tok.encode_ordinary(text)
    assert 856 not in tok.encode_ordinary(text)
    # Allowed one, the other still disallowed.
    with pytest.raises(SpecialTokenError, match="<\\|pad\\|>"):
        tok.encode("<|pad|><|endoftext|>", allowed_special={"<|endoftext|>"})
    with pytest.raises(SpecialTokenError, match="does not have"):
        tok.encode("x", allowed_special={"<|nope|>"})


def test_specials_match_tiktoken(tok):
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {tok.token_bytes(i): i for i in range(tok.vocab_size - 2)}
    enc = tiktoken.Encoding("t", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens=tok.special_tokens)
    for text in ["x <|endoftext|> y<|pad|>z", "def f():\n    return 1<|endoftext|>"]:
        assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
        assert tok.encode(text, allowed_special={"<|pad|>"}, disallowed_special=()) == enc.encode(
            text, allowed_special={"<|pad|>"}, disallowed_special=()
        )


def test_specials_never_merge_into_text():
    docs = ["hello<|endoftext|>hello<|endoftext|>hello"] * 20
    t = fb.train(docs, vocab_size=300, special_tokens=["<|endoftext|>"], progress=False)
    for i in range(256, t.vocab_size - 1):
        assert b"<|" not in t.token_bytes(i) or b"hello" not in t.token_bytes(i)
    assert t.encode("<|endoftext|>", allowed_special="all") == [t.vocab_size - 1]


def test_decode_errors(tok):
    with pytest.raises(DecodeError, match="not a token"):
        tok.decode([tok.vocab_size])
    with pytest.raises(DecodeError, match="not a token"):
        tok.decode([-1])
    ids = tok.encode("é")
    if len(ids) == 2:  # é as two byte tokens: a lone first byte is invalid UTF-8
        with pytest.raises(DecodeError, match="token 0"):
            tok.decode(ids[:1])
    assert tok.decode([0xC3], errors="replace") == "\ufffd"
    assert tok.decode_bytes([0xC3]) == b"\xc3"


def test_pieces_and_explain(tok):
    assert tok.pieces("Hello world<|pad|>") == ["Hello", " world", "<|pad|>"]
    assert [ids for _, ids in tok.explain("Hello")] == [tok.encode("Hello")]


def test_save_load_same_encoding(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    again = fb.Tokenizer.load(path)
    assert again == tok
    text = "".join(stdlib_text(50_000))
    assert again.encode(text) == tok.encode(text)
    payload = json.loads(path.read_text(encoding="utf-8"))
    assert payload["format"] == "functionalbpe/1" and payload["checksum"].startswith("sha256:")


def test_pickle(tok):
    again = pickle.loads(pickle.dumps(tok))
    assert again.encode("def f(x): return x") == tok.encode("def f(x): return x")


def test_truncated_file_is_refused(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TokenizerFileError, match="truncated"):
        fb.Tokenizer.load(path)


def test_wrong_format_is_refused(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    payload = json.loads(path.read_text(encoding="utf-8"))
    payload["format"] = "functionalbpe/9"
    path.write_text(json.dumps(payload), encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="functionalbpe/9"):
        fb.Tokenizer.load(path)


def test_bad_checksum_is_refused(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    payload = json.loads(path.read_text(encoding="utf-8"))
    a, b = payload["merges"][5]
    payload["merges"][5] = [a, (b + 1) % 256]
    path.write_text(json.dumps(payload), encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="checksum"):
        fb.Tokenizer.load(path)


def test_inconsistent_file_with_valid_checksum_is_refused(tok, tmp_path):
    from functionalbpe.formats.tokenizer_file import write_payload

    payload = tok.to_payload()
    payload["merges"] = payload["merges"] + [[10**6, 1]]
    payload["merge_counts"] = payload["merge_counts"] and payload["merge_counts"] + [1]
    path = tmp_path / "tok.json"
    write_payload(path, payload)
    with pytest.raises(TokenizerFileError, match="does not exist"):
        fb.Tokenizer.load(path)
    with pytest.raises(TokenizerFileError, match="no such"):
        fb.Tokenizer.load(tmp_path / "missing.json")


def test_save_is_atomic(tok, tmp_path, monkeypatch):
    path = tmp_path / "tok.json"
    path.write_text("old", encoding="utf-8")

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr("os.fsync", boom)
    with pytest.raises(KeyboardInterrupt):
        tok.save(path)
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["tok.json"]


def test_train_argument_errors():
    with pytest.raises(fb.VocabSizeError, match="at least 257"):
        fb.train(["abc"], vocab_size=256, special_tokens=["<s>"], progress=False)
    with pytest.raises(fb.FunctionalBPEError, match="backend"):
        fb.train(["abc"], vocab_size=300, backend="gpu", progress=False)
    with pytest.raises(fb.FunctionalBPEError, match="merge_policy"):
        fb.train(["abc"], vocab_size=300, merge_policy="loose", progress=False)
    with pytest.raises(fb.FunctionalBPEError, match="scheme"):
        fb.train(["abc"], vocab_size=300, scheme="nope", progress=False)
    with pytest.raises(fb.FunctionalBPEError, match="must be a str"):
        fb.train([b"abc"], vocab_size=300, progress=False)
    with pytest.raises(fb.PatternError, match="drops input"):
        fb.train(["ab cd"], vocab_size=300, pattern=r"\w+", progress=False)


def test_vocabulary_stops_when_pairs_run_out():
    t = fb.train(["abc"], vocab_size=1000, special_tokens=["<s>"], progress=False)
    assert len(t.merges) == 2 and t.vocab_size == 259 and t.special_tokens == {"<s>": 258}
    assert len(fb.train(["abcd"], vocab_size=None, progress=False).merges) == 3


@pytest.mark.parametrize("pattern", sorted(fb.PATTERNS))
@given(text=tricky_text)
def test_every_named_pattern_round_trips(pattern, text):
    assert "".join(fb.pretokenize(text, pattern)) == text


def test_progress_callback_sees_merges():
    seen = []
    t = fb.train(["abab cdcd"] * 3, vocab_size=270, progress=lambda *a: seen.append(a))
    merging = [a for a in seen if a[0] == "merging"]
    assert len(t.merges) == 5  # ab, cd, " cd", abab, " cdcd": then no pair is left
    done = [d for _, d, _, info in merging if info != "done"]
    # the reference reports every merge, the fast trainer every time slice
    assert done == sorted(done) and done[-1] == 5
    assert all(total == 14 for _, _, total, _ in merging)


def test_saved_file_has_the_usual_mode(tok, tmp_path):
    old = os.umask(0o022)
    try:
        tok.save(tmp_path / "tok.json")
    finally:
        os.umask(old)
    assert (tmp_path / "tok.json").stat().st_mode & 0o777 == 0o644
