"""The interval of B - A on a binary outcome keeps its width where few questions changed.

The bootstrap cannot see what it never drew: with no question changed every resample is no
change ([0, 0], which passed an equivalence rule on 2 questions), and with every question fixed
every resample is all fixed ([+1, +1]). The report takes, on each side, the wider of the
bootstrap's interval and Tango's score interval. Oracles: a published example, the closed form
of the no-change case, and the exact coverage of the interval over every outcome of a small
set (bench/coverage_binary.py prints the full table).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from test_slices_audit import compare, question

from reportgen.analysis.stats import SCORED, compare_metric, score_interval

Z = stats.norm.ppf(0.975)


def runs(fixed: int, broken: int, same: int) -> tuple[np.ndarray, np.ndarray]:
    """A and B with ``fixed`` and ``broken`` questions and ``same`` right in both."""
    a = np.array([0.0] * fixed + [1.0] * broken + [1.0] * same)
    b = np.array([1.0] * fixed + [0.0] * broken + [1.0] * same)
    return a, b


def test_score_interval_of_a_published_example():
    """Fagerland, Lydersen and Laake (2013, Statistics in Medicine 32(20)), their worked
    example (Bentur et al. 2009: 21 pairs, 1 and 7 discordant): Tango's asymptotic score
    interval for the difference is -0.517 to -0.026."""
    low, high = score_interval(1, 7, 21, 0.95)
    assert (round(low, 3), round(high, 3)) == (-0.517, -0.026)


@pytest.mark.parametrize("n", [2, 5, 20, 200])
def test_no_change_has_the_closed_form_width(n):
    """With no question changed, the score test of a difference d has statistic
    -sqrt(n d / (1 - d)): it rejects past d = z^2 / (n + z^2), on either side."""
    bound = Z**2 / (n + Z**2)
    assert score_interval(0, 0, n, 0.95) == pytest.approx((-bound, bound), abs=1e-9)


def test_two_unchanged_questions_give_no_narrow_interval():
    c, _ = compare_metric(
        "correct", *runs(0, 0, 2), binary=True, n_boot=1000, confidence=0.95, seed=0
    )
    bound = Z**2 / (2 + Z**2)  # 0.658: two questions cannot rule out much
    assert (c.ci_low, c.ci_high) == pytest.approx((-bound, bound))
    assert c.interval == SCORED


def test_every_question_fixed_is_not_a_certain_gain():
    """10 of 10 fixed: the bootstrap read [+1, +1]; the score interval reaches 0.445."""
    c, _ = compare_metric(
        "correct", *runs(10, 0, 0), binary=True, n_boot=1000, confidence=0.95, seed=0
    )
    assert c.ci_high == 1.0
    assert c.ci_low == pytest.approx(score_interval(10, 0, 10, 0.95)[0])
    assert c.ci_low == pytest.approx(0.445, abs=0.001)


def test_with_many_changes_the_bootstrap_and_the_score_interval_agree():
    """At 10,000 questions (488 fixed, 248 broken) the two agree to the fourth decimal, so the
    wider on each side moves the bootstrap's bounds by less than that."""
    a, b = runs(488, 248, 4000)
    a = np.concatenate([a, np.zeros(5264)])
    b = np.concatenate([b, np.zeros(5264)])
    c, _ = compare_metric("correct", a, b, binary=True, n_boot=2000, confidence=0.95, seed=0)
    score = score_interval(488, 248, 10_000, 0.95)
    assert (c.ci_low, c.ci_high) == pytest.approx(score, abs=5e-4)


@pytest.mark.parametrize(("p_fixed", "p_broken"), [(0.1, 0.0), (0.95, 0.0), (0.15, 0.15)])
def test_exact_coverage_at_ten_questions(p_fixed, p_broken):
    """Every outcome of 10 paired questions, weighted by its trinomial probability: the
    report's interval holds the true difference with probability at least 95%. The bootstrap
    alone covered 65%, 40% and 96.7% here."""
    n, truth, covered = 10, p_fixed - p_broken, 0.0
    for fixed in range(n + 1):
        for broken in range(n + 1 - fixed):
            chance = stats.multinomial.pmf(
                [fixed, broken, n - fixed - broken], n, [p_fixed, p_broken, 1 - p_fixed - p_broken]
            )
            c, _ = compare_metric(
                "correct",
                *runs(fixed, broken, n - fixed - broken),
                binary=True,
                n_boot=500,
                confidence=0.95,
                seed=0,
            )
            covered += chance * (c.ci_low - 1e-12 <= truth <= c.ci_high + 1e-12)
    assert covered >= 0.95


def test_an_equivalence_rule_is_not_passed_by_two_unchanged_questions(tmp_path):
    """The gate read the bootstrap's [0, 0] as proof that B is within 0.02 of A."""
    rows = [question(i, "s", True) for i in range(2)]
    code, output, _ = compare(
        tmp_path, rows, rows, "--n-boot", "1000", "--require", "correct within 0.02"
    )
    assert code == 1, output
    assert "inconclusive" in output
