"""Golden-file test: the sample report's JSON, every number, against the committed gold.

Tool and library versions, input paths and the run id are scrubbed. A mismatch writes the new
JSON to tests/gold-mismatch/ (git-ignored); tests/gold/README.md says how to update the gold.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from reportgen.cli import cli

ROOT = Path(__file__).resolve().parent.parent
GOLDS = ROOT / "tests" / "gold"
SAMPLE = ROOT / "sample_runs"
RUNS = {  # gold file -> the sample logs it compares, the baseline first
    "sample_report.json": ("fare_rules_a_baseline", "fare_rules_b_reranker"),
    "sample_report_three.json": (
        "fare_rules_a_baseline",
        "fare_rules_b_reranker",
        "fare_rules_c_prompt",
    ),
}
MISMATCH = ROOT / "tests" / "gold-mismatch"


def scrub(doc: dict) -> dict:
    assert re.fullmatch("[0-9a-f]{32}", doc["run_id"]), doc["run_id"]
    doc["run_id"] = "scrubbed: a new id every run"
    doc["tool"] = {"name": doc["tool"]["name"]}
    for run in doc["runs"]:
        run["path"] = Path(run["path"]).name
    return doc


@pytest.mark.parametrize("name", list(RUNS))
def test_sample_report_matches_gold(tmp_path, name):
    gold = GOLDS / name
    out = tmp_path / "report.html"
    logs = [str(SAMPLE / f"{run}.parquet") for run in RUNS[name]]
    result = CliRunner().invoke(cli, ["compare", *logs, "-o", str(out)])
    assert result.exit_code == 0, result.output
    actual = json.dumps(scrub(json.loads(out.with_suffix(".json").read_text())), indent=1) + "\n"
    if os.environ.get("RAGREPORT_UPDATE_GOLD") == "1":
        gold.write_text(actual)
    same = close(json.loads(actual), json.loads(gold.read_text()))
    if not same:
        MISMATCH.mkdir(exist_ok=True)
        (MISMATCH / gold.name).write_text(actual)
    assert same, f"the sample report changed; see {MISMATCH / gold.name}"


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
