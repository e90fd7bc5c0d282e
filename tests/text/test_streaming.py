"""Reading corpora in blocks: safe cuts keep every piece, files stream in bounded units,
and bad bytes are reported with the file and the byte offset, on both paths."""
from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import functionalbpe as fb
from functionalbpe.text import cuts as chunking
from functionalbpe.core._native import NATIVE
from functionalbpe.text.corpus import Files
from functionalbpe.training import count_pieces
from functionalbpe.errors import CorpusError
from functionalbpe.text.patterns import PATTERNS

from .test_scanner import NAMES, PARTS

scanner = NATIVE.scanner
BOTH_PATHS = pytest.mark.parametrize("pure", [False, True], ids=["compiled", "pure-python"])

# Text with many places to cut: lines, punctuation after letters, and everything else.
CUT_PARTS = PARTS + ("word.", "x,", "end\n", "A(", "é;", "中\n", "ok\nnext", "a/", "\n/", "b'", "c_")
cut_text = st.lists(st.sampled_from(CUT_PARTS), max_size=30).map("".join)


def pieces(text: str, name: str):
    return regex.findall(PATTERNS[name], text)


def all_cuts(data: bytes, finder) -> list:
    cuts, hi = [], len(data) - 1
    while True:
        c = finder(data, 0, hi)
        if not c:
            return cuts
        cuts.append(c)
        hi = c - 1


@given(cut_text)
def test_every_safe_cut_keeps_every_piece(text):
    data = text.encode("utf-8", "surrogatepass")
    if "\ud800" in text:
        return  # a file is valid UTF-8: no lone surrogates to cut around
    cuts = all_cuts(data, chunking._safe_cut_python)
    for c in cuts:
        head, tail = data[:c].decode(), data[c:].decode()
        for name in NAMES:
            assert pieces(head, name) + pieces(tail, name) == pieces(text, name), (c, name)


