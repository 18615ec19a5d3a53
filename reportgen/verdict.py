"""The plain-language verdict for the headline metric."""

from __future__ import annotations

from dataclasses import dataclass

from .formatting import fmt_diff, fmt_interval, fmt_pct, p_clause
from .slices import SliceResult
from .stats import MetricComparison

B_BETTER = "B better"
B_WORSE = "B worse"
NO_EVIDENCE = "no evidence of a difference"


@dataclass(frozen=True)
class Verdict:
    metric: str
    outcome: str  # B_BETTER, B_WORSE or NO_EVIDENCE
    reason: str
    regressions: list[str]  # slices where B - A is negative while positive overall


def decide(c: MetricComparison, confidence: float, regressions: list[SliceResult]) -> Verdict:
    """B is better (worse) when the whole interval of B - A lies above (below) zero.

    The sign test and the fixed/broken counts are stated beside it; when the sign test does not
    agree at the same level, the reason says so, since the gain then rests on a few questions.
    """
    interval = (
        f"the {fmt_pct(confidence)} interval of B \u2212 A for {c.metric} is "
        + fmt_interval(c.ci_low, c.ci_high)
    )
    if c.ci_low > 0:
        outcome, where = B_BETTER, "above zero"
    elif c.ci_high < 0:
        outcome, where = B_WORSE, "below zero"
    else:
        outcome, where = NO_EVIDENCE, "includes zero"
    parts = [f"{interval}, {where}"]
    counts = (
        f"fixed {c.fixed}, broken {c.broken}"
        if c.fixed is not None
        else f"{c.wins} wins, {c.losses} losses, {c.ties} ties"
    )
    parts.append(f"sign test {p_clause(c.p_sign)} ({counts}, over {c.n} questions)")
    reason = "; ".join(parts)
    alpha = 1 - confidence
    if outcome != NO_EVIDENCE and c.p_sign >= alpha:
        reason += "; the sign test does not confirm it, so the change rests on few questions"
    flagged = [
        f"B regresses on {r.column} = {r.value}: {fmt_diff(r.comparison.diff)} "
        f"{fmt_interval(r.comparison.ci_low, r.comparison.ci_high)} over {r.comparison.n} "
        f"questions" + (" (under 10: a direction, not proof)" if r.small else "")
        for r in regressions
    ]
    return Verdict(c.metric, outcome, reason[0].upper() + reason[1:] + ".", flagged)
