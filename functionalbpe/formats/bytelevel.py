"""GPT-2's byte-to-character table: how byte-level BPE files write bytes as text.

HF ``ByteLevel`` models (GPT-2, RoBERTa, Llama 3's tokenizer.json...) store each token as a
string of printable characters, one per byte: printable Latin-1 bytes other than the space
stand for themselves, and the other 68 bytes take the code points from U+0100 on, in byte
order (the space becomes ``Ġ``, the newline ``Ċ``). ``to_hf`` writes with it, and the report
reads HF vocabularies back with it.

Example::

    >>> bytes_to_unicode()[ord(" ")], bytes_to_unicode()[ord("a")], unicode_to_bytes()["Ċ"]
    ('Ġ', 'a', 10)
"""
from __future__ import annotations

from functools import lru_cache
from typing import Dict, List, Tuple

from ..core.alphabet import NUM_BYTES


@lru_cache(maxsize=1)
def bytes_to_unicode() -> Tuple[str, ...]:
    """The character that stands for each byte, indexed by the byte."""
    printable = set(range(ord("!"), ord("~") + 1)) | set(range(0xA1, 0xAC + 1)) | set(range(0xAE, 0xFF + 1))
    out: List[str] = []
    extra = 0
    for b in range(NUM_BYTES):
        if b in printable:
            out.append(chr(b))
        else:
            out.append(chr(NUM_BYTES + extra))
            extra += 1
    return tuple(out)


@lru_cache(maxsize=1)
def _unicode_to_bytes() -> Dict[str, int]:
    return {char: b for b, char in enumerate(bytes_to_unicode())}


def unicode_to_bytes() -> Dict[str, int]:
    """The table read backwards: character → byte (a copy, free to change)."""
    return dict(_unicode_to_bytes())


def written(data: bytes) -> str:
    """Bytes as a byte-level BPE file writes them.

    >>> written(" é".encode())
    'ĠÃ©'
    """
    chars = bytes_to_unicode()
    return "".join(chars[b] for b in data)


def read(text: str) -> "bytes | None":
    """The bytes a byte-level string stands for; None if a character is not in the table.

    >>> read("ĠÃ©").decode(), read("日")
    (' é', None)
    """
    try:
        return text.translate(_to_latin1()).encode("latin-1")
    except UnicodeEncodeError:
        return None


@lru_cache(maxsize=1)
def _to_latin1() -> Dict[int, str]:
    """str.translate's table from the byte-level characters to the Latin-1 character of each
    byte, every other character below U+0100 to one above it (so that encoding to Latin-1
    fails on it, as on any character the table leaves): one C pass over a token, 1.8× faster
    than a generator of dictionary lookups (300,000 tokens of a byte-level vocabulary)."""
    table = {ord(char): chr(b) for b, char in enumerate(bytes_to_unicode())}
    for c in range(NUM_BYTES):
        table.setdefault(c, "\uffff")
    return table
