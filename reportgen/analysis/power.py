"""How much can this golden set tell? Detectable difference and needed size, for the verdict.

The verdict calls B better or worse when the interval of B - A excludes zero; the interval is
about as wide as Student's t interval, mean +- t(n - 1) sd / sqrt(n). So a true difference
delta is detected with probability ``POWER`` when delta sqrt(n) / sd = t(1 - alpha/2) + t(POWER)
(the usual normal-theory power of a paired test, with t for small sets). For a continuous
metric sd is the observed spread of B - A, taken to stay the same under other differences.
That formula is optimistic for continuous metrics on small sets: the spread it plugs in is
itself uncertain (more so with ties), and the interval used there (studentized bootstrap and
t) is wider than t; so under STUDENTIZED_BELOW questions the detectable difference is found by
resampling the observed differences instead (stats.resampled_detectable), which keeps both.
For a binary outcome the share of changed questions psi stays fixed and the spread follows
the difference, sd^2 = psi - delta^2, which gives delta = k sqrt(psi / (n + k^2)) with k the
sum of the two t quantiles; under EXACT_BELOW questions, where the changed ones are a handful
and the interval moves in steps, it is found exactly instead (binary_power.py). With --cluster,
n is the effective number of independent questions, n / design effect, and the size needed is
multiplied by it; a design effect under 1 is taken as 1 (_inflation). The size needed for the
observed difference solves the normal formula, kept on the stated difference's side of n
(resampled, or with the clusters' degrees of freedom, it is not that formula's), so the two
sentences never disagree. A detectable
difference past the range a metric's difference can take is not stated as one.
bench/simulate.py checks that a difference of the stated size is detected 80% of the time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import special

from ..formatting import fmt_count, fmt_pct
from .binary_power import EXACT_BELOW, exact_detectable
from .registry import difference_range
from .stats import POWER, MetricComparison

_MAX_N = 10**9  # beyond this size the needed-size search stops


@dataclass(frozen=True)
class Power:
    metric: str
    n: int
    discordant: int
    min_detectable: float | None  # in the metric's units; None: nothing changed or n < 2
    needed_n: int | None  # questions for 80% power at the observed effect; None: no effect seen
    sentence: str


def _k(n: int, alpha: float) -> float:
    """t(1 - alpha/2) + t(POWER), with n - 1 degrees of freedom."""
    return float(special.stdtrit(n - 1, 1 - alpha / 2) + special.stdtrit(n - 1, POWER))


def detectable(
    n: int, alpha: float, *, sd: float, changed_share: float | None, groups: int | None = None
) -> float:
    """The true difference detected with probability POWER by n questions.

    ``changed_share`` (binary outcomes): the share of questions whose outcome differs, psi.
    ``groups``: the clusters resampled (--cluster), whose number, when under n, sets the degrees
    of freedom as it does the interval's (8 documents of 10 questions, half the variance shared:
    found in 72% of 3,000 fresh sets with n - 1, 76% with groups - 1).
    """
    k = _k(min(n, groups or n), alpha)
    if changed_share is not None:
        return k * math.sqrt(changed_share / (n + k * k))
    return k * sd / math.sqrt(n)


def needed_size(delta: float, alpha: float, *, sd: float, changed_share: float | None) -> int:
    """The fewest questions that detect a true difference ``delta`` with probability POWER."""
    spread = math.sqrt(max(changed_share - delta * delta, 0.0)) if changed_share else sd

    def wanted(n: int) -> int:  # n = (k(n) spread / delta)^2; k falls as n grows
        return math.ceil((_k(n, alpha) * spread / abs(delta)) ** 2)

    z = special.ndtri(1 - alpha / 2) + special.ndtri(POWER)
    n = max(2, math.floor((z * spread / abs(delta)) ** 2))  # t > z: a lower bound
    while n < _MAX_N and wanted(n) > n:
        n = wanted(n)
    while n > 2 and wanted(n - 1) <= n - 1:
        n -= 1
    return min(n, _MAX_N)


def _inflation(design_effect: float | None) -> float:
    """The design effect that clustered questions count by (Kish, 1965), at least 1: for the
    power sentence a clustered question is worth at most an independent one. A measured effect
    under 1 (few clusters: 17, 1, 1 and 1 questions gave 0.51) said 20 questions were "worth
    about 39 independent questions" and stated a difference found in 3.5% of simulated sets."""
    return max(design_effect or 1.0, 1.0)


def _clustered(c: MetricComparison, effective: int) -> str:
    """How many independent questions the clustered ones count as, in the power sentence."""
    if c.design_effect is None:
        return ""
    if c.design_effect < 1:
        return (
            f" (clustered: counted as {fmt_count(effective, 'independent question')}, the "
            f"design effect {c.design_effect:.2f} taken as 1)"
        )
    return f" (clustered: worth about {fmt_count(effective, 'independent question')})"


