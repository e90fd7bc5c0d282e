"""What every entry point checks in what a caller passes: whole numbers and text.

Integers: an option that counts something is a Python ``int`` (a numpy integer is fine), never
a ``bool`` and never a ``float``, even ``300.0``: a float here is almost always a
computation gone wrong (``vocab_size=2**15 * 1.0``), and silently truncating it would hide
that.

Text: a ``str`` subclass (``numpy.str_``, a user's own) is read as the plain ``str`` it
holds, since the compiled core takes exact ``str`` objects. A lone surrogate (``"\\ud800"``:
a Python string may hold one, UTF-8 cannot) is read as U+FFFD wherever text is tokenized —
by ``encode`` as tiktoken does, and so by training, which must see the text as encoding
will. A pair of surrogates is read as the character it encodes.

Example::

    >>> integer(3, "n", 1), bpe_text("a\\ud800b")
    (3, 'a\\ufffdb')
"""
from __future__ import annotations

import operator
import reprlib
import os
from typing import Optional, Sequence, Union

from ..errors import FunctionalBPEError

# What every function that takes a file name accepts.
PathLike = Union[str, "os.PathLike[str]"]


def integer(
    value: object, name: str, minimum: Optional[int] = None, maximum: Optional[int] = None, hint: str = ""
) -> int:
    """``value`` as an int in ``minimum..maximum`` (None: no bound); else a
    FunctionalBPEError naming ``name``."""
    number: Optional[int] = None
    if not isinstance(value, bool):
        try:
            number = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            pass
    low = number is not None and minimum is not None and number < minimum
    high = number is not None and maximum is not None and number > maximum
    if number is None or low or high:
        if minimum is not None and maximum is not None:
            bounds = f" from {minimum} to {maximum}"
        elif minimum is not None:
            bounds = f" of at least {minimum}"
        else:
            bounds = f" of at most {maximum}" if maximum is not None else ""
        raise FunctionalBPEError(f"{name} must be an integer{bounds}{hint}, got {value!r}")
    return number


def plain_str(text: str) -> str:
    """``text`` as an exact ``str`` (a subclass is copied; a ``str`` is returned as is)."""
    if type(text) is str:
        return text
    if not isinstance(text, str):
        raise TypeError(f"expected a str, got {type(text).__name__}")
    return str.__str__(text)


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate read as U+FFFD, as tiktoken reads it (a pair of
    surrogates becomes the character they encode)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def bpe_text(text: str) -> str:
    """``text`` as tokenization reads it: an exact ``str`` without lone surrogates."""
    text = plain_str(text)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return without_surrogates(text)
    return text


def bpe_utf8(text: str) -> bytes:
    """The UTF-8 of :func:`bpe_text` of ``text``, encoding it once when it is clean."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return without_surrogates(text).encode("utf-8")


def special_tokens_checked(special_tokens: "Sequence[str] | str") -> "tuple[str, ...]":
    """The special tokens a caller gives (one ``str`` or several): non-empty, distinct, valid
    Unicode, as plain ``str``.

    >>> special_tokens_checked("<s>")
    ('<s>',)
    """
    if isinstance(special_tokens, str):
        special_tokens = (special_tokens,)
    special_tokens = tuple(special_tokens)
    for s in special_tokens:
        if not isinstance(s, str) or not s:
            raise FunctionalBPEError(f"a special token must be a non-empty str, got {s!r}")
        if bpe_text(s) != s:
            raise FunctionalBPEError(f"the special token {s!r} holds a lone surrogate, which UTF-8 cannot hold")
    specials = tuple(map(plain_str, special_tokens))
    if len(set(specials)) != len(specials):
        raise FunctionalBPEError("special tokens must be distinct")
    return specials


__all__ = ["integer", "plain_str", "without_surrogates", "bpe_text", "bpe_utf8", "special_tokens_checked"]


_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = 60
_repr.maxlong = 40
_repr.maxlevel = 2
_repr.maxlist = _repr.maxtuple = _repr.maxdict = 4


def excerpt(value: object) -> str:
    """``repr(value)`` cut to a readable length: a message never embeds a 20 KB token.

    >>> excerpt("x" * 1000)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxxxxxxx'"
    """
    return _repr.repr(value)


def is_int(value: object) -> bool:
    """A JSON integer: an ``int`` that is not a ``bool``."""
    return type(value) is int


def special_set(value: object, name: str) -> "frozenset[str]":
    """``allowed_special`` / ``disallowed_special`` other than ``"all"``: special tokens'
    texts, as a set of plain ``str``; anything else is a FunctionalBPEError naming ``name``.

    >>> sorted(special_set(["<s>"], "allowed_special"))
    ['<s>']
    """
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise FunctionalBPEError(
            f"{name} must be 'all' or a set of special tokens' texts, got {excerpt(value)}")
    out = []
    for item in value:  # type: ignore[attr-defined]
        if not isinstance(item, str):
            raise FunctionalBPEError(f"{name}: {excerpt(item)} is not a special token's text (a str)")
        out.append(plain_str(item))
    return frozenset(out)


def seed_value(seed: object) -> "int | float | str | bytes | None":
    """A seed for ``random.Random``: None, an integer (numpy's included), a float, str or
    bytes; anything else is a FunctionalBPEError naming ``seed``."""
    if seed is None or isinstance(seed, (float, str, bytes, bytearray)) and not isinstance(seed, bool):
        return seed  # type: ignore[return-value]
    if isinstance(seed, bool):
        return int(seed)
    try:
        return operator.index(seed)  # type: ignore[arg-type]
    except TypeError:
        raise FunctionalBPEError(f"seed must be an integer (or None), got {excerpt(seed)}") from None
