"""``normalize="NFC"`` for every scheme: applied before the pattern in training and encoding,
recorded in the tokenizer file and given by the CLI; decoding gives the NFC text back."""
from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given, settings, strategies as st

import functionalbpe as fb
from functionalbpe.cli import main

# Decomposed and composed forms of the same words, so that NFC changes what is counted.
DOCS = ["cafe\u0301 café Cafe\u0301 naïve nai\u0308ve", "Ångström A\u030angstro\u0308m e\u0301e\u0301e\u0301"] * 4
SCHEMES = [("plain", {}), ("functional", {}), ("markers", {"punct": True, "case": True})]


@pytest.fixture(scope="module", params=SCHEMES, ids=[name for name, _ in SCHEMES])
def nfc_tok(request):
    name, options = request.param
    return fb.train(DOCS, vocab_size=None, scheme=name, normalize="NFC", progress=False, **options)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from("aeAE \u0301\u0308\u030a\u0327co\u212b\u1e9b\u0323!\n"), max_size=30) | st.text(max_size=20))
def test_decode_of_encode_is_the_nfc_text(nfc_tok, text):
    ids = nfc_tok.encode_ordinary(text)
    assert nfc_tok.decode(ids) == unicodedata.normalize("NFC", text)
    # The text and its NFC form are the same input.
    assert ids == nfc_tok.encode_ordinary(unicodedata.normalize("NFC", text))


def test_training_counts_the_nfc_text(nfc_tok):
    # Trained on the NFC form directly, without normalization, the merges are the same.
    nfc = [unicodedata.normalize("NFC", d) for d in DOCS]
    name, options = nfc_tok.scheme.name, {k: v for k, v in nfc_tok.scheme.options().items() if k != "normalize"}
    plain = fb.train(nfc, vocab_size=None, scheme=name, progress=False, **options)
    assert nfc_tok.merges == plain.merges


@pytest.mark.parametrize("name,options", SCHEMES)
def test_backends_agree_with_normalize(name, options):
    auto = fb.train(DOCS, vocab_size=None, scheme=name, normalize="NFC", progress=False, **options)
    python = fb.train(DOCS, vocab_size=None, scheme=name, normalize="NFC", backend="python", progress=False, **options)
    assert auto.to_payload() == python.to_payload()


def test_the_file_records_normalize(nfc_tok, tmp_path):
    path = tmp_path / "t.json"
    nfc_tok.save(path)
    assert json.loads(path.read_text(encoding="utf-8"))["scheme_options"]["normalize"] == "NFC"
    back = fb.Tokenizer.load(path)
    assert back.scheme.normalize == "NFC"
    assert back.encode_ordinary("cafe\u0301") == nfc_tok.encode_ordinary("café")


def test_no_normalize_is_lossless_and_not_written():
    tok = fb.train(DOCS, vocab_size=300, progress=False)
    assert "normalize" not in tok.to_payload()["scheme_options"]
    assert tok.decode(tok.encode_ordinary("cafe\u0301")) == "cafe\u0301"
    markers = fb.train(DOCS, vocab_size=400, scheme="markers", progress=False)
    assert "normalize" not in markers.to_payload()["scheme_options"]


def test_a_bad_normal_form_is_refused():
    for name, _ in SCHEMES:
        with pytest.raises(fb.FunctionalBPEError, match="normalize"):
            fb.train(DOCS, vocab_size=300, scheme=name, normalize="NFX", progress=False)


def test_cli_normalize(tmp_path, capsys):
    corpus = tmp_path / "a.txt"
    corpus.write_text("\n".join(DOCS), encoding="utf-8")
    out = tmp_path / "tok.json"
    assert main(["train", str(corpus), "--vocab-size", "300", "--normalize", "NFC", "-o", str(out), "-q"]) == 0
    assert fb.Tokenizer.load(out).scheme.normalize == "NFC"
    capsys.readouterr()
    assert main(["train", str(corpus), "--vocab-size", "300", "--normalize", "NFC", "--option", "normalize=NFD", "-o", str(out), "-q"]) == 2
    assert "disagree" in capsys.readouterr().err
