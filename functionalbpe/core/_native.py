"""The compiled modules, when they are built and wanted.

``native("_trainer")`` returns the module ``functionalbpe._trainer`` or ``None`` when it is
not built or ``FUNCTIONALBPE_PUREPYTHON=1`` is set; callers then take the pure-Python path.

Every function that takes ``threads`` (or ``num_threads``) accepts ``None`` (all cores) or
1 to :data:`MAX_THREADS`, on both paths, so that a call valid here is valid everywhere.
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Dict, Optional

from ..checks import integer

# The most threads one call may use (the compiled core's FBPE_MAX_THREADS, csrc/lib/bounds.h:
# the piece counter holds threads squared tables, which an int stops counting past 46,340).
MAX_THREADS = 1024

_cache: Dict[str, Optional[ModuleType]] = {}


def thread_count(threads: object, cores: int, maximum: int = MAX_THREADS) -> int:
    """``threads`` checked: an integer in 1..``maximum``; None means ``cores`` (all the
    cores, at most ``maximum``). Anything else is a FunctionalBPEError (a ValueError). The compiled modules pass
    their own limit as ``maximum`` (FBPE_MAX_THREADS, which a test compares with MAX_THREADS).

    >>> thread_count(None, 8), thread_count(3, 8)
    (8, 3)
    """
    if threads is None:
        return max(1, min(cores, maximum))
    return integer(threads, "threads", 1, maximum)


def pure_python() -> bool:
    return os.environ.get("FUNCTIONALBPE_PUREPYTHON", "") not in ("", "0")


def native(name: str) -> Optional[ModuleType]:
    if pure_python():
        return None
    if name not in _cache:
        try:
            _cache[name] = importlib.import_module(f"functionalbpe.{name}")
        except ImportError:
            _cache[name] = None
    return _cache[name]


def check_threads(threads: object, name: str = "threads") -> Optional[int]:
    """``threads`` as an int from 1 to MAX_THREADS, or None (all cores).

    >>> check_threads(4), check_threads(None)
    (4, None)
    """
    if threads is None:
        return None
    return integer(threads, name, 1, MAX_THREADS, " (or None: all cores)")
