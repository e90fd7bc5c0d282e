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

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Union

from ..core.alphabet import Alphabet
from ..core.decoding import Decoding
from ..core.vocabulary import Vocabulary
from ..errors import FunctionalBPEError, UnknownTokenError
from ..formats.bytelevel import read, written
from ..text.specials import SpecialPolicy, SpecialSet
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

        def encode(self, text: str, *, allowed_special: "SpecialSet" = ..., disallowed_special: "SpecialSet" = ...,
                   ) -> List[int]: ...

        def encode_batch(self, texts: Iterable[str], threads: Optional[int] = None, *,
                         disallowed_special: "SpecialSet" = ...) -> Any: ...

        @property
        def scheme(self) -> Any: ...

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

    def encode_ordinary_batch(self, text: Iterable[str], *, num_threads: Optional[int] = None) -> List[List[int]]:
        """tiktoken's :meth:`encode_ordinary` of each text (special-token text is ordinary
        text), on ``num_threads`` threads (None: all cores).

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False)
        >>> tok.encode_ordinary_batch(["ab", "<s>"])
        [[256], [60, 115, 62]]
        """
        return self.encode_batch(text, num_threads, disallowed_special=())  # type: ignore[no-any-return]

    def encode_to_numpy(self, text: str, *, allowed_special: "SpecialSet" = frozenset(),
                        disallowed_special: "SpecialSet" = "all") -> Any:
        """tiktoken's :meth:`encode` as a numpy ``uint32`` array.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).encode_to_numpy("ab a").tolist()
        [256, 32, 97]
        """
        import numpy as np

        ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return np.asarray(ids, dtype=np.uint32)

    @property
    def max_token_value(self) -> int:
        """tiktoken's highest id.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False).max_token_value
        257
        """
        return self.vocab_size - 1

    @property
    def name(self) -> str:
        """tiktoken's ``name`` of an encoding: here what the tokenizer is, in one word.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False).name
        'functionalbpe-plain-gpt4-258'
        """
        return f"functionalbpe-{self.scheme.name}-{self.scheme.pattern_name}-{self.vocab_size}"

    def __call__(self, text: Union[str, Sequence[str]], add_special_tokens: bool = False) -> Dict[str, Any]:
        """HF's ``tokenizer(text)``: ``{"input_ids": ids, "attention_mask": ones}``, for one
        text or a list of them (special-token text is ordinary text, as HF reads text that is
        not an added token). No special token is added: see :meth:`check_add_special_tokens`.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=257, progress=False)
        >>> tok("ab a"), tok(["ab", "b"])["input_ids"]
        ({'input_ids': [256, 32, 97], 'attention_mask': [1, 1, 1]}, [[256], [98]])
        """
        check_add_special_tokens(add_special_tokens)
        if isinstance(text, str):
            ids = self.encode(text, disallowed_special=())
            return {"input_ids": ids, "attention_mask": [1] * len(ids)}
        lists = self.encode_batch(list(text), disallowed_special=())
        return {"input_ids": lists, "attention_mask": [[1] * len(ids) for ids in lists]}

    def batch_decode(self, sequences: Iterable[Sequence[int]], skip_special_tokens: bool = False) -> List[str]:
        """HF's :meth:`decode_batch`; ``skip_special_tokens`` leaves the special tokens out.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False)
        >>> tok.batch_decode([[256, 257, 97]]), tok.batch_decode([[256, 257]], skip_special_tokens=True)
        (['ab<s>a'], ['ab'])
        """
        specials = set(self._specials.ids.values()) if skip_special_tokens else set()
        return [self.decode([i for i in ids if i not in specials]) for ids in sequences]

    def convert_ids_to_tokens(self, ids: Union[int, Sequence[int]]) -> Any:
        """HF's vocabulary strings of ids (:meth:`id_to_token` of each; one id gives one).

        >>> import functionalbpe as fb
        >>> fb.train([" a a"], vocab_size=257, progress=False).convert_ids_to_tokens([256, 97])
        ['Ġa', 'a']
        """
        if isinstance(ids, int):
            return self.id_to_token(self._known_id(ids))
        return [self.id_to_token(self._known_id(i)) for i in ids]

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


def check_add_special_tokens(add: object) -> None:
    """HF's ``add_special_tokens=``: a tokenizer here adds no token the text does not hold (no
    BOS or EOS template), so False is what it always does, and True is refused with the way
    to do it, rather than ignored.

    >>> check_add_special_tokens(True)
    Traceback (most recent call last):
    ...
    functionalbpe.errors.FunctionalBPEError: add_special_tokens=True: functionalbpe adds no special token on its own (no BOS/EOS template); write it in the text and pass allowed_special={...}, or add its id
    """
    if add not in (False, True) or not isinstance(add, bool):
        raise FunctionalBPEError(f"add_special_tokens must be True or False, got {add!r}")
    if add:
        raise FunctionalBPEError(
            "add_special_tokens=True: functionalbpe adds no special token on its own (no BOS/EOS template); "
            "write it in the text and pass allowed_special={...}, or add its id"
        )
