"""HF `tokenizer.json` (and a `save_pretrained` directory), written and read as plain data.

What :func:`tokenizer_json` writes: a ``Split`` pre-tokenizer with the pattern, then
``ByteLevel`` (bytes as printable characters, :mod:`.bytelevel`, no regex of its own), a
``BPE`` model whose vocabulary and merges are the tokenizer's, written in those characters,
special tokens as added tokens, a ``ByteLevel`` decoder. Given a directory, :func:`write_hf`
writes what ``save_pretrained`` would: that file, ``tokenizer_config.json`` naming the class
and the special tokens' roles, and ``special_tokens_map.json``, so that transformers'
``AutoTokenizer`` loads it with bos/eos/pad set.

What :func:`read_hf` reads: a byte-level BPE ``tokenizer.json`` — GPT-2's ``ByteLevel``
pre-tokenizer, or a ``Split`` regex then ``ByteLevel`` — with its ids kept whatever their
layout; anything that would make HF's ids differ from ours (a normalizer, a post-processor
that adds tokens, another model) is refused, naming the part.

Example::

    >>> ranks = {bytes([b]): b + 1 for b in range(256)} | {b" a": 257}
    >>> doc = tokenizer_json(ranks, [(b" ", b"a")], r"\\s?\\w+", {"<s>": 0}, True)
    >>> doc["model"]["vocab"]["Ġa"], doc["model"]["merges"], doc["added_tokens"][0]["content"]
    (257, ['Ġ a'], '<s>')
    >>> read_hf(doc).merges, read_hf(doc).merge_ids, read_hf(doc).special_tokens
    ([(32, 97)], [257], {'<s>': 0})
"""
from __future__ import annotations

import json
import os
import re
import sys
from array import array
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..core._native import NATIVE
from ..core.alphabet import NUM_BYTES
from ..core.pairs import Pairs
from ..core.limits import MAX_TOKEN_BYTES, MAX_VOCAB_SIZE
from ..errors import FunctionalBPEError, OutputError, TokenizerFileError
from ..schemes.base import NORMAL_FORMS
from ..text.patterns import GPT2
from ..util.checks import PathLike, excerpt, is_int
from ..util.output import atomic_write_text
from . import bytelevel
from .imported import Imported
from .reading import DuplicateKey, object_at, read_bytes, read_json


def tokenizer_json(
    ranks: Dict[bytes, int],
    merges: Sequence[Tuple[bytes, bytes]],
    pattern: str,
    special_tokens: Dict[str, int],
    ignore_merges: bool,
    normalize: Optional[str] = None,
) -> Dict[str, Any]:
    """The ``tokenizer.json`` document of a byte-level BPE vocabulary: ``ranks`` (token bytes
    → id), ``merges`` (as byte pairs, in order), the ``pattern`` regex and the special tokens.
    ``ignore_merges``: a word that is a token may skip the merges (only if the merges would
    give that very token)."""
    written = bytelevel.written
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
            for s, i in special_tokens.items()
        ],
        "normalizer": None if normalize is None else {"type": normalize},
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
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
            "ignore_merges": ignore_merges,
            "vocab": {written(data): i for data, i in ranks.items()},
            "merges": [f"{written(a)} {written(b)}" for a, b in merges],
        },
    }


# The special-token roles transformers knows, as ``to_hf`` takes them.
ROLES = ("bos_token", "eos_token", "pad_token", "unk_token")


