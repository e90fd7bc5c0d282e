"""Layer 1: checks of what callers pass, progress, how tokens are shown, output written whole."""
