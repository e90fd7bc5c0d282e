import pytest

import functionalbpe as fb
from functionalbpe.errors import CorpusError


def test_files_expands_directories_and_globs(tmp_path):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "a.txt").write_text("A", encoding="utf-8")
    (tmp_path / "d" / "sub" / "b.md").write_text("B", encoding="utf-8")
    (tmp_path / "d" / ".hidden").write_text("H", encoding="utf-8")
    (tmp_path / "d" / "bin.dat").write_bytes(b"\x00\x01")
    assert list(fb.files(tmp_path / "d")) == ["A", "B"]
    assert list(fb.files(str(tmp_path / "d" / "**" / "*.md"))) == ["B"]
    # Named twice, read once.
    assert list(fb.files(tmp_path / "d" / "a.txt", tmp_path / "d")) == ["A", "B"]


def test_missing_and_empty_inputs(tmp_path):
    with pytest.raises(CorpusError, match="no such file"):
        fb.files(tmp_path / "nope.txt")
    with pytest.raises(CorpusError, match="matches no file"):
        fb.files(str(tmp_path / "*.nothing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="holds no text file"):
        fb.files(tmp_path / "empty")
    with pytest.raises(CorpusError, match="no input"):
        fb.files()


def test_invalid_utf8_names_file_and_offset(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes("héllo".encode() + b"\xc3(")
    with pytest.raises(CorpusError, match=r"bad.txt: invalid UTF-8 at byte offset 6"):
        list(fb.files(path))
    assert list(fb.files(path, errors="replace")) == ["héllo\ufffd("]


def test_json_files_are_read_by_what_they_hold(tmp_path):
    import json
    import warnings

    import numpy as np

    docs = ["first line\nsecond \\ line", "", "naïve 中文 😀"]
    # What HF datasets' Dataset.to_json() writes by default: JSON Lines in a .json file.
    (tmp_path / "lines.json").write_text("".join(json.dumps({"id": k, "text": d}) + "\n" for k, d in enumerate(docs)),
                                         encoding="utf-8")
    assert list(fb.files(tmp_path / "lines.json", field="text")) == docs
    # A JSON array of objects, or of strings.
    (tmp_path / "array.json").write_text(json.dumps([{"text": d, "n": 1} for d in docs], indent=2), encoding="utf-8")
    assert list(fb.files(tmp_path / "array.json")) == docs
    (tmp_path / "strings.json").write_text(json.dumps(docs), encoding="utf-8")
    assert list(fb.files(tmp_path / "strings.json")) == docs
    with pytest.raises(CorpusError, match=r"array.json: item 0: .* field 'body'"):
        list(fb.files(tmp_path / "array.json", field="body"))
    # One JSON object over many lines is no corpus: refused when named...
    (tmp_path / "manifest.json").write_text(json.dumps({"parts": ["a"], "tokens": 3}, indent=2), encoding="utf-8")
    with pytest.raises(CorpusError, match=r"manifest.json: a .json file holding one JSON object"):
        fb.files(tmp_path / "manifest.json")
    # ... and skipped, named, under a directory.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = fb.files(tmp_path)
    assert [p.name for p in found.paths] == ["array.json", "lines.json", "strings.json"]
    assert any("skipped" in str(w.message) and "manifest.json" in str(w.message) for w in caught)
    # Training and token files read the same documents.
    tok = fb.train(fb.files(tmp_path / "lines.json"), vocab_size=270, progress=False)
    assert tok.merges == fb.train(docs, vocab_size=270, progress=False).merges
    for name in ("lines.json", "array.json"):
        tok.encode_to_file(fb.files(tmp_path / name), tmp_path / "ids.npy", eot=0, progress=False)
        assert np.load(tmp_path / "ids.npy").tolist() == [i for d in docs for i in tok.encode(d) + [0]]


def test_a_file_that_shrinks_while_it_is_read_is_an_error(tmp_path):
    """Truncated by another process halfway: the text would silently be shorter."""
    import os
    from functionalbpe.text import corpus

    path = tmp_path / "shrinking.txt"
    path.write_text("abc def\n" * 100_000)
    blocks = corpus._utf8_blocks(path, "strict", 1 << 16)
    next(blocks)
    os.truncate(path, 100_000)
    with pytest.raises(CorpusError, match=r"shrinking.txt: the file shrank while it was read \(it ended after 100,000 of its 800,000 bytes\)"):
        list(blocks)
    path.write_text('{"text": "a"}\n' * 50_000)
    with corpus.open_file(path) as fh:
        fh.readline()
        os.truncate(path, 1000)
        with pytest.raises(CorpusError, match="shrank"):
            list(fh)
    path.write_text("grows")
    with corpus.open_file(path) as fh:
        with open(path, "a") as more:
            more.write(" and grows")
        assert fh.read() == b"grows and grows"  # a file that grows is read to its new end