def transformers_config(
    special_tokens: Dict[str, int], roles: Dict[str, Optional[str]], model_max_length: Optional[int]
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """``tokenizer_config.json`` and ``special_tokens_map.json`` for a ``tokenizer.json`` with
    these special tokens: the class to load (``PreTrainedTokenizerFast``, which both
    transformers 4.x and 5.x resolve), each named role, and every special token marked
    special (so that ``skip_special_tokens`` drops it).

    >>> config, roles = transformers_config({"<s>": 3, "<pad>": 4}, {"eos_token": "<s>", "pad_token": "<pad>"}, 512)
    >>> config["tokenizer_class"], config["eos_token"], config["model_max_length"], roles["pad_token"]
    ('PreTrainedTokenizerFast', '<s>', 512, '<pad>')
    """
    named = {role: token for role, token in roles.items() if token is not None}
    for role, token in named.items():
        if token not in special_tokens:
            raise FunctionalBPEError(
                f"{role}={token!r} is not a special token of this tokenizer (it has "
                f"{excerpt(sorted(special_tokens))}); train with special_tokens=[..., {token!r}] to have it"
            )
    others = [s for s in special_tokens if s not in named.values()]
    special_map: Dict[str, Any] = dict(named)
    if others:
        special_map["additional_special_tokens"] = others
    config: Dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "clean_up_tokenization_spaces": False,
        "added_tokens_decoder": {
            str(i): {"content": s, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False, "special": True}
            for s, i in special_tokens.items()
        },
        **special_map,
    }
    if model_max_length is not None:
        if not is_int(model_max_length) or model_max_length <= 0:
            raise FunctionalBPEError(f"model_max_length={model_max_length!r} is not a positive integer")
        config["model_max_length"] = model_max_length
    return config, special_map


def write_hf(
    path: PathLike,
    document: Dict[str, Any],
    roles: Dict[str, Optional[str]],
    model_max_length: Optional[int],
) -> Tuple[str, ...]:
    """Write ``document`` (a ``tokenizer.json``) to ``path``: the file alone if the path ends
    in ``.json``, else a directory as ``save_pretrained`` leaves it (with
    :func:`transformers_config`). Missing directories are created; each file is written
    atomically; every error names ``path`` as given. Returns the files written, as
    ``save_pretrained`` does."""
    name = os.fspath(path)
    if not name:
        raise OutputError("the output path is empty; give a directory (or a path ending in .json)")
    specials = {entry["content"]: entry["id"] for entry in document["added_tokens"]}
    config, special_map = transformers_config(specials, roles, model_max_length)
    text = json.dumps(document, ensure_ascii=False, indent=1) + "\n"
    if name.endswith(".json"):
        _make_directory(os.path.dirname(name), name)
        atomic_write_text(name, text)
        return (name,)
    _make_directory(name, name)
    written = [os.path.join(name, "tokenizer.json")]
    atomic_write_text(written[0], text)
    for file_name, content in (("tokenizer_config.json", config), ("special_tokens_map.json", special_map)):
        written.append(os.path.join(name, file_name))
        atomic_write_text(written[-1], json.dumps(content, ensure_ascii=False, indent=2) + "\n")
    return tuple(written)


def _make_directory(directory: str, name: str) -> None:
    if not directory or os.path.isdir(directory):
        return
    try:
        os.makedirs(directory)
    except FileExistsError:
        raise OutputError(
            f"{name}: cannot write there: {directory} is a file, not a directory (give a directory, "
            "or a path ending in .json for tokenizer.json alone)"
        ) from None
    except OSError as exc:
        # makedirs names the first part it could not make: a file in the way, a permission.
        raise OutputError(f"{name}: cannot create the directory: {exc.strerror or exc}") from None


