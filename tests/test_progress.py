"""Progress on stderr: drawn on a terminal for a run past SHOW_AFTER seconds, erased at the end,
silent on anything else and with --quiet."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from reportgen import progress
from reportgen.cli import cli

SAMPLES = Path(__file__).resolve().parent.parent / "sample_runs"
A = SAMPLES / "fare_rules_a_baseline.parquet"
B = SAMPLES / "fare_rules_b_reranker.parquet"


class Terminal(io.StringIO):
    """A stderr that says it is a terminal and keeps what was written."""

    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_nothing_is_drawn_before_show_after_seconds():
    clock, terminal = Clock(), Terminal()
    shown = progress.Progress(terminal, clock)
    shown.stage("reading the logs")
    clock.now += progress.SHOW_AFTER - 0.01
    shown.draw()
    shown.erase()
    assert terminal.getvalue() == ""


def test_the_line_names_the_stage_and_the_seconds_and_is_redrawn_in_place():
    clock, terminal = Clock(), Terminal()
    shown = progress.Progress(terminal, clock)
    shown.stage("B against A: intervals")
    clock.now += 3.4
    shown.draw()
    shown.stage("writing")
    clock.now += 1.0
    shown.draw()
    assert terminal.getvalue() == (
        "\r\x1b[Kragreport: B against A: intervals (3 s)\r\x1b[Kragreport: writing (4 s)"
    )
    shown.erase()
    assert terminal.getvalue().endswith("(4 s)\r\x1b[K")  # the verdict starts on a clean line


def test_stages_outside_a_shown_block_are_no_ops():
    progress.stage("reading the logs")  # library use: nothing to draw on, nothing raised
    assert progress._current is None


@pytest.mark.parametrize("stream", [io.StringIO(), Terminal()], ids=["pipe", "quiet terminal"])
def test_a_pipe_or_quiet_gets_nothing(stream, monkeypatch):
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)
    with progress.shown(stream, quiet=isinstance(stream, Terminal)):
        progress.stage("reading the logs")
        assert progress._current is None
    assert stream.getvalue() == ""


def _compare(
    tmp_path: Path, terminal: Terminal, monkeypatch, *options: str, runs: tuple[Path, ...] = (A, B)
) -> None:
    monkeypatch.setattr(sys, "stderr", terminal)  # here: pytest sets its own before each test
    cli.main(
        ["compare", *map(str, runs), "-o", str(tmp_path / "r.html"), *options],
        standalone_mode=False,
    )


@pytest.fixture
def terminal(monkeypatch) -> Terminal:
    """A terminal for stderr, and every run counted as long."""
    stream = Terminal()
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)
    monkeypatch.setattr(progress, "REDRAW_EVERY", 0.001)
    return stream


def test_compare_on_a_terminal_goes_through_every_stage_and_erases_its_line(
    terminal, tmp_path, monkeypatch
):
    named: list[str] = []
    enter = progress.Progress.stage

    def spy(self: progress.Progress, name: str) -> None:
        named.append(name)
        enter(self, name)

    monkeypatch.setattr(progress.Progress, "stage", spy)
    _compare(tmp_path, terminal, monkeypatch)
    assert [n.removeprefix("B against A: ") for n in named] == [
        "reading the logs",
        "per-question metrics",
        "diagnosis",
        "intervals",
        "intervals by slice",
        "charts and the page",
        "writing",
    ]
    assert named[0] == "reading the logs"  # every run once, then each pair by its names
    assert named[1] == "B against A: per-question metrics"
    drawn = terminal.getvalue()
    assert drawn.startswith("\r\x1b[Kragreport: ")
    assert drawn.endswith("\r\x1b[K")


def test_a_log_beside_a_table_is_scored_in_a_stage_of_its_own(terminal, tmp_path, monkeypatch):
    named: list[str] = []
    monkeypatch.setattr(progress.Progress, "stage", lambda self, name: named.append(name))
    table = tmp_path / "a-metrics.parquet"
    cli.main(["metrics", str(A), "-o", str(table)], standalone_mode=False)
    _compare(tmp_path, terminal, monkeypatch, runs=(table, B))
    assert named[:3] == [
        "reading the logs",
        "scoring the logs given beside tables",
        "B against A: per-question metrics",
    ]


def test_compare_quiet_draws_nothing_on_a_terminal(terminal, tmp_path, monkeypatch):
    _compare(tmp_path, terminal, monkeypatch, "--quiet")
    assert terminal.getvalue() == ""
    assert (tmp_path / "r.html").exists()


def test_verify_names_its_last_stages(terminal, tmp_path, monkeypatch):
    """verify's line kept "intervals by slice" while it compared the numbers and drew the page
    again, the longest part of a large report's check."""
    _compare(tmp_path, io.StringIO(), monkeypatch, "--quiet")
    named: list[str] = []
    monkeypatch.setattr(progress.Progress, "stage", lambda self, name: named.append(name))
    monkeypatch.setattr(sys, "stderr", terminal)
    with pytest.raises(SystemExit) as done:
        cli.main(["verify", str(tmp_path / "r.json")])
    assert done.value.code == 0
    assert named[0] == "reading the logs"
    assert named[-3:] == [
        "B against A: intervals by slice",
        "comparing the numbers",
        "drawing and comparing the page",
    ]
