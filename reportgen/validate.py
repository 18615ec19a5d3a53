"""``validate``: every problem of a run log, one line per kind, with the checks compare uses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .database import RunDatabase
from .errors import InputError
from .load import open_run, parquet_file, schema_problems


@dataclass(frozen=True)
class Validation:
    lines: list[str]  # one per kind of problem; a single "ok" line when there is none
    refused: bool  # compare would refuse this log


def validate(path: Path) -> Validation:
    """The file, then its schema, then (when the schema holds) every row problem.

    Rows are checked only against a schema that holds: a column of the wrong type cannot be read
    in the contract's type.
    """
    try:
        parquet = parquet_file(path)
    except InputError as error:
        return Validation([str(error)], refused=True)
    problems = schema_problems(path, parquet.schema_arrow)
    if problems:
        return Validation(problems, refused=True)
    run = open_run(path, "")
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
