"""The compiled scanner cuts every text exactly as ``regex.findall`` does, for every built-in
pattern, and the counter built on it counts exactly what ``regex`` + ``Counter`` counts."""
from __future__ import annotations

import os
import random
import signal
import time
from collections import Counter

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from functionalbpe.unicode import charclasses
from functionalbpe.core._native import NATIVE
from functionalbpe.util.checks import bpe_text
from functionalbpe.core.piecetable import PieceTable
from functionalbpe.schemes.plain import PlainScheme
from functionalbpe.text.counting import count_table
from functionalbpe.text.patterns import PATTERNS
from functionalbpe.training import count_pieces

from ..conftest import read_corpus

scanner = NATIVE.scanner
needs_scanner = pytest.mark.skipif(scanner is None, reason="compiled scanner not built, or FUNCTIONALBPE_PUREPYTHON=1")
NAMES = sorted(PATTERNS)


def counted(texts, name, threads=1):
    """The C counter on texts exactly as they are (lone surrogates included)."""
    counter = scanner.PieceCounter(name, threads=threads)
    try:
        counter.add_texts(texts)
        return counter.result()
    finally:
        counter.close()

# Text that hits every rule: each kind of white space (\s is Unicode White_Space: NBSP yes,
# U+001C no, U+200B no), contractions in every case (and U+017F, which (?i) folds to s),
# numbers of each category, letters of each category o200k tells apart (Lu Ll Lt Lm Lo),
# marks of each kind (Mn Mc Me), scripts without case, emoji with joiners, private use,
# the Functionalizer's characters (_ and U+2581), a lone surrogate, long runs, and words of
# two-byte letters of each case beside two-byte characters that are not letters (read two at
# a time).
PARTS = (
    " ", "  ", "\n", "\r", "\r\n", "\n\n", "\t", "\x0b", "\x0c", "\x1c", "\x85", "\u00a0", "\u1680",
    "\u2000", "\u2009", "\u200a", "\u200b", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
    "'", "''", "'s", "'S", "'t", "'T", "'re", "'RE", "'rE", "'ve", "'VE", "'m", "'M", "'ll", "'LL",
    "'lL", "'d", "'D", "'\u017f", "'x", "'r", "'l",
    "0", "7", "123", "12345", "\u0663", "\u216b", "\u00b2", "\u00bd",
    "a", "b", "s", "e", "l", "t", "A", "S", "L", "Hello", "HELLO", "hELLo", "camelCase",
    "\u01c5", "\u02b0", "\u00aa", "\u00df", "\u0130", "\u017f",
    "\u0301", "e\u0301", "E\u0301", "\u0308\u0301", "\u0903", "\u20dd", "\u02b0\u0301",
    "\u0441\u043b\u043e\u0432\u043e", "\u0421\u041b\u043e\u0432\u043e", "\u03bb\u03cc\u03b3\u03bf\u03c2", "\u00d7",
    "\u00b7", "\u05e9\u05dc\u05d5\u05dd", "\u0410",
    "\u4e2d", "\u6587\u5b57", "\ud55c", "\u0e44\u0e17\u0e22", "\u0639\u0631\u0628\u064a", "\u0640",
    "\U0001f600", "\U0001f44d\U0001f3fd", "\u200d",
    "\ue000", "\uf8ff", "\U000f0000", "\U00100000",
    "!", ".", ",", "/", "//", "\\", "_", "-", "^", "#", "$", "(", ")", "<|endoftext|>",
    "\u2581", "\u2581\u2581", "\ud800", "\x00",
    "x" * 300, " " * 40, "\n" * 5, "\r\n" * 3, "0" * 7,
)
parts_text = st.lists(
    st.one_of(st.sampled_from(PARTS), st.sampled_from(PARTS), st.characters(), st.text(max_size=4)),
    max_size=40,
).map("".join)


