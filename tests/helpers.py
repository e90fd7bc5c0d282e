"""Shared text and strategies for the tests. The oracle for training is the lesson,
functionalbpe.core.reference (tests/core/test_reference.py checks the trainers against it)."""
from __future__ import annotations

import glob
import os
import sysconfig
import unicodedata
from typing import List

try:
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover
    st = None


def hf_export(tok, directory):
    """HF tokenizers' reading of ``tok.to_hf`` (skipped without tokenizers)."""
    import pytest

    tokenizers = pytest.importorskip("tokenizers")
    path = directory / "tokenizer.json"
    tok.to_hf(path)
    return tokenizers.Tokenizer.from_file(str(path))


def stdlib_text(max_bytes: int) -> List[str]:
    """Documents from this Python's standard library: real text every machine has."""
    root = sysconfig.get_paths()["stdlib"]
    out, total = [], 0
    for path in sorted(glob.glob(os.path.join(root, "**", "*.py"), recursive=True)):
        if "site-packages" in path:
            continue
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8", "replace")
        out.append(text)
        total += len(text.encode("utf-8"))
        if total >= max_bytes:
            break
    return out


if st is not None:
    # Text that hits the corners: overlaps, private use, marks, emoji, odd whitespace.
    TRICKY = (
        "aab ", "  ", "\n", "\r", "\t", "'s", "'LL", "0123456789", "é", "e\u0301", "\u0301\u0308",
        "İ", "ß", "ẞ", "ǅ", "Σς", "中文", "日本語", "한국어", "ไทย", "عربي", "😀", "👍🏽", "\ue000",
        "\ue100", "\ue2ff", "\ue300", "¦", "↑", "⇑", "\u00a0", "\u2028", "<|endoftext|>", "A",
        "Hello", "HELLO", "x" * 300, "#" * 7, "abcabcabc",
    )
    tricky_text = st.lists(
        st.one_of(st.sampled_from(TRICKY), st.text(max_size=8)), max_size=20
    ).map("".join)
    # tricky_text for comparing ids with another library: without the code points Python's
    # Unicode (14.0) leaves unassigned. Our scanners classify characters as the installed
    # regex does (docs/pretokenization.md, "Unicode version"), which knows a newer Unicode
    # than tiktoken's and HF's regex engines: a character one calls a letter and the other
    # unassigned is cut differently, a difference of Unicode versions, not of BPE.
    peer_text = tricky_text.map(lambda t: "".join(c for c in t if unicodedata.category(c) != "Cn"))
    tiny_corpus = st.lists(st.text(alphabet="aab ", max_size=30), max_size=12)
