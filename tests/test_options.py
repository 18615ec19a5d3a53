"""Every option that changes a number is recorded twice from one definition: in the JSON's
``params`` (to re-run the report) and in the page's option list (to read it)."""

from __future__ import annotations

import html
import json
import math
import re
import shutil
from dataclasses import fields
from pathlib import Path

import markupsafe
import pytest
from click.testing import CliRunner

from reportgen.analysis.metrics import Options
from reportgen.archive import read_report
from reportgen.cli import cli

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs" / "fare_rules_a_baseline.parquet"
RERANKER = SAMPLE.with_name("fare_rules_b_reranker.parquet")

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
        "--k context_ids or context_spans (when logged)",
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


def _read_from(interval: str, n: int, clusters: int | None = None, confidence: float = 0.95):
    """The interval of correct on ``n`` questions, computed by ``interval``, with its name, its
    bounds quantiles of the resamples: the studentized side's at ``confidence``, the expanded
    percentile's at Hesterberg's level for its questions (or clusters); Student's t reads none."""
    from reportgen.analysis.stats import MCNEMAR, STUDENT_T, STUDENTIZED, MetricComparison

    units = clusters or n
    level = {STUDENTIZED: confidence, STUDENT_T: None}.get(
        interval, 1 - _hesterberg_tail(units, confidence)
    )
    return "correct", MetricComparison(
        "correct", n, 0.5, 0.6, 0.1, 0.0, 0.2, 1, 0, n - 1, 1.0, 1, 0, MCNEMAR, interval, 0.3,
        clusters, resampled=level,
    )  # fmt: skip


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
    naming the --n-boot that leaves 10, 2 x 10 / (1 - confidence) for the studentized bootstrap,
    which reads its resamples at the nominal level."""
    from reportgen.analysis.stats import STUDENT_T, STUDENTIZED
    from reportgen.comparison.compare import few_resamples

    read = [_read_from(STUDENTIZED, 40, confidence=confidence), _read_from(STUDENT_T, 3)]
    warned = few_resamples(n_boot, confidence, read)
    if expected is None:
        assert warned == []
        return
    beyond, level, needed = expected
    assert warned == [
        f"--n-boot {n_boot:,} leaves fewer than 10 resamples (about {beyond}) beyond each "
        f"bound of a {level} interval drawn from them: a bound is then about the most extreme "
        f"resample and moves with --seed; --n-boot {needed} or more leaves 10"
    ]


def _hesterberg_tail(n: int, confidence: float) -> float:
    """Hesterberg's (2015) expanded percentile: alpha' = 2 Phi(-sqrt(n / (n - 1)) t(n - 1))
    with t(n - 1) the upper (1 - confidence) / 2 quantile of Student's t."""
    from scipy import stats

    t = stats.t.ppf(1 - (1 - confidence) / 2, n - 1)
    return 2 * stats.norm.cdf(-math.sqrt(n / (n - 1)) * t)


def test_the_warning_reads_the_expanded_level_of_the_smallest_bootstrapped_interval():
    """A 95% interval of a 0/1 outcome on 10 questions takes its bounds at the expanded level
    1 - alpha' = 98.29% (alpha' = 2 Phi(-1.0541 x 2.2622) = 0.0171): 1,000 resamples leave
    8.6 beyond each, not the 25 the nominal 95% promised, and 2 x 10 / alpha' = 1,169.5
    resamples leave 10. It was not warned of under 400."""
    from reportgen.analysis.stats import SCORED, STUDENTIZED
    from reportgen.comparison.compare import few_resamples

    alpha = _hesterberg_tail(10, 0.95)
    assert alpha == pytest.approx(0.0171, abs=5e-5)
    needed = math.ceil(2 * 10 / alpha)
    assert needed == 1170
    read = [_read_from(STUDENTIZED, 40), _read_from(SCORED, 10), _read_from(SCORED, 200)]
    assert few_resamples(needed, 0.95, read) == []
    assert few_resamples(needed - 1, 0.95, read) != []
    assert few_resamples(1000, 0.95, read) == [
        f"--n-boot 1,000 leaves fewer than 10 resamples (about {1000 * alpha / 2:.2g}) beyond "
        "each bound of the 95% interval of correct on 10 questions, which takes its bounds at "
        "the 98.29% level of its resamples (the expanded percentile, which corrects the "
        "bootstrap's narrowness on few): a bound is then about the most extreme resample and "
        "moves with --seed; --n-boot 1,170 or more leaves 10"
    ]
    assert f"{1000 * alpha / 2:.2g}" == "8.6"


