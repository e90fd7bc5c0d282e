"""HF both ways: ``to_hf`` directories that transformers loads with our ids; ``from_hf`` on
tokenizer.json files HF trained, encoding exactly as HF does; refusals that name the part."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

import functionalbpe as fb
from functionalbpe.errors import FunctionalBPEError, OutputError, TokenizerFileError
from functionalbpe.text.patterns import PATTERNS

from ..conftest import read_corpus
from ..helpers import peer_text, stdlib_text

SPECIALS = ["<|endoftext|>", "<pad>", "<|fim|>"]
VARIED = [
    "Hello world<|endoftext|>",
    "  leading spaces and trailing  ",
    "line\r\nline\r\n\r\n",
    "emoji 😀👍🏽 and CJK 日本語の文章 中文 한국어",
    "<pad><|fim|> x <|endoftext|><|endoftext|>",
    "",
    " ",
    "def f(x):\n    return x  # ça va\n",
]
LANGUAGES = ["nl/en.txt", "nl/ru.txt", "nl/zh-CN.txt", "nl/ja.txt", "nl/ar.txt", "code/python.txt"]


@pytest.fixture(scope="module")
def stdlib_docs():
    return stdlib_text(40_000) + VARIED  # (reading the standard library takes seconds: once)


@pytest.fixture(scope="module")
def tok(stdlib_docs) -> fb.Tokenizer:
    return fb.train(stdlib_docs, vocab_size=256 + 300 + len(SPECIALS), special_tokens=SPECIALS, progress=False)


@pytest.fixture(scope="module")
def auto(tok, tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    path = tmp_path_factory.mktemp("hf") / "model"
    tok.to_hf(path, eos_token="<|endoftext|>", pad_token="<pad>", model_max_length=4096)
    return transformers.AutoTokenizer.from_pretrained(str(path))


# -- to_hf: what transformers loads -----------------------------------------------------------


def test_auto_tokenizer_gives_our_ids(tok, auto):
    assert (auto.eos_token, auto.pad_token, auto.bos_token) == ("<|endoftext|>", "<pad>", None)
    assert auto.pad_token_id == tok.special_tokens["<pad>"] and auto.model_max_length == 4096
    assert len(auto) == tok.vocab_size
    for text in VARIED:
        ids = tok.encode(text, allowed_special="all")
        assert auto(text)["input_ids"] == ids, text
        assert auto.decode(ids) == text
        assert auto.convert_tokens_to_ids(auto.convert_ids_to_tokens(ids)) == ids


@settings(max_examples=40, deadline=None)
@given(peer_text)
def test_auto_tokenizer_on_any_text(tok, auto, text):
    ids = tok.encode(text, allowed_special="all")
    assert auto(text)["input_ids"] == ids
    assert auto.decode(ids) == tok.decode(ids, errors="replace")


def test_batch_encoding_pads(tok, auto):
    batch = auto(VARIED, padding=True)
    width = max(len(tok.encode(t, allowed_special="all")) for t in VARIED)
    pad = tok.special_tokens["<pad>"]
    for text, ids, mask in zip(VARIED, batch["input_ids"], batch["attention_mask"]):
        ours = tok.encode(text, allowed_special="all")
        assert len(ids) == width and ids == ours + [pad] * (width - len(ours))
        assert mask == [1] * len(ours) + [0] * (width - len(ours))
    assert auto.decode(batch["input_ids"][0], skip_special_tokens=True) == "Hello world"


def test_to_transformers_is_what_to_hf_writes(tok, auto):
    pytest.importorskip("transformers")
    hf = tok.to_transformers(eos_token="<|endoftext|>", pad_token="<pad>")
    assert hf(VARIED, padding=True)["input_ids"] == auto(VARIED, padding=True)["input_ids"]
    assert hf.eos_token_id == tok.special_tokens["<|endoftext|>"]


def test_the_directory_files(tok, tmp_path):
    tok.to_hf(tmp_path / "out", bos_token="<|fim|>", unk_token="<pad>")
    config = json.loads((tmp_path / "out" / "tokenizer_config.json").read_text(encoding="utf-8"))
    roles = json.loads((tmp_path / "out" / "special_tokens_map.json").read_text(encoding="utf-8"))
    assert config["tokenizer_class"] == "PreTrainedTokenizerFast" and "model_max_length" not in config
    assert roles == {"bos_token": "<|fim|>", "unk_token": "<pad>", "additional_special_tokens": ["<|endoftext|>"]}
    assert {v["content"]: int(k) for k, v in config["added_tokens_decoder"].items()} == tok.special_tokens
    single = tmp_path / "new" / "dirs" / "tok.json"
    tok.to_hf(single)  # a .json path: the tokenizer.json alone, its directories made
    assert single.read_text(encoding="utf-8") == (tmp_path / "out" / "tokenizer.json").read_text(encoding="utf-8")
    assert sorted(p.name for p in single.parent.iterdir()) == ["tok.json"]


def test_to_hf_errors_name_the_path_or_the_option(tok, tmp_path):
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    cases = [
        (tmp_path / "file.txt", OutputError, f"{tmp_path / 'file.txt'}: cannot write there: .*is a file"),
        (tmp_path / "file.txt" / "sub", OutputError, f"{tmp_path / 'file.txt' / 'sub'}: cannot"),
        (tmp_path / "file.txt" / "t.json", OutputError, f"{tmp_path / 'file.txt' / 't.json'}: cannot"),
        ("", OutputError, "the output path is empty"),
    ]
    for path, error, message in cases:
        with pytest.raises(error, match=message):
            tok.to_hf(path)
    with pytest.raises(FunctionalBPEError, match="eos_token='</s>' is not a special token"):
        tok.to_hf(tmp_path / "x", eos_token="</s>")
    with pytest.raises(FunctionalBPEError, match="model_max_length=0"):
        tok.to_hf(tmp_path / "x", model_max_length=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


# -- from_hf: what HF trained -----------------------------------------------------------------


def hf_trained(docs, layout: str, specials_first: bool):
    """A byte-level BPE trained by HF tokenizers: GPT-2's ByteLevel pre-tokenizer, or a
    Split (Llama 3's regex) + ByteLevel; special tokens at the first ids or added last."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import Regex, decoders, models, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.BPE())
    if layout == "bytelevel":
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        hf.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(PATTERNS["llama3"]), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=700, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=SPECIALS if specials_first else [],
    )
    hf.train_from_iterator(docs, trainer)
    if not specials_first:
        hf.add_special_tokens(SPECIALS)
    return hf


