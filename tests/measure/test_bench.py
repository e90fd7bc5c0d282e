import json
import time

import pytest

from functionalbpe.measure import bench
from functionalbpe.cli import main


def _fresh_pages(size: int = 50_000_000) -> int:
    """Memory the child writes in pages of its own (an anonymous map): a fork of a process
    with free heap would otherwise reuse pages it already holds, which its peak cannot see."""
    import mmap

    area = mmap.mmap(-1, size)
    area.write(b"x" * size)
    return size


def test_measure_reports_time_memory_and_result():
    out = bench.measure(lambda: sum(range(1000)), timeout=30)
    assert out["ok"] and out["result"] == 499500 and out["seconds"] >= 0
    grown = bench.measure(_fresh_pages, timeout=30)
    assert grown["peak_bytes"] >= 40_000_000  # the child's own allocation is seen


def test_measure_stops_what_never_finishes():
    out = bench.measure(lambda: time.sleep(60), timeout=1)
    assert not out["ok"] and out["timeout"]


def test_measure_reports_errors():
    out = bench.measure(lambda: 1 / 0, timeout=30)
    assert not out["ok"] and "ZeroDivisionError" in out["error"]


def test_pathological_inputs_are_a_megabyte_each():
    inputs = bench.pathological_inputs()
    assert set(inputs) == {"spaces", "newlines", "carets", "zeros", "one letter", "base64", "minified code"}
    assert all(len(t) == 1 << 20 for t in inputs.values())
    assert set(inputs["base64"]) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def test_bench_command_on_a_small_corpus(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog\n" * 200, encoding="utf-8")
    out_json = tmp_path / "b.json"
    code = main(
        ["bench", "--corpus", str(corpus), "--vocab-size", "300", "--repeats", "1", "--libraries",
         "functionalbpe,tiktoken", "--no-pathological", "--json", str(out_json), "-q"]
    )
    assert code == 0
    table = capsys.readouterr().out
    assert "| functionalbpe |" in table and "Corpus:" in table
    (report,) = json.loads(out_json.read_text(encoding="utf-8"))["reports"]
    assert report["corpus"]["bytes"] == corpus.stat().st_size
    assert report["training"]["functionalbpe"]["ok"]
    enc = report["encoding"]["functionalbpe"]["one_thread"]
    assert enc["tokens"] > 0 and enc["mb_per_s"] > 0
    if "tiktoken" in report["encoding"]:  # same ranks, same text: the same number of tokens
        assert report["encoding"]["tiktoken"]["one_thread"]["tokens"] == enc["tokens"]


def test_bench_reports_each_corpus_on_its_own(tmp_path, capsys):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("the quick brown fox\n" * 100, encoding="utf-8")
    second.write_text("東京で日本語を話す。\n" * 100, encoding="utf-8")
    out_json = tmp_path / "b.json"
    code = main(
        ["bench", "--corpus", str(first), "--corpus", str(second), "--vocab-size", "300", "--repeats", "1",
         "--libraries", "functionalbpe", "--no-pathological", "--json", str(out_json), "-q"]
    )
    assert code == 0
    table = capsys.readouterr().out
    assert f"### {first}" in table and f"### {second}" in table
    reports = json.loads(out_json.read_text(encoding="utf-8"))["reports"]
    assert [r["corpus"]["bytes"] for r in reports] == [first.stat().st_size, second.stat().st_size]
    assert all(r["encoding"]["functionalbpe"]["one_thread"]["tokens"] > 0 for r in reports)


def test_unknown_library_is_a_clear_error(capsys):
    assert main(["bench", "--libraries", "nope", "--max-mb", "0.01", "-q"]) == 2
    assert "unknown ['nope']" in capsys.readouterr().err


DOCS = ["the quick brown fox jumps over the lazy dog, again and again"] * 200


def test_a_training_after_the_parent_used_a_thread_pool_does_not_hang():
    """A fork of a process whose rayon pool ran hangs on the pool's locks; the bench's
    training children start from a fresh interpreter instead."""
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel()
    hf.train_from_iterator(DOCS, tokenizers.trainers.BpeTrainer(vocab_size=300, show_progress=False))
    hf.encode_batch(DOCS * 50)  # the parent's pool has run
    out = bench.measure_training(bench.trainers()["tokenizers"], DOCS, 300, 2, timeout=120)
    assert out["ok"], out
    assert out["result"] is not None


def test_a_training_childs_peak_memory_is_its_own():
    ballast = bytearray(400_000_000)  # the parent's memory, which a forked child would inherit
    ballast[::4096] = b"x" * len(ballast[::4096])
    out = bench.measure_training(bench.trainers()["functionalbpe"], DOCS, 300, 1, timeout=120)
    assert out["ok"], out
    assert out["peak_bytes"] < 150_000_000  # a fork's peak would hold the parent's 400 MB
    del ballast


def test_max_mb_caps_a_corpus_of_one_large_file_in_bytes(tmp_path):
    from functionalbpe.cli.bench import _read_corpus

    line = "naïve café 中文 " * 10 + "\n"  # more bytes than characters
    (tmp_path / "big.txt").write_text(line * 20_000, encoding="utf-8")
    _, docs = _read_corpus([str(tmp_path / "big.txt")], 0.05)
    size = sum(len(d.encode("utf-8")) for d in docs)
    assert docs and 0.05e6 - len(line.encode()) < size <= 0.05e6
    assert docs[-1].endswith("\n") and (line * 20_000).startswith("".join(docs))
    _, whole = _read_corpus([str(tmp_path / "big.txt")], None)
    assert whole == [line * 20_000]
