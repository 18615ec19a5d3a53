"""A number column one run's file writes at fewer decimals (pandas' to_json: 10; a CSV written
with %.6f: 6) is read in both runs at those decimals, so a run beside a copy of itself written
that way ties, and a real change still counts; values that need few decimals by nature, or a
unit near the values' size, are not rounded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs" / "fare_rules_a_baseline.parquet"


def test_a_run_beside_its_to_json_copy_ties_on_every_question(tmp_path, compare):
    """The sample run as JSON Lines at to_json's default: faithfulness of 2/3 is written
    0.6666666667, 5e-11 off, which read as 13 wins and 21 losses of the run against itself."""
    a = pd.read_parquet(SAMPLE)
    a.to_json(tmp_path / "b.jsonl", orient="records", lines=True)
    written = pd.read_json(tmp_path / "b.jsonl", lines=True)["faithfulness"]
    assert (written != a["faithfulness"]).sum() > 20  # the file does differ, by rounding
    out = compare(SAMPLE, tmp_path / "b.jsonl", tmp_path / "o")
    faithfulness = out["metrics"]["faithfulness"]
    assert (faithfulness["wins"], faithfulness["losses"]) == (0, 0)
    assert faithfulness["ties"] == faithfulness["n"] == len(a)
    assert any("Run B's outputs are run A's" in w for w in out["warnings"])


def _judged(tmp_path: Path, judge: np.ndarray) -> Path:
    a = pd.DataFrame(
        {
            "question_id": [f"q{i:03d}" for i in range(len(judge))],
            "correct": np.arange(len(judge)) % 3 == 0,
            "judge": judge,
        }
    )
    a.to_parquet(tmp_path / "a.parquet")
    return tmp_path / "a.parquet"


def test_a_csv_at_six_decimals_keeps_its_real_changes_and_drops_the_rounding(tmp_path, compare):
    """A --metric score in full precision beside a CSV of it at %.6f, 10 of 60 questions raised
    by 0.1: those 10 are the wins, the other 50 tie (every one of them differed by rounding)."""
    judge = np.random.default_rng(2).random(60)
    a = _judged(tmp_path, judge)
    b = pd.read_parquet(a)
    b.loc[:9, "judge"] += 0.1
    b.to_csv(tmp_path / "b.csv", index=False, float_format="%.6f")
    rounded = pd.read_csv(tmp_path / "b.csv")["judge"].to_numpy()
    assert (rounded[10:] != judge[10:]).sum() >= 45
    out = compare(a, tmp_path / "b.csv", tmp_path / "o", "--metric", "judge")
    m = out["metrics"]["judge"]
    assert (m["wins"], m["losses"], m["ties"]) == (10, 0, 50)
    # both runs read at 6 decimals: B's mean is the mean of the file's values, A's of its own
    # values rounded to 6, so B - A is 1/60 of the 10 raises of 0.1 as written
    assert m["b"] - m["a"] == np.float64(np.round(rounded, 6).mean() - np.round(judge, 6).mean())
    assert abs(m["diff"] - 1 / 60) < 1e-6


def test_values_of_few_decimals_by_nature_are_not_rounded(tmp_path, compare):
    """A's judge in quarters needs 2 decimals, which says nothing of how its file was written:
    B's values 3e-7 above A's on 12 questions stay 12 wins."""
    judge = np.tile([0.0, 0.25, 0.5, 0.75, 1.0], 12)
    a = _judged(tmp_path, judge)
    b = pd.read_parquet(a)
    b.loc[:11, "judge"] += 3e-7
    b.to_parquet(tmp_path / "b.parquet")
    m = compare(a, tmp_path / "b.parquet", tmp_path / "o", "--metric", "judge")["metrics"]["judge"]
    assert (m["wins"], m["losses"]) == (12, 0)


def test_a_unit_near_the_values_size_is_not_rounded(tmp_path, compare):
    """Costs of about $0.000002 a question, one run's at 6 decimals: a unit of the 6th decimal
    is half the values, so the other run's costs keep their digits (B's mean is its own)."""
    base = pd.read_parquet(SAMPLE).head(40)
    cost = np.random.default_rng(3).uniform(1e-6, 3e-6, 40)
    a = base.assign(cost_usd=np.round(cost, 6))
    b = base.assign(cost_usd=cost)
    a.to_parquet(tmp_path / "a.parquet")
    b.to_parquet(tmp_path / "b.parquet")
    out = compare(tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "o")
    assert abs(out["cost"]["cost_usd"]["b"] - cost.mean()) < 1e-18
