"""Release gates: the rule grammar, each rule's verdict on hand-made intervals, the one-sided
level checked by simulation, and the command's exit codes end to end."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import two_run_view
from scipy import stats as scipy_stats

from reportgen.analysis import stats
from reportgen.analysis.gates import (
    Candidate,
    Requirements,
    RuleError,
    SliceEvidence,
    evaluate,
    one_sided_level,
    parse_rule,
    read_gate_file,
    requirements_from,
)
from reportgen.analysis.slices import SMALL_SLICE
from reportgen.analysis.stats import (
    IntervalSides,
    MetricComparison,
    compare_metric,
    compare_with_sides,
)
from reportgen.cli import cli
from reportgen.comparison import questions

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_A = ROOT / "sample_runs" / "fare_rules_a_baseline.parquet"
SAMPLE_B = ROOT / "sample_runs" / "fare_rules_b_reranker.parquet"
SAMPLE_C = ROOT / "sample_runs" / "fare_rules_c_prompt.parquet"


def interval(
    diff: float, low: float, high: float, n: int = 100, p: float | None = None
) -> MetricComparison:
    """A comparison with this interval; its test's p agrees with it at 95% unless given."""
    p = (0.01 if low > 0 or high < 0 else 0.5) if p is None else p
    return MetricComparison(
        "m", n, 0.5, 0.5 + diff, diff, low, high, 0, 0, n, p, None, None, "test", "interval", 0.1
    )


def judge(text: str, low: float, high: float, inconclusive: str = "fail") -> tuple[str, str]:
    rule = parse_rule(text)
    c = interval((low + high) / 2, low, high)
    candidate = Candidate("B", {rule.metric: c}, {rule.metric: c}, {})
    result = evaluate(Requirements((rule,), inconclusive), [candidate], 0.95).results[0]
    return result.outcome, result.counts_as


# --- grammar --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "metric", "op", "margin", "column"),
    [
        ("correct >= -0.02", "difference", "correct", ">=", -0.02, None),
        ("ndcg@5 > 0", "difference", "ndcg@5", ">", 0.0, None),
        ("latency_ms<=150", "difference", "latency_ms", "<=", 150.0, None),
        ("candidate.correct >= 0.80", "candidate", "correct", ">=", 0.8, None),
        ("correct[slice] >= -0.05", "slice", "correct", ">=", -0.05, "slice"),
        ("faithfulness within 0.01", "equivalence", "faithfulness", "within", 0.01, None),
        ("  cost_usd < 1e-3 ", "difference", "cost_usd", "<", 0.001, None),
        # score columns the report compares: RAGAS' settings in parentheses, promptfoo's hyphens
        (
            "factual_correctness(mode=f1) >= -0.5",
            "difference",
            "factual_correctness(mode=f1)",
            ">=",
            -0.5,
            None,
        ),  # fmt: skip
        (
            "score_context-faithfulness>0",
            "difference",
            "score_context-faithfulness",
            ">",
            0.0,
            None,
        ),  # fmt: skip
        (
            "candidate.score_context-faithfulness >= 0.5",
            "candidate",
            "score_context-faithfulness",
            ">=",
            0.5,
            None,
        ),  # fmt: skip
    ],
)
def test_rules_parse(text, kind, metric, op, margin, column):
    rule = parse_rule(text)
    assert (rule.kind, rule.metric, rule.op, rule.margin, rule.column) == (
        kind,
        metric,
        op,
        margin,
        column,
    )


def test_a_rule_copied_from_the_report_reads_its_minus_sign():
    """The report prints B - A with the minus sign U+2212; a rule copied from it was refused
    ("cannot read it"), while an Arabic-Indic zero read as 0."""
    assert parse_rule("correct >= \u22120.02").margin == -0.02
    assert parse_rule("correct within 2e\u22122").margin == 0.02
    with pytest.raises(RuleError, match="cannot read it"):
        parse_rule("correct >= \u0660")


def test_a_rule_with_the_reports_minus_sign_reads_its_margin_as_its_numbers():
    """A rule copied from the page with U+2212 printed its margin so ("below \u22120.05") in a
    line whose difference and bounds read "-0.125" and "[-0.2644, ...]": one line, two minus
    signs. The line writes the margin as it writes the numbers it is compared with."""
    rule = parse_rule("correct >= \u22120.05")
    candidate = Candidate("B", {"correct": interval(-0.125, -0.2644, 0.004845)}, {}, {})
    overall = evaluate(Requirements((rule,)), [candidate], 0.95).results[0].detail
    a = np.ones(48)
    b = np.r_[np.zeros(8), np.ones(40)]
    _, per_slice, _ = judged_slice("correct[slice] >= \u22120.05", a, b, binary=True)
    for detail in (overall, per_slice):
        assert "\u2212" not in detail
        assert "-0.05" in detail
    assert "difference -0.1667" in per_slice


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("correct => 0", "cannot read it"),
        ("correct >= ", "cannot read it"),
        ("correct >= 0 and ndcg > 0", "cannot read it"),
        ("candidate.correct[slice] >= 0.8", "cannot be per slice"),
        ("candidate.correct within 0.1", "overall difference only"),
        ("correct within 0", "above 0"),
    ],
)
def test_bad_rules_say_why(text, needle):
    with pytest.raises(RuleError, match=needle):
        parse_rule(text)


# --- verdicts on hand-made intervals ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "low", "high", "outcome"),
    [
        # non-inferiority reads the lower bound
        ("correct >= -0.02", -0.02, 0.05, "pass"),  # bound exactly on the margin: holds
        ("correct >= -0.02", -0.03, 0.05, "inconclusive"),  # straddles -0.02
        ("correct >= -0.02", -0.09, -0.021, "fail"),  # wholly below
        # superiority: strictly above
        ("ndcg@5 > 0", 0.001, 0.02, "pass"),
        ("ndcg@5 > 0", 0.0, 0.02, "inconclusive"),
        ("ndcg@5 > 0", -0.02, 0.0, "fail"),
        # a ceiling reads the upper bound
        ("latency_ms <= 150", 80, 150, "pass"),
        ("latency_ms <= 150", 120, 151, "inconclusive"),
        ("latency_ms <= 150", 150.5, 200, "fail"),
        ("latency_ms < 150", 80, 150, "inconclusive"),
        ("latency_ms < 150", 150, 160, "fail"),
        # the candidate's own interval
        ("candidate.correct >= 0.80", 0.81, 0.9, "pass"),
        ("candidate.correct >= 0.80", 0.7, 0.79, "fail"),
        # equivalence: the whole interval inside +-0.01
        ("faithfulness within 0.01", -0.01, 0.01, "pass"),
        ("faithfulness within 0.01", -0.005, 0.02, "inconclusive"),
        ("faithfulness within 0.01", 0.011, 0.03, "fail"),
        ("faithfulness within 0.01", -0.03, -0.011, "fail"),
    ],
)
def test_rule_verdicts(text, low, high, outcome):
    assert judge(text, low, high)[0] == outcome


@pytest.mark.parametrize(
    ("text", "low", "high", "outcome"),
    [
        ("correct > 0", 1.0, 1.0, "inconclusive"),  # two questions, both fixed: p 0.5
        ("correct >= 0.1", 0.5, 1.0, "inconclusive"),
        ("latency_ms < 0", -20, -10, "inconclusive"),
        ("correct >= 0", 1.0, 1.0, "pass"),  # no worse than A needs no difference
        ("correct >= -0.02", 1.0, 1.0, "pass"),
        ("correct > 0", -1.0, -1.0, "fail"),
    ],
)
def test_a_difference_the_test_does_not_find_passes_no_superiority_rule(text, low, high, outcome):
    rule = parse_rule(text)
    c = interval((low + high) / 2, low, high, n=2, p=0.5)
    candidate = Candidate("B", {rule.metric: c}, {rule.metric: c}, {})
    (result,) = evaluate(Requirements((rule,), "fail"), [candidate], 0.95).results
    assert result.outcome == outcome
    if outcome == "inconclusive":
        assert result.detail.endswith(
            "but the test test of no difference gives p = 0.5 (over 2 questions), so the "
            "interval and the test disagree"
        )


@pytest.mark.parametrize(
    ("text", "low", "high", "outcome"),
    [
        ("correct >= 0", -1.0, -1.0, "inconclusive"),  # two questions, both broken: p 0.5
        ("correct >= -0.02", -1.0, -1.0, "inconclusive"),
        ("latency_ms <= 0", 10, 20, "inconclusive"),
        ("faithfulness within 0.01", 0.02, 0.03, "inconclusive"),
        ("correct > 0", -1.0, -1.0, "fail"),  # B no better than A needs no difference
        ("correct >= 0.1", -1.0, -1.0, "fail"),
        ("latency_ms < 0", 0.0, 0.0, "fail"),
    ],
)
def test_a_loss_the_test_does_not_find_fails_no_rule_only_a_loss_breaks(text, low, high, outcome):
    """5 of 400 questions broken, none fixed: the interval [-0.029, -0.003] lies below zero,
    McNemar's exact p is 0.0625, and the verdict calls it borderline; 'correct >= 0', which
    only a loss can break, failed on the interval alone, where 'correct > 0' on 5 fixed was
    inconclusive. Either outcome that needs B to differ from A needs the test to find it."""
    rule = parse_rule(text)
    c = interval((low + high) / 2, low, high, n=2, p=0.5)
    candidate = Candidate("B", {rule.metric: c}, {rule.metric: c}, {})
    (result,) = evaluate(Requirements((rule,), "fail"), [candidate], 0.95).results
    assert (result.outcome, result.counts_as) == (outcome, "fail")
    disagree = (
        "; but the test test of no difference gives p = 0.5 (over 2 questions), so the "
        "interval and the test disagree"
    )
    assert result.detail.endswith(disagree) == (outcome == "inconclusive")


@pytest.mark.parametrize(
    ("low", "high", "shown"),
    [
        (0.011, 0.03, "lower bound 0.011 > 0.01"),
        (-0.03, -0.0100001, "upper bound -0.0100001 < -0.01"),
    ],
)
def test_a_failing_equivalence_names_the_bound_past_its_margin(low, high, shown):
    rule = parse_rule("faithfulness within 0.01")
    c = interval((low + high) / 2, low, high, p=0.001)
    (result,) = evaluate(
        Requirements((rule,)), [Candidate("B", {rule.metric: c}, {}, {})], 0.95
    ).results
    assert result.outcome == "fail"
    assert result.detail.endswith(f"equivalence margin \u00b10.01; one-sided 97.5% {shown}")


_COMPARED = re.compile(r"bound (\S+) vs (>=|>|<=|<) (\S+)$")
_HOLDS = {">=": float.__ge__, ">": float.__gt__, "<=": float.__le__, "<": float.__lt__}


