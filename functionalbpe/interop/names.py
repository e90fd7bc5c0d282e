"""The names tiktoken and HF users type, on a Tokenizer.

Thin aliases, so that code written for a tiktoken ``Encoding`` or an HF tokenizer runs on a
:class:`~functionalbpe.Tokenizer`. tiktoken's names speak bytes; HF's speak vocabulary
strings, the tokens written in GPT-2's byte-to-character table (``formats/bytelevel.py``),
as in ``to_hf``'s file. The Tokenizer inherits them; what they use of it is declared here.

    >>> import functionalbpe as fb
    >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<|endoftext|>"], progress=False)
    >>> tok.n_vocab, tok.eot_token, tok.decode_single_token_bytes(256)
    (258, 257, b'ab')
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Sequence, Union

from ..core.alphabet import Alphabet
from ..core.decoding import Decoding
from ..core.vocabulary import Vocabulary
from ..errors import FunctionalBPEError, UnknownTokenError
from ..formats.bytelevel import read, written
from ..text.specials import SpecialPolicy
from ..util.checks import excerpt


class OtherLibraryNames:
    """tiktoken's and HF's names for what a Tokenizer does."""

    # What the names use of the tokenizer (set by Tokenizer.__init__, defined by it).
    alphabet: Alphabet
    _specials: SpecialPolicy
    _vocab: Vocabulary
    _decoding: Decoding

    if TYPE_CHECKING:  # pragma: no cover

        @property
        def vocab_size(self) -> int: ...

        def token_bytes(self, token: int) -> bytes: ...

        def decode(self, ids: Iterable[int], errors: str = "strict") -> str: ...

    @property
    def n_vocab(self) -> int:
        """tiktoken's name for :attr:`vocab_size`.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False).n_vocab
        258
        """
        return self.vocab_size

    def __len__(self) -> int:
        """HF's ``len(tokenizer)``: the number of ids (:attr:`vocab_size`).

        >>> import functionalbpe as fb
        >>> len(fb.train(["ab ab"], vocab_size=257, progress=False))
        257
        """
        return self.vocab_size

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>`` (tiktoken's name); :class:`UnknownTokenError` (a
        ``KeyError``, as in tiktoken) if it is not a special token here.

        >>> import functionalbpe as fb
        >>> fb.train(["ab"], vocab_size=257, special_tokens=["<|endoftext|>"], progress=False).eot_token
        256
        """
        return self._specials.id_of("<|endoftext|>")

    @property
    def special_tokens_set(self) -> "set[str]":
        """The special tokens' texts (tiktoken's name).

        >>> import functionalbpe as fb
        >>> fb.train(["ab"], vocab_size=257, special_tokens=["<s>"], progress=False).special_tokens_set
        {'<s>'}
        """
        return set(self._specials.all)

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of the one token whose text (a special token's, or UTF-8) or bytes are
        ``text_or_bytes``; :class:`UnknownTokenError` if no token is exactly that.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False)
        >>> tok.encode_single_token("ab"), tok.encode_single_token(b"a"), tok.encode_single_token("<s>")
        (256, 97, 257)
        """
        if isinstance(text_or_bytes, str):
            if text_or_bytes in self._specials.ids:
                return self._specials.ids[text_or_bytes]
            data = text_or_bytes.encode("utf-8")
        elif isinstance(text_or_bytes, (bytes, bytearray)):
            data = bytes(text_or_bytes)
        else:
            raise FunctionalBPEError(f"encode_single_token takes a str or bytes, not a {type(text_or_bytes).__name__}")
        found = self._vocab.ids_by_bytes().get(data)
        if found is None:
            raise UnknownTokenError(f"no single token is {excerpt(text_or_bytes)}")
        return found

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (tiktoken's name; a special token's text as UTF-8);
        :class:`UnknownTokenError` if ``token`` is not an id here.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).decode_single_token_bytes(256)
        b'ab'
        """
        return self.token_bytes(self._known_id(token))

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> List[bytes]:
        """The bytes of each token (tiktoken's name).

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).decode_tokens_bytes([256, 32])
        [b'ab', b' ']
        """
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_batch(self, batch: Iterable[Sequence[int]], errors: str = "strict") -> List[str]:
        """:meth:`decode` of each list of ids: the inverse of :meth:`encode_batch`.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=257, progress=False)
        >>> tok.decode_batch(tok.encode_batch(["ab", "b a"]))
        ['ab', 'b a']
        """
        return [self.decode(ids, errors) for ids in batch]

    def get_vocab(self) -> Dict[str, int]:
        """HF's vocabulary: ``{token string: id}``, each token written in GPT-2's byte
        characters (a space is ``Ġ``), special tokens as they are — what the ``to_hf``
        export's ``get_vocab()`` gives.

        >>> import functionalbpe as fb
        >>> vocab = fb.train([" a a"], vocab_size=257, progress=False).get_vocab()
        >>> vocab["Ġa"], vocab["a"], len(vocab)
        (256, 97, 257)
        """
        vocab = {written(data): i for data, i in self._vocab.ids_by_bytes().items()}
        vocab.update(self._specials.ids)
        return vocab

    def token_to_id(self, token: str) -> Optional[int]:
        """HF's lookup of a vocabulary string (see :meth:`get_vocab`); None if absent, as HF.

        >>> import functionalbpe as fb
        >>> fb.train([" a a"], vocab_size=257, progress=False).token_to_id("Ġa")
        256
        """
        if token in self._specials.ids:
            return self._specials.ids[token]
        data = read(token)
        return None if data is None else self._vocab.ids_by_bytes().get(data)

    def id_to_token(self, token: int) -> Optional[str]:
        """HF's vocabulary string of an id (see :meth:`get_vocab`); None if it is not an id.

        >>> import functionalbpe as fb
        >>> fb.train([" a a"], vocab_size=257, progress=False).id_to_token(256)
        'Ġa'
        """
        try:
            internal = self._decoding.internal([token])[0]
        except FunctionalBPEError:
            return None
        if internal >= self.alphabet.first_special:
            return self.alphabet.specials[internal - self.alphabet.first_special]
        return written(self.alphabet.token_bytes(internal))

    def _known_id(self, token: int) -> int:
        try:
            self._decoding.internal([token])
        except FunctionalBPEError:
            raise UnknownTokenError(f"{token!r} is not an id of this tokenizer") from None
        return token
