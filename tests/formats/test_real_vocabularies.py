"""Production vocabularies, loaded as their libraries load them, give their libraries' ids.

The ranks come from peers' wheels (no download): ``bpe-openai`` ships OpenAI's cl100k and o200k
files, ``quicktok-v1`` Llama 3's and Qwen 3's. Each is imported from a ``tiktoken.Encoding``
(ids checked against tiktoken), from the ``tokenizer.json`` that transformers'
``TikTokenConverter`` builds from the same ranks (ids checked against HF ``tokenizers``) and,
for OpenAI's files, from the rank file itself as the CLI reads it. Every such test is skipped
when a package it needs is absent.

Tokens that no merge of two earlier tokens makes (Llama 3 has 678: ``.:.:`` comes out of its
lower ranks as three parts) are checked on their own too, on random vocabularies against
tiktoken, where the C encoder and the Python one (the pure-Python run of the suite) must both
follow tiktoken's rule.
"""
from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
from functools import lru_cache
from typing import Dict, Tuple

import pytest

import functionalbpe as fb
from functionalbpe.errors import PatternError
from functionalbpe.formats.tiktoken import PUBLISHED, merges_from_ranks
from functionalbpe.text.patterns import CL100K, FUNCTIONALIZER_LLAMA, LLAMA3, O200K, pretokenize

from ..conftest import read_corpus

ENDOFTEXT = "<|endoftext|>"
# What each vocabulary is: where its ranks are, its pattern (as its library spells it), its specials.
VOCABULARIES = {
    "cl100k_base": ("bpe_openai", CL100K, {ENDOFTEXT: 100257, "<|endofprompt|>": 100276}),
    "o200k_base": ("bpe_openai", O200K, {ENDOFTEXT: 199999, "<|endofprompt|>": 200018}),
    "llama3": ("quicktok", LLAMA3, {"<|begin_of_text|>": 128000, "<|end_of_text|>": 128001}),
    "qwen3": ("quicktok", FUNCTIONALIZER_LLAMA, {ENDOFTEXT: 151643}),
}
# Text that hits the corners of these patterns and vocabularies.
ADVERSARIAL = [
    "", " ", "\n", "a\n  ", "Hello world's 12345!!\n", "  \n\n \t x", ".:.:.:.:.:", "'S 'll 'ſ",
    " việc nhiều nghiệp", " характера принадлежит ограниченной", "中文分词的例子，日本語のテキスト。",
    "😀👍🏽 \u200d \ue000 \u00a0\u2028\u3000", "x" * 3000, " " * 2000 + "a", "🙂" * 300,
    "e\u0301\u0301 İß ǅ Σς", "if (x) {\n\treturn y;\n}\n", "http://a.b/c?d=e&f=g#h", "\x00\x01\x7f",
    "١٢٣ ٤٥٦ ۷۸۹", "Ⅻ ½ ²", "\r\n\r\n", "!!!\n\n\n///", "A" * 70 + "bc" * 40,
]


@lru_cache(maxsize=None)
def ranks_of(name: str) -> Dict[bytes, int]:
    """The ranks of a vocabulary, from the wheel that ships them (skipped without it)."""
    package, _, _ = VOCABULARIES[name]
    module = pytest.importorskip(package)
    if package == "bpe_openai":
        path = os.path.join(os.path.dirname(module.__file__), "data", f"{name}.tiktoken.gz")
        if not os.path.exists(path):
            pytest.skip(f"{package} ships no {name}")
        import base64

        ranks = {}
        for line in gzip.open(path).read().splitlines():
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
        return ranks
    encoding = module.get_encoding(name)
    specials = {encoding.encode_single_token(s) for s in encoding.special_tokens_set}
    return {encoding.decode_single_token_bytes(i): i for i in range(encoding.n_vocab) if i not in specials}


def tiktoken_encoding(name: str):
    tiktoken = pytest.importorskip("tiktoken")
    _, pattern, specials = VOCABULARIES[name]
    return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks_of(name), special_tokens=specials)


