"""How evenly a tokenizer treats languages: Gini coefficient, Lorenz curve, token premium.

On a multi-parallel corpus (the same text in every language), a fair tokenizer spends about
the same number of tokens on each language. Three standard summaries of the per-language
token counts:

* :func:`token_premium` — each language's tokens divided by a reference language's
  (Petrov et al. 2023, "Language Model Tokenizers Introduce Unfairness Between Languages");
* :func:`gini` — the Gini coefficient of the counts: 0 when every language costs the same,
  approaching 1 when one language takes everything (the inequality measure of parity-aware
  BPE, Foroutan et al. 2025);
* :func:`lorenz` — the Lorenz curve behind the Gini coefficient, for plotting.

These are plain functions of numbers so that the report, the parity-aware trainer and the
experiments share one definition.

Example::

    >>> gini([10, 10, 10])
    0.0
    >>> round(gini([0, 0, 0, 12]), 4)
    0.75
    >>> token_premium({"en": 100, "el": 250}, reference="en")
    {'en': 1.0, 'el': 2.5}
    >>> lorenz([1, 3])
    [(0.0, 0.0), (0.5, 0.25), (1.0, 1.0)]
"""
from __future__ import annotations

from typing import Iterable, List, Mapping, Sequence, Tuple

from ..errors import FunctionalBPEError


def _values(values: Iterable[float]) -> List[float]:
    out = [float(v) for v in values]
    if any(v < 0 or v != v for v in out):
        raise FunctionalBPEError("inequality measures need non-negative numbers")
    return out


def gini(values: Iterable[float]) -> float:
    """The Gini coefficient of non-negative values: mean absolute difference over twice the mean.

    ``G = Σ_i Σ_j |x_i − x_j| / (2 n² x̄)``, computed in O(n log n) from the sorted values as
    ``G = (2 Σ_i i·x_(i)) / (n Σ x) − (n + 1) / n`` with ``i`` counted from 1. An empty list or
    all zeros gives 0 (nothing is unequal).
    """
    xs = sorted(_values(values))
    n = len(xs)
    total = sum(xs)
    if n == 0 or total == 0:
        return 0.0
    weighted = sum(i * x for i, x in enumerate(xs, start=1))
    return max(0.0, 2.0 * weighted / (n * total) - (n + 1) / n)


def lorenz(values: Iterable[float]) -> List[Tuple[float, float]]:
    """The Lorenz curve: ``(share of languages, share of tokens)`` from (0, 0) to (1, 1).

    Languages are taken from the cheapest to the dearest; the area between the curve and the
    diagonal is half the Gini coefficient.
    """
    xs = sorted(_values(values))
    n = len(xs)
    total = sum(xs)
    points = [(0.0, 0.0)]
    running = 0.0
    for i, x in enumerate(xs, start=1):
        running += x
        points.append((i / n, running / total if total else i / n))
    return points


def token_premium(counts: Mapping[str, float], reference: str) -> dict:
    """Each language's token count divided by the reference language's count."""
    if reference not in counts:
        raise FunctionalBPEError(f"the reference language {reference!r} has no count")
    base = float(counts[reference])
    if base <= 0:
        raise FunctionalBPEError(f"the reference language {reference!r} has no tokens")
    return {lang: float(n) / base for lang, n in counts.items()}


def parity_summary(counts: Mapping[str, float], reference: Sequence[str] = ("en",)) -> dict:
    """Gini, the largest and smallest premium, for a table of per-language token counts.

    The reference is the first of ``reference`` that is present, else the cheapest language.
    """
    if not counts:
        return {"gini": 0.0, "reference": None, "max_premium": None, "min_premium": None}
    ref = next((r for r in reference if r in counts), min(counts, key=lambda k: counts[k]))
    premium = token_premium(counts, ref) if counts[ref] > 0 else {k: 0.0 for k in counts}
    return {
        "gini": gini(counts.values()),
        "reference": ref,
        "max_premium": max(premium.values()),
        "min_premium": min(premium.values()),
    }
