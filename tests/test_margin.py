"""--margin: the verdict says whether a difference is large enough to matter (hand-built logs)."""

from __future__ import annotations

import pytest
from test_slices_audit import compare, question

from reportgen.analysis.verdict import margin_for, relevance


@pytest.mark.parametrize(
    "low,high,expected",
    [
        (0.03, 0.08, "B better by at least 0.02"),  # whole interval past +M
        (0.005, 0.015, "B better, but by less than 0.02"),  # above 0, below +M
        (0.005, 0.05, "B better; whether by at least 0.02 is not settled"),  # straddles +M
        (-0.015, 0.01, "equivalent within 0.02"),  # inside (-M, M)
        (-0.05, 0.01, "no evidence of a difference"),  # includes 0 and reaches past -M
        (-0.08, -0.03, "B worse by at least 0.02"),
        (-0.015, -0.005, "B worse, but by less than 0.02"),
    ],
)
def test_relevance_hand_worked(low, high, expected):
    assert relevance(low, high, 0.02) == expected


@pytest.mark.parametrize(
    "low,high,expected",
    [
        (0.0, 0.0, "no evidence of a difference"),  # nothing changed: not "better by at least 0"
        (-0.1, 0.0, "no evidence of a difference"),
        (0.01, 0.05, "B better by at least 0"),
        (-0.05, -0.01, "B worse by at least 0"),
    ],
)
def test_relevance_at_a_margin_of_zero(low, high, expected):
    assert relevance(low, high, 0.0) == expected


def test_margin_for_prefers_the_named_metric():
    margins = (("", 0.01), ("ndcg", 0.03), ("correct", 0.05))
    assert margin_for(margins, "correct") == 0.05
    assert margin_for(margins, "ndcg@5") == 0.03  # base name covers every cutoff
    assert margin_for(margins, "faithfulness") == 0.01  # the one for all
    assert margin_for((), "correct") is None


def large_gain() -> tuple[list[dict], list[dict]]:
    """400 questions, B fixes 80 and breaks none: B - A = 0.20, interval about [0.16, 0.24]."""
    a = [question(i, "s", i < 200) for i in range(400)]
    b = [question(i, "s", i < 280) for i in range(400)]
    return a, b


def test_margin_in_verdict_and_json(tmp_path):
    code, out, doc = compare(tmp_path, *large_gain(), "--margin", "correct=0.1")
    assert code == 0, out
    verdict = doc["verdict"]
    assert doc["metrics"]["correct"]["ci_low"] > 0.1
    assert (verdict["margin"], verdict["relevance"]) == (0.1, "B better by at least 0.1")
    assert "against the margin of 0.1 that matters: B better by at least 0.1" in verdict["reason"]
    _, _, doc = compare(tmp_path, *large_gain(), "--margin", "0.3")
    assert doc["verdict"]["relevance"] == "B better, but by less than 0.3"
    _, _, doc = compare(tmp_path, *large_gain())
    assert doc["verdict"]["margin"] is None and doc["verdict"]["relevance"] is None


@pytest.mark.parametrize(
    "value,message",
    [
        ("-0.1", "'-0.1': give a number >= 0"),
        ("correct=abc", "'correct=abc': give a number >= 0"),
        ("recal=0.1", "--margin recal=0.1: no metric 'recal' in this report"),
    ],
)
def test_bad_margin_is_one_line_exit_2(tmp_path, value, message):
    code, out, doc = compare(tmp_path, *large_gain(), "--margin", value)
    assert code == 2 and doc is None
    assert message in out
    assert not (tmp_path / "r.html").exists()
