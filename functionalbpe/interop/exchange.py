"""Exports to and imports from tiktoken and HF, on a Tokenizer.

Each library's files live in :mod:`functionalbpe.formats`, which reads and writes plain data
(ranks, merges as bytes, the pattern, the special tokens) and never sees a Tokenizer: the
tokenizer hands over its data there, and builds itself from what a reader returns. Only the
objects of another library (a tiktoken ``Encoding``, a transformers tokenizer) come from
that library's one home in :mod:`functionalbpe.peers`. The Tokenizer inherits these methods;
what they use of it is declared here.

    >>> import os, tempfile, functionalbpe as fb
    >>> tok = fb.train(["ab ab"], vocab_size=257, progress=False)
    >>> path = os.path.join(tempfile.mkdtemp(), "t.tiktoken")
    >>> tok.to_tiktoken(path)
    >>> fb.Tokenizer.from_tiktoken(path, pattern="gpt4").encode("ab ab") == tok.encode("ab ab")
    True
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Tuple, Type, TypeVar, Union

from ..core.alphabet import Alphabet
from ..core.encoder import Encoder
from ..core.vocabulary import Vocabulary
from ..errors import FunctionalBPEError, PatternError, TokenizerFileError
from ..formats.imported import Imported
from ..schemes.base import Scheme
from ..schemes.registry import make_scheme
from ..util.collector import collector_paused

T = TypeVar("T", bound="Exchange")


class Exchange:
    """``to_tiktoken``, ``from_tiktoken``, ``to_hf``, ``from_hf`` and their kin."""

    # What the exports use of the tokenizer (set by Tokenizer.__init__, defined by it).
    scheme: Scheme
    alphabet: Alphabet
    _encoder: Encoder
    _vocab: Vocabulary

    if TYPE_CHECKING:  # pragma: no cover

        def __init__(self, scheme: Scheme, merges: Sequence[Any], special_tokens: Sequence[str] = (),
                     **ids: Any) -> None: ...

        @property
        def pattern(self) -> str: ...

        @property
        def special_tokens(self) -> Dict[str, int]: ...

    def to_tiktoken(self, path: "os.PathLike[str] | str") -> None:
        """Write the ``.tiktoken`` rank file (base64 token, space, rank; one per line).

        Plain scheme only: tiktoken cannot apply a scheme's transform (docs/interop.md).

        >>> import os, tempfile, functionalbpe as fb
        >>> path = os.path.join(tempfile.mkdtemp(), "t.tiktoken")
        >>> fb.train(["ab ab"], vocab_size=257, progress=False).to_tiktoken(path)
        >>> open(path).read().splitlines()[256]
        'YWI= 256'
        """
        from ..formats.tiktoken import write_ranks

        write_ranks(path, self._ranks("a .tiktoken file", taken_whole=True))

    def as_tiktoken_encoding(self, name: str = "functionalbpe") -> Any:
        """A ``tiktoken.Encoding`` with these ranks, pattern and special tokens (needs
        tiktoken; plain scheme only).

        >>> import tiktoken, functionalbpe as fb
        >>> tok = fb.train(["ab ab"], vocab_size=257, progress=False)
        >>> tok.as_tiktoken_encoding().encode("ab ab") == tok.encode("ab ab")
        True
        """
        from ..peers.tiktoken import encoding

        return encoding(name, self.pattern, self._ranks("a tiktoken Encoding", taken_whole=True), self.special_tokens)

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
        from ..formats.tiktoken import read_tiktoken

        with collector_paused():  # millions of small objects, none in a cycle (util/collector.py)
            return cls._imported(read_tiktoken(source, pattern, special_tokens))

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
        from ..formats.hf import write_hf

        return write_hf(path, self._hf_document(), _roles(bos_token, eos_token, pad_token, unk_token), model_max_length)

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
        from ..peers.hf import transformers_tokenizer

        roles = _roles(bos_token, eos_token, pad_token, unk_token)
        return transformers_tokenizer(self._hf_document(), roles, model_max_length)

    def _hf_document(self) -> Dict[str, Any]:
        from ..formats.hf import tokenizer_json

        ranks = self._ranks("an HF tokenizer.json", taken_whole=False)
        table = self.alphabet.all_token_bytes()
        # HF ranks a pair by its merge's place: each token's merge, then its joins (pairs that
        # make it too, in an imported vocabulary), in the order of the tokens.
        first = self.alphabet.first_merge
        pairs = [(first + k, a, b) for k, (a, b) in enumerate(self.alphabet.merges)]
        pairs += [(t, a, b) for a, b, t in self._encoder.joins]
        pairs.sort(key=lambda p: p[0])  # stable: a token's merge before its joins
        merges = [(table[a], table[b]) for _, a, b in pairs]
        # A word that is in the vocabulary may skip the merges (faster in HF) only if the
        # merges would give that very token: true of every table a trainer makes; the
        # compiled encoder checks it when it is built, so it is known rather than assumed.
        # A vocabulary that takes such words whole (whole_pieces) must say so.
        whole = self._vocab.self_encoding() or self._encoder.whole_pieces
        return tokenizer_json(ranks, merges, self.pattern, self.special_tokens, ignore_merges=whole,
                              normalize=self.scheme.normalize)

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
        from ..formats.hf import read_hf

        with collector_paused():  # millions of small objects, none in a cycle (util/collector.py)
            return cls._imported(read_hf(source))

    @classmethod
    def from_file(cls: Type[T], path: Union[str, "os.PathLike[str]"], pattern: Optional[str] = None) -> T:
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
        from ..formats.sniff import kind_of

        name = os.fspath(path)
        kind = kind_of(name)
        if kind == "tiktoken":
            return cls.from_tiktoken(name, pattern)
        if pattern is not None:
            raise FunctionalBPEError(
                f"{name}: a pattern is given only with a tiktoken rank file, which holds none; this file "
                "holds its own"
            )
        if kind == "hf":
            return cls.from_hf(name)
        if kind == "gpt2":
            folder = name if os.path.isdir(name) else os.path.dirname(name) or "."
            encoder, merges = os.path.join(folder, "encoder.json"), os.path.join(folder, "vocab.bpe")
            if not (os.path.isfile(encoder) and os.path.isfile(merges)):
                raise TokenizerFileError(f"{name}: GPT-2's files are encoder.json and vocab.bpe side by side; {folder} lacks one")
            return cls.from_gpt2(encoder, merges)
        return cls.load(name)  # type: ignore[attr-defined, no-any-return]

    @classmethod
    def from_gpt2(cls: Type[T], encoder_json: Union[str, "os.PathLike[str]"], vocab_bpe: Union[str, "os.PathLike[str]"]) -> T:
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
        from ..formats.hf import read_gpt2

        with collector_paused():  # millions of small objects, none in a cycle (util/collector.py)
            return cls._imported(read_gpt2(encoder_json, vocab_bpe))

    @classmethod
    def _imported(cls: Type[T], got: Imported) -> T:
        """The tokenizer of a vocabulary read from another library, its ids kept."""
        try:
            # A word that is a token is taken whole where the library does (tiktoken always,
            # HF with ignore_merges), whatever its bytes would merge into.
            options = {} if got.normalize is None else {"normalize": got.normalize}
            return cls(
                make_scheme("plain", got.pattern, **options), got.merges, list(got.special_tokens),
                byte_ids=got.byte_ids, merge_ids=got.merge_ids, special_ids=list(got.special_tokens.values()),
                joins=got.joins, whole_pieces=got.ignore_merges,
            )
        except PatternError:
            raise  # the pattern was given to the call, not read from the file
        except FunctionalBPEError as exc:
            raise TokenizerFileError(f"{got.origin}: {exc}") from None

    def _ranks(self, what: str, taken_whole: bool) -> Dict[bytes, int]:
        return self._vocab.ranks(what, self.scheme.name if self.scheme.atoms else None, taken_whole)


def _roles(bos: Optional[str], eos: Optional[str], pad: Optional[str], unk: Optional[str]) -> Dict[str, Optional[str]]:
    """to_hf's role options by transformers' names for them."""
    return {"bos_token": bos, "eos_token": eos, "pad_token": pad, "unk_token": unk}