@pytest.mark.skipif(scanner is None, reason="compiled scanner not built")
@given(cut_text)
def test_compiled_safe_cut_equals_python(text):
    if "\ud800" in text:
        return
    data = text.encode()
    for hi in range(len(data) + 1):
        for lo in (0, hi // 2):
            assert scanner.safe_cut(data, lo, hi) == chunking._safe_cut_python(data, lo, min(hi, len(data) - 1)) or len(data) < 3


def test_safe_cuts_are_found_in_ordinary_text():
    data = "First line.\nSecond line, with words.\n".encode()
    cuts = all_cuts(data, chunking._safe_cut_python)
    assert 12 in cuts  # after "First line.\n", before "S"
    assert data.index(b",") in cuts  # between "line" and ","
    assert chunking.safe_cut(b"     ") == 0 and chunking.safe_cut(b"") == 0


@given(st.one_of(st.binary(max_size=40), cut_text.map(lambda t: t.encode("utf-8", "surrogatepass"))), st.integers(0, 40))
def test_utf8_invalid_matches_python_decoder(data, cut):
    data = data[: cut or None]
    assert chunking.utf8_invalid(data) == chunking._utf8_invalid_python(data)
    bad, _ = chunking.utf8_invalid(data)
    if bad == len(data):
        text = data.decode()
        assert chunking.utf8_length(data) == len(text)
        for k in (0, 1, len(text) // 2, len(text), len(text) + 3):
            assert chunking.utf8_prefix(data, k) == len(text[:k].encode())


# Characters of every UTF-8 length, and those next to where the lengths and the ranges of a
# second byte change (E0's overlong forms, ED's surrogates, F4's ceiling).
EDGE_CHARS = "aé\u07ff\u0800\u0fff\u1000\ud7ff\ue000\uffff\U00010000\U0010ffffЖ中ア"


@given(st.lists(st.sampled_from(EDGE_CHARS), min_size=1, max_size=30), st.data())
def test_utf8_invalid_finds_one_damaged_byte_as_python_does(chars, data):
    # The compiled check reads runs of two- and three-byte characters without their code
    # points: a damaged byte anywhere in such a run is found where Python's decoder finds it.
    raw = bytearray("".join(chars).encode())
    at = data.draw(st.integers(0, len(raw) - 1))
    raw[at] = data.draw(st.integers(0, 255))
    for damaged in (bytes(raw), bytes(raw[: data.draw(st.integers(0, len(raw)))])):
        assert chunking.utf8_invalid(damaged) == chunking._utf8_invalid_python(damaged)


# ---- files ----


def write(path, data: bytes):
    if path.name.endswith(".gz"):
        with gzip.open(path, "wb") as fh:
            fh.write(data)
    else:
        path.write_bytes(data)
    return path


def use_pure(monkeypatch, pure):
    if pure:
        monkeypatch.setenv("FUNCTIONALBPE_PUREPYTHON", "1")
    else:
        monkeypatch.delenv("FUNCTIONALBPE_PUREPYTHON", raising=False)
        if scanner is None:
            pytest.skip("compiled scanner not built")


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=40)
@given(st.lists(cut_text, min_size=1, max_size=4), st.integers(16, 80), st.sampled_from(NAMES))
def test_streamed_units_hold_the_documents_and_their_pieces(tmp_path_factory, docs, block, name):
    docs = [d for d in docs if "\ud800" not in d] or ["x"]
    folder = tmp_path_factory.mktemp("docs")
    paths = [write(folder / f"d{k}.txt{'.gz' if k % 2 else ''}", d.encode()) for k, d in enumerate(docs)]
    corpus = Files(paths, block_bytes=block)
    units = list(corpus.units())
    assert b"".join(units) == "".join(docs).encode()
    assert list(corpus) == docs
    expected = Counter()
    for doc in docs:
        expected.update(pieces(doc, name))
    assert count_pieces(corpus, name, threads=2) == dict(expected)
    assert corpus.stats.documents == len(docs) and corpus.stats.chars == sum(map(len, docs))


@BOTH_PATHS
def test_streaming_counts_equal_whole_file_counts(tmp_path, monkeypatch, pure):
    use_pure(monkeypatch, pure)
    from ..helpers import stdlib_text

    text = "".join(stdlib_text(300_000)) + " " * 5000 + "tail"
    path = write(tmp_path / "big.txt", text.encode())
    corpus = Files([path], block_bytes=4096)
    units = list(corpus.units())
    assert len(units) > 50
    # Bounded units: a block plus the longest stretch without a safe place (5000 spaces).
    assert max(map(len, units)) < 4096 + 5100
    for name in NAMES:
        assert count_pieces(corpus, name) == dict(Counter(pieces(text, name))), name


@BOTH_PATHS
def test_jsonl_documents_and_field(tmp_path, monkeypatch, pure):
    use_pure(monkeypatch, pure)
    lines = [json.dumps({"text": "Hello world", "id": 1}), "", json.dumps({"text": "don't\nstop", "id": 2})]
    path = write(tmp_path / "a.jsonl.gz", "\n".join(lines).encode())
    assert list(fb.files(path)) == ["Hello world", "don't\nstop"]
    assert count_pieces(fb.files(path), "gpt2") == {"Hello": 1, " world": 1, "don": 1, "'t": 1, "\n": 1, "stop": 1}
    other = write(tmp_path / "b.jsonl", (json.dumps({"body": "x"}) + "\n").encode())
    assert list(fb.files(other, field="body")) == ["x"]
    with pytest.raises(CorpusError, match=r"b.jsonl: line 1: no string field 'text'"):
        list(fb.files(other))
    broken = write(tmp_path / "c.jsonl", b'{"text": "a"}\n{"text": \n')
    with pytest.raises(CorpusError, match=r"c.jsonl: line 2: not JSON"):
        count_pieces(fb.files(broken), "gpt4")


@BOTH_PATHS
@pytest.mark.parametrize("where", [0, 5, 15, 16, 17, 40])
def test_bad_byte_names_file_and_offset_across_blocks(tmp_path, monkeypatch, pure, where):
    use_pure(monkeypatch, pure)
    good = ("abc d\u00e9f.\n" * 10).encode()
    data = good[:where] + b"\xff" + good[where:]
    path = write(tmp_path / "bad.txt", data)
    corpus = Files([path], block_bytes=16)
    with pytest.raises(UnicodeDecodeError) as whole:
        data.decode()
    first_bad = whole.value.start  # where (or the start of the character it broke)
    with pytest.raises(CorpusError, match=rf"bad.txt: invalid UTF-8 at byte offset {first_bad}\b"):
        count_pieces(corpus, "gpt4")
    replaced = Files([path], errors="replace", block_bytes=16)
    assert list(replaced) == [data.decode("utf-8", "replace")]
    assert count_pieces(replaced, "gpt4") == dict(Counter(pieces(data.decode("utf-8", "replace"), "gpt4")))


@BOTH_PATHS
def test_character_cut_by_a_block_end_is_not_an_error(tmp_path, monkeypatch, pure):
    use_pure(monkeypatch, pure)
    text = "\u4e2d\u6587\U0001f600 " * 50
    path = write(tmp_path / "cjk.txt", text.encode())
    for block in (16, 17, 18, 19):
        assert b"".join(Files([path], block_bytes=block).units()) == text.encode()
    truncated = write(tmp_path / "cut.txt", text.encode()[:-2])  # the last emoji loses a byte
    with pytest.raises(CorpusError, match=r"cut.txt: invalid UTF-8 at byte offset 545"):
        list(Files([truncated], block_bytes=16).units())


@BOTH_PATHS
def test_caps_on_characters(tmp_path, monkeypatch, pure):
    use_pure(monkeypatch, pure)
    a = write(tmp_path / "a.txt", ("h\u00e9llo wörld. " * 20).encode())
    b = write(tmp_path / "b.jsonl", "\n".join(json.dumps({"text": t}) for t in ["one two", "three four five"]).encode())
    c = write(tmp_path / "c.txt", b"never read")
    whole = [a.read_text(), "one two", "three four five", "never read"]

    capped = fb.files(a, b, c, max_doc_chars=9)
    assert list(capped) == [d[:9] for d in whole]
    assert capped.stats.truncated_documents == 3

    limited = fb.files(a, b, c, max_chars=len(whole[0]) + 10)
    assert list(limited) == [whole[0], "one two", "thr"]
    assert limited.stats.stopped_at_max_chars and limited.stats.chars == len(whole[0]) + 10

    for corpus in (capped, limited):
        streamed = Files(corpus.paths, max_chars=corpus.max_chars, max_doc_chars=corpus.max_doc_chars, block_bytes=16)
        expected = Counter()
        for doc in corpus:
            expected.update(pieces(doc, "o200k"))
        assert count_pieces(streamed, "o200k") == dict(expected)


def test_bad_options(tmp_path):
    path = write(tmp_path / "a.txt", b"a")
    with pytest.raises(CorpusError, match="max_chars"):
        fb.files(path, max_chars=-1)
    with pytest.raises(CorpusError, match="field"):
        fb.files(path, field="")


def test_gz_found_in_a_directory_is_read(tmp_path):
    write(tmp_path / "a.txt.gz", b"packed text")
    write(tmp_path / "b.gz", b"\x00\x01binary")
    (tmp_path / "c.gz").write_bytes(b"not gzip at all")
    assert list(fb.files(tmp_path)) == ["packed text"]


def test_train_streams_files_with_the_plain_scheme(tmp_path):
    from ..helpers import stdlib_text

    text = "".join(stdlib_text(200_000))
    path = write(tmp_path / "s.txt", text.encode())
    corpus = Files([path], block_bytes=1000)
    streamed = fb.train(corpus, vocab_size=300, progress=False)
    whole = fb.train([text], vocab_size=300, progress=False)
    assert streamed.merges == whole.merges


def test_cli_train_reads_jsonl_with_a_field_and_caps(tmp_path):
    from functionalbpe.cli import main

    records = [{"body": "low lower lowest " * 20}, {"body": "newer newest " * 20}]
    path = write(tmp_path / "c.jsonl", "\n".join(json.dumps(r) for r in records).encode())
    out = tmp_path / "tok.json"
    args = ["train", str(path), "--field", "body", "--max-doc-chars", "200", "--vocab-size", "270", "-o", str(out), "-q"]
    assert main(args) == 0
    expected = fb.train([r["body"][:200] for r in records], vocab_size=270, progress=False)
    assert fb.Tokenizer.load(out).merges == expected.merges


@BOTH_PATHS
@pytest.mark.parametrize("block", [16, 17, 23, 40])
def test_streaming_never_cuts_a_special_token(tmp_path, monkeypatch, pure, block):
    use_pure(monkeypatch, pure)
    specials = ["<|endoftext|>", "x.y"]
    text = "word<|endoftext|>more.\nnext<|endoftext|>x.y, end.\n" * 20
    path = write(tmp_path / "s.txt", text.encode())
    corpus = Files([path], block_bytes=block)
    units = list(corpus.units(specials))
    assert len(units) > 5 and b"".join(units) == text.encode()
    for unit in units:  # no unit starts or ends inside a token
        assert not unit.startswith((b"|endoftext|>", b"endoftext|>", b">", b".y", b"y"))
        assert not unit.endswith((b"<", b"<|endoftext", b"<|end", b"x", b"x."))
    assert count_pieces(corpus, "gpt4", special_tokens=specials) == count_pieces([text], "gpt4", special_tokens=specials)


@BOTH_PATHS
def test_bad_byte_in_jsonl_names_the_line_and_the_absolute_offset(tmp_path, monkeypatch, pure):
    use_pure(monkeypatch, pure)
    first = (json.dumps({"text": "fine"}) + "\n").encode()
    second = b'{"text": "bad \xc3("}\n'
    path = write(tmp_path / "b.jsonl.gz", first + second)
    offset = len(first) + second.index(b"\xc3")
    with pytest.raises(CorpusError, match=rf"b.jsonl.gz \(decompressed\): line 2: invalid UTF-8 at byte offset {offset}\b"):
        count_pieces(fb.files(path), "gpt4")
    tok = fb.train(["a b"] * 3, vocab_size=258, progress=False)
    with pytest.raises(CorpusError, match=rf"b.jsonl.gz \(decompressed\): line 2: invalid UTF-8 at byte offset {offset}\b"):
        tok.encode_to_file(fb.files(path), tmp_path / "t.npy", progress=False)
    assert list(fb.files(path, errors="replace")) == ["fine", "bad \ufffd("]


@pytest.mark.parametrize("pattern", ["gpt4", "o200k"])
def test_train_with_flat_counts_equals_the_reference(tmp_path, pattern):
    from ..helpers import stdlib_text

    if NATIVE.trainer is None:
        pytest.skip("the fast trainer is not built")
    text = "<|endoftext|>".join(stdlib_text(150_000))
    path = write(tmp_path / "s.txt", text.encode())
    options = dict(vocab_size=330, pattern=pattern, special_tokens=["<|endoftext|>"], progress=False)
    fast_tok = fb.train(Files([path], block_bytes=5000), backend="fast", **options)  # counts handed over flat
    slow_tok = fb.train([text], backend="reference", **options)
    assert fast_tok.merges == slow_tok.merges
