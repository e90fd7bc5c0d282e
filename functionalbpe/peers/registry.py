"""The peer libraries, in the order the bench and the report list them.

Adding a library: write ``functionalbpe/peers/<library>.py`` ending in a ``PEER``
(:class:`~functionalbpe.peers.base.Peer`: its report adapter and file kinds, its bench
hooks; any of them may be absent), and add it to :data:`PEERS` below. The report, its
command-line flags and ``functionalbpe bench`` read this table and nothing else.

Example::

    >>> list(PEERS)
    ['tiktoken', 'tokenizers', 'rustbpe', 'sentencepiece', 'bpeasy']
    >>> [p.adapter.kind for p in PEERS.values() if p.adapter is not None]
    ['tiktoken', 'hf', 'sentencepiece']
"""
from __future__ import annotations

from typing import Dict, Optional

from . import bpeasy, hf, rustbpe, sentencepiece, tiktoken
from .base import Peer

PEERS: Dict[str, Peer] = {
    peer.name: peer
    for peer in (tiktoken.PEER, hf.PEER, rustbpe.PEER, sentencepiece.PEER, bpeasy.PEER)
}


def peer_of_kind(kind: str) -> Optional[Peer]:
    """The peer whose report adapter is of ``kind`` (``"hf"``), if any."""
    for peer in PEERS.values():
        if peer.adapter is not None and peer.adapter.kind == kind:
            return peer
    return None
