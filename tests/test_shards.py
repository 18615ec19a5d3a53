"""``ragreport metrics`` (one log's per-question metrics and partial sums) and ``merge``, on a
small log split into shards."""

from __future__ import annotations

import re

import numpy as np
import pyarrow.parquet as pq
import pytest
import reference as ref
from click.testing import CliRunner

from reportgen.analysis.poisson import merge, percentile_interval
from reportgen.cli import cli
from reportgen.shards import read_sums

N = 60
N_BOOT = 400


def rows(run: str) -> list[dict]:
    """N questions: B ranks the relevant passage one place higher than A on every third one."""
    out = []
    for i in range(N):
        relevant = [f"r{i}"] if i % 10 else []  # every tenth question has no label
        shift = 1 if run == "b" and i % 3 == 0 else 0
        ranking = [f"x{i}-{j}" for j in range(5)]
        ranking.insert(max(i % 4 - shift, 0), f"r{i}")
        out.append(
            {
                "question_id": f"q{i:03d}",
                "retrieved_ids": ranking,
                "context_ids": ranking[:3],
                "relevant_ids": relevant,
                "relevant_grades": [2] * len(relevant),
                "correct": (i * 7 + (run == "b")) % 3 == 0,
            }
        )
    return out


def invoke(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def shards(tmp_path, write_log):
    """Both runs written whole and in three shards of unequal size; per-run partial sums."""
    cuts = [0, 7, 31, N]
    paths: dict[str, list] = {}
    for run in "ab":
        log = rows(run)
        write_log(tmp_path / f"{run}.parquet", log)
        paths[run] = []
        for s, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
            shard = write_log(tmp_path / f"{run}{s}.parquet", log[lo:hi])
            sums = tmp_path / f"{run}{s}.sums.parquet"
            result = invoke(
                "metrics", shard, "-o", tmp_path / f"{run}{s}.metrics.parquet",
                "--partial-sums", sums, "--n-boot", N_BOOT, "--seed", 9,
            )  # fmt: skip
            assert result.exit_code == 0, result.output
            paths[run].append(sums)
    return tmp_path, paths


def test_metrics_match_the_reference_per_question(shards):
    folder, _ = shards
    table = pq.read_table(folder / "a1.metrics.parquet").to_pylist()
    log = rows("a")[7:31]
    assert [r["question_id"] for r in table] == [r["question_id"] for r in log]
    for got, row in zip(table, log, strict=True):
        expected = ref.all_metrics(row["context_ids"], 3, row["relevant_ids"])
        for name, value in expected.items():
            assert got[name] == pytest.approx(value) if value is not None else got[name] is None
        assert got["correct"] == float(row["correct"])
        assert got["k"] == 3


def test_shards_add_up_to_the_whole_log_bit_for_bit(shards):
    folder, paths = shards
    whole = folder / "a.sums.parquet"
    result = invoke(
        "metrics", folder / "a.parquet", "-o", folder / "a.metrics.parquet",
        "--partial-sums", whole, "--n-boot", N_BOOT, "--seed", 9,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    unsharded = read_sums(whole)
    parts = [read_sums(p) for p in paths["a"]]
    for metric, sums in unsharded.items():
        merged = merge([p[metric] for p in parts])
        assert np.array_equal(merged.weighted, sums.weighted), metric
        assert np.array_equal(merged.weights, sums.weights), metric
        assert percentile_interval(merged, 0.9) == percentile_interval(sums, 0.9)
    assert unsharded["recall"].n == N - N // 10  # unlabelled questions are left out
    assert unsharded["correct"].n == N


def test_merge_prints_the_difference_and_its_interval(shards):
    _, paths = shards
    args = ["merge"] + [f"--a={p}" for p in paths["a"]] + [f"--b={p}" for p in paths["b"][::-1]]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    labelled = [i for i in range(N) if i % 10]
    a = np.mean(
        [ref.mrr(r["context_ids"], 3, r["relevant_ids"]) for r in rows("a") if r["relevant_ids"]]
    )
    b = np.mean(
        [ref.mrr(r["context_ids"], 3, r["relevant_ids"]) for r in rows("b") if r["relevant_ids"]]
    )
    line = next(line for line in result.output.splitlines() if line.startswith("mrr:"))
    numbers = [float(x) for x in re.findall(r"[-+]?\d+\.\d+", line)]
    assert numbers[:3] == pytest.approx([a, b, b - a], abs=5e-5)
    low, high = numbers[3:5]
    assert low <= b - a <= high and low < high
    assert line.endswith(f"over {len(labelled)} questions")


def test_merge_refuses_runs_over_different_questions(shards):
    _, paths = shards
    result = invoke("merge", "--a", paths["a"][0], "--b", paths["b"][1])
    assert result.exit_code == 2
    assert result.output.startswith("ragreport: error: the runs' partial sums cover different")
    assert len(result.output.splitlines()) == 1


def test_merge_refuses_a_file_that_is_not_partial_sums(shards):
    folder, paths = shards
    result = invoke("merge", "--a", folder / "a0.metrics.parquet", "--b", paths["b"][0])
    assert result.exit_code == 2
    assert "not a file of partial sums" in result.output


def test_metrics_of_a_bad_log_writes_nothing(tmp_path, write_log):
    log = write_log(tmp_path / "bad.parquet", [{"question_id": "q1", "slice": "x"}])
    out, sums = tmp_path / "m.parquet", tmp_path / "s.parquet"
    result = invoke("metrics", log, "-o", out, "--partial-sums", sums)
    assert result.exit_code == 2
    assert result.output.startswith(f"ragreport: error: {log}: no metric can be computed")
    assert not out.exists() and not sums.exists()