@pytest.mark.parametrize(
    ("text", "low", "high", "outcome", "shown"),
    [
        # a lower bound of -0.012966795 passes '>= -0.0129668' and read "-0.01297 vs >= ..."
        ("faithfulness >= -0.0129668", -0.012966795, 0.1, "pass", "-0.01296679"),
        ("faithfulness >= -0.01296679", -0.012966795, 0.1, "inconclusive", "-0.01297"),
        ("faithfulness > -0.0129668", -0.0129668, 0.1, "inconclusive", "-0.0129668"),
        ("cost_usd <= 1e-3", -0.1, 0.00100004, "inconclusive", "0.00100004"),
        ("cost_usd < 1E-3", -0.1, 0.00099996, "pass", "0.00099996"),
        ("correct >= -0.02", -0.0123456, 0.1, "pass", "-0.01235"),  # 4 digits where they do
    ],
)
def test_the_printed_bound_and_margin_compare_as_the_rule_decides(text, low, high, outcome, shown):
    rule = parse_rule(text)
    c = interval(0.0, low, high, p=0.5)
    gate = evaluate(Requirements((rule,)), [Candidate("B", {rule.metric: c}, {}, {})], 0.95)
    (result,) = gate.results
    assert result.outcome == outcome
    bound, op, margin = _COMPARED.search(result.detail).groups()
    assert (bound, op, margin) == (shown, rule.op, text.split()[-1])  # the margin as written
    assert _HOLDS[op](float(bound), float(margin)) == (outcome == "pass")


_BROKEN = re.compile(r"one-sided 97.5% (lower|upper) bound (\S+) (>=|>|<=|<) (\S+)$")


@pytest.mark.parametrize(
    ("text", "low", "high", "bound", "shown"),
    [
        ("correct >= -0.02", -0.12, -0.04, "upper", "-0.04"),
        ("correct > -0.02", -0.12, -0.02, "upper", "-0.02"),  # on the margin breaks '>'
        ("latency_ms <= 50", 60.0, 90.0, "lower", "60"),
        ("cost_usd < 1e-3", 0.001, 0.002, "lower", "0.001"),
        ("faithfulness >= -0.01296", -0.1, -0.012960004, "upper", "-0.012960004"),
    ],
)
def test_a_failing_rule_prints_the_bound_its_failure_rests_on(text, low, high, bound, shown):
    """A failing '>= -0.02' with interval [-0.12, -0.04] printed 'lower bound -0.12 vs >=
    -0.02', which an open rule prints too: the fail rests on the upper bound, below the margin
    (as the skew caveat on that bound already said)."""
    rule = parse_rule(text)
    c = interval((low + high) / 2, low, high, p=0.001)
    gate = evaluate(Requirements((rule,)), [Candidate("B", {rule.metric: c}, {}, {})], 0.95)
    (result,) = gate.results
    assert result.outcome == "fail"
    side, value, op, margin = _BROKEN.search(result.detail).groups()
    assert (side, value, margin) == (bound, shown, text.split()[-1])
    assert op == {">=": "<", ">": "<=", "<=": ">", "<": ">="}[rule.op]
    assert _HOLDS[op](float(value), float(margin))  # the printed bound is past the margin


def test_an_equivalence_interval_prints_its_ends_on_their_side_of_the_margin():
    rule = parse_rule("faithfulness within 0.0129668")
    c = interval(0.0, -0.012966795, 0.012966795, p=0.5)
    gate = evaluate(Requirements((rule,)), [Candidate("B", {rule.metric: c}, {}, {})], 0.95)
    (result,) = gate.results
    assert result.outcome == "pass"
    assert result.detail.endswith(
        "interval [-0.01296679, 0.01296679], equivalence margin \u00b10.0129668"
    )


def test_inconclusive_counts_as_the_policy_says():
    assert judge("correct >= -0.02", -0.03, 0.05) == ("inconclusive", "fail")
    assert judge("correct >= -0.02", -0.03, 0.05, inconclusive="pass") == ("inconclusive", "pass")
    assert judge("correct >= -0.02", -0.09, -0.03, inconclusive="pass") == ("fail", "fail")


def test_no_scored_question_is_inconclusive():
    rule = parse_rule("correct >= 0")
    empty = interval(float("nan"), float("nan"), float("nan"), n=0)
    result = evaluate(Requirements((rule,)), [Candidate("B", {"correct": empty}, {}, {})], 0.95)
    assert result.results[0].outcome == "inconclusive" and not result.passed


def test_every_rule_applies_to_every_candidate():
    rules = (parse_rule("correct >= 0"), parse_rule("ndcg@5 > 0"))
    good = {"correct": interval(0.1, 0.05, 0.15), "ndcg@5": interval(0.1, 0.05, 0.15)}
    bad = {"correct": interval(0.1, 0.05, 0.15), "ndcg@5": interval(-0.1, -0.15, -0.05)}
    gate = evaluate(
        Requirements(rules), [Candidate("B", good, {}, {}), Candidate("C", bad, {}, {})], 0.9
    )
    assert [(r.candidate, r.rule, r.outcome) for r in gate.results] == [
        ("B", "correct >= 0", "pass"),
        ("B", "ndcg@5 > 0", "pass"),
        ("C", "correct >= 0", "pass"),
        ("C", "ndcg@5 > 0", "fail"),
    ]
    assert gate.passing_candidates() == ["B"] and gate.outcome == "fail"
    assert gate.one_sided_level == pytest.approx(0.95)


def test_one_sided_level_of_a_two_sided_interval():
    assert one_sided_level(0.95) == pytest.approx(0.975)
    assert one_sided_level(0.90) == pytest.approx(0.95)


def slice_evidence(value: str, diffs: np.ndarray) -> SliceEvidence:
    return SliceEvidence(
        value,
        *compare_with_sides(
            "m", np.zeros_like(diffs), diffs, binary=False, n_boot=2000, confidence=0.95, seed=1
        ),
    )


def percentile_only(n: int = 100) -> IntervalSides:
    """The sides of a hand-made slice: its bootstrap means' expanded percentile interval alone."""
    return IntervalSides(percentile=n)


def test_slice_rule_fails_only_on_a_slice_credibly_below():
    rng = np.random.default_rng(3)
    fine = [slice_evidence(v, rng.normal(0.0, 0.1, 200)) for v in "abc"]
    harmed = slice_evidence("d", rng.normal(-0.3, 0.1, 200))  # far below -0.05
    rule = parse_rule("m[slice] >= -0.05")
    ok = evaluate(Requirements((rule,)), [Candidate("B", {}, {}, {("m", "slice"): fine})], 0.95)
    bad = evaluate(
        Requirements((rule,)), [Candidate("B", {}, {}, {("m", "slice"): [*fine, harmed]})], 0.95
    )
    assert ok.results[0].outcome == "pass"
    assert bad.results[0].outcome == "fail" and "slice = d" in bad.results[0].detail


def test_a_p_no_resample_reaches_is_a_bound_not_zero():
    """A slice of 100 questions whose 2,000 bootstrap means all lie past the margin has p 0 of
    them: the detail says p is below one resample's share, widened as the expanded percentile
    interval is (Phi(sqrt(n / (n - 1)) t(n - 1, p)) = 1 / 2000 solved for p) and times the two
    slices Holm's adjustment can multiply it by; not p 0."""
    rule = parse_rule("m[slice] >= -0.05")
    harmed = SliceEvidence(
        "d", interval(-0.3, -0.35, -0.25, p=0.001), np.full(2000, -0.3), percentile_only()
    )
    calm = SliceEvidence("a", interval(0.1, 0.0, 0.2), np.full(2000, 0.1), percentile_only())
    slices = {("m", "slice"): [calm, harmed]}
    (result,) = evaluate(Requirements((rule,)), [Candidate("B", {}, {}, slices)], 0.95).results
    one = scipy_stats.t.cdf(scipy_stats.norm.ppf(1 / 2000) * np.sqrt(99 / 100), 99)
    assert result.outcome == "fail"
    assert f"one-sided p < {2 * one:.2g} of its interval" in result.detail
    assert f"{2 * one:.2g}" == "0.0015"


def test_slice_rule_adjusts_for_the_number_of_slices():
    """A slice whose unadjusted one-sided p is 0.01 is credibly below alone (0.01 < 0.025) but
    not among five slices, where Holm multiplies it by 5."""
    rule = parse_rule("m[slice] >= 0")
    means = np.r_[np.full(9, 0.1), np.full(991, -0.1)]  # (9 + 1) / 1001 ~ 0.01 at or above 0
    c = interval(-0.1, -0.2, 0.0, p=0.001)  # the slice table's test finds the loss
    edge = SliceEvidence("edge", c, means, percentile_only())
    calm = [
        SliceEvidence(f"s{i}", interval(0.1, 0.0, 0.2), np.full(1000, 0.1), percentile_only())
        for i in range(4)
    ]

    def outcome(slices: list[SliceEvidence]) -> str:
        candidate = Candidate("B", {}, {}, {("m", "slice"): slices})
        return evaluate(Requirements((rule,)), [candidate], 0.95).results[0].outcome

    assert outcome([edge]) == "fail"
    assert outcome([edge, *calm]) == "pass"


@pytest.mark.parametrize(("n", "outcome"), [(SMALL_SLICE - 1, "pass"), (SMALL_SLICE, "fail")])
def test_slice_rule_fails_only_on_a_slice_the_table_would_call_a_finding(n, outcome):
    """Every resample of the slice lies far below the margin (adjusted p 1 / 1001), yet under
    SMALL_SLICE questions a slice gives a direction, not proof, as in the slice table: the rule
    passes and says why (a large slice beside it could have failed it)."""
    rule = parse_rule("m[slice] >= -0.05")
    small = SliceEvidence(
        "small", interval(-0.5, -0.6, -0.4, n=n), np.full(1000, -0.5), percentile_only(n)
    )
    calm = SliceEvidence("calm", interval(0.1, 0.0, 0.2), np.full(1000, 0.1), percentile_only())
    result = evaluate(
        Requirements((rule,)), [Candidate("B", {}, {}, {("m", "slice"): [small, calm]})], 0.95
    ).results[0]
    assert result.outcome == outcome and "slice = small" in result.detail
    assert ("give a direction, not proof" in result.detail) == (outcome == "pass")


def test_a_slice_rule_over_slices_too_small_to_fail_it_is_inconclusive(tmp_path):
    """B breaks all 4 questions, in 2 slices of 2: no slice of under SMALL_SLICE questions can
    fail the rule, so it passed, checking nothing, where slices of one question were
    inconclusive. It is inconclusive, and says why."""
    rule = parse_rule("m[slice] >= -0.05")
    small = [
        SliceEvidence(
            name, interval(-1.0, -1.0, -1.0, n=2), np.full(1000, -1.0), percentile_only(2)
        )
        for name in ("x", "y")
    ]
    (result,) = evaluate(
        Requirements((rule,)), [Candidate("B", {}, {}, {("m", "slice"): small})], 0.95
    ).results
    assert result.outcome == "inconclusive"
    assert result.detail == (
        f"every slice of slice has fewer than {SMALL_SLICE} scored questions, which give a "
        "direction, not proof (as in the slice table): no slice could fail the rule"
    )
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    slices = ["x", "x", "y", "y"]
    ids = [f"q{i}" for i in range(4)]
    pd.DataFrame({"question_id": ids, "slice": slices, "correct": [True] * 4}).to_parquet(a)
    pd.DataFrame({"question_id": ids, "slice": slices, "correct": [False] * 4}).to_parquet(b)
    code, out, err, _ = compare(tmp_path, a, b, "--require", "correct[slice] >= -0.1")
    assert code == 1, err
    assert "inconclusive (counts as fail)  B  correct[slice] >= -0.1: every slice of slice" in out