def read_hf(source: Any, origin: Optional[str] = None) -> Imported:
    """Read a byte-level BPE ``tokenizer.json``: a path, a directory holding one, a
    ``tokenizers.Tokenizer``, a transformers fast tokenizer, or the parsed document.

    Refused, naming the part (a :class:`TokenizerFileError`): another model than BPE, byte
    fallback or subword prefixes, a normalizer (it changes the text), a post-processor that
    adds tokens, a pre-tokenizer other than ``ByteLevel`` or ``Split`` + ``ByteLevel``,
    added tokens that strip spaces, and vocabularies that are not a merge table over all
    256 bytes. ``origin`` names the source in messages (default: its path, or "the
    tokenizer.json document")."""
    document, named = _document(source)
    origin = named if origin is None else origin
    if not isinstance(document, dict) or not isinstance(document.get("model"), dict):
        raise TokenizerFileError(f"{origin}: not a tokenizer.json (no 'model' object)")
    model = document["model"]
    if model.get("type", "BPE") != "BPE":
        _refuse(origin, "model", f"the model is {model.get('type')!r}; only BPE can be imported")
    for key in ("byte_fallback", "continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            _refuse(origin, f"model.{key}", f"{excerpt(model[key])} is not byte-level BPE")
    dropout = model.get("dropout")
    if dropout is not None and not (type(dropout) in (int, float) and dropout == 0):
        # Not honoured: HF would skip merges at random on every encode, and an import gives
        # one deterministic encoding. BPE-dropout is asked for per call: encode(dropout=p).
        _refuse(origin, "model.dropout", f"{excerpt(dropout)} makes HF skip merges at random when it encodes "
                "(use tok.encode(text, dropout=p) on the imported tokenizer instead)")
    normalize = _normal_form(document.get("normalizer"), origin)
    _check_post_processor(document.get("post_processor"), origin)
    pattern = _pattern(document.get("pre_tokenizer"), origin)
    specials = _added_tokens(document.get("added_tokens") or [], origin)
    vocab, merges = model.get("vocab"), model.get("merges")
    if _compiled(vocab, merges):
        got = _compiled_merge_table(vocab, merges, specials)
        if got is None:  # not a merge table: the reading of the whole document in Python says why
            return read_hf(read_json(named, "tokenizer.json"), origin)
        byte_ids, table, merge_ids, joins = got
        return Imported(byte_ids, table, merge_ids, pattern, specials, bool(model.get("ignore_merges")), origin, joins,
                        normalize)
    if not isinstance(vocab, dict) or not isinstance(merges, list):
        raise TokenizerFileError(f"{origin}: model: the vocab (an object) or the merges (a list) are missing")
    if len(vocab) > MAX_VOCAB_SIZE or len(merges) > MAX_VOCAB_SIZE:
        raise TokenizerFileError(f"{origin}: model: more than {MAX_VOCAB_SIZE} tokens or merges")
    byte_ids, table, merge_ids, joins = _merge_table(vocab, merges, specials, origin)
    return Imported(byte_ids, table, merge_ids, pattern, specials, bool(model.get("ignore_merges")), origin, joins,
                    normalize)


def _document(source: Any) -> Tuple[Any, str]:
    if isinstance(source, dict):
        return source, "the tokenizer.json document"
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        path = os.path.join(name, "tokenizer.json") if os.path.isdir(name) else name
        return _read_document(path), path
    # A library object is only possible if its library is loaded: look there, import nothing.
    tokenizers = sys.modules.get("tokenizers")
    if tokenizers is not None and isinstance(source, tokenizers.Tokenizer):
        return json.loads(source.to_str()), "the tokenizers.Tokenizer"
    transformers = sys.modules.get("transformers")
    if transformers is not None and isinstance(source, transformers.PreTrainedTokenizerFast):
        return json.loads(source.backend_tokenizer.to_str()), f"the {type(source).__name__}"
    raise FunctionalBPEError(
        "from_hf takes the path of a tokenizer.json, a directory holding one, a tokenizers.Tokenizer "
        f"or a transformers fast tokenizer, not a {type(source).__name__}"
    )


def _refuse(origin: str, part: str, why: str) -> None:
    raise TokenizerFileError(f"{origin}: {part}: {why}; functionalbpe imports byte-level BPE as HF would encode it (docs/interop.md)")


def _kind(component: Any) -> str:
    return repr(component.get("type")) if isinstance(component, dict) else excerpt(component)


def _normal_form(normalizer: Any, origin: str) -> Optional[str]:
    """The Unicode normal form a normalizer applies (Qwen's ``NFC``, alone or as the one
    step of a Sequence), None for none; any other normalizer is refused: it changes the text
    in a way no scheme here does."""
    if _empty(normalizer, "normalizers"):
        return None
    steps = normalizer.get("normalizers") if isinstance(normalizer, dict) and normalizer.get("type") == "Sequence" else [normalizer]
    if isinstance(steps, list) and len(steps) == 1 and isinstance(steps[0], dict) and steps[0].get("type") in NORMAL_FORMS:
        return str(steps[0]["type"])
    _refuse(origin, "normalizer", f"a {_kind(normalizer)} normalizer changes the text before BPE (only NFC, NFD, NFKC "
            "or NFKD alone can be imported)")
    return None  # not reached: _refuse raises


def _empty(component: Any, list_key: str) -> bool:
    """No component, or a Sequence of none."""
    return component is None or (
        isinstance(component, dict) and component.get("type") == "Sequence" and not component.get(list_key)
    )


def _check_post_processor(processor: Any, origin: str) -> None:
    # ByteLevel's post-processor only trims offsets, and a template of the text alone (what
    # transformers 5 sets when no BOS/EOS is added) adds nothing; the others add tokens.
    parts = processor.get("processors") if isinstance(processor, dict) and processor.get("type") == "Sequence" else [processor]
    if parts is not None and not isinstance(parts, list):
        raise TokenizerFileError(f"{origin}: post_processor.processors: should be a list, found {excerpt(parts)}")
    for part in parts or []:
        if part is None or (isinstance(part, dict) and part.get("type") == "ByteLevel"):
            continue
        if isinstance(part, dict) and part.get("type") == "TemplateProcessing":
            single = part.get("single")
            if isinstance(single, list) and all(isinstance(item, dict) and list(item) == ["Sequence"] for item in single):
                continue
        _refuse(origin, "post_processor", f"a {_kind(part)} post-processor adds tokens to what is encoded")


def _pattern(pre: Any, origin: str) -> str:
    """The regex that cuts text as the pre-tokenizer does."""
    steps = pre.get("pretokenizers") if isinstance(pre, dict) and pre.get("type") == "Sequence" else [pre]
    if not isinstance(steps, list) or not steps or not all(isinstance(s, dict) for s in steps):
        _refuse(origin, "pre_tokenizer", f"{_kind(pre)} is not ByteLevel or Split + ByteLevel")
    *splits, last = steps
    if last.get("type") != "ByteLevel":
        _refuse(origin, "pre_tokenizer", f"the last step is {_kind(last)}, not ByteLevel")
    if last.get("add_prefix_space"):
        _refuse(origin, "pre_tokenizer", "ByteLevel with add_prefix_space puts a space before the text")
    uses_regex = last.get("use_regex", True)
    if not splits:
        if not uses_regex:
            _refuse(origin, "pre_tokenizer", "ByteLevel without its regex does not cut the text at all")
        return GPT2  # ByteLevel's own regex is GPT-2's
    if len(splits) != 1 or uses_regex:
        _refuse(origin, "pre_tokenizer", "only one Split before a ByteLevel without its own regex can be imported")
    split = splits[0]
    pattern = split.get("pattern") if isinstance(split.get("pattern"), dict) else {}
    if split.get("type") != "Split" or split.get("behavior") != "Isolated" or split.get("invert") or "Regex" not in pattern:
        _refuse(origin, "pre_tokenizer", f"{excerpt(split)} is not a Split on a regex that isolates its matches")
    if not isinstance(pattern["Regex"], str) or not pattern["Regex"]:
        _refuse(origin, "pre_tokenizer", "the Split regex is not a string")
    return as_oniguruma_reads(str(pattern["Regex"]), origin)


# An atom followed by a counted repeat and a +: one escape (\p{N}, \d), a set without nested
# brackets, or one character. After a group, the same is refused.
_COUNTED_PLUS = re.compile(r"(\\[pP]\{\w+\}|\\.|\[(?:\\.|[^\]\\])*\]|[^\\()\[\]{}|])(\{\d+(?:,\d*)?\})\+")
_GROUP_COUNTED_PLUS = re.compile(r"\)\{\d+(?:,\d*)?\}\+")


def as_oniguruma_reads(regex: str, origin: str = "the pattern") -> str:
    r"""A Split regex of a ``tokenizer.json`` as HF reads it. HF's engine (Oniguruma, Ruby's
    syntax) reads ``X{1,3}+`` not as possessive, as Python's ``regex`` and tiktoken do, but as
    ``(?:X{1,3})+``: cl100k's ``\p{N}{1,3}+`` takes a whole run of digits in HF and three in
    tiktoken, so the same file gives other ids in each. The regex is rewritten to what HF does
    (``?+ *+ ++`` are possessive in both); a counted repeat with + after a group is refused.

    >>> print(as_oniguruma_reads(r"\p{N}{1,3}+|\s+"))
    (?:\p{N}{1,3})+|\s+
    """
    rewritten = _COUNTED_PLUS.sub(r"(?:\1\2)+", regex)
    if _GROUP_COUNTED_PLUS.search(regex):
        _refuse(origin, "pre_tokenizer", "the Split regex repeats a group with {m,n}+, which HF reads as a repeated "
                "repeat and other engines as possessive; it cannot be imported exactly")
    return rewritten


def _added_tokens(entries: Any, origin: str) -> Dict[str, int]:
    """Added tokens become special tokens at their ids (HF matches each in any text: pass
    ``allowed_special="all"`` to encode as HF does)."""
    out: Dict[str, int] = {}
    if not isinstance(entries, list):
        raise TokenizerFileError(f"{origin}: added_tokens: not a list")
    for k, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str) or not is_int(entry.get("id")):
            raise TokenizerFileError(f"{origin}: added_tokens[{k}]: {excerpt(entry)} is not a token with an id")
        for flag in ("lstrip", "rstrip", "single_word"):
            if entry.get(flag):
                _refuse(origin, f"added_tokens[{k}]", f"{excerpt(entry['content'])} has {flag} set, which changes the text around it")
        if entry["content"] in out:
            raise TokenizerFileError(f"{origin}: added_tokens[{k}]: {excerpt(entry['content'])} is given twice")
        out[entry["content"]] = entry["id"]
    return out


