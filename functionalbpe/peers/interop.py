"""Interop with tiktoken and HF tokenizers: rank files, Encoding objects, tokenizer.json.

* ``.tiktoken`` files hold one token per line: its bytes in base64, a space, its rank (its
  id). There are no merges: tiktoken merges, at each step, the adjacent pair whose joined
  bytes have the lowest rank. :func:`merges_from_ranks` rebuilds the merge table from
  that: the parts of each token are what tiktoken's own procedure makes of its bytes with
  the ranks below it — exactly two tokens in a BPE merge table. Anything else is refused.
* HF ``tokenizer.json``: a ``Split`` pre-tokenizer with our pattern, then ``ByteLevel``
  (bytes as printable characters, no regex of its own), a ``BPE`` model whose vocabulary and
  merges are ours written in those characters, special tokens as added tokens.
* Only the plain scheme can be exported: the other schemes rewrite the text before BPE
  (docs/interop.md says what that means and what to do instead).

Example::

    >>> bytes_to_unicode()[ord(" ")], bytes_to_unicode()[ord("a")]
    ('Ġ', 'a')
"""
from __future__ import annotations

import base64
import binascii
import heapq
import json
import os
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Type, Union

from ..core._native import NATIVE
from ..core.alphabet import NUM_BYTES
from ..errors import FunctionalBPEError, TokenizerFileError
from ..filecheck import MAX_TOKEN_BYTES, MAX_TOTAL_TOKEN_BYTES, MAX_VOCAB_SIZE, excerpt
from ..fileformat import atomic_write_text, read_bytes

if TYPE_CHECKING:  # pragma: no cover
    from ..tokenizer import Tokenizer

SpecialsArg = Union[Dict[str, int], Sequence[str], None]


def _refuse_scheme(tok: "Tokenizer", what: str) -> None:
    if tok.scheme.atoms:
        raise FunctionalBPEError(
            f"{what} can only hold the plain scheme: the {tok.scheme.name!r} scheme rewrites text "
            "into atoms before BPE, and other libraries cannot apply that rewrite, so the export "
            "would encode different ids; save it with Tokenizer.save() instead (docs/interop.md)"
        )


def vocabulary(tok: "Tokenizer") -> List[Tuple[bytes, int]]:
    """(bytes, id) of every token but the special ones, in id order; the bytes must be
    distinct (tiktoken and HF both key their vocabularies by them)."""
    first = tok.alphabet.first_special
    table = tok.alphabet.all_token_bytes()
    ext = (lambda i: i) if tok._idmap is None else tok._idmap.external
    seen: Dict[bytes, int] = {}
    out: List[Tuple[bytes, int]] = []
    for i in range(first):
        data = table[i]
        if data in seen:
            raise FunctionalBPEError(
                f"tokens {ext(seen[data])} and {ext(i)} have the same bytes {excerpt(data)}; a rank "
                "file (and an HF vocabulary) needs each token's bytes to be unique"
            )
        seen[data] = i
        out.append((data, ext(i)))
    out.sort(key=lambda t: t[1])
    return out


# -- tiktoken -------------------------------------------------------------------------------


def write_tiktoken(tok: "Tokenizer", path: "os.PathLike[str] | str") -> None:
    """Write ``tok``'s ranks as a ``.tiktoken`` file, atomically."""
    _refuse_scheme(tok, "a .tiktoken file")
    refuse_tokens_bpe_would_split(tok, "this tokenizer")
    lines = [f"{base64.b64encode(data).decode('ascii')} {rank}\n" for data, rank in vocabulary(tok)]
    atomic_write_text(path, "".join(lines))