@needs_scanner
@given(parts_text)
def test_scanner_equals_regex_findall(text):
    for name in NAMES:
        assert scanner.scan(text, name) == regex.findall(PATTERNS[name], text), name


@needs_scanner
@given(st.text())
def test_scanner_equals_regex_on_any_text(text):
    for name in NAMES:
        pieces = scanner.scan(text, name)
        assert "".join(pieces) == text
        assert pieces == regex.findall(PATTERNS[name], text), name


# A few characters, one of each kind that the scanners' ASCII shortcuts tell apart (space,
# line breaks, tab, punctuation, '/', a digit, letters of each case, an apostrophe) and a few
# non-ASCII ones that end those shortcuts (white space, letters, a mark, a digit): every
# pair and triple of them comes up, as in "\n \n(" or " 1", which PARTS rarely strings
# together.
FEW = " \n\r\t,./(1aA'sd\u00a0\u3000\u00e9\u00c9\u0301\u4e2d\u0663"


@needs_scanner
def test_scanner_equals_regex_on_every_string_of_three_few_characters():
    strings = [a + b + c for a in FEW for b in FEW for c in FEW]
    for name in NAMES:
        for text in strings:
            assert scanner.scan(text, name) == regex.findall(PATTERNS[name], text), (name, text)


@needs_scanner
@given(st.text(alphabet=FEW, max_size=30))
def test_scanner_equals_regex_on_few_characters(text):
    for name in NAMES:
        assert scanner.scan(text, name) == regex.findall(PATTERNS[name], text), name


@needs_scanner
def test_scanner_on_every_code_point():
    # All 1,114,112 code points in order: every character's class, in a run of neighbours.
    every = charclasses.every_code_point()
    for name in NAMES:
        assert scanner.scan(every, name) == regex.findall(PATTERNS[name], every), name


@pytest.mark.slow
@needs_scanner
def test_scanner_on_every_code_point_in_context():
    # Each code point after and before a space, a letter, a digit, an apostrophe, a newline
    # and a mark: the classes of every character against every rule.
    every = charclasses.every_code_point()
    contexts = (" {}", "a{}b", "1{}2", "'{}s", "\n{}\n", "\u0301{}\u0301", "{}'S", "A{}a")
    for context in contexts:
        text = "".join(context.format(c) for c in every[:: 1 if context == contexts[0] else 3])
        for name in NAMES:
            assert scanner.scan(text, name) == regex.findall(PATTERNS[name], text), (name, context)


PATHOLOGICAL = (" ", "\n", "^", "0", "a", "'s")


@needs_scanner
@pytest.mark.parametrize("unit", PATHOLOGICAL)
def test_pathological_megabyte(unit):
    # A megabyte of one character: backtracking engines can go quadratic here; the scanner
    # reads it once. Each input is counted once per pattern and checked against regex.
    text = unit * (1_000_000 // len(unit))
    for name in NAMES:
        assert counted([text], name) == dict(Counter(regex.findall(PATTERNS[name], text)))


@needs_scanner
def test_corpora_start_of_every_file(corpora):
    files = sorted(corpora.rglob("*.txt"))
    assert files
    for path in files:
        text = read_corpus(path, limit=20_000)
        for name in NAMES:
            assert scanner.scan(text, name) == regex.findall(PATTERNS[name], text), (path.name, name)


@pytest.mark.slow
@needs_scanner
def test_corpora_whole(corpora):
    for path in sorted(corpora.rglob("*.txt")):
        text = read_corpus(path)
        for name in NAMES:
            expected = Counter(regex.findall(PATTERNS[name], text))
            assert count_pieces([text], name) == dict(expected), (path.name, name)


# ---- the class table ----


def test_class_table_agrees_with_regex_on_sampled_code_points():
    table = charclasses.class_table()
    rng = random.Random(4)
    sample = list(range(0x300)) + [rng.randrange(0x110000) for _ in range(3000)]
    checks = {
        charclasses.LETTER: r"\p{L}",
        charclasses.NUMBER: r"\p{N}",
        charclasses.SPACE: r"\s",
        charclasses.MARK: r"\p{M}",
        charclasses.UPPERISH: r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",
        charclasses.LOWERISH: r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]",
    }
    for cp in sample:
        for bit, prop in checks.items():
            assert bool(table[cp] & bit) == bool(regex.match(prop, chr(cp))), (hex(cp), prop)


