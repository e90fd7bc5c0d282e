"""From raw text to counted pieces: patterns, safe cuts, corpora, counting."""