def _points(value: float, binary: bool) -> str:
    return f"{value * 100:.1f} points" if binary else f"{value:.3f}"


def _changed(n: int, changed: int, metric: str) -> str:
    """How many of the questions changed between the runs: only those carry evidence."""
    between = f"on {metric} between A and B"
    if n == 1:
        return f"The only question {'changed' if changed else 'did not change'} {between}. "
    if changed == 0:
        none = "Neither question" if n == 2 else f"None of the {n:,} questions"
        return f"{none} changed {between}. "
    if changed == n:
        every = "Both questions" if n == 2 else f"All {n:,} questions"
        return f"{every} changed {between}. "
    those = "only it carries" if changed == 1 else "only those carry"
    return f"Of {n:,} questions, {changed:,} changed {between}; {those} evidence. "


def _exact_needed(n: int, delta: float, changed_share: float, confidence: float) -> int:
    """From the normal formula's size ``n`` up, the first size whose exact detectable
    difference (binary_power) reaches ``delta``: on a handful of questions the formula
    understates it (2 of 2 fixed: it said 3, where no count of 3 can leave zero)."""
    while n < EXACT_BELOW and exact_detectable(n, changed_share, confidence) > delta:
        n += 1
    return n


def power_of(c: MetricComparison, confidence: float) -> Power:
    alpha = 1 - confidence
    discordant = c.wins + c.losses
    binary = c.fixed is not None
    share = discordant / c.n if binary and c.n else None
    level = fmt_pct(confidence)
    head = _changed(c.n, discordant, c.metric)
    if discordant == 0 or (c.clusters or c.n) < 2:
        why = (
            f"One {'cluster' if c.clusters else 'question'} has no spread to measure a "
            "difference against: only a larger set can tell."
            if discordant
            else "With no question changed there is no spread to tell from how many questions "
            "would find a difference."
        )
        return Power(c.metric, c.n, discordant, None, None, head + why)
    if not binary and c.sd == 0:
        return Power(
            c.metric,
            c.n,
            discordant,
            None,
            None,
            head + f"Every question moved by the same {_points(abs(c.diff), binary)}, so there "
            "is no spread to tell from how many questions would find a difference.",
        )
    inflation = _inflation(c.design_effect)
    effective = max(2, int(c.n / inflation))
    if c.detectable is not None:
        min_detectable = c.detectable
    elif share is not None and c.clusters is None and c.n < EXACT_BELOW:
        min_detectable = exact_detectable(c.n, share, confidence)
    else:
        min_detectable = detectable(
            effective, alpha, sd=c.sd, changed_share=share, groups=c.clusters
        )
    basis = (
        "sets this size resampled from this one and shifted by that much either way"
        if c.detectable is not None
        else "sets this size with this spread"
    )
    clustered = _clustered(c, effective)
    # a 0/1 score of the logs has no range in the registry, but its difference lies in [-1, 1]
    span = difference_range(c.metric) or ((-1.0, 1.0) if binary else None)
    detect = (
        f"A true difference of {_points(min_detectable, binary)} would be found "
        f"(the {level} interval excluding zero) in about {fmt_pct(POWER)} of {basis}"
        f"{clustered}; smaller ones are usually missed. "
        if span is None or min_detectable <= span[1]
        else f"Even the largest difference {c.metric} can take ({_points(span[1], binary)}) "
        f"would be found (the {level} interval excluding zero) in fewer than {fmt_pct(POWER)} "
        f"of {basis}{clustered}. "
    )
    if c.diff == 0:
        return Power(
            c.metric,
            c.n,
            discordant,
            min_detectable,
            None,
            head + detect + "A and B are level on average, so no larger set would say which "
            "is better.",
        )
    needed = math.ceil(needed_size(c.diff, alpha, sd=c.sd, changed_share=share) * inflation)
    # the normal formula's size, kept on the stated difference's side of n (which, resampled or
    # with the clusters' degrees of freedom, is not that formula's): an observed difference
    # under the stated one needs more questions than the set has, never fewer
    needed = max(needed, c.n + 1) if abs(c.diff) < min_detectable else min(needed, c.n)
    if share is not None and c.clusters is None and c.n < needed < EXACT_BELOW:
        needed = _exact_needed(needed, abs(c.diff), share, confidence)
    need = (
        f"To find the observed difference of {_points(abs(c.diff), binary)} "
        f"{fmt_pct(POWER)} of the time takes about {fmt_count(needed, 'question')} "
        f"(you have {c.n:,})."
    )
    return Power(c.metric, c.n, discordant, min_detectable, needed, head + detect + need)
