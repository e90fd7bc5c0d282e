"""Large vocabularies: a tokenizer file's merges read into one flat array (core/pairs.py,
csrc/_tables.pyx) rather than a list per merge, hashed and written a part at a time.

The new reading must be invisible: the same tokenizer (same ids, same decoding, same file
written back, byte for byte) as json.loads gave, on random vocabularies; and a file that is
not a valid tokenizer fails as it did, with a TokenizerFileError naming the place.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from array import array

import pytest

import functionalbpe as fb
from functionalbpe.core._native import NATIVE
from functionalbpe.core.pairs import Pairs, json_rows
from functionalbpe.errors import TokenizerFileError
from functionalbpe.formats import reading
from functionalbpe.formats.reading import json_object, json_with_pairs
from functionalbpe.formats.tokenizer_file import checksum, parts_from_payload, write_payload

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

TEXTS = ["Hello World!! héllo wörld 123 4567", "   indented\n\tcode(x) == y;  ", "ÆØÅ Ünïcödé ~~~ 😀 <s>"]
native_tables = pytest.mark.skipif(NATIVE.tables is None, reason="the compiled table reader is not built")


def random_merges(rng: random.Random, n: int) -> list:
    """n distinct merges of ids defined before them, short tokens (the make.py vocabulary)."""
    lengths = [1] * 256
    short = list(range(256))
    used = set()
    merges = []
    while len(merges) < n:
        pair = (rng.choice(short), rng.choice(short))
        if pair in used:
            continue
        used.add(pair)
        merges.append(pair)
        lengths.append(lengths[pair[0]] + lengths[pair[1]])
        if lengths[-1] < 6:
            short.append(255 + len(merges))
    return merges


def old_load(path) -> fb.Tokenizer:
    """The load before this reading: json.loads, merges as lists of ints."""
    payload = json.loads(open(path, encoding="utf-8").read(), object_pairs_hook=json_object)
    assert payload["checksum"] == checksum(payload)
    return fb.Tokenizer.from_payload(payload)


# -- Pairs ------------------------------------------------------------------------------------


def test_pairs_are_a_sequence_of_tuples():
    p = Pairs.of([(1, 2), (3, 4), (5, 6)])
    assert len(p) == 3 and p[0] == (1, 2) and p[-1] == (5, 6) and list(p) == [(1, 2), (3, 4), (5, 6)]
    assert p[1:] == [(3, 4), (5, 6)] and isinstance(p[1:], Pairs) and p[::2] == [(1, 2), (5, 6)]
    assert p == Pairs.of([[1, 2], [3, 4], [5, 6]]) and p != [(1, 2)] and p.tolist() == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(IndexError):
        p[3]
    with pytest.raises(ValueError):
        Pairs(array("I", [1, 2, 3]))
    import pickle

    assert pickle.loads(pickle.dumps(p)) == p


@pytest.mark.parametrize("part", [7, 1 << 16])
def test_json_rows_are_what_json_dumps_writes(monkeypatch, part):
    from functionalbpe.core import pairs as module

    monkeypatch.setattr(module, "ROWS_PER_PART", part)  # parts that end inside the table
    rng = random.Random(0)
    pairs = [(rng.randrange(1 << 32), rng.randrange(10)) for _ in range(3000)] + [(0, 4294967295)]
    for sep in (b",", b",\n  "):
        got = b"".join(json_rows(Pairs.of(pairs), sep))
        assert got == sep.join(json.dumps(list(p), separators=(",", ":")).encode() for p in pairs)


# -- the reader of tables ---------------------------------------------------------------------


@native_tables
@pytest.mark.parametrize("text, ids", [
    ("[]", []), (" [ ] ", []), ("[[0,0]]", [0, 0]), ("[\n  [104,105],\n  [256,33]\n ]", [104, 105, 256, 33]),
    ("[[ 1 ,\t2 ] ,\r\n[3,4]]", [1, 2, 3, 4]), ("[[4294967295,10]]", [4294967295, 10]),
    ('["é", [[1,2]]]'[6:], [1, 2]),
])
def test_the_table_reader_reads_tables_of_pairs(text, ids):
    got = NATIVE.tables.read_id_rows(text, 0, 2)
    assert got is not None and got[0].tolist() == ids
    assert json.loads(text[:got[1]]) == [list(ids[k:k + 2]) for k in range(0, len(ids), 2)]


@native_tables
@pytest.mark.parametrize("text", [
    "[[1,-2]]", "[[1,2.0]]", "[[1,2e3]]", "[[01,2]]", "[[1,2,3]]", "[[1]]", "[[1,2],]", "[,[1,2]]",
    "[[1,2]", "[[1,2] [3,4]]", '[["1",2]]', "[[1,4294967296]]", "[[1,99999999999999999999]]", "[[[1],2]]",
    "[[1,2]],", "", "[", "{}", "[[1,2],[3,4]", "[[true,2]]", "[[1,null]]", "[[1,2 3]]",
])
def test_the_table_reader_leaves_anything_else_to_json(text):
    got = NATIVE.tables.read_id_rows(text, 0, 2)
    if text == "[[1,2]],":  # a table, and then what follows it is the caller's
        assert got is not None and got[1] == 7
    else:
        assert got is None


documents = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 1 << 33) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)
pairs = st.lists(st.lists(st.integers(0, (1 << 32) - 1), min_size=2, max_size=2), max_size=8)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["merges", "format", "x", "é"]), documents | pairs, max_size=4),
       st.sampled_from([None, 0, 2]), st.data())
def test_reading_with_pairs_is_json_loads(doc, indent, data):
    """Whatever the document, and wherever it is cut or damaged: the same value as json.loads,
    or the same error."""
    text = json.dumps(doc, indent=indent, ensure_ascii=data.draw(st.booleans()))
    if data.draw(st.booleans()) and text:  # damage it: cut it, or change one character
        k = data.draw(st.integers(0, len(text) - 1))
        text = text[:k] if data.draw(st.booleans()) else text[:k] + data.draw(st.sampled_from("[]{},:-0 \"e.")) + text[k + 1:]
    try:
        expected = json.loads(text, object_pairs_hook=json_object)
    except Exception as exc:  # noqa: BLE001 - the same error, whatever it is
        with pytest.raises(type(exc)) as got:
            json_with_pairs(text, ("merges",))
        assert str(got.value) == str(exc)
        return
    got = json_with_pairs(text, ("merges",))
    assert got == expected and list(got) == list(expected) if isinstance(expected, dict) else got == expected
    if isinstance(got, dict) and isinstance(got.get("merges"), Pairs):
        assert got["merges"].tolist() == expected["merges"]


@settings(max_examples=300, deadline=None)
@given(documents.filter(lambda d: isinstance(d, dict)) | st.dictionaries(st.text(max_size=3), documents, max_size=3),
       st.sampled_from([None, 0, 2]), st.integers(1, 9), st.data())
def test_an_object_read_from_utf8_bytes_is_the_one_read_from_its_str(doc, indent, window, data):
    """object_at over a file's bytes (what json reads decoded a window at a time, the window
    made tiny so that values and characters straddle it): the value and the end that it gives
    over the str, whatever the damage."""
    text = json.dumps(doc, indent=indent, ensure_ascii=data.draw(st.booleans())) + data.draw(st.sampled_from(["", " ", "1", "é"]))
    if data.draw(st.booleans()):
        k = data.draw(st.integers(0, len(text) - 1))
        text = text[:k] + data.draw(st.sampled_from(["", "1", "é", '"', "}", "\\"])) + text[k + 1:]
    outcomes, saved = [], reading._WINDOW
    reading._WINDOW = window
    try:
        for form in (text, text.encode("utf-8")):
            try:
                value, end = reading.object_at(form, 0, lambda key, pos: None)
            except (ValueError, reading.DuplicateKey) as exc:
                outcomes.append(type(exc).__name__)
            else:
                outcomes.append((value, end if isinstance(form, str) else len(form[:end].decode("utf-8"))))
    finally:
        reading._WINDOW = saved
    assert outcomes[0] == outcomes[1] or outcomes[0] == "JSONDecodeError" == outcomes[1]


@pytest.mark.parametrize("text", ['{"merges": [[1,2]], "merges": [[1,2]]}', '{"merges": [], "merges": 1}'])
def test_a_key_given_twice_is_refused_as_json_loads_refuses_it(text):
    from functionalbpe.formats.reading import DuplicateKey

    with pytest.raises(DuplicateKey):
        json_with_pairs(text, ("merges",))


# -- whole tokenizers -------------------------------------------------------------------------


@pytest.mark.parametrize("seed, n", [(0, 0), (1, 1), (2, 700), (3, 5000)])
def test_a_loaded_tokenizer_is_the_one_json_loads_gave(tmp_path, seed, n):
    rng = random.Random(seed)
    scheme = fb.make_scheme("plain")
    tok = fb.Tokenizer(scheme, random_merges(rng, n), ["<s>"], merge_counts=[rng.randrange(99) for _ in range(n)])
    path = tmp_path / "t.json"
    tok.save(path)
    new, old = fb.Tokenizer.load(path), old_load(path)
    assert isinstance(new.alphabet.merges, Pairs) and new == old == tok
    text = " ".join(TEXTS) + "".join(chr(rng.randrange(32, 0x2FF)) for _ in range(2000))
    assert new.encode(text, allowed_special="all") == old.encode(text, allowed_special="all")
    ids = new.encode(text, allowed_special="all")
    assert new.decode(ids) == old.decode(ids) == text
    again = tmp_path / "again.json"
    new.save(again)
    assert again.read_bytes() == path.read_bytes()


def test_a_trained_tokenizer_of_each_scheme_round_trips_byte_for_byte(tmp_path):
    for scheme in ("plain", "functional", "markers"):
        tok = fb.train([" ".join(TEXTS) * 20], vocab_size=None, scheme=scheme, special_tokens=["<s>"], progress=False)
        first, second = tmp_path / f"{scheme}1.json", tmp_path / f"{scheme}2.json"
        tok.save(first)
        loaded = fb.Tokenizer.load(first)
        loaded.save(second)
        assert first.read_bytes() == second.read_bytes() and loaded == tok == old_load(first)
        assert loaded.encode(" ".join(TEXTS), allowed_special="all") == tok.encode(" ".join(TEXTS), allowed_special="all")


def test_the_checksum_of_pairs_is_that_of_lists():
    rng = random.Random(5)
    tok = fb.Tokenizer(fb.make_scheme("plain"), random_merges(rng, 300), ["<s>", "é"])
    compact, listed = tok._payload(), tok.to_payload()
    assert isinstance(compact["merges"], Pairs) and isinstance(listed["merges"], list)
    assert checksum(compact) == checksum(listed)
    canonical = json.dumps(listed, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    import hashlib

    assert checksum(listed) == "sha256:" + hashlib.sha256(canonical).hexdigest()


def file_with_merges(tmp_path, merges_text: str, fix_checksum: bool = True):
    """A valid file whose merges are ``merges_text`` as written (its checksum made to match
    when the text is JSON)."""
    tok = fb.Tokenizer(fb.make_scheme("plain"), [(97, 98), (256, 99)], ["<s>"])
    path = tmp_path / "t.json"
    tok.save(path)
    text = path.read_text()
    start = text.index('"merges": ') + len('"merges": ')
    end = text.index('\n ]', start) + 3
    text = text[:start] + merges_text + text[end:]
    if fix_checksum:
        try:
            payload = json.loads(text)
        except ValueError:
            pass
        else:
            text = text.replace(payload["checksum"], checksum(payload))
    path.write_text(text)
    return path


@pytest.mark.parametrize("merges, message", [
    ("[[97, 98], [256, -1]]", "merges[1]: (256, -1) uses id -1"),
    ("[[97, 98], [256, 4294967296]]", "merges[1]: (256, 4294967296) uses id 4294967296"),
    ("[[97, 98], [256, 99, 1]]", "merges[1]: [256, 99, 1] is not a merge"),
    ("[[97, 98], [256, 99.0]]", "merges[1]: [256, 99.0] is not a merge"),
    ("[[97, 98], [256, \"c\"]]", "merges[1]: [256, 'c'] is not a merge"),
    ("[[97, 98], 5]", "merges[1]: 5 is not a merge"),
    ("[[97, 98], [256, 097]]", "not valid JSON at line"),
    ("[[97, 98], [256, 99]", "not valid JSON at line"),
    ("[[97, 98], [97, 98]]", "merges[1]: (97, 98) repeats merges[0]"),
    ("[[97, 98], [256, 258]]", "merges[1]: (256, 258) uses id 258, which does not exist before this merge"),
    ("{}", "the field 'merges' should be a list"),
])
def test_a_damaged_merge_table_is_named(tmp_path, merges, message):
    with pytest.raises(TokenizerFileError) as exc:
        fb.Tokenizer.load(file_with_merges(tmp_path, merges))
    assert message in str(exc.value)


def test_a_changed_merge_fails_the_checksum(tmp_path):
    with pytest.raises(TokenizerFileError, match="checksum mismatch"):
        fb.Tokenizer.load(file_with_merges(tmp_path, "[\n  [97,98],\n  [256,100]\n ]", fix_checksum=False))


def test_merges_in_any_json_layout_load(tmp_path):
    for text in ("[[97,98],[256,99]]", "[ [ 97 , 98 ] ,\n\t[256,99] ]"):
        tok = fb.Tokenizer.load(file_with_merges(tmp_path, text))
        assert tok.merges == [(97, 98), (256, 99)] and tok.encode("abc") == [257]
    # a "merges" key inside another field is that field's, not the table
    path = file_with_merges(tmp_path, "[[97,98],[256,99]]")
    payload = json.loads(path.read_text())
    payload["training"] = {"merges": [[1, 2]]}
    write_payload(path, {k: v for k, v in payload.items() if k != "checksum"})
    assert fb.Tokenizer.load(path).training == {"merges": [[1, 2]]}
    assert isinstance(json_with_pairs(path.read_text(), ("merges",))["training"]["merges"], list)


@pytest.mark.skipif(NATIVE.encoder is None, reason="the compiled encoder is not built")
@pytest.mark.parametrize("imported", [False, True])
def test_ints_made_on_demand_are_the_ids_made_at_once(monkeypatch, tmp_path, imported):
    """A table larger than EAGER_INTS makes each id's int the first time it leaves C: the
    same lists, on every path that makes them (one text, a batch, a long text in units), with
    an imported vocabulary's own ids too."""
    rng = random.Random(7)
    tok = fb.Tokenizer(fb.make_scheme("plain"), random_merges(rng, 3000), ["<s>"])
    if imported:  # ids of its own: the bytes in another order (an IdMap, out_map in C)
        tok = fb.train([" ".join(TEXTS[:2]) * 30], vocab_size=400, progress=False)
        path = tmp_path / "t.tiktoken"
        tok.to_tiktoken(path)
        text = path.read_text().splitlines()
        byte_lines = text[:256]
        rng.shuffle(byte_lines)  # the bytes' ranks among themselves: the merges stay valid
        text[:256] = byte_lines
        path.write_text("\n".join(f"{line.split()[0]} {k}" for k, line in enumerate(text)) + "\n")
        tok = fb.Tokenizer.from_tiktoken(path, pattern="gpt4")
    texts = [" ".join(TEXTS[:2]) + "".join(chr(rng.randrange(32, 0x17F)) for _ in range(3000)) for _ in range(4)]
    eager = [tok.encode_ordinary(t) for t in texts], tok.encode_batch(texts, threads=2)
    import functionalbpe._encoder as compiled

    monkeypatch.setattr(compiled, "EAGER_INTS", 0)
    monkeypatch.setattr(compiled, "PARALLEL_TEXT_BYTES", 1 << 10)  # one text in units: _TextBatch.joined
    lazy_tok = fb.Tokenizer.from_payload(tok.to_payload())
    lazy = [lazy_tok.encode_ordinary(t, threads=2) for t in texts], lazy_tok.encode_batch(texts, threads=2)
    assert lazy == eager and lazy_tok.encode_ordinary(texts[0]) == eager[0][0]
    # and both are the ids written without a Python int (out_map in C)
    assert eager[1] == tok.encode_batch(texts, flat=True).tolist()


