"""The encoding trace: how a text becomes its ids, one merge at a time.

:func:`trace` does what ``Tokenizer.encode(text, allowed_special="all")`` does, slowly and in
the open: cut the text at special tokens, let the scheme cut each part into pieces (and
write each piece in its text form: instructions, markers), start each piece from its bytes
and atoms, and apply the merges one by one — always the pair merged earliest in training
(lowest rank), every occurrence of it left to right. Each :class:`Step` records the symbols
before, the pair, its rank, the token made and the symbols after. The last step of every
piece leaves exactly the ids that ``encode`` gives (the tests check it on hypothesis text,
for every scheme).

:func:`merge_tree` shows how one token was built from bytes.

Example::

    >>> import functionalbpe as fb
    >>> tok = fb.train(["hug"] * 10 + ["pug"] * 5 + ["hugs"] * 5, vocab_size=258, progress=False)
    >>> t = trace(tok, "hugs")
    >>> [(s.pair, s.rank, s.token) for s in t.steps[0]]
    [((117, 103), 0, 256), ((104, 256), 1, 257)]
    >>> t.ids == tok.encode("hugs")
    True
    >>> print("\\n".join(explain_lines(tok, "hugs")))
    piece 'hugs'
      [h][u][g][s]
      [u][g] -> [ug]  (rank 0, id 256)     [h][ug][s]
      [h][ug] -> [hug]  (rank 1, id 257)   [hug][s]
      ids 257 115
    >>> print("\\n".join(merge_tree(tok, 257)))
    [hug] 257
    ├── [h] 104
    └── [ug] 256
        ├── [u] 117
        └── [g] 103
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Tuple

from ..util.checks import bpe_text
from ..core.alphabet import NUM_BYTES
from ..core.reference import merge
from ..util.display import show_text_form
from ..text.patterns import special_cutter
from .vocab import byte_ids, shower

if TYPE_CHECKING:  # pragma: no cover
    from ..interop.protocol import Tokenizes


@dataclass(frozen=True)
class Step:
    """One merge applied to one piece: ``before`` → ``after`` by merging ``pair`` (every
    occurrence, left to right) into ``token``, the merge of rank ``rank``."""

    before: Tuple[int, ...]
    pair: Tuple[int, int]
    rank: int
    token: int
    after: Tuple[int, ...]


@dataclass(frozen=True)
class PieceTrace:
    """One piece: ``raw`` as the pattern cut it, ``form`` as BPE sees it (a scheme's text
    form; the same as ``raw`` for the plain scheme), the symbols BPE starts from, the steps,
    and the ids it ends in. A special token is one piece with no steps."""

    raw: str
    form: str
    start: Tuple[int, ...]
    steps: Tuple[Step, ...]
    ids: Tuple[int, ...]
    special: bool = False
    raw_index: int = 0  # which raw piece of the text it came from (a raw piece may give several forms)


@dataclass(frozen=True)
class EncodingTrace:
    """The trace of one text: ``pieces`` in order; ``steps`` is each piece's steps and
    ``ids`` every piece's ids joined, ``tok.encode(text, allowed_special="all")``."""

    text: str
    pieces: Tuple[PieceTrace, ...] = field(default_factory=tuple)

    @property
    def steps(self) -> List[Tuple[Step, ...]]:
        return [p.steps for p in self.pieces]

    @property
    def ids(self) -> List[int]:
        return [i for p in self.pieces for i in p.ids]


