"""The same logs in another row order, or cut into shards another way, give the same numbers:
the bootstrap draws over the paired questions by question_id, not by the baseline's rows (a log
re-exported without ORDER BY, or Spark's part files, moved intervals and slice p-values)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = [
    ROOT / "sample_runs" / f"fare_rules_{name}.parquet" for name in ("a_baseline", "b_reranker")
]

# Lists that name questions in the log's own order (the first few of a kind, the broken ones):
# what the reader knows them by, not a number
IN_FILE_ORDER = ("exemplars", "broken", "warnings", "audit", "run_id", "runs")


def _numbers(report: dict) -> dict:
    kept = {k: v for k, v in report.items() if k not in IN_FILE_ORDER}
    kept["comparisons"] = [
        {k: v for k, v in c.items() if k not in IN_FILE_ORDER} for c in report["comparisons"]
    ]
    return kept


def test_reordered_and_resharded_logs_give_the_same_report(tmp_path, compare):
    a, b = (pq.read_table(path) for path in SAMPLE)
    reversed_a = tmp_path / "a.parquet"
    pq.write_table(a.take(np.arange(a.num_rows)[::-1]), reversed_a)
    shards = tmp_path / "b"
    shards.mkdir()
    shuffled = b.take(np.random.default_rng(1).permutation(b.num_rows))
    for i, (start, stop) in enumerate([(0, 17), (17, 150), (150, b.num_rows)]):
        pq.write_table(shuffled.slice(start, stop - start), shards / f"part-{i}.parquet")
    options = ("--n-boot", 500, "--slice", "slice", "--holdout", 0.3)
    given = compare(*SAMPLE, tmp_path / "given", *options)
    moved = compare(reversed_a, shards, tmp_path / "moved", *options)
    assert _numbers(moved["report"]) == _numbers(given["report"])
    assert moved["per_question"] == given["per_question"]  # in question_id order, both
    # the intervals were what moved with the row order
    assert moved["metrics"]["mrr@5"]["ci_low"] == given["metrics"]["mrr@5"]["ci_low"]
