"""Tables ``ragreport metrics`` writes, given where a run log is needed: each command says what
the file is and what to pass instead, in one line, whatever columns the table kept."""

from __future__ import annotations

import duckdb
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from test_input_validate import labelled, validate
from test_readers import fail

from reportgen.cli import cli

ROWS = [
    {"question_id": "q1", "retrieved_ids": ["d1", "d2"], "relevant_ids": ["d2"], "correct": True},
    {"question_id": "q2", "retrieved_ids": ["d3", "d4"], "relevant_ids": ["d3"], "correct": False},
]


@pytest.fixture
def written(tmp_path, write_log):
    """A log, and the per-question metrics and partial sums ``ragreport metrics`` wrote of it."""
    log = write_log(tmp_path / "run.parquet", ROWS)
    table, sums = tmp_path / "metrics.parquet", tmp_path / "sums.parquet"
    args = ["metrics", str(log), "-o", str(table), "--partial-sums", str(sums), "--k", "2"]
    outcome = CliRunner().invoke(cli, args)
    assert outcome.exit_code == 0, outcome.output
    return log, table, sums


METRICS = "is a table of per-question metrics (as ragreport metrics writes it), not a run log; "
SUMS = "is a file of partial sums (as ragreport metrics --partial-sums writes it), not a run log; "


def test_a_metrics_table_is_refused_where_a_log_is_needed(tmp_path, written):
    log, table, _ = written
    advice = f"{table}: {METRICS}pass the run log it was scored from"
    # compare takes tables, and a log beside them (tests/test_compare_metrics_tables.py)
    assert fail("metrics", table, "-o", tmp_path / "m.parquet") == f"ragreport: error: {advice}"
    assert fail("convert", table, "-o", tmp_path / "c.parquet") == f"ragreport: error: {advice}"
    assert validate(table, code=2) == [labelled(table, advice)]


def test_a_metrics_table_missing_a_column_is_still_named(tmp_path, written):
    _, table, _ = written
    for dropped in ("answerable", "correct", "k"):
        kept = pq.read_table(table)
        trimmed = tmp_path / f"no-{dropped}.parquet"
        pq.write_table(kept.drop_columns([dropped]), trimmed)
        line = fail("compare", trimmed, trimmed, "-o", tmp_path / "r.html", "--k", 2)
        assert line == (
            f"ragreport: error: {trimmed}: a table of per-question metrics without its column "
            f"{dropped} (saved again by another tool?); write it again with ragreport metrics, "
            "or pass the run log"
        )
        line = fail("metrics", trimmed, "-o", tmp_path / "m.parquet")
        assert line == f"ragreport: error: {trimmed}: {METRICS}pass the run log it was scored from"


def test_a_sums_file_is_sent_to_merge(tmp_path, written):
    _, _, sums = written
    line = fail("compare", sums, sums, "-o", tmp_path / "r.html")
    assert line == (
        f"ragreport: error: {sums}: {SUMS}give it to ragreport merge, or pass the run log here"
    )


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_a_metrics_table_saved_as_text_is_named_before_its_values_are_read(
    tmp_path, written, suffix
):
    _, table, _ = written
    frame = pq.read_table(table).to_pandas()  # correct is 1.0 there: no boolean of a log
    text = tmp_path / f"metrics.{suffix}"
    if suffix == "csv":
        frame.to_csv(text, index=False)
    else:
        frame.to_json(text, orient="records", lines=True)
    line = fail("compare", text, text, "-o", tmp_path / "r.html", "--k", 2)
    assert line == f"ragreport: error: {text}: {UNMARKED}"


UNMARKED = (
    "holds per-question metrics without the metadata ragreport metrics writes beside them "
    "(saving the table again with pandas or DuckDB drops it), so it reads as neither a table nor "
    "a run log; write it again with ragreport metrics from its log (filter the log to keep some "
    "of its questions)"
)


@pytest.mark.parametrize("tool", ["pandas", "duckdb"])
def test_a_metrics_table_saved_again_by_another_tool_is_told_to_be_written_again(
    tmp_path, written, tool
):
    """A table filtered in pandas or DuckDB and saved again loses the schema metadata compare
    tells tables by: compare called it "a table of per-question metrics ..., not a run log; pass
    the run log", as if it took no such tables."""
    _, table, _ = written
    again = tmp_path / f"{tool}.parquet"
    if tool == "pandas":
        pq.read_table(table).to_pandas().to_parquet(again)
    else:
        duckdb.sql(f"COPY (SELECT * FROM '{table}' WHERE question_id = 'q1') TO '{again}'")
    line = fail("compare", again, table, "-o", tmp_path / "r.html", "--k", 2)
    assert line == f"ragreport: error: {again}: {UNMARKED}"
    assert not (tmp_path / "r.html").exists()
