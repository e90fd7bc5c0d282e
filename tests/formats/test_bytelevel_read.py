"""The compiled reading of byte-level vocabularies (csrc/lib/common/bytelevel_read.h) against
the Python reading of the same files: HF's tokenizer.json and GPT-2's encoder.json and
vocab.bpe, whole, in other layouts and damaged. Either both give the same vocabulary (ids,
merges, joins, special tokens) or both the same error."""
from __future__ import annotations

import contextlib
import json
import os
from array import array

import pytest

import functionalbpe as fb
from functionalbpe.core._native import NATIVE
from functionalbpe.errors import FunctionalBPEError
from functionalbpe.formats import hf

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

pytestmark = pytest.mark.skipif(NATIVE.tables is None, reason="the compiled table reader is not built")

# Words that overlap (the, then, other, there...): tokens with more than one split into two
# tokens, which the joins of a Llama 3 style file list.
SYLLABLES = ["th", "e", "re", "the", "n", "o", "m", "an", "é", "東"]
TEXT = [" ".join(a + b + c for a in SYLLABLES for b in SYLLABLES for c in SYLLABLES)] * 3 + ["a\tb\r\nc  d"]


@pytest.fixture(scope="module")
def tok():
    return fb.train(TEXT, vocab_size=400, special_tokens=["<|endoftext|>"], progress=False)


@contextlib.contextmanager
def python_only():
    """The Python reading alone: the compiled table module switched off."""
    NATIVE.tables  # loaded, so that the entry exists
    saved = NATIVE._modules["tables"]
    NATIVE._modules["tables"] = None
    try:
        yield
    finally:
        NATIVE._modules["tables"] = saved


def outcome(call):
    try:
        got = call()
    except FunctionalBPEError as exc:
        return type(exc).__name__, str(exc)
    return (list(got.byte_ids), list(map(tuple, got.merges)), list(got.merge_ids), got.pattern, got.special_tokens,
            got.ignore_merges, got.origin, list(map(tuple, got.joins)), got.normalize)


def both(call):
    compiled = outcome(call)
    with python_only():
        python = outcome(call)
    return compiled, python


def hf_document(tok, joins=False):
    doc = hf.tokenizer_json(
        {bytes(tok.decode_bytes([i])): i for i in range(tok.vocab_size) if i not in tok.special_tokens.values()},
        [(tok.decode_bytes([a]), tok.decode_bytes([b])) for a, b in tok.merges],
        tok.pattern, tok.special_tokens, False)
    doc["model"]["vocab"].update({s: i for s, i in tok.special_tokens.items()})  # added tokens kept there too
    if joins:  # every other split of a token into two tokens, after its merges (Llama 3's files)
        vocab, listed = doc["model"]["vocab"], set(doc["model"]["merges"])
        for token in list(vocab):
            for cut in range(1, len(token)):
                merge = f"{token[:cut]} {token[cut:]}"
                if token[:cut] in vocab and token[cut:] in vocab and merge not in listed:
                    doc["model"]["merges"].append(merge)
                    listed.add(merge)
    return doc


