"""Tokenizer files, pickles and rank files written by an attacker.

A file is untrusted input (docs/security.md): whatever it holds, loading it either gives a
tokenizer that encodes and decodes losslessly or raises TokenizerFileError naming the field
and the entry, without crashing the process, allocating far more memory than the file
takes, or hanging. Each attack below was once a segfault, a multi-gigabyte load or a
minutes-long refusal; the fuzzer at the end mutates valid files of every scheme.

The loads that once cost gigabytes run in a subprocess under an address-space limit
(RLIMIT_AS), so that a regression fails the test instead of swapping the machine; under
AddressSanitizer (which reserves terabytes of address space) only the outcome is checked.
"""
from __future__ import annotations

import base64
import contextlib
import json
import os
import pickle
import resource
import signal
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path

import pytest

import functionalbpe as fb
from functionalbpe.core import limits

from functionalbpe.core import _native
from functionalbpe.errors import TokenizerFileError
from functionalbpe.formats.tokenizer_file import checksum, write_payload
from functionalbpe.formats.tiktoken import tiktoken_parts

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
SANITIZED = "asan" in os.environ.get("LD_PRELOAD", "")
# What a load may take beyond the interpreter: the largest legitimate table (64 MiB of
# token bytes, held in C and, on demand, in Python) fits several times over.
MEMORY_BUDGET = 1 << 30
SPECIALS = ["<|endoftext|>", "<|pad|>"]
TEXTS = ["Hello World!! héllo wörld 123 4567", "   indented\n\tcode(x) == y;  ", "ÆØÅ Ünïcödé ~~~ 😀<|pad|>!"]


@pytest.fixture(scope="module", params=["plain", "functional", "markers"])
def payload(request):
    """A valid payload of each scheme, with special tokens and merge counts."""
    text = " ".join(TEXTS) * 20 + " The the THE café CAFÉ aaaa bbbb 2024-01-01"
    tok = fb.train([text], vocab_size=None, scheme=request.param, special_tokens=SPECIALS, progress=False)
    return tok.to_payload()


def written(tmp_path: Path, payload: dict, name: str = "t.json") -> Path:
    path = tmp_path / name
    write_payload(path, payload)  # with a valid checksum: only the loader's checks stand
    return path


def refused(path: Path, match: str) -> str:
    with pytest.raises(TokenizerFileError, match=match) as info:
        fb.Tokenizer.load(path)
    message = str(info.value)
    assert len(message) < 600, f"the message should be cut to a readable length: {len(message)}"
    return message


def doubling(n: int) -> list:
    """Merges that double a token each time: token 256 + k is 2 ** (k + 1) bytes."""
    return [[97, 97]] + [[256 + k, 256 + k] for k in range(n - 1)]


def chain(n: int) -> list:
    """Merges that add one byte each time: n tokens of 2 .. n + 1 bytes, ~n²/2 in all."""
    return [[97, 97]] + [[256 + k, 97] for k in range(n - 1)]


def plain_payload(merges: list) -> dict:
    tok = fb.train(["x"], vocab_size=256, progress=False)
    return {**tok.to_payload(), "merges": merges, "merge_counts": None, "vocab_size": 256 + len(merges)}


