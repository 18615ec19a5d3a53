"""One run log's per-question table, as ``ragreport metrics`` writes it and ``compare`` reads
it: each question's metrics with the same SQL as ``compare``'s, the log's scores and costs, the
keys of its golden labels, the columns kept for --slice and --cluster and its answer stage. A
log compared with such tables is scored into one here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..analysis.metrics import (
    RANKINGS,
    RETRIEVAL_NEEDS,
    Options,
    check_cutoff,
    check_span_rankings,
    score_questions,
)
from ..analysis.registry import ANSWER, BY_NAME, CONTEXT, RETRIEVAL, names
from ..analysis.scores import BOOLEAN, NOT_SCORES, refuse_too_large, score_kind
from ..analysis.scoring import Scoring
from ..diagnosis.diagnose import COSTS
from ..errors import InputError
from ..inputs.database import RunDatabase
from ..inputs.load import RunFile
from ..inputs.scored_table import ANSWER_STAGE, KEPT, LOG_KEY, SCORING_KEY, LoggedAs, in_memory
from ..progress import stage
from .compare import one_value_a_question

METRICS = names(RETRIEVAL, CONTEXT, ANSWER)  # what a per-question table and its sums may hold
# What a run's fingerprints hash, with the log columns that must be present for each (any one):
# its golden labels, kind by kind as the label-drift check compares them, and its own outputs.
FINGERPRINTS = {
    "relevant": ("relevant_ids", "relevant_spans"),
    "answerable": ("answerable",),
    "reference": ("reference_answer",),
    "outputs": (),  # always: the rankings, answers and their judgements (queries/fingerprints.sql)
}
SCORED_HERE = (
    "scored from its log here, as ragreport metrics scores one, to be compared with the "
    "per-question tables given for the other runs."
)


def metrics_of(run: RunFile, scoring: Scoring, kept: Mapping[str, str] | None = None) -> pa.Table:
    """The per-question metrics of an opened log (a file, shards, or a table in memory), with
    the log's columns ``kept`` for compare's --slice and --cluster (column: the flag that asked
    for it, which a refusal of the column names)."""
    path, k = run.path, scoring.k
    check_cutoff((run, run), k)  # as compare: --k where the log needs one, and only there
    check_span_rankings(run)
    db = RunDatabase(run)
    try:
        db.prepare(k, scoring.span_coverage)
        score_questions(db, k, scoring.gain == "exponential")
        frame = db.frame("run_metrics")
        hashed = db.frame("fingerprints", run="a")
        ids = frame["question_id"].astype(str)
        carried, binary = _carried(db, run, ids)
        columns = {c: _kept(db, run, c, flag, ids) for c, flag in (kept or {}).items()}
        sampled = db.sampled()
        if sampled:  # the answer stage reads each question's first answer, as compare's does
            db.execute("first_sample")
            db.execute("relevant")
        stage = db.arrow("answer_stage", k=k)
        left_out = tuple(p.warning() for p in db.left_out)
    finally:
        db.close()
    present = [m for m in METRICS if frame[m].notna().any()]
    if not present and not carried and not scorable(run.columns):
        raise InputError(
            f"{path}: no metric can be computed; the log needs relevant_ids with "
            "retrieved_ids or context_ids, relevant_spans with retrieved_spans or context_spans, "
            "or correct, or faithfulness"
        )
    spans = "relevant_spans" in run.columns
    absent = [m for m in METRICS if m not in present] + ([] if spans else ["prompt_chars"])
    table = pa.Table.from_pandas(frame.drop(columns=absent), preserve_index=False)
    for column, values in carried.items():
        table = table.append_column(column, pa.array(values, pa.float64(), from_pandas=True))
    for kind, needs in FINGERPRINTS.items():  # keys NULL where the log lacks the columns
        keys = pa.array(hashed[f"{kind}_key"], pa.uint64())
        logged = not needs or any(c in run.columns for c in needs)
        table = table.append_column(
            f"{kind}_key", keys if logged else pa.nulls(len(keys), pa.uint64())
        )
    if columns:
        table = table.append_column(
            KEPT, pa.StructArray.from_arrays(list(columns.values()), names=list(columns))
        )
    table = table.append_column(ANSWER_STAGE, _answer_stage(stage, table["question_id"]))
    settings = {m: scoring.of(m, spans) for m in [*present, *carried]}
    logged_as = LoggedAs(
        columns=tuple(sorted(run.columns)),
        tool=run.tool,
        scores=tuple(c for c in run.scores if c in carried),
        binary=tuple(binary),
        sampled=sampled,
        carried=tuple(carried),
        notes=run.notes,
        left_out=left_out,
        rel_level=run.rel_level,
    )
    return table.replace_schema_metadata(
        {SCORING_KEY: json.dumps(settings), LOG_KEY: logged_as.to_json()}
    )


def _answer_stage(stage: pa.Table, ids: pa.ChunkedArray) -> pa.StructArray:
    """queries/answer_stage.sql's row of each question (its first answer), in the order of
    ``ids``, as one struct column: what compare's diagnosis reads of a run."""
    # an empty shard's ids are of no type: cast, so that they look up as strings
    rows = stage.take(pc.index_in(ids.cast(pa.string()), stage["question_id"].cast(pa.string())))
    fields = [c for c in rows.column_names if c not in ("run", "question_id")]
    return pa.StructArray.from_arrays([rows[c].combine_chunks() for c in fields], names=fields)


