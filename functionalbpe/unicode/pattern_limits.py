"""What a custom pre-tokenization pattern may cost: the limits that keep a regex from a file
from hanging or exhausting the process.

The built-in patterns (by name, or by their exact text) are trusted: the compiled scanner cuts
them in linear time, and as regexes they do not backtrack badly. Any other regex, whether it
is given in code or read from a tokenizer file, is untrusted (docs/pretokenization.md, *Custom
patterns*):

* **compiling** it is bounded: at most :data:`MAX_PATTERN_CHARS` characters, groups and sets
  nested at most :data:`MAX_PATTERN_NESTING` deep, and at most :data:`MAX_PATTERN_SIZE`
  characters written out for its counted repeats (the ``regex`` module writes ``x{n}`` out
  ``n`` times when it compiles, so ``(?:(?:a{100}){100}){100}`` would take gigabytes);
* **running** it is bounded: each call on a text of n characters may take
  :func:`timeout` seconds of the regex engine's time, then it is a :class:`PatternError`;
* **building** a scheme with it tries it on :data:`PROBE_TEXT` (``patterns.resolve_pattern``):
  a pattern that drops a character of the probe, or runs out of time on it, is refused there,
  at load, not at the first text it is given.

Example::

    >>> check_size(r"\\p{L}+|\\p{N}{1,3}|\\s+|.")
    >>> check_size("(?:a{1000}){1000}")
    Traceback (most recent call last):
    ...
    functionalbpe.errors.PatternError: the custom pattern '(?:a{1000}){1000}' writes out more than 100,000 characters for its counted repeats when it compiles, which is refused (the regex module writes a repeat {n} of a group n times, so nested counts multiply)
"""
from __future__ import annotations

import re
from typing import Any, List

from ..errors import PatternError

# The longest custom pattern accepted (o200k, the longest built-in pattern, has 430).
MAX_PATTERN_CHARS = 1 << 14
# Parentheses and brackets open at once. The regex module parses nesting recursively and
# fails with a RecursionError near 500 levels; real patterns nest fewer than 10.
MAX_PATTERN_NESTING = 64
# Characters the regex module writes out for counted repeats when it compiles. Measured with
# regex 2026.11: a{100000} compiles in 0.06 s and 26 MB; (?:a{1000}){1000} in 0.6 s and 270 MB.
MAX_PATTERN_SIZE = 100_000

# Each call of a custom pattern on a text of n characters may take TIMEOUT_BASE +
# TIMEOUT_PER_MCHAR * n / 1e6 seconds of the regex engine's time (regex's ``timeout=``). The
# built-in patterns run at 2 to 5 MB/s in `regex` on this project's machine, so 10 s per
# million characters is 20 to 50 times what a pattern of their kind needs; a pattern that
# backtracks catastrophically (``(a|aa)+b`` on forty a's) needs minutes, on a few more years.
TIMEOUT_BASE = 1.0
TIMEOUT_PER_MCHAR = 10.0

# A text on which every custom pattern is tried when its scheme is built: every ASCII
# character, one character of each other general category, and characters that patterns
# treat apart (U+2581, NEL, the Unicode line separators, CJK, emoji with a modifier), alone,
# doubled, between spaces and between newlines, and ordinary prose and code. A pattern whose
# pieces do not join back to it drops input. (A pattern may still drop something no probe
# holds; it is then refused at that text, as every text is checked.)
_PROBE_CHARS = "".join(map(chr, range(128))) + (
    "ǅʰ中ß\u0301\u0903\u20dd٣Ⅻ½«»¢©😀👍🏽"
    "\u00a0\u3000\u2028\u2029\x85\u200b\u00ad\u0378\ud800\ue000\U000f0000\u2581"
)
PROBE_TEXT = "".join(
    [
        _PROBE_CHARS,
        " ".join(_PROBE_CHARS),
        "\n".join(_PROBE_CHARS),
        "".join(c + c for c in _PROBE_CHARS),
        "Hello, World! It's 12,345.67 - don't WE'LL ſtop?\r\n\r\n\tx = f(y)  # ok\n\n   ",
        "naïve café Ünïcödé ΑΘΗΝΑ Москва 東京都 ไทย العربية हिन्दी ",
    ]
)


