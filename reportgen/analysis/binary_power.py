"""The detectable difference of a 0/1 outcome on a small set, from the exact bootstrap.

The normal formula of power.py treats the number of changed questions as large. On a small set
it is a handful, and the interval a binary outcome gets (on each side the wider of the expanded
percentile bootstrap and Tango's score interval, stats.compare_metric) moves in steps: at 20
questions with 2 of them changed, a stated difference from the formula was found in half of
fresh sets, not 80% (bench/simulate.py, binary at 10% changed). But a binary set is its counts:
n questions, m changed, f of those fixed. A resample has M* ~ Binomial(n, m / n) changed
questions and F* ~ Binomial(M*, f / m) of them fixed, and its mean B - A is at or below zero
when F* <= M* / 2, so the share of resamples at or below zero is a sum of binomial terms, and
whether the bootstrap's interval lies above zero is exact; the score interval lies above zero
where McNemar's score statistic (f - (m - f)) / sqrt(m), its value at a difference of zero,
exceeds z. Both hold from a number of fixed questions on (more fixed moves every resample up),
found by bisection for each m (by symmetry, the interval lies below zero when as many are
broken). A fresh set with true difference delta has its changed questions M ~ Binomial(n, c),
c = max(psi, delta) (the share psi changed in this set, or more when delta needs more), each
fixed with probability (c + delta) / 2c: the chance it is found is a sum over m, and the
detectable difference is the delta where that chance reaches POWER, found by bisection.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .stats import POWER, expanded_confidence, two_sided_z

EXACT_BELOW = 200
"""Binary outcomes on fewer questions take this module's detectable difference; from 200 on
McNemar's statistic's (power.detectable) is found 77-83% of the time by this module's exact
count (tests/test_binary_power.py), which costs O(n^2 log n) (0.06 s at 200, 1.2 s at 800)."""


def _binomial_pmf(n: int, p: np.ndarray) -> np.ndarray:
    """P(Binomial(n, p) = j) for j = 0..n, one row per probability in ``p``."""
    j = np.arange(n + 1)
    log_choose = special.gammaln(n + 1) - special.gammaln(j + 1) - special.gammaln(n - j + 1)
    p = np.asarray(p, dtype=float)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        log = log_choose + special.xlogy(j, p) + special.xlog1py(n - j, -p)
    return np.exp(log)


def fewest_fixed(n: int, confidence: float) -> np.ndarray:
    """For m = 0..n changed questions of n, the fewest fixed among them for which the interval
    at ``confidence`` (the bootstrap's and the score interval's, each) lies above zero; m + 1
    where no number does."""
    tail = (1 - expanded_confidence(confidence, n)) / 2
    m = j = np.arange(n + 1)  # m: changed in the set, j: changed in a resample
    resampled = _binomial_pmf(n, m / n)  # row m: P(M* = j)

    def at_or_below_zero(fixed: np.ndarray) -> np.ndarray:  # F* <= j / 2, for each m
        share = np.where(m > 0, fixed / np.maximum(m, 1), 0.0)[:, None]
        return (resampled * special.bdtr(j // 2, j, share)).sum(axis=1)

    low, high = np.zeros(n + 1, dtype=int), m + 1
    while np.any(low < high):
        mid = (low + high) // 2
        # none at or below zero counts too: at n = 2 the level rounds to 1 (tail 0), and the
        # interval is the resamples' range
        share = at_or_below_zero(np.minimum(mid, m))
        above = (mid <= m) & ((share < tail) | (share == 0))
        searching = low < high
        high = np.where(searching & above, mid, high)
        low = np.where(searching & ~above, mid + 1, low)
    return np.maximum(low, _score_fewest(m, confidence))


def _score_fewest(m: np.ndarray, confidence: float) -> np.ndarray:
    """For m changed questions, the fewest fixed f with (2f - m) / sqrt(m) > z, where Tango's
    score interval lies above zero; m + 1 where none does (m = 0)."""
    z = two_sided_z(confidence)
    fewest = np.floor((m + z * np.sqrt(m)) / 2).astype(int) + 1
    return np.where(fewest <= m, fewest, m + 1)


def found_share(n: int, changed_share: float, delta: float, fewest: np.ndarray) -> float:
    """The chance that a fresh set of n with true difference ``delta`` >= 0 has its interval
    exclude zero (``fewest``: fewest_fixed of n at the interval's level)."""
    c = min(max(changed_share, delta), 1.0)
    m = np.arange(n + 1)
    changed = _binomial_pmf(n, np.array([c]))[0]
    fixed = (c + delta) / (2 * c) if c > 0 else 0.0
    possible = fewest <= m
    # the fixed among m reach ``fewest``, or the broken do (the interval then lies below zero)
    above = np.where(possible, special.bdtrc(fewest - 1, m, fixed), 0.0)
    below = np.where(possible, special.bdtr(m - fewest, m, fixed), 0.0)
    return float((changed * (above + below)).sum())


def exact_detectable(n: int, changed_share: float, confidence: float) -> float:
    """The true difference, either way, whose interval excludes zero in POWER of fresh sets of
    n questions; inf when even a difference of 1 is found less often."""
    fewest = fewest_fixed(n, confidence)
    if found_share(n, changed_share, 1.0, fewest) < POWER:
        return math.inf
    low, high = 0.0, 1.0
    for _ in range(40):  # to 1e-12
        mid = (low + high) / 2
        if found_share(n, changed_share, mid, fewest) >= POWER:
            high = mid
        else:
            low = mid
    return high
