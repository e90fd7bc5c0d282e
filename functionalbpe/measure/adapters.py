"""Every tokenizer the report measures, behind one face: ours, and each peer library's.

The face is :class:`~functionalbpe.peers.face.ReportTokenizer`; this module holds ours
(:class:`FunctionalBPETokenizer`) and chooses the adapter for an object or a file: ours for a
:class:`Tokenizer` or a functionalbpe ``.json``, else the peer library's adapter
(:mod:`functionalbpe.peers.registry`) by the object's module or the file's kind.

Example::

    >>> import functionalbpe as fb
    >>> tok = as_report_tokenizer(fb.train(["ab ab"], vocab_size=258, pattern="gpt2", progress=False))
    >>> tok.kind, tok.encode("ab ab"), tok.surfaces()
    ('functionalbpe', [256, 257], {256: 'ab', 257: ' ab'})
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Set

from ..errors import FunctionalBPEError, TokenizerFileError
from ..peers.registry import ADAPTERS, PEERS
from ..tokenizer import Tokenizer
from ..peers.face import PathLike, ReportTokenizer


class FunctionalBPETokenizer(ReportTokenizer):
    """One of our tokenizers (any scheme)."""

    kind = "functionalbpe"
    tokenizer: Tokenizer

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer

    @classmethod
    def from_file(cls, path: PathLike, pattern: Optional[str] = None) -> "FunctionalBPETokenizer":
        return cls(Tokenizer.load(path))

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.vocab_size

    def encode(self, text: str) -> List[int]:
        return self.tokenizer.encode_ordinary(text)

    def special_ids(self) -> Set[int]:
        return set(self.tokenizer.special_tokens.values())

    def byte_tokens(self) -> Dict[int, int]:
        return {i: i for i in range(256)}

    def surfaces(self) -> Dict[int, str]:
        # Only merged entries: the bytes and the scheme's atoms are the fixed alphabet.
        alphabet = self.tokenizer.alphabet
        table = alphabet.all_token_bytes()
        show = self.tokenizer.scheme.show
        out: Dict[int, str] = {}
        for token in range(alphabet.first_merge, alphabet.first_special):
            try:
                out[token] = show(table[token].decode("utf-8"))
            except UnicodeDecodeError:
                continue
        return out

    def merge_counts(self) -> Optional[List[int]]:
        counts = self.tokenizer.merge_counts
        return list(counts) if counts is not None else None

    def decode(self, ids: List[int]) -> Optional[str]:
        return self.tokenizer.decode(ids, errors="replace")

    def can_decode(self) -> bool:
        return True

    def token_lengths(self) -> Optional[List[int]]:
        # Only where the pieces are the text itself: a scheme that rewrites text (atoms, case
        # instructions) or normalizes it has tokens that are not the text's bytes.
        scheme = self.tokenizer.scheme
        if not scheme.compiled().identity or scheme.normalize is not None:
            return None
        return [self._length(i) for i in range(self.vocab_size)]

    def _length(self, token: int) -> int:
        """A token's bytes; 0 for an id no token has (an imported vocabulary's gaps)."""
        try:
            return len(self.tokenizer.token_bytes(token))
        except FunctionalBPEError:
            return 0

    def marker_ids(self) -> Set[int]:
        alphabet = self.tokenizer.alphabet
        return set(range(alphabet.first_merge - len(alphabet.atoms), alphabet.first_merge))

    def describe(self) -> str:
        tok = self.tokenizer
        options = ", ".join(f"{k}={v}" for k, v in tok.scheme.options().items())
        return (
            f"functionalbpe {tok.scheme.name} scheme{f' ({options})' if options else ''}, pattern "
            f"{tok.scheme.pattern_name}, {tok.vocab_size} ids ({len(tok.alphabet.merges)} merges)"
        )


def as_report_tokenizer(obj: Any, pattern: Optional[str] = None) -> ReportTokenizer:
    """Wrap a tokenizer object or load a tokenizer file for the report.

    Accepts an adapter, our :class:`Tokenizer`, a ``tiktoken.Encoding``, a
    ``tokenizers.Tokenizer``, a ``sentencepiece.SentencePieceProcessor``, or a path:
    ``*.tiktoken`` (needs ``pattern``), ``*.model`` (SentencePiece), ``*.json`` (ours when
    its ``format`` says so, else HF).
    """
    if isinstance(obj, ReportTokenizer):
        return obj
    if isinstance(obj, Tokenizer):
        return FunctionalBPETokenizer(obj)
    if isinstance(obj, (str, os.PathLike)):
        return load_tokenizer(obj, pattern)
    module = type(obj).__module__.split(".")[0]
    for peer in PEERS.values():
        if peer.adapter is not None and peer.module == module:
            return peer.adapter(obj)
    raise FunctionalBPEError(
        f"cannot measure a {type(obj).__name__}: give a functionalbpe.Tokenizer, a tiktoken Encoding, "
        "a tokenizers.Tokenizer, a SentencePieceProcessor, or a tokenizer file"
    )


def load_tokenizer(path: PathLike, pattern: Optional[str] = None) -> ReportTokenizer:
    """Load a tokenizer file by its kind (see :func:`as_report_tokenizer`)."""
    text = os.fspath(path)
    for adapter in ADAPTERS.values():
        if adapter.suffix and text.endswith(adapter.suffix):
            return adapter.from_file(text, pattern)
    if not Path(text).is_file():
        raise TokenizerFileError(f"{text}: no such file")
    payload = _json_object(text)
    if "format" in payload:
        return FunctionalBPETokenizer.from_file(text)
    for adapter in ADAPTERS.values():
        if adapter.json_field and adapter.json_field in payload:
            return adapter.from_file(text, pattern)
    raise TokenizerFileError(
        f"{text}: not a tokenizer file this report reads: expected a functionalbpe tokenizer (.json with "
        '"format"), an HF tokenizer.json (with "model"), a .tiktoken rank file or a SentencePiece .model'
    )


def _json_object(path: str) -> Dict[str, Any]:
    """The top-level object of a JSON file; ``{}`` for a file that is not one."""
    from ..formats.reading import read_json

    payload = read_json(path, "tokenizer file")
    return payload if isinstance(payload, dict) else {}
