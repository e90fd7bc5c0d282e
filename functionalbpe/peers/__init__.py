"""The other tokenizer libraries, one module each: their files, their face for the report,
their hooks for the bench (:mod:`functionalbpe.peers.registry` lists them). These modules
never import the Tokenizer: they read and write plain data, and the Tokenizer builds itself
from it."""
