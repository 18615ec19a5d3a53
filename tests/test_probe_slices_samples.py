"""Repeated answers whose labels disagree in ways the plain comparison of values misses."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from reportgen.analysis.samples import spread
from reportgen.cli import cli


def _samples(relevant: list[list[str] | None]) -> pd.DataFrame:
    """Two questions of two samples each; q0's samples carry ``relevant`` in order."""
    labels = [*relevant, ["p1"], ["p1"]]
    return pd.DataFrame(
        {
            "question_id": ["q0", "q0", "q1", "q1"],
            "sample": [0, 1, 0, 1],
            "relevant_ids": labels,
            "context_ids": [["p1"]] * 4,
            "correct": [True, False, True, True],
        }
    )


def _compare(tmp_path: Path, a: pd.DataFrame, b: pd.DataFrame | None = None):
    a.to_parquet(tmp_path / "a.parquet")
    (_samples([["p1"], ["p1"]]) if b is None else b).to_parquet(tmp_path / "b.parquet")
    html = tmp_path / "r.html"
    args = ["compare", str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), "-o", str(html)]
    result = CliRunner().invoke(cli, [*args, "--n-boot", "200"])
    return result.exit_code, result.output, html


def test_an_unlabelled_sample_of_an_unanswerable_question_is_refused(tmp_path):
    """An empty relevant_ids says the question has no answer; a null one says it is not
    labelled: samples of one question cannot be both."""
    code, output, html = _compare(tmp_path, _samples([[], None]))
    assert code == 2, output
    line = output.strip().splitlines()[-1]
    assert "a.parquet" in line and "row 2" in line and "'q0'" in line
    assert "relevant_ids" in line and "row 1 has [], this row null" in line
    assert not html.exists()


def test_an_unlabelled_sample_of_span_labels_is_named_by_the_span_column(tmp_path):
    """A log of span labels: its unlabelled sample is named as relevant_spans, the column the
    log has, whichever of the two rows has the spans."""
    span = {"doc_id": "d1", "start": 0, "end": 10}
    a = pd.DataFrame(
        {
            "question_id": ["q0", "q0", "q1"],
            "sample": [0, 1, 0],
            "relevant_spans": [[], None, [span]],
            "context_spans": [[span]] * 3,
        }
    )
    code, output, _ = _compare(tmp_path, a, a.drop(columns="sample").iloc[1:])
    assert code == 2, output
    line = output.strip().splitlines()[-1]
    assert "row 2" in line and "relevant_spans differs" in line and "row 1 has []" in line


def test_samples_that_agree_on_an_empty_label_are_accepted(tmp_path):
    code, output, _ = _compare(tmp_path, _samples([[], []]))
    assert code == 0, output


def test_samples_per_question_of_the_difference_is_the_exact_harmonic_mean():
    """Two samples per question in A and three in B: the difference's noise falls as if each
    question had 2.4 (2 x 2 x 3 / 5), written to the JSON as 2.4, not 2.4000000000000004."""
    rows = [
        {
            "run": run,
            "question_id": f"q{i}",
            "metric": "correct",
            "n": m,
            "mean": i / 4,
            "variance": 0.25,
        }
        for run, m in (("a", 2), ("b", 3))
        for i in range(4)
    ]
    *_, difference = spread(pd.DataFrame(rows), ("correct",))
    assert difference.run == "B - A"
    assert difference.samples == 2.4
