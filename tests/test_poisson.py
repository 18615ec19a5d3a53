"""The Poisson bootstrap: its hash against the reference, shards that add up bit for bit, and
intervals against the exact bootstrap and known truth."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from reportgen.analysis.poisson import (
    FIXED_POINT_BITS,
    difference,
    merge,
    partial_sums,
    percentile_interval,
    poisson_weights,
    question_keys,
    splitmix64,
    to_fixed,
)
from reportgen.analysis.stats import bootstrap_means
from reportgen.errors import InputError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import simulate_poisson  # noqa: E402

MASK = 2**64 - 1


def mix_reference(z: int) -> int:
    """SplitMix64's finaliser in Python integers (Steele, Lea and Flood 2014)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def test_splitmix64_gives_the_reference_stream():
    # SplitMix64 seeded with 0: its first output is the published 0xE220A8397B1DCDAF
    gamma = 0x9E3779B97F4A7C15
    assert int(splitmix64(np.array([gamma], dtype=np.uint64))[0]) == 0xE220A8397B1DCDAF
    values = [0, 1, 2**63, MASK, 0x0123456789ABCDEF]
    got = splitmix64(np.array(values, dtype=np.uint64))
    assert [int(v) for v in got] == [mix_reference(v) for v in values]


def test_question_keys_fold_the_id_bytes():
    def reference(text: str) -> int:
        data = text.encode()
        key = mix_reference(len(data))
        padded = data + b"\0" * (-len(data) % 8)
        for at in range(0, len(padded), 8):
            key = mix_reference(key ^ int.from_bytes(padded[at : at + 8], "little"))
        return key

    ids = ["q1", "a", "a\0", "question-with-a-long-id-0001", "é€ 問", ""]
    keys = question_keys(ids)
    assert [int(k) for k in keys] == [reference(q) for q in ids]
    assert len(set(keys.tolist())) == len(ids)  # "a" and "a\0" differ by their length
    assert question_keys(["q1"])[0] == keys[0]  # the other ids of a shard do not matter


def test_weights_are_poisson_1():
    keys = question_keys([f"q{i}" for i in range(2000)])
    weights = poisson_weights(7, keys, 0, 500).ravel()
    observed = np.bincount(weights, minlength=7)[:6]
    expected = stats.poisson.pmf(np.arange(6), 1.0) * weights.size
    tail = weights.size - expected.sum()
    result = stats.chisquare(
        np.append(observed, weights.size - observed.sum()), np.append(expected, tail)
    )
    assert result.pvalue > 0.001, (observed, expected)
    # replicates are independent of each other: correlation of two columns ~ 1 / sqrt(n)
    w = poisson_weights(7, keys, 0, 2).astype(float)
    assert abs(np.corrcoef(w[:, 0], w[:, 1])[0, 1]) < 4 / math.sqrt(len(keys))


def test_a_replicate_is_the_same_computed_alone():
    keys = question_keys(["x", "y", "z"])
    block = poisson_weights(3, keys, 0, 50)
    assert np.array_equal(poisson_weights(3, keys[1:2], 20, 5), block[1:2, 20:25])


@pytest.mark.parametrize("shards", [1, 2, 7, 300])
def test_any_sharding_gives_the_same_sums_and_interval(shards):
    rng = np.random.default_rng(shards)
    n = 3000
    ids = [f"question-{i}" for i in range(n)]
    values = rng.random(n).round(3)
    values[rng.random(n) < 0.1] = np.nan  # questions without a value are left out
    whole = partial_sums(ids, values, 400, seed=11)
    order = rng.permutation(n)  # shards of any composition, added in any order
    cuts = np.sort(rng.choice(np.arange(1, n), size=shards - 1, replace=False))
    parts = [
        partial_sums([ids[i] for i in chunk], values[chunk], 400, seed=11)
        for chunk in np.split(order, cuts)
    ]
    merged = merge(parts[::-1])
    assert np.array_equal(merged.weighted, whole.weighted)
    assert np.array_equal(merged.weights, whole.weights)
    assert (merged.total, merged.n, merged.key_sum) == (whole.total, whole.n, whole.key_sum)
    assert percentile_interval(merged, 0.95) == percentile_interval(whole, 0.95)
    assert whole.n == int((~np.isnan(values)).sum())


