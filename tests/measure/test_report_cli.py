"""`functionalbpe report` and the HTML page."""
import base64
import json
import os
import re
import subprocess
import sys

import pytest

import functionalbpe as fb
from functionalbpe.cli import main
from functionalbpe.cli.report import default_name, split_name

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EN = "The cat sat on the mat.\nThe dog sat on the log\n" * 20
DE = "Die Katze saß auf der Matte.\nDer Hund saß auf dem Baumstamm\n" * 20


@pytest.fixture
def setup(tmp_path):
    (tmp_path / "en.txt").write_text(EN, encoding="utf-8")
    (tmp_path / "de.txt").write_text(DE, encoding="utf-8")
    small = fb.train(EN, vocab_size=280, progress=False)
    large = fb.train(EN + DE, vocab_size=330, progress=False)
    small.save(tmp_path / "small.json")
    large.save(tmp_path / "large.json")
    return tmp_path


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "functionalbpe", *args], capture_output=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": ROOT})
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


def test_report_writes_every_output_and_agrees_with_the_api(setup, capsys):
    d = setup
    code = main(["report", "-t", str(d / "small.json"), "-t", f"big={d / 'large.json'}", str(d / "en.txt"),
                 f"german={d / 'de.txt'}", "--baseline", "big", "--json", str(d / "r.json"),
                 "--markdown", str(d / "r.md"), "--html", str(d / "r.html"), "--context", "1000", "--width", "64",
                 "--coverage", "-q"])
    assert code == 0
    out = capsys.readouterr().out
    assert "By corpus" in out and "german" in out and "tokens vs big" in out
    data = json.loads((d / "r.json").read_text(encoding="utf-8"))
    api = fb.report({"small": fb.Tokenizer.load(d / "small.json"), "big": fb.Tokenizer.load(d / "large.json")},
                    {"en": fb.files(d / "en.txt"), "german": fb.files(d / "de.txt")}, baseline="big",
                    context=1000, width=64, coverage=True, progress=False)
    assert data == json.loads(api.to_json())
    fertility = {r["corpus"]: r["fertility"] for r in data["results"] if r["tokenizer"] == "big"}
    assert [c["name"] for c in data["corpora"]] == sorted(fertility, key=fertility.get, reverse=True)
    assert (d / "r.md").read_text(encoding="utf-8") == api.to_markdown()
    assert api.to_text() == out


def test_the_html_is_self_contained_with_plots(setup):
    pytest.importorskip("matplotlib")
    d = setup
    r = fb.report({"small": fb.Tokenizer.load(d / "small.json"), "big": fb.Tokenizer.load(d / "large.json")},
                  {"en": EN, "de": DE}, progress=False)
    page = r.to_html()
    sources = re.findall(r'(?:src|href)="([^"]*)"', page)
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    # Per language, relative to the baseline, merge savings, the Lorenz curve of the two corpora.
    assert len(sources) == len(images) == 4
    assert all(base64.b64decode(x).startswith(b"\x89PNG") for x in images)
    assert "http" not in page.replace("http-equiv", "")
    for caption in ("Tokens per word and bytes per token", "Tokens relative to small", "Merge savings",
                    "Lorenz curve of tokens across corpora"):
        assert caption in page


