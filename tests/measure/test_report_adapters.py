"""The adapters against their libraries (each test skips cleanly when its library is absent)."""
import base64
import sys

import pytest

import functionalbpe as fb
from functionalbpe.errors import FunctionalBPEError, TokenizerFileError
from functionalbpe.measure.adapters import as_report_tokenizer, load_tokenizer
from functionalbpe.formats.bytelevel import unicode_to_bytes
from functionalbpe.peers.hf import HFTokenizer
from functionalbpe.peers.sentencepiece import SentencePieceTokenizer
from functionalbpe.peers.tiktoken import TiktokenTokenizer

from ..helpers import stdlib_text

SAMPLE = "The cat sat on the mat.\nThe dog sat on the log.\nA quick brown fox jumps over the lazy dog.\n" * 20
EVAL = {"en": "The cat and the dog sat on the mat together.\nNaïve café, 42 times\n", "other": "Ω and ünïcode"}


def write_ranks(tok, path):
    """Our plain tokenizer's ranks as a .tiktoken file: token bytes, id."""
    lines = [f"{base64.b64encode(tok.token_bytes(i)).decode()} {i}" for i in range(tok.alphabet.first_special)]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")


@pytest.fixture(scope="module")
def plain():
    return fb.train(stdlib_text(150_000), vocab_size=600, progress=False)


# -- tiktoken ---------------------------------------------------------------------------------


def test_tiktoken_on_our_ranks_measures_exactly_like_ours(plain, tmp_path):
    pytest.importorskip("tiktoken")
    path = tmp_path / "ours.tiktoken"
    write_ranks(plain, path)
    tt = TiktokenTokenizer.from_file(path, "gpt4")
    text = "\n".join(stdlib_text(40_000))
    assert tt.encode(text) == plain.encode_ordinary(text)
    assert tt.byte_tokens() == {i: i for i in range(256)}
    ours = as_report_tokenizer(plain)
    assert tt.surfaces() == ours.surfaces()
    r = fb.report({"ours": plain, "tt": tt}, {"code": text, **EVAL}, progress=False)
    rows = {(x["corpus"], x["tokenizer"]): x for x in r.results()}
    for corpus in ("code", "en", "other"):
        a, b = dict(rows[corpus, "ours"]), dict(rows[corpus, "tt"])
        a.pop("tokenizer"), b.pop("tokenizer")
        assert a == b
    vocab = {x["name"]: x for x in r.tokenizer_rows()}
    for key in ("vocab_size", "unused_entries", "duplicate_families", "duplicate_entries", "case_families"):
        assert vocab["ours"][key] == vocab["tt"][key], key
    assert vocab["tt"]["merge_counts"] is None and vocab["ours"]["merge_counts"] == plain.merge_counts


def test_a_tiktoken_file_needs_a_pattern_and_good_lines(plain, tmp_path):
    pytest.importorskip("tiktoken")
    path = tmp_path / "r.tiktoken"
    write_ranks(plain, path)
    with pytest.raises(FunctionalBPEError, match="holds no pre-tokenization pattern, and this is not one of OpenAI.s published files; give one"):
        load_tokenizer(path)
    path.write_text("YQ== 0\nnot base64!! 1\n", encoding="ascii")
    with pytest.raises(TokenizerFileError, match=r"r.tiktoken: line 2: expected '<base64 token> <rank>'"):
        load_tokenizer(path, "gpt4")


def test_a_raw_tiktoken_encoding_is_wrapped(plain, tmp_path):
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {plain.token_bytes(i): i for i in range(plain.vocab_size)}
    enc = tiktoken.Encoding("x", pat_str=fb.PATTERNS["gpt4"], mergeable_ranks=ranks,
                            special_tokens={"<|endoftext|>": plain.vocab_size})
    tok = as_report_tokenizer(enc)
    assert tok.kind == "tiktoken" and tok.special_ids() == {plain.vocab_size}
    assert len(tok.entries()) == plain.vocab_size


# -- HF tokenizers -------------------------------------------------------------------------------


