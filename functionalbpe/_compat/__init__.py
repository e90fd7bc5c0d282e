"""Old import paths of public modules, kept working after they moved to their layer.

The package adds this folder to its ``__path__``, so ``import functionalbpe.dask`` finds
``dask.py`` here: a module that is the one at the new path (``functionalbpe.pipeline.cluster``),
not a copy of it. Nothing else in the package imports from here.
"""
