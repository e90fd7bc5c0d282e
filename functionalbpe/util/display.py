"""How a token is shown to a person: whitespace made visible, broken UTF-8 as hex.

A token's bytes are often a space, a newline or the first half of a character. Printed as
they are, ``" "`` and ``"\\n"`` vanish and a partial character prints as U+FFFD. The command
line (``functionalbpe pieces``, ``demo``) and the report's examples show them with the
glyphs of :data:`VISIBLE` instead, and bytes that are not whole UTF-8 as ``<c3>``. (Atoms of
a scheme carry their own glyphs: ``Scheme.show``.)

Example::

    >>> visible("a b\\n"), show_token(b"the "), show_token(b"\\xc3")
    ('a␣b↵', 'the␣', '<c3>')
"""
from __future__ import annotations

import re
import unicodedata
from typing import Callable

# Space, newline, tab and carriage return as the glyphs of the Unicode "Control Pictures"
# and arrows that editors use for them; every other character shows as itself.
VISIBLE = str.maketrans({" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"})


def visible(text: str) -> str:
    """``text`` with its whitespace shown (:data:`VISIBLE`)."""
    return text.translate(VISIBLE)


# Characters a terminal acts on (C0 but the whitespace VISIBLE shows, DEL, C1) and those
# that reorder what follows (bidirectional overrides and isolates): never printed as they are.
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    r"""``text`` with the characters a terminal would act on written as escapes.

    >>> terminal_safe("a\x1b[2Jb\x07\x9b")
    'a\\x1b[2Jb\\x07\\x9b'
    """
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text)


def show_bytes(data: bytes) -> str:
    """Bytes as hex, one ``<xx>`` per byte.

    >>> show_bytes(b"\\xe2\\x82")
    '<e2><82>'
    """
    return "".join(f"<{b:02x}>" for b in data)


def show_token(data: bytes) -> str:
    """A token's bytes for a person: UTF-8 text with whitespace shown, else hex."""
    try:
        return visible(data.decode("utf-8"))
    except UnicodeDecodeError:
        return show_bytes(data)


# What a shown token must not hold raw: control characters (a tab in a TSV, an escape code on
# a terminal) and the lone surrogates that stand for bytes that are not UTF-8.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\udc80-\udcff]+")


def show_text_form(data: bytes, show_atoms: Callable[[str], str] = lambda s: s) -> str:
    """Any token of a scheme's text form for a person, on one line: whitespace as glyphs,
    atoms as ``show_atoms`` writes them (``Scheme.show``), every other control character and
    every byte that is not part of a whole UTF-8 character as ``<xx>``.

    >>> show_text_form(b"\\xe2\\x82 a\\x00")
    '<e2><82>␣a<00>'
    """
    text = visible(data.decode("utf-8", "surrogateescape"))
    out = []
    last = 0
    for m in _UNPRINTABLE.finditer(text):
        out.append(show_atoms(text[last:m.start()]))
        out.append(show_bytes(m.group().encode("utf-8", "surrogateescape")))
        last = m.end()
    out.append(show_atoms(text[last:]))
    return "".join(out)


# Background colours that alternate from token to token, as tiktokenizer's page does (ANSI
# 256-colour codes, pale enough for black text); RESET ends one.
ANSI_BACKGROUNDS = (153, 222, 158, 217, 189)
ANSI_RESET = "\x1b[0m"


def paint(k: int, shown: str) -> str:
    """The ``k``-th token, already shown, on its background colour for a terminal.

    >>> paint(0, "ab")
    '\\x1b[30;48;5;153mab\\x1b[0m'
    """
    return f"\x1b[30;48;5;{ANSI_BACKGROUNDS[k % len(ANSI_BACKGROUNDS)]}m{shown}{ANSI_RESET}"


def plural(count: int, noun: str, many: str = "") -> str:
    """``count`` and ``noun``, the noun in the plural unless the count is 1.

    >>> plural(1, "document"), plural(1234, "document"), plural(2, "counts file", "counts files")
    ('1 document', '1,234 documents', '2 counts files')
    """
    return f"{count:,} {noun if count == 1 else (many or noun + 's')}"


def width(text: str) -> int:
    """The columns ``text`` takes on a terminal: two for a wide character (CJK, most emoji:
    East Asian width W or F), none for a combining mark or a zero-width one, one otherwise.

    >>> width("abc"), width("日本"), width("é"), width("e\u0301")
    (3, 4, 1, 1)
    """
    total = 0
    for char in text:
        if unicodedata.combining(char) or char in "\u200b\u200c\u200d\ufe0f":
            continue
        total += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return total


def pad(text: str, columns: int) -> str:
    """``text`` padded with spaces to ``columns`` terminal columns (:func:`width`).

    >>> pad("日本", 6) + "|", pad("ab", 6) + "|"
    ('日本  |', 'ab    |')
    """
    return text + " " * max(columns - width(text), 0)
