"""Seeing BPE work: a trace of training, a readable vocabulary, a trace of encoding, and a
page that tokenizes in the browser exactly as the library does (docs/tutorial.md).

* :mod:`~functionalbpe.teach.merge_trace` — one record per merge while training
  (``train(..., trace=...)``, ``functionalbpe train --trace merges.tsv``);
* :mod:`~functionalbpe.teach.vocab` — the vocabulary as minbpe prints it, ``[a][b] -> [ab]``;
* :mod:`~functionalbpe.teach.encode_trace` — every merge applied to every piece of a text;
* :mod:`~functionalbpe.teach.explorer` — the self-contained HTML explorer.
"""
