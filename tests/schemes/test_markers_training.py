"""The boundary-marker scheme end to end: training, the merge rules, tokenizers, the CLI."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

import functionalbpe as fb
from functionalbpe.core import reference
from functionalbpe.core._native import NATIVE
from functionalbpe.core.alphabet import ENDS_WITH_BOUNDARY, SHIFT, STARTS_WITH_BOUNDARY, Alphabet
from functionalbpe.cli import main
from functionalbpe.errors import DecodeError
from functionalbpe.schemes.registry import make_scheme
from functionalbpe.core.trainer import heap_train
from functionalbpe.text.counting import count_table

from ..conftest import read_corpus
from .test_markers import ALL_OPTIONS, EXAMPLE, any_text

CORPUS = [
    "The cat sat on the mat. THE CAT SAT! The Cat's 3 mats, 42 hats; the cat 3rd.\n" * 3,
    "Der Hund, die Straße, STRASSE. Οδός ΟΔΟΣ σοφός. Мир мир МИР.\n",
    "漢字かな カード สวัสดี ครับ 안녕 하세요 مرحبا 😀👍🏽 ¦ ↑ ⇑ \ue300\ue2ff\n",
    "  two  spaces\tand\ttabs\n\n" + "x" * 300 + " a,b a, b\n",
]


def markers_tokenizer(vocab_size=420, merge_policy="prefix", backend="reference", **options):
    return fb.train(
        CORPUS, vocab_size=vocab_size, scheme="markers", merge_policy=merge_policy,
        backend=backend, progress=False, **options
    )


# Every variant with shift codes that merge (the default), and those with case also with
# shift codes kept apart.
TRAINED_OPTIONS = ALL_OPTIONS + [dict(o, merge_shift_codes=False) for o in ALL_OPTIONS if o.get("case")]


@pytest.fixture(scope="module", params=TRAINED_OPTIONS, ids=str)
def tok(request):
    return markers_tokenizer(**request.param)


@given(text=any_text)
def test_trained_tokenizer_is_lossless(tok, text):
    ids = tok.encode_ordinary(text)
    assert tok.decode(ids) == text
    assert tok.decode_bytes(ids) == text.encode("utf-8")


def test_merges_keep_the_rules(tok):
    alphabet = tok.alphabet
    flags = alphabet.all_flags()
    assert len(tok.merges) > 50
    apart = not tok.scheme.merge_shift_codes
    for a, b in tok.merges:
        assert not (flags[a] & ENDS_WITH_BOUNDARY and flags[b] & STARTS_WITH_BOUNDARY)
        assert not (apart and (flags[a] | flags[b]) & SHIFT)
    if tok.scheme.case and not apart:  # the paper's rule: a shift code merges into its word
        assert any((flags[a] | flags[b]) & SHIFT for a, b in tok.merges)
    # the markers are learned into words: some merged token is a whole marked word
    assert any(alphabet.token_bytes(t).startswith("\ue300".encode()) and alphabet.token_bytes(t).endswith(
        "\ue300".encode()) and len(alphabet.token_bytes(t)) > 6 for t in range(alphabet.first_merge, tok.vocab_size))


def test_encoding_is_the_reference_encoder_on_each_piece(tok):
    ranks = reference.ranks_from_merges(tok.merges, tok.alphabet.first_merge)
    text = "".join(CORPUS) + EXAMPLE
    expected = []
    for piece in tok.scheme.split(text):
        expected.extend(reference.encode_piece(tok.alphabet.symbols(piece), ranks))
    assert tok.encode(text) == expected


def test_pieces_show_the_glyphs():
    tok = markers_tokenizer(punct=True, digits=True, case=True, merge_shift_codes=False)
    assert tok.pieces(EXAMPLE) == ["↑¦ash¦", "¦caught¦", "¦3¦", "¦SolidGoldMagikarp¦", ".¦", "⇑¦wow¦", "!"]
    assert [p for p, _ in tok.explain("The cat")] == ["↑¦the¦", "¦cat¦"]
    shift = tok.alphabet.atom_id("\ue301")
    assert tok.encode("The")[0] == shift
    # Merged in, "The" is one token that holds the shift code, as in the paper.
    merged = markers_tokenizer(punct=True, digits=True, case=True)
    assert [merged.decode([t]) for t in merged.encode("The")] == ["The"]
    assert merged.alphabet.token_bytes(merged.encode("The")[0]).startswith("\ue301".encode())


def test_save_and_load(tmp_path):
    tok = markers_tokenizer(punct=True, case=True)
    tok.save(tmp_path / "m.json")
    back = fb.Tokenizer.load(tmp_path / "m.json")
    assert back == tok
    assert back.scheme.options() == {"punct": True, "digits": False, "case": True, "merge_shift_codes": True}
    assert back.encode(EXAMPLE) == tok.encode(EXAMPLE)


def test_vocab_size_counts_the_atoms():
    tok = markers_tokenizer(vocab_size=300)
    assert tok.vocab_size == 300 and len(tok.merges) == 300 - 256 - 20


def test_malformed_ids_are_a_clear_error():
    tok = markers_tokenizer(case=True)
    shift = tok.alphabet.atom_id("\ue301")
    with pytest.raises(DecodeError, match="shift code"):
        tok.decode([shift, ord("a")])


@pytest.mark.parametrize("merge_shift_codes", [True, False])
@pytest.mark.parametrize("policy", ["atomic", "prefix", "free"])
def test_heap_trainer_equals_the_lesson_on_marker_pieces(policy, merge_shift_codes):
    scheme = make_scheme("markers", punct=True, digits=True, case=True, merge_shift_codes=merge_shift_codes)
    alphabet = Alphabet(scheme.atoms)
    pieces = {alphabet.symbols(piece): n for piece, n in scheme.transform(count_table(CORPUS, scheme)).items()}
    args = (pieces, 150, alphabet.first_merge)
    expected = reference.train(*args, flags=alphabet.base_flags(), merge_policy=policy)
    assert heap_train(*args, flags=alphabet.base_flags(), merge_policy=policy) == expected


@pytest.mark.skipif(NATIVE.trainer is None, reason="the fast trainer is not built (or pure Python is forced)")
@pytest.mark.parametrize("options, policy", list(itertools.product(TRAINED_OPTIONS[::3], ["atomic", "prefix", "free"])))
def test_fast_equals_reference(options, policy):
    fast = markers_tokenizer(vocab_size=None, merge_policy=policy, backend="fast", **options)
    slow = markers_tokenizer(vocab_size=None, merge_policy=policy, backend="reference", **options)
    assert fast.merges == slow.merges and fast.merge_counts == slow.merge_counts


@pytest.mark.skipif(NATIVE.trainer is None, reason="the fast trainer is not built (or pure Python is forced)")
@given(corpus=st.lists(any_text, max_size=6), merge_shift_codes=st.booleans())
def test_fast_equals_reference_on_random_text(corpus, merge_shift_codes):
    fast, slow = (
        fb.train(corpus, vocab_size=None, scheme="markers", punct=True, digits=True, case=True,
                 merge_shift_codes=merge_shift_codes, backend=backend, progress=False).merges
        for backend in ("fast", "reference")
    )
    assert fast == slow


def test_old_files_keep_shift_codes_apart():
    # A file written before the option existed holds no merge_shift_codes: it is read as
    # the behaviour it had then (shift codes apart), and a file written today records it.
    apart = markers_tokenizer(case=True, merge_shift_codes=False)
    payload = apart.to_payload()
    assert payload["scheme_options"]["merge_shift_codes"] is False
    del payload["scheme_options"]["merge_shift_codes"]
    from functionalbpe.formats.tokenizer_file import checksum

    payload["checksum"] = checksum(payload)
    old = fb.Tokenizer.from_payload(payload)
    assert old.scheme.merge_shift_codes is False and old.merges == apart.merges
    # Merges with shift codes are what a file that keeps them apart cannot hold.
    merging = markers_tokenizer(case=True).to_payload()
    merging["scheme_options"]["merge_shift_codes"] = False
    merging["checksum"] = checksum(merging)
    with pytest.raises(fb.TokenizerFileError, match="never merges"):
        fb.Tokenizer.from_payload(merging)


def test_real_text_through_a_tokenizer(corpora):
    text = read_corpus(corpora / "parallel" / "udhr_en.txt")
    tok = fb.train([text], vocab_size=600, scheme="markers", punct=True, digits=True, case=True, progress=False)
    for name in ("udhr_en", "udhr_de", "udhr_ru", "udhr_zh-CN", "udhr_ar"):
        other = read_corpus(corpora / "parallel" / f"{name}.txt")
        assert tok.decode(tok.encode(other)) == other, name


def test_cli_trains_and_shows_markers(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("".join(CORPUS), encoding="utf-8")
    out = tmp_path / "m.json"
    args = ["train", str(tmp_path / "a.txt"), "--vocab-size", "350", "--scheme", "markers", "-o", str(out), "-q"]
    assert main(args + ["--option", "punct=true", "--option", "case=true"]) == 0
    tok = fb.Tokenizer.load(out)
    assert tok.scheme.name == "markers" and tok.scheme.options()["case"] is True
    (tmp_path / "in.txt").write_text("The CAT, sat", encoding="utf-8")
    capsys.readouterr()
    assert main(["pieces", "-t", str(out), str(tmp_path / "in.txt")]) == 0
    shown = capsys.readouterr().out
    assert "↑¦the¦" in shown and "⇑¦cat¦" in shown and ",¦" in shown
    assert main(["train", str(tmp_path / "a.txt"), "--vocab-size", "350", "--scheme", "markers",
                 "--pattern", "gpt2", "-o", str(out), "-q"]) != 0
    assert "takes no pattern" in capsys.readouterr().err
