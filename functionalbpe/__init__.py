"""functionalbpe: byte-level BPE, trained and applied exactly, with lossless schemes.

    >>> import functionalbpe as fb
    >>> tok = fb.train(["the cat sat on the mat"] * 10, vocab_size=270, progress=False)
    >>> tok.decode(tok.encode("the cat"))
    'the cat'
"""
import importlib
import os as _os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from .core._native import NATIVE as _NATIVE
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
from .text.patterns import PATTERNS, pretokenize
from .schemes.base import Scheme
from .schemes.registry import make_scheme
from .tokenizer import Tokenizer

from ._version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from .schemes import functional, markers
    from .schemes.functional import Functionalizer
    from .schemes.markers import BoundaryMarkers
    from .counts import PieceCounts, count
    from .measure.report import Report, full_coverage_vocab_size, report
    from .formats.tokenfiles import read_token_file
    from .text.corpus import Files, files
    from .training import count_pieces, train

# Loaded on first use (PEP 562), so that `import functionalbpe` costs what loading a
# tokenizer and encoding need: training, counting and reading corpora are loaded when first
# named (their modules bring the trainer, the pattern compiler, the corpus readers), the
# schemes other than the plain one when first named or loaded (their tables), and the
# report and its measures bring numpy and every installed peer (reading token files numpy).
# An attribute of None names the module itself.
_LAZY: Dict[str, Tuple[str, Optional[str]]] = {
    "Functionalizer": ("functionalbpe.schemes.functional", "Functionalizer"),
    "BoundaryMarkers": ("functionalbpe.schemes.markers", "BoundaryMarkers"),
    "functional": ("functionalbpe.schemes.functional", None),
    "markers": ("functionalbpe.schemes.markers", None),
    "train": ("functionalbpe.training", "train"),
    "count_pieces": ("functionalbpe.training", "count_pieces"),
    "count": ("functionalbpe.counts", "count"),
    "PieceCounts": ("functionalbpe.counts", "PieceCounts"),
    "files": ("functionalbpe.text.corpus", "files"),
    "Files": ("functionalbpe.text.corpus", "Files"),
    "report": ("functionalbpe.measure.report", "report"),
    "Report": ("functionalbpe.measure.report", "Report"),
    "full_coverage_vocab_size": ("functionalbpe.measure.report", "full_coverage_vocab_size"),
    "read_token_file": ("functionalbpe.pipeline.tokenfile", "read_token_file"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attribute = _LAZY[name]
        found = importlib.import_module(module)
        value = found if attribute is None else getattr(found, attribute)
        globals()[name] = value  # later lookups do not come here again
        return value
    raise AttributeError(f"module 'functionalbpe' has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_LAZY))


# Loading one compiled module now says, once and at import, if the compiled core is missing
# or broken (a RuntimeWarning naming why); FUNCTIONALBPE_PUREPYTHON=1 asks for Python.
_NATIVE.module("trainer")

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
    "read_token_file",
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
