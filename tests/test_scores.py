"""Scores the logs already carry, compared as metrics (--metric, --lower-is-better), checked
against hand-worked counts and scipy, with their errors and gate rules."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from scipy import stats
from test_eval_tool_readers import promptfoo_file, ragas_frame, result
from test_readers import fail

import reportgen
from reportgen.analysis.stats import MetricComparison
from reportgen.cli import cli
from reportgen.errors import InputError
from reportgen.reporters.html import charts
from reportgen.reporters.html.context import metric_row

IDS = [f"q{i}" for i in range(1, 9)]
# helpfulness: B - A = +0.2, 0, -0.2, +0.4, +0.2, 0, +0.3, +0.1: 5 wins, 1 loss, 2 ties
HELPFUL_A = [0.2, 0.5, 0.9, 0.4, 0.7, 0.6, 0.3, 0.8]
HELPFUL_B = [0.4, 0.5, 0.7, 0.8, 0.9, 0.6, 0.6, 0.9]
# passed: fixed (0 -> 1) q2, q3, q5, q8; broken (1 -> 0) q4
PASSED_A = [True, False, False, True, False, True, False, False]
PASSED_B = [True, True, True, False, True, True, False, True]
# latency, lower is better: B - A = -20, -50, +10, -20, -100, -10, -30, +5: 6 wins, 2 losses
LATENCY_A = [100.0, 200.0, 150.0, 120.0, 300.0, 250.0, 180.0, 90.0]
LATENCY_B = [80.0, 150.0, 160.0, 100.0, 200.0, 240.0, 150.0, 95.0]
# error, lower is better: fixed (1 -> 0) q1, q7; broken (0 -> 1) q4
ERROR_A = [True, False, True, False, False, False, True, False]
ERROR_B = [False, False, True, True, False, False, False, False]


def write(path: Path, **columns: list) -> Path:
    pd.DataFrame({"question_id": IDS, **columns}).to_parquet(path)
    return path


def logs(tmp_path: Path) -> tuple[Path, Path]:
    """Run A and run B with every score column above, a text column and a slice."""
    columns = {
        "helpfulness": (HELPFUL_A, HELPFUL_B),
        "passed": (PASSED_A, PASSED_B),
        "latency": (LATENCY_A, LATENCY_B),
        "error": (ERROR_A, ERROR_B),
        "note": (["x"] * 8, ["y"] * 8),
        "slice": (["refunds", "changes"] * 4,) * 2,
    }
    a, b = (
        write(tmp_path / f"{run}.parquet", **{name: pair[i] for name, pair in columns.items()})
        for i, run in enumerate("ab")
    )
    return a, b


SCORE_FLAGS = (
    "--metric", "helpfulness", "--metric", "passed",
    "--lower-is-better", "latency", "--lower-is-better", "error",
)  # fmt: skip


def test_user_scores_match_a_hand_worked_comparison_and_scipy(tmp_path, compare):
    a, b = logs(tmp_path)
    out = compare(a, b, tmp_path / "out", *SCORE_FLAGS, "--n-boot", 2000)
    m = out["metrics"]
    assert list(m) == ["helpfulness", "passed", "latency", "error"]

    helpful = m["helpfulness"]
    diff = np.subtract(HELPFUL_B, HELPFUL_A)
    assert (helpful["a"], helpful["b"], helpful["diff"]) == pytest.approx(
        (np.mean(HELPFUL_A), np.mean(HELPFUL_B), 0.125)
    )
    assert (helpful["wins"], helpful["losses"], helpful["ties"]) == (5, 1, 2)
    assert helpful["fixed"] is None and helpful["test"] == "bootstrap-t"
    # under 1,000 questions the interval is, on each side, the wider of bootstrap-t and t's
    low, high = stats.t.interval(0.95, 7, loc=diff.mean(), scale=stats.sem(diff))
    assert helpful["ci_low"] <= low + 1e-12 and helpful["ci_high"] >= high - 1e-12

    passed = m["passed"]
    assert (passed["a"], passed["b"], passed["fixed"], passed["broken"]) == (
        pytest.approx(3 / 8), pytest.approx(6 / 8), 4, 1,
    )  # fmt: skip
    assert passed["p"] == pytest.approx(stats.binomtest(1, 5, 0.5).pvalue)  # McNemar: 0.375

    latency = m["latency"]
    assert latency["diff"] == pytest.approx(np.mean(np.subtract(LATENCY_B, LATENCY_A)))
    assert latency["diff"] == pytest.approx(-26.875)  # B - A keeps its sign and unit
    assert (latency["wins"], latency["losses"], latency["ties"]) == (6, 2, 0)  # B lower wins

    error = m["error"]
    assert (error["fixed"], error["broken"]) == (2, 1)  # 1 -> 0 is fixed where lower is better
    assert error["p"] == pytest.approx(stats.binomtest(1, 3, 0.5).pvalue)

    assert out["scores"] == {
        "helpfulness": {"source": "helpfulness", "binary": False, "higher_is_better": True},
        "passed": {"source": "passed", "binary": True, "higher_is_better": True},
        "latency": {"source": "latency", "binary": False, "higher_is_better": False},
        "error": {"source": "error", "binary": True, "higher_is_better": False},
    }
    assert out["params"]["score_columns"] == ["helpfulness", "passed"]
    assert out["params"]["lower_is_better"] == ["latency", "error"]
    assert out["per_question"][1]["latency_b"] == 150.0
    html = (tmp_path / "out" / "report.html").read_text()
    assert "latency (lower is better)" in html
    assert "The logs&#39; own score in column helpfulness" in html


def test_a_lower_is_better_headline_is_better_when_it_falls(tmp_path, compare):
    """The verdict reads the direction: latency 10 to 25 ms lower on every question is a gain."""
    ids = [f"q{i}" for i in range(20)]
    before = 100.0 + 10 * np.arange(20)
    after = before - (10 + 5 * (np.arange(20) % 4))
    a = tmp_path / "a.parquet"
    b = tmp_path / "b.parquet"
    pd.DataFrame({"question_id": ids, "latency": before}).to_parquet(a)
    pd.DataFrame({"question_id": ids, "latency": after}).to_parquet(b)
    out = compare(a, b, tmp_path / "out", "--lower-is-better", "latency", "--n-boot", 1000)
    latency = out["metrics"]["latency"]
    assert latency["ci_high"] < 0 and latency["wins"] == 20
    assert out["headline"] == "latency"
    assert out["verdict"]["outcome"] == "B better"
    assert "below zero (lower latency is better)" in out["verdict"]["reason"]
    rerun = compare(a, b, tmp_path / "again", "--metric", "latency", "--n-boot", 1000)
    assert rerun["verdict"]["outcome"] == "B worse"  # the same numbers, higher taken as better


def _gate(tmp_path: Path, *rules: str) -> tuple[int, dict]:
    a, b = logs(tmp_path)
    args = ["compare", str(a), str(b), "-o", str(tmp_path / "r.html"), *SCORE_FLAGS]
    args += ["--n-boot", "1000"] + [arg for rule in rules for arg in ("--require", rule)]
    run = CliRunner().invoke(cli, args)
    assert run.exit_code in (0, 1), run.output
    return run.exit_code, json.loads((tmp_path / "r.json").read_text())["gate"]


def test_gate_rules_name_score_columns(tmp_path):
    code, gate = _gate(
        tmp_path,
        "latency <= 150",  # the upper bound of B - A (about +2.5 ms) is far below 150 ms
        "latency <= -100",  # B is not 100 ms faster: the whole interval lies above -100
        "candidate.helpfulness >= 0.5",  # B's own mean is 0.675
        "passed[slice] >= -0.5",  # 2 slices of 4 questions: none could fail it
    )
    results = {r["rule"]: r for r in gate["results"]}
    latency = results["latency <= 150"]
    assert latency["estimate"] == pytest.approx(-26.875)  # B - A in ms, not turned around
    assert latency["low"] < -26.875 < latency["high"] < 150 and latency["outcome"] == "pass"
    assert results["latency <= -100"]["outcome"] == "fail"
    own = results["candidate.helpfulness >= 0.5"]
    assert own["estimate"] == pytest.approx(np.mean(HELPFUL_B)) and own["outcome"] == "pass"
    by_slice = results["passed[slice] >= -0.5"]
    assert by_slice["outcome"] == "inconclusive"
    assert by_slice["detail"].startswith("every slice of slice has fewer than 10 scored questions")
    assert code == 1  # a rule failed


def test_a_rule_on_a_column_not_compared_is_a_bad_rule(tmp_path):
    """The logs have latency, which only --metric or --lower-is-better compares: the rule
    names the option (it said "no metric 'latency' in these logs")."""
    a, b = logs(tmp_path)
    line = fail(
        "compare", a, b, "-o", tmp_path / "r.html", "--metric", "helpfulness",
        "--require", "latency <= 150",
    )  # fmt: skip
    assert line.endswith(
        "rule 'latency <= 150': 'latency' is a column of both logs, which the report compares "
        "only when asked: pass --metric latency (--lower-is-better latency where less is "
        "better), or drop the rule"
    )


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--metric", "absent"), "a.parquet: --metric absent: no column 'absent'; name a column"),
        (
            ("--lower-is-better", "note"),
            "a.parquet: --lower-is-better note: column note holds text: row 1 holds 'x' (8 of 8 "
            "cells), not numbers or booleans; log the score as numbers (an empty cell where it "
            "is missing), or as booleans rather than text (a score column's 'true' is not read "
            "as correct's is)",
        ),
        (
            ("--metric", "correct"),
            "--metric correct: correct is the name of one of the report's own metrics",
        ),
        (("--metric", "question_id"), "--metric question_id: question_id is the name of"),
        # its failure_class_a and _b would take the per-question rows' failure classes' names
        (("--metric", "failure_class"), "--metric failure_class: failure_class is the name of"),
    ],
)
def test_score_columns_that_cannot_be_compared_are_refused(tmp_path, flags, message):
    a, b = logs(tmp_path)
    line = fail("compare", a, b, "-o", tmp_path / "r.html", *flags)
    assert message in line


@pytest.mark.parametrize(
    ("column", "why"),
    [
        ("judge_v2@3", "judge_v2@3 ends in @N, as the report names a metric at a cutoff"),
        ("judge\nscore", "'judge\\nscore' holds a line break or another control character"),
    ],
)
def test_a_score_column_the_report_cannot_name_is_refused(tmp_path, column, why):
    """``--metric judge_v2@3`` read as a metric judge_v2 at k 3 ended in a KeyError, a name
    with a line break (a CSV's quoted header cell) in an AssertionError, both with exit 1,
    which a CI job reads as a failed gate; the Python API gave a result, then a traceback."""
    a, b = (write(tmp_path / f"{r}.parquet", **{column: HELPFUL_A}) for r in "ab")
    for flag in ("--metric", "--lower-is-better"):
        line = fail("compare", a, b, "-o", tmp_path / "r.html", flag, column, "--quiet")
        shown = column.replace("\n", "\\n")  # the error is one line
        assert line == (
            f"ragreport: error: {a}: {flag} {shown}: {why}; rename the column (--map "
            f"NEW={shown}) to compare it"
        )
    with pytest.raises(InputError, match="rename the column"):
        reportgen.compare(a, b, score_columns=[column], n_boot=100)


def test_a_score_column_missing_from_one_run_or_typed_differently_is_refused(tmp_path):
    a = write(tmp_path / "a.parquet", helpfulness=HELPFUL_A, passed=PASSED_A)
    b = write(tmp_path / "b.parquet", passed=[1, 0, 0, 1, 0, 1, 0, 0])
    line = fail("compare", a, b, "-o", tmp_path / "r.html", "--metric", "helpfulness")
    assert line.endswith(f"{b}: --metric helpfulness: no column 'helpfulness'; name a column "
                         "every run log has")  # fmt: skip
    line = fail("compare", a, b, "-o", tmp_path / "r.html", "--metric", "passed")
    assert f"{a} and {b}: --metric passed: column passed is BOOLEAN in one log and BIGINT" in line


def test_a_column_of_durations_or_timestamps_is_refused_not_read_as_ticks(tmp_path):
    """A Parquet duration reads as the integer of its ticks, in the unit each file chose:
    2 s in milliseconds against 1 s in nanoseconds compared 2000 with 1e9, and a gate on the
    faster candidate failed; a timestamp was said to hold "text"."""
    ids = [f"q{i}" for i in range(8)]
    for name, ticks, unit in (("a", 2_000, "ms"), ("b", 1_000_000_000, "ns")):
        pq.write_table(
            pa.table(
                {
                    "question_id": ids,
                    "correct": [i % 2 == 0 for i in range(8)],
                    "gen_time": pa.array([ticks] * 8, pa.duration(unit)),
                    "answered_at": pa.array([datetime.datetime(2026, 1, 1)] * 8),
                }
            ),
            tmp_path / f"{name}.parquet",
        )
    a, b, out = tmp_path / "a.parquet", tmp_path / "b.parquet", ("-o", tmp_path / "r.html")
    assert fail("compare", a, b, *out, "--lower-is-better", "gen_time") == (
        f"ragreport: error: {a}: --lower-is-better gen_time: column gen_time holds durations "
        "(duration[ms]), not numbers; log it as numbers in one stated unit (as latency_ms is in "
        "milliseconds)"
    )
    assert fail("compare", a, b, *out, "--metric", "answered_at") == (
        f"ragreport: error: {a}: --metric answered_at: column answered_at holds timestamps "
        "(timestamp[us]), not numbers; name a column of scores"
    )


def test_a_score_column_too_small_to_tell_from_float_noise_is_refused(tmp_path):
    """Values near 1e-13, B three times A on every question: differences are compared to 12
    decimals, so the report read 100 ties and [0, 0], and an equivalence rule passed."""
    ids = [f"q{i}" for i in range(20)]
    for name, scale in (("a", 1e-13), ("b", 3e-13)):
        values = np.linspace(0.5, 1.5, 20) * scale
        write(tmp_path / f"{name}.parquet", question_id=ids, correct=[True] * 20, p=list(values))
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    assert fail("compare", a, b, "-o", tmp_path / "r.html", "--metric", "p") == (
        f"ragreport: error: {a} and {b}: column p: every value is under 1e-09 in magnitude (the "
        "largest 4.5e-13), too small for its differences to be told from float noise (they are "
        "compared to 12 decimals); log it scaled, in a unit near its values"
    )


def test_ragas_and_promptfoo_scores_are_compared_without_a_flag(tmp_path, compare):
    frame = ragas_frame([1.0, 1.0, 1.0], True).assign(
        factual_correctness=[0.5, 1.0, 0.0], context_precision=[1.0, 1.0, 0.5]
    )
    path = tmp_path / "ragas.csv"
    frame.to_csv(path, index=False)
    out = compare(path, path, tmp_path / "out", "--n-boot", 100)
    assert out["metrics"]["context_recall"]["a"] == pytest.approx(1 / 3)
    assert out["metrics"]["factual_correctness"]["a"] == pytest.approx(0.5)
    assert out["scores"]["context_recall"] == {
        "source": "context_recall", "binary": False, "higher_is_better": True,
    }  # fmt: skip
    assert "context_precision" not in out["metrics"]  # the name of a built-in metric
    warnings = " ".join(out["warnings"])
    assert "Score column context_precision of the logs' evaluation tool is not compared" in warnings
    assert "--map NEW=context_precision" in warnings
    compared = "higher is better: answer_relevance, context_recall, factual_correctness"
    assert compared in warnings

    rows = [result("p", "refund", 0, True), result("p", "change", 1, False)]
    a = promptfoo_file(tmp_path / "a.json", rows)
    b = promptfoo_file(tmp_path / "b.json", [rows[0], result("p", "change", 1, True)])
    out = compare(a, b, tmp_path / "pf", "--n-boot", 100)
    assert (out["metrics"]["score"]["a"], out["metrics"]["score"]["b"]) == (0.5, 1.0)
    assert out["metrics"]["score_accuracy"]["diff"] == 0.5
    assert "vars" not in " ".join(out["metrics"])  # the test's vars are not scores


def test_the_page_counts_a_fall_as_a_gain_where_lower_is_better():
    spec = charts.differences(["q1", "q2"], np.array([-5.0, 3.0]), "latency", False)
    (rows,) = spec["datasets"].values()
    assert {r["question_id"]: r["outcome"] for r in rows} == {"q1": "B wins", "q2": "B loses"}
    faster = MetricComparison(
        "latency", 8, 200.0, 180.0, -20.0, -30.0, -10.0, 7, 1, 0, 0.01, None, None, "t", "i", 5.0
    )
    row = metric_row(faster, higher_is_better=False)
    assert (row.name, row.direction) == ("latency (lower is better)", "up")
    assert metric_row(faster).direction == "down"


def test_the_best_candidate_is_the_fastest_where_lower_is_better(tmp_path):
    """With a lower-is-better headline, the winner's curse and --holdout pick the largest fall."""
    ids = [f"q{i}" for i in range(40)]
    base = 200.0 + 5 * (np.arange(40) % 7)
    paths = []
    for label, shift in (("base", 0.0), ("slower", 30.0), ("faster", -30.0)):
        paths.append(tmp_path / f"{label}.parquet")
        pd.DataFrame({"question_id": ids, "latency": base + shift}).to_parquet(paths[-1])
    out = tmp_path / "r.html"
    args = ["compare", *map(str, paths), "-o", str(out), "--lower-is-better", "latency"]
    run = CliRunner().invoke(cli, [*args, "--n-boot", "200", "--holdout", "0.5"])
    assert run.exit_code == 0, run.output
    doc = json.loads(out.with_suffix(".json").read_text())
    assert doc["winners_curse"]["best"] == "faster"
    assert doc["holdout"]["chosen"] == "faster"
    assert doc["holdout"]["selection_diff"] == pytest.approx(-30.0)
    assert [row["outcome"] for row in doc["summary"]] == ["B worse", "B better"]


def test_infinite_scores_are_left_out_and_named_in_a_warning(tmp_path, compare):
    """A timeout logged as inf (and -inf) in B's judge score: left out of the mean, as README
    says, and the warnings count them per log, as they do for the cost columns."""
    ids = [f"q{i}" for i in range(12)]
    a = write(tmp_path / "a.parquet", question_id=ids, judge_score=[0.5] * 12)
    b_scores = [0.75] * 10 + [float("inf"), float("-inf")]
    b = write(tmp_path / "b.parquet", question_id=ids, judge_score=b_scores)
    doc = compare(a, b, tmp_path / "out", "--metric", "judge_score")
    assert doc["metrics"]["judge_score"]["n"] == 10
    assert doc["metrics"]["judge_score"]["b"] == 0.75
    assert (
        "2 values of judge_score in b.parquet are not finite (inf or NaN) and are left out, at "
        "question_id q10, q11"  # the questions that hold them
    ) in doc["warnings"]
    assert not any("judge_score in a.parquet" in w for w in doc["warnings"])


def test_an_infinite_cost_compared_as_a_score_is_warned_of_once(tmp_path, compare):
    """latency_ms given to --lower-is-better: the row checks' warning (naming the row) was
    followed by the score's own, the same count without the row."""
    ids = [f"q{i}" for i in range(12)]
    a = write(tmp_path / "a.parquet", question_id=ids, latency_ms=[100.0] * 11 + [float("inf")])
    b = write(tmp_path / "b.parquet", question_id=ids, latency_ms=[90.0] * 12)
    doc = compare(a, b, tmp_path / "out", "--lower-is-better", "latency_ms")
    assert doc["metrics"]["latency_ms"]["n"] == 11
    said = [w for w in doc["warnings"] if "latency_ms in a.parquet" in w]
    assert said == [
        "1 value of latency_ms in a.parquet is not finite (inf or NaN) and is left out, first "
        "at row 12"
    ]


def test_a_tool_s_score_column_named_with_a_bidi_control_is_named_and_left_out(tmp_path, compare):
    """A RAGAS column whose name holds a right-to-left override would be compared without a
    flag, and every sentence naming it read backwards from the name on (--metric refuses such
    a name); it is left out, named in an isolate of its own."""
    name = "judge\u202eevil"
    frame = ragas_frame([1.0, 1.0, 1.0], True).assign(**{name: [0.5, 1.0, 0.0]})
    path = tmp_path / "ragas.csv"
    frame.to_csv(path, index=False)
    out = compare(path, path, tmp_path / "out", "--n-boot", 100)
    assert name not in out["metrics"] and "context_recall" in out["metrics"]
    (note,) = [w for w in out["warnings"] if "judge" in w]
    assert note.startswith(
        f"Score column \u2068{name}\u202c\u2069 of the logs' evaluation tool is not compared ("
        f"{path}: the name holds the bidi control U+202E, which would reverse the report's "
        "sentences that name it; rename the column in the logs)"
    )


def test_ragas_noise_sensitivity_is_compared_where_less_is_better(tmp_path, compare):
    """RAGAS defines noise sensitivity as the share of an answer's claims that are wrong: B's
    tripled rate counted as wins, coloured as a gain. A column the tool defines so is compared
    where less is better, and the note says so; --metric names it as the user chooses."""
    paths = []
    for run, noise in (("a", [0.1, 0.2, 0.0]), ("b", [0.4, 0.5, 0.3])):
        frame = ragas_frame([1.0, 0.5, 0.2], True)
        frame["noise_sensitivity(mode=relevant)"] = noise
        paths.append(tmp_path / f"{run}.parquet")
        frame.to_parquet(paths[-1])
    out = compare(*paths, tmp_path / "out", "--n-boot", 100)
    noise = out["metrics"]["noise_sensitivity(mode=relevant)"]
    assert (noise["wins"], noise["losses"]) == (0, 3)
    assert (
        "Score columns of the logs' evaluation tool compared as metrics, lower is better as the "
        "tool defines them: noise_sensitivity(mode=relevant)"
    ) in out["warnings"]
    named = compare(*paths, tmp_path / "named", "--n-boot", 100, "--metric",
                    "noise_sensitivity(mode=relevant)")  # fmt: skip
    assert named["metrics"]["noise_sensitivity(mode=relevant)"]["wins"] == 3


def test_a_stray_text_cell_of_a_score_column_is_named_by_its_line(tmp_path):
    """One 'n/a' among the numbers of a CSV's judge column was refused as "holds VARCHAR",
    DuckDB's type, naming no line and no value."""
    path = tmp_path / "run.csv"
    cells = [f"q{i},{i % 2 == 0},0.{i}" for i in range(1, 9)] + ["q9,true,n/a"]
    path.write_text("question_id,correct,judge\n" + "\n".join(cells) + "\n")
    line = fail("compare", path, path, "-o", tmp_path / "r.html", "--metric", "judge")
    assert line.startswith(
        f"ragreport: error: {path}: --metric judge: column judge holds text: line 10 holds "
        "'n/a' (1 of 9 cells), "
        "not numbers or booleans"
    )
