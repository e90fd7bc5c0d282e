"""One face for every tokenizer the report measures: ours, tiktoken, HF and SentencePiece.

The report asks a tokenizer five things: encode a text (ordinary text, no special tokens
added), its vocabulary size, which entries are special, which tokens are single bytes, and
what text each entry stands for (its *surface*, for the vocabulary measures). Each adapter
answers them for one library, and is usable only when that library is installed.

What "a single byte" means, per adapter (``docs/metrics.md``):

* ours — a byte id 0–255 (atoms of a scheme are not bytes);
* tiktoken — a token whose bytes are one byte long;
* HF ``tokenizer.json`` — with byte-level BPE (a ``ByteLevel`` pre-tokenizer or decoder) a
  token that maps to one byte; with ``byte_fallback`` a ``<0xHH>`` token; otherwise none;
* SentencePiece — a byte piece ``<0xHH>`` (``is_byte``), present with ``byte_fallback``.

The surface of an entry is the text it stands for, with the library's space marker turned
back into a space (``Ġ`` and ``▁`` become `` ``; a WordPiece entry that does not start
with ``##`` starts a word and gets a leading space). Entries whose bytes are not whole
UTF-8 characters have no surface.

Example::

    >>> import functionalbpe as fb
    >>> tok = as_report_tokenizer(fb.train(["ab ab"], vocab_size=258, pattern="gpt2", progress=False))
    >>> tok.kind, tok.encode("ab ab"), tok.surfaces()
    ('functionalbpe', [256, 257], {256: 'ab', 257: ' ab'})
"""
from __future__ import annotations

import base64
import binascii
import json
import os
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Union

from ..errors import FunctionalBPEError, TokenizerFileError
from ..text.patterns import resolve_pattern
from ..tokenizer import Tokenizer

PathLike = Union[str, "os.PathLike[str]"]

_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def _require(module: str, what: str, extra: str = "peers") -> Any:
    """Import an optional library, or say in one line how to get it."""
    try:
        return __import__(module)
    except ImportError:
        raise FunctionalBPEError(
            f"{what} needs the {module} package, which is not installed; "
            f"pip install {module} (or functionalbpe[{extra}])"
        ) from None


class ReportTokenizer:
    """The interface the report uses; one subclass per library.

    ``kind`` names the library; ``tokenizer`` is our :class:`Tokenizer` when it is one of
    ours (the measures that need training, such as full coverage, use it), else ``None``.
    """

    kind = "?"
    tokenizer: Optional[Tokenizer] = None

    @property
    def vocab_size(self) -> int:
        raise NotImplementedError

    def encode(self, text: str) -> List[int]:
        raise NotImplementedError

    def special_ids(self) -> Set[int]:
        """Ids of special and control tokens: left out of the vocabulary measures."""
        return set()

    def entries(self) -> List[int]:
        """The ids the vocabulary measures consider: every id that is not special."""
        special = self.special_ids()
        return [t for t in range(self.vocab_size) if t not in special]

    def byte_tokens(self) -> Dict[int, int]:
        """``{id: byte value}`` for the tokens that count as single bytes (see above)."""
        raise NotImplementedError

    def unknown_ids(self) -> Set[int]:
        return set()

    def surfaces(self) -> Dict[int, str]:
        """``{id: text}`` for the learned entries that stand for whole characters."""
        raise NotImplementedError

    def merge_counts(self) -> Optional[List[int]]:
        return None

    def describe(self) -> str:
        return f"{self.kind}, {self.vocab_size} ids"


# -- ours -------------------------------------------------------------------------------------


class FunctionalBPETokenizer(ReportTokenizer):
    """One of our tokenizers (any scheme)."""

    kind = "functionalbpe"

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.vocab_size

    def encode(self, text: str) -> List[int]:
        return self.tokenizer.encode_ordinary(text)

    def special_ids(self) -> Set[int]:
        return set(self.tokenizer.special_tokens.values())

    def byte_tokens(self) -> Dict[int, int]:
        return {i: i for i in range(256)}

    def surfaces(self) -> Dict[int, str]:
        # Only merged entries: the bytes and the scheme's atoms are the fixed alphabet.
        alphabet = self.tokenizer.alphabet
        table = alphabet.all_token_bytes()
        show = self.tokenizer.scheme.show
        out: Dict[int, str] = {}
        for token in range(alphabet.first_merge, alphabet.first_special):
            try:
                out[token] = show(table[token].decode("utf-8"))
            except UnicodeDecodeError:
                continue
        return out

    def merge_counts(self) -> Optional[List[int]]:
        counts = self.tokenizer.merge_counts
        return list(counts) if counts is not None else None

    def describe(self) -> str:
        tok = self.tokenizer
        options = ", ".join(f"{k}={v}" for k, v in tok.scheme.options().items())
        return (
            f"functionalbpe {tok.scheme.name} scheme{f' ({options})' if options else ''}, pattern "
            f"{tok.scheme.pattern_name}, {tok.vocab_size} ids ({len(tok.alphabet.merges)} merges)"
        )


