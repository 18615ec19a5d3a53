"""How much can this golden set tell? Detectable difference and needed size, by the sign test.

A paired comparison learns only from discordant questions (those where A and B differ); the
verdict's sign test decides on them. The smallest detectable difference is the smallest net
count of wins the exact test would call significant, spread over all questions; the size needed
at the observed effect uses the normal approximation of the sign test's power (Noether, 1987).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import special

from .formatting import fmt_pct
from .stats import MetricComparison, sign_test

POWER = 0.8


@dataclass(frozen=True)
class Power:
    metric: str
    n: int
    discordant: int
    min_detectable: float | None  # in the metric's units; None: no count of wins would do
    needed_n: int | None  # questions for 80% power at the observed effect; None: no effect seen
    sentence: str


def _critical_wins(discordant: int, alpha: float) -> int | None:
    """Smallest number of wins among ``discordant`` that the two-sided sign test rejects."""
    for wins in range(math.ceil(discordant / 2), discordant + 1):
        if sign_test(wins, discordant - wins) < alpha:
            return wins
    return None


def needed_discordant(share_wins: float, alpha: float, power: float = POWER) -> float:
    """Discordant pairs for the sign test to reach ``power`` when P(win) = ``share_wins``."""
    z_alpha = special.ndtri(1 - alpha / 2)
    z_beta = special.ndtri(power)
    spread = math.sqrt(share_wins * (1 - share_wins))
    return ((0.5 * z_alpha + z_beta * spread) / abs(share_wins - 0.5)) ** 2


def _points(value: float, binary: bool) -> str:
    return f"{value * 100:.1f} points" if binary else f"{value:.3f}"


def power_of(c: MetricComparison, confidence: float, mean_abs_change: float) -> Power:
    """``mean_abs_change``: mean |B - A| over discordant questions (1 for a binary outcome)."""
    alpha = 1 - confidence
    discordant = c.wins + c.losses
    binary = c.fixed is not None
    critical = _critical_wins(discordant, alpha) if discordant else None
    min_detectable = (
        (2 * critical - discordant) / c.n * mean_abs_change if critical is not None else None
    )
    needed = None
    if discordant and c.wins != c.losses:
        share = needed_discordant(c.wins / discordant, alpha)
        needed = math.ceil(share / (discordant / c.n))
    level = fmt_pct(confidence)
    head = (
        f"Of {c.n} questions, {discordant} changed on {c.metric} between A and B; "
        "only those carry evidence. "
    )
    if min_detectable is None:
        detect = f"Too few changed for any difference to be conclusive at {level}. "
    else:
        detect = (
            f"This set can detect a difference of about {_points(min_detectable, binary)} "
            f"at {level}. "
        )
    if needed is None:
        need = "A and B won equally often, so no larger set would settle which is better."
    else:
        observed = _points(abs(c.diff), binary)
        need = (
            f"At the observed difference of {observed}, a conclusive test needs about "
            f"{needed} questions (you have {c.n}; {fmt_pct(POWER)} power)."
        )
    return Power(c.metric, c.n, discordant, min_detectable, needed, head + detect + need)
