"""``validate``: every problem of a run log, one line per kind, with the checks compare uses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import InputError
from .inputs.database import RunDatabase
from .inputs.load import open_log, parquet_file, schema_problems
from .inputs.readers import ReadOptions


@dataclass(frozen=True)
class Validation:
    lines: list[str]  # one per kind of problem; a single "ok" line when there is none
    refused: bool  # compare would refuse this log


def validate(path: Path, options: ReadOptions) -> Validation:
    """The file, then its schema, then (when the schema holds) every row problem.

    Rows are checked only against a schema that holds: a column of the wrong type cannot be read
    in the contract's type.
    """
    try:
        run = open_log(path, "", options)
    except InputError as error:
        return Validation(_schema_problems(path) or [str(error)], refused=True)
    db = RunDatabase(run)
    try:
        db.execute("facts", k=None)
        found = db.row_problems()
    except InputError as error:
        return Validation([str(error)], refused=True)
    finally:
        db.close()
    if not found:
        return Validation([f"{path}: ok, {run.n_rows} rows follow the run-log contract"], False)
    return Validation([p.summary() for p in found], refused=any(p.refused for p in found))


def _schema_problems(path: Path) -> list[str]:
    """Every schema breach of one Parquet file (opening a log stops at the first one)."""
    try:
        return schema_problems(path, parquet_file(path).schema_arrow)
    except InputError:
        return []
