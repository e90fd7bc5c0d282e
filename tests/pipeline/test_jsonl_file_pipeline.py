"""The C pipeline of JSONL files (functionalbpe/pipeline/textfiles.py,
csrc/lib/encode/file_encode.c): the token file, the offsets file and the summary are those of
the stream path (functionalbpe/pipeline/blocks.py), and the ids ``tok.encode(doc) + [eot]`` of
every document ``fb.files`` reads, whatever the number of threads, the block size and the
stretch between returns to Python; the lines the C reader leaves to Python, the special
tokens it refuses and every error (its message, its line and document numbers) are the
stream path's too."""
import gzip
import importlib.util
import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import functionalbpe as fb
from functionalbpe.core._native import NATIVE
from functionalbpe.errors import CorpusError, SpecialTokenError
from functionalbpe.pipeline import textfiles, tokenfile
from functionalbpe.text import corpus

pytestmark = pytest.mark.skipif(
    NATIVE.encoder is None or not NATIVE.encoder.file_pipeline_available(),
    reason="the C file pipeline needs the compiled core with worker threads")

EOT = "<|endoftext|>"
FRAGMENTS = ["a", "word", " the", "é", "中文", "😀", " ", "\n", "\r\n", ".", "'s", "\t", "\"", "\\", "/", "\x00",
             "\u2028", EOT, "<|endof", "text|>", "ÿ"]


@pytest.fixture(scope="module")
def tok():
    text = "".join(FRAGMENTS) * 40 + "The cat sat on the mat. naïve café, 中文 ✓ 😀\n" * 50
    return fb.train([text], vocab_size=400, special_tokens=[EOT], progress=False)


texts = st.builds(lambda parts, times: "".join(parts) * times, st.lists(st.sampled_from(FRAGMENTS), max_size=60),
                  st.integers(1, 30))

# Lines that hold no document: JSON's white space (read in C) and other white space (Python's).
BLANK = ["", " ", "\t", "\r", " \t\r", "\x0c", "\u3000"]


@st.composite
def record(draw, field):
    """A line holding one document: as json.dumps writes it (escaped or not), with other
    fields around it, or in a form the C reader leaves to Python."""
    doc = draw(texts)
    others = draw(st.lists(st.sampled_from([("id", 7), ("meta", {"a": [1, 2.5, None]}), ("t", "x\\y")]),
                           max_size=2))
    fields = dict(others)
    fields[field] = doc
    line = json.dumps(fields, ensure_ascii=draw(st.booleans()))
    form = draw(st.integers(0, 9))
    if form == 0:  # NaN in another field: C leaves it to json.loads
        line = line[:-1] + ', "n": NaN}'
    elif form == 1:  # the key written with an escape
        line = line.replace(json.dumps(field), json.dumps(field)[:-2] + "\\u%04x\"" % ord(field[-1]), 1)
    elif form == 2:  # a lone surrogate escape: U+FFFD
        line = line[:-1] + ", " + json.dumps(field) + ': "a\\ud800b"}'
    elif form == 3:  # nested deeper than the C reader goes
        line = '{"deep": ' + "[" * 70 + "]" * 70 + ", " + line[1:]
    return line


COMPRESSIONS = ["", ".gz"] + ([".zst"] if importlib.util.find_spec("zstandard") else [])


def write_jsonl(path, data: bytes):
    """Write ``data`` to ``path``, compressed as its name says."""
    if path.endswith(".gz"):
        with gzip.open(path, "wb") as fh:
            fh.write(data)
    elif path.endswith(".zst"):
        import zstandard

        with open(path, "wb") as fh:
            fh.write(zstandard.ZstdCompressor().compress(data))
    else:
        with open(path, "wb") as fh:
            fh.write(data)


