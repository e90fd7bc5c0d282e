"""The Tokenizer: a scheme, a merge table and special tokens, with encode and decode.

Encoding: cut the text at special tokens, let the scheme split each ordinary part into
pieces (and transform them), then replay the merges on each piece. Decoding: join the
bytes of the tokens, decode UTF-8, and let the scheme turn its text form back into text.

Special tokens follow tiktoken: ``encode`` refuses text that contains a special token unless
it is allowed (``allowed_special``) or explicitly not disallowed (``disallowed_special``);
``encode_ordinary`` treats everything as ordinary text.

Example::

    >>> import functionalbpe as fb
    >>> tok = fb.train(["hello hello hello"], vocab_size=260, progress=False)
    >>> tok.decode(tok.encode("hello"))
    'hello'
"""
from __future__ import annotations

import os
from typing import AbstractSet, Any, Collection, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from .alphabet import Alphabet, policy_code
from .encoder import Encoder
from .errors import DecodeError, FunctionalBPEError, SpecialTokenError, TokenizerFileError
from .fileformat import FORMAT, read_payload, write_payload
from .patterns import split_special
from .schemes import Scheme, make_scheme

SpecialSet = Union[str, AbstractSet[str], Collection[str]]


class Tokenizer:
    """A trained byte-level BPE tokenizer.

    Build one with :func:`functionalbpe.train` or :meth:`Tokenizer.load`.
    """

    def __init__(
        self,
        scheme: Scheme,
        merges: Sequence[Tuple[int, int]],
        special_tokens: Sequence[str] = (),
        merge_policy: str = "prefix",
        merge_counts: Optional[Sequence[int]] = None,
    ) -> None:
        policy_code(merge_policy)
        self.scheme = scheme
        self.merge_policy = merge_policy
        self.alphabet = Alphabet(scheme.atoms, merges, special_tokens)
        self.merge_counts: Optional[List[int]] = list(merge_counts) if merge_counts is not None else None
        if self.merge_counts is not None and len(self.merge_counts) != len(self.alphabet.merges):
            raise FunctionalBPEError("merge_counts must have one count per merge")
        self._special_ids = self.alphabet.special_ids()
        self._encoder = Encoder(self.alphabet)

    # -- what it is ---------------------------------------------------------------------

    @property
    def merges(self) -> List[Tuple[int, int]]:
        return list(self.alphabet.merges)

    @property
    def vocab_size(self) -> int:
        return self.alphabet.vocab_size

    @property
    def special_tokens(self) -> Dict[str, int]:
        return dict(self._special_ids)

    @property
    def pattern(self) -> str:
        return self.scheme.pattern

    def token_bytes(self, token: int) -> bytes:
        """The bytes of a token in the scheme's text form (an atom as its UTF-8 bytes)."""
        self._check_ids([token])
        return self.alphabet.token_bytes(token)

    def __repr__(self) -> str:
        return (
            f"<functionalbpe.Tokenizer scheme={self.scheme.name} pattern={self.scheme.pattern_name} "
            f"vocab_size={self.vocab_size} merges={len(self.alphabet.merges)} "
            f"specials={len(self._special_ids)}>"
        )

    # -- encoding -------------------------------------------------------------------------

    def encode_ordinary(self, text: str) -> List[int]:
        """Encode ``text``, reading special-token text as ordinary text.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).encode_ordinary("ab")
        [256]
        """
        if not text:
            return []
        return self._encoder.encode_pieces(self.scheme.split(text))

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> List[int]:
        """Encode ``text``; special tokens only where allowed (tiktoken's rules).

        A special token that is neither allowed nor explicitly left out of
        ``disallowed_special`` raises :class:`SpecialTokenError`, naming the token and how
        to allow it.
        """
        allowed = self._allowed(allowed_special, disallowed_special, text)
        if not allowed:
            return self.encode_ordinary(text)
        out: List[int] = []
        for segment, is_special in split_special(text, sorted(allowed)):
            if is_special:
                out.append(self._special_ids[segment])
            else:
                out.extend(self.encode_ordinary(segment))
        return out

    def encode_batch(
        self,
        texts: Iterable[str],
        num_threads: Optional[int] = None,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> List[List[int]]:
        """Encode several documents; the result is the same as encoding each in turn."""
        return [
            self.encode(t, allowed_special=allowed_special, disallowed_special=disallowed_special)
            for t in texts
        ]

    def _allowed(self, allowed_special: SpecialSet, disallowed_special: SpecialSet, text: str) -> AbstractSet[str]:
        specials = self._special_ids
        if allowed_special == "all":
            allowed = set(specials)
        else:
            allowed = set(allowed_special)
            unknown = allowed - set(specials)
            if unknown:
                raise SpecialTokenError(
                    f"allowed_special names {sorted(unknown)!r}, which this tokenizer does not have; "
                    f"its special tokens are {sorted(specials)!r}"
                )
        if disallowed_special == "all":
            disallowed = set(specials) - allowed
        else:
            disallowed = set(disallowed_special)
        if disallowed:
            for segment, is_special in split_special(text, sorted(disallowed)):
                if is_special:
                    offset = text.find(segment)
                    raise SpecialTokenError(
                        f"the text contains the special token {segment!r} at offset {offset}, which "
                        f"is disallowed; pass allowed_special={{{segment!r}}} (or 'all') to encode it "
                        "as the special token, or disallowed_special=() / encode_ordinary() to encode "
                        "it as ordinary text"
                    )
        return allowed

    def pieces(self, text: str) -> List[str]:
        """The pieces BPE sees for ``text``, atoms shown as glyphs; special tokens as they are.

        >>> import functionalbpe as fb
        >>> fb.train(["x"], vocab_size=256, pattern="gpt2", progress=False).pieces("Hi there")
        ['Hi', ' there']
        """
        out: List[str] = []
        for segment, is_special in split_special(text, list(self._special_ids)):
            if is_special:
                out.append(segment)
            else:
                out.extend(self.scheme.show(p) for p in self.scheme.split(segment))
        return out

    def explain(self, text: str) -> List[Tuple[str, List[int]]]:
        """Each piece as :meth:`pieces` shows it, with the ids it encodes to.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, pattern="gpt2", progress=False).explain("ab ab")
        [('ab', [256]), (' ab', [32, 256])]
        """
        out: List[Tuple[str, List[int]]] = []
        for segment, is_special in split_special(text, list(self._special_ids)):
            if is_special:
                out.append((segment, [self._special_ids[segment]]))
            else:
                out.extend((self.scheme.show(p), self._encoder.encode_piece(p)) for p in self.scheme.split(segment))
        return out

    # -- decoding -------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of the decoded text (for a scheme: its decoded text, as UTF-8).

        For the plain scheme this is the exact concatenation of the tokens' bytes, valid
        UTF-8 or not; for the other schemes bytes that are not valid UTF-8 pass through.
        """
        ids = list(ids)
        if not self.scheme.atoms:
            return self._joined_bytes(ids)
        return self._decode(ids, "surrogateescape").encode("utf-8", "surrogateescape")

    def decode(self, ids: Iterable[int], errors: str = "strict") -> str:
        """Decode ids to text. ``errors`` is as for ``bytes.decode`` ("strict", "replace", ...).

        With "strict", ids that do not form valid UTF-8 raise :class:`DecodeError` naming
        the first offending token.
        """
        return self._decode(list(ids), errors)

    def _decode(self, ids: List[int], errors: str) -> str:
        self._check_ids(ids)
        if not self.scheme.atoms and not self._special_ids:
            return self._text(ids, errors, 0)
        parts: List[str] = []
        start = 0
        for i, token in enumerate(ids + [-1]):
            if token == -1 or self.alphabet.is_special(token):
                if i > start:
                    text_form = self._text(ids[start:i], errors, start)
                    # A scheme refuses a text form no encoding writes, drops or marks what is wrong.
                    scheme_errors = errors if errors in ("strict", "ignore") else "replace"
                    parts.append(self.scheme.decode(text_form, scheme_errors))
                if token != -1:
                    parts.append(self.alphabet.specials[token - self.alphabet.first_special])
                start = i + 1
        return "".join(parts)

    def _joined_bytes(self, ids: List[int]) -> bytes:
        self._check_ids(ids)
        table = self.alphabet.all_token_bytes()
        return b"".join([table[i] for i in ids])

    def _text(self, ids: List[int], errors: str, first: int) -> str:
        data = self._joined_bytes(ids)
        try:
            return data.decode("utf-8", errors)
        except UnicodeDecodeError as exc:
            position, offset = _token_at(self.alphabet.all_token_bytes(), ids, exc.start)
            raise DecodeError(
                f"the ids do not decode to valid UTF-8: token {first + position} (id "
                f"{ids[position]}) is cut at byte {offset} of a character ({exc.reason}); "
                "pass errors='replace' to decode it as U+FFFD"
            ) from None

    def _check_ids(self, ids: Sequence[int]) -> None:
        size = self.vocab_size
        for i, token in enumerate(ids):
            if not isinstance(token, int) or not 0 <= token < size:
                raise DecodeError(f"id {token!r} at position {i} is not a token of this tokenizer (0..{size - 1})")

    # -- files ----------------------------------------------------------------------------

    def to_payload(self) -> Dict[str, Any]:
        return {
            "format": FORMAT,
            "scheme": self.scheme.name,
            "scheme_options": self.scheme.options(),
            "pattern": {"name": self.scheme.pattern_name, "regex": self.scheme.pattern},
            "merge_policy": self.merge_policy,
            "atoms": [[ord(a.char), a.name] for a in self.alphabet.atoms],
            "merges": [list(m) for m in self.alphabet.merges],
            "merge_counts": self.merge_counts,
            "special_tokens": self.special_tokens,
            "vocab_size": self.vocab_size,
        }

    def save(self, path: "os.PathLike[str] | str") -> None:
        """Write the tokenizer file atomically (see :mod:`functionalbpe.fileformat`)."""
        write_payload(path, self.to_payload())

    @classmethod
    def load(cls, path: "os.PathLike[str] | str") -> "Tokenizer":
        """Read a tokenizer file; anything wrong is a :class:`TokenizerFileError`."""
        payload = read_payload(path)
        try:
            return cls.from_payload(payload)
        except TokenizerFileError as exc:
            raise TokenizerFileError(f"{os.fspath(path)}: {exc}") from None

    @classmethod
    def from_payload(cls, payload: Dict[str, Any]) -> "Tokenizer":
        try:
            scheme = make_scheme(payload["scheme"], payload["pattern"]["regex"], **payload["scheme_options"])
        except (FunctionalBPEError, KeyError, TypeError) as exc:
            raise TokenizerFileError(f"the scheme cannot be rebuilt: {exc}") from None
        atoms = [[ord(a.char), a.name] for a in scheme.atoms]
        if payload["atoms"] != atoms:
            raise TokenizerFileError(
                f"the atoms do not match those of scheme {scheme.name!r} in this version "
                f"({len(payload['atoms'])} in the file, {len(atoms)} expected)"
            )
        merges = payload["merges"]
        if not all(isinstance(m, list) and len(m) == 2 and all(type(x) is int for x in m) for m in merges):
            raise TokenizerFileError("every merge must be a pair of integer ids")
        specials = payload["special_tokens"]
        try:
            tok = cls(
                scheme,
                [tuple(m) for m in merges],
                list(specials),
                payload["merge_policy"],
                payload.get("merge_counts"),
            )
        except FunctionalBPEError as exc:
            raise TokenizerFileError(str(exc)) from None
        if tok.special_tokens != specials:
            raise TokenizerFileError("the special token ids do not follow the merges in order")
        if tok.vocab_size != payload["vocab_size"]:
            raise TokenizerFileError(
                f"vocab_size says {payload['vocab_size']} but the file holds {tok.vocab_size} ids"
            )
        return tok

    def __getstate__(self) -> Dict[str, Any]:
        return self.to_payload()

    def __setstate__(self, payload: Dict[str, Any]) -> None:
        self.__dict__.update(Tokenizer.from_payload(payload).__dict__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tokenizer) and self.to_payload() == other.to_payload()

    __hash__ = None  # type: ignore[assignment]


def _token_at(table: List[bytes], ids: Sequence[int], byte_offset: int) -> Tuple[int, int]:
    """Which token holds byte ``byte_offset`` of the joined bytes, and where inside it."""
    position = 0
    for i, token in enumerate(ids):
        size = len(table[token])
        if byte_offset < position + size:
            return i, byte_offset - position
        position += size
    return len(ids) - 1, 0
