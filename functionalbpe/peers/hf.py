"""HF tokenizers and transformers: the report's adapter, the bench's hooks, transformers' objects.

The ``tokenizer.json`` itself is written and read as plain data in :mod:`functionalbpe.formats.hf`;
this module is the one that imports ``tokenizers`` and ``transformers``. What the report
reads is any ``tokenizer.json`` — byte-level BPE, byte fallback, Metaspace, WordPiece, Unigram.
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Set

from ..errors import FunctionalBPEError, TokenizerFileError
from .face import PathLike, ReportTokenizer, byte_piece, require, text_surfaces
from ..text.patterns import PATTERNS
from ..formats import bytelevel
from ..formats.hf import transformers_config
from .base import EncoderParts, Peer

# -- tokenizer.json -------------------------------------------------------------------------


def transformers_tokenizer(document: Dict[str, Any], roles: Dict[str, Optional[str]], model_max_length: Optional[int]) -> Any:
    """A transformers ``PreTrainedTokenizerFast`` over ``document``, with the named roles."""
    transformers = require("transformers", "to_transformers", extra="hf")
    tokenizers = require("tokenizers", "to_transformers", extra="hf")
    specials = {entry["content"]: entry["id"] for entry in document["added_tokens"]}
    _, special_map = transformers_config(specials, roles, model_max_length)
    options: Dict[str, Any] = dict(special_map)
    if model_max_length is not None:
        options["model_max_length"] = model_max_length
    backend = tokenizers.Tokenizer.from_str(json.dumps(document))
    return transformers.PreTrainedTokenizerFast(tokenizer_object=backend, clean_up_tokenization_spaces=False, **options)


# -- reading a tokenizer.json ---------------------------------------------------------------


# -- the report -------------------------------------------------------------------------------


def _has_component(config: Any, kind: str) -> bool:
    """Is a component of type ``kind`` anywhere in this part of a tokenizer.json?"""
    if isinstance(config, dict):
        return config.get("type") == kind or any(_has_component(v, kind) for v in config.values())
    if isinstance(config, list):
        return any(_has_component(v, kind) for v in config)
    return False


class HFTokenizer(ReportTokenizer):
    """A Hugging Face ``tokenizers.Tokenizer`` (from a ``tokenizer.json`` or given)."""

    kind = "hf"
    json_field = "model"
    file_help = "an HF tokenizer.json"

    def __init__(self, tokenizer: Any, name: str = "tokenizer.json") -> None:
        self.hf = tokenizer
        self.name = name
        config = json.loads(tokenizer.to_str())
        model = config.get("model") or {}
        self.model_type = model.get("type", "?")
        self.byte_level = _has_component(config.get("pre_tokenizer"), "ByteLevel") or _has_component(
            config.get("decoder"), "ByteLevel"
        )
        self.byte_fallback = bool(model.get("byte_fallback"))
        self.normalized = config.get("normalizer") is not None
        self.space_marker = "▁" if (
            _has_component(config.get("pre_tokenizer"), "Metaspace") or _has_component(config.get("decoder"), "Metaspace")
            or self.model_type == "Unigram"
        ) else None
        self.wordpiece_prefix = model.get("continuing_subword_prefix") if self.model_type == "WordPiece" else None
        unk = model.get("unk_token")
        if isinstance(unk, int):  # Unigram stores the unknown token's id
            self._unknown = {unk}
        else:
            unk_id = tokenizer.token_to_id(unk) if unk else None
            self._unknown = {unk_id} if unk_id is not None else set()

    @classmethod
    def from_file(cls, path: PathLike, pattern: Optional[str] = None) -> "HFTokenizer":
        tokenizers = require("tokenizers", "reading an HF tokenizer.json")
        try:
            return cls(tokenizers.Tokenizer.from_file(os.fspath(path)), name=os.fspath(path))
        except Exception as exc:  # the library raises its own exception types
            if isinstance(exc, FunctionalBPEError):
                raise
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise TokenizerFileError(f"{path}: the tokenizers library cannot read it: {message}") from None

    @property
    def vocab_size(self) -> int:
        return self.hf.get_vocab_size(with_added_tokens=True)

    def encode(self, text: str) -> List[int]:
        return self.hf.encode(text, add_special_tokens=False).ids

    def special_ids(self) -> Set[int]:
        return {i for i, added in self.hf.get_added_tokens_decoder().items() if added.special}

    def unknown_ids(self) -> Set[int]:
        return set(self._unknown)

    def _pieces(self) -> Dict[int, str]:
        special = self.special_ids()
        return {i: t for t, i in self.hf.get_vocab(with_added_tokens=True).items() if i not in special}

    def byte_tokens(self) -> Dict[int, int]:
        out: Dict[int, int] = {}
        alphabet = bytelevel.unicode_to_bytes() if self.byte_level else {}
        for token, piece in self._pieces().items():
            if self.byte_level and len(piece) == 1 and piece in alphabet:
                out[token] = alphabet[piece]
            elif self.byte_fallback:
                byte = byte_piece(piece)
                if byte is not None:
                    out[token] = byte
        return out

    def surfaces(self) -> Dict[int, str]:
        pieces = self._pieces()
        byte_ids = self.byte_tokens()
        if self.byte_level:
            table = {}
            for token, piece in pieces.items():
                data = bytelevel.read(piece) if token not in self._unknown else None
                if data is not None:
                    table[token] = data
            return text_surfaces(table)
        out: Dict[int, str] = {}
        for token, piece in pieces.items():
            if token in byte_ids or token in self._unknown:
                continue
            if self.space_marker:
                piece = piece.replace(self.space_marker, " ")
            if self.wordpiece_prefix is not None:
                if piece.startswith(self.wordpiece_prefix):
                    piece = piece[len(self.wordpiece_prefix):]
                else:
                    piece = " " + piece
            if len(piece) >= 2:
                out[token] = piece
        return out

    def decode(self, ids: List[int]) -> Optional[str]:
        return self.hf.decode(ids, skip_special_tokens=False)

    def piece(self, token: int) -> Optional[str]:
        # With Metaspace (▁ for a space) the vocabulary's string shows where words begin;
        # byte-level vocabularies are shown from their bytes instead.
        return self.hf.id_to_token(token) if self.space_marker else None

    def can_decode(self) -> bool:
        return True

    def token_lengths(self) -> Optional[List[int]]:
        # Byte-level BPE spells the text's bytes, unless a normalizer rewrites the text first
        # (a pre-tokenizer that adds a leading space shows up as a unit whose lengths do not
        # add up, which the report then leaves out of the boundary measures).
        if not self.byte_level or self.normalized:
            return None
        lengths = [0] * self.vocab_size
        for token, piece in self._pieces().items():
            data = bytelevel.read(piece)
            if data is not None and 0 <= token < self.vocab_size:
                lengths[token] = len(data)
        return lengths

    def describe(self) -> str:
        how = "byte-level" if self.byte_level else ("byte fallback" if self.byte_fallback else "no byte fallback")
        return f"HF tokenizers {self.model_type} ({how}), {self.vocab_size} ids"


# -- the bench --------------------------------------------------------------------------------


def _threads(threads: int) -> None:
    os.environ["RAYON_RS_NUM_CPUS"] = str(threads)
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    os.environ["TOKENIZERS_PARALLELISM"] = "true" if threads > 1 else "false"


def bench_train(docs: Sequence[str], vocab_size: int, threads: int, pattern: str) -> Callable[[], Any]:
    """Byte-level BPE with our pattern as a Split pre-tokenizer, as ``to_hf`` writes it."""

    def run() -> Any:
        _threads(threads)
        from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(PATTERNS[pattern]), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        )
        tok.train_from_iterator(docs, trainer)
        return tok.get_vocab_size()

    return run


def bench_encoder(docs: Sequence[str], tok: Any, vocab_size: int, threads: int, workdir: str) -> EncoderParts:
    """HF loading our ``to_hf`` export: our ranks, so the same ids."""
    from tokenizers import Tokenizer as HF

    path = os.path.join(workdir, "tokenizer.json")
    tok.to_hf(path)
    hf = HF.from_file(path)

    def hf_batch(texts: List[str], k: int) -> int:
        return sum(len(e.ids) for e in hf.encode_batch(texts, add_special_tokens=False))

    return lambda text: len(hf.encode(text, add_special_tokens=False).ids), hf_batch, "our ranks via to_hf"


PEER = Peer(
    name="tokenizers",
    module="tokenizers",
    adapter=HFTokenizer,
    train=bench_train,
    encoder=bench_encoder,
)