def _merge_table(
    vocab: Dict[str, Any], merges: List[Any], specials: Dict[str, int], origin: str
) -> Tuple[List[int], List[Tuple[int, int]], List[int], List[Tuple[int, int, int]]]:
    """(the byte ids, the merges in the internal layout, the merge ids, the joins) of an HF
    vocabulary.

    HF ranks a pair by the place of its merge in the list, and a token may be made by more
    than one merge: the ``tokenizer.json`` that transformers' ``TikTokenConverter`` writes
    lists every pair of tokens that makes a token (Llama 3: 280,147 merges for 127,744
    tokens), in the order of the tokens' ranks, and a token's first merge may join a token
    made later (``Ġ`` + ``ĠĠĠ``). So the tokens are laid out in the order of their first
    merge (which is their rank); each takes as its merge the first of its merges whose two
    tokens come before it, and its other merges become joins (``Tokenizer(joins=...)``)."""
    # Tokens are kept as the file writes them: GPT-2's table gives one character per byte,
    # so distinct strings are distinct bytes and a merge's token is its two strings joined.
    # Only a file that fails the checks done over the whole vocabulary at once is read
    # token by token (_bad_vocab_entry), to name the first bad one. With the bytes of each
    # token and merge made one at a time, from_hf of a million merges took 13.4-14.8 s on a
    # quiet machine; with the collector also held off (exchange.py), 11.0-11.8 s.
    ids: Dict[str, int] = dict(vocab)  # every token but the added ones
    for token, ident in specials.items():
        if ids.get(token, -1) == ident:
            del ids[token]  # an added token kept in the vocabulary as well
    if not _plain_byte_level(ids):
        _bad_vocab_entry(ids, origin)
    chars = bytelevel.bytes_to_unicode()
    missing = [b for b in range(NUM_BYTES) if chars[b] not in ids]
    if missing:
        raise TokenizerFileError(
            f"{origin}: model.vocab: {len(missing)} of the 256 single bytes are not tokens (the first is "
            f"{bytes([missing[0]])!r}); byte-level BPE needs every byte (train with "
            "initial_alphabet=ByteLevel.alphabet())"
        )
    internal = {chars[b]: b for b in range(NUM_BYTES)}
    pairs: List[Tuple[str, str, str]] = []  # (left, right, token) of each merge
    seen = set()
    for k, merge in enumerate(merges):
        # HF writes a merge as "left right" or (since tokenizers 0.20) as [left, right].
        parts = merge.split(" ") if type(merge) is str else merge
        if not (type(parts) is list and len(parts) == 2 and type(parts[0]) is str and type(parts[1]) is str):
            raise TokenizerFileError(f"{origin}: model.merges[{k}]: {excerpt(merge)} is not a pair of tokens")
        left, right = parts
        if left not in ids or right not in ids:
            raise TokenizerFileError(f"{origin}: model.merges[{k}]: {excerpt(merge)} joins a token that is not in the vocabulary")
        joined = left + right
        if joined not in ids:
            raise TokenizerFileError(
                f"{origin}: model.merges[{k}]: {excerpt(merge)} makes {excerpt(bytelevel.read(joined))}, which is not "
                "in the vocabulary")
        pair = (left, right)
        if pair in seen:
            raise TokenizerFileError(f"{origin}: model.merges[{k}]: {excerpt(merge)} is listed twice")
        seen.add(pair)
        if joined not in internal:  # its first merge: its place in the order
            internal[joined] = len(internal)
        pairs.append((left, right, joined))
    del seen
    if len(internal) != len(ids):
        unmade = next(token for token in ids if token not in internal)
        raise TokenizerFileError(
            f"{origin}: model.vocab: the token {excerpt(bytelevel.read(unmade))} (id {ids[unmade]}) is neither a byte "
            "nor made by a merge; functionalbpe's vocabulary is the bytes and the merges"
        )
    # Each token's merge: the first of its merges whose tokens both come before it.
    chosen: Dict[str, Tuple[int, int]] = {}
    joins: List[Tuple[int, int, int]] = []
    for left, right, joined in pairs:
        a, b, t = internal[left], internal[right], internal[joined]
        if joined not in chosen and a < t and b < t:
            chosen[joined] = (a, b)
        else:
            joins.append((a, b, t))
    order = list(internal)[NUM_BYTES:]  # a dict keeps its order: that of the first merges
    never = next((token for token in order if token not in chosen), None)
    if never is not None:
        raise TokenizerFileError(
            f"{origin}: model.merges: every merge that makes {excerpt(bytelevel.read(never))} joins a token first "
            "made by a later merge; functionalbpe needs each token made by two tokens made before it"
        )
    table = [chosen[token] for token in order]
    return [ids[chars[b]] for b in range(NUM_BYTES)], table, [ids[token] for token in order], joins


