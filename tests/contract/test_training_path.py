"""``train()`` is one straight line: each stage takes a value and hands one on, and no stage
calls back into another stage's module.

The check traces a real ``fb.train`` for every scheme (by name and as an object): every
Python frame entered in the package is recorded with the stack of stages it runs under. A
*stage* is a call made by ``training.py`` into another module (resolving the scheme,
counting, the scheme's transform, the trainer, building the Tokenizer). Two properties:

1. the stages' modules come in one order and none comes back after another has started
   (consecutive calls into one module are one visit);
2. no stage enters a module that belongs to another stage. Exempt are the leaves every
   stage may use (checking values, errors, progress bars, the native seam, the alphabet,
   the counted table, the caches, the patterns) and the scheme's own modules: the scheme
   object travels along the line (counting asks it for raw pieces, the trainer never sees
   it, the Tokenizer keeps it).

It also checks, in the source, that no code picks a path by comparing methods
(``type(x).f is Y.f``) and that the encoder reads the schemes' declared capabilities
without ``getattr`` or ``# type: ignore``.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Dict, List, Set

import pytest

import functionalbpe as fb

PACKAGE = Path(fb.__file__).resolve().parent

# Leaves: modules every stage may use without calling back into another stage.
LEAVES = {
    "util/checks", "errors", "util/progress", "core/limits", "core/_native", "core/alphabet", "core/piecetable",
    "core/cache", "text/patterns", "unicode/pattern_limits", "unicode/charclasses", "unicode/markerclasses",
}
# The scheme's own modules: it is the value the line carries.
SCHEME_MODULES = {"schemes/base", "schemes/plain", "schemes/functional", "schemes/markers", "schemes/textform"}

CORPUS = [
    "The Quick Brown Fox jumps over the lazy dog. THE END!!! Ünïcödé façade, naïve café.\n",
    "    def main():\n        return 1234567 + 89 ######\n\tx = 'don't' ha ha ha ha\n",
    "Ash caught 3 fish, and Brock caught 12. Wow... 😀 中文 日本語 \ue123 private use.\n",
] * 4


def module_of(filename: str) -> str:
    path = Path(filename).resolve()
    try:
        rel = path.relative_to(PACKAGE)
    except ValueError:
        return ""
    return str(rel.with_suffix("")).replace(os.sep, "/")


def trace_train(**options) -> List[Dict[str, object]]:
    """The stages of one ``fb.train(CORPUS, ...)``: for each call made from training.py into
    another module of the package, that module and every package module entered under it."""
    stages: List[Dict[str, object]] = []
    stack: List[str] = []
    # The index in `stages` of the stage running at each depth of `stack` (-1: none yet).
    owner: List[int] = []

    def profile(frame, event, arg):
        if event == "call":
            module = module_of(frame.f_code.co_filename)
            current = owner[-1] if owner else -1
            if module and stack and stack[-1] == "training" and module != "training":
                stages.append({"module": module, "entered": {module}})
                current = len(stages) - 1
            elif module and current >= 0:
                stages[current]["entered"].add(module)  # type: ignore[union-attr]
            stack.append(module or (stack[-1] if stack else ""))
            owner.append(current)
        elif event == "return" and stack:
            stack.pop()
            owner.pop()

    sys.setprofile(profile)
    try:
        tok = fb.train(CORPUS, vocab_size=None, progress=False, **options)
    finally:
        sys.setprofile(None)
    assert tok.decode(tok.encode(CORPUS[0])) == CORPUS[0]
    return stages


SCHEMES = {
    "plain by name": dict(scheme="plain"),
    "plain, custom pattern": dict(scheme="plain", pattern=r"\w+|\s+|[^\w\s]+"),
    "functional by name": dict(scheme="functional"),
    "functional joining runs": dict(scheme="functional", pattern="gpt4"),
    "functional, NFC": dict(scheme="functional", normalize="NFC"),
    "markers by name": dict(scheme="markers", punct=True, digits=True, case=True),
    "Functionalizer object": dict(scheme=fb.Functionalizer(split_operators=False)),
    "BoundaryMarkers object": dict(scheme=fb.BoundaryMarkers(punct=True, case=True)),
}


@pytest.mark.parametrize("options", list(SCHEMES.values()), ids=list(SCHEMES))
@pytest.mark.parametrize("backend", ["auto", "python"])
def test_train_passes_through_each_module_once(options, backend):
    stages = trace_train(backend=backend, **options)
    order = [s["module"] for s in stages]
    visits = [m for k, m in enumerate(order) if k == 0 or order[k - 1] != m]
    # 1. One visit per stage module (leaves may be called whenever they are needed).
    line = [m for m in visits if m not in LEAVES]
    assert len(line) == len(set(line)), f"a stage module is visited twice: {visits}"
    # The line itself: the scheme is resolved, the corpus counted, the table transformed,
    # the merges learned, the tokenizer built, in that order.
    assert [m for m in line if m not in SCHEME_MODULES] == [
        "schemes/registry", "text/counting", "core/trainer", "tokenizer"
    ], visits
    transform = [k for k, s in enumerate(stages) if s["module"] in SCHEME_MODULES]
    counting = order.index("text/counting")
    assert transform and all(k > counting for k in transform) and max(transform) < order.index("core/trainer")
    # 2. No stage enters another stage's module.
    stage_modules: Set[str] = {m for m in order if m not in LEAVES | SCHEME_MODULES}
    for stage in stages:
        foreign = (stage["entered"] - {stage["module"]}) & stage_modules  # type: ignore[operator]
        assert not foreign, f"{stage['module']} calls into {sorted(foreign)}"
    # The trainer never sees the scheme; counting asks it for pieces only in Python.
    trainer = [s for s in stages if s["module"] == "core/trainer"]
    assert all(not (s["entered"] & SCHEME_MODULES) for s in trainer)  # type: ignore[operator]


def test_a_scheme_object_gives_the_tokenizer_of_its_name():
    corpus = CORPUS * 5
    for cls, name, options in (
        (fb.BoundaryMarkers, "markers", dict(punct=True, digits=True, case=True)),
        (fb.Functionalizer, "functional", dict(case=True, diacritics=False, split_operators=False)),
    ):
        by_object = fb.train(corpus, vocab_size=600, scheme=cls(**options), progress=False)
        by_name = fb.train(corpus, vocab_size=600, scheme=name, progress=False, **options)
        assert by_object == by_name and len(by_object.merges) > 50
    with pytest.raises(fb.FunctionalBPEError, match="scheme object"):
        fb.train(corpus, vocab_size=600, scheme=fb.BoundaryMarkers(), punct=True, progress=False)


def _sources():
    return [(p, p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.rglob("*.py"))]


def test_no_path_is_chosen_by_comparing_methods():
    identity = re.compile(r"type\([^)]*\)\.\w+\s+is\s+")
    assert identity.search("if type(scheme).count is PlainScheme.count:")  # what it finds
    found = [f"{p.relative_to(PACKAGE)}: {m.group()}" for p, text in _sources() for m in identity.finditer(text)]
    assert not found


def test_the_encoder_reads_declarations_not_attributes():
    text = (PACKAGE / "core" / "encoder.py").read_text(encoding="utf-8")
    assert "getattr(" not in text and "type: ignore" not in text and "hasattr(" not in text
    for path in ("training.py", "text/counting.py", "schemes/base.py"):
        source = (PACKAGE / path).read_text(encoding="utf-8")
        assert "getattr(" not in source and "hasattr(" not in source, path
