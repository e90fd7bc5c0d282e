"""The garbage collector held off while a large table is built.

Reading a vocabulary makes millions of small lists, tuples and ints (a JSON table of merges,
the merges as pairs). Each allocation counts towards the cyclic collector's next run, and
every full run walks all of them again, though none can be part of a cycle: on a file of
4.1 million merges the collector took about a fifth of the load time. Reference counting
still frees everything as usual.

>>> with collector_paused():
...     table = [[k, k + 1] for k in range(1000)]
>>> len(table)
1000
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block (as it was after, even on an error)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