def _plain_byte_level(ids: Dict[str, Any]) -> bool:
    """Whether every entry is a non-empty byte-level token of at most MAX_TOKEN_BYTES with
    an int id, checked over the whole table in C-level passes."""
    return (not ids or ("" not in ids and max(map(len, ids)) <= MAX_TOKEN_BYTES
                        and set(map(type, ids.values())) == {int}
                        and set("".join(ids)) <= set(bytelevel.bytes_to_unicode())))


def _bad_vocab_entry(ids: Dict[str, Any], origin: str) -> None:
    """Raise the error of the first entry that is not a token with an id."""
    for token, ident in ids.items():
        data = bytelevel.read(token)
        if not is_int(ident):
            raise TokenizerFileError(f"{origin}: model.vocab: {excerpt(token)}: {excerpt(ident)} is not an id")
        if data is None or not data or len(data) > MAX_TOKEN_BYTES:
            raise TokenizerFileError(
                f"{origin}: model.vocab: {excerpt(token)} (id {ident}) is not a byte-level token (bytes written "
                f"as GPT-2's printable characters, at most {MAX_TOKEN_BYTES} of them)"
            )
    raise AssertionError("the checks over the whole vocabulary failed, and no entry does")


# -- the compiled reading of large vocabularies --------------------------------------------------
#
# A tokenizer.json of a million merges, parsed by json.loads and made a merge table by
# _merge_table, held a str and an int per token and a str, a tuple and a set entry per merge:
# 778 MB above the interpreter at the peak, 13.6 s of CPU; read here, 141 MB (the file's text
# and the vocabulary read from it; the tokenizer built after them 127 MB) and 1.7 s. The
# compiled core (csrc/lib/common/bytelevel_read.h) reads model.vocab as the tokens' bytes and
# ids, model.merges (and GPT-2's vocab.bpe) as pairs of entries, and makes the same merge
# table from them, with no Python object per token or merge (docs/security.md has the
# figures). It takes only the strict form and a table
# _merge_table would accept; for anything else the file is read again by json and the Python
# code above, so every error is the one it gives.


