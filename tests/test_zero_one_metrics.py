"""A metric of [0, 1] whose every value is 0 or 1 is compared as the 0/1 outcome it is: with one
labelled passage a question, recall@5 takes the values hit@5 takes, and the same values must
read the same test, p and verdict words."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

FIXED, BROKEN, BOTH, N = 11, 3, 30, 100
# McNemar's exact test by hand: two-sided binomial of 3 broken among 14 changed, p = 1/2:
# 2 (C(14,0) + C(14,1) + C(14,2) + C(14,3)) / 2^14 = 2 x 470 / 16384
MCNEMAR_P = 2 * 470 / 16384


def _logs(tmp_path: Path) -> tuple[Path, Path]:
    """100 questions, one labelled passage each: found in B's prompt only on 11, in A's only
    on 3, in both on 30."""
    rows = {"a": [], "b": []}
    for i in range(N):
        found_a = FIXED <= i < FIXED + BROKEN or i >= N - BOTH
        found_b = i < FIXED or i >= N - BOTH
        for run, found in (("a", found_a), ("b", found_b)):
            ranking = [f"g{i}" if found else f"x{i}", *(f"o{i}_{j}" for j in range(4))]
            rows[run].append(
                {
                    "question_id": f"q{i:03d}",
                    "retrieved_ids": ranking,
                    "context_ids": ranking,
                    "relevant_ids": [f"g{i}"],
                }
            )
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for table, path in zip(rows.values(), paths, strict=True):
        pd.DataFrame(table).to_parquet(path)
    return paths


def test_recall_with_one_labelled_passage_reads_as_hit_does(tmp_path, compare):
    a, b = _logs(tmp_path)
    metrics = compare(a, b, tmp_path / "o")["comparisons"][0]["metrics"]
    hit, recall = metrics["hit@5"], metrics["recall@5"]
    assert (hit["fixed"], hit["broken"]) == (FIXED, BROKEN)
    for m in (hit, recall):
        assert m["test"] == "McNemar exact"
        assert abs(m["p"] - MCNEMAR_P) < 1e-12
    assert (recall["fixed"], recall["broken"]) == (FIXED, BROKEN)
    assert (recall["ci_low"], recall["ci_high"]) == (hit["ci_low"], hit["ci_high"])
    # the labelled passage, where found, is first: MRR and nDCG are 0 or 1 as well
    assert metrics["mrr@5"]["test"] == metrics["ndcg@5"]["test"] == "McNemar exact"
    # precision@5 is 0 or 1/5: two values, but not 0/1, so it keeps the continuous test
    assert metrics["precision@5"]["test"] == "bootstrap-t"


def test_a_metric_with_one_value_between_stays_continuous(tmp_path, compare):
    """One question with two labelled passages, one of them found: recall 0.5 there, so recall
    is no 0/1 outcome and keeps the continuous test, while hit stays McNemar's."""
    a, b = _logs(tmp_path)
    for path in (a, b):
        table = pd.read_parquet(path)
        table.at[0, "relevant_ids"] = ["g0", "elsewhere"]
        table.to_parquet(path)
    metrics = compare(a, b, tmp_path / "o")["comparisons"][0]["metrics"]
    assert metrics["hit@5"]["test"] == "McNemar exact"
    assert metrics["recall@5"]["test"] != "McNemar exact"
    assert metrics["recall@5"]["fixed"] is None


def test_an_unpaired_value_does_not_make_a_0_1_metric_continuous(tmp_path, compare):
    """q099 has two labelled passages; A finds one (recall 0.5) and B logs no ranking for it, so
    it is compared on no question: on the questions compared recall@5 is still hit@5."""
    a, b = _logs(tmp_path)
    last = N - 1
    for path in (a, b):
        table = pd.read_parquet(path)
        table.at[last, "relevant_ids"] = [f"g{last}", "elsewhere"]
        if path == b:
            table.at[last, "retrieved_ids"] = table.at[last, "context_ids"] = None
        table.to_parquet(path)
    metrics = compare(a, b, tmp_path / "o")["comparisons"][0]["metrics"]
    assert metrics["recall@5"]["n"] == N - 1
    assert metrics["recall@5"]["test"] == metrics["hit@5"]["test"] == "McNemar exact"
    assert metrics["recall@5"]["p"] == metrics["hit@5"]["p"]


def _study_logs(tmp_path: Path) -> list[Path]:
    """A and B answer once a question (correct 0/1); C answers twice, so its correct is a
    share: the headline is no 0/1 outcome of every run."""
    n, rng = 60, np.random.default_rng(1)
    ids = [f"q{i:03d}" for i in range(n)]
    a = rng.random(n) < 0.5
    b = a.copy()
    flip = rng.random(n)
    b[~a & (flip < 0.35)], b[a & (flip < 0.08)] = True, False
    paths = [tmp_path / f"{name}.parquet" for name in "ABC"]
    pd.DataFrame({"question_id": ids, "correct": a}).to_parquet(paths[0])
    pd.DataFrame({"question_id": ids, "correct": b}).to_parquet(paths[1])
    second = np.random.default_rng(9).random(n) < 0.6
    pd.DataFrame(
        {"question_id": ids * 2, "sample": [1] * n + [2] * n, "correct": [*b, *second]}
    ).to_parquet(paths[2])
    return paths


def _study(paths: list[Path], out: Path) -> dict:
    import json

    from click.testing import CliRunner

    from reportgen.cli import cli

    result = CliRunner().invoke(cli, ["compare", *map(str, paths), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads(out.with_suffix(".json").read_text())


def test_a_study_reads_the_headline_as_0_1_only_where_every_run_is(tmp_path):
    """C's share of correct samples is no 0/1 mean: its run-chart interval and the matrix's
    test of A against C are those of a continuous score, whatever the order of the candidates
    (the first pair's 0/1 reading gave C's mean of 0.575 a Wilson bound of 0.894 and the
    matrix a sign test's p of 0.143 beside the section's 0.034)."""
    a, b, c = _study_logs(tmp_path)
    first = _study([a, b, c], tmp_path / "abc.html")
    second = _study([a, c, b], tmp_path / "acb.html")
    means = [{m["label"]: m for m in doc["run_means"]}["C"] for doc in (first, second)]
    assert means[0] == means[1] and means[0]["ci_high"] < 0.7
    (cell,) = [m for m in first["matrix"] if (m["row"], m["column"]) == ("A", "C")]
    (section,) = [p for p in first["comparisons"] if p["candidate"] == "C"]
    assert section["metrics"]["correct"]["test"] != "McNemar exact"
    assert cell["p"] == section["metrics"]["correct"]["p"]
