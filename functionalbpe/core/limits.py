"""What a tokenizer may hold: the limits, and the checks made before anything is built.

A tokenizer file, a pickled tokenizer and a ``.tiktoken`` rank file are untrusted input:
they are downloaded from hubs and loaded by people who did not write them. Everything they
say is checked here, in time linear in their size and before anything is allocated for
them, so that a file can neither crash the process nor make it allocate much more memory
than the file itself takes. The compiled core checks the same limits again
(csrc/lib/common/bounds.h), so that no caller can get past them either.

The limits hold every real vocabulary with room to spare (docs/security.md): the largest
published vocabularies have about a million ids and tokens of a few hundred bytes.

* :data:`MAX_VOCAB_SIZE` — every id, special ids included, is below it (4,194,304);
* :data:`MAX_TOKEN_BYTES` — the bytes of one token (1 MiB); a merged token's length is the
  sum of its parts', so a handful of merges that each double a token would otherwise ask
  for gigabytes;
* :data:`MAX_TOTAL_TOKEN_BYTES` — the bytes of all tokens together (64 MiB): a chain of
  merges that each add one byte would otherwise make a small file cost its square;
* :data:`MAX_FILE_BYTES` — a tokenizer or rank file (256 MiB).

Every refusal is a :class:`~functionalbpe.errors.TokenizerFileError` (or, for a table made
in memory, a :class:`~functionalbpe.errors.FunctionalBPEError`) that names the field and
the offending entry, cut to a readable length by :func:`excerpt`.

Example::

    >>> check_merges([(97, 97), (256, 256)], first_merge=256)
    >>> check_merges([(97, 300)], first_merge=256)
    Traceback (most recent call last):
    ...
    functionalbpe.errors.FunctionalBPEError: merges[0]: (97, 300) uses id 300, which does not exist before this merge (its id is 256)
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple, Type

from ..errors import FunctionalBPEError
from ._native import NATIVE
from .pairs import Pairs
from ..util.checks import excerpt

MAX_VOCAB_SIZE = 1 << 22
MAX_TOKEN_BYTES = 1 << 20
MAX_TOTAL_TOKEN_BYTES = 1 << 26
MAX_FILE_BYTES = 1 << 28
# The largest merge count a file may give (the fast trainer counts in 64 bits).
MAX_COUNT = (1 << 63) - 1
# Tables this long are checked in C first: below it the Python loop is as fast as the call.
_IN_C_FROM = 4096
# An atom is a private-use character of U+E000..U+EFFF: three bytes of UTF-8.
ATOM_BYTES = 3

# -- the merge table, however it was made -----------------------------------------------------


def check_merges(
    merges: Sequence[Tuple[int, int]],
    first_merge: int,
    special_bytes: int = 0,
    error: Type[FunctionalBPEError] = FunctionalBPEError,
) -> None:
    """Each merge joins two ids that exist before it, no pair is merged twice, and neither
    one token nor all of them together (with ``special_bytes`` of special tokens) pass the
    limits. A token's length is the sum of its parts', added up once per merge: linear, and
    no number grows past twice the limit. A large table, or one held as Pairs (read where it
    is, no Python object per id), is checked by the compiled core in one pass
    (csrc/lib/train/merge_table.c: 4.1 million merges in 0.5 s against 4.5 s here); only a
    table it refuses comes to this loop, to be told why."""
    if first_merge + len(merges) > MAX_VOCAB_SIZE:
        raise error(f"merges: {len(merges)} merges make more than {MAX_VOCAB_SIZE} ids (the limit)")
    compiled = NATIVE.trainer
    if compiled is not None and isinstance(merges, Pairs) and first_merge >= 256:
        if compiled.pair_ids_keep_the_rules(merges.ids, first_merge, special_bytes):
            return
    elif compiled is not None and type(merges) is list and first_merge >= 256 and len(merges) >= _IN_C_FROM:
        if compiled.merge_table_keeps_the_rules(merges, first_merge, special_bytes):
            return
        # Broken: the loop below finds the first rule it breaks and says why.

    def bad(k: int, why: str) -> FunctionalBPEError:
        return error(f"merges[{k}]: {excerpt(tuple(merges[k]))} {why}")

    if merges and min(map(min, merges)) < 0:
        k = next(k for k, pair in enumerate(merges) if min(pair) < 0)
        raise bad(k, f"uses id {min(merges[k])}, which does not exist before this merge (its id is {first_merge + k})")
    lengths: List[int] = [1] * 256 + [ATOM_BYTES] * (first_merge - 256)
    append = lengths.append
    for new, (a, b) in enumerate(merges, first_merge):
        if a >= new or b >= new:
            raise bad(new - first_merge, f"uses id {max(a, b)}, which does not exist before this merge (its id is {new})")
        size = lengths[a] + lengths[b]
        if size > MAX_TOKEN_BYTES:
            raise bad(new - first_merge, f"makes a token of {size} bytes; a token holds at most {MAX_TOKEN_BYTES} (the limit)")
        append(size)
    if sum(lengths) + special_bytes > MAX_TOTAL_TOKEN_BYTES:
        total = special_bytes + sum(lengths[:first_merge])
        if total > MAX_TOTAL_TOKEN_BYTES:
            raise error(f"special_tokens: {special_bytes} bytes of special tokens bring the tokens to more than "
                        f"{MAX_TOTAL_TOKEN_BYTES} bytes in all (the limit)")
        for k, size in enumerate(lengths[first_merge:]):
            total += size
            if total > MAX_TOTAL_TOKEN_BYTES:
                break
        raise bad(k, f"brings the tokens to more than {MAX_TOTAL_TOKEN_BYTES} bytes in all (the limit)")
    pairs = list(map(tuple, merges))
    if len(set(pairs)) != len(pairs):
        first_of: Dict[Tuple[int, ...], int] = {}
        for k, pair in enumerate(pairs):
            earlier = first_of.setdefault(pair, k)
            if earlier != k:
                raise bad(k, f"repeats merges[{earlier}]; a pair merges once")


def special_token_bytes(
    specials: Sequence[str], field: str = "special_tokens", error: Type[FunctionalBPEError] = FunctionalBPEError
) -> int:
    """Check the special tokens (non-empty, distinct, valid Unicode, within the limit);
    return the bytes they take in all."""
    seen = set()
    total = 0
    for token in specials:
        if not isinstance(token, str) or not token:
            raise error(f"{field}: {excerpt(token)} is not a special token (a non-empty string)")
        try:
            size = len(token.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise error(
                f"{field}: {excerpt(token)} is not valid Unicode (a lone surrogate at character {exc.start})"
            ) from None
        if size > MAX_TOKEN_BYTES:
            raise error(f"{field}: {excerpt(token)} is {size} bytes; a token holds at most {MAX_TOKEN_BYTES}")
        if token in seen:
            raise error(f"{field}: {excerpt(token)} is given twice")
        seen.add(token)
        total += size
    return total
