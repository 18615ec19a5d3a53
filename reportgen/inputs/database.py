"""The DuckDB session that reads the run logs: their views, and the named queries of queries/."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import InputError
from ..resources import query_text
from .contract import (
    BY_NAME,
    FALSE_WORDS,
    FLAG,
    FLAG_SPACE,
    KEY_COLUMNS,
    LARGEST_VALUE,
    TRUE_WORDS,
    has_samples,
)
from .engine import connect, over_budget, return_freed_memory
from .load import RunFile
from .readers.columns import narrow_floats
from .row_checks import EXAMPLES, RowProblem

_DATA_ERRORS = (
    duckdb.ConversionException,
    duckdb.InvalidInputException,
    duckdb.IOException,
    duckdb.OutOfRangeException,
)
_ROW_CHECKS = {"examples": EXAMPLES, "largest": LARGEST_VALUE}  # row_problems' parameters
_ROW_NUMBER = "file_row_number"  # the column DuckDB's Parquet reader adds on request
_NUMBERS = ("float 0..1", "number")  # the contract's number columns, as their type is named
_PASSAGE = pa.schema(  # a row of view passage_tables
    [("run", pa.string()), ("doc_id", pa.string()), ("start", pa.int64()), ("end", pa.int64())]
)
BATCH_ROWS = 500_000
"""Rows of facts (one run's answer to one question) per batch of a query that is a map over
questions (IN_BATCHES). Its joins, windows and groups then hold a batch of questions, not the
log: at 1M paired questions in one batch the curve's sums alone needed 1.7 GB beside the tables.
A batch re-reads the tables it starts from (about 0.1 s of CPU a batch at 1M), and a log of
fewer rows is one batch, as before. Logs of more rows also have their KEPT tables compressed."""
# The named queries that are a map over questions: each fills the temp table of its name a batch
# of questions at a time (its SQL keeps the questions of macro in_batch, queries/rules.sql).
IN_BATCHES = ("question_metrics", "curve_sums")
# The named queries whose tables outlive the queries after them: facts and relevant are read to
# the end, question_means until the paired table is in pandas. DuckDB keeps an in-memory table
# uncompressed until a checkpoint: at 1M paired questions facts and relevant took 0.97 GB, and
# 0.11 GB checkpointed, for about 3 s of CPU. So when the logs have more rows than a batch they
# are tables of the database, checkpointed as each is made (one checkpoint after both left both
# uncompressed on a log of 20k questions, DuckDB 2.0.1), as are the rows ``pairs`` pairs; else
# TEMP tables, about 5% faster to make and read at 100k questions. Beside the pandas frames
# read from them, question_means and the answer stage's rows uncompressed made the peak of a
# 1M-question comparison: 2,083 MiB, 1,788 MiB compressed (bench/README.md).
KEPT = ("facts", "relevant", "question_means")
# Named queries that read such a table, and the one that fills it with the same parameters
# (metric_curve adds up the sums of curve_sums).
FILLED_FIRST = {"metric_curve": "curve_sums"}
# The tables that score one run, each in its own rows (``prepare``, then score_questions of
# analysis/metrics.py): what a study computes once per run and every pair of runs shares.
SCORED_TABLES = (
    "facts",
    "span_matches",
    "span_chars",
    "relevant",
    "question_metrics",
    "question_means",
    "question_chars",
)


@dataclass(frozen=True)
class ScoredRun:
    """One run scored alone (as run ``a``): its per-question tables and the values left out."""

    tables: dict[str, pa.Table]  # by name in SCORED_TABLES
    left_out: tuple[RowProblem, ...]
    single: frozenset[str] = frozenset()  # the columns read at float32 precision (RunDatabase)


class RunDatabase:
    """The run logs registered as ``raw_a`` / ``raw_b`` (every column as written), ``rows_a`` /
    ``rows_b`` (contract columns and row_number only, so no column of a log can collide with a
    name the queries use), their passage tables as ``passage_tables`` and the contract view
    ``runs``.

    Without ``b`` (``validate`` of one log, or one run scored alone) ``rows_b`` is empty. With
    ``keep`` (the questions common to every run of a study) the rows of other questions are left
    out of ``rows_*``. With ``scored`` (each run scored alone, ``scored_run``) the tables of
    SCORED_TABLES are those runs' tables side by side, and ``prepare`` is not needed.

    A number column either run holds as float32 is read at float32 precision in both; so is
    one named in ``single`` (a column some other run of a study holds so, float32_columns),
    or in the ``single`` of a scored run, so that every run of a study is read alike.
    """

    def __init__(
        self,
        a: RunFile,
        b: RunFile | None = None,
        keep: list[str] | None = None,
        scored: tuple[ScoredRun, ScoredRun] | None = None,
        batch_rows: int = BATCH_ROWS,
        single: frozenset[str] = frozenset(),
    ) -> None:
        self.files = {"a": a, "b": b or a}
        runs = (a, b) if b is not None else (a,)
        self.single = single.union(*(t.single for t in scored or ()), *map(float32_columns, runs))
        self.batch_rows = batch_rows
        self.large = a.n_rows + (b.n_rows if b else 0) > batch_rows  # KEPT tables compressed
        self.con = connect()
        if keep is not None:
            self.con.from_arrow(pa.table({"question_id": pa.array(keep, pa.string())})).create_view(
                "keep_ids"
            )
        self.execute("rules")
        wholes: dict[int, pa.Table | None] = {}  # a log registered as both runs is read once
        logged: dict[str, duckdb.DuckDBPyRelation] = {}
        for key, run in self.files.items():
            if id(run) not in wholes:
                wholes[id(run)] = run.table if run.table is not None else fragmented_log(run)
            whole = wholes[id(run)]
            self._raw(run, whole).create_view(f"raw_{key}")
            logged[key] = self._numbered(run, whole)
        # a column either run holds as float32 is read at float32 precision in both
        for key, relation in logged.items():
            read = [_read_as(n, t, n in self.single) for n, t in _typed(relation)]
            rows = relation.project(", ".join([*read, "row_number"]))
            if keep is not None:
                rows = rows.filter("question_id::VARCHAR IN (SELECT question_id FROM keep_ids)")
            (rows if b is not None or key == "a" else rows.limit(0)).create_view(f"rows_{key}")
        self._passage_tables({"a": a, "b": b}).create_view("passage_tables")
        self.execute("runs")
        self.left_out: list[RowProblem] = []  # values left out, for the report's warnings
        self.scored = scored is not None
        if scored is not None:
            for name in SCORED_TABLES:
                halves = [_as_run(t.tables[name], key) for t, key in zip(scored, "ab", strict=True)]
                self.con.from_arrow(pa.concat_tables(halves)).create(name)
            self.left_out = [p for t in scored for p in t.left_out]
            self.execute("paired_ids")
            if self.large:  # the scored tables are tables of the database
                self._compress()

    def _raw(self, run: RunFile, whole: pa.Table | None) -> duckdb.DuckDBPyRelation:
        """Every column of the log as written (``whole``: the log read through Arrow)."""
        if whole is not None:
            relation = self.con.from_arrow(whole)
        else:
            paths = [literal(f) for f in run.files or (run.path,)]
            relation = self.con.read_parquet(paths, union_by_name=True)
        keys = [
            _read_as(name, data_type)
            for name, data_type in zip(relation.columns, relation.types, strict=True)
            if name in KEY_COLUMNS and _floating(data_type)
        ]
        return relation.project(f"* REPLACE ({', '.join(keys)})") if keys else relation

    def _passage_tables(self, runs: dict[str, RunFile | None]) -> duckdb.DuckDBPyRelation:
        """The passage tables (--passages) as (run, doc_id, start, end): every passage of a run's
        cutting, retrieved or not; no row for a run without one."""
        tables = [
            run.passages.select(list(_PASSAGE.names[1:]))
            .add_column(0, "run", pa.array([key] * run.passages.num_rows, pa.string()))
            .cast(_PASSAGE)
            for key, run in runs.items()
            if run is not None and run.passages is not None
        ]
        return self.con.from_arrow(pa.concat_tables(tables) if tables else _PASSAGE.empty_table())

    def _numbered(self, run: RunFile, whole: pa.Table | None) -> duckdb.DuckDBPyRelation:
        """The log's contract columns as logged and ``row_number``, its 0-based row in the file
        (across the shards of a folder or glob, in name order)."""
        names = [name for name in BY_NAME if name in run.columns]
        if whole is None and _ROW_NUMBER not in run.columns:
            relation = (
                self._shards(run.files)
                if run.files
                else self.con.read_parquet(literal(run.path), file_row_number=True)
            )
            row_number = f"{_ROW_NUMBER} AS row_number"
        else:
            # Read from another format or through Arrow (fragmented_log), or the log has a
            # column of that name itself: number its rows in Arrow instead.
            table = (
                whole.select(names)
                if whole is not None
                else pq.read_table([str(f) for f in run.files or (run.path,)], columns=names)
            )
            table = table.append_column("row_number", pa.array(np.arange(table.num_rows)))
            relation, row_number = self.con.from_arrow(table), "row_number"
        return relation.project(", ".join([*names, row_number]))

    def _shards(self, files: tuple[Path, ...]) -> duckdb.DuckDBPyRelation:
        """Parquet shards read as one log, rows numbered across the shards in name order."""
        names = [str(f) for f in files]
        sizes = [pq.ParquetFile(f).metadata.num_rows for f in files]
        offsets = pa.table({"filename": names, "row_offset": np.cumsum([0, *sizes[:-1]])})
        shards = self.con.read_parquet(
            [literal(f) for f in files], file_row_number=True, filename=True, union_by_name=True
        )
        return shards.join(self.con.from_arrow(offsets), "filename").project(
            "* EXCLUDE (filename, row_offset) "
            "REPLACE (file_row_number + row_offset AS file_row_number)"
        )

    def prepare(self, k: int | None, span_coverage: float = 0.0) -> None:
        """Read both logs once into the tables ``facts`` and ``relevant`` that queries share.

        Between the two, the rows are checked: the first problem that refuses a log raises
        InputError; the values left out are kept in ``left_out``.
        """
        refused = [p for p in self.read(k) if p.refused]
        if refused:
            raise InputError(refused[0].error())
        self.match(k, span_coverage)

    def read(self, k: int | None) -> list[RowProblem]:
        """The first half of ``prepare``: the table ``facts`` and every row problem of the logs
        (also kept in ``left_out``), refusals included: validate lists them all."""
        self.execute("facts", k=k)
        self.execute("paired_ids")
        self.left_out = self.row_problems()
        return self.left_out

    def match(self, k: int | None, span_coverage: float = 0.0) -> None:
        """The second half of ``prepare``, once no row refuses the logs: the labels matched to
        the rankings (table ``relevant``, through the spans where there are)."""
        self.execute("span_matches", coverage=span_coverage)
        self.execute("span_chars", k=k)
        self.execute("relevant")

    def _compress(self) -> None:
        """Have DuckDB compress the tables of the database (not the TEMP tables), and give the
        memory queries free back to the system."""
        self.con.execute("CHECKPOINT")
        return_freed_memory(self.con)

    def scored_run(self) -> ScoredRun:
        """The tables of SCORED_TABLES of a run read alone (no ``b``), once ``prepare`` and
        score_questions have run."""
        tables = {name: self.con.table(name).to_arrow_table() for name in SCORED_TABLES}
        return ScoredRun(tables, tuple(self.left_out), self.single)

    def sampled(self) -> bool:
        """Whether some question of a run has more than one sample (queries/sampled.sql), once
        the questions are scored."""
        return bool(self.frame("sampled")["sampled"].iloc[0])

    def score_column(self, column: str) -> pd.DataFrame:
        """queries/score_column.sql of ``column`` (a score column of the logs, numeric or
        boolean in both), read in both runs at float32 precision where either holds it as
        float32, as the contract's columns are (_read_as)."""
        single = column in self.single
        return self.frame("score_column", column=column, largest=LARGEST_VALUE, single=single)

    def slice_values(self, column: str) -> pd.DataFrame:
        """queries/slice_values.sql of ``column`` (a slice or cluster column), each run's
        values read at its own type: a run's floats 2.0 unioned with the other's text '2' were
        text '2.0', a slice apart from '2'. A nested column (a list, a struct) against a plain
        one in the other log is refused: no value of one can be the other's (lists of ints of
        two widths read alike)."""
        logged = self.frame("column_types")
        types = {run: dict(zip(t.column_name, t.data_type, strict=True))
                 for run, t in logged.groupby("run")}  # fmt: skip
        kind_a, kind_b = (types.get(run, {}).get(column) for run in "ab")
        if kind_a and kind_b and _nested(kind_a) != _nested(kind_b):
            a, b = (self.files[run].path for run in "ab")
            raise InputError(
                f"{a} and {b}: column {column} is {kind_a} in {a} and {kind_b} in {b}; log it "
                "the same way in both"
            )
        return self.frame(
            "slice_values",
            column=column,
            columns_a=list(types.get("a", {})),
            columns_b=list(types.get("b", {})),
        )

    def question_ids(self) -> list[str]:
        """Run A's question ids, in file order."""
        return self.frame("question_ids")["question_id"].tolist()

    def execute(self, name: str, **params: Any) -> None:
        if name in IN_BATCHES:
            self._in_batches(name, params)
        elif name in KEPT:
            self._kept(name, query_text(name), params)
        else:
            self._run(name, params)

    def _kept(self, table: str, sql: str, params: dict[str, Any]) -> None:
        """The rows of ``sql`` as ``table``: a table of the database, compressed, when the logs
        are large (KEPT), else a TEMP table."""
        kind = "TABLE" if self.large else "TEMP TABLE"
        self._execute(f"CREATE OR REPLACE {kind} {table} AS\n{sql}", params)
        if self.large:
            self._compress()

    def frame(self, name: str, **params: Any) -> pd.DataFrame:
        filler = FILLED_FIRST.get(name)
        if filler:  # the parameters are split between the two queries by the names they use
            self._in_batches(filler, _used(filler, params))
            params = _used(name, params)
        return self._run(name, params).df()

    def paired(self, sampled: bool) -> pd.DataFrame:
        """queries/paired.sql. Its list columns (question_means.sql's prompt_sizes and
        unranked_samples) are NULL for a question of one sample, so unless ``sampled`` they are
        left out of the query and added here as the nulls DuckDB gives: turning a million null
        lists into pandas took it 0.3 to 0.6 s (bench/README.md)."""
        if sampled:
            return self.frame("paired")
        sql = query_text("paired")
        relation = self.con.sql(sql)  # bound, not run
        names = relation.columns
        lists = [n for n, t in zip(names, relation.types, strict=True) if t.id == "list"]
        frame = self._execute(f"SELECT * EXCLUDE ({', '.join(lists)}) FROM (\n{sql}\n)", {}).df()
        for name in lists:  # in the query's order, so each goes back to its own place
            nulls = np.full(len(frame), pd.NA, dtype=object)
            frame.insert(names.index(name), name, nulls)
        return frame

    def _in_batches(self, name: str, params: dict[str, Any]) -> None:
        """Fill the temp table ``name`` with the rows of its query, a batch of questions at a
        time (BATCH_ROWS); the rows of a question, all its runs and samples, are in one batch."""
        rows = self.con.execute("SELECT count(*) FROM facts").fetchone()
        batches = max(1, -(-(rows[0] if rows else 0) // self.batch_rows))
        self.drop(name)
        for batch in range(batches):
            into = f"INSERT INTO {name}" if batch else f"CREATE TEMP TABLE {name} AS"
            self._execute(
                f"{into}\n{query_text(name)}", {**params, "batches": batches, "batch": batch}
            )

    def arrow(self, name: str, **params: Any) -> pa.Table:
        """A named query's rows as Arrow, in DuckDB's own types (a boolean column with nulls
        stays boolean)."""
        return self.con.sql(query_text(name), params=_used(name, params)).to_arrow_table()

    def pairs(self, name: str, **params: Any) -> pd.DataFrame:
        """A named query of one row per run and question, its rows of the questions in both
        runs side by side (queries/pair_rows.sql: columns <name>_a and <name>_b)."""
        self._kept("run_rows", query_text(name), params)
        try:
            return self.frame("pair_rows")
        finally:
            self.con.execute("DROP TABLE run_rows")

    def _run(self, name: str, params: dict[str, Any]) -> duckdb.DuckDBPyConnection:
        return self._execute(query_text(name), params)

    def _execute(self, sql: str, params: dict[str, Any]) -> duckdb.DuckDBPyConnection:
        """Run a query; a value DuckDB cannot read or convert is the input's fault."""
        paths = " and ".join(dict.fromkeys(str(f.path) for f in self.files.values()))
        try:
            return self.con.execute(sql, params or None)
        except duckdb.OutOfMemoryException:
            raise over_budget(paths) from None
        except _DATA_ERRORS as exc:
            if "KeyboardInterrupt" in str(exc):  # Ctrl-C while DuckDB read an Arrow source
                raise KeyboardInterrupt from None
            reason = str(exc).splitlines()[0]
            raise InputError(
                f"{paths}: a value cannot be read ({reason}); check the log against the "
                "run-log contract with ragreport validate"
            ) from None

    def drop(self, *tables: str) -> None:
        """Free tables no later query reads (their memory is the largest part of DuckDB's)."""
        for table in tables:
            self.con.execute(f"DROP TABLE IF EXISTS {table}")

    def close(self) -> None:
        self.con.close()

    def row_problems(self) -> list[RowProblem]:
        """Every row problem of the logs: refusals first, then values left out (needs facts).
        The samples' labels are checked only when a run logs samples (the query's own rule:
        it finds nothing otherwise, at the cost of building every row's label set)."""
        sampled = any(has_samples(run.columns) for run in self.files.values())
        return [
            RowProblem(
                path=run.path,
                kind=p.kind,
                column=run.sources.get(p.column_name, p.column_name),  # the file's own name
                refused=p.severity == "error",
                n=int(p.n),
                rows=tuple(int(r) + 1 for r in p.row_numbers),
                question_ids=tuple(p.question_ids),
                details=tuple(p.details),
                lines=run.lines,
                unit=run.unit,
                shards=run.shards,
            )
            for query in ("row_problems", *(("sample_problems",) if sampled else ()))
            for p in self.frame(query, **_used(query, _ROW_CHECKS)).itertuples()
            for run in (self.files[p.run],)
        ]


FRAGMENT_ROWS = 100  # Parquet row groups averaging fewer rows than this, ...
FRAGMENTS = 100  # ... this many or more of them: the log is read once, through Arrow
_BATCH = 65_536  # rows of a batch of such a log as DuckDB scans it


def fragmented_log(run: RunFile) -> pa.Table | None:
    """A Parquet log cut into many tiny row groups (a writer that streams each question, or
    many small shards), read whole through Arrow in batches of _BATCH rows; None for any other.
    DuckDB reads a row group at a cost of its own, and each query that reads a log pays it again:
    10,000 questions in 1-row groups took 39.6 s and 6.2 GB, now 6.7 s and 0.45 GB (the same
    rows in one row group: 3.7 s; bench/README.md, "Tiny row groups")."""
    if run.table is not None:
        return None
    files = run.files or (run.path,)
    groups = sum(pq.ParquetFile(f).metadata.num_row_groups for f in files)
    if groups < FRAGMENTS or run.n_rows >= FRAGMENT_ROWS * groups:
        return None
    parts = [pq.ParquetFile(f).iter_batches(batch_size=_BATCH) for f in files]
    table = pa.concat_tables(
        [pa.Table.from_batches(list(batches)) for batches in parts], promote_options="permissive"
    )
    # one chunk a batch, whatever the files' chunks were (a file each, for small shards)
    starts = range(0, table.num_rows, _BATCH)
    return pa.Table.from_batches(
        [b for start in starts for b in table.slice(start, _BATCH).combine_chunks().to_batches()],
        table.schema,
    )


def literal(path: Path) -> str:
    """``path`` as DuckDB's read_parquet takes one file: it reads a path as a pattern, so a log
    named 'run*.parquet' was read with 'run.parquet' beside it, each question twice; each of
    ``*``, ``?`` and ``[`` goes in brackets, which match it alone."""
    return re.sub(r"([*?\[])", r"[\1]", str(path))


def _typed(relation: duckdb.DuckDBPyRelation) -> list[tuple[str, Any]]:
    """The contract columns of a relation of _numbered, with their DuckDB types."""
    columns = zip(relation.columns, relation.types, strict=True)
    return [(name, data_type) for name, data_type in columns if name != "row_number"]


def _schemas(run: RunFile) -> Iterable[pa.Schema]:
    """The Arrow schema of each of ``run``'s files, or of its table read in memory."""
    if run.table is not None:
        return [run.table.schema]
    return (pq.read_schema(f) for f in run.files or (run.path,))


def float32_columns(run: RunFile) -> frozenset[str]:
    """The columns ``run`` holds as float32 (or float16) in any of its files (narrow_floats):
    DuckDB reads shards of float32 and float64 as one double column."""
    return narrow_floats(_schemas(run))


def _nested(data_type: str) -> bool:
    """Whether a DuckDB type name is a list, an array, a struct, a map or a union."""
    return data_type.endswith("]") or data_type.startswith(("STRUCT", "MAP", "UNION"))


def temporal_columns(run: RunFile) -> dict[str, pa.DataType]:
    """The columns ``run`` holds as durations, timestamps, dates or times in any of its files,
    with their Arrow types: DuckDB reads a Parquet duration as the integer of its ticks, in the
    unit each file chose (pandas stores 1 s in microseconds and 1.5 s in nanoseconds)."""
    return {
        f.name: f.type for schema in _schemas(run) for f in schema if pa.types.is_temporal(f.type)
    }


def _read_as(name: str, duckdb_type: Any, single: bool = False) -> str:
    """How the queries read contract column ``name``: a true/false column logged as numbers or
    text as booleans (1 true, 0 false, null and NaN missing: a cast would read NaN as true;
    text as contract.spelled_flag reads it on load, which DuckDB's own cast does not: it
    refuses a word with a space around it and 1.0), the rest as written (queries/runs.sql
    casts them). Shards of one log that hold such a column as numbers in one file and as text
    in another are read as text, the numbers spelled as DuckDB writes them (1.0, nan).
    question_id and sample logged as floats (whole numbers: load.value_problems) are read as
    the integers they are, as a CSV's 7.0 is: 1.0 as text would pair with no '1'. A fraction
    (refused on load, listed by validate) stays as written, so that 1.2 and 1.4 are not
    reported as one id repeated.

    A number column that either run holds as float32 (``single``) is read in both at float32
    precision, as the shortest decimal that reads back as the same float32 (as_number,
    queries/rules.sql): the same scores logged as float32 by one run and float64 by the other
    (0.699999988 against 0.7) differed on every question, a "B worse" of -1e-8 that failed a
    gate."""
    if name in KEY_COLUMNS and _floating(duckdb_type):  # a fraction kept as written
        whole = f"{name} = trunc({name}) AND abs({name}) < 9.2e18"
        return f"CASE WHEN {whole} THEN {name}::BIGINT::VARCHAR ELSE {name}::VARCHAR END AS {name}"
    if single and BY_NAME[name].type_name in _NUMBERS:
        return f"as_number({name}, true) AS {name}"
    if BY_NAME[name].type_name != FLAG or str(duckdb_type) == "BOOLEAN":
        return name
    if str(duckdb_type) == "VARCHAR":
        text = f"trim({name}, '{FLAG_SPACE}')"
        return (
            f"CASE WHEN lower({text}) IN {_literals(TRUE_WORDS)} THEN true "
            f"WHEN lower({text}) IN {_literals(FALSE_WORDS)} THEN false "
            f"ELSE CASE TRY_CAST({text} AS DOUBLE) WHEN 1 THEN true WHEN 0 THEN false END "
            f"END AS {name}"
        )
    return f"CASE {name}::DOUBLE WHEN 1 THEN true WHEN 0 THEN false END AS {name}"


def _floating(duckdb_type: Any) -> bool:
    return str(duckdb_type) in ("FLOAT", "DOUBLE") or str(duckdb_type).startswith("DECIMAL")


def _literals(texts: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{t}'" for t in texts) + ")"


def _used(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """The parameters the named query uses (``$key`` in its text)."""
    text = query_text(name)
    return {key: value for key, value in params.items() if re.search(rf"\${key}\b", text)}


def _as_run(table: pa.Table, key: str) -> pa.Table:
    """A scored run's table with its rows relabelled as run ``key``."""
    column = table.schema.get_field_index("run")
    return table.set_column(column, "run", pa.array([key] * table.num_rows, pa.string()))