def run_limited(code: str, limit: int = MEMORY_BUDGET, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter whose address space may grow by at most
    ``limit`` bytes beyond what importing functionalbpe takes; a hang guard of ``timeout``."""
    prelude = textwrap.dedent(
        f"""
        import resource, sys
        import functionalbpe as fb
        from functionalbpe.errors import TokenizerFileError
        if not {SANITIZED!r}:
            with open("/proc/self/statm") as fh:
                pages = int(fh.read().split()[0])
            size = pages * resource.getpagesize() + {limit}
            resource.setrlimit(resource.RLIMIT_AS, (size, size))
        """
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout,
    )


def load_limited(path: Path) -> str:
    """Load ``path`` in a limited subprocess; what it printed (the error, or "loaded")."""
    result = run_limited(
        f"""
        try:
            fb.Tokenizer.load({str(path)!r})
            print("loaded")
        except TokenizerFileError as exc:
            print("TokenizerFileError:", exc)
        """
    )
    assert result.returncode == 0, f"the load crashed or ran out of memory:\n{result.stderr[-3000:]}"
    return result.stdout


# -- the attacks, one test each -------------------------------------------------------------------


def test_doubling_merges_that_wrapped_the_c_offsets_are_refused(tmp_path):
    # 1.2 KB with a valid checksum; the token lengths summed past 2**64 and the C table
    # copied every merge past a few hundred bytes of malloc.
    path = written(tmp_path, plain_payload(doubling(64)))
    assert path.stat().st_size < 1500
    out = load_limited(path)
    assert out.startswith("TokenizerFileError:") and "merges[20]" in out and "1048576" in out


def test_thirty_doubling_merges_do_not_cost_gigabytes(tmp_path):
    out = load_limited(written(tmp_path, plain_payload(doubling(30))))
    assert "merges[20]" in out and "makes a token of 2097152 bytes" in out


def test_a_linear_chain_of_merges_does_not_cost_its_square(tmp_path):
    # 60,000 merges, 770 KB: the tokens would hold 1.8 GB together.
    out = load_limited(written(tmp_path, plain_payload(chain(60_000))))
    assert out.startswith("TokenizerFileError:") and "in all" in out
    assert str(limits.MAX_TOTAL_TOKEN_BYTES) in out


def test_tables_at_the_limits_load_and_work(tmp_path):
    # The largest token a table may make, and a chain as long as the total allows.
    biggest = doubling(20)  # a token of exactly MAX_TOKEN_BYTES
    tok = fb.Tokenizer.load(written(tmp_path, plain_payload(biggest)))
    assert len(tok.token_bytes(256 + 19)) == limits.MAX_TOKEN_BYTES
    assert tok.encode("a" * 1024) == [256 + 9]
    longest_chain = 11_000  # about 60 MB of tokens
    out = load_limited(written(tmp_path, plain_payload(chain(longest_chain)), "chain.json"))
    assert out.strip() == "loaded"


def test_threads_beyond_the_maximum_are_an_error_not_a_segfault():
    # threads * threads overflowed a C int at 46,341 and 65,537 crashed every time.
    result = run_limited(
        """
        for threads in (65537, 46341, 0, -1):
            try:
                fb.train(["a b c"] * 10, vocab_size=260, threads=threads, progress=False)
                print("trained", threads)
            except ValueError as exc:
                print("refused", threads, exc)
        """
    )
    assert result.returncode == 0, result.stderr[-3000:]
    if not _native.NATIVE.switched_off() and _native.NATIVE.scanner is not None:
        assert [line.split()[0] for line in result.stdout.splitlines()] == ["refused"] * 4
        assert str(_native.MAX_THREADS) in result.stdout


@pytest.mark.skipif(_native.NATIVE.scanner is None, reason="the compiled core is not built")
def test_the_c_entry_points_check_threads_themselves():
    scanner, encoder = _native.NATIVE.scanner, _native.NATIVE.encoder
    assert scanner.PieceCounter("gpt2", threads=_native.MAX_THREADS).threads == _native.MAX_THREADS
    bpe = encoder.BPE([], [(97, 97)])
    for threads in (_native.MAX_THREADS + 1, 0, -5, True, 2.5, "4"):
        with pytest.raises(ValueError, match="threads"):
            scanner.PieceCounter("gpt2", threads=threads)
        with pytest.raises(ValueError, match="threads"):
            bpe.encode_texts(["aa"], "gpt2", threads)
    assert bpe.encode_texts(["aaa", "a"], "gpt2", 3) == [[256, 97], [97]]


def test_the_limits_are_the_same_in_python_and_in_c():
    encoder = _native.NATIVE.encoder
    if encoder is None:
        pytest.skip("the compiled core is not built")
    assert encoder.LIMITS == {
        "MAX_VOCAB_SIZE": limits.MAX_VOCAB_SIZE,
        "MAX_TOKEN_BYTES": limits.MAX_TOKEN_BYTES,
        "MAX_TOTAL_TOKEN_BYTES": limits.MAX_TOTAL_TOKEN_BYTES,
        "MAX_THREADS": _native.MAX_THREADS,
    }


@pytest.mark.skipif(_native.NATIVE.encoder is None, reason="the compiled core is not built")
@pytest.mark.parametrize(
    "atoms, merges, specials",
    [
        ([], [(97, 97)] + [(256 + k, 256 + k) for k in range(63)], []),  # lengths past 2**64
        ([], [(97, 97)] + [(256 + k, 256 + k) for k in range(20)], []),  # one token too long
        ([], [(97, 97), (97, 97)], []),  # a pair merged twice
        ([], [(97, 300)], []),  # an id not defined before
        ([0x41], [], []),  # an atom outside U+E000..U+EFFF
        ([0xE000, 0xE000], [], []),  # the same atom twice
        ([], [], ["x" * (limits.MAX_TOKEN_BYTES + 1)]),  # a special token too long
    ],
)
def test_the_c_table_refuses_what_the_python_checks_refuse(atoms, merges, specials):
    # Defence in depth: the compiled table checks on its own, whoever calls it.
    with pytest.raises(ValueError, match="inconsistent|limit"):
        _native.NATIVE.encoder.BPE(atoms, merges, specials)


# -- every field of a file ------------------------------------------------------------------------


def mutated(payload: dict, key: str, value) -> dict:
    """``payload`` with ``key`` set to ``value`` (and no merge counts to disagree with
    changed merges)."""
    return {**payload, key: value, **({"merge_counts": None} if key == "merges" else {})}


def first(payload: dict) -> int:
    """The id of the first merge."""
    return 256 + len(payload["atoms"])


CASES = [
    # (field, value or function of the payload, what the message must say)
    ("merges", lambda p: p["merges"] + [[10**6, 1]], r"merges\[\d+\]: \(1000000, 1\) uses id 1000000"),
    ("merges", lambda p: p["merges"] + [[-1, 97]], r"uses id -1"),
    ("merges", lambda p: [[first(p) + 3, 97]] + p["merges"], r"merges\[0\]: .* does not exist before this merge"),
    ("merges", lambda p: p["merges"] + [p["merges"][0]], r"repeats merges\[0\]"),
    ("merges", lambda p: p["merges"] + [[97, True]], r"is not a merge"),
    ("merges", lambda p: p["merges"] + [[97, 98, 99]], r"is not a merge"),
    ("merges", lambda p: p["merges"] + [[97.0, 98]], r"is not a merge"),
    ("merges", lambda p: p["merges"] + [{"a": 1}], r"is not a merge"),
    ("merge_counts", lambda p: "many", r"merge_counts"),
    ("merge_counts", lambda p: [1] * (len(p["merges"]) - 1), r"merge_counts.*one count per merge"),
    ("merge_counts", lambda p: [1.5] * len(p["merges"]), r"merge_counts\[0\]: 1.5"),
    ("merge_counts", lambda p: [-1] * len(p["merges"]), r"merge_counts\[0\]: -1"),
    ("merge_counts", lambda p: [True] * len(p["merges"]), r"merge_counts\[0\]: True"),
    ("merge_counts", lambda p: [2**70] * len(p["merges"]), r"merge_counts\[0\]"),
    ("special_tokens", lambda p: {**p["special_tokens"], "": p["vocab_size"]}, r"special_tokens: '' is not"),
    ("special_tokens", lambda p: {"<a>": p["vocab_size"] - 2, "<b>": p["vocab_size"] - 2}, r"same id"),
    ("special_tokens", lambda p: {"<a>": 10**30, "<b>": 5}, r"'<a>' has the id 1000000000000000000"),
    ("special_tokens", lambda p: {"<a>": True, "<b>": 5}, r"'<a>' has the id True"),
    ("special_tokens", lambda p: {"<a>": 256, "<b>": p["vocab_size"] - 1}, r"the id 256 is given to two tokens|do not match"),
    ("special_tokens", lambda p: {"x" * (limits.MAX_TOKEN_BYTES + 1): 9}, r"'x+\.\.\.x+' is 1048577 bytes"),
    ("special_tokens", lambda p: ["<a>"], r"should be a dict"),
    ("byte_ids", lambda p: list(range(255)) + [0], r"the id 0 is given to two tokens"),
    ("merge_ids", lambda p: [-1] * len(p["merges"]), r"merge_ids: \[-1"),
    ("byte_ids", lambda p: "0123", r"byte_ids"),
    ("vocab_size", lambda p: p["vocab_size"] + 1, r"vocab_size says"),
    ("vocab_size", lambda p: 10**40, r"vocab_size: 1000000000000"),
    ("vocab_size", lambda p: True, r"'vocab_size' should be a int"),
    ("atoms", lambda p: p["atoms"] + [[0xE000, "X"]], r"atoms"),
    ("atoms", lambda p: [["x", 1]], r"atoms\[0\]"),
    ("scheme", lambda p: "nonsense", r"scheme cannot be rebuilt.*nonsense"),
    ("scheme_options", lambda p: {"case": [[[]]]}, r"scheme_options: 'case'"),
    ("scheme_options", lambda p: {"frobnicate": True}, r"scheme cannot be rebuilt"),
    ("pattern", lambda p: {"name": "custom", "regex": 5}, r"pattern: the field 'regex'"),
    ("pattern", lambda p: {"name": "custom", "regex": "("}, r"scheme cannot be rebuilt"),
    ("merge_policy", lambda p: "anything", r"merge_policy"),
]


@pytest.mark.parametrize("key, value, message", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_every_field_is_checked_with_a_message_naming_it(payload, tmp_path, key, value, message):
    bad = mutated(payload, key, value(payload))
    refused(written(tmp_path, bad), message)
    # Unpickling goes through the same checks.
    with pytest.raises(TokenizerFileError, match=message):
        fb.Tokenizer.from_payload(bad)


def test_a_merge_the_policy_forbids_is_refused(tmp_path):
    tok = fb.train(["Hello World hello world"] * 5, vocab_size=None, scheme="functional", progress=False)
    payload = tok.to_payload()
    operator = 256 + next(k for k, atom in enumerate(tok.scheme.atoms) if atom.name == "CAPITALIZE")
    # Under "prefix" an operator merges only with operators: CAPITALIZE + "h" is never made.
    bad = {**payload, "merges": payload["merges"] + [[operator, 104]], "merge_counts": None,
           "vocab_size": payload["vocab_size"] + 1}
    bad["special_tokens"] = {}
    refused(written(tmp_path, bad), r"merges\[\d+\].*merge policy 'prefix' never merges")
    assert fb.Tokenizer.load(written(tmp_path, {**bad, "merge_policy": "free"}, "free.json")).merges[-1] == (operator, 104)


def test_a_pickle_is_checked_like_a_file(payload):
    class Forged:
        def __init__(self, state):
            self.state = state

        def __reduce__(self):
            return object.__new__, (fb.Tokenizer,), self.state

    good = pickle.loads(pickle.dumps(Forged(payload)))
    assert good.decode(good.encode(TEXTS[0])) == TEXTS[0]
    for state in (
        {**payload, "merges": doubling(64), "merge_counts": None},
        {**payload, "merges": chain(60_000), "merge_counts": None},
        {**payload, "special_tokens": {"<a>": 10**30}},
        "not a payload",
    ):
        with pytest.raises(TokenizerFileError):
            pickle.loads(pickle.dumps(Forged(state)))


# -- the file itself ------------------------------------------------------------------------------


def raw_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "raw.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_deep_nesting_is_an_error_not_a_recursion_error(payload, tmp_path):
    deep = '{"format": "functionalbpe/1", "x": ' + "[" * 200_000 + "]" * 200_000 + "}"
    refused(raw_file(tmp_path, deep), "nested too deeply")
    shallow = {**payload, "scheme_options": {"case": json.loads("[" * 50 + "]" * 50)}}
    refused(written(tmp_path, shallow), "scheme_options")


def test_text_that_is_not_valid_unicode_is_refused(payload, tmp_path):
    # A \ud800 escape is valid JSON but no UTF-8: the checksum cannot even be computed.
    text = json.dumps({**payload, "special_tokens": {"<\ud800>": payload["vocab_size"]}, "checksum": "sha256:0"})
    refused(raw_file(tmp_path, text), r"special_tokens key: '<\\ud800>' is not valid Unicode")
    with pytest.raises(TokenizerFileError, match="not valid Unicode"):
        fb.Tokenizer.from_payload({**payload, "special_tokens": {"\udfff": payload["vocab_size"]}})


def test_huge_integers_and_duplicate_keys_are_refused(payload, tmp_path):
    text = json.dumps(payload).replace('"merges": [[', '"merges": [[' + "9" * 5000 + ", 1], [", 1)
    refused(raw_file(tmp_path, text), "not a tokenizer file|checksum")
    text = json.dumps(payload)[:-1] + ', "vocab_size": 3}'
    refused(raw_file(tmp_path, text), "'vocab_size' appears twice")
    refused(raw_file(tmp_path, "[]"), "no \"format\" field")
    refused(raw_file(tmp_path, json.dumps({"format": "x" * 10_000})), r"format is 'xxx")


def test_a_file_larger_than_the_limit_is_not_read_to_the_end(tmp_path, monkeypatch):
    monkeypatch.setattr("functionalbpe.formats.reading.MAX_FILE_BYTES", 1000)
    refused(raw_file(tmp_path, " " * 1001), "larger than 1000 bytes")
    if os.path.exists("/dev/zero"):
        refused(Path("/dev/zero"), "not a regular file")  # a device that never ends: not read at all
    refused(tmp_path, "is a directory")


# -- rank files -----------------------------------------------------------------------------------


def rank_file(tmp_path: Path, tokens: list) -> Path:
    """A .tiktoken file: the 256 bytes, then ``tokens`` from rank 256 on."""
    lines = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]
    lines += [f"{base64.b64encode(t).decode()} {256 + k}" for k, t in enumerate(tokens)]
    path = tmp_path / "ranks.tiktoken"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def test_a_long_token_in_a_rank_file_is_refused_at_once_with_a_short_message(tmp_path):
    # 20 KB: refused after 27 s, with all 20 KB in the message.
    for tokens in ([b"ab" * 10_000], [b"aa", b"a" * 20_000]):
        with pytest.raises(TokenizerFileError, match="not a merge of two tokens of lower rank") as info:
            fb.Tokenizer.from_tiktoken(rank_file(tmp_path, tokens))
        assert len(str(info.value)) < 400


def test_a_ladder_of_doubling_ranks_costs_n_log_n(tmp_path):
    # Each token twice the one before passes the length check; tiktoken's procedure on the
    # last (64 KiB less one byte, 17 parts) then takes O(n log n), not O(n²), lookups.
    tokens = [b"a" * 2**k for k in range(1, 16)] + [b"a" * (2**16 - 1)]
    with pytest.raises(TokenizerFileError, match=r"rank 271\) is not a merge .* as 16 tokens, and the tokens are too long to look"):
        fb.Tokenizer.from_tiktoken(rank_file(tmp_path, tokens))
    tok = fb.Tokenizer.from_tiktoken(rank_file(tmp_path, tokens[:-1]), "gpt4")
    assert tok.encode("a" * 2**15) == [256 + 14]


def naive_tiktoken_parts(ranks: dict, token: bytes, below: int) -> list:
    """tiktoken's procedure as tiktoken writes it: rescan for the lowest rank every time."""
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 1:
        best, at = below, -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1], below)
            if rank < best:
                best, at = rank, i
        if at < 0:
            break
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    return parts


