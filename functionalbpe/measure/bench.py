"""``functionalbpe bench``: training and encoding side by side with the installed peers.

Every library works on the same documents, already in memory, in the same run of the
command. Training runs in a child process that starts from a fresh interpreter (forkserver),
so that one library's threads, caches and memory cannot slow or hang the next, and so that
peak memory is the child's own (its ``VmHWM``). Encoding runs in the runner itself. Libraries alternate — A B C, A B C, ... — for several repetitions, and the
best time of each is kept: the machine only ever makes a run slower, never faster.

What is compared:

* **training** at one vocabulary size with the same pattern (``gpt4``): functionalbpe,
  rustbpe, HF tokenizers, SentencePiece (BPE, on lines: it has no regex pre-tokenizer) and
  bpeasy. Wall time and peak memory.
* **encoding** with the *same ranks*: our tokenizer, tiktoken built from our ranks, HF
  tokenizers loading our ``to_hf`` export, and rustbpe's own trained tokenizer (whose
  merges equal ours on the plain scheme). One thread (a loop over documents) and all
  threads (each library's batch call). SentencePiece encodes with its own model.
* **pathological inputs**: one megabyte each of spaces, newlines, ``^``, ``0``, one letter,
  base64 and minified code, encoded once per library with a time limit.

Example::

    >>> machine_info()["cores"] >= 1
    True
"""
from __future__ import annotations

import base64
import functools
import gc
import json
import multiprocessing
import os
import pickle
import platform
import random
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..peers.base import TrainHook
from ..peers.registry import PEERS

# The pattern every library trains with (a name of functionalbpe.PATTERNS).
PATTERN = "gpt4"


# -- the machine and the libraries --------------------------------------------------------------


def machine_info() -> Dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count() or 1,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def library_versions() -> Dict[str, Optional[str]]:
    from importlib import metadata

    out: Dict[str, Optional[str]] = {}
    for name in libraries():
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    if out["functionalbpe"] is None:  # running from a source tree
        from .._version import __version__

        out["functionalbpe"] = __version__
    return out


# -- running one measurement in a child ------------------------------------------------------


def _peak_rss_reset() -> int:
    """Reset the kernel's peak-RSS counter for this process; return the current RSS (bytes)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
    return _status_kb("VmRSS") * 1024


def _status_kb(field_name: str) -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _child(fn: Callable[[], Any], conn: Any) -> None:
    try:
        gc.collect()
        base = _peak_rss_reset()
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        peak = _status_kb("VmHWM") * 1024
        conn.send({"ok": True, "seconds": elapsed, "peak_bytes": max(0, peak - base), "result": result})
    except BaseException as exc:  # report, never hang the parent
        conn.send({"ok": False, "error": _describe(exc), "trace": traceback.format_exc()})
    finally:
        conn.close()


def _train_child(hook: TrainHook, docs: Sequence[str], vocab_size: int, threads: int, conn: Any) -> None:
    """A training, built and run in a fresh interpreter (the target of :func:`measure_training`)."""
    try:
        run = hook(docs, vocab_size, threads, PATTERN)
    except BaseException as exc:  # report, never hang the parent
        conn.send({"ok": False, "error": _describe(exc), "trace": traceback.format_exc()})
        conn.close()
        return
    _child(run, conn)


def fresh_context() -> Any:
    """Children that start from a fresh interpreter, never a fork of this one: a fork of a
    process whose Rust thread pool (rayon: HF tokenizers, rustbpe) has run can hang on its
    locks, and it inherits the parent's memory, which hides the child's own peak."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def measure_training(hook: TrainHook, docs: Sequence[str], vocab_size: int, threads: int, timeout: float) -> Dict[str, Any]:
    """Train with ``hook`` (a library's training, :func:`trainers`) in a fresh child
    (:func:`fresh_context`); its wall time, its own peak memory (``VmHWM`` read in the child,
    above its resident set before training) and result, or the timeout or error. The
    documents reach the child before the clock starts. A hook that cannot be sent to another
    interpreter (a closure, as tests make) runs in a fork instead."""
    try:
        pickle.dumps(hook)
    except Exception:  # noqa: BLE001 - any reason it cannot travel
        return measure(hook(docs, vocab_size, threads, PATTERN), timeout)
    return _wait(fresh_context(), _train_child, (hook, list(docs), vocab_size, threads), timeout)


