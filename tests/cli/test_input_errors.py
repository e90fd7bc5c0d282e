"""Bad input, from the command line and from the API: one clear error, never a traceback.

The command-line cases run the real program in a subprocess and require exit status 2, one
line on stderr and no traceback. The API cases require a FunctionalBPEError subclass naming
the option, file or line at fault — or, where the input is fine after all (a ``str``
subclass, a lone surrogate), the same result as for the plain text.
"""
from __future__ import annotations

import gzip
import json
import os
import random
import stat
import string
import subprocess
import sys

import pytest

import functionalbpe as fb
from functionalbpe.measure import bench
from functionalbpe.peers.base import Peer
from functionalbpe.peers.registry import PEERS
from functionalbpe.core._native import MAX_THREADS
from functionalbpe.errors import CorpusError, FunctionalBPEError, OutOfMemoryError, OutputError, VocabSizeError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEXT = "The cat sat on the mat. The dog sat on the log. Ünïcödé ✓\n" * 20


def run(*args: str, stdin: bytes = b"", prelude: str = "") -> subprocess.CompletedProcess:
    """The real command in a subprocess (``prelude``: Python run before it, in-process)."""
    code = f"{prelude}\nimport sys\nfrom functionalbpe.cli import main\nsys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": ROOT},
        timeout=120,
    )


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    """Assert exit status 2, one line on stderr, no traceback; return that line."""
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, (proc.returncode, err)
    assert "Traceback" not in err, err
    assert err.count("\n") == 1 and err.startswith("functionalbpe: error: "), err
    return err


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("input")
    (d / "c.txt").write_text(TEXT, encoding="utf-8")
    tok = fb.train(TEXT, vocab_size=300, progress=False)
    tok.save(d / "tok.json")
    data = gzip.compress(TEXT.encode("utf-8") * 50)
    (d / "truncated.txt.gz").write_bytes(data[: len(data) // 2])
    damaged = bytearray(data)
    for i in range(20, 60):
        damaged[i] ^= 0x55
    (d / "damaged.txt.gz").write_bytes(bytes(damaged))
    ok = json.dumps({"text": "fine"})
    (d / "deep.jsonl").write_text(ok + "\n" + "[" * 200_000 + "]" * 200_000 + "\n", encoding="utf-8")
    (d / "int_text.jsonl").write_text(ok + "\n" + '{"text": ' + "7" * 5000 + "}\n", encoding="utf-8")
    (d / "int_other.jsonl").write_text('{"text": "fine", "n": ' + "7" * 5000 + "}\n", encoding="utf-8")
    (d / "surrogates.jsonl").write_text('{"text": "a\\ud800b"}\n{"text": "\\ud83d\\ude00 pair"}\n', encoding="utf-8")
    return d


# -- the command line: options ------------------------------------------------------------------


@pytest.mark.parametrize("args, message", [
    (["--vocab-size", "1e23"], "--vocab-size: '1e23' is not a whole number"),
    (["--vocab-size", "1" + "0" * 23], "--vocab-size: 100000000000000000000000 is out of range"),
    (["--vocab-size", "300", "--min-frequency", "1e20"], "--min-frequency: '1e20' is not a whole number"),
    (["--vocab-size", "300", "--min-frequency", "0"], "--min-frequency: 0 is out of range"),
    (["--vocab-size", "300", "--threads", "-1"], "--threads: -1 is out of range"),
    (["--vocab-size", "300", "--threads", "0"], "--threads: 0 is out of range"),
    (["--vocab-size", "300", "--threads", "x"], "--threads: 'x' is not a whole number"),
    (["--vocab-size", "300", "--threads", str(MAX_THREADS + 1)], f"from 1 to {MAX_THREADS}"),
    (["--vocab-size", "300", "--max-chars", "-5"], "--max-chars: -5 is out of range"),
    (["--vocab-size", "100"], "vocab_size 100 is too small"),
    ([], "the following arguments are required: --vocab-size"),
])
def test_train_options(work, args, message):
    err = one_line_error(run("train", str(work / "c.txt"), "-o", str(work / "out.json"), "-q", *args))
    assert message in err, err


@pytest.mark.parametrize("args, message", [
    (["demo", "--max-mb", "1e400"], "--max-mb: 1e400 is out of range"),
    (["demo", "--vocab-size", "1.5"], "--vocab-size: '1.5' is not a whole number"),
    (["bench", "--repeats", "0"], "--repeats: 0 is out of range"),
    (["bench", "--threads", "0"], "--threads: 0 is out of range"),
    (["report", "-t", "{d}/tok.json", "{d}/c.txt", "--context", "0"], "--context: 0 is out of range"),
    (["report", "-t", "{d}/tok.json", "{d}/c.txt", "--bytes-per-param", "nan"], "--bytes-per-param: nan is out of range"),
])
def test_other_commands_options(work, args, message):
    err = one_line_error(run(*(a.format(d=work) for a in args)))
    assert message in err, err


@pytest.mark.parametrize("ids, message", [
    ("1" * 5000, "line 1: the id 11111111111111111111... (5000 digits) is not a token of this tokenizer"),
    ("97 \u0661\u0662", "line 1: '\u0661\u0662' is not a token id"),  # Arabic-Indic digits: int() reads them
    ("97\n1_000", "line 2: '1_000' is not a token id"),
    ("+5", "line 1: '+5' is not a token id"),
    ("-1", "line 1: id -1 at position 0 is not a token of this tokenizer"),
    ("x" * 100_000, "line 1: '" + "x" * 40 + "...' is not a token id"),  # the message stays short
])
def test_decode_reads_ids_in_ascii_digits_only(work, ids, message):
    err = one_line_error(run("decode", "-t", str(work / "tok.json"), stdin=ids.encode("utf-8")))
    assert message in err, err


# -- the command line: files --------------------------------------------------------------------


@pytest.mark.parametrize("name, message", [
    ("truncated.txt.gz", "truncated.txt.gz: cannot decompress (Compressed file ended"),
    ("damaged.txt.gz", "damaged.txt.gz: cannot decompress"),
    ("deep.jsonl", "deep.jsonl: line 2: the JSON nests too deeply to read"),
    ("int_text.jsonl", "int_text.jsonl: line 2: no string field 'text'"),
])
def test_bad_corpus_files_are_named(work, name, message):
    err = one_line_error(run("train", str(work / name), "--vocab-size", "260", "-o", str(work / "out.json"), "-q"))
    assert message in err, err


def test_a_long_number_in_another_field_costs_nothing(work):
    assert list(fb.files(work / "int_other.jsonl")) == ["fine"]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("command", ["encode", "decode", "pieces"])
def test_devices_are_refused_as_input(work, command):
    err = one_line_error(run(command, "-t", str(work / "tok.json"), "/dev/zero"))
    assert "/dev/zero: not a regular file" in err
    err = one_line_error(run(command, "-t", "/dev/zero", str(work / "c.txt")))
    assert "/dev/zero: not a regular file" in err
    with pytest.raises(fb.TokenizerFileError, match="not a regular file"):
        fb.Tokenizer.load("/dev/zero")


def test_output_paths_are_checked_before_the_work(work):
    # The input does not exist: the output error comes first, so nothing was read.
    missing = work / "no-such-dir" / "tok.json"
    err = one_line_error(run("train", str(work / "nothing.txt"), "--vocab-size", "300", "-o", str(missing)))
    assert f"{missing}: cannot write there: the directory {missing.parent} does not exist" in err
    assert ".tmp-" not in err and not missing.parent.exists()
    err = one_line_error(run("train", str(work / "c.txt"), "--vocab-size", "300", "-o", ""))
    assert "the output path is empty" in err
    err = one_line_error(run("train", str(work / "c.txt"), "--vocab-size", "300", "-o", str(work)))
    assert f"{work}: is a directory" in err
    err = one_line_error(run("encode", "-t", str(work / "tok.json"), "/dev/zero", "-o", str(missing)))
    assert f"{missing}: cannot write there" in err
    err = one_line_error(run("encode", "-t", str(work / "tok.json"), str(work / "c.txt"), "-o", ""))
    assert "the output path is empty" in err
    err = one_line_error(run("report", "-t", str(work / "tok.json"), str(work / "c.txt"), "--html", str(missing)))
    assert f"{missing}: cannot write there" in err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="address-space limits as on Linux")
@pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""), reason="ASan reserves address space up front")
def test_out_of_memory_during_training_is_one_line(tmp_path):
    rng = random.Random(0)
    words = (" ".join("".join(rng.choices(string.ascii_lowercase, k=8)) for _ in range(300_000)))
    (tmp_path / "big.txt").write_text(words, encoding="ascii")
    # Everything is imported first; then the address space may grow by 8 MB only, far less
    # than counting 300,000 distinct words takes.
    prelude = (
        "import resource, functionalbpe.cli, functionalbpe.training, functionalbpe.core.trainer, functionalbpe.text.corpus\n"
        "from functionalbpe.core._native import NATIVE\n"
        "NATIVE.present()\n"
        "size = int(next(l for l in open('/proc/self/status') if l.startswith('VmSize')).split()[1]) * 1024\n"
        "resource.setrlimit(resource.RLIMIT_AS, (size + (8 << 20), resource.RLIM_INFINITY))"
    )
    out = tmp_path / "tok.json"
    err = one_line_error(run("train", str(tmp_path / "big.txt"), "--vocab-size", "5000", "--threads", "1",
                             "-q", "-o", str(out), prelude=prelude))
    assert "out of memory while counting the corpus" in err and "--max-chars" in err
    assert not out.exists()


