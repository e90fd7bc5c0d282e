"""Counting and encoding on a Dask cluster: each partition counted (or encoded) on its worker.

Counting: the tables of the partitions are merged in a tree. Encoding
(:func:`encode_to_files`): each partition becomes a token file of its own, and a manifest
lists them in order; concatenated in that order they are the token file
``encode_to_file`` writes in one process.

The one home of Dask in functionalbpe (the optional extra ``functionalbpe[dask]``: ``dask[bag]``
and ``distributed``); the package imports without it. Counting is linear in the text and
needs nothing but the text, so it spreads over any number of workers; the merge loop needs
only the merged table (docs/counts.md), so training then runs once, anywhere::

    import functionalbpe as fb, functionalbpe.dask
    from distributed import Client
    counts = functionalbpe.dask.count("shards/*.jsonl.gz", scheme="functional", client=Client(address))
    tok = fb.train(counts, vocab_size=65536)   # == fb.train(fb.files("shards/*.jsonl.gz"), ...)

What travels: each task returns its table in the compact counts-file form
(:meth:`PieceCounts.to_bytes`: zlib, a checksum, and read back with the same checks as a file),
never a pickled dict; tables are merged ``split_every`` at a time, in C, up a tree, in the
order of the partitions, so that the result is the table of the whole corpus in its order of
first occurrence, equal to :func:`functionalbpe.count` in one process. Counting a partition
is a pure function of it, so a task that fails and is retried (``retries=``) gives the same
table. Progress is Dask's own: its dashboard, or ``distributed.progress`` on the future.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import dask
from dask import delayed

from ..util.checks import integer, special_tokens_checked
from ..counts import PieceCounts
from ..counts import count as count_counts
from ..errors import FunctionalBPEError
from ..schemes.base import Scheme
from ..schemes.registry import resolve
from ..text.corpus import files
from ..util.output import atomic_write_text
from ..formats.tokenfiles import LAYOUTS, choose_dtype, choose_format

# What a worker needs to count as the caller asked: plain data, rebuilt there.
Spec = Tuple[str, str, Dict[str, Any], Tuple[str, ...], int]


def count(
    source: Any,
    *,
    scheme: Union[str, Scheme] = "plain",
    pattern: Optional[str] = None,
    special_tokens: Sequence[str] = (),
    normalize: Optional[str] = None,
    client: Any = None,
    split_every: int = 8,
    task_bytes: int = 64 << 20,
    retries: int = 3,
    threads: int = 1,
    field: str = "text",
    errors: str = "strict",
    **scheme_options: Any,
) -> PieceCounts:
    """The piece counts of ``source``, counted on a Dask cluster.

    ``source`` is a path or a list of paths, directories and globs (expanded here, like
    :func:`functionalbpe.files`, and read on the workers: ``.txt``, ``.jsonl`` with ``field``,
    ``.gz``; the workers must see the same files; one task per file, or per run of
    consecutive small files of about ``task_bytes`` together, since a task costs a few
    milliseconds of scheduling and a table to send), a
    ``dask.bag.Bag`` of strings (one task per partition), or a ``dask.dataframe`` string
    column (``dd.read_parquet(...)["text"]``: one task per partition). ``scheme``,
    ``pattern``, ``special_tokens``, ``normalize`` and the scheme options are those of
    :func:`functionalbpe.count`. ``client``: a ``distributed.Client``, a scheduler address,
    or None for the current client if there is one, else Dask's local scheduler.
    ``threads``: counting threads per task (Dask runs tasks side by side already).

    >>> import dask.bag as db
    >>> dict(count(db.from_sequence(["a a", "a b"], npartitions=2), pattern="gpt2"))
    {'a': 2, ' a': 1, ' b': 1}
    """
    if normalize is not None:
        scheme_options["normalize"] = normalize
    the_scheme = resolve(scheme, pattern, **scheme_options)
    specials = special_tokens_checked(special_tokens)
    spec: Spec = (the_scheme.name, str(the_scheme.pattern), the_scheme.options(), specials, threads)
    if not isinstance(split_every, int) or isinstance(split_every, bool) or split_every < 2:
        raise FunctionalBPEError(f"split_every must be an integer of at least 2, got {split_every!r}")
    task_bytes = integer(task_bytes, "task_bytes", 1)
    retries = integer(retries, "retries", 0)
    threads = integer(threads, "threads", 1)
    _check_client(client)
    tasks = [delayed(_count_part, pure=True)(part, spec) for part in _partitions(source, field, errors, task_bytes)]
    if not tasks:
        return PieceCounts.merge([count_counts([], scheme=the_scheme, special_tokens=specials)])
    while len(tasks) > 1:  # a tree: each level merges split_every tables, in order
        tasks = [delayed(_merge_parts, pure=True)(tasks[i:i + split_every]) for i in range(0, len(tasks), split_every)]
    return PieceCounts.from_bytes(_compute(tasks[0], client, retries), "a table from the cluster")


def _partitions(source: Any, field: str, errors: str, task_bytes: int) -> List[Any]:
    """The parts of ``source`` that tasks count: ``(paths, field, errors)`` or delayed texts."""
    import dask.bag as db

    if isinstance(source, db.Bag):
        return list(source.to_delayed())
    if _is_dataframe(source):
        if not hasattr(source, "to_delayed") or getattr(source, "ndim", 1) != 1:
            raise FunctionalBPEError("give a dask dataframe's string column (ddf['text']), not the whole frame")
        return list(source.to_delayed())
    paths = [source] if isinstance(source, (str, os.PathLike)) else source
    if not isinstance(paths, (list, tuple)) or not all(isinstance(p, (str, os.PathLike)) for p in paths):
        raise FunctionalBPEError(
            "source must be paths or globs, a dask.bag.Bag of strings or a dask dataframe string column, "
            f"got {type(source).__name__}"
        )
    corpus = files(*paths, errors=errors, field=field)  # errors for a missing file come here, at once
    groups: List[List[str]] = [[]]
    size = 0
    for path in corpus.paths:  # consecutive files, in order: the merge keeps the corpus's order
        if groups[-1] and size >= task_bytes:
            groups.append([])
            size = 0
        groups[-1].append(os.fspath(path))
        size += path.stat().st_size
    # Each file's identity is part of its task (and so of the task's key): on a long-lived
    # client a file changed, or restored after a failed count, is read anew instead of giving
    # the result (or the error) kept for its path.
    return [(tuple(group), field, errors, tuple(_identity(p) for p in group)) for group in groups if group]


# How much of each end of a file its identity reads.
IDENTITY_BYTES = 1 << 16


def _identity(path: str) -> Tuple[int, int, int, int, str]:
    """What tells one state of a file from another: its size, inode and times (a rename
    changes the status time, so a file moved away and back is new even with its size and
    modification time kept) and a hash of its first and last 64 KiB (an edit that keeps the
    size and restores the modification time)."""
    with open(path, "rb") as f:
        info = os.fstat(f.fileno())
        digest = hashlib.blake2b(f.read(IDENTITY_BYTES), digest_size=16)
        if info.st_size > IDENTITY_BYTES:
            f.seek(max(IDENTITY_BYTES, info.st_size - IDENTITY_BYTES))
            digest.update(f.read(IDENTITY_BYTES))
    return info.st_size, info.st_ino, info.st_mtime_ns, info.st_ctime_ns, digest.hexdigest()


def _is_dataframe(source: Any) -> bool:
    module = type(source).__module__ or ""
    return module.startswith(("dask.dataframe", "dask_expr"))


def _count_part(part: Any, spec: Spec) -> bytes:
    """One task: a partition counted (on a worker), as counts-file bytes."""
    name, pattern, options, specials, threads = spec
    if isinstance(part, tuple):  # files, read here
        paths, field, errors, _ = part
        corpus: Any = files(*paths, field=field, errors=errors)
    else:  # a bag's list of strings, or a pandas Series of them
        corpus = list(part)
    counted = count_counts(corpus, scheme=name, pattern=pattern, special_tokens=specials, threads=threads, **options)
    return counted.to_bytes()


def _merge_parts(parts: List[bytes]) -> bytes:
    """One node of the tree: tables (counts-file bytes, checked on reading) added in order."""
    return PieceCounts.merge(PieceCounts.from_bytes(p, "a table from a worker") for p in parts).to_bytes()


def _check_client(client: Any) -> None:
    if client is None or isinstance(client, str):
        return
    from distributed import Client

    if not isinstance(client, Client):
        raise FunctionalBPEError(f"client must be a distributed.Client, a scheduler address or None, got {client!r}")


def _compute(task: Any, client: Any, retries: int) -> bytes:
    """The bytes of the last merge: on ``client`` (an address is connected to, then closed),
    the current client, or Dask's local scheduler. A scheduler that cannot be reached and a
    worker that dies are errors of the package, naming the address or the task."""
    from distributed import KilledWorker

    try:
        return _run_on(task, client, retries)
    except KilledWorker as exc:
        task = exc.args[0] if exc.args else "?"
        raise FunctionalBPEError(f"a Dask worker died while counting (KilledWorker, task {str(task)[:100]}); "
                                 "it may have run out of memory: give tasks less (task_bytes) or workers more") from None


def _run_on(task: Any, client: Any, retries: int) -> bytes:
    from distributed import Client, default_client

    if isinstance(client, str):
        try:
            connected = Client(client, timeout="10s", set_as_default=False)
        except (ValueError, OSError, TimeoutError) as exc:
            raise FunctionalBPEError(f"cannot reach the Dask scheduler {client!r}: {str(exc)[:200]}") from None
        with connected:
            return connected.compute(task, retries=retries).result()
    if client is None:
        try:
            client = default_client()
        except ValueError:  # no client: Dask's local scheduler (no retries there)
            (result,) = dask.compute(task)
            return result
    return client.compute(task, retries=retries).result()


MANIFEST = "manifest.json"
MANIFEST_FORMAT = "functionalbpe-token-files/1"


def encode_to_files(
    tok: Any,
    source: Any,
    out_dir: Any,
    *,
    format: str = "npy",
    dtype: Any = None,
    eot: Union[None, str, int] = None,
    client: Any = None,
    retries: int = 3,
    threads: int = 1,
    task_bytes: int = 64 << 20,
    field: str = "text",
    errors: str = "strict",
    allowed_special: Any = frozenset(),
    disallowed_special: Any = "all",
    replace: bool = False,
) -> Dict[str, Any]:
    """Encode ``source`` on a Dask cluster: one token file per partition in a folder of its
    own inside ``out_dir`` (``run-<time>-<id>/part-00000.npy``, ...; ``out_dir`` created if
    missing), and ``out_dir/manifest.json`` listing them in order with their documents and
    tokens. Returns the manifest.

    A run is written to a hidden folder, made visible once every part is written, and
    published by the manifest, written last: a reader of the manifest sees the old run or
    the new one, never a mix, and a run that fails leaves the directory as it was.
    ``out_dir`` must be empty, unless ``replace=True``: then, once the new manifest is in
    place, the earlier run (the folders and ``part-*`` files of this function) is removed;
    no other file is touched.

    ``source`` is what :func:`count` takes: paths and globs (read on the workers, which must
    see the same files and write to the same ``out_dir``; consecutive files of about
    ``task_bytes`` make one partition), a ``dask.bag.Bag`` of strings or a dataframe string
    column. ``format`` (``npy``, ``bin`` or ``llmc``), ``dtype``, ``eot``, ``errors``,
    ``allowed_special`` and ``disallowed_special`` are those of
    :meth:`Tokenizer.encode_to_file`; ``threads``: encoding threads per task. The token
    files read one after another in the manifest's order hold exactly the ids that
    ``tok.encode_to_file`` writes for the whole source in one process. Encoding a
    partition is a pure function of it and every file is written under a temporary name and
    renamed, so a task that fails and is retried (``retries=``) writes the same file.

    >>> import dask.bag as db, functionalbpe as fb, tempfile
    >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False)
    >>> m = encode_to_files(tok, db.from_sequence(["ab", "b", "ab b"], npartitions=2), tempfile.mkdtemp(), eot="<s>")
    >>> [(p["documents"], p["tokens"]) for p in m["parts"]], m["tokens"]
    ([(2, 4), (1, 4)], 8)
    """
    kind = choose_format("part.npy", format)
    chosen = choose_dtype(tok.vocab_size, dtype)
    suffix = LAYOUTS[kind].suffix
    directory = os.fspath(out_dir)
    try:
        os.makedirs(directory, exist_ok=True)
        held = sorted(name for name in os.listdir(directory) if not name.startswith(".run-"))
    except OSError as exc:
        raise FunctionalBPEError(f"{directory}: cannot make the directory: {exc.strerror or exc}") from None
    if held and not replace:
        raise FunctionalBPEError(
            f"{directory}: holds {len(held)} files ({held[0]}{', ...' if len(held) > 1 else ''}); write a run into "
            "an empty directory, or pass replace=True to replace the run it holds"
        )
    options = dict(format=kind, dtype=chosen.name, eot=eot, threads=threads, errors=errors,
                   allowed_special=allowed_special, disallowed_special=disallowed_special)
    run = f"run-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}"
    staging = os.path.join(directory, "." + run)
    os.mkdir(staging)
    try:
        # Checked here, before any task starts (an unknown eot, a bad option): one empty document.
        tok.encode_to_file([], os.path.join(staging, f".check{suffix}"), progress=False, **options)
        os.unlink(os.path.join(staging, f".check{suffix}"))
        parts = _partitions(source, field, errors, task_bytes)
        names = [f"part-{k:05d}{suffix}" for k in range(len(parts))]
        payload = tok.to_payload()
        tasks = [delayed(_encode_part, pure=True)(type(tok), payload, part, os.path.join(staging, name), options)
                 for part, name in zip(parts, names)]
        results = _compute_all(tasks, client, retries) if tasks else []
        os.rename(staging, os.path.join(directory, run))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)  # a task still running then fails to write: no matter
        raise
    names = [f"{run}/{name}" for name in names]
    manifest = {
        "format": MANIFEST_FORMAT,
        "token_format": kind,
        "dtype": chosen.name,
        "eot": eot,
        "documents": sum(r[0] for r in results),
        "tokens": sum(r[1] for r in results),
        "parts": [{"index": k, "path": name, "documents": r[0], "tokens": r[1]}
                  for k, (name, r) in enumerate(zip(names, results))],
    }
    import json

    atomic_write_text(os.path.join(directory, MANIFEST), json.dumps(manifest, indent=1) + "\n")
    for name in held:  # the earlier run, now that nothing lists it
        if name != run and (name.startswith("run-") or name.startswith("part-")):
            path = os.path.join(directory, name)
            shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.unlink(path)
    return manifest


def _encode_part(cls: Any, payload: Dict[str, Any], part: Any, path: str, options: Dict[str, Any]) -> Tuple[int, int]:
    """One task: a partition encoded (on a worker) into its token file: (documents, tokens).
    The tokenizer travels as its file's payload (checked when rebuilt) and its class."""
    tok = cls.from_payload(payload)
    if isinstance(part, tuple):  # files, read here
        paths, field, errors, _ = part  # the files' identity only keys the task
        source: Any = files(*paths, field=field, errors=errors)
    else:  # a bag's list of strings, or a pandas Series of them
        source = list(part)
    summary = tok.encode_to_file(source, path, progress=False, **options)
    return summary.documents, summary.tokens


def _compute_all(tasks: List[Any], client: Any, retries: int) -> List[Any]:
    """The results of ``tasks``, in order, where :func:`_compute` computes one."""
    from distributed import Client, default_client

    if isinstance(client, str):
        with Client(client) as connected:
            return connected.gather(connected.compute(tasks, retries=retries))
    if client is None:
        try:
            client = default_client()
        except ValueError:
            return list(dask.compute(*tasks))
    return client.gather(client.compute(tasks, retries=retries))


__all__ = ["count", "encode_to_files"]