def test_the_html_without_matplotlib_has_the_tables(setup, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    r = fb.report(fb.Tokenizer.load(setup / "small.json"), {"en": EN}, progress=False)
    page = r.to_html()
    assert "pip install matplotlib" in page and "data:image" not in page
    assert "<table>" in page


def test_tiktoken_files_take_their_pattern(setup, tmp_path):
    pytest.importorskip("tiktoken")
    tok = fb.Tokenizer.load(setup / "small.json")
    lines = [f"{base64.b64encode(tok.token_bytes(i)).decode()} {i}" for i in range(tok.vocab_size)]
    (tmp_path / "small.tiktoken").write_text("\n".join(lines) + "\n", encoding="ascii")
    code, out, err = run("report", "--tiktoken", str(tmp_path / "small.tiktoken"), "--pattern", "gpt4",
                         "-t", f"ours={setup / 'small.json'}", str(setup / "en.txt"), "--json", str(tmp_path / "t.json"))
    assert code == 0, err
    rows = json.loads((tmp_path / "t.json").read_text())["results"]
    assert rows[0]["tokens"] == rows[1]["tokens"] == len(tok.encode(EN))


@pytest.mark.parametrize("args, message", [
    ("-t {d}/missing.json {d}/en.txt", "missing.json: no such file"),
    ("{d}/en.txt", "no tokenizer given"),
    ("-t {d}/small.json -t {d}/small.json {d}/en.txt", "two tokenizers are named 'small'"),
    ("-t {d}/small.json {d}/en.txt x={d}/en.txt x={d}/de.txt", "two corpora are named 'x'"),
    ("-t {d}/small.json {d}/en.txt --baseline nope", "baseline 'nope' is not one of the tokenizers"),
    ("-t {d}/small.json {d}/nothing.txt", "nothing.txt: no such file or directory"),
    ("-t {d}/small.json {d}/en.txt --pattern gpt4", "--pattern applies to --tiktoken files"),
    ("-t {d}/small.json {d}/en.txt --width 0", "--width: 0 is out of range"),
])
def test_bad_input_is_one_line_and_writes_nothing(setup, args, message):
    code, out, err = run("report", *args.format(d=setup).split(), "--json", str(setup / "out.json"))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("functionalbpe: error: ") and message in err, err
    assert not (setup / "out.json").exists() and out == ""


def test_names_for_tokenizers_and_corpora(tmp_path):
    assert split_name("en=a.txt") == ("en", "a.txt")
    odd = tmp_path / "a=b.txt"
    odd.write_text("x")
    assert split_name(str(odd)) == (None, str(odd))
    assert default_name("models/llama/tokenizer.json") == "llama"
    assert default_name("corpora/nl/de.txt") == "de"
    assert default_name("corpora/code/") == "code"


def test_the_corpora_script_runs_end_to_end(corpora, tmp_path):
    pytest.importorskip("matplotlib")
    code = subprocess.run(
        # 600 ids: the functional scheme alone holds 256 bytes + 273 atoms
        [sys.executable, os.path.join(ROOT, "experiments", "report_corpora.py"), "--corpora", str(corpora),
         "--train-lines", "20", "--eval-lines", "10", "--vocab-size", "600", "--no-coverage", "--udhr",
         "--out", str(tmp_path), "-q"],
        capture_output=True, text=True,
    )
    assert code.returncode == 0, code.stderr
    data = json.loads((tmp_path / "report.json").read_text())
    assert len(data["corpora"]) == 18 and data["settings"]["baseline"] == "plain"
    tokens = [r["tokens"] for r in data["results"] if r["tokenizer"] == "plain"]
    assert tokens == sorted(tokens, reverse=True)  # parallel text: the most tokens first
    assert len(json.loads((tmp_path / "report_udhr.json").read_text())["corpora"]) == 22
    assert "data:image/png;base64," in (tmp_path / "report.html").read_text()
    for scheme in ("plain", "functional", "markers"):
        if (tmp_path / f"{scheme}.json").exists():
            assert fb.Tokenizer.load(tmp_path / f"{scheme}.json").vocab_size == 600
    assert [t["name"] for t in data["tokenizers"]][:1] == ["plain"]


def test_report_names_the_reference_code_python_corpora_and_the_example(setup, capsys):
    d = setup
    (d / "snippet.txt").write_text("def f(x):\n    return x == 1\n", encoding="utf-8")
    code = main(["report", "-t", str(d / "small.json"), f"en={d / 'en.txt'}", f"german={d / 'de.txt'}",
                 f"snippet={d / 'snippet.txt'}", "--reference", "german", "--python", "snippet",
                 "--example", "The dog sat.", "--json", str(d / "r.json"), "-q"])
    assert code == 0
    data = json.loads((d / "r.json").read_text(encoding="utf-8"))
    s = data["settings"]
    assert (s["reference"], s["code"], s["python"], s["example"]) == ("german", [], ["snippet"], "The dog sat.")
    assert data["tokenizers"][0]["reference_corpus"] == "german"
    assert ["".join(t) for t in data["example"]["tokens"].values()] == ["The dog sat."]
    row = next(r for r in data["results"] if r["corpus"] == "snippet")
    assert row["python_leaves"] == 10 and row["operators"] == 1  # def f ( x ) : return x == 1
    capsys.readouterr()
    assert main(["report", "-t", str(d / "small.json"), f"en={d / 'en.txt'}", "--reference", "fr", "-q"]) == 2
    assert "reference 'fr' is not one of the corpora" in capsys.readouterr().err
