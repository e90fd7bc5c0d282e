"""Progress for long work: a bar on a terminal, a callback, or nothing.

``progress`` options everywhere in the API mean the same thing:

* ``None``  — a bar on stderr when stderr is a terminal or a notebook (Jupyter), silence
  otherwise;
* ``True``  — always report on stderr (a line every couple of seconds when not a terminal);
* ``False`` — silent;
* a callable ``f(stage, done, total, info)`` — called instead of drawing anything.

With a total the bar shows the share done and the time left; ``scale`` shows amounts in
larger units (bytes as MB: ``scale=1e6``). The last state is always drawn when the work ends.

Example::

    >>> with Progress(False, "merging", total=10) as bar:
    ...     bar.update(5)
    >>> Progress(False, "counting", total=4_000_000, unit=" MB", scale=1e6).line(1_000_000, 2.0)
    'counting: [######------------------] 1.0/4.0 MB 25% (2.0s, 0.5 MB/s, 6s left)'
"""
from __future__ import annotations

import sys
import time
from typing import Callable, Optional, Union

ProgressSpec = Union[None, bool, Callable[[str, int, Optional[int], str], None]]


class Progress:
    """One stage of work with an optional total."""

    def __init__(self, spec: ProgressSpec, stage: str, total: Optional[int] = None, unit: str = "",
                 scale: float = 1) -> None:
        self.stage = stage
        self.total = total
        self.unit = unit
        self.scale = scale
        self.done = 0
        self.info = ""
        self._callback = spec if callable(spec) else None
        stream = sys.stderr
        # A notebook's stderr is no terminal, but it redraws a line on "\r" as one does.
        tty = bool(getattr(stream, "isatty", lambda: False)()) or "ipykernel" in sys.modules
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
        text = self.line(self.done, now - self._start)
        if self._tty:
            sys.stderr.write("\r\x1b[K" + text + end)
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def line(self, done: int, elapsed: float) -> str:
        """What the bar shows after ``elapsed`` seconds with ``done`` of the work done."""
        def amount(n: float) -> str:
            return f"{n / self.scale:,.1f}" if self.scale != 1 else f"{n:,}"

        if self.total:
            frac = min(1.0, done / self.total)
            width = 24
            bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
            body = f"{self.stage}: [{bar}] {amount(done)}/{amount(self.total)}{self.unit} {frac:.0%}"
        else:
            body = f"{self.stage}: {amount(done)}{self.unit}"
        rate = done / elapsed if elapsed > 0 else 0.0
        tail = f"{elapsed:.1f}s, {amount(rate) if self.scale != 1 else f'{rate:,.0f}'}{self.unit}/s"
        if self.total and 0 < done < self.total and rate > 0:
            tail += f", {(self.total - done) / rate:,.0f}s left"
        info = f" {self.info}" if self.info else ""
        return f"{body}{info} ({tail})"

    def close(self) -> None:
        if self._callback is not None:
            self._callback(self.stage, self.done, self.total, "done")
        elif self._draw:  # the last state, always: short work is reported too
            self._write(time.perf_counter(), end="\n")

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        if kind is None:
            self.close()  # work that failed leaves its error alone on the last line
        elif self._draw and self._tty:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
