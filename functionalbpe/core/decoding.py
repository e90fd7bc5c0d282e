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
from typing import TYPE_CHECKING, Any, Callable, Iterable, List, NoReturn, Optional, Sequence, Tuple

from ..errors import DecodeError

from .contract import SchemeLike

if TYPE_CHECKING:  # pragma: no cover
    from ..core.alphabet import Alphabet
    from ..core.idmap import IdMap

# The bytes of internal ids, joined; None when one of them is not an id (or not an int).
Joiner = Callable[[Sequence[int]], Optional[bytes]]

# The output budget of one decode call (docs/security.md): ``max_output`` characters (bytes
# for decode_bytes), by default OUTPUT_PER_ID per id and at least OUTPUT_FLOOR. Ordinary text
# takes a few characters per id; a scheme's repeat instructions or a vocabulary of
# megabyte tokens can make a small file of ids decode to gigabytes, which is refused instead.
OUTPUT_PER_ID = 256
OUTPUT_FLOOR = 1 << 24
# A scheme's text form longer than this is decoded in slices cut where the scheme says it
# may be (``decodable_prefix``), the budget checked after each: it is passed by at most one
# slice's output.
SLICE_CHARS = 1 << 16


def output_budget(max_output: Optional[int], ids: int) -> int:
    """The characters one decode call may make: ``max_output``, or the default for ``ids`` ids.

    >>> output_budget(None, 10), output_budget(None, 1 << 20), output_budget(5, 10)
    (16777216, 268435456, 5)
    """
    if max_output is None:
        return max(OUTPUT_FLOOR, OUTPUT_PER_ID * ids)
    if isinstance(max_output, bool) or not isinstance(max_output, int) or max_output < 0:
        raise DecodeError(f"max_output must be a whole number of characters (or None), got {max_output!r}")
    return max_output