@lru_cache(maxsize=None)
def loaded(name: str) -> Tuple[object, object]:
    """(the tiktoken Encoding, our Tokenizer imported from it)."""
    enc = tiktoken_encoding(name)
    return enc, fb.Tokenizer.from_tiktoken(enc)


def samples(corpora, limit=20_000):
    """The start of every file of the shared corpora, and the adversarial strings."""
    texts = [read_corpus(path, limit) for path in sorted(corpora.glob("*/*.txt"))]
    return texts + ADVERSARIAL


# Reading the files is the same code with or without the compiled core, and the HF files take
# seconds to build: those tests run once, in the compiled run of the suite (the pure-Python
# encoder is checked against tiktoken here on Llama 3 and on random vocabularies).
once = pytest.mark.skipif(os.environ.get("FUNCTIONALBPE_PUREPYTHON") == "1", reason="run in the compiled suite")


@pytest.mark.parametrize("name", list(VOCABULARIES))
def test_from_a_tiktoken_encoding_the_ids_are_tiktoken_s(name, corpora):
    enc, tok = loaded(name)
    for text in samples(corpora):
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text), text[:80]
        assert tok.decode(tok.encode_ordinary(text)) == text
    assert tok.encode(ENDOFTEXT, allowed_special="all") == enc.encode(ENDOFTEXT, allowed_special="all") or \
        ENDOFTEXT not in enc._special_tokens


def test_llama3_holds_tokens_no_merge_makes_and_keeps_them_through_its_file(tmp_path):
    enc, tok = loaded("llama3")
    # .:.: is no merge of two earlier tokens, yet tiktoken makes it, whole and inside a piece.
    assert tok.encode_ordinary(".:.:") == enc.encode_ordinary(".:.:") == [ranks_of("llama3")[b".:.:"]]
    assert len(tok.joins) > 0 and tok.whole_pieces
    path = tmp_path / "llama3.json"
    tok.save(path)
    again = fb.Tokenizer.load(path)
    assert again == tok and again.joins == tok.joins
    text = " ".join(ADVERSARIAL) + " .:.:.:.:.: việc nhiều"
    assert again.encode_ordinary(text) == enc.encode_ordinary(text)


def hf_from_ranks(name: str, tmp_path):
    """The tokenizer.json transformers' TikTokenConverter builds from the ranks, as HF loads it."""
    tokenizers = pytest.importorskip("tokenizers")
    converter = pytest.importorskip("transformers.convert_slow_tokenizer").TikTokenConverter
    _, pattern, specials = VOCABULARIES[name]
    rank_file = tmp_path / f"{name}.tiktoken"
    fb.formats.tiktoken.write_ranks(rank_file, ranks_of(name))
    made = converter(vocab_file=str(rank_file), pattern=pattern, additional_special_tokens=list(specials)).converted()
    path = tmp_path / "tokenizer.json"
    made.save(str(path))
    return tokenizers.Tokenizer.from_file(str(path)), path


@once
@pytest.mark.parametrize("name", ["llama3"] + [pytest.param(n, marks=pytest.mark.slow) for n in
                                               ("cl100k_base", "o200k_base", "qwen3")])
def test_from_the_tokenizer_json_hf_builds_the_ids_are_hf_s(name, corpora, tmp_path):
    hf, path = hf_from_ranks(name, tmp_path)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["model"]["ignore_merges"] and document["pre_tokenizer"]["type"] == "Sequence"
    tok = fb.Tokenizer.from_hf(path)
    enc, _ = loaded(name)
    for text in samples(corpora, 10_000):
        want = hf.encode(text, add_special_tokens=False).ids
        assert tok.encode_ordinary(text) == want, text[:80]
        if name != "cl100k_base":  # HF reads cl100k's \p{N}{1,3}+ as a repeat (formats/hf.py)
            assert want == enc.encode_ordinary(text)  # and HF's are tiktoken's


