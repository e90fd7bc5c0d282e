"""A corpus every Python has: the source files of its standard library.

``functionalbpe demo`` trains on it, ``functionalbpe bench`` measures on it by default, and so
do the scripts in ``benchmarks/``: no download, and the same text on every machine with the
same Python.

Example::

    >>> all(p.endswith(".py") for p in stdlib_sources(max_bytes=100_000))
    True
"""
from __future__ import annotations

import glob
import os
import sysconfig
from typing import List, Optional

from ..errors import FunctionalBPEError


def stdlib_sources(max_bytes: Optional[int] = None) -> List[str]:
    """The .py files of this Python's standard library (not site-packages), sorted; with
    ``max_bytes``, the first of them up to that many bytes."""
    root = sysconfig.get_paths()["stdlib"]
    paths = sorted(
        p
        for p in glob.glob(os.path.join(root, "**", "*.py"), recursive=True)
        if "site-packages" not in p and "dist-packages" not in p
    )
    if not paths:
        raise FunctionalBPEError(f"found no .py files under {root}; is the standard library installed?")
    if max_bytes is not None:
        kept, total = [], 0
        for p in paths:
            size = os.path.getsize(p)
            if total + size > max_bytes:
                break
            kept.append(p)
            total += size
        paths = kept
    return paths

