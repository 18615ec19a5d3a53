"""``convert``: read a log in any format and write it as a canonical Parquet run log."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .errors import InputError
from .inputs.database import RunDatabase, fragmented_log
from .inputs.load import open_log, with_reading, with_rows
from .inputs.readers import ReadOptions
from .inputs.readers.promptfoo import SeveralRuns
from .output import check_parquet_name, write_all


def convert_log(path: Path, options: ReadOptions, output: Path) -> tuple[int, tuple[str, ...]]:
    """Write ``path`` as a Parquet run log at ``output``; return its rows and the reader's notes.

    The log is checked as ``compare`` checks it (contract types, then every row), so a converted
    file is one ``compare`` accepts.
    """
    check_parquet_name(output, "-o", "convert writes a Parquet run log")
    try:
        run = with_rows(open_log(path, "A", options))
    except SeveralRuns as error:
        advice = "a run log holds one run: convert each with --run-filter NAME to its own -o file"
        raise InputError(error.advice(advice)) from None
    whole = fragmented_log(run)  # read through Arrow once, for the checks and the copy
    if whole is not None:
        run = replace(run, table=whole)
    db = RunDatabase(run)
    try:
        db.prepare(None)  # the row checks of compare, on this one log
    finally:
        db.close()
    table = run.table
    if table is None:
        table = pq.read_table([str(f) for f in run.files or (run.path,)])
    sink = pa.BufferOutputStream()
    pq.write_table(with_reading(_writable(table), run), sink)
    write_all({output: sink.getvalue().to_pybytes()}, [path, *run.files], options.files())
    return table.num_rows, run.notes


def _writable(table: pa.Table) -> pa.Table:
    """``table`` with each dictionary of string views (polars' Categorical, as ``write_ipc``
    writes it) as a dictionary of strings: Arrow's Parquet writer cannot cast the first
    ("Unsupported cast from dictionary<values=string_view ...>", a traceback), though DuckDB and
    ``compare`` read it."""
    for i, field in enumerate(table.schema):
        kind = field.type
        if pa.types.is_dictionary(kind) and pa.types.is_string_view(kind.value_type):
            text = pa.dictionary(kind.index_type, pa.string())
            table = table.set_column(i, field.with_type(text), table.column(i).cast(text))
    return table
