"""The built-in patterns written for JavaScript, so that a web page cuts text exactly as
:func:`functionalbpe.text.patterns.pretokenize` does.

Three things stand between the ``regex`` patterns and a JavaScript ``RegExp``:

* **possessive quantifiers** (``?+``, ``++`` in ``gpt4``), which JavaScript lacks. Here they
  change nothing, so they are dropped: in ``[^\\r\\n\\p{L}\\p{N}]?+\\p{L}+`` giving the optional
  character back would leave a non-letter where ``\\p{L}+`` must start, and in
  ``[^\\s\\p{L}\\p{N}]++[\\r\\n]*`` the tail matches the empty string, so the greedy ``+`` is
  never asked to give anything back;
* **case-insensitive groups** ``(?i:...)``, spelt out letter by letter (``[sS]``), with the
  non-ASCII characters that ``regex`` folds onto those letters (``ſ`` for ``s``: measured by
  :func:`functionalbpe.text.charclasses.contraction_folds`);
* **character classes**: ``\\s``, ``\\p{L}``, ``\\p{N}``... differ between ``regex``'s Unicode
  tables and a browser's (and JavaScript's ``\\s`` holds U+FEFF), so every class is written
  out as the code-point ranges the installed ``regex`` gives it.

The same templates are rendered with Python escapes (:func:`python_regex`), so the tests can
check, without a browser, that each rewritten pattern cuts text as the original does.

Example::

    >>> import re
    >>> re.findall(python_regex("gpt4"), "Hello world!! 123456")
    ['Hello', ' world', '!!', ' ', '123', '456']
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable, Dict, List, Tuple

import regex

from ..text.charclasses import CONTRACTION_LETTERS, contraction_folds

# The classes the templates use: {name} in a template is the *contents* of a bracketed
# class (so "[^{S}{L}{N}]" unions them).
CLASSES = {
    "S": r"\s",
    "L": r"\p{L}",
    "N": r"\p{N}",
    "UP": r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",
    "LO": r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]",
    "SX": r"[^\S\n\t ]",  # whitespace but newline, tab and space (the functionalizer's)
}

# Each contraction as a group that ignores case: {C} in a template (gpt4's variant, which
# has no apostrophe inside the group, is written out in its template).
_CONTRACTIONS = ("s", "t", "re", "ve", "m", "ll", "d")

TEMPLATES = {
    "gpt2": r"""'s|'t|'re|'ve|'m|'ll|'d| ?[{L}]+| ?[{N}]+| ?[^{S}{L}{N}]+|[{S}]+(?![^{S}])|[{S}]+""",
    "gpt4": (r"""'(?:{i:s}|{i:d}|{i:m}|{i:t}|{i:l}{i:l}|{i:v}{i:e}|{i:r}{i:e})|[^\r\n{L}{N}]?[{L}]+|[{N}]{1,3}"""
             r"""| ?[^{S}{L}{N}]+[\r\n]*|[{S}]*[\r\n]|[{S}]+(?![^{S}])|[{S}]+"""),
    "o200k": "|".join([
        r"""[^\r\n{L}{N}]?[{UP}]*[{LO}]+{C}?""",
        r"""[^\r\n{L}{N}]?[{UP}]+[{LO}]*{C}?""",
        r"""[{N}]{1,3}""",
        r""" ?[^{S}{L}{N}]+[\r\n/]*""",
        r"""[{S}]*[\r\n]+""",
        r"""[{S}]+(?![^{S}])""",
        r"""[{S}]+""",
    ]),
    "llama3": (r"""{C}|[^\r\n{L}{N}]?[{L}]+|[{N}]{1,3}| ?[^{S}{L}{N}]+[\r\n]*|[{S}]*[\r\n]+"""
               r"""|[{S}]+(?![^{S}])|[{S}]+"""),
    "functionalizer": r"""\n+|\t+| |[^{L}{N}{S} _]+|(?:[{L}{N}_]|[{SX}])+""",
    "functionalizer-runs": r"""\n+|\t+|\u2581+| +|[^{L}{N}{S} _]+|(?:[{L}{N}_]|[{SX}])+""",
    "functionalizer-llama": (r"""{C}|[^\r\n{L}{N}]?[{L}]+|[{N}]| ?[^{S}{L}{N}]+[\r\n]*|[{S}]*[\r\n]+"""
                             r"""|[{S}]+(?![^{S}])|[{S}]+"""),
}


@lru_cache(maxsize=1)
def _every_code_point() -> str:
    return "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, 0x110000)))


@lru_cache(maxsize=None)
def class_ranges(name: str) -> Tuple[Tuple[int, int], ...]:
    """The code points of class ``name`` (a key of :data:`CLASSES`) as ``regex`` reads it,
    as inclusive ranges. (Surrogates are left out: the page reads them as U+FFFD first.)"""
    every = _every_code_point()
    out: List[Tuple[int, int]] = []
    for m in regex.finditer(CLASSES[name] + "+", every):
        lo, hi = ord(every[m.start()]), ord(every[m.end() - 1])
        if lo < 0xD800 <= hi:  # the gap where the surrogates were
            out += [(lo, 0xD7FF), (0xE000, hi)]
        else:
            out.append((lo, hi))
    return tuple(out)


def _render(template: str, escape: Callable[[int], str]) -> str:
    def cls(name: str) -> str:
        return "".join(escape(lo) if lo == hi else f"{escape(lo)}-{escape(hi)}" for lo, hi in class_ranges(name))

    folds: Dict[str, str] = {}
    for cp, letter in contraction_folds():
        folds[letter] = folds.get(letter, "") + escape(cp)

    def nocase(letter: str) -> str:
        return f"[{letter}{letter.upper()}{folds.get(letter, '')}]"

    contraction = "(?:" + "|".join("'" + "".join(map(nocase, c)) for c in _CONTRACTIONS) + ")"
    out = template
    for letter in CONTRACTION_LETTERS:
        out = out.replace("{i:%s}" % letter, nocase(letter))
    out = out.replace("{C}", contraction)
    for name in sorted(CLASSES, key=len, reverse=True):
        out = out.replace("{%s}" % name, cls(name))
    return out


@lru_cache(maxsize=None)
def js_regex(name: str) -> str:
    """The source of a JavaScript ``RegExp`` (flags ``gu``) that cuts as pattern ``name``."""
    return _render(TEMPLATES[name], lambda cp: "\\u{%x}" % cp)


@lru_cache(maxsize=None)
def python_regex(name: str) -> str:
    """The same rewrite for Python's ``re`` (the tests compare it with the original)."""
    return _render(TEMPLATES[name], lambda cp: "\\U%08x" % cp)
