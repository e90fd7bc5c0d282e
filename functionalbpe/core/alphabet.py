"""The symbol alphabet: which id means what, and which pairs may merge.

Ids are laid out in four blocks, always in this order::

    0 .. 255                      the 256 bytes
    256 .. 256+A-1                the scheme's atoms, in code-point order
    256+A .. 256+A+M-1            one id per merge, in the order learned
    256+A+M .. vocab_size-1       special tokens

An *atom* is a symbol of a pre-tokenization scheme (a Functionalizer opcode or argument, a
boundary marker, a shift code). In a scheme's text form it is a private-use character, but
BPE sees it as one id of its own, never as the three UTF-8 bytes of that character.

Every symbol has a *kind* (text, operator, boundary, shift); a merged token has the kinds of
its parts. The merge policy (docs/training.md) says which pairs of kinds may merge. The policy is
written once, here, as :func:`can_merge`; the fast trainer and the encoder carry a C copy
that the tests compare against this one for every combination of flags.

Example::

    >>> a = Alphabet()
    >>> a.symbols("hé")
    (104, 195, 169)
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Dict, List, Optional, Sequence, Tuple

import regex

from ..util.checks import integer
from ..errors import FunctionalBPEError, VocabSizeError
from .limits import check_merges, special_token_bytes
from .pairs import Pairs
from ..util.checks import excerpt

# Kind flags of a symbol or token. A merged token ORs the kinds of its parts.
TEXT = 1
OPERATOR = 2
BOUNDARY = 4
SHIFT = 8
KIND_MASK = TEXT | OPERATOR | BOUNDARY | SHIFT
# Where the boundary marker sits: needed for "a token ending in ¦ never merges with a
# token starting with ¦", the rule that keeps the space two touching markers stand for.
STARTS_WITH_BOUNDARY = 16
ENDS_WITH_BOUNDARY = 32
# On a shift code: BPE may merge it like a text symbol, as the boundary-marker paper does (its
# reference code forbids only a marker with a marker). Without it a shift code stays a token
# of its own. A merged token carries it on from its parts.
SHIFT_MERGES = 64

MERGE_POLICIES = ("atomic", "prefix", "free")
POLICY_CODES = {name: code for code, name in enumerate(MERGE_POLICIES)}

NUM_BYTES = 256
# The largest vocabulary train() makes: every id then fits a signed 32-bit integer (the
# compiled core holds ids as uint32).
MAX_VOCAB_SIZE = 2**31

# Every atom of every scheme lives here; input text inside it is escaped by the scheme.
PRIVATE_USE_ATOMS = ("\ue000", "\uefff")
_ATOM_RANGE = regex.compile("[\ue000-\uefff]")


@dataclass(frozen=True)
class Atom:
    """One atomic symbol of a scheme.

    ``char`` is its private-use code point in the scheme's text form, ``name`` what the
    docs call it (``CAPITALIZE``, ``ARG 3``, ``BOUNDARY``), ``kind`` one of the kind flags,
    ``glyph`` how :meth:`Tokenizer.pieces` shows it to a person.
    """

    char: str
    name: str
    kind: int
    glyph: str

    @property
    def flags(self) -> int:
        if self.kind & BOUNDARY:
            return self.kind | STARTS_WITH_BOUNDARY | ENDS_WITH_BOUNDARY
        return self.kind


def merged_flags(left: int, right: int) -> int:
    """Flags of the token made by merging tokens with flags ``left`` and ``right``."""
    return (
        ((left | right) & (KIND_MASK | SHIFT_MERGES))
        | (left & STARTS_WITH_BOUNDARY)
        | (right & ENDS_WITH_BOUNDARY)
    )


def can_merge(policy: int, left: int, right: int) -> bool:
    """May tokens with these flags merge under ``policy`` (a code from ``POLICY_CODES``)?

    The table of docs/training.md, plus its one rule that holds under every policy::

        policy   op+op  op+text  boundary+text  shift+anything
        atomic   no     no       yes            no
        prefix   yes    no       yes            no
        free     yes    yes      yes            no

    and a token ending in ``¦`` never merges with one starting with ``¦``. A shift code
    flagged ``SHIFT_MERGES`` merges as text does (the markers scheme's
    ``merge_shift_codes=True``, the paper's rule).

    >>> can_merge(POLICY_CODES["prefix"], OPERATOR, OPERATOR), can_merge(1, OPERATOR, TEXT)
    (True, False)
    """
    kinds = (left | right) & KIND_MASK
    if kinds & SHIFT and not (left | right) & SHIFT_MERGES:
        return False
    if (left & ENDS_WITH_BOUNDARY) and (right & STARTS_WITH_BOUNDARY):
        return False
    if kinds & OPERATOR:
        if policy == 0:  # atomic: an operator never merges
            return False
        if policy == 1:  # prefix: operators merge only with operators
            return kinds == OPERATOR
    return True


def check_policy(merges: Sequence[Tuple[int, int]], flags: List[int], policy: int, name: str) -> None:
    """Every merge is one that merge policy ``name`` (code ``policy``) allows: a file cannot
    hold what training would never have made. ``flags``: those of the bytes and atoms."""
    flags = list(flags)
    for k, (a, b) in enumerate(merges):
        if not can_merge(policy, flags[a], flags[b]):
            raise FunctionalBPEError(
                f"merges[{k}]: {excerpt((a, b))} joins tokens that merge policy {name!r} never merges"
            )
        flags.append(merged_flags(flags[a], flags[b]))


def policy_code(policy: str) -> int:
    if policy not in POLICY_CODES:
        raise FunctionalBPEError(
            f"merge_policy must be one of {', '.join(MERGE_POLICIES)}, got {policy!r}"
        )
    return POLICY_CODES[policy]


def _int_pairs(merges: Sequence[Tuple[int, int]]) -> List[Tuple[int, int]]:
    """The merges as a new list of (int, int) tuples. Pairs of plain ints (a file's, a
    trainer's) are taken as they are, by C-level passes: the loop that makes ints of other
    numbers (numpy's) took 1.5 s on 4.1 million merges."""
    pairs = list(map(tuple, merges))
    if pairs and (set(map(len, pairs)) != {2} or set(map(type, chain.from_iterable(pairs))) != {int}):
        pairs = [(int(a), int(b)) for a, b in pairs]
    return pairs


class Alphabet:
    """The id layout of one tokenizer: bytes, atoms, merges, special tokens.

    >>> Alphabet(merges=[(104, 105)]).token_bytes(256)
    b'hi'
    """

    def __init__(
        self,
        atoms: Sequence[Atom] = (),
        merges: Sequence[Tuple[int, int]] = (),
        specials: Sequence[str] = (),
    ) -> None:
        chars = [a.char for a in atoms]
        if chars != sorted(chars) or len(set(chars)) != len(chars):
            raise ValueError("atoms must be distinct and in code-point order")
        for a in atoms:
            if not PRIVATE_USE_ATOMS[0] <= a.char <= PRIVATE_USE_ATOMS[1]:
                raise ValueError(f"atom {a.name} is outside U+E000..U+EFFF")
        self.atoms: Tuple[Atom, ...] = tuple(atoms)
        pairs = merges if isinstance(merges, Pairs) else _int_pairs(merges)
        self.specials: Tuple[str, ...] = tuple(specials)
        special_bytes = special_token_bytes(self.specials)
        self.first_atom = NUM_BYTES
        self.first_merge = NUM_BYTES + len(self.atoms)
        self.first_special = self.first_merge + len(pairs)
        self.vocab_size = self.first_special + len(self.specials)
        self._atom_ids: Dict[str, int] = {a.char: self.first_atom + i for i, a in enumerate(self.atoms)}
        # Ids defined before use, no pair twice, token lengths within the limits: checked
        # before anything is built from the merges (functionalbpe/core/limits.py).
        check_merges(pairs, self.first_merge, special_bytes)
        # Kept flat (8 bytes a merge; a list of tuples takes 64 and the ints besides).
        self.merges: Pairs = Pairs.of(pairs)
        self._bytes: Optional[List[bytes]] = None
        self._flags: Optional[List[int]] = None

    # -- the fixed part -----------------------------------------------------------------

    @property
    def num_fixed(self) -> int:
        """Ids that exist before any merge: bytes and atoms."""
        return self.first_merge

    def base_flags(self) -> List[int]:
        """Flags of ids 0 .. num_fixed-1 (bytes are text; atoms have their kind)."""
        return [TEXT] * NUM_BYTES + [a.flags for a in self.atoms]

    def atom_id(self, char: str) -> int:
        return self._atom_ids[char]

    def symbols(self, piece: str) -> Tuple[int, ...]:
        """The symbol ids BPE starts from for one piece of a scheme's text form.

        Text becomes its UTF-8 bytes; an atom's private-use character becomes the atom's
        single id. With no atoms (the plain scheme) every character is text.
        """
        if not self._atom_ids or _ATOM_RANGE.search(piece) is None:
            return tuple(piece.encode("utf-8"))
        out: List[int] = []
        atom_ids = self._atom_ids
        for ch in piece:
            atom = atom_ids.get(ch)
            if atom is None:
                out.extend(ch.encode("utf-8"))
            else:
                out.append(atom)
        return tuple(out)

    # -- derived from the merges ----------------------------------------------------------

    def token_bytes(self, token: int) -> bytes:
        """The bytes a token stands for in the scheme's text form (atoms as UTF-8)."""
        return self.all_token_bytes()[token]

    def all_token_bytes(self) -> List[bytes]:
        if self._bytes is None:
            table = [bytes([i]) for i in range(NUM_BYTES)]
            table += [a.char.encode("utf-8") for a in self.atoms]
            for a, b in self.merges:
                table.append(table[a] + table[b])
            table += [s.encode("utf-8") for s in self.specials]
            self._bytes = table
        return self._bytes

    def all_flags(self) -> List[int]:
        """Flags of every id below ``first_special``."""
        if self._flags is None:
            flags = self.base_flags()
            for a, b in self.merges:
                flags.append(merged_flags(flags[a], flags[b]))
            self._flags = flags
        return self._flags

    def special_ids(self) -> Dict[str, int]:
        return {s: self.first_special + i for i, s in enumerate(self.specials)}

    def is_special(self, token: int) -> bool:
        return self.first_special <= token < self.vocab_size

    def is_atom(self, token: int) -> bool:
        return self.first_atom <= token < self.first_merge

    def atom(self, token: int) -> Atom:
        return self.atoms[token - self.first_atom]


def num_merges_for(vocab_size: Optional[int], num_atoms: int, num_specials: int) -> Optional[int]:
    """How many merges a vocabulary of ``vocab_size`` holds (None: as many as exist)."""
    if vocab_size is None:
        return None
    fixed = NUM_BYTES + num_atoms + num_specials
    try:
        vocab_size = integer(vocab_size, "vocab_size", None, MAX_VOCAB_SIZE, " (or None: until no pair is left)")
    except FunctionalBPEError as exc:
        raise VocabSizeError(str(exc)) from None
    if vocab_size < fixed:
        raise VocabSizeError(
            f"vocab_size {vocab_size!r} is too small: every tokenizer of this scheme holds "
            f"{NUM_BYTES} bytes + {num_atoms} atoms + {num_specials} special tokens = {fixed} ids; "
            f"ask for at least {fixed}"
        )
    if vocab_size > MAX_VOCAB_SIZE:
        raise VocabSizeError(f"vocab_size {vocab_size} is above {MAX_VOCAB_SIZE}, the most ids a tokenizer holds")
    return vocab_size - fixed