@pytest.fixture(scope="module")
def corpus_docs(corpora, stdlib_docs):
    return stdlib_docs + [read_corpus(corpora / name, 30_000) for name in LANGUAGES]


@pytest.mark.parametrize("layout", ["bytelevel", "split"])
@pytest.mark.parametrize("specials_first", [True, False])
def test_from_hf_encodes_as_hf(layout, specials_first, corpus_docs, tmp_path):
    hf = hf_trained(corpus_docs[:-len(LANGUAGES)] + [d[:10_000] for d in corpus_docs[-len(LANGUAGES):]], layout, specials_first)
    hf.save(str(tmp_path / "tokenizer.json"))
    ours = fb.Tokenizer.from_hf(tmp_path)  # the directory holding it
    assert ours.special_tokens == {s: hf.token_to_id(s) for s in SPECIALS}
    assert (ours.special_tokens["<|endoftext|>"] == 0) is specials_first
    assert ours.vocab_size == hf.get_vocab_size()
    texts = VARIED + [d[10_000:] for d in corpus_docs[-len(LANGUAGES):]]  # text it was not trained on
    for text in texts:
        ids = ours.encode(text, allowed_special="all")
        assert ids == hf.encode(text, add_special_tokens=False).ids
        assert ours.decode(ids) == text


@settings(max_examples=60, deadline=None)
@given(peer_text)
def test_from_hf_on_any_text(hf_pair, text):
    hf, ours = hf_pair
    ids = hf.encode(text, add_special_tokens=False).ids
    assert ours.encode(text, allowed_special="all") == ids
    assert ours.decode_bytes(ids) == text.encode("utf-8", "replace") or "\ufffd" in hf.decode(ids)


@pytest.fixture(scope="module", params=["bytelevel", "split"])
def hf_pair(request, stdlib_docs):
    hf = hf_trained(stdlib_docs, request.param, specials_first=True)
    return hf, fb.Tokenizer.from_hf(hf)  # the tokenizers object itself


def test_from_hf_takes_our_export_back(tok, tmp_path):
    tok.to_hf(tmp_path / "d")
    again = fb.Tokenizer.from_hf(tmp_path / "d" / "tokenizer.json")
    assert again.merges == tok.merges and again.special_tokens == tok.special_tokens
    assert again.encode(" ".join(VARIED), allowed_special="all") == tok.encode(" ".join(VARIED), allowed_special="all")
    transformers = pytest.importorskip("transformers")
    loaded = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "d"))
    assert fb.Tokenizer.from_hf(loaded).merges == tok.merges


