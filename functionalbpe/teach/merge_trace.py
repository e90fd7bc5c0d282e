"""The training trace: one record per merge, as training makes it.

``train(..., trace=f)`` calls ``f(record)`` with a :class:`MergeRecord` after each merge;
``trace="merges.tsv"`` writes the records as a tab-separated table instead (whole, when
training ends). Each record says which pair won, the three tokens as a person reads them,
how often the pair occurred, and the pair that came second with its count, so that ties and
near-ties can be seen. Both trainers (the Python one and the compiled one) report the
runner-up by the same rule as the winner, and give the same records. Finding it costs one
more look at the trainer's heap of candidates per merge, so the trace suits any corpus; the
records are kept in memory until the file is written.

Example::

    >>> import functionalbpe as fb
    >>> records = []
    >>> tok = fb.train("hug pug hugs", vocab_size=258, pattern="gpt2", trace=records.append, progress=False)
    >>> r = records[0]
    >>> r.rank, r.id, r.left_token, r.right_token, r.token, r.count
    (0, 256, 'u', 'g', 'ug', 3)
    >>> r.runner_up_token, r.runner_up_count
    ('[h][u]', 2)
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, List, Optional, Union

from ..core.alphabet import NUM_BYTES, Alphabet
from ..core.reference import Merge
from ..util.display import show_text_form
from ..util.output import atomic_write_text, check_output_path
from ..schemes.base import Scheme

TSV_COLUMNS = (
    "rank", "id", "left", "right", "left_token", "right_token", "token", "count",
    "runner_up_left", "runner_up_right", "runner_up", "runner_up_count",
)


@dataclass(frozen=True)
class MergeRecord:
    """One merge of a training run.

    ``rank`` counts merges from 0 (the earliest merge is applied first when encoding); ``id``
    is the token it made. ``left_token``, ``right_token`` and ``token`` are shown as
    :func:`functionalbpe.util.display.show_text_form` shows them. ``count`` is how often the pair
    occurred when it was chosen. ``runner_up`` is the pair that came second (the next by the
    same rule: highest count, then smallest pair) and ``runner_up_count`` its count, or both
    None when no other pair occurred ``min_frequency`` times.
    """

    rank: int
    id: int
    left: int
    right: int
    left_token: str
    right_token: str
    token: str
    count: int
    runner_up: Optional[tuple]
    runner_up_token: Optional[str]
    runner_up_count: Optional[int]

    def tsv_row(self) -> str:
        """The record as one line of the TSV file (:data:`TSV_COLUMNS`; empty cells for no
        runner-up)."""
        second = ("", "", "", "") if self.runner_up is None else (
            self.runner_up[0], self.runner_up[1], self.runner_up_token, self.runner_up_count)
        cells = (self.rank, self.id, self.left, self.right, self.left_token, self.right_token,
                 self.token, self.count, *second)
        return "\t".join(map(str, cells)) + "\n"


TraceSpec = Union[None, Callable[[MergeRecord], object], str, "os.PathLike[str]"]


class MergeTracer:
    """Turns what a trainer reports (:data:`functionalbpe.core.reference.OnMerge`) into
    :class:`MergeRecord` values for a callable, or for a TSV file written by :meth:`close`.

    The token table grows with each merge, so that every record can show its tokens.
    """

    def __init__(self, sink: TraceSpec, alphabet: Alphabet, scheme: Scheme) -> None:
        self._path: Optional[str] = None
        self._rows: List[str] = []
        if callable(sink):
            self._sink: Callable[[MergeRecord], object] = sink
        elif isinstance(sink, (str, os.PathLike)):
            self._path = check_output_path(sink)  # before training, not after
            self._sink = lambda record: self._rows.append(record.tsv_row())
        else:
            raise TypeError(f"trace must be a callable or a file path, got {type(sink).__name__}")
        self._show = scheme.show
        self._first_id = alphabet.num_fixed
        self._table: List[bytes] = [bytes([i]) for i in range(NUM_BYTES)]
        self._table += [a.char.encode("utf-8") for a in alphabet.atoms]
        self._shown: List[str] = [self._show_bytes(t) for t in self._table]

    def _show_bytes(self, data: bytes) -> str:
        return show_text_form(data, self._show)

    def __call__(self, merge: Merge, runner_up: Optional[Merge]) -> None:
        a, b, count = merge
        rank = len(self._table) - self._first_id
        self._table.append(self._table[a] + self._table[b])
        self._shown.append(self._show_bytes(self._table[-1]))
        second = None if runner_up is None else (runner_up[0], runner_up[1])
        self._sink(MergeRecord(
            rank=rank,
            id=self._first_id + rank,
            left=a,
            right=b,
            left_token=self._shown[a],
            right_token=self._shown[b],
            token=self._shown[-1],
            count=count,
            runner_up=second,
            runner_up_token=None if second is None else f"[{self._shown[second[0]]}][{self._shown[second[1]]}]",
            runner_up_count=None if runner_up is None else runner_up[2],
        ))

    def close(self) -> None:
        """Write the TSV file, if the trace goes to one (whole, or not at all)."""
        if self._path is not None:
            atomic_write_text(self._path, "\t".join(TSV_COLUMNS) + "\n" + "".join(self._rows))

