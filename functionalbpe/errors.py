"""The exceptions a user sees.

Every error that bad input can cause is one of these, with a message that names the file,
the offset or the option at fault and says what to do. The CLI prints the message on one
line and exits non-zero; anything else reaching the CLI is a bug.
"""
from __future__ import annotations


class FunctionalBPEError(ValueError):
    """Base class: bad input or a bad option, explained in the message. ``document``: the
    number (from 1) of the document at fault, where an error is about one of many."""

    document: "int | None" = None


class PatternError(FunctionalBPEError):
    """A pre-tokenization pattern that does not compile or that drops input."""


class CompiledPatternGaveUp(PatternError):
    """The compiled matcher of a custom pattern gave up on a text (no non-empty match at some
    place, or its step budget spent: csrc/lib/scan/regex_vm.h). Callers catch it and run ``regex``,
    which gives the pieces or the error that names the character; it never reaches a user."""


class CorpusError(FunctionalBPEError):
    """A corpus file that is missing, empty, or not valid UTF-8."""


class TokenizerFileError(FunctionalBPEError):
    """A tokenizer file that is truncated, corrupt, of another format or inconsistent."""


class CountsFileError(FunctionalBPEError):
    """A piece-counts file (``PieceCounts.load``) that is damaged, crafted or of another format."""


class SpecialTokenError(FunctionalBPEError):
    """Text containing a special token that the caller did not allow (``token``, found at
    character ``offset``; None where the error is about an option instead)."""

    token: "str | None" = None
    offset: "int | None" = None


class VocabSizeError(FunctionalBPEError):
    """A vocabulary size that cannot hold the fixed symbols."""


class UnknownTokenError(FunctionalBPEError, KeyError):
    """A token asked for by its text, bytes or id (``encode_single_token``, ``token_to_id``,
    ``decode_single_token_bytes``...) that the tokenizer does not have. Also a ``KeyError``,
    as tiktoken raises there."""

    __str__ = FunctionalBPEError.__str__  # the message, not KeyError's quoted repr


class DecodeError(FunctionalBPEError):
    """Token ids that are out of range or do not decode to valid UTF-8 (with errors='strict')."""


class OutputError(FunctionalBPEError, OSError):
    """A file that cannot be written where asked: the path is a directory, its directory is
    missing or not writable, or the write failed. The message names the path as given."""


class OutOfMemoryError(FunctionalBPEError, MemoryError):
    """Memory ran out; the message says what to reduce."""


class SmallerVocabularyWarning(UserWarning):
    """Training stopped before ``vocab_size``: no pair was left, or the best pair occurred
    fewer than ``min_frequency`` times. The message gives both sizes and the reason."""
