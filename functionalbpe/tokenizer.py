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
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple, Type, TypeVar, Union

from .core._native import thread_count
from .util.collector import collector_paused
from .core.alphabet import Alphabet, check_policy, policy_code
from .core.decoding import Decoding
from .core.dropout import check_dropout
from .core.encoder import Encoder, encode_batch_flat, pack, plain_texts, stage_limit
from .core.idmap import IdMap
from .core.vocabulary import Vocabulary
from .errors import FunctionalBPEError, TokenizerFileError, UnknownTokenError
from .formats.bytelevel import read, written
from .formats.reading import release_freed_memory
from .formats.tokenizer_file import parts_from_payload, payload_of, read_payload, write_payload
from .schemes.base import Scheme
from .text.specials import SpecialPolicy, SpecialSet, check_add_special_tokens
from .util.checks import bpe_text, excerpt, plain_str, seed_value
from .util.display import show_text_form

if TYPE_CHECKING:  # pragma: no cover
    from .core.streaming import StreamDecoder
    from .teach.encode_trace import EncodingTrace
    from .pipeline.tokenfile import EncodeSummary

T = TypeVar("T", bound="Tokenizer")


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
        joins: Sequence[Tuple[int, int, int]] = (),
        whole_pieces: bool = False,
    ) -> None:
        """``byte_ids``, ``merge_ids`` and ``special_ids`` keep the ids of an imported
        vocabulary (see :mod:`functionalbpe.core.idmap`); leave them out for the standard
        layout. ``joins`` (``(left, right, token)`` in internal ids: pairs that make a token
        without being its merge) and ``whole_pieces`` (a piece that is a token's bytes is that
        token) make a vocabulary that merges cannot describe alone encode as tiktoken does
        (docs/interop.md, *Tokens no merge makes*); a trained tokenizer needs neither."""
        policy = policy_code(merge_policy)
        self.scheme = scheme
        self.merge_policy = merge_policy
        self.alphabet = Alphabet(scheme.atoms, merges, special_tokens)
        if scheme.atoms:  # without atoms every symbol is text, and text merges with text
            check_policy(self.alphabet.merges, self.alphabet.base_flags(), policy, merge_policy)
        self.merge_counts: Optional[List[int]] = list(merge_counts) if merge_counts is not None else None
        self._training: Optional[Dict[str, Any]] = None
        if self.merge_counts is not None and len(self.merge_counts) != len(self.alphabet.merges):
            raise FunctionalBPEError("merge_counts must have one count per merge")
        # The ids as written (an imported vocabulary's own; the identity for one trained here).
        self._idmap = IdMap(self.alphabet, byte_ids, special_ids, merge_ids)  # cheap when they are internal
        self._specials = SpecialPolicy({s: self._idmap.external(i) for s, i in self.alphabet.special_ids().items()})
        mapped = None if self._idmap.identity else self._idmap
        self._encoder = Encoder(self.alphabet, scheme, mapped and mapped.external_ids[: self.alphabet.first_special],
                                joins, whole_pieces)
        self._decoding = Decoding(self.alphabet, scheme, self._encoder.decode_bytes, mapped)
        self._vocab = Vocabulary(self.alphabet, self._idmap, self._encoder)

    # -- what it is ---------------------------------------------------------------------

    @property
    def training(self) -> Optional[Dict[str, Any]]:
        """How the merges were chosen, as JSON data (saved in the file): a multilingual
        training's objective, mix and parity options; a continued training's base
        (``continued_from``, whose ``merges`` come first: superwords' first stage, which lets
        the encoder take long pieces in two stages). None for a plain training.

        >>> import functionalbpe as fb
        >>> text = ["the cat sat on the mat, the cat sat on the hat"] * 5
        >>> tok = fb.train(text, vocab_size=275, superwords=270, progress=False)
        >>> tok.training["continued_from"]["merges"]  # ids 256..269: the first stage
        14
        """
        return self._training

    @training.setter
    def training(self, value: Optional[Dict[str, Any]]) -> None:
        limit = stage_limit(value, self.alphabet)  # checked before anything changes
        self._training = value
        self._encoder.set_stages(limit)

    @property
    def merges(self) -> List[Tuple[int, int]]:
        """The merges in the order they apply, as ``(left id, right id)``; merge ``k`` makes
        the token after the bytes (and atoms) and the merges before it.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).merges
        [(97, 98)]
        """
        ext = self._idmap.external
        return [(ext(a), ext(b)) for a, b in self.alphabet.merges]

    @property
    def encoder(self) -> Encoder:
        """The encoder this tokenizer applies (:mod:`functionalbpe.core.encoder`): what the
        token-file pipeline drives in C (its ``native`` table and ``scanner``).

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).encoder.encode_piece("ab")
        [256]
        """
        return self._encoder

    @property
    def id_map(self) -> IdMap:
        """How this tokenizer's ids differ from the internal layout (:mod:`functionalbpe.core.idmap`):
        an imported vocabulary's own ids, the identity for one trained here.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).id_map.identity
        True
        """
        return self._idmap

    @property
    def vocabulary(self) -> Vocabulary:
        """The tokens by their bytes, in this tokenizer's ids (:mod:`functionalbpe.core.vocabulary`):
        what rank files, HF's vocabularies and :meth:`encode_single_token` read.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).vocabulary.ids_by_bytes()[b"ab"]
        256
        """
        return self._vocab

    @property
    def special_policy(self) -> SpecialPolicy:
        """The special tokens and tiktoken's rules for them (:mod:`functionalbpe.text.specials`).

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False)
        >>> tok.special_policy.ids
        {'<s>': 257}
        """
        return self._specials

    @property
    def joins(self) -> List[Tuple[int, int, int]]:
        """Pairs that make a token although another pair is its merge, as ``(left id, right
        id, token id)``: only in an imported vocabulary whose tokens merges alone cannot make
        (Llama 3's; docs/interop.md). Empty for every tokenizer trained here.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).joins
        []
        """
        ext = self._idmap.external
        return [(ext(a), ext(b), ext(t)) for a, b, t in self._encoder.joins]

    @property
    def whole_pieces(self) -> bool:
        """Is a piece that is a token's bytes always that token (tiktoken's rule, HF's
        ``ignore_merges``), even where its bytes would merge into others? For a tokenizer
        trained here every token is what its bytes merge into, so this changes nothing.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).whole_pieces
        False
        """
        return self._encoder.whole_pieces

    @property
    def vocab_size(self) -> int:
        """One more than the largest id (the size of a model's embedding table).

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False).vocab_size
        258
        """
        return self._idmap.size

    @property
    def special_tokens(self) -> Dict[str, int]:
        """Each special token's text and id.

        >>> import functionalbpe as fb
        >>> fb.train(["ab"], vocab_size=257, special_tokens=["<s>"], progress=False).special_tokens
        {'<s>': 256}
        """
        return dict(self._specials.ids)

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

    def token_text(self, token: int) -> str:
        """A token as a person reads it, whatever the scheme: a special token as it is, an
        atom as its name (``⟨CAP 0⟩``, ``¦``), whitespace as glyphs (``␣``, ``↵``), bytes that
        are not a whole character as ``<xx>``. What ``vocab``, ``pieces``, ``explain``, the
        explorer and the report show; :class:`UnknownTokenError` if it is not an id here.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["Hello hello"], vocab_size=None, scheme="functional", progress=False)
        >>> [tok.token_text(i) for i in tok.encode("Hello")]
        ['⟨CAP 0⟩', 'hello']
        """
        if token in self._specials.ids.values():
            return next(s for s, i in self._specials.ids.items() if i == token)
        return show_text_form(self.token_bytes(self._known_id(token)), self.scheme.show)

    def __repr__(self) -> str:
        return (
            f"<functionalbpe.Tokenizer scheme={self.scheme.name} pattern={self.scheme.pattern_name} "
            f"vocab_size={self.vocab_size} merges={len(self.alphabet.merges)} "
            f"specials={len(self._specials.ids)}>"
        )

    # -- encoding -------------------------------------------------------------------------

    def encode_ordinary(self, text: str, *, threads: Optional[int] = None) -> List[int]:
        """Encode ``text``, reading special-token text as ordinary text.

        ``threads``: a long text (128 KiB or more) whose pieces the C scanner finds is cut
        where no piece changes and its units are encoded on this many threads (None: all
        cores; 1 keeps the calling thread). The ids are the same for any number.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).encode_ordinary("ab")
        [256]
        """
        if threads is not None:
            threads = thread_count(threads)
        return self._encoder.encode_text(plain_str(text), threads) if text else []

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialSet = "all",
        dropout: float = 0.0,
        seed: Optional[int] = None,
        add_special_tokens: bool = False,
        threads: Optional[int] = None,
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
        random seed each call). ``add_special_tokens`` is HF's option: False, what is always
        done here (True is refused: no special token is added that the text does not hold).
        ``threads``: as for :meth:`encode_ordinary`.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<s>"], progress=False)
        >>> tok.encode("ab<s>", allowed_special="all")
        [256, 257]
        >>> tok.encode("ab ab", dropout=1.0)
        [97, 98, 32, 97, 98]
        """
        check_add_special_tokens(add_special_tokens)
        text = plain_str(text)
        allowed, disallowed = self._specials.sets(allowed_special, disallowed_special)
        p = check_dropout(dropout)
        if threads is not None:
            threads = thread_count(threads)
        if not allowed and not p:  # the encoder looks for the disallowed tokens while it encodes
            return self._encoder.encode_text(text, threads, self._specials.refusal(disallowed)) if text else []
        self._specials.refuse(text, disallowed)
        if p:
            rng = random.Random(seed_value(seed))
            return self._specials.encode(bpe_text(text), allowed, lambda t: self._encoder.encode_text_dropout(t, p, rng))
        return self._specials.encode(text, allowed, lambda part: self._encoder.encode_text(part, threads) if part else [])

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
        flat: bool = False,
    ) -> Any:
        """Encode several documents on ``threads`` threads (None: all cores); ``num_threads``
        is the same option under tiktoken's name. ``dropout`` and ``seed`` are as for
        :meth:`encode` (one random stream over the batch, in order, on the calling thread).

        The result is the same as encoding each in turn. With the compiled encoder and a
        built-in pattern the work runs without the GIL; a small batch stays on the calling
        thread. Custom patterns and the schemes cut text with Python and encode one text at
        a time. ``flat=True`` returns a :class:`~functionalbpe.core.encoder.FlatIds` instead of
        lists: one uint32 array of all the ids and the offsets of each text (``flat[k]`` is
        text ``k``'s ids), made in C without a Python int per id.

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).encode_batch(["ab", "b"], threads=2)
        [[256], [98]]
        """
        texts = plain_texts(texts)
        if num_threads is not None:
            if threads is not None:
                raise FunctionalBPEError("give threads or num_threads (the same option), not both")
            threads, name = num_threads, "num_threads"
        else:
            name = "threads"
        threads = thread_count(threads, name=name)
        allowed, disallowed = self._specials.sets(allowed_special, disallowed_special)
        p = check_dropout(dropout)
        refusal = self._specials.refusal(disallowed)
        if refusal is not None and (allowed or p):
            # Texts that reach the encoder whole are searched by its workers instead: with
            # short texts this thread's share of the work (holding the GIL) is what limits
            # the threads' gain.
            refusal.refuse_each(texts)
        if flat:  # one array of ids and the offsets of each text (core/encoder.py's FlatIds)
            return encode_batch_flat(self._encoder, texts, threads, bool(allowed or p), lambda: self.encode_batch(
                texts, threads, allowed_special=allowed, disallowed_special=(), dropout=p, seed=seed), refusal)
        if p:
            rng = random.Random(seed_value(seed))
            dropped = lambda t: self._encoder.encode_text_dropout(t, p, rng)  # noqa: E731
            return [self._specials.encode(bpe_text(text), allowed, dropped) for text in texts]
        if not allowed:
            return self._encoder.encode_texts(texts, threads, refusal)
        # Ordinary parts of every text encoded together, in parallel; specials in between.
        return self._specials.encode_batch(texts, allowed, lambda parts: self._encoder.encode_texts(parts, threads))

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
            return ids, token_spans(text, self._vocab.lengths(ids))
        allowed, disallowed = self._specials.sets(allowed_special, disallowed_special)
        self._specials.refuse(text, disallowed)
        segments = self._specials.segments(text, allowed)
        return scheme_spans(
            segments, self.scheme, self._encoder.encode_pieces, self._specials.ids.__getitem__, self._vocab.lengths
        )

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
        allowed, disallowed = self._specials.sets(allowed_special, disallowed_special)
        if allowed:
            lists = self.encode_batch(texts, threads, allowed_special=allowed, disallowed_special=disallowed)
            return pack(lists, width), [len(ids) for ids in lists]
        texts = plain_texts(texts)
        threads = thread_count(threads)
        return self._encoder.encode_texts_packed(texts, threads, width, self._specials.refusal(disallowed))

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


    def count_tokens(self, text: str, *, allowed_special: SpecialSet = frozenset()) -> int:
        """How many tokens ``text`` takes. Never raises for any text: special-token text
        counts as ordinary text unless it is in ``allowed_special`` (then as one token).

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, pattern="gpt2", progress=False).count_tokens("ab ab")
        3
        """
        allowed, _ = self._specials.sets(allowed_special, ())
        segments = self._specials.segments(plain_str(text), allowed)
        return sum(1 if special else self._encoder.count_text(part) for part, special in segments if part)

    def pieces(self, text: str) -> List[str]:
        """The pieces BPE sees for ``text``, atoms shown as glyphs; special tokens as they are.

        >>> import functionalbpe as fb
        >>> fb.train(["x"], vocab_size=256, pattern="gpt2", progress=False).pieces("Hi there")
        ['Hi', ' there']
        """
        out: List[str] = []
        for segment, is_special in self._specials.segments(plain_str(text), self._specials.all):
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
        for segment, is_special in self._specials.segments(plain_str(text), self._specials.all):
            if is_special:
                out.append((segment, [self._specials.ids[segment]]))
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

    # -- files ----------------------------------------------------------------------------

    def to_payload(self) -> Dict[str, Any]:
        """The tokenizer as the JSON data its file holds (:mod:`functionalbpe.formats.tokenizer_file`).

        >>> import functionalbpe as fb
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).to_payload()["merges"]
        [[97, 98]]
        """
        payload = self._payload()
        payload["merges"] = payload["merges"].tolist()
        return payload

    def _payload(self) -> Dict[str, Any]:
        """:meth:`to_payload` with the merges kept as Pairs (core/pairs.py): what the file is
        written from, a part at a time, without a list per merge."""
        return payload_of(
            self.scheme, self.merge_policy, self.alphabet, self.merge_counts, self.special_tokens, self._idmap,
            self.training, self._encoder.joins, self._encoder.whole_pieces,
        )

    def save(self, path: "os.PathLike[str] | str") -> None:
        """Write the tokenizer file atomically (see :mod:`functionalbpe.formats.tokenizer_file`).

        >>> import os, tempfile, functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=257, progress=False)
        >>> path = os.path.join(tempfile.mkdtemp(), "tok.json")
        >>> tok.save(path)
        >>> fb.Tokenizer.load(path) == tok
        True
        """
        write_payload(path, self._payload())

    @classmethod
    def load(cls: Type[T], path: "os.PathLike[str] | str") -> T:
        """Read a tokenizer file; anything wrong is a :class:`TokenizerFileError`.

        >>> import functionalbpe as fb
        >>> fb.Tokenizer.load("no/such/file.json")
        Traceback (most recent call last):
        functionalbpe.errors.TokenizerFileError: no/such/file.json: no such tokenizer file
        """
        with collector_paused():
            payload = read_payload(path)
            release_freed_memory(payload.get("merges"))  # the file's text, before the tokenizer's tables
            try:
                return cls.from_payload(payload)
            except TokenizerFileError as exc:
                raise TokenizerFileError(f"{os.fspath(path)}: {exc}") from None

    @classmethod
    def from_payload(cls: Type[T], payload: Dict[str, Any]) -> T:
        """The tokenizer a payload (a file's contents, a pickle's state) describes. Every field
        is checked before anything is built from it (functionalbpe/core/limits.py); anything
        wrong is a :class:`TokenizerFileError` naming the field and the entry.

        >>> import functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=257, progress=False)
        >>> fb.Tokenizer.from_payload(tok.to_payload()) == tok
        True
        """
        scheme, parts = parts_from_payload(payload)
        try:
            tok = cls(scheme, **parts)
        except FunctionalBPEError as exc:
            raise TokenizerFileError(str(exc)) from None
        if tok.special_tokens != payload["special_tokens"]:
            raise TokenizerFileError("the special token ids do not match the tokens")
        try:
            tok.training = payload.get("training")
        except FunctionalBPEError as exc:
            raise TokenizerFileError(str(exc)) from None
        if tok.vocab_size != payload["vocab_size"]:
            raise TokenizerFileError(
                f"vocab_size says {payload['vocab_size']} but the file holds {tok.vocab_size} ids"
            )
        return tok

    # -- other libraries' files -----------------------------------------------------------
    #
    # The work is in interop/exchange.py; the files themselves in formats/.

    def to_tiktoken(self, path: "os.PathLike[str] | str") -> None:
        """Write the ``.tiktoken`` rank file (base64 token, space, rank; one per line).

        Plain scheme only: tiktoken cannot apply a scheme's transform (docs/interop.md).

        >>> import os, tempfile, functionalbpe as fb
        >>> path = os.path.join(tempfile.mkdtemp(), "t.tiktoken")
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).to_tiktoken(path)
        >>> open(path).read().splitlines()[256]
        'YWI= 256'
        """
        from .interop.exchange import to_tiktoken

        to_tiktoken(self, path)

    def as_tiktoken_encoding(self, name: str = "functionalbpe") -> Any:
        """A ``tiktoken.Encoding`` with these ranks, pattern and special tokens (needs
        tiktoken; plain scheme only).

        >>> import tiktoken, functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=257, progress=False)
        >>> tok.as_tiktoken_encoding().encode("ab ab") == tok.encode("ab ab")
        True
        """
        from .interop.exchange import tiktoken_encoding

        return tiktoken_encoding(self, name)

    @classmethod
    def from_tiktoken(
        cls: Type[T],
        source: "os.PathLike[str] | str | Any",
        pattern: Optional[str] = None,
        special_tokens: Union[Dict[str, int], Sequence[str], None] = None,
    ) -> T:
        """Import a tiktoken vocabulary: a ``.tiktoken`` rank file, or a ``tiktoken.Encoding``.

        The merge table is rebuilt from the ranks, and the ids stay the ranks, whatever their
        layout (:mod:`functionalbpe.core.idmap`). A file holds no pattern: OpenAI's published
        files (r50k, p50k, cl100k, o200k; gzipped too) are known by their SHA-256 and get
        tiktoken's pattern and special tokens; any other file needs ``pattern`` (a wrong
        pattern gives wrong ids, so none is guessed). An ``Encoding`` brings its own pattern
        and special tokens (``pattern``/``special_tokens`` override them). ``special_tokens``
        maps each special token to its id (tiktoken's form) or lists them (ids follow the
        ranks). Tokens that no merge of two earlier ones makes (Llama 3 has 678) are kept,
        with tiktoken's ids (docs/interop.md).

        >>> import tiktoken, functionalbpe as fb
        >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
        >>> enc = tiktoken.Encoding("t", pat_str=r"\\S+|\\s+", mergeable_ranks=ranks, special_tokens={"<e>": 257})
        >>> fb.Tokenizer.from_tiktoken(enc).encode("ab <e>", allowed_special="all")
        [256, 32, 257]
        """
        from .formats.tiktoken import read_tiktoken
        from .interop.exchange import imported

        with collector_paused():  # millions of small objects, none in a cycle (util/collector.py)
            return imported(cls, read_tiktoken(source, pattern, special_tokens))

    def to_hf(
        self,
        path: "os.PathLike[str] | str",
        *,
        bos_token: Optional[str] = None,
        eos_token: Optional[str] = None,
        pad_token: Optional[str] = None,
        unk_token: Optional[str] = None,
        model_max_length: Optional[int] = None,
    ) -> Tuple[str, ...]:
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
        >>> [os.path.basename(f) for f in tok.to_hf(out, eos_token="<|eot|>", pad_token="<|eot|>")]
        ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json']
        >>> sorted(os.listdir(out))
        ['special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']
        """
        from .interop.exchange import to_hf

        roles = {"bos_token": bos_token, "eos_token": eos_token, "pad_token": pad_token, "unk_token": unk_token}
        return to_hf(self, path, roles, model_max_length)

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
        from .interop.exchange import to_transformers

        roles = {"bos_token": bos_token, "eos_token": eos_token, "pad_token": pad_token, "unk_token": unk_token}
        return to_transformers(self, roles, model_max_length)

    @classmethod
    def from_hf(cls: Type[T], source: "os.PathLike[str] | str | Any") -> T:
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
        >>> _ = tok.to_hf(path)
        >>> fb.Tokenizer.from_hf(path).encode("ab<s>", allowed_special="all")
        [256, 257]
        """
        from .formats.hf import read_hf
        from .interop.exchange import imported

        with collector_paused():  # millions of small objects, none in a cycle (util/collector.py)
            return imported(cls, read_hf(source))

    @classmethod
    def from_gpt2(cls: Type[T], encoder_json: "os.PathLike[str] | str", vocab_bpe: "os.PathLike[str] | str") -> T:
        """Import GPT-2's original files, ``encoder.json`` and ``vocab.bpe`` (what OpenAI
        published with GPT-2; HF's ``gpt2`` repository holds them too), with their ids:
        ``<|endoftext|>`` is the special token 50256.

        >>> import json, os, tempfile, functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=258, special_tokens=["<|endoftext|>"], progress=False)
        >>> d = tempfile.mkdtemp()
        >>> _ = open(os.path.join(d, "encoder.json"), "w").write(json.dumps(tok.get_vocab()))
        >>> merges = ["#version: 0.2"] + [" ".join(tok.id_to_token(i) for i in m) for m in tok.merges]
        >>> _ = open(os.path.join(d, "vocab.bpe"), "w").write("\\n".join(merges))
        >>> gpt2 = fb.Tokenizer.from_gpt2(os.path.join(d, "encoder.json"), os.path.join(d, "vocab.bpe"))
        >>> gpt2.encode("ab ab<|endoftext|>", allowed_special="all")
        [256, 32, 256, 257]
        """
        from .formats.hf import read_gpt2
        from .interop.exchange import imported

        with collector_paused():  # millions of small objects, none in a cycle (util/collector.py)
            return imported(cls, read_gpt2(encoder_json, vocab_bpe))

    @classmethod
    def from_file(cls: Type[T], path: "os.PathLike[str] | str", pattern: Optional[str] = None) -> T:
        """Any tokenizer file this library reads, known by its form (``formats/sniff.py``):
        ours (:meth:`load`), an HF ``tokenizer.json`` or its directory (:meth:`from_hf`), a
        tiktoken rank file (:meth:`from_tiktoken`; ``pattern`` is for it alone, as every
        other file holds its own), or GPT-2's ``encoder.json`` and ``vocab.bpe`` side by side
        (:meth:`from_gpt2`; either file, or their directory).

        >>> import os, tempfile, functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=257, progress=False)
        >>> path = os.path.join(tempfile.mkdtemp(), "t.tiktoken")
        >>> tok.to_tiktoken(path)
        >>> fb.Tokenizer.from_file(path, pattern="gpt4").encode("ab ab") == tok.encode("ab ab")
        True
        """
        from .formats.sniff import read_other
        from .interop.exchange import imported

        with collector_paused():  # millions of small objects, none in a cycle (util/collector.py)
            got = read_other(path, pattern)
            if got is not None:
                return imported(cls, got)
        return cls.load(path)

    # -- tiktoken's and HF's names -------------------------------------------------------
    #
    # So that code written for a tiktoken ``Encoding`` or an HF tokenizer runs on a Tokenizer.
    # tiktoken's names speak bytes; HF's speak vocabulary strings, the tokens written in GPT-2's
    # byte-to-character table (``formats/bytelevel.py``), as in ``to_hf``'s file.

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

    # -- Python's protocols ---------------------------------------------------------------

    def __getstate__(self) -> Dict[str, Any]:
        return self.to_payload()

    def __setstate__(self, payload: Dict[str, Any]) -> None:
        self.__dict__.update(Tokenizer.from_payload(payload).__dict__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tokenizer) and self._payload() == other._payload()

    __hash__ = None  # type: ignore[assignment]
