"""The compiled modules, when they are built and wanted.

``native("_trainer")`` returns the module ``functionalbpe._trainer`` or ``None`` when it is
not built or ``FUNCTIONALBPE_PUREPYTHON=1`` is set; callers then take the pure-Python path.
"""
from __future__ import annotations

import importlib
import operator
import os
from types import ModuleType
from typing import Dict, Optional

# The most threads one call may use (the compiled core's FBPE_MAX_THREADS, csrc/lib/bounds.h:
# the piece counter holds threads squared tables, which an int stops counting past 46,340).
MAX_THREADS = 1024

_cache: Dict[str, Optional[ModuleType]] = {}


def thread_count(threads: object, cores: int, maximum: int = MAX_THREADS) -> int:
    """``threads`` checked: an integer in 1..``maximum``; None means ``cores`` (all the
    cores, at most ``maximum``). Anything else is a ValueError. The compiled modules pass
    their own limit as ``maximum`` (FBPE_MAX_THREADS, which a test compares with MAX_THREADS).

    >>> thread_count(None, 8), thread_count(3, 8)
    (8, 3)
    """
    if threads is None:
        return max(1, min(cores, maximum))
    try:
        count = None if isinstance(threads, bool) else operator.index(threads)  # type: ignore[arg-type]
    except TypeError:
        count = None
    if count is None or not 1 <= count <= maximum:
        raise ValueError(f"threads must be an integer in 1..{maximum}, got {threads!r:.40}")
    return count


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