def load_ranks(path: "os.PathLike[str] | str") -> Dict[bytes, int]:
    """Read a ``.tiktoken`` file: ``{token bytes: rank}``; errors name the file and line.
    Ranks, token lengths and all tokens' bytes are held to the limits of
    :mod:`functionalbpe.filecheck`."""
    name = os.fspath(path)
    raw = read_bytes(path, "rank file")
    ranks: Dict[bytes, int] = {}
    seen_ranks: Dict[int, int] = {}
    total = 0
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split()
        try:
            if len(fields) != 2:
                raise ValueError
            token = base64.b64decode(fields[0], validate=True)
            rank = int(fields[1])
        except (ValueError, binascii.Error):
            shown = line[:60].decode("ascii", "replace")
            raise TokenizerFileError(
                f"{name}, line {number}: expected a base64 token, a space and a rank, found {shown!r}"
            ) from None
        if not token or not 0 <= rank < MAX_VOCAB_SIZE:
            raise TokenizerFileError(
                f"{name}, line {number}: an empty token, or a rank outside 0..{MAX_VOCAB_SIZE - 1}"
            )
        total += len(token)
        if len(token) > MAX_TOKEN_BYTES or total > MAX_TOTAL_TOKEN_BYTES:
            raise TokenizerFileError(
                f"{name}, line {number}: the token {excerpt(token)} of {len(token)} bytes passes the "
                f"limit of {MAX_TOKEN_BYTES} bytes per token or {MAX_TOTAL_TOKEN_BYTES} in all"
            )
        if token in ranks:
            raise TokenizerFileError(f"{name}, line {number}: the token {excerpt(token)} appears twice")
        if rank in seen_ranks:
            raise TokenizerFileError(
                f"{name}, line {number}: rank {rank} was already given on line {seen_ranks[rank]}"
            )
        ranks[token] = rank
        seen_ranks[rank] = number
    if not ranks:
        raise TokenizerFileError(f"{name}: the file holds no ranks")
    return ranks


def tiktoken_parts(ranks: Dict[bytes, int], token: bytes, below: int) -> List[bytes]:
    """What tiktoken's procedure makes of ``token`` with the ranks below ``below``: merge the
    adjacent pair whose joined bytes have the lowest rank (the leftmost of equal ranks),
    again and again.

    The pairs wait in a heap under (rank, start), and a popped pair that has changed since
    is skipped, so that a token of n bytes costs O(n log n) lookups rather than tiktoken's
    n rescans (a 20 KB token took seconds that way). The compiled twin is
    ``fbpe_tiktoken_parts`` in csrc/lib/bpe.c.

    >>> tiktoken_parts({b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}, b"abb", 3)
    [b'ab', b'b']
    """
    n = len(token)
    # Part i is token[i:ends[i]]; parts are linked by start (nexts, prevs); n means none.
    ends = list(range(1, n + 1))
    prevs = list(range(-1, n - 1))

    def joined_rank(i: int) -> int:
        if ends[i] >= n:
            return below
        rank = ranks.get(token[i : ends[ends[i]]], below)
        return rank if rank < below else below

    pair_rank = [joined_rank(i) for i in range(n)]
    heap = [(rank, i) for i, rank in enumerate(pair_rank) if rank < below]
    heapq.heapify(heap)
    while heap:
        rank, at = heapq.heappop(heap)
        if pair_rank[at] != rank:
            continue  # stale: the pair at `at` has changed since it was filed
        gone = ends[at]
        ends[at] = ends[gone]
        if ends[at] < n:
            prevs[ends[at]] = at
        pair_rank[gone] = below
        for i in (at, prevs[at]):
            if i >= 0:
                pair_rank[i] = joined_rank(i)
                if pair_rank[i] < below:
                    heapq.heappush(heap, (pair_rank[i], i))
    parts = []
    i = 0
    while i < n:
        parts.append(token[i : ends[i]])
        i = ends[i]
    return parts


