"""The ``.tiktoken`` rank file, and the merge table rebuilt from ranks.

A ``.tiktoken`` file holds one token per line: its bytes in base64, a space, its rank (its
id). There are no merges: tiktoken merges, at each step, the adjacent pair whose joined bytes
have the lowest rank, and takes a piece that is a token whole. :func:`merges_from_ranks`
rebuilds a merge table from that: the parts of each token are what tiktoken's own procedure
makes of its bytes with the ranks below it — exactly two tokens in a BPE merge table.
Anything else is refused.

Every rank file — imported, or measured by the report — is read by :func:`read_ranks`, which
holds ranks, token lengths and the total to the limits of :mod:`functionalbpe.core.limits`.

Example::

    >>> merges_from_ranks({bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 300})[1:]
    ([(97, 98), (256, 99)], [256, 300], [])
"""
from __future__ import annotations

import base64
import hashlib
import zlib
import binascii
import heapq
import os
import re
from itertools import accumulate, chain, repeat
from operator import gt, mul
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple, Union

from ..core._native import NATIVE
from ..core.alphabet import NUM_BYTES
from ..core.limits import MAX_TOKEN_BYTES, MAX_TOTAL_TOKEN_BYTES, MAX_VOCAB_SIZE
from ..errors import FunctionalBPEError, TokenizerFileError
from ..text.patterns import CL100K, O200K, R50K
from ..util.checks import PathLike, excerpt
from ..util.output import atomic_write_text
from .imported import Imported
from .reading import read_bytes


class Published(NamedTuple):
    """One of OpenAI's rank files: its name, and what tiktoken pairs it with."""

    name: str
    pattern: str
    special_tokens: Dict[str, int]


_ENDOFTEXT = "<|endoftext|>"
# By the SHA-256 of the file's bytes: the hashes tiktoken checks its downloads against.
PUBLISHED: Dict[str, Published] = {
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930": Published(
        "r50k_base", R50K, {_ENDOFTEXT: 50256}),
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069": Published(
        "p50k_base", R50K, {_ENDOFTEXT: 50256}),
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7": Published(
        "cl100k_base", CL100K,
        {_ENDOFTEXT: 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
         "<|endofprompt|>": 100276}),
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d": Published(
        "o200k_base", O200K, {_ENDOFTEXT: 199999, "<|endofprompt|>": 200018}),
}

# A gzipped rank file (as some packages ship them) is read up to this many bytes inflated:
# the largest published one, o200k, is 3.6 MB.
MAX_INFLATED_RANKS = 1 << 28


def read_rank_file(path: PathLike) -> Tuple[Dict[bytes, int], Optional[Published]]:
    """The ranks of a ``.tiktoken`` file (gzipped or not) and, if it is one of OpenAI's
    published files (by its SHA-256), which one."""
    name = os.fspath(path)
    raw = read_bytes(path, "rank file")
    if raw[:2] == b"\x1f\x8b":
        try:
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            raw = inflater.decompress(raw, MAX_INFLATED_RANKS)
        except zlib.error as exc:
            raise TokenizerFileError(f"{name}: a damaged gzip file ({exc})") from None
        if inflater.unconsumed_tail:
            raise TokenizerFileError(f"{name}: inflates to more than {MAX_INFLATED_RANKS} bytes, the limit for a rank file")
    return parse_ranks(raw, name), PUBLISHED.get(hashlib.sha256(raw).hexdigest())


def read_ranks(path: PathLike) -> Dict[bytes, int]:
    """Read a ``.tiktoken`` file (or a gzipped one): ``{token bytes: rank}``; errors name the
    file and line.

    >>> import tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "r.tiktoken")
    >>> _ = open(p, "w").write("YQ== 0\\nYg== 1\\n")
    >>> read_ranks(p)
    {b'a': 0, b'b': 1}
    """
    return read_rank_file(path)[0]


