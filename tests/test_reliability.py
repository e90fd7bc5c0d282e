"""The error contract and the bounds of the reliability round, one test per attack (the output paths, signals and
full disks are in tests/test_output_safety.py)."""
from __future__ import annotations

import json
import struct

import pytest

import functionalbpe as fb
from functionalbpe import counts as counts_module
from functionalbpe.core.piecetable import PieceTable
from functionalbpe.counts import HEADER, MAGIC, VERSION, PieceCounts
from functionalbpe.errors import CountsFileError, FunctionalBPEError
from functionalbpe.schemes.registry import make_scheme


def _counts_with_metadata(meta_changes):
    """A counts file's bytes with its metadata changed and the checksum made good again."""
    import hashlib

    data = fb.count(["ab ab"], progress=False).to_bytes()
    _, _, flags, meta_len, pieces, data_len, body_len = HEADER.unpack_from(data)
    meta = json.loads(data[HEADER.size:HEADER.size + meta_len])
    meta.update(meta_changes)
    new_meta = json.dumps(meta).encode()
    body = data[HEADER.size + meta_len:-32]
    head = HEADER.pack(MAGIC, VERSION, flags, len(new_meta), pieces, data_len, body_len)
    rest = head + new_meta + body
    return rest + hashlib.sha256(rest).digest()


@pytest.mark.parametrize("key", ["pattern", "name"])
def test_counts_metadata_option_named_like_a_parameter(tmp_path, key):
    data = _counts_with_metadata({"scheme_options": {key: "gpt2"}})
    with pytest.raises(CountsFileError, match=f"scheme_options: '{key}'"):
        PieceCounts.from_bytes(data)
    path = tmp_path / "x.counts"
    path.write_bytes(data)
    with pytest.raises(CountsFileError, match="x.counts"):
        PieceCounts.load(path)


def test_sparse_counts_file_refused_on_its_header(tmp_path, monkeypatch):
    """A 2 GB file (nothing on disk) with a header that fits its size: the checksum is read a
    block at a time and fails; the file is never read whole."""
    path = tmp_path / "sparse.counts"
    size = 2 << 30
    with open(path, "wb") as fh:
        fh.write(HEADER.pack(MAGIC, VERSION, 0, 2, 0, size - HEADER.size - 2 - 32, size - HEADER.size - 2 - 32))
        fh.truncate(size)

    def whole(*args, **kwargs):
        raise AssertionError("read whole before its checksum was checked")

    monkeypatch.setattr(counts_module, "read_bytes", whole)
    monkeypatch.setattr(counts_module, "_checksum_holds", lambda name, size: False)
    with pytest.raises(CountsFileError, match="checksum mismatch"):
        PieceCounts.load(path)
    zeros = tmp_path / "zeros.counts"
    with open(zeros, "wb") as fh:
        fh.truncate(size)
    with pytest.raises(CountsFileError, match="not a functionalbpe counts file"):
        PieceCounts.load(zeros)


@pytest.mark.parametrize("backend", ["auto", "python"])
def test_counts_near_2_63_refused_alike_on_every_backend(backend):
    table = PieceTable.from_dict({"aaaa": 2**62, "ab": 2**62})
    counts = PieceCounts(table, make_scheme("plain"), ())
    with pytest.raises(FunctionalBPEError, match="too large to train on"):
        fb.train(counts, vocab_size=260, backend=backend, progress=False)


@pytest.mark.parametrize("backend", ["auto", "python"])
def test_counts_just_under_the_bound_train_and_save(tmp_path, backend):
    table = PieceTable.from_dict({"ab": 2**63 - 1})
    tok = fb.train(PieceCounts(table, make_scheme("plain"), ()), vocab_size=257, backend=backend, progress=False)
    tok.save(tmp_path / "t.json")
    assert fb.Tokenizer.load(tmp_path / "t.json").merges == tok.merges


# -- item 11, 17: from_hf -------------------------------------------------------------------


