"""Counting on a Dask cluster of two worker processes equals counting in one process.

A corpus cut into 8 shards — files, a bag, a dataframe column — counted on
``LocalCluster(n_workers=2, processes=True)`` gives the table ``fb.count`` gives (in the same
order), and training on it gives the same merges, for every scheme; a partition whose task
fails once and is retried changes nothing; the CLI's ``count --dask`` does the same.
Skipped when the ``dask`` extra is not installed.
"""
from __future__ import annotations

import json
import os
import random

import pytest

import functionalbpe as fb
from functionalbpe.cli import main

pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")
import dask  # noqa: E402
import dask.bag as db  # noqa: E402

import functionalbpe.pipeline.cluster as fbdask  # noqa: E402

SCHEMES = [("plain", {"pattern": "gpt2"}), ("functional", {}), ("markers", {"punct": True})]
WORDS = ["the", "The", "cat", "sat", "naïve", "café", "2024", "...", "ééé", "\n", "  ", "zzzz", "Straße", "x"]


def documents(n=48, seed=7):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 30))) for _ in range(n)]


DOCS = documents()


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


@pytest.fixture(scope="module")
def shard_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("shards")
    paths = []
    for k in range(8):
        path = root / f"shard-{k}.jsonl"
        path.write_text("".join(json.dumps({"text": d}) + "\n" for d in DOCS[k::8]), encoding="utf-8")
        paths.append(path)
    return paths


def same(got, expected, scheme, options):
    assert list(got.items()) == list(expected.items())
    assert got.options == expected.options
    tok = fb.train(got, vocab_size=None, progress=False)
    assert tok.merges == fb.train(expected, vocab_size=None, progress=False).merges


@pytest.mark.parametrize("scheme,options", SCHEMES)
def test_files_counted_on_the_cluster(client, shard_files, scheme, options):
    got = fbdask.count([str(p) for p in shard_files], scheme=scheme, client=client, split_every=3, task_bytes=1,
                       **options)
    same(got, fb.count(fb.files(*shard_files), scheme=scheme, **options), scheme, options)


@pytest.mark.parametrize("scheme,options", SCHEMES)
def test_a_bag_counted_on_the_cluster(client, scheme, options):
    bag = db.from_sequence(DOCS, npartitions=8)
    got = fbdask.count(bag, scheme=scheme, client=client, special_tokens=["ééé"], **options)
    same(got, fb.count(DOCS, scheme=scheme, special_tokens=["ééé"], **options), scheme, options)
    # and the tokenizer trained on them is the one trained on the text
    assert fb.train(got, vocab_size=None, progress=False).merges == \
        fb.train(DOCS, vocab_size=None, scheme=scheme, special_tokens=["ééé"], progress=False, **options).merges


@pytest.mark.parametrize("scheme,options", SCHEMES)
def test_a_dataframe_column_counted_on_the_cluster(client, scheme, options):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    column = dd.from_pandas(pd.DataFrame({"text": DOCS}), npartitions=8)["text"]
    got = fbdask.count(column, scheme=scheme, client=client, **options)
    same(got, fb.count(DOCS, scheme=scheme, **options), scheme, options)


def test_a_task_that_fails_once_is_retried_to_the_same_result(client, tmp_path):
    flag = tmp_path / "failed-once"

    def load(k):
        # Partition 3 fails the first time it is loaded (on whichever worker runs it).
        if k == 3 and not flag.exists():
            flag.write_text("x")
            raise OSError("the worker lost its disk")
        return DOCS[k::8]

    bag = db.from_delayed([dask.delayed(load, pure=False)(k) for k in range(8)])
    got = fbdask.count(bag, scheme="functional", client=client, retries=2)
    assert flag.exists()
    assert list(got.items()) == list(fb.count([d for k in range(8) for d in DOCS[k::8]], scheme="functional").items())


def test_without_a_client_the_local_scheduler_counts(shard_files):
    bag = db.from_sequence(DOCS, npartitions=4)
    assert fbdask.count(bag, pattern="gpt2") == fb.count(DOCS, pattern="gpt2")
    # small files go several to a task, in order
    assert list(fbdask.count(shard_files, task_bytes=3000).items()) == list(fb.count(fb.files(*shard_files)).items())
    assert len(fbdask.count(db.from_sequence([], npartitions=1), pattern="gpt2")) == 0


