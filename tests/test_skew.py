"""A skewed difference: its skewness, the bound it leaves unsure and the
sentences that rest on that bound saying so."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats as scipy_stats

from reportgen.analysis.gates import Candidate, Requirements, evaluate, parse_rule
from reportgen.analysis.skew import LOWER, UPPER, caveat, questions_needed, skewness, unsure_bound
from reportgen.analysis.slices import SliceResult
from reportgen.analysis.stats import compare_metric
from reportgen.analysis.verdict import decide, regression_lines
from reportgen.cli import main

# many small slow-downs and one large speed-up, in milliseconds: a latency's B - A
LEFT_TAIL = np.array([30.0, 25, 35, 28, 32, 27, 33, 29, 31, 26, 34, 30, 28, 32, 29, 31, 30, -40])


def _cost(diff: np.ndarray) -> tuple:
    c, _ = compare_metric(
        "latency_ms", np.zeros(len(diff)), diff, binary=False, n_boot=2000, confidence=0.95,
        seed=0,
    )  # fmt: skip
    return c


def test_skewness_is_the_adjusted_fisher_pearson_coefficient():
    """By hand: [0, 0, 0, 0, 10] has m2 = 16, m3 = 96, g1 = 96 / 16^1.5 = 1.5, and G1 = g1
    sqrt(n (n - 1)) / (n - 2) = 1.5 sqrt(20) / 3 = sqrt(5); scipy's bias-corrected skewness
    agrees on a lognormal sample; under 3 values it is undefined."""
    assert skewness(np.array([0.0, 0, 0, 0, 10])) == pytest.approx(np.sqrt(5), rel=1e-12)
    values = np.random.default_rng(4).lognormal(0, 1, 300)
    assert skewness(values) == pytest.approx(scipy_stats.skew(values, bias=False), rel=1e-10)
    assert skewness(np.array([1.0, 2.0])) is None


def test_sugden_rule_marks_the_bound_away_from_the_tail():
    """n > 28 + 25 g^2 (g = 2: 128, so 129 questions suffice); a left tail leaves the lower
    bound unsure, a right one the upper; skewness within 1 leaves none whatever n."""
    assert questions_needed(2.0) == 129
    assert unsure_bound(-2.0, 128) == LOWER
    assert unsure_bound(-2.0, 129) is None
    assert unsure_bound(1.5, 84) == UPPER  # 28 + 56.25 = 84.25
    assert unsure_bound(1.5, 85) is None
    assert unsure_bound(0.9, 5) is None
    assert unsure_bound(None, 5) is None


def test_a_cost_and_a_bounded_score_carry_their_skewness_and_a_binary_one_does_not():
    """A known range bounds nothing the questions miss when it is far wider than the
    differences: faithfulness losing a little on 17 questions and gaining much on one is as
    skewed as the latency above, and its bound as unsure (it carried none). Few changes among
    ties of a known range take the range's bound (Tango's score interval), and a 0/1 outcome's
    three values show both sides: neither carries one."""
    c = _cost(LEFT_TAIL)
    assert c.skewness == pytest.approx(scipy_stats.skew(LEFT_TAIL, bias=False), rel=1e-10)
    bounded, _ = compare_metric(
        "faithfulness", np.full(18, 0.5), 0.5 + LEFT_TAIL / 100, binary=False, n_boot=500,
        confidence=0.95, seed=0,
    )  # fmt: skip
    assert bounded.skewness == pytest.approx(c.skewness, rel=1e-9)
    few = np.r_[np.zeros(17), 0.6]  # one question of 18 changed
    tied, _ = compare_metric(
        "faithfulness", np.full(18, 0.3), 0.3 + few, binary=False, n_boot=500, confidence=0.95,
        seed=0,
    )  # fmt: skip
    assert "Tango" in tied.interval and tied.skewness is None
    a = np.array([0.0, 1, 0, 1, 0, 0])
    binary, _ = compare_metric(
        "correct", a, 1 - a, binary=True, n_boot=500, confidence=0.95, seed=0
    )
    assert binary.skewness is None


def test_the_verdict_resting_on_the_unsure_bound_says_so():
    """18 questions, B slower on 17 and far faster on one: the interval lies above 0 on its
    lower bound, which the left tail leaves unsure; the verdict keeps its outcome and says so,
    with the questions Sugden's rule asks."""
    c = _cost(LEFT_TAIL + 20)  # shifted so that the interval lies above 0
    assert c.ci_low > 0
    g = scipy_stats.skew(LEFT_TAIL, bias=False)
    verdict = decide(c, 0.95, [], higher_is_better=False)
    assert verdict.outcome == "B worse"
    assert f"skewness \u2212{abs(g):.2f} over 18 questions" in verdict.reason
    assert "the lower bound may miss more often than its level says" in verdict.reason
    assert f"Sugden's rule asks {int(28 + 25 * g * g) + 1:,} questions" in verdict.reason