@pytest.fixture(scope="module")
def hf_doc(tmp_path_factory):
    pytest.importorskip("tokenizers")
    tok = fb.train(["hello world " * 10], vocab_size=270, progress=False)
    directory = tmp_path_factory.mktemp("hf")
    tok.to_hf(directory)
    return json.loads((directory / "tokenizer.json").read_text())


@pytest.mark.parametrize("processors", [5, "x", {"a": 1}])
def test_hf_post_processor_sequence_of_a_non_list(hf_doc, processors):
    doc = {**hf_doc, "post_processor": {"type": "Sequence", "processors": processors}}
    with pytest.raises(fb.TokenizerFileError, match="post_processor.processors"):
        fb.Tokenizer.from_hf(doc)


def test_hf_dropout_is_refused_not_ignored(hf_doc):
    doc = json.loads(json.dumps(hf_doc))
    doc["model"]["dropout"] = 0.1
    with pytest.raises(fb.TokenizerFileError, match="model.dropout"):
        fb.Tokenizer.from_hf(doc)
    doc["model"]["dropout"] = "x"
    with pytest.raises(fb.TokenizerFileError, match="model.dropout"):
        fb.Tokenizer.from_hf(doc)
    doc["model"]["dropout"] = None
    assert fb.Tokenizer.from_hf(doc).decode(fb.Tokenizer.from_hf(doc).encode("hello")) == "hello"


# -- item 17: token files -------------------------------------------------------------------


def test_truncated_llmc_file_is_refused_not_read_as_raw_ids(tmp_path):
    from functionalbpe.pipeline.tokenfile import read_token_file

    tok = fb.train(["hello world " * 10], vocab_size=270, progress=False)
    path = tmp_path / "ids.bin"
    tok.encode_to_file(["hello world " * 10], path, format="llmc", progress=False)
    assert len(read_token_file(path)) > 0
    path.write_bytes(path.read_bytes()[:-2])
    with pytest.raises(FunctionalBPEError, match="truncated"):
        read_token_file(path, dtype="uint16")


def test_npy_declaring_gigabytes_is_refused_before_mapping(tmp_path):
    from functionalbpe.pipeline.tokenfile import read_token_file

    path = tmp_path / "big.npy"
    header = "{'descr': '<u4', 'fortran_order': False, 'shape': (1073741824,), }"
    header = header.ljust(128 - 10 - 1) + "\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + bytes(16))
    assert path.stat().st_size == 144
    with pytest.raises(FunctionalBPEError, match="1,073,741,824 ids"):
        read_token_file(path)


# -- item 14: wrong types and names ---------------------------------------------------------


@pytest.fixture(scope="module")
def small():
    return fb.train(["hello world " * 10], vocab_size=270, special_tokens=["<s>"], progress=False)


def test_numpy_integer_seed_is_an_integer(small):
    np = pytest.importorskip("numpy")
    assert small.encode("hello world", dropout=0.5, seed=np.int64(3)) == small.encode("hello world", dropout=0.5, seed=3)
    with pytest.raises(FunctionalBPEError, match="seed"):
        small.encode("hello world", dropout=0.5, seed=[1])


@pytest.mark.parametrize("call, name", [
    (lambda t: t.encode("hi", allowed_special=5), "allowed_special"),
    (lambda t: t.encode("hi", disallowed_special=5), "disallowed_special"),
    (lambda t: t.encode("hi", allowed_special=[5]), "allowed_special"),
    (lambda t: t.encode_batch(["hi"], allowed_special=5), "allowed_special"),
    (lambda t: PieceCounts.from_bytes("text"), "from_bytes takes bytes"),
    (lambda t: fb.Tokenizer.load(None), "NoneType"),
    (lambda t: PieceCounts.load(None), "NoneType"),
])
def test_wrong_types_are_the_packages_error_naming_the_argument(small, call, name):
    with pytest.raises(FunctionalBPEError, match=name):
        call(small)


def test_read_token_file_with_an_unknown_dtype(tmp_path):
    from functionalbpe.pipeline.tokenfile import read_token_file

    path = tmp_path / "ids.bin"
    path.write_bytes(bytes(4))
    with pytest.raises(FunctionalBPEError, match="dtype"):
        read_token_file(path, dtype="foo")
    with pytest.raises(FunctionalBPEError, match="path"):
        read_token_file(None)


