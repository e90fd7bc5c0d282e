import os
import subprocess
import sys

import pytest

import functionalbpe as fb
from functionalbpe.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEXT = "The cat sat on the mat. The dog sat on the log.\n" * 30 + "naïve ✓\n"


@pytest.fixture
def corpus(tmp_path):
    (tmp_path / "a.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "b.txt").write_text("Another file, another cat.\n" * 10, encoding="utf-8")
    return tmp_path


def run(*args, stdin=None):
    """Run the real command in a subprocess: exit status, stdout, stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "functionalbpe", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    return proc.returncode, proc.stdout, proc.stderr.decode("utf-8")


def test_train_encode_decode_round_trip(corpus, tmp_path):
    out = tmp_path / "tok.json"
    assert main(["train", str(corpus / "a.txt"), str(corpus / "b.txt"), "--vocab-size", "280", "-o", str(out), "-q"]) == 0
    tok = fb.Tokenizer.load(out)
    assert tok.vocab_size == 280
    ids_file, back = tmp_path / "ids.txt", tmp_path / "back.txt"
    assert main(["encode", "-t", str(out), str(corpus / "a.txt"), "-o", str(ids_file)]) == 0
    lines = ids_file.read_text().splitlines()
    assert len(lines) == 1 and [int(x) for x in lines[0].split()] == tok.encode(TEXT)
    assert main(["decode", "-t", str(out), str(ids_file), "-o", str(back)]) == 0
    assert back.read_text(encoding="utf-8") == TEXT


def test_lines_mode_is_one_document_per_line(corpus, tmp_path):
    out = tmp_path / "tok.json"
    main(["train", str(corpus), "--vocab-size", "280", "-o", str(out), "-q"])
    code, stdout, _ = run("encode", "-t", str(out), "--lines", stdin="ab\n\ncd\n".encode())
    assert code == 0
    assert stdout.decode().split("\n")[:3] == ["97 98", "", "99 100"]
    code, text, _ = run("decode", "-t", str(out), "--lines", stdin=stdout)
    assert code == 0 and text.decode() == "ab\n\ncd\n"


def test_pieces_shows_what_bpe_sees(corpus, tmp_path, capsys):
    out = tmp_path / "tok.json"
    main(["train", str(corpus), "--vocab-size", "300", "-o", str(out), "-q"])
    capsys.readouterr()
    (tmp_path / "in.txt").write_text("The cat", encoding="utf-8")
    assert main(["pieces", "-t", str(out), str(tmp_path / "in.txt")]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert [r.split()[0] for r in rows] == ["The", "␣cat"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["train", "missing.txt", "--vocab-size", "300"], "missing.txt: no such file"),
        (["train", "{empty}", "--vocab-size", "300"], "holds no text file"),
        (["train", "{bad}", "--vocab-size", "300"], "invalid UTF-8 at byte offset 3"),
        (["train", "{good}", "--vocab-size", "100"], "vocab_size 100 is too small"),
        (["train", "{good}", "--vocab-size", "300", "--pattern", "(unclosed"], "does not compile"),
        (["encode", "-t", "{good}", "{good}"], "not valid JSON"),
        (["decode", "-t", "missing.json"], "no such tokenizer file"),
    ],
)
def test_bad_input_is_one_line_without_traceback(tmp_path, args, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad.txt").write_bytes(b"abc\xff\xfe more")
    (tmp_path / "good.txt").write_text("hello", encoding="utf-8")
    names = {"empty": tmp_path / "empty", "bad": tmp_path / "bad.txt", "good": tmp_path / "good.txt"}
    args = [a.format(**names) for a in args]
    code, stdout, stderr = run(*args, "-o", str(tmp_path / "out.json")) if args[0] == "train" else run(*args)
    assert code == 2
    assert "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1 and message in stderr, stderr
    assert not (tmp_path / "out.json").exists()


def test_invalid_utf8_can_be_replaced(tmp_path):
    (tmp_path / "bad.txt").write_bytes(b"abc\xff abc abc")
    out = tmp_path / "tok.json"
    assert main(["train", str(tmp_path / "bad.txt"), "--vocab-size", "260", "--encoding-errors", "replace", "-o", str(out), "-q"]) == 0


def test_decode_names_the_bad_line(tmp_path, corpus):
    out = tmp_path / "tok.json"
    main(["train", str(corpus), "--vocab-size", "280", "-o", str(out), "-q"])
    code, _, stderr = run("decode", "-t", str(out), stdin=b"97 98\n97 x\n")
    assert code == 2 and "line 2" in stderr and "'x'" in stderr


def test_scheme_options_are_parsed():
    from functionalbpe.cli.common import parse_options

    assert parse_options(["case=false", "normalize=NFC", "n=3", "x=none"]) == {
        "case": False,
        "normalize": "NFC",
        "n": 3,
        "x": None,
    }


def test_help_for_every_subcommand():
    for sub in ("train", "encode", "decode", "pieces", "demo"):
        code, stdout, _ = run(sub, "--help")
        assert code == 0 and b"usage" in stdout


def test_demo_runs_without_arguments_on_a_small_slice():
    code, stdout, stderr = run("demo", "--max-mb", "0.5", "--vocab-size", "400", "-q")
    assert code == 0, stderr
    text = stdout.decode()
    assert "Vocabulary size: 400" in text and "Bytes per token" in text
