"""The C pipeline of plain text files (functionalbpe/pipeline/textfiles.py,
csrc/lib/encode/file_encode.c): the token file holds ``tok.encode(file) + [eot]`` for every
file, whatever the number of threads, the block size and the stretch between returns to
Python; errors are those of the stream path (bad UTF-8: Python's own account of the byte; a
disallowed special token: the document and file named)."""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import functionalbpe as fb
from functionalbpe.core._native import NATIVE
from functionalbpe.errors import CorpusError, SpecialTokenError
from functionalbpe.pipeline import textfiles, tokenfile

pytestmark = pytest.mark.skipif(
    NATIVE.encoder is None or not NATIVE.encoder.file_pipeline_available(),
    reason="the C file pipeline needs the compiled core with worker threads")

EOT = "<|endoftext|>"
# Fragments whose joins put multi-byte characters, newlines, the cuts' punctuation and the
# special token's text (whole and in halves) at every offset, so at every block edge.
FRAGMENTS = ["a", "word", " the", "é", "中文", "😀", " ", "  ", "\n", "\n\n", "\r\n", ".", ",", "x.y",
             "1234", "'s", "/", "\t", "(", EOT, "<|endof", "text|>", "ÿ"]


@pytest.fixture(scope="module")
def tok():
    text = "".join(FRAGMENTS) * 40 + "The cat sat on the mat. naïve café, 中文 ✓ 😀\n" * 50
    return fb.train([text], vocab_size=400, special_tokens=[EOT], progress=False)


# Repeated, so that some documents span many blocks of a kilobyte and more.
documents = st.lists(st.builds(lambda parts, times: "".join(parts) * times,
                               st.lists(st.sampled_from(FRAGMENTS), max_size=600), st.integers(1, 12)),
                     min_size=1, max_size=3)


def write_files(root, docs):
    os.makedirs(root, exist_ok=True)
    paths = []
    for k, doc in enumerate(docs):
        path = os.path.join(root, f"{k}.txt")
        with open(path, "wb") as fh:
            fh.write(doc.encode("utf-8"))
        paths.append(path)
    return paths


def encoded(tok, paths, out, threads, block, stretch, check=1 << 20, **options):
    saved = tokenfile.UNIT_BYTES, textfiles.CALL_BYTES_PER_THREAD, textfiles.CHECK_BYTES
    tokenfile.UNIT_BYTES, textfiles.CALL_BYTES_PER_THREAD, textfiles.CHECK_BYTES = block, stretch, check
    try:
        summary = tok.encode_to_file(fb.files(paths), out, eot=EOT, threads=threads, progress=False,
                                     offsets=out + ".idx", **options)
    finally:
        tokenfile.UNIT_BYTES, textfiles.CALL_BYTES_PER_THREAD, textfiles.CHECK_BYTES = saved
    return summary, np.load(out).tolist(), np.fromfile(out + ".idx", dtype="<u8").tolist()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(docs=documents, threads=st.integers(1, 8),
       block=st.one_of(st.integers(1024, 4096), st.integers(1, 64)), stretch=st.integers(1, 20_000),
       ordinary=st.booleans())
