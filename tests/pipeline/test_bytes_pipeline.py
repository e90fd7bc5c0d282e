"""The bytes pipeline of token files (functionalbpe/pipeline/blocks.py, csrc/lib/scan/jsonl.c):
the file it writes holds ``tok.encode(doc) + [eot]`` for every document of ``fb.files``,
for text, JSONL and gzip files, every awkward record, every block size and every number of
threads; and the C reader of JSONL fields agrees with ``json.loads``. The C pipeline of
plain and JSONL files (pipeline/textfiles.py), which would take some of these sources, is
turned off here: test_text_file_pipeline.py and test_jsonl_file_pipeline.py check it against
this one."""
import gzip
import json
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import functionalbpe as fb
from functionalbpe.core._native import NATIVE
from functionalbpe.errors import CorpusError, SpecialTokenError
from functionalbpe.text import corpus as corpus_module
from functionalbpe.pipeline import blocks, textfiles, tokenfile
from functionalbpe.util.checks import bpe_utf8

EOT = "<|endoftext|>"
TEXT = "The cat sat on the mat. The dog sat on the log.\nnaïve café, 中文 ✓ 😀\n" * 4

# Records that the C reader takes, and records it leaves to Python (NaN, an escaped key, a
# nested field of the same name, deep nesting, duplicate keys, white space of all kinds).
RECORDS = [
    '{"text": "plain"}',
    '{"id": 7, "text": "esc \\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\ud83d\\ude00 end"}',
    '{"text": "lone \\ud800 high, lone \\udc00 low, reversed \\udc00\\ud800"}',
    '{"text": "first", "text": "last wins"}',
    '{"meta": {"text": "not this", "a": [1, 2.5e-3, -0, true, false, null, {"b": []}]}, "text": "this"}',
    '{"x": NaN, "text": "after NaN"}',
    '{"te\\u0078t": "escaped key"}',
    '{"text": "x", "deep": ' + "[" * 100 + "]" * 100 + "}",
    '  \t{"text":"spaced"}  \r',
    '{"text": ""}',
    '{"n": 123456789012345678901234567890, "text": "big number"}',
    '{"text": "中文 ✓ naïve"}',
]


@pytest.fixture(scope="module")
def tok():
    return fb.train([TEXT * 3], vocab_size=330, special_tokens=[EOT], progress=False)


def expected(tok, source):
    out = []
    for doc in source:
        out += tok.encode(doc) + [tok.special_tokens[EOT]]
    return out


