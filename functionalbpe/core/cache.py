"""One bounded cache for every memo of the pure-Python paths.

Tokenizing repeats itself: most pieces of real text (`` the``, ``\\n    ``) and most
instruction groups come back again and again, so the Python paths remember what they
computed. A memo must not grow without bound — a stream of distinct strings would exhaust
memory — so each is a :class:`BoundedCache`: a ``dict`` that starts again from empty when it
is full. Emptying beats evicting one entry at a time here: the check is one ``len`` per
store, lookups stay plain ``dict.get`` calls (which ``map`` runs at C speed over a list of
pieces), and a working set smaller than the limit refills in one pass.

Example::

    >>> cache = BoundedCache(2)
    >>> cache.put("a", 1), cache.put("b", 2), cache.put("c", 3)
    (1, 2, 3)
    >>> dict(cache)
    {'c': 3}
"""
from __future__ import annotations

from typing import Dict, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedCache(Dict[K, V]):
    """A dict of at most ``limit`` entries: read it as a dict, write it with :meth:`put`."""

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        if limit < 1:
            raise ValueError(f"a cache holds at least one entry, got a limit of {limit}")
        self.limit = limit

    def put(self, key: K, value: V) -> V:
        """Store ``value`` under ``key`` (emptying the cache first if it is full); return it."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value