def test_bad_sources_are_refused_at_once(tmp_path):
    with pytest.raises(fb.FunctionalBPEError, match="no such file|matches no file"):
        fbdask.count([str(tmp_path / "missing.txt")])
    with pytest.raises(fb.FunctionalBPEError, match="source must be"):
        fbdask.count(42)
    with pytest.raises(fb.FunctionalBPEError, match="split_every"):
        fbdask.count(db.from_sequence(["a"]), split_every=1)


def test_the_cli_counts_on_the_cluster_and_trains_on_the_counts(client, shard_files, tmp_path):
    out = tmp_path / "all.counts"
    address = client.scheduler.address
    assert main(["count", *map(str, shard_files), "--dask", address, "--scheme", "functional", "-o", str(out), "-q"]) == 0
    assert fb.PieceCounts.load(out) == fb.count(fb.files(*shard_files), scheme="functional")
    tok = tmp_path / "tok.json"
    assert main(["train", "--counts", str(out), "--vocab-size", "700", "-o", str(tok), "-q"]) == 0
    expected = fb.train(fb.files(*shard_files), scheme="functional", vocab_size=700, progress=False)
    assert fb.Tokenizer.load(tok).merges == expected.merges


# -- errors of the package, and files read anew when they change ------------------------------


def test_a_file_restored_after_a_failed_count_is_read_anew(client, tmp_path, monkeypatch):
    shard = tmp_path / "a.txt"
    shard.write_text("one two")
    original = fbdask._partitions

    def vanish_after_planning(*args, **kwargs):
        parts = original(*args, **kwargs)
        shard.unlink()  # gone when the task runs
        return parts

    monkeypatch.setattr(fbdask, "_partitions", vanish_after_planning)
    with pytest.raises(Exception):
        fbdask.count([str(shard)], client=client)
    monkeypatch.setattr(fbdask, "_partitions", original)
    shard.write_text("three four five")
    assert dict(fbdask.count([str(shard)], client=client)) == dict(fb.count(["three four five"], progress=False))
    shard.write_text("six")
    assert dict(fbdask.count([str(shard)], client=client)) == dict(fb.count(["six"], progress=False))


def test_a_file_moved_away_and_back_is_read_anew(client, tmp_path, monkeypatch):
    """Moved back, the file has its size and modification time again: only the status time
    (which a rename sets) tells it from the state that failed."""
    shard, away = tmp_path / "a.txt", tmp_path / "away.txt"
    shard.write_text("one two")
    original = fbdask._partitions

    def move_after_planning(*args, **kwargs):
        parts = original(*args, **kwargs)
        os.rename(shard, away)  # gone when the task runs
        return parts

    monkeypatch.setattr(fbdask, "_partitions", move_after_planning)
    with pytest.raises(Exception):
        fbdask.count([str(shard)], client=client)
    monkeypatch.setattr(fbdask, "_partitions", original)
    os.rename(away, shard)
    assert dict(fbdask.count([str(shard)], client=client)) == dict(fb.count(["one two"], progress=False))