def _compiled(vocab: Any, merges: Any) -> bool:
    """Whether model.vocab and model.merges are as the compiled reading gave them."""
    module = NATIVE.tables
    return module is not None and isinstance(vocab, module.ByteLevelVocab) and isinstance(merges, array)


def _read_document(path: str) -> Any:
    """A tokenizer.json, with model.vocab and model.merges read by the compiled core where it
    takes them; else (or wherever the document is not strictly JSON) read_json's reading."""
    module = NATIVE.tables
    if module is None:
        return read_json(path, "tokenizer.json")
    # Read as the file's bytes, never as one str: GPT-2's characters make a str of two bytes a
    # character, and the bytes and that str together were three times the file.
    data = read_bytes(path, "tokenizer.json")
    tables: Dict[str, Any] = {}

    def model_field(key: str, pos: int) -> "Tuple[Any, int] | None":
        if key == "vocab":
            got = module.read_bytelevel_vocab(data, pos, MAX_VOCAB_SIZE, MAX_TOKEN_BYTES)
            tables["vocab"] = None if got is None else got[0]
            return got
        if key == "merges" and tables.get("vocab") is not None:
            return module.read_bytelevel_merges(data, pos, tables["vocab"], MAX_VOCAB_SIZE)
        return None

    def field(key: str, pos: int) -> "Tuple[Any, int] | None":
        return object_at(data, pos, model_field) if key == "model" and data[pos:pos + 1] == b"{" else None

    try:
        document, end = object_at(data, 0, field)
        if data[end:].strip(b" \t\n\r"):
            raise ValueError("extra data")
        model = document.get("model")
        read_in_part = tables.get("vocab") is not None and not _compiled(model.get("vocab"), model.get("merges"))
        if read_in_part:  # the vocabulary read here, the merges not: read it all as json does
            raise ValueError("model.merges")
    except (ValueError, DuplicateKey, RecursionError):  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
        del data
        return read_json(path, "tokenizer.json")  # which names the offset
    return document


