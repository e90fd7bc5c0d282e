"""Train/test splits every experiment makes the same way, and the check that they do not leak.

A corpus is cut into documents at blank lines; one without blank lines (a Bible, one verse
a line) at line ends instead. Every tenth document is held out. :func:`overlap` is the share
of held-out documents found verbatim (as a paragraph hash) among the training ones; the
reproductions measure without those documents (:func:`without_leaks`) and say how many
there were, and the parity experiment refuses a split above :data:`MAX_OVERLAP`.

    >>> train, held = split(["a b", "c d", "e f"] * 4)
    >>> len(train), len(held), round(overlap(train, held), 2)
    (11, 1, 1.0)
"""
from __future__ import annotations

import hashlib
from typing import List, Sequence, Tuple

MAX_OVERLAP = 0.01


class SplitError(ValueError):
    """A corpus too small to split, or a split that leaks; the message says which and how."""


def documents(text: str, name: str = "the corpus") -> List[str]:
    """``text`` as documents: paragraphs at blank lines, else lines (each with its line end)."""
    docs = [d + "\n\n" for d in text.split("\n\n") if d.strip()]
    if len(docs) < 10:
        docs = [line + "\n" for line in text.splitlines() if line.strip()]
    if len(docs) < 2:
        raise SplitError(f"{name}: {len(docs)} document(s); at least 2 are needed, one to train on and one to hold out")
    return docs


def split(docs: Sequence[str]) -> Tuple[List[str], List[str]]:
    """Every tenth document held out (the last one when there are fewer than ten)."""
    if len(docs) < 10:
        return list(docs[:-1]), [docs[-1]]
    return [d for i, d in enumerate(docs) if i % 10 != 9], [d for i, d in enumerate(docs) if i % 10 == 9]


def _key(doc: str) -> bytes:
    return hashlib.blake2b(" ".join(doc.split()).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def overlap(train: Sequence[str], held: Sequence[str]) -> float:
    """The share of ``held`` documents that stand verbatim (white space aside) in ``train``."""
    seen = set(map(_key, train))
    return sum(_key(d) in seen for d in held) / len(held) if held else 0.0


def without_leaks(train: Sequence[str], held: Sequence[str], name: str) -> Tuple[List[str], float]:
    """The held-out documents that do not stand verbatim in ``train``, and the share that did
    (said on stderr when there were any): what every reproduction measures on.

    >>> without_leaks(["a b", "c"], ["a  b", "d"], "x")
    (['d'], 0.5)
    """
    import sys

    seen = set(map(_key, train))
    kept = [d for d in held if _key(d) not in seen]
    share = 1 - len(kept) / len(held) if held else 0.0
    if share:
        print(f"{name}: {share:.1%} of the held-out documents stand verbatim in the training ones; "
              "measured without them", file=sys.stderr)
    return kept, share
