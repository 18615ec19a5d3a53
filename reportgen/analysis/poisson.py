"""A bootstrap whose resamples add up across shards of questions (the Poisson bootstrap).

The exact paired bootstrap draws n question indices per resample, which needs every question in
one place. The Poisson bootstrap (Hanley and MacGibbon 2006; Chamandy, Muralidharan, Najmi and
Naik 2012, "Estimating uncertainty for massive data streams") instead gives each question i an
independent weight w[i, b] ~ Poisson(1) in replicate b, and takes sum(w * x) / sum(w) as the
replicate's mean. When w[i, b] is a function of (seed, question_id, b) alone, any shard of the
questions can compute its own sums of w * x and of w for every replicate, and the shards' sums
add up to the sums of the whole set, whatever the sharding and in any order.

Sums are kept in fixed point (integers in units of 2^-bits), so that adding shards in any order
gives the same bits; with the quantum of FIXED_POINT_BITS (2.3e-10) a metric's mean moves by less
than 1e-9, and its sums may reach about 2^31 (2.1e9). A column of milliseconds or tokens passes
that at a million questions (a mean latency of 2.2 s), so those are summed in units of
2^-COARSE_BITS (1.5e-5 ms or tokens), up to about 1.4e14. The weights of one run's questions
do not depend on its values, so the partial sums of runs A and B of the same questions subtract
to the sums of B - A.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import exp, factorial

import numpy as np

from ..errors import InputError
from .stats import expanded_confidence

FIXED_POINT_BITS = 32  # a value x is summed as round(x * 2^32)
COARSE_BITS = 16  # a column of milliseconds or tokens: round(x * 2^16)
MAX_WEIGHTED = 2**63  # sums of w * x in fixed point must stay below this (int64)
CHUNK_CELLS = 1 << 22  # questions x replicates drawn at a time: bounds the memory to ~100 MB
_GAMMA = np.uint64(0x9E3779B97F4A7C15)  # SplitMix64's increment (the golden ratio)
_MIX = (  # SplitMix64's finaliser: xor-shift, multiply; xor-shift, multiply; xor-shift
    (np.uint64(30), np.uint64(0xBF58476D1CE4E5B9)),
    (np.uint64(27), np.uint64(0x94D049BB133111EB)),
    (np.uint64(31), None),
)
_LIMB_BITS = 21  # fixed-point values are multiplied in three 21-bit limbs: exact in float64
_LIMB_SCALES = 2.0 ** (_LIMB_BITS * np.arange(3))  # each limb's place value
_POISSON_TAIL = 20  # weights above 20 have probability < 1e-19: below a 64-bit uniform's grain
_DENSE = 4  # weights 0..3 are counted on every cell, larger ones (2% of cells) looked up
MIN_INTERVAL_QUESTIONS = 2  # one question has no spread to measure: no interval (as compare)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's output function (Steele, Lea and Flood 2014) applied to each uint64 of
    ``x``: a bijection that turns consecutive counters into statistically independent bits."""
    z = x.astype(np.uint64, copy=True)
    shifted = np.empty_like(z)
    for shift, multiplier in _MIX:
        np.right_shift(z, shift, out=shifted)
        z ^= shifted
        if multiplier:
            np.multiply(z, multiplier, out=z)  # wraps modulo 2^64, as the function means
    return z


