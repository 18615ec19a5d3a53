"""Paired statistics of one metric: a bootstrap interval on the mean difference, a sign test."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

_DECIMALS = 12  # differences equal to this many decimals are one value
_CHUNK = 250  # resamples drawn at once: bounds memory to chunk x (distinct values + tail)
_COUNT_COST = 15  # one multinomial category costs about 15 index draws


@dataclass(frozen=True)
class MetricComparison:
    """One metric compared question by question (B - A), over the ``n`` questions scored in both."""

    metric: str
    n: int
    a: float
    b: float
    diff: float
    ci_low: float
    ci_high: float
    wins: int  # B > A
    losses: int  # B < A
    ties: int
    p_sign: float
    fixed: int | None  # binary metrics only: 0 in A, 1 in B
    broken: int | None  # binary metrics only: 1 in A, 0 in B


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test.

    H0: a question that changed is as likely to favour B as A (P(win) = 1/2 given not a tie).
    Statistic: the number of wins among n = wins + losses, Binomial(n, 1/2) under H0; ties are
    dropped (Dixon & Mood, 1946). Under H0 the distribution is symmetric, so the outcomes at
    least as unlikely as the one seen are those at least as far from n/2:
    p = min(1, 2 P(X <= min(wins, losses))). With no changed question, p = 1.
    """
    n = wins + losses
    if n == 0:
        return 1.0
    return float(min(1.0, 2 * special.bdtr(min(wins, losses), n, 0.5)))


def bootstrap_means(diff: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """``n_boot`` means of ``diff`` resampled with replacement (the paired bootstrap).

    Resampling questions keeps each question's A and B together, so ``diff`` (B - A per question)
    is all that is needed. A resample of n values is fully described by how many times it draws
    each distinct value, and those counts are Multinomial(n, share of each distinct value), so
    drawing the counts is exactly drawing n question indices, at a cost per resample of the
    number of distinct values instead of n. Metrics take few distinct values (a binary outcome
    has at most three differences) but nDCG or a latency can take thousands, each shared by a
    question or two; so the common values ("head") are drawn as counts, and the resample's draws
    that fall on the rest ("tail", one category in the multinomial) are drawn as indices among
    the tail's questions, which is again exact. The head is sized to minimise the cost.
    Differences are first rounded to 12 decimals: nDCG differences that are equal, computed with
    sums in another order, then count as the one value they are (a change below 1e-12).
    Distinct values are ordered by count, ties by first appearance (not by value), so that
    swapping A and B, which negates every difference, draws exactly the mirrored resamples.
    Resamples are drawn in chunks, each from its own generator seeded by (seed, chunk), on as
    many threads as there are cores (numpy releases the GIL): same seed, same numbers.
    """
    n = len(diff)
    diff = np.round(diff, _DECIMALS)
    codes, values = pd.factorize(diff)  # distinct values in order of first appearance
    counts = np.bincount(codes, minlength=len(values))
    order = np.argsort(-counts, kind="stable")
    values, counts = values[order], counts[order]
    head = _head_size(counts)
    tail = np.repeat(values[head:], counts[head:])
    probs = np.append(counts[:head], len(tail)) / n

    def chunk(start: int) -> np.ndarray:
        rows = min(_CHUNK, n_boot - start)
        rng = np.random.default_rng((seed, start))
        draws = rng.multinomial(n, probs, size=rows)
        sums = (draws[:, :head] * values[:head]).sum(axis=1)
        if len(tail):
            in_tail = draws[:, head]
            at = rng.integers(0, len(tail), size=int(in_tail.sum()), dtype=np.uint32)
            sums += segment_sums(tail[at], in_tail)
        return sums / n

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return np.concatenate(list(pool.map(chunk, range(0, n_boot, _CHUNK))))


def segment_sums(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Sums of consecutive runs of ``values`` with the given ``lengths`` (0 for an empty run)."""
    sums = np.zeros(len(lengths))
    filled = lengths > 0
    starts = np.cumsum(lengths) - lengths
    if filled.any():
        sums[filled] = np.add.reduceat(values, starts[filled])
    return sums


def _head_size(counts: np.ndarray) -> int:
    """How many of the most common values to draw as counts (``counts`` sorted, largest first).

    A count costs about as much as _COUNT_COST index draws (measured: numpy's multinomial takes
    ~120 ns a category, an index draw with its gather ~8 ns).
    """
    tail_draws = counts.sum() - np.cumsum(counts)
    cost = _COUNT_COST * np.arange(1, len(counts) + 1) + tail_draws
    return int(np.argmin(cost)) + 1


def percentile_interval(means: np.ndarray, confidence: float) -> tuple[float, float]:
    """The central ``confidence`` share of the bootstrap means (percentile method, Efron 1979)."""
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def compare_metric(
    metric: str,
    a: np.ndarray,
    b: np.ndarray,
    *,
    binary: bool,
    n_boot: int,
    confidence: float,
    seed: int,
) -> tuple[MetricComparison, np.ndarray]:
    """Compare paired scores; questions with a missing score in either run are left out.

    Returns the comparison and the bootstrap means of B - A (for the distribution chart).
    """
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    diff = b - a
    n = len(diff)
    if n == 0:
        nan = float("nan")
        empty = MetricComparison(metric, 0, nan, nan, nan, nan, nan, 0, 0, 0, 1.0, None, None)
        return empty, np.empty(0)
    means = bootstrap_means(diff, n_boot, seed)
    low, high = percentile_interval(means, confidence)
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
    comparison = MetricComparison(
        metric=metric,
        n=n,
        a=float(a.mean()),
        b=float(b.mean()),
        diff=float(diff.mean()),
        ci_low=low,
        ci_high=high,
        wins=wins,
        losses=losses,
        ties=n - wins - losses,
        p_sign=sign_test(wins, losses),
        fixed=int(((a == 0) & (b == 1)).sum()) if binary else None,
        broken=int(((a == 1) & (b == 0)).sum()) if binary else None,
    )
    return comparison, means


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment of p-values tested together (Holm, 1979).

    Controls the family-wise error rate across the family (here: the slices of one metric)
    without assuming independence. The i-th smallest p is multiplied by (m - i + 1), and the
    adjusted values are made monotone and capped at 1.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
