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
  :func:`functionalbpe.unicode.charclasses.contraction_folds`);
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

from ..unicode.charclasses import CONTRACTION_LETTERS, contraction_folds

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


class NoJsForm(ValueError):
    """A construct :func:`template` does not rewrite for JavaScript."""


# Whole bracketed classes that are one class of CLASSES, and the escapes that are.
_WHOLE = {r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]": "UP", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]": "LO", r"[^\S\n\t ]": "SX"}
_ESCAPED = {r"\p{L}": "L", r"\p{N}": "N", r"\s": "S"}
_KEPT = ("\\r", "\\n", "\\t", "\\u", "\\'")


def template(pattern: str) -> str:
    """The template of a pattern of :data:`functionalbpe.text.patterns.RECORDS`: its regex
    text with every class named ({L}, [^{S}{L}{N}], [{UP}]...), ``(?i:...)`` spelt out
    letter by letter ({i:s}), ``$`` as what it means in ``regex`` (the end, or before a
    final newline), and possessive marks dropped where the compiled programs show they
    change nothing (:func:`functionalbpe.unicode.regex_program.same_behaviour`); elsewhere, and
    for atomic groups, :class:`NoJsForm`.

    >>> template(r"[^\\r\\n\\p{L}\\p{N}]?+\\p{L}+|\\s+$")
    '[^\\\\r\\\\n{L}{N}]?[{L}]+|[{S}]+(?=\\\\n?(?![\\\\s\\\\S]))'
    """
    from ..unicode.regex_program import same_behaviour

    out, greedy = [], []  # the template, and the regex without possessive marks
    at, quantified = 0, False
    while at < len(pattern):
        c = pattern[at]
        if quantified and c == "+":  # a possessive mark
            at += 1
            quantified = False
            continue
        quantified = False
        if c == "[":
            end = _bracket_end(pattern, at)
            body = pattern[at : end + 1]
            out.append(_class(body))
            greedy.append(body)
            at = end + 1
            continue
        if c == "\\":
            m = regex.match(r"\\p\{\w+\}|\\u[0-9A-Fa-f]{4}|\\.", pattern[at:])
            assert m is not None
            esc = m.group()
            if esc in _ESCAPED:
                out.append("[{%s}]" % _ESCAPED[esc])
            elif esc == r"\S":
                out.append("[^{S}]")
            elif esc.startswith(_KEPT):
                out.append(esc)
            else:
                raise NoJsForm(f"the escape {esc}")
            greedy.append(esc)
            at += m.end()
            continue
        if pattern.startswith("(?i:", at):
            end = pattern.index(")", at)
            branches = []
            for branch in pattern[at + 4 : end].split("|"):
                if regex.fullmatch(r"\[[a-z]+\]", branch):
                    branches += ["{i:%s}" % x for x in branch[1:-1]]
                elif regex.fullmatch(r"'?[a-z]+", branch):
                    branches.append("".join("{i:%s}" % x if x != "'" else x for x in branch))
                else:
                    raise NoJsForm(f"the case-insensitive group {pattern[at:end + 1]}")
            out.append("(?:" + "|".join(branches) + ")")
            greedy.append(pattern[at : end + 1])
            at = end + 1
            continue
        if pattern.startswith("(?>", at):
            raise NoJsForm("an atomic group (?>...)")
        if c == "{":
            m = regex.match(r"\{\d*(,\d*)?\}", pattern[at:])
            if m:
                out.append(m.group())
                greedy.append(m.group())
                at += m.end()
                quantified = True
                continue
        if c in "?*+":
            quantified = True
        out.append(r"(?=\n?(?![\s\S]))" if c == "$" else c)
        greedy.append(c)
        at += 1
    plain = "".join(greedy)
    if plain != pattern and not same_behaviour(pattern, plain):
        raise NoJsForm("possessive marks that the programs do not show to change nothing")
    return "".join(out)


def _bracket_end(pattern: str, at: int) -> int:
    j = at + 1 + (pattern[at + 1 : at + 2] == "^")
    j += pattern[j : j + 1] == "]"
    while pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j


def _class(body: str) -> str:
    if body in _WHOLE:
        return "[{%s}]" % _WHOLE[body]
    inner = body[1:-1]
    out, at = [], 0
    if inner.startswith("^"):
        out.append("^")
        at = 1
    while at < len(inner):
        m = regex.match(r"\\p\{\w+\}|\\u[0-9A-Fa-f]{4}|\\.|.", inner[at:], flags=regex.S)
        assert m is not None
        piece = m.group()
        if piece in _ESCAPED:
            out.append("{%s}" % _ESCAPED[piece])
        elif piece.startswith("\\") and not piece.startswith(_KEPT):
            raise NoJsForm(f"the escape {piece} in a class")
        else:
            out.append(piece)
        at += m.end()
    return "[" + "".join(out) + "]"


def _templates() -> Dict[str, str]:
    from ..text.patterns import RECORDS

    found = {}
    for record in RECORDS:
        try:
            found[record.name] = template(record.regex)
        except NoJsForm:
            pass
    return found


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


def _render(text: str, escape: Callable[[int], str]) -> str:
    def cls(name: str) -> str:
        return "".join(escape(lo) if lo == hi else f"{escape(lo)}-{escape(hi)}" for lo, hi in class_ranges(name))

    folds: Dict[str, str] = {}
    for cp, letter in contraction_folds():
        folds[letter] = folds.get(letter, "") + escape(cp)

    def nocase(letter: str) -> str:
        return f"[{letter}{letter.upper()}{folds.get(letter, '')}]"

    out = text
    for letter in CONTRACTION_LETTERS:
        out = out.replace("{i:%s}" % letter, nocase(letter))
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


# The template of every record that has one: derived from the record, never written twice.
TEMPLATES: Dict[str, str] = _templates()
