"""The metric registry agrees with the SQL that computes the metrics, the chart and the page.

Adding a metric to the registry without its SQL column, its curve or its definition fails here.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from test_queries import A_ROWS, B_ROWS, _span_db

from reportgen.analysis.metrics import score_questions
from reportgen.analysis.registry import (
    ANSWER,
    BY_NAME,
    CHARTED,
    CONTEXT,
    CURVE,
    METRICS,
    RETRIEVAL,
    names,
    parse_name,
    public_name,
    score,
)
from reportgen.inputs.database import RunDatabase
from reportgen.inputs.load import open_run
from reportgen.reporters.html import charts

# paired.sql's columns that are not metrics: what the diagnosis, the fairness check and the
# warnings read (prompt_sizes and unranked_samples: of questions answered several times)
PAIRED_FACTS = {
    "k",
    "passages",
    "prompt_sizes",
    "unranked_samples",
    "n_relevant",
    "answerable",
    "context_tokens",
    "evidence_in_context",
    "prompt_chars",
}


@pytest.fixture
def scored(tmp_path: Path):
    """The logs of test_queries, every question scored at k = 2."""
    paths = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    for rows, path in zip((A_ROWS, B_ROWS), paths, strict=True):
        pd.DataFrame(rows).to_parquet(path)
    db = RunDatabase(*(open_run(path, path.stem) for path in paths))
    db.prepare(None)
    score_questions(db, 2, exponential=True)
    yield db
    db.close()


def test_every_entry_has_a_definition_and_a_kind():
    for m in METRICS:
        assert m.kind in (RETRIEVAL, CONTEXT, ANSWER), m.name
        assert len(m.definition.format(gain="g")) > 20, m.name
    assert len(BY_NAME) == len(METRICS)


def test_paired_sql_has_a_column_pair_for_every_metric_and_no_other(scored):
    columns = set(scored.frame("paired").columns) - {"question_id", "slice"}
    stems = {c.removesuffix("_a") for c in columns if c.endswith("_a")}
    assert {c.removesuffix("_b") for c in columns if c.endswith("_b")} == stems
    assert stems - PAIRED_FACTS == set(names(RETRIEVAL, CONTEXT, ANSWER))


def test_question_means_has_every_per_answer_metric(scored):
    means = set(scored.con.execute("SELECT * FROM question_means LIMIT 0").df().columns)
    assert set(names(RETRIEVAL, ANSWER)) <= means  # the character measures: question_chars


def test_run_metrics_sql_has_every_metric_ragreport_metrics_writes(scored):
    columns = list(scored.frame("run_metrics").columns)
    assert [c for c in columns if c in BY_NAME] == list(names(RETRIEVAL, CONTEXT, ANSWER))


def test_span_chars_fill_the_character_metrics(tmp_path: Path):
    db = _span_db(tmp_path)
    db.execute("question_metrics", k=3, exponential=False)
    db.execute("question_means")
    db.execute("question_chars")
    paired = db.frame("paired")
    db.close()
    for m in names(CONTEXT):
        assert paired[f"{m}_a"].notna().all(), m


def test_metric_curve_sql_computes_the_curve_metrics(scored):
    curve = scored.frame("metric_curve", depth=3, cutoffs=list(range(1, 3 + 1)), exponential=True)
    assert tuple(dict.fromkeys(sorted(curve["metric"]))) == tuple(sorted(CURVE))
    assert names(RETRIEVAL) == CURVE


def test_the_chart_draws_the_charted_metrics_in_registry_order(scored):
    curve = scored.frame("metric_curve", depth=3, cutoffs=list(range(1, 3 + 1)), exponential=True)
    spec = charts.metric_curve(curve, 2, charts.RUN_COLOURS)
    assert spec["facet"]["sort"] == list(CHARTED)
    assert set(CHARTED) <= set(CURVE)
    drawn = {row["metric"] for row in spec["datasets"][next(iter(spec["datasets"]))]}
    assert drawn == set(CHARTED)


@pytest.mark.parametrize(("cutoff", "shaded"), [(2, True), (3, False), (5, False)])
def test_the_curve_runs_to_a_cutoff_past_the_rankings(scored, cutoff, shaded):
    """Rankings 3 deep, --k 5: the axis ended at 3, so the dashed cutoff and the headroom
    (drawn from 5 back to 3) fell outside the panels, under a title calling the part past the
    cutoff headroom. The axis runs to the cutoff, and the title says where the rankings end."""
    curve = scored.frame("metric_curve", depth=3, cutoffs=[1, 2, 3], exponential=True)
    spec = charts.metric_curve(curve, cutoff, charts.RUN_COLOURS)
    layers = spec["spec"]["layer"]
    assert [layer["mark"]["type"] for layer in layers][:2] == (
        ["rect", "rule"] if shaded else ["rule", "line"]
    )
    assert layers[-1]["encoding"]["x"]["scale"]["domain"] == [1, max(3, cutoff)]
    title = spec["title"]
    assert title.startswith(f"Read each metric at the prompt's k = {cutoff} (dashed): ")
    assert title.endswith(
        "the shaded part past it is headroom, not quality."
        if shaded
        else "the rankings end at 3, short of it."
        if cutoff > 3
        else "the rankings end at 3."
    )


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("ndcg@5", ("ndcg", 5)),
        ("recall@12", ("recall", 12)),
        ("correct", ("correct", None)),
        ("latency_ms", ("latency_ms", None)),
        ("score_helpful", ("score_helpful", None)),
    ],
)
def test_public_names_are_read_back(name, parsed):
    assert parse_name(name) == parsed


def test_public_name_carries_the_cutoff_of_retrieval_metrics_only():
    assert public_name(BY_NAME["ndcg"], 5) == "ndcg@5"
    assert public_name(BY_NAME["correct"], 5) == "correct"
    assert public_name(BY_NAME["evidence_iou"], 5) == "evidence_iou"
    for m in METRICS:
        assert parse_name(public_name(m, 7)) == (m.name, 7 if m.kind == RETRIEVAL else None)


def test_a_user_score_names_its_column_and_direction():
    latency = score("latency_ms", binary=False, higher_is_better=False)
    assert (latency.kind, latency.source) == ("score", "latency_ms")
    assert not latency.higher_is_better
    assert "latency_ms" in latency.definition and "lower is better" in latency.definition
    assert public_name(latency, 5) == "latency_ms"


def test_a_table_checks_the_range_of_every_built_in_metric():
    """Per-question tables are checked against SHARE (the inputs may not read the registry): a
    built-in metric of another range would be refused where it is right."""
    from reportgen.analysis.registry import METRICS
    from reportgen.inputs.scored_table import SHARE

    assert {m.name: m.bounds for m in METRICS} == {m.name: SHARE for m in METRICS}