@once
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_the_published_rank_files_bring_their_pattern_and_specials(name, corpora, tmp_path):
    enc, _ = loaded(name)
    path = tmp_path / f"{name}.tiktoken"
    fb.formats.tiktoken.write_ranks(path, ranks_of(name))
    assert PUBLISHED[__import__("hashlib").sha256(path.read_bytes()).hexdigest()].name == name
    tok = fb.Tokenizer.from_tiktoken(path)
    text = read_corpus(corpora / "nl" / "en.txt", 20_000)
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    assert tok.special_tokens[ENDOFTEXT] == enc.eot_token
    # Gzipped, as packages ship them, the same.
    gz = tmp_path / f"{name}.tiktoken.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert fb.Tokenizer.from_tiktoken(gz).encode_ordinary(text) == enc.encode_ordinary(text)
    # The CLI gives the same ids (o200k's differ from gpt4's from the first sentence on).
    (tmp_path / "s.txt").write_text(text, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "functionalbpe", "encode", "-t", str(path), str(tmp_path / "s.txt")],
                         capture_output=True, text=True, check=True).stdout
    assert list(map(int, out.split())) == enc.encode_ordinary(text)


def test_a_rank_file_of_no_known_model_needs_its_pattern(tmp_path):
    tok = fb.train(["hello world, hello there"], vocab_size=270, pattern="gpt2", progress=False)
    path = tmp_path / "mine.tiktoken"
    tok.to_tiktoken(path)
    with pytest.raises(fb.FunctionalBPEError, match="holds no pattern.*give the pattern"):
        fb.Tokenizer.from_tiktoken(path)
    assert fb.Tokenizer.from_tiktoken(path, pattern="gpt2").encode("hello world") == tok.encode("hello world")
    (tmp_path / "s.txt").write_text("hello world", encoding="utf-8")
    run = [sys.executable, "-m", "functionalbpe", "encode", "-t", str(path), str(tmp_path / "s.txt")]
    refused = subprocess.run(run, capture_output=True, text=True)
    assert refused.returncode == 2 and "holds no pattern" in refused.stderr and len(refused.stderr.splitlines()) == 1
    given = subprocess.run(run + ["--pattern", "gpt2"], capture_output=True, text=True, check=True)
    assert list(map(int, given.stdout.split())) == tok.encode("hello world")


def test_the_encoding_names_people_know_are_patterns():
    text = "Hello world's 12345!!\n  \n\t a\n  "
    regex = pytest.importorskip("regex")
    assert pretokenize(text, "cl100k_base") == pretokenize(text, "cl100k") == regex.findall(CL100K, text)
    assert pretokenize(text, "o200k_base") == pretokenize(text, "o200k")
    assert pretokenize(text, "cl100k")[-1] == "\n  " and pretokenize(text, "gpt4")[-2:] == ["\n", "  "]
    with pytest.raises(PatternError, match="no pattern is named 'cl100k_bse'; the names are gpt2, gpt4"):
        fb.train(["abc"], vocab_size=260, pattern="cl100k_bse", progress=False)


def random_ranks(rng: random.Random) -> Dict[bytes, int]:
    """A vocabulary over a few bytes whose longer tokens come in random rank order: many are
    made by no merge of two earlier ones, as in Llama 3 (one that no two earlier tokens make at
    all is dropped: no rank file can hold it)."""
    ranks = {bytes([b]): b for b in range(256)}
    made = [b"a", b"b", b"c", b" "]
    for _ in range(rng.randrange(5, 60)):
        token = rng.choice(made) + rng.choice(made)
        if token not in ranks and len(token) <= 12:
            made.append(token)
            ranks[token] = 0
    order = list(ranks)[256:]
    rng.shuffle(order)
    kept = {bytes([b]): b for b in range(256)}
    for token in order:
        if any(token[:c] in kept and token[c:] in kept for c in range(1, len(token))):
            kept[token] = len(kept)
    merges_from_ranks(kept)  # a rank file, whatever its tokens no merge makes
    return kept


