"""The vocabulary as a person reads it, one token a line, as minbpe's ``.vocab`` files do.

Special tokens and the scheme's atoms come first (they are not made of bytes), then the 256
bytes, then every merge in the order it was learned::

    256  [u][g] -> [ug]  20

id, the two tokens merged, the token made, and how often the pair occurred when training
chose it (when the tokenizer file keeps the counts). Tokens are shown with visible glyphs
(:func:`functionalbpe.util.display.show_text_form`): ``␣`` for a space, ``↵`` for a newline,
``<c3>`` for a byte that is not a whole character, an atom as its scheme writes it.

Example::

    >>> import functionalbpe as fb
    >>> tok = fb.train(["hug"] * 10 + ["pug"] * 5 + ["hugs"] * 5, vocab_size=258, progress=False)
    >>> vocab_lines(tok)[-2:]
    ['   256  [u][g] -> [ug]  20', '   257  [h][ug] -> [hug]  15']
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, List

from ..core.alphabet import NUM_BYTES

if TYPE_CHECKING:  # pragma: no cover
    from ..interop.protocol import Tokenizes


def shower(tok: "Tokenizes") -> Callable[[int], str]:
    """``show(id)``: how a token of ``tok`` is written for a person (memoized per id)."""
    memo: Dict[int, str] = {}

    def show(token: int) -> str:
        text = memo.get(token)
        if text is None:
            text = memo[token] = tok.token_text(token)
        return text

    return show


def byte_ids(tok: "Tokenizes") -> List[int]:
    """The id of each byte 0..255 (a vocabulary imported from tiktoken keeps its own)."""
    return list(tok.to_payload().get("byte_ids") or range(NUM_BYTES))


def vocab_lines(tok: "Tokenizes") -> List[str]:
    """Every token of ``tok``, one line each: specials, atoms, bytes, then the merges."""
    show = shower(tok)
    lines = [f"{i:>6}  [{s}]  special" for s, i in sorted(tok.special_tokens.items(), key=lambda kv: kv[1])]
    first_atom = NUM_BYTES
    lines += [f"{first_atom + k:>6}  [{show(first_atom + k)}]  atom {atom.name}"
              for k, atom in enumerate(tok.scheme.atoms)]
    lines += [f"{i:>6}  [{show(i)}]  byte {b:#04x}" for b, i in enumerate(byte_ids(tok))]
    first_merge = NUM_BYTES + len(tok.scheme.atoms)
    counts = tok.merge_counts
    for k, (a, b) in enumerate(tok.merges):
        made = first_merge + k
        line = f"{made:>6}  [{show(a)}][{show(b)}] -> [{show(made)}]"
        lines.append(line if counts is None else f"{line}  {counts[k]}")
    return lines
