"""What the kernel reads of a scheme: the contract, declared below the schemes themselves.

The encoder, the decoder and the offsets of ``core`` take a scheme (``schemes/base.py``'s
``Scheme``, two layers up) but use only what :class:`SchemeLike` declares, and
:class:`Compiled`, the compiled paths a scheme allows, lives here for the same reason. A
type checker holds every ``Scheme`` to this Protocol where it is passed to the kernel.

>>> from functionalbpe import make_scheme
>>> scheme: SchemeLike = make_scheme("plain")
>>> scheme.split("hi there"), scheme.compiled().identity
(['hi', ' there'], True)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Protocol, Tuple

from ._native import Scanner
from .alphabet import Atom


@dataclass(frozen=True)
class Compiled:
    """What the compiled core may do for a scheme; each field has one reader.

    * ``scanner`` — a compiled scanner that cuts ``prepare(text)`` into exactly
      ``raw_pieces(text)``. Counting then cuts and counts in C, and the encoder cuts in C.
    * ``cuts_safely`` — the raw pieces of a text cut at a safe place
      (:mod:`functionalbpe.text.cuts`) are those of its parts, so counting may read a file
      in blocks rather than whole.
    * ``identity`` — ``piece_forms`` is the identity: the raw pieces are the text-form
      pieces, ``transform`` returns its table, and the encoder (with ``scanner``) goes from
      text to ids in C. Otherwise the encoder caches the ids of each raw piece: a repeated
      word costs one lookup (in C too, when ``scanner`` is a pattern's).
    """

    scanner: Optional[Scanner] = None
    cuts_safely: bool = False
    identity: bool = False


class SchemeLike(Protocol):
    """A scheme as the kernel sees it (the full contract: ``schemes/base.py``)."""

    @property
    def name(self) -> str: ...

    @property
    def atoms(self) -> Tuple[Atom, ...]: ...

    @property
    def normalize(self) -> Optional[str]: ...

    def compiled(self) -> Compiled: ...

    def prepare(self, text: str) -> str: ...

    def raw_pieces(self, text: str) -> List[str]: ...

    def piece_forms(self, piece: str) -> Tuple[str, ...]: ...

    def split(self, text: str) -> List[str]: ...

    def decode(self, text: str, errors: str = "strict") -> str: ...

    def decodable_prefix(self, text: str) -> int: ...
