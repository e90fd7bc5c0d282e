"""Decoding is bounded by what the caller allows: a small file of
valid ids can ask for gigabytes of text through a scheme's repeat instructions, and a
stream of atoms waiting for their base must not be rescanned at every id."""
from __future__ import annotations

import pytest

import functionalbpe as fb
from functionalbpe.core import decoding
from functionalbpe.errors import DecodeError

# 260 lower-case letters, one piece, no repetition the scheme would pull out.
WORD = "".join(chr(97 + (i * 7 + i * i // 3) % 26) for i in range(260))


@pytest.fixture(scope="module")
def functional():
    return fb.train([(WORD + " ") * 50 + "Hello World"], vocab_size=None, scheme="functional", progress=False)


def _group_ids(tok):
    """MULTIREPEAT(0, 255, 255) and a 260-character base: 65,030 characters from a few ids."""
    atom = tok.alphabet.atom_id
    prefix = [atom("\ue201"), atom("\ue000"), atom(chr(0xE000 + 255)), atom(chr(0xE000 + 255))]
    return prefix + tok.encode(WORD)


def test_one_group_decodes_as_the_scheme_says(functional):
    ids = _group_ids(functional)
    assert len(ids) < 20  # the word is one token or a few
    assert functional.decode(ids) == WORD[:255] * 255 + WORD[255:]


def test_amplified_groups_are_refused_past_the_budget(functional):
    ids = _group_ids(functional) * 60_000  # would be 3.9 GB of text
    with pytest.raises(DecodeError, match="max_output"):
        functional.decode(ids, max_output=10**6)
    with pytest.raises(DecodeError, match="output budget"):
        functional.decode(ids)  # the default: 256 characters per id, at least 16 M


def test_the_default_budget_follows_the_ids(functional, monkeypatch):
    ids = _group_ids(functional) * 3
    assert len(functional.decode(ids)) == 3 * 65_030  # under the floor
    monkeypatch.setattr(decoding, "OUTPUT_FLOOR", 1000)
    with pytest.raises(DecodeError, match="output budget"):
        functional.decode(ids)
    assert len(functional.decode(ids, max_output=3 * 65_030)) == 3 * 65_030
    with pytest.raises(DecodeError):
        functional.decode(ids, max_output=3 * 65_030 - 1)


def test_plain_tokens_are_counted_before_they_are_joined(monkeypatch):
    tok = fb.train(["x" * 4096], vocab_size=268, pattern=r"x+|[^x]+", progress=False)
    longest = max(range(tok.vocab_size), key=lambda i: len(tok.token_bytes(i)))
    size = len(tok.token_bytes(longest))
    assert size == 4096
    with pytest.raises(DecodeError, match="max_output"):
        tok.decode([longest] * 1000, max_output=100_000)
    with pytest.raises(DecodeError, match="max_output"):
        tok.decode_bytes([longest] * 1000, max_output=100_000)
    assert len(tok.decode([longest] * 24, max_output=24 * 4096)) == 24 * 4096
    with pytest.raises(DecodeError, match="max_output must be"):
        tok.decode([1], max_output=-1)


def test_a_long_text_form_decodes_in_slices_to_the_same_text(functional, monkeypatch):
    monkeypatch.setattr(decoding, "SLICE_CHARS", 64)
    text = ("Hello World " + WORD + " THE Cat   aaaa ") * 20
    ids = functional.encode(text)
    assert functional.decode(ids) == text


# -- item 2: the streaming decoder is linear in the ids fed ---------------------------------


def _count_scanned(monkeypatch, scheme):
    scanned = [0, 0]  # characters handed to decodable_prefix, calls
    original = type(scheme).decodable_prefix

    def counting(self, text):
        scanned[0] += len(text)
        scanned[1] += 1
        return original(self, text)

    monkeypatch.setattr(type(scheme), "decodable_prefix", counting)
    return scanned


@pytest.fixture(scope="module")
def markers():
    return fb.train(["Hello World THE end"] * 5, vocab_size=None, scheme="markers", case=True, progress=False)


@pytest.mark.parametrize("atoms", [["\ue301"], ["\ue302"], ["\ue300"], ["\ue100", "\ue000"],
                                   ["\ue201", "\ue000", "\ue001", "\ue002"]])
def test_held_atoms_fed_one_at_a_time_cost_linear_work(markers, functional, monkeypatch, atoms):
    tok = markers if atoms[0] >= "\ue300" else functional
    unit = [tok.alphabet.atom_id(a) for a in atoms]
    n = 16_000
    ids = unit * (n // len(unit)) + tok.encode("Hello")
    expected = tok.decode(ids, errors="replace")
    scanned = _count_scanned(monkeypatch, tok.scheme)
    d = tok.stream_decoder("replace")
    out = [d.feed(i) for i in ids] + [d.finish()]
    assert "".join(out) == expected
    # Quadratic rescanning would hand it about n²/2 = 128 M characters.
    assert scanned[0] < 40 * n, scanned


def test_streaming_output_is_bounded_per_call(functional):
    ids = _group_ids(functional) * 1000
    d = functional.stream_decoder()
    with pytest.raises(DecodeError, match="max_output"):
        d.feed(ids, max_output=10**6)
    d = functional.stream_decoder()
    assert len(d.feed(_group_ids(functional)) + d.finish()) == 65_030


def test_cli_decode_refuses_an_amplifying_token_file_in_one_line(functional, tmp_path, capsys):
    np = pytest.importorskip("numpy")
    from functionalbpe.cli import main

    functional.save(tmp_path / "t.json")
    np.save(tmp_path / "ids.npy", np.array(_group_ids(functional) * 20_000, dtype=np.uint16))  # 5 GB of text
    code = main(["decode", "-t", str(tmp_path / "t.json"), str(tmp_path / "ids.npy"), "-o", str(tmp_path / "out.txt")])
    err = capsys.readouterr().err
    assert code == 2 and "max-output" in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ids.npy", "t.json"]
    np.save(tmp_path / "few.npy", np.array(_group_ids(functional) * 3, dtype=np.uint16))
    assert main(["decode", "-t", str(tmp_path / "t.json"), str(tmp_path / "few.npy"), "-o", str(tmp_path / "o.txt")]) == 0
    assert (tmp_path / "o.txt").read_text() == functional.decode(_group_ids(functional) * 3)
    assert main(["decode", "-t", str(tmp_path / "t.json"), str(tmp_path / "few.npy"), "--max-output", "1000"]) == 2


def test_cli_decode_of_many_held_markers_is_linear(markers, tmp_path):
    np = pytest.importorskip("numpy")
    from functionalbpe.cli import main

    markers.save(tmp_path / "t.json")
    ids = [markers.alphabet.atom_id("\ue301")] * 150_000 + markers.encode("Hello")
    np.save(tmp_path / "ids.npy", np.array(ids, dtype=np.uint16))
    assert main(["decode", "-t", str(tmp_path / "t.json"), str(tmp_path / "ids.npy"), "--errors", "replace",
                 "-o", str(tmp_path / "out.txt")]) == 0
    assert (tmp_path / "out.txt").read_text() == markers.decode(ids, errors="replace")
