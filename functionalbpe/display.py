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

# Space, newline, tab and carriage return as the glyphs of the Unicode "Control Pictures"
# and arrows that editors use for them; every other character shows as itself.
VISIBLE = str.maketrans({" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"})


def visible(text: str) -> str:
    """``text`` with its whitespace shown (:data:`VISIBLE`)."""
    return text.translate(VISIBLE)


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