@pytest.mark.parametrize(
    ("broken", "outcome", "p", "untested"),
    [(4, "pass", 0.125, False), (5, "pass", 0.0625, True), (8, "fail", 2 * 0.5**8, False)],
)
def test_a_slice_rule_broken_only_by_a_loss_needs_the_slice_tables_test(
    broken, outcome, p, untested
):
    """'correct[slice] >= -0.05' breaks only where B loses. A slice of 10 with 4 questions
    broken and none fixed lies below the margin in all but 0.6^10 of the resamples, but its
    interval (the wider of the bootstrap and Tango's score interval) reaches -0.0115, above the
    margin: the rule passes on the interval alone, where it failed on the bootstrap's share.
    With 5 broken the interval lies below the margin (upper bound -0.084), but McNemar's exact
    test, the slice table's, gives p 2 / 32: the table calls it a direction, and so does the
    rule. With 8 broken the test finds it (p 2^-7) and the rule fails."""
    a = np.ones(10)
    b = np.r_[np.zeros(broken), np.ones(10 - broken)]
    c, means, sides = compare_with_sides(
        "correct", a, b, binary=True, n_boot=2000, confidence=0.95, seed=1
    )
    assert c.p == pytest.approx(p) and (means >= -0.05).mean() < 0.01
    assert (c.ci_high < -0.05) == (broken > 4)
    evidence = [SliceEvidence("s", c, means, sides)]
    candidate = Candidate("B", {}, {}, {("correct", "slice"): evidence})
    result = evaluate(Requirements((parse_rule("correct[slice] >= -0.05"),)), [candidate], 0.95)
    (checked,) = result.results
    assert checked.outcome == outcome
    sentence = f"does not find B worse there (p {p:.4g}, Holm-adjusted, vs 0.05)"
    assert (sentence in checked.detail) == untested


Z = 1.959963984540054  # the normal quantile of the one-sided 97.5% level


def judged_slice(
    text: str, a: np.ndarray, b: np.ndarray, binary: bool, clusters: np.ndarray | None = None
) -> tuple[str, str, SliceEvidence]:
    """The outcome and detail of a per-slice rule on one slice, as the gate reads it."""
    rule = parse_rule(text)
    evidence = SliceEvidence(
        "s",
        *compare_with_sides(
            rule.metric, a, b, binary=binary, n_boot=4000, confidence=0.95, seed=0,
            clusters=clusters,
        ),
    )  # fmt: skip
    candidate = Candidate("B", {}, {}, {(rule.metric, "slice"): [evidence]})
    (result,) = evaluate(Requirements((rule,)), [candidate], 0.95).results
    return result.outcome, result.detail, evidence


def reported_p(detail: str) -> float:
    match = re.search(r"one-sided p ([0-9.e-]+) of its interval", detail)
    assert match, detail
    return float(match[1])


@pytest.mark.parametrize(
    ("text", "fixed", "bound", "p"),
    [
        # none of 10 changed: every resample is no change, so the bootstrap alone put all its
        # means below 0.05 (p 1 / 4001); Tango's statistic at d with nothing changed is
        # -sqrt(n d / (1 - d)): upper bound Z^2 / (n + Z^2), p Phi(-sqrt(n d / (1 - d)))
        (
            "correct[slice] >= 0.05",
            0,
            Z * Z / (10 + Z * Z),
            scipy_stats.norm.cdf(-np.sqrt(0.5 / 0.95)),
        ),
        # all 10 fixed: every resample is +1, above 0.9; Tango's statistic at d is
        # sqrt(n (1 - d) / (1 + d)): lower bound (n - Z^2) / (n + Z^2), p Phi(-sqrt(1 / 1.9))
        (
            "correct[slice] <= 0.9",
            10,
            (10 - Z * Z) / (10 + Z * Z),
            scipy_stats.norm.cdf(-np.sqrt(1 / 1.9)),
        ),
        # all 10 fixed against >= 0.9: the difference, +1, lies above the margin, so nothing
        # says it lies below: p 1
        ("correct[slice] >= 0.9", 10, 1.0, 1.0),
    ],
)
def test_a_slice_fails_no_rule_its_score_interval_still_reaches(text, fixed, bound, p):
    """A slice of 10 questions whose every resample lies past the margin failed the rule on
    the bootstrap alone; the score interval the report prints reaches past the margin, so the
    slice passes, with the score test's one-sided p at the margin (closed forms above)."""
    a = np.r_[np.zeros(fixed), np.ones(10 - fixed)] if fixed else np.r_[np.zeros(5), np.ones(5)]
    b = np.ones(10) if fixed else a.copy()
    outcome, detail, evidence = judged_slice(text, a, b, binary=True)
    c = evidence.comparison
    printed = c.ci_low if "<=" in text else c.ci_high
    assert printed == pytest.approx(bound, abs=1e-9)
    assert outcome == "pass", detail
    assert reported_p(detail) == pytest.approx(p, abs=5e-5)
    assert f"({c.interval}) lying wholly" in detail


def test_a_clustered_binary_slice_with_nothing_changed_reads_the_bound_over_its_clusters():
    """10 questions in 2 documents, none changed: the cluster bootstrap and t over the
    documents both read [0, 0] (no spread between documents), and 'correct[slice] >= 0.05'
    failed. Tango's score interval over the 10 questions reaches Z^2 / (10 + Z^2) = 0.2775; the
    documents are the units, so the interval takes Wilson's bound on the share of the 2 that
    could differ, Z^2 / (2 + Z^2) = 0.6576, and the slice passes with a p at 0.05 at least the
    score test's, Phi(-sqrt(0.5 / 0.95))."""
    a = np.r_[np.zeros(5), np.ones(5)]
    outcome, detail, evidence = judged_slice(
        "correct[slice] >= 0.05", a, a.copy(), binary=True, clusters=np.arange(10) // 5
    )
    c = evidence.comparison
    assert (c.ci_low, c.ci_high) == pytest.approx((-Z * Z / (2 + Z * Z), Z * Z / (2 + Z * Z)))
    assert c.interval == "no spread: Wilson's bound on the share of clusters that could differ"
    assert outcome == "pass", detail
    assert reported_p(detail) >= scipy_stats.norm.cdf(-np.sqrt(0.5 / 0.95)) - 5e-5


def test_a_continuous_slice_reads_students_t_at_the_margin():
    """10 differences of mean 0.2 and sd 0.2 against 'm[slice] >= 0.33': Student's t at the
    margin gives p 0.035 (scipy), and the bootstrap means reach 0.33 in only about 1% of
    resamples, which failed the slice. The printed interval reaches above 0.33, so it passes,
    its p at least Student's."""
    q = scipy_stats.norm.ppf(np.linspace(0.05, 0.95, 10))
    d = 0.2 + 0.2 * (q - q.mean()) / q.std(ddof=1)
    outcome, detail, evidence = judged_slice("m[slice] >= 0.33", np.zeros(10), d, binary=False)
    student = scipy_stats.ttest_1samp(d, 0.33, alternative="less").pvalue
    assert student == pytest.approx(0.0350, abs=5e-4)
    assert (evidence.means >= 0.33).mean() < 0.025  # the bootstrap alone: below alpha
    assert evidence.comparison.ci_high > 0.33
    assert outcome == "pass", detail
    assert reported_p(detail) >= student - 1e-4


def test_a_clustered_slice_reads_t_over_its_clusters_at_the_margin():
    """4 documents of 5 questions, document means 0.1 to 0.25, against 'm[slice] >= 0.27':
    no cluster-bootstrap mean reaches 0.27 (every document lies below it), which failed the
    slice; Student's t over the 4 document means at 0.27 (scipy) gives p 0.030, the printed
    interval reaches 0.278, and the slice passes with that p."""
    documents = np.array([0.1, 0.15, 0.2, 0.25])
    d = np.repeat(documents, 5) + np.tile([-0.1, -0.05, 0.0, 0.05, 0.1], 4)
    clusters = np.repeat(np.arange(4), 5)
    outcome, detail, evidence = judged_slice(
        "m[slice] >= 0.27", np.zeros(20), d, binary=False, clusters=clusters
    )
    student = scipy_stats.ttest_1samp(documents, 0.27, alternative="less").pvalue
    assert (evidence.means >= 0.27).sum() == 0
    assert evidence.comparison.ci_high > 0.27
    assert outcome == "pass", detail
    assert reported_p(detail) == pytest.approx(student, abs=1e-4)


@pytest.mark.parametrize(("margin", "outcome"), [(0.27, "pass"), (0.40, "fail")])
def test_a_clustered_slice_past_its_interval_still_fails(margin, outcome):
    """The same 4 documents against a margin past the interval's upper bound (0.278): t over
    the documents gives p 0.0025 at 0.40, and the rule fails."""
    documents = np.array([0.1, 0.15, 0.2, 0.25])
    d = np.repeat(documents, 5) + np.tile([-0.1, -0.05, 0.0, 0.05, 0.1], 4)
    got, detail, _ = judged_slice(
        f"m[slice] >= {margin}", np.zeros(20), d, binary=False, clusters=np.repeat(np.arange(4), 5)
    )
    assert got == outcome, detail
    student = scipy_stats.ttest_1samp(documents, margin, alternative="less").pvalue
    assert (student < 0.025) == (outcome == "fail")


def tied_slices(op: str, bounds: list[float]) -> Candidate:
    """Slices far on the rule's side of every margin in the bootstrap (so that Holm caps every
    adjusted p at 1), whose intervals' bounds are ``bounds``: only the bound can tell them
    apart."""
    safe = np.full(1000, 1e6 if op == ">=" else -1e6)
    intervals = [(b, b + 0.5) if op == ">=" else (b - 0.5, b) for b in bounds]
    slices = [
        SliceEvidence(f"s{i}", interval((low + high) / 2, low, high), safe, percentile_only())
        for i, (low, high) in enumerate(intervals)
    ]
    return Candidate("B", {}, {}, {("m", "slice"): slices})


@pytest.mark.parametrize(
    ("text", "bounds", "named"),
    [
        ("m[slice] >= -0.3", [-0.1, -0.41, -0.2], "slice = s1"),  # the lowest lower bound
        ("m[slice] <= 150", [100.0, 140.0, 125.0], "slice = s1"),  # the highest upper bound
    ],
)
def test_slice_rule_names_the_worst_bound_when_adjusted_p_values_tie(text, bounds, named):
    rule = parse_rule(text)
    result = evaluate(Requirements((rule,)), [tied_slices(rule.op, bounds)], 0.95).results[0]
    assert result.outcome == "pass" and "one-sided p 1 of its interval" in result.detail
    assert f"{named} is the likeliest" in result.detail
    assert (result.low, result.high)[rule.op == "<="] == pytest.approx(bounds[1])


def test_slice_rule_names_a_slice_that_could_fail_when_none_is_near_failing():
    """Every estimate on the rule's side: a wide slice of 4 questions has the lower p (its
    estimate is fewer standard errors from the margin) and the lowest bound, but it can never
    fail the rule; the 40-question slice whose estimate lies nearest the margin is named."""
    rng = np.random.default_rng(5)
    small = slice_evidence("small", np.array([0.9, -0.4, 0.8, -0.1]))
    big = slice_evidence("big", rng.normal(-0.05, 0.1, 40))
    assert small.comparison.ci_low < big.comparison.ci_low
    rule = parse_rule("m[slice] >= -0.2")
    result = evaluate(
        Requirements((rule,)), [Candidate("B", {}, {}, {("m", "slice"): [small, big]})], 0.95
    ).results[0]
    assert result.outcome == "pass"
    assert "slice = big is the likeliest below -0.2" in result.detail, result.detail


