"""bench/stages.py: each stage's wall and CPU seconds, and the SVG child's CPU, from one run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import stages  # noqa: E402


def test_durations_take_each_clock_between_marks():
    marks = [
        ("reading the logs", 0.5, 0.25),
        ("B against A: per-question metrics", 0.75, 1.0),
        ("return", 2.0, 4.0),
    ]
    assert stages.durations(marks, 1) == {
        "imports": 0.5,
        "reading the logs": 0.25,
        "per-question metrics": 1.25,
        "total": 2.0,
    }
    assert stages.durations(marks, 2) == {
        "imports": 0.25,
        "reading the logs": 0.75,
        "per-question metrics": 3.0,
        "total": 4.0,
    }


def test_one_run_times_every_stage_and_the_svg_child(tmp_path):
    logs = (
        REPO / "sample_runs" / "fare_rules_a_baseline.parquet",
        REPO / "sample_runs" / "fare_rules_b_reranker.parquet",
    )
    timed = stages.run(REPO, logs, tmp_path)
    wall, cpu = timed["wall"], timed["CPU"]
    named = ["imports", "reading the logs", "per-question metrics", "diagnosis", "intervals"]
    assert list(wall)[:5] == named
    assert wall["total"] == pytest.approx(sum(v for k, v in wall.items() if k != "total"))
    assert all(v >= 0 for v in [*wall.values(), *cpu.values()])
    # the child that draws the static SVGs ran, and its CPU is counted apart from the process's
    assert cpu["svg child"] > 0.05
    floor = cpu[f"sum / {stages.CORES} cores"]
    assert floor == pytest.approx((cpu["total"] + cpu["svg child"]) / stages.CORES)
