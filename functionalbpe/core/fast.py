"""The fast trainer: the reference's merges, from a C merge loop.

:func:`train_merges` has exactly the signature and the result of
:func:`functionalbpe.core.reference.train_merges`. Two more entry points skip the Python tuples
of symbols that the reference needs, which matters when there are millions of pieces:

* :func:`train_merges_from_text` takes the counted pieces in a scheme's text form
  (``{str: count}``, what counting returns) and the :class:`~functionalbpe.core.alphabet.Alphabet`
  whose atoms they may contain;
* :func:`train_merges_utf8` takes them laid out flat (one UTF-8 buffer, int64 offsets and
  counts), the form a C counter can hand over without making a Python object per piece.

Both give the same merges as ``train_merges({alphabet.symbols(p): c ...}, ...)``.

The work is done by ``functionalbpe._trainer`` (``csrc/_trainer.pyx`` over
``csrc/lib/bpe_train.c``, whose opening comment gives the design and the measurements).
When that module is not built, or ``FUNCTIONALBPE_PUREPYTHON=1``, every function here runs
the reference instead: slower, same result.

Example::

    >>> train_merges_from_text({"hug": 10, "pug": 5, "hugs": 5}, 2)  # u g, then h ug
    [(117, 103, 20), (104, 256, 15)]
"""
from __future__ import annotations

from typing import List, Mapping, Optional, Sequence

from . import reference
from ._native import native
from .alphabet import Alphabet
from ..filecheck import MAX_TOKEN_BYTES
from ..progress import ProgressSpec
from .reference import Merge, check_options


def available() -> bool:
    """Is the compiled trainer built and wanted?"""
    return native("_trainer") is not None


def train_merges(
    pieces: Mapping[Sequence[int], int],
    num_merges: Optional[int],
    first_id: int,
    *,
    flags: Optional[Sequence[int]] = None,
    merge_policy: str = "prefix",
    min_frequency: int = 1,
    progress: ProgressSpec = False,
    max_token_bytes: int = MAX_TOKEN_BYTES,
) -> List[Merge]:
    """Learn up to ``num_merges`` merges (``None``: until no pair is left).

    Same arguments and result as :func:`functionalbpe.core.reference.train_merges`. Counts are
    held in 64 bits: a count, and the sum over pieces of count × (symbols − 1), must stay
    below 2**63 (else OverflowError).

    >>> train_merges({(1, 2, 1, 2): 3}, None, 3)
    [(1, 2, 6), (3, 3, 3)]
    """
    trainer = native("_trainer")
    if trainer is None:
        return reference.train_merges(
            pieces, num_merges, first_id, flags=flags, merge_policy=merge_policy,
            min_frequency=min_frequency, progress=progress, max_token_bytes=max_token_bytes,
        )
    policy, flags = check_options(first_id, flags, merge_policy, min_frequency)
    return trainer.train_merges(pieces, num_merges, first_id, flags, policy, min_frequency, progress, max_token_bytes)


def train_merges_from_text(
    pieces: Mapping[str, int],
    num_merges: Optional[int],
    alphabet: Optional[Alphabet] = None,
    *,
    merge_policy: str = "prefix",
    min_frequency: int = 1,
    progress: ProgressSpec = False,
) -> List[Merge]:
    """Learn merges from counted text-form pieces (``alphabet``: the scheme's, default plain).

    Merge ids start at ``alphabet.num_fixed``; the symbols' flags are
    ``alphabet.base_flags()``. Same result as :func:`train_merges` on
    ``{alphabet.symbols(piece): count}``.
    """
    return _train_text(
        lambda trainer, *args: trainer.train_merges_from_text(pieces, *args),
        lambda: pieces.items(), num_merges, alphabet, merge_policy, min_frequency, progress,
    )


def train_merges_utf8(
    data: bytes,
    offsets,
    counts,
    num_merges: Optional[int],
    alphabet: Optional[Alphabet] = None,
    *,
    merge_policy: str = "prefix",
    min_frequency: int = 1,
    progress: ProgressSpec = False,
) -> List[Merge]:
    """Learn merges from pieces laid out flat.

    Piece ``i`` is ``data[offsets[i]:offsets[i + 1]]``, UTF-8 in the text form of
    ``alphabet``'s scheme, and occurs ``counts[i]`` times. ``offsets`` (n + 1 entries) and
    ``counts`` (n entries) are int64 buffers: ``array('q')`` or numpy ``int64``.

    >>> from array import array
    >>> train_merges_utf8(b"aaab", array("q", [0, 3, 4]), array("q", [2, 7]), 1)
    [(97, 97, 4)]
    """
    return _train_text(
        lambda trainer, *args: trainer.train_merges_utf8(data, offsets, counts, *args),
        lambda: _utf8_pieces(data, offsets, counts), num_merges, alphabet, merge_policy,
        min_frequency, progress,
    )


def _train_text(compiled, text_pieces, num_merges, alphabet, merge_policy, min_frequency,
                progress) -> List[Merge]:
    """What the text-form entry points share: ``compiled(trainer, ...)`` runs the C side;
    without it, ``text_pieces()`` gives (piece, count) pairs for the reference."""
    alphabet = alphabet if alphabet is not None else Alphabet()
    first_id, flags = alphabet.num_fixed, alphabet.base_flags()
    trainer = native("_trainer")
    if trainer is None:
        return reference.train_merges(
            _symbols(text_pieces(), alphabet), num_merges, first_id, flags=flags,
            merge_policy=merge_policy, min_frequency=min_frequency, progress=progress,
        )
    policy, flags = check_options(first_id, flags, merge_policy, min_frequency)
    return compiled(trainer, num_merges, first_id, _atom_ids(alphabet), flags, policy,
                    min_frequency, progress)


def _utf8_pieces(data, offsets, counts):
    """(piece, count) pairs of the flat form, for the pure-Python path."""
    view, offs = memoryview(data).cast("B"), memoryview(offsets).cast("B").cast("q")
    cnts = memoryview(counts).cast("B").cast("q")
    if len(offs) != len(cnts) + 1:
        raise ValueError(f"{len(cnts)} counts need {len(cnts) + 1} offsets, got {len(offs)}")
    return ((bytes(view[offs[i]:offs[i + 1]]).decode("utf-8"), cnts[i]) for i in range(len(cnts)))


def _symbols(pieces, alphabet: Alphabet) -> dict:
    """{symbol tuple: count} from (text-form piece, count) pairs: the reference's input."""
    symbols: dict = {}
    for piece, count in pieces:
        if not isinstance(piece, str):
            raise TypeError(f"text-form pieces must be str, got {type(piece).__name__}: {piece!r}")
        if count > 0:  # as the reference (and the C side) drop the others
            key = alphabet.symbols(piece)
            symbols[key] = symbols.get(key, 0) + count
    return symbols


def _atom_ids(alphabet: Alphabet) -> dict:
    return {atom.char: alphabet.atom_id(atom.char) for atom in alphabet.atoms}