def test_slice_rule_counts_the_slices_it_adjusted_over():
    """A slice without a scored question takes no part in Holm's adjustment, nor in its count."""
    rule = parse_rule("m[slice] >= -0.3")
    candidate = tied_slices(">=", [-0.1, -0.2])
    empty = SliceEvidence(
        "none", interval(float("nan"), float("nan"), float("nan"), 0), np.array([]), IntervalSides()
    )
    candidate.slices[("m", "slice")].append(empty)
    result = evaluate(Requirements((rule,)), [candidate], 0.95).results[0]
    assert "Holm-adjusted over 2 slices" in result.detail


def test_non_inferiority_at_the_margin_passes_at_most_the_one_sided_rate():
    """Known truth: the true difference sits exactly on the margin, so any pass is wrong; a
    95% interval's lower bound should let through about 2.5% (one-sided 97.5%)."""
    rng = np.random.default_rng(20261130)
    rule = parse_rule("m >= -0.02")
    passes = 0
    sims = 600
    for i in range(sims):
        diffs = rng.normal(-0.02, 0.2, 300)
        c, _ = compare_metric(
            "m", np.zeros(300), diffs, binary=False, n_boot=1000, confidence=0.95, seed=i
        )
        gate = evaluate(Requirements((rule,)), [Candidate("B", {"m": c}, {}, {})], 0.95)
        passes += gate.passed
    rate = passes / sims
    assert 0.005 <= rate <= 0.05, rate  # 2.5% +- 3 binomial standard errors, roughly


def slice_rule_fails(truths: list[float], sims: int, seed: int) -> float:
    """Share of simulations in which ``m[slice] >= -0.05`` fails, slices of 80 questions with
    true differences ``truths`` (normal noise, sd 0.2)."""
    rng = np.random.default_rng(seed)
    rule = parse_rule("m[slice] >= -0.05")
    fails = 0
    for i in range(sims):
        slices = []
        for j, truth in enumerate(truths):
            diffs = rng.normal(truth, 0.2, 80)
            evidence = compare_with_sides(
                "m", np.zeros(80), diffs, binary=False, n_boot=500, confidence=0.95, seed=i
            )
            slices.append(SliceEvidence(str(j), *evidence))
        candidate = Candidate("B", {}, {}, {("m", "slice"): slices})
        fails += not evaluate(Requirements((rule,)), [candidate], 0.95).passed
    return fails / sims


def test_slice_rule_false_alarms_stay_under_the_one_sided_level():
    """Known truth: five slices exactly at the margin, none below it, so any failure is a false
    alarm; Holm keeps the chance of one across the five near or under 2.5% (unadjusted, it
    would approach 1 - 0.975^5 = 12%)."""
    assert slice_rule_fails([-0.05] * 5, sims=300, seed=11) <= 0.05


def test_slice_rule_catches_a_slice_well_below_the_margin():
    """Known truth: one slice of five sits at -0.2, 0.15 below the margin (about 5.3 standard
    errors); the rule should fail nearly always."""
    assert slice_rule_fails([0.0, 0.0, 0.0, 0.0, -0.2], sims=100, seed=12) >= 0.95


# --- the command ----------------------------------------------------------------------------


def rows(n: int, correct_upto: int, latency: float) -> list[dict]:
    return [
        {
            "question_id": f"q{i}",
            "slice": "odd" if i % 2 else "even",
            "correct": i < correct_upto,
            "faithfulness": 0.5,
            "latency_ms": latency + i % 3,
        }
        for i in range(n)
    ]


@pytest.fixture
def logs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pd.DataFrame(rows(40, 20, 100.0)).to_parquet(a)
    pd.DataFrame(rows(40, 34, 160.0)).to_parquet(b)  # +14 correct, +60 ms
    return a, b


def compare(tmp_path: Path, a: Path, b: Path, *extra: str) -> tuple[int, str, str, Path]:
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    args = ["compare", str(a), str(b), "-o", str(out / "r.html"), *extra]
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.stdout, result.stderr, out


def test_passing_gate_exits_0_and_prints_each_rule(logs, tmp_path):
    # faithfulness unchanged on 40 questions: +-z^2 / (40 + z^2) = +-0.088 could differ unseen
    code, out, err, folder = compare(
        tmp_path, *logs, "--require", "correct > 0", "--require", "faithfulness within 0.1"
    )
    assert code == 0, err
    assert "gate: pass" in out
    assert "pass  B  correct > 0: difference 0.35" in out
    gate = json.loads((folder / "r.json").read_text())["gate"]
    assert gate["outcome"] == "pass" and gate["one_sided_level"] == pytest.approx(0.975)
    assert [r["outcome"] for r in gate["results"]] == ["pass", "pass"]


def test_failing_gate_exits_1_after_writing_every_output(logs, tmp_path):
    code, out, err, folder = compare(
        tmp_path,
        *logs,
        "--require",
        "latency_ms <= 50",
        "--markdown",
        str(tmp_path / "out" / "s.md"),
        "--junit",
        str(tmp_path / "out" / "g.xml"),
    )
    assert code == 1, err
    assert "Traceback" not in err
    assert sorted(p.name for p in folder.iterdir()) == ["g.xml", "r.html", "r.json", "s.md"]
    result = json.loads((folder / "r.json").read_text())["gate"]["results"][0]
    assert result["outcome"] == "fail"
    assert result["low"] == pytest.approx(60, abs=1)  # +60 ms in every question, +-1 from i % 3
    assert "fail  B  latency_ms <= 50" in out


def test_inconclusive_rule_follows_the_option(logs, tmp_path):
    rule = ("--require", "correct >= 0.3")  # the difference is 0.35, its interval straddles 0.3
    code, out, _, _ = compare(tmp_path, *logs, *rule)
    assert code == 1 and "inconclusive (counts as fail)" in out
    code, out, _, _ = compare(tmp_path, *logs, *rule, "--inconclusive", "pass")
    assert code == 0 and "inconclusive (counts as pass)" in out


def test_gate_file_rules_join_the_command_line_ones(logs, tmp_path):
    gate = tmp_path / "gate.toml"
    gate.write_text('require = ["correct >= -0.02", "candidate.correct >= 0.97"]\n')
    code, out, err, folder = compare(
        tmp_path, *logs, "--gate", str(gate), "--require", "correct[slice] >= -0.05"
    )
    assert code == 1, err  # the candidate is 34/40 = 0.85 correct
    results = json.loads((folder / "r.json").read_text())["gate"]["results"]
    assert [(r["rule"], r["outcome"]) for r in results] == [
        ("correct[slice] >= -0.05", "pass"),
        ("correct >= -0.02", "pass"),
        ("candidate.correct >= 0.97", "fail"),
    ]
    assert results[2]["estimate"] == pytest.approx(34 / 40)


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (("--require", "recall@5 >= 0"), "no metric 'recall@5' in these logs; name one of correct"),
        (("--require", "correct >> 0"), "cannot read it"),
        # a cost column the logs lack (one they log is compared: see the cost-column test)
        (("--require", "candidate.cost_usd <= 0.01"), "no metric 'cost_usd'"),
        (("--require", "correct[topic] >= 0"), "pass --slice topic"),
        # the cost columns a candidate rule may name were left out of the names offered
        (
            ("--require", "candidate.nosuch >= 0"),
            "no metric 'nosuch' in these logs; name one of correct, faithfulness, latency_ms",
        ),
    ],
)
def test_bad_rule_exits_2_and_writes_nothing(logs, tmp_path, extra, needle):
    code, out, err, folder = compare(tmp_path, *logs, *extra)
    assert code == 2, out
    assert err.strip().splitlines() == [err.strip()] and needle in err
    assert err.startswith("ragreport: error: rule ")
    assert list(folder.iterdir()) == []


def test_a_slice_rule_on_logs_of_no_slice_column_says_so_in_words(tmp_path):
    """It said "name one of (none)", and "(none)" is how a null slice value reads."""
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pd.DataFrame(rows(40, 20, 100.0)).drop(columns="slice").to_parquet(a)
    pd.DataFrame(rows(40, 24, 100.0)).drop(columns="slice").to_parquet(b)
    code, _, err, _ = compare(tmp_path, a, b, "--require", "correct[topic] >= 0")
    assert code == 2
    assert err.strip().endswith(
        "the report has no slice column 'topic'; pass --slice topic or log a slice column"
    )


def too_fine_logs(tmp_path: Path) -> tuple[Path, Path]:
    """Two logs whose slice column has 51 values, one more than the report slices by."""
    records = rows(102, 60, 100.0)
    for i, r in enumerate(records):
        r["slice"] = f"s{i // 2}"
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pd.DataFrame(records).to_parquet(a)
    pd.DataFrame(rows(102, 50, 100.0)).assign(slice=[r["slice"] for r in records]).to_parquet(b)
    return a, b


def test_slice_rule_on_a_column_too_fine_to_slice_by_exits_2(tmp_path):
    """A column of 51 values is left out of the slices, so a per-slice rule on it is a bad rule
    with a one-line reason, not a crash that CI would read as a failing rule."""
    a, b = too_fine_logs(tmp_path)
    code, out, err, folder = compare(
        tmp_path, a, b, "--n-boot", "100", "--require", "correct[slice] >= -0.5"
    )
    assert code == 2, out + err
    assert err.strip().splitlines() == [err.strip()]
    assert err.startswith("ragreport: error: rule 'correct[slice] >= -0.5': ")
    assert "column 'slice'" in err and "too many values" in err
    assert list(folder.iterdir()) == []


def test_slice_rule_on_a_column_too_fine_is_refused_before_any_bootstrap(tmp_path, monkeypatch):
    """The refusal comes with the other rule checks, before the first resample: at large N
    the bootstraps take seconds to minutes that a bad rule should not cost."""

    def resampled(*args, **kwargs):
        raise AssertionError("a bootstrap ran before the rule was refused")

    monkeypatch.setattr(stats, "bootstrap_moments", resampled)
    code, out, err, folder = compare(
        tmp_path, *too_fine_logs(tmp_path), "--require", "correct[slice] >= -0.5"
    )
    assert code == 2, out + err
    assert err.startswith("ragreport: error: rule 'correct[slice] >= -0.5': ")
    assert "too many values" in err and list(folder.iterdir()) == []


def test_bad_gate_file_exits_2(logs, tmp_path):
    gate = tmp_path / "gate.toml"
    gate.write_text("require = 'correct >= 0'\n")
    code, _, err, folder = compare(tmp_path, *logs, "--gate", str(gate))
    assert code == 2 and "gate.toml" in err and "a list of strings" in err
    gate.write_text("require = [\n")
    code, _, err, _ = compare(tmp_path, *logs, "--gate", str(gate))
    assert code == 2 and "not valid TOML" in err
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (
            "require = []\n",
            "gate.toml: require = [] gives no rule, so the gate would check nothing",
        ),
        ('requires = ["correct >= 0"]\n', "gate.toml: unknown key 'requires'"),
        ('require = ["correct >= 0"]\nconfidance = 0.9\n', "gate.toml: unknown key 'confidance'"),
    ],
)
def test_gate_file_that_would_check_nothing_exits_2(logs, tmp_path, body, needle):
    """An empty list, or a misspelt key that leaves a rule out, would let CI pass on a gate
    that checks nothing (or less than written): both are refused, naming the file and key."""
    gate = tmp_path / "gate.toml"
    gate.write_text(body)
    code, out, err, folder = compare(tmp_path, *logs, "--gate", str(gate))
    assert code == 2, out
    assert err.strip().splitlines() == [err.strip()] and needle in err
    assert list(folder.iterdir()) == []


