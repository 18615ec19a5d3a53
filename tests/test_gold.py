"""Golden-file test: the sample report's JSON, every number, against the committed gold.

Tool and library versions, input paths and the run id are scrubbed. A mismatch writes the new
JSON to tests/gold-mismatch/ (git-ignored); tests/gold/README.md says how to update the gold.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from click.testing import CliRunner

from reportgen.cli import cli

ROOT = Path(__file__).resolve().parent.parent
GOLD = ROOT / "tests" / "gold" / "sample_report.json"
MISMATCH = ROOT / "tests" / "gold-mismatch"


def scrub(doc: dict) -> dict:
    assert re.fullmatch("[0-9a-f]{32}", doc["run_id"]), doc["run_id"]
    doc["run_id"] = "scrubbed: a new id every run"
    doc["tool"] = {"name": doc["tool"]["name"]}
    for run in doc["runs"].values():
        run["path"] = Path(run["path"]).name
    return doc


def test_sample_report_matches_gold(tmp_path):
    out = tmp_path / "report.html"
    result = CliRunner().invoke(
        cli,
        [
            "compare",
            str(ROOT / "sample_runs" / "fare_rules_a_baseline.parquet"),
            str(ROOT / "sample_runs" / "fare_rules_b_reranker.parquet"),
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    actual = json.dumps(scrub(json.loads(out.with_suffix(".json").read_text())), indent=1) + "\n"
    if os.environ.get("RAGREPORT_UPDATE_GOLD") == "1":
        GOLD.write_text(actual)
    same = close(json.loads(actual), json.loads(GOLD.read_text()))
    if not same:
        MISMATCH.mkdir(exist_ok=True)
        (MISMATCH / GOLD.name).write_text(actual)
    assert same, f"the sample report changed; see {MISMATCH / GOLD.name}"


def close(actual: object, expected: object) -> bool:
    """Equal, floats to 1e-9 relative: the last bits of a float may differ across machines."""
    if isinstance(actual, float) and isinstance(expected, float):
        return abs(actual - expected) <= 1e-9 * max(1.0, abs(expected))
    if isinstance(actual, dict) and isinstance(expected, dict):
        return actual.keys() == expected.keys() and all(
            close(actual[k], expected[k]) for k in actual
        )
    if isinstance(actual, list) and isinstance(expected, list):
        return len(actual) == len(expected) and all(
            close(a, e) for a, e in zip(actual, expected, strict=True)
        )
    return actual == expected
