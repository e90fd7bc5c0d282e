"""tiktoken: ``Encoding`` objects, the report's adapter and the bench's encoder.

This is the one module that imports ``tiktoken``. The rank file itself, and the merge table
rebuilt from ranks, are plain data in :mod:`functionalbpe.formats.tiktoken`
(``Tokenizer.from_tiktoken`` builds a tokenizer from what that module reads;
``Tokenizer.to_tiktoken`` hands it the ranks to write).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set

from ..errors import FunctionalBPEError, TokenizerFileError
from .face import PathLike, ReportTokenizer, require, text_surfaces
from ..text.patterns import resolve_pattern
from ..formats.tiktoken import read_rank_file
from .base import EncoderParts, Peer

# -- the rank file --------------------------------------------------------------------------


def encoding(name: str, pattern: str, ranks: Dict[bytes, int], special_tokens: Dict[str, int]) -> Any:
    """A ``tiktoken.Encoding`` with these ranks, pattern (a regex) and special tokens."""
    tiktoken = require("tiktoken", "as_tiktoken_encoding")
    return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special_tokens)


# -- from ranks to merges -------------------------------------------------------------------


# -- the report -------------------------------------------------------------------------------


class TiktokenTokenizer(ReportTokenizer):
    """A ``tiktoken.Encoding`` (built from a rank file and a pattern, or given)."""

    kind = "tiktoken"
    suffix = ".tiktoken"
    needs_pattern = True
    file_help = "a tiktoken rank file (.tiktoken); needs --pattern unless it is one of OpenAI's published files"

    def __init__(self, encoding: Any) -> None:
        self.encoding = encoding

    @classmethod
    def from_file(cls, path: PathLike, pattern: Optional[str] = None) -> "TiktokenTokenizer":
        tiktoken = require("tiktoken", "reading a .tiktoken rank file")
        ranks, published = read_rank_file(path)
        if not pattern and published is None:
            raise FunctionalBPEError(
                f"{path}: a .tiktoken rank file holds no pre-tokenization pattern, and this is not one of "
                "OpenAI's published files; give one (CLI: --pattern gpt4, llama3, o200k, or a regex)"
            )
        regex = resolve_pattern(pattern).regex if pattern else published.pattern  # type: ignore[union-attr]
        try:
            made = tiktoken.Encoding(Path(path).stem, pat_str=regex, mergeable_ranks=ranks, special_tokens={})
        except ValueError as exc:
            raise TokenizerFileError(f"{path}: tiktoken refuses it: {exc}") from None
        return cls(made)

    @property
    def vocab_size(self) -> int:
        return self.encoding.n_vocab

    def encode(self, text: str) -> List[int]:
        return self.encoding.encode_ordinary(text)

    def special_ids(self) -> Set[int]:
        return set(self.encoding._special_tokens.values())

    def _token_bytes(self) -> Dict[int, bytes]:
        special = self.special_ids()
        out = {}
        for token in range(self.encoding.n_vocab):
            if token in special:
                continue
            try:
                out[token] = self.encoding.decode_single_token_bytes(token)
            except KeyError:  # a gap in the ranks
                continue
        return out

    def entries(self) -> List[int]:
        return sorted(self._token_bytes())

    def byte_tokens(self) -> Dict[int, int]:
        return {t: b[0] for t, b in self._token_bytes().items() if len(b) == 1}

    def surfaces(self) -> Dict[int, str]:
        return text_surfaces(self._token_bytes())

    def decode(self, ids: List[int]) -> Optional[str]:
        return self.encoding.decode(ids, errors="replace")

    def can_decode(self) -> bool:
        return True

    def token_lengths(self) -> Optional[List[int]]:
        table = self._token_bytes()
        return [len(table.get(t, b"")) for t in range(self.vocab_size)]

    def describe(self) -> str:
        return f"tiktoken {self.encoding.name}, {self.vocab_size} ids"


# -- the bench --------------------------------------------------------------------------------


def bench_encoder(docs: Sequence[str], tok: Any, vocab_size: int, threads: int, workdir: str) -> EncoderParts:
    """tiktoken with our ranks and pattern: the same ids as ours, so the same work."""
    import tiktoken

    ranks = {tok.token_bytes(i): i for i in range(tok.vocab_size)}
    tt = tiktoken.Encoding("functionalbpe-bench", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens={})
    return (
        lambda text: len(tt.encode_ordinary(text)),
        lambda texts, k: sum(map(len, tt.encode_ordinary_batch(texts, num_threads=k))),
        "our ranks and pattern",
    )


PEER = Peer(
    name="tiktoken",
    module="tiktoken",
    adapter=TiktokenTokenizer,
    encoder=bench_encoder,
)
