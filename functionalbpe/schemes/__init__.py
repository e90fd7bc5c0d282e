"""Pre-tokenization schemes: how text becomes the pieces BPE sees, and back."""
