"""The fuzzer of tests/formats/test_hostile_files.py, carried to the other files functionalbpe
reads: counts files (``PieceCounts.load``), token files (``read_token_file`` and decoding
what it maps) and HF ``tokenizer.json`` (``Tokenizer.from_hf``). Each mutated file either
works or is refused with the package's own error, within a memory budget and a time guard
(``budget`` from the tokenizer-file fuzzer). CI runs it under the sanitizers too.
``FUNCTIONALBPE_FUZZ_EXAMPLES=N`` runs more."""
from __future__ import annotations

import hashlib
import json
import os
import struct

import pytest

import functionalbpe as fb
from functionalbpe.counts import HEADER, PieceCounts
from functionalbpe.errors import FunctionalBPEError
from functionalbpe.pipeline.tokenfile import read_token_file

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from .test_hostile_files import JSON_VALUES, budget  # noqa: E402

EXAMPLES = int(os.environ.get("FUNCTIONALBPE_FUZZ_EXAMPLES", "100"))
TEXT = "Hello World!! héllo wörld 123 The the THE café CAFÉ aaaa bbbb <|endoftext|>" * 5


@pytest.fixture(scope="module", params=["plain", "functional", "markers"])
def counted(request):
    return fb.count([TEXT], scheme=request.param, special_tokens=["<|endoftext|>"], progress=False)


def _flip(data: bytearray, draw) -> None:
    kind = draw(st.sampled_from(["byte", "field", "truncate", "extend", "meta"]))
    if kind == "byte" and data:
        at = draw(st.integers(0, len(data) - 1))
        data[at] = draw(st.integers(0, 255))
    elif kind == "field":
        offset = draw(st.sampled_from([8, 12, 16, 24, 32, 40]))
        width = 4 if offset in (8, 12) else 8
        value = draw(st.sampled_from([0, 1, 2**31, 2**32 - 1, 2**40, 2**63, 2**64 - 1]) | st.integers(0, 5000))
        data[offset:offset + width] = (value % (1 << (8 * width))).to_bytes(width, "little")
    elif kind == "truncate":
        del data[draw(st.integers(0, len(data))):]
    elif kind == "extend":
        data += bytes(draw(st.integers(1, 64)))


def _rechecksum(data: bytearray) -> bytes:
    if len(data) < 32:
        return bytes(data)
    body = bytes(data[:-32])
    return body + hashlib.sha256(body).digest()


def _with_metadata(data: bytes, meta: object) -> bytes:
    _, _, flags, meta_len, pieces, data_len, body_len = HEADER.unpack_from(data)
    magic, version = data[:8], struct.unpack_from("<I", data, 8)[0]
    new = json.dumps(meta).encode()
    head = HEADER.pack(magic, version, flags, len(new), pieces, data_len, body_len)
    rest = head + new + data[HEADER.size + meta_len:-32]
    return rest + hashlib.sha256(rest).digest()


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_fuzzed_counts_files_load_and_train_or_are_refused(counted, tmp_path_factory, data):
    raw = counted.to_bytes()
    if data.draw(st.booleans()):
        meta_len = HEADER.unpack_from(raw)[3]
        meta = json.loads(raw[HEADER.size:HEADER.size + meta_len])
        field = data.draw(st.sampled_from(sorted(meta) + ["scheme_options.pattern", "scheme_options.name", "x"]))
        if field.startswith("scheme_options."):
            meta["scheme_options"] = {**meta["scheme_options"], field.split(".")[1]: data.draw(JSON_VALUES)}
        else:
            meta[field] = data.draw(JSON_VALUES)
        raw = _with_metadata(raw, meta)
    buf = bytearray(raw)
    for _ in range(data.draw(st.integers(0, 3))):
        _flip(buf, data.draw)
    final = _rechecksum(buf) if data.draw(st.booleans()) else bytes(buf)
    path = tmp_path_factory.mktemp("counts") / "c.counts"
    path.write_bytes(final)
    with budget(60):
        try:
            loaded = PieceCounts.load(path)
        except FunctionalBPEError as exc:
            assert len(str(exc)) < 1000
            return
        try:
            fb.train(loaded, vocab_size=300, progress=False)
        except FunctionalBPEError:
            pass


