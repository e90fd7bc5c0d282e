"""The names and the files of other libraries on a Tokenizer: tiktoken's and HF's API names, exports and imports."""