def corpus(root):
    root.mkdir()
    (root / "a.txt").write_text(TEXT * 20, encoding="utf-8")
    (root / "b.txt").write_text("", encoding="utf-8")
    lines = "\n".join(RECORDS + ["", "   "] + RECORDS) + "\n"
    (root / "c.jsonl").write_text(lines, encoding="utf-8")
    with gzip.open(root / "d.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write(lines.rstrip("\n"))  # no newline after the last record
    with gzip.open(root / "e.txt.gz", "wt", encoding="utf-8") as fh:
        fh.write(TEXT)
    return root


@pytest.fixture(autouse=True)
def bytes_pipeline_only(monkeypatch):
    monkeypatch.setattr(textfiles, "usable", lambda *args: False)


@pytest.fixture
def tiny_blocks(monkeypatch):
    monkeypatch.setattr(tokenfile, "UNIT_BYTES", 64)
    monkeypatch.setattr(tokenfile, "MIN_BATCH_BYTES", 300)
    monkeypatch.setattr(tokenfile, "MAX_BATCH_BYTES", 700)
    monkeypatch.setattr(corpus_module, "JSONL_READ_BYTES", 50)


def written(tok, source, path, threads, **options):
    tok.encode_to_file(source, path, eot=EOT, threads=threads, progress=False, offsets=str(path) + ".idx",
                       **options)
    return np.load(path).tolist(), np.fromfile(str(path) + ".idx", dtype="<u8").tolist()


def test_the_pipeline_is_taken(tok, tmp_path):
    source = fb.files(corpus(tmp_path / "c"))
    assert blocks.usable(tok, source, frozenset()) == (NATIVE.encoder is not None)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_every_document_and_threads_alike(tok, tmp_path, tiny_blocks, threads):
    root = corpus(tmp_path / "c")
    source = fb.files(root)
    want = expected(tok, source)
    ids, offsets = written(tok, source, tmp_path / "o.npy", threads)
    assert ids == want
    # One offset per document, then the total; each document ends with its eot.
    assert len(offsets) == len(list(source)) + 1 and offsets[-1] == len(ids)
    assert all(ids[end - 1] == tok.special_tokens[EOT] for end in offsets[1:])


def test_block_sizes_change_nothing(tok, tmp_path, monkeypatch):
    root = corpus(tmp_path / "c")
    source = fb.files(root)
    big, _ = written(tok, source, tmp_path / "big.npy", 2)
    monkeypatch.setattr(tokenfile, "UNIT_BYTES", 17)
    monkeypatch.setattr(tokenfile, "MIN_BATCH_BYTES", 40)
    monkeypatch.setattr(tokenfile, "MAX_BATCH_BYTES", 90)
    monkeypatch.setattr(corpus_module, "JSONL_READ_BYTES", 7)
    small, _ = written(tok, source, tmp_path / "small.npy", 2)
    assert big == small == expected(tok, source)


def test_invalid_utf8_as_errors_says(tok, tmp_path, tiny_blocks):
    (tmp_path / "bad.jsonl").write_bytes(b'{"text": "ok"}\n{"text": "bad \xff byte"}\n{"text": "\xc3\xa9"}\n')
    (tmp_path / "bad.txt").write_bytes(b"good text \xfe\xff and more\n" * 10)
    for name in ("bad.jsonl", "bad.txt"):
        replaced = fb.files(tmp_path / name, errors="replace")
        assert written(tok, replaced, tmp_path / "r.npy", 2)[0] == expected(tok, replaced)
        with pytest.raises(CorpusError) as python_error:
            list(fb.files(tmp_path / name))
        with pytest.raises(CorpusError) as pipeline_error:
            written(tok, fb.files(tmp_path / name), tmp_path / "s.npy", 2)
        assert str(pipeline_error.value) == str(python_error.value)
        assert not (tmp_path / "s.npy").exists()


@pytest.mark.parametrize("line", ['{"text": "a\\x"}', '{"text": 3}', '{"other": "a"}', '[1]', '{"text": "a"} x',
                                  '{"text": "a\\u12"}', '{"text": "tab\there"}', '{"text": "a"'])
def test_bad_records_name_file_and_line(tok, tmp_path, line):
    path = tmp_path / "x.jsonl"
    path.write_text('{"text": "fine"}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(CorpusError) as python_error:
        list(fb.files(path))
    with pytest.raises(CorpusError) as pipeline_error:
        written(tok, fb.files(path), tmp_path / "o.npy", 2)
    assert str(pipeline_error.value) == str(python_error.value)
    assert "line 3" in str(pipeline_error.value) and "x.jsonl" in str(pipeline_error.value)


def test_disallowed_special_names_the_document(tok, tmp_path, tiny_blocks):
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps({"text": t}) for t in ["a", "b <|endoftext|> c", "d"]) + "\n")
    with pytest.raises(SpecialTokenError, match="document 2"):
        written(tok, fb.files(path), tmp_path / "o.npy", 2)
    ids, _ = written(tok, fb.files(path), tmp_path / "o.npy", 2, disallowed_special=())
    assert ids == [i for d in ["a", "b <|endoftext|> c", "d"] for i in tok.encode_ordinary(d) + [tok.special_tokens[EOT]]]


def test_a_special_made_by_two_units_side_by_side_is_no_error(tok, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"text": "x <|endof"}) + "\n" + json.dumps({"text": "text|> y"}) + "\n")
    ids, _ = written(tok, fb.files(path), tmp_path / "o.npy", 2)
    assert ids == expected(tok, fb.files(path))


def test_schemes_read_whole_jsonl_documents(tmp_path, tiny_blocks):
    root = corpus(tmp_path / "c")
    for scheme in ("markers", "functional"):
        tok = fb.train([TEXT], vocab_size=600, scheme=scheme, special_tokens=[EOT], progress=False)
        source = fb.files(root / "c.jsonl", root / "a.txt")
        assert written(tok, source, tmp_path / f"{scheme}.npy", 2)[0] == expected(tok, source)