def test_no_code_point_outside_the_measured_ranges_is_in_a_class():
    # What lets the classes be measured in assigned_ranges() only: each class, and the
    # contraction letters under (?i), misses every code point outside them.
    every = charclasses.every_code_point()
    skipped = [(0, 0x110000)]
    for start, end in charclasses.assigned_ranges():
        last_lo, last_hi = skipped.pop()
        skipped += [(last_lo, start), (end, last_hi)]
    skipped = [(lo, hi) for lo, hi in skipped if lo < hi]
    assert skipped, "planes 4-13 are empty in every Unicode version so far"
    classes = [prop for prop, _ in charclasses.PROPERTIES] + [r"\p{L}", f"(?i)[{charclasses.CONTRACTION_LETTERS}]"]
    for lo, hi in skipped:
        for prop in classes:
            assert regex.search(prop, every, pos=lo, endpos=hi) is None, (prop, hex(lo), hex(hi))


def test_assigned_ranges_take_everything_once_the_empty_planes_hold_a_character(monkeypatch):
    # As a newer Unicode would: here the "empty" planes are made to hold CJK ideographs.
    monkeypatch.setattr(charclasses, "EMPTY_PLANES", (0x4E00, 0x9FFF))
    charclasses.assigned_ranges.cache_clear()
    try:
        assert charclasses.assigned_ranges() == ((0, 0x110000),)
    finally:
        monkeypatch.undo()
        charclasses.assigned_ranges.cache_clear()
    assert charclasses.assigned_ranges() == ((0, 0x40000), (0xE0000, 0x110000))


def test_version_sentinels_date_pythons_own_unicodedata():
    import unicodedata

    python = charclasses.newest_version(lambda cp: unicodedata.category(chr(cp)) != "Cn")
    assert python == ".".join(unicodedata.unidata_version.split(".")[:2])


def test_unicode_version_is_what_regex_knows():
    version = charclasses.unicode_version()
    sentinels = dict(charclasses._VERSION_SENTINELS)
    assert version in sentinels
    assert regex.match(r"\P{Cn}", chr(sentinels[version]))
    later = [cp for v, cp in charclasses._VERSION_SENTINELS if float(v) > float(version)]
    assert all(not regex.match(r"\P{Cn}", chr(cp)) for cp in later)


def test_contraction_folds_are_what_regex_folds():
    for cp, letter in charclasses.contraction_folds():
        assert regex.fullmatch("(?i)" + letter, chr(cp))
    folded = {chr(cp) for cp, _ in charclasses.contraction_folds()}
    assert "\u017f" in folded  # LATIN SMALL LETTER LONG S matches s


# ---- counting ----


docs_strategy = st.lists(parts_text, max_size=8)


@needs_scanner
@settings(deadline=None)
@given(docs_strategy, st.sampled_from(NAMES), st.integers(1, 3), st.sampled_from([(), ("<|endoftext|>",), ("<|e|>", "'s")]),
       st.integers(1, 80), st.booleans(), st.booleans())
