"""Two runs compared from the per-question tables ``ragreport metrics`` wrote (scored where
the logs are, sharded or too large to move), as ``compare`` compares their logs.

The tables hold what the comparison's statistics read: each question's metrics (the means over
its samples, as queries/question_means.sql makes them), its slice, the keys of its golden labels
and its first answer's outcome at each link (queries/answer_stage.sql). So the metrics, their
intervals and tests, the verdict, the slices, the gate, the diagnosis and the label-drift check
are those of the logs. What only a log's rows give (question texts, worked cases, data checks,
unjudged@k, the metric-vs-k curve, the spread of samples) the report names as missing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..analysis.audit import Audit, audited
from ..analysis.metrics import MetricTables, Options, paired_tables, plan
from ..analysis.registry import score
from ..analysis.scores import Scores, not_offered_note, offered_note, own_name
from ..analysis.scoring import Scoring
from ..errors import InputError
from ..inputs.load import RunFile
from ..inputs.scored_table import (
    ANSWER_STAGE,
    LABEL_CHANGES,
    ScoredTable,
    other_setting,
)

# paired.sql's columns, each as <column>_a and <column>_b (the metrics a table lacks are NULL)
PAIRED = (
    *("k", "passages", "n_relevant", "answerable", "context_tokens", "evidence_in_context"),
    *("recall", "precision", "hit", "mrr", "ndcg", "map", "rprec", "all", "correct"),
    *("faithfulness", "evidence_recall", "context_precision", "evidence_iou", "prompt_chars"),
)


def check_scored_pair(a: RunFile, b: RunFile) -> None:
    """A run log beside a per-question table: each is read its own way, so they are refused
    together, naming both."""
    if (a.scored is None) == (b.scored is None):
        return
    table, run_log = (a, b) if a.scored is not None else (b, a)
    raise InputError(
        f"{run_log.path}: a run log, compared with {table.path}, a table of per-question "
        "metrics; score the log with ragreport metrics (with the --k, --gain and "
        "--span-coverage of the table) and compare the two tables, or compare both run logs"
    )


def question_ids(run: RunFile) -> list[str]:
    """A table's question ids, in its order (its log's file order)."""
    return _scored(run).table["question_id"].cast(pa.string()).to_pylist()


def prompt_sizes(run: RunFile) -> pd.Series:
    """Each question's prompt size as its table records it (the smallest of its samples')."""
    return _scored(run).table["k"].to_pandas()


def _scored(run: RunFile) -> ScoredTable:
    if run.scored is None:
        raise ValueError(f"{run.path} is a run log, not a per-question table")
    return run.scored


class ScoredQuestions:
    """Two per-question tables read as ``compare_runs`` reads two logs (``Questions``)."""

    def __init__(self, runs: dict[str, RunFile], keep: list[str] | None) -> None:
        self.runs = runs
        self.frames: dict[str, pd.DataFrame] = {}
        self.stages: dict[str, pd.DataFrame] = {}
        for key, run in runs.items():
            table = _scored(run).table
            ids = table["question_id"].cast(pa.string())
            if keep is not None:
                kept = pc.is_in(ids, value_set=pa.array(keep, pa.string()))
                table, ids = table.filter(kept), ids.filter(kept)
            _one_row_a_question(run, ids)
            stage = table[ANSWER_STAGE].combine_chunks()
            fields = [stage.type.field(i).name for i in range(stage.type.num_fields)]
            self.stages[key] = pa.table(
                {"question_id": ids, **dict(zip(fields, stage.flatten(), strict=True))}
            ).to_pandas()
            self.frames[key] = (
                table.drop_columns([ANSWER_STAGE]).set_column(0, "question_id", ids).to_pandas()
            )

    @property
    def warnings(self) -> list[str]:
        """The values ragreport metrics left out of each log, as it recorded them, and what the
        tables do not carry."""
        left_out = [w for r in self.runs.values() for w in _scored(r).logged.left_out]
        logged = set.intersection(*(set(r.columns) for r in self.runs.values()))
        missing = [
            *(["the question texts"] if "question" in logged else []),
            "the worked cases",
            "the data checks",
            *(
                ["unjudged@k"]
                if "relevant_ids" in logged and {"retrieved_ids", "context_ids"} & logged
                else []
            ),
            *(["the metric-vs-k curve"] if {"retrieved_ids", "retrieved_spans"} & logged else []),
            *(
                ["the spread of the samples"]
                if any(_scored(r).logged.sampled for r in self.runs.values())
                else []
            ),
        ]
        carried = ", ".join(missing[:-1]) + f" and {missing[-1]}"
        return [
            *left_out,
            "Compared from per-question tables (ragreport metrics), which do not carry "
            f"{carried}: compare the run logs for them",
        ]

    def slice_values(self, column: str) -> pd.DataFrame:
        if column != "slice":
            raise InputError(
                f"{self.runs['a'].path}: a table of per-question metrics carries the slice "
                f"column only, not {column!r}; compare the run logs to slice or cluster by it"
            )
        a, b = (self.frames[key][["question_id", "slice"]] for key in "ab")
        both = a.merge(b, on="question_id", how="outer", suffixes=("_a", "_b"), sort=False)
        differs = both["slice_a"].notna() & both["slice_b"].notna()
        return pd.DataFrame(
            {
                "question_id": both["question_id"],
                "value": both["slice_a"].combine_first(both["slice_b"]),
                "differs": differs & (both["slice_a"] != both["slice_b"]),
                "varies_a": False,
                "varies_b": False,
            }
        )

    def tables(self, options: Options) -> MetricTables:
        runs = (self.runs["a"], self.runs["b"])
        p = plan(runs, options)
        for run in runs:
            _check_scoring(run, options)
        scores = self._scores(options)
        columns = [*PAIRED, *(m.name for m in scores.metrics if m.name not in PAIRED)]
        a, b = (_columns(self.frames[key], columns) for key in "ab")
        both = a.merge(b, on="question_id", suffixes=("_a", "_b"))
        both = both.sort_values("question_id", kind="stable", ignore_index=True)
        paired = pd.DataFrame(
            {
                "question_id": both["question_id"],
                "slice": both["slice_a"].combine_first(both["slice_b"]),
                **{f"{c}_{r}": both[f"{c}_{r}"] for c in columns for r in "ab"},
            }
        )
        ids = {key: self.frames[key]["question_id"] for key in "ab"}
        only = (
            ids["a"][~ids["a"].isin(ids["b"])].tolist(),
            ids["b"][~ids["b"].isin(ids["a"])].tolist(),
        )
        sampled = any(_scored(r).logged.sampled for r in runs)
        return paired_tables(runs, options, p, scores, paired, only, sampled)

    def _scores(self, options: Options) -> Scores:
        """The score columns to compare, as ``user_scores`` chooses them from the logs: the
        tables carry each log's tool scores and costs, as their means per question."""
        runs = [self.runs["a"], self.runs["b"]]
        wanted = {c: "--metric" for c in options.score_columns}
        wanted |= {c: "--lower-is-better" for c in options.lower_is_better}
        for column, flag in wanted.items():
            problem = own_name(column)
            lacking = next((r for r in runs if column not in _scored(r).carried), None)
            if problem is None and lacking is not None:
                carried = ", ".join(_scored(lacking).carried) or "none"
                problem = (
                    f"the table carries no column {column!r} (its log's score and cost columns "
                    f"it carries: {carried}); compare the run logs, or name a column it carries"
                )
            if problem is not None:
                raise InputError(f"{(lacking or runs[0]).path}: {flag} {column}: {problem}")
        notes, kept = [], []
        for column in dict.fromkeys(c for r in runs for c in r.scores):
            lacking = next((r for r in runs if column not in _scored(r).carried), None)
            if column in wanted:
                continue
            if lacking is not None:
                notes.append(not_offered_note(column, str(lacking.path), "no such column"))
            else:
                kept.append(column)
        notes += offered_note(kept)
        binary = set.intersection(*(set(_scored(r).logged.binary) for r in runs))
        metrics = tuple(
            score(c, binary=c in binary, higher_is_better=c not in options.lower_is_better)
            for c in [*wanted, *kept]
        )
        return Scores(metrics, tuple(notes))

    def texts(self, ids: list[str]) -> pd.DataFrame:
        return pd.DataFrame(
            {"question_id": pd.Series(ids, dtype=object), "question": [None] * len(ids)}
        )

    def audit(self, tables: MetricTables, slice_values: pd.Series | None, strict: bool) -> Audit:
        """The audit, its label changes told by the tables' keys of each question's labels
        (queries/fingerprints.sql), compared where both logs logged them."""
        a, b = (self.frames[key] for key in "ab")
        both = a.merge(b, on="question_id", suffixes=("_a", "_b"))
        changed: list[list[str]] = [[] for _ in range(len(both))]
        for kind, named in LABEL_CHANGES.items():
            keys = both[[f"{kind}_key_a", f"{kind}_key_b"]]
            differs = keys.notna().all(axis=1) & (keys.iloc[:, 0] != keys.iloc[:, 1])
            for i in np.flatnonzero(differs.to_numpy()):
                changed[i].append(named)
        changes = [
            (q, ", ".join(what))
            for q, what in zip(both["question_id"], changed, strict=True)
            if what
        ]
        return audited(self.runs, tables, slice_values, strict, changes)

    def answers(self, k: int | None) -> pd.DataFrame:
        """The answer stages of both tables (recorded at the cutoff the tables were scored
        with, which ``tables`` has checked is ``k``)."""
        a, b = self.stages["a"], self.stages["b"]
        both = a.merge(b, on="question_id", suffixes=("_a", "_b"))
        return both.sort_values("question_id", kind="stable", ignore_index=True)

    def exemplars(self, ids: list[str], k: int | None) -> pd.DataFrame:
        return pd.DataFrame({"run": pd.Series(dtype=str), "question_id": pd.Series(dtype=str)})

    def close(self) -> None:
        pass


