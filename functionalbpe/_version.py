"""The version of functionalbpe (also in pyproject.toml), in a module of its own so that any
module can read it without importing the whole package."""

__version__ = "0.1.0"
