"""The statistics against known truth: a quick, seeded version of bench/simulate.py.

Each check simulates a few hundred paired data sets and allows the nominal rate plus 2.5
Monte-Carlo standard errors (binomial, sqrt(r (1 - r) / reps)) plus the stated tolerance; the
methods these replaced sit outside (percentile interval at n = 20: 90-91%; slice flags without
Holm: about 40%; the sign test's detectable difference: found 53-68% of the time).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import simulate  # noqa: E402

SEED = 20260101


def mc_error(rate: float, reps: int) -> float:
    return 2.5 * math.sqrt(rate * (1 - rate) / reps)


@pytest.mark.parametrize("kind", simulate.KINDS)
def test_interval_covers_95_at_n_20(kind):
    reps = 500
    rates = simulate.null_rates(kind, 20, reps, SEED)
    assert abs(rates["report"] - 0.95) <= 0.01 + mc_error(0.95, reps), rates


@pytest.mark.parametrize("kind,n", [("binary", 50), ("skewed", 200)])
def test_stated_detectable_difference_is_found_80_percent_of_the_time(kind, n):
    reps = 300
    rate, _ = simulate.power_rate(kind, n, reps, SEED)
    assert abs(rate - 0.8) <= 0.03 + mc_error(0.8, reps), rate


def test_slice_regressions_keep_family_wise_error_at_5_percent():
    reps = 150
    fwer = simulate.slice_fwer("skewed", reps, SEED)
    assert fwer <= 0.05 + mc_error(0.05, reps), fwer
