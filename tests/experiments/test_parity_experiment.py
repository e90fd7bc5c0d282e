"""experiments/parity.py on a slice of the shared corpora: it runs, and its figures are the
fairness measures of the token counts it reports."""
from __future__ import annotations

import importlib.util
import sys

import pytest

from functionalbpe.core._native import NATIVE
from functionalbpe.measure.fairness import gini, token_premium

from ..conftest import ROOT


def load_experiment():
    spec = importlib.util.spec_from_file_location("parity_experiment", ROOT / "experiments" / "parity.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["parity_experiment"] = module
    spec.loader.exec_module(module)
    return module


def test_the_experiment_on_a_slice(corpora, capsys):
    experiment = load_experiment()
    # The pure-Python parity trainer is the lesson, which recounts everything per merge.
    chars, vocab = ("20000", 400) if NATIVE.trainer is not None else ("2000", 280)
    results = experiment.main([
        "--corpora", str(corpora), "--vocab-sizes", str(vocab), "--langs", "en", "el", "ru",
        "--max-chars", chars, "--dev-lines", "40", "--test-lines", "40",
    ])
    runs = results["runs"][str(vocab)]
    hybrid = f"hybrid ({(vocab - 256) // 4} global)"
    assert set(runs) == {"plain", "temperature 0.3", "parity", "window", hybrid}
    for row in runs.values():
        assert row["gini"] == pytest.approx(gini(row["tokens"].values()))
        assert row["premium"] == token_premium(row["tokens"], "en")
    # on text this small the worst-off language still gains from parity
    assert max(runs["parity"]["premium"].values()) < max(runs["plain"]["premium"].values())
    assert "| parity |" in capsys.readouterr().out