def read_jsonl(path) -> bytes:
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as fh:
            return fh.read()
    if path.endswith(".zst"):
        import zstandard

        with open(path, "rb") as fh:
            return zstandard.ZstdDecompressor().stream_reader(fh).read()
    with open(path, "rb") as fh:
        return fh.read()


def jsonl_files(draw, root, field):
    """One to three files of records, blank lines between; the last newline sometimes left out;
    compressed or not."""
    paths = []
    for k in range(draw(st.integers(1, 3))):
        lines = draw(st.lists(st.one_of(record(field), st.sampled_from(BLANK)), max_size=25))
        data = "\n".join(lines) + ("\n" if draw(st.booleans()) else "")
        path = os.path.join(root, f"{k}.jsonl" + draw(st.sampled_from(COMPRESSIONS)))
        write_jsonl(path, data.encode("utf-8"))
        paths.append(path)
    return paths


def written(tok, paths, out, threads, block, stretch, field, read=None, first=None, **options):
    """What the C pipeline writes (or raises); ``read``: the bytes of a compressed file
    decompressed at a time (both paths), so that its stretches are a few lines; ``first``:
    the first stretch of a compressed file, about (then twice the one before, to ``stretch``
    bytes a thread)."""
    saved = (tokenfile.UNIT_BYTES, textfiles.CALL_BYTES_PER_THREAD, corpus.JSONL_READ_BYTES,
             textfiles.FIRST_STRETCH)
    tokenfile.UNIT_BYTES, textfiles.CALL_BYTES_PER_THREAD = block, stretch
    corpus.JSONL_READ_BYTES = read or corpus.JSONL_READ_BYTES
    textfiles.FIRST_STRETCH = first or textfiles.FIRST_STRETCH
    try:
        summary = tok.encode_to_file(fb.files(*paths, field=field), out, eot=EOT, threads=threads, progress=False,
                                     offsets=out + ".idx", **options)
    finally:
        (tokenfile.UNIT_BYTES, textfiles.CALL_BYTES_PER_THREAD, corpus.JSONL_READ_BYTES,
         textfiles.FIRST_STRETCH) = saved
    with open(out, "rb") as ids, open(out + ".idx", "rb") as index:
        return (summary.documents, summary.tokens, summary.bytes_in), ids.read(), index.read()


def by_stream(tok, paths, out, field, read=None, **options):
    """What the stream path writes (or raises)."""
    original = textfiles.usable
    textfiles.usable = lambda *args: False
    try:
        return written(tok, paths, out, 2, tokenfile.UNIT_BYTES, textfiles.CALL_BYTES_PER_THREAD, field, read,
                       **options)
    finally:
        textfiles.usable = original


def outcome(run):
    try:
        return run()
    except Exception as exc:  # the error itself is what is compared
        return type(exc), str(exc)


@settings(max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "120")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), threads=st.integers(1, 4), block=st.one_of(st.integers(1024, 4096), st.integers(1, 64)),
       stretch=st.integers(1, 20_000), ordinary=st.booleans(), field=st.sampled_from(["text", "body"]),
       read=st.one_of(st.none(), st.integers(1, 300)), first=st.integers(1, 2_000))
def test_jsonl_token_files_are_the_stream_paths(tok, tmp_path_factory, data, threads, block, stretch, ordinary,
                                                field, read, first):
    root = str(tmp_path_factory.mktemp("j"))
    paths = jsonl_files(data.draw, root, field)
    options = {"disallowed_special": ()} if ordinary else {}
    assert textfiles.usable(tok, fb.files(*paths, field=field), frozenset())
    got = outcome(lambda: written(tok, paths, os.path.join(root, "c.npy"), threads, block, stretch, field, read,
                                  first, **options))
    want = outcome(lambda: by_stream(tok, paths, os.path.join(root, "s.npy"), field, read, **options))
    assert got == want
    docs = list(fb.files(*paths, field=field))
    if ordinary or not any(EOT in doc for doc in docs):
        ids, starts = [], []
        for doc in docs:
            starts.append(len(ids))
            ids += tok.encode(doc, **options) + [tok.special_tokens[EOT]]
        counts, token_bytes, index = got
        assert np.frombuffer(token_bytes[128:], dtype=np.uint16).tolist() == ids
        assert np.frombuffer(index, dtype="<u8").tolist() == starts + [len(ids)]
        assert counts == (len(docs), len(ids), sum(len(doc.encode("utf-8")) for doc in docs))
    else:
        assert got[0] is SpecialTokenError
        assert not os.path.exists(os.path.join(root, "c.npy"))


