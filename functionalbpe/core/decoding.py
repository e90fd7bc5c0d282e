"""Decoding: ids back to text, for :meth:`Tokenizer.decode` and the streaming decoder alike.

Ids arrive as the tokenizer's own (an imported vocabulary keeps its file's ids,
:mod:`functionalbpe.core.idmap`) and are checked and turned into internal ids first; a bad
one is a :class:`DecodeError` naming its position. Then, for each run of ordinary tokens
between special tokens: join the tokens' bytes (in C when it is built), decode them as UTF-8
(an error names the token that holds the broken character), and let the scheme turn its
text form back into text. A special token decodes as its own text.

:class:`Decoding` is that kernel, built once per tokenizer from public parts (the alphabet,
the scheme, the id map and the encoder's byte joiner). :class:`Tokenizer` decodes with it,
and :class:`~functionalbpe.core.streaming.StreamDecoder` applies the same steps to ids that
arrive one by one — so the two cannot disagree.

Example::

    >>> from functionalbpe import make_scheme
    >>> from functionalbpe.core.alphabet import Alphabet
    >>> alphabet = Alphabet(merges=[(104, 105)], specials=["<s>"])
    >>> table = alphabet.all_token_bytes()
    >>> d = Decoding(alphabet, make_scheme("plain"), lambda ids: b"".join(table[i] for i in ids))
    >>> d.decode([256, 33, 257, 0xC3, 0xA9], "strict")
    'hi!<s>é'
"""
from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Callable, Iterable, List, NoReturn, Optional, Sequence, Tuple

from ..errors import DecodeError

if TYPE_CHECKING:  # pragma: no cover
    from ..core.alphabet import Alphabet
    from ..core.idmap import IdMap
    from ..schemes.base import Scheme

# The bytes of internal ids, joined; None when one of them is not an id (or not an int).
Joiner = Callable[[Sequence[int]], Optional[bytes]]


class Decoding:
    """How one tokenizer turns ids into text.

    ``join`` gives the joined bytes of internal ids, or None when one is not an id
    (``Encoder.decode_bytes``); ``idmap`` translates an imported vocabulary's ids (None: the
    ids are the internal ones).
    """

    def __init__(self, alphabet: "Alphabet", scheme: "Scheme", join: Joiner, idmap: "Optional[IdMap]" = None) -> None:
        self.alphabet = alphabet
        self.scheme = scheme
        self.first_special = alphabet.first_special
        self.specials = alphabet.specials
        self._join = join
        self._idmap = idmap

    # -- ids --------------------------------------------------------------------------------

    def internal(self, ids: Iterable[object], external: bool = True) -> List[int]:
        """``ids`` as a list of internal ids, each a Python int (numpy integers are fine);
        DecodeError names the first that is not an id of this tokenizer. ``external``: the
        ids are the tokenizer's own (as encode returns them), else already internal."""
        idmap = self._idmap if external else None
        size = self.alphabet.vocab_size
        out: List[int] = []
        for i, token in enumerate(ids):
            try:
                value = operator.index(token)  # type: ignore[arg-type]
            except TypeError:
                self._bad_id(i, token)
            if not (idmap.is_id(value) if idmap is not None else 0 <= value < size):
                self._bad_id(i, token)
            out.append(value)
        return out if idmap is None else idmap.to_internal(out)

    def _bad_id(self, position: int, token: object) -> NoReturn:
        if self._idmap is None:
            valid = f"0..{self.alphabet.vocab_size - 1}"
        else:
            valid = f"0..{self._idmap.size - 1} but the {self._idmap.gaps()} ids no token has"
        raise DecodeError(f"id {token!r} at position {position} is not a token of this tokenizer ({valid})")

    def joined_bytes(self, ids: List[int]) -> bytes:
        """The bytes of internal ids (checked here if the compiled joiner refuses them)."""
        data = self._join(ids)
        if data is None:  # not plain ints, or out of range: convert, or say which
            data = self._join(self.internal(ids, external=False))
            assert data is not None  # every id was checked
        return data

    # -- text -------------------------------------------------------------------------------

    def utf8(self, ids: List[int], errors: str, first: int = 0) -> str:
        """The joined bytes of internal ``ids`` decoded as UTF-8; a strict error names the
        token (counting from ``first``) and the byte inside it."""
        data = self.joined_bytes(ids)
        try:
            return data.decode("utf-8", errors)
        except UnicodeDecodeError as exc:
            position, offset = token_at(self.alphabet.all_token_bytes(), ids, exc.start)
            raise DecodeError(
                f"the ids do not decode to valid UTF-8: token {first + position} (id "
                f"{ids[position]}) is cut at byte {offset} of a character ({exc.reason}); "
                "pass errors='replace' to decode it as U+FFFD"
            ) from None

    def scheme_text(self, text_form: str, errors: str) -> str:
        """A scheme's text form back to text. A scheme refuses a text form no encoding
        writes (``"strict"``), drops (``"ignore"``) or marks (anything else) what is wrong."""
        return self.scheme.decode(text_form, errors if errors in ("strict", "ignore") else "replace")

    def decode(self, ids: Iterable[int], errors: str = "strict") -> str:
        """The text of the tokenizer's ``ids`` (:meth:`Tokenizer.decode`)."""
        if not self.scheme.atoms and self._idmap is None:
            return self.utf8(list(ids), errors)  # the compiled joiner checks the ids
        return self.decode_internal(self.internal(ids), errors)

    def decode_internal(self, ids: List[int], errors: str) -> str:
        if not self.scheme.atoms:
            # Specials are valid UTF-8 on their own, so decoding the joined bytes gives what
            # decoding text and specials apart would (and what tiktoken gives).
            return self.utf8(ids, errors)
        first_special = self.first_special
        parts: List[str] = []
        start = 0
        for i, token in enumerate(ids + [-1]):
            if token == -1 or token >= first_special:
                if i > start:
                    parts.append(self.scheme_text(self.utf8(ids[start:i], errors, start), errors))
                if token != -1:
                    parts.append(self.specials[token - first_special])
                start = i + 1
        return "".join(parts)

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of the decoded text (:meth:`Tokenizer.decode_bytes`): for the plain
        scheme the tokens' bytes joined, valid UTF-8 or not; for a scheme its decoded text
        as UTF-8, bytes that are not valid UTF-8 passed through."""
        if not self.scheme.atoms:
            return self.joined_bytes(list(ids) if self._idmap is None else self.internal(ids))
        text = self.decode_internal(self.internal(ids), "surrogateescape")
        return text.encode("utf-8", "surrogateescape")


def token_at(table: List[bytes], ids: Sequence[int], byte_offset: int) -> Tuple[int, int]:
    """Which token holds byte ``byte_offset`` of the joined bytes, and where inside it.

    >>> token_at([b"ab", b"cde"], [0, 1, 0], 3)
    (1, 1)
    """
    position = 0
    for i, token in enumerate(ids):
        size = len(table[token])
        if byte_offset < position + size:
            return i, byte_offset - position
        position += size
    return len(ids) - 1, 0
