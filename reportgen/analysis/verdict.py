"""The plain-language verdict for the headline metric."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..formatting import fmt_count, fmt_diff, fmt_interval, fmt_pct, named_value, p_clause
from .registry import base_name
from .skew import LOWER, UPPER, caveat
from .slices import SliceResult
from .stats import MetricComparison, at_target, significance

B_BETTER = "B better"
B_WORSE = "B worse"
NO_EVIDENCE = "no evidence of a difference"


@dataclass(frozen=True)
class Verdict:
    metric: str
    outcome: str  # B_BETTER, B_WORSE or NO_EVIDENCE
    reason: str
    regressions: list[str]  # slice regressions that survive Holm's adjustment (findings)
    margin: float | None = None  # --margin for this metric
    relevance: str | None = None  # with a margin: what the interval says about it
    borderline: bool = False  # the paired test and the interval disagree


def relevance(low: float, high: float, margin: float, scale: float = 1.0) -> str:
    """Where the interval [low, high] of B - A lies against the margin M that matters, as a
    gate's rules read it: a bound within float noise of -M or M (at_target, on the ``scale`` of
    the means compared) is at it, and equivalence is the interval within [-M, M], as 'within M'
    passes, a stricter form of the two one-sided tests (Schuirmann, 1987), which use the
    interval at 1 - 2 alpha. The verdict read "no evidence" of an interval a 'within M' rule
    passed, with a bound at M.
    """
    low, high = (at_target(at_target(b, margin, scale), -margin, scale) for b in (low, high))
    m = f"{margin:g}"
    for sign, side in ((1, "better"), (-1, "worse")):
        near, far = (low, high) if sign > 0 else (-high, -low)
        if near >= margin and near > 0:  # at a margin of 0, [0, 0] is not better
            return f"B {side} by at least {m}"
        if near > 0:
            if far < margin:
                return f"B {side}, but by less than {m}"
            return f"B {side}; whether by at least {m} is not settled"
    if -margin <= low and high <= margin:
        return f"equivalent within {m}"
    return NO_EVIDENCE


def margin_for(margins: tuple[tuple[str, float], ...], metric: str) -> float | None:
    """The margin of ``metric`` (e.g. "ndcg@5", named in full or as "ndcg"), else the one for
    all metrics, else None."""
    named = {name: m for name, m in margins}
    for key in (metric, base_name(metric), ""):
        if key in named:
            return named[key]
    return None


def decide(
    c: MetricComparison,
    confidence: float,
    regressions: list[SliceResult],
    margin: float | None = None,
    higher_is_better: bool = True,
    candidate: str = "B",
    digits: int = 3,
) -> Verdict:
    """B is better (worse) when the whole interval of B - A lies above (below) zero; for a
    score where lower is better, below (above).

    The paired test of the same mean (McNemar's exact test on a binary outcome, else the
    bootstrap-t, t or permutation test of stats.compare_metric) and the counts are stated beside
    it; when the two disagree the reason says the evidence is borderline (two questions both
    fixed: the interval [+1, +1], McNemar's p 0.5). Requiring the test too would cost power the
    power sentence states: at 20 questions, 30% of them changed, the stated detectable
    difference was found in 52% of simulated sets instead of 80% (bench/simulate.py, power:
    "interval and test", 1,000 sets); a gate's superiority rule does require both (gates.py).
    ``regressions`` are the slices to name: only findings (``SliceResult.finding``), so a
    negative direction in a slice stays in the slice table and the verdict's false-alarm rate
    stays at 1 - confidence. ``digits``: the decimals of the metric's row in the tables, so the
    sentence and the row print one number alike (a cost's [+0.000142, +0.000231], not
    [+0.0001, +0.0002]).
    """
    interval = (
        f"the {fmt_pct(confidence)} interval of B \u2212 A for {c.metric} is "
        + fmt_interval(c.ci_low, c.ci_high, digits)
    )
    sign = 1 if higher_is_better else -1
    low, high = sorted((sign * c.ci_low, sign * c.ci_high))  # B - A in the better direction
    outcome = B_BETTER if low > 0 else B_WORSE if high < 0 else NO_EVIDENCE
    where = "above zero" if c.ci_low > 0 else "below zero" if c.ci_high < 0 else "includes zero"
    if not higher_is_better:
        where += f" (lower {c.metric} is better)"
    parts = [
        f"{interval}, {where}"
        if not math.isnan(c.ci_low)
        else f"one {'question' if c.clusters is None else 'cluster'} gives no interval of "
        f"B \u2212 A for {c.metric}"
    ]
    counts = (
        f"fixed {c.fixed:,}, broken {c.broken:,}"
        if c.fixed is not None
        else f"{fmt_count(c.wins, 'win')}, {fmt_count(c.losses, 'loss', 'losses')}, "
        f"{fmt_count(c.ties, 'tie')}"
    )
    bar = significance(confidence)  # p beside it shows the digits that keep it on its side
    parts.append(
        f"{c.test} test {p_clause(c.p, bar)} ({counts}, over {fmt_count(c.n, 'question')})"
    )
    if c.clusters is not None and c.clusters > 1:
        clusters = fmt_count(c.clusters, "cluster")
        how = (
            f"Student's t over {clusters} (the cluster bootstrap's normal limit)"
            if c.normal_limit
            else f"questions resampled in {clusters}"
        )
        parts.append(
            f"{how}, design effect {c.design_effect:.2f} (the variance of the mean over that of "
            "independent questions)"
            if c.design_effect is not None
            else f"{how}, no design effect (B − A is one value: neither variance has a spread)"
        )
    scale = max(abs(c.a), abs(c.b))  # as a gate's rule reads its bounds (gates._as_judged)
    practical = None if margin is None else relevance(low, high, margin, scale)
    if practical is not None:
        parts.append(f"against the margin of {margin:g} that matters: {practical}")
    # the bounds the sentence rests on: the claim's, and both where the margin's reading needs
    # the far one too ("by less than 2", "equivalent within 3")
    resting = {LOWER} if c.ci_low > 0 else {UPPER} if c.ci_high < 0 else set()
    if practical is not None and (" by less than " in practical or "equivalent" in practical):
        resting |= {LOWER, UPPER}
    unsure = next((text for b in (LOWER, UPPER) if b in resting and (text := caveat(c, b))), None)
    if unsure:  # a skewed B - A leaves one of them unsure
        parts.append(unsure)
    reason = "; ".join(parts)
    borderline = (outcome == NO_EVIDENCE) != (c.p >= significance(confidence))
    if borderline:
        reason += (
            f"; the {c.test} test and the interval disagree at {fmt_pct(confidence)}, "
            "so the evidence is borderline"
        )
    return Verdict(
        c.metric,
        outcome,
        reason[0].upper() + reason[1:] + ".",
        regression_lines(regressions, significance(confidence), candidate, digits, c),
        margin,
        practical,
        borderline,
    )


def regression_lines(
    regressions: list[SliceResult],
    bar: float,
    candidate: str = "B",
    digits: int = 3,
    run: MetricComparison | None = None,
) -> list[str]:
    """The verdict's line for each slice regression, naming the run that regresses: "B" beside
    A, the candidate's own name among several candidates; its adjusted p is read against
    ``bar``, its numbers shown to ``digits`` as the slice table's rows. ``run``, the whole
    run's comparison of the metric, lends its skewness to a slice's (skew.caveat)."""
    lines = []
    for r in regressions:
        c = r.comparison
        line = (
            f"{candidate} regresses on {r.column} = {named_value(r.value)}: "
            f"{fmt_diff(c.diff, digits)} {fmt_interval(c.ci_low, c.ci_high, digits)} over "
            f"{fmt_count(c.n, 'question')} (Holm-adjusted {p_clause(r.p_holm, bar)})"
        )
        unsure = regression_caveat(c, run)
        lines.append(f"{line}; {unsure}" if unsure else line)
    return lines


def regression_caveat(c: MetricComparison, run: MetricComparison | None) -> str | None:
    """The skew caveat of a slice regression (skew.caveat), ``run`` lending its skewness: a
    finding's interval lies wholly on one side of zero, so it rests on the bound nearer it."""
    return caveat(c, UPPER if c.ci_high < 0 else LOWER, run)