# -- the API: numbers ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [300.0, True, "300", 10**23, 2**31 + 1])
def test_vocab_size_must_be_an_int_in_range(value):
    with pytest.raises(VocabSizeError, match=f"vocab_size must be an integer of at most {2**31}"):
        fb.train(["ab ab"], vocab_size=value, progress=False)


@pytest.mark.parametrize("value", [True, 1.0, 0, -3, "2"])
def test_min_frequency_must_be_a_positive_int(value):
    with pytest.raises(FunctionalBPEError, match="min_frequency must be an integer of at least 1"):
        fb.train(["ab ab"], vocab_size=300, min_frequency=value, progress=False)


def test_numpy_integers_and_huge_min_frequency_are_fine():
    np = pytest.importorskip("numpy")
    base = fb.train(["ab ab ab"], vocab_size=258, progress=False)
    assert fb.train(["ab ab ab"], vocab_size=np.int64(258), min_frequency=np.int32(1), progress=False) == base
    # No count reaches 10**20 (counts are 64-bit): no merge, as with any threshold above them.
    for backend in ("auto", "reference"):
        tok = fb.train(["ab ab ab"], vocab_size=300, min_frequency=10**20, backend=backend, progress=False)
        assert tok.merges == []


BAD_THREADS = [0, -1, MAX_THREADS + 1, 65537, 2.5, "x", True]