def test_both_spellings_of_the_merges(tok, tmp_path):
    tok.to_hf(tmp_path / "a.json")
    doc = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    doc["model"]["merges"] = [m.split(" ") for m in doc["model"]["merges"]]
    (tmp_path / "b.json").write_text(json.dumps(doc), encoding="utf-8")
    assert fb.Tokenizer.from_hf(tmp_path / "b.json").merges == tok.merges


TEMPLATE = {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|fim|>", "type_id": 0}},
                                                    {"Sequence": {"id": "A", "type_id": 0}}]}


def refusal_cases():
    return [
        (lambda d: d.update(normalizer={"type": "Lowercase"}), "normalizer: a 'Lowercase' normalizer changes the text"),
        (lambda d: d.update(normalizer={"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Strip"}]}),
         "normalizer: a 'Sequence' normalizer changes the text .*only NFC, NFD, NFKC or NFKD alone"),
        (lambda d: d.update(post_processor=TEMPLATE), "post_processor: a 'TemplateProcessing'"),
        (lambda d: d["model"].update(type="Unigram"), "model: the model is 'Unigram'"),
        (lambda d: d["model"].update(type="WordPiece"), "model: the model is 'WordPiece'"),
        (lambda d: d["model"].update(byte_fallback=True), "model.byte_fallback"),
        (lambda d: d.update(pre_tokenizer={"type": "ByteLevel", "add_prefix_space": True}), "pre_tokenizer: ByteLevel with add_prefix_space"),
        (lambda d: d.update(pre_tokenizer={"type": "Whitespace"}), "pre_tokenizer: the last step is 'Whitespace'"),
        (lambda d: d["added_tokens"][0].update(lstrip=True), r"added_tokens\[0\]: '<\|endoftext\|>' has lstrip"),
        (lambda d: d["model"]["vocab"].pop("Ā"), "model.vocab: 1 of the 256 single bytes"),
        (lambda d: d["model"]["merges"].insert(0, "x y"), r"model.merges\[0\]: 'x y' makes b'xy', which is not in"),
        (lambda d: d["model"]["vocab"].update({"zzzq": 5000}), r"model.vocab: the token b'zzzq' \(id 5000\) is neither a byte nor made by a merge"),
        (lambda d: d["model"]["merges"].append(d["model"]["merges"][0]), r"model.merges\[300\]: .* is listed twice"),
        # A token whose only merge joins a token made after it: no merge table can hold it.
        (lambda d: d["model"]["merges"].reverse(), r"model.merges: every merge that makes .* joins a token first made by a later merge"),
        (lambda d: d["model"]["vocab"].update({"日": 5000}), r"model.vocab: '日' \(id 5000\) is not a byte-level token"),
        (lambda d: d["model"]["vocab"].update({"a": "x"}), "model.vocab: 'a': 'x' is not an id"),
    ]


@pytest.mark.parametrize("case", range(len(refusal_cases())))
def test_what_cannot_be_imported_is_refused_naming_the_part(tok, tmp_path, case):
    change, message = refusal_cases()[case]
    tok.to_hf(tmp_path / "t.json")
    doc = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    change(doc)
    (tmp_path / "t.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(TokenizerFileError, match=f"t.json: {message}"):
        fb.Tokenizer.from_hf(tmp_path / "t.json")


def test_bad_sources_are_refused(tmp_path):
    with pytest.raises(TokenizerFileError, match="no such tokenizer.json"):
        fb.Tokenizer.from_hf(tmp_path / "missing.json")
    with pytest.raises(TokenizerFileError, match="tokenizer.json: no such"):
        fb.Tokenizer.from_hf(tmp_path)  # a directory without one
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="bad.json: not valid JSON at line 1"):
        fb.Tokenizer.from_hf(tmp_path / "bad.json")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="deep.json: the JSON is nested too deeply"):
        fb.Tokenizer.from_hf(tmp_path / "deep.json")
    (tmp_path / "big.json").write_text('{"model": {"vocab": {"a": 1' + "0" * 5000 + "}}}", encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="big.json: not a tokenizer.json"):
        fb.Tokenizer.from_hf(tmp_path / "big.json")
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="list.json: not a tokenizer.json"):
        fb.Tokenizer.from_hf(tmp_path / "list.json")
    with pytest.raises(FunctionalBPEError, match="from_hf takes the path of a tokenizer.json.*not a int"):
        fb.Tokenizer.from_hf(3)
