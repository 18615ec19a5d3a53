"""The interval of B - A of a bounded metric stays within the range the difference can take,
and cutting it there changes neither its coverage nor p."""

from __future__ import annotations

import numpy as np
import pytest

from reportgen.analysis.registry import METRICS, difference_range, score
from reportgen.analysis.stats import compare_metric

UNBOUNDED = "latency_ms"  # a cost: the registry knows no range for it


def compared(name: str, a: np.ndarray, b: np.ndarray, seed: int = 0):
    c, _ = compare_metric(name, a, b, binary=False, n_boot=200, confidence=0.95, seed=seed)
    return c


def test_every_built_in_metric_knows_its_range_and_a_score_does_not():
    assert {difference_range(f"{m.name}@1" if m.at_cutoff else m.name) for m in METRICS} == {
        (-1.0, 1.0)
    }
    assert difference_range(UNBOUNDED) is None
    assert score("judge_score", binary=False, higher_is_better=True).bounds is None


def test_two_questions_of_ndcg_give_an_interval_inside_minus_one_to_one():
    a, b = np.array([1.0, 0.5]), np.array([0.2, 1.0])
    ndcg, latency = compared("ndcg@1", a, b), compared(UNBOUNDED, a, b)
    assert latency.ci_low < -8 and latency.ci_high > 8  # Student's t on one degree of freedom
    assert (ndcg.ci_low, ndcg.ci_high) == (-1.0, 1.0)
    assert ndcg.p == latency.p and ndcg.diff == latency.diff


@pytest.mark.parametrize("n", [2, 3, 5])
def test_clipping_leaves_coverage_exactly_unchanged(n):
    """Known truth: A ~ U^3 (mean 1/4), B ~ 1 - U^3 (mean 3/4), so B - A has mean 1/2 and lies
    in [-1, 1]. Replicate by replicate, the clipped interval holds 1/2 exactly when the
    unclipped one does, and p is the same."""
    truth, rng = 0.5, np.random.default_rng(n)
    clipped = unclipped = changed = 0
    for seed in range(300):
        a, b = rng.random(n) ** 3, 1 - rng.random(n) ** 3
        cut, whole = compared("ndcg@1", a, b, seed), compared(UNBOUNDED, a, b, seed)
        holds = cut.ci_low <= truth <= cut.ci_high
        held = whole.ci_low <= truth <= whole.ci_high
        assert holds == held
        assert -1 <= cut.ci_low <= cut.diff <= cut.ci_high <= 1 and cut.p == whole.p
        clipped, unclipped = clipped + holds, unclipped + held
        changed += (cut.ci_low, cut.ci_high) != (whole.ci_low, whole.ci_high)
    assert clipped == unclipped and changed > 0
    assert clipped > 0.8 * 300  # the interval still covers: clipping took nothing it needed


def test_report_of_three_questions_keeps_ndcg_within_its_range(tmp_path, write_log, compare):
    def log(name: str, first: list[str]) -> object:
        rows = [
            {"question_id": f"q{i}", "retrieved_ids": [top, "x"], "relevant_ids": ["r"]}
            for i, top in enumerate(first)
        ]
        return write_log(tmp_path / name, rows)

    a, b = log("a.parquet", ["r", "x", "r"]), log("b.parquet", ["x", "r", "x"])
    doc = compare(a, b, tmp_path, "--k", 1)  # nDCG@1 of B - A: -1, +1, -1
    ndcg = doc["metrics"]["ndcg@1"]
    assert ndcg["n"] == 3 and -1 <= ndcg["ci_low"] <= ndcg["diff"] <= ndcg["ci_high"] <= 1
