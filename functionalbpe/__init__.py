"""functionalbpe: byte-level BPE, trained and applied exactly, with lossless schemes.

    >>> import functionalbpe as fb
    >>> fb.pretokenize("Hello world", "gpt4")
    ['Hello', ' world']
"""
from .counting import count_pieces
from .errors import FunctionalBPEError
from .patterns import PATTERNS, pretokenize

__version__ = "0.1.0"

__all__ = ["PATTERNS", "pretokenize", "count_pieces", "FunctionalBPEError", "__version__"]
