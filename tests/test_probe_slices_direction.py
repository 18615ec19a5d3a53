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
    """B worse overall on the only metric, better in slice "up" and 0.5 lower on each of 12
    questions of "down": the loss is a finding whatever the overall mean does, and "up", against
    the overall loss, is not flagged; with B ahead and "down" unchanged, the summary says no
    slice's loss is a finding nor goes against the gain."""
    a, b = _logs(tmp_path, up=(0.1, 0.3), down=(0.7, 0.2))
    md = tmp_path / "s.md"
    report = compare(a, b, tmp_path / "out", "--n-boot", "300", "--markdown", md)
    assert report["metrics"]["faithfulness"]["diff"] < 0
    slices = report["slices"]["slice"]
    assert (
        slices["down"]["faithfulness"]["finding"] and not slices["up"]["faithfulness"]["regression"]
    )
    section = md.read_text().split("### Regressions")[1].split("###")[0]
    assert "(adjusted p below 0.05)" in section
    assert "| slice | down | faithfulness | 12 | \u22120.500 |" in section
    assert "| up |" not in section
    a, b = _logs(tmp_path, up=(0.1, 0.4), down=(0.7, 0.7))
    compare(a, b, tmp_path / "out2", "--n-boot", "300", "--markdown", md)
    assert (
        "No slice's loss is a finding (Holm-adjusted p below 0.05, 10 questions or more and an "
        "interval wholly on the worse side once the adjustment widens it), and no slice has B "
        "worse where B is ahead on the overall mean."
    ) in md.read_text()


def _hidden_loss(tmp_path: Path, gained: int) -> list[Path]:
    """400 questions in 4 slices of 100: B breaks 30 answers of slice s3 and fixes none there,
    and fixes ``gained`` answers in each other slice (10: the overall mean does not move)."""
    paths = []
    for run in (0, 1):
        rows = []
        for s in range(4):
            for i in range(100):
                right = i % 2 == 0  # A answers half of each slice right
                if run and s == 3 and right and i < 60:
                    right = False  # 30 broken
                if run and s != 3 and not right and i < 2 * gained:
                    right = True
                rows.append({"question_id": f"s{s}-{i}", "slice": f"s{s}", "correct": right})
        paths.append(tmp_path / f"{'ab'[run]}.parquet")
        pd.DataFrame(rows).to_parquet(paths[-1])
    return paths


@pytest.mark.parametrize("gained", [10, 9])
def test_a_slice_loss_under_a_flat_or_falling_mean_is_a_finding(tmp_path, compare, gained):
    # a flat (or slightly lower) mean hides a 30-point loss in s3 as a rising one would: the
    # summary read "No overall difference, so no slice is flagged against it" beside a PASS
    a, b = _hidden_loss(tmp_path, gained)
    md = tmp_path / "s.md"
    report = compare(a, b, tmp_path / "out", "--n-boot", "1000", "--markdown", md)
    assert report["metrics"]["correct"]["diff"] == pytest.approx((3 * gained - 30) / 400)
    s3 = report["slices"]["slice"]["s3"]["correct"]
    assert s3["diff"] == pytest.approx(-0.3) and s3["p_holm"] < 0.001
    assert (s3["regression"], s3["finding"]) == (True, True)
    others = [report["slices"]["slice"][f"s{s}"]["correct"] for s in range(3)]
    assert not any(o["regression"] for o in others)
    (line,) = report["verdict"]["regressions"]
    assert line.startswith("B regresses on slice = s3: \u22120.300 [")
    section = md.read_text().split("### Regressions")[1].split("###")[0]
    assert "| slice | s3 | correct | 100 | \u22120.300 |" in section
    assert section.rstrip().endswith("| < 0.001 | regression |")
    page = (tmp_path / "out" / "report.html").read_text()
    assert '<ul class="regressions"><li>B regresses on slice = s3: ' in page