@given(
    vocab=st.lists(st.text(alphabet="ab ", min_size=2, max_size=6).map(str.encode), max_size=24, unique=True),
    token=st.text(alphabet="ab ", min_size=1, max_size=40).map(str.encode),
)
def test_the_heap_procedure_is_tiktokens(vocab, token):
    ranks = {bytes([b]): b for b in range(256)}
    for t in vocab:
        ranks.setdefault(t, len(ranks))
    below = len(ranks)
    expected = naive_tiktoken_parts(ranks, token, below)
    assert tiktoken_parts(ranks, token, below) == expected
    encoder = _native.NATIVE.encoder
    if encoder is not None:  # the compiled procedure, on the token at its own rank
        ranks.setdefault(token, len(ranks))
        by_rank = sorted(ranks, key=ranks.get)
        r = ranks[token]
        parts = naive_tiktoken_parts(ranks, token, r)
        two = len(parts) == 2
        assert encoder.tiktoken_splits(by_rank)[r] == (
            len(parts), len(parts[0]), ranks[parts[0]] if two else -1, ranks[parts[1]] if two else -1)


@given(
    entries=st.lists(st.tuples(st.binary(min_size=1, max_size=4), st.integers(0, 300)), min_size=0, max_size=12),
    separator=st.sampled_from([b" "] * 6 + [b"  ", b"\t"]),
    end=st.sampled_from([b"\n"] * 6 + [b"\r\n", b""]),
    spoil=st.sampled_from([b""] * 8 + [b"=", b"!", b"A", b"\n", b" x", b"\n -1", b"\n= 7"]),
)
def test_a_rank_file_read_whole_is_what_it_is_read_line_by_line(entries, separator, end, spoil):
    # parse_ranks reads a file written as tiktoken writes one in one go; anything it takes
    # must be exactly what the line-by-line reading (which names the line it refuses) makes.
    from functionalbpe.formats import tiktoken as rank_files

    raw = b"".join(base64.b64encode(token) + separator + str(rank).encode() + b"\n" for token, rank in entries)
    raw = raw[:-1] + end + spoil if raw else spoil
    whole = rank_files._plain_ranks(raw)
    if whole is not None:
        assert list(whole.items()) == list(rank_files._ranks_line_by_line(raw, "r.tiktoken").items())
    try:
        expected = list(rank_files._ranks_line_by_line(raw, "r.tiktoken").items())
    except TokenizerFileError as exc:
        with pytest.raises(TokenizerFileError) as refused:
            rank_files.parse_ranks(raw, "r.tiktoken")
        assert str(refused.value) == str(exc)
    else:
        assert list(rank_files.parse_ranks(raw, "r.tiktoken").items()) == expected