def test_clusters_and_too_few_questions_for_any_n_boot_are_named():
    """With --cluster the expanded level is that of the clusters (4 at 95%: 2 x 10 / alpha' =
    84,000 resamples); on 3 questions alpha' = 1.4e-7 and 146 million resamples would be
    needed, past --n-boot's 100,000: the warning says no --n-boot leaves 10."""
    from reportgen.analysis.stats import CLUSTERED, SCORED
    from reportgen.comparison.compare import few_resamples

    needed = math.ceil(2 * 10 / _hesterberg_tail(4, 0.95))
    assert 80_000 < needed < 90_000
    (warned,) = few_resamples(needed - 1, 0.95, [_read_from(CLUSTERED, 40, clusters=4)])
    assert "interval of correct on 4 clusters" in warned
    assert warned.endswith(f"--n-boot {needed:,} or more leaves 10")
    assert few_resamples(needed, 0.95, [_read_from(CLUSTERED, 40, clusters=4)]) == []
    assert 2 * 10 / _hesterberg_tail(3, 0.95) > 1.4e8
    (warned,) = few_resamples(100_000, 0.95, [_read_from(SCORED, 3)])
    assert "on 3 questions" in warned
    assert warned.endswith("no --n-boot up to 100,000 leaves 10")


def test_differences_without_spread_need_no_resamples():
    """B - A the same on every question resamples to that value every time, so no --n-boot
    moves its bounds: the comparison reads none (resampled None) and none is warned of."""
    import numpy as np

    from reportgen.analysis.stats import SCORED, compare_metric
    from reportgen.comparison.compare import few_resamples

    name, c = _read_from(SCORED, 10, confidence=0.999)
    assert few_resamples(100, 0.999, [(name, c)]) != []
    a, b = np.zeros(10), np.ones(10)  # every question moved by +1: no spread
    same, _ = compare_metric("m", a, b, binary=False, n_boot=100, confidence=0.999, seed=0)
    assert same.sd == 0 and same.resampled is None
    assert few_resamples(100, 0.999, [("m", same)]) == []


def test_the_report_warns_of_too_few_resamples(tmp_path):
    """The warning is among the report's own (JSON and page), where the options are set, and
    reads the interval whose bounds are quantiles of the resamples furthest out: at 99.9% the
    expanded percentile on n questions reads them at 1 - alpha' (Hesterberg), so 2 x 10 /
    alpha' resamples leave 10 beyond each, not the 20,000 of the nominal level. Slice
    rule_lookup's hit@5 (47 questions) takes both bounds from Tango's score interval, which
    no number of resamples moves: it is not the one named (the 7-question slice gives a
    direction only)."""
    from reportgen.analysis.stats import score_interval

    out = tmp_path / "report.html"
    args = ["compare", str(SAMPLE), str(RERANKER), "-o", str(out), "--n-boot", "100"]
    result = CliRunner().invoke(cli, [*args, "--confidence", "0.999"])
    assert result.exit_code == 0, result.output
    document = json.loads(out.with_suffix(".json").read_text())
    (pair,) = document["comparisons"]
    lookup = pair["slices"]["slice"]["rule_lookup"]["hit@5"]
    assert lookup["n"] == 47 and lookup["resampled"] is None
    tango = score_interval(lookup["wins"], lookup["losses"], 47, 0.999)
    assert (lookup["ci_low"], lookup["ci_high"]) == pytest.approx(tango)
    sliced = [s for per in pair["slices"].values() for m in per.values() for s in m.values()]
    read = [
        (c["n"], c["resampled"])
        for c in [*pair["metrics"].values(), *(s for s in sliced if s["n"] >= 10)]
        if c["resampled"] is not None
    ]
    for n, level in read:  # the expanded level, or the studentized side's 99.9%
        assert level in (pytest.approx(1 - _hesterberg_tail(n, 0.999)), 0.999)
    fewest = min(n for n, level in read if level != 0.999)
    alpha = _hesterberg_tail(fewest, 0.999)
    needed = math.ceil(2 * 10 / alpha)
    (warning,) = [w for w in document["warnings"] if w.startswith("--n-boot 100 leaves")]
    assert f"(about {100 * alpha / 2:.2g}) beyond each bound of the 99.9% interval of " in warning
    assert f" on {fewest} questions, which takes its bounds" in warning
    assert warning.endswith(f"moves with --seed; --n-boot {needed:,} or more leaves 10")
    assert str(markupsafe.escape(warning)) in out.read_text()  # as the page escapes it
