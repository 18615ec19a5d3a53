"""The supported rule: a threshold that fits the faithfulness scores, and when it decides."""

from __future__ import annotations

import numpy as np
import pandas as pd

from reportgen.analysis.supported import supported_rule

NAN = float("nan")


def arrays(a: list[float], b: list[float]) -> dict[str, np.ndarray]:
    return {"a": np.array(a, dtype=float), "b": np.array(b, dtype=float)}


def test_zero_one_scores_are_supported_at_one():
    rule = supported_rule(arrays([1, 0, 1], [1, 1, NAN]), arrays([1, 1, 0], [1, 1, 1]), None)
    assert (rule.threshold, rule.source) == (1.0, "0/1 scores")
    # A: correct q1 (1.0) and q2 (0.0): 1 of 2 below; B: correct and scored q1, q2: none below
    assert rule.unsupported == {"a": 0.5, "b": 0.0}
    assert not rule.dominates
    assert "faithfulness is logged as 0/1" in rule.text


def test_graded_scores_get_the_graded_default_and_say_when_it_decides():
    # means of ratings: never exactly 1
    faith = arrays([0.75, 0.9, 0.6, 0.85], [0.7, 0.65, 0.95, 0.5])
    correct = arrays([1, 1, 1, 0], [1, 1, 1, 1])
    rule = supported_rule(faith, correct, None)
    assert (rule.threshold, rule.source) == (0.8, "graded scores")
    # A: correct 0.75, 0.9, 0.6 -> 2 of 3 below 0.8; B: 0.7, 0.65, 0.5 below, 0.95 not -> 3 of 4
    assert rule.unsupported == {"a": 2 / 3, "b": 0.75}
    assert rule.dominates
    assert "67% of A's and 75% of B's correct answers fall below it" in rule.text
    assert "read correct alone beside it" in rule.text


def test_the_option_wins_over_the_fitted_rule():
    faith = arrays([0.75, 0.9], [0.7, 0.95])
    rule = supported_rule(faith, arrays([1, 1], [1, 1]), 0.7)
    assert (rule.threshold, rule.source) == (0.7, "--supported-threshold")
    assert rule.unsupported == {"a": 0.0, "b": 0.0} and not rule.dominates


def test_without_correct_nothing_is_said_to_fall_below():
    rule = supported_rule(arrays([0.5], [0.6]), arrays([NAN], [NAN]), None)
    assert rule.unsupported == {"a": None, "b": None}
    assert rule.text.endswith("sets it).")


def test_without_faithfulness_no_rule_is_claimed():
    # correct alone: no score was logged as 0/1, so the rule may not say it was
    rule = supported_rule(arrays([NAN, NAN], [NAN, NAN]), arrays([1, 0], [1, 1]), None)
    assert rule.source == "not logged"
    assert rule.unsupported == {"a": None, "b": None} and not rule.dominates
    assert rule.text == "Faithfulness is not logged: a good answer is a correct one."


def test_a_share_that_is_neither_none_nor_all_never_reads_0_or_100_percent():
    # A: 1 of 300 correct answers below 1; B: 299 of 300
    a, b = [0.0] + [1.0] * 299, [1.0] + [0.0] * 299
    rule = supported_rule(arrays(a, b), arrays([1] * 300, [1] * 300), None)
    assert "under 1% of A's and over 99% of B's correct answers fall below it" in rule.text


def test_repeated_answers_fit_the_rule_to_the_answers_the_cells_read(tmp_path, compare):
    """0/1 faithfulness on two samples a question: averaged, q3..q5 read 0.5, a graded score,
    and half of each run's correct answers fell below the graded default, while the cells read
    each question's first sample, faithful every time (6 of 6 working as designed)."""
    rows = [
        {
            "question_id": f"q{i}",
            "sample": str(s),
            "retrieved_ids": ["p1", "p2"],
            "context_ids": ["p1", "p2"],
            "relevant_ids": ["p1"],
            "correct": True,
            "faithfulness": 1.0 if s == 0 or i < 3 else 0.0,
        }
        for i in range(6)
        for s in range(2)
    ]
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path in (a, b):
        pd.DataFrame(rows).to_parquet(path)
    out = compare(a, b, tmp_path / "out", "--n-boot", 100)
    assert out["supported"]["source"] == "0/1 scores" and out["supported"]["threshold"] == 1
    assert out["supported"]["unsupported"] == {"a": 0.0, "b": 0.0}
    assert out["cells_supported"]["a"]["working_as_designed"] == 6


def test_a_rule_one_run_escapes_is_not_claimed():
    """Faithfulness logged by A alone: the 2x2 and the next experiment judge both runs by
    correct alone, so the rule may not say it holds nor that A's answers fall below it."""
    rule = supported_rule(arrays([1, 0, 1], [NAN, NAN, NAN]), arrays([1, 1, 0], [1, 1, 0]), None)
    assert rule.source == "logged by A only"
    assert rule.unsupported == {"a": None, "b": None} and not rule.dominates
    assert (
        rule.text
        == "Faithfulness is logged by A only: a good answer is a correct one in both runs."
    )
    assert rule.threshold == 1.0  # still the threshold the judge's faithful verdicts are read at