@pytest.fixture(scope="module")
def tok():
    return fb.train([TEXT], vocab_size=600, scheme="functional", special_tokens=["<|endoftext|>"], progress=False)


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data(), kind=st.sampled_from(["npy", "bin", "llmc"]))
def test_fuzzed_token_files_read_and_decode_or_are_refused(tok, tmp_path_factory, data, kind):
    directory = tmp_path_factory.mktemp("ids")
    path = directory / ("ids.npy" if kind == "npy" else "ids.bin")
    tok.encode_to_file([TEXT[:200]], path, format=kind, progress=False, allowed_special="all")
    buf = bytearray(path.read_bytes())
    for _ in range(data.draw(st.integers(1, 3))):
        _flip(buf, data.draw)
    path.write_bytes(bytes(buf))
    dtype = data.draw(st.sampled_from([None, "uint16", "uint32"]))
    with budget(60):
        try:
            ids = read_token_file(path, format=data.draw(st.sampled_from([None, kind])), dtype=dtype)
            tok.decode(ids[:10_000], errors="replace")
        except FunctionalBPEError as exc:
            assert len(str(exc)) < 1000


def _hf_document(tmp_path_factory):
    tokenizers = pytest.importorskip("tokenizers")
    plain = fb.train([TEXT], vocab_size=300, special_tokens=["<|endoftext|>"], progress=False)
    directory = tmp_path_factory.mktemp("hf")
    plain.to_hf(directory)
    del tokenizers
    return json.loads((directory / "tokenizer.json").read_text())


@pytest.fixture(scope="module")
def hf_document(tmp_path_factory):
    return _hf_document(tmp_path_factory)


HF_FIELDS = [
    ("model",), ("model", "vocab"), ("model", "merges"), ("model", "dropout"), ("model", "type"),
    ("model", "byte_fallback"), ("model", "ignore_merges"), ("normalizer",), ("pre_tokenizer",),
    ("post_processor",), ("post_processor", "processors"), ("added_tokens",), ("decoder",),
]


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_fuzzed_hf_files_import_or_are_refused(hf_document, tmp_path_factory, data):
    document = json.loads(json.dumps(hf_document))
    for _ in range(data.draw(st.integers(1, 3))):
        what = data.draw(st.sampled_from(["field", "merge", "vocab", "added", "sequence"]))
        if what == "field":
            path = data.draw(st.sampled_from(HF_FIELDS))
            node = document
            for key in path[:-1]:
                node = node.setdefault(key, {}) if isinstance(node, dict) else {}
            if isinstance(node, dict):
                node[path[-1]] = data.draw(JSON_VALUES)
        elif what == "merge" and isinstance(document.get("model"), dict) and isinstance(document["model"].get("merges"), list):
            merges = document["model"]["merges"]
            if merges:
                merges[data.draw(st.integers(0, len(merges) - 1))] = data.draw(JSON_VALUES | st.text(max_size=6))
        elif what == "vocab" and isinstance(document.get("model"), dict) and isinstance(document["model"].get("vocab"), dict):
            vocab = document["model"]["vocab"]
            vocab[data.draw(st.text(max_size=4))] = data.draw(JSON_VALUES | st.integers(-5, 10**6))
        elif what == "added" and isinstance(document.get("added_tokens"), list) and document["added_tokens"]:
            entry = document["added_tokens"][0]
            if isinstance(entry, dict):
                entry[data.draw(st.sampled_from(["id", "content", "special", "lstrip", "rstrip", "normalized"]))] = data.draw(JSON_VALUES)
        elif what == "sequence":
            document["post_processor"] = {"type": "Sequence", "processors": data.draw(JSON_VALUES)}
    path = tmp_path_factory.mktemp("hfz") / "tokenizer.json"
    path.write_text(json.dumps(document))
    with budget(60):
        try:
            imported = fb.Tokenizer.from_hf(path)
        except FunctionalBPEError as exc:
            assert len(str(exc)) < 1000
            return
        ids = imported.encode("Hello wörld <|endoftext|>", allowed_special="all")
        assert imported.decode(ids) == "Hello wörld <|endoftext|>"


# -- rank files of prefix chains -----------------------------------------------------------

from functionalbpe.core import _native  # noqa: E402
from functionalbpe.formats.tiktoken import tiktoken_parts  # noqa: E402

from .test_hostile_files import naive_tiktoken_parts  # noqa: E402


