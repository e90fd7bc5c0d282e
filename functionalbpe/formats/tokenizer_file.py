"""The tokenizer file: one versioned UTF-8 JSON document, written atomically.

Layout (``"format": "functionalbpe/1"``)::

    {
      "format": "functionalbpe/1",
      "scheme": "plain", "scheme_options": {},
      "pattern": {"name": "gpt4", "regex": "..."},
      "merge_policy": "prefix",
      "atoms": [[57344, "ARG 0"], ...],        code point and name, in id order from 256
      "merges": [[104, 105], ...],             merge k has id 256 + len(atoms) + k
      "merge_counts": [1234, ...] or null,     the pair's count when it was merged
      "special_tokens": {"<|endoftext|>": 50000},
      "vocab_size": 50001,
      "byte_ids": [33, 34, ...],               only in a vocabulary imported with ids of its
                                               own (from_tiktoken, from_hf): each byte's id;
      "merge_ids": [300, 301, ...],            each merge's id where it is not 256 + k; then
                                               ids may leave gaps (functionalbpe/core/idmap.py)
      "joins": [[46, 1256, 1300], ...],        only in an imported vocabulary with tokens its
                                               merges cannot make: pairs (left, right, token,
                                               internal ids) that make a token besides its merge
      "whole_pieces": true,                    only when set: a piece that is a token's bytes is
                                               that token (tiktoken's rule, HF's ignore_merges)
      "training": {"objective": "parity", ...}  only after a weighted or parity-aware training
                                               of several languages: the objective, the mix
                                               and the parity options (docs/parity.md)
      "checksum": "sha256:..."                 over the canonical JSON of everything else
    }

The file is written to a temporary file next to the target and renamed over it, so a
reader never sees half a file. Loading checks everything and says what is wrong.

Example::

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.json")
    >>> write_payload(path, {"format": FORMAT, "merges": []}, check=False)
    >>> read_payload(path, check=False)["format"]
    'functionalbpe/1'
"""
from __future__ import annotations

import hashlib
import json
import os
from itertools import chain
from operator import eq
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Type

from ..core.limits import MAX_COUNT, MAX_TOTAL_TOKEN_BYTES, MAX_VOCAB_SIZE, special_token_bytes
from ..errors import FunctionalBPEError, TokenizerFileError
from ..util.checks import excerpt, is_int
from ..schemes.registry import scheme_from_file
from ..core.pairs import Pairs, json_rows
from .reading import DuplicateKey, json_with_pairs, read_bytes
from .sniff import LOADERS, kind_of

if TYPE_CHECKING:  # pragma: no cover
    from ..core.alphabet import Alphabet
    from ..core.idmap import IdMap
    from ..schemes.base import Scheme

FORMAT = "functionalbpe/1"

# The libraries a file given to Tokenizer.load may come from instead, as messages name them.
NAMES = {"hf": "Hugging Face tokenizer.json", "tiktoken": "tiktoken rank", "gpt2": "GPT-2 encoder.json/vocab.bpe"}



def checksum(payload: Dict[str, Any]) -> str:
    """The checksum of a payload: sha256 of its canonical JSON (UTF-8), checksum left out.

    A string that is not valid Unicode (a lone surrogate) cannot be written as UTF-8: that
    is a TokenizerFileError naming where it is.
    """
    body = {k: v for k, v in payload.items() if k != "checksum"}
    digest = hashlib.sha256()
    try:
        for part in _canonical_parts(body):
            digest.update(part)
    except UnicodeEncodeError:
        where = first_bad_text(body) or "a string"
        raise TokenizerFileError(f"{where} is not valid Unicode (it holds a lone surrogate)") from None
    return "sha256:" + digest.hexdigest()


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _canonical_parts(body: Dict[str, Any]) -> Iterator[bytes]:
    """The canonical JSON of ``body`` (json.dumps with sorted keys and no spaces, as UTF-8)
    in parts: merges held as Pairs are written a part at a time (core/pairs.py), so that the
    text of millions of merges is never all in memory at once (json.dumps of a 4.1-million
    merge payload took 100 MB and 0.9 s)."""
    if not any(isinstance(value, Pairs) for value in body.values()):
        yield _canonical(body)
        return
    for n, key in enumerate(sorted(body)):
        yield ("{" if not n else ",").encode() + _canonical(key) + b":"
        value = body[key]
        if isinstance(value, Pairs):
            yield b"["
            yield from json_rows(value, b",")
            yield b"]"
        else:
            yield _canonical(value)
    yield b"}"


def write_payload(path: "os.PathLike[str] | str", payload: Dict[str, Any], check: bool = True) -> None:
    from ..util.output import atomic_write_text  # only writing needs tempfile and its kin

    payload = dict(payload)
    if check:
        payload["checksum"] = checksum(payload)
    atomic_write_text(path, _format(payload))


