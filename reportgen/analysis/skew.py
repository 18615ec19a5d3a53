"""Where a skewed difference leaves one bound of its interval unsure.

A cost, a count or a score can have a tail no question drew: B − A of latency with rare large
speed-ups and many small slow-downs reads, on 20 questions without a speed-up, as a run of
small losses, and so does faithfulness that mostly loses a little and rarely gains a lot (its
range, [0, 1], is far wider than the differences, so it bounds nothing the questions miss).
Every interval of the mean then misses on the side away from the tail more often than its level
says, and no rule read from the sample can hold that side's level for every such law (Bahadur
and Savage, 1956). Refusing the bound as proof brought those misses near the level but lost
most of the power to find a true loss on that side (bench/simulate_skew.py), so the bound
stands and the sentences that rest on it say so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..formatting import fmt_count, fmt_diff

if TYPE_CHECKING:
    from .stats import MetricComparison

HIGHLY_SKEWED = 1.0  # |skewness| beyond 1: highly skewed (Bulmer, "Principles of Statistics")
LOWER, UPPER = "lower", "upper"


def moment_skewness(values: np.ndarray) -> float:
    """The values' skewness, m3 / m2^1.5 of their central moments (0 without spread), taken on
    the values scaled to at most 1 (it does not change with scale): their cubes cannot overflow."""
    centred = values - values.mean()
    largest = float(np.abs(centred).max())
    if largest == 0:
        return 0.0
    scaled = centred / largest
    squares = scaled * scaled  # products, not powers: scaled**3 took 4 times as long
    return float(np.mean(squares * scaled)) / float(np.mean(squares)) ** 1.5


def skewness(diff: np.ndarray) -> float | None:
    """The adjusted Fisher-Pearson skewness G1 of B - A, the estimate of a population's
    skewness that Sugden's rule reads; None under 3 values, where it is undefined."""
    n = len(diff)
    if n < 3:
        return None
    return moment_skewness(diff) * (n * (n - 1)) ** 0.5 / (n - 2)


def questions_needed(g: float) -> int:
    """Sugden, Smith and Jones' (2000) refinement of Cochran's rule: the mean of a population
    of skewness g is near enough normal for a 95% interval from n > 28 + 25 g^2."""
    return int(28 + 25 * g * g) + 1


def unsure_bound(g: float | None, n: int) -> str | None:
    """The bound (LOWER or UPPER) a highly skewed B - A of ``n`` questions leaves unsure: the
    one away from the tail (a left tail pulls the mean below what the sample shows, so the
    lower bound is too high), where n is under what Sugden's rule asks; None otherwise."""
    if g is None or abs(g) <= HIGHLY_SKEWED or n >= questions_needed(g):
        return None
    return LOWER if g < 0 else UPPER


def caveat(
    c: MetricComparison,
    bound: str,
    run: MetricComparison | None = None,
    subject: str = "B \u2212 A",
) -> str | None:
    """The clause a sentence resting on ``bound`` (LOWER or UPPER) of ``c``'s interval carries
    where the skew of B - A leaves that bound unsure; None where it does not. For a slice,
    ``run`` is the whole run's comparison of the metric: the slice's own skewness or the run's
    can mark the bound (its own first), since a slice of 20 questions can miss a tail its run
    shows, and a run skewed the other way can hide one the slice shows. ``subject``: what is
    skewed ("the candidate's values" for a run's own mean, which a ceiling on latency reads)."""
    judged = [(c.skewness, fmt_count(c.n, "question"))]
    if run is not None:
        judged.append((run.skewness, f"all {fmt_count(run.n, 'question')}"))
    marking = [(g, over) for g, over in judged if g is not None and unsure_bound(g, c.n) == bound]
    if not marking:
        return None
    g, over = marking[0]
    tail = "below" if bound == LOWER else "above"
    return (
        f"{subject} {'is' if subject.startswith('B') else 'are'} highly skewed (skewness "
        f"{fmt_diff(g, 2)} over {over}): a rare large "
        f"difference {tail} the rest, which {fmt_count(c.n, 'question')} may not hold, would "
        "move the mean, "
        f"so the {bound} bound may miss more often than its level says (Sugden's rule asks "
        f"{questions_needed(g):,} questions for a mean this skewed)"
    )
