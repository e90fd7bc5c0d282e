"""``functionalbpe.dask``: the old path of :mod:`functionalbpe.pipeline.cluster`.

Counting and encoding on a Dask cluster now live in ``functionalbpe.pipeline.cluster``, a
name that does not shadow the ``dask`` package when read; this path keeps working.

    >>> import functionalbpe.dask, functionalbpe.pipeline.cluster
    >>> functionalbpe.dask is functionalbpe.pipeline.cluster
    True
"""
import sys

from functionalbpe.pipeline import cluster

sys.modules[__name__] = cluster
