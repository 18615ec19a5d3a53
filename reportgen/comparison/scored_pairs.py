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

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..analysis.audit import Audit, audited
from ..analysis.metrics import MetricTables, Options, every_prompt, paired_tables, plan
from ..analysis.registry import score
from ..analysis.scores import (
    Scores,
    higher_is_better,
    not_offered_note,
    offered_note,
    own_name,
)
from ..analysis.scoring import Scoring, depends_on
from ..errors import InputError
from ..inputs.load import RunFile, Source
from ..inputs.scored_table import (
    ANSWER_STAGE,
    KEPT,
    LABEL_CHANGES,
    ScoredTable,
    Settings,
    first_difference,
    option_text,
    scored_with,
)
from ..resources import query_text

# paired.sql's columns, each as <column>_a and <column>_b (the metrics a table lacks are NULL),
# read from the query so that the tables pair what the logs pair
PAIRED = tuple(re.findall(r"\bAS (\w+)_a\b", query_text("paired")))
# booleans with NULLs as pandas' nullable booleans, as DuckDB gives the logs' (not Python
# objects, which take seconds a million rows to turn into floats), and the 64-bit label keys
# as integers (not floats, which would round two keys to one)
PANDAS_TYPES = {pa.bool_(): pd.BooleanDtype(), pa.uint64(): pd.UInt64Dtype()}.get
# what the tables' questions are read for in pandas: their slices and label changes
FRAMED = ["question_id", "slice", *(f"{kind}_key" for kind in LABEL_CHANGES)]


def question_ids(run: RunFile) -> list[str]:
    """A table's question ids, in its order (its log's file order)."""
    return _scored(run).table["question_id"].cast(pa.string()).to_pylist()


def prompt_sizes(run: RunFile) -> pd.Series:
    """The size of every prompt of a table's questions (``every_prompt``; a table written before
    it recorded its samples' prompts has each question's own)."""
    table = _scored(run).table
    sizes = _columns(table, ["passages", "prompt_sizes"])
    return every_prompt(sizes["passages"].to_pandas(), sizes["prompt_sizes"].to_pandas())


def _scored(run: RunFile) -> ScoredTable:
    if run.scored is None:
        raise ValueError(f"{run.path} is a run log, not a per-question table")
    return run.scored


