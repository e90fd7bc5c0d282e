"""Streaming: units lose nothing, cut only where no piece crosses, and keep memory bounded."""
from collections import Counter
from pathlib import Path

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

import functionalbpe as fb
from functionalbpe.measure import adapters
from functionalbpe.text.unit_reader import text_units
from functionalbpe.text.patterns import PATTERNS, pretokenize
from functionalbpe.schemes.registry import SCHEMES, make_scheme

from ..conftest import read_corpus
from ..helpers import tricky_text

lines = st.lists(tricky_text, max_size=12).map("\n".join)


def available_schemes():
    out = []
    for name in SCHEMES:
        try:
            make_scheme(name)
        except fb.FunctionalBPEError:
            continue
        out.append(name)
    return out


def test_unit_reader_cut_between_a_letter_or_digit_and_a_line_break():
    text = "one.\ntwo\n\nthree\nfour"
    units = list(text_units(text, unit_chars=3))
    assert [c for c, _ in units] == ["one.\ntwo", "\n\nthree", "\nfour"]
    assert [s for _, s in units] == [True, False, False]


def test_a_text_without_a_safe_cut_is_read_whole():
    text = "Every line ends in a full stop.\n" * 10 + "and so on\r\n" * 10
    assert [c for c, _ in text_units(text, unit_chars=10)] == [text]


@given(text=lines, size=st.integers(1, 40))
def test_string_units_join_to_the_text(text, size):
    units = list(text_units(text, unit_chars=size))
    assert "".join(c for c, _ in units) == text
    assert [s for _, s in units] == [True] + [False] * (len(units) - 1)
    for (c, _), (d, _) in zip(units, units[1:]):
        assert len(c) >= size and regex.match(r"[\p{L}\p{N}]", c[-1]) and d.startswith("\n")


@given(text=lines, size=st.integers(1, 40))
def test_no_piece_of_any_pattern_crosses_a_cut(text, size):
    units = [c for c, _ in text_units(text, unit_chars=size)]
    for name in PATTERNS:
        assert [p for c in units for p in pretokenize(c, name)] == pretokenize(text, name), name
    assert sum(len(c.split()) for c in units) == len(text.split())


@given(text=lines, size=st.integers(1, 40))
def test_no_piece_of_any_scheme_crosses_a_cut(text, size):
    units = [c for c, _ in text_units(text, unit_chars=size)]
    for name in available_schemes():
        scheme = make_scheme(name)
        assert [p for c in units for p in scheme.split(c)] == scheme.split(text), name


@given(text=lines, size=st.integers(1, 40))
def test_file_units_equal_string_units(tmp_path_factory, text, size):
    path = tmp_path_factory.mktemp("c") / "f.txt"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    assert list(text_units(path, unit_chars=size)) == list(text_units(text, unit_chars=size))


def test_real_text_in_small_units_gives_the_same_report(corpora):
    text = read_corpus(corpora / "nl" / "de.txt", limit=60_000) + read_corpus(corpora / "code" / "python.txt", limit=60_000)
    for name in available_schemes():
        scheme = make_scheme(name)
        units = [c for c, _ in text_units(text, unit_chars=2_000)]
        assert len(units) > 20
        assert Counter(p for c in units for p in scheme.split(c)) == Counter(scheme.split(text)), name
    tok = fb.train(text[:30_000], vocab_size=400, progress=False)
    whole = fb.report(tok, {"t": text}, unit_chars=10**9, progress=False).to_dict()
    small = fb.report(tok, {"t": text}, unit_chars=2_000, progress=False).to_dict()
    assert whole == small


class Recording(adapters.FunctionalBPETokenizer):
    """Our tokenizer, remembering the longest text it was asked to encode."""

    longest = 0

    def encode(self, text):
        Recording.longest = max(Recording.longest, len(text))
        return super().encode(text)


def test_chunk_chars_is_the_old_name_of_unit_chars():
    text = "A line of words, 123\n" * 400
    tok = fb.train(text, vocab_size=300, progress=False)
    Recording.longest = 0
    old = fb.report(Recording(tok), {"t": text}, chunk_chars=500, progress=False).to_dict()
    assert 500 <= Recording.longest < 500 + 22
    assert old == fb.report(tok, {"t": text}, unit_chars=500, progress=False).to_dict()


def test_a_large_file_streams_in_bounded_units_with_progress(tmp_path):
    line = "The quick brown fox jumps over the lazy dog, naïvely\n"
    path = tmp_path / "big.txt"
    path.write_text(line * 4000, encoding="utf-8")  # 220 KB
    tok = fb.train(line * 3, vocab_size=300, progress=False)
    seen = []
    r = fb.report(Recording(tok), {"big": path}, unit_chars=5_000,
                  progress=lambda stage, done, total, info: seen.append((stage, done, total)))
    assert Recording.longest < 5_000 + len(line)
    size = path.stat().st_size
    assert seen[-1] == ("measuring big", size, size)
    assert [d for _, d, _ in seen[:-1]] == sorted(d for _, d, _ in seen[:-1]) and len(seen) > 40
    row = r.results()[0]
    assert row["tokens"] == 4000 * len(tok.encode(line)) and row["bytes"] == size
    assert r.corpus_rows()[0]["documents"] == 1


PEAK_RSS = """
import resource, sys
import functionalbpe as fb
from functionalbpe.measure import adapters
tok = fb.train(open(sys.argv[1], encoding="utf-8").read(200_000), vocab_size=400, progress=False)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
r = fb.report(tok, {"big": fb.files(sys.argv[1])}, unit_chars=int(sys.argv[2]), progress=False)
print(r.results()[0]["tokens"], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


@pytest.mark.slow
def test_streaming_keeps_memory_bounded(tmp_path):
    import subprocess
    import sys

    from ..helpers import stdlib_text

    text = "".join(stdlib_text(2_000_000))
    path = tmp_path / "big.txt"
    with open(path, "w", encoding="utf-8") as fh:
        while fh.tell() < 12_000_000:
            fh.write(text)

    def peak(unit_chars):
        out = subprocess.run([sys.executable, "-c", PEAK_RSS, str(path), str(unit_chars)], capture_output=True,
                             check=True, text=True, env={"PYTHONPATH": str(Path(__file__).parent.parent)}).stdout
        tokens, kb = map(int, out.split())
        return tokens, kb

    tokens_streamed, streamed = peak(1 << 20)
    tokens_whole, whole = peak(10**10)
    assert tokens_streamed == tokens_whole > 2_000_000
    # Whole: the 12 MB text, its millions of pieces and ids at once; streamed: one unit.
    assert streamed < whole / 4, (streamed, whole)
