"""What a module that takes a Tokenizer may use of it, declared.

The token-file pipeline, the exports to other libraries, the encoding trace and the
vocabulary listing take a tokenizer and give back what they make; the Tokenizer's thin
methods (``encode_to_file``, ``to_tiktoken``, ``to_hf``, ``trace``, ``vocab_lines``) call them. Typing them with this Protocol rather than with the Tokenizer
keeps the import graph free of circles, type-only imports included, and says in one place
what those modules rely on.

    >>> import functionalbpe as fb
    >>> tok: Tokenizes = fb.train(["ab ab"], vocab_size=257, progress=False)
    >>> tok.encode("ab")
    [256]
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Protocol, Tuple

from ..core.alphabet import Alphabet
from ..core.encoder import Encoder
from ..core.vocabulary import Vocabulary
from ..schemes.base import Scheme
from ..text.specials import SpecialPolicy, SpecialSet


class Tokenizes(Protocol):
    """The parts of a :class:`functionalbpe.Tokenizer` that the modules taking one use."""

    scheme: Scheme
    alphabet: Alphabet
    merge_counts: Optional[List[int]]

    @property
    def vocab_size(self) -> int: ...

    @property
    def encoder(self) -> Encoder: ...

    @property
    def special_policy(self) -> SpecialPolicy: ...

    @property
    def vocabulary(self) -> Vocabulary: ...

    @property
    def special_tokens(self) -> Dict[str, int]: ...

    @property
    def pattern(self) -> str: ...

    @property
    def merges(self) -> List[Tuple[int, int]]: ...

    def token_bytes(self, token: int) -> bytes: ...

    def token_text(self, token: int) -> str: ...

    def to_payload(self) -> Dict[str, Any]: ...

    def encode(
        self, text: str, *, allowed_special: SpecialSet = ..., disallowed_special: SpecialSet = ...,
        dropout: float = ..., seed: Optional[int] = ...,
    ) -> List[int]: ...

    def encode_batch_packed(
        self, texts: Iterable[str], threads: Optional[int] = ..., *, width: int = ...,
        allowed_special: SpecialSet = ..., disallowed_special: SpecialSet = ...,
    ) -> Tuple[bytes, List[int]]: ...
