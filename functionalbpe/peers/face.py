"""The one face every tokenizer shows the report, whatever library it comes from.

The report asks a tokenizer five things: encode a text (ordinary text, no special tokens
added), its vocabulary size, which entries are special, which tokens are single bytes, and
what text each entry stands for (its *surface*, for the vocabulary measures).
:class:`ReportTokenizer` is that interface; ours is in :mod:`functionalbpe.measure.adapters`,
each peer library's in its home in :mod:`functionalbpe.peers`. Where a library can, it also
decodes (the round-trip measures), gives each token's byte length when its tokens spell the
text's bytes (the measures of token boundaries) and names a scheme's atoms (ours).

What "a single byte" means, per library (``docs/metrics.md``):

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

    >>> text_surfaces({5: b"ab", 6: b"a", 7: b"\\xc3"}), byte_piece("<0xC3>"), byte_piece("ab")
    ({5: 'ab'}, 195, None)
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Protocol, Set

from ..errors import FunctionalBPEError
from ..util.checks import PathLike

if TYPE_CHECKING:  # pragma: no cover
    from ..schemes.base import Scheme


class FunctionalBPEView(Protocol):
    """What the report reads of one of our tokenizers (a :class:`functionalbpe.Tokenizer`):
    declared here so that the faces of other libraries never reach the tokenizer's module."""

    scheme: "Scheme"
    merge_policy: str


class ReportTokenizer:
    """The interface the report uses; one subclass per library.

    ``kind`` names the library (the report's ``kind`` field and, for a peer, its command-line
    flag ``--<kind>``); ``tokenizer`` is our :class:`Tokenizer` when it is one of ours (the
    measures that need training, such as full coverage, use it), else ``None``.
    """

    kind = "?"
    tokenizer: "Optional[FunctionalBPEView]" = None
    # How the report and its command line find a library's files (each adapter declares its own).
    suffix = ""  # a file with this suffix is one of its tokenizers (".tiktoken")
    json_field = ""  # or: a JSON file with this top-level field is ("model")
    needs_pattern = False  # its files hold no pre-tokenization pattern: the CLI's --pattern gives it
    file_help = ""  # the report command's help for --<kind>

    def __init__(self, obj: Any) -> None:
        """``obj``: the library's own tokenizer object, which the adapter wraps."""

    @classmethod
    def from_file(cls, path: PathLike, pattern: Optional[str] = None) -> "ReportTokenizer":
        """Load the library's tokenizer file (``pattern``: for files that hold none)."""
        raise NotImplementedError

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

    def decode(self, ids: List[int]) -> Optional[str]:
        """The text of ``ids`` (for the round-trip measures); None when the library has no
        decoder. Bytes that are not UTF-8 become U+FFFD."""
        return None

    def can_decode(self) -> bool:
        """Whether :meth:`decode` gives text."""
        return False

    def piece(self, token: int) -> Optional[str]:
        """The token as the library writes it in its vocabulary, its own word-boundary mark
        kept (SentencePiece's ``▁``); None where the text of the token is what to show."""
        return None

    def token_lengths(self) -> Optional[List[int]]:
        """The byte length of every id, when the tokens of a text are its UTF-8 bytes one after
        the other (so token boundaries are byte offsets of the text); else None."""
        return None

    def marker_ids(self) -> Set[int]:
        """Ids that are a scheme's instructions or markers (ours, functional or markers)."""
        return set()

    def describe(self) -> str:
        return f"{self.kind}, {self.vocab_size} ids"


def require(module: str, what: str, extra: str = "peers") -> Any:
    """Import an optional library, or say in one line how to get it."""
    try:
        return __import__(module)
    except ImportError:
        raise FunctionalBPEError(
            f"{what} needs the {module} package, which is not installed; "
            f"pip install {module} (from a clone of functionalbpe: pip install -e '.[{extra}]')"
        ) from None


def text_surfaces(table: Dict[int, bytes]) -> Dict[int, str]:
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


_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def byte_piece(piece: str) -> Optional[int]:
    """The byte of a byte-fallback piece ``<0xHH>`` (SentencePiece, HF), else None."""
    match = _BYTE_PIECE.fullmatch(piece)
    return int(match.group(1), 16) if match else None
