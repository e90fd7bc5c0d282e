"""The work behind the Tokenizer's exports to and imports from other libraries, as functions that take it."""
