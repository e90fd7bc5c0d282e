"""``.zst`` and Parquet files in ``fb.files``: the same documents as the same text in ``.txt``
(and ``.jsonl``) files, so training, counting and ``encode_to_file`` give the same merges,
counts and ids; damaged files are errors naming them. Each test is skipped without its
optional package (``pip install functionalbpe[formats]``)."""
import json

import numpy as np
import pytest

import functionalbpe as fb
from functionalbpe.errors import CorpusError
from functionalbpe.pipeline import tokenfile
from functionalbpe.text import corpus

EOT = "<|endoftext|>"
DOCS = ["The cat sat on the mat.\nnaïve café, 中文 ✓ 😀\n" * 40, "", "short one", "x y z\n" * 300,
        "tab\there \\ \"quoted\" \u2028 line"]


@pytest.fixture(scope="module")
def tok():
    return fb.train(DOCS * 3, vocab_size=320, special_tokens=[EOT], progress=False)


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setattr(tokenfile, "UNIT_BYTES", 64)
    monkeypatch.setattr(tokenfile, "MIN_BATCH_BYTES", 300)
    monkeypatch.setattr(tokenfile, "MAX_BATCH_BYTES", 700)
    monkeypatch.setattr(corpus, "JSONL_READ_BYTES", 50)


def txt_dir(root, docs):
    root.mkdir()
    for k, doc in enumerate(docs):
        (root / f"{k:03d}.txt").write_text(doc, encoding="utf-8")
    return root


def ids(tok, source, path, threads=2):
    tok.encode_to_file(source, path, eot=EOT, threads=threads, progress=False)
    return np.load(path).tolist()


def same_everywhere(tok, source, reference, tmp_path):
    assert list(source) == list(reference)
    assert ids(tok, source, tmp_path / "a.npy", 1) == ids(tok, source, tmp_path / "b.npy", 2) == \
        ids(tok, reference, tmp_path / "c.npy")
    assert dict(fb.count(source, threads=2)) == dict(fb.count(reference, threads=2))
    assert fb.train(source, vocab_size=300, progress=False).merges == \
        fb.train(reference, vocab_size=300, progress=False).merges


