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
from typing import (
    TYPE_CHECKING,
    AbstractSet,
    Any,
    Collection,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Optional,
    Sequence,
    Tuple,
    Type,
    Union,
)

from .core._native import thread_count
from .core.alphabet import NUM_BYTES, Alphabet, check_policy, policy_code
from .checks import plain_str
from .checks import without_surrogates as _without_surrogates
from .core.encoder import Encoder
from .decoding import Decoding
from .errors import FunctionalBPEError, SpecialTokenError, TokenizerFileError
from .filecheck import check_fields, excerpt
from .fileformat import FORMAT, read_payload, write_payload
from .core.idmap import IdMap
from .text.patterns import special_cutter
from .schemes.base import Scheme
from .schemes.registry import make_scheme

if TYPE_CHECKING:  # pragma: no cover
    from .streaming import StreamDecoder

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
        *,
        byte_ids: Optional[Sequence[int]] = None,
        special_ids: Optional[Sequence[int]] = None,
    ) -> None:
        """``byte_ids`` and ``special_ids`` keep the ids of an imported vocabulary (see
        :mod:`functionalbpe.core.idmap`); leave them out for the standard layout."""
        policy = policy_code(merge_policy)
        self.scheme = scheme
        self.merge_policy = merge_policy
        self.alphabet = Alphabet(scheme.atoms, merges, special_tokens)
        if scheme.atoms:  # without atoms every symbol is text, and text merges with text
            check_policy(self.alphabet.merges, self.alphabet.base_flags(), policy, merge_policy)
        self.merge_counts: Optional[List[int]] = list(merge_counts) if merge_counts is not None else None
        if self.merge_counts is not None and len(self.merge_counts) != len(self.alphabet.merges):
            raise FunctionalBPEError("merge_counts must have one count per merge")
        idmap = IdMap(self.alphabet, byte_ids, special_ids)
        self._idmap: Optional[IdMap] = None if idmap.identity else idmap
        self._special_ids = {s: idmap.external(i) for s, i in self.alphabet.special_ids().items()}
        # "All special tokens" is one object with its cutter kept here: finding the cutter by
        # an equal set would compare every token on each call (0.5 ms for 20,000 tokens).
        self._all_specials = frozenset(self._special_ids)
        self._all_cutter: Any = None
        output_ids = None if self._idmap is None else [idmap.external(i) for i in range(self.alphabet.first_special)]
        self._encoder = Encoder(self.alphabet, scheme, output_ids)
        self._decoding = Decoding(self.alphabet, scheme, self._encoder.decode_bytes, self._idmap)

    # -- what it is ---------------------------------------------------------------------

    @property
    def merges(self) -> List[Tuple[int, int]]:
        if self._idmap is None:
            return list(self.alphabet.merges)
        ext = self._idmap.external
        return [(ext(a), ext(b)) for a, b in self.alphabet.merges]

    @property
    def vocab_size(self) -> int:
        """One more than the largest id (the size of a model's embedding table)."""
        return self.alphabet.vocab_size if self._idmap is None else self._idmap.size

    @property
    def special_tokens(self) -> Dict[str, int]:
        return dict(self._special_ids)

    @property
    def pattern(self) -> str:
        return self.scheme.pattern

    @property
    def native(self) -> bool:
        """Whether the compiled encoder is in use (else the pure-Python one)."""
        return self._encoder.native is not None

    def token_bytes(self, token: int) -> bytes:
        """The bytes of a token in the scheme's text form (an atom as its UTF-8 bytes)."""
        return self.alphabet.token_bytes(self._decoding.internal([token])[0])

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
        text = plain_str(text)
        try:
            return self._encoder.encode_text(text)
        except UnicodeEncodeError:
            return self._encoder.encode_text(_without_surrogates(text))

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
        to allow it. A lone surrogate (which UTF-8 cannot hold) is read as U+FFFD, as
        tiktoken does.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False)
        >>> tok.encode("ab<s>", allowed_special="all")
        [256, 257]
        """
        text = plain_str(text)
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        self._refuse_disallowed(text, disallowed)
        if not allowed:
            return self.encode_ordinary(text)
        out: List[int] = []
        for segment, is_special in self._cutter(allowed).split(text):
            if is_special:
                out.append(self._special_ids[segment])
            else:
                out.extend(self.encode_ordinary(segment))
        return out

    def encode_batch(
        self,
        texts: Iterable[str],
        threads: Optional[int] = None,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        num_threads: Optional[int] = None,
    ) -> List[List[int]]:
        """Encode several documents on ``threads`` threads (None: all cores); ``num_threads``
        is the same option under tiktoken's name.

        The result is the same as encoding each in turn. With the compiled encoder and a
        built-in pattern the work runs without the GIL; a small batch stays on the calling
        thread. Custom patterns and the schemes cut text with Python and encode one text at
        a time.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).encode_batch(["ab", "b"], threads=2)
        [[256], [98]]
        """
        texts = list(map(plain_str, texts))
        if num_threads is not None:
            if threads is not None:
                raise FunctionalBPEError("give threads or num_threads (the same option), not both")
            threads, name = num_threads, "num_threads"
        else:
            name = "threads"
        threads = thread_count(threads, name=name)
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        if not allowed:
            # Every text is one ordinary part. Nothing per text is done here but the check
            # for disallowed specials: with short texts, this thread's share of the work
            # (holding the GIL) is what limits the threads' gain.
            if disallowed:
                for text in texts:
                    self._refuse_disallowed(text, disallowed)
            return self._encode_texts(texts, threads)
        # Cut every text into ordinary parts (encoded together, in parallel) and specials.
        parts: List[str] = []
        plans: List[List[int]] = []  # per text: indexes into parts, or -1 - special id
        for text in texts:
            self._refuse_disallowed(text, disallowed)
            plan = []
            for segment, is_special in self._cutter(allowed).split(text):
                if is_special:
                    plan.append(-1 - self._special_ids[segment])
                else:
                    plan.append(len(parts))
                    parts.append(segment)
            plans.append(plan)
        encoded = self._encode_texts(parts, threads)
        out: List[List[int]] = []
        for plan in plans:
            if len(plan) == 1 and plan[0] >= 0:
                out.append(encoded[plan[0]])
                continue
            ids: List[int] = []
            for k in plan:
                if k >= 0:
                    ids.extend(encoded[k])
                else:
                    ids.append(-1 - k)
            out.append(ids)
        return out

    def _encode_texts(self, texts: List[str], threads: int) -> List[List[int]]:
        try:
            return self._encoder.encode_texts(texts, threads)
        except UnicodeEncodeError:
            return self._encoder.encode_texts([_without_surrogates(t) for t in texts], threads)

    def count_tokens(self, text: str, *, allowed_special: SpecialSet = frozenset()) -> int:
        """How many tokens ``text`` takes. Never raises for any text: special-token text
        counts as ordinary text unless it is in ``allowed_special`` (then as one token).

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, pattern="gpt2", progress=False).count_tokens("ab ab")
        3
        """
        text = plain_str(text)
        allowed, _ = self._special_sets(allowed_special, ())
        segments = self._cutter(allowed).split(text) if allowed else [(text, False)]
        total = 0
        for segment, is_special in segments:
            if is_special:
                total += 1
            elif segment:
                try:
                    total += self._encoder.count_text(segment)
                except UnicodeEncodeError:
                    total += self._encoder.count_text(_without_surrogates(segment))
        return total

    def _special_sets(
        self, allowed_special: SpecialSet, disallowed_special: SpecialSet
    ) -> Tuple[FrozenSet[str], FrozenSet[str]]:
        specials = self._all_specials
        if allowed_special == "all":
            allowed = specials
        else:
            allowed = frozenset(map(plain_str, allowed_special))
            unknown = allowed - specials
            if unknown:
                raise SpecialTokenError(
                    f"allowed_special names {sorted(unknown)!r}, which this tokenizer does not have; "
                    f"its special tokens are {sorted(specials)!r}"
                )
        if disallowed_special == "all":
            disallowed = specials - allowed if allowed else specials
        else:
            disallowed = frozenset(map(plain_str, disallowed_special))
        return allowed, disallowed

    def _cutter(self, specials: FrozenSet[str]) -> Any:
        """What cuts ``specials`` out of text (``patterns.special_cutter``)."""
        if specials is not self._all_specials:
            return special_cutter(specials)
        if self._all_cutter is None:
            self._all_cutter = special_cutter(specials)
        return self._all_cutter

    def _refuse_disallowed(self, text: str, disallowed: FrozenSet[str]) -> None:
        if not disallowed:
            return
        found = self._cutter(disallowed).search(text)
        if found is not None:
            offset, segment = found
            raise SpecialTokenError(
                f"the text contains the special token {segment!r} at offset {offset}, which "
                f"is disallowed; pass allowed_special={{{segment!r}}} (or 'all') to encode it "
                "as the special token, or disallowed_special=() / encode_ordinary() to encode "
                "it as ordinary text"
            )

    def pieces(self, text: str) -> List[str]:
        """The pieces BPE sees for ``text``, atoms shown as glyphs; special tokens as they are.

        >>> import functionalbpe as fb
        >>> fb.train(["x"], vocab_size=256, pattern="gpt2", progress=False).pieces("Hi there")
        ['Hi', ' there']
        """
        out: List[str] = []
        for segment, is_special in self._cutter(self._all_specials).split(plain_str(text)):
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
        for segment, is_special in self._cutter(self._all_specials).split(plain_str(text)):
            if is_special:
                out.append((segment, [self._special_ids[segment]]))
                continue
            out.extend((self.scheme.show(p), self._encoder.encode_piece(p)) for p in self.scheme.split(segment))
        return out

    # -- decoding -------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of the decoded text (for a scheme: its decoded text, as UTF-8).

        For the plain scheme this is the exact concatenation of the tokens' bytes, valid
        UTF-8 or not; for the other schemes bytes that are not valid UTF-8 pass through.

        >>> import functionalbpe as fb
        >>> fb.train(["ab"], vocab_size=257, progress=False).decode_bytes([256, 0xC3])
        b'ab\\xc3'
        """
        return self._decoding.decode_bytes(ids)

    def decode(self, ids: Iterable[int], errors: str = "strict") -> str:
        """Decode ids to text. ``errors`` is as for ``bytes.decode`` ("strict", "replace", ...).

        With "strict", ids that do not form valid UTF-8 raise :class:`DecodeError` naming
        the first offending token.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab"], vocab_size=257, progress=False)
        >>> tok.decode([256, 0xC3], errors="replace")
        'ab\ufffd'
        """
        return self._decoding.decode(ids, errors)

    def stream_decoder(self, errors: str = "strict") -> "StreamDecoder":
        """An incremental decoder for ids that arrive one by one (streaming generation).

        It holds back an incomplete UTF-8 character (and, for a scheme, an operator or
        marker whose text is not known yet) until it can be emitted; the pieces it returns
        join to ``decode(all ids)``.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["é"], vocab_size=256, progress=False)
        >>> d = tok.stream_decoder()
        >>> d.feed([0xC3]), d.feed([0xA9]), d.finish()
        ('', 'é', '')
        """
        from .streaming import StreamDecoder

        return StreamDecoder(self._decoding, errors)

    # -- other libraries ------------------------------------------------------------------
    #
    # Each library's files live in functionalbpe/peers/, which reads and writes plain data
    # (ranks, merges as bytes, the pattern, the special tokens) and never sees a Tokenizer:
    # the tokenizer hands over its data here, and builds itself from what a reader returns.

    def to_tiktoken(self, path: "os.PathLike[str] | str") -> None:
        """Write the ``.tiktoken`` rank file (base64 token, space, rank; one per line).

        Plain scheme only: tiktoken cannot apply a scheme's transform (docs/interop.md).
        """
        from .peers.tiktoken import write_ranks

        write_ranks(path, self._ranks("a .tiktoken file", taken_whole=True))

    def as_tiktoken_encoding(self, name: str = "functionalbpe") -> Any:
        """A ``tiktoken.Encoding`` with these ranks, pattern and special tokens."""
        from .peers.tiktoken import encoding

        return encoding(name, self.pattern, self._ranks("a tiktoken Encoding", taken_whole=True), self.special_tokens)

    @classmethod
    def from_tiktoken(
        cls,
        path: "os.PathLike[str] | str",
        pattern: str = "gpt4",
        special_tokens: Union[Dict[str, int], Sequence[str], None] = None,
    ) -> "Tokenizer":
        """Load a ``.tiktoken`` rank file, rebuilding the merge table from the ranks.

        ``special_tokens`` maps each special token to its id (tiktoken's form) or lists
        them (ids follow the ranks). The ids stay those of the file.
        """
        from .peers.tiktoken import merges_from_ranks, read_ranks

        name = os.fspath(path)
        byte_ids, merges = merges_from_ranks(read_ranks(path), name)
        if special_tokens is None:
            specials: Dict[str, int] = {}
        elif isinstance(special_tokens, dict):
            specials = dict(special_tokens)
        else:
            first_special = NUM_BYTES + len(merges)
            specials = {s: first_special + k for k, s in enumerate(special_tokens)}
        tok = cls(make_scheme("plain", pattern), merges, list(specials), byte_ids=byte_ids, special_ids=list(specials.values()))
        tok._refuse_tokens_bpe_would_split(name, TokenizerFileError)
        return tok

    def to_hf(self, path: "os.PathLike[str] | str") -> None:
        """Write a ``tokenizer.json`` that HF tokenizers loads and that encodes the same ids
        (special tokens as added tokens, always recognized). Plain scheme only."""
        from .peers.hf import write_tokenizer_json

        ranks = self._ranks("an HF tokenizer.json", taken_whole=False)
        table = self.alphabet.all_token_bytes()
        merges = [(table[a], table[b]) for a, b in self.alphabet.merges]
        # A word that is in the vocabulary may skip the merges (faster in HF) only if the
        # merges would give that very token: true of every table a trainer makes; the
        # compiled encoder checks it when it is built, so it is known rather than assumed.
        native = self._encoder.native
        whole = bool(native is not None and native.all_self_encoding)
        write_tokenizer_json(path, ranks, merges, self.pattern, self.special_tokens, ignore_merges=whole)

    def _ranks(self, what: str, taken_whole: bool) -> Dict[bytes, int]:
        """``{token bytes: id}`` of every token but the special ones, in id order: the
        vocabulary as tiktoken and HF key it. Refused, saying why: a scheme (the libraries
        cannot apply it), two tokens with the same bytes, and with ``taken_whole`` (tiktoken
        takes a piece that is a token whole) a token its merges do not make of its bytes."""
        if self.scheme.atoms:
            raise FunctionalBPEError(
                f"{what} can only hold the plain scheme: the {self.scheme.name!r} scheme rewrites text "
                "into atoms before BPE, and other libraries cannot apply that rewrite, so the export "
                "would encode different ids; save it with Tokenizer.save() instead (docs/interop.md)"
            )
        if taken_whole:
            self._refuse_tokens_bpe_would_split("this tokenizer")
        table = self.alphabet.all_token_bytes()
        ext = (lambda i: i) if self._idmap is None else self._idmap.external
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

    def _refuse_tokens_bpe_would_split(
        self, origin: str, error: Type[FunctionalBPEError] = FunctionalBPEError
    ) -> None:
        """tiktoken takes a piece that is a token whole; functionalbpe applies the merges. The
        two can only agree if every token's own bytes merge back into it: check that. (True of
        every table a trainer makes, and of every rank file ``merges_from_ranks`` accepts, as
        far as a randomized search of small tables could tell; a hand-made merge table can
        break it.)"""
        native = self._encoder.native
        if native is not None and native.all_self_encoding:
            return
        from .core.reference import encode_piece

        table = self.alphabet.all_token_bytes()
        ranks = self._encoder.ranks
        ext = (lambda i: i) if self._idmap is None else self._idmap.external
        for i in range(self.alphabet.first_merge, self.alphabet.first_special):
            ids = encode_piece(list(table[i]), ranks)
            if ids != [i]:
                raise error(
                    f"{origin}: the token {excerpt(table[i])} (id {i}) is not what its merges make of its own "
                    f"bytes ({excerpt([ext(j) for j in ids])}); tiktoken would take it whole where "
                    "functionalbpe applies the merges, so the two would disagree"
                )

    # -- files ----------------------------------------------------------------------------

    def to_payload(self) -> Dict[str, Any]:
        payload = {
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
        if self._idmap is not None:
            # Only imported vocabularies have this: their bytes keep their own ids.
            payload["byte_ids"] = self._idmap.byte_ids
        return payload

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
        """The tokenizer a payload (a file's contents, a pickle's state) describes. Every field
        is checked before anything is built from it (functionalbpe/filecheck.py); anything
        wrong is a :class:`TokenizerFileError` naming the field and the entry."""
        check_fields(payload)
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
        specials = payload["special_tokens"]
        try:
            tok = cls(
                scheme,
                [tuple(m) for m in merges],
                list(specials),
                payload["merge_policy"],
                payload.get("merge_counts"),
                byte_ids=payload.get("byte_ids"),
                special_ids=list(specials.values()),
            )
        except FunctionalBPEError as exc:
            raise TokenizerFileError(str(exc)) from None
        if tok.special_tokens != specials:
            raise TokenizerFileError("the special token ids do not match the tokens")
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

