"""Character offsets: which span of the input each token came from.

For the plain scheme the tokens' bytes, in order, are exactly the UTF-8 bytes of the text
(special tokens included), so a token's span follows from the byte lengths alone: token k
covers bytes ``[b0, b1)``, and its span runs from the character that holds byte ``b0`` to the
character that holds byte ``b1 - 1``, inclusive. The rule for a character that BPE cut in
two (a 3-byte character split over tokens): **every token that holds a byte of it is given
that character** — a token that ends inside a character reaches to its end, a token that
starts inside one starts at its start — so no span is empty, spans never go backwards, and
two neighbours share a character only where a character was cut. (HF's byte-level offsets
follow the same rule; the tests compare the two.) The bytes are mapped to characters with
numpy, without a Python loop.

For a scheme that rewrites pieces (the Functionalizer, the boundary markers), a token of a
piece whose text form is the piece itself gets its exact span by the same rule; the tokens
of a rewritten piece — its instruction or marker tokens and the rest — all get the span of
the piece they belong to, as the rewrite does not map bytes back to characters. The
boundary markers drop a space between two words (the touching markers stand for it): that
space belongs to the span of the word after it.

Example::

    >>> token_spans("a€b", [1, 2, 1, 1])
    [(0, 1), (1, 2), (1, 2), (2, 3)]
"""
from __future__ import annotations

from typing import Callable, Iterable, List, Sequence, Tuple

import numpy as np

from ..errors import FunctionalBPEError
from .contract import SchemeLike

Span = Tuple[int, int]


def token_spans(text: str, lengths: "Sequence[int] | np.ndarray") -> List[Span]:
    """The character span of each of consecutive tokens of ``lengths`` bytes that together
    are ``text`` in UTF-8 (the rule of the module docstring)."""
    sizes = np.asarray(lengths, dtype=np.int64)
    if not len(sizes):
        return []
    if text.isascii():  # a byte is a character
        ends = np.cumsum(sizes)
        return list(zip((ends - sizes).tolist(), ends.tolist()))
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    # Character index of each byte: count the bytes that start a character.
    char_of_byte = np.cumsum((data & 0xC0) != 0x80) - 1
    ends = np.cumsum(sizes)
    if ends[-1] != len(data):
        raise AssertionError(f"the tokens hold {ends[-1]} bytes, the text {len(data)}")
    starts = char_of_byte[ends - sizes]
    stops = char_of_byte[ends - 1] + 1
    return list(zip(starts.tolist(), stops.tolist()))


def scheme_spans(
    segments: Iterable[Tuple[str, bool]],
    scheme: SchemeLike,
    encode_forms: Callable[[Sequence[str]], List[int]],
    special_id: Callable[[str], int],
    lengths: Callable[[List[int]], "Sequence[int] | np.ndarray"],
) -> Tuple[List[int], List[Span]]:
    """Ids and spans for a scheme, piece by piece: ``segments`` are the text cut at special
    tokens, ``encode_forms`` encodes a raw piece's text forms, ``lengths`` gives the byte
    lengths of ids."""
    ids: List[int] = []
    spans: List[Span] = []
    at = 0
    for segment, is_special in segments:
        if is_special:
            ids.append(special_id(segment))
            spans.append((at, at + len(segment)))
            at += len(segment)
            continue
        if scheme.prepare(segment) != segment:
            raise FunctionalBPEError(
                f"encode_with_offsets: the {scheme.name!r} scheme normalizes the text before BPE, so its "
                "tokens do not map back to the characters of the input"
            )
        start = at
        raw = scheme.raw_pieces(segment)
        forms = [scheme.piece_forms(piece) for piece in raw]
        for (original, gap), piece_forms in zip(_piece_texts(scheme, segment, raw, forms), forms):
            at += gap
            form = "".join(piece_forms)
            piece_ids = encode_forms(piece_forms)
            if form == original:
                spans.extend((at + s, at + e) for s, e in token_spans(form, lengths(piece_ids)))
            else:
                spans.extend([(at - gap, at + len(original))] * len(piece_ids))
            ids.extend(piece_ids)
            at += len(original)
        if at - start != len(segment):
            raise FunctionalBPEError(
                f"encode_with_offsets: the pieces of the {scheme.name!r} scheme do not map back to the text"
            )
    return ids, spans


def _piece_texts(scheme: SchemeLike, segment: str, raw: List[str], forms: List[Tuple[str, ...]]) -> List[Tuple[str, int]]:
    """Each raw piece's text, and how many characters of the text come before it that no
    piece holds. Raw pieces cut from the text are their own text. Otherwise (the boundary
    markers: a raw piece carries its markers, and a space between two words is dropped, the
    touching markers standing for it) a piece's text is what its text form decodes to, and
    what two neighbours decode to beyond their own texts lies between them; it is given to
    the piece after it."""
    if "".join(raw) == segment:
        return [(piece, 0) for piece in raw]
    joined = ["".join(f) for f in forms]
    texts = [scheme.decode(form) for form in joined]
    gaps = [0] + [
        len(scheme.decode(a + b)) - len(ta) - len(tb) for a, b, ta, tb in zip(joined, joined[1:], texts, texts[1:])
    ]
    return list(zip(texts, gaps))
