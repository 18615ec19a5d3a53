"""The DuckDB session that reads both run logs: their views, and the named queries of queries/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .errors import InputError
from .load import RunFile
from .resources import query_text


class RunDatabase:
    """Both run logs registered as ``raw_a`` / ``raw_b`` and the contract view ``runs``."""

    def __init__(self, a: RunFile, b: RunFile) -> None:
        self.files = {"a": a, "b": b}
        self.con = duckdb.connect()
        for key, run in self.files.items():
            if run.table is not None:
                relation = self.con.from_arrow(run.table)
            elif run.files:
                relation = self._shards(run.files)
            else:
                relation = self.con.read_parquet(str(run.path), file_row_number=True)
            relation.create_view(f"raw_{key}")
        self.execute("runs")
        self._check_rows()

    def _shards(self, files: tuple[Path, ...]) -> duckdb.DuckDBPyRelation:
        """Parquet shards read as one log, rows numbered across the shards in name order."""
        names = [str(f) for f in files]
        sizes = [pq.ParquetFile(f).metadata.num_rows for f in files]
        offsets = pa.table({"filename": names, "row_offset": np.cumsum([0, *sizes[:-1]])})
        shards = self.con.read_parquet(
            names, file_row_number=True, filename=True, union_by_name=True
        )
        return shards.join(self.con.from_arrow(offsets), "filename").project(
            "* EXCLUDE (filename, row_offset) "
            "REPLACE (file_row_number + row_offset AS file_row_number)"
        )

    def prepare(self, k: int | None) -> None:
        """Read both logs once into the tables ``facts`` and ``relevant`` that queries share."""
        self.execute("facts", k=k)
        self.execute("relevant")

    def execute(self, name: str, **params: Any) -> None:
        self.con.execute(query_text(name), params or None)

    def frame(self, name: str, **params: Any) -> pd.DataFrame:
        return self.con.execute(query_text(name), params or None).df()

    def close(self) -> None:
        self.con.close()

    def _check_rows(self) -> None:
        problems = self.frame("row_problems")
        if problems.empty:
            return
        p = problems.iloc[0]
        path = self.files[p.run].path
        row = int(p.row_number) + 1
        where = f"{path}: row {row} (question_id {p.question_id!r})"
        if p.kind == "null_id":
            raise InputError(f"{path}: row {row} has no question_id; give every row one")
        if p.kind == "duplicate_id":
            first = int(p.detail.rsplit(" ", 1)[1]) + 1
            raise InputError(
                f"{path}: question_id {p.question_id!r} appears in rows {first} and {row}; "
                "each question must appear once per run"
            )
        if p.kind == "grades_length":
            raise InputError(
                f"{where}: relevant_grades has {p.detail}; give one grade per relevant id"
            )
        raise InputError(f"{where}: faithfulness is {p.detail}; expected a share between 0 and 1")