def test_a_jsonl_file_counts_as_its_documents(docs, name, threads, specials, read, ascii_only, compressed):
    # Its documents reach the counter as runs read in C (a read of whole lines at a time;
    # `read` bytes a read, so that a run holds a few lines or one): the same counts, in the
    # same order, as the documents counted as str; blank lines hold none.
    import gzip
    import json
    import tempfile

    import functionalbpe as fb
    from functionalbpe.text import corpus

    def written(doc: str) -> str:  # a lone surrogate only as a \u escape (else not UTF-8)
        return json.dumps({"text": doc}, ensure_ascii=ascii_only or any("\ud800" <= c <= "\udfff" for c in doc))

    lines = "".join(written(doc) + "\n" + ("\n" if k % 3 == 1 else "") for k, doc in enumerate(docs)).encode("utf-8")
    saved = corpus.JSONL_READ_BYTES
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "d.jsonl.gz" if compressed else "d.jsonl")
        with (gzip.open if compressed else open)(path, "wb") as fh:
            fh.write(lines)
        corpus.JSONL_READ_BYTES = read
        try:
            assert any(isinstance(unit, corpus.DocumentRun) for unit in fb.files(path).units(runs=True)) == bool(docs)
            got = count_table(fb.files(path), PlainScheme(name), specials, threads=threads)
        finally:
            corpus.JSONL_READ_BYTES = saved
    expected = count_table(docs, PlainScheme(name), specials, threads=1)
    assert list(got.items()) == list(expected.items())


@given(docs_strategy, st.sampled_from(NAMES), st.integers(1, 5))
def test_count_equals_regex_counter_in_order(docs, name, threads):
    # count reads a lone surrogate as U+FFFD, as training and encoding do.
    expected: Counter = Counter()
    for doc in docs:
        expected.update(regex.findall(PATTERNS[name], bpe_text(doc)))
    got = count_table(docs, PlainScheme(name), threads=threads)
    assert list(got.items()) == list(expected.items())  # same counts, same first-seen order
    assert len(got) == len(expected) and got.offsets[-1] == len(got.data)


@given(docs_strategy, st.sampled_from(NAMES), st.integers(1, 4), st.sampled_from([(), ("<|endoftext|>",), ("<|e|>", "<|", "'s")]))
def test_count_pieces_with_special_tokens(docs, name, threads, specials):
    from functionalbpe.text.patterns import split_special

    # count_pieces reads a lone surrogate as U+FFFD (as training and encoding do).
    expected: Counter = Counter()
    for doc in docs:
        for segment, is_special in split_special(bpe_text(doc), specials):
            if not is_special:
                expected.update(regex.findall(PATTERNS[name], segment))
    got = count_pieces(docs, name, threads=threads, special_tokens=specials)
    assert list(got.items()) == list(expected.items())


@needs_scanner
def test_threads_do_not_change_the_result():
    from ..helpers import stdlib_text

    docs = stdlib_text(3_000_000)
    one = count_table(docs, PlainScheme("gpt4"), threads=1)
    for threads in (2, 3, 8, None):
        assert count_table(docs, PlainScheme("gpt4"), threads=threads) == one


@needs_scanner
def test_large_batches_in_parallel_equal_regex():
    # Enough text for several batches on several threads, with special tokens in it.
    from ..helpers import stdlib_text

    docs = stdlib_text(2_000_000)
    text = "<|endoftext|>".join(docs)
    expected = Counter()
    for segment in text.split("<|endoftext|>"):
        expected.update(regex.findall(PATTERNS["o200k"], segment))
    got = count_pieces([text, text], "o200k", threads=3, special_tokens=["<|endoftext|>"])
    assert got == {p: 2 * c for p, c in expected.items()}


@needs_scanner
@pytest.mark.parametrize("how", ["hand-written", "compiled"])
def test_pieces_of_one_byte_counted_aside_equal_regex_in_order(how, monkeypatch):
    # A piece of one ASCII byte is counted aside once its entry is on its way into the table,
    # and added to it when the worker's share of a batch is done (csrc/lib/count/count.h,
    # fbpe_singles): with the Functionalizer's pattern every space is such a piece. Several
    # batches, three threads, both scanners: the same counts in the same order as regex.
    from ..helpers import stdlib_text

    monkeypatch.setattr(scanner, "BATCH_BYTES", 1 << 16)

    docs = [d.replace("\n", " \n", 3) for d in stdlib_text(1_500_000)] + [" ", ",", "a , b ,, c"]
    expected: Counter = Counter()
    for doc in docs:
        expected.update(regex.findall(PATTERNS["functionalizer"], doc))
    assert sum(c for p, c in expected.items() if len(p) == 1) > 100_000
    pattern = "functionalizer" if how == "hand-written" else scanner.PROGRAM + PATTERNS["functionalizer"]
    for threads in (1, 3):
        assert list(counted(docs, pattern, threads=threads).items()) == list(expected.items())


