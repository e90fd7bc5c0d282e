"""The other tokenizer libraries: reading and writing their files."""
