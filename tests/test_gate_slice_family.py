"""A per-slice rule judges a slice over the slice table's Holm family (every slice of the metric,
of every slice column), so that the gate fails CI exactly where the report's own table would
call a regression, not on a slice whose p-value only clears the bar within its own column."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from reportgen.analysis.stats import bound_p, compare_with_sides, holm
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


def test_a_slice_rule_names_the_slice_the_readme_says(tmp_path):
    """Slice x: 5 questions, all broken; slice y: 20, none changed. README said the rule names
    the slice of the lowest adjusted p, which is x; the rule names y, the likeliest to break it
    of the slices that could (a slice of under 10 questions gives a direction, not proof, and
    with a wide interval has the lower p whatever its estimate), and README now says so."""
    runs: dict[str, list[dict]] = {"a": [], "b": []}
    for i in range(25):
        value = "x" if i < 5 else "y"
        for run, correct in (("a", True), ("b", value == "y")):
            runs[run].append({"question_id": f"q{i}", "slice": value, "correct": correct})
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, run in zip(paths, "ab", strict=True):
        pd.DataFrame(runs[run]).to_parquet(path)
    report = tmp_path / "r.html"
    rule = "correct[slice] >= -0.05"
    result = CliRunner().invoke(
        cli, ["compare", *map(str, paths), "-o", str(report), "--require", rule]
    )
    assert result.exit_code == 0, result.output
    assert (
        f"  pass  B  {rule}: slice slice = y is the likeliest below -0.05: difference 0, interval "
        "[-0.1611, 0.1611]; one-sided p 1 of its interval"
    ) in result.output
    # the rule's p of each slice, Holm-adjusted: x's is the lower, and not below 0.025
    p = [
        bound_p(sides, means, -0.05, upper=True)
        for _, means, sides in (
            compare_with_sides("correct", np.ones(n), b, binary=True, n_boot=5000,
                               confidence=0.95, seed=0)
            for n, b in ((5, np.zeros(5)), (20, np.ones(20)))
        )
    ]  # fmt: skip
    assert holm(p) == [pytest.approx(0.033, abs=0.001), 1.0]
    readme = " ".join((Path(__file__).parent.parent / "README.md").read_text().split())
    assert (
        "(5 questions all broken beside 20 unchanged: the 20 are named, though the 5 have the "
        "lower p, 0.033 adjusted against `correct[slice] >= -0.05`, not below 0.025)"
    ) in readme


def _faithfulness_logs(tmp_path: Path, moves: dict[str, np.ndarray]) -> tuple[Path, Path]:
    """One question per move, slice by slice; A's faithfulness 0.8, B's 0.8 plus the move."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[dict]] = {"a": [], "b": []}
    i = 0
    for value, move in moves.items():
        for d in move:
            for run, score in (("a", 0.8), ("b", 0.8 + float(d))):
                row = {"question_id": f"q{i:04d}", "slice": value, "faithfulness": score}
                runs[run].append({**row, "correct": True})
            i += 1
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, run in zip(paths, "ab", strict=True):
        pd.DataFrame(runs[run]).to_parquet(path)
    return paths


def _table_and_gate(tmp_path: Path, moves: dict[str, np.ndarray]) -> tuple[dict, dict, int]:
    a, b = _faithfulness_logs(tmp_path, moves)
    report = tmp_path / "r.html"
    args = ["compare", str(a), str(b), "-o", str(report), "--quiet"]
    result = CliRunner().invoke(cli, [*args, "--require", "faithfulness[slice] >= 0"])
    doc = json.loads(report.with_suffix(".json").read_text())
    rows = doc["comparisons"][0]["slices"]["slice"]
    return rows, doc["gate"]["results"][0], result.exit_code


def test_a_slice_whose_every_question_moved_alike_reads_one_way_in_table_and_gate(tmp_path):
    """15 questions each 0.3 worse beside 15 unchanged: the table called x a regression (sign
    flips p 6e-5, Holm 0.0001; its interval [-0.443, -0.035] before the adjustment) while
    'faithfulness[slice] >= 0' passed (its bound's one-sided p 0.017, Holm-adjusted over the 2
    slices 0.034, not below 0.025). The finding now asks for that bound too: neither finds it."""
    moves = {"x": np.full(15, -0.3), "y": np.zeros(15)}
    rows, rule, code = _table_and_gate(tmp_path, moves)
    x = rows["x"]["faithfulness"]
    assert x["p_holm"] < 0.001 and x["ci_high"] < 0
    assert x["p_bound_holm"] == pytest.approx(0.034, abs=0.001)
    assert x["finding"] is False
    assert (rule["outcome"], code) == ("pass", 0)


