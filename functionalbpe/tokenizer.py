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
import random
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
from .core.alphabet import Alphabet, check_policy, policy_code
from .util.checks import bpe_text, plain_str, seed_value, special_set
from .util.checks import without_surrogates as _without_surrogates
from .core.dropout import check_dropout
from .core.encoder import Encoder, pack
from .core.decoding import Decoding
from .errors import FunctionalBPEError, SpecialTokenError, TokenizerFileError, UnknownTokenError
from .formats.tokenizer_file import check_fields
from .util.checks import excerpt
from .formats.tokenizer_file import FORMAT, read_payload, write_payload
from .core.idmap import IdMap, keeps_internal_ids
from .text.patterns import special_cutter
from .schemes.base import Scheme
from .schemes.registry import make_scheme, scheme_from_file

if TYPE_CHECKING:  # pragma: no cover
    from .core.streaming import StreamDecoder
    from .teach.encode_trace import EncodingTrace
    from .pipeline.tokenfile import EncodeSummary

SpecialSet = Union[str, AbstractSet[str], Collection[str]]


class Tokenizer:
    """A trained byte-level BPE tokenizer: a scheme (how text becomes pieces), a merge
    table and special tokens.

    Build one with :func:`functionalbpe.train`, :meth:`Tokenizer.load`,
    :meth:`from_tiktoken` or :meth:`from_hf`; the constructor takes the parts themselves.

    >>> import functionalbpe as fb
    >>> tok = fb.Tokenizer(fb.make_scheme("plain"), merges=[(104, 105)], special_tokens=["<s>"])
    >>> tok.encode("hi!<s>", allowed_special="all"), tok.vocab_size
    ([256, 33, 257], 258)
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
        merge_ids: Optional[Sequence[int]] = None,
    ) -> None:
        """``byte_ids``, ``merge_ids`` and ``special_ids`` keep the ids of an imported
        vocabulary (see :mod:`functionalbpe.core.idmap`); leave them out for the standard
        layout."""
        policy = policy_code(merge_policy)
        self.scheme = scheme
        self.merge_policy = merge_policy
        self.alphabet = Alphabet(scheme.atoms, merges, special_tokens)
        if scheme.atoms:  # without atoms every symbol is text, and text merges with text
            check_policy(self.alphabet.merges, self.alphabet.base_flags(), policy, merge_policy)
        self.merge_counts: Optional[List[int]] = list(merge_counts) if merge_counts is not None else None
        # How a multilingual training chose its merges (objective, mix, parity options); JSON data.
        self.training: Optional[Dict[str, Any]] = None
        if self.merge_counts is not None and len(self.merge_counts) != len(self.alphabet.merges):
            raise FunctionalBPEError("merge_counts must have one count per merge")
        idmap = None if keeps_internal_ids(self.alphabet, byte_ids, special_ids, merge_ids) else \
            IdMap(self.alphabet, byte_ids, special_ids, merge_ids)
        self._idmap: Optional[IdMap] = None if idmap is None or idmap.identity else idmap
        external = (lambda i: i) if idmap is None else idmap.external
        self._special_ids = {s: external(i) for s, i in self.alphabet.special_ids().items()}
        # "All special tokens" is one object with its cutter kept here: finding the cutter by
        # an equal set would compare every token on each call (0.5 ms for 20,000 tokens).
        self._all_specials = frozenset(self._special_ids)
        self._all_cutter: Any = None
        self._by_bytes: Optional[Dict[bytes, int]] = None  # encode_single_token's table, made on first use
        self._lengths: Any = None  # each id's length in bytes (a numpy array), for offsets
        output_ids = None if self._idmap is None else self._idmap.external_ids[: self.alphabet.first_special]
        self._encoder = Encoder(self.alphabet, scheme, output_ids)
        self._decoding = Decoding(self.alphabet, scheme, self._encoder.decode_bytes, self._idmap)

    # -- what it is ---------------------------------------------------------------------

    @property
    def merges(self) -> List[Tuple[int, int]]:
        """The merges in the order they apply, as ``(left id, right id)``; merge ``k`` makes
        the token after the bytes (and atoms) and the merges before it.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).merges
        [(97, 98)]
        """
        if self._idmap is None:
            return list(self.alphabet.merges)
        ext = self._idmap.external
        return [(ext(a), ext(b)) for a, b in self.alphabet.merges]

    @property
    def vocab_size(self) -> int:
        """One more than the largest id (the size of a model's embedding table).

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False).vocab_size
        258
        """
        return self.alphabet.vocab_size if self._idmap is None else self._idmap.size

    @property
    def special_tokens(self) -> Dict[str, int]:
        """Each special token's text and id.

        >>> import functionalbpe as fb
        >>> fb.train(["ab"], vocab_size=257, special_tokens=["<s>"], progress=False).special_tokens
        {'<s>': 256}
        """
        return dict(self._special_ids)

    @property
    def pattern(self) -> str:
        """The pre-tokenization regex (the scheme's).

        >>> import functionalbpe as fb
        >>> fb.train(["ab"], vocab_size=256, pattern="gpt2", progress=False).pattern == fb.PATTERNS["gpt2"]
        True
        """
        return self.scheme.pattern

    @property
    def native(self) -> bool:
        """Whether the compiled encoder is in use (else the pure-Python one).

        >>> import functionalbpe as fb
        >>> fb.train(["ab"], vocab_size=256, progress=False).native in (True, False)
        True
        """
        return self._encoder.native is not None

    def token_bytes(self, token: int) -> bytes:
        """The bytes of a token in the scheme's text form (an atom as its UTF-8 bytes).

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).token_bytes(256)
        b'ab'
        """
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
        dropout: float = 0.0,
        seed: Optional[int] = None,
    ) -> List[int]:
        """Encode ``text``; special tokens only where allowed (tiktoken's rules).

        A special token that is neither allowed nor explicitly left out of
        ``disallowed_special`` raises :class:`SpecialTokenError`, naming the token and how
        to allow it. A lone surrogate (which UTF-8 cannot hold) is read as U+FFFD, as
        tiktoken does.

        ``dropout``: BPE-dropout (subword regularization, :mod:`functionalbpe.core.dropout`):
        each merge about to happen is skipped with this probability, so the same text comes
        out in different segmentations that all decode back to it; 0 is plain encoding, 1
        leaves every piece as bytes (and atoms). ``seed`` fixes the draws (None: a fresh
        random seed each call).

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False)
        >>> tok.encode("ab<s>", allowed_special="all")
        [256, 257]
        >>> tok.encode("ab ab", dropout=1.0)
        [97, 98, 32, 97, 98]
        """
        text = plain_str(text)
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        self._refuse_disallowed(text, disallowed)
        p = check_dropout(dropout)
        if p:
            return self._encode_dropout(text, allowed, p, random.Random(seed_value(seed)))
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
        dropout: float = 0.0,
        seed: Optional[int] = None,
    ) -> List[List[int]]:
        """Encode several documents on ``threads`` threads (None: all cores); ``num_threads``
        is the same option under tiktoken's name. ``dropout`` and ``seed`` are as for
        :meth:`encode` (one random stream over the batch, in order, on the calling thread).

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
        p = check_dropout(dropout)
        if p:
            rng = random.Random(seed_value(seed))
            for text in texts:
                self._refuse_disallowed(text, disallowed)
            return [self._encode_dropout(text, allowed, p, rng) for text in texts]
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

    def _encode_dropout(self, text: str, allowed: FrozenSet[str], p: float, rng: random.Random) -> List[int]:
        text = bpe_text(text)
        out: List[int] = []
        for segment, is_special in self._cutter(allowed).split(text) if allowed else [(text, False)]:
            if is_special:
                out.append(self._special_ids[segment])
            elif segment:
                out.extend(self._encoder.encode_text_dropout(segment, p, rng))
        return out

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> Tuple[List[int], List[Tuple[int, int]]]:
        """:meth:`encode`, with the ``(start, end)`` character span of ``text`` each token
        came from (HF's offset mapping), for span tasks.

        A character that BPE cut in two is given to every token holding a byte of it (no
        span is empty; neighbours share a character only where one was cut). For a scheme,
        the tokens of a piece it rewrites (instructions, markers and the rest) all get the
        span of that piece. The rules: :mod:`functionalbpe.core.offsets`.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=257, progress=False)
        >>> tok.encode_with_offsets("ab é")
        ([256, 32, 195, 169], [(0, 2), (2, 3), (3, 4), (3, 4)])
        """
        from .core.offsets import scheme_spans, token_spans

        text = bpe_text(text)
        if not self.scheme.atoms:
            ids = self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
            return ids, token_spans(text, self._token_lengths(ids))
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        self._refuse_disallowed(text, disallowed)
        segments = self._cutter(allowed).split(text) if allowed else [(text, False)]
        return scheme_spans(
            segments, self.scheme, self._encoder.encode_pieces, self._special_ids.__getitem__, self._token_lengths
        )

    def _token_lengths(self, ids: List[int]) -> Any:
        """The byte length of each of the tokenizer's ``ids``."""
        import numpy as np

        if self._lengths is None:
            # One array indexed by the tokenizer's own ids (0 for a gap), so that the lengths
            # of a whole encoding are one numpy lookup.
            table = self.alphabet.all_token_bytes()
            lengths = np.zeros(self.vocab_size, dtype=np.int64)
            ext = (lambda i: i) if self._idmap is None else self._idmap.external
            for i, data in enumerate(table):
                lengths[ext(i)] = len(data)
            self._lengths = lengths
        return self._lengths[np.asarray(ids, dtype=np.int64)]

    def encode_batch_packed(
        self,
        texts: Iterable[str],
        threads: Optional[int] = None,
        *,
        width: int = 4,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
    ) -> Tuple[bytes, List[int]]:
        """:meth:`encode_batch` as one ``bytes`` of little-endian ids of ``width`` bytes (2 or
        4), one text's after another, and the number of ids of each text: what a token file
        holds, made without a Python int per id when the text reaches C whole (no special
        token allowed; the plain scheme and the boundary markers with their compiled scanner).

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).encode_batch_packed(["ab", "b"], width=2)
        (b'\\x00\\x01b\\x00', [1, 1])
        """
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        if allowed:
            lists = self.encode_batch(texts, threads, allowed_special=allowed, disallowed_special=disallowed)
            return pack(lists, width), [len(ids) for ids in lists]
        texts = list(map(plain_str, texts))
        threads = thread_count(threads)
        for text in texts:
            self._refuse_disallowed(text, disallowed)
        try:
            return self._encoder.encode_texts_packed(texts, threads, width)
        except UnicodeEncodeError:
            return self._encoder.encode_texts_packed([_without_surrogates(t) for t in texts], threads, width)

    def encode_to_file(
        self,
        source: Any,
        out: "os.PathLike[str] | str",
        *,
        format: Optional[str] = None,
        dtype: Any = None,
        eot: Union[None, str, int] = None,
        offsets: "os.PathLike[str] | str | None" = None,
        threads: Optional[int] = None,
        progress: Any = None,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        errors: str = "strict",
    ) -> "EncodeSummary":
        """Encode a corpus (a path, ``fb.files(...)`` or an iterable of documents) into a
        token file for training: ``npy``, raw ``bin`` or llm.c's ``llmc``, each document's ids
        followed by ``eot``, streamed on all cores in bounded memory, written whole or not at
        all. See :func:`functionalbpe.pipeline.tokenfile.encode_to_file` and docs/tokenfiles.md.

        >>> import functionalbpe as fb, numpy as np, os, tempfile
        >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<|eot|>"], progress=False)
        >>> path = os.path.join(tempfile.mkdtemp(), "ids.npy")
        >>> tok.encode_to_file(["ab", "b"], path, eot="<|eot|>", progress=False).tokens
        4
        >>> np.load(path).tolist()
        [256, 257, 98, 257]
        """
        from .pipeline.tokenfile import encode_to_file

        return encode_to_file(self, source, out, format=format, dtype=dtype, eot=eot, offsets=offsets,
                              threads=threads, progress=progress, allowed_special=allowed_special,
                              disallowed_special=disallowed_special, errors=errors)
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
            allowed = special_set(allowed_special, "allowed_special")
            unknown = allowed - specials
            if unknown:
                raise SpecialTokenError(
                    f"allowed_special names {sorted(unknown)!r}, which this tokenizer does not have; "
                    f"its special tokens are {sorted(specials)!r}"
                )
        if disallowed_special == "all":
            disallowed = specials - allowed if allowed else specials
        else:
            disallowed = special_set(disallowed_special, "disallowed_special")
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
            error = SpecialTokenError(
                f"the text contains the special token {segment!r} at offset {offset}, which "
                f"is disallowed; pass allowed_special={{{segment!r}}} (or 'all') to encode it "
                "as the special token, or disallowed_special=() / encode_ordinary() to encode "
                "it as ordinary text"
            )
            error.token, error.offset = segment, offset  # for a caller that words it its own way (the CLI)
            raise error

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

    def trace(self, text: str) -> "EncodingTrace":
        """How ``text`` is encoded, merge by merge: per piece, the symbols before, the pair
        merged, its rank and the symbols after; ``.ids`` is ``encode(text,
        allowed_special="all")`` (:mod:`functionalbpe.teach.encode_trace`).

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=257, pattern="gpt2", progress=False)
        >>> t = tok.trace("ab")
        >>> [(s.before, s.pair, s.after) for s in t.steps[0]], t.ids
        ([((97, 98), (97, 98), (256,))], [256])
        """
        from .teach.encode_trace import trace

        return trace(self, text)

    def vocab_lines(self) -> List[str]:
        """The vocabulary, one token a line, minbpe-style: specials, atoms, bytes, then
        ``id  [a][b] -> [ab]  count`` per merge (:mod:`functionalbpe.teach.vocab`).

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).vocab_lines()[-1]
        '   256  [a][b] -> [ab]  2'
        """
        from .teach.vocab import vocab_lines

        return vocab_lines(self)

    # -- decoding -------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int], max_output: Optional[int] = None) -> bytes:
        """The bytes of the decoded text (for a scheme: its decoded text, as UTF-8).

        For the plain scheme this is the exact concatenation of the tokens' bytes, valid
        UTF-8 or not; for the other schemes bytes that are not valid UTF-8 pass through.

        >>> import functionalbpe as fb
        >>> fb.train(["ab"], vocab_size=257, progress=False).decode_bytes([256, 0xC3])
        b'ab\\xc3'
        """
        return self._decoding.decode_bytes(ids, max_output)

    def decode(self, ids: Iterable[int], errors: str = "strict", max_output: Optional[int] = None) -> str:
        """Decode ids to text. ``errors`` is as for ``bytes.decode`` ("strict", "replace", ...).
        ``max_output``: the most characters this call may make (default: 256 per id, at
        least 16,777,216; ``core.decoding.output_budget``), past which it is a DecodeError.

        With "strict", ids that do not form valid UTF-8 raise :class:`DecodeError` naming
        the first offending token.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab"], vocab_size=257, progress=False)
        >>> tok.decode([256, 0xC3], errors="replace")
        'ab\ufffd'
        """
        return self._decoding.decode(ids, errors, max_output)

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
        from .core.streaming import StreamDecoder

        return StreamDecoder(self._decoding, errors)

    # -- the names tiktoken and HF users type ----------------------------------------------
    #
    # Thin aliases, so that code written for a tiktoken Encoding or an HF tokenizer runs on
    # a Tokenizer. tiktoken's names speak bytes; HF's speak vocabulary strings, the tokens
    # written in GPT-2's byte-to-character table (formats/bytelevel.py), as in to_hf's file.

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
        return self._special_id("<|endoftext|>")

    @property
    def special_tokens_set(self) -> "set[str]":
        """The special tokens' texts (tiktoken's name).

        >>> import functionalbpe as fb
        >>> fb.train(["ab"], vocab_size=257, special_tokens=["<s>"], progress=False).special_tokens_set
        {'<s>'}
        """
        return set(self._special_ids)

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of the one token whose text (a special token's, or UTF-8) or bytes are
        ``text_or_bytes``; :class:`UnknownTokenError` if no token is exactly that.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False)
        >>> tok.encode_single_token("ab"), tok.encode_single_token(b"a"), tok.encode_single_token("<s>")
        (256, 97, 257)
        """
        if isinstance(text_or_bytes, str):
            if text_or_bytes in self._special_ids:
                return self._special_ids[text_or_bytes]
            data = text_or_bytes.encode("utf-8")
        elif isinstance(text_or_bytes, (bytes, bytearray)):
            data = bytes(text_or_bytes)
        else:
            raise FunctionalBPEError(f"encode_single_token takes a str or bytes, not a {type(text_or_bytes).__name__}")
        found = self._ids_by_bytes().get(data)
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
        from .formats.bytelevel import written

        vocab = {written(data): i for data, i in self._ids_by_bytes().items()}
        vocab.update(self._special_ids)
        return vocab

    def token_to_id(self, token: str) -> Optional[int]:
        """HF's lookup of a vocabulary string (see :meth:`get_vocab`); None if absent, as HF.

        >>> import functionalbpe as fb
        >>> fb.train([" a a"], vocab_size=257, progress=False).token_to_id("Ġa")
        256
        """
        from .formats.bytelevel import read

        if token in self._special_ids:
            return self._special_ids[token]
        data = read(token)
        return None if data is None else self._ids_by_bytes().get(data)

    def id_to_token(self, token: int) -> Optional[str]:
        """HF's vocabulary string of an id (see :meth:`get_vocab`); None if it is not an id.

        >>> import functionalbpe as fb
        >>> fb.train([" a a"], vocab_size=257, progress=False).id_to_token(256)
        'Ġa'
        """
        from .formats.bytelevel import written

        try:
            internal = self._decoding.internal([token])[0]
        except FunctionalBPEError:
            return None
        if internal >= self.alphabet.first_special:
            return self.alphabet.specials[internal - self.alphabet.first_special]
        return written(self.alphabet.token_bytes(internal))

    def _special_id(self, text: str) -> int:
        if text not in self._special_ids:
            raise UnknownTokenError(f"{text!r} is not a special token here (they are {sorted(self._special_ids)!r})")
        return self._special_ids[text]

    def _known_id(self, token: int) -> int:
        try:
            self._decoding.internal([token])
        except FunctionalBPEError:
            raise UnknownTokenError(f"{token!r} is not an id of this tokenizer") from None
        return token

    def _ids_by_bytes(self) -> Dict[bytes, int]:
        """``{token bytes: id}`` of the ordinary tokens (the lowest id where two share bytes)."""
        if self._by_bytes is None:
            table = self.alphabet.all_token_bytes()
            ext = (lambda i: i) if self._idmap is None else self._idmap.external
            by_bytes: Dict[bytes, int] = {}
            for i in range(self.alphabet.first_special):
                by_bytes.setdefault(table[i], ext(i))
            self._by_bytes = by_bytes
        return self._by_bytes

    # -- other libraries ------------------------------------------------------------------
    #
    # Each library's files live in functionalbpe/peers/, which reads and writes plain data
    # (ranks, merges as bytes, the pattern, the special tokens) and never sees a Tokenizer:
    # the tokenizer hands over its data here, and builds itself from what a reader returns.

    def to_tiktoken(self, path: "os.PathLike[str] | str") -> None:
        """Write the ``.tiktoken`` rank file (base64 token, space, rank; one per line).

        Plain scheme only: tiktoken cannot apply a scheme's transform (docs/interop.md).

        >>> import os, tempfile, functionalbpe as fb
        >>> path = os.path.join(tempfile.mkdtemp(), "t.tiktoken")
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).to_tiktoken(path)
        >>> open(path).read().splitlines()[256]
        'YWI= 256'
        """
        from .formats.tiktoken import write_ranks

        write_ranks(path, self._ranks("a .tiktoken file", taken_whole=True))

    def as_tiktoken_encoding(self, name: str = "functionalbpe") -> Any:
        """A ``tiktoken.Encoding`` with these ranks, pattern and special tokens (needs
        tiktoken; plain scheme only).

        >>> import tiktoken, functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=257, progress=False)
        >>> tok.as_tiktoken_encoding().encode("ab ab") == tok.encode("ab ab")
        True
        """
        from .peers.tiktoken import encoding

        return encoding(name, self.pattern, self._ranks("a tiktoken Encoding", taken_whole=True), self.special_tokens)

    @classmethod
    def from_tiktoken(
        cls,
        source: "os.PathLike[str] | str | Any",
        pattern: Optional[str] = None,
        special_tokens: Union[Dict[str, int], Sequence[str], None] = None,
    ) -> "Tokenizer":
        """Import a tiktoken vocabulary: a ``.tiktoken`` rank file, or a ``tiktoken.Encoding``.

        The merge table is rebuilt from the ranks, and the ids stay the ranks, whatever their
        layout (:mod:`functionalbpe.core.idmap`). A file holds no pattern: ``pattern``
        defaults to ``"gpt4"``; an ``Encoding`` brings its own pattern and special tokens
        (``pattern``/``special_tokens`` override them). ``special_tokens`` maps each special
        token to its id (tiktoken's form) or lists them (ids follow the ranks).

        >>> import tiktoken, functionalbpe as fb
        >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
        >>> enc = tiktoken.Encoding("t", pat_str=r"\\S+|\\s+", mergeable_ranks=ranks, special_tokens={"<e>": 257})
        >>> fb.Tokenizer.from_tiktoken(enc).encode("ab <e>", allowed_special="all")
        [256, 32, 257]
        """
        from .formats.tiktoken import merges_from_ranks, read_ranks
        from .peers.tiktoken import encoding_parts

        if isinstance(source, (str, os.PathLike)):
            name = os.fspath(source)
            ranks, own_pattern, own_specials = read_ranks(source), "gpt4", {}
        else:
            ranks, own_pattern, own_specials = encoding_parts(source)
            name = f"the tiktoken Encoding {getattr(source, 'name', '?')!r}"
        byte_ids, merges, merge_ids = merges_from_ranks(ranks, name)
        if special_tokens is None:
            specials: Dict[str, int] = dict(own_specials)
        elif isinstance(special_tokens, dict):
            specials = dict(special_tokens)
        else:
            first_special = max(ranks.values()) + 1
            specials = {s: first_special + k for k, s in enumerate(special_tokens)}
        tok = cls(
            make_scheme("plain", pattern or own_pattern), merges, list(specials),
            byte_ids=byte_ids, merge_ids=merge_ids, special_ids=list(specials.values()),
        )
        tok._refuse_tokens_bpe_would_split(name, TokenizerFileError)
        return tok

    def to_hf(
        self,
        path: "os.PathLike[str] | str",
        *,
        bos_token: Optional[str] = None,
        eos_token: Optional[str] = None,
        pad_token: Optional[str] = None,
        unk_token: Optional[str] = None,
        model_max_length: Optional[int] = None,
    ) -> None:
        """Write the tokenizer for HF: a directory as ``save_pretrained`` leaves it
        (``tokenizer.json``, ``tokenizer_config.json``, ``special_tokens_map.json``), which
        transformers' ``AutoTokenizer.from_pretrained`` loads with the named special tokens
        set; or, for a path ending in ``.json``, the ``tokenizer.json`` alone. Missing
        directories are created. Either encodes our ids (special tokens as added tokens,
        always recognized). Plain scheme only.

        ``bos_token``, ``eos_token``, ``pad_token``, ``unk_token``: which of the special
        tokens play these roles (``padding=True`` needs ``pad_token``);
        ``model_max_length``: the length transformers truncates to.

        >>> import os, tempfile, functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<|eot|>"], progress=False)
        >>> out = os.path.join(tempfile.mkdtemp(), "hf")
        >>> tok.to_hf(out, eos_token="<|eot|>", pad_token="<|eot|>")
        >>> sorted(os.listdir(out))
        ['special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']
        """
        from .formats.hf import write_hf

        write_hf(path, self._hf_document(), _roles(bos_token, eos_token, pad_token, unk_token), model_max_length)

    def to_transformers(
        self,
        *,
        bos_token: Optional[str] = None,
        eos_token: Optional[str] = None,
        pad_token: Optional[str] = None,
        unk_token: Optional[str] = None,
        model_max_length: Optional[int] = None,
    ) -> Any:
        """This tokenizer as a transformers ``PreTrainedTokenizerFast`` (what :meth:`to_hf`
        writes, loaded), with the same options. Needs transformers; plain scheme only.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<pad>"], progress=False)
        >>> hf = tok.to_transformers(pad_token="<pad>")
        >>> hf(["ab", "ab ab"], padding=True)["input_ids"]
        [[256, 257, 257], [256, 32, 256]]
        """
        from .peers.hf import transformers_tokenizer

        roles = _roles(bos_token, eos_token, pad_token, unk_token)
        return transformers_tokenizer(self._hf_document(), roles, model_max_length)

    def _hf_document(self) -> Dict[str, Any]:
        from .formats.hf import tokenizer_json

        ranks = self._ranks("an HF tokenizer.json", taken_whole=False)
        table = self.alphabet.all_token_bytes()
        merges = [(table[a], table[b]) for a, b in self.alphabet.merges]
        # A word that is in the vocabulary may skip the merges (faster in HF) only if the
        # merges would give that very token: true of every table a trainer makes; the
        # compiled encoder checks it when it is built, so it is known rather than assumed.
        native = self._encoder.native
        whole = bool(native is not None and native.all_self_encoding)
        return tokenizer_json(ranks, merges, self.pattern, self.special_tokens, ignore_merges=whole)

    @classmethod
    def from_hf(cls, source: "os.PathLike[str] | str | Any") -> "Tokenizer":
        """Import a byte-level BPE tokenizer from HF: the path of a ``tokenizer.json``, a
        directory holding one, a ``tokenizers.Tokenizer`` or a transformers fast tokenizer.

        The ids stay HF's, whatever their layout (special tokens first or last); added
        tokens become special tokens, so ``encode(text, allowed_special="all")`` gives the
        ids HF's ``encode(text, add_special_tokens=False)`` gives. What would make the ids
        differ (a normalizer, a post-processor that adds tokens, a model other than BPE) is
        refused with a :class:`TokenizerFileError` naming the part.

        >>> import os, tempfile, functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False)
        >>> path = os.path.join(tempfile.mkdtemp(), "tokenizer.json")
        >>> tok.to_hf(path)
        >>> fb.Tokenizer.from_hf(path).encode("ab<s>", allowed_special="all")
        [256, 257]
        """
        from .formats.hf import read_hf

        got = read_hf(source)
        try:
            tok = cls(
                make_scheme("plain", got.pattern), got.merges, list(got.special_tokens),
                byte_ids=got.byte_ids, merge_ids=got.merge_ids, special_ids=list(got.special_tokens.values()),
            )
        except FunctionalBPEError as exc:
            raise TokenizerFileError(f"{got.origin}: {exc}") from None
        if got.ignore_merges:  # HF takes a word that is a token whole, as tiktoken does
            tok._refuse_tokens_bpe_would_split(got.origin, TokenizerFileError)
        return tok

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
        from .core.dropout import encode_piece_dropout  # with p=0: the merges, on a heap (n log n)

        table = self.alphabet.all_token_bytes()
        ranks = self._encoder.ranks
        ext = (lambda i: i) if self._idmap is None else self._idmap.external
        for i in range(self.alphabet.first_merge, self.alphabet.first_special):
            ids = encode_piece_dropout(list(table[i]), ranks, 0.0, None)  # type: ignore[arg-type]
            if ids != [i]:
                raise error(
                    f"{origin}: the token {excerpt(table[i])} (id {i}) is not what its merges make of its own "
                    f"bytes ({excerpt([ext(j) for j in ids])}); tiktoken would take it whole where "
                    "functionalbpe applies the merges, so the two would disagree"
                )

    # -- files ----------------------------------------------------------------------------

    def to_payload(self) -> Dict[str, Any]:
        """The tokenizer as the JSON data its file holds (:mod:`functionalbpe.formats.tokenizer_file`).

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).to_payload()["merges"]
        [[97, 98]]
        """
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
            # Only imported vocabularies have these: their bytes and merges keep their own ids.
            payload["byte_ids"] = self._idmap.byte_ids
            if self._idmap.merge_ids != list(range(self.alphabet.first_merge, self.alphabet.first_special)):
                payload["merge_ids"] = self._idmap.merge_ids
        if self.training is not None:
            payload["training"] = self.training
        return payload

    def save(self, path: "os.PathLike[str] | str") -> None:
        """Write the tokenizer file atomically (see :mod:`functionalbpe.formats.tokenizer_file`).

        >>> import os, tempfile, functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=257, progress=False)
        >>> path = os.path.join(tempfile.mkdtemp(), "tok.json")
        >>> tok.save(path)
        >>> fb.Tokenizer.load(path) == tok
        True
        """
        write_payload(path, self.to_payload())

    @classmethod
    def load(cls, path: "os.PathLike[str] | str") -> "Tokenizer":
        """Read a tokenizer file; anything wrong is a :class:`TokenizerFileError`.

        >>> import functionalbpe as fb
        >>> fb.Tokenizer.load("no/such/file.json")
        Traceback (most recent call last):
        functionalbpe.errors.TokenizerFileError: no/such/file.json: no such tokenizer file
        """
        payload = read_payload(path)
        try:
            return cls.from_payload(payload)
        except TokenizerFileError as exc:
            raise TokenizerFileError(f"{os.fspath(path)}: {exc}") from None

    @classmethod
    def from_payload(cls, payload: Dict[str, Any]) -> "Tokenizer":
        """The tokenizer a payload (a file's contents, a pickle's state) describes. Every field
        is checked before anything is built from it (functionalbpe/core/limits.py); anything
        wrong is a :class:`TokenizerFileError` naming the field and the entry.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=257, progress=False)
        >>> fb.Tokenizer.from_payload(tok.to_payload()) == tok
        True
        """
        check_fields(payload)
        try:
            scheme = scheme_from_file(payload["scheme"], payload["pattern"]["regex"], payload["scheme_options"])
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
                merge_ids=payload.get("merge_ids"),
            )
        except FunctionalBPEError as exc:
            raise TokenizerFileError(str(exc)) from None
        if tok.special_tokens != specials:
            raise TokenizerFileError("the special token ids do not match the tokens")
        tok.training = payload.get("training")
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


def _roles(bos: Optional[str], eos: Optional[str], pad: Optional[str], unk: Optional[str]) -> Dict[str, Optional[str]]:
    """to_hf's role options by transformers' names for them."""
    return {"bos_token": bos, "eos_token": eos, "pad_token": pad, "unk_token": unk}
