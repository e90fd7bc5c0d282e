"""The plain scheme: the pieces are the pattern's matches, as they are.

Byte-level BPE as GPT-2 and tiktoken do it. The text form is the text, the transform is the
identity, and a built-in pattern is cut (and counted, and encoded) by the compiled scanner.

Example::

    >>> scheme = PlainScheme("gpt2")
    >>> scheme.split("don't stop"), scheme.decode("don't")
    (['don', "'t", ' stop'], "don't")
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Union

from ..text.patterns import Pattern, pretokenize
from .base import Compiled, Scheme


class PlainScheme(Scheme):
    """Pieces are the pattern's matches (default pattern: ``gpt4``).

    ``normalize`` (None, or ``"NFC"`` as the Functionalizer paper does for every
    configuration) is applied before the pattern, in training and encoding; decoding then
    gives the normalized text back.

    >>> PlainScheme("gpt2", normalize="NFC").split("cafe\u0301")
    ['café']
    """

    name = "plain"

    def __init__(self, pattern: Union[str, Pattern, None] = None, normalize: Optional[str] = None) -> None:
        super().__init__(pattern, normalize)
        # Safe cuts are proven for the built-in patterns (text/cuts.py), not for normalized
        # text nor for most custom patterns (a compiled one proves its own: counting.py).
        self._compiled = Compiled(scanner=self.pattern.scanner,
                                  cuts_safely=normalize is None and self.pattern.cuts_safely, identity=True)

    def compiled(self) -> Compiled:
        return self._compiled

    def options(self) -> Dict[str, Any]:
        # Written only when set, so that a file without normalization is what it always was.
        return {} if self.normalize is None else {"normalize": self.normalize}

    def raw_pieces(self, text: str) -> List[str]:
        return pretokenize(self.prepare(text), self.pattern)

    split = raw_pieces

    def decode(self, text: str, errors: str = "strict") -> str:
        return text

    def decodable_prefix(self, text: str) -> int:
        return len(text)