def test_token_files_are_encode_of_each_file(tok, tmp_path_factory, docs, threads, block, stretch, ordinary):
    root = str(tmp_path_factory.mktemp("t"))
    paths = write_files(root, docs)
    out = os.path.join(root, "o.npy")
    options = {"disallowed_special": ()} if ordinary else {}
    assert textfiles.usable(tok, fb.files(paths), frozenset())
    refused = [k for k, doc in enumerate(docs, 1) if EOT in doc and not ordinary]
    if refused:
        with pytest.raises(SpecialTokenError) as error:
            encoded(tok, paths, out, threads, block, stretch, **options)
        assert f"document {refused[0]}:" in str(error.value) and paths[refused[0] - 1] in str(error.value)
        assert not os.path.exists(out)
        return
    summary, ids, offsets = encoded(tok, paths, out, threads, block, stretch, **options)
    want, starts = [], []
    for doc in docs:
        starts.append(len(want))
        want += tok.encode(doc, **options) + [tok.special_tokens[EOT]]
    assert ids == want
    assert offsets == starts + [len(want)]
    assert (summary.documents, summary.tokens, summary.bytes_in) == (
        len(docs), len(want), sum(len(d.encode("utf-8")) for d in docs))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=800).map("".join),
       where=st.floats(0, 1), bad=st.sampled_from([b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\x80", b"\xf0\x9f"]),
       threads=st.integers(1, 4), block=st.integers(1, 2048), check=st.integers(1, 600))
def test_invalid_utf8_is_the_error_of_reading_the_file(tok, tmp_path_factory, doc, where, bad, threads, block,
                                                       check):
    data = doc.encode("utf-8")
    at = int(where * len(data))
    root = str(tmp_path_factory.mktemp("u"))
    path = os.path.join(root, "bad.txt")
    with open(path, "wb") as fh:
        fh.write(data[:at] + bad + data[at:])
    with pytest.raises(CorpusError) as python_error:
        list(fb.files(path))
    with pytest.raises(CorpusError) as pipeline_error:
        encoded(tok, [path], os.path.join(root, "o.npy"), threads, block, 1 << 20, check, disallowed_special=())
    assert str(pipeline_error.value) == str(python_error.value)
    assert not os.path.exists(os.path.join(root, "o.npy"))


def test_the_pipeline_is_for_plain_uncompressed_files_only(tok, tmp_path):
    import gzip

    text = tmp_path / "a.txt"
    text.write_text("hello world.\n")
    with gzip.open(tmp_path / "b.txt.gz", "wt") as fh:
        fh.write("hello")
    (tmp_path / "c.jsonl").write_text('{"text": "hi"}\n')
    assert textfiles.usable(tok, fb.files(text), frozenset())
    assert not textfiles.usable(tok, fb.files(text), frozenset([EOT]))
    assert not textfiles.usable(tok, fb.files(text, errors="replace"), frozenset())
    assert not textfiles.usable(tok, fb.files(text, max_chars=3), frozenset())
    assert not textfiles.usable(tok, fb.files(tmp_path / "b.txt.gz"), frozenset())
    assert textfiles.usable(tok, fb.files(text, tmp_path / "c.jsonl"), frozenset())  # each file its own job
    assert not textfiles.usable(tok, [str(text)], frozenset())


def test_a_full_disk_and_the_layouts_limit_are_errors_naming_the_output(tok, tmp_path, monkeypatch):
    import dataclasses

    from functionalbpe.errors import FunctionalBPEError, OutputError

    path = tmp_path / "a.txt"
    path.write_text("The cat sat on the mat.\n" * 3000, encoding="utf-8")
    source = fb.files(path)
    assert textfiles.usable(tok, source, frozenset())
    if os.path.exists("/dev/full"):
        with pytest.raises(OutputError, match="/dev/full: cannot write"):
            tok.encode_to_file(source, "/dev/full", format="bin", eot=EOT, threads=2, progress=False)
    whole = len(tok.encode(path.read_text(encoding="utf-8"))) + 1
    small = dataclasses.replace(tokenfile.LAYOUTS["llmc"], max_tokens=whole - 1)
    monkeypatch.setitem(tokenfile.LAYOUTS, "llmc", small)
    with pytest.raises(FunctionalBPEError, match="holds at most"):
        tok.encode_to_file(source, tmp_path / "o.bin", format="llmc", eot=EOT, threads=2, progress=False)
    assert not (tmp_path / "o.bin").exists()
    monkeypatch.setitem(tokenfile.LAYOUTS, "llmc", dataclasses.replace(small, max_tokens=whole))
    tok.encode_to_file(source, tmp_path / "o.bin", format="llmc", eot=EOT, threads=2, progress=False)
    assert fb.read_token_file(tmp_path / "o.bin").tolist() == tok.encode(path.read_text(encoding="utf-8")) + [
        tok.special_tokens[EOT]]