# The tokens of a rank file, one a line, as b64decode(validate=True) takes them.
_BASE64_LINES = re.compile(rb"(?:[A-Za-z0-9+/]+={0,2}\n)*")


def parse_ranks(raw: bytes, name: str) -> Dict[bytes, int]:
    """The ranks of the bytes of a ``.tiktoken`` file called ``name``."""
    return _plain_ranks(raw) or _ranks_line_by_line(raw, name)


def _plain_ranks(raw: bytes) -> Optional[Dict[bytes, int]]:
    """What :func:`_ranks_line_by_line` makes of a file written as tiktoken writes one (each
    line a base64 token, a space and a rank) that passes every check, read a file at a time
    rather than a line at a time: cl100k in about 0.1 s rather than 0.15. None for any other file,
    which that then reads, or refuses naming the line."""
    fields = raw.split()
    tokens, numbers = fields[0::2], fields[1::2]
    # The file is exactly its lines written again: two fields each, one space between.
    if not tokens or b"\n".join(map(b" ".join, zip(tokens, numbers))) + b"\n" != raw:
        return None
    if _BASE64_LINES.fullmatch(b"\n".join(tokens) + b"\n") is None:
        return None
    try:
        decoded = list(map(binascii.a2b_base64, tokens))
        ranks = list(map(int, numbers))
    except (binascii.Error, ValueError):
        return None
    table = dict(zip(decoded, ranks))
    lengths = list(map(len, decoded))
    if (len(table) != len(ranks) or len(set(ranks)) != len(ranks) or min(ranks) < 0 or max(ranks) >= MAX_VOCAB_SIZE
            or min(lengths) < 1 or max(lengths) > MAX_TOKEN_BYTES or sum(lengths) > MAX_TOTAL_TOKEN_BYTES):
        return None
    return table


def _ranks_line_by_line(raw: bytes, name: str) -> Dict[bytes, int]:
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
                f"{name}: line {number}: expected '<base64 token> <rank>' (a base64 token, a space and "
                f"a rank), found {shown!r}"
            ) from None
        if not token or not 0 <= rank < MAX_VOCAB_SIZE:
            raise TokenizerFileError(
                f"{name}: line {number}: an empty token, or a rank outside 0..{MAX_VOCAB_SIZE - 1}"
            )
        total += len(token)
        if len(token) > MAX_TOKEN_BYTES or total > MAX_TOTAL_TOKEN_BYTES:
            raise TokenizerFileError(
                f"{name}: line {number}: the token {excerpt(token)} of {len(token)} bytes passes the "
                f"limit of {MAX_TOKEN_BYTES} bytes per token or {MAX_TOTAL_TOKEN_BYTES} in all"
            )
        if token in ranks:
            raise TokenizerFileError(f"{name}: line {number}: the token {excerpt(token)} appears twice")
        if rank in seen_ranks:
            raise TokenizerFileError(
                f"{name}: line {number}: rank {rank} was already given on line {seen_ranks[rank]}"
            )
        ranks[token] = rank
        seen_ranks[rank] = number
    if not ranks:
        raise TokenizerFileError(f"{name}: the file holds no ranks")
    return ranks


def write_ranks(path: PathLike, ranks: Dict[bytes, int]) -> None:
    """Write ``{token bytes: rank}`` as a ``.tiktoken`` file (in the dict's order), atomically."""
    lines = [f"{base64.b64encode(data).decode('ascii')} {rank}\n" for data, rank in ranks.items()]
    atomic_write_text(path, "".join(lines))


