"""Exports to and imports from tiktoken and HF: the work behind the Tokenizer's ``to_*`` and
``from_*`` methods, as functions of a tokenizer.

Each library's files live in :mod:`functionalbpe.formats`, which reads and writes plain data
(ranks, merges as bytes, the pattern, the special tokens) and never sees a Tokenizer: an
export hands over the tokenizer's data there, and an import builds a tokenizer from what a
reader returns, through the constructor it is given (the Tokenizer class, which imports this
module, never the other way round). Only the objects of another library (a tiktoken
``Encoding``, a transformers tokenizer) come from that library's one home in
:mod:`functionalbpe.peers`. What an export reads of the tokenizer is
:class:`~functionalbpe.interop.protocol.Tokenizes`.

    >>> import os, tempfile, functionalbpe as fb
    >>> tok = fb.train(["ab ab"], vocab_size=257, progress=False)
    >>> path = os.path.join(tempfile.mkdtemp(), "t.tiktoken")
    >>> to_tiktoken(tok, path)
    >>> from functionalbpe.formats.sniff import read_other
    >>> imported(fb.Tokenizer, read_other(path, "gpt4")).encode("ab ab") == tok.encode("ab ab")
    True
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Tuple, TypeVar

from ..errors import FunctionalBPEError, PatternError, TokenizerFileError
from ..formats.reading import release_freed_memory
from ..schemes.registry import make_scheme

if TYPE_CHECKING:  # pragma: no cover
    from ..formats.imported import Imported
    from .protocol import Tokenizes

T = TypeVar("T")

def ranks(tok: "Tokenizes", what: str, taken_whole: bool) -> Dict[bytes, int]:
    """``{token bytes: id}`` for a rank file or a vocabulary; refused for a scheme whose
    transform the other library cannot apply (``what`` names the export in the error)."""
    return tok.vocabulary.ranks(what, tok.scheme.name if tok.scheme.atoms else None, taken_whole)


def to_tiktoken(tok: "Tokenizes", path: "os.PathLike[str] | str") -> None:
    """Write ``tok`` as a ``.tiktoken`` rank file (plain scheme only)."""
    from ..formats.tiktoken import write_ranks

    write_ranks(path, ranks(tok, "a .tiktoken file", taken_whole=True))


def tiktoken_encoding(tok: "Tokenizes", name: str) -> Any:
    """``tok`` as a ``tiktoken.Encoding`` (needs tiktoken; plain scheme only)."""
    from ..peers.tiktoken import encoding

    return encoding(name, tok.pattern, ranks(tok, "a tiktoken Encoding", taken_whole=True), tok.special_tokens)


def hf_document(tok: "Tokenizes") -> Dict[str, Any]:
    """``tok`` as the data of an HF ``tokenizer.json`` (plain scheme only)."""
    from ..formats.hf import tokenizer_json

    vocab = ranks(tok, "an HF tokenizer.json", taken_whole=False)
    table = tok.alphabet.all_token_bytes()
    # HF ranks a pair by its merge's place: each token's merge, then its joins (pairs that
    # make it too, in an imported vocabulary), in the order of the tokens.
    first = tok.alphabet.first_merge
    pairs = [(first + k, a, b) for k, (a, b) in enumerate(tok.alphabet.merges)]
    pairs += [(t, a, b) for a, b, t in tok.encoder.joins]
    pairs.sort(key=lambda p: p[0])  # stable: a token's merge before its joins
    merges = [(table[a], table[b]) for _, a, b in pairs]
    # A word that is in the vocabulary may skip the merges (faster in HF) only if the
    # merges would give that very token: true of every table a trainer makes; the
    # compiled encoder checks it when it is built, so it is known rather than assumed.
    # A vocabulary that takes such words whole (whole_pieces) must say so.
    whole = tok.vocabulary.self_encoding() or tok.encoder.whole_pieces
    return tokenizer_json(vocab, merges, tok.pattern, tok.special_tokens, ignore_merges=whole,
                          normalize=tok.scheme.normalize)


def to_hf(tok: "Tokenizes", path: "os.PathLike[str] | str", roles: Dict[str, Optional[str]],
          model_max_length: Optional[int]) -> Tuple[str, ...]:
    """Write ``tok`` for HF (a ``save_pretrained`` directory, or a ``.json`` path's file
    alone); the paths written."""
    from ..formats.hf import write_hf

    return write_hf(path, hf_document(tok), roles, model_max_length)


def to_transformers(tok: "Tokenizes", roles: Dict[str, Optional[str]], model_max_length: Optional[int]) -> Any:
    """``tok`` as a transformers ``PreTrainedTokenizerFast`` (needs transformers)."""
    from ..peers.hf import transformers_tokenizer

    return transformers_tokenizer(hf_document(tok), roles, model_max_length)


def imported(make: Callable[..., T], got: "Imported") -> T:
    """The tokenizer ``make`` (the Tokenizer class) builds from a vocabulary read from
    another library, its ids kept; what is wrong with it is a :class:`TokenizerFileError`
    naming the file."""
    release_freed_memory(got.merges)  # the reading's text and tables, before the tokenizer's are built
    try:
        # A word that is a token is taken whole where the library does (tiktoken always,
        # HF with ignore_merges), whatever its bytes would merge into.
        options = {} if got.normalize is None else {"normalize": got.normalize}
        return make(
            make_scheme("plain", got.pattern, **options), got.merges, list(got.special_tokens),
            byte_ids=got.byte_ids, merge_ids=got.merge_ids, special_ids=list(got.special_tokens.values()),
            joins=got.joins, whole_pieces=got.ignore_merges,
        )
    except PatternError:
        raise  # the pattern was given to the call, not read from the file
    except FunctionalBPEError as exc:
        raise TokenizerFileError(f"{got.origin}: {exc}") from None