def test_without_rules_the_exit_code_stays_0(logs, tmp_path):
    code, out, err, folder = compare(tmp_path, *logs)
    assert code == 0, err
    assert "gate:" not in out
    assert json.loads((folder / "r.json").read_text())["gate"] is None


def test_a_rule_beside_other_candidates_reads_their_bonferroni_interval(tmp_path):
    """README, Gate rules: with m candidates each rule reads the interval at 1 - (1 - c) / m,
    so a candidate that passes a rule alone can be inconclusive beside another: the same
    bound as its comparison alone at --confidence 0.975."""
    rule = ("--require", "correct >= -0.012")
    runs = {}
    for name, logs, extra in [
        ("alone", (SAMPLE_C,), ()),
        ("beside", (SAMPLE_B, str(SAMPLE_C)), ()),
        ("at_0975", (SAMPLE_C,), ("--confidence", "0.975")),
    ]:
        (tmp_path / name).mkdir()
        code, _, err, folder = compare(tmp_path / name, SAMPLE_A, *logs, *rule, *extra)
        gate = json.loads((folder / "r.json").read_text())["gate"]
        runs[name] = (code, gate, {r["candidate"]: r for r in gate["results"]})
    code, gate, results = runs["alone"]
    assert code == 0 and gate["one_sided_level"] == pytest.approx(0.975)
    assert results["B"]["outcome"] == "pass" and results["B"]["low"] > -0.012
    code, gate, results = runs["beside"]
    assert code == 1 and gate["confidence"] == pytest.approx(0.975)
    assert gate["one_sided_level"] == pytest.approx(0.9875)
    assert results["fare_rules_b_reranker"]["outcome"] == "pass"
    beside = results["fare_rules_c_prompt"]
    assert beside["outcome"] == "inconclusive" and beside["low"] < -0.012
    assert beside["low"] == pytest.approx(runs["at_0975"][2]["B"]["low"], abs=1e-12)


def test_sample_runs_gate(tmp_path):
    """The six kinds of rule on the sample logs, each checked against the report's own
    numbers (difference rules) or an independent percentile bootstrap (the candidate's mean)."""
    rules = [
        "correct >= -0.02",
        "ndcg@5 > 0",
        "latency_ms <= 150",
        "candidate.correct >= 0.80",
        "correct[slice] >= -0.05",
        "faithfulness within 0.01",
    ]
    extra = [arg for rule in rules for arg in ("--require", rule)]
    code, _, err, folder = compare(tmp_path, SAMPLE_A, SAMPLE_B, *extra)
    assert code == 1, err
    doc = two_run_view(json.loads((folder / "r.json").read_text()))
    results = {r["rule"]: r for r in doc["gate"]["results"]}
    m = doc["metrics"]
    assert results["correct >= -0.02"]["outcome"] == "pass"
    assert m["correct"]["ci_low"] >= -0.02
    assert results["ndcg@5 > 0"]["outcome"] == "pass" and m["ndcg@5"]["ci_low"] > 0
    assert results["latency_ms <= 150"]["outcome"] == "fail"
    assert doc["cost"]["latency_ms"]["ci_low"] > 150
    own = results["candidate.correct >= 0.80"]
    b = np.array([q["correct_b"] for q in doc["per_question"]], dtype=float)
    rng = np.random.default_rng(0)
    boot = b[rng.integers(0, len(b), size=(5000, len(b)))].mean(axis=1)
    assert own["estimate"] == pytest.approx(b.mean())
    assert own["low"] == pytest.approx(np.quantile(boot, 0.025), abs=0.01)
    assert own["high"] == pytest.approx(np.quantile(boot, 0.975), abs=0.01)
    assert own["outcome"] == ("fail" if own["high"] < 0.8 else "inconclusive")
    equivalence = results["faithfulness within 0.01"]
    assert (equivalence["low"], equivalence["high"]) == (
        m["faithfulness"]["ci_low"],
        m["faithfulness"]["ci_high"],
    )
    assert equivalence["outcome"] == "inconclusive"


def test_candidate_and_slice_rules_on_a_cost_column_compare_it_as_lower_is_better(tmp_path):
    """A cost column needs no flag in a candidate or per-slice rule: the comparison scores it
    per question (as --lower-is-better would), and the rule reads the candidate's mean and each
    slice's difference, checked here against the logs themselves."""
    rules = ["candidate.latency_ms <= 2500", "latency_ms[slice] <= 2000"]
    extra = [arg for rule in rules for arg in ("--require", rule)]
    code, out, err, folder = compare(tmp_path, SAMPLE_A, SAMPLE_B, *extra)
    assert code == 0, err + out
    doc = two_run_view(json.loads((folder / "r.json").read_text()))
    assert doc["params"]["lower_is_better"] == []  # as given; the rules add the column
    assert "latency_ms" in doc["scores"] and not doc["scores"]["latency_ms"]["higher_is_better"]
    logs = [pd.read_parquet(p).set_index("question_id") for p in (SAMPLE_A, SAMPLE_B)]
    both = logs[0][["latency_ms", "slice"]].join(
        logs[1][["latency_ms"]].rename(columns={"latency_ms": "latency_ms_b"})
    )
    assert doc["metrics"]["latency_ms"]["b"] == pytest.approx(both["latency_ms_b"].mean())
    results = {r["rule"]: r for r in doc["gate"]["results"]}
    own = results["candidate.latency_ms <= 2500"]
    assert own["estimate"] == pytest.approx(both["latency_ms_b"].mean())
    assert own["outcome"] == "pass" and own["high"] <= 2500
    by_slice = (both["latency_ms_b"] - both["latency_ms"]).groupby(both["slice"]).mean()
    assert by_slice.max() < 2000 and results["latency_ms[slice] <= 2000"]["outcome"] == "pass"


def test_html_shows_the_gate_beside_the_verdict(logs, tmp_path):
    code, _, err, folder = compare(tmp_path, *logs, "--require", "latency_ms <= 50")
    assert code == 1, err
    html = (folder / "r.html").read_text()
    verdict, gate = html.index('id="verdict"'), html.index('id="gate"')
    assert verdict < gate < html.index("Every metric, question by question")
    assert "Gate: fail" in html and "<code>latency_ms &lt;= 50</code>" in html


def test_one_question_gives_no_interval_in_words_everywhere(tmp_path):
    """One paired question has no spread, so no interval: every rule is inconclusive and the
    terminal, the JUnit XML and the HTML say why in words, never 'nan'."""
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pd.DataFrame(rows(1, 0, 100.0)).to_parquet(a)
    pd.DataFrame(rows(1, 1, 160.0)).to_parquet(b)
    rules = [
        "correct >= 0",
        "candidate.correct >= 0.5",
        "correct[slice] >= 0",
        "faithfulness within 0.1",
    ]
    extra = [arg for rule in rules for arg in ("--require", rule)]
    code, out, err, folder = compare(
        tmp_path,
        a,
        b,
        *extra,
        "--junit",
        str(tmp_path / "out" / "g.xml"),
        "--markdown",
        str(tmp_path / "out" / "g.md"),
    )
    assert code == 1, err
    lines = [line.strip() for line in out.splitlines() if line.startswith("  ")]
    assert lines == [
        "inconclusive (counts as fail)  B  correct >= 0: difference 1, one question gives no "
        "interval, so there is no one-sided 97.5% lower bound to hold to >= 0",
        "inconclusive (counts as fail)  B  candidate.correct >= 0.5: candidate mean 1 over its 1 "
        "scored question, one question gives no interval, so there is no one-sided 97.5% lower "
        "bound to hold to >= 0.5",
        "inconclusive (counts as fail)  B  correct[slice] >= 0: every slice of slice has one "
        "scored question, and one question gives no interval",
        "inconclusive (counts as fail)  B  faithfulness within 0.1: difference 0, one question "
        "gives no interval, equivalence margin \u00b10.1",
    ]
    junit = (folder / "g.xml").read_text()
    html = (folder / "r.html").read_text()
    section = html[html.index('id="gate"') : html.index("</section>", html.index('id="gate"'))]
    markdown = (folder / "g.md").read_text()
    for text in (out, junit, section, markdown):
        assert "nan" not in text.lower() and "n/a, n/a" not in text
    assert "over 1 question)" in out and "Only 1 paired question: treat" in markdown
    assert junit.count("one question gives no interval") == 4 * 3  # message, text, system-out
    assert section.count("one question gives no interval") == 4


def test_slice_of_one_question_is_no_evidence_against_the_rule():
    """A slice of one question far below the margin has no spread to resample (its every
    resample is its one difference), so it cannot be credibly below: p 1, the rule passes."""
    rng = np.random.default_rng(5)
    fine = [slice_evidence(v, rng.normal(0.0, 0.1, 200)) for v in "ab"]
    lone = slice_evidence("lone", np.array([-1.0]))
    rule = parse_rule("m[slice] >= -0.05")
    candidate = Candidate("B", {}, {}, {("m", "slice"): [*fine, lone]})
    result = evaluate(Requirements((rule,)), [candidate], 0.95).results[0]
    assert result.outcome == "pass", result.detail
    assert "Holm-adjusted over 3 slices" in result.detail


@pytest.mark.parametrize(
    ("b_faithfulness", "why"),
    [
        ("dropped", "{b} does not log faithfulness ({a} does)"),
        ("null", "{b} has no value of faithfulness on a paired question ({a} has)"),
        ("disjoint", "no paired question of {a} and {b} has a value of faithfulness in both"),
    ],
)
def test_a_rule_on_a_metric_one_log_lacks_names_that_log(tmp_path, b_faithfulness, why):
    """faithfulness logged by A only (or null throughout B): the rule said "no metric
    'faithfulness' in these logs", though A logs it, and then "in both runs", which among
    several candidates does not say which; logged by both on different questions, both logs
    are named."""
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    baseline = pd.DataFrame(rows(40, 20, 100.0))
    candidate = pd.DataFrame(rows(40, 34, 160.0))
    if b_faithfulness == "dropped":
        candidate = candidate.drop(columns="faithfulness")
    elif b_faithfulness == "null":
        candidate["faithfulness"] = None
    else:
        baseline.loc[20:, "faithfulness"] = None
        candidate.loc[:19, "faithfulness"] = None
    baseline.to_parquet(a)
    candidate.to_parquet(b)
    code, out, err, folder = compare(tmp_path, a, b, "--require", "faithfulness >= -0.05")
    assert code == 2, out
    assert err == (
        f"ragreport: error: rule 'faithfulness >= -0.05': {why.format(a=a, b=b)}, so it is not "
        "compared; log it in every run or drop the rule\n"
    )
    assert list(folder.iterdir()) == []