# ---- the C reader of JSONL fields against json.loads ------------------------------------------

needs_native = pytest.mark.skipif(NATIVE.encoder is None, reason="the compiled encoder is not built")

_escapes = st.sampled_from(['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"])
_unicode_escape = st.integers(0, 0xFFFF).map(lambda c: "\\u%04x" % c)
_upper_escape = st.integers(0, 0xFFFF).map(lambda c: "\\u%04X" % c)
_pair = st.tuples(st.integers(0xD800, 0xDBFF), st.integers(0xDC00, 0xDFFF)).map(lambda p: "\\u%04x\\u%04x" % p)
_raw = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters='"\\'), max_size=8)
_bad = st.sampled_from(["\\x", "\\u12", "\\uZZZZ", "\t", "\x01", "\\", "\\U0041"])
_string_body = st.lists(st.one_of(_raw, _escapes, _unicode_escape, _upper_escape, _pair), max_size=12).map("".join)
_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
              _string_body.map(lambda b: '"' + b + '"')),
    lambda inner: st.one_of(st.lists(inner, max_size=3).map(lambda v: "[" + ", ".join(map(_as_json, v)) + "]"),
                            st.lists(st.tuples(st.sampled_from(["a", "text", "b"]), inner), max_size=3).map(
                                lambda kv: "{" + ",".join('"%s":%s' % (k, _as_json(v)) for k, v in kv) + "}")),
    max_leaves=6)


def _as_json(value):
    return value if isinstance(value, str) else json.dumps(value)


@st.composite
def records(draw):
    fields = draw(st.lists(st.tuples(st.sampled_from(["text", "id", "meta", "t"]), _value), max_size=4))
    if draw(st.booleans()):
        fields.insert(draw(st.integers(0, len(fields))), ("text", '"' + draw(_string_body) + '"'))
    space = draw(st.sampled_from(["", " ", "\t", "\r", "  "]))
    line = "{" + space + ("," + space).join('"%s"%s:%s%s' % (k, space, space, _as_json(v)) for k, v in fields) + "}"
    if draw(st.integers(0, 5)) == 0:  # damage it
        at = draw(st.integers(0, len(line)))
        line = line[:at] + draw(_bad) + line[at:]
    return space + line + space


def python_reading(line):
    """What the Python path makes of one line: the document's UTF-8, None, or an error."""
    try:
        doc = json.loads(line, parse_int=float)
    except (ValueError, RecursionError):
        return "error"
    doc = doc.get("text") if isinstance(doc, dict) else None
    return bpe_utf8(doc) if isinstance(doc, str) else "error"


@needs_native
@settings(max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "400")), deadline=None)
@given(st.lists(records(), min_size=1, max_size=6))
def test_the_c_reader_agrees_with_json_loads(lines):
    data = ("\n".join(lines) + "\n").encode("utf-8")
    left = []

    def by_python(line, number, at):
        left.append(number)
        reading = python_reading(line.decode("utf-8"))
        return b"<error>" if reading == "error" else reading

    text, ends, numbers, last_line = NATIVE.encoder.jsonl_extract(data, b"text", 0, by_python)
    assert last_line == len(lines)
    starts = [0] + ends[:-1].tolist()
    got = [text[a:b] for a, b in zip(starts, ends.tolist())]
    want = [python_reading(line) for line in lines]
    assert got == [b"<error>" if w == "error" else w for w in want]
    assert numbers.tolist() == list(range(1, len(lines) + 1))
    # Whatever C read itself, it read as json.loads does; a damaged line is never read by C.
    for number, w in enumerate(want, 1):
        if w == "error":
            assert number in left


# ---- training counts: the same merges whatever the threads, batches counted while reading ----


