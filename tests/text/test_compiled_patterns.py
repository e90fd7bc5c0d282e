"""The compiled pattern engine (unicode/regex_program.py, csrc/lib/scan/regex_vm.c) cuts every text
exactly as ``regex.findall`` does, for the patterns real tokenizers ship and for patterns
made to exercise each construct of the subset; outside the subset, and where its matcher
gives up, regex decides; a hostile pattern is bounded."""
from __future__ import annotations

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from functionalbpe.core._native import NATIVE, Scanner
from functionalbpe.errors import CompiledPatternGaveUp, PatternError
from functionalbpe.schemes.plain import PlainScheme
from functionalbpe.text import patterns as P
from functionalbpe.text.corpus import Files
from functionalbpe.text.counting import count_table
from functionalbpe.text.cuts import program_cutter, superword_safe_cut
from functionalbpe.text.patterns import as_pattern, pretokenize, resolve_pattern
from functionalbpe.unicode.regex_program import Unsupported, compile_program, why_not

from ..conftest import corpora_path, read_corpus
from .test_scanner import PARTS

scanner = NATIVE.scanner
needs_scanner = pytest.mark.skipif(scanner is None, reason="compiled scanner not built, or FUNCTIONALBPE_PUREPYTHON=1")

# The patterns real tokenizers ship, as each library spells it.
SHIPPED = {
    "gpt2": P.GPT2,
    # tiktoken_ext/openai_public.py, cl100k_base's pat_str (possessive, \s++$)
    "cl100k-tiktoken": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    # tiktoken's r50k/p50k string (possessive GPT-2)
    "r50k-tiktoken": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
    "gpt4": P.GPT4,
    "o200k": P.O200K,
    "llama3": P.LLAMA3,
    # Qwen 2's tokenizer.json: llama3 with single digits
    "qwen2": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    # Mistral's tekken (mistral-common): o200k's letters without contractions, single digits
    "tekken": r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    # BLOOM's isolated split " ?[^(\s|[.,!?…。，、।۔،])]+" (a nested set, which regex reads
    # only in version 1), with its gaps spelled out as SUPERWORDS spells them
    "bloom": r""" ?[^(\s|.,!?…。，、।۔،)]+|(?:(?! ?[^(\s|.,!?…。，、।۔،)])[\s\S])+""",
    # DeepSeek V3's three splits in order, as one alternation
    "deepseek": r"""\p{N}{1,3}|[一-龥぀-ゟ゠-ヿ]+|[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    "superwords": P.SUPERWORDS,
    "functionalizer": P.FUNCTIONALIZER,
    "functionalizer-runs": P.FUNCTIONALIZER_RUNS,
    "functionalizer-llama": P.FUNCTIONALIZER_LLAMA,
}

# Patterns of our own, each exercising constructs the shipped ones do not.
OWN = {
    # (?i) literals, positive look-ahead, lazy counted run, a script, an atomic group
    "literals": r"""(?i:hello|wor(?=ld))|\d{2,4}?|\p{Han}+|(?>a+|ab)c|[\s\S]""",
    # possessive runs, $ (end or before a final newline), lazy run with look-ahead
    "possessive": r"""\s++$|\S++(?=\s)|\S+|\s+?(?=\S)|\s""",
    # ^ and \A, counted group repeats, \z, \Z
    "anchors": r"""^\s+|\A\S|(?:[a-z]+[0-9]*){1,3}|[0-9]+\z|[^a-z0-9]|[0-9]\Z|[0-9]""",
    # backtracking across nested alternatives, negative look-ahead, dot and \n
    "backtracking": r"""(?:a|ab)(?:c|bcd)(?!x)|(?:x|xy)*?z|.|\n""",
    # POSIX class, possessive counted class, \w \W \d \D, escapes, lazy group loop
    "classes": r"""[[:alpha:]]+|[^\w\s]{1,2}+|\d\D|(?:\x41|\u00e9|\N{LATIN SMALL LETTER SHARP S})+?b|\w|\W""",
    # empty matches: findall then tries for a non-empty one at the same place
    "empty": r"""a*|b|(?:)|[\s\S]""",
    # (?s) dot, (?-i:) inside (?i), a global flag
    "flags": r"""(?i)(?s)s(?-i:T)|.{1,3}""",
}

ALL = {**SHIPPED, **OWN}
NAMES = sorted(ALL)


def reference(pattern: str, text: str):
    """regex.findall's non-empty pieces, or None where it drops a character."""
    pieces = [m.group() for m in regex.finditer(pattern, text)]
    if sum(map(len, pieces)) != len(text):
        return None
    return [p for p in pieces if p]


def compiled(pattern: str, text: str):
    """The compiled engine's pieces, or None where it gives up."""
    try:
        return scanner.scan(text, Scanner.program(pattern).name)
    except CompiledPatternGaveUp:
        return None


@pytest.mark.parametrize("name", NAMES)
def test_every_pattern_compiles(name):
    assert why_not(ALL[name]) is None
    builtin = [n for n, text in P.PATTERNS.items() if text == ALL[name]]  # qwen2 is functionalizer-llama
    builtin += [P.HAND_SCANNED[ALL[name]]] if ALL[name] in P.HAND_SCANNED else []
    assert as_pattern(ALL[name]).scanner == (Scanner(builtin[0]) if builtin else Scanner.program(ALL[name]))


parts_text = st.lists(
    st.one_of(st.sampled_from(PARTS), st.sampled_from(PARTS + ("hello", "World", "ab", "abcd", "xyz", "AAb", "éb",
                                                               "ßb", "\u4e2d\u6587", "sT", "St", "12 ", "\n ", "…"))),
    max_size=40,
).map("".join)


@needs_scanner
@given(parts_text)
def test_equals_regex_on_unicode_corners(text):
    for name in NAMES:
        assert compiled(ALL[name], text) == reference(ALL[name], text), name


@needs_scanner
@given(st.text())
def test_equals_regex_on_any_text(text):
    for name in NAMES:
        assert compiled(ALL[name], text) == reference(ALL[name], text), name


ADVERSARIAL = [
    " " * 5000, "\n" * 5000, "\r\n" * 2000, " \n" * 2000, "^" * 5000, "0" * 5000, "a" * 5000, "'s" * 3000,
    "'S'T'Re'vE'M'LL'd'\u017f" * 100, "!" * 5000 + "\n" * 10, "a" * 5000 + " " * 5000 + "b",
    " " * 4999 + "x", "\t" * 1000 + "\n", "\ud800" * 100, "x\ud800 \udfff y", "\u3000" * 1000 + "\u4e2d",
    "ab" * 3000 + "x", "aaab" * 1000, "xy" * 2000 + "z", "\u2581" * 1000, "_" * 1000, "A" * 3000 + "b",
    "", "\n", " ", "a\n", "a \n", "  \n\n", "x" + " " * 3 + "\n",
]


@needs_scanner
@pytest.mark.parametrize("name", NAMES)
def test_equals_regex_on_adversarial_text(name):
    for text in ADVERSARIAL:
        assert compiled(ALL[name], text) == reference(ALL[name], text), text[:20]


CORPORA = corpora_path()
CORPUS_FILES = sorted(CORPORA.glob("*/*.txt")) if CORPORA.is_dir() else []


@needs_scanner
@pytest.mark.skipif(not CORPUS_FILES, reason="../shared/corpora is absent")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_equals_regex_on_corpora(path):
    text = read_corpus(path, 20_000)
    for name in NAMES:
        assert compiled(ALL[name], text) == reference(ALL[name], text), name


@needs_scanner
def test_pretokenize_uses_the_engine_and_agrees():
    pattern = resolve_pattern(SHIPPED["cl100k-tiktoken"])
    assert pattern.scanner is not None and pattern.not_compiled is None
    assert NATIVE.scanner_for(pattern.scanner) is scanner
    text = "Hello   world's 12345!!\n  \n"
    assert pretokenize(text, pattern) == regex.findall(pattern, text)


@pytest.mark.parametrize(
    "pattern, construct",
    [
        (r"(?<=a)b|[\s\S]", "look-behind"),
        (r"(a)\1|[\s\S]", "backreference"),
        (r"\b\w+\b|[\s\S]", "word boundary"),
        (r"(?m)^a|[\s\S]", "flags"),
        (r"(?x) a | [\s\S]", "flags"),
        (r"(?:a?)*b|[\s\S]", "can match nothing"),
        (r"(?:(?:(?:a{100}){100}){100}){100}|[\s\S]", "instructions"),
        ("(?=" * 9 + "a" + ")" * 9 + r"a|[\s\S]", "nested"),
    ],
)
def test_outside_the_subset_falls_back_to_regex(pattern, construct):
    reason = why_not(pattern)
    assert reason is not None and construct in reason
    resolved = as_pattern(pattern)
    assert resolved.scanner is None and resolved.not_compiled == reason
    if "{100}" not in pattern:  # regex itself refuses to compile that one (pattern_limits)
        text = "ab ab\naab  aaab"
        assert pretokenize(text, resolved) == reference(pattern, text)


def test_unsupported_is_a_value_error_naming_the_offset():
    with pytest.raises(Unsupported, match="offset 2"):
        compile_program(r"ab\1")


@needs_scanner
def test_catastrophic_backtracking_is_bounded():
    # (a|aa)+b backtracks through 2**40 ways of splitting the a's before giving up on "!":
    # the matcher stops at its step budget and gives up; regex then stops at its time limit.
    pattern = r"(a|aa)+b|[^b]|b"
    assert why_not(pattern) is None
    text = "a" * 40 + "!"
    with pytest.raises(CompiledPatternGaveUp):
        scanner.scan(text, Scanner.program(pattern).name)
    with pytest.raises(PatternError):
        pretokenize(text, resolve_pattern(pattern))


@needs_scanner
def test_a_dropped_character_is_regexs_error():
    pattern = as_pattern(r"[a-z]+|\s+")  # unchecked: resolve_pattern refuses it on its probe
    with pytest.raises(PatternError, match="drops input"):
        pretokenize("abc 1", pattern)
    with pytest.raises(PatternError, match="drops input"):
        count_table(["abc def", "abc 1"], PlainScheme(pattern), threads=1)


@needs_scanner
@pytest.mark.parametrize("name", ["cl100k-tiktoken", "superwords", "tekken", "literals", "anchors", "empty"])
@pytest.mark.parametrize("threads", [1, 2])
def test_counting_equals_the_python_path(name, threads, monkeypatch):
    docs = [read_corpus(p, 30_000) for p in CORPUS_FILES[:6]] or ["Hello   world's 12345!!\n  \n" * 50]
    docs += ADVERSARIAL[:8]
    scheme = PlainScheme(resolve_pattern(ALL[name]))
    fast = count_table(docs, scheme, special_tokens=["<|end|>"], threads=threads)
    monkeypatch.setenv("FUNCTIONALBPE_PUREPYTHON", "1")
    slow = count_table(docs, PlainScheme(ALL[name]), special_tokens=["<|end|>"], threads=threads)
    assert fast.to_dict() == slow.to_dict()
    assert list(fast.to_dict()) == list(slow.to_dict())  # the same order of first occurrence


@needs_scanner
@pytest.mark.parametrize("name", ["cl100k-tiktoken", "superwords", "bloom", "tekken", "possessive"])
@pytest.mark.parametrize("vocab_size", [300, 2000])  # 2000: four pieces in five are tokens
def test_encoding_equals_the_python_path(name, vocab_size):
    import functionalbpe as fb

    docs = [read_corpus(p, 20_000) for p in CORPUS_FILES[:4]] or ["Hello   world's 12345!!\n  \n" * 50]
    tok = fb.train(docs, vocab_size, pattern=ALL[name], progress=False)
    assert tok._encoder.scanner is not None  # text to ids in C
    texts = docs + ADVERSARIAL[:10] + ["x<|e|>y"]
    for text in texts:
        expected = tok._encoder.encode_pieces(pretokenize(text, tok.scheme.pattern)) if text else []
        assert tok.encode(text) == expected
        assert tok.count_tokens(text) == len(expected)
    assert tok.encode_batch(texts) == [tok.encode(t) for t in texts]


@needs_scanner
def test_encoding_falls_back_where_the_matcher_gives_up():
    import functionalbpe as fb

    pattern = r"(a|aa)+b|[^b]|b"
    tok = fb.train(["ab aab b xyz"] * 5, 270, pattern=pattern)
    assert tok.encode("aab xyz") == tok._encoder.encode_pieces(reference(pattern, "aab xyz"))
    with pytest.raises(PatternError):
        tok.encode("a" * 40 + "!")


@needs_scanner
def test_from_tiktoken_with_its_own_cl100k_string_encodes_in_c_as_tiktoken_does():
    # tiktoken builds cl100k_base with the possessive string (SHIPPED["cl100k-tiktoken"]);
    # an Encoding built as tiktoken builds it, with a small vocabulary of ours.
    tiktoken = pytest.importorskip("tiktoken")
    import functionalbpe as fb

    docs = [read_corpus(p, 20_000) for p in CORPUS_FILES[:3]] or ["Hello   world's 12345!!\n  \n" * 50]
    ours = fb.train(docs, 400)
    ranks = ours.as_tiktoken_encoding()._mergeable_ranks
    enc = tiktoken.Encoding("cl100k-like", pat_str=SHIPPED["cl100k-tiktoken"], mergeable_ranks=ranks,
                            special_tokens={"<|endoftext|>": len(ranks)})
    tok = fb.Tokenizer.from_tiktoken(enc)
    assert tok._encoder.scanner == "cl100k-tiktoken"  # text to ids in C, its hand-written scanner
    # \s++$ is where tiktoken's string and gpt4 differ: white space with a newline at the end.
    texts = docs + ADVERSARIAL[:12] + ["x  \n", "a\n \n", "end \n\n", "<|endoftext|> hi \n"]
    for text in texts:
        assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert tok.encode_batch(texts, allowed_special="all") == enc.encode_batch(texts, allowed_special="all")


# ---- safe cuts derived from the program -------------------------------------------------

CUT_PATTERNS = ["cl100k-tiktoken", "superwords", "tekken", "bloom", "possessive", "literals", "backtracking", "empty"]


def cut_text() -> str:
    parts = [read_corpus(p, 6_000) for p in CORPUS_FILES[:: max(1, len(CORPUS_FILES) // 6)]]
    parts += [t for t in ADVERSARIAL if "\ud800" not in t and "\udfff" not in t]  # a file holds no lone surrogate
    parts += ["Hello   world's 12345!!\n  \n" * 40]
    return "".join(parts) + "end  \n"


@needs_scanner
@pytest.mark.parametrize("name", CUT_PATTERNS)
def test_program_cuts_give_the_pieces_of_the_whole_for_every_block_size(name, tmp_path):
    assert_blocks_keep_the_pieces(ALL[name], cut_text(), tmp_path, (1024, 1500, 4096, 10_000, 65536))


def assert_blocks_keep_the_pieces(pattern, text, tmp_path, blocks):
    """Read as blocks of each size and cut where the compiled program proves it safe, the
    text gives the pieces of the whole, and a long text is cut at all."""
    path = tmp_path / "doc.txt"
    path.write_bytes(text.encode("utf-8"))
    cut = program_cutter(Scanner.program(pattern))
    assert cut is not None
    whole = reference(pattern, text)
    for block in blocks:
        units = list(Files([path], block_bytes=block).units((), cut))
        assert b"".join(units) == text.encode("utf-8")
        if len(text) > 4 * block:
            assert len(units) > 1, block  # it does cut
        pieces = [p for unit in units for p in reference(pattern, unit.decode("utf-8"))]
        assert pieces == whole, block


@needs_scanner
@given(st.lists(st.sampled_from(PARTS + ("hello", "ab", "xyz", "12 ", "\n ", "…", "!!", "a1")), max_size=60).map("".join),
       st.integers(1, 40))
def test_every_program_cut_is_safe(text, hi_back):
    data = text.encode("utf-8", "surrogatepass")
    for name in CUT_PATTERNS:
        pattern = ALL[name]
        c = scanner.program_safe_cut(data, Scanner.program(pattern).name, max(0, len(data) - hi_back))
        if c:
            head, tail = data[:c].decode("utf-8", "surrogatepass"), data[c:].decode("utf-8", "surrogatepass")
            a, b, whole = reference(pattern, head), reference(pattern, tail), reference(pattern, text)
            if whole is not None:
                assert a is not None and b is not None and a + b == whole, (name, c)


@given(st.lists(st.sampled_from(("a", "Z", "1", "42", ".", "!", ")", "(", "'", "_", "/", " ", "  ", "\n", "\r\n",
                                   "\t", "é", "中", "١", "…", ",\n", "x:", ":/", "-")), max_size=40).map("".join))
def test_every_superword_cut_is_safe(text):
    """Wherever superword_safe_cut's rule holds (a letter before a digit, or before two
    punctuation marks), SUPERWORDS cuts the two sides as it cuts the whole; and it returns
    the last such place in its window."""
    data = text.encode("utf-8")
    whole = reference(P.SUPERWORDS, text)
    for c in range(1, len(data)):
        if superword_safe_cut(data, c - 1, c) == c:
            head, tail = data[:c].decode("utf-8"), data[c:].decode("utf-8")
            assert reference(P.SUPERWORDS, head) + reference(P.SUPERWORDS, tail) == whole, c
    hi = len(data) - 1
    places = [c for c in range(1, hi + 1) if superword_safe_cut(data, c - 1, c) == c]
    assert superword_safe_cut(data, 0, hi) == (places[-1] if places else 0)


@needs_scanner
def test_a_program_that_tests_for_the_start_is_never_cut():
    assert program_cutter(Scanner.program(OWN["anchors"])) is None
    assert scanner.program_safe_cut(b"ab cd ef " * 100, Scanner.program(OWN["anchors"]).name) == 0


SPECIALS = ["<|endoftext|>", "<|e|>", "e|>", "<|", "ab"]


@needs_scanner
@pytest.mark.parametrize("name", ["superwords", "cl100k-tiktoken", "backtracking"])
@pytest.mark.parametrize("specials", [(), SPECIALS], ids=["no-specials", "specials"])
def test_counting_a_file_in_blocks_equals_counting_it_whole(name, specials, tmp_path, monkeypatch):
    text = cut_text()
    if specials:  # special tokens everywhere, overlapping ones side by side
        text = "<|endoftext|>".join(text[i:i + 700] + "<|e|>e|><|" for i in range(0, len(text), 700))
    path = tmp_path / "doc.txt"
    path.write_bytes(text.encode("utf-8"))
    scheme = PlainScheme(resolve_pattern(ALL[name]))
    for block in (1024, 3000):
        units = list(Files([path], block_bytes=block).units(specials, program_cutter(scheme.pattern.scanner, specials)))
        assert len(units) > 4  # it does cut
        blocks = count_table(Files([path], block_bytes=block), scheme, special_tokens=specials, threads=2)
        monkeypatch.setenv("FUNCTIONALBPE_PUREPYTHON", "1")
        whole = count_table([text], PlainScheme(ALL[name]), special_tokens=specials, threads=1)
        monkeypatch.delenv("FUNCTIONALBPE_PUREPYTHON")
        assert blocks.to_dict() == whole.to_dict() and list(blocks.to_dict()) == list(whole.to_dict())


@needs_scanner
@pytest.mark.parametrize("name", ["superwords", "cl100k-tiktoken", "bloom"])
def test_token_files_of_a_compiled_pattern_equal_encode(name, tmp_path):
    import numpy as np

    import functionalbpe as fb

    text = cut_text()
    tok = fb.train([text], 400, pattern=ALL[name], special_tokens=["<|endoftext|>"])
    assert tok._encoder.scanner is not None
    path = tmp_path / "doc.txt"
    path.write_bytes(text.encode("utf-8"))
    out = tmp_path / "ids.npy"
    tok.encode_to_file(fb.files(path), out, threads=2, progress=False)
    assert np.load(out).tolist() == tok.encode(text)


# ---- random patterns of the subset against regex -----------------------------------------

_ATOMS = ["a", "b", "[ab]", "[^a]", r"\s", ".", r"\S", "(?i:A)", r"\n", "$", r"\z", "^"]


def _patterns(depth: int = 3) -> st.SearchStrategy[str]:
    atom = st.sampled_from(_ATOMS)

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        quantifier = st.sampled_from(["", "?", "*", "+", "{0,2}", "{1,3}", "{2}"]).flatmap(
            lambda q: st.sampled_from([q] if not q else [q, q + "?", q + "+"]))
        group = st.tuples(st.sampled_from(["(?:", "(?>", "(?=", "(?!", "("]), inner).map(lambda t: f"{t[0]}{t[1]})")
        quantified = st.tuples(st.one_of(atom, group), quantifier).map(
            lambda t: t[0] + (t[1] if not t[0].startswith(("(?=", "(?!", "$", "\\z", "^")) else ""))
        sequence = st.lists(quantified, min_size=1, max_size=3).map("".join)
        return st.lists(sequence, min_size=1, max_size=3).map("|".join)

    return st.recursive(atom, extend, max_leaves=8)


@needs_scanner
@given(_patterns(), st.lists(st.text("ab \nA", max_size=10), min_size=1, max_size=4))
def test_random_patterns_of_the_subset_equal_regex(pattern, texts):
    full = pattern + r"|[\s\S]"  # so that regex drops nothing, unless the pattern is odd
    if why_not(full) is not None:
        return  # outside the subset (a loop that can match nothing): regex runs it
    for text in texts:
        assert compiled(full, text) == reference(full, text), (full, text)


@needs_scanner
@given(_patterns(), st.text("ab \nA", max_size=24), st.integers(1, 6))
def test_random_patterns_cut_only_where_safe(pattern, text, hi_back):
    full = pattern + r"|[\s\S]"
    if why_not(full) is not None or not compile_program(full).cuts:
        return
    data = text.encode()
    c = scanner.program_safe_cut(data, Scanner.program(full).name, max(0, len(data) - hi_back))
    whole = reference(full, text)
    if c and whole is not None:
        assert reference(full, text[:c]) + reference(full, text[c:]) == whole, (full, text, c)


@needs_scanner
def test_a_cut_is_never_looked_for_in_a_broken_character():
    with pytest.raises(ValueError, match="inside a UTF-8 character"):
        scanner.program_safe_cut("ab é".encode()[:-1], Scanner.program(r"\S+|\s+").name)


@needs_scanner
def test_the_backtrack_stack_is_bounded():
    # Six frames per character (five lazy runs that may take one more, the loop's choice),
    # more than the matcher keeps for a text of this size: it gives up at once.
    pattern = r"(?:a??a??a??a??a??a)*z|[\s\S]"
    text = "a" * 40_000 + "!"
    with pytest.raises(CompiledPatternGaveUp):
        scanner.scan(text, Scanner.program(pattern).name)
    assert compiled(pattern, "a" * 1000 + "z") == ["a" * 1000 + "z"]  # a short one fits
    # regex then backtracks through the ways of sharing the a's out: its time limit stops it.
    with pytest.raises(PatternError, match="was stopped"):
        pretokenize(text, resolve_pattern(pattern))


# ---- tiktoken's cl100k string: a hand-written scanner of its own ---------------------------

def hand(name: str, text: str):
    return scanner.scan(text, name)


@needs_scanner
@given(parts_text)
def test_the_cl100k_tiktoken_scanner_equals_regex(text):
    assert P.CL100K_TIKTOKEN == SHIPPED["cl100k-tiktoken"]
    assert hand("cl100k-tiktoken", text) == reference(P.CL100K_TIKTOKEN, text)
    assert hand("cl100k-tiktoken+joined", text) is not None


@needs_scanner
@given(st.text())
def test_the_cl100k_tiktoken_scanner_equals_regex_on_any_text(text):
    assert hand("cl100k-tiktoken", text) == reference(P.CL100K_TIKTOKEN, text)


@needs_scanner
def test_the_cl100k_tiktoken_scanner_on_adversarial_text_and_corpora():
    texts = ADVERSARIAL + ["x  \n", "a\n \n", "end \n\n", " \u3000\n\t", "a \n b  "]
    texts += [read_corpus(p, 20_000) for p in CORPUS_FILES]
    for text in texts:
        assert hand("cl100k-tiktoken", text) == reference(P.CL100K_TIKTOKEN, text), text[:20]


@given(parts_text, st.integers(0, 60))
def test_the_safe_cuts_hold_for_the_cl100k_tiktoken_string(text, at):
    from functionalbpe.text.cuts import safe_cut

    data = text.encode("utf-8", "surrogatepass")
    c = safe_cut(data, 0, min(len(data), at + 3))
    if c:
        head, tail = data[:c].decode("utf-8", "surrogatepass"), data[c:].decode("utf-8", "surrogatepass")
        assert reference(P.CL100K_TIKTOKEN, head) + reference(P.CL100K_TIKTOKEN, tail) == reference(P.CL100K_TIKTOKEN, text)


@needs_scanner
def test_one_far_look_is_not_charged_again_at_every_later_piece():
    # The first piece's search reads the whole text (x[a-z]*y finds no y); every later piece
    # is one letter. Linear in regex, so the matcher's step budget must not run out: a
    # budget charged from the furthest read so far would be spent quadratically.
    pattern = r"x[a-z]*y|[^x][0-9]*|x"
    text = "x" + "a" * 300_000
    assert scanner.scan(text, scanner.PROGRAM + pattern) == regex.findall(pattern, text)
