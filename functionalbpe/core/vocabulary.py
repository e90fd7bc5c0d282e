"""The vocabulary of one tokenizer seen from outside: tokens by their bytes, in the ids the
tokenizer writes — what tiktoken's rank files, HF's vocabularies and ``encode_single_token``
key tokens by.

    >>> from functionalbpe.core.alphabet import Alphabet
    >>> from functionalbpe.core.encoder import Encoder
    >>> from functionalbpe.core.idmap import IdMap
    >>> alphabet = Alphabet(merges=[(97, 98)])
    >>> vocab = Vocabulary(alphabet, IdMap(alphabet), Encoder(alphabet))
    >>> vocab.ids_by_bytes()[b"ab"], vocab.lengths([256, 97]).tolist()
    (256, [2, 1])
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Type

from ..errors import FunctionalBPEError
from ..util.checks import excerpt
from .alphabet import Alphabet
from .encoder import Encoder
from .idmap import IdMap
from .dropout import encode_piece_dropout


class Vocabulary:
    """Views of ``alphabet``'s tokens in ``idmap``'s ids, each made once, on first use."""

    def __init__(self, alphabet: Alphabet, idmap: IdMap, encoder: Encoder) -> None:
        self.alphabet = alphabet
        self.idmap = idmap
        self.encoder = encoder
        self._by_bytes: Optional[Dict[bytes, int]] = None
        self._lengths: Any = None

    def ids_by_bytes(self) -> Dict[bytes, int]:
        """``{token bytes: id}`` of the ordinary tokens (the lowest id where two share bytes)."""
        if self._by_bytes is None:
            table = self.alphabet.all_token_bytes()
            ext = self.idmap.external
            by_bytes: Dict[bytes, int] = {}
            for i in range(self.alphabet.first_special):
                by_bytes.setdefault(table[i], ext(i))
            self._by_bytes = by_bytes
        return self._by_bytes

    def lengths(self, ids: List[int]) -> Any:
        """The byte length of each of ``ids`` (the tokenizer's own ids), as a numpy array."""
        import numpy as np

        if self._lengths is None:
            # One array indexed by the tokenizer's own ids (0 for a gap), so that the lengths
            # of a whole encoding are one numpy lookup.
            lengths = np.zeros(self.idmap.size, dtype=np.int64)
            lengths[np.asarray(self.idmap.external_ids, dtype=np.int64)] = [
                len(data) for data in self.alphabet.all_token_bytes()
            ]
            self._lengths = lengths
        return self._lengths[np.asarray(ids, dtype=np.int64)]

    def ranks(self, what: str, scheme_name: Optional[str], taken_whole: bool) -> Dict[bytes, int]:
        """``{token bytes: id}`` of every token but the special ones, in id order: the
        vocabulary as tiktoken and HF key it. Refused, saying why: a scheme (``scheme_name``
        given: the libraries cannot apply it), two tokens with the same bytes, and with
        ``taken_whole`` (tiktoken takes a piece that is a token whole) a token its merges do
        not make of its bytes."""
        if scheme_name is not None:
            raise FunctionalBPEError(
                f"{what} can only hold the plain scheme: the {scheme_name!r} scheme rewrites text "
                "into atoms before BPE, and other libraries cannot apply that rewrite, so the export "
                "would encode different ids; save it with Tokenizer.save() instead (docs/interop.md)"
            )
        if taken_whole:
            self.refuse_tokens_bpe_would_split("this tokenizer")
        table = self.alphabet.all_token_bytes()
        ext = self.idmap.external
        seen: Dict[bytes, int] = {}
        for i in range(self.alphabet.first_special):
            data = table[i]
            if data in seen:
                raise FunctionalBPEError(
                    f"tokens {ext(seen[data])} and {ext(i)} have the same bytes {excerpt(data)}; a rank "
                    "file (and an HF vocabulary) needs each token's bytes to be unique"
                )
            seen[data] = i
        return {data: ext(i) for data, i in sorted(seen.items(), key=lambda item: ext(item[1]))}

    def self_encoding(self) -> bool:
        """Whether the compiled encoder has found that every token's bytes merge back into
        it (checked when it was built); False when that is not known."""
        native = self.encoder.native
        return bool(native is not None and native.all_self_encoding)

    def refuse_tokens_bpe_would_split(self, origin: str, error: Type[FunctionalBPEError] = FunctionalBPEError) -> None:
        """tiktoken takes a piece that is a token whole; functionalbpe applies the merges. The
        two can only agree if every token's own bytes merge back into it: check that. (True of
        every table a trainer makes, and of every rank file ``merges_from_ranks`` accepts, as
        far as a randomized search of small tables could tell; a hand-made merge table can
        break it.)"""
        if self.self_encoding():
            return
        table = self.alphabet.all_token_bytes()
        ranks = self.encoder.ranks
        ext = self.idmap.external
        for i in range(self.alphabet.first_merge, self.alphabet.first_special):
            # With p = 0 the dropout encoder is the merges on a heap: n log n, not n² a token.
            ids = encode_piece_dropout(list(table[i]), ranks, 0.0, None)  # type: ignore[arg-type]
            if ids != [i]:
                raise error(
                    f"{origin}: the token {excerpt(table[i])} (id {i}) is not what its merges make of its own "
                    f"bytes ({excerpt([ext(j) for j in ids])}); tiktoken would take it whole where "
                    "functionalbpe applies the merges, so the two would disagree"
                )