def test_sums_are_the_weighted_sums_in_fixed_point():
    ids = ["a", "b", "c", "d"]
    values = np.array([0.5, -0.25, 1.0, 0.125])
    sums = partial_sums(ids, values, 64, seed=5)
    weights = poisson_weights(5, question_keys(ids), 0, 64).astype(np.int64)
    scale = 2**FIXED_POINT_BITS
    expected = [
        sum(int(w) * int(v * scale) for w, v in zip(col, values, strict=True)) for col in weights.T
    ]
    assert sums.weighted.tolist() == expected
    assert sums.weights.tolist() == weights.sum(axis=0).tolist()
    assert sums.total == int(1.375 * scale)


def test_runs_subtract_to_the_difference_per_question():
    rng = np.random.default_rng(3)
    ids = [f"q{i}" for i in range(500)]
    a, b = rng.random(500), rng.random(500)
    diff = difference(partial_sums(ids, a, 300, 1), partial_sums(ids, b, 300, 1))
    weights = poisson_weights(1, question_keys(ids), 0, 300)
    per_question = (to_fixed(b) - to_fixed(a)).astype(object)
    assert diff.weighted.tolist() == (per_question @ weights.astype(object)).tolist()
    interval = percentile_interval(diff, 0.95)
    assert interval.mean == pytest.approx((b - a).mean(), abs=1e-9)


def test_matches_the_exact_bootstrap_within_monte_carlo_error():
    rng = np.random.default_rng(8)
    n, n_boot = 2000, 4000
    values = np.where(rng.random(n) < 0.5, rng.normal(0, 0.3, n), 0.0)  # ties and spread
    sums = partial_sums([f"q{i}" for i in range(n)], values, n_boot, seed=2)
    poisson_means = sums.weighted / (sums.weights * 2.0**FIXED_POINT_BITS)
    exact = bootstrap_means(values, n_boot, seed=2)
    sd = values.std() / math.sqrt(n)
    # sd of an sd estimated from B draws: about sd / sqrt(2B) = 1.1% each
    assert poisson_means.std() == pytest.approx(sd, rel=0.06)
    assert exact.std() == pytest.approx(sd, rel=0.06)
    # a 2.5% quantile from 4000 draws is off by about 0.04 sd; two of them, 5 errors
    for q in (0.025, 0.975):
        assert abs(np.quantile(poisson_means, q) - np.quantile(exact, q)) < 0.3 * sd


def _expanded_tails(confidence: float, n: int) -> list[float]:
    """Hesterberg's expanded percentile (2015, sec. 5.3): the quantiles at
    Phi(sqrt(n / (n - 1)) t(n - 1, tail)), written out here from scipy's distributions."""
    tail = stats.norm.cdf(math.sqrt(n / (n - 1)) * stats.t.ppf((1 - confidence) / 2, n - 1))
    return [tail, 1 - tail]


def test_the_interval_is_expanded_on_few_questions_as_compare_s_is():
    """On 20 questions the plain percentile interval covered 91% with ties (simulate_poisson
    at n = 20: 90.8% and 92.5% skewed; 94.8% and 93.8% expanded, the same 400 data sets)."""
    values = np.random.default_rng(5).normal(0, 1, 20)
    sums = partial_sums([f"q{i}" for i in range(20)], values, 4000, seed=1)
    means = sums.weighted / (sums.weights * 2.0**FIXED_POINT_BITS)
    interval = percentile_interval(sums, 0.95)
    expected = np.quantile(means, _expanded_tails(0.95, 20))
    assert (interval.low, interval.high) == pytest.approx(tuple(expected), rel=1e-12)
    plain = np.quantile(means, [0.025, 0.975])
    assert interval.high - interval.low > 1.05 * (plain[1] - plain[0])


