"""The Scheme contract: how text becomes the pieces BPE sees, and how they come back.

A scheme owns the pre-tokenization pattern and may rewrite each piece into a *text form*
that contains atoms (private-use characters, see :mod:`functionalbpe.core.alphabet` and
:mod:`functionalbpe.schemes.textform`). Three schemes exist: the plain one
(:mod:`functionalbpe.schemes.plain`), whose pieces are the pattern's matches as they are; the
Functionalizer (:mod:`functionalbpe.schemes.functional`); the boundary markers
(:mod:`functionalbpe.schemes.markers`). docs/design.md, "Adding a scheme", walks through the
hooks below for a newcomer.

**Meaning** — what a scheme must say (the abstract methods), and what follows from it:

* ``name``, ``atoms`` (code-point order; their ids follow the 256 bytes), ``pattern`` (a
  :class:`~functionalbpe.text.patterns.Pattern`), ``normalize`` and ``options()`` (what the
  tokenizer file stores to rebuild the scheme with ``make_scheme``);
* ``prepare(text)`` — the text that is actually tokenized (normalized, if asked);
* ``raw_pieces(text)`` — what counting counts: the pieces of ``prepare(text)`` before the
  transform (the plain scheme's are the pattern's matches);
* ``piece_forms(piece)`` — the text-form pieces of one raw piece (the identity by default);
  ``piece_forms_for_call()`` gives the same function for a call over many pieces;
* ``split(text) == [f for p in raw_pieces(text) for f in piece_forms(p)]`` — the text-form
  pieces of a text that holds no special token, what the encoder merges within;
* ``transform(table)`` — the counted raw pieces to the counted text-form pieces: each raw
  piece's count goes to each of its forms, in order of first occurrence;
* ``decode(text_form, errors)`` — the text back: ``decode("".join(split(t))) == prepare(t)``;
  a text form that no encoding writes raises with ``errors="strict"``, gives U+FFFD with
  ``"replace"`` and is dropped with ``"ignore"``;
* ``decodable_prefix(text_form)`` — for streaming, how much of a growing text form decodes
  for good;
* ``show(piece)`` — a piece with its atoms as readable glyphs.

**Declared compiled capabilities** — :meth:`Scheme.compiled` returns a :class:`Compiled`
that says what the compiled core may do for this scheme; counting and the encoder read it,
and nothing probes for methods.

Example::

    >>> from functionalbpe.schemes.plain import PlainScheme
    >>> PlainScheme("gpt2").split("Hello world")
    ['Hello', ' world']
"""
from __future__ import annotations

import unicodedata
from abc import ABC, abstractmethod
from collections import Counter
from itertools import chain
from typing import Any, Callable, ClassVar, Dict, List, Literal, Optional, Sequence, Tuple, Union, cast

from ..core.alphabet import Atom
from ..core.contract import Compiled
from ..core.piecetable import PieceTable
from ..errors import FunctionalBPEError
from ..text.patterns import Pattern, resolve_pattern

NORMAL_FORMS = ("NFC", "NFD", "NFKC", "NFKD")
NormalForm = Literal["NFC", "NFD", "NFKC", "NFKD"]


