"""The map stage on a Ray cluster: per-question metrics and Poisson-bootstrap partial sums of a
run log stored as sharded Parquet, computed by Ray Data next to the data (optional extra:
``pip install 'ragreport[ray]'``).

Every file is read with its own schema, scored by the SQL ``compare`` uses and reduced to its
partial sums; the driver only adds the files' sums (B replicates per metric, whatever the number
of questions), and the result is a sums file that ``ragreport merge`` reads like a shard's.
Files are not read as one Ray dataset: Ray unifies their schemas first and refuses shards that
``ragreport metrics`` reads together (question_id an integer in one file and text in another,
slice dictionary-encoded in one).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pyarrow as pa

from .analysis.scoring import Scoring
from .comparison.scored_log import metrics_of
from .errors import InputError
from .inputs.load import RunFile, check_schema, check_values
from .inputs.readers import parquet_bytes
from .shards import SUMS_SCHEMA, MetricSums, added, sums_of_row, sums_rows, sums_table


def _file_sums(files: pa.Table, *, scoring: Scoring, n_boot: int, seed: int) -> pa.Table:
    """One Parquet file of log rows (``files``: its bytes and path) -> the partial sums of each
    of its metrics, each row with a null ``error``; or, for a file refused as bad input, one
    row of nulls with the refusal in ``error``. Raised on a worker, the refusal reached the
    caller as Ray's task error, its line among a remote traceback and Ray's retry advice."""
    (path,) = files["path"].to_pylist()
    (data,) = files["bytes"].to_pylist()
    try:
        where = Path(path)
        sums = _sums(parquet_bytes(data, where), where, len(data), scoring, n_boot, seed)
    except InputError as error:
        refused = SUMS_SCHEMA.empty_table().append_column("error", pa.array([], pa.string()))
        return pa.concat_tables(
            [refused, pa.table({"error": [str(error)]})], promote_options="default"
        )
    return sums.append_column("error", pa.nulls(sums.num_rows, pa.string()))


def _sums(
    table: pa.Table, where: Path, size: int, scoring: Scoring, n_boot: int, seed: int
) -> pa.Table:
    """The partial sums of the log rows ``table`` of file ``where``, checked as compare checks
    a log."""
    check_schema(where, table.schema)
    check_values(where, table.schema, table.select)
    run = RunFile(
        label="A",
        path=where,
        sha256="",
        size_bytes=size,
        n_rows=table.num_rows,
        columns=frozenset(table.column_names),
        table=table,
    )
    return sums_table(metrics_of(run, scoring), n_boot, seed)


def ray_partial_sums(
    paths: str | list[str],
    *,
    n_boot: int,
    seed: int,
    k: int | None = None,
    gain: str = "exponential",
    span_coverage: float = 0.0,
) -> pa.Table:
    """The partial sums of a whole run log stored as the Parquet files of ``paths`` (a folder,
    files, or a cloud URI, as ``ray.data.read_binary_files`` lists them), on the Ray cluster
    ``ray.init`` connected to; the same sums as ``ragreport metrics --partial-sums`` on the
    whole log, whatever the files and their schemas."""
    import ray

    files = ray.data.read_binary_files(paths, include_paths=True, file_extensions=["parquet"])
    scoring = Scoring(k, gain, span_coverage)
    score = partial(_file_sums, scoring=scoring, n_boot=n_boot, seed=seed)
    rows = files.map_batches(score, batch_format="pyarrow", batch_size=1).take_all()
    refused = next((row["error"] for row in rows if row["error"] is not None), None)
    if refused is not None:
        raise InputError(refused)
    by_metric: dict[str, list[MetricSums]] = {}
    for row in rows:  # one row per metric of each file, all scored alike
        by_metric.setdefault(row["metric"], []).append(sums_of_row(row))
    return sums_rows({metric: added(parts, metric) for metric, parts in by_metric.items()})
