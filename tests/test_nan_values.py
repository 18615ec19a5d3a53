"""NaN as Parquet stores it: a value each check must see, though the column's statistics (min
and max) leave it out; in a share column, a missing value in every format, as pandas' null is."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from reportgen.cli import cli


def _log(path, faithfulness, latency_ms):
    n = len(faithfulness)
    table = pa.table(
        {
            "question_id": [f"q{i}" for i in range(n)],
            "correct": [i % 2 == 0 for i in range(n)],
            # from numpy, so a NaN stays a NaN (not a null, as pandas would make it)
            "faithfulness": pa.array(np.array(faithfulness, dtype=float)),
            "latency_ms": pa.array(np.array(latency_ms, dtype=float)),
        }
    )
    assert table["faithfulness"].null_count == 0
    pq.write_table(table, path)
    return path


# Run A's faithfulness with a judge that failed on q2, as each tool writes it.
_FAILED = [0.5, 1.0, float("nan"), 0.2]


def _csv(path):
    cells = ["0.5", "1.0", "NaN", "0.2"]  # polars' write_csv spells a NaN so
    lines = [f"q{i},{i % 2 == 0},{c}" for i, c in enumerate(cells)]
    path.write_text("question_id,correct,faithfulness\n" + "\n".join(lines) + "\n")


def _jsonl(path):
    rows = [
        {"question_id": f"q{i}", "correct": i % 2 == 0, "faithfulness": v}
        for i, v in enumerate(_FAILED)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))  # json.dumps writes NaN


def _arrow_parquet(path):
    _log(path, _FAILED, [10, 20, 30, 40])


def _pandas_parquet(path):  # pandas writes NaN as null
    pd.DataFrame(
        {
            "question_id": [f"q{i}" for i in range(4)],
            "correct": [i % 2 == 0 for i in range(4)],
            "faithfulness": _FAILED,
        }
    ).to_parquet(path)


@pytest.mark.parametrize(
    "name, writer",
    [
        ("a.parquet", _arrow_parquet),
        ("a.parquet", _pandas_parquet),
        ("a.csv", _csv),
        ("a.jsonl", _jsonl),
    ],
)
def test_a_nan_share_is_a_missing_value_in_every_format(tmp_path, name, writer):
    writer(tmp_path / name)
    b = _log(tmp_path / "b.parquet", [0.6, 0.8, 0.7, 0.4], [10, 20, 30, 40])
    out = tmp_path / "r.html"
    args = ["compare", str(tmp_path / name), str(b), "-o", str(out), "--quiet"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(out.with_suffix(".json").read_text())
    faithfulness = doc["comparisons"][0]["metrics"]["faithfulness"]
    # q2 left out: A (0.5 + 1.0 + 0.2) / 3, B (0.6 + 0.8 + 0.4) / 3
    assert faithfulness["n"] == 3
    assert faithfulness["a"] == pytest.approx(1.7 / 3) and faithfulness["b"] == pytest.approx(0.6)
    assert (
        "faithfulness is compared on 3 of 4 paired questions: it has no value on 1 in run A, "
        "and its interval, test and gate rules read the rest only" in doc["warnings"]
    )


def test_a_nan_answer_relevance_in_parquet_is_no_problem(tmp_path):
    log = _log(tmp_path / "a.parquet", [0.5, 1.0, 0.7, 0.2], [10, 20, 30, 40])
    table = pq.read_table(log)
    relevance = pa.array(np.array([0.1, np.nan, 0.3, 0.4]))
    pq.write_table(table.append_column("answer_relevance", relevance), log)
    result = CliRunner().invoke(cli, ["validate", str(log)])
    assert result.exit_code == 0, result.output
    assert "ok, 4 rows follow the run-log contract" in result.output


def test_a_nan_latency_in_parquet_is_left_out_and_counted(tmp_path):
    a = _log(tmp_path / "a.parquet", [0.5, 1.0, 0.7, 0.2], [10, np.nan, 30, 40])
    b = _log(tmp_path / "b.parquet", [0.5, 1.0, 0.7, 0.2], [12, 22, 32, 42])
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["compare", str(a), str(b), "-o", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    warnings = json.loads(out.with_suffix(".json").read_text())["warnings"]
    assert (
        "1 value of latency_ms in a.parquet is not finite (inf or NaN) and is left out, "
        "first at row 2" in warnings
    )


def test_the_count_of_scored_questions_is_written_as_the_paired_ones_are(tmp_path):
    """'faithfulness is compared on 2940 of 3,000 paired questions': one number of the
    sentence had its thousands separator and the other not."""
    rows = [
        {"question_id": f"q{i:04d}", "correct": i % 3 == 0,
         "faithfulness": float("nan") if i % 50 == 0 else 0.5}
        for i in range(3000)
    ]  # fmt: skip
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pd.DataFrame(rows).to_parquet(a)
    pd.DataFrame(rows).assign(faithfulness=0.5).to_parquet(b)
    out = tmp_path / "r.html"
    done = CliRunner().invoke(cli, ["compare", str(a), str(b), "-o", str(out), "--n-boot", "200"])
    assert done.exit_code == 0, done.output
    warnings = json.loads((tmp_path / "r.json").read_text())["warnings"]
    assert (
        "faithfulness is compared on 2,940 of 3,000 paired questions: it has no value on 60 in "
        "run A, and its interval, test and gate rules read the rest only"
    ) in warnings