def zst_write(path, data, frames=3):
    zstandard = pytest.importorskip("zstandard")
    step = max(1, len(data) // frames)
    compressor = zstandard.ZstdCompressor()
    path.write_bytes(b"".join(compressor.compress(data[i:i + step]) for i in range(0, len(data), step)))


def test_zst_text_and_jsonl_files_read_as_their_text(tok, tmp_path, tiny):
    reference = txt_dir(tmp_path / "txt", DOCS)
    root = tmp_path / "zst"
    root.mkdir()
    for k, doc in enumerate(DOCS):
        zst_write(root / f"{k:03d}.txt.zst", doc.encode("utf-8"))
    same_everywhere(tok, fb.files(root), fb.files(reference), tmp_path)
    lines = "".join(json.dumps({"text": d}) + "\n" for d in DOCS).encode()
    (tmp_path / "d.jsonl").write_bytes(lines)
    zst_write(tmp_path / "d.jsonl.zst", lines, frames=7)
    same_everywhere(tok, fb.files(tmp_path / "d.jsonl.zst"), fb.files(tmp_path / "d.jsonl"), tmp_path)


def test_damaged_zst_files_are_errors_naming_them(tok, tmp_path):
    pytest.importorskip("zstandard")
    zst_write(tmp_path / "whole.txt.zst", ("some text " * 5000).encode(), frames=1)
    data = (tmp_path / "whole.txt.zst").read_bytes()
    (tmp_path / "cut.txt.zst").write_bytes(data[: len(data) // 2])
    (tmp_path / "junk.txt.zst").write_bytes(b"not zstd at all" * 10)
    for name, why in (("cut.txt.zst", "truncated"), ("junk.txt.zst", "damaged")):
        with pytest.raises(CorpusError, match=why) as caught:
            list(fb.files(tmp_path / name))
        assert name in str(caught.value)
        with pytest.raises(CorpusError, match=why):
            tok.encode_to_file(fb.files(tmp_path / name), tmp_path / "o.npy", progress=False)


def parquet_write(path, columns):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table(columns), path, row_group_size=2)


def test_parquet_rows_read_as_documents(tok, tmp_path, tiny, monkeypatch):

    monkeypatch.setattr(corpus, "PARQUET_BATCH_ROWS", 2)  # several batches, each a slice of the column
    parquet_write(tmp_path / "d.parquet", {"id": list(range(len(DOCS))), "text": DOCS, "body": DOCS[::-1]})
    reference = txt_dir(tmp_path / "txt", DOCS)
    same_everywhere(tok, fb.files(tmp_path / "d.parquet"), fb.files(reference), tmp_path)
    assert list(fb.files(tmp_path / "d.parquet", field="body")) == DOCS[::-1]
    # Found in a directory too (Parquet holds NUL bytes, yet it is not skipped as binary).
    (tmp_path / "dir").mkdir()
    parquet_write(tmp_path / "dir" / "d.parquet", {"text": DOCS})
    assert list(fb.files(tmp_path / "dir")) == DOCS


def test_a_dictionary_encoded_column_reads_as_its_strings(tok, tmp_path, tiny, monkeypatch):
    """A categorical column (pandas' ``category``, Arrow's dictionary type), also when one
    long value stands for many rows: decoded a bounded slice at a time."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")

    docs = DOCS * 4
    pq.write_table(pa.table({"text": pa.array(docs).dictionary_encode()}), tmp_path / "c.parquet", row_group_size=7)
    assert pq.ParquetFile(tmp_path / "c.parquet").schema_arrow.field("text").type.value_type == pa.string()
    monkeypatch.setattr(corpus, "PARQUET_BATCH_BYTES", 3000)  # several slices of each batch
    same_everywhere(tok, fb.files(tmp_path / "c.parquet"), fb.files(txt_dir(tmp_path / "txt", docs)), tmp_path)
    big = "long value " * 1000
    pq.write_table(pa.table({"text": pa.array([big] * 50).dictionary_encode()}), tmp_path / "rep.parquet")
    slices = list(corpus.parquet_batches(tmp_path / "rep.parquet", "text"))
    assert [len(c) for c in slices] == [1] * 50 and all(c.type == pa.large_string() for c in slices)
    monkeypatch.setattr(corpus, "PARQUET_MAX_ROW_BYTES", 5000)
    with pytest.raises(CorpusError, match="rep.parquet: row 0: the column 'text' holds 11,000 bytes"):
        list(fb.files(tmp_path / "rep.parquet"))


def test_invalid_utf8_in_parquet_names_the_row(tok, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    offsets = np.array([0, 2, 5, 8], dtype=np.int32)  # "ok", "ay\xff", "bad": Arrow does not check on writing
    column = pa.Array.from_buffers(pa.string(), 3, [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"okay\xffbad")])
    pq.write_table(pa.table({"text": column}), tmp_path / "bad.parquet")
    message = r"bad.parquet: row 1: the column 'text' holds invalid UTF-8 \(at byte 2 of the row\)"
    with pytest.raises(CorpusError, match=message):
        list(fb.files(tmp_path / "bad.parquet"))
    with pytest.raises(CorpusError, match=message):
        tok.encode_to_file(fb.files(tmp_path / "bad.parquet"), tmp_path / "bad.npy", progress=False)
    assert not (tmp_path / "bad.npy").exists()


def test_bad_parquet_files_are_errors_naming_them(tok, tmp_path):
    parquet_write(tmp_path / "n.parquet", {"text": ["a", None, "b"]})
    parquet_write(tmp_path / "i.parquet", {"text": [1, 2]})
    (tmp_path / "junk.parquet").write_bytes(b"PAR1 not really")
    cases = [("n.parquet", "text", "row 1"), ("i.parquet", "text", "not strings"), ("n.parquet", "body", "no column"),
             ("junk.parquet", "text", "cannot read as Parquet")]
    for name, field, why in cases:
        with pytest.raises(CorpusError, match=why) as caught:
            list(fb.files(tmp_path / name, field=field))
        assert name in str(caught.value)
        with pytest.raises(CorpusError, match=why):
            tok.encode_to_file(fb.files(tmp_path / name, field=field), tmp_path / "o.npy", progress=False)


def test_a_zst_bomb_is_read_in_bounded_memory(tmp_path):
    """zstd's smallest block stands for 128 KiB: a file of a few KB can hold a gigabyte. It is
    read a block at a time, never inflated whole (peak Python memory, not the text's size)."""
    import tracemalloc

    zstandard = pytest.importorskip("zstandard")
    line = b"a short line\n"
    size = 128 << 20
    data = zstandard.ZstdCompressor(level=19).compress(line * (size // len(line)))
    assert len(data) < size // 1000
    (tmp_path / "bomb.txt.zst").write_bytes(data)
    tracemalloc.start()
    try:
        total = sum(len(unit) for unit in fb.files(tmp_path / "bomb.txt.zst").units())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total == size // len(line) * len(line)
    assert peak < 32 << 20, peak


def test_a_parquet_bomb_is_refused_before_it_is_inflated(tmp_path):
    """One row of 80 MiB compresses to a few KB; the metadata says how large it is, so it is
    refused before Arrow inflates it (and other files are read a bounded batch at a time)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"text": ["a" * (80 << 20)]}), tmp_path / "bomb.parquet", compression="zstd")
    assert (tmp_path / "bomb.parquet").stat().st_size < 1 << 20
    with pytest.raises(CorpusError, match=r"bomb.parquet: row group 0: the column 'text' holds 83,886,\d+ bytes in 1 row uncompressed"):
        list(fb.files(tmp_path / "bomb.parquet"))
    # Two columns of one name: said, not a KeyError.
    table = pa.Table.from_arrays([pa.array(["x"]), pa.array(["y"])], names=["text", "text"])
    pq.write_table(table, tmp_path / "twice.parquet")
    with pytest.raises(CorpusError, match="2 columns are named 'text'"):
        list(fb.files(tmp_path / "twice.parquet"))


def test_parquet_page_checksums_are_verified(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    docs = [f"document number {k} " * 20 for k in range(200)]
    pq.write_table(pa.table({"text": docs}), tmp_path / "good.parquet", compression="none", write_page_checksum=True)
    data = bytearray((tmp_path / "good.parquet").read_bytes())
    at = data.find(b"document number 100 ")
    data[at + 9] ^= 0x01  # one bit of the text, inside a page
    (tmp_path / "flipped.parquet").write_bytes(bytes(data))
    assert list(fb.files(tmp_path / "good.parquet")) == docs
    with pytest.raises(CorpusError, match="flipped.parquet: cannot read as Parquet"):
        list(fb.files(tmp_path / "flipped.parquet"))
