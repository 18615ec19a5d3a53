"""Parquet logs cut into many tiny row groups (a writer that streams each question to a
ParquetWriter) or many tiny shards are read once through Arrow: the same report as the same
rows written whole, with rows named as in the file."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from reportgen.cli import cli
from reportgen.inputs.database import FRAGMENT_ROWS, FRAGMENTS, fragmented_log
from reportgen.inputs.load import open_log
from reportgen.inputs.readers import ReadOptions

SAMPLES = Path(__file__).resolve().parent.parent / "sample_runs"
A = SAMPLES / "fare_rules_a_baseline.parquet"  # 240 questions
B = SAMPLES / "fare_rules_b_reranker.parquet"


def report(out: Path, *logs: Path) -> dict:
    result = CliRunner().invoke(
        cli, ["compare", *map(str, logs), "-o", str(out), "--n-boot", "500"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(out.with_suffix(".json").read_text())
    return {k: v for k, v in doc.items() if k not in ("run_id", "runs", "params")}


def test_a_log_of_one_row_groups_reads_as_the_same_rows_written_whole(tmp_path):
    split = []
    for log in (A, B):
        split.append(tmp_path / log.name)
        pq.write_table(pq.read_table(log), split[-1], row_group_size=1)  # 240 row groups
    assert pq.ParquetFile(split[0]).metadata.num_row_groups == 240 >= FRAGMENTS
    table = fragmented_log(open_log(split[0], "A", ReadOptions()))
    assert table is not None and table.equals(pq.read_table(A))
    assert report(tmp_path / "whole.html", A, B) == report(tmp_path / "split.html", *split)


def test_a_log_in_row_groups_of_ordinary_size_is_read_by_duckdb(tmp_path):
    log = tmp_path / "a.parquet"
    pq.write_table(pq.read_table(A), log, row_group_size=FRAGMENT_ROWS)  # 3 row groups
    assert fragmented_log(open_log(log, "A", ReadOptions())) is None
    few = tmp_path / "few.parquet"
    pq.write_table(pq.read_table(A).slice(0, FRAGMENTS - 1), few, row_group_size=1)
    assert fragmented_log(open_log(few, "A", ReadOptions())) is None  # too few to matter


def test_many_tiny_shards_are_read_once_and_numbered_across_them(tmp_path):
    """A folder of 240 one-row files (Spark's many small partitions); the rows named in an
    error count across the shards in name order, as DuckDB's reading of them does."""
    folder = tmp_path / "shards"
    folder.mkdir()
    rows = with_a_repeat(pq.read_table(A))
    for i in range(rows.num_rows):
        pq.write_table(rows.slice(i, 1), folder / f"part-{i:05d}.parquet")
    assert fragmented_log(open_log(folder, "A", ReadOptions())) is not None
    result = CliRunner().invoke(
        cli, ["compare", str(folder), str(B), "-o", str(tmp_path / "r.html")]
    )
    assert result.exit_code == 2
    assert (  # each row named in its shard too
        "question_id 'q0200' appears in rows 200 (part-00199.parquet row 1) and 201 "
        "(part-00200.parquet row 1);" in result.output
    )


def with_a_repeat(rows: pa.Table) -> pa.Table:
    """The log with the question of row 200 (from 1) logged again at row 201."""
    ids = rows.column("question_id").to_pylist()
    ids[200] = ids[199]
    return rows.set_column(rows.schema.get_field_index("question_id"), "question_id", pa.array(ids))


@pytest.mark.parametrize("group", [1, 7])
def test_row_numbers_of_a_fragmented_log_are_its_rows(tmp_path, group):
    log = tmp_path / "a.parquet"
    pq.write_table(with_a_repeat(pq.read_table(A)), log, row_group_size=group)
    result = CliRunner().invoke(cli, ["compare", str(log), str(B), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2
    assert "question_id 'q0200' appears in rows 200 and 201;" in result.output


def test_a_log_registered_as_both_runs_is_read_once(tmp_path, monkeypatch):
    """A log checked alone (``metrics``, ``validate``, a study's runs scored one by one) is
    registered as both runs of its database; its tiny row groups are read through Arrow once,
    not once a run (a second read of a large log doubles the time and the memory)."""
    import reportgen.inputs.database as database

    log = tmp_path / "a.parquet"
    pq.write_table(pq.read_table(A), log, row_group_size=1)
    reads = []

    def counted(run):
        reads.append(run.path)
        return fragmented_log(run)

    monkeypatch.setattr(database, "fragmented_log", counted)
    database.RunDatabase(open_log(log, "A", ReadOptions())).close()
    assert [path.name for path in reads] == ["a.parquet"]


def test_convert_reads_a_fragmented_log_once(tmp_path, monkeypatch):
    """convert checks the rows and copies them from one read through Arrow: Arrow's read_table
    of 10,000 one-row groups took 7.5 s where the batches take 2.3 s, and the checks read the
    log again (12.4 s and 725 MB for the command, now 4.2 s and 273 MB)."""
    log = tmp_path / "a.parquet"
    pq.write_table(pq.read_table(A), log, row_group_size=1)
    batches, tables = [], []
    iter_batches, read_table = pq.ParquetFile.iter_batches, pq.read_table

    def counted_batches(self, *args, **kwargs):
        batches.append(1)
        return iter_batches(self, *args, **kwargs)

    def counted_table(*args, **kwargs):
        tables.append(1)
        return read_table(*args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counted_batches)
    monkeypatch.setattr(pq, "read_table", counted_table)
    result = CliRunner().invoke(cli, ["convert", str(log), "-o", str(tmp_path / "out.parquet")])
    assert result.exit_code == 0, result.output
    assert (len(batches), len(tables)) == (1, 0)
    monkeypatch.undo()
    assert pq.read_table(tmp_path / "out.parquet").equals(pq.read_table(A))