def merges_from_ranks(ranks: Dict[bytes, int], origin: str = "the ranks") -> Tuple[List[int], List[Tuple[int, int]]]:
    """Rebuild a merge table from tiktoken ranks.

    Returns ``(byte_ids, merges)``: the rank of each of the 256 bytes, and the merges in rank
    order, in the internal layout (a byte's id is its value; merge ``k`` is id ``256 + k``).
    Raises :class:`TokenizerFileError` when the ranks are not a BPE merge table.

    >>> merges_from_ranks({bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257})[1]
    [(97, 98), (256, 99)]
    """
    byte_ids = [-1] * NUM_BYTES
    longer: List[Tuple[int, bytes]] = []
    for token, rank in ranks.items():
        if len(token) == 1:
            byte_ids[token[0]] = rank
        else:
            longer.append((rank, token))
    missing = [b for b in range(NUM_BYTES) if byte_ids[b] < 0]
    if missing:
        raise TokenizerFileError(
            f"{origin}: {len(missing)} of the 256 single bytes have no rank (the first is "
            f"{bytes([missing[0]])!r}); byte-level BPE needs every byte as a token"
        )
    if sorted(byte_ids) != list(range(NUM_BYTES)):
        raise TokenizerFileError(
            f"{origin}: the 256 single bytes must have the ranks 0..255 (in any order); "
            f"they have {min(byte_ids)}..{max(byte_ids)}"
        )
    longer.sort()
    longest = 1
    for k, (rank, token) in enumerate(longer):
        if rank != NUM_BYTES + k:
            raise TokenizerFileError(
                f"{origin}: rank {NUM_BYTES + k} is missing (the next is {rank}, for {excerpt(token)}); "
                "a merge table gives every rank from 256 on, in order"
            )
        # Two tokens of lower rank together are at most twice the longest: a longer token
        # is refused here, before anything is spent on its bytes.
        if len(token) > 2 * longest:
            raise TokenizerFileError(
                f"{origin}: the token {excerpt(token)} (rank {rank}) is not a merge of two tokens of lower "
                f"rank: it is {len(token)} bytes, longer than any two of them together ({2 * longest})"
            )
        longest = max(longest, len(token))
    internal = {bytes([b]): b for b in range(NUM_BYTES)}
    merges: List[Tuple[int, int]] = []
    splits = _splits(ranks, byte_ids, longer)
    for (rank, token), (count, cut) in zip(longer, splits):
        if count != 2:
            # The parts are worth showing (and computing again) only for a short token.
            shown = f" {excerpt(tiktoken_parts(ranks, token, rank))}" if len(token) <= 256 else ""
            raise TokenizerFileError(
                f"{origin}: the token {excerpt(token)} (rank {rank}) is not a merge of two tokens of lower "
                f"rank: with the ranks below it, its bytes come out as {count} tokens{shown}; these "
                "ranks are not a BPE merge table"
            )
        merges.append((internal[token[:cut]], internal[token[cut:]]))
        internal[token] = rank
    return byte_ids, merges


def _splits(ranks: Dict[bytes, int], byte_ids: List[int], longer: List[Tuple[int, bytes]]) -> List[Tuple[int, int]]:
    """(number of parts, end of the first) for each longer token, in C when it is built."""
    module = NATIVE.encoder
    if module is None:
        out = []
        for rank, token in longer:
            parts = tiktoken_parts(ranks, token, rank)
            out.append((len(parts), len(parts[0])))
        return out
    by_rank = [b""] * (NUM_BYTES + len(longer))
    for b, rank in enumerate(byte_ids):
        by_rank[rank] = bytes([b])
    for rank, token in longer:
        by_rank[rank] = token
    return module.tiktoken_splits(by_rank)[NUM_BYTES:]


def read_tiktoken(
    cls: "Type[Tokenizer]",
    path: "os.PathLike[str] | str",
    pattern: str,
    special_tokens: SpecialsArg,
) -> "Tokenizer":
    """``Tokenizer.from_tiktoken``: a plain-scheme tokenizer with the file's ranks as ids."""
    from ..schemes.registry import make_scheme

    name = os.fspath(path)
    ranks = load_ranks(path)
    byte_ids, merges = merges_from_ranks(ranks, name)
    first_special = NUM_BYTES + len(merges)
    if special_tokens is None:
        specials: Dict[str, int] = {}
    elif isinstance(special_tokens, dict):
        specials = dict(special_tokens)
    else:
        specials = {s: first_special + k for k, s in enumerate(special_tokens)}
    tok = cls(make_scheme("plain", pattern), merges, list(specials), byte_ids=byte_ids, special_ids=list(specials.values()))
    refuse_tokens_bpe_would_split(tok, name, TokenizerFileError)
    return tok


