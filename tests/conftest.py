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


SHARED_KEYS = ("runs", "n_paired", "warnings", "gate")  # top-level keys that stay as written


def two_run_view(doc: dict) -> dict:
    """A two-run report's JSON with its one comparison's keys lifted to the top, as the
    pairwise tests read it (``runs``, ``n_paired``, ``warnings`` and ``gate`` stay the report's;
    ``report`` holds the document as written)."""
    (pair,) = doc["comparisons"]
    shared = {k: doc[k] for k in SHARED_KEYS}
    return {**doc, **pair, **shared, "report": doc}


def run_compare(run_a: Path, run_b: Path, out_dir: Path, *options) -> dict:
    """Run ``ragreport compare`` through the click CLI and return its JSON, as two_run_view."""
    from click.testing import CliRunner

    from reportgen.cli import cli

    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "report.json"
    args = ["compare", str(run_a), str(run_b), "-o", str(out_dir / "report.html")]
    args += ["--json", str(json_path), *(str(o) for o in options)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return two_run_view(json.loads(json_path.read_text()))


@pytest.fixture(scope="session", autouse=True)
def every_report_matches_the_schema():
    """Every report JSON a test writes is checked against the JSON Schema in the package."""
    from jsonschema import Draft202012Validator

    from reportgen.reporters import json_report

    validator = Draft202012Validator(json_report.json_schema())
    written = json_report.dumps

    def checked(document: dict, per_question) -> str:
        text = written(document, per_question)
        if "run_id" in document:  # verify's re-run has none; what compare writes always has
            validator.validate(json.loads(text))
        return text

    patch = pytest.MonkeyPatch()
    patch.setattr(json_report, "dumps", checked)
    yield
    patch.undo()


@pytest.fixture(scope="session")
def write_log():
    return write_run_log


@pytest.fixture(scope="session")
def compare():
    return run_compare
