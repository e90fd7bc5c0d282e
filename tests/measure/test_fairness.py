"""The inequality measures agree with their textbook definitions."""
import doctest

import pytest
from hypothesis import given, strategies as st

from functionalbpe.errors import FunctionalBPEError
from functionalbpe.measure import fairness


def gini_by_pairs(xs):
    n, total = len(xs), sum(xs)
    if n == 0 or total == 0:
        return 0.0
    return sum(abs(a - b) for a in xs for b in xs) / (2 * n * total)


@given(st.lists(st.integers(min_value=0, max_value=10**6), max_size=40))
def test_gini_equals_the_mean_absolute_difference(xs):
    assert fairness.gini(xs) == pytest.approx(gini_by_pairs(xs), abs=1e-12)


@given(st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=40))
def test_lorenz_area_is_half_the_gini(xs):
    points = fairness.lorenz(xs)
    assert points[0] == (0.0, 0.0) and points[-1][0] == pytest.approx(1.0)
    if sum(xs):
        area = sum((x1 - x0) * (y0 + y1) / 2 for (x0, y0), (x1, y1) in zip(points, points[1:]))
        assert 2 * (0.5 - area) == pytest.approx(fairness.gini(xs), abs=1e-9)


def test_premium_and_summary():
    counts = {"en": 100, "de": 130, "el": 250}
    assert fairness.token_premium(counts, "de")["el"] == pytest.approx(250 / 130)
    summary = fairness.parity_summary(counts)
    assert summary["reference"] == "en" and summary["max_premium"] == 2.5
    assert summary["gini"] == pytest.approx(gini_by_pairs(list(counts.values())))
    with pytest.raises(FunctionalBPEError):
        fairness.token_premium(counts, "fr")
    with pytest.raises(FunctionalBPEError):
        fairness.gini([1, -1])


def test_docstring_examples_run():
    assert doctest.testmod(fairness).failed == 0
