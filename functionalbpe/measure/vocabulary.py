"""What a vocabulary spends its entries on, and a text its tokens: the duplicates that the
boundary-marker paper counts (case and space variants of one word), shared by
``benchmarks/markers_measure.py`` and ``experiments/reproduce_markers.py``.

An entry is *alphabetic* when its text, without a leading space and without markers, is
letters only (``str.isalpha``).

>>> import functionalbpe as fb
>>> tok = fb.train(["The the the The"] * 20, vocab_size=261, pattern="gpt2", progress=False)
>>> [tok.token_bytes(i) for i in range(256, 261)]
[b'he', b' t', b'The', b' the', b' The']
>>> vocabulary_stats(tok)  # ' The' beside ' the'; 'The' beside ' The'
{'alphabetic': 5, 'case_dups': 1, 'space_dups': 1, 'boundary_variants': 1}
"""
from __future__ import annotations

from typing import Dict

from ..schemes.markers import BOUNDARY, TITLE, UPPER
from ..tokenizer import Tokenizer


def vocabulary_stats(tok: Tokenizer) -> Dict[str, int]:
    """Duplicate counts over the merged tokens (bytes and atoms are the same for everyone)."""
    entries = set()
    for token in range(tok.alphabet.first_merge, tok.alphabet.first_special):
        try:
            entries.add(tok.alphabet.token_bytes(token).decode("utf-8"))
        except UnicodeDecodeError:
            continue  # part of a character: not alphabetic

    def unshifted(entry: str) -> str:
        return entry.replace(TITLE, "").replace(UPPER, "")

    def core(entry: str) -> str:
        entry = unshifted(entry)
        return entry[1:].replace(BOUNDARY, "") if entry.startswith(" ") else entry.replace(BOUNDARY, "")

    alphabetic = {e for e in entries if core(e).isalpha()}
    # A case variant: the entry lower-cased is an entry too, or (markers) the entry carries a
    # shift code and its unshifted twin is an entry (↑¦the¦ beside ¦the¦).
    case_dups = sum(1 for e in alphabetic if (e != e.lower() and e.lower() in entries)
                    or (unshifted(e) != e and unshifted(e).lower() in entries))
    space_dups = sum(1 for e in alphabetic if not e.startswith(" ") and " " + e in entries)
    forms: Dict[str, int] = {}
    for e in alphabetic:
        forms[core(e)] = forms.get(core(e), 0) + 1
    return {
        "alphabetic": len(alphabetic),
        "case_dups": case_dups,
        "space_dups": space_dups,
        "boundary_variants": sum(n - 1 for n in forms.values()),
    }


def tokens_by_piece(tok: Tokenizer, text: str) -> Dict[str, int]:
    """Where the tokens go: pieces with a letter, pieces of whitespace only, the rest."""
    spent = {"letter": 0, "whitespace": 0, "rest": 0}
    for shown, ids in tok.explain(text):
        kind = "letter" if any(c.isalpha() for c in shown) else "whitespace" if shown.isspace() else "rest"
        spent[kind] += len(ids)
    return spent
