"""The compiled engine's shortcuts (csrc/lib/scan/regex_vm.c) change no piece: runs read eight
ASCII bytes at a time for any atom whose ASCII members are one range (or A-Z a-z), a run
followed by a negative look-ahead of a disjoint atom before the end (``\\s+(?!\\S)``) decided
without the matcher, an alternative whose greedy steps could only give back ASCII
characters that nothing after them can begin dropped without the matcher trying every way of
giving back (o200k's ``[\\p{Lu}..]*[\\p{Ll}..]+`` on ``"I"``), and the quick entries that
decide a piece at an ASCII character before the engine's general path. Each is checked against
``regex.findall`` on text made to hit it: range edges (NUL, DEL, ``@``, ``[``, backquote,
``{``), runs across every offset of an eight-byte word, letters of the kinds the case classes
share (Lm, Lo, M), words of letters with digits or ``_`` inside, and safe cuts at every block
size."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from functionalbpe.core._native import Scanner

from .test_compiled_patterns import ALL, assert_blocks_keep_the_pieces, compiled, needs_scanner, reference, scanner

FAST = {
    # ranges: A-Z a-z folded, digits, a range from NUL, one up to DEL, a one-byte range
    "ranges": r"""[A-Za-z]+|\d+|[\x00-\x08]+|[x-\x7f]+|[@-`]+|-+|\s+(?!\S)|\s+|[\s\S]""",
    # o200k's case runs, with Lm and M in both (giving back a wide character can help)
    "cases": r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}{1,3}|[\s\S]""",
    # look-aheads after runs: disjoint (the step) and not (the matcher), min 0, 1 and 2
    "run-not": r"""[a-c]{2,}(?![x-z])|[a-c]+(?![x-z])|[d-f]*(?!\d)|[x-z]+(?![a-z])|\s+(?!\S)|\S+(?!\s)|[\s\S]""",
    # a greedy run before a required run that shares ASCII (never futile) and one that does not
    "futile": r"""[a-z]*[a-z0-9]+|[A-Z]?[A-Z]*\d+|[A-Z]+[a-z]|\s*[\r\n]+|[\s\S]""",
    # loops of arms (run_loop): SuperBPE's shape with other classes, a look-ahead whose
    # alternatives are decided by a guard, a head (X? Y), a run-not step, steps then the
    # matcher (a nested choice, a lazy run), and a nullable tail before its end
    "loop-cuts": r"""\d{1,3}| ?[^\s\w]{2,}[\r\n/]*| +(?!\S)|(?:[a-z]++|[^\S ]++|(?!\d{1,3}| ?[^\s\w]{2,}[\r\n/]*| +(?!\S))[\s\S])++""",
    # greedy, not atomic, B* and B+; counted runs; look-aheads of one character; positive ones
    "loop-arms": r"""(?:[a-c]{1,3}|(?=\s)[\s\S]|(?!x)\d)+|(?:(?=ab|c\d?|\s\s)[a-z\s]|[A-Z]+)*|(?:(?!a+?b|(?:c|d)e|x*$)[\s\S])+|[\s\S]""",
    # BLOOM's shape: one arm, a look-ahead X? Y whose optional character is taken on trust
    "loop-one-arm": r""" ?[^\s.,'é]+|(?:(?! ?[^\s.,'é])[\s\S])+""",
    # run_loop's tables: a word run decided by the pair table, runs of other ranges, a
    # character taken alone or the end decided by the third character (loop_triples)
    "loop-triples": r"""(?:(?!ab|c\d)[a-z]++|[0-9]++|\t++|(?!\.\.x|\.\d\d)[.,]|(?!\s\s)\s)++|[\s\S]""",
    # the quick entries (fbpe_rx_quick_end) of each kind, in the order tried: a run given
    # back to an atom it lacks (no entry), counted runs stopped by their maximum or by a
    # character, fused runs of a range and of a class that is not one, with a head, a tail
    # and a guard, runs given back to a line break (an atom, a run, a minimum), a run-not
    "quick": r"""[ab]*c|\d{2,4}|[A-Z]?[a-z]+[0-9]*(?:'s|'t)?|[a-z]{1,3}|[ \t]*\n+|[ \n]{2,}\n|\t*\n|[!-/]?[^\sa-z0-9]+[\r\n]*|\s+(?!\S)|\s+|[\s\S]""",
    # runs taken whole at a character of their own (FBPE_RX_QUICK_RUN): Y+ and Y* of a
    # range and of a class that is not one, after a head X? the character is not (X not
    # taken), beside a head it is (FUSED), and Y+ of one character (the Functionalizer's ` +`)
    "quick-run": r"""[,.]?[a-z0-9_]+|[\p{L}\p{N}_\x0b]*|\t+| +|[^\sa-z]+|[\s\S]""",
    # runs before the end ($: the end, or before a final \n): possessive and greedy, of an
    # atom without \n (which $ may then follow; a quick entry after it decides where it
    # fails), with a minimum; bounded (no quick entry)
    "run-end": r"""[a-z]+|[ \t]+$|[0-9]\s{2,}$|[ ]{1,2}$|[ \t]|\s++$|\s+$|\s*\n|\s+(?!\S)|\s|[\s\S]""",
}

ALPHABET = "aAbcxyzZd09 \n\r\t\x00\x07\x7f@[`{-'sTʰǅÉéа\u0301\u3000…中"
FAST_AND_SHIPPED = {**FAST, **{n: ALL[n] for n in ("gpt2", "gpt4", "o200k", "tekken", "llama3", "superwords", "functionalizer", "functionalizer-runs")}}


@needs_scanner
@pytest.mark.parametrize("name", sorted(FAST_AND_SHIPPED))
@given(st.text(ALPHABET, max_size=60))
def test_fast_paths_equal_regex(name, text):
    pattern = FAST_AND_SHIPPED[name]
    assert compiled(pattern, text) == reference(pattern, text)


def _runs():
    """Runs of every length up to 19 (across the eight-byte words) of one character, ended
    by each kind of character, at every offset."""
    for c in "aZ0x\x00\x7f@ \n-":
        for stop in ("", " ", "b", "B", "1", "é", "ʰ", "\n", "\x7f", "'s", "\u3000"):
            for k in range(0, 20):
                for lead in ("", "q", "Q "):
                    yield lead + c * k + stop + "tail"


def _words_of_letters_and_more():
    """Words of letters with another member of their atom inside (the Functionalizer's
    ``[\\p{L}\\p{N}_]``, read sixteen letters at a time and the byte that stops them alone):
    the other member at every offset of the sixteen-byte read, letters after it, then each
    kind of end."""
    for k in range(0, 20):
        for other in ("_", "0", "_9", "\x0b", "é", "_é"):
            for after in (0, 1, 15, 17):
                for stop in ("", " ", "-", "é", "\n", "  x"):
                    yield "a" * k + other + "Z" * after + stop + "tail"


RUNS = list(_runs()) + list(_words_of_letters_and_more())


@needs_scanner
@pytest.mark.parametrize("name", sorted(FAST_AND_SHIPPED))
def test_runs_of_every_length(name):
    pattern = FAST_AND_SHIPPED[name]
    for text in RUNS:
        assert compiled(pattern, text) == reference(pattern, text), repr(text)


@needs_scanner
@pytest.mark.parametrize("name", sorted(FAST_AND_SHIPPED))
def test_runs_at_the_end(name):
    """Runs of white space at the end of the text and before a final line break, where $
    holds, and just short of it."""
    pattern = FAST_AND_SHIPPED[name]
    for c in " \t\n":
        for k in range(0, 12):
            for stop in ("", "\n", "x", "\nx", "x\n", "é", "\u3000", "\n\n"):
                for lead in ("", "q", "9", "Q "):
                    text = lead + c * k + stop
                    assert compiled(pattern, text) == reference(pattern, text), repr(text)



LONG = ["a" * 5000 + "B", "A" * 5000 + "b", "AB" * 2000 + "ʰ", "I " * 3000, " " * 4000 + "x", "\n " * 2000,
        "0" * 4000, "\x7f" * 3000, "ʰ" * 2000 + "a", "Aʰ" * 1000 + "\n"]


@needs_scanner
@pytest.mark.parametrize("name", sorted(FAST_AND_SHIPPED))
def test_long_runs(name):
    pattern = FAST_AND_SHIPPED[name]
    for text in LONG:
        assert compiled(pattern, text) == reference(pattern, text), text[:10]


@needs_scanner
@pytest.mark.parametrize("name", sorted(FAST))
def test_cuts_at_every_block_size(name, tmp_path):
    text = "".join(RUNS[::7]) + "".join(LONG).replace("\x00", "")
    assert_blocks_keep_the_pieces(FAST[name], text, tmp_path, (1024, 1500, 3000, 4096, 10_000))


@needs_scanner
@given(st.text(ALPHABET, max_size=50), st.integers(1, 30))
def test_every_cut_of_the_fast_paths_is_safe(text, hi_back):
    data = text.encode("utf-8")
    for name, pattern in FAST.items():
        c = scanner.program_safe_cut(data, Scanner.program(pattern).name, max(0, len(data) - hi_back))
        if c:
            head, tail = data[:c].decode("utf-8"), data[c:].decode("utf-8")
            whole = reference(pattern, text)
            if whole is not None:
                assert reference(pattern, head) + reference(pattern, tail) == whole, (name, c)


# Loops whose arms are decided at an ASCII character by tables (loop_verdicts in regex_vm.c):
# by the character alone, or by it and the next one where an arm's look-ahead asks (several
# arms asking at one character: a space here), else by the arms one by one.
LOOP_VERDICTS = {
    **{n: FAST[n] for n in ("loop-cuts", "loop-arms", "loop-one-arm", "loop-triples")},
    "superwords": ALL["superwords"],
    "loop-verdicts": r"""(?:(?!a\d)[a-c]|(?= [a-z])[\s\S]|(?!\s\s)[\s\n]|[0-9]{2,}+)++|[\s\S]""",
    # a run with a look-ahead at its start: an iteration begun inside it would end the loop
    # ("ab"), so its loop is not passed over by blocks
    "loop-run-test": r"""(?:(?!ab)[a-z]++| )++|[\s\S]""",
}
VERDICT_ALPHABET = "ab c\n0x.,-é\t"


def _short_texts():
    """Every text of up to three characters of VERDICT_ALPHABET, then each with a tail."""
    texts = [""]
    for _ in range(3):
        texts = texts + [t + c for t in texts for c in VERDICT_ALPHABET if len(t) == _]
    return [t for t in texts if t] + [t + "ab 0" for t in texts if len(t) == 3][::5]


SHORT_TEXTS = _short_texts()


@needs_scanner
@pytest.mark.parametrize("name", sorted(LOOP_VERDICTS))
def test_loop_verdicts_every_short_text(name):
    pattern = LOOP_VERDICTS[name]
    for text in SHORT_TEXTS:
        assert compiled(pattern, text) == reference(pattern, text), repr(text)


@needs_scanner
@pytest.mark.parametrize("name", sorted(LOOP_VERDICTS))
def test_loop_verdicts_cut_safely(name):
    """What the tables read (the next character where they ask) is what the arms read: a
    cut the program calls safe after a piece decided by the pair keeps the pieces."""
    assert_safe_cuts_keep_the_pieces(LOOP_VERDICTS[name], SHORT_TEXTS[::3], 1)


def assert_safe_cuts_keep_the_pieces(pattern, texts, step):
    """Every cut the program calls safe, asked for at every step-th byte, keeps regex's pieces."""
    prog = Scanner.program(pattern).name
    for text in texts:
        data = text.encode("utf-8")
        whole = reference(pattern, text)
        if whole is None:
            continue
        for hi in range(1, len(data), step):
            c = scanner.program_safe_cut(data, prog, hi)
            if c:
                head, tail = data[:c].decode("utf-8"), data[c:].decode("utf-8")
                assert reference(pattern, head) + reference(pattern, tail) == whole, (text, c)


# Loops passed over sixteen bytes at a time where every iteration goes on (loop_blocks_from in
# regex_vm.c): prose with one character that stops or asks at every offset of a block (a
# digit, two marks, two spaces, a space before a mark, a tab, a line break, non-ASCII letters
# inside a run and alone), and words of every kind strung together.
PROSE = "the cat sat on the mat, and a dog ran by it. " * 3
STOPS = ["7", "..", "  ", " (", "\t", "\n", "é", "中", "aé", "\u3000", "x\u0301"]
BLOCK_WORDS = ["ab", "c", "abcabcabcabcabcabc", " ", " ", " ab", " c", "  ", ".", ",", "-", "..", "0", "123",
               "\n", "\t", "é", "éab", "xé", "中", "\u3000", " (", "x\u0301"]

# Two-byte letters read in a block as the ASCII character whose atoms they share (wide_as_ascii
# in regex_vm.c), and a character before a non-ASCII one decided by that one's class
# (loop_wide): French and Russian prose with a character put at every offset of two blocks,
# so that a letter's two bytes fall on each side of a block's edge; beside them the
# characters of a lead byte that are no letters (× ÷), capitals, Greek (a lead byte not all
# of whose characters are letters), marks before a space; and loops whose word arm holds all,
# half or the lower case of these letters.
WIDE_PROSE = "le château où l'élève ôta ses bottes était à côté du pré; déjà vu. по-русски: «слово», всё ж. " * 2
WIDE_STOPS = ["é", "É", "×", "÷", "×.", " ÷,", "ő", "œ", "ÿ", "ð", " à", "é\n", "ö", "«é»", "ée", "1é", "ж", " Ж",
              "ж.", " «", "Ґ", "α", " λ", "\u0482", " \u00a0", "…\n\n", " —"]
WIDE_WORDS = ["été", " à", " où", "É", "x", " ab", "×", "÷", "×.", "ő", " ", "  ", ".", ", ", "é.", "0", "\n", "ÿé",
              "ðö", " слово", "Ж", " «", "»", "α", " —"]
WIDE_LOOPS = {
    "superwords": ALL["superwords"],
    "loop-cuts": FAST["loop-cuts"],  # its word arm is [a-z]: the letters are read as "_" (also \w)
    # a word arm with half of the Latin-1 letters and half of Cyrillic's lead bytes' letters
    "loop-wide-half": r"""(?:[a-z\u00e0-\u00ff\u0430-\u044f]++| )++|[\s\S]""",
    # lower case only: no lead byte's characters are all read
    "loop-wide-lower": r"""(?:\p{Ll}++| )++|[\s\S]""",
    # a space asked about with the character after it, a letter or not
    "loop-wide-pairs": r"""(?:[\p{L}]++|(?! [^\s\p{L}])[\s\S])++|[\s\S]""",
}


def _with_stops(prose, stops, offsets):
    for stop in stops:
        for k in range(0, offsets):
            yield prose[:k] + stop + prose[k:]


BLOCK_CASES = {**{(n, "ascii"): LOOP_VERDICTS[n] for n in LOOP_VERDICTS}, **{(n, "wide"): WIDE_LOOPS[n] for n in WIDE_LOOPS}}
BLOCK_TEXTS = {"ascii": list(_with_stops(PROSE, STOPS, 48)), "wide": list(_with_stops(WIDE_PROSE, WIDE_STOPS, 40))}
BLOCK_WORD_LISTS = {"ascii": BLOCK_WORDS, "wide": WIDE_WORDS}


@needs_scanner
@pytest.mark.parametrize("name, texts", sorted(BLOCK_CASES))
def test_loop_blocks_stop_at_every_offset(name, texts):
    pattern = BLOCK_CASES[name, texts]
    for text in BLOCK_TEXTS[texts]:
        assert compiled(pattern, text) == reference(pattern, text), repr(text)


@needs_scanner
@pytest.mark.parametrize("name, texts", sorted(BLOCK_CASES))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_loop_blocks_equal_regex(name, texts, data):
    pattern = BLOCK_CASES[name, texts]
    text = "".join(data.draw(st.lists(st.sampled_from(BLOCK_WORD_LISTS[texts]), min_size=8, max_size=150)))
    assert compiled(pattern, text) == reference(pattern, text)


@needs_scanner
@pytest.mark.parametrize("name, texts", sorted(BLOCK_CASES))
def test_loop_blocks_cut_safely(name, texts):
    """What a block reads (up to the byte after it) is counted as read: a cut the program
    calls safe in long prose keeps the pieces."""
    assert_safe_cuts_keep_the_pieces(BLOCK_CASES[name, texts], BLOCK_TEXTS[texts][::17], 5)