def trace(tok: "Tokenizes", text: str) -> EncodingTrace:
    """Encode ``text`` step by step (special tokens allowed, as ``allowed_special="all"``)."""
    text = bpe_text(text)
    alphabet = tok.alphabet
    first_merge = alphabet.first_merge
    ranks = {pair: first_merge + k for k, pair in enumerate(alphabet.merges)}
    external = _externalizer(tok)
    specials = tok.special_tokens
    segments = special_cutter(frozenset(specials)).split(text) if specials else [(text, False)]
    pieces: List[PieceTrace] = []
    raw_index = 0
    for segment, is_special in segments:
        if is_special:
            pieces.append(PieceTrace(segment, segment, (), (), (specials[segment],), True, raw_index))
            raw_index += 1
            continue
        for raw in tok.scheme.raw_pieces(segment):
            raw_index += 1
            for form in tok.scheme.piece_forms(raw):
                symbols = list(alphabet.symbols(form))
                start = tuple(external(symbols))
                steps: List[Step] = []
                while len(symbols) >= 2:
                    pair = min(zip(symbols, symbols[1:]), key=lambda p: ranks.get(p, len(ranks) + first_merge))
                    token = ranks.get(pair)
                    if token is None:
                        break
                    after = merge(symbols, pair, token)
                    steps.append(Step(tuple(external(symbols)), tuple(external(pair)), token - first_merge, token,
                                      tuple(external(after))))
                    symbols = after
                pieces.append(PieceTrace(raw, form, start, tuple(steps), tuple(external(symbols)), False, raw_index))
    return EncodingTrace(text, tuple(pieces))


def _externalizer(tok: "Tokenizes") -> Callable[[Sequence[int]], List[int]]:
    """Internal ids (bytes in byte order) to the tokenizer's ids (an imported vocabulary's
    bytes keep their own). Merges and atoms are the same in both."""
    table = byte_ids(tok)
    if table == list(range(NUM_BYTES)):
        return list
    return lambda ids: [table[i] if i < NUM_BYTES else i for i in ids]


def explain_lines(tok: "Tokenizes", text: str, paint: Optional[Callable[[int, str], str]] = None) -> List[str]:
    """The trace as text: per piece, its text form (for a scheme), the symbols it starts
    from, one line per merge with the symbols after it, and its ids. ``paint(k, shown)``
    colours the k-th token of the final line (the CLI's ``--color``)."""
    show = shower(tok)
    scheme = tok.scheme
    traced = trace(tok, text)
    lines: List[str] = []

    def visible_form(form: str) -> str:
        return show_text_form(form.encode("utf-8"), scheme.show)

    if scheme.atoms:  # a scheme: the text form first, then the merges
        lines.append("text form " + " ".join(visible_form(p.form) for p in traced.pieces))
    last_raw = -1
    for piece in traced.pieces:
        if piece.special:
            lines += [f"special {piece.raw!r}", f"  ids {piece.ids[0]}"]
            continue
        if piece.raw_index != last_raw:
            forms = [p.form for p in traced.pieces if p.raw_index == piece.raw_index]
            shown_forms = "" if forms == [piece.raw] else "  ->  " + " ".join(map(visible_form, forms))
            lines.append(f"piece {scheme.show(piece.raw)!r}{shown_forms}")
            last_raw = piece.raw_index
        lines.append("  " + _symbols(piece.start, show))
        rules = [f"[{show(s.pair[0])}][{show(s.pair[1])}] -> [{show(s.token)}]  (rank {s.rank}, id {s.token})"
                 for s in piece.steps]
        width = max(map(len, rules), default=0)
        for rule, s in zip(rules, piece.steps):
            lines.append(f"  {rule:<{width}}   {_symbols(s.after, show)}")
        if paint is not None:
            lines.append("  = " + "".join(paint(k, show(i)) for k, i in enumerate(piece.ids)))
        lines.append("  ids " + " ".join(map(str, piece.ids)))
    return lines


def _symbols(ids: Sequence[int], show: Callable[[int], str]) -> str:
    return "".join(f"[{show(i)}]" for i in ids)


def merge_tree(tok: "Tokenizes", token: int) -> List[str]:
    """How ``token`` was built: the token, then the two it merged, down to bytes and atoms."""
    show = shower(tok)
    parts: Dict[int, Tuple[int, int]] = {tok.alphabet.first_merge + k: pair for k, pair in enumerate(tok.merges)}
    lines = [f"[{show(token)}] {token}"]

    def walk(node: int, prefix: str) -> None:
        pair = parts.get(node)
        if pair is None:
            return
        for child, last in ((pair[0], False), (pair[1], True)):
            lines.append(f"{prefix}{'└── ' if last else '├── '}[{show(child)}] {child}")
            walk(child, prefix + ("    " if last else "│   "))

    walk(token, "")
    return lines