def test_the_compiled_reading_is_taken_and_gives_what_python_gives(tok, tmp_path):
    path = str(tmp_path / "tokenizer.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(hf_document(tok), fh, ensure_ascii=False)
    model = hf._read_document(path)["model"]
    assert hf._compiled(model["vocab"], model["merges"])
    compiled, python = both(lambda: hf.read_hf(path))
    assert compiled == python and isinstance(compiled[1], list)
    assert fb.Tokenizer.from_hf(path) == tok.__class__.from_hf(hf_document(tok))


@pytest.mark.parametrize("layout", ["escaped", "pairs", "indented", "joins", "ignore_merges"])
def test_every_layout_reads_as_python_reads_it(tok, tmp_path, layout):
    doc = hf_document(tok, joins=layout == "joins")
    if layout == "pairs":  # tokenizers 0.20 on
        doc["model"]["merges"] = [m.split(" ") for m in doc["model"]["merges"]]
    if layout == "ignore_merges":
        doc["model"]["ignore_merges"] = True
    path = str(tmp_path / "tokenizer.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, ensure_ascii=layout == "escaped", indent=2 if layout == "indented" else None)
    compiled, python = both(lambda: hf.read_hf(path))
    assert compiled == python and isinstance(compiled[1], list)
    if layout == "joins":
        assert compiled[7]  # the layout has joins to read


# Characters a damaged file may hold where another was: JSON's own, escapes' parts, a space,
# line breaks Python's splitlines knows, characters of no byte.
DAMAGE = st.sampled_from(['"', "\\", " ", ",", ":", "[", "]", "{", "}", "0", "7", "a", "Ġ", "\n", "\r", "\u2028", "é",
                          "日", "u", "-", ""])
EDITS = st.lists(st.tuples(st.floats(0, 1, exclude_max=True), DAMAGE), min_size=1, max_size=3)


def damaged(text, edits, lo=0):
    for at, char in edits:
        k = lo + int(at * (len(text) - lo))
        text = text[:k] + char + text[k + 1:]
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=EDITS, joins=st.booleans(), duplicate=st.integers(-1, 40))
def test_a_damaged_tokenizer_json_fails_or_reads_as_python_reads_it(tok, tmp_path, edits, joins, duplicate):
    doc = hf_document(tok, joins)
    if duplicate >= 0:  # a merge listed twice, or moved ahead of the merges of its parts
        merges = doc["model"]["merges"]
        merges.insert(duplicate % 7, merges[duplicate])
    text = json.dumps(doc, ensure_ascii=False, indent=1)
    path = str(tmp_path / "tokenizer.json")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(damaged(text, edits, text.index('"vocab"')))
    compiled, python = both(lambda: hf.read_hf(path))
    assert compiled == python


def gpt2_files(tok, directory, vocab_edits=(), merge_edits=(), drop=0):
    vocab = {tok.id_to_token(i): i for i in range(tok.vocab_size)}
    lines = ["#version: 0.2"] + [" ".join(tok.id_to_token(i) for i in m) for m in tok.merges]
    if drop:
        lines = lines[:-drop]  # a vocab.bpe cut short
    encoder, merges = os.path.join(directory, "encoder.json"), os.path.join(directory, "vocab.bpe")
    with open(encoder, "w", encoding="utf-8") as fh:
        fh.write(damaged(json.dumps(vocab, ensure_ascii=False), vocab_edits))
    with open(merges, "w", encoding="utf-8") as fh:
        fh.write(damaged("\n".join(lines) + "\n", merge_edits))
    return encoder, merges


def test_gpt2_files_read_as_python_reads_them(tok, tmp_path):
    encoder, merges = gpt2_files(tok, str(tmp_path))
    compiled, python = both(lambda: hf.read_gpt2(encoder, merges))
    assert compiled == python and isinstance(compiled[1], list) and compiled[4] == tok.special_tokens
    assert hf._compiled_gpt2(encoder, merges) is not None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(vocab_edits=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), DAMAGE), max_size=2),
       merge_edits=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), DAMAGE), max_size=2),
       drop=st.sampled_from([0, 0, 1, 30]))
def test_damaged_gpt2_files_fail_or_read_as_python_reads_them(tok, tmp_path, vocab_edits, merge_edits, drop):
    encoder, merges = gpt2_files(tok, str(tmp_path), vocab_edits, merge_edits, drop)
    compiled, python = both(lambda: hf.read_gpt2(encoder, merges))
    assert compiled == python


@pytest.mark.parametrize("damage", ["encoder", "none"])
def test_a_missing_vocab_bpe_is_the_error_python_gives(tok, tmp_path, damage):
    encoder, merges = gpt2_files(tok, str(tmp_path), [(0.5, "{")] if damage == "encoder" else ())
    os.remove(merges)
    compiled, python = both(lambda: hf.read_gpt2(encoder, merges))
    assert compiled == python and compiled[0] == "TokenizerFileError"


JSONISH = st.text(alphabet=st.sampled_from(list('{}[]":, \n\\u0120Ġab1209') + ["é", "日", "\x00", "\ud800"]), max_size=60)


@settings(max_examples=2000, deadline=None)
@given(text=st.one_of(JSONISH, st.dictionaries(st.text(alphabet="abĠĊ\"\\ é", max_size=4), st.integers(-2, 2 ** 33),
                                               max_size=5).map(json.dumps)),
       pos=st.integers(0, 3))
