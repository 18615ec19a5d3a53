"""What a comparison reads of two runs' questions, whichever form the runs came in: run logs
(read by DuckDB, ``LoggedQuestions``) or the per-question tables ``ragreport metrics`` wrote
(``scored_pairs.ScoredQuestions``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import pandas as pd

from ..analysis.audit import Audit, audit
from ..analysis.metrics import MetricTables, Options, compute_tables
from ..inputs.database import RunDatabase, ScoredRun
from ..inputs.load import RunFile
from .scored_pairs import ScoredQuestions, same_keys


class Questions(Protocol):
    """Both runs' questions, as ``compare_runs`` reads them, in the order it reads them."""

    @property
    def warnings(self) -> list[str]:
        """For the report's warnings: the values the reading left out, and what this form of
        the runs cannot give the report."""

    def slice_values(self, column: str) -> pd.DataFrame:
        """queries/slice_values.sql's rows for ``column``."""

    def tables(self, options: Options, curve: bool = True) -> MetricTables:
        """Both runs' per-question metrics, paired; with the metric-vs-k curve where the runs
        give one, unless ``curve`` is false (a check of the rules reads the metrics' names)."""

    def texts(self, ids: list[str]) -> pd.DataFrame:
        """question_id and question (its text, NULL where unknown) of ``ids``."""

    def audit(
        self, tables: MetricTables, slice_values: Mapping[str, pd.Series], strict: bool
    ) -> Audit:
        """The golden-set audit."""

    def answers(self, k: int | None) -> pd.DataFrame:
        """queries/answer_stage.sql's rows of the paired questions, side by side."""

    def exemplars(self, ids: list[str], k: int | None) -> pd.DataFrame:
        """queries/exemplars.sql's rows of ``ids`` (at least run and question_id columns)."""

    def same_outputs(self, ids: list[str]) -> bool:
        """Whether both runs' outputs (rankings, prompts, answers and their judgements:
        queries/fingerprints.sql's outputs key) are the same on every question of ``ids``."""

    def close(self) -> None: ...


class LoggedQuestions:
    """The questions of two run logs, read with the SQL of queries/."""

    def __init__(self, db: RunDatabase) -> None:
        self.db = db

    @property
    def warnings(self) -> list[str]:
        return [p.warning() for p in self.db.left_out]

    def slice_values(self, column: str) -> pd.DataFrame:
        return self.db.slice_values(column)

    def tables(self, options: Options, curve: bool = True) -> MetricTables:
        return compute_tables(self.db, options, curve)

    def texts(self, ids: list[str]) -> pd.DataFrame:
        return self.db.frame("question_texts", ids=ids)

    def audit(
        self, tables: MetricTables, slice_values: Mapping[str, pd.Series], strict: bool
    ) -> Audit:
        return audit(self.db, tables, slice_values, strict)

    def answers(self, k: int | None) -> pd.DataFrame:
        return self.db.pairs("answer_stage", k=k)

    def exemplars(self, ids: list[str], k: int | None) -> pd.DataFrame:
        return self.db.frame("exemplars", ids=ids, k=k)

    def same_outputs(self, ids: list[str]) -> bool:
        keys = [self.db.frame("fingerprints", run=run).set_index("question_id") for run in "ab"]
        return same_keys(keys, ids)

    def close(self) -> None:
        self.db.close()


def open_questions(
    a: RunFile,
    b: RunFile | None = None,
    keep: list[str] | None = None,
    scored: tuple[ScoredRun, ScoredRun] | None = None,
) -> Questions:
    """The questions of run ``a`` and ``b`` (``b`` alone: of ``a`` twice), read as their form
    asks: per-question tables as they are, logs by DuckDB (``keep`` and ``scored`` as
    RunDatabase takes them)."""
    if a.scored is not None:
        return ScoredQuestions({"a": a, "b": b or a}, keep)
    return LoggedQuestions(RunDatabase(a, b, keep, scored))
