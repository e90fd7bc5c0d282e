"""``functionalbpe.measure.face``: the old path of :mod:`functionalbpe.peers.face`.

The face every tokenizer shows the report lives beside the peers that implement it; this
path keeps working (the module at the new path, not a copy).

    >>> import functionalbpe.measure.face, functionalbpe.peers.face
    >>> functionalbpe.measure.face is functionalbpe.peers.face
    True
"""
import sys

from functionalbpe.peers import face

sys.modules[__name__] = face
