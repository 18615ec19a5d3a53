"""Paired statistics of one metric: an interval on the mean difference (a bootstrap, or its normal
limit once NORMAL_LIMIT_FROM questions differ from the commonest value, or SYMMETRIC_LIMIT_FROM
where the differences are nearly symmetric) and a paired test of the same mean (McNemar's exact
test for binary outcomes, the bootstrap-t test that inverts the interval for continuous metrics
under STUDENTIZED_BELOW questions, or Student's t test where that interval is t alone, a
sign-flip permutation test otherwise), so the interval and the p-value answer one question."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TypeVar

import numpy as np
import pandas as pd
from scipy import special

from ..formatting import NOISE
from .registry import difference_range
from .skew import moment_skewness, skewness

_DECIMALS = 12  # differences equal to this many decimals are one value
_CHUNK = 250  # resamples drawn at once: bounds memory to chunk x (distinct values + tail)
_COUNT_COST = 15  # one multinomial category costs about 15 index draws
_SLACK = 1e-9  # flipped sums closer than this to the observed sum are equal to it
_SPREAD_NOISE = 1e-12  # a resample's variance under this share of its mean square is none
EXACT_FLIPS = 12  # up to this many non-zero differences every sign flip is enumerated (4096)
RANDOM_FLIPS = 10_000  # otherwise this many seeded random flips (p's MC error <= 0.005) ...
NORMAL_FROM = 1_000  # ... below this many non-zero differences; from here, the normal limit
MCNEMAR = "McNemar exact"
PERMUTATION = "paired permutation"
BOOTSTRAP_T = "bootstrap-t"
INTERVAL = "expanded percentile bootstrap"
STUDENTIZED = "studentized bootstrap and t, the wider on each side"
SCORED = "expanded percentile bootstrap and Tango's score interval, the wider on each side"
SCORED_OWN = "expanded percentile bootstrap and Wilson's score interval, the wider on each side"
STUDENT_T = "Student's t (studentized bootstrap undefined)"
T_TEST = "Student's t"
CLUSTERED = "cluster bootstrap and t over clusters, the wider on each side"
CLUSTERED_NORMAL = "Student's t over clusters (normal limit)"
CLUSTERED_SCORED = (
    "cluster bootstrap, t over clusters and Tango's score interval, the widest on each side"
)
CLUSTERED_SCORED_OWN = (
    "cluster bootstrap, t over clusters and Wilson's score interval, the widest on each side"
)
NO_SPREAD = "no spread: Wilson's bound on the share of questions that could differ"
FEW_CHANGED = 5  # continuous B - A with fewer changed among ties: the bootstrap's and a score bound
# ... and with fewer than ONE_WAY_BELOW changed among ties, fewer than ONE_WAY_RARER of them the
# rarer way: a right-skewed null (rare large gains, many small losses) whose gains no set drew
# reads as a run of small losses (bench/simulate_one_way.py)
ONE_WAY_BELOW = 20
ONE_WAY_RARER = 3
BOUNDED_SCORE = "bounded score"  # Tango's score test of the changes as shares of their range
FEW_CHANGED_SCORED = (
    f"Student's t, the studentized bootstrap where {FEW_CHANGED} or more lie off the value the "
    "changes are counted from, and Tango's score interval of the changes as shares of their "
    "range, the widest on each side"
)
FEW_CHANGED_SCORED_OWN = (
    "Student's t and Wilson's score interval of the values as shares of their range, the wider "
    "on each side"
)
CLUSTERED_FEW_CHANGED = (
    "cluster bootstrap, t over clusters and Tango's score interval of the changes as shares of "
    "their range, the widest on each side"
)
CLUSTERED_FEW_CHANGED_OWN = (
    "cluster bootstrap, t over clusters and Wilson's score interval of the values as shares of "
    "their range, the widest on each side"
)
CLUSTERED_NO_SPREAD = "no spread: Wilson's bound on the share of clusters that could differ"
NO_INTERVAL = "none: one question, or one cluster, has no spread to measure"
CLUSTER_TEST = "paired permutation of clusters"
NORMAL_LIMIT = "Student's t (normal limit)"
STUDENTIZED_BELOW = 1_000  # continuous B - A off zero on fewer questions: STUDENTIZED
NORMAL_LIMIT_FROM = 10_000  # values off the commonest one from which NORMAL_LIMIT is the interval
SYMMETRIC_LIMIT_FROM = 1_000  # ... or from this many, where the skewness is at most ...
SKEW_BOUND = 0.03  # ... this times sqrt(n): t's one-sided error then under a tenth of its tail
POWER = 0.8  # the power sentence's share of sets that find the stated difference (power.py)
Values = TypeVar("Values", np.ndarray, pd.Series)


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
    wins: int  # B > A, with B - A rounded to _DECIMALS (float noise is a tie)
    losses: int  # B < A, likewise
    ties: int
    p: float  # of ``test``, the paired test of the mean difference
    fixed: int | None  # binary metrics only: 0 in A, 1 in B
    broken: int | None  # binary metrics only: 1 in A, 0 in B
    test: str  # MCNEMAR (binary), BOOTSTRAP_T or T_TEST (continuous, n < STUDENTIZED_BELOW, as
    # the interval is STUDENTIZED or STUDENT_T) or PERMUTATION; "<that>, PERMUTATION and
    # BOUNDED_SCORE" where the interval is FEW_CHANGED_SCORED (p the largest of them); with
    # --cluster, "CLUSTER_TEST and BOUNDED_SCORE" where it is CLUSTERED_FEW_CHANGED
    interval: str  # how ci_low, ci_high were computed (INTERVAL, STUDENTIZED, NORMAL_LIMIT, ...)
    sd: float  # standard deviation of B - A over the n questions (ddof 1; 0 when n < 2 or
    # B - A is one value to _DECIMALS)
    clusters: int | None = None  # with --cluster: how many clusters the n questions form
    design_effect: float | None = None  # with --cluster: variance of the mean / naive variance
    cluster_se: float | None = None  # with --cluster, 2+ clusters: cluster_standard_error
    cluster_df: float | None = None  # and Student's t's degrees of freedom: cluster_degrees
    detectable: float | None = None  # continuous, n < STUDENTIZED_BELOW: resampled_detectable
    commonest: float | None = None  # B - A of all but 1 to FEW_CHANGED - 1 questions where it
    # is not 0: few_changed_interval counts the changes from it (few_changes)
    off_commonest: int | None = None  # how many questions lie off it
    resampled: float | None = None  # the level at which a bound of the interval is a quantile of
    # the resamples (the expanded percentile's, or the bootstrap-t's at the stated level); None
    # where neither bound is one (Student's t or a score interval lies outside it, or the
    # differences have no spread): how many resamples are drawn cannot move it then
    skewness: float | None = None  # of B - A (B's own values for a run's own mean;
    # skew.skewness), not of a 0/1 outcome, clusters or few changes of a known range: where it
    # is high for n, a bound is unsure (skew.unsure_bound)

    @property
    def normal_limit(self) -> bool:
        """Whether the interval is the mean's normal limit, Student's t over the questions or
        the clusters (in_normal_limit), alone or beside a clustered 0/1 outcome's score
        interval: the means drawn for it are then that limit's (limit_draws), not resamples."""
        return self.interval == NORMAL_LIMIT or self.interval.startswith(CLUSTERED_NORMAL)


@dataclass(frozen=True)
class IntervalSides:
    """The intervals whose outer bound on each side is a comparison's interval (compare_metric),
    kept so that a bound can be asked at any value, a gate's margin (bound_p), without drawing
    again. ``percentile``: the questions (clusters with --cluster) the expanded percentile
    interval of the bootstrap means widens for, None where it is no side; ``t``: the estimate,
    its standard error and degrees of freedom of a Student's t side; ``pivots``: the bootstrap-t
    draws of a studentized side; ``score``: fixed, broken and n of Tango's score side, and the
    scale of a difference they are shares of (1 for a 0/1 outcome; few_changed_interval);
    ``constant``: the one value of differences without spread, the questions (clusters) it was
    seen on and the range of a difference, of no_spread_interval's side. A run's own mean keeps
    its Wilson side out: no rule asks its bound at a margin."""

    percentile: int | None = None
    t: tuple[float, float, float] | None = None
    pivots: np.ndarray = field(default_factory=lambda: np.empty(0))
    score: tuple[float, float, int, float, float] | None = None
    constant: tuple[float, int, float, float] | None = None