@pytest.mark.parametrize("threads", BAD_THREADS)
def test_threads_are_checked_by_every_function(threads):
    from functionalbpe.text.counting import count_table

    tok = fb.train(["ab ab"], vocab_size=257, progress=False)
    message = f"threads must be an integer from 1 to {MAX_THREADS}"
    calls = [
        lambda: fb.train(["ab ab"], vocab_size=300, threads=threads, progress=False),
        lambda: fb.train(["ab ab"], vocab_size=None, scheme="markers", threads=threads, progress=False),
        lambda: fb.train(["ab ab"], vocab_size=None, scheme="functional", threads=threads, progress=False),
        lambda: fb.count_pieces(["ab ab"], threads=threads),
        lambda: count_table(["ab ab"], fb.make_scheme("markers"), threads=threads),
        lambda: count_table(["ab ab"], fb.make_scheme("functional"), threads=threads),
        lambda: tok.encode_batch(["ab"] * 10, threads),
        lambda: tok.encode_batch(["ab"] * 10, threads=threads),
        lambda: tok.encode_batch(["ab"] * 10, num_threads=threads),
    ]
    for call in calls:
        with pytest.raises(FunctionalBPEError, match=message):
            call()


def test_good_threads_are_accepted():
    np = pytest.importorskip("numpy")
    tok = fb.train(["ab ab"] * 3, vocab_size=258, progress=False)
    for threads in (1, 3, np.int64(2)):
        assert fb.train(["ab ab"] * 3, vocab_size=258, threads=threads, progress=False) == tok
        assert tok.encode_batch(["ab ab"] * 5, num_threads=threads) == [tok.encode("ab ab")] * 5
        assert tok.encode_batch(["ab ab"] * 5, threads) == [tok.encode("ab ab")] * 5
    with pytest.raises(FunctionalBPEError, match="not both"):
        tok.encode_batch(["ab"], threads=1, num_threads=1)


