"""The peer libraries, in the order the bench and the report list them.

Adding a library: write ``functionalbpe/peers/<library>.py`` ending in a ``PEER``
(:class:`~functionalbpe.peers.base.Peer`: its report adapter and file kinds, its bench
hooks; any of them may be absent), and add it to :data:`PEERS` below. The report, its
command-line flags and ``functionalbpe bench`` read this table and nothing else.

Example::

    >>> list(PEERS)
    ['tiktoken', 'tokenizers', 'rustbpe', 'sentencepiece', 'bpeasy']
    >>> list(ADAPTERS)
    ['tiktoken', 'hf', 'sentencepiece']
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Type

from . import bpeasy, hf, rustbpe, sentencepiece, tiktoken
from .base import Peer

if TYPE_CHECKING:  # pragma: no cover
    from .face import ReportTokenizer

PEERS: Dict[str, Peer] = {
    peer.name: peer
    for peer in (tiktoken.PEER, hf.PEER, rustbpe.PEER, sentencepiece.PEER, bpeasy.PEER)
}

# The report's adapters of the peers, by kind (the report command's flag --<kind>).
ADAPTERS: "Dict[str, Type[ReportTokenizer]]" = {
    peer.adapter.kind: peer.adapter for peer in PEERS.values() if peer.adapter is not None
}