def _columns(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """question_id, slice and ``columns`` of a table, NULL where it lacks one (a metric its log
    could not give)."""
    return frame.reindex(columns=["question_id", "slice", *columns])


def _one_row_a_question(run: RunFile, ids: pa.ChunkedArray) -> None:
    counts = pc.value_counts(ids).flatten()
    repeated = [
        v for v, n in zip(counts[0].to_pylist(), counts[1].to_pylist(), strict=True) if n > 1
    ]
    if repeated:
        raise InputError(
            f"{run.path}: question {repeated[0]!r} has more than one row; a table of "
            "per-question metrics has one row a question: write it again with ragreport metrics"
        )


def _check_scoring(run: RunFile, options: Options) -> None:
    """Refuse a table scored with another --k, --gain or --span-coverage than the comparison's:
    its metrics would be other metrics under the same names."""
    spans = "relevant_spans" in run.columns
    asked = Scoring(options.cutoff, options.gain, options.span_coverage)
    for metric, recorded in _scored(run).scoring.items():
        differs = other_setting(recorded, asked.of(metric, spans))
        if differs is not None:
            raise InputError(
                f"{run.path}: its {metric} was scored with {differs[0]}, and this comparison "
                f"asks for {differs[1]}; pass the options the tables were scored with, or score "
                "the logs again with ragreport metrics"
            )
