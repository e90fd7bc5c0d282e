"""functionalbpe: byte-level BPE, trained and applied exactly, with lossless schemes.

    >>> import functionalbpe as fb
    >>> tok = fb.train(["the cat sat on the mat"] * 10, vocab_size=270, progress=False)
    >>> tok.decode(tok.encode("the cat"))
    'the cat'
"""
import os as _os

from .text.corpus import Files, files
from .errors import (
    CorpusError,
    CountsFileError,
    DecodeError,
    FunctionalBPEError,
    OutOfMemoryError,
    OutputError,
    PatternError,
    SpecialTokenError,
    TokenizerFileError,
    UnknownTokenError,
    VocabSizeError,
)
from .schemes.functional import Functionalizer
from .schemes.markers import BoundaryMarkers
from .schemes import functional, markers
from .text.patterns import PATTERNS, pretokenize
from .measure.report import Report, full_coverage_vocab_size, report
from .schemes.base import Scheme
from .schemes.registry import make_scheme
from .tokenizer import Tokenizer
from .training import count_pieces, train
from .counts import PieceCounts, count

from ._version import __version__

# Old module paths (functionalbpe.dask) resolve to the modules' homes in their layers.
__path__.append(_os.path.join(_os.path.dirname(__file__), "_compat"))

__all__ = [
    "train",
    "Tokenizer",
    "Functionalizer",
    "files",
    "Files",
    "PATTERNS",
    "pretokenize",
    "count_pieces",
    "count",
    "PieceCounts",
    "report",
    "Report",
    "full_coverage_vocab_size",
    "Scheme",
    "make_scheme",
    "BoundaryMarkers",
    "FunctionalBPEError",
    "CorpusError",
    "CountsFileError",
    "DecodeError",
    "OutOfMemoryError",
    "OutputError",
    "PatternError",
    "SpecialTokenError",
    "TokenizerFileError",
    "UnknownTokenError",
    "VocabSizeError",
    "__version__",
]
