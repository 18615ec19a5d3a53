"""A log converted to Parquet compares as the file it was converted from: the score columns its
evaluation tool wrote stay metrics."""

from __future__ import annotations

import math

import pyarrow as pa
import pyarrow.feather as feather
from click.testing import CliRunner
from test_eval_tool_readers import promptfoo_file, ragas_frame, result

from reportgen.cli import cli


def converted(source, target, *options):
    outcome = CliRunner().invoke(cli, ["convert", str(source), "-o", str(target), *options])
    assert outcome.exit_code == 0, outcome.output
    return target


def test_a_converted_ragas_log_compares_its_scores_as_the_original(tmp_path, compare):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    ragas_frame([1.0, 0.5, 0.5], True).assign(context_recall=[1.0, math.nan, 0.0]).to_csv(a)
    ragas_frame([1.0, 1.0, 0.5], True).assign(context_recall=[1.0, 1.0, 1.0]).to_csv(b)
    original = compare(a, b, tmp_path / "original", "--n-boot", 100)
    a2, b2 = converted(a, tmp_path / "a.parquet"), converted(b, tmp_path / "b.parquet")
    again = compare(a2, b2, tmp_path / "again", "--n-boot", 100)
    scores = ["answer_relevance", "context_recall"]
    assert list(again["scores"]) == list(original["scores"]) == scores
    assert again["metrics"] == original["metrics"]


def test_a_converted_promptfoo_run_keeps_its_scores(tmp_path, compare):
    rows = [result("p", d, i, i != 1) for i, d in enumerate(["refund", "change", "wifi"])]
    a = converted(promptfoo_file(tmp_path / "out.json", rows), tmp_path / "a.parquet")
    out = compare(a, a, tmp_path / "o", "--n-boot", 100)
    assert list(out["scores"]) == ["score", "score_accuracy"]
    assert out["metrics"]["score_accuracy"]["a"] == 2 / 3


def test_a_categorical_of_string_views_converts(tmp_path, compare):
    """polars writes a Categorical to Arrow IPC as a dictionary of string views: convert
    stopped on Arrow's Parquet writer ("Unsupported cast from dictionary<values=string_view"),
    a traceback and exit 1, on a log compare reads. It writes the slices as text."""
    n = 12
    views = pa.array([f"s{i % 3}" for i in range(n)]).cast(pa.string_view()).dictionary_encode()
    ids = pa.array([f"q{i}" for i in range(n)])
    table = pa.table(
        {"question_id": ids, "correct": [i % 2 == 0 for i in range(n)], "slice": views}
    )
    feather.write_feather(table, tmp_path / "run.arrow", compression="uncompressed")
    out = tmp_path / "run.parquet"
    result = CliRunner().invoke(cli, ["convert", str(tmp_path / "run.arrow"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    converted = compare(out, out, tmp_path / "c", "--n-boot", 100)
    original = compare(
        tmp_path / "run.arrow", tmp_path / "run.arrow", tmp_path / "o", "--n-boot", 100
    )
    assert converted["slices"] == original["slices"] and set(converted["slices"]["slice"]) == {
        "s0",
        "s1",
        "s2",
    }
