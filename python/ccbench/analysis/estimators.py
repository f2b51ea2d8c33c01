"""Estimators shared by every metric: CoCo-Beholder/Pantheon's 'nearest' percentile, the same rule
applied to a histogram, and Jain's fairness index.

See docs/metrics.md for the definitions.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import numpy as np


def nearest_rank(q: float, n: int) -> int:
    """0-based rank picked by numpy's ``percentile(..., 'nearest')`` for ``n`` sorted values.

    ``rank = round_half_even(q/100 · (n − 1))``, evaluated in exact rational arithmetic (``q`` is
    read as the decimal it is written as), so ``q=50, n=2`` gives 0 and ``q=50, n=4`` gives 2.
    """
    if n <= 0:
        raise ValueError("percentile of an empty sample")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be in [0, 100], got {q}")
    exact = Fraction(str(q)) / 100 * (n - 1)
    return round(exact)  # Fraction.__round__ rounds half to even


def percentile_nearest(values: Sequence[float] | np.ndarray, q: float, *, presorted: bool = False):
    """``sorted(values)[round_half_even(q/100·(n−1))]`` — CoCo-Beholder's and Pantheon's estimator.

    Returns None for an empty sample.
    """
    x = np.asarray(values)
    n = x.shape[0]
    if n == 0:
        return None
    r = nearest_rank(q, n)
    if presorted:
        return x[r]
    return np.partition(x, r)[r]


def hist_percentile_bucket(buckets: np.ndarray, counts: np.ndarray, q: float):
    """Bucket holding the value of rank ``nearest_rank(q, n)`` in a histogram.

    ``buckets`` must be sorted ascending and unique, ``counts`` > 0. Returns None if empty.
    """
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if n == 0:
        return None
    r = nearest_rank(q, n)
    cum = np.cumsum(counts)
    i = int(np.searchsorted(cum, r, side="right"))  # first bucket with cum > r
    return int(np.asarray(buckets)[i])


def jain_index(rates: Sequence[float]):
    """Jain's index ``(Σx)² / (n·Σx²)``; None if there are no values or Σx² = 0."""
    # Sequential summation, in the order given, as CoCo-Beholder does (bit-identical results).
    n = 0
    s = 0.0
    sq = 0.0
    for r in rates:
        r = float(r)
        n += 1
        s += r
        sq += r**2
    if n == 0 or sq == 0.0:
        return None
    return s**2 / (float(n) * sq)