def refuse_tokens_bpe_would_split(
    tok: "Tokenizer", origin: str, error: Type[FunctionalBPEError] = FunctionalBPEError
) -> None:
    """tiktoken takes a piece that is a token whole; functionalbpe applies the merges. The two
    can only agree if every token's own bytes merge back into it: check that. (True of every
    table a trainer makes, and of every rank file :func:`merges_from_ranks` accepts, as far as
    a randomized search of small tables could tell; a hand-made merge table can break it.)"""
    native = tok._encoder.native
    if native is not None and native.all_self_encoding:
        return
    from ..core.reference import encode_piece

    table = tok.alphabet.all_token_bytes()
    ranks = tok._encoder.ranks
    for i in range(tok.alphabet.first_merge, tok.alphabet.first_special):
        ids = encode_piece(list(table[i]), ranks)
        if ids != [i]:
            raise error(
                f"{origin}: the token {excerpt(table[i])} (id {i}) is not what its merges make of its own "
                f"bytes ({excerpt([tok._idmap.external(j) if tok._idmap else j for j in ids])}); tiktoken would "
                "take it whole where functionalbpe applies the merges, so the two would disagree"
            )


def tiktoken_encoding(tok: "Tokenizer", name: str = "functionalbpe") -> Any:
    """A ``tiktoken.Encoding`` with ``tok``'s ranks, pattern and special tokens."""
    _refuse_scheme(tok, "a tiktoken Encoding")
    refuse_tokens_bpe_would_split(tok, "this tokenizer")
    try:
        import tiktoken
    except ImportError:
        raise FunctionalBPEError("as_tiktoken_encoding needs tiktoken: pip install tiktoken") from None
    ranks = dict(vocabulary(tok))
    return tiktoken.Encoding(name, pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens=tok.special_tokens)


# -- HF tokenizers --------------------------------------------------------------------------


@lru_cache(maxsize=1)
def bytes_to_unicode() -> Tuple[str, ...]:
    """The printable character that byte-level BPE (GPT-2, HF ``ByteLevel``) writes for each
    byte: printable Latin-1 bytes stand for themselves, the other 68 take the code points
    from U+0100 on, in byte order."""
    printable = set(range(ord("!"), ord("~") + 1)) | set(range(0xA1, 0xAC + 1)) | set(range(0xAE, 0xFF + 1))
    out: List[str] = []
    extra = 0
    for b in range(NUM_BYTES):
        if b in printable:
            out.append(chr(b))
        else:
            out.append(chr(NUM_BYTES + extra))
            extra += 1
    return tuple(out)


def hf_json(tok: "Tokenizer") -> Dict[str, Any]:
    """The ``tokenizer.json`` document for ``tok``."""
    _refuse_scheme(tok, "an HF tokenizer.json")
    chars = bytes_to_unicode()

    def written(data: bytes) -> str:
        return "".join(chars[b] for b in data)

    vocab = {written(data): i for data, i in vocabulary(tok)}
    table = tok.alphabet.all_token_bytes()
    merges = [f"{written(table[a])} {written(table[b])}" for a, b in tok.alphabet.merges]
    native = tok._encoder.native
    # A word that is in the vocabulary may skip the merges (faster in HF) only if the merges
    # would give that very token: true of every token a trainer makes; checked, not assumed.
    whole = bool(native is not None and native.all_self_encoding)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": i,
                "content": s,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for s, i in tok.special_tokens.items()
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": tok.pattern}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": whole,
            "vocab": vocab,
            "merges": merges,
        },
    }


def write_hf(tok: "Tokenizer", path: "os.PathLike[str] | str") -> None:
    """Write ``tok`` as an HF ``tokenizer.json``, atomically."""
    atomic_write_text(path, json.dumps(hf_json(tok), ensure_ascii=False, indent=1) + "\n")
