"""A per-slice rule judges a slice over the slice table's Holm family (every slice of the metric,
of every slice column), so that the gate fails CI exactly where the report's own table would
call a regression, not on a slice whose p-value only clears the bar within its own column."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from reportgen.cli import cli

TOPICS = 8  # a second slice column: 2 + 8 slices in the family of correct


def logs(tmp_path: Path, broken_in_x: int, fixed_in_x: int) -> tuple[Path, Path]:
    """Slice x (60 questions) loses ``broken_in_x`` and gains ``fixed_in_x``; slice y (200)
    gains 30 and loses 5, so B is better overall; topics cut across both."""
    runs: dict[str, list[dict]] = {"a": [], "b": []}
    i = 0
    for value, n, fixed, broken in (("x", 60, fixed_in_x, broken_in_x), ("y", 200, 30, 5)):
        for j in range(n):
            a = b = j % 2 == 0
            if j < fixed:
                a, b = False, True
            elif j < fixed + broken:
                a, b = True, False
            for run, correct in (("a", a), ("b", b)):
                runs[run].append(
                    {
                        "question_id": f"q{i}",
                        "slice": value,
                        "topic": f"t{i % TOPICS}",
                        "correct": correct,
                    }
                )
            i += 1
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, run in zip(paths, "ab", strict=True):
        pd.DataFrame(runs[run]).to_parquet(path)
    return paths


def gate_and_table(tmp_path: Path, broken_in_x: int, fixed_in_x: int) -> tuple[dict, dict]:
    a, b = logs(tmp_path, broken_in_x, fixed_in_x)
    report = tmp_path / "r.html"
    args = ["compare", str(a), str(b), "-o", str(report), "--slice", "slice", "--slice", "topic"]
    result = CliRunner().invoke(cli, [*args, "--require", "correct[slice] >= 0"])
    assert result.exit_code in (0, 1), result.output
    doc = json.loads(report.with_suffix(".json").read_text())
    x = doc["comparisons"][0]["slices"]["slice"]["x"]["correct"]
    return doc["gate"]["results"][0], x


@pytest.mark.parametrize(
    ("broken_in_x", "fixed_in_x", "outcome", "finding"),
    [
        # McNemar p 0.021 in x: below 0.05 within the column's 2 slices (Holm x1), not among
        # the table's 10 (x9): no regression finding, so the gate passes
        (9, 1, "pass", False),
        # 14 broken, none fixed: a finding among the 10 slices, and the gate fails
        (14, 0, "fail", True),
    ],
)
def test_slice_rule_fails_where_the_slice_table_finds_a_regression(
    tmp_path, broken_in_x, fixed_in_x, outcome, finding
):
    rule, x = gate_and_table(tmp_path, broken_in_x, fixed_in_x)
    assert x["finding"] is finding
    assert rule["outcome"] == outcome, rule["detail"]
    assert "slice = x is the likeliest below 0" in rule["detail"]
    assert "Holm-adjusted over 10 slices (of slice, topic, as in the slice table)" in rule["detail"]