DAMAGE = ['{"text": "a', '{"text": 3}', '{"other": "a"}', "[1]", '{"text": "a"} x', '{"text": "a\\x"}',
          '{"text": "tab\there"}', "nope", '{"text": "a\\u12"}', b'{"text": "bad \xff byte"}', b"\xc3",
          b'{"text": "\xed\xa0\x80"}']


@settings(max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "60")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), damage=st.sampled_from(DAMAGE), threads=st.integers(1, 4),
       block=st.one_of(st.integers(1024, 2048), st.integers(1, 64)), stretch=st.sampled_from([1, 50, 1 << 20]),
       read=st.one_of(st.none(), st.integers(1, 100)))
def test_a_damaged_line_is_the_stream_paths_error(tok, tmp_path_factory, data, damage, threads, block, stretch, read):
    root = str(tmp_path_factory.mktemp("d"))
    paths = jsonl_files(data.draw, root, "text")
    lines = read_jsonl(paths[-1]).split(b"\n")
    at = data.draw(st.integers(0, len(lines)))
    lines.insert(at, damage if isinstance(damage, bytes) else damage.encode("utf-8"))
    write_jsonl(paths[-1], b"\n".join(lines))
    got = outcome(lambda: written(tok, paths, os.path.join(root, "c.npy"), threads, block, stretch, "text", read,
                                  disallowed_special=()))
    want = outcome(lambda: by_stream(tok, paths, os.path.join(root, "s.npy"), "text", read, disallowed_special=()))
    assert got == want
    assert isinstance(got[1], str) and f"line {at + 1}" in got[1]
    assert not os.path.exists(os.path.join(root, "c.npy"))


@pytest.mark.parametrize("block", [1, 7, 40, 1024])
@pytest.mark.parametrize("damaged", [1, 2, 57, 200, 201])
def test_the_line_numbers_of_many_short_lines(tok, tmp_path, block, damaged):
    """Lines shorter than a block, units of one line and of many: every line before the
    damaged one is counted once, whichever units the workers read and Python read."""
    lines = [json.dumps({"text": f"doc {k} é"}) if k % 9 else '{"text": "x", "n": NaN}' for k in range(1, 201)]
    lines.insert(damaged - 1, '{"text": 3}')
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    got = outcome(lambda: written(tok, [str(path)], str(tmp_path / "c.npy"), 3, block, 100, "text"))
    assert got == outcome(lambda: by_stream(tok, [str(path)], str(tmp_path / "s.npy"), "text"))
    assert got[0] is CorpusError and f"line {damaged}: no string field" in got[1]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300).map(lambda b: b.replace(b"\x00", b"\n")), block=st.integers(1, 40))
def test_units_are_the_lines_that_start_in_their_block(tok, data, block):
    job = NATIVE.encoder.FileEncoding(tok.encoder.native, data, tok.encoder.scanner, block, 2, -1, [], [], -1, 1,
                                      b"text", -1)
    try:
        n = len(data)
        line_starts = [0] + [i + 1 for i in range(n - 1) if data[i] == 10]
        covered = 0
        for k in range(job.units):
            start, stop = job.jsonl_unit(k)
            inside = [s for s in line_starts if k * block <= s < (k + 1) * block]
            if not inside or n == 0:
                assert start == stop
                continue
            after = [s for s in line_starts if s >= (k + 1) * block]
            assert (start, stop) == (inside[0], after[0] if after else n)
            assert start == covered  # the units are the file, in order
            covered = stop
        assert covered == n
    finally:
        job.release()


