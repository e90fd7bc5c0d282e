"""What a tokenizer may hold: the limits, and the checks made before anything is built.

A tokenizer file, a pickled tokenizer and a ``.tiktoken`` rank file are untrusted input:
they are downloaded from hubs and loaded by people who did not write them. Everything they
say is checked here, in time linear in their size and before anything is allocated for
them, so that a file can neither crash the process nor make it allocate much more memory
than the file itself takes. The compiled core checks the same limits again (csrc/lib/
limits.h), so that no caller can get past them either.

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

import reprlib
from itertools import chain
from typing import Any, Dict, List, Sequence, Tuple, Type

from .errors import FunctionalBPEError, TokenizerFileError

MAX_VOCAB_SIZE = 1 << 22
MAX_TOKEN_BYTES = 1 << 20
MAX_TOTAL_TOKEN_BYTES = 1 << 26
MAX_FILE_BYTES = 1 << 28
# The largest merge count a file may give (the fast trainer counts in 64 bits).
MAX_COUNT = (1 << 63) - 1
# An atom is a private-use character of U+E000..U+EFFF: three bytes of UTF-8.
ATOM_BYTES = 3

_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = 60
_repr.maxlong = 40
_repr.maxlevel = 2
_repr.maxlist = _repr.maxtuple = _repr.maxdict = 4


def excerpt(value: object) -> str:
    """``repr(value)`` cut to a readable length: a message never embeds a 20 KB token.

    >>> excerpt("x" * 1000)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxxxxxxx'"
    """
    return _repr.repr(value)


def is_int(value: object) -> bool:
    """A JSON integer: an ``int`` that is not a ``bool``."""
    return type(value) is int


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
    no number grows past twice the limit. (One loop does only what must be done in order;
    the rest runs in C over the whole table: a million merges take under a second.)"""
    if first_merge + len(merges) > MAX_VOCAB_SIZE:
        raise error(f"merges: {len(merges)} merges make more than {MAX_VOCAB_SIZE} ids (the limit)")

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


# -- the fields of a file (or a pickle) ---------------------------------------------------------

# Field -> the type it must have; "checksum" only in a file, "format" in both.
FIELDS: Dict[str, type] = {
    "format": str,
    "scheme": str,
    "scheme_options": dict,
    "pattern": dict,
    "merge_policy": str,
    "atoms": list,
    "merges": list,
    "special_tokens": dict,
    "vocab_size": int,
}


