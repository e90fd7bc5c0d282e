"""Progress for long work: a bar on a terminal, a callback, or nothing.

``progress`` options everywhere in the API mean the same thing:

* ``None``  — a bar on stderr when stderr is a terminal, silence otherwise;
* ``True``  — always report on stderr (a line every couple of seconds when not a terminal);
* ``False`` — silent;
* a callable ``f(stage, done, total, info)`` — called instead of drawing anything.

Example::

    >>> with Progress(False, "merging", total=10) as bar:
    ...     bar.update(5)
"""
from __future__ import annotations

import sys
import time
from typing import Callable, Optional, Union

ProgressSpec = Union[None, bool, Callable[[str, int, Optional[int], str], None]]


class Progress:
    """One stage of work with an optional total."""

    def __init__(self, spec: ProgressSpec, stage: str, total: Optional[int] = None, unit: str = "") -> None:
        self.stage = stage
        self.total = total
        self.unit = unit
        self.done = 0
        self.info = ""
        self._callback = spec if callable(spec) else None
        stream = sys.stderr
        tty = bool(getattr(stream, "isatty", lambda: False)())
        self._draw = self._callback is None and (spec is True or (spec is None and tty))
        self._tty = tty
        self._start = time.perf_counter()
        self._last = self._start  # nothing is drawn for work shorter than one interval
        self._interval = 0.1 if tty else 2.0

    def update(self, done: int, info: str = "", force: bool = False) -> None:
        self.done = done
        self.info = info
        if self._callback is not None:
            self._callback(self.stage, done, self.total, info)
            return
        if not self._draw:
            return
        now = time.perf_counter()
        if force or now - self._last >= self._interval:
            self._last = now
            self._write(now)

    def _write(self, now: float, end: str = "") -> None:
        elapsed = now - self._start
        if self.total:
            frac = min(1.0, self.done / self.total)
            width = 24
            bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
            body = f"{self.stage}: [{bar}] {self.done}/{self.total}{self.unit}"
        else:
            body = f"{self.stage}: {self.done}{self.unit}"
        rate = self.done / elapsed if elapsed > 0 else 0.0
        text = f"{body} {self.info} ({elapsed:.1f}s, {rate:,.0f}{self.unit}/s)"
        if self._tty:
            sys.stderr.write("\r\x1b[K" + text + end)
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self._callback is not None:
            self._callback(self.stage, self.done, self.total, "done")
        elif self._draw and (self._tty or time.perf_counter() - self._start > self._interval):
            self._write(time.perf_counter(), end="\n")

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
