"""The bootstrap's building blocks, against plain loops."""

from __future__ import annotations

import numpy as np

from reportgen.analysis.stats import bootstrap_means, bootstrap_moments, segment_sums


def test_segment_sums_with_empty_runs_anywhere():
    values = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    lengths = np.array([0, 2, 0, 0, 3, 0])
    expected, at = [], 0
    for length in lengths:
        expected.append(values[at : at + length].sum())
        at += length
    assert segment_sums(values, lengths).tolist() == expected == [0, 3, 0, 0, 28, 0]
    assert segment_sums(np.array([]), np.array([0, 0])).tolist() == [0, 0]


def test_rare_values_drawn_as_indices_keep_the_mean_and_spread():
    # 1000 zeros and three singletons: the singletons are drawn as indices, often zero times
    diff = np.concatenate([np.zeros(1000), [30.0, 60.0, 90.0]])
    means = bootstrap_means(diff, 20000, seed=1)
    n = len(diff)
    expected_sd = diff.std() / np.sqrt(n)  # sd of a resampled mean: population sd / sqrt(n)
    # 20000 resamples: the mean is off by about sd / sqrt(20000); allow 5 of those
    assert abs(means.mean() - diff.mean()) < 5 * expected_sd / np.sqrt(20000)
    assert abs(means.std() / expected_sd - 1) < 0.03
    # every resampled mean is a sum of drawn values over n: a multiple of 30 / n
    assert np.allclose(np.round(means * n / 30), means * n / 30)


def test_the_same_resamples_on_one_thread_as_on_several():
    rng = np.random.default_rng(7)
    diff = np.round(rng.normal(size=1500), 3)  # a head of counts and a tail of indices
    one = bootstrap_moments(diff, 1100, seed=3, squares=True, threads=1)
    several = bootstrap_moments(diff, 1100, seed=3, squares=True, threads=3)
    assert np.array_equal(one[0], several[0]) and np.array_equal(one[1], several[1])
    assert len(one[0]) == 1100
