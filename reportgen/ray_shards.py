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

import itertools
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .analysis.poisson import question_keys
from .analysis.scoring import Scoring
from .comparison.scored_log import metrics_of, scorable
from .errors import InputError
from .inputs.contract import BY_NAME
from .inputs.load import RunFile, Shape, check_schema, check_values, patchy_columns
from .inputs.readers import parquet_bytes
from .shards import MetricSums, added, sums_of_row, sums_rows, sums_table

SCORED = pa.schema(  # one row per file, what the driver and the check of repeats read
    [
        ("path", pa.string()),
        ("n_rows", pa.int64()),
        ("columns", pa.list_(pa.string())),  # those a shard must share (load.patchy_columns)
        ("sums", pa.binary()),  # the file's sums table, as an Arrow stream
        ("question_ids", pa.list_(pa.string())),
        ("error", pa.string()),  # the refusal of a file refused as bad input, else null
    ]
)
BUCKETS = 64  # the most groups the question ids are split into to find one in two files


def _file_sums(files: pa.Table, *, scoring: Scoring, n_boot: int, seed: int) -> pa.Table:
    """One Parquet file of log rows (``files``: its bytes and path) -> one SCORED row: its
    columns, the partial sums of each of its metrics and its question ids; or, for a file
    refused as bad input, the refusal in ``error``. Raised on a worker, the refusal reached the
    caller as Ray's task error, its line among a remote traceback and Ray's retry advice."""
    (path,) = files["path"].to_pylist()
    (data,) = files["bytes"].to_pylist()
    row: dict[str, object] = {"path": path, "error": None}
    try:
        where = Path(path)
        table = parquet_bytes(data, where)
        check_schema(where, table.schema)
        check_values(where, table.schema, table.select)
        run = RunFile(
            label="A",
            path=where,
            sha256="",
            size_bytes=len(data),
            n_rows=table.num_rows,
            columns=frozenset(table.column_names),
            table=table,
        )
        if not run.n_rows and not scorable(run.columns):  # adds nothing, as among metrics' shards
            empty = {"n_rows": 0, "columns": [], "question_ids": []}
            return pa.Table.from_pylist([row | empty], SCORED)
        metrics = metrics_of(run, scoring)
        sink = pa.BufferOutputStream()
        sums = sums_table(metrics, n_boot, seed, where)
        with pa.ipc.new_stream(sink, sums.schema) as stream:
            stream.write_table(sums)
        shared = sorted(run.columns & BY_NAME.keys())  # the contract's, as metrics checks
        row |= {"n_rows": run.n_rows, "columns": shared, "sums": sink.getvalue().to_pybytes()}
        row["question_ids"] = metrics["question_id"].cast(pa.string()).to_pylist()
    except InputError as error:
        row["error"] = str(error)
    return pa.Table.from_pylist([row], SCORED)


def _split(block: pa.Table, buckets: int) -> tuple[pa.Table, ...]:
    """The question ids of a block of SCORED rows, each beside its file, in ``buckets`` groups
    by a hash of the id (the i-th table holds group i), so that the ids of one group, whichever
    files hold them, meet in one task."""
    lists = block["question_ids"].combine_chunks()
    ids = pc.list_flatten(lists)
    paths = block["path"].combine_chunks().take(pc.list_parent_indices(lists))
    groups = question_keys(ids.to_pylist()) % np.uint64(buckets)
    order = np.argsort(groups, kind="stable")
    table = pa.table({"question_id": ids.take(order), "path": paths.take(order)})
    bounds = np.searchsorted(groups[order], np.arange(buckets + 1, dtype=np.uint64))
    return tuple(table.slice(lo, hi - lo) for lo, hi in itertools.pairwise(bounds))


def _repeated(*parts: pa.Table) -> dict[str, str] | None:
    """A question whose id two files hold, with the two files, among one group's ids (None
    when there is none): a file's ids are its questions, each once, so an id seen twice is in
    two files."""
    table = pa.concat_tables(parts)
    by_id = [("question_id", "ascending"), ("path", "ascending")]
    table = table.take(pc.sort_indices(table, by_id))
    ids = table["question_id"]
    same = pc.equal(ids.slice(1), ids.slice(0, max(len(ids) - 1, 0)))
    where = pc.index(same, True).as_py()
    if where < 0:
        return None
    first, second = table.slice(where, 2).to_pylist()
    return {"question_id": first["question_id"], "first": first["path"], "second": second["path"]}


def _repeat(scored: Any, files: int) -> dict[str, str] | None:
    """A question in two of the ``files`` of ``scored`` (a Ray dataset of SCORED rows), or None:
    the ids are split into groups by a hash on the blocks' own workers, and each group searched
    by one task (Ray Data's groupby took 8 s where this takes 0.2, at 100,000 questions)."""
    import ray

    buckets = min(BUCKETS, files)
    split: Any = ray.remote(_split).options(num_returns=buckets)  # a ref per group
    blocks = scored.select_columns(["path", "question_ids"]).to_arrow_refs()
    parts = [split.remote(block, buckets) for block in blocks]
    search = ray.remote(_repeated)
    found = ray.get([search.remote(*(part[b] for part in parts)) for b in range(buckets)])
    return next((repeat for repeat in found if repeat is not None), None)


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
    whole log, whatever the files and their schemas.

    Each file is scored alone, so what ``metrics`` finds across the files of a log is checked
    here across the files' results: a file lacking a column another has (its rows would have
    no value there), and a question in two files (its rows, samples or copies, would count
    twice). The second groups the questions by a hash of their id over the cluster, so no
    task holds more than a group's ids."""
    import ray

    files = ray.data.read_binary_files(paths, include_paths=True, file_extensions=["parquet"])
    score = partial(_file_sums, scoring=Scoring(k, gain, span_coverage), n_boot=n_boot, seed=seed)
    scored = files.map_batches(score, batch_format="pyarrow", batch_size=1).materialize()
    rows = scored.drop_columns(["question_ids"]).take_all()
    refused = next((row["error"] for row in rows if row["error"] is not None), None)
    if refused is not None:
        raise InputError(refused)
    where = paths if isinstance(paths, str) else "the log"
    shapes = [Shape(Path(r["path"]), r["n_rows"], frozenset(r["columns"])) for r in rows]
    for refusal in patchy_columns(where, shapes).values():
        raise InputError(refusal)
    repeat = _repeat(scored, len(rows)) if len(rows) > 1 else None
    if repeat is not None:
        raise InputError(
            f"{repeat['second']}: question_id {repeat['question_id']!r} is also in "
            f"{repeat['first']}, and each file is scored on its own: write each question's rows "
            "to one file, or score the log with ragreport metrics, which reads its files together"
        )
    scored_files = [row for row in rows if row["sums"] is not None]
    if not scored_files:
        raise InputError(f"{where}: no file holds a question; pass the files of a run log")
    by_metric: dict[str, list[MetricSums]] = {}
    for row in scored_files:  # each file's sums: a row per metric, all scored alike
        for metric in pa.ipc.open_stream(row["sums"]).read_all().to_pylist():
            by_metric.setdefault(metric["metric"], []).append(sums_of_row(metric))
    return sums_rows({metric: added(parts, metric) for metric, parts in by_metric.items()})