# -- what training makes, a file can hold -------------------------------------------------------


@given(
    pieces=st.dictionaries(st.lists(st.sampled_from([97, 98, 256]), min_size=1, max_size=14).map(tuple),
                           st.integers(1, 5), max_size=8),
    limit=st.integers(1, 10),
)
def test_no_trainer_makes_a_token_longer_than_the_limit(pieces, limit):
    from functionalbpe.core import reference, trainer

    merges = reference.train(pieces, None, 257, max_token_bytes=limit)
    assert trainer.heap_train(pieces, None, 257, max_token_bytes=limit) == merges
    assert trainer.learn_merges_from_symbols(pieces, None, 257, max_token_bytes=limit) == merges  # C where it is built
    lengths = [1] * 256 + [limits.ATOM_BYTES]
    for a, b, _ in merges:
        lengths.append(lengths[a] + lengths[b])
        assert lengths[-1] <= limit


@pytest.mark.skipif(_native.NATIVE.switched_off(), reason="the reference trainer takes minutes on a 3 MiB piece")
def test_a_corpus_with_a_huge_piece_trains_a_tokenizer_that_saves_and_loads(tmp_path):
    text = " " * (3 << 20) + " x"
    tok = fb.train(text, vocab_size=300, progress=False)
    longest = max(len(tok.token_bytes(i)) for i in range(256, tok.vocab_size))
    assert longest == limits.MAX_TOKEN_BYTES
    tok.save(tmp_path / "t.json")
    again = fb.Tokenizer.load(tmp_path / "t.json")
    assert again == tok and again.decode(again.encode(text)) == text