def test_replicates_that_drew_no_question_are_left_out_of_the_interval():
    """With 3 questions about 5% of replicates weigh every question 0: they have no mean, and
    the interval is the quantiles of the others' means, not NaN."""
    ids = ["a", "b", "c"]
    sums = partial_sums(ids, np.array([0.0, 0.5, 1.0]), 1000, seed=3)
    drawn = sums.weights > 0
    assert 0 < (~drawn).sum() < 100
    means = sums.weighted[drawn] / (sums.weights[drawn] * 2.0**FIXED_POINT_BITS)
    interval = percentile_interval(sums, 0.9)
    assert (interval.low, interval.high) == tuple(np.quantile(means, _expanded_tails(0.9, 3)))
    assert 0.0 <= interval.low < 0.5 < interval.high <= 1.0
    one = percentile_interval(partial_sums(["q"], np.array([0.25]), 1000, seed=3), 0.95)
    assert (one.mean, one.low, one.high) == (0.25, None, None)  # no spread: no interval


def test_refuses_to_add_or_subtract_what_does_not_match():
    ids = ["a", "b"]
    one = partial_sums(ids, np.array([1.0, 0.0]), 100, seed=1)
    with pytest.raises(InputError, match="same --seed and --n-boot"):
        merge([one, partial_sums(ids, np.array([1.0, 0.0]), 100, seed=2)])
    with pytest.raises(InputError, match="different questions"):
        difference(one, partial_sums(["a", "c"], np.array([1.0, 0.0]), 100, seed=1))
    with pytest.raises(InputError, match="run A's partial sums have seed 1 and 100 replicates"):
        difference(one, partial_sums(ids, np.array([1.0, 0.0]), 100, seed=2))


def test_refuses_sums_that_overflow():
    past = "pass the range of 64-bit fixed point in units of 2\\^-32"
    with pytest.raises(InputError, match=past):
        partial_sums(["a"], np.array([2.0**40]), 100, seed=1)
    with pytest.raises(InputError, match=past):  # each fits (2^62), their sums do not
        partial_sums([f"q{i}" for i in range(10)], np.full(10, 2.0**30), 100, seed=1)
    # in units of 2^-16, the same sums fit
    sums = partial_sums([f"q{i}" for i in range(10)], np.full(10, 2.0**30), 100, 1, bits=16)
    assert percentile_interval(sums, 0.95).mean == 2.0**30
    # one large value among 99 zeros: its sums fit (at most 2^59 times its largest weight), though
    # the largest value times the sum of all weights does not: a cost column of one outlier in
    # a large shard was refused
    values = np.array([2.0**27] + [0.0] * 99)
    sums = partial_sums([f"q{i}" for i in range(100)], values, 100, seed=1)
    assert sums.total == 2**59
    first = poisson_weights(1, question_keys(["q0"]), 0, 100)[0]
    assert [int(s) for s in sums.weighted] == [2**59 * int(w) for w in first]


def test_interval_covers_the_truth_95_percent_at_n_1000():
    reps = 300
    rate = simulate_poisson.coverage("skewed", 1000, reps, 500, seed=20260101)
    assert abs(rate - 0.95) <= 0.01 + 2.5 * math.sqrt(0.95 * 0.05 / reps), rate


def test_a_difference_under_the_fixed_point_quantum_is_zero():
    """0.9 + 0.8 + 0.7 and 0.6 + 0.8 + 1.0 round to sums one quantum apart in fixed point:
    merge printed B - A +0.00000000008 for two runs of the same mean."""
    ids = ["q0", "q1", "q2"]
    a = partial_sums(ids, np.array([0.9, 0.8, 0.7]), 200, seed=3)
    b = partial_sums(ids, np.array([0.6, 0.8, 1.0]), 200, seed=3)
    assert a.total != b.total  # the rounding this is about
    diff = percentile_interval(difference(a, b), 0.95)
    assert diff.mean == 0.0
    assert percentile_interval(a, 0.95).mean == pytest.approx(0.8, abs=1e-9)