def shown(pattern: str) -> str:
    """A pattern as error messages name it: the start of its text."""
    return repr(pattern) if len(pattern) <= 80 else repr(pattern[:77]) + "..."


def timeout(chars: int) -> float:
    """The seconds a custom pattern may run on a text of ``chars`` characters."""
    return TIMEOUT_BASE + TIMEOUT_PER_MCHAR * chars / 1e6


def too_slow(pattern: str, chars: int) -> PatternError:
    return PatternError(
        f"the custom pattern {shown(pattern)} was stopped after {timeout(chars):.1f} s on a text of "
        f"{chars:,} characters: it backtracks too much (a pattern such as (a|aa)+b takes "
        f"exponential time). A custom pattern may take {TIMEOUT_BASE:g} s plus {TIMEOUT_PER_MCHAR:g} s "
        "per million characters per text; the built-in patterns have no limit"
    )


def check_size(pattern: str) -> None:
    """Raise :class:`PatternError` unless compiling ``pattern`` stays within the limits."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(
            f"the custom pattern {shown(pattern)} has {len(pattern):,} characters; at most "
            f"{MAX_PATTERN_CHARS:,} are accepted"
        )
    depth = nesting(pattern)
    if depth > MAX_PATTERN_NESTING:
        raise PatternError(
            f"the custom pattern {shown(pattern)} nests groups and sets {depth} deep; at most "
            f"{MAX_PATTERN_NESTING} are accepted"
        )
    size = expanded_size(pattern)
    if size > MAX_PATTERN_SIZE:
        raise PatternError(
            f"the custom pattern {shown(pattern)} writes out more than {MAX_PATTERN_SIZE:,} "
            "characters for its counted repeats when it compiles, which is refused (the regex "
            "module writes a repeat {n} of a group n times, so nested counts multiply)"
        )


def nesting(pattern: str) -> int:
    """How deep unescaped ``(`` and ``[`` nest, counting every one (a ``[`` inside a set that
    the regex module reads as a literal too): never less than the depth the parser sees."""
    depth = deepest = 0
    escaped = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "([":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]" and depth:
            depth -= 1
    return deepest


def expanded_size(pattern: str) -> int:
    """The characters the ``regex`` module writes out for ``pattern`` (at most
    ``MAX_PATTERN_SIZE + 1``): every item counts one (a string its length), and a repeat
    counts its body times its minimum count, which the module writes out.

    The pattern is parsed by the module's own parser, which is what knows its syntax
    (versions 0 and 1, verbose mode, nested sets); its compiler is what expands the repeats.
    That parser is not public: where it is missing, every counted repeat is assumed to
    multiply the whole pattern, which overestimates."""
    try:
        tree = _parse(pattern)
    except (ImportError, AttributeError, TypeError):  # pragma: no cover - another regex release
        counts = [int(n[:7]) for n in re.findall(r"\{(\d+)(?:,\d*)?\}", pattern)]
        size = len(pattern)
        for count in counts:
            size = min(size * max(count, 1), MAX_PATTERN_SIZE + 1)
        return size
    return _size(tree)


def _parse(pattern: str) -> Any:
    import regex
    from regex import _regex_core as core
    from regex._main import _Info, _Source

    flags = 0
    while True:  # as regex.compile does: a flag such as (?x) set later restarts the parse
        source = _Source(pattern)
        info = _Info(flags, source.char_type, {})
        source.ignore_space = bool(info.flags & regex.VERBOSE)
        try:
            return core._parse_pattern(source, info)
        except core._UnscopedFlagSet:
            flags = info.global_flags
        except regex.error as exc:
            raise PatternError(f"pattern {shown(pattern)} does not compile: {exc}") from None


def _size(node: Any) -> int:
    limit = MAX_PATTERN_SIZE + 1
    children: List[Any] = []
    for name in ("items", "branches"):
        children.extend(getattr(node, name, None) or ())
    for name in ("subpattern", "yes_item", "no_item"):
        child = getattr(node, name, None)
        if child is not None:
            children.append(child)
    size = len(getattr(node, "characters", None) or ()) or 1
    for child in children:
        size = min(size + _size(child), limit)
    min_count = getattr(node, "min_count", None)
    if isinstance(min_count, int) and min_count > 1:
        size = min(size * min_count, limit)
    return size