@settings(max_examples=EXAMPLES, deadline=None)
@given(vocab=st.lists(st.text(alphabet="ab", min_size=2, max_size=7).map(str.encode), max_size=30, unique=True))
def test_every_split_with_recorded_splits_is_tiktokens(vocab):
    """The Python and the compiled procedures, run over all ranks in order (so that each
    uses the splits of the tokens before it), give tiktoken's parts for every token."""
    ranks = {bytes([b]): b for b in range(256)}
    for t in vocab:
        ranks.setdefault(t, len(ranks))
    by_rank = sorted(ranks, key=ranks.get)
    expected = [naive_tiktoken_parts(ranks, t, r) for r, t in enumerate(by_rank)]
    pairs: dict = {}
    assert [tiktoken_parts(ranks, t, r, pairs) for r, t in enumerate(by_rank)] == expected
    encoder = _native.NATIVE.encoder
    if encoder is not None:
        # With each two-part token the ranks of its parts: its merge, as merges_from_ranks takes it.
        assert encoder.tiktoken_splits(by_rank) == [
            (len(p), len(p[0])) + ((ranks[p[0]], ranks[p[1]]) if len(p) == 2 else (-1, -1)) for p in expected]


def _merges_or_refusal(ranks: dict, native: object):
    """merges_from_ranks with the tokens' splits found in C (native is the loaded modules) or
    in Python (a stand-in with no encoder); its refusal's message where it refuses."""
    import types

    from functionalbpe.formats import tiktoken as rank_files
    from functionalbpe.errors import TokenizerFileError

    saved, rank_files.NATIVE = rank_files.NATIVE, native if native is not None else types.SimpleNamespace(encoder=None)
    try:
        return rank_files.merges_from_ranks(ranks)
    except TokenizerFileError as exc:
        return str(exc)
    finally:
        rank_files.NATIVE = saved


@pytest.mark.skipif(_native.NATIVE.encoder is None, reason="the compiled encoder is not built")
@settings(max_examples=EXAMPLES, deadline=None)
@given(joins=st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99)), max_size=40),
       swaps=st.lists(st.integers(0, 99), max_size=10))
def test_merges_from_ranks_are_the_same_from_the_compiled_splits_and_from_python(joins, swaps):
    # A vocabulary made by merges (each token two earlier ones), then neighbours in rank
    # order swapped: ordinary merges, tokens that no merge makes but two tokens of lower rank
    # do (joins, as Llama 3's), and tokens that nothing of lower rank makes (refused) all
    # come up (about a third each).
    tokens = [b"a", b"b", b"."]
    for i, j in joins:
        token = tokens[i % len(tokens)] + tokens[j % len(tokens)]
        if token not in tokens and len(token) <= 12:
            tokens.append(token)
    longer = tokens[3:]
    for k in swaps:
        if len(longer) >= 2:
            i = k % (len(longer) - 1)
            longer[i], longer[i + 1] = longer[i + 1], longer[i]
    ranks = {bytes([b]): b for b in range(256)}
    for token in longer:
        ranks[token] = len(ranks)
    assert _merges_or_refusal(ranks, _native.NATIVE) == _merges_or_refusal(ranks, None)


class _CountingRanks(dict):
    hashed = 0

    def get(self, key, default=None):
        _CountingRanks.hashed += len(key)
        return super().get(key, default)


def test_a_prefix_chain_is_read_in_linear_work():
    """Every prefix of one string a token: tiktoken's procedure on each looked up joins of
    every length again (n^3 bytes hashed: 8,000 ranks took 86 s); with the splits found so
    far the bytes hashed are linear in the file."""
    import random

    rng = random.Random(0)
    seq = bytes(rng.randrange(256) for _ in range(1001))
    ranks = _CountingRanks({bytes([b]): b for b in range(256)})
    for k in range(2, len(seq) + 1):
        ranks[seq[:k]] = 256 + k - 2
    from functionalbpe.formats.tiktoken import merges_from_ranks

    pairs: dict = {}
    _CountingRanks.hashed = 0
    for k in range(2, len(seq) + 1):
        assert tiktoken_parts(ranks, seq[:k], 256 + k - 2, pairs) == [seq[:k - 1], seq[k - 1:k]]
    file_bytes = sum(len(t) for t in ranks)
    assert _CountingRanks.hashed < 4 * file_bytes  # was about n/3 times the file
    _, merges, _, _ = merges_from_ranks(dict(ranks))
    assert merges[-1] == (256 + 998, seq[1000])
