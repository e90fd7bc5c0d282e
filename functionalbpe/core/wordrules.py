"""SuperBPE's stage-two rules: the tokens a superword merge may not make.

The published SuperBPE tokenizers (the ``*_mw4_colon`` ones behind the paper's figures) were
trained by a fork of HF ``tokenizers`` whose second stage skips a merge when the token it
would make

* spans more than ``max_words`` words (4): a word is a non-empty run of bytes between
  spaces (byte 0x20 only; a newline does not separate words), or
* holds ``": "`` (a colon, then a space), unless ``colon_space`` is true.

Both only grow with a token: a token that breaks a rule makes only tokens that break it.
Skipping the merge every time it comes up is therefore the same as never counting the pair,
which is how every trainer here applies them (as it applies the merge policy).

The lesson (:func:`functionalbpe.core.reference.train`) checks :meth:`TokenRules.allows`
on the bytes of the token a pair would make. The fast trainers cannot keep every token's
bytes at hand, so they keep a *shape* per symbol (:func:`shape_of`): its word count and
whether it starts or ends with a space, ends with a colon or holds ``": "`` already — enough
to know the shape of two symbols joined (:func:`joined_shape`) and whether the rules allow
it (:meth:`TokenRules.allow_shapes`). ``csrc/lib/train/word_rules.h`` is the same arithmetic in C.

>>> rules = TokenRules(max_words=4, colon_space=False)
>>> rules.allows(b" by the way"), rules.allows(b" one two three four five"), rules.allows(b"Note: ")
(True, False, False)
>>> a, b = shape_of(b" one two"), shape_of(b" three four five")
>>> rules.allow_shapes(a, b), rules.allow_shapes(a, shape_of(b" three"))
(False, True)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional

from ..errors import FunctionalBPEError

# The bits of a shape; the word count is above them.
STARTS_WITH_SPACE = 1
ENDS_WITH_SPACE = 2
ENDS_WITH_COLON = 4
HOLDS_COLON_SPACE = 8
WORDS_SHIFT = 4


def count_words(token: bytes) -> int:
    """The words of a token: its non-empty runs between spaces (as the fork splits on ``Ġ``)."""
    return sum(1 for part in token.split(b" ") if part)


def shape_of(token: bytes) -> int:
    """The shape of a non-empty token, from its bytes."""
    shape = count_words(token) << WORDS_SHIFT
    if token.startswith(b" "):
        shape |= STARTS_WITH_SPACE
    if token.endswith(b" "):
        shape |= ENDS_WITH_SPACE
    if token.endswith(b":"):
        shape |= ENDS_WITH_COLON
    if b": " in token:
        shape |= HOLDS_COLON_SPACE
    return shape


def joined_shape(left: int, right: int) -> int:
    """The shape of two non-empty tokens side by side. A word that ends the left one and a
    word that starts the right one become one word."""
    words = (left >> WORDS_SHIFT) + (right >> WORDS_SHIFT)
    if not left & ENDS_WITH_SPACE and not right & STARTS_WITH_SPACE:
        words -= 1
    holds = (left | right) & HOLDS_COLON_SPACE
    if left & ENDS_WITH_COLON and right & STARTS_WITH_SPACE:
        holds = HOLDS_COLON_SPACE
    return (words << WORDS_SHIFT) | holds | (left & STARTS_WITH_SPACE) | (
        right & (ENDS_WITH_SPACE | ENDS_WITH_COLON))


@dataclass(frozen=True)
class TokenRules:
    """Which tokens a merge may make: at most ``max_words`` words (None: any number), and
    ``": "`` inside only when ``colon_space``."""

    max_words: Optional[int] = None
    colon_space: bool = True

    def __post_init__(self) -> None:
        if self.max_words is not None and (isinstance(self.max_words, bool) or not isinstance(self.max_words, int)
                                           or self.max_words < 1):
            raise FunctionalBPEError(f"max_words is a whole number of at least 1 or None, got {self.max_words!r}")
        if not isinstance(self.colon_space, bool):
            raise FunctionalBPEError(f"colon_space is True or False, got {self.colon_space!r}")

    @property
    def refuses_any(self) -> bool:
        """False when every token is allowed (no rule at all)."""
        return self.max_words is not None or not self.colon_space

    def allows(self, token: bytes) -> bool:
        """May a merge make ``token``?"""
        if not self.colon_space and b": " in token:
            return False
        return self.max_words is None or count_words(token) <= self.max_words

    def allow_shapes(self, left: int, right: int) -> bool:
        """:meth:`allows` on the token made of two tokens of these shapes."""
        joined = joined_shape(left, right)
        if not self.colon_space and joined & HOLDS_COLON_SPACE:
            return False
        return self.max_words is None or joined >> WORDS_SHIFT <= self.max_words

    def describe(self) -> Dict[str, Any]:
        """As the tokenizer file records them."""
        return {"max_words": self.max_words, "colon_space": self.colon_space}


# SuperBPE's published second stage (``mw4_colon``).
SUPERWORD_RULES = TokenRules(max_words=4, colon_space=False)
NO_RULES = TokenRules()
