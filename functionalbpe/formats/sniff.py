"""Which library a tokenizer file (or directory) comes from, read from its first bytes.

The loaders each read one format; this says which one a path holds, so that a file given to
the wrong loader gets the name of the right one, and the command's ``--tokenizer`` takes
any of them. It reads at most :data:`SNIFF_BYTES` and parses nothing.

    >>> import json, os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "tokenizer.json"), "w").write(json.dumps({"model": {"type": "BPE"}}))
    >>> kind_of(d), kind_of(os.path.join(d, "tokenizer.json"))
    ('hf', 'hf')
"""
from __future__ import annotations

import os
import re
from typing import Optional

from ..util.checks import PathLike

SNIFF_BYTES = 1 << 16

# What each kind is loaded with, for messages.
LOADERS = {
    "functionalbpe": "functionalbpe.Tokenizer.load(path)",
    "hf": "functionalbpe.Tokenizer.from_hf(path)",
    "tiktoken": "functionalbpe.Tokenizer.from_tiktoken(path)",
    "gpt2": "functionalbpe.Tokenizer.from_gpt2(encoder_json, vocab_bpe)",
}

_RANK_LINE = re.compile(rb"[A-Za-z0-9+/]+=* \d+\r?\n")


def kind_of(path: PathLike) -> Optional[str]:
    """``"functionalbpe"``, ``"hf"``, ``"tiktoken"``, ``"gpt2"`` (GPT-2's ``encoder.json`` or
    ``vocab.bpe``, or a directory holding both) or None when it is none of them."""
    name = os.fspath(path)
    if os.path.isdir(name):
        if os.path.isfile(os.path.join(name, "tokenizer.json")):
            return "hf"
        if all(os.path.isfile(os.path.join(name, f)) for f in ("encoder.json", "vocab.bpe")):
            return "gpt2"
        return None
    if not os.path.isfile(name):  # a device or a pipe is not opened here: the loader refuses it
        return None
    try:
        with open(name, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError:
        return None
    text = head.lstrip()
    if text.startswith(b"{"):
        if re.search(rb'"format"\s*:\s*"functionalbpe/', head):
            return "functionalbpe"
        if re.search(rb'"model"\s*:\s*\{', head):
            return "hf"
        return "gpt2" if re.match(rb'\{\s*"[^"]*"\s*:\s*\d', text) else None
    if text.startswith(b"#version"):
        return "gpt2"
    return "tiktoken" if _RANK_LINE.match(text) else None
