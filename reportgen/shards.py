"""Past one machine: one run log's per-question metrics (the map stage), its Poisson-bootstrap
partial sums, and the merge of shards' sums into intervals of B - A.

Each shard of questions is scored alone (``ragreport metrics``) with the same SQL as
``compare``; its partial sums (reportgen/analysis/poisson.py) add up with the other shards'
into the sums of the whole run, and the runs' sums subtract into those of B - A
(``ragreport merge``).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .analysis.metrics import score_questions
from .analysis.poisson import (
    Interval,
    PartialSums,
    difference,
    merge,
    partial_sums_by_column,
    percentile_interval,
)
from .analysis.registry import ANSWER, RETRIEVAL, names
from .errors import InputError
from .inputs.database import RunDatabase
from .inputs.load import RunFile, open_log
from .inputs.readers import ReadOptions
from .inputs.readers.promptfoo import SeveralRuns
from .output import check_outputs, write_all

SUMS_SCHEMA = pa.schema(
    [
        ("metric", pa.string()),
        ("seed", pa.uint64()),
        ("n", pa.int64()),
        ("total", pa.int64()),
        ("key_sum", pa.uint64()),
        ("weighted", pa.list_(pa.int64())),
        ("weights", pa.list_(pa.int64())),
    ]
)


def run_metrics(path: Path, reading: ReadOptions, k: int | None, gain: str) -> pa.Table:
    """One log's per-question metrics, in file order, as ``compare`` computes them (after the
    same row checks); columns: question_id, slice, k, n_relevant, the metrics, answerable."""
    try:
        run = open_log(path, "A", reading)
    except SeveralRuns as error:
        advice = (
            "a metrics table holds one run: score each with --run-filter NAME to its own -o file"
        )
        raise InputError(error.advice(advice)) from None
    return metrics_of(run, k, gain)


def metrics_of(run: RunFile, k: int | None, gain: str) -> pa.Table:
    """The per-question metrics of an opened log (a file, shards, or a table in memory)."""
    path = run.path
    if k is None and "relevant_ids" in run.columns and "context_ids" not in run.columns:
        raise InputError(
            f"{path}: no context_ids column, so the prompt cutoff is unknown; pass --k with the "
            "number of passages the generator received"
        )
    db = RunDatabase(run)
    try:
        db.prepare(k)
        score_questions(db, k, gain == "exponential")
        frame = db.frame("run_metrics")
    finally:
        db.close()
    present = [m for m in names(RETRIEVAL, ANSWER) if frame[m].notna().any()]
    if not present and not _scorable(run.columns):
        raise InputError(
            f"{path}: no metric can be computed; the log needs relevant_ids with "
            "retrieved_ids or context_ids, or correct, or faithfulness"
        )
    absent = [m for m in names(RETRIEVAL, ANSWER) if m not in present]
    return pa.Table.from_pandas(frame.drop(columns=absent), preserve_index=False)


def _scorable(columns: frozenset[str]) -> bool:
    """Whether a log's columns can give a metric: a shard may still have none (no rows, or only
    questions without labels), and then adds nothing to the sums of its run."""
    labels = {"relevant_ids", "relevant_spans"} & columns
    rankings = {"retrieved_ids", "context_ids", "retrieved_spans", "context_spans"} & columns
    return bool(labels and rankings) or bool({"correct", "faithfulness"} & columns)


def metric_names(table: pa.Table) -> list[str]:
    """The metric columns of a per-question table, in report order."""
    return [m for m in names(RETRIEVAL, ANSWER) if m in table.column_names]


def sums_table(table: pa.Table, n_boot: int, seed: int) -> pa.Table:
    """The partial sums of every metric of a per-question table, one row per metric."""
    names = metric_names(table)
    if not names:
        return SUMS_SCHEMA.empty_table()
    values = np.column_stack([table[m].to_numpy(zero_copy_only=False).astype(float) for m in names])
    ids = table["question_id"].to_pylist()
    sums = partial_sums_by_column(ids, values, n_boot, seed)
    return sums_rows(dict(zip(names, sums, strict=True)))


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def write_metrics(
    log: Path,
    table: pa.Table,
    output: Path,
    sums_path: Path | None,
    n_boot: int,
    seed: int,
) -> None:
    """Write the per-question table and, when asked, its partial sums (both or neither)."""
    # both paths checked together: one path given twice would be a single entry of ``files``
    check_outputs([output, *([sums_path] if sums_path else [])], inputs=[log])
    files = {output: _parquet(table)}
    if sums_path is not None:
        files[sums_path] = _parquet(sums_table(table, n_boot, seed))
    write_all(files, inputs=[log])


def read_sums(path: Path) -> dict[str, PartialSums]:
    """The partial sums a ``metrics --partial-sums`` file holds, by metric."""
    if not path.is_file():
        what = "is a folder" if path.is_dir() else "no such file"
        raise InputError(f"{path}: {what}; pass a file written by ragreport metrics --partial-sums")
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        raise InputError(f"{path}: cannot be read as partial sums ({error})") from None
    if not SUMS_SCHEMA.equals(table.schema):
        raise InputError(
            f"{path}: not a file of partial sums; write one with ragreport metrics --partial-sums"
        )
    return sums_by_metric(table)


def sums_by_metric(table: pa.Table) -> dict[str, PartialSums]:
    """The rows of a sums table as PartialSums, by metric (one row per metric)."""
    return {row["metric"]: sums_of_row(row) for row in table.to_pylist()}


def sums_of_row(row: dict[str, Any]) -> PartialSums:
    return PartialSums(
        seed=row["seed"],
        n=row["n"],
        total=row["total"],
        key_sum=row["key_sum"],
        weighted=np.array(row["weighted"], dtype=np.int64),
        weights=np.array(row["weights"], dtype=np.int64),
    )


def sums_rows(sums: dict[str, PartialSums]) -> pa.Table:
    """Partial sums by metric as the table a sums file holds."""
    return pa.Table.from_pylist(
        [
            {
                "metric": name,
                "seed": s.seed,
                "n": s.n,
                "total": s.total,
                "key_sum": s.key_sum,
                "weighted": s.weighted.tolist(),
                "weights": s.weights.tolist(),
            }
            for name, s in sums.items()
        ],
        schema=SUMS_SCHEMA,
    )


@dataclass(frozen=True)
class MergedMetric:
    """One metric over every shard: each run's mean with its interval, and B - A's."""

    metric: str
    a: Interval
    b: Interval
    diff: Interval


def _check_disjoint(parts: Sequence[Path], shards: Sequence[dict[str, PartialSums]]) -> None:
    """Refuse a shard given twice (or a copy of one): two shards of distinct questions have
    the same key sum with probability 2^-64. Shards that share only some questions cannot be
    told from their sums."""
    seen: dict[tuple[str, int, int], int] = {}
    for i, shard in enumerate(shards):
        for metric, sums in shard.items():
            first = seen.setdefault((metric, sums.n, sums.key_sum), i)
            if first != i:
                raise InputError(
                    f"{parts[i]}: holds the same questions as {parts[first]}; pass each shard "
                    "of a run once"
                )


def merge_runs(
    a_parts: Sequence[Path], b_parts: Sequence[Path], confidence: float
) -> list[MergedMetric]:
    """Add each run's shards, then take the intervals of the metrics both runs have. A shard
    without a metric (none of its questions has a value) adds no question to it."""
    runs = []
    for parts in (a_parts, b_parts):
        shards = [read_sums(p) for p in parts]
        _check_disjoint(parts, shards)
        logged = [m for m in names(RETRIEVAL, ANSWER) if any(m in s for s in shards)]
        runs.append({m: merge([s[m] for s in shards if m in s]) for m in logged})
    a, b = runs
    both = [metric for metric in a if metric in b]
    if not both:
        raise InputError(
            f"no metric has partial sums in both runs (A: {', '.join(a) or 'none'}; B: "
            f"{', '.join(b) or 'none'}); pass the sums of shards that hold questions with values"
        )
    return [
        MergedMetric(
            metric,
            percentile_interval(a[metric], confidence),
            percentile_interval(b[metric], confidence),
            percentile_interval(difference(a[metric], b[metric]), confidence),
        )
        for metric in both
    ]
