"""The interval of a continuous B - A whose questions all changed by one value (usually none).

The bootstrap of one value is that value: faithfulness +0.05 on 4 questions read [+0.05,
+0.05], and passed 'faithfulness within 0.06'. Where the difference's range is known the
interval is Wilson's bound on the share of questions that could differ unseen, each as far as
the range allows. Oracles: the closed form, Tango's interval of a 0/1 outcome with nothing
changed (the same bound on [-1, 1]), and the interval's own inversion at its bounds;
bench/simulate_no_spread.py measures its coverage.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from test_slices_audit import compare, question

from reportgen.analysis.stats import (
    CLUSTERED_NO_SPREAD,
    NO_SPREAD,
    bound_p,
    compare_metric,
    compare_with_sides,
    score_interval,
)

Z = stats.norm.ppf(0.975)
A = np.array([0.9, 0.4, 0.3, 0.8])


def _compare(name: str, a: np.ndarray, b: np.ndarray, **options):
    return compare_metric(
        name, a, b, binary=False, n_boot=1000, confidence=0.95, seed=0, **options
    )[0]


def test_a_constant_shift_on_four_questions_keeps_its_width():
    """4 questions all +0.05 on a [0, 1] score: up to Z^2 / (4 + Z^2) = 0.49 of the questions
    could differ unseen, by as much as -1.05 or +0.95."""
    c = _compare("faithfulness", A, A + 0.05)
    share = Z**2 / (4 + Z**2)
    assert (c.ci_low, c.ci_high) == pytest.approx((0.05 - share * 1.05, 0.05 + share * 0.95))
    assert c.interval == NO_SPREAD
    assert c.p == pytest.approx(2 / 16)  # the permutation test: 2 of 16 sign flips as extreme


@pytest.mark.parametrize("n", [2, 20, 200])
def test_no_change_reads_as_a_0_1_outcome_with_none_changed(n):
    """nDCG unchanged on n questions: the bound Tango's interval gives a 0/1 outcome (0 fixed,
    0 broken of n), z^2 / (n + z^2) on either side (0.161 at 20)."""
    values = np.linspace(0, 1, n)
    c = _compare("ndcg@5", values, values)
    assert (c.ci_low, c.ci_high) == pytest.approx(score_interval(0, 0, n, 0.95), abs=1e-9)


def test_a_gate_reads_the_interval_at_its_bounds():
    """The one-sided p at a bound is the tail it was read at (2.5% at 95%), above it past the
    bound's inside and below it outside; at the value itself 1/2 or more."""
    c, means, sides = compare_with_sides(
        "faithfulness", A, A + 0.05, binary=False, n_boot=1000, confidence=0.95, seed=0
    )
    assert bound_p(sides, means, c.ci_high, upper=True) == pytest.approx(0.025)
    assert bound_p(sides, means, c.ci_low, upper=False) == pytest.approx(0.025)
    assert bound_p(sides, means, c.ci_high + 0.01, upper=True) < 0.025
    assert bound_p(sides, means, c.ci_high - 0.01, upper=True) > 0.025
    assert bound_p(sides, means, 0.05, upper=True) >= 0.5
    assert bound_p(sides, means, 1.0, upper=True) == 0.0  # past the range: nothing reaches it


def test_a_score_of_unknown_range_keeps_the_one_value():
    """A score of the logs (or a cost) has no range to bound an unseen question by."""
    c = _compare("judge", A, A + 0.05)
    assert (c.ci_low, c.ci_high) == pytest.approx((0.05, 0.05))
    assert c.interval != NO_SPREAD


def test_with_clusters_the_share_is_of_clusters():
    """8 questions in 3 documents, all +0.05: 3 units could differ, not 8."""
    clusters = np.array(["d1", "d1", "d1", "d2", "d2", "d3", "d3", "d3"])
    a = np.linspace(0.1, 0.8, 8)
    c = _compare("faithfulness", a, a + 0.05, clusters=clusters)
    share = Z**2 / (3 + Z**2)
    assert (c.ci_low, c.ci_high) == pytest.approx((0.05 - share * 1.05, 0.05 + share * 0.95))
    assert c.interval == CLUSTERED_NO_SPREAD


def test_rules_on_a_constant_shift_of_four_questions_are_inconclusive(tmp_path):
    """The gate passed 'faithfulness within 0.06' and 'ndcg@3 within 0.001', and failed
    'ndcg@3 >= 0.05' outright, on 4 questions whose differences have no spread (nDCG
    unchanged)."""
    a = [question(i, "s", True, faithfulness=float(f)) for i, f in enumerate(A)]
    b = [question(i, "s", True, faithfulness=float(f) + 0.05) for i, f in enumerate(A)]
    rules = ("faithfulness within 0.06", "ndcg@3 within 0.001", "ndcg@3 >= 0.05")
    options = [o for rule in rules for o in ("--require", rule)]
    code, output, _ = compare(tmp_path, a, b, "--n-boot", "1000", *options)
    assert code == 1, output
    lines = [line for line in output.splitlines() if any(rule in line for rule in rules)]
    assert len(lines) == 3 and all("inconclusive" in line for line in lines), output


def test_shares_of_samples_answered_alike_are_not_certain(tmp_path):
    """20 questions answered three times, every answer correct in both runs: a share of 1 in
    both, no spread. It read [0, 0] and passed 'correct within 0.05'; one answer each reads
    Tango's +-0.161, and so do the shares now."""
    rows = [question(i, "s", True, sample=str(s)) for i in range(20) for s in range(3)]
    code, output, _ = compare(
        tmp_path, rows, rows, "--n-boot", "1000", "--require", "correct within 0.05"
    )
    assert code == 1, output
    bound = Z**2 / (20 + Z**2)
    assert f"interval [{-bound:.4f}, {bound:.4f}]" in output