def test_count_out_of_memory_is_the_packages_error(monkeypatch):
    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(counts_module, "count_table", no_memory)
    with pytest.raises(fb.OutOfMemoryError, match="counting"):
        fb.count(["a b"], progress=False)


@pytest.mark.parametrize("key", ["pattern", "scheme", "vocab_size", "threads", "backend", "name", "corpus"])
def test_cli_option_named_like_a_parameter(tmp_path, capsys, key):
    from functionalbpe.cli import main

    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world")
    code = main(["train", str(corpus), "--vocab-size", "260", "-o", str(tmp_path / "t.json"), "--option", f"{key}=x"])
    err = capsys.readouterr().err
    assert code == 2 and "is not a scheme option" in err and "Traceback" not in err
    code = main(["count", str(corpus), "-o", str(tmp_path / "c.counts"), "--option", f"{key}=1"])
    assert code == 2 and "is not a scheme option" in capsys.readouterr().err


# -- item 6: language mixes; item 17: empty dev sets ----------------------------------------

LANGS = {"en": ["hello world " * 30], "de": ["hallo welt"]}


@pytest.mark.parametrize("kwargs", [
    {"weights": {"en": 1e15, "de": 1e-9}},
    {"weights": {"en": 1e18, "de": 1}},
    {"temperature": 1000},
    {"temperature": 1e5},
    {"temperature": 1e6},
    {"temperature": 1e9},
    {"temperature": -1e9},
])
def test_language_mix_parameters_past_the_bounds(kwargs):
    with pytest.raises(FunctionalBPEError, match="weight|temperature"):
        fb.train(LANGS, vocab_size=270, progress=False, **kwargs)


def test_large_global_merges_is_the_packages_error():
    with pytest.raises(FunctionalBPEError, match="global_merges"):
        fb.train(LANGS, vocab_size=270, objective="parity", target_ratios={"en": 1, "de": 1},
                 global_merges=2**70, progress=False)


def test_language_mix_within_the_bounds_trains():
    tok = fb.train(LANGS, vocab_size=270, temperature=3, progress=False)
    assert tok.decode(tok.encode("hallo welt")) == "hallo welt"


def test_parity_with_an_empty_dev_set_is_an_error():
    with pytest.raises(FunctionalBPEError, match="dev text of 'de' is empty"):
        fb.train(LANGS, vocab_size=270, objective="parity", dev={"en": ["hello"], "de": [""]}, progress=False)


@pytest.mark.parametrize("flags", [["--weight", "en=1e15", "--weight", "de=1e-9"], ["--temperature", "1000"],
                                   ["--temperature", "1e9"], ["--global-merges", "1" + "0" * 23]])
def test_cli_language_mix_errors_are_one_line(tmp_path, capsys, flags):
    from functionalbpe.cli import main

    (tmp_path / "en.txt").write_text("hello world " * 30)
    (tmp_path / "de.txt").write_text("hallo welt")
    extra = ["--objective", "parity", "--dev", f"en={tmp_path / 'en.txt'}", "--dev", f"de={tmp_path / 'de.txt'}"] \
        if flags[0] == "--global-merges" else []
    with pytest.raises(SystemExit) if flags[0] == "--global-merges" else _nothing() as raised:
        code = main(["train", "--lang", f"en={tmp_path / 'en.txt'}", "--lang", f"de={tmp_path / 'de.txt'}",
                     "--vocab-size", "270", "-o", str(tmp_path / "t.json"), "-q", *flags, *extra])
    if raised is not None:
        code = raised.value.code
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


# -- items 12, 15, 18: the report and counts-info -------------------------------------------


@pytest.mark.parametrize("text, match", [("[" * 100_000 + "]" * 100_000, "nested too deeply"),
                                         ('{"a": ' + "9" * 5000 + "}", "not a tokenizer file")])
