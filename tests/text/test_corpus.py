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
