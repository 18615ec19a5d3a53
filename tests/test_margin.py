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
        # nothing changed: not "better by at least 0", but within [-0, 0], as 'within 0' passes
        (0.0, 0.0, "equivalent within 0"),
        (-0.1, 0.0, "no evidence of a difference"),
        (0.01, 0.05, "B better by at least 0"),
        (-0.05, -0.01, "B worse by at least 0"),
    ],
)
def test_relevance_at_a_margin_of_zero(low, high, expected):
    assert relevance(low, high, 0.0) == expected


@pytest.mark.parametrize(
    "low,high",
    [
        (-0.02, 0.02),  # a bound at the margin: inside, as a rule 'within 0.02' reads it
        (-0.02 - 1e-15, 0.01),  # a bound within float noise of it is at it, as the rule reads it
        (-0.01, 0.02 + 1e-15),
    ],
)
def test_relevance_reads_a_bound_at_the_margin_as_a_within_rule_does(low, high):
    """An interval a 'within M' rule passed read "no evidence" in the verdict beside it."""
    assert relevance(low, high, 0.02) == "equivalent within 0.02"


def test_the_verdict_and_a_within_rule_read_one_interval_alike(tmp_path):
    """3 questions, one broken: [-1, +0.415]; --margin 1 and 'correct within 1' read it alike."""
    a = [question(i, "s", True) for i in range(3)]
    b = [question(i, "s", i > 0) for i in range(3)]
    code, out, doc = compare(tmp_path, a, b, "--margin", "1", "--require", "correct within 1")
    assert code == 0, out
    assert doc["metrics"]["correct"]["ci_low"] == -1
    assert doc["verdict"]["relevance"] == "equivalent within 1"
    assert doc["gate"]["outcome"] == "pass"


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
        # the last value won silently, and the JSON recorded both
        (
            ("correct=0.1", "correct=0.3"),
            "--margin of correct is given twice (0.1 and 0.3); give it once",
        ),
        (("0.1", "0.3"), "--margin for every metric is given twice (0.1 and 0.3); give it once"),
    ],
)
def test_bad_margin_is_one_line_exit_2(tmp_path, value, message):
    values = (value,) if isinstance(value, str) else value
    margins = [option for v in values for option in ("--margin", v)]
    code, out, doc = compare(tmp_path, *large_gain(), *margins)
    assert code == 2 and doc is None
    assert message in out
    assert not (tmp_path / "r.html").exists()


def test_a_margin_the_verdict_does_not_read_is_said_so(tmp_path):
    """--margin faithfulness=0.2 was checked, then read nowhere: the verdict reads its own
    metric's margin only."""
    code, out, doc = compare(tmp_path, *large_gain(), "--margin", "ndcg=0.2")
    assert code == 0, out
    assert doc["verdict"]["margin"] is None
    note = (
        "--margin ndcg=0.2 is not read: the verdict reads the margin of its metric, correct, "
        "only; the intervals of ndcg are in the metric table"
    )
    assert note in doc["warnings"]
    assert f"ragreport: warning: {note}" in out  # on stderr, as a gate rule's like warning
    _, _, doc = compare(tmp_path, *large_gain(), "--margin", "correct=0.2")
    assert not any("is not read" in w for w in doc["warnings"])


@pytest.mark.parametrize(
    ("given", "named"),
    [(("5",), "5"), (("correct=1",), "correct=1"), (("2", "correct=1.5"), "correct=1.5")],
)
def test_a_margin_past_any_difference_of_the_metric_is_warned_of(tmp_path, given, named):
    """--margin 5 (5 points meant) on correct, whose B − A lies in [-1, 1], read "B better, but
    by less than 5", true of every comparison: the reading says nothing, as a gate's "correct
    within 5" checks nothing, and the report says so."""
    margins = [option for value in given for option in ("--margin", value)]
    code, out, doc = compare(tmp_path, *large_gain(), *margins)
    assert code == 0, out
    assert doc["verdict"]["relevance"] == f"B better, but by less than {named.split('=')[-1]}"
    note = (
        f"--margin {named} is past any difference of correct: B − A lies in [-1, 1], so the "
        "verdict's reading against it says nothing; give a margin inside that range"
    )
    assert note in doc["warnings"]
    assert out.count(f"ragreport: warning: {note}") == 1
    _, _, doc = compare(tmp_path, *large_gain(), "--margin", "0.99")
    assert not any("is past any difference" in w for w in doc["warnings"])