# -- the API: text ------------------------------------------------------------------------------


class Text(str):
    """A str subclass, as user code (and numpy's str_) makes them."""


def subclass_texts():
    out = [Text]
    try:
        import numpy

        out.append(numpy.str_)
    except ImportError:
        pass
    return out


@pytest.mark.parametrize("make", subclass_texts())
@pytest.mark.parametrize("scheme", ["plain", "functional", "markers"])
def test_str_subclasses_are_read_as_their_text(make, scheme):
    docs = ["Hello World, hello <s> world!", "Straße ÉCOLE 123"]
    tok = fb.train(docs * 3, vocab_size=None, scheme=scheme, special_tokens=["<s>"], progress=False)
    sub = [make(d) for d in docs]
    assert fb.train(sub * 3, vocab_size=None, scheme=scheme, special_tokens=[make("<s>")], progress=False) == tok
    text, special = sub[0], make("<s>")
    assert tok.encode(text, allowed_special={special}) == tok.encode(docs[0], allowed_special={"<s>"})
    assert tok.encode_ordinary(text) == tok.encode_ordinary(docs[0])
    assert tok.encode_batch(sub, allowed_special="all") == tok.encode_batch(docs, allowed_special="all")
    assert tok.count_tokens(text) == tok.count_tokens(docs[0])
    assert tok.pieces(text) == tok.pieces(docs[0])
    assert tok.explain(text) == tok.explain(docs[0])


@pytest.mark.parametrize("make", subclass_texts())
def test_str_subclasses_in_counting_and_pretokenizing(make):
    docs = ["Hello World, hello world!", "Straße ÉCOLE 123"]
    sub = [make(d) for d in docs]
    for pattern in ("gpt4", "o200k", r"\w+|\s+|[^\w\s]+"):
        assert fb.count_pieces(sub, pattern) == fb.count_pieces(docs, pattern)
        assert fb.count_pieces(sub[0], pattern) == fb.count_pieces(docs[0], pattern)
        assert fb.pretokenize(sub[1], pattern) == fb.pretokenize(docs[1], pattern)
    functionalizer, markers = fb.Functionalizer(), fb.BoundaryMarkers(punct=True, case=True)
    assert functionalizer.encode(sub[0]) == functionalizer.encode(docs[0])
    assert functionalizer.split(sub[1]) == functionalizer.split(docs[1])
    assert markers.encode(sub[0]) == markers.encode(docs[0])
    assert markers.pieces(sub[1]) == markers.pieces(docs[1])


@pytest.mark.parametrize("scheme", ["plain", "functional", "markers"])
@pytest.mark.parametrize("backend", ["auto", "reference"])
def test_lone_surrogates_train_as_encode_reads_them(scheme, backend):
    # encode reads a lone surrogate as U+FFFD, and a pair of surrogates as its character:
    # training on such text is training on what encode sees.
    raw = ["a\ud800b a\ud800b", "x\udfff \ud83d\ude00 pair"] * 3
    clean = ["a\ufffdb a\ufffdb", "x\ufffd \U0001f600 pair"] * 3
    tok = fb.train(raw, vocab_size=None, scheme=scheme, backend=backend, progress=False)
    assert tok == fb.train(clean, vocab_size=None, scheme=scheme, backend=backend, progress=False)
    assert [tok.encode(t) for t in raw] == [tok.encode(t) for t in clean]
    assert fb.count_pieces(raw) == fb.count_pieces(clean)
    assert tok.count_tokens("\ud800") == len(tok.encode("\ufffd"))


def test_a_special_token_with_a_lone_surrogate_is_refused():
    with pytest.raises(FunctionalBPEError, match="lone surrogate"):
        fb.train(["ab"], vocab_size=300, special_tokens=["<\ud800>"], progress=False)