def measure(fn: Callable[[], Any], timeout: float) -> Dict[str, Any]:
    """Run ``fn`` in a forked child; its wall time, peak memory and result (or timeout/error).
    For what holds no thread pool (one text encoded at a time); training goes through
    :func:`measure_training`."""
    return _wait(multiprocessing.get_context("fork"), _child, (fn,), timeout)


def _wait(ctx: Any, target: Callable[..., None], args: Tuple[Any, ...], timeout: float) -> Dict[str, Any]:
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=target, args=(*args, child))
    proc.start()
    child.close()
    if parent.poll(timeout):
        try:
            out = parent.recv()
        except EOFError:
            out = {"ok": False, "error": f"the child died (exit code {proc.exitcode})"}
        proc.join()
    else:
        proc.kill()
        proc.join()
        out = {"ok": False, "timeout": True, "error": f"no result within {timeout:.0f}s"}
    parent.close()
    return out


# -- the libraries -----------------------------------------------------------------------------

OURS = "functionalbpe"


def libraries() -> List[str]:
    """Every library the bench knows: ours, then the peers (:mod:`functionalbpe.peers.registry`)."""
    return [OURS] + list(PEERS)


def installed(name: str) -> bool:
    return name == OURS or PEERS[name].installed()


def train_functionalbpe(docs: Sequence[str], vocab_size: int, threads: int, pattern: str) -> Callable[[], Any]:
    def run() -> Any:
        import functionalbpe as fb

        tok = fb.train(docs, vocab_size=vocab_size, pattern=pattern, progress=False, threads=threads)
        return tok.vocab_size

    return run


def trainers() -> Dict[str, TrainHook]:
    """The training of each library that trains, ours first."""
    out: Dict[str, TrainHook] = {OURS: train_functionalbpe}
    out.update((name, peer.train) for name, peer in PEERS.items() if peer.train is not None)
    return out


def trainer(name: str, docs: Sequence[str], vocab_size: int, threads: int) -> Callable[[], Any]:
    """What to run (in a fresh child, :func:`measure`) to train library ``name`` on ``docs``
    with the bench's pattern."""
    return trainers()[name](docs, vocab_size, threads, PATTERN)


# -- encoders ------------------------------------------------------------------------------------


@dataclass
class Encoders:
    """Encode functions per library, built once in the runner before forking."""

    one: Dict[str, Callable[[str], int]] = field(default_factory=dict)  # text -> token count
    batch: Dict[str, Callable[[List[str], int], int]] = field(default_factory=dict)
    notes: Dict[str, str] = field(default_factory=dict)
    errors: Dict[str, str] = field(default_factory=dict)  # peers that could not be built


def build_encoders(
    docs: Sequence[str], tok: Any, vocab: int, threads: int, workdir: str, wanted: Optional[Sequence[str]] = None
) -> Encoders:
    """Our encoder and each installed peer's (of ``wanted``, default all). A peer that fails
    to build (SentencePiece refuses a vocabulary smaller than the corpus's characters) is
    recorded in ``errors`` and left out: the bench goes on without it."""
    enc = Encoders()
    enc.one[OURS] = lambda text: len(tok.encode_ordinary(text))
    enc.batch[OURS] = lambda texts, k: sum(map(len, tok.encode_batch(texts, num_threads=k)))
    for name, peer in PEERS.items():
        if peer.encoder is None or (wanted is not None and name not in wanted) or not peer.installed():
            continue
        try:
            enc.one[name], enc.batch[name], enc.notes[name] = peer.encoder(docs, tok, vocab, threads, workdir)
        except Exception as exc:  # a peer's failure is a result, not the end of the bench
            enc.errors[name] = _describe(exc)
    return enc


