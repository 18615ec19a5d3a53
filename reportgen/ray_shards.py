"""The map stage on a Ray cluster: per-question metrics and Poisson-bootstrap partial sums of a
run log stored as sharded Parquet, computed by Ray Data next to the data (optional extra:
``pip install 'ragreport[ray]'``).

Every block of rows is scored by the SQL ``compare`` uses and reduced to its partial sums;
the driver only adds the blocks' sums (B replicates per metric, whatever the number of
questions), and the result is a sums file that ``ragreport merge`` reads like a shard's.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pyarrow as pa

from .analysis.poisson import merge
from .inputs.load import RunFile, check_schema
from .shards import MetricSums, Scoring, metrics_of, sums_of_row, sums_rows, sums_table


def _block_sums(block: pa.Table, *, scoring: Scoring, n_boot: int, seed: int) -> pa.Table:
    """One block of log rows (questions) -> the partial sums of each of its metrics."""
    check_schema(Path("<block>"), block.schema)
    run = RunFile(
        label="A",
        path=Path("<block>"),
        sha256="",
        size_bytes=block.nbytes,
        n_rows=block.num_rows,
        columns=frozenset(block.column_names),
        table=block,
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
    """The partial sums of a whole run log read by ``ray.data.read_parquet(paths)`` (a folder,
    files, or a cloud URI), on the Ray cluster ``ray.init`` connected to; the same sums as
    ``ragreport metrics --partial-sums`` on the whole log, whatever the blocks."""
    import ray

    dataset = ray.data.read_parquet(paths)
    scoring = Scoring(k, gain, span_coverage)
    block = partial(_block_sums, scoring=scoring, n_boot=n_boot, seed=seed)
    rows = dataset.map_batches(block, batch_format="pyarrow", batch_size=None).take_all()
    by_metric: dict[str, list[MetricSums]] = {}
    for row in rows:  # one row per metric of each block, all scored alike
        by_metric.setdefault(row["metric"], []).append(sums_of_row(row))
    return sums_rows(
        {
            metric: MetricSums(parts[0].scoring, merge([p.sums for p in parts]))
            for metric, parts in by_metric.items()
        }
    )