# -- what a large vocabulary holds once loaded -------------------------------------------------


@pytest.mark.skipif(NATIVE.encoder is None, reason="the compiled encoder is not built")
def test_the_encoder_keeps_the_merges_it_borrows():
    """The compiled table reads the merges where the tokenizer keeps them (no copy): it holds
    them alive, and they cannot be resized under it; given a list, it keeps a copy of its own."""
    import gc

    import functionalbpe._encoder as compiled

    merges = Pairs.of([(104, 105), (256, 33)])
    bpe = compiled.BPE([], merges.ids)
    with pytest.raises(BufferError):
        merges.ids.append(0)
    del merges
    listed = compiled.BPE([], [(104, 105), (256, 33)])
    gc.collect()
    assert bpe.encode_pieces(["hi!", "hi"]) == listed.encode_pieces(["hi!", "hi"]) == [257, 256]


@pytest.mark.skipif(NATIVE.encoder is None or NATIVE.tables is None, reason="the compiled core is not built")
def test_an_imported_vocabulary_holds_no_python_object_per_id(tmp_path, monkeypatch):
    """The ids of a vocabulary in GPT-2's layout (bytes in the order of their stand-ins) are
    kept as arrays of 32-bit ids, not as lists of ints: what from_hf leaves in Python objects
    is the merges' array (8 bytes a merge) and about 12 bytes an id of maps, with the ints of
    the ids made as they are first returned."""
    import gc
    import tracemalloc

    import functionalbpe._encoder as compiled
    from functionalbpe.formats.bytelevel import bytes_to_unicode

    chars = bytes_to_unicode()
    order = [b for b in range(256) if ord(chars[b]) == b] + [b for b in range(256) if ord(chars[b]) != b]
    byte_ids = [order.index(b) for b in range(256)]
    n = 20000
    tok = fb.Tokenizer(fb.make_scheme("plain"), random_merges(random.Random(3), n), ["<|endoftext|>"],
                       byte_ids=byte_ids)
    tok.to_hf(tmp_path / "tokenizer.json")
    monkeypatch.setattr(compiled, "EAGER_INTS", 0)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        loaded = fb.Tokenizer.from_hf(tmp_path / "tokenizer.json")
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 30 * n  # 21 bytes a merge; with the ids as lists of ints, 97
    text = "".join(chr(c) for c in range(32, 0x17F))
    assert loaded.encode(text) == tok.encode(text) and loaded.merges == tok.merges
    payload = loaded.to_payload()
    assert payload["byte_ids"] == byte_ids and isinstance(payload.get("merge_ids", []), list)
    assert fb.Tokenizer.from_payload(payload) == loaded