def test_lone_surrogates_in_jsonl_read_as_replacement_characters(work):
    assert list(fb.files(work / "surrogates.jsonl")) == ["a\ufffdb", "\U0001f600 pair"]
    # ...whatever errors= says: the bytes of the file are valid UTF-8.
    assert list(fb.files(work / "surrogates.jsonl", errors="replace")) == ["a\ufffdb", "\U0001f600 pair"]
    proc = run("train", str(work / "surrogates.jsonl"), "--vocab-size", "258", "-q", "-o", str(work / "s.json"))
    assert proc.returncode == 0, proc.stderr
    expected = fb.train(["a\ufffdb", "\U0001f600 pair"], vocab_size=258, progress=False)
    assert fb.Tokenizer.load(work / "s.json").merges == expected.merges


# -- the API: files read ------------------------------------------------------------------------


def test_damaged_gzip_files_are_named(work, tmp_path):
    for name in ("truncated.txt.gz", "damaged.txt.gz"):
        with pytest.raises(CorpusError, match=f"{name}: cannot decompress"):
            list(fb.files(work / name))
    # Found in a directory, a damaged .gz file is an error too, not skipped.
    (tmp_path / "ok.txt").write_text("fine", encoding="utf-8")
    (tmp_path / "bad.txt.gz").write_bytes((work / "truncated.txt.gz").read_bytes()[:30])
    with pytest.raises(CorpusError, match="bad.txt.gz: cannot decompress"):
        list(fb.files(tmp_path))


def test_read_text_refuses_devices():
    from functionalbpe.text.corpus import read_text

    if not os.path.exists("/dev/zero"):
        pytest.skip("needs /dev/zero")
    with pytest.raises(CorpusError, match="/dev/zero: not a regular file"):
        read_text("/dev/zero")


# -- the API: out of memory -----------------------------------------------------------------------