def _describe(exc: BaseException) -> str:
    """An exception on one line (peers' messages can span several)."""
    return " ".join(f"{type(exc).__name__}: {exc}".split())


# -- pathological inputs ---------------------------------------------------------------------


def pathological_inputs(size: int = 1 << 20) -> Dict[str, str]:
    rng = random.Random(0)
    b64 = base64.b64encode(rng.randbytes(size * 3 // 4)).decode("ascii")[:size]
    words = ["a", "b", "fn", "x", "i", "n", "e", "t", "return", "var", "let"]
    ops = ["=", "+", "(", ")", "{", "}", ";", ",", ".", "[", "]", "=>", "&&", "!", "?", ":"]
    parts: List[str] = []
    total = 0
    while total < size:
        part = rng.choice(words) + rng.choice(ops)
        parts.append(part)
        total += len(part)
    return {
        "spaces": " " * size,
        "newlines": "\n" * size,
        "carets": "^" * size,
        "zeros": "0" * size,
        "one letter": "a" * size,
        "base64": b64,
        "minified code": "".join(parts)[:size],
    }


# -- the run -----------------------------------------------------------------------------------


@dataclass
class BenchConfig:
    docs: List[str]
    corpus_name: str
    vocab_size: int = 32768
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    repeats: int = 3
    train_timeout: float = 600.0
    pathological_timeout: float = 20.0
    libraries: Optional[List[str]] = None
    skip_training: bool = False
    skip_pathological: bool = False


def _say(message: str, quiet: bool) -> None:
    if not quiet:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()


def _best(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    ok = [r for r in runs if r.get("ok")]
    if not ok:
        return {"ok": False, "error": runs[-1].get("error", "failed"), "timeout": any(r.get("timeout") for r in runs)}
    times = [r["seconds"] for r in ok]
    return {
        "ok": True,
        "seconds": min(times),
        "median_seconds": statistics.median(times),
        "runs": len(ok),
        "peak_bytes": min(r["peak_bytes"] for r in ok),
        "result": ok[0]["result"],
    }


def _timed(fn: Callable[[], Any]) -> Dict[str, Any]:
    """Run ``fn`` here, in this process (for libraries whose thread pools cannot cross a fork)."""
    gc.collect()
    start = time.perf_counter()
    try:
        result = fn()
    except Exception as exc:
        return {"ok": False, "error": _describe(exc)}
    return {"ok": True, "seconds": time.perf_counter() - start, "peak_bytes": 0, "result": result}


def run_bench(config: BenchConfig, quiet: bool = False) -> Dict[str, Any]:
    """Measure everything in ``config``; return the report (see :func:`format_markdown`).

    Training runs in fresh children (:func:`measure_training`); encoding then runs in this
    process; the pathological inputs, encoded one text at a time with the pools switched off,
    run in forked children so that one that never finishes can be stopped.
    """
    import tempfile

    import functionalbpe as fb

    from ..core._native import thread_count

    config.threads = thread_count(config.threads) or os.cpu_count() or 1
    for var in ("RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS"):
        os.environ[var] = str(config.threads)
    docs = config.docs
    n_bytes = sum(len(d.encode("utf-8")) for d in docs)
    wanted = config.libraries or libraries()
    present = [name for name in wanted if installed(name)]
    missing = [name for name in wanted if not installed(name)]
    report: Dict[str, Any] = {
        "machine": machine_info(),
        "versions": library_versions(),
        "corpus": {"name": config.corpus_name, "documents": len(docs), "bytes": n_bytes},
        "vocab_size": config.vocab_size,
        "threads": config.threads,
        "repeats": config.repeats,
        "pattern": PATTERN,
        "pathological_timeout": config.pathological_timeout,
        "skipped": {name: "not installed" for name in missing},
        "training": {},
        "encoding": {},
        "pathological": {},
    }

    if not config.skip_training:
        training = trainers()
        runs: Dict[str, List[Dict[str, Any]]] = {name: [] for name in present if name in training}
        for rep in range(config.repeats):
            for name in runs:
                _say(f"train {name} (run {rep + 1}/{config.repeats}) ...", quiet)
                runs[name].append(measure_training(training[name], docs, config.vocab_size, config.threads,
                                                   config.train_timeout))
        report["training"] = {name: _best(r) for name, r in runs.items()}

    _say("training the tokenizer used for encoding ...", quiet)
    tok = fb.train(docs, vocab_size=config.vocab_size, pattern=PATTERN, progress=False, threads=config.threads)
    with tempfile.TemporaryDirectory() as workdir:
        encoders = build_encoders(docs, tok, config.vocab_size, config.threads, workdir, present)
        names = list(encoders.one)
        enc_runs: Dict[str, Dict[str, List[Dict[str, Any]]]] = {n: {"one": [], "all": []} for n in names}
        for rep in range(config.repeats):
            for name in names:
                _say(f"encode {name} (run {rep + 1}/{config.repeats}) ...", quiet)
                one, batch = encoders.one[name], encoders.batch[name]
                enc_runs[name]["one"].append(_timed(functools.partial(_each, one, docs)))
                enc_runs[name]["all"].append(_timed(functools.partial(batch, docs, config.threads)))
        for name in names:
            entry: Dict[str, Any] = {"note": encoders.notes.get(name, "")}
            for key, best in (("one_thread", _best(enc_runs[name]["one"])), ("all_threads", _best(enc_runs[name]["all"]))):
                if best["ok"]:
                    entry[key] = {
                        "seconds": best["seconds"],
                        "mb_per_s": _per_second(n_bytes / 1e6, best["seconds"]),
                        "tokens": best["result"],
                        "tokens_per_s": _per_second(best["result"], best["seconds"]),
                    }
                else:
                    entry[key] = {"error": best["error"]}
            report["encoding"][name] = entry
        for name, error in encoders.errors.items():
            report["encoding"][name] = {"error": error}

        if not config.skip_pathological:
            os.environ["TOKENIZERS_PARALLELISM"] = "false"
            for label, text in pathological_inputs().items():
                row: Dict[str, Any] = {}
                for name in names:
                    _say(f"pathological {label!r}: {name} ...", quiet)
                    one = encoders.one[name]
                    result = measure(functools.partial(one, text), config.pathological_timeout)
                    row[name] = (
                        {"seconds": result["seconds"], "mb_per_s": _per_second(len(text.encode()) / 1e6, result["seconds"])}
                        if result.get("ok")
                        else {"timeout": bool(result.get("timeout")), "error": result.get("error")}
                    )
                report["pathological"][label] = row
    return report


def _each(encode: Callable[[str], int], docs: Sequence[str]) -> int:
    """Encode the documents one by one (one thread): their tokens in all."""
    return sum(encode(d) for d in docs)


def _per_second(amount: float, seconds: float) -> float:
    return amount / max(seconds, 1e-9)  # a clock that read 0 s must not end the bench


# -- formatting --------------------------------------------------------------------------------


def _ratio(value: Optional[float], ours: Optional[float]) -> str:
    if value is None or ours is None or ours == 0:
        return "—"
    return f"{value / ours:.2f}×"


def format_markdown(report: Dict[str, Any]) -> str:
    m, c = report["machine"], report["corpus"]
    versions = ", ".join(f"{k} {v}" for k, v in report["versions"].items() if v)
    lines = [
        f"Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}. Versions: {versions}.",
        f"Corpus: {c['name']} — {c['documents']} documents, {c['bytes'] / 1e6:.1f} MB. "
        f"Vocabulary {report['vocab_size']}, pattern `{report['pattern']}`, {report['threads']} threads, "
        f"best of {report['repeats']} alternating runs (training in a fresh child process each).",
        "",
    ]
    notes: List[str] = []  # each failure's message, numbered across the tables

    def failed(who: str, message: Optional[str]) -> str:
        notes.append(f"{who}: {message}")
        return f"failed [{len(notes)}]"

    def footnotes(first: int) -> List[str]:
        return [f"[{i}] {e}" for i, e in enumerate(notes[first:], first + 1)]

    if report["training"]:
        ours = report["training"].get("functionalbpe", {})
        first = len(notes)
        lines += [
            "| training | wall time | × functionalbpe | peak memory | × functionalbpe |",
            "|---|---:|---:|---:|---:|",
        ]
        for name, r in sorted(report["training"].items(), key=lambda kv: kv[1].get("seconds", 1e99)):
            if r.get("ok"):
                lines.append(
                    f"| {name} | {r['seconds']:.2f} s | {_ratio(r['seconds'], ours.get('seconds'))} | "
                    f"{r['peak_bytes'] / 1e6:.0f} MB | {_ratio(r['peak_bytes'], ours.get('peak_bytes'))} |"
                )
            else:
                cell = "timeout" if r.get("timeout") else failed(f"{name} training", r.get("error"))
                lines.append(f"| {name} | {cell} | | | |")
        lines += footnotes(first) + [""]
    if report["encoding"]:
        ours = report["encoding"].get("functionalbpe", {})
        first = len(notes)
        lines += [
            "| encoding | 1 thread MB/s | tokens/s | × functionalbpe | all threads MB/s | × functionalbpe | |",
            "|---|---:|---:|---:|---:|---:|---|",
        ]
        for name, r in report["encoding"].items():
            if "error" in r:  # the peer could not even be set up
                lines.append(f"| {name} | {failed(f'{name} encoder', r['error'])} | | | | | |")
                continue
            one, many = r.get("one_thread", {}), r.get("all_threads", {})
            cells = []
            for what, run, base in (("one thread", one, ours.get("one_thread", {})), ("all threads", many, ours.get("all_threads", {}))):
                if "error" in run:
                    cells.append(failed(f"{name} encoding on {what}", run["error"]))
                    cells += [""] if what == "all threads" else ["", ""]
                    continue
                cells.append(f"{run.get('mb_per_s', 0):.1f}")
                if what == "one thread":
                    cells.append(f"{run.get('tokens_per_s', 0) / 1e6:.2f} M")
                cells.append(_ratio(run.get("mb_per_s"), base.get("mb_per_s")))
            lines.append(f"| {name} | " + " | ".join(cells) + f" | {r.get('note', '')} |")
        lines += footnotes(first) + [""]
    if report["pathological"]:
        names = list(next(iter(report["pathological"].values())).keys())
        first = len(notes)
        lines += ["| 1 MB of | " + " | ".join(f"{n} MB/s" for n in names) + " |", "|---|" + "---:|" * len(names)]
        for label, row in report["pathological"].items():
            cells = []
            for n in names:
                r = row[n]
                if "mb_per_s" in r:
                    cells.append(f"{r['mb_per_s']:.1f}")
                elif r.get("timeout"):
                    cells.append(f"timeout ({report.get('pathological_timeout', 0):.0f} s)")
                else:
                    cells.append(failed(f"{n} on {label}", r.get("error")))
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines += footnotes(first) + [""]
    if report["skipped"]:
        lines.append("Skipped: " + ", ".join(f"{k} ({v})" for k, v in report["skipped"].items()) + ".")
    return "\n".join(lines) + "\n"


def format_markdown_all(reports: Sequence[Dict[str, Any]]) -> str:
    """The tables of each corpus's report, under a heading naming the corpus when there are
    several."""
    if len(reports) == 1:
        return format_markdown(reports[0])
    return "\n".join(map(format_markdown_of_corpus, reports))


def format_markdown_of_corpus(report: Dict[str, Any]) -> str:
    """One corpus's tables under a heading naming it (what the command prints as each corpus
    is done)."""
    return f"### {report['corpus']['name']}\n\n" + format_markdown(report)


def write_json(reports: Sequence[Dict[str, Any]], path: str) -> None:
    """``{"reports": [...]}``: one report per corpus, in the order they were given."""
    from ..util.output import atomic_write_text

    atomic_write_text(path, json.dumps({"reports": list(reports)}, indent=1, ensure_ascii=False) + "\n")
