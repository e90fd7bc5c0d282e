"""What the tables, the measures' visibility rules and the page read of a report.

A Protocol, so that those modules take a report without importing the module that makes
one (:class:`functionalbpe.measure.report.Report` is the one that does).

    >>> import functionalbpe as fb
    >>> tok = fb.train(["hello world"] * 5, vocab_size=260, progress=False)
    >>> r: ReportView = fb.report(tok, "hello world", progress=False)
    >>> r.baseline
    'functionalbpe'
"""
from __future__ import annotations

from typing import Any, Dict, List, Protocol

from .tally import TextCounts


class ReportView(Protocol):
    """A report's figures, as its tables and page show them."""

    settings: Dict[str, Any]
    tokenizers: Dict[str, Any]
    text_counts: Dict[str, TextCounts]

    @property
    def baseline(self) -> str: ...

    def corpus_order(self) -> List[str]: ...

    def corpus_rows(self) -> List[Dict[str, Any]]: ...

    def results(self) -> List[Dict[str, Any]]: ...

    def totals(self) -> List[Dict[str, Any]]: ...

    def tokenizer_rows(self) -> List[Dict[str, Any]]: ...

    def example(self) -> Dict[str, Any]: ...
