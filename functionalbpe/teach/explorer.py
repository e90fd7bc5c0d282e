"""The tokenizer explorer: one self-contained HTML page that tokenizes as you type.

:func:`explorer_html` writes the page for a tokenizer: the merge table, the tokens shown
with visible glyphs, the pattern rewritten for JavaScript (:mod:`js_patterns`) and a
JavaScript encoder that is the lesson's (``reference.encode_piece``) — so the page gives
``tok.encode(text, allowed_special="all")`` exactly, for the plain scheme with a built-in
pattern. Each token is an element with a ``data-token-id`` attribute; clicking one shows how
it was built from bytes; the text can be given in the URL (``explorer.html#text=...``,
URL-encoded). The functional and markers schemes write a text form that the page does not
compute: it shows examples encoded by the library instead, and says so.

With ``train_on`` (a small text) the page also replays training on that text: a slider
steps through the merges, showing the pieces as they are at that step and the pair counts,
the winner highlighted (the same merges ``train`` makes, from its trace).

Nothing is loaded from the network: the script and the style are in the page.

Example::

    >>> import functionalbpe as fb
    >>> tok = fb.train(["hug pug hugs"] * 3, vocab_size=260, progress=False)
    >>> page = explorer_html(tok, train_on="hug pug hugs")
    >>> page.startswith("<!DOCTYPE html>") and "data-token-id" in page and "http" not in page
    True
"""
from __future__ import annotations

import json
import os
import warnings
from collections import Counter
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from ..core.alphabet import NUM_BYTES, Alphabet, can_merge, merged_flags, policy_code
from ..core.reference import best_pair_key, get_stats, merge
from ..util.display import show_text_form
from ..errors import FunctionalBPEError, SmallerVocabularyWarning
from ..util.output import atomic_write_text
from ..training import train
from .explorer_page import PAGE
from .js_patterns import TEMPLATES, js_regex
from .merge_trace import MergeRecord
from .vocab import byte_ids

if TYPE_CHECKING:  # pragma: no cover
    from ..tokenizer import Tokenizer

EXAMPLES = (
    "Hello world! Tokenizers split text into pieces, then merge bytes.",
    "def add(a, b):\n    return a + b  # 12345",
    "I'm sure they'll say it's 3.14159 — naïve café, Ünïcödé!",
    "Größe, 東京都, नमस्ते, مرحبا, 😀👍🏽",
)
# The replay keeps every step in the page: it is meant for a paragraph, not a corpus.
MAX_REPLAY_CHARS = 20_000
MAX_REPLAY_MERGES = 200
# What each replay step shows: the best pairs, and the most frequent pieces.
REPLAY_PAIRS = 12
REPLAY_PIECES = 60


def live(tok: "Tokenizer") -> bool:
    """Can the page encode as you type? The plain scheme with a built-in pattern."""
    return tok.scheme.name == "plain" and tok.scheme.pattern_name in TEMPLATES


def explorer_html(
    tok: "Tokenizer",
    *,
    train_on: Optional[str] = None,
    examples: Sequence[str] = EXAMPLES,
    replay_merges: int = 50,
    title: Optional[str] = None,
) -> str:
    """The explorer page for ``tok`` (a str of HTML). ``train_on``: a small text whose
    training is replayed step by step (``replay_merges`` merges); ``examples``: texts to
    offer (and, for a scheme, to show encoded)."""
    alphabet = tok.alphabet
    shown = [show_text_form(b, tok.scheme.show) for b in alphabet.all_token_bytes()[: alphabet.first_special]]
    ids = byte_ids(tok)
    is_live = live(tok)
    data: Dict[str, Any] = {
        "scheme": tok.scheme.name,
        "pattern": tok.scheme.pattern_name,
        "regex": js_regex(tok.scheme.pattern_name) if is_live else None,
        "firstMerge": alphabet.first_merge,
        "merges": [list(m) for m in alphabet.merges],
        "byteIds": None if ids == list(range(NUM_BYTES)) else ids,
        "specials": tok.special_tokens,
        "shown": shown,
        "examples": [_example(tok, text) for text in examples],
        "replay": None if train_on is None else replay(tok, train_on, replay_merges),
        "about": (
            f"{tok.scheme.name} scheme, {tok.scheme.pattern_name} pattern, {tok.vocab_size:,} tokens "
            f"({len(alphabet.merges):,} merges). "
            + ("Type below: the text is tokenized in this page, exactly as the library does. " if is_live else "")
            + "Click a token to see how it was built from bytes."
        ),
    }
    title = title or f"functionalbpe explorer: {tok.scheme.name}, {tok.vocab_size:,} tokens"
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    # Inside <script>, "</" could end the element and "<!--" open a comment: escape "<".
    payload = payload.replace("<", "\\u003c")
    return PAGE.replace("/*TITLE*/", _escape_html(title)).replace("/*DATA*/", payload)


