"""Custom patterns, from code or from a tokenizer file, cannot hang the process or drop input.

Built-in patterns (by name or by their text) are trusted. A custom regex is tried on a probe
text when its scheme is built (load, from_tiktoken, train): one that drops a character of
it, or runs out of time on it, is refused there. Every later call runs under a time limit
(``pattern_limits.TIMEOUT_BASE`` + ``TIMEOUT_PER_MCHAR`` per million characters) and a timeout is a
``PatternError`` naming the pattern. The limit is lowered here so that the tests are quick.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import functionalbpe as fb
from functionalbpe.unicode import pattern_limits
from functionalbpe.text import patterns
from functionalbpe.errors import PatternError, TokenizerFileError
from functionalbpe.formats.tokenizer_file import read_payload, write_payload
from functionalbpe.schemes.registry import make_scheme

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A hostile pattern: exponential on "a" * 40 + "!", and it drops a lone "b".
DROPS_AND_HANGS = r"(a|aa)+b|[^b]"
# The same backtracking, with an alternative for "b", so that it tiles every text.
HANGS = r"(a|aa)+b|[^b]|b"
HOSTILE_TEXT = "a" * 40 + "!"


@pytest.fixture(autouse=True)
def short_limit(monkeypatch):
    monkeypatch.setattr(pattern_limits, "TIMEOUT_BASE", 0.2)
    patterns._check_custom.cache_clear()
    yield
    patterns._check_custom.cache_clear()


@pytest.fixture(scope="module")
def trained_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("tok") / "tok.json"
    fb.train(["ab ab ba"] * 3, vocab_size=260, pattern=r"\S+|\s+", progress=False).save(path)
    return path


def with_pattern(src, dst, regex, name="custom"):
    payload = read_payload(src)
    payload["pattern"] = {"name": name, "regex": regex}
    write_payload(dst, payload)  # a valid checksum: only the pattern is hostile
    return dst


# -- dropping input: refused when the scheme is built -------------------------------------


def test_a_pattern_that_drops_input_is_refused_at_train():
    with pytest.raises(PatternError, match=r"drops input: the character 'b' .* of its probe text"):
        fb.train(["aaa!"], vocab_size=260, pattern=DROPS_AND_HANGS, progress=False)
    with pytest.raises(PatternError, match="drops input"):
        make_scheme("functional", DROPS_AND_HANGS)


def test_a_pattern_that_drops_input_is_refused_at_load(trained_file, tmp_path):
    bad = with_pattern(trained_file, tmp_path / "bad.json", DROPS_AND_HANGS)
    with pytest.raises(TokenizerFileError, match=r"bad\.json: .*drops input: the character 'b'"):
        fb.Tokenizer.load(bad)
    # The name in the file does not make a regex trusted: only the text of a built-in does.
    posing = with_pattern(trained_file, tmp_path / "posing.json", r"\w+", name="gpt4")
    with pytest.raises(TokenizerFileError, match="drops input"):
        fb.Tokenizer.load(posing)


def test_a_pattern_that_drops_input_is_refused_by_from_tiktoken(trained_file, tmp_path):
    path = tmp_path / "tok.tiktoken"
    fb.Tokenizer.load(trained_file).to_tiktoken(path)
    with pytest.raises(PatternError, match="drops input"):
        fb.Tokenizer.from_tiktoken(path, pattern=DROPS_AND_HANGS)
    assert fb.Tokenizer.from_tiktoken(path, pattern=r"\S+|\s+").encode("ab ab") == fb.Tokenizer.load(trained_file).encode("ab ab")


def test_the_probe_holds_every_ascii_character_and_every_builtin_tiles_it():
    assert set(map(chr, range(128))) <= set(patterns.PROBE_TEXT)
    for name in patterns.PATTERNS:
        assert "".join(patterns.pretokenize(patterns.PROBE_TEXT, name)) == patterns.PROBE_TEXT


# -- backtracking: a clear error, never a hang ---------------------------------------------


def test_a_pattern_that_hangs_on_the_probe_is_refused_when_built():
    # Exponential on any long line without two omegas (the probe's ASCII run is one).
    with pytest.raises(PatternError, match=r"custom pattern .*was stopped after 0\.2 s on a text of"):
        fb.train(["x"], vocab_size=260, pattern=r"(?:.|..)+ΩΩ|(?s:.)", progress=False)


@pytest.mark.parametrize("scheme", ["plain", "functional"])
def test_encoding_with_a_pattern_that_hangs_is_an_error(trained_file, tmp_path, scheme):
    if scheme == "plain":
        tok = fb.Tokenizer.load(with_pattern(trained_file, tmp_path / "hangs.json", HANGS))
    else:
        tok = fb.train(["ab ba"], vocab_size=600, scheme="functional", pattern=HANGS, progress=False)
    assert tok.decode(tok.encode("ab ba")) == "ab ba"  # it works on ordinary text
    with pytest.raises(PatternError, match=r"'\(a\|aa\)\+b\|\[\^b\]\|b' was stopped after 0\.2 s on a text of 41 characters"):
        tok.encode(HOSTILE_TEXT)
    with pytest.raises(PatternError, match="was stopped"):
        tok.count_tokens(HOSTILE_TEXT)


@pytest.mark.parametrize("scheme", ["plain", "functional"])
def test_training_with_a_pattern_that_hangs_is_an_error(scheme, tmp_path):
    with pytest.raises(PatternError, match="was stopped"):
        fb.train(["ab ba", HOSTILE_TEXT], vocab_size=600, scheme=scheme, pattern=HANGS, progress=False)
    (tmp_path / "c.txt").write_text("ab ba\n" + HOSTILE_TEXT, encoding="utf-8")
    with pytest.raises(PatternError, match="was stopped"):
        fb.train(fb.files(tmp_path / "c.txt"), vocab_size=600, scheme=scheme, pattern=HANGS, progress=False)


def test_pretokenize_and_count_with_a_pattern_that_hangs_are_errors():
    with pytest.raises(PatternError, match="was stopped"):
        patterns.pretokenize(HOSTILE_TEXT, HANGS)
    with pytest.raises(PatternError, match="was stopped"):
        fb.count_pieces([HOSTILE_TEXT], HANGS)


def test_the_limit_grows_with_the_text():
    assert pattern_limits.timeout(2_000_000) == pytest.approx(0.2 + 2 * pattern_limits.TIMEOUT_PER_MCHAR)
    assert not patterns.trusted(HANGS)
    assert patterns.trusted("gpt4") and patterns.trusted(patterns.GPT4)  # by name or by text


def test_builtin_pattern_text_is_trusted_and_named():
    scheme = make_scheme("plain", patterns.O200K)
    assert scheme.pattern_name == "o200k" and patterns.trusted(scheme.pattern)
    assert not patterns.trusted(r"\S+|\s+")


# -- empty and oversized patterns ----------------------------------------------------------


def test_an_empty_pattern_is_an_error_not_the_default(trained_file, tmp_path):
    with pytest.raises(PatternError, match="got ''"):
        fb.train(["ab"], vocab_size=260, pattern="", progress=False)
    with pytest.raises(PatternError, match="got ''"):
        make_scheme("functional", "")
    with pytest.raises(TokenizerFileError, match="got ''"):
        fb.Tokenizer.load(with_pattern(trained_file, tmp_path / "empty.json", ""))
    assert make_scheme("plain", None).pattern_name == "gpt4"  # None is the default


@pytest.mark.parametrize(
    "pattern, says",
    [
        ("|".join(["a"] * pattern_limits.MAX_PATTERN_CHARS) + "|(?s:.)", "at most 16,384 are accepted"),
        ("(?:" * 100 + "a" + ")" * 100 + "|(?s:.)", "nests groups and sets 100 deep"),
        ("(?V1)" + "[" * 100 + "a" + "]" * 100 + "|(?s:.)", "nests groups and sets 100 deep"),
        # Compiling these would take gigabytes: regex writes counted repeats out.
        ("(?:(?:(?:a{100}){100}){100}){100}|(?s:.)", "writes out more than 100,000 characters"),
        ("(?:a{65535}){65535}|(?s:.)", "writes out more than 100,000 characters"),
        ("(?:[ab]{1000}){1000}|(?s:.)", "writes out more than 100,000"),
        # ... also where a careless reading of the syntax would see no repeat of a group.
        ("(?x)(?:a{1000} # ( \n){1000}|(?s:.)", "writes out more than 100,000"),
        ("(?:[)]a{1000}){1000}|(?s:.)", "writes out more than 100,000"),
        ("(?V1)(?:[[a])]a{1000}){1000}|(?s:.)", "writes out more than 100,000"),
    ],
)
def test_patterns_too_costly_to_compile_are_refused(pattern, says):
    with pytest.raises(PatternError, match=says):
        make_scheme("plain", pattern)
    with pytest.raises(PatternError, match=says):
        patterns.pretokenize("ab", pattern)  # every way to compile a custom pattern checks


def test_counted_repeats_within_the_limit_compile():
    assert patterns.pretokenize("2024-01-31 x", r"\d{4}-\d{2}-\d{2}|(?:a{1000}){1,1000}|(?s:.)")[0] == "2024-01-31"
    assert pattern_limits.expanded_size("(?:a{1000}){1,1000}") < 2100  # only the minimum is written out
    assert pattern_limits.expanded_size("(?:a{1000}){100}") > 100_000 - 1


def test_cli_empty_pattern_is_one_line(tmp_path):
    (tmp_path / "a.txt").write_text("hello", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "functionalbpe", "train", str(tmp_path / "a.txt"), "--vocab-size", "300",
         "--pattern", "", "-o", str(tmp_path / "t.json")],
        capture_output=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
    )
    stderr = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1 and "got ''" in stderr
    assert not (tmp_path / "t.json").exists()


def test_a_good_custom_pattern_round_trips(trained_file):
    tok = fb.Tokenizer.load(trained_file)
    assert tok.scheme.pattern_name == "custom"
    text = "ab  ba\n\tΩ ✓ \ud800"
    assert tok.decode(tok.encode(text)) == text.replace("\ud800", "\ufffd")
    assert json.loads(trained_file.read_text())["pattern"]["regex"] == r"\S+|\s+"


def test_without_the_regex_parser_the_estimate_only_grows(monkeypatch):
    bombs = ["(?:(?:(?:a{100}){100}){100}){100}", "(?x)(?:a{1000} # ( \n){1000}", "(?:[)]a{1000}){1000}"]
    fine = [patterns.GPT2, r"\d{4}-\d{2}-\d{2}|(?:a{1000}){1,1000}|(?s:.)"]
    parsed = {p: pattern_limits.expanded_size(p) for p in bombs + fine}

    def missing(pattern):
        raise ImportError("no private parser in this regex release")

    monkeypatch.setattr(pattern_limits, "_parse", missing)
    for pattern in bombs + fine:
        assert pattern_limits.expanded_size(pattern) >= parsed[pattern]
    for pattern in bombs:
        with pytest.raises(PatternError, match="writes out more than"):
            pattern_limits.check_size(pattern)