# -- tiktoken ----------------------------------------------------------------------------------


def read_tiktoken_ranks(path: PathLike) -> Dict[bytes, int]:
    """Read a ``.tiktoken`` rank file: one ``<base64 token> <rank>`` per line.

    >>> import tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "r.tiktoken")
    >>> _ = open(p, "w").write("YQ== 0\\nYg== 1\\n")
    >>> read_tiktoken_ranks(p)
    {b'a': 0, b'b': 1}
    """
    try:
        lines = Path(path).read_text(encoding="ascii").splitlines()
    except OSError as exc:
        raise TokenizerFileError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise TokenizerFileError(f"{path}: not a tiktoken rank file (non-ASCII byte at offset {exc.start})") from None
    ranks: Dict[bytes, int] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError
            token, rank = base64.b64decode(parts[0], validate=True), int(parts[1])
        except (ValueError, binascii.Error):
            raise TokenizerFileError(
                f"{path}: line {number}: expected '<base64 token> <rank>', got {line[:60]!r}"
            ) from None
        if token in ranks:
            raise TokenizerFileError(f"{path}: line {number}: token {token!r} appears twice")
        ranks[token] = rank
    if not ranks:
        raise TokenizerFileError(f"{path}: the rank file holds no token")
    return ranks


class TiktokenTokenizer(ReportTokenizer):
    """A ``tiktoken.Encoding`` (built from a rank file and a pattern, or given)."""

    kind = "tiktoken"

    def __init__(self, encoding: Any) -> None:
        self.encoding = encoding

    @classmethod
    def from_file(cls, path: PathLike, pattern: Optional[str]) -> "TiktokenTokenizer":
        tiktoken = _require("tiktoken", "reading a .tiktoken rank file")
        if not pattern:
            raise FunctionalBPEError(
                f"{path}: a .tiktoken rank file holds no pre-tokenization pattern; give one "
                "(CLI: --pattern gpt4 for cl100k, o200k for o200k, or a regex)"
            )
        regex = resolve_pattern(pattern).regex
        ranks = read_tiktoken_ranks(path)
        try:
            encoding = tiktoken.Encoding(Path(path).stem, pat_str=regex, mergeable_ranks=ranks, special_tokens={})
        except ValueError as exc:
            raise TokenizerFileError(f"{path}: tiktoken refuses it: {exc}") from None
        return cls(encoding)

    @property
    def vocab_size(self) -> int:
        return self.encoding.n_vocab

    def encode(self, text: str) -> List[int]:
        return self.encoding.encode_ordinary(text)

    def special_ids(self) -> Set[int]:
        return set(self.encoding._special_tokens.values())

    def _token_bytes(self) -> Dict[int, bytes]:
        special = self.special_ids()
        out = {}
        for token in range(self.encoding.n_vocab):
            if token in special:
                continue
            try:
                out[token] = self.encoding.decode_single_token_bytes(token)
            except KeyError:  # a gap in the ranks
                continue
        return out

    def entries(self) -> List[int]:
        return sorted(self._token_bytes())

    def byte_tokens(self) -> Dict[int, int]:
        return {t: b[0] for t, b in self._token_bytes().items() if len(b) == 1}

    def surfaces(self) -> Dict[int, str]:
        return _text_surfaces(self._token_bytes())

    def describe(self) -> str:
        return f"tiktoken {self.encoding.name}, {self.vocab_size} ids"


def _text_surfaces(table: Dict[int, bytes]) -> Dict[int, str]:
    """Surfaces of byte tokens: learned entries (two bytes or more) that decode as UTF-8."""
    out = {}
    for token, data in table.items():
        if len(data) < 2:
            continue
        try:
            out[token] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
    return out


# -- HF tokenizers ------------------------------------------------------------------------------


def byte_level_alphabet() -> Dict[str, int]:
    """The printable stand-in for each byte in byte-level BPE files (GPT-2's convention).

    Bytes that are printable Latin-1 characters other than space stand for themselves; the
    others, in byte order, take the code points from U+0100 on. Returns character → byte.

    >>> alphabet = byte_level_alphabet()
    >>> alphabet["a"], alphabet["Ġ"], alphabet["Ċ"]
    (97, 32, 10)
    """
    printable = [b for b in range(256) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF]
    out = {chr(b): b for b in printable}
    shifted = 0
    for b in range(256):
        if b not in out.values():
            out[chr(256 + shifted)] = b
            shifted += 1
    return out