def question_keys(question_ids: Sequence[str]) -> np.ndarray:
    """A 64-bit key per question_id, the same on every machine, in every process and in any
    shard.

    The id's UTF-8 bytes are read as little-endian 64-bit words (the last one zero-padded) and
    folded with SplitMix64 from a start that is the byte length (so that padding cannot make two
    ids equal); an id's words alone count, whatever the other ids of the shard.
    """
    encoded = [q.encode() for q in question_ids]
    lengths = np.array([len(e) for e in encoded], dtype=np.uint64)
    words = -(-int(lengths.max(initial=0)) // 8) or 1
    matrix = np.array(encoded, dtype=f"S{words * 8}").view("<u8").reshape(len(encoded), words)
    own_words = (lengths + np.uint64(7)) // np.uint64(8)
    key = splitmix64(lengths)
    for column in range(words):
        key = np.where(own_words > column, splitmix64(key ^ matrix[:, column]), key)
    return key


def _poisson_thresholds() -> np.ndarray:
    """Upper 64-bit thresholds of Poisson(1)'s CDF: a uniform u >= t[j] has weight > j."""
    cdf = np.cumsum([exp(-1) / factorial(j) for j in range(_POISSON_TAIL)])
    return np.array([int(c * 2.0**64) for c in cdf[cdf < 1.0]], dtype=np.uint64)


_THRESHOLDS = _poisson_thresholds()


def poisson_weights(seed: int, keys: np.ndarray, first: int, count: int) -> np.ndarray:
    """Poisson(1) weights of the questions ``keys`` in replicates first .. first + count - 1,
    a uint8 array (len(keys), count).

    Question i's weights are the SplitMix64 stream seeded by splitmix64(seed_key ^ key[i]), read
    at positions ``first``.. : counter-based, so any replicate of any question can be computed
    alone. A 64-bit output u becomes a weight by inverting Poisson(1)'s CDF.
    """
    seed_key = splitmix64(np.array([seed], dtype=np.uint64))
    start = splitmix64(keys ^ seed_key)
    steps = np.arange(first + 1, first + count + 1, dtype=np.uint64) * _GAMMA
    u = splitmix64(np.add(start[:, None], steps[None, :]))
    weights = np.zeros(u.shape, dtype=np.uint8)
    for threshold in _THRESHOLDS[:_DENSE]:
        weights += (u >= threshold).view(np.uint8)
    rare = np.flatnonzero(u >= _THRESHOLDS[_DENSE - 1])  # weight >= _DENSE: about 2% of cells
    weights.flat[rare] = np.searchsorted(_THRESHOLDS, u.flat[rare], side="right")
    return weights


def to_fixed(values: np.ndarray, bits: int | np.ndarray = FIXED_POINT_BITS) -> np.ndarray:
    """Values as int64 multiples of 2^-bits (rounded to nearest); ``bits`` may be given per
    column of a 2-D array."""
    return np.rint(np.asarray(values, dtype=float) * 2.0**bits).astype(np.int64)


@dataclass(frozen=True)
class PartialSums:
    """One shard's (or several added shards') sums for one metric: everything the interval needs.

    ``weighted[b]`` is sum over the shard's questions of w[i, b] * x_i and ``weights[b]`` sum of
    w[i, b], both in fixed point / as integers; ``total`` is sum of x_i in fixed point and ``n``
    the number of questions. ``key_sum`` (sum of the questions' keys mod 2^64) tells whether two
    runs' sums cover the same questions; ``bits``: the fixed point's, values in units of 2^-bits.
    """

    seed: int
    n: int
    total: int
    key_sum: int
    weighted: np.ndarray
    weights: np.ndarray
    bits: int = FIXED_POINT_BITS

    @property
    def n_boot(self) -> int:
        return len(self.weights)

    @property
    def scale(self) -> float:
        return 2.0**self.bits


def partial_sums(
    question_ids: Sequence[str],
    values: np.ndarray,
    n_boot: int,
    seed: int,
    bits: int = FIXED_POINT_BITS,
) -> PartialSums:
    """The Poisson-bootstrap partial sums of one shard: ``values`` (NaN: question left out) of
    the questions ``question_ids``; same inputs and seed, same sums."""
    column = np.asarray(values)[:, None]
    return partial_sums_by_column(question_ids, column, n_boot, seed, [bits])[0]


def partial_sums_by_column(
    question_ids: Sequence[str],
    values: np.ndarray,
    n_boot: int,
    seed: int,
    bits: Sequence[int] | None = None,
    names: Sequence[str] | None = None,
) -> list[PartialSums]:
    """The partial sums of each column of ``values`` (questions x metrics, NaN: left out),
    drawing each question's weights once for every metric; ``bits``: each column's fixed point
    (default FIXED_POINT_BITS), ``names``: the columns' names, for a refusal."""
    values = np.asarray(values, dtype=float)
    kept = ~np.isnan(values)
    columns = values.shape[1]
    bits = list(bits) if bits is not None else [FIXED_POINT_BITS] * columns
    names = list(names) if names is not None else ["the metric"] * columns
    for column in range(columns):
        largest = np.nanmax(np.abs(values[:, column]), initial=0) * 2.0 ** bits[column]
        _check_range(int(largest), len(values), names[column], bits[column])
    fixed = to_fixed(np.where(kept, values, 0.0), np.array(bits))
    keys = question_keys(question_ids)
    limbs = _limbs(fixed.T).reshape(3 * columns, -1)  # (limb, column) rows, one per question
    mask = kept.T.astype(float)
    weighted = np.zeros((columns, n_boot), dtype=np.int64)
    weights = np.zeros((columns, n_boot), dtype=np.int64)
    rough = np.zeros((columns, n_boot))  # the weighted sums in float64: do the int64 ones fit?
    rows = max(1, CHUNK_CELLS // max(n_boot, 1))
    for start in range(0, len(keys), rows):
        w = poisson_weights(seed, keys[start : start + rows], 0, n_boot).astype(float)
        part = limbs[:, start : start + rows] @ w
        weighted += _from_limbs(part.reshape(3, columns, n_boot))
        rough += np.tensordot(_LIMB_SCALES, part.reshape(3, columns, n_boot), axes=1)
        weights += np.rint(mask[:, start : start + rows] @ w).astype(np.int64)
    sums = []
    for column in range(columns):
        own = kept[:, column]
        # int64 sums wrap, so they are exact whenever the final sums fit: checked here, on
        # their float64 values (a relative error near 1e-16, far inside the margin)
        largest = max(
            np.abs(rough[column]).max(initial=0), np.abs(fixed[:, column]).sum(dtype=float)
        )
        _check_range(int(largest * (1 + 1e-9)), int(own.sum()), names[column], bits[column])
        with np.errstate(over="ignore"):
            key_sum = int(keys[own].sum(dtype=np.uint64))
        sums.append(
            PartialSums(
                seed,
                int(own.sum()),
                int(fixed[:, column].sum()),
                key_sum,
                weighted[column],
                weights[column],
                bits[column],
            )
        )
    return sums


def _limbs(fixed: np.ndarray) -> np.ndarray:
    """int64 values as three float64 arrays of 21-bit limbs (the top one signed), stacked on a
    new first axis, so that a product with a chunk of small integer weights sums exactly in
    floating point (BLAS)."""
    mask = (1 << _LIMB_BITS) - 1
    return np.stack(
        [(fixed >> (_LIMB_BITS * i)) & mask for i in range(2)] + [fixed >> (2 * _LIMB_BITS)]
    ).astype(float)


def _from_limbs(sums: np.ndarray) -> np.ndarray:
    """The int64 sums back from the three rows of limb sums (wrapping, like int64 sums)."""
    exact = np.rint(sums).astype(np.int64)
    with np.errstate(over="ignore"):
        return exact[0] + (exact[1] << _LIMB_BITS) + (exact[2] << (2 * _LIMB_BITS))


def _check_range(largest: int, n: int, name: str, bits: int) -> None:
    """Refuse sums past int64: splitting the questions into more shards does not help, since
    their sums are added into the run's."""
    if largest >= MAX_WEIGHTED:
        raise InputError(
            f"{name}: its weighted sums over {n:,} questions pass the range of 64-bit fixed "
            f"point in units of 2^-{bits} (about {MAX_WEIGHTED / 2.0**bits:.2g} in all); "
            "compare the logs without partial sums, or log the column in a larger unit"
        )


def merge(parts: Sequence[PartialSums], name: str = "the metric") -> PartialSums:
    """The sums of disjoint shards added: the sums of their union (exact, in any order);
    ``name``: the metric's, for a refusal."""
    first = parts[0]
    for part in parts[1:]:
        if part.bits != first.bits:
            raise InputError(
                f"partial sums in units of 2^-{part.bits} cannot be added to sums in units of "
                f"2^-{first.bits}; compute every shard with the same version of ragreport"
            )
        if (part.seed, part.n_boot) != (first.seed, first.n_boot):
            raise InputError(
                f"partial sums of seed {part.seed} with {part.n_boot} replicates cannot be "
                f"added to seed {first.seed} with {first.n_boot}; compute every shard with the "
                "same --seed and --n-boot"
            )
    weighted = np.sum([p.weighted.astype(object) for p in parts], axis=0)  # Python ints
    n = sum(p.n for p in parts)
    _check_range(max(abs(int(s)) for s in weighted), n, name, first.bits)
    return PartialSums(
        seed=first.seed,
        n=n,
        total=sum(p.total for p in parts),
        key_sum=sum(p.key_sum for p in parts) % 2**64,
        weighted=weighted.astype(np.int64),
        weights=np.sum([p.weights for p in parts], axis=0),
        bits=first.bits,
    )


def same_questions(a: PartialSums, b: PartialSums) -> bool:
    """Whether two runs' sums cover the same questions (their key sums and weights agree)."""
    return (a.n, a.key_sum) == (b.n, b.key_sum) and np.array_equal(a.weights, b.weights)


def difference(a: PartialSums, b: PartialSums) -> PartialSums:
    """The sums of B - A per question from each run's sums over the same questions (the weights
    depend on the question alone, so the runs' weighted sums subtract)."""
    if a.bits != b.bits:
        raise InputError(
            f"run A's partial sums are in units of 2^-{a.bits}, run B's of 2^-{b.bits}; compute "
            "both runs with the same version of ragreport"
        )
    if (a.seed, a.n_boot) != (b.seed, b.n_boot):
        raise InputError(
            f"run A's partial sums have seed {a.seed} and {a.n_boot} replicates, run B's seed "
            f"{b.seed} and {b.n_boot}; compute both runs with the same --seed and --n-boot"
        )
    if not same_questions(a, b):
        raise InputError(
            f"the runs' partial sums cover different questions ({a.n:,} and {b.n:,}); compute "
            "both runs over the same questions, with the same --seed and --n-boot"
        )
    weighted = b.weighted - a.weighted
    return PartialSums(a.seed, a.n, b.total - a.total, a.key_sum, weighted, a.weights, a.bits)


@dataclass(frozen=True)
class Interval:
    """A mean over n questions and its interval: None below MIN_INTERVAL_QUESTIONS, and when
    every question has the same value (``flat``)."""

    mean: float
    low: float | None
    high: float | None
    n: int
    n_boot: int
    flat: bool = False


def percentile_interval(sums: PartialSums, confidence: float) -> Interval:
    """The mean sum(x) / n and the expanded percentile interval of the replicate means
    sum(w * x) / sum(w) (Chamandy et al. 2012, section 3), over the replicates that drew a
    question: one where every weight is 0 (probability e^-n) has no mean. The quantiles are
    taken at expanded_confidence, as compare's are: the plain percentile interval covered 91%
    on 20 questions with ties (bench/simulate_poisson.py), and the two agree from a few hundred
    questions on. Below
    MIN_INTERVAL_QUESTIONS there is no interval: every replicate is the one question's value,
    a zero-width interval that would claim certainty, so ``compare`` gives none either. Nor is
    there one when every replicate mean is the one value (to the fixed point's quantum): every
    question has the same value (10 of 10 questions fixed, or none changed), which no resample
    can vary, and [+1, +1] or [0, 0] would claim the same certainty; ``compare`` gives a 0/1
    outcome Tango's score interval there, which needs the pairs the sums do not keep."""
    scale = sums.scale
    mean = _resolved(sums.total / scale / sums.n, scale)
    if sums.n < MIN_INTERVAL_QUESTIONS:
        return Interval(mean, None, None, sums.n, sums.n_boot)
    drawn = sums.weights > 0
    means = sums.weighted[drawn] / (sums.weights[drawn] * scale)
    tail = (1 - expanded_confidence(confidence, sums.n)) / 2
    if np.ptp(means) < 1 / scale:
        return Interval(mean, None, None, sums.n, sums.n_boot, flat=True)
    low, high = np.quantile(means, [tail, 1 - tail])
    bounds = (_resolved(float(low), scale), _resolved(float(high), scale))
    return Interval(mean, *bounds, sums.n, sums.n_boot)


def _resolved(value: float, scale: float) -> float:
    """0 for a value under the fixed point's quantum (1 / ``scale``): each value is rounded to
    it, so a mean (or a mean of B - A) that small is rounding. 0.9 + 0.8 + 0.7 against 0.6 +
    0.8 + 1.0 gave B - A = +0.00000000008."""
    return 0.0 if abs(value) < 1 / scale else value