def hf_byte_level(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"], show_progress=False)
    hf.train_from_iterator(SAMPLE.splitlines(), trainer)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    return hf, path


def test_the_byte_table_is_the_libraries_alphabet():
    pre_tokenizers = pytest.importorskip("tokenizers.pre_tokenizers")
    alphabet = unicode_to_bytes()
    assert sorted(alphabet) == sorted(pre_tokenizers.ByteLevel.alphabet())
    assert sorted(alphabet.values()) == list(range(256))


def test_hf_byte_level_against_the_library(tmp_path):
    hf, path = hf_byte_level(tmp_path)
    from tokenizers import pre_tokenizers

    tok = load_tokenizer(path)
    assert isinstance(tok, HFTokenizer) and tok.byte_level and not tok.byte_fallback
    assert tok.special_ids() == {hf.token_to_id("<|endoftext|>")}
    single = {hf.token_to_id(c) for c in pre_tokenizers.ByteLevel.alphabet()}
    assert set(tok.byte_tokens()) == single
    for token, byte in tok.byte_tokens().items():
        if byte < 0x80:
            assert hf.decode([token]) == chr(byte)
    surfaces = tok.surfaces()
    assert len(surfaces) > 30
    for token, surface in surfaces.items():
        assert hf.decode([token]) == surface
    r = fb.report({"hf": path}, EVAL, progress=False)
    for row in r.results():
        ids = hf.encode(EVAL[row["corpus"]], add_special_tokens=False).ids
        assert row["tokens"] == len(ids)
        assert row["byte_fallback_tokens"] == sum(1 for i in ids if i in single)
    # Trained on ASCII only: "Ω" (2 bytes), "ü", "ï" (2 each) fall back to non-ASCII bytes.
    other = next(x for x in r.results() if x["corpus"] == "other")
    assert other["byte_fallback_non_ascii_tokens"] == 6


def test_hf_byte_fallback_and_metaspace_by_hand(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, normalizers, pre_tokenizers

    vocab = {"<unk>": 0, **{f"<0x{b:02X}>": 1 + b for b in range(256)}}
    for piece in ["▁", "a", "b", "c", "A", "ab", "▁ab", "▁Ab", "▁c"]:
        vocab[piece] = len(vocab)
    merges = [("a", "b"), ("▁", "ab"), ("▁", "c"), ("▁", "A"), ("▁A", "b")]
    vocab["▁A"] = len(vocab)
    model = models.BPE(vocab=vocab, merges=merges, byte_fallback=True, unk_token="<unk>")
    hf = tokenizers.Tokenizer(model)
    hf.pre_tokenizer = pre_tokenizers.Metaspace()
    hf.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    hf.normalizer = normalizers.Sequence([])
    tok = as_report_tokenizer(hf)
    assert tok.byte_fallback and not tok.byte_level
    assert tok.byte_tokens() == {1 + b: b for b in range(256)}
    assert tok.surfaces() == {vocab["ab"]: "ab", vocab["▁ab"]: " ab", vocab["▁Ab"]: " Ab", vocab["▁c"]: " c",
                              vocab["▁A"]: " A"}
    # "ab Ab é c": ▁ab ▁Ab ▁ <0xC3> <0xA9> ▁c → 6 tokens, 2 of them bytes, both ≥ 0x80.
    r = fb.report(tok, {"t": "ab Ab é c"}, progress=False)
    row = r.results()[0]
    assert hf.encode("ab Ab é c").tokens == ["▁ab", "▁Ab", "▁", "<0xC3>", "<0xA9>", "▁c"]
    assert (row["tokens"], row["byte_fallback_tokens"], row["byte_fallback_non_ascii_tokens"]) == (6, 2, 2)
    vocab_row = r.tokenizer_rows()[0]
    assert vocab_row["case_families"] == 1  # ▁ab ▁Ab
    assert vocab_row["space_families"] == 1  # ab ▁ab
    assert vocab_row["duplicate_families"] == 1 and vocab_row["duplicate_entries"] == 2


# -- SentencePiece --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sp_model(tmp_path_factory):
    spm = pytest.importorskip("sentencepiece")
    prefix = tmp_path_factory.mktemp("sp") / "m"
    spm.SentencePieceTrainer.train(sentence_iterator=iter(SAMPLE.splitlines()), model_prefix=str(prefix),
                                   vocab_size=320, model_type="bpe", byte_fallback=True,
                                   character_coverage=1.0, minloglevel=2)
    return str(prefix) + ".model"


def test_sentencepiece_against_the_library(sp_model):
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=sp_model)
    tok = load_tokenizer(sp_model)
    assert isinstance(tok, SentencePieceTokenizer)
    assert tok.special_ids() == {sp.bos_id(), sp.eos_id()} and tok.unknown_ids() == {sp.unk_id()}
    byte_ids = tok.byte_tokens()
    assert sorted(byte_ids.values()) == list(range(256))
    assert all(sp.id_to_piece(i) == f"<0x{b:02X}>" and sp.is_byte(i) for i, b in byte_ids.items())
    surfaces = tok.surfaces()
    assert " the" in surfaces.values() or " The" in surfaces.values()
    assert all(sp.id_to_piece(i).replace("▁", " ") == s for i, s in surfaces.items())
    r = fb.report({"sp": sp_model}, EVAL, progress=False)
    for row in r.results():
        ids = sp.encode(EVAL[row["corpus"]])
        assert row["tokens"] == len(ids)
        assert row["byte_fallback_tokens"] == sum(1 for i in ids if sp.is_byte(i))
    other = next(x for x in r.results() if x["corpus"] == "other")
    assert other["byte_fallback_non_ascii_tokens"] == 6  # Ω ü ï, two bytes each
    assert other["unknown_tokens"] == 0


def test_peers_in_chunks_equal_peers_on_the_whole_text(sp_model, tmp_path):
    _, hf_path = hf_byte_level(tmp_path)
    text = "\n".join(stdlib_text(60_000)) + "\n\nThe end\n" + SAMPLE
    peers = {"sp": sp_model, "hf": hf_path}
    whole = fb.report(peers, {"t": text}, unit_chars=10**9, progress=False).to_dict()
    small = fb.report(peers, {"t": text}, unit_chars=500, progress=False).to_dict()
    # SentencePiece does not decode back to the text (it turns line breaks into spaces); the
    # edit distance of its round trip is worked out unit by unit, within a budget that the
    # whole text exceeds: those figures depend on the unit size (docs/metrics.md), all others
    # may not.
    per_chunk = {"char_error_rate", "whitespace_fidelity", "round_trip_unmeasured_documents"}
    for report in (whole, small):
        for row in report["results"] + report["totals"]:
            if row["tokenizer"] == "sp":
                assert row["round_trip_exact_rate"] == 0.0
                for key in per_chunk:
                    row.pop(key)
    assert whole == small


# -- missing libraries and bad files ---------------------------------------------------------------


@pytest.mark.parametrize("module, loader, name", [
    ("tiktoken", lambda p: TiktokenTokenizer.from_file(p, "gpt4"), "x.tiktoken"),
    ("tokenizers", HFTokenizer.from_file, "tokenizer.json"),
    ("sentencepiece", SentencePieceTokenizer.from_file, "m.model"),
])
def test_a_missing_library_is_a_one_line_error(monkeypatch, tmp_path, module, loader, name):
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(FunctionalBPEError, match=f"needs the {module} package, which is not installed; pip install"):
        loader(tmp_path / name)


def test_files_that_are_no_tokenizer_are_refused(tmp_path):
    pytest.importorskip("sentencepiece")
    (tmp_path / "x.json").write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="not a tokenizer file this report reads"):
        load_tokenizer(tmp_path / "x.json")
    (tmp_path / "m.model").write_bytes(b"garbage")
    with pytest.raises(TokenizerFileError, match="m.model: sentencepiece cannot read it"):
        load_tokenizer(tmp_path / "m.model")
    with pytest.raises(TokenizerFileError, match="no such file"):
        load_tokenizer(tmp_path / "missing.json")


def test_the_example_row_keeps_sentencepieces_word_marks(sp_model):
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=sp_model)
    tok = load_tokenizer(sp_model)
    from functionalbpe.measure.report import token_texts

    text = "All's well that ends well"
    shown = token_texts(tok, text)
    assert shown == [sp.decode([i]) if sp.is_byte(i) else sp.id_to_piece(i) for i in sp.encode(text)]
    assert "".join(shown).replace("▁", " ").strip() == text  # the spaces are there, as ▁