def _has_component(config: Any, kind: str) -> bool:
    """Is a component of type ``kind`` anywhere in this part of a tokenizer.json?"""
    if isinstance(config, dict):
        return config.get("type") == kind or any(_has_component(v, kind) for v in config.values())
    if isinstance(config, list):
        return any(_has_component(v, kind) for v in config)
    return False


class HFTokenizer(ReportTokenizer):
    """A Hugging Face ``tokenizers.Tokenizer`` (from a ``tokenizer.json`` or given)."""

    kind = "hf"

    def __init__(self, tokenizer: Any, name: str = "tokenizer.json") -> None:
        self.hf = tokenizer
        self.name = name
        config = json.loads(tokenizer.to_str())
        model = config.get("model") or {}
        self.model_type = model.get("type", "?")
        self.byte_level = _has_component(config.get("pre_tokenizer"), "ByteLevel") or _has_component(
            config.get("decoder"), "ByteLevel"
        )
        self.byte_fallback = bool(model.get("byte_fallback"))
        self.space_marker = "▁" if (
            _has_component(config.get("pre_tokenizer"), "Metaspace") or _has_component(config.get("decoder"), "Metaspace")
            or self.model_type == "Unigram"
        ) else None
        self.wordpiece_prefix = model.get("continuing_subword_prefix") if self.model_type == "WordPiece" else None
        unk = model.get("unk_token")
        if isinstance(unk, int):  # Unigram stores the unknown token's id
            self._unknown = {unk}
        else:
            unk_id = tokenizer.token_to_id(unk) if unk else None
            self._unknown = {unk_id} if unk_id is not None else set()

    @classmethod
    def from_file(cls, path: PathLike) -> "HFTokenizer":
        tokenizers = _require("tokenizers", "reading an HF tokenizer.json")
        try:
            return cls(tokenizers.Tokenizer.from_file(os.fspath(path)), name=os.fspath(path))
        except Exception as exc:  # the library raises its own exception types
            if isinstance(exc, FunctionalBPEError):
                raise
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise TokenizerFileError(f"{path}: the tokenizers library cannot read it: {message}") from None

    @property
    def vocab_size(self) -> int:
        return self.hf.get_vocab_size(with_added_tokens=True)

    def encode(self, text: str) -> List[int]:
        return self.hf.encode(text, add_special_tokens=False).ids

    def special_ids(self) -> Set[int]:
        return {i for i, added in self.hf.get_added_tokens_decoder().items() if added.special}

    def unknown_ids(self) -> Set[int]:
        return set(self._unknown)

    def _pieces(self) -> Dict[int, str]:
        special = self.special_ids()
        return {i: t for t, i in self.hf.get_vocab(with_added_tokens=True).items() if i not in special}

    def byte_tokens(self) -> Dict[int, int]:
        out: Dict[int, int] = {}
        alphabet = byte_level_alphabet() if self.byte_level else {}
        for token, piece in self._pieces().items():
            if self.byte_level and len(piece) == 1 and piece in alphabet:
                out[token] = alphabet[piece]
            elif self.byte_fallback:
                match = _BYTE_PIECE.fullmatch(piece)
                if match:
                    out[token] = int(match.group(1), 16)
        return out

    def surfaces(self) -> Dict[int, str]:
        pieces = self._pieces()
        byte_ids = self.byte_tokens()
        if self.byte_level:
            alphabet = byte_level_alphabet()
            table = {}
            for token, piece in pieces.items():
                if token not in self._unknown and all(c in alphabet for c in piece):
                    table[token] = bytes(alphabet[c] for c in piece)
            return _text_surfaces(table)
        out: Dict[int, str] = {}
        for token, piece in pieces.items():
            if token in byte_ids or token in self._unknown:
                continue
            if self.space_marker:
                piece = piece.replace(self.space_marker, " ")
            if self.wordpiece_prefix is not None:
                if piece.startswith(self.wordpiece_prefix):
                    piece = piece[len(self.wordpiece_prefix):]
                else:
                    piece = " " + piece
            if len(piece) >= 2:
                out[token] = piece
        return out

    def describe(self) -> str:
        how = "byte-level" if self.byte_level else ("byte fallback" if self.byte_fallback else "no byte fallback")
        return f"HF tokenizers {self.model_type} ({how}), {self.vocab_size} ids"


# -- SentencePiece --------------------------------------------------------------------------------


