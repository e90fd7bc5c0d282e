"""The native seam: which compiled parts are present, and the one place that names them.

The compiled core is optional. Each part has a *role* — the trainer's merge loop, the encoder,
the scanner (pattern scanners, the boundary-marker pieces, counting, special-token cutting,
safe cuts), the Functionalizer's describer — and :data:`NATIVE` answers, for each role, with
the module that plays it or ``None``; callers then take the pure-Python path, which gives the
same results::

    >>> from functionalbpe.core._native import NATIVE
    >>> NATIVE.trainer is None or hasattr(NATIVE.trainer, "train_merges_utf8")
    True

``FUNCTIONALBPE_PUREPYTHON=1`` switches every role off. It is read on each question, not at
import, so that a test (or a user) can switch the compiled core off in a running process.
The modules are imported once, on first use.

Only this file knows which module plays which role (:data:`ROLES`) and how each module
names a scanner (:meth:`Native.scanner_for`, :meth:`Native.encoder_scanner`), so that
renaming or merging the extension modules changes this file alone.

Every function that takes ``threads`` accepts ``None`` (all cores) or 1 to
:data:`MAX_THREADS`, on both paths, so that a call valid here is valid everywhere
(:func:`thread_count`).
"""
from __future__ import annotations

import importlib
import os
import warnings
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Dict, Optional, Sequence

from ..util.checks import integer

# The most threads one call may use (the compiled core's FBPE_MAX_THREADS, csrc/lib/common/bounds.h:
# the piece counter holds threads squared tables, which an int stops counting past 46,340).
MAX_THREADS = 1024

# role -> the extension module (functionalbpe.<name>, built from csrc/<name>.pyx) that plays it.
ROLES: Dict[str, str] = {
    "trainer": "_trainer",
    "encoder": "_encoder",
    "scanner": "_scanner",
    "describer": "_functional",
    "summer": "_counts",
    "tables": "_tables",
}

# The option bits of the compiled boundary-marker scheme (csrc/lib/scan/markers.h) and the letter
# each adds to the scheme's name in the paper ("[w,p,d,↑]").
MARKERS_PUNCT, MARKERS_DIGITS, MARKERS_CASE = 1, 2, 4
_MARKER_KINDS = ((MARKERS_PUNCT, "p"), (MARKERS_DIGITS, "d"), (MARKERS_CASE, "↑"))


def markers_variant(options: int) -> str:
    """The paper's name of the boundary-marker variant with these option bits.

    >>> markers_variant(0), markers_variant(MARKERS_PUNCT | MARKERS_CASE)
    ('[w]', '[w,p,↑]')
    """
    return "[" + ",".join(["w"] + [kind for bit, kind in _MARKER_KINDS if options & bit]) + "]"


# The option bit of a pattern's scanner that joins runs of >= 3 identical pieces as the
# Functionalizer does with repeat on (csrc/lib/scan/scanners.h); the modules name that scanner
# with JOINED after the pattern's name.
JOIN_RUNS = 1
JOINED = "+joined"

# What starts the name of a compiled pattern's scanner: PROGRAM + the regex text
# (functionalbpe/unicode/regex_program.py compiles it, csrc/lib/scan/regex_vm.h runs it).
PROGRAM = "regex:"


@dataclass(frozen=True)
class Scanner:
    """A compiled scanner a scheme may declare (see ``Scheme.compiled``): ``name`` is a
    built-in pattern's name (``"gpt4"``) with ``options`` 0 or :data:`JOIN_RUNS`, or
    ``"markers"`` with the boundary-marker option bits in ``options``, or :data:`PROGRAM` +
    a regex (a compiled pattern, :meth:`program`). It cuts text exactly as the scheme's
    ``raw_pieces`` does."""

    name: str
    options: int = 0

    @classmethod
    def program(cls, regex_text: str) -> "Scanner":
        r"""The compiled pattern's scanner of ``regex_text`` (whether it compiles is asked of
        the scanner module, :meth:`Native.scanner_for`).

        >>> Scanner.program(r"\S+|\s+").is_program
        True
        """
        return cls(PROGRAM + regex_text)

    @property
    def is_program(self) -> bool:
        """Is it a compiled pattern's scanner (not a hand-written one)?"""
        return self.name.startswith(PROGRAM)

    @property
    def module_name(self) -> str:
        """The scanner's name in the compiled modules' ``SCANNERS`` (markers: see
        :meth:`Native.encoder_scanner`).

        >>> Scanner("functionalizer", JOIN_RUNS).module_name
        'functionalizer+joined'
        """
        if self.name == "markers":
            return "markers" + markers_variant(self.options)
        return self.name + JOINED if self.options & JOIN_RUNS else self.name


_warned = False


def _warn_once(reason: str) -> None:
    """Say once per process that the compiled core did not load, and why: the pure-Python
    path gives the same results 10 to 100 times slower, which should never go unnoticed."""
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(
            f"functionalbpe's compiled core did not load ({reason}); everything runs in pure Python, "
            "much slower. Reinstall with a C compiler (pip install -v . shows the build), or set "
            "FUNCTIONALBPE_PUREPYTHON=1 to ask for Python and silence this",
            RuntimeWarning, stacklevel=4,
        )