def _ranked(n: int, correct_upto: int, latency: float) -> pd.DataFrame:
    """rows() with a ranking of two passages, the first the one relevant."""
    frame = pd.DataFrame(rows(n, correct_upto, latency))
    frame["relevant_ids"] = [[f"p{i}"] for i in range(n)]
    frame["context_ids"] = [[f"p{i}", "x"] for i in range(n)]
    return frame


@pytest.mark.parametrize(
    ("rule", "dropped", "why"),
    [
        ("latency_ms <= 20", ["latency_ms"], "{c} does not log latency_ms ({a} does)"),
        ("candidate.latency_ms <= 200", ["latency_ms"], "{c} does not log latency_ms ({a} does)"),
        (
            "ndcg@2 >= -0.05",
            ["context_ids"],
            "ndcg@2 needs a ranking (retrieved_ids or context_ids), which {c} does not log "
            "({a} does)",
        ),
        (
            "recall@2 >= -0.05",
            ["relevant_ids"],
            "recall@2 needs labels (relevant_ids or relevant_spans), which {c} does not log "
            "({a} does)",
        ),
    ],
)
def test_a_rule_on_a_cost_or_retrieval_metric_a_candidate_lacks_names_it(
    tmp_path, rule, dropped, why
):
    """Candidate c lacks what the rule's metric needs, which the baseline and b log: the rule
    said "no metric 'latency_ms' in these logs" (or, for a retrieval metric among several
    candidates, that c's prompt holds 0 passages and to pass --k, which c cannot serve)."""
    a, b, c = (tmp_path / f"{name}.parquet" for name in "abc")
    _ranked(40, 20, 100.0).to_parquet(a)
    _ranked(40, 34, 160.0).to_parquet(b)
    _ranked(40, 30, 120.0).drop(columns=dropped).to_parquet(c)
    for logs in ((a, c), (a, b, c)):
        more = [str(log) for log in logs[2:]]
        code, out, err, folder = compare(tmp_path, *logs[:2], *more, "--require", rule)
        assert code == 2, out
        assert err == (
            f"ragreport: error: rule {rule!r}: {why.format(a=a, c=c)}, so it is not compared; "
            "log it in every run or drop the rule\n"
        )
        assert list(folder.iterdir()) == []


def test_k_for_a_log_with_no_ranking_says_to_drop_it(tmp_path):
    """It said to drop --k "to score context_ids", which that log has none of either."""
    a, c = tmp_path / "a.parquet", tmp_path / "c.parquet"
    _ranked(40, 20, 100.0).to_parquet(a)
    _ranked(40, 30, 120.0).drop(columns="context_ids").to_parquet(c)
    code, out, err, _ = compare(tmp_path, a, c, "--k", "2")
    assert code == 2, out
    assert err == (
        f"ragreport: error: {c}: no ranking (retrieved_ids or context_ids) for --k to cut; "
        "drop --k\n"
    )


def test_the_summary_keeps_a_slice_rule_s_numbers_whole(logs, tmp_path):
    """The Markdown's Numbers cell of a per-slice rule ends with its bar and, for a slice under
    10 questions, "a direction, not proof": cut at 120 characters, both were lost."""
    md = tmp_path / "s.md"
    code, out, err, _ = compare(
        tmp_path, *logs, "--require", "correct[slice] >= -0.5", "--markdown", str(md)
    )
    assert code == 0, err
    (row,) = [line for line in md.read_text().splitlines() if "correct\\[slice\\]" in line]
    detail = row.split(" | ")[-1].rstrip(" |")
    assert "\u2026" not in detail and detail.endswith("vs 0.025")


def test_a_candidate_mean_interval_stays_in_the_metric_s_range(tmp_path):
    """Three questions: the candidate's own recall@1 is 1/3; its interval was cut to the range
    of a difference, [-1, 1], and printed a lower bound of -1 for a mean of values in [0, 1]."""
    ids = ["q1", "q2", "q3"]
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pd.DataFrame({"question_id": ids, "relevant_ids": [["p1"]] * 3, "context_ids": [["p1"]] * 3,
                  "correct": [True, True, False]}).to_parquet(a)  # fmt: skip
    pd.DataFrame({"question_id": ids, "relevant_ids": [["p1"]] * 3,
                  "context_ids": [["p1"], ["p2"], ["p2"]],
                  "correct": [True, False, False]}).to_parquet(b)  # fmt: skip
    code, out, err, folder = compare(
        tmp_path, a, b, "--n-boot", "200", "--require", "candidate.recall@1 >= 0.5"
    )
    assert code == 1, err
    (result,) = json.loads((folder / "r.json").read_text())["gate"]["results"]
    assert result["estimate"] == pytest.approx(1 / 3)
    assert 0 <= result["low"] <= result["high"] <= 1


def test_two_questions_both_fixed_pass_no_gate_and_show_no_evidence(tmp_path):
    """Both questions fixed: McNemar's exact p 0.5. The bootstrap alone read [+1, +1] (and the
    verdict "B better", borderline); the score statistic at a difference d is
    sqrt(2 (1 - d) / (1 + d)), under z = 1.96 down to d = (2 - z^2) / (2 + z^2) = -0.3152, so
    the interval includes zero, agreeing with the test, and 'correct > 0' is inconclusive,
    failing the job."""
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pd.DataFrame({"question_id": ["q1", "q2"], "correct": [False, False]}).to_parquet(a)
    pd.DataFrame({"question_id": ["q1", "q2"], "correct": [True, True]}).to_parquet(b)
    code, out, err, folder = compare(tmp_path, a, b, "--require", "correct > 0")
    assert code == 1, err
    assert (
        "inconclusive (counts as fail)  B  correct > 0: difference 1, interval [-0.3152, 1]" in out
    )
    doc = two_run_view(json.loads((folder / "r.json").read_text()))
    assert "includes zero; McNemar exact test p = 0.500" in doc["verdict"]["reason"]
    assert (doc["verdict"]["outcome"], doc["verdict"]["borderline"]) == (
        "no evidence of a difference",
        False,
    )


def test_a_score_logged_on_few_questions_says_what_its_rules_read(tmp_path):
    """B logs faithfulness on 3 of 60 questions: 'faithfulness >= -0.05' passed on those 3,
    and nothing on the page, the JSON or the Markdown said that it read only them. (Unchanged
    on 3 questions, it is now inconclusive: +-0.56 could differ unseen.)"""
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    ids = [f"q{i:02}" for i in range(60)]
    faithful = [1.0] * 60
    pd.DataFrame({"question_id": ids, "correct": [True] * 60, "faithfulness": faithful}).to_parquet(
        a
    )
    some = [1.0] * 3 + [None] * 57
    pd.DataFrame({"question_id": ids, "correct": [True] * 60, "faithfulness": some}).to_parquet(b)
    code, _, err, folder = compare(
        tmp_path, a, b, "--require", "faithfulness >= -0.05", "--markdown", str(tmp_path / "s.md")
    )
    assert code == 1, err
    assert (
        "inconclusive (counts as fail)  B  faithfulness >= -0.05: difference 0, interval "
        "[-0.5615, 0.5615]" in _
    )
    note = (
        "faithfulness is compared on 3 of 60 paired questions: it has no value on 57 in run B, "
        "and its interval, test and gate rules read the rest only"
    )
    doc = two_run_view(json.loads((folder / "r.json").read_text()))
    assert doc["warnings"] == [note]
    assert note in (tmp_path / "s.md").read_text()


def test_a_gate_file_saved_with_a_byte_order_mark_reads(tmp_path):
    """Windows editors save UTF-8 with a BOM: it was "not valid TOML (at line 1, column 1)"."""
    gate = tmp_path / "gate.toml"
    gate.write_bytes(b'\xef\xbb\xbfrequire = ["correct >= -0.02"]\r\n')
    assert read_gate_file(gate) == ("correct >= -0.02",)


def test_a_rule_names_a_slice_column_with_a_space():
    rule = parse_rule("correct[ sp ace ] >= -0.1")
    assert (rule.kind, rule.column) == ("slice", "sp ace")


def test_a_rule_given_twice_is_checked_once(tmp_path):
    """The same rule twice (however spaced, on the command line or in the gate file) made two
    checks, two JUnit cases of one name: it is kept once, first as given, and named."""
    gate = tmp_path / "gate.toml"
    gate.write_text('require = ["correct >= -0.02", "ndcg@5 > 0"]\n')
    given = ("correct>=-0.02", "correct[slice] >= 0", "correct[slice] >= 0")
    requirements = requirements_from(given, (gate,), "fail")
    assert requirements is not None
    assert [r.text for r in requirements.rules] == [
        "correct>=-0.02",
        "correct[slice] >= 0",
        "ndcg@5 > 0",
    ]
    assert requirements.repeated == ("correct[slice] >= 0", "correct >= -0.02")


def test_a_repeated_rule_and_a_spaced_slice_column_end_to_end(tmp_path):
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, frame in ((a, rows(40, 20, 100.0)), (b, rows(40, 24, 100.0))):
        pd.DataFrame(frame).rename(columns={"slice": "sp ace"}).to_parquet(path)
    rule = ("--require", "correct[sp ace] >= -0.5")
    code, out, err, folder = compare(tmp_path, a, b, "--slice", "sp ace", *rule, *rule)
    assert code == 0, err + out
    results = json.loads((folder / "r.json").read_text())["gate"]["results"]
    assert [(r["rule"], r["outcome"]) for r in results] == [("correct[sp ace] >= -0.5", "pass")]
    assert err.splitlines() == [
        "ragreport: warning: rule 'correct[sp ace] >= -0.5' is given more than once; it is "
        "checked once"
    ]


def test_a_study_page_gives_the_whole_gate_above_the_candidates(tmp_path):
    """The command prints "gate: fail (...; passing: c; ...)", and so does the JSON; the page of
    several candidates gave each candidate's rules in its own section only, and no outcome
    over them all."""
    a, b, c = (tmp_path / f"{name}.parquet" for name in "abc")
    pd.DataFrame(rows(40, 20, 100.0)).to_parquet(a)
    pd.DataFrame(rows(40, 34, 160.0)).to_parquet(b)  # +60 ms: fails latency_ms <= 30
    pd.DataFrame(rows(40, 25, 101.0)).to_parquet(c)
    code, out, err, folder = compare(tmp_path, a, b, str(c), "--require", "latency_ms <= 30")
    assert code == 1, err
    headline = next(line for line in out.splitlines() if line.startswith("gate: "))
    html = (folder / "r.html").read_text()
    section = html.split('<section class="gate worse" id="gate">')[1].split("</section>")[0]
    assert '<div class="outcome">Gate: fail</div>' in section
    tally = headline.removeprefix("gate: fail (").removesuffix(")")
    assert tally.startswith("1 of 2 rule checks failed; passing: c; ")
    assert f"<p>{tally}. Each candidate's rules: " in section
    assert '<a href="#candidate-1-gate">b</a>, <a href="#candidate-2-gate">c</a>.' in section
    assert '<li><a href="#gate">Gate: fail</a></li>' in html
    for anchor in ("candidate-1-gate", "candidate-2-gate"):
        assert html.count(f'id="{anchor}"') == 1