def _format(payload: Dict[str, Any]) -> str:
    """JSON with one field per line and one merge (or atom) per line: diffable by eye."""
    fields = []
    for key, value in payload.items():
        if isinstance(value, Pairs):
            text = "[\n  " + b"".join(json_rows(value, b",\n  ")).decode("ascii") + "\n ]" if value else "[]"
        elif isinstance(value, list) and value and isinstance(value[0], list):
            text = "[\n  " + ",\n  ".join(_rows(value)) + "\n ]"
        else:
            text = json.dumps(value, ensure_ascii=False)
        fields.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(fields) + "\n}\n"


def _rows(table: List[List[Any]]) -> Iterable[str]:
    """The rows of a table as compact JSON. A table of int pairs or triples (merges, joins)
    is formatted with ``%``: the JSON encoder costs 5 µs a row (4 million merges: 22 s,
    against 3 s)."""
    widths = {len(row) for row in table}
    if len(widths) == 1 and all(type(v) is int for v in chain.from_iterable(table)):
        width = widths.pop()
        return map(("[" + ",".join(["%d"] * width) + "]").__mod__, map(tuple, table))
    return (json.dumps(row, ensure_ascii=False, separators=(",", ":")) for row in table)


def read_payload(path: "os.PathLike[str] | str", check: bool = True) -> Dict[str, Any]:
    other = kind_of(path) if isinstance(path, (str, os.PathLike)) else None
    if other not in (None, "functionalbpe") and os.path.isdir(path):  # a directory that holds one
        raise TokenizerFileError(
            f"{os.fspath(path)}: a directory of {NAMES[other]} files, not a functionalbpe tokenizer file; load "
            f"it with {LOADERS[other]}"
        )
    raw = read_bytes(path)  # a path that is not one is refused here
    name = os.fsdecode(os.fspath(path))
    if other not in (None, "functionalbpe"):
        raise TokenizerFileError(
            f"{name}: a {NAMES[other]} file, not a functionalbpe tokenizer file; load it with {LOADERS[other]}"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TokenizerFileError(
            f"{name}: not a functionalbpe tokenizer file (invalid UTF-8 at byte offset {exc.start})"
        ) from None
    del raw  # the text is all that is read from here on: the file's size less at the peak
    if not text.strip():
        raise TokenizerFileError(f"{name}: the file is empty")
    try:
        payload = json_with_pairs(text, ("merges",))
    except json.JSONDecodeError as exc:
        hint = " (the file looks truncated)" if exc.pos >= len(text.rstrip()) else ""
        raise TokenizerFileError(
            f"{name}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}"
        ) from None
    except DuplicateKey as exc:
        raise TokenizerFileError(f"{name}: the key {excerpt(exc.args[0])} appears twice in one object") from None
    except RecursionError:
        raise TokenizerFileError(f"{name}: the JSON is nested too deeply for a tokenizer file") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise TokenizerFileError(f"{name}: not a tokenizer file: {str(exc)[:100]}") from None
    if not isinstance(payload, dict) or "format" not in payload:
        raise TokenizerFileError(f"{name}: not a functionalbpe tokenizer file (no \"format\" field)")
    if payload["format"] != FORMAT:
        raise TokenizerFileError(
            f"{name}: format is {excerpt(payload['format'])} but this version of functionalbpe reads "
            f"{FORMAT!r}; load it with the version that wrote it"
        )
    if not check:
        return payload
    for key, kind in REQUIRED.items():
        if key not in payload:
            raise TokenizerFileError(f"{name}: the field {key!r} is missing")
        if not _has_type(payload[key], kind):
            raise TokenizerFileError(
                f"{name}: the field {key!r} should be a {kind.__name__}, found {type(payload[key]).__name__}"
            )
    try:
        expected = checksum(payload)
    except TokenizerFileError as exc:
        raise TokenizerFileError(f"{name}: {exc}") from None
    except RecursionError:
        raise TokenizerFileError(f"{name}: the JSON is nested too deeply for a tokenizer file") from None
    if payload["checksum"] != expected:
        raise TokenizerFileError(
            f"{name}: checksum mismatch: the file was changed or damaged after it was written; "
            "retrain, or restore it from a copy"
        )
    return payload


# -- the fields of a file (or a pickle) ---------------------------------------------------------


def _has_type(value: Any, kind: type) -> bool:
    """Whether a field's value has the type it must have: merges read as Pairs
    (formats/reading.py) are a list of the file too."""
    if kind is list and isinstance(value, Pairs):
        return True
    return isinstance(value, kind) and (kind is not int or is_int(value))

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
        if not _has_type(value, kind):
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
    if not isinstance(merges, Pairs):  # Pairs are pairs of ids below 2**32 already
        _check_id_lists(merges, 2, "merges", "a merge (a pair of integer ids)", error)
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
    joins = payload.get("joins", [])
    if not isinstance(joins, list) or len(joins) > MAX_TOTAL_TOKEN_BYTES:
        raise error(f"joins: {excerpt(joins)} is not a list of (left, right, token) ids")
    _check_id_lists(joins, 3, "joins", "a join (three integer ids: left, right, token)", error)
    if not isinstance(payload.get("whole_pieces", False), bool):
        raise error(f"whole_pieces: {excerpt(payload['whole_pieces'])} should be true or false")
    training = payload.get("training")
    if training is not None and not isinstance(training, dict):
        raise error(f"training: {excerpt(training)} is not a description of the training (a JSON object)")
    if not 0 < payload["vocab_size"] <= MAX_VOCAB_SIZE:
        raise error(f"vocab_size: {excerpt(payload['vocab_size'])} is not in 1..{MAX_VOCAB_SIZE}")


def _check_id_lists(items: List[Any], size: int, field: str, what: str, error: Type[FunctionalBPEError]) -> None:
    """Each item a list of ``size`` plain ints, checked in C over the whole list (a loop would
    be the slow part), and only then looked through for the first bad one, to name it."""
    if items and not (
        set(map(type, items)) == {list} and set(map(len, items)) == {size}
        and set(map(type, chain.from_iterable(items))) == {int}
    ):
        k = next(k for k, m in enumerate(items) if not (type(m) is list and len(m) == size and all(map(is_int, m))))
        raise error(f"{field}[{k}]: {excerpt(items[k])} is not {what}")


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


# The fields every file has, with their types (check_fields looks further).
REQUIRED = {**FIELDS, "checksum": str}


# -- a tokenizer's parts to and from a payload ------------------------------------------------


def payload_of(
    scheme: "Scheme",
    merge_policy: str,
    alphabet: "Alphabet",
    merge_counts: "Optional[List[int]]",
    special_tokens: Dict[str, int],
    idmap: "IdMap",
    training: "Optional[Dict[str, Any]]",
    joins: "Sequence[Tuple[int, int, int]]" = (),
    whole_pieces: bool = False,
) -> Dict[str, Any]:
    """The JSON data of a tokenizer file for a tokenizer's parts (``Tokenizer.to_payload``)."""
    payload: Dict[str, Any] = {
        "format": FORMAT,
        "scheme": scheme.name,
        "scheme_options": scheme.options(),
        "pattern": {"name": scheme.pattern_name, "regex": scheme.pattern},
        "merge_policy": merge_policy,
        "atoms": [[ord(a.char), a.name] for a in alphabet.atoms],
        "merges": alphabet.merges,  # Pairs, written a part at a time (to_payload gives lists)
        "merge_counts": merge_counts,
        "special_tokens": special_tokens,
        "vocab_size": idmap.size,
    }
    if not idmap.identity:
        # Only imported vocabularies have these: their bytes and merges keep their own ids.
        payload["byte_ids"] = idmap.byte_ids
        merge_ids = idmap.merge_ids  # an array (core/idmap.py): compared an id at a time, written as a list
        if len(merge_ids) != alphabet.first_special - alphabet.first_merge or \
                not all(map(eq, merge_ids, range(alphabet.first_merge, alphabet.first_special))):
            payload["merge_ids"] = list(merge_ids)
    # Written only when there are some, so that every other file is what it always was.
    if joins:
        payload["joins"] = [list(j) for j in joins]
    if whole_pieces:
        payload["whole_pieces"] = True
    if training is not None:
        payload["training"] = training
    return payload


def parts_from_payload(payload: Any) -> "Tuple[Scheme, Dict[str, Any]]":
    """The scheme of a payload (a file's contents, a pickle's state) and the rest of the
    tokenizer's constructor arguments, every field checked first (:func:`check_fields`)."""
    check_fields(payload)
    try:
        scheme = scheme_from_file(payload["scheme"], payload["pattern"]["regex"], payload["scheme_options"])
    except (FunctionalBPEError, KeyError, TypeError) as exc:
        raise TokenizerFileError(f"the scheme cannot be rebuilt: {exc}") from None
    atoms = [[ord(a.char), a.name] for a in scheme.atoms]
    if payload["atoms"] != atoms:
        raise TokenizerFileError(
            f"the atoms do not match those of scheme {scheme.name!r} in this version "
            f"({len(payload['atoms'])} in the file, {len(atoms)} expected)"
        )
    specials = payload["special_tokens"]
    return scheme, {
        "merges": payload["merges"],  # Pairs, or pairs of plain ints (check_fields): Alphabet makes them Pairs
        "special_tokens": list(specials),
        "merge_policy": payload["merge_policy"],
        "merge_counts": payload.get("merge_counts"),
        "byte_ids": payload.get("byte_ids"),
        "special_ids": list(specials.values()),
        "merge_ids": payload.get("merge_ids"),
        "joins": [tuple(j) for j in payload.get("joins", [])],
        "whole_pieces": payload.get("whole_pieces", False),
    }