def as_compared(values: Values) -> Values:
    """Differences as every count, resample and test reads them: rounded to _DECIMALS, so
    float noise is no difference (0.1 + 0.2 against 0.3 ties)."""
    return np.round(values, _DECIMALS)


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test; on a binary outcome's fixed vs broken, McNemar's exact test.

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


def permutation_test(diff: np.ndarray, seed: int) -> float:
    """Two-sided paired permutation (sign-flip randomization) test of the mean difference.

    H0: within each question A and B are exchangeable, so each difference B - A is as likely
    to have been its negation. Statistic: |sum of the differences|, compared with its value
    under every assignment of signs (Fisher, 1935; Pitman, 1937); recommended over the sign and
    Wilcoxon tests for comparing means by Smucker, Allan & Carterette (2007). Zero differences
    do not change under a flip and are dropped. Up to EXACT_FLIPS non-zero differences every
    flip is enumerated (exact p); below NORMAL_FROM, RANDOM_FLIPS flips drawn from
    ``np.random.default_rng(seed)`` give p = (1 + as extreme) / (1 + flips), which is valid
    (Phipson & Smyth, 2010); from there on the flipped sum is normal with variance sum d^2,
    p = 2 Phi(-|sum d| / sqrt(sum d^2)): its distribution is symmetric, so the normal limit
    errs only at order 1/n (no skewness term), and flipping would cost n x RANDOM_FLIPS at 1M
    questions. Binary differences make this the exact sign test.
    """
    d = as_compared(diff)
    d = d[d != 0]
    n = len(d)
    if n == 0:
        return 1.0
    observed = abs(d.sum()) - _SLACK  # sums equal but for summation order count as extreme
    if n >= NORMAL_FROM:
        return float(2 * special.ndtr(-abs(d.sum()) / np.sqrt((d * d).sum())))
    if n <= EXACT_FLIPS:
        bits = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
        return float((np.abs((1 - 2 * bits) @ d) >= observed).mean())
    rng = np.random.default_rng(seed)
    total, extreme = d.sum(), 0
    for start in range(0, RANDOM_FLIPS, _CHUNK):
        rows = min(_CHUNK, RANDOM_FLIPS - start)
        random_bytes = rng.integers(0, 256, size=(rows, (n + 7) // 8), dtype=np.uint8)
        flipped = np.unpackbits(random_bytes, axis=1, count=n).astype(float)  # fair coins
        extreme += int((np.abs(total - 2 * (flipped @ d)) >= observed).sum())
    return (1 + extreme) / (1 + RANDOM_FLIPS)


def bootstrap_means(diff: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """``n_boot`` means of ``diff`` resampled with replacement (the paired bootstrap)."""
    return bootstrap_moments(diff, n_boot, seed, squares=False)[0]


def bootstrap_moments(
    diff: np.ndarray, n_boot: int, seed: int, *, squares: bool, threads: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Means of ``diff`` over ``n_boot`` resamples and, with ``squares``, means of its squares
    (else an empty array); the same resamples either way.

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
    Resamples are drawn in chunks, each from its own generator seeded by (seed, chunk), on
    ``threads`` threads (default: as many as there are cores; numpy releases the GIL): same
    seed, same numbers, whatever the threads.
    """
    n = len(diff)
    diff = as_compared(diff)
    codes, values = pd.factorize(diff)  # distinct values in order of first appearance
    counts = np.bincount(codes, minlength=len(values))
    order = np.argsort(-counts, kind="stable")
    values, counts = values[order], counts[order]
    head = _head_size(counts)
    tail = np.repeat(values[head:], counts[head:])
    probs = np.append(counts[:head], len(tail)) / n

    # each common value (and its square, as a product: a power of -v can differ from v's in the
    # last bit, and A - B must resample to the squares of B - A exactly)
    common = values[:head]
    powers = np.column_stack([common, common * common] if squares else [common])

    def chunk(start: int) -> np.ndarray:
        rows = min(_CHUNK, n_boot - start)
        rng = np.random.default_rng((seed, start))
        draws = rng.multinomial(n, probs, size=rows)
        sums = draws[:, :head] @ powers
        if len(tail):
            in_tail = draws[:, head]
            at = rng.integers(0, len(tail), size=int(in_tail.sum()), dtype=np.uint32)
            picked = tail[at]
            sums[:, 0] += segment_sums(picked, in_tail)
            if squares:
                sums[:, 1] += segment_sums(picked * picked, in_tail)
        return sums / n

    with ThreadPoolExecutor(max_workers=threads or os.cpu_count() or 1) as pool:
        moments = np.concatenate(list(pool.map(chunk, range(0, n_boot, _CHUNK))))
    return moments[:, 0], moments[:, 1] if squares else np.empty(0)


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


def expanded_confidence(confidence: float, n: int) -> float:
    """The percentile level that corrects the bootstrap's narrowness in small samples.

    A percentile interval is about mean +- z s sqrt((n - 1) / n) / sqrt(n): too narrow, by the
    divisor n in its spread and z instead of Student's t, so at n = 20-50 it covers 91-93%
    instead of 95%. Hesterberg's "expanded percentile" (2015, The American Statistician 69(4),
    sec. 5.3) takes the quantiles at Phi(sqrt(n / (n - 1)) t(n - 1, tail)), which matches the t
    interval's width while keeping the bootstrap's skew; it tends to the plain percentile
    interval as n grows. The simulation in bench/simulate.py shows it covers 95% from n = 20.
    """
    if n < 2:
        return confidence
    tail = (1 - confidence) / 2
    widened = np.sqrt(n / (n - 1)) * special.stdtrit(n - 1, tail)
    return float(1 - 2 * special.ndtr(widened))


def resample_spreads(means: np.ndarray, squares: np.ndarray, n: int) -> np.ndarray:
    """Standard deviation (ddof 1) of each resample of n, from its mean and mean square; 0 where
    the variance is within _SPREAD_NOISE of the mean square. A resample of one value has none,
    but its mean square less its squared mean leaves float noise (a few 1e-16 of the square,
    at most n of them for sums of n terms; resamples are studentized below 1,000 questions),
    whose root, a spread of 1e-8, made t* of order 1e7 and an interval of -9e7 at 3 questions.
    A spread under 1e-6 of the values' root mean square is none."""
    variance = squares - means * means
    return np.sqrt(np.where(variance > _SPREAD_NOISE * squares, variance, 0.0) * n / (n - 1))


def studentized_draws(diff: np.ndarray, means: np.ndarray, squares: np.ndarray) -> np.ndarray:
    """The bootstrap-t pivot of each resample, sqrt(n) (mean* - mean) / sd* (Efron & Tibshirani
    1993, ch. 12); +-inf when a resample has no spread, nan when it also has the sample's mean.
    Empty when the differences have no spread."""
    n = len(diff)
    if n < 2 or _no_spread(diff):
        return np.empty(0)
    mean = diff.mean()
    spread = resample_spreads(means, squares, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(spread > 0, (means - mean) / spread, np.sign(means - mean) * np.inf)
    return t * np.sqrt(n)


def studentized_interval(
    diff: np.ndarray, means: np.ndarray, squares: np.ndarray, confidence: float
) -> tuple[float, float] | None:
    """The bootstrap-t interval (Efron & Tibshirani 1993, ch. 12), or None when it is undefined.

    Each resample gives t* = (mean* - mean) / (sd* / sqrt(n)); the interval is
    [mean - t*(1 - tail) se, mean - t*(tail) se] with se = sd / sqrt(n). Dividing by each
    resample's own spread corrects the skew that the percentile interval keeps: on skewed
    differences (most questions lose a little, a few gain a lot) at n = 20-50 it covers 95%
    where the percentile methods cover 91-93% (bench/simulate.py). Undefined when too many
    resamples have no spread (a few non-zero differences among ties): t* is then infinite.
    """
    t = studentized_draws(diff, means, squares)
    if not len(t):
        return None
    tail = (1 - confidence) / 2
    with np.errstate(invalid="ignore"):
        low_t, high_t = np.quantile(t, [tail, 1 - tail])
    if not np.isfinite([low_t, high_t]).all():
        return None
    se = diff.std(ddof=1) / np.sqrt(len(diff))
    return float(diff.mean() - high_t * se), float(diff.mean() - low_t * se)


def bootstrap_t_test(diff: np.ndarray, means: np.ndarray, squares: np.ndarray) -> float:
    """Two-sided test of a zero mean difference that inverts ``small_sample_interval``.

    H0: the mean of B - A is 0 (no symmetry assumed). Statistic: t = mean / (sd / sqrt(n)).
    p is the smallest 1 - confidence at which the interval (on each side the wider of the
    studentized bootstrap and Student's t) excludes 0: on the side of the observed mean, twice
    the larger of Student's tail P(T(n - 1) >= |t|) and the bootstrap-t tail, the share of
    resamples with t* at least as far out (Hall 1992, sec. 3.12; Efron & Tibshirani 1993,
    sec. 16.4). So the test and the interval agree at every confidence level. Seeded through
    ``means``, ``squares``: the resamples of bootstrap_moments(diff, n_boot, seed), the very
    ones of the interval, so it costs no further draws. A resample with no spread counts as
    beyond when it lies on that side (t* infinite) or at the mean (undefined), which can only
    raise p. Needs spread, as the interval does (t_interval): without it there is none to invert.

    Why not the sign-flip test (permutation_test): it assumes each difference symmetric under
    H0, and on skewed differences with no mean difference it rejects 6-8% of sets under 200
    questions. Studentizing it (Janssen 1999) changes nothing here: a flip keeps the sum of
    squares, so t is monotone in |sum| and ranks the flips as the sum does. Taking the larger
    of its p and this one only lowers power (bench/simulate.py).
    """
    n, sd = len(diff), _sd(diff)
    if sd == 0:
        raise ValueError("no spread: there is no interval to invert (take permutation_test)")
    t_obs = diff.mean() / (sd / np.sqrt(n))
    tail = float(special.stdtr(n - 1, -abs(t_obs)))
    draws = studentized_draws(diff, means, squares)
    beyond = (draws >= t_obs if t_obs > 0 else draws <= t_obs) | np.isnan(draws)
    return min(1.0, 2 * max(tail, float(beyond.mean())))


def _sd(values: np.ndarray) -> float:
    """Standard deviation (ddof 1) of ``values``; 0 for one value, or one value to _DECIMALS
    (_no_spread): a constant shift with float noise is constant, as the resamples see it."""
    return float(values.std(ddof=1)) if len(values) > 1 and not _no_spread(values) else 0.0


def _no_spread(diff: np.ndarray) -> bool:
    """Whether the differences are one value to _DECIMALS, as bootstrap_moments resamples
    them: B = A + 0.25 on every question leaves float noise of 1e-17 in B - A, a spread that no
    resample has, so t* would be undefined in every resample and p 1 for a certain shift."""
    rounded = as_compared(diff)
    return bool(rounded.min() == rounded.max())


def in_normal_limit(values: np.ndarray, spread: np.ndarray | None = None) -> bool:
    """Whether the mean of ``values`` is taken in its normal limit (t_interval, normal_draws)
    instead of the bootstrap: when at least NORMAL_LIMIT_FROM values differ from the commonest
    one (for B - A, where most questions tie: the questions that changed), or at least
    SYMMETRIC_LIMIT_FROM do and the values' skewness is at most SKEW_BOUND * sqrt(n).

    What makes a mean normal is how many values carry its spread, not n: 100,000 questions of
    which 30 changed are 30 draws. Past 10,000 such values, on every outcome type of
    bench/simulate.py ("large" check: binary, 1% changed, tied, skewed, heavy-tailed with
    skewness 33), the t interval covers as the bootstrap does (within half a point at 11,000;
    both 93-94% on the heavy tail, which only more questions cure), its bounds about as far from the
    bootstrap's as the bootstrap's from themselves under another seed; at 1,000 on the heavy
    tail they lie twice as far. What remains between t and the mean's distribution at 1,000 is
    its skewness g: t misses on one side by about phi(z) (2 z^2 + 1) g / (6 sqrt(n)) more, and
    on the other by as much less (the first Edgeworth term; 0.084 g / sqrt(n) at 95%), so
    with g / sqrt(n) at most SKEW_BOUND each side misses within a tenth of its 2.5%. The
    simulation's symmetric types (binary, tied) took t in every set from 1,100 changed, covering
    as the bootstrap does and lying nearer to it than it lies to itself under another seed; the
    skewed type (g = 2) in 86% of sets at 5,000; the heavy tail in none at 1,100 or 5,000. The exact
    bootstrap costs n per resample: 12 of the 40 s of a report on 1M questions, and most of
    the slices' time on 100,000.

    With --cluster the units are clusters: ``values`` their sums of B - A (those off the
    commonest sum carry the spread) and ``spread`` what the ratio mean's error is a mean of,
    each sum less its size times the mean, whose skewness is checked (bench/README.md, "Many
    clusters").
    """
    n = len(values)
    if n < SYMMETRIC_LIMIT_FROM:
        return False
    codes, _ = pd.factorize(as_compared(values))  # as bootstrap_moments counts values
    changed = n - int(np.bincount(codes).max())
    if changed >= NORMAL_LIMIT_FROM:
        return True
    skew = moment_skewness(values if spread is None else spread)
    return changed >= SYMMETRIC_LIMIT_FROM and abs(skew) <= SKEW_BOUND * n**0.5


def t_interval(values: np.ndarray, confidence: float) -> tuple[float, float] | None:
    """Student's t interval of the mean, mean +- t(n - 1) sd / sqrt(n); None without spread,
    float noise around one value included (_sd): B = A + 0.25 then takes the percentile interval
    and the permutation test whether or not its differences carry 1e-17 of noise."""
    n, sd = len(values), _sd(values)
    if sd == 0:
        return None
    half = special.stdtrit(n - 1, 1 - (1 - confidence) / 2) * sd / np.sqrt(n)
    return float(values.mean() - half), float(values.mean() + half)


def normal_draws(values: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """``n_boot`` draws of the mean's normal limit, N(mean, sd^2 / n), standing for the
    bootstrap means where in_normal_limit holds (the chart of the difference, a gate's one-sided
    p). Seeded and antithetic (each draw mean + e comes with mean - e, and the mean itself when
    ``n_boot`` is odd): so swapping A and B, which negates the mean, negates the set of draws,
    as it mirrors the bootstrap's resamples."""
    n = len(values)
    se = values.std(ddof=1) / np.sqrt(n) if n > 1 else 0.0
    return limit_draws(float(values.mean()), se, n_boot, seed)


def limit_draws(mean: float, se: float, n_boot: int, seed: int) -> np.ndarray:
    """normal_draws of N(``mean``, ``se``^2): with --cluster, se over the clusters."""
    half = np.random.default_rng(seed).standard_normal(n_boot // 2)
    return mean + se * np.concatenate([half, -half, np.zeros(n_boot % 2)])


def small_sample_interval(
    diff: np.ndarray, means: np.ndarray, squares: np.ndarray, confidence: float
) -> tuple[tuple[float, float] | None, str]:
    """On each side the wider of the studentized bootstrap and Student's t interval, and its
    label: STUDENTIZED; STUDENT_T where the studentized one is undefined (2-3 questions, a few
    changed among ties) and t is the interval alone; (None, INTERVAL) without spread.

    The studentized interval corrects skew but, on differences with many ties (half the
    questions unchanged, as nDCG often is), its t* is erratic and it covers only 90% at n = 20,
    where the t interval covers 95.6%; the t interval in turn covers 92% on skewed differences,
    where the studentized one covers 94%. Taking the outer bound of the two on each side keeps
    both (bench/simulate.py).
    """
    t = t_interval(diff, confidence)
    if t is None:
        return None, INTERVAL
    studentized = studentized_interval(diff, means, squares, confidence)
    if studentized is None:
        return t, STUDENT_T
    return wider(t, studentized), STUDENTIZED


def t_test(values: np.ndarray) -> float:
    """Two-sided Student's t test of a zero mean, p = 2 P(T(n - 1) >= |t|): it inverts
    t_interval, so it is the test where that interval stands alone (STUDENT_T). Needs spread."""
    n = len(values)
    t = values.mean() / (_sd(values) / np.sqrt(n))
    return float(2 * special.stdtr(n - 1, -abs(t)))


def two_sided_z(confidence: float) -> float:
    """The normal quantile that bounds a two-sided interval at ``confidence`` (1.96 at 95%)."""
    return float(special.ndtri(1 - (1 - confidence) / 2))


def wider(first: tuple[float, float], second: tuple[float, float]) -> tuple[float, float]:
    """On each side the outer bound of two intervals: each keeps the coverage the other lacks."""
    return min(first[0], second[0]), max(first[1], second[1])


def score_interval(fixed: float, broken: float, n: int, confidence: float) -> tuple[float, float]:
    """Tango's score interval (1998, Statistics in Medicine 17(8)) for the difference of two
    paired proportions, (fixed - broken) / n: the differences its score test does not reject.

    The bootstrap cannot see what it never drew: with no question changed every resample is
    no change, and the interval [0, 0] passed an equivalence rule on 2 questions; with 10 of 10
    fixed it read [+1, +1] and covered 38% (n = 10). The score interval is wide where little
    changed (0 of 20: +-0.161, z^2 / (n + z^2)) and near the bootstrap's where much did;
    Fagerland, Lydersen and Laake (2013, Statistics in Medicine 32(20)) recommend it among the
    intervals for paired proportions. Each bound is found by bisection: the statistic falls
    as the difference rises."""
    z = two_sided_z(confidence)
    estimate = (fixed - broken) / n

    def bound(low: float, high: float, target: float) -> float:
        for _ in range(60):  # 2^-60 of [-1, 1]: far below the 12 decimals differences keep
            mid = (low + high) / 2
            low, high = (mid, high) if tango_score(fixed, broken, n, mid) > target else (low, mid)
        return (low + high) / 2

    return bound(-1.0, estimate, z), bound(estimate, 1.0, -z)


def tango_score(fixed: float, broken: float, n: int, delta: float) -> float:
    """Tango's score statistic (1998) of the paired difference delta in [-1, 1], standard normal
    when delta is the true difference; it falls as delta rises (score_interval inverts it)."""
    # the maximum likelihood estimate of P(broken) given the difference delta (Tango eq. 3)
    b = -fixed - broken + (2 * n - fixed + broken) * delta
    c = -broken * delta * (1 - delta)
    q = (-b + np.sqrt(max(b * b - 8 * n * c, 0.0))) / (4 * n)
    variance = n * (2 * q + delta * (1 - delta))
    if variance <= 0:  # at a bound of [-1, 1]: every question would have changed one way
        return np.inf if delta < (fixed - broken) / n else -np.inf
    return float((fixed - broken - n * delta) / np.sqrt(variance))


def wilson_interval(successes: float, n: int, confidence: float) -> tuple[float, float]:
    """Wilson's score interval (1927) for one proportion, successes / n: what score_interval is
    for a run's own share of 0/1 outcomes, where nothing can be broken (3 of 3 correct: 0.438
    to 1, where the bootstrap read [1, 1])."""
    z = two_sided_z(confidence)
    share = successes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(centre - half), float(centre + half)


def no_spread_interval(
    value: float, units: int, span: tuple[float, float], confidence: float
) -> tuple[float, float]:
    """The interval of a mean of ``units`` questions (clusters) whose differences are all
    ``value``, for a difference that can take ``span``: what the sample cannot rule out is a
    share of the questions differing from ``value`` that it happened not to draw, at most
    Wilson's upper bound for none seen in ``units``, z^2 / (units + z^2), each of them as far as
    the range allows. The bootstrap of one value is that value: faithfulness +0.05 on 4
    questions read [+0.05, +0.05] and passed 'faithfulness within 0.06'; this reads [-0.46,
    +0.52]. A 0/1 outcome with none changed gets the same from Tango's interval (+-0.161 on 20
    questions); bench/simulate_no_spread.py measures its coverage."""
    low, high = span
    share = _unseen_share(two_sided_z(confidence), units)
    return value - share * (value - low), value + share * (high - value)


def few_changes(
    rounded: np.ndarray, span: tuple[float, float], own: bool
) -> tuple[bool, float | None, int]:
    """Whether few_changed_interval joins the interval, the value it counts changes from and
    how many values lie off it.

    B - A: from the value all but 1 to FEW_CHANGED - 1 questions share, where it is not 0 (26
    of 30 questions 0.3 worse, 4 less so or unchanged): what the bootstrap cannot resample is a
    few values off one, whichever it is; else, or where that value is an end of ``span`` and
    the rule from 0 holds too (4 of 5 questions from 0 to 1 read as the 0/1 outcome they are),
    from 0, where 1 to FEW_CHANGED - 1 questions changed among ties, or under ONE_WAY_BELOW
    with fewer than ONE_WAY_RARER of them the rarer way. The shared value comes first: counted
    from 0, 13 questions at -0.3 beside one unchanged read "B worse" where the same 13 beside
    one at -0.1 read "no evidence". A run's own values: off the bound most of them sit at
    (None: Wilson's interval), so that a run near 1 mirrors one near 0; else from a value that
    all but 1 to FEW_CHANGED - 1 share (26 answers of faithfulness 0.5)."""
    n = len(rounded)
    values, counts = np.unique(rounded, return_counts=True)
    top = int(counts.argmax())
    off = n - int(counts[top])
    common = float(values[top])
    shared = off < min(FEW_CHANGED, counts[top]) and common != 0  # by most, all but 1 to 4
    if own:
        changed = min(int((rounded != bound).sum()) for bound in span)
        few, centre = 0 < changed < min(n, FEW_CHANGED), None
    else:
        changed = int((rounded != 0).sum())
        rarer = min(int((rounded > 0).sum()), int((rounded < 0).sum()))
        one_way = rarer < ONE_WAY_RARER and changed < ONE_WAY_BELOW
        few, centre = 0 < changed < n and (changed < FEW_CHANGED or one_way), 0.0
    if shared and not (few and common in span):
        return True, common, off
    return few, centre, changed


def few_changed_interval(
    values: np.ndarray,
    span: tuple[float, float],
    confidence: float,
    own: bool,
    centre: float | None,
) -> tuple[tuple[float, float], tuple[float, float, int, float, float] | None]:
    """The score interval that bounds a continuous B - A of known ``span`` where fewer than
    FEW_CHANGED questions changed, and the score side a gate inverts (None for a run's own
    mean, ``own``, whose ``values`` are B's, in ``span``).

    The bootstrap of one to four changed values among ties sees only them: a gain on 5% of 50
    questions (one or two in most sets) was missed by 9 to 11% of 95% intervals, since nothing
    in the set says how large the unseen changes could be. The range does. Each change, as a
    share of the range (gains and losses summed apart: B - A of 0.3 on [-1, 1] is 0.3 of a
    gain), is at most a whole one, so its variance is at most that of a 0/1 outcome with the
    same shares; Tango's interval of those fractional counts (Wilson's of a run's own values)
    is then at least as wide as the changes' own, and holds where the bootstrap has too few
    values to measure spread. It is far wider than the bootstrap once many small changes
    carry the spread, which is why it joins only under FEW_CHANGED changed questions among
    ties (a run's own values: off the bound most of them sit at, so that a run near 1 mirrors
    one near 0), or under ONE_WAY_BELOW of them with fewer than ONE_WAY_RARER the rarer way:
    the changes of a metric that rarely gains much and often loses a little (a reranker that
    now and then lifts the evidence to the top) average 0 while most sets of 50 questions draw
    none of the gains, and the bootstrap of the small losses alone read "B worse" in 17% of
    such sets of 50 and 8% of 100, 0% and 2.2% with the score bound, while changes both ways
    keep the bootstrap's power (bench/simulate_one_way.py). The test then takes the largest p
    of its own, the exact sign-flip test's (at least 0.125 on 4 changed questions, as
    McNemar's on a 0/1 outcome: a hit@k and a recall@k of the same 0/1 values read alike) and
    Tango's score test at 0, which the interval inverts. bench/simulate_no_spread.py measures
    the interval.

    ``centre``: the value the changes are counted from, 0 unless fewer than FEW_CHANGED
    questions lie off another one (few_changes): each then moves by at most the larger of
    ``span``'s ends less ``centre``, the scale of its share; None for a run's own values off a
    bound (Wilson's interval). A run's own values around a value inside the range take Tango's
    interval around it, as B - A does. Under FEW_CHANGED changes the
    studentized bootstrap is left out beside it (Student's t and this interval): its t* of a
    resample that draws one or two of those values is the noise of a near-zero spread, and 26
    of 30 questions at -0.3 with 4 others above read [-0.304, +1.000].
    """
    low, high = span
    n = len(values)
    if centre is None:
        share = float(((values - low) / (high - low)).sum())
        bottom, top = wilson_interval(share, n, confidence)
        return (low + bottom * (high - low), low + top * (high - low)), None
    scale = max(high - centre, centre - low)
    moves = values - centre
    gains = float(np.clip(moves, 0.0, None).sum()) / scale
    losses = float(np.clip(-moves, 0.0, None).sum()) / scale
    bottom, top = score_interval(gains, losses, n, confidence)
    side = None if own else (gains, losses, n, scale, centre)
    return (centre + bottom * scale, centre + top * scale), side


def _unseen_share(z: float, units: int) -> float:
    """Wilson's upper bound at normal quantile ``z`` on a share seen in none of ``units``."""
    return z * z / (units + z * z)


def _no_spread_tail(constant: tuple[float, int, float, float], value: float, upper: bool) -> float:
    """The tail alpha at which no_spread_interval's ``upper`` bound (else its lower) lies at
    ``value``: the share of questions that would have to differ to reach it, solved for z in
    z^2 / (units + z^2); 1 where the bound cannot pass ``value``, 1/2 at the value itself."""
    centre, units, low, high = constant
    room, gap = (high - centre, value - centre) if upper else (centre - low, centre - value)
    if gap < 0:
        return 1.0
    if gap == 0:
        return 0.5
    if gap >= room:
        return 0.0
    share = gap / room
    return float(special.ndtr(-np.sqrt(units * share / (1 - share))))


def resampled_detectable(
    diff: np.ndarray, means: np.ndarray, squares: np.ndarray, critical: tuple[float, float]
) -> float | None:
    """The true difference X, either way, that an interval ``critical`` standard errors wide
    on each side excludes from zero in POWER of fresh sets, by resampling this one.

    A fresh set with true difference +-X is the set shifted, so a resample with mean shift
    m* = mean* - mean and spread s* is found when X > critical s* / sqrt(n) -+ m*: the
    resampled margin keeps the skew (on skewed differences s* moves with m*, so a shift the
    way of the long tail is found more often) and the heavy tails (ties make s* vary more)
    that the normal formula leaves out. X itself is stated from an observed spread, so each
    margin is divided by the spread of another resample (its neighbour) and X = sd times the
    POWER quantile of margin / spread over both signs. Resampled shifts are widened by
    sqrt(n / (n - 1)), the bootstrap's narrowness (as in expanded_confidence). ``critical``:
    the interval's reach below and above the mean, in standard errors; ``means``, ``squares``:
    its resamples, so this costs no further draws. None when the differences have no spread
    or too many resamples have none (a few non-zero differences among ties).
    """
    n, sd = len(diff), _sd(diff)
    if sd == 0:
        return None
    spread = resample_spreads(means, squares, n)
    shift = (means - diff.mean()) * np.sqrt(n / (n - 1))
    low, high = critical
    reach = spread / np.sqrt(n)
    margin = np.concatenate([low * reach - shift, high * reach + shift])
    pilot = np.tile(np.roll(spread, 1), 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(pilot > 0, margin / pilot, np.inf)
        found = np.quantile(ratio, POWER)
    return float(sd * found) if np.isfinite(found) else None


def cluster_means(sums: np.ndarray, sizes: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """``n_boot`` means of B - A with whole clusters resampled (the cluster bootstrap).

    Questions about one document or conversation are not independent; resampling clusters
    keeps that dependence (Field & Welsh, 2007; Miller 2024, "Adding Error Bars to Evals").
    ``sums``, ``sizes``: per cluster, the sum of B - A and the number of questions. A resample
    draws as many clusters as there are, with replacement; its mean is sum / questions drawn.
    """
    rng = np.random.default_rng(seed)
    out = []
    for start in range(0, n_boot, _CHUNK):
        picked = rng.integers(0, len(sums), size=(min(_CHUNK, n_boot - start), len(sums)))
        out.append(sums[picked].sum(axis=1) / sizes[picked].sum(axis=1))
    return np.concatenate(out)


def cluster_standard_error(sums: np.ndarray, sizes: np.ndarray, deviations: np.ndarray) -> float:
    """Standard error of the ratio mean sum S_g / sum n_g over G >= 2 clusters (per cluster:
    S_g the sum of B - A, n_g its questions, ``deviations`` the sum of squares of B - A about
    the cluster's mean: cluster_deviations), the larger of two estimates, each unbiased under
    one model of how clusters vary:

    - independent questions: the CR2 form (Bell & McCaffrey 2002), sum r_g^2 / (1 - n_g / n)
      / n^2 with r_g = S_g - n_g mean; the ratio estimator's usual G / (G - 1) sum r_g^2 / n^2
      (cluster_covariance; Cochran 1977, ch. 6) falls short where sizes differ (two clusters of
      3 and 17 questions: half the variance);
    - a shift of spread tau^2 shared by a cluster's questions, each with its own of sigma^2:
      tau^2 sum (n_g / n)^2 + sigma^2 / n, with the one-way analysis of variance's estimates
      for unequal sizes (Searle, Casella & McCulloch 1992, ch. 3): sigma^2 the mean square
      within clusters, tau^2 the mean square between them (cluster means weighted by size) less
      it, over n_0 = (n - sum n_g^2 / n) / (G - 1). CR2 falls short here on unequal sizes (3
      and 17: a third of the variance).

    The second took the plain variance of the cluster means before, in which a cluster of one
    question brings its whole variance: 80 independent questions, 20 without a document beside
    6 documents of 10, read a design effect of 6.8. At 2 clusters, one degree of freedom
    between them, that variance is kept: a moment estimate that took the noise out covered
    91-92% there where a shift is shared (bench/README.md, Few clusters). Where every cluster
    is one question both forms are s^2 / n.
    """
    n, groups = sizes.sum(), len(sizes)
    share = sizes / n
    residual = sums - sizes * sums.sum() / n
    independent = float((residual * residual / (1 - share)).sum()) / n**2
    weight, means = float((share * share).sum()), sums / sizes
    if groups > 2 and n > groups:
        within = float(deviations.sum()) / (n - groups)
        between = float((sizes * (means - sums.sum() / n) ** 2).sum()) / (groups - 1)
        per = (n - float((sizes * sizes).sum()) / n) / (groups - 1)
        shared = weight * (between - within) / per + within / n
    else:
        shared = weight * float(np.var(means, ddof=1))
    return float(np.sqrt(max(independent, shared)))


def cluster_deviations(
    diff: np.ndarray, codes: np.ndarray, sums: np.ndarray, sizes: np.ndarray
) -> np.ndarray:
    """Per cluster (``codes``: 0 .. G - 1 per question), the sum of squares of B - A about the
    cluster's mean, taken about it: the sum of squares less S_g^2 / n_g loses the spread to
    float cancellation where B - A is far from zero beside it (2.3% of the standard error at
    1e7 times the spread, 28% at 1e8)."""
    off = diff - (sums / sizes)[codes]
    return np.bincount(codes, weights=off * off, minlength=len(sums))


def cluster_degrees(sizes: np.ndarray) -> float:
    """Degrees of freedom of Student's t over clusters of ``sizes`` questions: Satterthwaite's
    for the CR2 variance of independent questions (Bell & McCaffrey 2002; Imbens & Kolesar
    2016), tr(M)^2 / tr(M^2) for the quadratic form M the estimate is of the differences, capped
    at G - 1 and at least 1. Equal sizes give G - 1; a few large clusters among many of one
    question give about as few as the large ones, whose residuals the variance mostly rests on
    (6 documents of 10 and 20 single questions: 9.3, not 25). At 3 to 8 clusters, a quarter of
    10 questions and the rest of one, a random-effects estimate with G - 1 covered 81.6-94.5% in
    13 of 16 rows; the report's, 95.9-99.5% (bench/README.md, Few clusters).

    M = sum_g w_g u_g u_g^T, u_g the cluster's indicator less n_g / n of every question's,
    w_g = 1 / (1 - n_g / n) (the 1 / n^2 cancels): u_g . u_h = n_g [g = h] - n_g n_h / n, so
    both traces take O(G)."""
    groups = len(sizes)
    if groups <= 2:
        return 1.0
    sizes = sizes.astype(float)
    n = sizes.sum()
    weight = 1 / (1 - sizes / n)
    own = sizes - sizes * sizes / n
    trace = float((weight * own).sum())
    square = float((weight * weight * (own * own - sizes**4 / n**2)).sum())
    square += float((weight * sizes * sizes).sum()) ** 2 / n**2
    return float(min(groups - 1, max(1.0, trace * trace / square)))


def t_bounds(side: tuple[float, float, float], confidence: float) -> tuple[float, float]:
    """Student's t interval estimate +- t(df) se of a t side (IntervalSides.t)."""
    mean, se, degrees = side
    half = special.stdtrit(degrees, 1 - (1 - confidence) / 2) * se
    return float(mean - half), float(mean + half)


def cluster_interval(
    boot: tuple[float, float], side: tuple[float, float, float] | None, confidence: float
) -> tuple[float, float]:
    """On each side the wider of the cluster bootstrap's expanded percentile interval
    (``boot``, over cluster_means), which keeps skew when clusters are many, and Student's t
    over the clusters (``side``: cluster_sides' t, mean +- t(df) se of cluster_standard_error
    and cluster_degrees; None under 2 clusters or without spread between them), which holds the
    level when they are few: with G clusters the bootstrap cannot reach past the smallest and
    largest cluster means, so at 2-5 clusters it covered 46-91% (null data, 10 questions a
    cluster), whatever its level; t widens as the clusters fall (12.7 se at G = 2)."""
    return boot if side is None else wider(boot, t_bounds(side, confidence))


def cluster_covariance(differences: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Cluster-robust (ratio-estimator) covariance of the column means of the n x m
    ``differences``, ``codes`` the cluster (0 .. G - 1) of each row:
    G / (G - 1) sum_g r_g r_g^T / n^2, r_g = S_g - n_g mean, S_g the cluster's column sums.
    With one question a cluster it is the sample covariance / n."""
    n, groups = len(differences), codes.max() + 1
    sums = np.stack([np.bincount(codes, weights=d, minlength=groups) for d in differences.T], 1)
    residual = sums - np.bincount(codes, minlength=groups)[:, None] * differences.mean(axis=0)
    return groups / (groups - 1) * residual.T @ residual / n**2


def design_effect(diff: np.ndarray, codes: np.ndarray) -> float | None:
    """The variance of the mean the clustered interval uses (cluster_standard_error squared)
    over its variance with independent questions, the naive s^2 / n (Kish, 1965): the number
    the report states beside that interval. 1 with one question a cluster; 0 when the clusters'
    means are equal, which the sums reach only to float noise (5e-31 for clusters of 0.1, 0.2,
    0.3 and 0.3, 0.2, 0.1); None when B - A is one value, 0 over 0 (it read 1.00: "no
    clustering", which no difference can show)."""
    n, sd = len(diff), _sd(diff)
    sums, sizes = np.bincount(codes, weights=diff), np.bincount(codes)
    if sd == 0:
        return None
    if len(sums) < 2:
        return 1.0
    if _no_spread(sums / sizes):
        return 0.0
    deviations = cluster_deviations(diff, codes, sums, sizes)
    return float(cluster_standard_error(sums, sizes, deviations) ** 2 / (sd * sd / n))


def compare_metric(
    metric: str,
    a: np.ndarray,
    b: np.ndarray,
    *,
    binary: bool,
    n_boot: int,
    confidence: float,
    seed: int,
    clusters: np.ndarray | None = None,
    threads: int | None = None,
    span: tuple[float, float] | None = None,
    own: bool = False,
) -> tuple[MetricComparison, np.ndarray]:
    """compare_with_sides without the sides: what every table and chart reads."""
    comparison, means, _ = compare_with_sides(
        metric,
        a,
        b,
        binary=binary,
        n_boot=n_boot,
        confidence=confidence,
        seed=seed,
        clusters=clusters,
        threads=threads,
        span=span,
        own=own,
    )
    return comparison, means


def own_mean(
    metric: str,
    values: np.ndarray,
    *,
    binary: bool,
    n_boot: int,
    confidence: float,
    seed: int,
    span: tuple[float, float] | None,
    clusters: np.ndarray | None = None,
) -> MetricComparison:
    """A run's own mean with the interval a candidate rule reads of it (B - 0), for the stage
    table and a study's run chart: on a 0/1 outcome Wilson's score interval widens the
    bootstrap's, so 3 of 3 correct reads [0.44, 1], not [1, 1]. ``span``: the range the mean
    can take (a share's [0, 1]), not its difference's; ``clusters``: --cluster's label of each
    value, whose clusters are resampled whole, as the rule's interval resamples them."""
    own, _ = compare_metric(
        metric,
        np.zeros_like(values),
        values,
        binary=binary,
        n_boot=n_boot,
        confidence=confidence,
        seed=seed,
        clusters=clusters,
        span=span,
        own=True,
    )
    return own


def compare_with_sides(
    metric: str,
    a: np.ndarray,
    b: np.ndarray,
    *,
    binary: bool,
    n_boot: int,
    confidence: float,
    seed: int,
    clusters: np.ndarray | None = None,
    threads: int | None = None,
    span: tuple[float, float] | None = None,
    own: bool = False,
) -> tuple[MetricComparison, np.ndarray, IntervalSides]:
    """Compare paired scores; questions with a missing score in either run are left out.

    The interval is the studentized bootstrap interval for continuous metrics on fewer than
    STUDENTIZED_BELOW questions (when defined); once NORMAL_LIMIT_FROM questions are off the
    commonest difference, or SYMMETRIC_LIMIT_FROM of nearly symmetric differences
    (in_normal_limit), it is Student's t interval, the bootstrap's limit,
    and the means returned are draws of that limit; else the expanded percentile interval, which
    covers 95% there; ``binary`` outcomes (0/1) are tested with McNemar's exact test on fixed vs
    broken, others with the bootstrap-t test that inverts the studentized interval when it is
    used, else the permutation test. With ``clusters`` (a label per question) the
    interval is the wider on each side of the cluster bootstrap and Student's t over clusters
    (cluster_interval; t alone where in_normal_limit holds over the clusters), for a binary
    B - A also of Tango's score interval (Wilson's for a
    run's own share, with ``own``; both collapse to
    [0, 0] where no question changed: 10 questions in 2 documents, 5% fixed, failed a
    'correct[slice] >= 0.05' rule in 62% of sets, bench/simulate_slice_rules.py), and the
    permutation test flips whole clusters (H0: A and B
    exchangeable within each cluster), whatever the outcome, since McNemar's test assumes
    independent questions; counts stay per question. The interval is then cut to ``span``, the
    range the difference can take (clip_interval): by default a built-in metric's, from the
    registry's bounds; a cost, a count or a score of the logs is not cut.

    Where the studentized interval is undefined (small_sample_interval), the interval is
    Student's t alone and the test Student's t test, which inverts it.

    ``threads``: how many the bootstrap draws on (default: one per core). ``own``: ``a`` is all
    zeros and the interval is of B's own mean (a binary outcome's score interval is then
    Wilson's for one proportion, not Tango's for a paired difference).

    Returns the comparison, the bootstrap means of B - A (for the distribution chart) and the
    sides of its interval (for a bound at a gate's margin, bound_p).
    """
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    diff = b - a
    n = len(diff)
    test = MCNEMAR if binary else PERMUTATION
    if n == 0:
        nan = float("nan")
        empty = MetricComparison(
            metric, 0, nan, nan, nan, nan, nan, 0, 0, 0, 1.0, None, None, test, INTERVAL, nan
        )
        return empty, np.empty(0), IntervalSides()
    if span is None and not own:  # a run's own mean lies in the metric's range, not this
        span = difference_range(metric)
    rounded = as_compared(diff)
    wins, losses = int((rounded > 0).sum()), int((rounded < 0).sum())
    groups: int | None = None
    effect: float | None = None
    cluster_se: float | None = None
    cluster_df: float | None = None
    detect: float | None = None
    few = False  # continuous, of known range, under FEW_CHANGED changed: few_changed_interval
    centre: float | None = 0.0  # the value few_changed_interval counts changes from
    changed = 0  # ... and how many lie off it
    if clusters is not None:
        codes = pd.factorize(clusters[keep])[0]
        sums, sizes = np.bincount(codes, weights=diff), np.bincount(codes)
        deviations = cluster_deviations(diff, codes, sums, sizes)
        groups = len(sums)  # one cluster has no spread between clusters: no design effect
        sides = cluster_sides(sums, sizes, deviations)
        test, p = CLUSTER_TEST, permutation_test(sums, seed)
        # Student's t over the clusters alone once as many of them changed as questions need
        # for t (in_normal_limit over the clusters): the cluster bootstrap draws every cluster
        # in every resample, 0.4 s a call at 20,000 documents, and a report makes dozens
        t_side, level = sides.t, expanded_confidence(confidence, groups)
        if t_side is not None and in_normal_limit(sums, sums - sizes * diff.mean()):
            low, high = t_bounds(t_side, confidence)
            means, boot = limit_draws(*t_side[:2], n_boot, seed), (np.nan, np.nan)
            method, sides = CLUSTERED_NORMAL, replace(sides, percentile=None)
        else:
            means = cluster_means(sums, sizes, n_boot, seed)
            boot = percentile_interval(means, level)
            low, high = cluster_interval(boot, t_side, confidence)
            method = CLUSTERED
        if binary and own:  # 6 of 6 correct in 3 documents read [1, 1], as without clusters
            low, high = wider((low, high), wilson_interval(wins, n, confidence))
            method = _scored(method, CLUSTERED_SCORED_OWN, "Wilson's")
        elif binary:  # as without clusters: few changes leave no spread to resample
            low, high = wider((low, high), score_interval(wins, losses, n, confidence))
            method = _scored(method, CLUSTERED_SCORED, "Tango's")
            sides = replace(sides, score=(wins, losses, n, 1.0, 0.0))
        # clusters whose means are one value leave the units nothing to resample, whatever the
        # questions' spread: Tango's interval of 2 documents' 24 questions, 4 fixed in each,
        # read [+0.149, +0.533] where the test over clusters gives p 0.5
        reach = span if span is not None else (-1.0, 1.0) if binary else None
        if not own and reach is not None and _no_spread(sums / sizes):
            centre = float(sums.sum() / sizes.sum())
            low, high = wider((low, high), no_spread_interval(centre, groups, reach, confidence))
            method, sides = CLUSTERED_NO_SPREAD, replace(sides, constant=(centre, groups, *reach))
        elif not binary and span is not None and not _no_spread(diff):
            # as without clusters: 1 to 4 questions off a difference every other one shares
            # leave the clusters' spread to noise (26 of 30 at -0.3 and 4 above, one question a
            # cluster, read [-0.304, -0.265] with nothing for what so few could hide)
            few, centre, changed = few_changes(rounded, span, own)
        effect = design_effect(diff, codes) if groups > 1 else None
        if groups > 1:  # cluster means equal to _DECIMALS have no spread, as _sd
            spread = not _no_spread(sums / sizes)  # t_side: cluster_standard_error, when > 0
            cluster_se = t_side[1] if spread and t_side is not None else 0.0
            cluster_df = cluster_degrees(sizes)
    else:
        # by the changed questions, not all: 5 to 8 changed among 1,000 to 100,000 ties took
        # the percentile interval, which missed a true 0 in 6.5% to 9% of sets (3.1% to 5% a
        # side; bench/simulate_few_changed.py), as a percentile interval of 5 questions does
        studentize = not binary and wins + losses < STUDENTIZED_BELOW
        if not binary and span is not None and not _no_spread(diff):
            few, centre, changed = few_changes(rounded, span, own)
            # t* over 1 to 4 values off the rest is the resamples' noise: 26 of 30 at -0.3, 4
            # above, read [-0.304, +1.000]; the score bound holds where it fails
            studentize = studentize and not (few and changed < FEW_CHANGED)
        interval, method = None, INTERVAL
        if not studentize and in_normal_limit(diff):
            means, squares = normal_draws(diff, n_boot, seed), np.empty(0)
            interval, method = t_interval(diff, confidence), NORMAL_LIMIT
        else:
            means, squares = bootstrap_moments(
                diff, n_boot, seed, squares=studentize, threads=threads
            )
            if studentize:
                interval, method = small_sample_interval(diff, means, squares, confidence)
            elif few:
                interval, method = t_interval(diff, confidence), STUDENT_T
        level = confidence if method == STUDENTIZED else expanded_confidence(confidence, n)
        boot = percentile_interval(means, level) if interval is None else (np.nan, np.nan)
        low, high = interval or boot
        sides = _question_sides(diff, means, squares, method)
        if not binary and span is not None and _no_spread(diff):
            centre = float(diff.mean())
            low, high = wider((low, high), no_spread_interval(centre, n, span, confidence))
            method, sides = NO_SPREAD, replace(sides, constant=(centre, n, *span))
        if binary and method == INTERVAL:
            score = (
                wilson_interval(wins, n, confidence)
                if own
                else score_interval(wins, losses, n, confidence)
            )
            low, high = wider((low, high), score)
            method = SCORED_OWN if own else SCORED
            sides = sides if own else replace(sides, score=(wins, losses, n, 1.0, 0.0))
        if method == STUDENTIZED or method == STUDENT_T and len(squares):
            se = diff.std(ddof=1) / np.sqrt(n)
            critical = ((diff.mean() - low) / se, (high - diff.mean()) / se)
            detect = resampled_detectable(diff, means, squares, critical)
        if binary:
            p = sign_test(wins, losses)
        elif method == STUDENTIZED:
            test, p = BOOTSTRAP_T, bootstrap_t_test(diff, means, squares)
        elif method == STUDENT_T:
            test, p = T_TEST, t_test(diff)
        else:
            p = permutation_test(diff, seed)
    # a bound the resamples set (the studentized side's, at the stated level, counted as one)
    from_resamples = method == STUDENTIZED or low == boot[0] or high == boot[1]
    if few and span is not None:
        (bottom, top), side = few_changed_interval(diff, span, confidence, own, centre)
        from_resamples = from_resamples and (low <= bottom or high >= top)
        low, high = wider((low, high), (bottom, top))
        if clusters is not None:
            method = CLUSTERED_FEW_CHANGED_OWN if centre is None else CLUSTERED_FEW_CHANGED
        else:
            method = FEW_CHANGED_SCORED_OWN if centre is None else FEW_CHANGED_SCORED
        if side is not None:  # the test: the largest p of its own, sign flips' and the score's
            sides = replace(sides, score=side)
            gained, lost, units, scale, origin = side
            at_zero = float(np.clip(-origin / scale, -1.0, 1.0))
            score_p = float(2 * special.ndtr(-abs(tango_score(gained, lost, units, at_zero))))
            if test not in (PERMUTATION, CLUSTER_TEST):  # whole clusters' flips stay the test
                p, test = max(p, permutation_test(diff, seed)), f"{test}, {PERMUTATION}"
            test, p = f"{test} and {BOUNDED_SCORE}", max(p, score_p)
    resampled = level if from_resamples and _sd(diff) > 0 else None
    if span is not None:
        low, high = clip_interval(low, high, span)
    low, high = off_noise(low, diff), off_noise(high, diff)
    if (groups or n) < 2:  # one question (or cluster) has no spread to measure: no interval
        low = high = float("nan")
        resampled, method = None, NO_INTERVAL
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
        p=p,
        fixed=int(((a == 0) & (b == 1)).sum()) if binary else None,
        broken=int(((a == 1) & (b == 0)).sum()) if binary else None,
        test=test,
        interval=method,
        sd=_sd(diff),
        clusters=groups,
        design_effect=effect,
        cluster_se=cluster_se,
        cluster_df=cluster_df,
        detectable=detect,
        commonest=centre if few and centre else None,
        off_commonest=changed if few and centre else None,
        resampled=resampled,
        skewness=_skewness(diff, not (binary or groups or few)),
    )
    return comparison, means, sides


def _skewness(diff: np.ndarray, tailed: bool) -> float | None:
    """The skewness of B - A (of B's own values for a run's own mean) where a tail the questions
    did not draw could move its mean (``tailed``: not a 0/1 outcome, whose three values show
    both sides, nor clusters, whose means are the unit, nor few changes of a known range, whose
    interval reaches to the range's bound); None then, and without spread. A known range does
    not bound the miss: faithfulness lies in [0, 1], but with B - A = 0.05 (Exp(1) - 1), mean 0
    and skewness 2, a slice of 10 questions that drew no large gain read "B regresses" at
    Holm's p < 0.001 over 20 slices, where the exact p is 0.47."""
    return skewness(diff) if tailed and _sd(diff) else None


def _scored(method: str, resampled: str, score: str) -> str:
    """The label of a clustered 0/1 outcome's interval: ``resampled`` where the clusters were
    resampled, else t over them (CLUSTERED_NORMAL) with the ``score`` interval beside it."""
    if method == CLUSTERED_NORMAL:
        return f"{CLUSTERED_NORMAL} and {score} score interval, the wider on each side"
    return resampled


def cluster_sides(sums: np.ndarray, sizes: np.ndarray, deviations: np.ndarray) -> IntervalSides:
    """The sides of cluster_interval: the expanded percentile over the clusters and, with 2
    clusters or more and spread between them, Student's t over them."""
    groups = len(sums)
    se = cluster_standard_error(sums, sizes, deviations) if groups > 1 else 0.0
    t = (float(sums.sum() / sizes.sum()), se, cluster_degrees(sizes)) if se > 0 else None
    return IntervalSides(percentile=groups, t=t)


def _question_sides(
    diff: np.ndarray, means: np.ndarray, squares: np.ndarray, method: str
) -> IntervalSides:
    """The sides of the interval ``method`` names over independent questions, before the score
    interval of a binary outcome joins them."""
    n = len(diff)
    if method == INTERVAL:
        return IntervalSides(percentile=n)
    t = (float(diff.mean()), _sd(diff) / np.sqrt(n), n - 1)
    if method == STUDENTIZED:
        return IntervalSides(t=t, pivots=studentized_draws(diff, means, squares))
    return IntervalSides(t=t)  # STUDENT_T, NORMAL_LIMIT


def bound_p(
    sides: IntervalSides, means: np.ndarray, value: float, upper: bool, scale: float = 1.0
) -> float:
    """One-sided p-value that the interval's ``upper`` bound lies below ``value`` (the lower
    bound above it): the smallest tail alpha at which the bound of the interval at confidence
    1 - 2 alpha lies past ``value``. Each side is inverted on its own, and the interval is the
    wider of its sides, so p is the largest of theirs: where any side still reaches ``value``,
    so does the interval. ``means``: the bootstrap means the percentile side was read from. A
    mean or estimate within float noise of ``value`` (noise_at, on ``scale``, the size of the
    values) is at it: every mean of a constant difference of 0.05 is 0.05000000000000001, which
    read as wholly past a margin of 0.05.

    The percentile side: the share of means at or past ``value``, taken back through
    expanded_confidence's widening; the t side: Student's tail of (estimate - value) / se; the
    studentized side: the share of bootstrap-t draws at or past that statistic (an undefined
    draw counts as past, as in bootstrap_t_test); the score side: the normal tail of Tango's
    statistic at ``value``; the side of no spread: _no_spread_tail. A share is that of the
    interval's quantiles, without the +1 of a Monte-Carlo test (Davison & Hinkley 1997, eq.
    4.11): widened for few clusters, the +1 of 5,000 resamples alone held p above 0.025 under 5
    clusters, where the t side beside it reads the bound. With no side (no interval) there is
    no evidence: p 1.
    """
    tails: list[float] = []
    if sides.percentile is not None:
        means = np.where(np.abs(means - value) < noise_at(value, scale), value, means)
        past = means >= value if upper else means <= value
        tails.append(_expanded_tail(float(past.mean()), sides.percentile))
    if sides.t is not None:
        estimate, se, df = sides.t
        statistic = (at_target(estimate, value, scale) - value) / se
        tails.append(float(special.stdtr(df, statistic if upper else -statistic)))
        if len(sides.pivots):
            draws = sides.pivots
            past = (draws <= statistic if upper else draws >= statistic) | np.isnan(draws)
            tails.append(float(past.mean()))
    if sides.score is not None:
        fixed, broken, n, scale, centre = sides.score
        z = tango_score(fixed, broken, n, float(np.clip((value - centre) / scale, -1.0, 1.0)))
        tails.append(float(special.ndtr(z if upper else -z)))
    if sides.constant is not None:
        centre, units, low, high = sides.constant
        at = (at_target(centre, value, scale), units, low, high)
        tails.append(_no_spread_tail(at, value, upper))
    return max(tails, default=1.0)


def bound_p_floor(sides: IntervalSides, means: np.ndarray) -> float:
    """The smallest p above 0 that bound_p reads of the resampled sides (one resample past the
    value): a p of 0 is one below it, not a certainty."""
    floors = [1 / len(sides.pivots)] if len(sides.pivots) else []
    if sides.percentile is not None and len(means):
        floors.append(_expanded_tail(1 / len(means), sides.percentile))
    return max(floors, default=0.0)


def _expanded_tail(tail: float, n: int) -> float:
    """The tail alpha whose expanded percentile level (expanded_confidence) reads the means'
    quantile at ``tail``: Phi(sqrt(n / (n - 1)) t(n - 1, alpha)) = tail, solved for alpha."""
    if n < 2:
        return tail
    return float(special.stdtr(n - 1, special.ndtri(tail) * np.sqrt((n - 1) / n)))


def significance(confidence: float) -> float:
    """1 - ``confidence`` without its float error (1 - 0.95 is 0.050000000000000044), so that a
    p of exactly 0.05 does not reject at 95%, as an interval bound of exactly 0 does not
    exclude zero."""
    return round(1 - confidence, 12)


def off_noise(value: float, diff: np.ndarray) -> float:
    """An interval bound, 0 where it is float noise for 0 (1.4e-17 from a quantile that falls
    on the observed mean): under NOISE of the differences' scale. A bound that close to zero
    read as above it: "B better" and a passing gate over "[0.000, +0.136]"."""
    return at_target(value, 0.0, float(np.abs(diff).max()) if len(diff) else 1.0)


def noise_at(target: float, scale: float = 1.0) -> float:
    """How far from ``target`` a value computed in floats may lie and still be ``target``: NOISE
    times the largest of 1, |target| and ``scale`` (the size of the values it was computed
    from). Summed in floats, 24 costs of 0.003 average 0.0030000000000000005, and B - A of 0.55
    and 0.5 is 0.050000000000000044."""
    return NOISE * max(1.0, abs(target), scale)


def at_target(value: float, target: float, scale: float = 1.0) -> float:
    """``target`` where ``value`` lies within float noise of it (noise_at), else ``value``."""
    return target if abs(value - target) < noise_at(target, scale) else value


def clip_interval(low: float, high: float, span: tuple[float, float]) -> tuple[float, float]:
    """[low, high] cut to ``span``, the range B - A can take: a difference of two scores in
    [lo, hi] lies in [lo - hi, hi - lo].

    On 2 or 3 questions a t-based interval reaches far past it (nDCG@1: [-6.85, +5.85]). The
    span holds the true difference whatever the data, so the cut interval holds the truth if
    and only if the uncut one does: coverage is exactly unchanged, replicate by replicate. Zero
    is in the span too, so the cut interval excludes zero exactly when the uncut one does: the
    test that inverts the interval still agrees with it, and p is not touched.
    """
    floor, ceiling = span
    return float(np.clip(low, floor, ceiling)), float(np.clip(high, floor, ceiling))


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