class Scheme(ABC):
    """The base of every scheme: the contract of the module docstring.

    >>> from functionalbpe import make_scheme
    >>> scheme = make_scheme("functional")
    >>> isinstance(scheme, Scheme), [scheme.show(p) for p in scheme.split("Hello")]
    (True, ['⟨CAP 0⟩', 'hello'])
    """

    name: ClassVar[str]
    default_pattern: ClassVar[str] = "gpt4"
    # The scheme's atoms (a scheme may choose them per instance, with the same characters).
    atoms: Tuple[Atom, ...] = ()
    # Options a file did not record because they did not exist when it was written, with the
    # value that file's behaviour had: a newer default does not change an older file.
    file_defaults: ClassVar[Dict[str, Any]] = {}

    def __init__(self, pattern: Union[str, Pattern, None] = None, normalize: Optional[str] = None) -> None:
        # None is the scheme's default; an empty pattern is an error (resolve_pattern).
        self.pattern: Pattern = resolve_pattern(self.default_pattern if pattern is None else pattern)
        if normalize is not None and normalize not in NORMAL_FORMS:
            raise FunctionalBPEError(
                f"normalize must be None or one of {', '.join(NORMAL_FORMS)}, got {normalize!r}"
            )
        self.normalize: Optional[NormalForm] = cast(Optional[NormalForm], normalize)  # checked above

    @property
    def pattern_name(self) -> str:
        """The pattern's name (a key of ``PATTERNS``, ``"custom"``, or the scheme's own)."""
        return self.pattern.name

    # -- what the compiled core may do ----------------------------------------------------

    def compiled(self) -> Compiled:
        """The compiled paths this scheme allows (none by default: everything in Python)."""
        return Compiled()

    # -- text -> pieces ---------------------------------------------------------------------

    @abstractmethod
    def options(self) -> Dict[str, Any]:
        """Keyword options that rebuild this scheme (JSON-serializable)."""

    def prepare(self, text: str) -> str:
        """The text that is actually tokenized: ``text``, normalized if asked."""
        return unicodedata.normalize(self.normalize, text) if self.normalize else text

    @abstractmethod
    def raw_pieces(self, text: str) -> List[str]:
        """The pieces of ``prepare(text)`` that counting counts (before the transform)."""

    def piece_forms(self, piece: str) -> Tuple[str, ...]:
        """The text-form pieces of one raw piece."""
        return (piece,)

    def piece_forms_for_call(self) -> Callable[[str], Tuple[str, ...]]:
        """:meth:`piece_forms` for one call that asks for many pieces (the encoder's): a
        scheme may look up once what each piece would look up again."""
        return self.piece_forms

    def split(self, text: str) -> List[str]:
        """The text-form pieces of a text that holds no special token."""
        return list(chain.from_iterable(map(self.piece_forms, self.raw_pieces(text))))

    def encode(self, text: str) -> str:
        """The text form of ``text``: its pieces, joined."""
        return "".join(self.split(text))

    def transform(self, table: PieceTable) -> PieceTable:
        """The counted text-form pieces of counted raw pieces (see :func:`transform_table`)."""
        return table if self.compiled().identity else transform_table(table, self.piece_forms)

    # -- pieces -> text ---------------------------------------------------------------------

    @abstractmethod
    def decode(self, text: str, errors: str = "strict") -> str:
        """The text of a text form (``errors``: what to do with what no encoding writes)."""

    @abstractmethod
    def decodable_prefix(self, text: str) -> int:
        """How many characters of a text form that may still grow can be decoded now.

        The incremental decoder (:class:`functionalbpe.core.streaming.StreamDecoder`) calls this
        with the text form received so far and emits ``decode(text[:n])`` at once, keeping
        the rest. ``n`` must be such that whatever text form ``more`` follows::

            decode(text + more) == decode(text[:n]) + decode(text[n:] + more)

        The plain scheme decodes character by character, so all of it. A scheme whose atoms
        act on what follows them holds back from the first atom whose meaning is not settled
        yet: a case or shift code before its word is complete, a boundary marker that may
        pair with the next one, an operator waiting for its argument. Returning 0 is always
        correct (nothing is emitted until the end of the stream), just not incremental.
        """

    def show(self, piece: str) -> str:
        """``piece`` (or any token) with atoms as readable glyphs."""
        return piece

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options().items())
        return f"<scheme {self.name} pattern={self.pattern_name}{', ' + opts if opts else ''}>"


def transform_table(table: PieceTable, forms_of: Callable[[str], Sequence[str]]) -> PieceTable:
    """Give each raw piece's count to each of its text-form pieces ``forms_of(piece)``, in
    order of first occurrence (as a loop over the pieces in order, adding the forms of each,
    meets them). The pure-Python transform of every scheme.

    >>> transform_table(PieceTable.from_dict({"ab": 2, "b": 1}), tuple).to_dict()
    {'a': 2, 'b': 3}
    """
    out: Counter = Counter()
    for piece, count in table.items():
        for form in forms_of(piece):
            out[form] += count
    return PieceTable.from_dict(out)
