"""Shared helpers: write a run log from a list of dicts, run ``compare`` and read its JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

# Arrow types of the run-log columns (spec); a column is written only if some row has it.
COLUMN_TYPES = {
    "question_id": pa.string(),
    "slice": pa.string(),
    "retrieved_ids": pa.list_(pa.string()),
    "relevant_ids": pa.list_(pa.string()),
    "relevant_grades": pa.list_(pa.int64()),
    "context_ids": pa.list_(pa.string()),
    "correct": pa.bool_(),
    "faithfulness": pa.float64(),
}


def write_run_log(path: Path, rows: list[dict]) -> Path:
    """Write ``rows`` (one dict per question) as a Parquet run log at ``path``."""
    names = [c for c in COLUMN_TYPES if any(c in row for row in rows)]
    table = pa.table(
        {c: pa.array([row.get(c) for row in rows], type=COLUMN_TYPES[c]) for c in names}
    )
    pq.write_table(table, path)
    return path


def run_compare(run_a: Path, run_b: Path, out_dir: Path, *options) -> dict:
    """Run ``ragreport compare`` through the click CLI and return the JSON it wrote."""
    from click.testing import CliRunner

    from reportgen.cli import cli

    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "report.json"
    args = ["compare", str(run_a), str(run_b), "-o", str(out_dir / "report.html")]
    args += ["--json", str(json_path), *(str(o) for o in options)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(json_path.read_text())


@pytest.fixture(scope="session")
def write_log():
    return write_run_log


@pytest.fixture(scope="session")
def compare():
    return run_compare
