"""What functionalbpe knows of another tokenizer library, declared in one value: :class:`Peer`.

Each library has one module in :mod:`functionalbpe.peers` — its files (reader, writer), its
face for the report (a :class:`~functionalbpe.peers.face.ReportTokenizer`) and its hooks
for ``functionalbpe bench`` — ending in a ``PEER`` that says which of these it has. The
registry (:mod:`functionalbpe.peers.registry`) lists them; the report, its command line and
the bench read the declarations and nothing else, so adding a library is one module and
one line in the registry.

Example::

    >>> Peer("json", module="json").installed(), Peer("nope", module="no_such_library").installed()
    (True, False)
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence, Tuple, Type

if TYPE_CHECKING:  # pragma: no cover
    from .face import ReportTokenizer

# bench, training: (documents, vocabulary size, threads, pattern: a name of
# functionalbpe.PATTERNS) -> a function that trains from scratch and returns something small.
# It runs in a fresh child process.
TrainHook = Callable[[Sequence[str], int, int, str], Callable[[], Any]]

# bench, encoding: (encode one text -> its token count, encode a batch on k threads -> the
# token count, a note for the table saying which tokens these are).
EncoderParts = Tuple[Callable[[str], int], Callable[[List[str], int], int], str]

# bench, encoding: (documents, our trained Tokenizer, vocabulary size, threads, a scratch
# directory) -> EncoderParts. Built once in the bench's own process.
EncoderHook = Callable[[Sequence[str], Any, int, int, str], EncoderParts]


@dataclass(frozen=True)
class Peer:
    """One library and what we do with it. Leave out what it does not take part in."""

    name: str  # the library's distribution name: bench's row, --libraries, its version
    module: str  # its import name, which is also the top-level module of its tokenizer objects
    adapter: "Optional[Type[ReportTokenizer]]" = None  # the report's face for its tokenizers and files
    # -- the bench
    train: Optional[TrainHook] = None  # its trainer, on the bench's documents with our pattern
    encoder: Optional[EncoderHook] = None  # its encoder, on our vocabulary where it can take it

    def installed(self) -> bool:
        return importlib.util.find_spec(self.module) is not None