def test_the_table_s_findings_are_the_per_slice_rule_s_failures(tmp_path):
    """Over 40 seeded sets of 3 slices (10 to 40 questions, some moved alike, some spread, some
    lost): the table names a regression in a set exactly where 'faithfulness[slice] >= 0'
    fails, and p_bound_holm is the Holm adjustment of each slice's bound p, recomputed."""
    rng = np.random.default_rng(11)
    found = 0
    for rep in range(40):
        moves = {}
        for value in "xyz":
            n = int(rng.integers(10, 41))
            shift = rng.choice([0.0, -0.05, -0.15, -0.3])
            spread = rng.choice([0.0, 0.05, 0.2])
            moves[value] = np.round(np.clip(shift + spread * rng.standard_normal(n), -0.8, 0.2), 3)
        rows, rule, code = _table_and_gate(tmp_path / str(rep), moves)
        findings = [rows[v]["faithfulness"]["finding"] for v in "xyz"]
        assert any(findings) == (rule["outcome"] == "fail"), (rep, rule["detail"])
        assert code == (1 if any(findings) else 0)
        found += any(findings)
        raw = []
        for value in "xyz":
            move = moves[value]
            c, means, sides = compare_with_sides(
                "faithfulness", np.full(len(move), 0.8), 0.8 + move, binary=False,
                n_boot=5000, confidence=0.95, seed=0,
            )  # fmt: skip
            raw.append(bound_p(sides, means, 0.0, True, max(abs(c.a), abs(c.b))))
        adjusted = [rows[v]["faithfulness"]["p_bound_holm"] for v in "xyz"]
        assert adjusted == pytest.approx(holm(raw), abs=1e-12)
    assert 5 <= found <= 35  # both outcomes are exercised


def test_a_slice_without_an_interval_gives_no_evidence_in_either_holm_family(tmp_path):
    """A slice of one question has no interval: a per-slice rule reads its p as 1, but the
    slice table took its resamples of one value (p 0) into its Holm family, so the other
    slice's bound was multiplied by 1 in the table and by 2 in the rule, and the table could
    call a regression that 'latency_ms[slice] <= 0' passed."""
    rng = np.random.default_rng(4)
    latency = np.round(rng.normal(1000, 50, 13), 1)
    slower = latency + np.r_[np.round(rng.normal(30, 40, 12), 1), 300.0]
    runs = {}
    for run, values in (("a", latency), ("b", slower)):
        frame = pd.DataFrame(
            {
                "question_id": [f"q{i:02d}" for i in range(13)],
                "slice": ["big"] * 12 + ["solo"],
                "correct": True,
                "latency_ms": values,
            }
        )
        runs[run] = tmp_path / f"{run}.parquet"
        frame.to_parquet(runs[run])
    report = tmp_path / "r.html"
    args = ["compare", str(runs["a"]), str(runs["b"]), "-o", str(report), "--quiet"]
    result = CliRunner().invoke(cli, [*args, "--require", "latency_ms[slice] <= 0"])
    doc = json.loads(report.with_suffix(".json").read_text())
    rows = doc["comparisons"][0]["slices"]["slice"]
    assert rows["solo"]["latency_ms"]["p_bound_holm"] == 1.0
    c, means, sides = compare_with_sides(
        "latency_ms", latency[:12], slower[:12], binary=False, n_boot=5000, confidence=0.95,
        seed=0,
    )  # fmt: skip
    raw = bound_p(sides, means, 0.0, False, max(abs(c.a), abs(c.b)))
    assert rows["big"]["latency_ms"]["p_bound_holm"] == pytest.approx(min(1.0, 2 * raw))
    finding = rows["big"]["latency_ms"]["finding"]
    assert (doc["gate"]["results"][0]["outcome"] == "fail") == finding
    assert result.exit_code == (1 if finding else 0)
