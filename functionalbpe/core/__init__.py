"""The engine: the id alphabet, the reference trainer (the lesson), the fast trainer, the encoder."""
