"""Scores logged as float32 by one run and float64 by the other: float32(0.7) widened to double
is 0.69999998807907, so the same scores differed on every question by about 1e-8, past the
statistics' tie rule: "B worse" at p 0.002, a gate failed, W/L/T counts of rounding alone."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from reportgen.cli import cli

SCORES = [0.7, 0.9, 2 / 3, 0.95, 0.1, 1 / 3] * 10  # 2/3: float32 and float64 differ at 3e-8


def logs(tmp_path, column: str, a_type: str, b_type: str, **extra) -> tuple:
    paths = []
    for name, dtype in (("a", a_type), ("b", b_type)):
        frame = pd.DataFrame(
            {
                "question_id": [f"q{i}" for i in range(len(SCORES))],
                column: np.array(SCORES, dtype=dtype),
                **extra,
            }
        )
        paths.append(tmp_path / f"{name}.parquet")
        frame.to_parquet(paths[-1])
    return tuple(paths)


@pytest.mark.parametrize(("a_type", "b_type"), [("float64", "float32"), ("float32", "float64")])
def test_the_same_faithfulness_in_float32_and_float64_ties(tmp_path, compare, a_type, b_type):
    out = compare(*logs(tmp_path, "faithfulness", a_type, b_type), tmp_path / "out")
    m = out["metrics"]["faithfulness"]
    assert (m["wins"], m["losses"], m["ties"], m["diff"]) == (0, 0, 60, 0.0)
    assert out["verdict"]["outcome"] == "no evidence of a difference"
    # read as the shortest decimal of each float32 (numpy's repr: 0.7, 0.6666667, 0.33333334)
    assert m["a"] == pytest.approx(np.mean([float(str(np.float32(s))) for s in SCORES]), abs=1e-15)


def test_a_metric_column_in_float32_and_float64_ties(tmp_path, compare):
    out = compare(
        *logs(tmp_path, "judge", "float64", "float32"), tmp_path / "out", "--metric", "judge"
    )
    m = out["metrics"]["judge"]
    assert (m["wins"], m["losses"], m["ties"], m["diff"]) == (0, 0, 60, 0.0)


def test_float64_scores_keep_their_precision(tmp_path, compare):
    """Only a column some run holds as float32 is read at its precision: two float64 logs
    differing by 1e-9 on every question still differ."""
    a, b = logs(tmp_path, "faithfulness", "float64", "float64")
    frame = pd.read_parquet(b)
    frame["faithfulness"] = frame["faithfulness"] - 1e-9
    frame.to_parquet(b)
    m = compare(a, b, tmp_path / "out")["metrics"]["faithfulness"]
    assert (m["wins"], m["losses"]) == (0, 60)
    assert m["diff"] == pytest.approx(-1e-9, rel=1e-6)


@pytest.mark.parametrize("column", ["faithfulness", "judge"])
def test_a_study_reads_every_run_at_the_precision_one_of_them_holds(tmp_path, column):
    """Three runs of the same scores, the middle one logged as float32: a study scores each
    log alone, so only that log was read at float32 precision, and 2/3 and 1/3 (float32
    0.6666667, 0.33333334) differed from the baseline's doubles by 3e-8 on 20 of 60 questions:
    W/L/T of rounding alone against the one candidate, none against the other."""
    paths = []
    for name, dtype in (("base", "float64"), ("single", "float32"), ("double", "float64")):
        frame = pd.DataFrame(
            {
                "question_id": [f"q{i}" for i in range(len(SCORES))],
                column: np.array(SCORES, dtype=dtype),
            }
        )
        paths.append(tmp_path / f"{name}.parquet")
        frame.to_parquet(paths[-1])
    out = tmp_path / "r.html"
    metric = ("--metric", column) if column == "judge" else ()
    result = CliRunner().invoke(
        cli, ["compare", *map(str, paths), "-o", str(out), "--n-boot", "300", *metric]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(out.with_suffix(".json").read_text())
    for pair in doc["comparisons"]:
        m = pair["metrics"][column]
        assert (m["wins"], m["losses"], m["ties"], m["diff"]) == (0, 0, 60, 0.0), pair["candidate"]
    # the baseline reads one mean in every pair: that of the shortest float32 decimals
    shortest = np.mean([float(str(np.float32(s))) for s in SCORES])
    means = {pair["metrics"][column]["a"] for pair in doc["comparisons"]}
    assert len(means) == 1 and means.pop() == pytest.approx(shortest, abs=1e-15)


def _same_scores_tie(doc: dict, column: str) -> None:
    m = doc["metrics"][column]
    assert (m["wins"], m["losses"], m["ties"], m["diff"]) == (0, 0, len(SCORES), 0.0)


def test_a_renamed_column_keeps_the_float32_of_its_log(tmp_path, compare):
    """With --map, a Parquet log is read row by row, which held every number as a double:
    renaming the id column alone made float32 scores differ from the same float64 ones on 28
    of 60 questions, and a ceiling on a float32 cost failed against itself."""
    a, b = logs(tmp_path, "faithfulness", "float64", "float32", cost_usd=np.full(60, 0.0))
    for path, dtype in ((a, "float64"), (b, "float32")):
        frame = pd.read_parquet(path).rename(columns={"question_id": "id"})
        frame["cost_usd"] = (np.array(SCORES) / 1000).astype(dtype)
        frame.to_parquet(path)
    doc = compare(a, b, tmp_path / "out", "--map", "question_id=id", "--require", "cost_usd <= 0")
    _same_scores_tie(doc, "faithfulness")
    assert doc["gate"]["outcome"] == "pass"


def test_a_ragas_table_in_float32_ties_with_its_double(tmp_path, compare):
    paths = []
    for name, dtype in (("a", "float64"), ("b", "float32")):
        frame = pd.DataFrame(
            {
                "user_input": [f"question {i}" for i in range(len(SCORES))],
                "faithfulness": np.array(SCORES, dtype=dtype),
            }
        )
        paths.append(tmp_path / f"{name}.parquet")
        frame.to_parquet(paths[-1])
    _same_scores_tie(compare(*paths, tmp_path / "out"), "faithfulness")


def test_shards_of_float32_and_float64_read_at_float32(tmp_path, compare):
    """A folder of shards, one float32 and one float64, which DuckDB reads as one double
    column: the float32 shard's scores differed from the same float64 log's by 3e-8."""
    a, _ = logs(tmp_path, "faithfulness", "float64", "float64")
    folder = tmp_path / "shards"
    folder.mkdir()
    whole = pd.read_parquet(a)
    first, second = whole.iloc[:30].copy(), whole.iloc[30:].copy()
    first["faithfulness"] = first["faithfulness"].astype("float32")
    first.to_parquet(folder / "part-0.parquet")
    second.to_parquet(folder / "part-1.parquet")
    _same_scores_tie(compare(a, folder, tmp_path / "out"), "faithfulness")