def test_custom_pattern_keeps_the_regex_path():
    assert count_pieces(["ab ab  cd"], r"\w+|\s+") == {"ab": 2, " ": 1, "  ": 1, "cd": 1}
    # The text of a built-in pattern counts as that pattern.
    assert count_pieces(["don't"], PATTERNS["gpt2"]) == {"don": 1, "'t": 1}


def test_count_report():
    reports = []
    counts = count_pieces(["hello world", "hello"], "gpt4", report=reports.append)
    (report,) = reports
    assert report.documents == 2 and report.chars == 16 and report.bytes == 16
    assert report.unique_pieces == len(counts) == 2
    assert report.table_bytes > 0
    assert "unique pieces" in str(report)


@needs_scanner
def test_non_str_document_is_a_clear_error():
    from functionalbpe.errors import FunctionalBPEError

    with pytest.raises(FunctionalBPEError, match="must be a str"):
        count_pieces([b"bytes"], "gpt4")


@needs_scanner
def test_surrogates_and_nul_are_counted_like_regex():
    text = "a\ud800b \x00\x00 \udfff's"
    for name in NAMES:
        assert counted([text], name) == dict(Counter(regex.findall(PATTERNS[name], text)))


@given(docs_strategy, st.sampled_from(NAMES), st.integers(1, 4))
def test_flat_table_equals_the_dict(docs, name, threads):
    table = count_table(docs, PlainScheme(name), threads=threads)
    expected = count_pieces(docs, name, threads=1)
    assert table.to_dict() == expected and list(table.items()) == list(expected.items())
    assert PieceTable.from_dict(expected) == table


@needs_scanner
def test_counter_goes_on_after_a_result():
    counter = scanner.PieceCounter("gpt2", threads=3)
    try:
        counter.add_text("a b")
        assert counter.result() == {"a": 1, " b": 1}
        counter.add_texts(["b a", " c"])
        assert list(counter.result().items()) == [("a", 1), (" b", 1), ("b", 1), (" a", 1), (" c", 1)]
        held, memory = counter.stats()
        assert held == 5 and memory > 0
    finally:
        counter.close()


@given(parts_text, st.sampled_from(NAMES))
def test_pretokenize_uses_the_scanner_and_equals_regex(text, name):
    from functionalbpe.text.patterns import iter_pieces, pretokenize

    assert pretokenize(text, name) == pretokenize(text, PATTERNS[name]) == list(iter_pieces(text, name))


@needs_scanner
def test_ctrl_c_while_counting_leaves_a_working_process():
    import _thread
    import threading

    docs = ["some words, and more words; " * 40_000] * 24  # about 27 MB in 24 documents
    # A process started in the background by a shell ignores SIGINT, and then
    # interrupt_main does nothing: give it Python's handler for the test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.05, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            count_pieces(docs, "gpt4", threads=2)
            time.sleep(5)  # the counting ended before the interrupt: wait for it here
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert count_pieces(["after words"], "gpt4", threads=2) == {"after": 1, " words": 1}


@needs_scanner
def test_runs_of_every_length_before_every_kind_of_character():
    # Letter and space runs are read eight bytes at a time: end them at every offset of a
    # word, before ASCII and non-ASCII letters, marks, digits, spaces and the end.
    tails = ["", "é", "É", "\u0301", "中", "1", " ", "  x", "\n", "'s", "'S", "!", "a\u00a0", "\u3000b", "_"]
    for length in range(0, 20):
        for unit in ("a", "Z", " ", "\t"):
            for tail in tails:
                text = unit * length + tail + "x" + unit * (length % 9) + tail
                for name in NAMES:
                    assert scanner.scan(text, name) == regex.findall(PATTERNS[name], text), (name, text)


