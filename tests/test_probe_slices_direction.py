"""Which slices go against the overall direction: a difference of float noise has none."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest


def _logs(
    tmp_path: Path, up: tuple[float, float], down: tuple[float, float], spread: float = 0.0
) -> list[Path]:
    """12 questions of slice "up" whose score moves from up[0] in A to up[1] in B, and 12 of
    slice "down" likewise, B's moved by -spread, 0 and +spread in turn."""
    paths = []
    for run in (0, 1):
        path = tmp_path / f"{'ab'[run]}.parquet"
        rows = [
            {
                "question_id": f"{name}{i}",
                "slice": name,
                "faithfulness": moved[run] + run * spread * (i % 3 - 1),
            }
            for name, moved in (("up", up), ("down", down))
            for i in range(12)
        ]
        pd.DataFrame(rows).to_parquet(path)
        paths.append(path)
    return paths


def test_no_slice_regresses_against_an_overall_difference_of_float_noise(tmp_path, compare):
    # 0.3 - 0.1 and 0.5 - 0.7 differ in their last bit: B - A overall is 1.9e-17, not zero,
    # though both runs average 0.4; the down slice is 12 questions all 0.2 lower (p < 0.001)
    a, b = _logs(tmp_path, up=(0.1, 0.3), down=(0.7, 0.5))
    report = compare(a, b, tmp_path / "out", "--n-boot", "1000")
    faithfulness = report["metrics"]["faithfulness"]
    assert faithfulness["a"] == pytest.approx(0.4) and faithfulness["b"] == pytest.approx(0.4)
    assert abs(faithfulness["diff"]) < 1e-12
    down = report["slices"]["slice"]["down"]["faithfulness"]
    assert down["p_holm"] < 0.01  # a clear slice difference, yet nothing for it to go against
    assert (down["regression"], down["finding"]) == (False, False)
    assert report["verdict"]["regressions"] == []


def test_a_slice_against_a_real_overall_gain_is_still_flagged(tmp_path, compare):
    # each down question 0.15 to 0.25 lower: the slice's interval lies wholly below zero (every
    # one exactly 0.2 lower has no spread, and its interval reaches above zero: a direction)
    a, b = _logs(tmp_path, up=(0.1, 0.4), down=(0.7, 0.5), spread=0.05)
    report = compare(a, b, tmp_path / "out", "--n-boot", "1000")
    assert report["metrics"]["faithfulness"]["diff"] > 0.04
    down = report["slices"]["slice"]["down"]["faithfulness"]
    assert down["ci_high"] < 0
    assert (down["regression"], down["finding"]) == (True, True)
    assert len(report["verdict"]["regressions"]) == 1


def test_the_summary_says_which_direction_it_checked(tmp_path, compare):
    """B worse overall on the only metric, better in slice "up": no slice is flagged, and the
    summary does not claim that no slice goes against the overall direction (one does)."""
    a, b = _logs(tmp_path, up=(0.1, 0.3), down=(0.7, 0.2))
    md = tmp_path / "s.md"
    report = compare(a, b, tmp_path / "out", "--n-boot", "300", "--markdown", md)
    assert report["metrics"]["faithfulness"]["diff"] < 0
    text = md.read_text()
    assert "B is not ahead on the overall mean of any metric" in text
    a, b = _logs(tmp_path, up=(0.1, 0.4), down=(0.7, 0.7))
    compare(a, b, tmp_path / "out2", "--n-boot", "300", "--markdown", md)
    assert "No slice has B worse where B is ahead on the overall mean." in md.read_text()
