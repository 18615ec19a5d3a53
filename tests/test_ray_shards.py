"""The map stage on a local Ray cluster. Skipped where the ray extra is not installed, unless
RAGREPORT_REQUIRE_RAY=1 (as CI sets it): then a missing ray fails."""

from __future__ import annotations

import os
import signal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_shards import N, rows

from reportgen.analysis.poisson import merge, question_keys
from reportgen.analysis.scoring import Scoring
from reportgen.comparison.scored_log import metrics_of
from reportgen.errors import InputError
from reportgen.inputs.load import open_log
from reportgen.inputs.readers import ReadOptions
from reportgen.ray_shards import ray_partial_sums
from reportgen.shards import sums_by_metric, sums_table

if os.environ.get("RAGREPORT_REQUIRE_RAY") == "1":
    import ray
else:
    ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster; the signal handlers ray.init installs in this process (SIGTERM's)
    are put back after it, so that tests run after these see the process as the command does."""
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
    for number, handler in handlers.items():
        signal.signal(number, handler)


def test_ray_sums_equal_the_sums_of_the_whole_log(cluster, tmp_path, write_log):
    folder = tmp_path / "shards"
    folder.mkdir()
    log = rows("a")
    for s, (lo, hi) in enumerate([(0, 11), (11, 40), (40, N)]):
        write_log(folder / f"part-{s}.parquet", log[lo:hi])
    whole = write_log(tmp_path / "a.parquet", log)
    local = sums_by_metric(
        sums_table(metrics_of(open_log(whole, "A", ReadOptions()), Scoring()), 300, 4, whole),
        whole,
    )
    distributed = sums_by_metric(ray_partial_sums(str(folder), n_boot=300, seed=4), "ray")
    assert set(distributed) == set(local)
    for metric, own in local.items():
        sums = own.sums
        assert distributed[metric].scoring == own.scoring
        got = merge([distributed[metric].sums])
        assert np.array_equal(got.weighted, sums.weighted), metric
        assert (got.n, got.total, got.key_sum) == (sums.n, sums.total, sums.key_sum)
        assert distributed[metric].fingerprints == own.fingerprints, metric


def integer_ids(table: pa.Table) -> pa.Table:
    """question_id q007 written as the integer 7."""
    ids = pa.array([int(q[1:]) for q in table["question_id"].to_pylist()], pa.int64())
    return table.set_column(table.schema.get_field_index("question_id"), "question_id", ids)


def dictionary_slice(table: pa.Table) -> pa.Table:
    """slice written as pandas writes a category: dictionary-encoded."""
    column = table.schema.get_field_index("slice")
    return table.set_column(column, "slice", table["slice"].dictionary_encode())


@pytest.mark.parametrize("retype", [integer_ids, dictionary_slice])
def test_ray_reads_shards_of_other_column_types_as_metrics_does(
    cluster, tmp_path, write_log, retype
):
    """The first shard's question_id is an integer (or its slice dictionary-encoded), the
    others' text: Ray's dataset would refuse to unify them; metrics reads them together."""
    folder = tmp_path / "shards"
    folder.mkdir()
    log = [{**row, "slice": "long" if i % 2 else "short"} for i, row in enumerate(rows("a"))]
    for s, (lo, hi) in enumerate([(0, 11), (11, 40), (40, N)]):
        path = write_log(folder / f"part-{s}.parquet", log[lo:hi])
        if s == 0:
            pq.write_table(retype(pq.read_table(path)), path)
    assert pq.read_schema(folder / "part-0.parquet") != pq.read_schema(folder / "part-1.parquet")
    local = sums_by_metric(
        sums_table(metrics_of(open_log(folder, "A", ReadOptions()), Scoring()), 300, 4, folder),
        folder,
    )
    distributed = sums_by_metric(ray_partial_sums(str(folder), n_boot=300, seed=4), "ray")
    assert set(distributed) == set(local)
    ids = [str(int(r["question_id"][1:])) if i < 11 and retype is integer_ids
           else r["question_id"] for i, r in enumerate(log)]  # fmt: skip
    assert distributed["correct"].sums.key_sum == int(question_keys(ids).sum(dtype=np.uint64))
    for metric, own in local.items():
        got, sums = distributed[metric].sums, own.sums
        assert np.array_equal(got.weighted, sums.weighted), metric
        assert (got.n, got.total, got.key_sum) == (sums.n, sums.total, sums.key_sum)
        assert distributed[metric].fingerprints == own.fingerprints, metric


def shards(tmp_path, write_log, *parts: list[dict]):
    """A folder of Parquet shards, part-i.parquet holding the rows of ``parts[i]``."""
    folder = tmp_path / "shards"
    folder.mkdir()
    for i, part in enumerate(parts):
        write_log(folder / f"part-{i}.parquet", part)
    return folder


def refusal(folder) -> str:
    """The line ray_partial_sums refuses the log of ``folder`` with."""
    from reportgen.errors import InputError

    with pytest.raises(InputError) as refused:
        ray_partial_sums(str(folder), n_boot=100, seed=4)
    assert "\n" not in str(refused.value)
    return str(refused.value)


def test_a_bad_shard_is_refused_as_metrics_refuses_it(cluster, tmp_path, write_log):
    """A shard with a faithfulness of 1.5: the refusal reached the caller as Ray's task error
    (RayTaskError(UserCodeException)), its line among a remote traceback and Ray's retry
    advice, which a caller could not catch as bad input. It is the InputError metrics raises."""
    log = rows("a")
    folder = shards(tmp_path, write_log, log[:11], [{**log[11], "faithfulness": 1.5}, *log[12:]])
    assert refusal(folder) == (
        f"{folder / 'part-1.parquet'}: row 1 (question_id 'q011'): faithfulness is 1.5; "
        "expected a share between 0 and 1"
    )


def test_a_shard_that_is_not_parquet_is_refused_as_metrics_refuses_it(cluster, tmp_path, write_log):
    """A truncated shard raised Ray's task error (Arrow's, not caught as bad input)."""
    folder = shards(tmp_path, write_log, rows("a")[:11], rows("a")[11:])
    part = folder / "part-1.parquet"
    part.write_bytes(part.read_bytes()[:200])
    line = refusal(folder)
    assert line.startswith(f"{part}: not a readable Parquet file (")
    assert line.endswith(
        "); write the run log with pandas.DataFrame.to_parquet or pyarrow.parquet.write_table"
    )


def test_a_question_in_two_files_is_refused(cluster, tmp_path, write_log):
    """Each file is scored on its own, so a question whose rows two files hold (a copy, or its
    samples split between them) was scored twice and its sums added twice: 61 questions of 60,
    without a word (metrics, reading the files together, refuses the repeat)."""
    log = rows("a")
    folder = shards(tmp_path, write_log, log[:30], [*log[30:], log[17]])
    assert refusal(folder) == (
        f"{folder / 'part-1.parquet'}: question_id 'q017' is also in "
        f"{folder / 'part-0.parquet'}, and each file is scored on its own: write each question's "
        "rows to one file, or score the log with ragreport metrics, which reads its files together"
    )


def test_a_file_lacking_a_column_another_has_is_refused(cluster, tmp_path, write_log):
    """A file without correct gave sums of correct over the other files' questions only, and
    merge compared the runs on them."""
    log = rows("a")
    folder = shards(tmp_path, write_log, log[:30], log[30:])
    part = folder / "part-1.parquet"
    pq.write_table(pq.read_table(part).drop_columns(["correct"]), part)
    assert refusal(folder) == (
        f"{part}: no column 'correct', which part-0.parquet, another shard of {folder}, has: its "
        "30 rows would have no value there; write the column in every shard (null where a value "
        "is unknown)"
    )


def test_a_file_of_no_rows_and_few_columns_adds_nothing_as_in_metrics(cluster, tmp_path, write_log):
    """A file a writer opened before it had rows (question_id alone) is read among the others
    by metrics, and added nothing; Ray refused it for "no metric can be computed". A log whose
    every file is so is refused."""
    folder = tmp_path / "shards"
    folder.mkdir()
    write_log(folder / "part-0.parquet", rows("a"))
    pq.write_table(pa.table({"question_id": pa.array([], pa.string())}), folder / "part-1.parquet")
    whole = write_log(tmp_path / "a.parquet", rows("a"))
    local = sums_by_metric(
        sums_table(metrics_of(open_log(whole, "A", ReadOptions()), Scoring()), 300, 4, whole),
        whole,
    )
    distributed = sums_by_metric(ray_partial_sums(str(folder), n_boot=300, seed=4), "ray")
    assert set(distributed) == set(local)
    for metric, own in local.items():
        got = merge([distributed[metric].sums])
        assert np.array_equal(got.weighted, own.sums.weighted), metric
    (folder / "part-0.parquet").unlink()
    with pytest.raises(InputError, match="no file holds a question; pass the files of a run log"):
        ray_partial_sums(str(folder), n_boot=300, seed=4)
