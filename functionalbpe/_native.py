"""The compiled modules, when they are built and wanted.

``native("_trainer")`` returns the module ``functionalbpe._trainer`` or ``None`` when it is
not built or ``FUNCTIONALBPE_PUREPYTHON=1`` is set; callers then take the pure-Python path.
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Dict, Optional

_cache: Dict[str, Optional[ModuleType]] = {}


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