LOAD_PEAK = r"""
import gc, sys
import functionalbpe as fb

def rss(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))

getattr(fb.Tokenizer, sys.argv[1])(sys.argv[3])  # a small one first: the modules it imports
gc.collect()
before = rss("VmRSS")
tok = getattr(fb.Tokenizer, sys.argv[1])(sys.argv[2])
print(rss("VmHWM") - before, tok.vocab_size)
"""


@pytest.mark.skipif(NATIVE.encoder is None or NATIVE.tables is None, reason="the compiled core is not built")
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the peak resident set from /proc")
def test_loading_half_a_million_merges_takes_at_most_three_times_the_file(tmp_path):
    """docs/security.md's promise for a large vocabulary of short tokens: loading it (its
    own format, or HF's tokenizer.json) peaks at less than 3 times the file, measured as the
    peak resident set of a fresh interpreter over what it held before. 2**19 tokens, the
    least that take compact tables: with the wide ones the load peaked at about 6 times."""
    merges = array("I")
    for a in range(256):
        for b in range(256):
            merges.extend((a, b))
    rng = random.Random(11)
    for p in rng.sample(range(1 << 32), (1 << 19) - 256 - (1 << 16)):  # two tokens of two bytes
        merges.extend((256 + (p >> 16), 256 + (p & 0xFFFF)))
    tok = fb.Tokenizer(fb.make_scheme("plain"), Pairs(merges), ["<|endoftext|>"])
    tok.save(tmp_path / "tok.json")
    tok.to_hf(tmp_path / "tokenizer.json")
    small = fb.Tokenizer(fb.make_scheme("plain"), [(97, 98)], ["<|endoftext|>"])
    small.save(tmp_path / "small.json")
    small.to_hf(tmp_path / "small_hf.json")
    for call, name, first in (("load", "tok.json", "small.json"), ("from_hf", "tokenizer.json", "small_hf.json")):
        path = tmp_path / name
        out = subprocess.run([sys.executable, "-c", LOAD_PEAK, call, str(path), str(tmp_path / first)],
                             check=True, capture_output=True,
                             text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        peak, size = map(int, out.stdout.split())
        assert size == tok.vocab_size
        assert peak < 3 * path.stat().st_size, (call, peak, path.stat().st_size)


@pytest.mark.parametrize("typecode, bad", [("i", -1), ("i", 1 << 22), ("I", 1 << 22), ("I", (1 << 32) - 1),
                                           ("q", -1), ("q", (1 << 32) - 1)])
def test_merge_ids_in_an_array_are_checked_as_in_a_list(typecode, bad):
    """An array of merge ids is checked by its minimum and maximum in C; a bad one is refused
    with the message a list gets, naming the value."""
    merges = [(97, 98), (256, 99)]
    errors = []
    for ids in ([300, bad], array(typecode, [300, bad])):
        with pytest.raises(fb.FunctionalBPEError) as got:
            fb.Tokenizer(fb.make_scheme("plain"), merges, merge_ids=ids)
        errors.append(str(got.value))
    assert errors[0] == errors[1] and str(bad) in errors[0]
    good = fb.Tokenizer(fb.make_scheme("plain"), merges, merge_ids=array(typecode, [300, 301]))
    assert good == fb.Tokenizer(fb.make_scheme("plain"), merges, merge_ids=[300, 301])
