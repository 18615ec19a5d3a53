"""NaN as Parquet stores it: a value each check must see, though the column's statistics (min
and max) leave it out."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
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


def test_a_nan_faithfulness_in_parquet_refuses_the_log(tmp_path):
    log = _log(tmp_path / "a.parquet", [0.5, 1.0, np.nan, 0.2], [10, 20, 30, 40])
    result = CliRunner().invoke(cli, ["validate", str(log)])
    assert result.exit_code == 2, result.output
    assert "faithfulness is nan" in result.output and "row 3" in result.output


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