@pytest.mark.parametrize("seed", range(40))
def test_tokens_no_merge_makes_encode_as_tiktoken_on_random_vocabularies(seed):
    tiktoken = pytest.importorskip("tiktoken")
    rng = random.Random(seed)
    ranks = random_ranks(rng)
    # Whole texts as one piece (long ones merge on the heap), and words.
    for pattern in (r"[\s\S]+", r" ?\S+|\s+"):
        enc = tiktoken.Encoding("r", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
        tok = fb.Tokenizer.from_tiktoken(enc)
        for _ in range(30):
            text = "".join(rng.choice("abc  ") for _ in range(rng.choice([3, 10, 70, 300])))
            assert tok.encode_ordinary(text) == enc.encode_ordinary(text), (seed, pattern, text)
        for token in list(ranks)[256:]:  # every token whole, and between others
            text = token.decode()
            assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
            assert tok.encode_ordinary("ab" + text + "ca") == enc.encode_ordinary("ab" + text + "ca")


def test_ids_that_leave_c_as_numbers_are_the_vocabulary_s_own(tmp_path):
    """An imported vocabulary keeps its ids (bytes in another order, as in every OpenAI file):
    token files and flat batches, whose ids leave C without a Python int, must map them too."""
    np = pytest.importorskip("numpy")
    text = "The cat sat on the mat. Pa qb, 12 34!\n" * 40
    tok = fb.train([text], vocab_size=300, pattern="gpt2", progress=False)
    path = tmp_path / "r.tiktoken"
    tok.to_tiktoken(path)
    ranks = fb.formats.tiktoken.read_ranks(path)
    # The 256 bytes in reverse order, the merged tokens after them: every byte's id moves.
    shifted = {t: (255 - r if len(t) == 1 else r) for t, r in ranks.items()}
    fb.formats.tiktoken.write_ranks(path, shifted)
    imported = fb.Tokenizer.from_tiktoken(path, pattern="gpt2", special_tokens=[ENDOFTEXT])
    docs = [text, "P q\n", "", "zz"]
    want = [imported.encode_ordinary(d) for d in docs]
    assert want[1] != tok.encode_ordinary(docs[1])  # "P", " ", "q", "\n": bytes, moved
    assert imported.encode_batch(docs, flat=True).tolist() == want
    (tmp_path / "c.txt").write_text(text, encoding="utf-8")
    imported.encode_to_file(tmp_path / "c.txt", tmp_path / "ids.npy", eot=ENDOFTEXT, progress=False)
    assert np.load(tmp_path / "ids.npy").tolist() == want[0] + [imported.special_tokens[ENDOFTEXT]]


@once
def test_qwen_s_nfc_normalizer_is_read_and_written(corpora, tmp_path):
    hf, path = hf_from_ranks("qwen3", tmp_path)
    document = json.loads(path.read_text(encoding="utf-8"))
    document["normalizer"] = {"type": "NFC"}  # as Qwen 2 and 3 ship it
    path.write_text(json.dumps(document), encoding="utf-8")
    hf = type(hf).from_file(str(path))
    tok = fb.Tokenizer.from_hf(path)
    assert tok.scheme.normalize == "NFC"
    texts = samples(corpora, 5_000) + ["cafe\u0301 e\u0301\u0301 \u212b \uff21"]
    for text in texts:
        assert tok.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids, text[:80]
    # Exported again, HF reads the same normalizer and gives the same ids.
    tok.to_hf(tmp_path / "again.json")
    again = type(hf).from_file(str(tmp_path / "again.json"))
    assert json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))["normalizer"] == {"type": "NFC"}
    assert all(again.encode(t, add_special_tokens=False).ids == tok.encode_ordinary(t) for t in texts)
    # Several Split steps (DeepSeek V3's form) cannot be one pattern: refused, saying so.
    document["pre_tokenizer"]["pretokenizers"].insert(0, document["pre_tokenizer"]["pretokenizers"][0])
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(fb.TokenizerFileError, match="only one Split before a ByteLevel"):
        fb.Tokenizer.from_hf(path)


@once
def test_llama3_exported_to_hf_gives_tiktoken_s_ids(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    enc, tok = loaded("llama3")
    tok.to_hf(tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in ADVERSARIAL:
        assert hf.encode(text, add_special_tokens=False).ids == enc.encode_ordinary(text), text[:80]
