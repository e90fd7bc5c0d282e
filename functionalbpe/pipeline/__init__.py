"""Corpora through the tokenizer at scale: token files, and counting on a Dask cluster."""
