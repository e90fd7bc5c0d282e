"""SentencePiece: the report's adapter for ``.model`` files, and the bench's hooks.

SentencePiece has no regex pre-tokenizer: the bench trains its BPE on lines, with the options
of :data:`BENCH_OPTIONS` (written once, here, for the trainer the bench times and for the
model whose encoder it times), chosen to come as close to byte-level BPE on raw text as it
allows: byte fallback, every character covered, no normalization, digits split, white space
kept as it is.

Example::

    >>> BENCH_OPTIONS["model_type"], BENCH_OPTIONS["byte_fallback"]
    ('bpe', True)
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set

from ..errors import TokenizerFileError
from .face import PathLike, ReportTokenizer, byte_piece, require
from .base import EncoderParts, Peer

# -- the report -------------------------------------------------------------------------------


class SentencePieceTokenizer(ReportTokenizer):
    """A ``sentencepiece.SentencePieceProcessor`` (from a ``.model`` file or given)."""

    kind = "sentencepiece"
    suffix = ".model"
    file_help = "a SentencePiece .model"

    def __init__(self, processor: Any, name: str = "model") -> None:
        self.sp = processor
        self.name = name

    @classmethod
    def from_file(cls, path: PathLike, pattern: Optional[str] = None) -> "SentencePieceTokenizer":
        spm = require("sentencepiece", "reading a SentencePiece .model")
        if not Path(path).is_file():
            raise TokenizerFileError(f"{path}: no such file")
        processor = spm.SentencePieceProcessor()
        try:
            processor.Load(os.fspath(path))
        except Exception as exc:  # sentencepiece raises OSError or RuntimeError
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise TokenizerFileError(f"{path}: sentencepiece cannot read it: {message}") from None
        return cls(processor, name=os.fspath(path))

    @property
    def vocab_size(self) -> int:
        return self.sp.get_piece_size()

    def encode(self, text: str) -> List[int]:
        return self.sp.encode(text)

    def special_ids(self) -> Set[int]:
        return {i for i in range(self.vocab_size) if self.sp.is_control(i)}

    def unknown_ids(self) -> Set[int]:
        return {i for i in range(self.vocab_size) if self.sp.is_unknown(i)}

    def byte_tokens(self) -> Dict[int, int]:
        out = {}
        for token in range(self.vocab_size):
            if self.sp.is_byte(token):
                byte = byte_piece(self.sp.id_to_piece(token))
                if byte is not None:
                    out[token] = byte
        return out

    def surfaces(self) -> Dict[int, str]:
        skip = self.special_ids() | self.unknown_ids() | set(self.byte_tokens())
        out = {}
        for token in range(self.vocab_size):
            if token in skip or self.sp.is_unused(token):
                continue
            piece = self.sp.id_to_piece(token).replace("▁", " ")
            if len(piece) >= 2:
                out[token] = piece
        return out

    def decode(self, ids: List[int]) -> Optional[str]:
        return self.sp.decode(ids)

    def can_decode(self) -> bool:
        return True

    def piece(self, token: int) -> Optional[str]:
        if self.sp.is_byte(token):
            return None  # "<0x27>": shown decoded, as the byte it stands for
        return str(self.sp.id_to_piece(token))  # "▁ALL": decoded alone it would lose its space

    def describe(self) -> str:
        return f"SentencePiece, {self.vocab_size} pieces"


# -- the bench --------------------------------------------------------------------------------

BENCH_OPTIONS: Dict[str, Any] = {
    "model_type": "bpe",
    "byte_fallback": True,
    "character_coverage": 1.0,
    "max_sentence_length": 1 << 16,
    "input_sentence_size": 0,  # every line, no sampling
    "split_digits": True,
    "allow_whitespace_only_pieces": True,
    "remove_extra_whitespaces": False,
    "normalization_rule_name": "identity",
    "minloglevel": 2,
}


def _lines(docs: Sequence[str]) -> Iterator[str]:
    return (line for doc in docs for line in doc.split("\n") if line.strip())


def train_model(docs: Sequence[str], vocab_size: int, threads: int) -> bytes:
    """A SentencePiece BPE model trained on the lines of ``docs``: the ``.model`` bytes."""
    import io

    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=_lines(docs), model_writer=model, vocab_size=vocab_size, num_threads=threads,
        **BENCH_OPTIONS,
    )
    return model.getvalue()


def bench_train(docs: Sequence[str], vocab_size: int, threads: int, pattern: str) -> Callable[[], Any]:
    """Its BPE on lines (it has no regex pre-tokenizer: ``pattern`` is not its to take)."""
    return lambda: len(train_model(docs, vocab_size, threads))


def bench_encoder(docs: Sequence[str], tok: Any, vocab_size: int, threads: int, workdir: str) -> EncoderParts:
    """Its own model: other tokens than ours, so the figures compare speed, not ids."""
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_proto=train_model(docs, vocab_size, threads))
    return (
        lambda text: len(sp.encode(text)),
        lambda texts, k: sum(map(len, sp.encode(texts, num_threads=k))),
        "its own BPE model (different tokens)",
    )


PEER = Peer(
    name="sentencepiece",
    module="sentencepiece",
    adapter=SentencePieceTokenizer,
    train=bench_train,
    encoder=bench_encoder,
)