def _compiled_merge_table(
    vocab: Any, pairs: "array[int]", specials: Dict[str, int]
) -> "Tuple[List[int], Pairs, Sequence[int], List[Tuple[int, int, int]]] | None":
    """_merge_table's result from the compiled reading; None where _merge_table would refuse
    the table (or might: the caller then reads the document in Python)."""
    removed = bytearray(len(vocab))
    for token, ident in specials.items():  # an added token kept in the vocabulary as well
        data = bytelevel.read(token)
        entry = vocab.find(data) if data else -1
        if entry >= 0 and type(ident) is int and vocab.id(entry) == ident:
            removed[entry] = 1
    got = NATIVE.tables.bytelevel_table(vocab, pairs, removed)
    return None if got is None else _imported_parts(got)


def _imported_parts(got: Tuple[Any, ...]) -> "Tuple[List[int], Pairs, Sequence[int], List[Tuple[int, int, int]]]":
    byte_ids, table, merge_ids, joins = got[:4]
    triples = iter(joins)
    # merge_ids stays the array it is (4 bytes an id, core/idmap.py): a list was 34 MB a million merges.
    return list(byte_ids), Pairs(table), merge_ids, list(zip(triples, triples, triples))


def _compiled_gpt2(encoder_json: PathLike, vocab_bpe: PathLike) -> Optional[Imported]:
    """read_gpt2's result from the compiled reading; None where it does not take the files
    (then read_gpt2 reads them in Python, and says what is wrong)."""
    module = NATIVE.tables
    if module is None:
        return None
    name, merges_name = os.fspath(encoder_json), os.fspath(vocab_bpe)
    # Each file read as read_gpt2 reads it, in its order, so that the first error is its.
    try:
        text = read_bytes(encoder_json, "GPT-2 encoder.json").decode("utf-8")
    except UnicodeDecodeError:
        return None
    got = module.read_bytelevel_vocab(text, 0, MAX_VOCAB_SIZE, MAX_TOKEN_BYTES)
    if got is None or text[got[1]:].strip(" \t\n\r"):
        return None
    del text
    vocab = got[0]
    try:
        lines = read_bytes(vocab_bpe, "GPT-2 vocab.bpe").decode("utf-8")
    except UnicodeDecodeError:
        return None
    pairs = module.read_bytelevel_lines(lines, vocab, MAX_VOCAB_SIZE)
    del lines
    if pairs is None:
        return None
    table = module.bytelevel_table(vocab, pairs, None)
    if table is None:
        return None
    removed, specials = table[4], {}
    entry = removed.find(1)
    while entry >= 0:  # neither a byte nor made by a merge: a special token, if it looks like one
        content = bytelevel.written(vocab.token(entry))
        if not _SPECIAL_LOOKING.fullmatch(content):
            return None
        specials[content] = vocab.id(entry)
        entry = removed.find(1, entry + 1)
    byte_ids, merges, merge_ids, joins = _imported_parts(table)
    return Imported(byte_ids, merges, merge_ids, GPT2, specials, False, f"{name} and {merges_name}", joins)


