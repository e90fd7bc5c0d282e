"""Schemes: how text becomes the pieces BPE sees, and how those come back to text.

A scheme owns the pre-tokenization pattern and may transform each piece into a *text form*
that contains atoms (private-use characters, see :mod:`functionalbpe.core.alphabet`). The plain
scheme is the identity: pieces are the pattern's matches. The Functionalizer
(:mod:`functionalbpe.schemes.functional`) and the boundary markers (:mod:`functionalbpe.schemes.markers`)
rewrite pieces and must be exactly invertible through :meth:`Scheme.decode`.

What every scheme provides:

* ``atoms`` — its atomic symbols in code-point order (ids follow the 256 bytes);
* ``split(text)`` — the text-form pieces of a text that holds no special tokens;
* ``count(segments)`` — the same pieces counted over many texts (what training needs);
  a scheme may make this much cheaper than splitting every text, e.g. by transforming each
  distinct raw piece once;
* ``counts_flat()`` and ``describe_table(table)`` — where ``count`` is each distinct raw
  piece transformed on its own, the fast trainer's path: raw pieces counted flat in C, then
  transformed table to table;
* optionally ``raw_pieces(text)``, ``piece_forms(piece)`` and ``joins_runs()`` — where
  ``split(text)`` is ``piece_forms`` of each raw piece in turn (the Functionalizer): the
  encoder then caches ids per raw piece, in C when the raw pieces are a built-in pattern's
  and no runs of pieces are joined;
* ``decode(text_form, errors)`` — the original text; ``decode(''.join(split(t))) == t``;
  a text form that no encoding writes raises with ``errors="strict"`` (a
  :class:`~functionalbpe.errors.DecodeError`), gives U+FFFD with ``"replace"`` and is
  dropped with ``"ignore"``;
* ``decodable_prefix(text_form)`` — for streaming: how much of a text form that is still
  growing can be decoded now (see :meth:`Scheme.decodable_prefix`);
* ``show(piece)`` — a piece with atoms as readable glyphs, for ``Tokenizer.pieces``;
* ``options()`` — what the tokenizer file stores to rebuild it with :func:`make_scheme`.

Example::

    >>> make_scheme("plain", "gpt2").split("Hello world")
    ['Hello', ' world']
"""
from __future__ import annotations

import importlib
from collections import Counter
from typing import TYPE_CHECKING, Any, ClassVar, Dict, Iterable, List, Optional, Tuple

from ..core.alphabet import Atom
from ..errors import FunctionalBPEError
from ..text.patterns import pretokenize, resolve_pattern

if TYPE_CHECKING:
    from ..text.counting import PieceTable


class Scheme:
    """The plain scheme, and the base class of the others."""

    name: ClassVar[str] = "plain"
    default_pattern: ClassVar[str] = "gpt4"
    atoms: Tuple[Atom, ...] = ()

    def __init__(self, pattern: Optional[str] = None) -> None:
        # None is the scheme's default; an empty pattern is an error (resolve_pattern).
        self.pattern_name, self.pattern = resolve_pattern(self.default_pattern if pattern is None else pattern)

    def options(self) -> Dict[str, Any]:
        """Keyword options that rebuild this scheme (JSON-serializable)."""
        return {}

    def split(self, text: str) -> List[str]:
        return pretokenize(text, self.pattern)

    def count(self, segments: Iterable[str], *, threads: Optional[int] = None) -> Dict[str, int]:
        counts: Counter = Counter()
        for segment in segments:
            counts.update(self.split(segment))
        return dict(counts)

    def counts_flat(self) -> bool:
        """Whether training may count the pattern's pieces laid out flat (no Python object
        per distinct piece, see :class:`~functionalbpe.text.counting.PieceTable`) and pass them
        through :meth:`describe_table`, instead of calling :meth:`count`: true when
        ``count`` gives each distinct piece of the pattern its text form on its own.
        """
        return type(self).count is PlainScheme.count

    def describe_table(self, table: "PieceTable") -> "PieceTable":
        """The text-form pieces, counted, of the pattern's pieces counted flat (see
        :meth:`counts_flat`). The plain scheme's are the pieces themselves."""
        return table

    def decode(self, text: str, errors: str = "strict") -> str:
        """The text of a text form (``errors``: what to do with what no encoding writes)."""
        return text

    def decodable_prefix(self, text: str) -> int:
        """How many characters of a text form that may still grow can be decoded now.

        The incremental decoder (:class:`functionalbpe.streaming.StreamDecoder`) calls this
        with the text form received so far and emits ``decode(text[:n])`` at once, keeping
        the rest. ``n`` must be such that whatever text form ``more`` follows::

            decode(text + more) == decode(text[:n]) + decode(text[n:] + more)

        The plain scheme decodes character by character, so all of it. A scheme whose atoms
        act on what follows them holds back from the first atom whose meaning is not settled
        yet: a case or shift code before its word is complete, a boundary marker that may
        pair with the next one, an operator waiting for its argument. Returning 0 is always
        correct (nothing is emitted until the end of the stream), just not incremental.

        >>> make_scheme("plain").decodable_prefix("Hello")
        5
        """
        return len(text)

    def show(self, piece: str) -> str:
        return piece

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options().items())
        return f"<scheme {self.name} pattern={self.pattern_name}{', ' + opts if opts else ''}>"


class PlainScheme(Scheme):
    """Pieces are the pattern's matches, as they are."""

    def count(self, segments: Iterable[str], *, threads: Optional[int] = None) -> Dict[str, int]:
        from ..text.counting import count_segments

        return count_segments(segments, self.pattern, threads=threads)


# name -> "module:class"; imported on first use so that a scheme's module loads only if used.
SCHEMES: Dict[str, str] = {
    "plain": "functionalbpe.schemes.base:PlainScheme",
    "functional": "functionalbpe.schemes.functional:FunctionalScheme",
    "markers": "functionalbpe.schemes.markers:MarkersScheme",
}


def scheme_class(name: str) -> type:
    if name not in SCHEMES:
        raise FunctionalBPEError(f"scheme must be one of {', '.join(SCHEMES)}, got {name!r}")
    module, _, cls = SCHEMES[name].partition(":")
    try:
        return getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError):
        raise FunctionalBPEError(f"scheme {name!r} is not available in this version") from None


def make_scheme(name: str = "plain", pattern: Optional[str] = None, **options: Any) -> Scheme:
    """Build a scheme by name, with its pattern (None: the scheme's default) and options."""
    cls = scheme_class(name)
    try:
        return cls(pattern=pattern, **options)
    except TypeError as exc:
        raise FunctionalBPEError(f"bad option for scheme {name!r}: {exc}") from None