class ScoredQuestions:
    """Two per-question tables read as ``compare_runs`` reads two logs (``Questions``)."""

    def __init__(self, runs: dict[str, RunFile], keep: list[str] | None) -> None:
        self.runs = runs
        self.frames: dict[str, pd.DataFrame] = {}  # question_id, slice and the label keys
        self.stages: dict[str, pd.DataFrame] = {}
        self.kept: dict[str, pd.DataFrame] = {}  # question_id and the columns kept (KEPT)
        self.ids: dict[str, pa.ChunkedArray] = {}
        self.arrow: dict[str, pa.Table] = {}  # the tables but their structs, ids as text
        for key, run in runs.items():
            table = _scored(run).table
            ids = table["question_id"].cast(pa.string())
            if keep is not None:
                kept = pc.is_in(ids, value_set=pa.array(keep, pa.string()))
                table, ids = table.filter(kept), ids.filter(kept)
            self.ids[key] = ids
            self.stages[key] = _fields(table, ANSWER_STAGE, ids)
            self.kept[key] = _fields(table, KEPT, ids)
            structs = [c for c in (ANSWER_STAGE, KEPT) if c in table.column_names]
            self.arrow[key] = table.drop_columns(structs).set_column(0, "question_id", ids)
            self.frames[key] = _pandas(self.arrow[key].select(FRAMED))

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
                ["the spread of the samples", "which samples an answer score's mean leaves out"]
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
        """The column's value per question, as queries/slice_values.sql gives it of the logs:
        the tables hold slice, and the columns ragreport metrics kept (one value a question,
        checked there)."""
        a, b = (self._values(key, column) for key in "ab")
        both = a.merge(b, on="question_id", how="outer", suffixes=("_a", "_b"), sort=False)
        differs = both["value_a"].notna() & both["value_b"].notna()
        return pd.DataFrame(
            {
                "question_id": both["question_id"],
                "value": both["value_a"].combine_first(both["value_b"]),
                "differs": differs & (both["value_a"] != both["value_b"]),
                "varies_a": False,
                "varies_b": False,
            }
        )

    def _values(self, key: str, column: str) -> pd.DataFrame:
        """question_id and value of ``column`` in one table (NULL where its log lacks it)."""
        run, held = self.runs[key], self.kept[key] if column != "slice" else self.frames[key]
        if column in held.columns:
            return held[["question_id", column]].rename(columns={column: "value"})
        if column in run.columns:
            raise InputError(
                f"{run.path}: a table of per-question metrics that does not keep its log's "
                f"column {column!r}; score the log again with ragreport metrics --slice {column} "
                f"(or --cluster {column}), or compare the run logs"
            )
        return pd.DataFrame({"question_id": held["question_id"], "value": None}, dtype=object)

    def tables(self, options: Options, curve: bool = True) -> MetricTables:
        """The tables paired (``curve`` changes nothing: tables carry no rankings to curve)."""
        runs = (self.runs["a"], self.runs["b"])
        p = plan(runs, options)
        for run in runs:
            _check_scoring(run, options)
        scores = self._scores(options)
        columns = [*PAIRED, *(m.name for m in scores.metrics if m.name not in PAIRED)]
        # paired in Arrow, by question_id, one column at a time: pandas' merge of a million
        # rows is seconds of one core, and a join's whole table more memory than the report's
        ids, tables = self.ids, {key: _columns(self.arrow[key], columns) for key in "ab"}
        in_b, in_a = pc.is_in(ids["a"], value_set=ids["b"]), pc.is_in(ids["b"], value_set=ids["a"])
        order = pc.sort_indices(ids["a"])
        rows = {"a": order.filter(in_b.take(order))}
        rows["b"] = pc.index_in(ids["a"].take(rows["a"]), value_set=ids["b"])
        side = {key: tables[key]["slice"].take(rows[key]) for key in "ab"}
        paired = pa.table(
            {
                "question_id": ids["a"].take(rows["a"]),
                "slice": pc.coalesce(side["a"], side["b"]),
                **{f"{c}_{r}": tables[r][c].take(rows[r]) for c in columns for r in "ab"},
            }
        ).to_pandas(split_blocks=True, self_destruct=True, types_mapper=PANDAS_TYPES)
        only = (
            ids["a"].filter(pc.invert(in_b)).to_pylist(),
            ids["b"].filter(pc.invert(in_a)).to_pylist(),
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
            score(
                c,
                binary=c in binary,
                higher_is_better=higher_is_better(c, options.lower_is_better, wanted),
            )
            for c in [*wanted, *kept]
        )
        return Scores(metrics, tuple(notes))

    def texts(self, ids: list[str]) -> pd.DataFrame:
        return pd.DataFrame(
            {"question_id": pd.Series(ids, dtype=object), "question": [None] * len(ids)}
        )

    def audit(
        self, tables: MetricTables, slice_values: Mapping[str, pd.Series], strict: bool
    ) -> Audit:
        """The audit, its label changes told by the tables' keys of each question's labels
        (queries/fingerprints.sql), compared where both logs logged them."""
        a, b = (self.frames[key] for key in "ab")
        both = a.merge(b, on="question_id", suffixes=("_a", "_b"))
        differs = {
            named: (
                both[f"{kind}_key_a"].notna()
                & both[f"{kind}_key_b"].notna()
                & (both[f"{kind}_key_a"] != both[f"{kind}_key_b"])
            ).to_numpy()
            for kind, named in LABEL_CHANGES.items()
        }
        rows = np.flatnonzero(np.logical_or.reduce(list(differs.values())))
        changes = [
            (both["question_id"].iat[i], ", ".join(n for n, d in differs.items() if d[i]))
            for i in rows
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

    def same_outputs(self, ids: list[str]) -> bool:
        """From the tables' outputs keys (a table of an earlier ragreport has none: unknown)."""
        if any("outputs_key" not in self.arrow[key].column_names for key in "ab"):
            return False
        keys = [
            _pandas(self.arrow[key].select(["question_id", "outputs_key"])).set_index("question_id")
            for key in "ab"
        ]
        return same_keys(keys, ids)

    def close(self) -> None:
        pass


def same_keys(keys: list[pd.DataFrame], ids: list[str]) -> bool:
    """Whether both runs' outputs keys (``keys``: each run's, indexed by question_id) are
    known and equal on every question of ``ids``."""
    a, b = (k["outputs_key"].reindex(ids) for k in keys)
    return bool(ids) and bool(a.notna().all()) and bool((a == b).all())


def _fields(table: pa.Table, column: str, ids: pa.ChunkedArray) -> pd.DataFrame:
    """question_id and the fields of a struct column of a table (none if it has no such
    column)."""
    if column not in table.column_names:
        return pd.DataFrame({"question_id": ids.to_pandas()})
    struct = table[column].combine_chunks()
    names = [struct.type.field(i).name for i in range(struct.type.num_fields)]
    fields = dict(zip(names, struct.flatten(), strict=True))
    return _pandas(pa.table({"question_id": ids, **fields}))


def _pandas(table: pa.Table) -> pd.DataFrame:
    return table.to_pandas(types_mapper=PANDAS_TYPES)


def _columns(table: pa.Table, columns: list[str]) -> pa.Table:
    """question_id, slice (as text) and ``columns`` of a table, NULL where it lacks one (a
    metric its log could not give)."""
    return pa.table(
        {
            "question_id": table["question_id"],
            "slice": table["slice"].cast(pa.string()),
            **{
                c: table[c] if c in table.column_names else pa.nulls(len(table), pa.float64())
                for c in columns
            },
        }
    )


# the fields of Options a table records (Settings, in order), with their flags
SCORED_WITH = (("cutoff", "--k"), ("gain", "--gain"), ("span_coverage", "--span-coverage"))


def scored_as(options: Options, sources: Sequence[Source], unset: Collection[str]) -> Options:
    """``options`` with each of --k, --gain and --span-coverage not given (``unset``: fields of
    Options) as the per-question tables among ``sources`` were scored with it, so that tables
    compare without their options repeated and the logs beside them are scored alike. Tables
    scored with two values of one are refused: no comparison could take both."""
    recorded: dict[str, tuple[Any, Path]] = {}
    for where, (scoring, spans) in _scorings(sources):
        for metric, settings in scoring.items():
            for (field, flag), applies, value in zip(
                SCORED_WITH, depends_on(metric, spans), settings, strict=True
            ):
                if not applies or field not in unset:
                    continue
                first, path = recorded.setdefault(field, (value, where))
                if value != first:
                    raise InputError(
                        f"{where}: its {metric} was scored with {option_text(flag, value)}, and "
                        f"{path}'s with {option_text(flag, first)}; score the logs again with "
                        f"ragreport metrics at one {flag}"
                    )
    return replace(options, **{field: value for field, (value, _) in recorded.items()})


def _scorings(sources: Sequence[Source]) -> list[tuple[Path, tuple[dict[str, Settings], bool]]]:
    """Each per-question table among ``sources`` (read for its metadata alone) with its options
    by metric and whether its log was labelled with spans. A table opened already is a run log:
    the Python API refuses a table of metrics in memory."""
    paths = [source for source in sources if not isinstance(source, RunFile)]
    return [(path, scored) for path in paths if (scored := scored_with(path)) is not None]


def _check_scoring(run: RunFile, options: Options) -> None:
    """Refuse a table scored with another --k, --gain or --span-coverage than the comparison's:
    its metrics would be other metrics under the same names."""
    spans = "relevant_spans" in run.columns
    asked = Scoring(options.cutoff, options.gain, options.span_coverage)
    scoring = _scored(run).scoring
    differs = first_difference(scoring, {m: asked.of(m, spans) for m in scoring})
    if differs is not None:
        metric, was, other = differs
        raise InputError(
            f"{run.path}: its {metric} was scored with {was}, and this comparison asks for "
            f"{other}; pass the options the tables were scored with, or score the logs again "
            "with ragreport metrics"
        )