def test_out_of_memory_says_what_to_reduce(monkeypatch):
    import functionalbpe.core.trainer
    import functionalbpe.training

    def no_memory(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(functionalbpe.core.trainer, "heap_train", no_memory)
    with pytest.raises(OutOfMemoryError, match="out of memory while learning merges from 2 distinct pieces") as info:
        fb.train(["ab ab"], vocab_size=300, pattern=r"\S+|\s+", backend="python", progress=False)
    assert isinstance(info.value, MemoryError) and "vocab_size" in str(info.value)
    monkeypatch.setattr(functionalbpe.training, "count_table", no_memory)
    with pytest.raises(OutOfMemoryError, match="out of memory while counting the corpus.*max_chars"):
        fb.train(["ab ab"], vocab_size=300, progress=False)


# -- the API: files written -----------------------------------------------------------------------


def writers():
    tok = fb.train(TEXT, vocab_size=300, progress=False)
    return {"save": tok.save, "to_tiktoken": tok.to_tiktoken}


# to_hf writes a directory and creates missing ones: tests/formats/test_hf.py checks its errors.
@pytest.mark.parametrize("writer", ["save", "to_tiktoken"])
def test_bad_output_paths_name_the_path(tmp_path, writer):
    write = writers()[writer]
    missing = tmp_path / "no" / "such" / "dir" / "out.json"
    cases = [
        (missing, f"{missing}: cannot write there: the directory {missing.parent} does not exist"),
        (tmp_path, f"{tmp_path}: is a directory"),
        ("", "the output path is empty"),
        (tmp_path / "file.txt" / "out.json", "file.txt is not a directory"),
    ]
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    for path, message in cases:
        with pytest.raises(OutputError) as info:
            write(path)
        assert message in str(info.value) and ".tmp-" not in str(info.value)
        assert isinstance(info.value, OSError) and isinstance(info.value, FunctionalBPEError)
    assert not (tmp_path / "no").exists()  # missing directories are not created
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]  # no temporary file left


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_a_failed_write_names_the_path_not_the_temporary_file():
    # /proc exists and (for root) passes the permission check, but no file can be made there.
    with pytest.raises(OutputError, match=r"^/proc/out\.json: cannot write"):
        writers()["save"]("/proc/out.json")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_directory_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        with pytest.raises(OutputError, match="no permission to create files in"):
            writers()["save"](locked / "tok.json")
    finally:
        locked.chmod(stat.S_IRWXU)


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_a_device_target_is_written_to_not_replaced():
    writers()["save"]("/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


# -- bench: a peer's failure is a row of the table ---------------------------------------------------


def _raise(message):
    def fail(*args, **kwargs):
        raise RuntimeError(message)

    return fail


def test_bench_goes_on_when_a_peer_fails(monkeypatch):
    # "broken" fails to train and to set up its encoder; "flaky" sets up, then fails to encode.
    # Both are "installed" (their module is json, which is).
    monkeypatch.setitem(PEERS, "broken", Peer("broken", module="json", encoder=_raise("no encoder"),
                                              train=lambda docs, vocab, threads, pattern: _raise("no training\nat all")))
    monkeypatch.setitem(PEERS, "flaky", Peer("flaky", module="json",
                                             encoder=lambda *a: (_raise("one fails"), _raise("batch fails"), "flaky")))
    monkeypatch.setattr(bench, "pathological_inputs", lambda: {"spaces": " " * 1000})
    config = bench.BenchConfig(docs=[TEXT] * 5, corpus_name="t", vocab_size=300, threads=1, repeats=1,
                               libraries=["functionalbpe", "broken", "flaky"])
    report = bench.run_bench(config, quiet=True)
    assert report["training"]["functionalbpe"]["ok"]
    assert report["training"]["broken"] == {"ok": False, "error": "RuntimeError: no training at all", "timeout": False}
    assert report["encoding"]["broken"] == {"error": "RuntimeError: no encoder"}
    assert report["encoding"]["flaky"]["one_thread"] == {"error": "RuntimeError: one fails"}
    assert report["encoding"]["flaky"]["all_threads"] == {"error": "RuntimeError: batch fails"}
    assert report["encoding"]["functionalbpe"]["one_thread"]["tokens"] == len(fb.train([TEXT] * 5, vocab_size=300, progress=False).encode(TEXT)) * 5
    assert report["pathological"]["spaces"]["flaky"]["error"] == "RuntimeError: one fails"
    assert "mb_per_s" in report["pathological"]["spaces"]["functionalbpe"]
    table = bench.format_markdown(report)
    for note in ("broken training: RuntimeError: no training at all", "broken encoder: RuntimeError: no encoder",
                 "flaky encoding on one thread: RuntimeError: one fails", "flaky on spaces: RuntimeError: one fails"):
        assert note in table, table
    assert "| broken | failed [" in table and "| flaky | failed [" in table


def test_bench_survives_sentencepiece_refusing_a_small_vocabulary():
    pytest.importorskip("sentencepiece")
    # 400 distinct characters do not fit a vocabulary of 300 in SentencePiece (it needs every
    # character as a piece); byte-level BPE is fine with it.
    text = "".join(chr(0x4E00 + i) for i in range(400)) + " hello world\n"
    config = bench.BenchConfig(docs=[text * 5] * 4, corpus_name="t", vocab_size=300, threads=1, repeats=1,
                               libraries=["functionalbpe", "sentencepiece"], skip_pathological=True)
    report = bench.run_bench(config, quiet=True)
    assert report["training"]["functionalbpe"]["ok"]
    assert "required_chars" in report["training"]["sentencepiece"]["error"]
    assert "required_chars" in report["encoding"]["sentencepiece"]["error"]
    assert report["encoding"]["functionalbpe"]["one_thread"]["tokens"] > 0


def test_an_interrupted_stream_to_stdout_ends_on_a_whole_line_and_says_what_was_written(capfd):
    import argparse

    from functionalbpe.cli import common

    def command(args):
        with common.streamed_output(None) as write:
            write(b"1 2\n3")  # a line's end held back until it is whole
            write(b"4\n5 6\n7 ")
            raise KeyboardInterrupt

    assert common.run(command, argparse.Namespace()) == common.EXIT_INTERRUPTED
    out, err = capfd.readouterr()
    assert out == "1 2\n34\n5 6\n"
    assert err == "functionalbpe: interrupted; 3 whole lines (11 bytes) had been written to standard output, and nothing after them\n"


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    tok = fb.train(["the cat sat on the mat " * 50], vocab_size=268, progress=False)
    tok.save(tmp_path / "t.json")
    (tmp_path / "big.txt").write_text("the cat sat on the mat\n" * 40_000, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "functionalbpe", "encode", "-t", str(tmp_path / "t.json"),
                             str(tmp_path / "big.txt"), "--lines"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()  # as `| head -1` does
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141 and err == b"" and first.endswith(b"\n")
