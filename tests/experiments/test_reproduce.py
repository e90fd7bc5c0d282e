"""The two paper reproductions (experiments/reproduce_*.py) at a reduced size: one command
each, the shape of their output, and the signs the papers report."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import functionalbpe as fb
from functionalbpe.core._native import NATIVE

ROOT = Path(__file__).resolve().parent.parent.parent
# Training to exhaustion on the pure-Python path is minutes; the reduced run needs the trainer.
needs_trainer = pytest.mark.skipif(NATIVE.trainer is None, reason="the fast trainer is not built")


def script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_paper_profiles_are_train_arguments():
    assert set(fb.functional.PAPER_PROFILES) == {
        "split", "split + Functionalizer", "split + Functionalizer (repeat only)", "llama", "llama + Functionalizer"}
    for profile in (*fb.functional.PAPER_PROFILES.values(), *fb.markers.PAPER_PROFILES.values()):
        tok = fb.train(["Héllo wörld    x = 1\n"] * 3, vocab_size=None, progress=False, **profile)
        assert tok.decode(tok.encode("Héllo  x")) == "Héllo  x"
    for profile in fb.functional.PAPER_PROFILES.values():
        assert profile["normalize"] == "NFC"  # every configuration, the baselines included
    assert fb.markers.PAPER_PROFILES["[w,p,d,↑]"]["merge_shift_codes"] is True


@needs_trainer
def test_functionalizer_reproduction_shape_and_signs(corpora):
    module = script("reproduce_functionalizer")
    results = module.reproduce(corpora, 60_000, ["nl/en.txt", "code/python.txt"])
    assert set(results) == {"nl/en.txt", "code/python.txt"}
    for rows in results.values():
        assert list(rows) == list(fb.functional.PAPER_PROFILES)
        for row in rows.values():
            assert row["slots"] <= row["ids"] and row["tokens"] > 0
    code, prose = results["code/python.txt"], results["nl/en.txt"]
    # As in the paper: on code, fewer tokens and fewer slots than the split-only baseline;
    # on prose, fewer slots but more tokens.
    assert code["split + Functionalizer"]["tokens_change"] < -0.1
    assert code["split + Functionalizer"]["slots_change"] < 0
    assert prose["split + Functionalizer"]["tokens_change"] > 0
    assert prose["split + Functionalizer"]["slots_change"] < 0
    assert "| code/python.txt" in module.table(results)


@needs_trainer
def test_markers_reproduction_shape_and_signs(corpora):
    module = script("reproduce_markers")
    results = module.reproduce(corpora, 60_000, 2048, ["en", "de"])
    assert list(results["mean_change"]) == [*fb.markers.PAPER_PROFILES, "[w,p,d,↑], shift codes apart"]
    mean, dup = results["mean_change"], results["case_duplicate_share"]
    # As in the paper: marking words alone costs compression, marking punctuation and digits
    # too costs far less.
    assert mean["[w]"] < mean["[w,p]"] < 0
    assert abs(mean["[w,p,d,↑]"]) < abs(mean["[w]"])
    # Counting a token that carries a shift code as a case variant of its unshifted twin
    # (↑¦the¦ beside ¦the¦), merging shift codes does not remove case duplicates; keeping them
    # apart does.
    assert dup["[w,p,d,↑], shift codes apart"] < dup["plain"] / 2
    assert "| [w,p,d,↑] |" in module.table(results)


@needs_trainer
@pytest.mark.parametrize("name, args", [
    ("reproduce_functionalizer", ["--chars", "20000", "--corpus", "code/go.txt"]),
    ("reproduce_markers", ["--chars", "20000", "--langs", "en", "--vocab-size", "600"]),
])
def test_one_command_each(corpora, tmp_path, name, args):
    out = tmp_path / "out.json"
    proc = subprocess.run([sys.executable, str(ROOT / "experiments" / f"{name}.py"), "--corpora", str(corpora),
                           "--json", str(out), "-q", *args], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "| paper |" in proc.stdout and json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("lines, ok", [(["En el principio creó Dios los cielos y la tierra."] * 30, True),
                                       (["Un solo versículo."], False), ([], False)])
def test_the_scripts_take_a_corpus_of_verses_one_line_or_none(tmp_path, lines, ok):
    """A corpus without blank lines (one verse a line) is split at lines; one too small to
    split is one clear line and exit status 2, never a traceback."""
    text = "".join(f"{k} {line}\n" for k, line in enumerate(lines))
    (tmp_path / "nl").mkdir()
    (tmp_path / "nl" / "es.txt").write_text(text, encoding="utf-8")
    (tmp_path / "bible.txt").write_text(text, encoding="utf-8")
    runs = [
        [sys.executable, str(ROOT / "experiments" / "reproduce_markers.py"), "--corpora", str(tmp_path),
         "--langs", "es", "--chars", "20000", "--vocab-size", "600", "-q"],
        [sys.executable, str(ROOT / "experiments" / "reproduce_functionalizer.py"), "--corpora", str(tmp_path),
         "--corpus", "bible.txt", "--chars", "20000", "-q"],
    ]
    for command in runs:
        out = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert "Traceback" not in out.stderr, out.stderr
        assert out.returncode == (0 if ok else 2), out.stderr
        if not ok:
            assert "at least 2 are needed" in out.stderr