def joined(pieces):
    """The Functionalizer's runs of identical pieces joined, in Python (the reference)."""
    from functionalbpe.schemes.functional import Functionalizer

    return Functionalizer(pattern="gpt4")._join_runs(pieces)


RUN_PARTS = (" ", "  ", "\n", "x", " x", "ab", "!!\n", "1", "é", "\u2581", "\t", "_", "a b ")
run_text = st.lists(
    st.tuples(st.one_of(st.sampled_from(RUN_PARTS), st.sampled_from(PARTS)), st.integers(1, 9)),
    max_size=12,
).map(lambda runs: "".join(part * k for part, k in runs))


@needs_scanner
@given(run_text)
def test_joined_scanner_equals_joined_regex_findall(text):
    for name in NAMES:
        assert scanner.scan(text, name + "+joined") == joined(regex.findall(PATTERNS[name], text)), name


@needs_scanner
def test_joined_scanner_on_long_runs():
    # Blocks of 255 pieces, a last block of 1 or 2 apart, and pieces whose period is over 255
    # characters never joined: at the limits, for the paper's split and for gpt4.
    for k in (2, 3, 254, 255, 256, 257, 258, 600):
        for text in (" " * k + "x", "x" + " ab" * k, "!" * 256 + "\n" + ("é" * 256 + "!\n") * k):
            for name in ("functionalizer", "gpt4", "functionalizer-llama"):
                expected = joined(regex.findall(PATTERNS[name], text))
                assert scanner.scan(text, name + "+joined") == expected, (name, k)
                assert counted([text], name + "+joined") == dict(Counter(expected)), (name, k)


def test_paper_split_isolates_every_space():
    from functionalbpe.text.patterns import pretokenize

    pieces = pretokenize("    x = 1", "functionalizer")
    assert pieces == [" ", " ", " ", " ", "x", " ", "=", " ", "1"]
    # The paper's regex applied as an isolated split (HF Split(behavior="isolated")): its
    # matches and the text between them.
    paper = r"\n+|\t+|[ ]| |[^\p{L}\p{N}\s _]+"
    for text in ("    x = 1", "def f(a_b):\n\treturn  a\u00a0b▁▁c  # 12\n\n"):
        isolated, at = [], 0
        for m in regex.finditer(paper, text):
            isolated += [text[at : m.start()]] if m.start() > at else []
            isolated.append(m.group())
            at = m.end()
        isolated += [text[at:]] if at < len(text) else []
        assert pretokenize(text, "functionalizer") == isolated


@pytest.mark.parametrize("block", [16, 64, 1000])
def test_joined_runs_survive_the_safe_cuts_of_the_paper_split(tmp_path, block):
    # The functional scheme with the paper's split declares that a file may be counted in
    # blocks cut at safe places: runs of spaces (the only pieces that repeat in a row) never
    # span such a cut. Counted in tiny blocks, the table is that of the whole text.
    from functionalbpe.schemes.functional import Functionalizer
    from functionalbpe.text.corpus import Files

    scheme = Functionalizer()
    assert scheme.compiled().cuts_safely
    text = "def f(x):\n        return x.y  # z\n\n    a = b,c\n" * 30 + "x" + " " * 600 + "!\n" + "Ab. Cd.\n" * 20
    path = tmp_path / "code.txt"
    path.write_text(text, encoding="utf-8")
    assert count_table(Files([path], block_bytes=block), scheme).to_dict() == dict(Counter(scheme.raw_pieces(text)))
    assert dict(Counter(scheme.raw_pieces(text))) == dict(Counter(joined(regex.findall(PATTERNS["functionalizer"], text))))
