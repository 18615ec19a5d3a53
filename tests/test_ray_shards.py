"""The map stage on a local Ray cluster. Skipped where the ray extra is not installed, unless
RAGREPORT_REQUIRE_RAY=1 (as CI sets it): then a missing ray fails."""

from __future__ import annotations

import os

import numpy as np
import pytest
from test_shards import N, rows

from reportgen.analysis.poisson import merge
from reportgen.inputs.load import open_log
from reportgen.inputs.readers import ReadOptions
from reportgen.ray_shards import ray_partial_sums
from reportgen.shards import Scoring, metrics_of, sums_by_metric, sums_table

if os.environ.get("RAGREPORT_REQUIRE_RAY") == "1":
    import ray
else:
    ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_sums_equal_the_sums_of_the_whole_log(cluster, tmp_path, write_log):
    folder = tmp_path / "shards"
    folder.mkdir()
    log = rows("a")
    for s, (lo, hi) in enumerate([(0, 11), (11, 40), (40, N)]):
        write_log(folder / f"part-{s}.parquet", log[lo:hi])
    whole = write_log(tmp_path / "a.parquet", log)
    local = sums_by_metric(
        sums_table(metrics_of(open_log(whole, "A", ReadOptions()), Scoring()), 300, 4)
    )
    distributed = sums_by_metric(ray_partial_sums(str(folder), n_boot=300, seed=4))
    assert set(distributed) == set(local)
    for metric, own in local.items():
        sums = own.sums
        assert distributed[metric].scoring == own.scoring
        got = merge([distributed[metric].sums])
        assert np.array_equal(got.weighted, sums.weighted), metric
        assert (got.n, got.total, got.key_sum) == (sums.n, sums.total, sums.key_sum)