def test_an_edit_that_keeps_size_and_time_is_read_anew(tmp_path):
    shard = tmp_path / "a.txt"
    shard.write_text("one two")
    before = fbdask._identity(str(shard))
    info = os.stat(shard)
    shard.write_text("one too")
    os.utime(shard, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert fbdask._identity(str(shard)) != before


@pytest.mark.parametrize("kwargs, name", [({"task_bytes": "x"}, "task_bytes"), ({"client": 5}, "client"),
                                          ({"retries": -1}, "retries")])
def test_wrong_arguments_are_the_packages_error(tmp_path, kwargs, name):
    shard = tmp_path / "a.txt"
    shard.write_text("one two")
    with pytest.raises(fb.FunctionalBPEError, match=name):
        fbdask.count([str(shard)], **kwargs)


def test_cli_count_on_an_address_that_is_not_one(tmp_path, capsys):
    shard = tmp_path / "a.txt"
    shard.write_text("one two")
    code = main(["count", str(shard), "-o", str(tmp_path / "c.counts"), "--dask", "bogus-address", "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "Dask scheduler 'bogus-address'" in err and "Traceback" not in err


def test_a_dying_worker_is_the_packages_error(monkeypatch):
    from distributed import KilledWorker

    def killed(task, client, retries):
        raise KilledWorker("count-part-1", None, 3)

    monkeypatch.setattr(fbdask, "_run_on", killed)
    with pytest.raises(fb.FunctionalBPEError, match="worker died"):
        fbdask._compute(None, None, 0)

# ---- encode_to_files: one token file per partition, a manifest, equal to encode_to_file ----


@pytest.fixture(scope="module")
def eot_tok():
    return fb.train(DOCS, vocab_size=300, special_tokens=["<|endoftext|>"], progress=False)


def concatenated(out_dir, manifest):
    import numpy as np

    from functionalbpe.pipeline.tokenfile import read_token_file

    on_disk = json.loads((out_dir / fbdask.MANIFEST).read_text())
    assert on_disk == manifest
    parts = [read_token_file(out_dir / p["path"], format=manifest["token_format"]) for p in manifest["parts"]]
    assert [len(p) for p in parts] == [p["tokens"] for p in manifest["parts"]]
    return np.concatenate(parts).tolist() if parts else []


@pytest.mark.parametrize("format", ["npy", "llmc"])
def test_files_encoded_on_the_cluster_equal_one_machine(client, eot_tok, shard_files, tmp_path, format):
    import numpy as np

    one = tmp_path / "one.npy"
    eot_tok.encode_to_file(fb.files(*shard_files), one, eot="<|endoftext|>", progress=False)
    manifest = fbdask.encode_to_files(eot_tok, [str(p) for p in shard_files], tmp_path / "parts", format=format,
                                      eot="<|endoftext|>", client=client, task_bytes=1)
    assert len(manifest["parts"]) == len(shard_files)
    assert manifest["documents"] == len(DOCS)
    assert concatenated(tmp_path / "parts", manifest) == np.load(one).tolist()


def test_a_bag_encoded_on_the_cluster_equals_one_machine(client, eot_tok, tmp_path):
    import numpy as np

    one = tmp_path / "one.npy"
    eot_tok.encode_to_file(DOCS, one, eot="<|endoftext|>", progress=False)
    bag = db.from_sequence(DOCS, npartitions=5)
    manifest = fbdask.encode_to_files(eot_tok, bag, tmp_path / "parts", eot="<|endoftext|>", client=client)
    assert [p["index"] for p in manifest["parts"]] == list(range(5))
    assert sum(p["documents"] for p in manifest["parts"]) == len(DOCS)
    assert concatenated(tmp_path / "parts", manifest) == np.load(one).tolist()


def test_encode_to_files_refuses_bad_options_at_once(eot_tok, tmp_path):
    from functionalbpe.errors import FunctionalBPEError

    with pytest.raises(FunctionalBPEError, match="eot"):
        fbdask.encode_to_files(eot_tok, DOCS, tmp_path / "x", eot="<|nope|>")
    with pytest.raises(FunctionalBPEError, match="format"):
        fbdask.encode_to_files(eot_tok, DOCS, tmp_path / "x", format="zip")


def test_a_run_into_a_directory_that_holds_one_replaces_it_whole_or_not_at_all(eot_tok, tmp_path):
    """The manifest says which run is there, and only whole runs are there: a directory that
    holds a run is refused unless replace=True; a failing run leaves the old one as it was; a
    run with fewer parts leaves none of the old ones behind."""
    import numpy as np

    out = tmp_path / "parts"
    first = fbdask.encode_to_files(eot_tok, db.from_sequence(DOCS, npartitions=4), out, eot="<|endoftext|>")
    (out / "mine.txt").write_text("a file of the user", encoding="utf-8")

    with pytest.raises(fb.FunctionalBPEError, match="holds 3 files .*replace=True"):
        fbdask.encode_to_files(eot_tok, DOCS, out)
    before = sorted(os.listdir(out))
    bad = db.from_sequence(DOCS[:3] + [DOCS[0] + "<|endoftext|>"], npartitions=2)  # a disallowed special
    with pytest.raises(Exception):
        fbdask.encode_to_files(eot_tok, bad, out, eot="<|endoftext|>", replace=True)
    assert sorted(os.listdir(out)) == before and concatenated(out, first)
    second = fbdask.encode_to_files(eot_tok, db.from_sequence(DOCS, npartitions=2), out, eot="<|endoftext|>",
                                    replace=True)
    run = second["parts"][0]["path"].split("/")[0]
    assert sorted(os.listdir(out)) == sorted([fbdask.MANIFEST, "mine.txt", run])
    assert sorted(os.listdir(out / run)) == [p["path"].split("/")[1] for p in second["parts"]]
    one = tmp_path / "one.npy"
    eot_tok.encode_to_file(DOCS, one, eot="<|endoftext|>", progress=False)
    assert concatenated(out, second) == np.load(one).tolist()