def test_jsonl_and_text_files_together(tok, tmp_path):
    (tmp_path / "a.txt").write_text("The cat sat on the mat.\n" * 200, encoding="utf-8")
    (tmp_path / "b.jsonl").write_text("\n".join(json.dumps({"text": f"doc {k} 😀"}) for k in range(300)),
                                      encoding="utf-8")
    (tmp_path / "c.txt").write_text("a <|endoftext|> b", encoding="utf-8")
    paths = [str(tmp_path / name) for name in ("a.txt", "b.jsonl", "c.txt")]
    assert textfiles.usable(tok, fb.files(*paths), frozenset())
    for options in ({"disallowed_special": ()}, {}):  # the second: document 302 refused
        got = outcome(lambda: written(tok, paths, str(tmp_path / "c.npy"), 3, 1024, 4096, "text", **options))
        assert got == outcome(lambda: by_stream(tok, paths, str(tmp_path / "s.npy"), "text", **options))
    assert "document 302" in got[1] and "c.txt" in got[1]


def test_what_stays_on_the_stream_path(tok, tmp_path):
    (tmp_path / "a.jsonl").write_text('{"text": "hi"}\n')
    with gzip.open(tmp_path / "b.jsonl.gz", "wt") as fh:
        fh.write('{"text": "hi"}\n')
    (tmp_path / "c.json").write_text('["hi", "there"]')
    (tmp_path / "d.json").write_text('{"text": "hi"}\n{"text": "there"}\n')
    jsonl = tmp_path / "a.jsonl"
    assert textfiles.usable(tok, fb.files(jsonl), frozenset())
    assert textfiles.usable(tok, fb.files(tmp_path / "d.json"), frozenset())  # JSON Lines
    assert textfiles.usable(tok, fb.files(tmp_path / "b.jsonl.gz"), frozenset())  # decompressed a stretch at a time
    assert not textfiles.usable(tok, fb.files(tmp_path / "b.jsonl.gz"), frozenset(), 1)  # on one thread
    (tmp_path / "e.txt.gz").write_bytes(gzip.compress(b"hi"))
    assert not textfiles.usable(tok, fb.files(tmp_path / "e.txt.gz"), frozenset())  # a text file is mapped whole
    assert not textfiles.usable(tok, fb.files(tmp_path / "c.json"), frozenset())  # an array
    assert not textfiles.usable(tok, fb.files(jsonl, errors="replace"), frozenset())
    assert not textfiles.usable(tok, fb.files(jsonl, max_doc_chars=3), frozenset())
    assert not textfiles.usable(tok, fb.files(jsonl), frozenset([EOT]))


@pytest.mark.parametrize("kept", [0.1, 0.5, 0.97])
@pytest.mark.parametrize("damaged", [None, 5, 250])
def test_a_truncated_compressed_file_is_the_stream_paths_error(tok, tmp_path, kept, damaged):
    """A compressed file cut short: the error of reading it comes after the lines read before
    it (a damaged line among them first), as on the stream path, however it is decompressed."""
    lines = [json.dumps({"text": f"doc {k} é"}) for k in range(1, 301)]
    if damaged:
        lines[damaged - 1] = '{"text": 3}'
    packed = gzip.compress("\n".join(lines).encode("utf-8"))
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(packed[:int(len(packed) * kept)])
    for read, stretch in ((64, 1), (64, 300), (1 << 20, 1)):
        got = outcome(lambda: written(tok, [str(path)], str(tmp_path / "c.npy"), 2, 64, stretch, "text", read))
        assert got == outcome(lambda: by_stream(tok, [str(path)], str(tmp_path / "s.npy"), "text", read))
        assert got[0] is CorpusError