class SentencePieceTokenizer(ReportTokenizer):
    """A ``sentencepiece.SentencePieceProcessor`` (from a ``.model`` file or given)."""

    kind = "sentencepiece"

    def __init__(self, processor: Any, name: str = "model") -> None:
        self.sp = processor
        self.name = name

    @classmethod
    def from_file(cls, path: PathLike) -> "SentencePieceTokenizer":
        spm = _require("sentencepiece", "reading a SentencePiece .model")
        if not Path(path).is_file():
            raise TokenizerFileError(f"{path}: no such file")
        processor = spm.SentencePieceProcessor()
        try:
            processor.Load(os.fspath(path))
        except Exception as exc:  # sentencepiece raises OSError or RuntimeError
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise TokenizerFileError(f"{path}: sentencepiece cannot read it: {message}") from None
        return cls(processor, name=os.fspath(path))

    @property
    def vocab_size(self) -> int:
        return self.sp.get_piece_size()

    def encode(self, text: str) -> List[int]:
        return self.sp.encode(text)

    def special_ids(self) -> Set[int]:
        return {i for i in range(self.vocab_size) if self.sp.is_control(i)}

    def unknown_ids(self) -> Set[int]:
        return {i for i in range(self.vocab_size) if self.sp.is_unknown(i)}

    def byte_tokens(self) -> Dict[int, int]:
        out = {}
        for token in range(self.vocab_size):
            if self.sp.is_byte(token):
                match = _BYTE_PIECE.fullmatch(self.sp.id_to_piece(token))
                if match:
                    out[token] = int(match.group(1), 16)
        return out

    def surfaces(self) -> Dict[int, str]:
        skip = self.special_ids() | self.unknown_ids() | set(self.byte_tokens())
        out = {}
        for token in range(self.vocab_size):
            if token in skip or self.sp.is_unused(token):
                continue
            piece = self.sp.id_to_piece(token).replace("▁", " ")
            if len(piece) >= 2:
                out[token] = piece
        return out

    def describe(self) -> str:
        return f"SentencePiece, {self.vocab_size} pieces"


# -- choosing an adapter ---------------------------------------------------------------------------


def as_report_tokenizer(obj: Any, pattern: Optional[str] = None) -> ReportTokenizer:
    """Wrap a tokenizer object or load a tokenizer file for the report.

    Accepts an adapter, our :class:`Tokenizer`, a ``tiktoken.Encoding``, a
    ``tokenizers.Tokenizer``, a ``sentencepiece.SentencePieceProcessor``, or a path:
    ``*.tiktoken`` (needs ``pattern``), ``*.model`` (SentencePiece), ``*.json`` (ours when
    its ``format`` says so, else HF).
    """
    if isinstance(obj, ReportTokenizer):
        return obj
    if isinstance(obj, Tokenizer):
        return FunctionalBPETokenizer(obj)
    if isinstance(obj, (str, os.PathLike)):
        return load_tokenizer(obj, pattern)
    module = type(obj).__module__.split(".")[0]
    if module == "tiktoken":
        return TiktokenTokenizer(obj)
    if module == "tokenizers":
        return HFTokenizer(obj)
    if module == "sentencepiece":
        return SentencePieceTokenizer(obj)
    raise FunctionalBPEError(
        f"cannot measure a {type(obj).__name__}: give a functionalbpe.Tokenizer, a tiktoken Encoding, "
        "a tokenizers.Tokenizer, a SentencePieceProcessor, or a tokenizer file"
    )


def load_tokenizer(path: PathLike, pattern: Optional[str] = None) -> ReportTokenizer:
    """Load a tokenizer file by its kind (see :func:`as_report_tokenizer`)."""
    text = os.fspath(path)
    if text.endswith(".tiktoken"):
        return TiktokenTokenizer.from_file(text, pattern)
    if text.endswith(".model"):
        return SentencePieceTokenizer.from_file(text)
    if not Path(text).is_file():
        raise TokenizerFileError(f"{text}: no such file")
    kind = _json_kind(text)
    if kind == "ours":
        return FunctionalBPETokenizer(Tokenizer.load(text))
    if kind == "hf":
        return HFTokenizer.from_file(text)
    raise TokenizerFileError(
        f"{text}: not a tokenizer file this report reads: expected a functionalbpe tokenizer (.json with "
        '"format"), an HF tokenizer.json (with "model"), a .tiktoken rank file or a SentencePiece .model'
    )


def _json_kind(path: str) -> str:
    """``"ours"`` or ``"hf"`` for a JSON tokenizer file, ``"?"`` for anything else."""
    try:
        with open(path, "rb") as fh:
            payload = json.loads(fh.read().decode("utf-8"))
    except OSError as exc:
        raise TokenizerFileError(f"{path}: cannot read: {exc.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        return "?"
    if isinstance(payload, dict) and "format" in payload:
        return "ours"
    if isinstance(payload, dict) and "model" in payload:
        return "hf"
    return "?"
