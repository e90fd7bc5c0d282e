"""Token files: the ids in the file are ``tok.encode(doc) + [eot]`` over the documents, in
every format, whatever the threads and the block size; a failed run leaves nothing."""
import gzip
import json
import os
import struct

import numpy as np
import pytest

import functionalbpe as fb
from functionalbpe.formats import tokenfiles
from functionalbpe.pipeline import tokenfile
from functionalbpe.errors import FunctionalBPEError, SpecialTokenError
from functionalbpe.pipeline.tokenfile import choose_dtype, read_token_file

EOT = "<|endoftext|>"
TEXT = "The cat sat on the mat. The dog sat on the log.\nnaïve café, 中文 ✓ 😀\n" * 4


@pytest.fixture(scope="module")
def tok():
    return fb.train([TEXT * 3], vocab_size=330, special_tokens=[EOT], progress=False)


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few hundred bytes and batches of a few blocks, so that a small corpus
    crosses every boundary: documents cut into blocks, blocks spread over batches."""
    monkeypatch.setattr(tokenfile, "UNIT_BYTES", 200)
    monkeypatch.setattr(tokenfile, "MIN_BATCH_BYTES", 500)
    monkeypatch.setattr(tokenfile, "MAX_BATCH_BYTES", 900)


def expected(tok, docs, eot=EOT):
    out = []
    for doc in docs:
        out += tok.encode(doc)
        if eot is not None:
            out.append(tok.special_tokens[eot])
    return out


def make_corpus(root):
    """Text files (one cut into many blocks), an empty file, and a .jsonl.gz of documents."""
    root.mkdir()
    (root / "a.txt").write_text(TEXT * 5, encoding="utf-8")
    (root / "b.txt").write_text("", encoding="utf-8")
    (root / "c.txt").write_text("short one", encoding="utf-8")
    lines = [json.dumps({"text": t}) for t in (TEXT, "", "x y z\n", TEXT[:50])]
    with gzip.open(root / "d.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return root


@pytest.mark.parametrize("format,suffix", [("npy", ".npy"), ("bin", ".bin"), ("llmc", ".bin")])
@pytest.mark.parametrize("threads", [1, 2])
def test_every_format_holds_the_ids_of_every_document(tok, tmp_path, small_blocks, format, suffix, threads):
    corpus = make_corpus(tmp_path / "corpus")
    docs = list(fb.files(corpus))
    out, idx = tmp_path / f"ids{suffix}", tmp_path / "ids.idx"
    summary = tok.encode_to_file(corpus, out, format=format, eot=EOT, offsets=idx, threads=threads, progress=False)
    want = expected(tok, docs)
    ids = read_token_file(out, format, dtype="uint16")
    assert ids.dtype == np.uint16 and ids.tolist() == want
    assert (summary.documents, summary.tokens, summary.format) == (len(docs), len(want), format)
    assert summary.bytes_in == sum(len(d.encode("utf-8")) for d in docs)
    offsets = np.fromfile(idx, dtype="<u8").tolist()
    assert len(offsets) == len(docs) + 1 and offsets[-1] == len(want)
    for k, doc in enumerate(docs):
        assert ids[offsets[k] : offsets[k + 1]].tolist() == expected(tok, [doc])
    # Read back as the training loops read them.
    if format == "npy":
        assert np.load(out, mmap_mode="r").tolist() == want
    elif format == "bin":
        assert np.memmap(out, dtype=np.uint16, mode="r").tolist() == want
    else:
        header = np.fromfile(out, dtype="<i4", count=256)
        assert header[:3].tolist() == [20240520, 1, len(want)] and not header[3:].any()
        assert np.fromfile(out, dtype="<u2", offset=1024).tolist() == want
    assert tok.decode(ids.tolist()) == EOT.join(docs) + EOT
    assert sorted(os.listdir(tmp_path)) == sorted(["corpus", out.name, idx.name])  # no temporary left


def test_the_file_is_the_same_whatever_the_threads_and_blocks(tok, tmp_path, monkeypatch):
    corpus = make_corpus(tmp_path / "corpus")
    tok.encode_to_file(corpus, tmp_path / "whole.npy", eot=EOT, threads=1, progress=False)
    monkeypatch.setattr(tokenfile, "UNIT_BYTES", 64)
    monkeypatch.setattr(tokenfile, "MIN_BATCH_BYTES", 100)
    tok.encode_to_file(corpus, tmp_path / "cut.npy", eot=EOT, threads=3, progress=False)
    assert (tmp_path / "whole.npy").read_bytes() == (tmp_path / "cut.npy").read_bytes()


def test_documents_from_an_iterable_and_eot_as_an_id(tok, tmp_path):
    docs = ["", "a", TEXT, "b"]
    out = tmp_path / "x.npy"
    tok.encode_to_file(iter(docs), out, eot=0, progress=False)
    want = []
    for doc in docs:
        want += tok.encode(doc) + [0]
    assert np.load(out).tolist() == want
    tok.encode_to_file(docs, out, progress=False)  # no eot: the ids alone
    assert np.load(out).tolist() == expected(tok, docs, eot=None)


@pytest.mark.parametrize("scheme", [
    {"scheme": "functional"},
    {"scheme": "markers", "punct": True, "case": True},
])
def test_schemes(tmp_path, small_blocks, scheme):
    tok = fb.train([TEXT], vocab_size=None, special_tokens=[EOT], progress=False, **scheme)
    corpus = make_corpus(tmp_path / "corpus")
    docs = list(fb.files(corpus))
    tok.encode_to_file(fb.files(corpus), tmp_path / "ids.bin", eot=EOT, threads=2, progress=False)
    ids = np.fromfile(tmp_path / "ids.bin", dtype="<u2").tolist()
    assert ids == expected(tok, docs)
    assert tok.decode(ids) == EOT.join(docs) + EOT


def test_special_tokens_in_the_text(tok, tmp_path, small_blocks):
    text = f"one{EOT}two " * 40
    (tmp_path / "s.txt").write_text(text, encoding="utf-8")
    with pytest.raises(SpecialTokenError, match="document 1: .*<|endoftext|>"):
        tok.encode_to_file(tmp_path / "s.txt", tmp_path / "x.npy", progress=False)
    assert not (tmp_path / "x.npy").exists()
    tok.encode_to_file(tmp_path / "s.txt", tmp_path / "x.npy", allowed_special="all", progress=False)
    assert np.load(tmp_path / "x.npy").tolist() == tok.encode(text, allowed_special="all")
    tok.encode_to_file(tmp_path / "s.txt", tmp_path / "y.npy", disallowed_special=(), progress=False)
    assert np.load(tmp_path / "y.npy").tolist() == tok.encode_ordinary(text)
    with pytest.raises(SpecialTokenError, match="document 3"):
        tok.encode_to_file(["a", "b", EOT], tmp_path / "z.npy", progress=False)


def test_an_error_about_one_document_names_its_file_and_line_or_row(tok, tmp_path, small_blocks):
    (tmp_path / "a.txt").write_text("fine", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(json.dumps({"text": "x"}) + "\n\n" + json.dumps({"text": f"y{EOT}"}) + "\n")
    with pytest.raises(SpecialTokenError, match=r"b.jsonl, line 3: document 3: .*special token") as caught:
        tok.encode_to_file(fb.files(tmp_path / "a.txt", tmp_path / "b.jsonl"), tmp_path / "x.npy", progress=False)
    assert caught.value.document == 3 and caught.value.token == EOT
    (tmp_path / "c.txt").write_text(f"a{EOT}", encoding="utf-8")
    with pytest.raises(SpecialTokenError, match=r"c.txt: document 2:"):
        tok.encode_to_file(fb.files(tmp_path / "a.txt", tmp_path / "c.txt"), tmp_path / "x.npy", progress=False)
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"text": ["p", "q", f"r{EOT}"]}), tmp_path / "d.parquet", row_group_size=2)
    with pytest.raises(SpecialTokenError, match=r"d.parquet, row 2: document 4:"):
        tok.encode_to_file(fb.files(tmp_path / "a.txt", tmp_path / "d.parquet"), tmp_path / "x.npy", progress=False)
    assert not (tmp_path / "x.npy").exists()


def test_a_failed_or_interrupted_run_leaves_nothing(tok, tmp_path):
    def documents(error):
        yield TEXT
        raise error

    old = tmp_path / "keep.npy"
    tok.encode_to_file(["old"], old, progress=False)
    before = old.read_bytes()
    for error in (KeyboardInterrupt(), RuntimeError("boom")):
        with pytest.raises(type(error)):
            tok.encode_to_file(documents(error), old, offsets=tmp_path / "o.idx", progress=False)
        assert old.read_bytes() == before  # the old file stays as it was
        assert sorted(os.listdir(tmp_path)) == ["keep.npy"]


def test_dtype_choice_and_refusals(tok, tmp_path):
    assert choose_dtype(65536) == np.uint16 and choose_dtype(65537) == np.uint32
    assert choose_dtype(300, "uint32") == np.uint32
    with pytest.raises(FunctionalBPEError, match="uint16 cannot hold"):
        choose_dtype(100_000, "uint16")
    with pytest.raises(FunctionalBPEError, match="dtype must be"):
        choose_dtype(300, "int8")
    tok.encode_to_file(["ab"], tmp_path / "w.npy", dtype="uint32", progress=False)
    assert np.load(tmp_path / "w.npy").dtype == np.uint32
    tok.encode_to_file(["ab"], tmp_path / "w.bin", format="llmc", dtype="uint32", progress=False)
    assert np.fromfile(tmp_path / "w.bin", dtype="<i4", count=3).tolist() == [20240801, 7, 2]
    bad = [
        (dict(eot="<nope>"), "not a special token"),
        (dict(eot=330), "not an id"),
        (dict(format="csv"), "format must be"),
        (dict(threads=0), "threads"),
    ]
    for options, message in bad:
        with pytest.raises(FunctionalBPEError, match=message):
            tok.encode_to_file(["ab"], tmp_path / "v.npy", progress=False, **options)
    with pytest.raises(FunctionalBPEError, match="cannot tell the format"):
        tok.encode_to_file(["ab"], tmp_path / "v.dat", progress=False)
    with pytest.raises(FunctionalBPEError, match="missing"):
        tok.encode_to_file(["ab"], tmp_path / "missing" / "v.npy", progress=False)
    with pytest.raises(FunctionalBPEError, match="source must be"):
        tok.encode_to_file(b"ab", tmp_path / "v.npy", progress=False)
    with pytest.raises(FunctionalBPEError, match="document 1 is a int"):
        tok.encode_to_file(["a", 5], tmp_path / "v.npy", progress=False)
    assert not (tmp_path / "v.npy").exists()


def test_reading_damaged_token_files(tmp_path):
    def refused(data, format=None, match="", name="t.bin"):
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(FunctionalBPEError, match=match):
            read_token_file(path, format, dtype="uint16")

    header = np.zeros(256, dtype="<i4")
    header[:3] = (20240520, 1, 10)
    refused(header.tobytes() + b"\0" * 8, "llmc", "says 10 tokens")
    header[:2] = (1, 1)
    refused(header.tobytes(), "llmc", "not an llm.c token file")
    refused(b"\0" * 3, "bin", "not a whole number")
    refused(b"\x93NUMPY garbage", "npy", "not a .npy", "t.npy")
    np.save(tmp_path / "f.npy", np.zeros((2, 2), dtype=np.uint16))
    with pytest.raises(FunctionalBPEError, match="1-D"):
        read_token_file(tmp_path / "f.npy")
    np.save(tmp_path / "g.npy", np.zeros(3, dtype=np.float32))
    with pytest.raises(FunctionalBPEError, match="integers"):
        read_token_file(tmp_path / "g.npy")
    # A .bin that starts with llm.c's header but has the wrong size is a truncated llm.c
    # file, not raw ids with the header read as ids; format="bin" reads it raw.
    header[:3] = (20240520, 1, 5)
    (tmp_path / "r.bin").write_bytes(header.tobytes() + b"\0" * 2)
    with pytest.raises(FunctionalBPEError, match="truncated"):
        read_token_file(tmp_path / "r.bin", dtype="uint16")
    assert len(read_token_file(tmp_path / "r.bin", "bin", dtype="uint16")) == 513
    np.save(tmp_path / "e.npy", np.zeros(0, np.uint16))
    assert len(read_token_file(tmp_path / "e.npy")) == 0
    (tmp_path / "e.bin").write_bytes(b"")
    assert len(read_token_file(tmp_path / "e.bin", dtype="uint16")) == 0


def test_npy_header_is_what_numpy_writes(tmp_path):
    for length in (0, 7, 10**12):
        header = tokenfiles.header_for("npy", np.dtype("<u2"), length)
        assert len(header) == tokenfiles.NPY_HEADER_BYTES
        version = np.lib.format.read_magic(__import__("io").BytesIO(header))
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(__import__("io").BytesIO(header[8:]))
        assert (version, shape, fortran, dtype) == ((1, 0), (length,), False, np.uint16)
        assert struct.unpack("<H", header[8:10])[0] + 10 == 128


def check_corpus(tok, source, tmp_path):
    docs = list(source)
    want = expected(tok, docs)
    for threads in (1, 2):
        summary = tok.encode_to_file(source, tmp_path / "c.npy", eot=EOT, threads=threads, progress=False)
        assert np.load(tmp_path / "c.npy", mmap_mode="r").tolist() == want
        assert summary.documents == len(docs)


def test_shared_corpora_sample(tok, corpora, tmp_path):
    """Real text: one file of each kind from the shared corpora, the start of each."""
    chosen = [corpora / "nl" / "en.txt", corpora / "nl" / "ja.txt", corpora / "code" / "python.txt",
              corpora / "parallel" / "lohelp_ru.txt"]
    check_corpus(tok, fb.files(*chosen, max_doc_chars=200_000 if tok.native else 10_000), tmp_path)


@pytest.mark.slow
def test_shared_corpora_whole(tok, corpora, tmp_path):
    """The whole shared corpora directory, and the same text as a directory of .jsonl.gz."""
    check_corpus(tok, fb.files(corpora), tmp_path)
    jsonl = tmp_path / "jsonl"
    jsonl.mkdir()
    for k, path in enumerate(sorted(corpora.glob("*/*.txt"))):
        paragraphs = path.read_text(encoding="utf-8").split("\n\n")
        with gzip.open(jsonl / f"{k:02d}.jsonl.gz", "wt", encoding="utf-8") as fh:
            fh.writelines(json.dumps({"text": p}) + "\n" for p in paragraphs)
    check_corpus(tok, fb.files(jsonl), tmp_path)


# -- the command line ---------------------------------------------------------------------------


def cli(*args):
    """Run the command in this process: exit status, stdout, stderr."""
    import contextlib
    import io
    import sys

    from functionalbpe.cli import main

    out, err = io.BytesIO(), io.StringIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8")
    with contextlib.redirect_stderr(err):
        old, sys.stdout = sys.stdout, stdout
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse refusing an option
            code = exc.code
        finally:
            stdout.flush()
            sys.stdout = old
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def tok_file(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    return path


def test_cli_token_file_round_trip(tok, tok_file, tmp_path, small_blocks):
    corpus = make_corpus(tmp_path / "corpus")
    (tmp_path / "extra.txt").write_text("one more\n", encoding="utf-8")
    docs = list(fb.files(corpus, tmp_path / "extra.txt"))
    out, idx = tmp_path / "ids.bin", tmp_path / "ids.idx"
    code, _, err = cli("encode", "-t", tok_file, corpus, tmp_path / "extra.txt", "-o", out, "--format", "llmc",
                       "--eot", EOT, "--offsets", idx, "--threads", "2")
    assert code == 0 and f"from {len(docs)} documents" in err
    assert read_token_file(out).tolist() == expected(tok, docs)
    code, text, _ = cli("decode", "-t", tok_file, out)
    assert code == 0 and text.decode("utf-8") == EOT.join(docs) + EOT
    offsets = np.fromfile(idx, dtype="<u8")
    code, text, _ = cli("decode", "-t", tok_file, out, "--range", f"{offsets[1]}:{offsets[2]}", "-o", tmp_path / "d.txt")
    assert code == 0 and text == b"" and (tmp_path / "d.txt").read_text(encoding="utf-8") == docs[1] + EOT
    # The eot as an id, raw ids, the id type forced.
    eot_id = tok.special_tokens[EOT]
    assert cli("encode", "-t", tok_file, corpus, "-o", tmp_path / "w.npy", "--eot", eot_id, "--dtype", "uint32", "-q")[0] == 0
    assert np.load(tmp_path / "w.npy").tolist() == expected(tok, list(fb.files(corpus)))
    assert cli("decode", "-t", tok_file, tmp_path / "w.npy", "-o", tmp_path / "w.txt")[0] == 0
    assert (tmp_path / "w.txt").read_text(encoding="utf-8") == EOT.join(fb.files(corpus)) + EOT


def test_cli_text_output_streams_one_line_per_document(tok, tok_file, tmp_path, small_blocks):
    corpus = make_corpus(tmp_path / "corpus")
    docs = list(fb.files(corpus))
    code, text, err = cli("encode", "-t", tok_file, corpus, "-q")
    assert code == 0 and err == ""
    assert text.decode().split("\n") == [" ".join(map(str, tok.encode(d))) for d in docs] + [""]
    code, text, _ = cli("encode", "-t", tok_file, corpus, "--lines", "-o", tmp_path / "l.txt", "-q")
    lines = [line for d in docs for line in (d.split("\n")[:-1] if d.endswith("\n") else d.split("\n")) if d]
    got = (tmp_path / "l.txt").read_text().split("\n")[:-1]
    assert got == [" ".join(map(str, tok.encode(line))) for line in lines]


def test_cli_lines_cross_blocks(tmp_path):
    from functionalbpe.cli.encode import lines_of
    from functionalbpe.text.corpus import Files
    from pathlib import Path

    text = "".join(f"line {k} " + "x" * (k % 7) + "\n" for k in range(200)) + "no newline at the end"
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    (tmp_path / "b.txt").write_text("", encoding="utf-8")
    (tmp_path / "c.txt").write_text("\n\nz\n", encoding="utf-8")
    paths = [Path(tmp_path / n) for n in ("a.txt", "b.txt", "c.txt")]
    assert list(lines_of(Files(paths, block_bytes=16))) == text.split("\n") + ["", "", "z"]


@pytest.mark.parametrize("args, message", [
    (["encode", "{tok}", "{corpus}", "-o", "{out}.npy", "--eot", "<nope>"], "eot '<nope>' is not a special token"),
    (["encode", "{tok}", "{corpus}", "--format", "npy"], "a token file needs -o PATH"),
    (["encode", "{tok}", "{corpus}", "--offsets", "{out}.idx"], "--offsets goes with a token file"),
    (["encode", "{tok}", "{out}/missing", "-o", "{out}.npy"], "no such file"),
    (["encode", "{tok}", "{corpus}", "-o", "{out}/no/x.npy"], "cannot write there"),
    (["decode", "{tok}", "{corpus}/a.txt", "--range", "5:1"], "END comes before START"),
    (["decode", "{tok}", "{corpus}/a.txt", "--range", "0:5"], "--range reads a token file"),
    (["decode", "{tok}", "{out}/bad.npy"], "not a .npy token file"),
    (["decode", "{tok}", "{out}/big.bin"], "in the ids from 0: id 60000 at position 1 is not a token"),
])
def test_cli_errors_are_one_line(tok_file, tmp_path, args, message):
    corpus = make_corpus(tmp_path / "corpus")
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY\x01\x00xx")
    np.array([97, 60000], dtype="<u2").tofile(tmp_path / "big.bin")
    names = {"tok": tok_file, "corpus": corpus, "out": tmp_path}
    args = [a.format(**names) for a in args]
    code, _, err = cli(args[0], "-t", *args[1:])
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
    assert not list(tmp_path.glob("*.npy.*")) and not list(tmp_path.glob(".tmp-*"))


def test_packed_ids_are_encode_batch_s(tok):
    """encode_batch_packed is encode_batch as bytes, for every kind of text and special rule."""
    from functionalbpe.core.encoder import pack

    texts = ["", "a", TEXT, f"x{EOT}y", "\ud800 lone", "😀" * 50, "b" * 5000]
    for width in (2, 4):
        for allowed in (frozenset(), "all"):
            data, lengths = tok.encode_batch_packed(texts, 2, width=width, allowed_special=allowed,
                                                    disallowed_special=())
            lists = tok.encode_batch(texts, 2, allowed_special=allowed, disallowed_special=())
            assert (data, lengths) == (pack(lists, width), [len(ids) for ids in lists])
            assert np.frombuffer(data, dtype=f"<u{width}").tolist() == [i for ids in lists for i in ids]
    with pytest.raises(SpecialTokenError):
        tok.encode_batch_packed(["a", EOT])
    with pytest.raises(OverflowError):
        pack([[70000]], 2)


def test_spaced_digits_is_join_of_str():
    rng = np.random.default_rng(0)
    for ids in ([], [0], [9, 10, 99, 100, 4194303], rng.integers(0, 1 << 22, 5000)):
        ids = np.asarray(ids, dtype=np.uint32)
        assert tokenfile.spaced_digits(ids) == "".join(" " + str(i) for i in ids.tolist()).encode()


# Custom patterns whose pieces a safe cut of text/cuts.py would change: one cuts every 7
# characters (a cut inside a line shifts every later piece of it), the other is SuperBPE's
# second stage, whose pieces cross words and punctuation.
@pytest.mark.parametrize("pattern", [r"[^\n]{1,7}|\n", fb.text.patterns.SUPERWORDS])
@pytest.mark.parametrize("block", [64, 200, 1024])
def test_token_files_of_custom_patterns_are_encode_s(tmp_path, monkeypatch, pattern, block):
    text = ("The cat sat. On the mat!! Then (it) left:\nnaïve café, 中文 ✓ 😀 " * 60 + "\n") * 8
    tok = fb.train([text], vocab_size=300, pattern=pattern, special_tokens=[EOT], progress=False)
    path = tmp_path / "a.txt"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(tokenfile, "UNIT_BYTES", block)
    monkeypatch.setattr(tokenfile, "MIN_BATCH_BYTES", 2 * block)
    tok.encode_to_file(path, tmp_path / "ids.npy", eot=EOT, threads=2, progress=False)
    assert np.load(tmp_path / "ids.npy").tolist() == expected(tok, [text])
    # Counting reads files in blocks too: the counts of a file are those of its text.
    blocks = fb.Files([path], block_bytes=block)
    got = fb.count(blocks, pattern=pattern, progress=False)
    assert list(got.items()) == list(fb.count([text], pattern=pattern, progress=False).items())


def test_an_npy_header_numpy_cannot_read_is_named_even_without_a_message(tmp_path, monkeypatch):
    from numpy.lib import format as npy_format

    def silent(fh):
        raise ValueError()

    np.save(tmp_path / "x.npy", np.array([1, 2], dtype=np.uint16))
    monkeypatch.setattr(npy_format, "read_array_header_1_0", silent)
    with pytest.raises(FunctionalBPEError, match=r"x.npy: not a .npy token file \(ValueError\)$"):
        read_token_file(tmp_path / "x.npy")