def test_the_vocabulary_reader_reads_what_json_reads_or_nothing(text, pos):
    got = NATIVE.tables.read_bytelevel_vocab(text, pos, 1 << 22, 1 << 20)
    assert same_reading(got, read_as_utf8(NATIVE.tables.read_bytelevel_vocab, text, pos, 1 << 22, 1 << 20))
    if got is None:
        return
    vocab, end = got
    parsed = json.loads(text[pos:end])
    assert [(vocab.token(k), vocab.id(k)) for k in range(len(vocab))] == \
        [(hf.bytelevel.read(key), ident) for key, ident in parsed.items()]


def read_as_utf8(reader, text, pos, *args):
    """reader's reading of text's UTF-8 (lone surrogates as CPython would write them), the
    end as an index of text; False where the bytes end inside a character."""
    data = text.encode("utf-8", "surrogatepass")
    got = reader(data, len(text[:pos].encode("utf-8", "surrogatepass")), *args)
    if got is None:
        return None
    value, end = got
    head = data[:end].decode("utf-8", "surrogatepass")
    return value, len(head)


def same_reading(got, utf8):
    """A reader's readings of a str and of its UTF-8 agree: both nothing, or the same entries
    or ids and the same end."""
    if got is None or utf8 is None:
        return got is None and utf8 is None
    if isinstance(got[0], array):
        return got[0] == utf8[0] and got[1] == utf8[1]
    entries = [[(v.token(k), v.id(k)) for k in range(len(v))] for v in (got[0], utf8[0])]
    return entries[0] == entries[1] and got[1] == utf8[1]


@settings(max_examples=1000, deadline=None)
@given(data=st.binary(max_size=40), keep=st.booleans())
def test_the_vocabulary_reader_refuses_bytes_that_are_not_utf8(data, keep):
    """Any bytes, as a tokenizer.json may hold: the entries json reads from their UTF-8, or
    nothing (never a character made of bytes that are not one)."""
    text = b'{"a\xc4\xa0": 1, "' + data + b'": 2}' if keep else data
    got = NATIVE.tables.read_bytelevel_vocab(text, 0, 1 << 22, 1 << 20)
    if got is None:
        return
    parsed = json.loads(text[:got[1]].decode("utf-8"))
    vocab = got[0]
    assert [(vocab.token(k), vocab.id(k)) for k in range(len(vocab))] == \
        [(hf.bytelevel.read(key), ident) for key, ident in parsed.items()]


@settings(max_examples=2000, deadline=None)
@given(text=st.one_of(JSONISH, st.lists(st.one_of(st.text(alphabet="abĠ \"", max_size=5),
                                                  st.lists(st.text(alphabet="abĠ ", max_size=3), max_size=3)),
                                        max_size=5).map(json.dumps)),
       lines=st.text(alphabet=st.sampled_from(list("ab Ġ\n\r#version") + ["\u2028", "\x85"]), max_size=40))
def test_the_merge_readers_read_what_python_reads_or_nothing(text, lines):
    vocab, _ = NATIVE.tables.read_bytelevel_vocab('{"a": 0, "b": 1, "Ġ": 2, "ab": 3, "bĠ": 4}', 0, 10, 10)
    names = {"a": 0, "b": 1, "Ġ": 2, "ab": 3, "bĠ": 4}
    got = NATIVE.tables.read_bytelevel_merges(text, 0, vocab, 10)
    assert same_reading(got, read_as_utf8(NATIVE.tables.read_bytelevel_merges, text, 0, vocab, 10))
    if got is not None:
        pairs, end = got
        merges = [m.split(" ") if type(m) is str else m for m in json.loads(text[:end])]
        assert pairs.tolist() == [names[part] for m in merges for part in m] and all(len(m) == 2 for m in merges)
    got = NATIVE.tables.read_bytelevel_lines(lines, vocab, 10)
    if got is not None:
        merges = [line.split(" ") for number, line in enumerate(lines.splitlines(), 1)
                  if line.strip() and not (number == 1 and line.startswith("#version"))]
        assert got.tolist() == [names[part] for m in merges for part in m] and all(len(m) == 2 for m in merges)
