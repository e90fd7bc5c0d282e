"""Special tokens are cut out in one pass, whatever their number, exactly as before.

The rule (patterns.split_special): scan left to right; where special tokens start, the longest
is cut out and the scan goes on after it. The compiled cutter (an Aho-Corasick automaton over
the reversed tokens, csrc/lib/scan/specials.h), the trie regex of the pure-Python path, the C piece
counter and the streaming of files are each compared with a naive reference that tries every
token at every position, on text full of overlapping tokens.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

import functionalbpe as fb
from functionalbpe.util.checks import bpe_text
from functionalbpe.text import corpus as corpus_module
from functionalbpe.core._native import NATIVE
from functionalbpe.text.corpus import Files, _cut_safely
from functionalbpe.training import count_pieces
from functionalbpe.text.patterns import PATTERNS, RegexCutter, split_special, trie_regex

scanner = NATIVE.scanner
needs_scanner = pytest.mark.skipif(scanner is None, reason="the compiled scanner is not built")


def naive_split(text, specials):
    """The definition: at each position, the longest token that starts there, else one character."""
    ordered = sorted(set(s for s in specials if s), key=len, reverse=True)
    out, position, plain = [], 0, 0
    while position < len(text):
        token = next((s for s in ordered if text.startswith(s, position)), None)
        if token is None:
            position += 1
            continue
        if position > plain:
            out.append((text[plain:position], False))
        out.append((token, True))
        position = plain = position + len(token)
    if plain < len(text):
        out.append((text[plain:], False))
    return out


def cutters(specials):
    yield RegexCutter(specials)
    if scanner is not None:
        yield scanner.SpecialCutter(specials)


OVERLAPPING = ["<a>", "<a><b>", "a>", "<", "ab", "b>", "><", "<b>", "a", "ü>", "\ud800", "x<a>", "<a", "b<a><"]
texts = st.text(st.sampled_from("<>abü\ud800 x"), max_size=60)
special_sets = st.lists(st.sampled_from(OVERLAPPING), min_size=1, max_size=6)


@given(texts, special_sets)
def test_cutters_equal_the_naive_reference(text, specials):
    want = naive_split(text, specials)
    first = next(((sum(len(s) for s, _ in want[:k]), s) for k, (s, is_special) in enumerate(want) if is_special), None)
    for cutter in cutters(frozenset(specials)):
        assert cutter.split(text) == want, type(cutter).__name__
        assert cutter.search(text) == first, type(cutter).__name__
    assert split_special(text, specials) == want


def test_the_issue_example():
    specials = ["<a>", "<a><b>", "a>"]
    for cutter in cutters(frozenset(specials)):
        assert cutter.split("x<a><b>a>b<a>ab") == [
            ("x", False), ("<a><b>", True), ("a>", True), ("b", False), ("<a>", True), ("ab", False)
        ]


@given(st.lists(st.text(st.sampled_from("ab<"), min_size=1, max_size=5), min_size=1, max_size=12), st.text(st.sampled_from("ab<"), max_size=80))
def test_many_tokens_sharing_prefixes(specials, text):
    want = naive_split(text, specials)
    for cutter in cutters(frozenset(specials)):
        assert cutter.split(text) == want


def test_trie_regex_is_longest_first_and_nests_at_most_its_depth():
    assert trie_regex(["ab", "abc", "abd", "b"]) == "(?:ab(?:c|d)?|b)"
    deep = ["a" * k + "b" for k in range(1, 300)]  # 300 nested choices: written flat past 128
    text = "a" * 250 + "b" + "a" * 10
    assert RegexCutter(deep).split(text) == naive_split(text, deep)


@needs_scanner
def test_compiled_cutter_on_long_and_nested_tokens():
    # Tokens whose starts overlap the text everywhere: the cost per position of trying each
    # token would be its length; the automaton reads each byte once per window.
    specials = ["a" * k + "b" for k in range(1, 200)] + ["a" * 5000 + "c"]
    text = ("a" * 7000 + "b") * 3 + "a" * 6000 + "c" + "a" * 70_000 + "b"
    cutter = scanner.SpecialCutter(specials)
    want = naive_split(text[:20_000], specials)
    assert cutter.split(text[:20_000]) == want
    got = cutter.split(text)
    assert "".join(s for s, _ in got) == text
    assert [s for s, is_special in got if is_special] == ["a" * 199 + "b"] * 3 + ["a" * 5000 + "c", "a" * 199 + "b"]


# -- counting and streaming -----------------------------------------------------------------


@given(st.lists(texts, max_size=5), special_sets, st.sampled_from(sorted(PATTERNS)), st.integers(1, 3))
def test_counting_cuts_as_the_reference(docs, specials, pattern, threads):
    expected: Counter = Counter()
    for doc in docs:
        for segment, is_special in naive_split(bpe_text(doc), specials):  # counting reads text as encode does
            if not is_special:
                expected.update(regex.findall(PATTERNS[pattern], segment))
    got = count_pieces(docs, pattern, threads=threads, special_tokens=specials)
    assert dict(got) == dict(expected)
    assert list(got) == list(expected)  # the same order of first occurrence


@given(st.lists(st.sampled_from(["<a>", "<a><b>", "a>", "x.\n", ".\nab", "b>"]), min_size=1, max_size=4),
       st.text(st.sampled_from("<>ab.\n xy"), max_size=200), st.integers(16, 40))
def test_streamed_units_never_cut_inside_a_token(specials, text, block):
    data = text.encode()
    blocks = [data[i : i + block] for i in range(0, len(data), block)]
    avoid = [s.encode() for s in specials]
    units = list(_cut_safely(iter(blocks), avoid))
    assert b"".join(units) == data
    cut = 0
    for unit in units[:-1]:
        cut += len(unit)
        for token in avoid:  # no occurrence of any token spans a cut
            start = data.find(token, max(0, cut - len(token) + 1))
            assert not (0 <= start < cut < start + len(token)), (token, cut)


def test_streaming_with_overlapping_tokens_counts_as_the_whole(tmp_path):
    specials = ["<a>", "<a><b>", "a>", "b>"]
    rng = random.Random(1)
    text = "".join(rng.choice(["<a><b>", "a>", "<a>", "word ", ".\n", "b> ", "x"]) for _ in range(3000))
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    for block in (16, 29, 64):
        got = count_pieces(Files([path], block_bytes=block), "gpt4", special_tokens=specials)
        assert got == count_pieces([text], "gpt4", special_tokens=specials)


def test_the_byte_finder_is_longest_first():
    finder = corpus_module._bytes_finder(frozenset([b"<a>", b"<a><b>", b"\xc3\xbc>"]))
    assert finder.match(b"<a><b>x").group() == b"<a><b>"
    assert finder.match(b"\xc3\xbc>").group() == b"\xc3\xbc>"


# -- the HTML case: many tokens, the same result as one alternation ------------------------


def html(num_specials: int, chars: int, seed: int = 0):
    rng = random.Random(seed)
    specials = [f"<x{i}>" for i in range(num_specials)]
    words = "the quick brown fox <div> </p> &amp; x1 <x".split()
    parts, size = [], 0
    while size < chars:
        part = rng.choice(specials) + " ".join(rng.choices(words, k=rng.randint(1, 6)))
        parts.append(part)
        size += len(part)
    return specials, "".join(parts)


def test_many_special_tokens_train_and_encode_as_one_alternation():
    specials, text = html(2000, 100_000)
    # What the cut was before it was one pass: one alternation, longest first.
    alternation = regex.compile("|".join(map(regex.escape, sorted(specials, key=lambda s: (-len(s), s)))))
    want, position = [], 0
    for m in alternation.finditer(text):
        if m.start() > position:
            want.append((text[position : m.start()], False))
        want.append((m.group(), True))
        position = m.end()
    if position < len(text):
        want.append((text[position:], False))
    assert split_special(text, specials) == want
    expected: Counter = Counter()
    for segment, is_special in want:
        if not is_special:
            expected.update(regex.findall(PATTERNS["gpt4"], segment))
    assert count_pieces([text], "gpt4", special_tokens=specials) == dict(expected)
    tok = fb.train([text], vocab_size=256 + 2000 + 50, special_tokens=specials, progress=False)
    ids = tok.encode(text, allowed_special="all")
    assert tok.decode(ids) == text
    assert sum(1 for i in ids if i >= tok.vocab_size - 2000) == sum(1 for _, is_special in want if is_special)
    with pytest.raises(fb.SpecialTokenError, match=r"'<x\d+>' at offset 0"):
        tok.encode(text)
