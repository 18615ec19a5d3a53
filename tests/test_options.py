"""Every option that changes a number is recorded twice from one definition: in the JSON's
``params`` (to re-run the report) and in the page's option list (to read it)."""

from __future__ import annotations

import html
import json
import re
import shutil
from dataclasses import fields
from pathlib import Path

import pytest
from click.testing import CliRunner

from reportgen.analysis.metrics import Options
from reportgen.archive import read_report
from reportgen.cli import cli

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs" / "fare_rules_a_baseline.parquet"

# Every option away from its default, and the page's text for each, written out by hand.
GIVEN = [
    ("--k", "4"),
    ("--gain", "linear"),
    ("--n-boot", "200"),
    ("--confidence", "0.9"),
    ("--seed", "7"),
    ("--slice", "slice"),
    ("--slice", "answerable"),
    ("--strict",),
    ("--supported-threshold", "0.7"),
    ("--margin", "correct=0.02"),
    ("--margin", "0.01"),
    ("--cluster", "slice"),
    ("--span-coverage", "0.5"),
    ("--holdout", "0.3"),
    ("--metric", "latency_ms"),
    ("--lower-is-better", "cost_usd"),
]
PAGE = [
    "--k 4",
    "--gain linear",
    "--n-boot 200",
    "--confidence 90%",
    "--seed 7",
    "--slice slice, answerable",
    "--strict on",
    "--supported-threshold 0.7",
    "--margin correct=0.02, 0.01",
    "--cluster slice",
    "--span-coverage 0.5",
    "--holdout 0.3",
    "--metric latency_ms",
    "--lower-is-better cost_usd",
]
PARAMS = {
    "k": 4,
    "gain": "linear",
    "n_boot": 200,
    "confidence": 0.9,
    "seed": 7,
    "slices": ["slice", "answerable"],
    "strict": True,
    "supported_threshold": 0.7,
    "margins": [["correct", 0.02], ["", 0.01]],
    "cluster": "slice",
    "span_coverage": 0.5,
    "holdout": "0.3",
    "score_columns": ["latency_ms"],
    "lower_is_better": ["cost_usd"],
    "k_source": "--k",
    "k_named": 4,
}


def _page_options(page: str) -> list[str]:
    listed = re.search(r'<p class="note">Options: (.*?)\.<br>', page)
    assert listed, "the page lists no options"
    return [html.unescape(item) for item in listed.group(1).split(" &middot; ")]


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[str, dict]:
    """The sample baseline against a copy of itself (so --strict holds), every option set."""
    folder = tmp_path_factory.mktemp("options")
    copy = shutil.copy(SAMPLE, folder / "copy.parquet")
    out = folder / "report.html"
    given = [word for option in GIVEN for word in option]
    result = CliRunner().invoke(cli, ["compare", str(SAMPLE), str(copy), "-o", str(out), *given])
    assert result.exit_code == 0, result.output
    return out.read_text(), json.loads(out.with_suffix(".json").read_text())


def test_every_option_is_in_the_json_params(report):
    _, document = report
    assert document["params"] == PARAMS


def test_every_option_is_on_the_page(report):
    page, _ = report
    assert _page_options(page) == PAGE


def test_no_field_of_options_can_be_left_out_of_either(report):
    """A new field of Options shows in both outputs, or this fails (its key or flag missing)."""
    page, document = report
    listed = {item.split(" ")[0] for item in _page_options(page)}
    for f in fields(Options):
        assert f.metadata["json"] in document["params"], f.name
        assert f.metadata["flag"] in listed, f.name


def test_every_flag_is_an_option_of_compare():
    flags = {flag for p in cli.commands["compare"].params for flag in p.opts}
    assert {f.metadata["flag"] for f in fields(Options)} <= flags


def test_defaults_are_listed_as_what_they_mean(tmp_path):
    out = tmp_path / "report.html"
    copy = shutil.copy(SAMPLE, tmp_path / "copy.parquet")
    args = ["compare", str(SAMPLE), str(copy), "-o", str(out), "--n-boot", "100"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert _page_options(out.read_text()) == [
        "--k context_ids",
        "--gain exponential",
        "--n-boot 100",
        "--confidence 95%",
        "--seed 0",
        "--slice slice (when logged)",
        "--strict off",
        "--supported-threshold fitted to the scores",
        "--margin none",
        "--cluster none",
        "--span-coverage 0.0",
        "--holdout none",
        "--metric none (RAGAS and promptfoo scores are compared as read)",
        "--lower-is-better none",
    ]


def test_params_read_back_as_the_same_options(report, tmp_path):
    """verify re-runs a report with the options its JSON records: every one, typed."""
    _, document = report
    (tmp_path / "r.json").write_text(json.dumps(document))
    assert read_report(tmp_path / "r.json").options == Options(
        cutoff=4,
        gain="linear",
        n_boot=200,
        confidence=0.9,
        seed=7,
        slices=("slice", "answerable"),
        strict=True,
        supported_threshold=0.7,
        margins=(("correct", 0.02), ("", 0.01)),
        cluster="slice",
        span_coverage=0.5,
        holdout="0.3",
        score_columns=("latency_ms",),
        lower_is_better=("cost_usd",),
    )


@pytest.mark.parametrize(
    ("n_boot", "confidence", "expected"),
    [
        # 100 x 0.001 / 2 beyond each bound; 2 x 10 / 0.001 resamples leave 10
        (100, 0.999, ("0.05", "99.9%", "20,000")),
        (5000, 0.999, ("2.5", "99.9%", "20,000")),  # the default --n-boot at 99.9%
        (399, 0.95, ("10", "95%", "400")),  # 9.975 beyond: one resample short of 2 x 10 / 0.05
        (400, 0.95, None),
        (200, 0.9, None),  # exactly 10 beyond (1 - 0.9 is 0.09999999999999998 in floats)
        (5000, 0.95, None),
    ],
)
def test_too_few_resamples_beyond_a_bound_are_warned_of(n_boot, confidence, expected):
    """An interval's bound with under 10 resamples beyond it is about the extreme resample and
    moves with --seed (--n-boot 100 at 99.9% flipped the verdict between seeds): warned of,
    naming the --n-boot that leaves 10, 2 x 10 / (1 - confidence)."""
    from reportgen.comparison.compare import few_resamples

    warned = few_resamples(n_boot, confidence)
    if expected is None:
        assert warned == []
        return
    beyond, level, needed = expected
    assert warned == [
        f"--n-boot {n_boot:,} leaves fewer than 10 resamples (about {beyond}) beyond each "
        f"bound of a {level} interval drawn from them: a bound is then about the most extreme "
        f"resample and moves with --seed; --n-boot {needed} or more leaves 10"
    ]


def test_the_report_warns_of_too_few_resamples(tmp_path):
    """The warning is among the report's own (JSON and page), where the options are set."""
    out = tmp_path / "report.html"
    copy = shutil.copy(SAMPLE, tmp_path / "copy.parquet")
    args = ["compare", str(SAMPLE), str(copy), "-o", str(out), "--n-boot", "100"]
    result = CliRunner().invoke(cli, [*args, "--confidence", "0.999"])
    assert result.exit_code == 0, result.output
    warning = (
        "--n-boot 100 leaves fewer than 10 resamples (about 0.05) beyond each bound of a 99.9% "
        "interval drawn from them: a bound is then about the most extreme resample and moves "
        "with --seed; --n-boot 20,000 or more leaves 10"
    )
    assert warning in json.loads(out.with_suffix(".json").read_text())["warnings"]
    assert html.escape(warning, quote=False) in out.read_text()