def tiktoken_parts(ranks: Dict[bytes, int], token: bytes, below: int,
                   pairs: Optional[Dict[Tuple[int, int], int]] = None) -> List[bytes]:
    """What tiktoken's procedure makes of ``token`` with the ranks below ``below``: merge the
    adjacent pair whose joined bytes have the lowest rank (the leftmost of equal ranks),
    again and again.

    The pairs wait in a heap under (rank, start), and a popped pair that has changed since
    is skipped, so that a token of n bytes costs O(n log n) lookups rather than tiktoken's
    n rescans (a 20 KB token took seconds that way). ``pairs`` maps the ranks of two tokens
    to the rank of the token they make (the splits found so far): a join found there is not
    looked up by its bytes, which a chain of ever longer tokens would hash again and again
    (n^3). The compiled twin is ``fbpe_tiktoken_parts`` in csrc/lib/encode/ranks.c.

    >>> tiktoken_parts({b"a": 0, b"b": 1, b"ab": 2, b"abb": 3}, b"abb", 3)
    [b'ab', b'b']
    """
    n = len(token)
    # Part i is token[i:ends[i]]; parts are linked by start (nexts, prevs); n means none.
    ends = list(range(1, n + 1))
    prevs = list(range(-1, n - 1))
    part_rank = [ranks.get(token[i:i + 1], -1) for i in range(n)]
    known = pairs if pairs is not None else {}

    def joined_rank(i: int) -> int:
        if ends[i] >= n:
            return below
        rank = known.get((part_rank[i], part_rank[ends[i]]))
        if rank is None:
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
        part_rank[at] = rank
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
    if pairs is not None and len(parts) == 2:
        pairs[(part_rank[0], part_rank[ends[0]])] = below
    return parts


