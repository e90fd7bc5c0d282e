"""Independent oracles and shared strategies for the tests."""
from __future__ import annotations

import glob
import os
import sysconfig
from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple

from functionalbpe.core.alphabet import can_merge, merged_flags, policy_code

try:
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover
    st = None


def naive_train(
    pieces: Dict[Tuple[int, ...], int],
    num_merges: Optional[int],
    first_id: int,
    flags: Optional[Sequence[int]] = None,
    merge_policy: str = "prefix",
    min_frequency: int = 1,
) -> List[Tuple[int, int, int]]:
    """training.md read literally: recount every pair of every piece before every merge."""
    policy = policy_code(merge_policy)
    flags = list(flags) if flags is not None else [1] * first_id
    words = Counter({tuple(k): v for k, v in pieces.items() if v > 0})
    merges = []
    while num_merges is None or len(merges) < num_merges:
        stats: Counter = Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                if can_merge(policy, flags[pair[0]], flags[pair[1]]):
                    stats[pair] += count
        if not stats:
            break
        pair = min(stats, key=lambda p: (-stats[p], p[0], p[1]))
        if stats[pair] < min_frequency:
            break
        new = first_id + len(merges)
        merges.append((pair[0], pair[1], stats[pair]))
        flags.append(merged_flags(flags[pair[0]], flags[pair[1]]))
        rewritten: Counter = Counter()
        for word, count in words.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
                    out.append(new)
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            rewritten[tuple(out)] += count
        words = rewritten
    return merges


def stdlib_text(max_bytes: int) -> List[str]:
    """Documents from this Python's standard library: real text every machine has."""
    root = sysconfig.get_paths()["stdlib"]
    out, total = [], 0
    for path in sorted(glob.glob(os.path.join(root, "**", "*.py"), recursive=True)):
        if "site-packages" in path:
            continue
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8", "replace")
        out.append(text)
        total += len(text.encode("utf-8"))
        if total >= max_bytes:
            break
    return out


if st is not None:
    # Text that hits the corners: overlaps, private use, marks, emoji, odd whitespace.
    TRICKY = (
        "aab ", "  ", "\n", "\r", "\t", "'s", "'LL", "0123456789", "é", "e\u0301", "\u0301\u0308",
        "İ", "ß", "ẞ", "ǅ", "Σς", "中文", "日本語", "한국어", "ไทย", "عربي", "😀", "👍🏽", "\ue000",
        "\ue100", "\ue2ff", "\ue300", "¦", "↑", "⇑", "\u00a0", "\u2028", "<|endoftext|>", "A",
        "Hello", "HELLO", "x" * 300, "#" * 7, "abcabcabc",
    )
    tricky_text = st.lists(
        st.one_of(st.sampled_from(TRICKY), st.text(max_size=8)), max_size=20
    ).map("".join)
    tiny_corpus = st.lists(st.text(alphabet="aab ", max_size=30), max_size=12)
