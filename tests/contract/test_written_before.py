"""Tokenizer files written before the architecture change (by functionalbpe 0.1.0 at commit
336d3e4, kept in tests/data/written_before/ with what that version encoded) still load,
encode and decode as they did, and training the same text today gives the same file.

A default that changed since is written out in the configs, under today's name: the
functional scheme's default split was what is now ``functionalizer-runs``, and the markers
scheme kept shift codes apart (``merge_shift_codes=False``)."""
from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

import functionalbpe as fb

DATA = Path(__file__).parent / "data" / "written_before"
EXPECTED = json.loads((DATA / "expected.json").read_text(encoding="utf-8"))
NAMES = sorted(EXPECTED["configs"])


@pytest.mark.parametrize("name", NAMES)
def test_an_old_file_loads_and_encodes_as_it_did(name):
    tok = fb.Tokenizer.load(DATA / f"{name}.json")
    sample, expected = EXPECTED["sample"], EXPECTED["expected"][name]
    assert tok.vocab_size == expected["vocab_size"]
    assert tok.encode(sample, allowed_special="all") == expected["ids"]
    assert tok.pieces(sample) == expected["pieces"]
    normalize = EXPECTED["configs"][name].get("normalize")
    assert tok.decode(expected["ids"]) == (sample if normalize is None else unicodedata.normalize(normalize, sample))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("backend", ["auto", "python"])
def test_training_today_writes_the_same_file(name, backend):
    config = EXPECTED["configs"][name]
    tok = fb.train(EXPECTED["train_text"] * EXPECTED["repeat"], vocab_size=None, backend=backend,
                   special_tokens=EXPECTED["special_tokens"], progress=False, **config)
    assert tok.to_payload() == fb.Tokenizer.load(DATA / f"{name}.json").to_payload()
