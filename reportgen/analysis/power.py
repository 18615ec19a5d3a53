"""How much can this golden set tell? Detectable difference and needed size, for the verdict.

The verdict calls B better or worse when the interval of B - A excludes zero; the interval is
about as wide as Student's t interval, mean +- t(n - 1) sd / sqrt(n). So a true difference
delta is detected with probability ``POWER`` when delta sqrt(n) / sd = t(1 - alpha/2) + t(POWER)
(the usual normal-theory power of a paired test, with t for small sets). For a continuous
metric sd is the observed spread of B - A, taken to stay the same under other differences.
That formula is optimistic for continuous metrics on small sets: the spread it plugs in is
itself uncertain (more so with ties), and the interval used there (studentized bootstrap and
t) is wider than t; so under STUDENTIZED_BELOW changed questions (however many tie) the
detectable difference is found by resampling the observed differences instead
(stats.resampled_detectable), which keeps both.
For a binary outcome the interval's side is McNemar's statistic, whose mean and spread under a
true difference both follow it (_mcnemar): its spread is half of 1 when the few changes all go
one way, which the normal formula of a fixed spread (delta = k sqrt(psi / (n + k^2))) missed,
stating 777 questions where 568 find a one-way point at 1% changed (tests/test_binary_power.py);
under EXACT_BELOW questions, where the changed ones are a handful and the interval moves in
steps, it is found exactly instead (binary_power.py). With --cluster
the interval is Student's t over the G clusters (the standard error over clusters, with
stats.cluster_degrees: G - 1 for equal sizes), so the detectable difference is that standard
error times cluster_multiplier,
and the size needed is a number of clusters like these (the size of a cluster of the set on
average); under FEW_CLUSTERS clusters the sentence says no realistic difference can be found.
The size needed for the observed difference solves the same formula (McNemar's for a binary
outcome), kept on the stated difference's side of n (resampled, it is not that formula's), so
the two sentences never disagree. A detectable difference past the range a metric's
difference can take is not stated as one. bench/simulate.py and bench/simulate_clusters.py
check that a difference of the stated size is detected 80% of the time, and simulate.py's
needed check that the stated size finds the observed difference as often.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..formatting import decimals, fmt_count, fmt_diff, fmt_pct
from .binary_power import EXACT_BELOW, exact_detectable
from .registry import difference_range
from .stats import (
    CLUSTERED_FEW_CHANGED,
    FEW_CHANGED,
    FEW_CHANGED_SCORED,
    POWER,
    MetricComparison,
)

_MAX_N = 10**9  # beyond this size the needed-size search stops
_GRID = 100  # equal-probability points of an estimated standard error (cluster_multiplier)
FEW_CLUSTERS = 4  # under this many clusters no realistic difference is found (1-2 df)
CARRIED_BELOW = 10  # changed questions (the rest tied) under which a difference they alone
# carry is found less often than one that moves every question: 36% and 61% of sets at 4 and 6


@dataclass(frozen=True)
class Power:
    metric: str
    n: int
    discordant: int
    min_detectable: float | None  # in the metric's units; None: nothing changed or n < 2
    needed_n: int | None  # questions for 80% power at the observed effect; None: no effect seen
    sentence: str


def _k(n: int, alpha: float, spread: float = 1.0) -> float:
    """t(1 - alpha/2) + t(POWER) ``spread``, with n - 1 degrees of freedom: the statistic's
    mean, in its standard deviations under no difference, that clears t(1 - alpha/2) in POWER
    of sets when its own standard deviation is ``spread``."""
    return float(special.stdtrit(n - 1, 1 - alpha / 2) + special.stdtrit(n - 1, POWER) * spread)


def _mcnemar(delta: float, changed_share: float) -> tuple[float, float]:
    """(c, spread) for a fresh 0/1 set of true difference ``delta``: c = max(psi, |delta|), the
    share of its questions that change (more than this set's psi when delta needs more), and
    the standard deviation of McNemar's statistic (F - B) / sqrt(F + B) there, whose mean is
    delta sqrt(n / c). With r = |delta| / c the delta method over the trinomial counts gives
    the variance 1 - (3 + c) r^2 / 4: 1 when the changes go both ways alike, 1/4 when they all
    go one way and are few (F alone, sqrt(F) of a Poisson count)."""
    c = min(max(changed_share, abs(delta)), 1.0)
    r = abs(delta) / c if c > 0 else 0.0
    return c, math.sqrt(max(1.0 - (3.0 + c) * r * r / 4.0, 0.0))


def detectable(n: int, alpha: float, *, sd: float, changed_share: float | None) -> float:
    """The true difference detected with probability POWER by n questions.

    ``changed_share`` (binary outcomes): the share of questions whose outcome differs, psi; the
    difference is then where McNemar's statistic, whose side the interval takes from 200
    questions on, clears t(1 - alpha/2) in POWER of fresh sets (_mcnemar), found by bisection.
    """
    if changed_share is None:
        return _k(n, alpha) * sd / math.sqrt(n)

    def short(delta: float) -> float:  # the statistic's mean below what POWER asks, in sds
        c, spread = _mcnemar(delta, changed_share)
        return _k(n, alpha, spread) - delta * math.sqrt(n / c)

    if short(1.0) > 0:
        return math.inf
    low, high = 0.0, 1.0
    for _ in range(50):  # to 1e-15
        mid = (low + high) / 2
        low, high = (mid, high) if short(mid) > 0 else (low, mid)
    return high


def _found_share(q: float, t: float, spreads: np.ndarray) -> float:
    """E[P(|Z + q S1| > t S2)] over ``spreads``, equal-probability values of S1 and of S2."""
    reach, critical = q * spreads[:, None], t * spreads[None, :]
    return float((special.ndtr(reach - critical) + special.ndtr(-reach - critical)).mean())


@functools.lru_cache(maxsize=1024)
def cluster_multiplier(df: float, alpha: float) -> float:
    """The true difference, in standard errors over clusters, whose interval (mean +- t se,
    t = t(1 - alpha/2, df), df = G - 1 for G clusters of equal sizes; stats.cluster_degrees)
    excludes zero in POWER of fresh sets.

    The se is estimated both in the set the difference is stated from and in the fresh set:
    each is sigma S, S ~ sqrt(chi2(df) / df), so a difference q S1 is found when
    |Z + q S1| > t S2 and q solves E[P(|Z + q S1| > t S2)] = POWER (over _GRID values of each
    S). The plug-in t(1 - alpha/2) + t(POWER), which takes S1 as sigma, is found less often
    the fewer the clusters (2 equal clusters: 14.1 se, found in 54% of simulated sets; this
    gives 39.1, found in 81%; bench/simulate_clusters.py, power); from 50 clusters the two
    differ by under 2%, and both tend to z(1 - alpha/2) + z(POWER)."""
    spreads = np.sqrt(special.chdtri(df, (np.arange(_GRID) + 0.5) / _GRID) / df)
    t = float(special.stdtrit(df, 1 - alpha / 2))
    high = t
    while _found_share(high, t, spreads) < POWER:
        high *= 2
    # imported here: scipy.optimize loads SciPy's linear algebra and geometry too (0.1-0.3 s),
    # which a report without --cluster never uses
    from scipy.optimize import brentq

    return float(brentq(lambda q: _found_share(q, t, spreads) - POWER, 0, high))


def needed_size(
    delta: float,
    alpha: float,
    *,
    sd: float,
    changed_share: float | None,
    multiplier: Callable[[int, float], float] = _k,
) -> int:
    """The fewest questions that detect a true difference ``delta`` with probability POWER;
    with ``multiplier`` cluster_multiplier, the fewest clusters, ``sd`` then the spread of one
    cluster's share of the mean (its standard error times sqrt(G)). A 0/1 outcome's
    (``changed_share``) solves detectable's condition for n: n = c (k / delta)^2."""
    spread, statistic = sd, 1.0
    if changed_share:
        c, statistic = _mcnemar(delta, changed_share)
        spread = math.sqrt(c)
        multiplier = functools.partial(_k, spread=statistic)

    def wanted(n: int) -> int:  # n = (k(n) spread / delta)^2; k falls as n grows
        return math.ceil((multiplier(n, alpha) * spread / abs(delta)) ** 2)

    z = special.ndtri(1 - alpha / 2) + special.ndtri(POWER) * statistic
    n = max(2, math.floor((z * spread / abs(delta)) ** 2))  # t > z: a lower bound
    while n < _MAX_N and wanted(n) > n:
        n = wanted(n)
    while n > 2 and wanted(n - 1) <= n - 1:
        n -= 1
    return min(n, _MAX_N)


def _points(value: float, binary: bool, digits: int = 3) -> str:
    """A difference in points of a share, else to ``digits`` decimals; never 0 for one that is
    not (an observed 0.00034 read "the observed difference of 0.000")."""
    if binary:
        return f"{value * 100:.{decimals(value * 100, 1)}f} points"
    return f"{value:.{decimals(value, digits)}f}"


def _changed(n: int, changed: int, metric: str, alone: bool = True) -> str:
    """How many of the questions changed between the runs: only those carry evidence, unless
    not ``alone`` (all but a few moved alike, and those few, changed or not, carry it)."""
    between = f"on {metric} between A and B"
    if n == 1:
        return f"The only question {'changed' if changed else 'did not change'} {between}. "
    if changed == 0:
        none = "Neither question" if n == 2 else f"None of the {n:,} questions"
        return f"{none} changed {between}. "
    if changed == n:
        every = "Both questions" if n == 2 else f"All {n:,} questions"
        return f"{every} changed {between}. "
    if not alone:
        return f"Of {n:,} questions, {changed:,} changed {between}. "
    those = "only it carries" if changed == 1 else "only those carry"
    return f"Of {n:,} questions, {changed:,} changed {between}; {those} evidence. "


def _exact_needed(n: int, delta: float, changed_share: float, confidence: float) -> int:
    """From the formula's size ``n``, the fewest questions whose exact detectable
    difference (binary_power) reaches ``delta``: on a handful of questions the formula is off
    either way (2 of 2 fixed: the formula of a fixed spread said 3, where no count of 3 can
    leave zero; McNemar's, with Student's t on 1 to 6 degrees of freedom, says 7, where 4 all
    fixed do)."""

    def reaches(m: int) -> bool:
        return exact_detectable(m, changed_share, confidence) <= delta

    if reaches(n):
        while n > 2 and reaches(n - 1):
            n -= 1
        return n
    while n < EXACT_BELOW and not reaches(n):
        n += 1
    return n


def _few_clusters(groups: int, df: float) -> str:
    """Under FEW_CLUSTERS clusters, why the stated difference is out of reach."""
    df = round(df, 1)
    degrees = fmt_count(int(df), "degree") if df.is_integer() else f"{df} degrees"
    return (
        f"With only {groups} clusters no realistic difference can be found: the interval takes "
        f"Student's t over their means with {degrees} of freedom. "
    )


def _few_changed(c: MetricComparison, digits: int) -> str:
    """Why the interval of a few changed questions among ties (stats.few_changed_interval) finds
    no difference, or only a large one: under FEW_CHANGED none can be found; under
    ONE_WAY_BELOW, nearly all one way, each change weighs as the share of a flip it is; all but
    a few moved by one value (c.commonest), each other move weighs as the share of the range
    it went from there."""
    changed = c.wins + c.losses
    if c.commonest is not None and changed >= FEW_CHANGED:
        others = c.off_commonest or 0
        return (
            f"{c.n - others:,} of the {c.n:,} questions moved by the same "
            f"{fmt_diff(c.commonest, digits)}, the other {others} otherwise: the interval "
            "allows for what so few could hide (larger moves this set did not draw), each "
            "weighing as the share of the range it moved from that value. "
        )
    if changed < FEW_CHANGED:
        return (
            f"With {fmt_count(changed, 'question')} changed no difference can be found: their "
            f"exact sign flips give p of at least {2 ** (1 - changed):.3g}, and the interval "
            "allows for what the unchanged ones could hide. "
        )
    return (
        f"With {fmt_count(changed, 'question')} changed, {min(c.wins, c.losses)} of them the "
        "other way, the interval allows for what the unchanged ones could hide (large changes "
        "the other way this set did not draw): each change weighs as the share of the range "
        "it moved, so only changes that go far find a difference. "
    )


def _clusters_needed(c: MetricComparison, alpha: float, groups: int) -> tuple[int, str]:
    """Questions, and the words, for the clusters like these that find the observed
    difference POWER of the time (the standard error over clusters falls as sqrt(G), and
    Student's t's degrees of freedom grow as G - 1 times the share of it this set's sizes
    give)."""
    se, share = c.cluster_se or 0.0, (c.cluster_df or 1.0) / (groups - 1)

    def multiplier(g: int, a: float) -> float:
        return cluster_multiplier(max(1.0, (g - 1) * share), a)

    wanted = needed_size(
        c.diff, alpha, sd=se * math.sqrt(groups), changed_share=None, multiplier=multiplier
    )
    questions = math.ceil(wanted * c.n / groups)
    return questions, (
        f"takes about {fmt_count(wanted, 'cluster')} like these, about "
        f"{fmt_count(questions, 'question')} (you have {fmt_count(c.n, 'question')} in "
        f"{fmt_count(groups, 'cluster')})."
    )


def power_of(c: MetricComparison, confidence: float, digits: int = 3) -> Power:
    """The power sentence of ``c``, its differences to ``digits`` decimals as in the metric's
    row of the tables."""
    alpha = 1 - confidence
    discordant = c.wins + c.losses
    binary = c.fixed is not None
    share = discordant / c.n if binary and c.n else None
    level = fmt_pct(confidence)
    # all but a few moved alike, most of them changed: those few carry the evidence too
    shared = c.commonest is not None and discordant >= FEW_CHANGED
    head = _changed(c.n, discordant, c.metric, alone=not shared)
    if discordant == 0 or (c.clusters or c.n) < 2:
        why = (
            f"One {'cluster' if c.clusters else 'question'} has no spread to measure a "
            "difference against: only a larger set can tell."
            if discordant
            else "With no question changed there is no spread to tell from how many questions "
            "would find a difference."
        )
        return Power(c.metric, c.n, discordant, None, None, head + why)
    if (not binary and c.sd == 0) or c.cluster_se == 0:
        unit = "question" if not binary and c.sd == 0 else "cluster"
        return Power(
            c.metric,
            c.n,
            discordant,
            None,
            None,
            head + f"Every {unit} moved by the same {_points(abs(c.diff), binary, digits)}"
            f"{' on average' if unit == 'cluster' else ''}, so there is no spread to tell from "
            f"how many {unit}s would find a difference.",
        )
    groups = c.clusters if c.cluster_se is not None else None
    if groups is not None:
        min_detectable = cluster_multiplier(c.cluster_df or 1.0, alpha) * (c.cluster_se or 0.0)
    elif c.detectable is not None:
        min_detectable = c.detectable
    elif share is not None and c.n < EXACT_BELOW:
        min_detectable = exact_detectable(c.n, share, confidence)
    else:
        min_detectable = detectable(c.n, alpha, sd=c.sd, changed_share=share)
    if groups is not None:
        basis = f"sets of {fmt_count(groups, 'cluster')} like these with this spread between them"
    elif c.detectable is not None:
        basis = (
            "sets this size resampled from this one with its difference set to that much either "
            "way, every question moved by it"
        )
    else:
        basis = "sets this size with this spread"
    # a difference that a handful of changed questions carry alone, the rest tied, is found
    # less often than one that moves every question (bench/simulate.py, "carried")
    carried = c.detectable is not None and discordant < min(c.n, CARRIED_BELOW)
    smaller = "smaller ones" + (", or one the changed questions alone carry," if carried else "")
    few = (
        _few_clusters(groups, c.cluster_df or 1.0)
        if groups is not None and groups < FEW_CLUSTERS
        else ""
    )
    few_changed = c.interval in (FEW_CHANGED_SCORED, CLUSTERED_FEW_CHANGED)
    few += _few_changed(c, digits) if few_changed else ""
    # a 0/1 score of the logs has no range in the registry, but its difference lies in [-1, 1]
    span = difference_range(c.metric) or ((-1.0, 1.0) if binary else None)
    detect = (
        f"A true difference of {_points(min_detectable, binary, digits)} would be found "
        f"(the {level} interval excluding zero) in about {fmt_pct(POWER)} of {basis}; "
        f"{smaller} are found less often. "
        if span is None or min_detectable <= span[1]
        else f"Even the largest difference {c.metric} can take "
        f"({_points(span[1], binary, digits)}) "
        f"would be found (the {level} interval excluding zero) in fewer than {fmt_pct(POWER)} "
        f"of {basis}. "
    )
    if few_changed:  # those sets move every question: say so beside "no difference here"
        where = "move by differing amounts" if shared else "change"
        detect = f"Where more questions {where}, " + detect[0].lower() + detect[1:]
    detect = few + detect
    # no size to state: level runs, or as few changes in a larger set keep the bound
    unsized = (
        "A and B are level here (B \u2212 A = 0), so no set size is stated; that does not show "
        "them equal: a true difference either way within the interval fits these questions."
        if c.diff == 0
        else "How many questions would find the observed difference of "
        f"{_points(abs(c.diff), binary, digits)} is not stated: while so few "
        f"{'lie off the common move' if shared else 'change, nearly all one way'}"
        ", the bound holds whatever the set's size."
        if few_changed
        else None
    )
    if unsized is not None:
        return Power(c.metric, c.n, discordant, min_detectable, None, head + detect + unsized)
    find = (
        f"To find the observed difference of {_points(abs(c.diff), binary, digits)} "
        f"{fmt_pct(POWER)} of the time "
    )
    if groups is not None:
        needed, takes = _clusters_needed(c, alpha, groups)
        return Power(
            c.metric, c.n, discordant, min_detectable, needed, head + detect + find + takes
        )
    needed = needed_size(c.diff, alpha, sd=c.sd, changed_share=share)
    # the normal formula's size, kept on the stated difference's side of n (which, resampled,
    # is not that formula's): an observed difference under the stated one needs more questions
    # than the set has, never fewer
    found = abs(c.diff) >= min_detectable
    needed = min(needed, c.n) if found else max(needed, c.n + 1)
    if share is not None and needed < EXACT_BELOW:  # under n too: 4 of 4 fixed, not "2"
        needed = _exact_needed(needed, abs(c.diff), share, confidence)
        needed = min(needed, c.n) if found else needed
    need = find + f"takes about {fmt_count(needed, 'question')} (you have {c.n:,})."
    return Power(c.metric, c.n, discordant, min_detectable, needed, head + detect + need)