def write_explorer(tok: "Tokenizer", path: "os.PathLike[str] | str", **options: Any) -> None:
    """Write :func:`explorer_html` to ``path`` (whole, or not at all)."""
    atomic_write_text(path, explorer_html(tok, **options))


def _escape_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _example(tok: "Tokenizer", text: str) -> Dict[str, Any]:
    """A text with its tokens as ``[id, internal id, special or None]``, encoded by the
    library (special tokens allowed)."""
    specials = {i: s for s, i in tok.special_tokens.items()}
    internal = _internal_ids(tok)
    return {
        "text": text,
        "tokens": [[i, -1 if i in specials else internal(i), specials.get(i)]
                   for i in tok.encode(text, allowed_special="all")],
    }


def _internal_ids(tok: "Tokenizer"):
    ids = byte_ids(tok)
    inverse = {e: b for b, e in enumerate(ids)}
    return lambda i: inverse[i] if i < NUM_BYTES else i


def replay(tok: "Tokenizer", text: str, num_merges: int = 50) -> Dict[str, Any]:
    """Training on ``text`` replayed for the page: for each merge, the pieces as they are
    before it and the pair counts, the winner marked; then the pieces after the last one.

    The merges are those :func:`functionalbpe.train` makes with ``tok``'s scheme and merge
    policy (read from its trace); the counts are recounted here the lesson's way.
    """
    if len(text) > MAX_REPLAY_CHARS:
        raise FunctionalBPEError(
            f"the training replay is for small texts: {len(text):,} characters given, at most "
            f"{MAX_REPLAY_CHARS:,}; give a paragraph or two"
        )
    if not 1 <= num_merges <= MAX_REPLAY_MERGES:
        raise FunctionalBPEError(f"the replay shows 1 to {MAX_REPLAY_MERGES} merges, not {num_merges}")
    scheme = tok.scheme
    records: List[MergeRecord] = []
    alphabet = Alphabet(scheme.atoms)
    with warnings.catch_warnings():  # a short replay text may run out of pairs: the page says how many
        warnings.simplefilter("ignore", SmallerVocabularyWarning)
        train(text, vocab_size=alphabet.num_fixed + num_merges, scheme=scheme, merge_policy=tok.merge_policy,
              progress=False, trace=records.append)
    words: Counter = Counter(alphabet.symbols(form) for form in scheme.split(text))
    table = [bytes([i]) for i in range(NUM_BYTES)] + [a.char.encode("utf-8") for a in alphabet.atoms]
    shown = [show_text_form(b, scheme.show) for b in table]
    flags = alphabet.base_flags()
    policy = policy_code(tok.merge_policy)
    steps: List[Dict[str, Any]] = []

    def pair_text(a: int, b: int) -> str:
        return f"[{shown[a]}][{shown[b]}]"

    def state() -> Dict[str, Any]:
        top = sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))[:REPLAY_PIECES]
        return {"words": [[[shown[i] for i in word], count] for word, count in top]}

    for r in records:
        stats: Dict[Tuple[int, int], int] = {}
        for word, count in words.items():
            get_stats(word, stats, count)
        stats = {p: c for p, c in stats.items() if can_merge(policy, flags[p[0]], flags[p[1]])}
        best = sorted(stats, key=lambda p: best_pair_key(p, stats[p]))[:REPLAY_PAIRS]
        step = state()
        step.update(
            merge=f"{pair_text(r.left, r.right)} -> [{r.token}]",
            count=r.count,
            runnerUp=None if r.runner_up is None else f"{r.runner_up_token} ({r.runner_up_count})",
            pairs=[[pair_text(*p), stats[p], p == (r.left, r.right)] for p in best],
        )
        steps.append(step)
        table.append(table[r.left] + table[r.right])
        shown.append(r.token)
        flags.append(merged_flags(flags[r.left], flags[r.right]))
        merged: Counter = Counter()
        for word, count in words.items():
            merged[tuple(merge(word, (r.left, r.right), r.id))] += count
        words = merged
    final = state()
    final.update(merge=None, count=None, runnerUp=None, pairs=[])
    steps.append(final)
    return {"chars": len(text), "pieces": len(Counter(scheme.split(text))), "steps": steps}
