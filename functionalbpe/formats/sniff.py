"""Which library a tokenizer file (or directory) comes from, read from its first bytes, and
the reader of each: the one place a format to read is registered.

The loaders each read one format; this says which one a path holds, so that a file given to
the wrong loader gets the name of the right one, and ``Tokenizer.from_file`` and the
command's ``--tokenizer`` take any of them (:func:`read_other`). :func:`kind_of` reads at
most :data:`SNIFF_BYTES` and parses nothing.

    >>> import json, os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "tokenizer.json"), "w").write(json.dumps({"model": {"type": "BPE"}}))
    >>> kind_of(d), kind_of(os.path.join(d, "tokenizer.json"))
    ('hf', 'hf')
"""
from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Optional

from ..errors import FunctionalBPEError, TokenizerFileError
from ..util.checks import PathLike

if TYPE_CHECKING:  # pragma: no cover
    from .imported import Imported

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


def read_other(path: "os.PathLike[str] | str", pattern: Optional[str] = None) -> "Optional[Imported]":
    """The vocabulary in another library's file, known by its form (:func:`kind_of`): a
    tiktoken rank file (``pattern`` is for it alone, as every other file holds its own), an
    HF ``tokenizer.json`` or its directory, GPT-2's ``encoder.json`` and ``vocab.bpe`` side by
    side (either file, or their directory); None for a file of ours (or of no known form:
    ``Tokenizer.load`` says what is wrong with it). Each reader is imported when its form is
    met."""
    name = os.fspath(path)
    kind = kind_of(name)
    if kind == "tiktoken":
        from .tiktoken import read_tiktoken

        return read_tiktoken(name, pattern, None)
    if pattern is not None:
        raise FunctionalBPEError(
            f"{name}: a pattern is given only with a tiktoken rank file, which holds none; this file "
            "holds its own"
        )
    if kind == "hf":
        from .hf import read_hf

        return read_hf(name)
    if kind == "gpt2":
        from .hf import read_gpt2

        folder = name if os.path.isdir(name) else os.path.dirname(name) or "."
        encoder, merges = os.path.join(folder, "encoder.json"), os.path.join(folder, "vocab.bpe")
        if not (os.path.isfile(encoder) and os.path.isfile(merges)):
            raise TokenizerFileError(f"{name}: GPT-2's files are encoder.json and vocab.bpe side by side; {folder} lacks one")
        return read_gpt2(encoder, merges)
    return None