def test_report_reads_json_with_the_loaders_guards(tmp_path, capsys, text, match):
    from functionalbpe.cli import main

    (tmp_path / "t.json").write_text(text)
    (tmp_path / "c.txt").write_text("hello")
    code = main(["report", "-t", str(tmp_path / "t.json"), str(tmp_path / "c.txt"), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and match in err and "Traceback" not in err


def test_report_on_a_tokenizer_with_id_gaps(tmp_path):
    from functionalbpe.measure.adapters import load_tokenizer

    tiktoken = pytest.importorskip("tiktoken")
    del tiktoken
    tok = fb.train(["hello world " * 30], vocab_size=270, progress=False)
    ranks = tmp_path / "r.tiktoken"
    tok.to_tiktoken(ranks)
    gapped = fb.Tokenizer.from_tiktoken(ranks, "gpt4", special_tokens={"<|end|>": tok.vocab_size + 5})
    path = tmp_path / "gapped.json"
    gapped.save(path)
    lengths = load_tokenizer(path).token_lengths()
    assert lengths[tok.vocab_size + 5] == len("<|end|>") and lengths[tok.vocab_size] == 0
    from functionalbpe.cli import main

    (tmp_path / "c.txt").write_text("hello world")
    assert main(["report", "-t", str(path), str(tmp_path / "c.txt"), "-q"]) == 0


def test_markdown_report_escapes_html_in_names(tmp_path):
    from functionalbpe.cli import main

    tok = fb.train(["hello world " * 30], vocab_size=270, progress=False)
    tok.save(tmp_path / "t.json")
    (tmp_path / "c.txt").write_text("hello world")
    out = tmp_path / "r.md"
    assert main(["report", "-t", f"<img src onerror>={tmp_path / 't.json'}",
                 f"<script>x</script>={tmp_path / 'c.txt'}", "--markdown", str(out), "-q"]) == 0
    text = out.read_text()
    assert "<img" not in text and "<script>" not in text
    assert "&lt;img src onerror&gt;" in text and "&lt;script&gt;" in text


def test_markdown_code_span_holds_backticks():
    from functionalbpe.measure.tables import _md_code

    assert _md_code("a`<b>`c") == "`` a`<b>`c ``"
    assert _md_code("plain") == "`plain`"


def test_counts_info_shows_control_characters_escaped(tmp_path, capsys):
    from functionalbpe.cli import main

    counts = fb.count(["\x1b[2J\x07 \x9b31m \u202eevil"] * 3, pattern=r"\S+|\s+", progress=False)
    counts.save(tmp_path / "c.counts")
    assert main(["counts-info", str(tmp_path / "c.counts")]) == 0
    out = capsys.readouterr().out
    assert not any(ch in out for ch in "\x1b\x07\x9b\u202e")
    assert "\\x1b[2J\\x07" in out and "\\x9b31m" in out and "\\u202eevil" in out


# -- item 4: loading a large vocabulary ------------------------------------------------------


def test_a_file_with_internal_ids_builds_no_id_map(tmp_path, monkeypatch):
    """The id map is a Python loop over every id (seconds for 4 M ids); a file whose ids are
    the internal layout, as every trained tokenizer's are, needs none: its map is the identity,
    held as ranges."""
    tok = fb.train(["hello world " * 20], vocab_size=280, special_tokens=["<s>"], progress=False)
    tok.save(tmp_path / "t.json")

    loaded = fb.Tokenizer.load(tmp_path / "t.json")
    assert loaded._idmap.identity and isinstance(loaded._idmap.external_ids, range)  # no list per id
    assert loaded.decode(loaded.encode("hello world<s>", allowed_special="all")) == "hello world<s>"
    gapped = fb.Tokenizer.from_tiktoken(_ranks_file(tok, tmp_path), "gpt4", special_tokens={"<s>": 400})
    assert gapped.encode("<s>", allowed_special="all") == [400]


def _ranks_file(tok, tmp_path):
    path = tmp_path / "r.tiktoken"
    fb.train(["hello world " * 20], vocab_size=279, progress=False).to_tiktoken(path)
    return path