class Native:
    """Which compiled parts are present and wanted; one instance, :data:`NATIVE`."""

    def __init__(self) -> None:
        self._modules: Dict[str, Optional[ModuleType]] = {}
        self._missing: Dict[str, str] = {}  # role -> why its module did not load

    @staticmethod
    def switched_off() -> bool:
        """Is ``FUNCTIONALBPE_PUREPYTHON`` set (to anything but ``0``)?"""
        return os.environ.get("FUNCTIONALBPE_PUREPYTHON", "") not in ("", "0")

    def module(self, role: str) -> Optional[ModuleType]:
        """The module that plays ``role`` (a key of :data:`ROLES`), or None."""
        # switched_off(), inlined: pretokenize asks once per text.
        if os.environ.get("FUNCTIONALBPE_PUREPYTHON", "") not in ("", "0"):
            return None
        if role not in self._modules:
            try:
                self._modules[role] = importlib.import_module(f"functionalbpe.{ROLES[role]}")
            except ImportError as exc:
                self._modules[role] = None
                self._missing[role] = f"{type(exc).__name__}: {exc}"
                _warn_once(self._missing[role])
        return self._modules[role]

    def describe(self) -> str:
        """Which core runs, for a script to print before it measures anything.

        >>> NATIVE.describe().startswith(("compiled core", "pure Python"))
        True
        """
        if self.switched_off():
            return "pure Python (FUNCTIONALBPE_PUREPYTHON is set)"
        present = self.present()
        if all(present.values()):
            where = os.path.dirname(self.module("encoder").__file__)  # type: ignore[union-attr]
            return f"compiled core ({', '.join(sorted(ROLES.values()))} from {where})"
        missing = ", ".join(f"{role}: {self._missing.get(role, 'not built')}" for role, ok in present.items() if not ok)
        return f"pure Python for {missing}"

    @property
    def trainer(self) -> Optional[ModuleType]:
        """The C merge loop (``csrc/_trainer.pyx``)."""
        return self.module("trainer")

    @property
    def encoder(self) -> Optional[ModuleType]:
        """The C merge table, its caches and the text encoder (``csrc/_encoder.pyx``)."""
        return self.module("encoder")

    @property
    def scanner(self) -> Optional[ModuleType]:
        """The C scanners, the piece counter and the special-token cutter (``csrc/_scanner.pyx``)."""
        return self.module("scanner")

    @property
    def describer(self) -> Optional[ModuleType]:
        """The Functionalizer's compiled description of pieces (``csrc/_functional.pyx``)."""
        return self.module("describer")

    @property
    def summer(self) -> Optional[ModuleType]:
        """Piece counts added together (``csrc/_counts.pyx``)."""
        return self.module("summer")

    @property
    def tables(self) -> Optional[ModuleType]:
        """JSON tables of ids read and written in C (``csrc/_tables.pyx``)."""
        return self.module("tables")

    def present(self) -> Dict[str, bool]:
        """``{role: whether its module is present and wanted}``."""
        return {role: self.module(role) is not None for role in ROLES}

    # -- how each module names a scanner ------------------------------------------------

    def scanner_for(self, scanner: Optional[Scanner]) -> Optional[ModuleType]:
        """The scanner module if it cuts with ``scanner`` (counting, ``scan``), else None."""
        if scanner is None:
            return None
        module = self.module("scanner")
        if module is None:
            return None
        if scanner.name == "markers" or scanner.module_name in module.SCANNERS:
            return module
        if scanner.is_program and not scanner.options and module.has_program(scanner.name):
            return module
        return None

    def piece_counter(self, scanner: Scanner, threads: Optional[int], special_tokens: Sequence[str] = ()) -> Any:
        """A C piece counter that cuts with ``scanner`` (when :meth:`scanner_for` has it) on
        ``threads`` threads (None: all cores), special tokens cut out in C."""
        module = self.scanner
        assert module is not None
        if scanner.name == "markers":
            return module.PieceCounter("markers", threads=threads, special_tokens=special_tokens,
                                       markers=scanner.options)
        return module.PieceCounter(scanner.module_name, threads=threads, special_tokens=special_tokens)

    def encoder_scanner(self, scanner: Optional[Scanner]) -> Optional[str]:
        """The encoder module's name for ``scanner`` (``"gpt4"``, ``"markers[w,p]"``), if
        the encoder has it: then it cuts and encodes text without a Python object per piece."""
        module = self.encoder
        if module is None or scanner is None:
            return None
        name = scanner.module_name
        if scanner.is_program:  # runs runs are not joined by a compiled pattern
            return name if not scanner.options and self.scanner_for(scanner) is not None else None
        return name if name in module.SCANNERS else None


NATIVE = Native()


def thread_count(
    threads: object, cores: Optional[int] = None, maximum: int = MAX_THREADS, name: str = "threads"
) -> Optional[int]:
    """``threads`` checked: an integer in 1..``maximum``, or None for all cores — then
    ``cores`` (at most ``maximum``) when the caller knows how many there are, else None.
    Anything else is a FunctionalBPEError (a ValueError) naming ``name``. The compiled
    modules pass their own limit as ``maximum`` (FBPE_MAX_THREADS, which a test compares
    with MAX_THREADS).

    >>> thread_count(None, 8), thread_count(3, 8), thread_count(None), thread_count(4)
    (8, 3, None, 4)
    """
    if threads is None:
        return None if cores is None else max(1, min(cores, maximum))
    return integer(threads, name, 1, maximum, " (or None: all cores)")
