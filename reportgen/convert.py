"""``convert``: read a log in any format and write it as a canonical Parquet run log."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .inputs.database import RunDatabase
from .inputs.load import open_log
from .inputs.readers import ReadOptions
from .output import write_all


def convert_log(path: Path, options: ReadOptions, output: Path) -> tuple[int, tuple[str, ...]]:
    """Write ``path`` as a Parquet run log at ``output``; return its rows and the reader's notes.

    The log is checked as ``compare`` checks it (contract types, then every row), so a converted
    file is one ``compare`` accepts.
    """
    run = open_log(path, "A", options)
    db = RunDatabase(run)
    try:
        db.prepare(None)  # the row checks of compare, on this one log
    finally:
        db.close()
    table = run.table
    if table is None:
        table = pq.read_table([str(f) for f in run.files or (run.path,)])
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    write_all({output: sink.getvalue().to_pybytes()}, inputs=[path, *run.files])
    return table.num_rows, run.notes