def merges_from_ranks(
    ranks: Dict[bytes, int], origin: str = "the ranks"
) -> Tuple[List[int], List[Tuple[int, int]], List[int], List[Tuple[int, int, int]]]:
    """Rebuild a merge table from tiktoken ranks.

    Returns ``(byte_ids, merges, merge_ids, joins)``: the rank of each of the 256 bytes, the
    merges in rank order in the internal layout (a byte's id is its value; merge ``k`` is id
    ``256 + k``), the rank of each merge, and the joins that tokens no merge makes need.
    Only the order of the ranks of longer tokens matters to tiktoken's procedure, so the
    ranks may come in any layout (bytes anywhere, gaps): :mod:`functionalbpe.core.idmap`
    keeps them as the tokenizer's ids.

    A token is *made by a merge* when tiktoken's procedure, with the ranks below it, brings
    its bytes to two parts: those are its merge. Llama 3 has 678 tokens that it does not
    (``.:.:`` comes out as three parts), yet tiktoken makes them inside a piece, joining any
    two adjacent parts whose bytes are a token. Such a token gets a merge of two tokens of
    lower rank all the same (its bytes, for decoding), and then every other pair of tokens
    that makes a token becomes a join (``Tokenizer(joins=...)``): with them, pieces merge by
    tiktoken's own rule. Raises :class:`TokenizerFileError` when a token is no two tokens of
    lower rank at all.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257, b"cd": 258, b"abcd": 259, b"abc": 260}
    >>> merges_from_ranks(ranks)[1:]  # abcd: a, bc, d with the ranks below it
    ([(98, 99), (97, 98), (99, 100), (257, 258), (97, 256)], [256, 257, 258, 259, 260], [(260, 100, 259), (257, 99, 260)])
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
    longer.sort()
    # Two tokens of lower rank together are at most twice the longest: a longer token is
    # refused here, before anything is spent on its bytes.
    lengths = [len(token) for _, token in longer]
    limits = map(mul, accumulate(chain([1], lengths), max), repeat(2))
    if any(map(gt, lengths, limits)):
        longest = 1
        for rank, token in longer:
            if len(token) > 2 * longest:
                raise TokenizerFileError(
                    f"{origin}: the token {excerpt(token)} (rank {rank}) is not a merge of two tokens of lower "
                    f"rank: it is {len(token)} bytes, longer than any two of them together ({2 * longest})"
                )
            longest = max(longest, len(token))
    # A token's id is its place: the bytes, then the longer tokens in rank order.
    splits = _splits(ranks, longer)
    merges = [(left, right) for _, _, left, right in splits]
    unmade = [k for k, (count, _, _, _) in enumerate(splits) if count != 2]  # tokens no merge makes
    if not unmade:
        return byte_ids, merges, [rank for rank, _ in longer], []
    ids = {bytes([b]): b for b in range(NUM_BYTES)}
    ids.update((token, NUM_BYTES + k) for k, (_, token) in enumerate(longer))
    # Made by no merge: two tokens of lower rank may still make it (tiktoken joins any two
    # parts whose bytes are a token). Looking costs about the square of a token's length, for
    # it and (_joins) for every token: first, is that affordable?
    work = sum(n * n for n in lengths)
    for k in unmade:
        rank, token = longer[k]
        lower = NUM_BYTES + k  # the ids of the tokens of lower rank are below this
        cut = 0 if work > JOIN_WORK else next(
            (c for c in range(1, len(token)) if ids.get(token[:c], lower) < lower and ids.get(token[c:], lower) < lower),
            0)
        if not cut:
            # The parts are worth showing (and computing again) only for a short token.
            shown = f" {excerpt(tiktoken_parts(ranks, token, rank))}" if len(token) <= 256 else ""
            why = "no two tokens of lower rank make it" if work <= JOIN_WORK else (
                f"the tokens are too long to look for two that make it ({work:,} steps, more than "
                f"{JOIN_WORK:,})")
            raise TokenizerFileError(
                f"{origin}: the token {excerpt(token)} (rank {rank}) is not a merge of two tokens of lower "
                f"rank: with the ranks below it, its bytes come out as {splits[k][0]} tokens{shown}, and {why}; "
                "these ranks are not a BPE vocabulary"
            )
        merges[k] = (ids[token[:cut]], ids[token[cut:]])
    return byte_ids, merges, [rank for rank, _ in longer], _joins(ids, merges, {longer[k][1] for k in unmade})


# Looking for the pairs that make a token costs about the square of its length (every cut,
# every cut's bytes hashed): the squares of all tokens together may come to this many when some
# token is made by no merge. Llama 3 needs 7.4 million; a rank file of long tokens made by no
# merge is refused, not hung on.
JOIN_WORK = 1 << 27


def _joins(internal: Dict[bytes, int], merges: List[Tuple[int, int]], unmade: Set[bytes]) -> List[Tuple[int, int, int]]:
    """Every pair of tokens that makes a token besides its merge (internal ids, by token),
    when some token is made by no merge: tiktoken's rule in full (any two adjacent parts
    whose bytes are a token join). Without such tokens the merges alone give tiktoken's
    result (as every test on cl100k, o200k and Qwen 3 finds), and there are none. Llama 3:
    152,403 joins beside 127,744 merges."""
    if not unmade:
        return []
    own = set(merges)
    out: List[Tuple[int, int, int]] = []
    for token, t in internal.items():
        for c in range(1, len(token)):
            left, right = internal.get(token[:c]), internal.get(token[c:])
            if left is not None and right is not None and (left, right) not in own:
                out.append((left, right, t))
    return out


def _splits(ranks: Dict[bytes, int], longer: List[Tuple[int, bytes]]) -> List[Tuple[int, int, int, int]]:
    """(number of parts, end of the first, and where there are two, the ids of the first and
    the second, else -1 and -1) for each longer token, in C when it is built; a token's id is
    its byte, or 256 + its place in ``longer``."""
    module = NATIVE.encoder
    if module is None:
        out = []
        pairs: Dict[Tuple[int, int], int] = {}
        ids = {bytes([b]): b for b in range(NUM_BYTES)}
        for rank, token in longer:
            parts = tiktoken_parts(ranks, token, rank, pairs)
            two = len(parts) == 2
            out.append((len(parts), len(parts[0]), ids[parts[0]] if two else -1, ids[parts[1]] if two else -1))
            ids[token] = NUM_BYTES + len(out) - 1
        return out
    # The compiled twin takes the tokens in rank order; only the order of the longer
    # tokens' ranks matters (a single byte is never a joined pair), so the bytes go first.
    by_rank = [bytes([b]) for b in range(NUM_BYTES)] + [token for _, token in longer]
    return module.tiktoken_splits(by_rank)[NUM_BYTES:]


def encoding_parts(encoding: Any) -> Tuple[Dict[bytes, int], str, Dict[str, int]]:
    """The ranks, pattern and special tokens of a ``tiktoken.Encoding``.

    tiktoken keeps them in the attributes its constructor fills (``_mergeable_ranks``,
    ``_pat_str``, ``_special_tokens``) and has no public getter for the ranks; anything
    without them is not an Encoding, and is refused as such. The ranks are held to the
    limits of :func:`read_ranks`.
    """
    try:
        ranks, pattern, specials = encoding._mergeable_ranks, encoding._pat_str, encoding._special_tokens
    except AttributeError:
        raise FunctionalBPEError(
            f"from_tiktoken takes a .tiktoken path or a tiktoken.Encoding, not a {type(encoding).__name__}"
        ) from None
    total = 0
    for token in ranks:
        total += len(token)
        if len(token) > MAX_TOKEN_BYTES or total > MAX_TOTAL_TOKEN_BYTES:
            raise TokenizerFileError(
                f"the Encoding's token {excerpt(token)} passes the limit of {MAX_TOKEN_BYTES} bytes per "
                f"token or {MAX_TOTAL_TOKEN_BYTES} in all"
            )
    return dict(ranks), str(pattern), dict(specials)


def read_tiktoken(
    source: Any, pattern: Optional[str] = None, special_tokens: Union[Dict[str, int], Sequence[str], None] = None
) -> Imported:
    """A tiktoken vocabulary — a ``.tiktoken`` path, or a ``tiktoken.Encoding`` — with its
    merge table rebuilt from the ranks (:meth:`Tokenizer.from_tiktoken` says the rules).

    >>> import tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "r.tiktoken")
    >>> write_ranks(p, {bytes([b]): b for b in range(256)} | {b"ab": 256})
    >>> got = read_tiktoken(p, "gpt4", special_tokens=["<e>"])
    >>> got.merges, got.pattern, got.special_tokens
    ([(97, 98)], 'gpt4', {'<e>': 257})
    """
    if isinstance(source, (str, os.PathLike)):
        origin = os.fspath(source)
        if isinstance(source, str) and not os.path.exists(source) and any(p.name == source for p in PUBLISHED.values()):
            raise FunctionalBPEError(
                f"{source!r} is the name of tiktoken's encoding, not a file: pass the Encoding "
                f"(from_tiktoken(tiktoken.get_encoding({source!r}))) or the path of its rank file"
            )
        ranks, published = read_rank_file(source)
        own_pattern, own_specials = (published.pattern, published.special_tokens) if published else ("", {})
    else:
        ranks, own_pattern, own_specials = encoding_parts(source)
        origin = f"the tiktoken Encoding {getattr(source, 'name', '?')!r}"
    byte_ids, merges, merge_ids, joins = merges_from_ranks(ranks, origin)  # a bad file is said first
    if not (pattern or own_pattern):
        raise FunctionalBPEError(
            f"{origin}: a rank file holds no pattern, and this is not one of OpenAI's published files "
            "(r50k_base, p50k_base, cl100k_base, o200k_base, known by their SHA-256): give the pattern "
            "its model cuts text with (pattern=..., --pattern: a name such as 'gpt4', 'llama3', 'o200k', "
            "or the regex)"
        )
    if special_tokens is None:
        specials: Dict[str, int] = dict(own_specials)
    elif isinstance(special_tokens, dict):
        specials = dict(special_tokens)
    else:
        first_special = max(ranks.values()) + 1
        specials = {s: first_special + k for k, s in enumerate(special_tokens)}
    return Imported(byte_ids, merges, merge_ids, pattern or own_pattern, specials, True, origin, joins)