def test_a_candidate_rule_says_over_which_questions_its_mean_is(tmp_path):
    """A lacks faithfulness on 20 of 60 questions, where B scores 0.2: the table of B - A gives
    B's mean over the 40 scored in both (0.75), the rule B's own over its 60 (0.5666...); the
    rule's line gave its mean alone, which read as a contradiction of the table."""
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    ids = [f"q{i}" for i in range(60)]
    pd.DataFrame({"question_id": ids, "faithfulness": [None] * 20 + [0.5] * 40}).to_parquet(a)
    pd.DataFrame({"question_id": ids, "faithfulness": [0.2] * 20 + [0.75] * 40}).to_parquet(b)
    code, out, err, folder = compare(tmp_path, a, b, "--require", "candidate.faithfulness >= 0.1")
    assert code == 0, err
    doc = json.loads((folder / "r.json").read_text())
    assert doc["comparisons"][0]["metrics"]["faithfulness"]["b"] == pytest.approx(0.75)
    (result,) = doc["gate"]["results"]
    assert result["estimate"] == pytest.approx((20 * 0.2 + 40 * 0.75) / 60)
    assert result["detail"].startswith("candidate mean 0.5667 over its 60 scored questions, ")


@pytest.mark.parametrize(
    ("b_latency", "why"),
    [
        ("null", "{b} has no value of latency_ms on a paired question ({a} has)"),
        ("inf", "{b} has no value of latency_ms on a paired question ({a} has)"),
        ("disjoint", "no paired question of {a} and {b} has a value of latency_ms in both"),
    ],
)
@pytest.mark.parametrize("policy", ["fail", "pass"])
def test_a_difference_rule_on_a_cost_one_log_leaves_empty_is_a_bad_rule(
    tmp_path, b_latency, why, policy
):
    """A cost column both logs have, with no paired question valued in both: the rule was
    "inconclusive: no question scored", exit 1, or exit 0 under --inconclusive pass, where
    'candidate.latency_ms <= 150' on the same logs is a bad rule naming the log."""
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    baseline = pd.DataFrame(rows(20, 20, 100.0))
    candidate = pd.DataFrame(rows(20, 20, 100.0))
    if b_latency == "disjoint":
        baseline.loc[10:, "latency_ms"] = None
        candidate.loc[:9, "latency_ms"] = None
    else:
        candidate["latency_ms"] = None if b_latency == "null" else np.inf
    baseline.to_parquet(a)
    candidate.to_parquet(b)
    code, out, err, folder = compare(
        tmp_path, a, b, "--require", "latency_ms <= 150", "--inconclusive", policy
    )
    assert code == 2, out
    assert err == (
        f"ragreport: error: rule 'latency_ms <= 150': {why.format(a=a, b=b)}, so it is not "
        "compared; log it in every run or drop the rule\n"
    )
    assert list(folder.iterdir()) == []


def test_every_gate_file_given_is_checked(logs, tmp_path):
    """--gate twice kept the last file only: the first file's failing rule went unchecked and
    the job passed. The rules of every file are checked, a rule given in two files once."""
    first, second = tmp_path / "ga.toml", tmp_path / "gb.toml"
    first.write_text('require = ["correct >= 0.9"]\n')
    second.write_text('require = ["correct >= -0.9", "correct>=0.9"]\n')
    code, out, err, folder = compare(
        tmp_path,
        *logs,
        "--gate",
        str(first),
        "--gate",
        str(second),
        "--require",
        "faithfulness within 0.1",
    )
    assert code == 1, err
    results = json.loads((folder / "r.json").read_text())["gate"]["results"]
    assert [(r["rule"], r["outcome"]) for r in results] == [
        ("faithfulness within 0.1", "pass"),
        ("correct >= 0.9", "fail"),
        ("correct >= -0.9", "pass"),
    ]
    assert err.splitlines() == [
        "ragreport: warning: rule 'correct>=0.9' is given more than once; it is checked once"
    ]


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        ("recall@5 >= 0", "no metric 'recall@5' in these logs"),
        ("correct => 0", "cannot read it"),
    ],
)
def test_a_bad_rule_of_a_gate_file_names_the_file(logs, tmp_path, rule, reason):
    """With several --gate files the refusal of a rule did not say which file held it."""
    first, second = tmp_path / "ga.toml", tmp_path / "gb.toml"
    first.write_text('require = ["correct >= -0.5"]\n')
    second.write_text(f'require = ["correct >= 0", "{rule}"]\n')
    code, _, err, folder = compare(tmp_path, *logs, "--gate", str(first), "--gate", str(second))
    assert code == 2
    assert err.startswith(f"ragreport: error: {second}: rule {rule!r}: {reason}")
    assert list(folder.iterdir()) == []
    code, _, err, _ = compare(tmp_path, *logs, "--require", rule)  # on the command line: no file
    assert err.startswith(f"ragreport: error: rule {rule!r}: {reason}")


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ("correct within 5", "B − A of correct lies in [-1, 1]"),
        ("correct within 1", "B − A of correct lies in [-1, 1]"),
        ("correct >= -1", "B − A of correct lies in [-1, 1]"),
        ("correct > -1.5", "B − A of correct lies in [-1, 1]"),
        ("correct <= 1", "B − A of correct lies in [-1, 1]"),
        ("correct[slice] >= -1", "B − A of correct lies in [-1, 1]"),
        ("candidate.correct >= 0", "the candidate's mean of correct lies in [0, 1]"),
    ],
)
def test_a_rule_that_passes_whatever_the_logs_hold_is_warned_of(rule, why):
    """'correct within 5' passed an all-wrong candidate: an interval is cut to the range of
    what it measures, so such a rule checks nothing."""
    requirements = requirements_from((rule,), (), "fail")
    assert requirements is not None
    assert requirements.warnings == [
        f"rule {rule!r} passes whatever the logs hold: {why}; give a margin inside that range"
    ]


@pytest.mark.parametrize(
    "rule",
    ["correct > -1", "correct within 0.99", "correct >= -0.99", "candidate.correct > 0",
     "latency_ms <= 1e9", "faithfulness < 1"],
)  # fmt: skip
def test_a_rule_that_can_fail_is_not_warned_of(rule):
    """'> -1' fails where every question broke ([-1, -1]); a cost has no range to know."""
    requirements = requirements_from((rule,), (), "fail")
    assert requirements is not None and requirements.warnings == []


def constant(metric: str, a: float, b: float, n: int, own: bool = False) -> MetricComparison:
    """``metric`` of A and B the same on every one of ``n`` questions (A unused with ``own``)."""
    comparison, _ = compare_metric(
        metric,
        np.zeros(n) if own else np.full(n, a),
        np.full(n, b),
        binary=False,
        n_boot=200,
        confidence=0.95,
        seed=0,
        own=own,
    )
    return comparison


def outcomes(texts: list[str], candidate: Candidate) -> dict[str, str]:
    rules = tuple(map(parse_rule, texts))
    return {r.rule: r.outcome for r in evaluate(Requirements(rules), [candidate], 0.95).results}


VALUES = [0.1, 0.2, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
SHIFTS = [-0.3, -0.15, -0.05, 0.05, 0.1, 0.15, 0.3]


@pytest.mark.parametrize("n", [5, 12, 24, 60])
def test_a_constant_value_at_a_rule_s_margin_is_at_the_margin(n):
    """B's score 0.35 on every question has a mean of 0.3499999999999999 (summed in floats)
    and B - A of 0.55 and 0.5 is 0.050000000000000044: 'candidate.judge >= 0.35' and 'judge
    <= 0.05' failed on float rounding. A bound within float noise of the margin is at the
    margin: a rule that allows equality passes, a strict one does not, whichever side, for a
    run's own value, a difference, its equivalence and every slice. (A score of the logs has no
    known range, so its constant keeps its one value; a built-in metric's constant has the
    interval of what could differ unseen, tests/test_no_spread_interval.py.)"""
    wrong = []
    for v in VALUES:
        own = constant("judge", 0.0, v, n, own=True)
        rules = {f"candidate.judge {op} {v:g}": want for op, want in OWN_SIDES}
        got = outcomes(list(rules), Candidate("B", {}, {"judge": own}, {}))
        wrong += [(rule, got[rule]) for rule, want in rules.items() if got[rule] != want]
        for d in SHIFTS:
            w = round(v + d, 10)
            if not 0 <= w <= 1:
                continue
            c = constant("judge", v, w, n)
            rules = {f"judge {op} {d:g}": want for op, want in OWN_SIDES}
            if n < 6:  # the outcome that needs B to differ needs the test too: p 2 / 2^5,
                # a pass of '>= +d' (or '<= -d') and a fail of '> -d' (or '< +d') alike
                rules[f"judge {'>=' if d > 0 else '<='} {d:g}"] = "inconclusive"
                rules[f"judge {'<' if d > 0 else '>'} {d:g}"] = "inconclusive"
            rules[f"judge within {abs(d):g}"] = "pass"
            got = outcomes(list(rules), Candidate("B", {"judge": c}, {}, {}))
            wrong += [(rule, v, w, got[rule]) for rule, want in rules.items() if got[rule] != want]
            if n >= SMALL_SLICE:
                slices = [
                    SliceEvidence(name, *compare_with_sides(
                        "judge", np.full(n, v), np.full(n, w), binary=False,
                        n_boot=200, confidence=0.95, seed=0,
                    ))
                    for name in ("x", "y")
                ]  # fmt: skip
                candidate = Candidate("B", {}, {}, {("judge", "slice"): slices})
                rules = {f"judge[slice] {op} {d:g}": "pass" for op in ("<=", ">=")}
                got = outcomes(list(rules), candidate)
                wrong += [(rule, v, w, got[rule]) for rule in rules if got[rule] != "pass"]
    assert wrong == []


OWN_SIDES = [(">=", "pass"), ("<=", "pass"), (">", "fail"), ("<", "fail")]


def test_a_constant_cost_at_its_ceiling_passes_end_to_end(tmp_path):
    """A's cost 0.002 and B's 0.003 on all 24 questions: 'candidate.cost_usd <= 0.003' failed
    with "one-sided 97.5% upper bound 0.0030000000000000005 vs <= 0.003", exit 1."""
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    ids = [f"q{i}" for i in range(24)]
    for path, cost in ((a, 0.002), (b, 0.003)):
        pd.DataFrame({"question_id": ids, "correct": [True] * 24, "cost_usd": cost}).to_parquet(
            path
        )
    code, out, err, _ = compare(
        tmp_path, a, b, "--require", "candidate.cost_usd <= 0.003", "--require", "cost_usd <= 0.001"
    )
    assert code == 0, err + out
    assert (
        "pass  B  candidate.cost_usd <= 0.003: candidate mean 0.003 over its 24 scored questions, "
        "interval [0.003, 0.003]; one-sided 97.5% upper bound 0.003 vs <= 0.003"
    ) in out
    assert (
        "pass  B  cost_usd <= 0.001: difference 0.001, interval [0.001, 0.001]; one-sided 97.5% "
        "upper bound 0.001 vs <= 0.001"
    ) in out


@pytest.mark.parametrize(
    ("text", "kind", "metric", "column"),
    [
        ('"judge score" >= -0.5', "difference", "judge score", None),
        ('candidate."2nd" >= 0.5', "candidate", "2nd", None),
        ('"judge score"[slice] >= -0.1', "slice", "judge score", "slice"),
        ('"say ""yes"" rate" within 0.1', "equivalence", 'say "yes" rate', None),
        ('"correct" >= 0', "difference", "correct", None),
    ],
)
def test_a_rule_names_any_metric_in_double_quotes(text, kind, metric, column):
    """A --metric column named 'judge score' or '2nd' is compared, but no rule could name it:
    the name of a rule's metric could hold no space and not start with a digit."""
    rule = parse_rule(text)
    assert (rule.kind, rule.metric, rule.column) == (kind, metric, column)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("judge score >= -0.5", "'\"judge score\" >= -0.5'"),
        ("candidate.judge score >= 0.5", "'candidate.\"judge score\" >= 0.5'"),
        ("2nd within 0.1", "'\"2nd\" within 0.1'"),
        ("judge score[slice] >= 0", "'\"judge score\"[slice] >= 0'"),
    ],
)
def test_a_metric_name_a_rule_cannot_read_bare_is_shown_quoted(text, written):
    with pytest.raises(RuleError) as refused:
        parse_rule(text)
    assert str(refused.value) == (
        f"rule {text!r}: cannot read it; a metric whose name is not a plain word (a space, a "
        f"leading digit) goes in double quotes: {written}"
    )