def check_fields(payload: Any, error: Type[FunctionalBPEError] = TokenizerFileError) -> None:
    """The structure of a tokenizer payload, field by field, before anything is built from it:
    types, sizes, ids and counts. What the fields mean together (merges defined before use,
    lengths, the scheme) is checked when the tokenizer is built."""
    if not isinstance(payload, dict):
        raise error(f"a tokenizer is a JSON object, found {type(payload).__name__}")
    for key, kind in FIELDS.items():
        if key not in payload:
            raise error(f"the field {key!r} is missing")
        value = payload[key]
        if not isinstance(value, kind) or (kind is int and not is_int(value)):
            raise error(f"the field {key!r} should be a {kind.__name__}, found {type(value).__name__}")
    for key in ("format", "scheme", "scheme_options", "pattern", "merge_policy", "atoms"):
        _check_text(payload[key], key, error)  # special tokens are checked below
    options = payload["scheme_options"]
    for key, value in options.items():
        if not isinstance(key, str) or not (value is None or isinstance(value, (bool, int, str))):
            raise error(f"scheme_options: {excerpt(key)}: {excerpt(value)} is not an option (a name and a scalar)")
    pattern = payload["pattern"]
    for key in ("name", "regex"):
        if not isinstance(pattern.get(key), str):
            raise error(f"pattern: the field {key!r} should be a string, found {excerpt(pattern.get(key))}")
    for k, atom in enumerate(payload["atoms"]):
        if not (isinstance(atom, list) and len(atom) == 2 and is_int(atom[0]) and isinstance(atom[1], str)):
            raise error(f"atoms[{k}]: {excerpt(atom)} is not an atom (a code point and a name)")
    merges = payload["merges"]
    if len(merges) > MAX_VOCAB_SIZE:
        raise error(f"merges: {len(merges)} merges; a tokenizer holds at most {MAX_VOCAB_SIZE} ids")
    # Pairs of plain ints, checked in C over the whole list (a loop would be the slow part).
    if merges and not (
        set(map(type, merges)) == {list} and set(map(len, merges)) == {2}
        and set(map(type, chain.from_iterable(merges))) == {int}
    ):
        k = next(k for k, m in enumerate(merges) if not (type(m) is list and len(m) == 2 and all(map(is_int, m))))
        raise error(f"merges[{k}]: {excerpt(merges[k])} is not a merge (a pair of integer ids)")
    counts = payload.get("merge_counts")
    if counts is not None:
        if not isinstance(counts, list) or len(counts) != len(merges):
            found = f"{len(counts)} counts" if isinstance(counts, list) else f"a {type(counts).__name__}"
            raise error(f"merge_counts: should be null or one count per merge ({len(merges)}), found {found}")
        if counts and not (set(map(type, counts)) == {int} and min(counts) >= 0 and max(counts) <= MAX_COUNT):
            k = next(k for k, c in enumerate(counts) if not (is_int(c) and 0 <= c <= MAX_COUNT))
            raise error(f"merge_counts[{k}]: {excerpt(counts[k])} is not a count (an integer in 0..2**63-1)")
    specials = payload["special_tokens"]
    special_token_bytes(list(specials), "special_tokens", error)
    seen: Dict[int, str] = {}
    for token, ident in specials.items():
        if not is_int(ident) or not 0 <= ident < MAX_VOCAB_SIZE:
            raise error(
                f"special_tokens: {excerpt(token)} has the id {excerpt(ident)}; an id is an integer in "
                f"0..{MAX_VOCAB_SIZE - 1}"
            )
        if ident in seen:
            raise error(f"special_tokens: {excerpt(token)} and {excerpt(seen[ident])} have the same id {ident}")
        seen[ident] = token
    for field, count in (("byte_ids", 256), ("merge_ids", len(merges))):
        ids = payload.get(field)
        if ids is not None and not (
            isinstance(ids, list) and len(ids) == count and all(is_int(i) and 0 <= i < MAX_VOCAB_SIZE for i in ids)
        ):
            raise error(f"{field}: {excerpt(ids)} is not a list of {count} ids in 0..{MAX_VOCAB_SIZE - 1}")
    training = payload.get("training")
    if training is not None and not isinstance(training, dict):
        raise error(f"training: {excerpt(training)} is not a description of the training (a JSON object)")
    if not 0 < payload["vocab_size"] <= MAX_VOCAB_SIZE:
        raise error(f"vocab_size: {excerpt(payload['vocab_size'])} is not in 1..{MAX_VOCAB_SIZE}")


def first_bad_text(value: Any, path: str = "") -> "str | None":
    """Where in ``value`` (JSON data) a string is not valid Unicode (it holds a lone
    surrogate, which a ``\\ud800`` escape puts there), as ``field[k] key: 'text'``; None if
    nowhere. Linear, and without recursion however deep the data.

    >>> first_bad_text({"special_tokens": {"<s>": 1, "\\ud800": 2}})
    "special_tokens key: '\\\\ud800'"
    """
    stack = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return f"{where}: {excerpt(item)}"
        elif isinstance(item, list):
            stack.extend((v, f"{where}[{k}]") for k, v in reversed(list(enumerate(item))))
        elif isinstance(item, dict):
            for k, v in reversed(list(item.items())):
                stack.append((v, f"{where}[{excerpt(k)}]" if where else str(k)))
                stack.append((k, f"{where} key" if where else "a key"))
    return None


def _check_text(value: Any, field: str, error: Type[FunctionalBPEError]) -> None:
    """Every string in ``value`` is valid Unicode (what UTF-8 and the regex engine take)."""
    where = first_bad_text(value, field)
    if where is not None:
        raise error(f"{where} is not valid Unicode (it holds a lone surrogate)")
