"""docs/tutorial.md runs: every example in it is a doctest, and every code block has one."""
from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

TUTORIAL = Path(__file__).resolve().parent.parent.parent / "docs" / "tutorial.md"


def test_every_code_block_is_run():
    blocks = re.findall(r"```python\n(.*?)```", TUTORIAL.read_text(encoding="utf-8"), re.S)
    assert blocks
    for block in blocks:
        assert block.lstrip().startswith(">>> "), block[:80]


def test_tutorial_runs(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")  # the figure
    monkeypatch.chdir(tmp_path)  # what the examples write lands here
    result = doctest.testfile(str(TUTORIAL), module_relative=False, verbose=False, report=True,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed (see above)"
    assert (tmp_path / "merge_counts.png").stat().st_size > 1000
    assert (tmp_path / "explorer.html").read_text(encoding="utf-8").count("data-token-id") >= 1