# -- the fuzzer -----------------------------------------------------------------------------------


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
IDS = st.integers(-3, 600) | st.sampled_from([2**31, 2**32 - 1, 2**63, -(2**63), 10**40]) | st.booleans()
PATTERNS = st.sampled_from(["gpt2", "gpt4", "o200k", "", r"\s+|\S+", r"(?s).", "(", r"\w+|\W+"])


@st.composite
def mutations(draw, payload: dict) -> dict:
    """A valid payload changed in one to three ways an attacker (or bit rot) might."""
    out = json.loads(json.dumps(payload))
    for _ in range(draw(st.integers(1, 3))):
        merges = out["merges"] if isinstance(out.get("merges"), list) else []
        kind = draw(st.sampled_from([
            "id", "swap", "duplicate", "drop", "double", "chain", "special", "special_id", "option",
            "pattern", "nest", "field", "counts", "vocab_size", "truncate",
        ]))
        if kind == "id" and merges:
            k = draw(st.integers(0, len(merges) - 1))
            merges[k] = list(merges[k])
            merges[k][draw(st.integers(0, 1))] = draw(IDS)
        elif kind == "swap" and len(merges) > 1:
            i, j = draw(st.integers(0, len(merges) - 1)), draw(st.integers(0, len(merges) - 1))
            merges[i], merges[j] = merges[j], merges[i]
        elif kind == "duplicate" and merges:
            merges.append(merges[draw(st.integers(0, len(merges) - 1))])
        elif kind == "drop" and merges:
            del merges[draw(st.integers(0, len(merges) - 1))]
        elif kind == "double":
            start = 256 + (len(out["atoms"]) if isinstance(out.get("atoms"), list) else 0) + len(merges)
            merges += [[97, 97]] + [[start + k, start + k] for k in range(draw(st.integers(1, 70)))]
        elif kind == "chain":
            start = 256 + (len(out["atoms"]) if isinstance(out.get("atoms"), list) else 0) + len(merges)
            merges += [[97, 97]] + [[start + k, 97] for k in range(draw(st.sampled_from([10, 12_000, 30_000])))]
        elif kind == "special" and isinstance(out.get("special_tokens"), dict):
            token = draw(st.text(max_size=6) | st.sampled_from(["", "\ud800", "x" * 5000]))
            out["special_tokens"][token] = draw(IDS)
        elif kind == "special_id" and isinstance(out.get("special_tokens"), dict) and out["special_tokens"]:
            token = draw(st.sampled_from(sorted(out["special_tokens"])))
            out["special_tokens"][token] = draw(IDS)
        elif kind == "option" and isinstance(out.get("scheme_options"), dict):
            out["scheme_options"][draw(st.sampled_from(["case", "repeat", "punct", "normalize", "x"]))] = draw(JSON_VALUES)
        elif kind == "pattern":
            out["pattern"] = {"name": "custom", "regex": draw(PATTERNS)}
        elif kind == "nest":
            field = draw(st.sampled_from(sorted(out)))
            out[field] = json.loads("[" * 40 + "1" + "]" * 40)
        elif kind == "field":
            field = draw(st.sampled_from(sorted(out)))
            out[field] = draw(JSON_VALUES)
        elif kind == "counts":
            out["merge_counts"] = draw(st.none() | st.lists(IDS, max_size=len(merges) + 1) | JSON_VALUES)
        elif kind == "vocab_size":
            out["vocab_size"] = draw(IDS)
        elif kind == "truncate" and merges:
            out["merges"] = merges[: draw(st.integers(0, len(merges)))]
            continue
        if merges is not out.get("merges") and isinstance(out.get("merges"), list):
            out["merges"] = merges
    if draw(st.booleans()) and isinstance(out.get("special_tokens"), dict):
        # An attacker makes the rest agree, so that the load gets past the counts and sizes
        # to the merges themselves (and to the compiled table built from them).
        with contextlib.suppress(TypeError, KeyError, AttributeError):
            first = 256 + len(out["atoms"]) + len(out["merges"])
            out["merge_counts"] = None
            out["special_tokens"] = {t: first + k for k, t in enumerate(out["special_tokens"])}
            out["vocab_size"] = first + len(out["special_tokens"])
    return out


