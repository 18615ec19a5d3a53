"""Chart specs read as a reader reads the drawn chart."""

from __future__ import annotations

import numpy as np
import pytest

from reportgen.reporters.html import charts


def _bars(spec: dict) -> list[dict]:
    (rows,) = [rows for rows in spec["datasets"].values() if rows and "start" in rows[0]]
    return rows


@pytest.mark.parametrize("value", [0.0, 0.3, -0.125])
def test_a_bootstrap_of_one_value_draws_its_bar_centred_on_it(value):
    """B = A: every resample is 0, and the one bar was drawn from 0 to +0.025 (numpy's bins
    of v - 0.5 to v + 0.5), right of the zero line and across the interval's upper bound, as
    if the resamples were positive."""
    spec = charts.bootstrap(np.full(1000, value), value, value - 0.01, value + 0.016, "x", "95%")
    (bar,) = [b for b in _bars(spec) if b["resamples"]]
    assert bar["resamples"] == 1000
    assert bar["start"] < value < bar["end"]
    assert bar["start"] + bar["end"] == pytest.approx(2 * value)
    # a bar no wider than the axis' own bins (1/40 of the span of 0, the interval and the
    # value), so that it reads as one value, not a spread
    span = max(0.0, value + 0.016) - min(0.0, value - 0.01)
    assert bar["end"] - bar["start"] == pytest.approx(span / 40)


def test_a_bootstrap_of_many_values_keeps_every_resample_in_its_bins():
    means = np.random.default_rng(0).integers(-20, 30, 5000) / 240  # a binary metric's lattice
    spec = charts.bootstrap(means, 0.02, -0.05, 0.09, "correct", "95%")
    bars = _bars(spec)
    assert sum(b["resamples"] for b in bars) == 5000
    assert bars[0]["start"] < means.min() and bars[-1]["end"] > means.max()


def _mark(spec: dict) -> str:
    mark = spec["mark"]
    return mark if isinstance(mark, str) else mark["type"]


def test_questions_that_all_tie_are_drawn_as_ticks_at_zero():
    """B = A: 240 bars of no height drew an empty frame under a legend of wins and losses."""
    ids = [f"q{i}" for i in range(240)]
    tied = charts.differences(ids, np.zeros(240), "correct")
    assert _mark(tied) == "tick" and tied["mark"]["orient"] == "horizontal"
    (rows,) = tied["datasets"].values()
    assert {r["outcome"] for r in rows} == {"tie"} and len(rows) == 240
    some = charts.differences(ids, np.r_[np.zeros(239), 1.0], "correct")
    assert _mark(some) == "bar"