def test_training_on_files_is_the_same_for_every_thread_count(tmp_path, monkeypatch):
    if NATIVE.scanner is not None:
        # Batches of a few KB, each counted by every thread: many batches in flight.
        monkeypatch.setattr(NATIVE.scanner, "BATCH_BYTES", 4096)
        monkeypatch.setattr(NATIVE.scanner, "PARALLEL_MIN_BYTES", 0)
    root = corpus(tmp_path / "c")
    source = fb.Files(fb.files(root).paths, block_bytes=1000)
    results = [fb.train(source, vocab_size=400, threads=t, progress=False) for t in (1, 2, 3)]
    reference = fb.train(list(fb.files(root)), vocab_size=400, backend="python", progress=False)
    for tok in results:
        assert tok.merges == reference.merges
    counted = [dict(fb.count(source, threads=t)) for t in (1, 2, 3)]
    assert counted[0] == counted[1] == counted[2]
    assert list(counted[0]) == list(counted[2])  # the order of first occurrence too


# ---- encode_batch: lists and the flat form equal encode, text for text ----------------------

BATCH_TEXTS = ["a\ud800b", "\ud83d\ude00x", "x\udc00\ud800", "héllo wörld 😀", "plain", "中文" * 3, "", " ",
               "tail \ud83d", "The cat sat.\n" * 30, "é" * 300, "<|endoftext|> as text"]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_encode_batch_lists_and_flat_equal_encode(tok, threads, monkeypatch):
    if NATIVE.encoder is not None:
        monkeypatch.setattr(NATIVE.encoder, "PARALLEL_MIN_BYTES", 0)  # every batch on the threads
    texts = BATCH_TEXTS[:-1] * 50
    want = [tok.encode(t) for t in texts]
    assert tok.encode_batch(texts, threads=threads) == want
    flat = tok.encode_batch(texts, threads=threads, flat=True)
    assert flat.ids.dtype == np.uint32 and flat.offsets.dtype == np.uint64
    assert len(flat) == len(texts) and flat.tolist() == want and flat[-1].tolist() == want[-1]
    specials = dict(allowed_special="all")
    assert tok.encode_batch(BATCH_TEXTS, threads=threads, flat=True, **specials).tolist() == \
        [tok.encode(t, **specials) for t in BATCH_TEXTS]
    with pytest.raises(SpecialTokenError):
        tok.encode_batch(BATCH_TEXTS, threads=threads, flat=True)
    assert tok.encode_batch(["ab ab"], flat=True, dropout=1.0, seed=1).tolist() == [tok.encode("ab ab", dropout=1.0)]


def test_the_first_error_in_the_corpus_is_the_one_raised(tok, tmp_path, tiny_blocks, monkeypatch):
    monkeypatch.setattr(tokenfile, "MAX_BATCH_BYTES", 300)
    # A disallowed special token in document 2, a broken record in the next batch (read while
    # the first is encoded): the special token's error comes first, as when documents are
    # read one at a time.
    lines = [json.dumps({"text": "a"}), json.dumps({"text": "b <|endoftext|>"})]
    lines += [json.dumps({"text": TEXT})] * 2 + ['{"text": broken}']
    path = tmp_path / "e.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(SpecialTokenError, match="document 2"):
        written(tok, fb.files(path), tmp_path / "o.npy", 2)


def test_a_jsonl_line_longer_than_many_reads_is_read_once(tmp_path, monkeypatch):
    """A line is gathered from its reads and joined once: reads of 64 bytes, lines of tens of
    kilobytes, lines ending exactly at a read's end, and a last line without a newline."""
    import json

    import numpy as np

    from functionalbpe.pipeline import blocks

    monkeypatch.setattr(corpus_module, "JSONL_READ_BYTES", 64)
    tok = fb.train(["the cat sat on the mat " * 50], vocab_size=268, progress=False)
    docs = ["x" * 40_000 + " the cat", "short", "y" * 9, "the mat " * 5_000]
    lines = [json.dumps({"text": d}) for d in docs]
    (tmp_path / "a.jsonl").write_text("\n".join(lines), encoding="utf-8")  # no newline at the end
    tok.encode_to_file(fb.files(tmp_path / "a.jsonl"), tmp_path / "ids.npy", eot=0, progress=False)
    assert np.load(tmp_path / "ids.npy").tolist() == [i for d in docs for i in tok.encode(d) + [0]]
