"""Issue 29's error contract and bounds, one test per item (the output paths, signals and
full disks are in tests/test_output_safety.py)."""
from __future__ import annotations

import json
import struct

import pytest

import functionalbpe as fb
from functionalbpe import counts as counts_module
from functionalbpe.core.piecetable import PieceTable
from functionalbpe.counts import HEADER, MAGIC, VERSION, PieceCounts
from functionalbpe.errors import CountsFileError, FunctionalBPEError
from functionalbpe.schemes.registry import make_scheme


def _counts_with_metadata(meta_changes):
    """A counts file's bytes with its metadata changed and the checksum made good again."""
    import hashlib

    data = fb.count(["ab ab"], progress=False).to_bytes()
    _, _, flags, meta_len, pieces, data_len, body_len = HEADER.unpack_from(data)
    meta = json.loads(data[HEADER.size:HEADER.size + meta_len])
    meta.update(meta_changes)
    new_meta = json.dumps(meta).encode()
    body = data[HEADER.size + meta_len:-32]
    head = HEADER.pack(MAGIC, VERSION, flags, len(new_meta), pieces, data_len, body_len)
    rest = head + new_meta + body
    return rest + hashlib.sha256(rest).digest()


@pytest.mark.parametrize("key", ["pattern", "name"])
def test_counts_metadata_option_named_like_a_parameter(tmp_path, key):
    data = _counts_with_metadata({"scheme_options": {key: "gpt2"}})
    with pytest.raises(CountsFileError, match=f"scheme_options: '{key}'"):
        PieceCounts.from_bytes(data)
    path = tmp_path / "x.counts"
    path.write_bytes(data)
    with pytest.raises(CountsFileError, match="x.counts"):
        PieceCounts.load(path)


def test_sparse_counts_file_refused_on_its_header(tmp_path, monkeypatch):
    """A 2 GB file (nothing on disk) with a header that fits its size: the checksum is read a
    block at a time and fails; the file is never read whole."""
    path = tmp_path / "sparse.counts"
    size = 2 << 30
    with open(path, "wb") as fh:
        fh.write(HEADER.pack(MAGIC, VERSION, 0, 2, 0, size - HEADER.size - 2 - 32, size - HEADER.size - 2 - 32))
        fh.truncate(size)

    def whole(*args, **kwargs):
        raise AssertionError("read whole before its checksum was checked")

    monkeypatch.setattr(counts_module, "read_bytes", whole)
    monkeypatch.setattr(counts_module, "_checksum_holds", lambda name, size: False)
    with pytest.raises(CountsFileError, match="checksum mismatch"):
        PieceCounts.load(path)
    zeros = tmp_path / "zeros.counts"
    with open(zeros, "wb") as fh:
        fh.truncate(size)
    with pytest.raises(CountsFileError, match="not a functionalbpe counts file"):
        PieceCounts.load(zeros)


@pytest.mark.parametrize("backend", ["auto", "python"])
def test_counts_near_2_63_refused_alike_on_every_backend(backend):
    table = PieceTable.from_dict({"aaaa": 2**62, "ab": 2**62})
    counts = PieceCounts(table, make_scheme("plain"), ())
    with pytest.raises(FunctionalBPEError, match="too large to train on"):
        fb.train(counts, vocab_size=260, backend=backend, progress=False)


@pytest.mark.parametrize("backend", ["auto", "python"])
def test_counts_just_under_the_bound_train_and_save(tmp_path, backend):
    table = PieceTable.from_dict({"ab": 2**63 - 1})
    tok = fb.train(PieceCounts(table, make_scheme("plain"), ()), vocab_size=257, backend=backend, progress=False)
    tok.save(tmp_path / "t.json")
    assert fb.Tokenizer.load(tmp_path / "t.json").merges == tok.merges