class Budget:
    """What is left of one call's output budget; ``spend`` raises once it is passed."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def spend(self, amount: int) -> None:
        self.used += amount
        if self.used > self.limit:
            raise DecodeError(
                f"the ids decode to more than {self.limit:,} characters, the output budget of this call "
                f"(max_output; by default {OUTPUT_PER_ID} per id, at least {OUTPUT_FLOOR:,}); pass a larger "
                "max_output= to decode them, or decode fewer ids at a time"
            )


class Decoding:
    """How one tokenizer turns ids into text.

    ``join`` gives the joined bytes of internal ids, or None when one is not an id
    (``Encoder.decode_bytes``); ``idmap`` translates an imported vocabulary's ids (None: the
    ids are the internal ones).
    """

    def __init__(self, alphabet: "Alphabet", scheme: SchemeLike, join: Joiner, idmap: "Optional[IdMap]" = None) -> None:
        self.alphabet = alphabet
        self.scheme = scheme
        self.first_special = alphabet.first_special
        self.specials = alphabet.specials
        self._join = join
        self._idmap = idmap
        self._lengths: Optional[Any] = None  # numpy int64 byte length per internal id
        self._longest = -1

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
            if token is True or token is False:  # an int to Python, never an id
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

    def _token_lengths(self) -> Any:
        if self._lengths is None:
            import numpy as np

            alphabet = self.alphabet
            lengths = [1] * 256 + [len(a.char.encode("utf-8")) for a in alphabet.atoms]
            for a, b in alphabet.merges:
                lengths.append(lengths[a] + lengths[b])
            lengths += [len(s.encode("utf-8")) for s in alphabet.specials]
            self._lengths = np.array(lengths, dtype=np.int64)
            self._longest = int(self._lengths.max()) if len(lengths) else 0
        return self._lengths

    def check_joined(self, ids: List[int], budget: Optional[Budget]) -> None:
        """Refuse, before they are joined, ids whose bytes pass the budget (only counted when
        the longest token could make them pass it)."""
        if budget is None:
            return
        lengths = self._token_lengths()
        if len(ids) * self._longest <= budget.limit - budget.used:
            return
        import numpy as np

        index = np.asarray(ids, dtype=np.int64)
        if len(index) and (index.min() < 0 or index.max() >= len(lengths)):
            return  # not ids: the joiner says which
        total = int(lengths[index].sum()) if len(index) else 0
        if total > budget.limit - budget.used:
            budget.spend(total)  # refused: more bytes than the budget has left
        if not self.scheme.atoms:
            budget.spend(total)  # the plain scheme's text is these bytes; a scheme counts its text

    def joined_bytes(self, ids: List[int], budget: Optional[Budget] = None) -> bytes:
        """The bytes of internal ids (checked here if the compiled joiner refuses them)."""
        self.check_joined(ids, budget)
        data = self._join(ids)
        if data is None:  # not plain ints, or out of range: convert, or say which
            data = self._join(self.internal(ids, external=False))
            assert data is not None  # every id was checked
        return data

    # -- text -------------------------------------------------------------------------------

    def utf8(self, ids: List[int], errors: str, first: int = 0, budget: Optional[Budget] = None) -> str:
        """The joined bytes of internal ``ids`` decoded as UTF-8; a strict error names the
        token (counting from ``first``) and the byte inside it."""
        data = self.joined_bytes(ids, budget)
        try:
            return data.decode("utf-8", errors)
        except UnicodeDecodeError as exc:
            position, offset = token_at(self.alphabet.all_token_bytes(), ids, exc.start)
            raise DecodeError(
                f"the ids do not decode to valid UTF-8: token {first + position} (id "
                f"{ids[position]}) is cut at byte {offset} of a character ({exc.reason}); "
                "pass errors='replace' to decode it as U+FFFD"
            ) from None

    def scheme_text(self, text_form: str, errors: str, budget: Optional[Budget] = None) -> str:
        """A scheme's text form back to text. A scheme refuses a text form no encoding
        writes (``"strict"``), drops (``"ignore"``) or marks (anything else) what is wrong.
        With a ``budget``, a long text form is decoded in slices and the output counted."""
        mode = errors if errors in ("strict", "ignore") else "replace"
        if budget is None:
            return self.scheme.decode(text_form, mode)
        if len(text_form) <= SLICE_CHARS:
            text = self.scheme.decode(text_form, mode)
            budget.spend(len(text))
            return text
        parts: List[str] = []
        position, size = 0, len(text_form)
        while position < size:
            width = SLICE_CHARS
            while True:
                if position + width >= size:
                    cut = size - position
                    break
                cut = self.scheme.decodable_prefix(text_form[position:position + width])
                if cut > 0:
                    break
                width *= 2  # a unit longer than the slice (a long base run): a wider one
            piece = self.scheme.decode(text_form[position:position + cut], mode)
            budget.spend(len(piece))
            parts.append(piece)
            position += cut
        return "".join(parts)

    def decode(self, ids: Iterable[int], errors: str = "strict", max_output: Optional[int] = None) -> str:
        """The text of the tokenizer's ``ids`` (:meth:`Tokenizer.decode`), at most
        ``max_output`` characters (:func:`output_budget`; else a DecodeError)."""
        if not self.scheme.atoms and self._idmap is None:
            listed = list(ids)
            # the compiled joiner checks the ids
            return self.utf8(listed, errors, budget=Budget(output_budget(max_output, len(listed))))
        internal = self.internal(ids)
        return self.decode_internal(internal, errors, Budget(output_budget(max_output, len(internal))))

    def decode_internal(self, ids: List[int], errors: str, budget: Optional[Budget] = None) -> str:
        if not self.scheme.atoms:
            # Specials are valid UTF-8 on their own, so decoding the joined bytes gives what
            # decoding text and specials apart would (and what tiktoken gives).
            return self.utf8(ids, errors, budget=budget)
        first_special = self.first_special
        parts: List[str] = []
        start = 0
        for i, token in enumerate(ids + [-1]):
            if token == -1 or token >= first_special:
                if i > start:
                    parts.append(self.scheme_text(self.utf8(ids[start:i], errors, start), errors, budget))
                if token != -1:
                    parts.append(self.specials[token - first_special])
                start = i + 1
        return "".join(parts)

    def decode_bytes(self, ids: Iterable[int], max_output: Optional[int] = None) -> bytes:
        """The bytes of the decoded text (:meth:`Tokenizer.decode_bytes`): for the plain
        scheme the tokens' bytes joined, valid UTF-8 or not; for a scheme its decoded text
        as UTF-8, bytes that are not valid UTF-8 passed through. At most ``max_output``
        bytes (characters for a scheme's text; :func:`output_budget`)."""
        if not self.scheme.atoms:
            listed = list(ids) if self._idmap is None else self.internal(ids)
            return self.joined_bytes(listed, Budget(output_budget(max_output, len(listed))))
        internal = self.internal(ids)
        text = self.decode_internal(internal, "surrogateescape", Budget(output_budget(max_output, len(internal))))
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
