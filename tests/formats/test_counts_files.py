"""Counts files written by an attacker (docs/counts.md): each is refused with a
CountsFileError naming the field or the offset, never a crash, a huge allocation or a hang.

Most crafted files below carry a correct checksum (``craft`` recomputes it): the checksum
only says that nothing changed after writing, so every rule behind it is tested on its own.
"""
from __future__ import annotations

import hashlib
import json
import struct
import zlib

import pytest

import functionalbpe as fb
from functionalbpe import counts as counts_module
from functionalbpe.counts import HEADER, MAGIC, MAX_PIECES, PieceCounts
from functionalbpe.errors import CountsFileError

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

META = {"pattern": {"name": "gpt2", "regex": "gpt2"}, "pruned_below": None, "scheme": "plain",
        "scheme_options": {}, "special_tokens": []}


def craft(pieces, counts, meta=None, *, lengths=None, data=None, flags=1, declared=None, body=None,
          version=1, magic=MAGIC):
    """A counts file with a good checksum, whatever it holds."""
    meta_bytes = meta if isinstance(meta, bytes) else json.dumps(META if meta is None else meta).encode()
    encoded = [p.encode("utf-8", "surrogatepass") if isinstance(p, str) else p for p in pieces]
    lengths = [len(p) for p in encoded] if lengths is None else lengths
    data = b"".join(encoded) if data is None else data
    raw = struct.pack(f"<{len(lengths)}I", *lengths) + b"".join(
        c.to_bytes(8, "little", signed=c < 0) for c in counts) + data
    if body is None:
        body = zlib.compress(raw) if flags & 1 else raw
    n, data_len = declared or (len(counts), len(data))
    head = HEADER.pack(magic, version, flags, len(meta_bytes), n, data_len, len(body))
    payload = head + meta_bytes + body
    return payload + hashlib.sha256(payload).digest()


def refused(data: bytes, match: str) -> str:
    with pytest.raises(CountsFileError, match=match) as info:
        PieceCounts.from_bytes(data, "x.counts")
    assert str(info.value).startswith("x.counts: ")
    return str(info.value)


def test_a_crafted_good_file_loads():
    c = PieceCounts.from_bytes(craft(["ab", " c"], [3, 1]))
    assert dict(c) == {"ab": 3, " c": 1} and c.scheme.pattern_name == "gpt2"
    assert PieceCounts.from_bytes(craft(["ab"], [2], flags=0)) == {"ab": 2}


def test_every_truncation_is_refused():
    data = fb.count(["some text, and more text"], pattern="gpt2").to_bytes()
    for cut in range(len(data)):
        refused(data[:cut], "truncated|not a functionalbpe counts file")
    refused(data + b"\0", "bytes past its end")


def test_a_changed_byte_is_a_checksum_mismatch():
    data = bytearray(fb.count(["some text"], pattern="gpt2").to_bytes())
    for at in range(HEADER.size + 5, len(data), 7):
        changed = bytearray(data)
        changed[at] ^= 1
        refused(bytes(changed), "checksum mismatch")


def test_the_header_is_checked():
    refused(craft(["a"], [1], magic=b"NOTCOUNT"), "not a functionalbpe counts file")
    refused(craft(["a"], [1], version=2), r"version \(offset 8\) is 2")
    refused(craft(["a"], [1], flags=3), r"flags \(offset 12\)")
    refused(craft(["a"], [1], declared=(MAX_PIECES + 1, 1)), r"pieces \(offset 24\)")


def test_huge_declared_sizes_allocate_nothing():
    # A few bytes of zlib that claim gigabytes: refused from the sizes alone.
    refused(craft(["a"], [1], declared=(1 << 31, 1)), "would unpack to")
    refused(craft(["a"], [1], declared=(1, 1 << 40)), "would unpack to")
    # Stored bodies must be exactly as long as declared.
    refused(craft(["a"], [1], flags=0, declared=(1 << 30, 1)), "takes .* bytes, the body")
    # A zlib body that unpacks to less, or more, than declared.
    refused(craft(["ab"], [1], declared=(1, 3)), "unpacks to other than")
    refused(craft(["ab"], [1], declared=(1, 1)), "unpacks to other than")
    refused(craft(["a"], [1], body=b"not zlib at all"), "not a zlib stream")
    refused(craft(["a"], [1], body=zlib.compress(b"\1\0\0\0" + (1).to_bytes(8, "little") + b"a") + b"junk"),
            "unpacks to other than")