def _carried(
    db: RunDatabase, run: RunFile, ids: pd.Series
) -> tuple[dict[str, np.ndarray], list[str]]:
    """The columns ``compare`` compares beyond the report's own metrics, as it takes them: the
    score columns of the log's tool and the cost columns, each question's mean of its finite
    values over its samples (NaN for none), in the order of ``ids``; those with a value only
    (a shard may have none). A tool's score column of other values is left out (_left_out).
    With them, those logged as true/false (0/1 outcomes where a question has one answer)."""
    types = {r.column_name: r.data_type for r in db.frame("column_types").itertuples()}
    out = {}
    for column in dict.fromkeys((*run.scores, *(c for c in COSTS if c in run.columns))):
        if column in NOT_SCORES or column in BY_NAME or score_kind(types.get(column)) is None:
            continue
        scored = db.score_column(column)
        refuse_too_large(db, scored, column)
        values = scored[scored["run"] == "a"].set_index("question_id")["value"]
        mapped = ids.map(values).to_numpy(dtype=float, na_value=np.nan)
        if not np.isnan(mapped).all():
            out[column] = mapped
    return out, [c for c in out if types.get(c) == BOOLEAN]


def _kept(db: RunDatabase, run: RunFile, column: str, flag: str, ids: pd.Series) -> pa.Array:
    """A log's column kept for compare's --slice or --cluster (``flag``): each question's value
    as compare reads it (queries/slice_values.sql), in the order of ``ids``; samples of a
    question that disagree are refused, as compare refuses them."""
    values = db.slice_values(column)
    one_value_a_question(values, column, {"a": run}, flag)
    return pa.array(
        ids.map(values.set_index("question_id")["value"]), pa.string(), from_pandas=True
    )


def scorable(columns: frozenset[str]) -> bool:
    """Whether a log's columns can give a metric: a shard may still have none (no rows, or only
    questions without labels), and then adds nothing to the sums of its run."""
    retrieval = all(set(needed) & columns for needed in RETRIEVAL_NEEDS.values())
    return retrieval or bool({"correct", "faithfulness"} & columns)


def asked_columns(slices: Iterable[str], cluster: str | None) -> dict[str, str]:
    """The log's columns to keep for compare's --slice and --cluster, each with the flag that
    asks for it (--cluster where both do: a refusal names the flag)."""
    return {c: "--slice" for c in slices} | ({cluster: "--cluster"} if cluster else {})


def scored_beside_tables(runs: list[RunFile], options: Options) -> list[RunFile]:
    """Runs given as per-question tables beside runs given as logs: each log scored into its
    table here, as ``ragreport metrics`` would score it with the comparison's --k, --gain and
    --span-coverage, keeping the --slice and --cluster columns it has, so that every run is
    compared alike (a baseline's archived table with a new log, in one command). Otherwise the
    runs as they are."""
    if len({run.scored is None for run in runs}) == 1:
        return runs
    stage("scoring the logs given beside tables")
    scoring = Scoring(options.cutoff, options.gain, options.span_coverage)
    wanted = asked_columns(options.slices, options.cluster).items()

    def scored(run: RunFile) -> RunFile:
        # a table holds slice among its metrics
        kept = {c: flag for c, flag in wanted if c in run.columns and c != "slice"}
        ranked = set(RANKINGS) & run.columns  # a log with none has nothing for --k to cut
        table = metrics_of(run, scoring if ranked else replace(scoring, k=None), kept)
        return replace(run, scored=in_memory(table), notes=(*run.notes, SCORED_HERE))

    return [run if run.scored is not None else scored(run) for run in runs]