# -- GPT-2's own files ---------------------------------------------------------------------------


# What a special token of GPT-2's files looks like: <|endoftext|>, <pad>, [CLS].
_SPECIAL_LOOKING = re.compile(r"<[^<>\s]+>|\[[^\[\]\s]+\]")


def read_gpt2(encoder_json: PathLike, vocab_bpe: PathLike) -> Imported:
    """GPT-2's original files: ``encoder.json`` (each token in GPT-2's byte characters, and
    its id) and ``vocab.bpe`` (a ``#version`` line, then one merge a line, two tokens apart by
    a space), read as the byte-level BPE tokenizer they make — the HF ``tokenizer.json`` of
    GPT-2 says the same. ``<|endoftext|>`` (or any entry whose text is not GPT-2 bytes) is a
    special token at its id.

    >>> import json, os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> vocab = {bytelevel.written(bytes([b])): b for b in range(256)} | {"Ġa": 256, "<|endoftext|>": 257}
    >>> _ = open(os.path.join(d, "encoder.json"), "w").write(json.dumps(vocab))
    >>> _ = open(os.path.join(d, "vocab.bpe"), "w").write("#version: 0.2\\nĠ a\\n")
    >>> got = read_gpt2(os.path.join(d, "encoder.json"), os.path.join(d, "vocab.bpe"))
    >>> list(got.merges), got.special_tokens
    ([(32, 97)], {'<|endoftext|>': 257})
    """
    compiled = _compiled_gpt2(encoder_json, vocab_bpe)
    if compiled is not None:
        return compiled
    name = os.fspath(encoder_json)
    vocab = read_json(encoder_json, "GPT-2 encoder.json")
    if not isinstance(vocab, dict):
        raise TokenizerFileError(f"{name}: not an encoder.json (a JSON object of token: id)")
    merges_name = os.fspath(vocab_bpe)
    try:
        text = read_bytes(vocab_bpe, "GPT-2 vocab.bpe").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TokenizerFileError(f"{merges_name}: not a vocab.bpe (invalid UTF-8 at byte offset {exc.start})") from None
    merges = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or (number == 1 and line.startswith("#version")):
            continue
        if len(line.split(" ")) != 2:
            raise TokenizerFileError(f"{merges_name}: line {number}: {excerpt(line)} is not a merge (two tokens and a space)")
        merges.append(line)
    # A token that is neither a byte nor what a merge makes is a special token, if it looks
    # like one (<|endoftext|>, <pad>, [CLS]); any other is a token the merges cannot reach — a
    # vocab.bpe cut short, or the wrong one — and is refused, not turned into a special token.
    made = set(bytelevel.bytes_to_unicode()) | {line.replace(" ", "") for line in merges}
    added = [{"content": token, "id": ident, "special": True} for token, ident in vocab.items() if token not in made]
    unreachable = next((entry for entry in added if not _SPECIAL_LOOKING.fullmatch(entry["content"])), None)
    if unreachable is not None:
        raise TokenizerFileError(
            f"{name}: the token {excerpt(unreachable['content'])} (id {unreachable['id']}) is made by no merge of "
            f"{merges_name} ({len(merges)} merges for {len(vocab)} tokens): is vocab.bpe cut short, or another "
            "model's?"
        )
    document = {
        "model": {"type": "BPE", "vocab": vocab, "merges": merges},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "added_tokens": added,
    }
    return read_hf(document, origin=f"{name} and {merges_name}")