def judged_logs(tmp_path: Path) -> tuple[Path, Path]:
    """Two logs with numeric columns 'judge score', '2nd' and 'judge', none a contract column."""
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, shift in ((a, 0.0), (b, 0.1)):
        frame = pd.DataFrame(rows(40, 30, 100.0))
        frame["judge score"] = frame["judge"] = frame["2nd"] = (
            0.5 + shift + 0.01 * (frame.index % 5)
        )
        frame.to_parquet(path)
    return a, b


def test_rules_name_metrics_of_any_name_end_to_end(tmp_path):
    code, out, err, _ = compare(
        tmp_path,
        *judged_logs(tmp_path),
        "--metric",
        "judge score",
        "--metric",
        "2nd",
        "--require",
        '"judge score" >= 0.05',
        "--require",
        'candidate."2nd" >= 0.5',
    )
    assert code == 0, err + out
    assert '  pass  B  "judge score" >= 0.05: difference 0.1, interval [0.1, 0.1]' in out
    assert '  pass  B  candidate."2nd" >= 0.5: candidate mean 0.62 over its 40' in out


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            "judge >= 0",
            "'judge' is a column of both logs, which the report compares only when asked: "
            "pass --metric judge (--lower-is-better judge where less is better), or drop the rule",
        ),
        (
            '"judge score" >= 0',
            "'judge score' is a column of both logs, which the report compares only when asked: "
            "pass --metric 'judge score' (--lower-is-better 'judge score' where less is "
            "better), or drop the rule",
        ),
        (
            "nosuch >= 0",
            "no metric 'nosuch' in these logs; name one of correct, faithfulness, \"2nd\", "
            "latency_ms",
        ),
        (  # read as a difference rule on a metric named 'candidate.2nd': names hold dots
            "candidate.2nd >= 0.5",
            "a metric whose name is not a plain word (a space, a leading digit) goes in double "
            "quotes after candidate.: 'candidate.\"2nd\" >= 0.5'",
        ),
    ],
)
def test_a_rule_on_a_column_not_asked_for_says_to_ask(tmp_path, rule, message):
    """'judge >= 0' with judge a numeric column of both logs said "no metric 'judge' in these
    logs; name one of correct": the logs have it, and --metric compares it."""
    code, out, err, folder = compare(
        tmp_path, *judged_logs(tmp_path), "--metric", "2nd", "--require", rule
    )
    assert code == 2, out
    assert err == f"ragreport: error: rule {rule!r}: {message}\n"
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("column", ["answer_relevance", "human_correct"])
def test_a_rule_on_a_run_log_score_not_asked_for_says_to_ask(tmp_path, column):
    """answer_relevance and human_correct are run-log columns the report compares only under
    --metric; a rule on one said "no metric 'answer_relevance' in these logs", which held it."""
    logs = judged_logs(tmp_path)
    for path, kind in zip(logs, ("a", "b"), strict=True):
        frame = pd.read_parquet(path)  # A's half its questions, B's all of them
        values = frame.index % 2 if kind == "a" else np.ones(len(frame))
        frame[column] = values.astype(float if column == "answer_relevance" else bool)
        frame.to_parquet(path)
    rule = f"{column} >= 0"
    code, out, err, _ = compare(tmp_path, *logs, "--require", rule)
    assert code == 2, out
    assert err == (
        f"ragreport: error: rule {rule!r}: {column!r} is a column of both logs, which the "
        f"report compares only when asked: pass --metric {column} (--lower-is-better {column} "
        "where less is better), or drop the rule\n"
    )
    code, out, err, _ = compare(tmp_path, *logs, "--metric", column, "--require", rule)
    assert code == 0, err + out
    assert f"  pass  B  {column} >= 0: difference 0.5, interval [0.3" in out


def test_a_pass_excused_by_a_small_slice_names_the_likeliest_slice_that_could_fail(tmp_path):
    """30 fixed in a slice of 60; 6 broken in slices of 11 and 10, 9 of 9 and 1 of 1: the pass
    named the 9-question slice alone ("its 9 questions give a direction"), while two slices
    that can fail lie wholly below 0 too and pass only through Holm's adjustment over 5: the
    line now names the likeliest of them, its interval and its adjusted p."""
    rows_a, rows_b = [], []
    for name, size in (("big", 60), ("eleven", 11), ("ten", 10), ("nine", 9), ("one", 1)):
        for i in range(size):
            a, b = (
                (False, i < 30) if name == "big" else (True, name in ("eleven", "ten") and i >= 6)
            )
            qid = f"q{len(rows_a):03}"
            rows_a.append({"question_id": qid, "slice": name, "correct": a})
            rows_b.append({"question_id": qid, "slice": name, "correct": b})
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, rows in zip(paths, (rows_a, rows_b), strict=True):
        pd.DataFrame(rows).to_parquet(path)
    code, out, err, _ = compare(tmp_path, *paths, "--require", "correct[slice] >= 0")
    assert code == 0, err
    line = next(line for line in out.splitlines() if "correct[slice] >= 0" in line)
    assert "slice slice = nine is the likeliest below 0" in line
    assert "but its 9 questions give a direction, not proof" in line
    assert line.endswith(
        "; of those of 10 or more, slice slice = eleven is the likeliest: interval [-0.9091, "
        "-0.1454], Holm-adjusted p 0.02861 vs 0.025"
    )


def test_a_rule_on_a_cost_keeps_the_cost_sections_wins(tmp_path, compare):
    """A rule naming latency_ms compares it as a metric, whose wins count B faster; the JSON's
    cost section still counts B slower as its wins (README), with the rule as without it."""
    n = 30
    rows = [{"question_id": f"q{i}", "correct": i % 2 == 0, "slice": f"s{i % 3}"} for i in range(n)]
    a = pd.DataFrame(rows).assign(latency_ms=1000.0)
    b = pd.DataFrame(rows).assign(latency_ms=[1100.0 if i < 20 else 900.0 for i in range(n)])
    a.to_parquet(tmp_path / "a.parquet")
    b.to_parquet(tmp_path / "b.parquet")
    plain = compare(tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "p")
    ruled = compare(
        tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "r",
        "--require", "latency_ms[slice] <= 150",
    )  # fmt: skip
    for out in (plain, ruled):
        assert (out["cost"]["latency_ms"]["wins"], out["cost"]["latency_ms"]["losses"]) == (20, 10)
    assert (ruled["metrics"]["latency_ms"]["wins"], ruled["metrics"]["latency_ms"]["losses"]) == (
        10,
        20,
    )


@pytest.mark.parametrize(
    ("runs", "rule", "needle"),
    [
        (2, "correct[slice] >= -0.5", "too many values to slice by"),
        (2, "correct[topic] >= -0.5", "the report has no slice column 'topic'"),
        (3, "correct[slice] >= -0.5", "too many values to slice by"),
    ],
)
def test_a_rule_on_a_slice_column_is_refused_before_the_per_question_metrics(
    tmp_path, monkeypatch, runs, rule, needle
):
    """A per-slice rule on a column of too many values, or on none asked for, was refused after
    every per-question metric was computed: 3.1 s at 100,000 questions, where its slice values
    alone take 0.8 s. It needs the slice columns' values only (two runs, and a study's)."""

    def scored(*args, **kwargs):
        raise AssertionError("per-question metrics computed before the rule was refused")

    monkeypatch.setattr(questions, "compute_tables", scored)
    a, b = too_fine_logs(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    c = tmp_path / "c.parquet"
    c.write_bytes(b.read_bytes())
    logs = [a, b, c][:runs]
    args = ["compare", *map(str, logs), "-o", str(out / "r.html"), "--require", rule]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"ragreport: error: rule '{rule}': ")
    assert needle in result.stderr and list(out.iterdir()) == []


def holm_widened_logs(tmp_path: Path) -> tuple[Path, Path]:
    """300 questions; run B about 0.1 less often correct; column grp: x, y, and none for every
    third question, where B - A is -0.24 over 100 questions."""

    def log(seed: int, shift: float) -> pd.DataFrame:
        rng, rows = np.random.default_rng(seed), []
        for i in range(300):
            rng.integers(0, 3), rng.permutation(6)  # draws of a fuller log, kept in step
            grp = None if i % 3 == 0 else ("x" if i % 2 else "y")
            correct = bool(rng.random() < 0.6 + shift)
            rng.random(), rng.normal(), rng.random(), rng.integers(1, 2)
            rows.append({"question_id": f"q{i:04d}", "grp": grp, "correct": correct})
        return pd.DataFrame(rows)

    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    log(1, 0.0).to_parquet(a)
    log(3, -0.1).to_parquet(b)
    return a, b


def test_a_passing_slice_rule_says_why_its_interval_lies_past_the_margin(tmp_path):
    """'correct[grp] >= -0.06' passed beside the slice's interval [-0.3802, -0.08], wholly below
    the margin, under a header that said each bound is the 95% interval's: the slice is judged
    by its p Holm-adjusted over 3 slices (0.047 against 0.025). The rule's line says the shown
    interval is before the adjustment, and the Markdown's and the page's headers say how a
    per-slice rule judges its slices; a gate without one does not say it."""
    a, b = holm_widened_logs(tmp_path)
    markdown = tmp_path / "out" / "r.md"
    code, out, err, folder = compare(
        tmp_path, a, b, "--slice", "grp", "--require", "correct[grp] >= -0.06",
        "--markdown", str(markdown),
    )  # fmt: skip
    assert code == 0, err
    result = json.loads((folder / "r.json").read_text())["gate"]["results"][0]
    assert result["outcome"] == "pass" and result["high"] < -0.06
    assert result["detail"].endswith(
        "vs 0.025: its interval lies past -0.06 before Holm's adjustment, and reaches it once "
        "widened for it"
    )
    said = (
        "a per-slice rule judges each slice by its p Holm-adjusted over the slice table's "
        "slices, so a slice's interval shown, before that adjustment, can lie past the margin "
        "of a rule that passes"
    )
    page = re.sub(r"\s+", " ", html.unescape((folder / "r.html").read_text()))
    assert f"one-sided at the 97.5% level; {said}; an inconclusive" in page
    assert f"(the 95% two-sided interval); {said}; an inconclusive" in markdown.read_text()
    code, out, err, folder = compare(tmp_path, a, b, "--require", "correct >= -0.5")
    assert code == 0, err
    assert "per-slice rule judges" not in (folder / "r.html").read_text()
