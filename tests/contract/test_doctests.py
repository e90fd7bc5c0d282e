"""Every example in the package's docstrings runs and gives what it shows (the docstrings
teach, so they must be right). An example that uses an optional library is skipped where
that library is not installed."""
from __future__ import annotations

import doctest
import importlib
import inspect
import importlib.util
import pkgutil

import pytest

import functionalbpe

OPTIONAL = ("tiktoken", "tokenizers", "transformers", "sentencepiece", "matplotlib", "dask", "distributed",
            "playwright")


def module_names():
    names = [functionalbpe.__name__]
    for info in pkgutil.walk_packages(functionalbpe.__path__, functionalbpe.__name__ + "."):
        if not info.name.rsplit(".", 1)[-1].startswith("_"):  # compiled modules: csrc's own tests
            names.append(info.name)
    return sorted(names)


def missing_library(test: doctest.DocTest) -> "str | None":
    source = "".join(example.source for example in test.examples)
    for library in OPTIONAL:
        uses = f"import {library}" in source or (library == "transformers" and "to_transformers" in source)
        if uses and importlib.util.find_spec(library) is None:
            return library
    return None


@pytest.mark.parametrize("name", module_names())
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as e:  # a module that is the home of an optional library
        if e.name not in OPTIONAL:
            raise
        pytest.skip(f"{name} needs {e.name}, not installed")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    ran = 0
    for test in doctest.DocTestFinder().find(module, name):
        if test.examples and missing_library(test) is None:
            runner.run(test)
            ran += 1
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of the examples in {name} fail (run: python -m pytest --doctest-modules {name.replace('.', '/')}.py)"


def test_every_public_function_and_class_has_an_example():
    """The public API's functions, classes and Tokenizer's methods each show one example
    (the exceptions are described by their one-line docstrings)."""
    missing = []
    for name in functionalbpe.__all__:
        obj = getattr(functionalbpe, name)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and not issubclass_exception(obj):
            if ">>>" not in (inspect.getdoc(obj) or ""):
                missing.append(name)
    for name, member in inspect.getmembers(functionalbpe.Tokenizer):
        if name.startswith("_") and name != "__len__":
            continue
        if ">>>" not in (inspect.getdoc(member) or ""):
            missing.append(f"Tokenizer.{name}")
    assert not missing, f"no example in the docstring of {missing}"


def issubclass_exception(obj: object) -> bool:
    return inspect.isclass(obj) and issubclass(obj, BaseException)