@pytest.mark.parametrize("flags", [0, 1])
def test_the_table_is_checked(flags):
    refused(craft(["a", "b"], [1, -5], flags=flags), r"piece 1 \(body offset 16\): the count -5")
    refused(craft(["a"], [0], flags=flags), "the count 0 is not a count")
    refused(craft(["a"], [-(2**63)], flags=flags), "is not a count")  # 2**63 written unsigned
    refused(craft(["a", ""], [1, 1], flags=flags), r"piece 1 .*never empty")
    refused(craft(["ab"], [1], lengths=[1], data=b"ab", flags=flags), "lengths add up to 1 bytes")
    refused(craft([b"a\xff"], [1], flags=flags), r"piece data \(body offset 13\): invalid UTF-8")
    refused(craft([b"\xed\xa0\x80"], [1], flags=flags), "invalid UTF-8")  # a surrogate
    refused(craft([b"\xc3", b"\xa9"], [1, 1], flags=flags), "starts inside a character")
    refused(craft(["xé"], [1, 1], lengths=[2, 1], data="xé".encode(), flags=flags), "starts inside a character")
    message = refused(craft(["a", "b", "a"], [1, 1, 1], flags=flags), r"piece 2 \(body offset 38\): 'a' is given twice")
    assert "piece 2" in message


def test_repeats_are_found_on_the_pure_python_path_too(monkeypatch):
    monkeypatch.setenv("FUNCTIONALBPE_PUREPYTHON", "1")
    refused(craft(["a", "bc", "bc"], [1, 1, 1]), "piece 2 .* is given twice")


@pytest.mark.parametrize("meta,match", [
    (b"{not json", "not valid JSON"),
    (b'{"scheme": "plain", "scheme": "plain"}', "appears twice"),
    (b"\xff", "invalid UTF-8 at byte offset 48"),
    (b"[]", "not a JSON object"),
    ({**META, "scheme": "nope"}, "scheme must be one of"),
    ({**META, "scheme_options": {"case": True}}, "bad option"),
    ({**META, "scheme_options": {"x": [1]}}, "is not an option"),
    ({**META, "pattern": {"regex": 5}}, "'regex' should be a string"),
    ({**META, "pattern": {"name": "x", "regex": "a"}}, "pattern"),  # a pattern that drops input
    ({**META, "special_tokens": [""]}, "special_tokens"),
    ({**META, "special_tokens": ["<s>", "<s>"]}, "given twice"),
    ({**META, "special_tokens": "<s>"}, "should be a list"),
    ({**META, "pruned_below": 0}, "pruned_below"),
])
def test_the_metadata_is_checked(meta, match):
    refused(craft(["a"], [1], meta), r"metadata \(offset 48\).*" + match)


def test_files_are_read_with_the_same_distrust(tmp_path):
    with pytest.raises(CountsFileError, match="no such counts file"):
        PieceCounts.load(tmp_path / "missing.counts")
    with pytest.raises(CountsFileError, match="is a directory"):
        PieceCounts.load(tmp_path)
    path = tmp_path / "x.counts"
    path.write_bytes(craft(["a"], [1])[:-1])
    with pytest.raises(CountsFileError, match="x.counts: truncated"):
        PieceCounts.load(path)


def test_a_failed_save_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "a.counts"
    fb.count(["old"], pattern="gpt2").save(path)
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(counts_module.PieceCounts, "to_bytes", lambda self: b"x" * 10)
    monkeypatch.setattr("functionalbpe.util.output.os.replace", broken)
    with pytest.raises(fb.OutputError, match="No space left"):
        fb.count(["new"], pattern="gpt2").save(path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["a.counts"]


VALID = fb.count(["héllo wörld, héllo again 123", "x" * 40], scheme="functional").to_bytes(compress=False)


@given(st.lists(st.tuples(st.integers(0, len(VALID) - 33), st.integers(0, 255)), min_size=1, max_size=4))
def test_fuzzed_files_load_and_round_trip_or_are_refused(changes):
    data = bytearray(VALID[:-32])
    for at, value in changes:
        data[at] = value
    data += hashlib.sha256(bytes(data)).digest()
    try:
        loaded = PieceCounts.from_bytes(bytes(data))
    except CountsFileError:
        return
    assert PieceCounts.from_bytes(loaded.to_bytes()) == loaded
    assert all(c >= 1 for c in loaded.values()) and len(set(loaded)) == len(loaded)