def test_a_claim_on_the_tail_side_or_of_a_symmetric_difference_carries_no_caveat():
    """Only the bound away from the tail is unsure, on either side."""
    faster = _cost(LEFT_TAIL - 80)  # "B faster" rests on the upper bound, the tail's side
    assert faster.ci_high < 0 and faster.skewness < -1
    assert caveat(faster, UPPER) is None
    assert "skewed" not in decide(faster, 0.95, [], higher_is_better=False).reason
    mirror = _cost(-LEFT_TAIL - 20)  # a right tail under "B faster": the upper bound is unsure
    assert mirror.ci_high < 0
    assert "the upper bound may miss" in decide(mirror, 0.95, [], higher_is_better=False).reason
    symmetric = _cost(np.random.default_rng(1).normal(30, 5, 18))
    assert symmetric.ci_low > 0
    assert "skewed" not in decide(symmetric, 0.95, [], higher_is_better=False).reason


def test_a_difference_rule_failing_on_the_unsure_bound_says_so():
    c = _cost(LEFT_TAIL + 20)
    rule = parse_rule("latency_ms <= 0")
    result = evaluate(Requirements((rule,)), [Candidate("B", {"latency_ms": c}, {}, {})], 0.95)
    (r,) = result.results
    assert r.outcome == "fail"
    assert "the lower bound may miss more often than its level says" in r.detail
    passing = parse_rule("latency_ms <= 200")  # passes on the upper bound: nothing to say
    (p,) = evaluate(
        Requirements((passing,)), [Candidate("B", {"latency_ms": c}, {}, {})], 0.95
    ).results
    assert p.outcome == "pass" and "skewed" not in p.detail


def test_a_slice_failing_a_rule_is_judged_by_the_whole_runs_skew(tmp_path):
    """40 questions in two slices: the large speed-ups all fall in s0, and s1's 20 questions,
    slower by about 30 ms, are not skewed enough to mark a bound themselves (skewness within
    1); the whole run's skewness (over 40) marks s1's lower bound, and the failing rule's
    detail says so."""
    n = 40
    rng = np.random.default_rng(5)
    slices = np.where(np.arange(n) % 2, "s1", "s0")
    diff = np.where(slices == "s0", rng.normal(60, 10, n), rng.normal(30, 5, n))
    diff[0] = -600.0  # s0's one large speed-up
    a = rng.normal(1000, 50, n)
    base = {
        "question_id": [f"q{i:03d}" for i in range(n)],
        "question": [f"question {i}" for i in range(n)],
        "answer": ["x"] * n,
        "slice": slices,
        "correct": rng.random(n) < 0.6,
    }
    pd.DataFrame({**base, "latency_ms": a}).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame({**base, "latency_ms": a + diff}).to_parquet(tmp_path / "b.parquet")
    out = tmp_path / "r.html"
    result = CliRunner().invoke(
        main,
        ["compare", str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), "-o", str(out),
         "--require", "latency_ms[slice] <= 0", "--quiet", "--markdown", str(tmp_path / "r.md")],
    )  # fmt: skip
    assert result.exit_code == 1, result.output  # the gate fails
    report = json.loads(out.with_suffix(".json").read_text())
    own = scipy_stats.skew(diff[slices == "s1"], bias=False)
    whole = scipy_stats.skew(diff, bias=False)
    assert abs(own) <= 1 and whole < -1
    (rule,) = report["gate"]["results"]
    assert rule["outcome"] == "fail", result.output
    text = f"skewness \u2212{abs(whole):.2f} over all 40 questions"
    assert text in rule["detail"]
    assert f"Sugden's rule asks {int(28 + 25 * whole * whole) + 1:,} questions" in rule["detail"]
    # the pull request's table keeps the caveat whole: cut at 400 characters, it ended "may n…"
    markdown = (tmp_path / "r.md").read_text()
    assert "the lower bound may miss more often than its level says (Sugden" in markdown
    slice_row = report["comparisons"][0]["slices"]["slice"]["s1"]["latency_ms"]
    assert slice_row["skewness"] == pytest.approx(own, rel=1e-9)


def test_a_slice_regression_line_borrows_the_runs_skew():
    """The verdict's line for a slice regression of a cost: a slice whose own 17 questions
    show no tail is judged by the run's skewness, which the line names."""
    part = _cost(LEFT_TAIL[:-1] + 20)  # the slice: no speed-up, skewness within 1
    assert part.ci_low > 0 and abs(part.skewness) < 1
    run = _cost(LEFT_TAIL + 20)
    finding = SliceResult("slice", "s1", part, 0.001, 0.0005, True, True)
    (line,) = regression_lines([finding], 0.05, run=run)
    assert line.startswith("B regresses on slice = s1")
    assert f"skewness −{abs(run.skewness):.2f} over all 18 questions" in line
    assert "which 17 questions may not hold" in line
    (alone,) = regression_lines([finding], 0.05)
    assert "skewed" not in alone