@contextlib.contextmanager
def budget(seconds: int):
    """A memory budget (RLIMIT_AS, not under AddressSanitizer) and a hang guard: a load that
    allocates past it fails with MemoryError, one that runs past it with TimeoutError."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)

    def hang(signum, frame):
        raise TimeoutError(f"a load ran for more than {seconds} s")

    old = signal.signal(signal.SIGALRM, hang)
    try:
        if not SANITIZED:
            with open("/proc/self/statm") as fh:
                size = int(fh.read().split()[0]) * resource.getpagesize() + MEMORY_BUDGET
            if hard == resource.RLIM_INFINITY or size < hard:
                resource.setrlimit(resource.RLIMIT_AS, (size, hard))
        signal.alarm(seconds)
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@settings(max_examples=int(os.environ.get("FUNCTIONALBPE_FUZZ_EXAMPLES", "150")), deadline=None)
@given(data=st.data())
def test_fuzzed_files_load_and_round_trip_or_are_refused(payload, tmp_path_factory, data):
    bad = data.draw(mutations(payload))
    path = tmp_path_factory.mktemp("fuzz") / "t.json"
    try:
        bad["checksum"] = checksum(bad)  # the attacker recomputes it
        text = json.dumps(bad, ensure_ascii=False)
    except (TokenizerFileError, UnicodeEncodeError):
        text = json.dumps(bad)  # a lone surrogate: no checksum can be computed
    path.write_text(text, encoding="utf-8")
    with budget(60):
        try:
            tok = fb.Tokenizer.load(path)
        except TokenizerFileError as exc:
            assert len(str(exc)) < 1000
            hypothesis.event("refused")
            return
        hypothesis.event("loaded")
        form = tok.scheme.options().get("normalize")
        for sample in TEXTS + ["<|endoftext|>a<|pad|>"]:
            ids = tok.encode(sample, allowed_special="all") if tok.special_tokens else tok.encode_ordinary(sample)
            assert tok.decode(ids) == (unicodedata.normalize(form, sample) if form else sample)


def test_tables_are_written_as_the_json_encoder_writes_them():
    """Tables of ints skip the JSON encoder; any other table (a bool, a string, rows of
    several widths) goes through it: the text is the same either way."""
    from functionalbpe.formats.tokenizer_file import _rows

    for table in ([[1, 2], [300, 4]], [[1, 2, 3]], [[True, 2]], [[1, "a"]], [[1, 2], [3]], [[2**70, 1]], [[]]):
        assert list(_rows(table)) == [json.dumps(r, separators=(",", ":")) for r in table]
