"""The Functionalizer through training: policies, trainers agreeing, tokenizers round-tripping."""
from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functionalbpe as fb
from functionalbpe.core import reference
from functionalbpe.core._native import NATIVE
from functionalbpe.core.alphabet import OPERATOR, TEXT, Alphabet
from functionalbpe.core.trainer import heap_train, learn_merges_from_symbols
from functionalbpe.cli import main
from functionalbpe.errors import DecodeError
from functionalbpe.schemes.functional import ATOMS, Functionalizer
from functionalbpe.text.counting import count_table

from ..conftest import read_corpus
from ..helpers import stdlib_text, tricky_text
from .test_functional import texts

POLICIES = ("atomic", "prefix", "free")
# Small corpora for comparing trainers: the lesson recounts everything per merge.
small_corpora = st.lists(
    st.one_of(tricky_text, st.text("aAáÁ #\ue000", max_size=40), st.sampled_from(["Abcabcabc", "AAAA", "ÉÉÉ"])),
    max_size=6,
)
fewer = settings(max_examples=max(10, settings.default.max_examples // 4))

MIXED = [
    "Hello World! HELLO world. Héllo Wörld, ÉCOLE école Ça ça.",
    "    return self.Value  # ======== ########\n\t\tif X:\n        pass",
    "Ααα ΣΟΦΙΑ σοφία Ёлка ёлка İstanbul ẞ ß ǅ abcabcabc Abcabcabc",
    "\ue000 private \ue123 use \uefff and operators \ue100\ue000 stay text",
] * 5


def pieces_of(scheme, docs):
    """The symbol ids of the scheme's text-form pieces of ``docs``, counted."""
    alphabet = Alphabet(scheme.atoms)
    return {alphabet.symbols(piece): n for piece, n in scheme.transform(count_table(docs, scheme)).items()}


@pytest.fixture(scope="module")
def tokenizers():
    docs = stdlib_text(60_000) + MIXED
    return {
        (policy, split): fb.train(
            docs, vocab_size=256 + len(ATOMS) + 400, scheme="functional", merge_policy=policy,
            split_operators=split, progress=False,
        )
        for policy in POLICIES
        for split in (True, False)
    }


def test_policies_decide_what_may_merge(tokenizers):
    mixed = {}
    for (policy, split), tok in tokenizers.items():
        flags = tok.alphabet.all_flags()[tok.alphabet.first_merge :]
        assert len(flags) == 400
        kinds = Counter(f & (TEXT | OPERATOR) for f in flags)
        if policy == "atomic":
            assert set(kinds) == {TEXT}
        elif policy == "prefix":
            assert set(kinds) == {TEXT, OPERATOR}  # CAP 0, REPEAT 0 4, ... become tokens
        mixed[(policy, split)] = kinds[TEXT | OPERATOR]
    # Only "free" lets an instruction merge with text, and only where they share a piece.
    assert mixed[("free", False)] > 0
    assert all(n == 0 for key, n in mixed.items() if key != ("free", False))


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("split", (True, False))
@given(text=st.one_of(texts, tricky_text))
def test_trained_tokenizer_round_trips(tokenizers, policy, split, text):
    tok = tokenizers[(policy, split)]
    ids = tok.encode_ordinary(text)
    assert tok.decode(ids) == text
    assert tok.decode_bytes(ids) == text.encode("utf-8")


def test_pieces_show_operators(tokenizers):
    tok = tokenizers[("prefix", True)]
    assert tok.pieces("Héllo ######") == ["⟨ACUTE 1⟩", "⟨CAP 0⟩", "hello", " ", "⟨REPEAT 0 6⟩", "#"]
    cap0 = tok.encode("Hello")[0]
    assert tok.token_bytes(cap0) == "\ue100\ue000".encode()  # CAP 0 is one token under "prefix"


def test_save_and_load_keep_the_scheme(tokenizers, tmp_path):
    tok = tokenizers[("free", False)]
    path = tmp_path / "tok.json"
    tok.save(path)
    payload = json.loads(path.read_text(encoding="utf-8"))
    assert payload["scheme"] == "functional"
    assert payload["scheme_options"]["split_operators"] is False
    again = fb.Tokenizer.load(path)
    assert again == tok
    text = "Ünïcode CAFÉ ---- aaaa \ue200"
    assert again.encode(text) == tok.encode(text) and again.decode(again.encode(text)) == text


def test_ids_no_encoding_writes_are_refused(tokenizers):
    tok = tokenizers[("prefix", True)]
    cap = tok.alphabet.first_atom + 256  # CAPITALIZE, with no argument and no base
    with pytest.raises(DecodeError, match="offset 0"):
        tok.decode([cap])
    assert tok.decode([cap, ord("a")], errors="replace") == "\ufffda"
    assert tok.decode([cap, ord("a")], errors="ignore") == "a"


def test_paper_profile_trains(tmp_path):
    tok = fb.train(MIXED, vocab_size=256 + len(ATOMS) + 50, scheme="functional", progress=False,
                   **fb.functional.PAPER_PROFILE)
    assert tok.scheme.options()["normalize"] == "NFC"
    assert tok.decode(tok.encode("He\u0301llo")) == "Héllo"


# --- the trainers agree ------------------------------------------------------------------


@pytest.mark.parametrize("policy", POLICIES)
@fewer
@given(docs=small_corpora)
def test_heap_trainer_equals_the_lesson(policy, docs):
    scheme = Functionalizer(split_operators=False)
    pieces = pieces_of(scheme, docs)
    first = 256 + len(ATOMS)
    flags = Alphabet(ATOMS).base_flags()
    assert heap_train(pieces, 60, first, flags=flags, merge_policy=policy) == reference.train(
        pieces, 60, first, flags=flags, merge_policy=policy
    )


def _fast():
    if NATIVE.trainer is None:
        pytest.skip("the fast trainer is not built here (or FUNCTIONALBPE_PUREPYTHON=1)")


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("split", (True, False))
def test_fast_equals_the_heap_trainer_on_real_text(policy, split):
    _fast()
    scheme = Functionalizer(split_operators=split)
    pieces = pieces_of(scheme, stdlib_text(100_000) + MIXED)
    first = 256 + len(ATOMS)
    flags = Alphabet(ATOMS).base_flags()
    expected = heap_train(pieces, None, first, flags=flags, merge_policy=policy)
    assert learn_merges_from_symbols(pieces, None, first, flags=flags, merge_policy=policy, backend="fast") == expected


@pytest.mark.parametrize("policy", POLICIES)
@given(docs=small_corpora)
def test_fast_equals_the_lesson(policy, docs):
    _fast()
    pieces = pieces_of(Functionalizer(split_operators=False), docs)
    first = 256 + len(ATOMS)
    flags = Alphabet(ATOMS).base_flags()
    assert learn_merges_from_symbols(pieces, None, first, flags=flags, merge_policy=policy, backend="fast") == reference.train(
        pieces, None, first, flags=flags, merge_policy=policy
    )


# --- training describes each distinct piece once -------------------------------------------


@pytest.mark.parametrize("pattern", ["functionalizer", "gpt4"])
def test_each_distinct_piece_is_described_once(monkeypatch, pattern):
    passes, described = [], Counter()
    transform, describe = Functionalizer.transform, Functionalizer.describe

    def recording_transform(self, table):
        passes.append(table.to_dict())
        return transform(self, table)

    def recording(self, piece):
        described[piece] += 1
        return describe(self, piece)

    monkeypatch.setattr(Functionalizer, "transform", recording_transform)
    monkeypatch.setattr(Functionalizer, "describe", recording)
    docs = stdlib_text(100_000) + MIXED + ["1111111111 ha ha ha"] * 3
    scheme = Functionalizer(pattern=pattern)
    counts = scheme.transform(count_table(docs, scheme)).to_dict()
    monkeypatch.undo()
    fresh = Functionalizer(pattern=pattern)
    raw, expected = Counter(), Counter()
    for doc in docs:
        raw.update(fresh.raw_pieces(doc))
        expected.update(fresh.split(doc))
    # One pass over the distinct raw pieces (runs of pieces joined), none described twice.
    assert passes == [dict(raw)]
    assert described and max(described.values()) == 1 and set(described) <= set(raw)
    assert counts == dict(expected)


# --- command line and real corpora -------------------------------------------------------------


def test_cli_trains_and_round_trips(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(MIXED), encoding="utf-8")
    out = tmp_path / "tok.json"
    assert main(["train", str(corpus), "--vocab-size", str(256 + len(ATOMS) + 60), "--scheme", "functional",
                 "--option", "normalize=NFC", "--option", "split_operators=false", "-o", str(out), "-q"]) == 0
    tok = fb.Tokenizer.load(out)
    assert tok.scheme.options()["split_operators"] is False and tok.scheme.options()["normalize"] == "NFC"
    ids, back = tmp_path / "ids.txt", tmp_path / "back.txt"
    assert main(["encode", "-t", str(out), str(corpus), "-o", str(ids)]) == 0
    assert main(["decode", "-t", str(out), str(ids), "-o", str(back)]) == 0
    assert back.read_text(encoding="utf-8") == corpus.read_text(encoding="utf-8")
    (tmp_path / "in.txt").write_text("Héllo", encoding="utf-8")
    capsys.readouterr()
    assert main(["pieces", "-t", str(out), str(tmp_path / "in.txt")]) == 0
    # the command shows spaces as ␣, also inside a glyph
    assert capsys.readouterr().out.replace("␣", " ").startswith("⟨ACUTE 1⟩⟨CAP 0⟩hello")


def test_trained_on_real_corpora_round_trips(corpora):
    for name in ("code/python.txt", "nl/de.txt", "nl/vi.txt"):
        path = corpora / name
        if not path.exists():
            continue
        text = read_corpus(path, 25_000)
        tok = fb.train(text, vocab_size=256 + len(ATOMS) + 300, scheme="functional", progress=False)
        assert tok.decode(tok.encode(text)) == text, name