def test_a_margin_reading_resting_on_the_unsure_bound_says_so():
    """ "B better, but by less than 100" rests on the upper bound, which a right tail leaves
    unsure, though "better" rests on the lower; "B better by at least 40" rests on the lower
    alone and carries nothing."""
    c = _cost(-LEFT_TAIL + 80)  # a right tail: the upper bound is unsure
    assert c.ci_low > 40 and c.ci_high < 100 and c.skewness > 1
    less = decide(c, 0.95, [], margin=100)
    assert "B better, but by less than 100" in less.reason
    assert "the upper bound may miss more often" in less.reason
    least = decide(c, 0.95, [], margin=40)
    assert "B better by at least 40" in least.reason and "skewed" not in least.reason


def test_a_slice_keeps_its_own_skew_beside_a_run_skewed_the_other_way():
    """The slice's right tail leaves its upper bound unsure; the run, far more skewed to the
    left, would mark only the lower: the slice's own skewness still marks the upper."""
    part = _cost(-LEFT_TAIL - 20)
    run = _cost(np.r_[np.random.default_rng(0).normal(1, 0.1, 60), -1000])
    assert part.skewness > 1 and run.skewness < -abs(part.skewness)
    text = caveat(part, UPPER, run)
    assert text is not None and f"skewness +{part.skewness:.2f} over 18 questions" in text
    assert caveat(part, LOWER, run) is not None  # the run's tail marks the lower bound


def test_a_ceiling_on_a_candidates_skewed_latency_says_its_upper_bound_is_unsure():
    """'candidate.latency_ms <= 1200' passes on the upper bound of B's own mean; B's latencies,
    1,000 ms but for one of 1,500, are skewed right (the usual shape), so the bound may sit too
    low and the pass says so, of the candidate's values."""
    from reportgen.analysis.stats import own_mean

    values = np.r_[np.random.default_rng(2).normal(1000, 30, 19), 1500.0]
    own = own_mean(
        "latency_ms", values, binary=False, n_boot=2000, confidence=0.95, seed=0, span=None
    )
    assert own.skewness == pytest.approx(scipy_stats.skew(values, bias=False), rel=1e-10)
    rule = parse_rule("candidate.latency_ms <= 1200")
    (r,) = evaluate(
        Requirements((rule,)), [Candidate("B", {}, {"latency_ms": own}, {})], 0.95
    ).results
    assert r.outcome == "pass", r.detail
    assert "the candidate's values are highly skewed" in r.detail
    assert "the upper bound may miss more often than its level says" in r.detail


def test_a_faithfulness_slice_regression_from_a_skew_its_questions_missed_says_so(tmp_path):
    """No true difference: B - A = 0.05 (Exp(1) - 1) on each of 200 questions (mean 0,
    skewness 2: most lose a little, a few gain a lot), in 20 slices of 10. Slice s06 drew no
    large gain: -0.029 [-0.037, -0.022], "B regresses" at Holm's p < 0.001, where the exact
    chance of so low a mean is 0.012 a side (0.47 once adjusted over 20 slices). Faithfulness
    lies in [0, 1], so the regression, the failing rule and the summary's row carried no
    caveat; 11.6% of such sets failed the rule (bench/simulate_skew.py). They say which bound
    the run's skew leaves unsure."""
    n = 200
    rng = np.random.default_rng(5009)
    slices = np.array([f"s{i % 20:02d}" for i in range(n)])
    a = rng.uniform(0.3, 0.6, n)
    b = np.clip(a + 0.05 * (rng.exponential(1, n) - 1), 0, 1)
    ids = [f"q{i:05d}" for i in range(n)]
    for name, values in (("a", a), ("b", b)):
        frame = pd.DataFrame({"question_id": ids, "faithfulness": values, "slice": slices})
        frame.to_parquet(tmp_path / f"{name}.parquet")
    out = tmp_path / "r.html"
    result = CliRunner().invoke(
        main,
        ["compare", str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), "-o", str(out),
         "--require", "faithfulness[slice] >= 0", "--markdown", str(tmp_path / "r.md")],
    )  # fmt: skip
    assert result.exit_code == 1, result.output  # the outcome stands; its sentences say why
    report = json.loads(out.with_suffix(".json").read_text())
    (regression,) = report["comparisons"][0]["verdict"]["regressions"]
    assert regression.startswith("B regresses on slice = s06")
    unsure = "the upper bound may miss more often than its level says"
    assert "over all 200 questions" in regression and unsure in regression
    (rule,) = report["gate"]["results"]
    assert rule["outcome"] == "fail" and unsure in rule["detail"]
    markdown = (tmp_path / "r.md").read_text()
    assert unsure in markdown
    # the summary's table of flagged slices says so too, where it read a bare "regression"
    assert "| slice | s06 | faithfulness | 10 | " in markdown
    assert "| regression, skewed |" in markdown
