"""The metric-vs-k curve (JSON ``metric_curve``) at the prompt k is the headline metric: the
same per-question scores averaged, never outside [0, 1].

The curve adds up exact (fixed-point) sums and rounds once; the headline's mean A and B are
numpy's mean of the same per-question doubles, whose float additions can round the last bit
differently. So the curve equals the exact mean of the per-question scores the JSON lists bit
for bit, and the headline to its last bit (bit for bit where numpy's sum is exact: the 0/1
metrics, or every question scoring 1).
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

CURVE_METRICS = ("recall", "precision", "hit", "mrr", "ndcg", "map", "rprec", "all")


def _curve(out: dict) -> dict[tuple[str, str, int], float]:
    return {(r["run"], r["metric"], int(r["k"])): r["value"] for r in out["metric_curve"]}


def _added(*terms: float) -> float:
    """The sum of doubles rounded once, as exact_sum adds them (queries/rules.sql)."""
    return float(sum(map(Fraction, terms)))


def test_all_found_reads_one_on_the_curve_as_in_the_headline(tmp_path, write_log, compare):
    # 7 relevant passages all retrieved, in order and reversed: every metric is 1 at k = 7;
    # the curve added 1/7 seven times and read 0.9999999999999999
    rel = [f"p{i}" for i in range(7)]
    a = write_log(
        tmp_path / "a.parquet",
        [{"question_id": q, "retrieved_ids": rel, "relevant_ids": rel} for q in ("q1", "q2", "q3")],
    )
    b = write_log(
        tmp_path / "b.parquet",
        [
            {"question_id": q, "retrieved_ids": rel[::-1], "relevant_ids": rel}
            for q in ("q1", "q2", "q3")
        ],
    )
    out = compare(a, b, tmp_path / "out", "--k", 7, "--n-boot", 100)
    curve = _curve(out)
    assert out["metrics"]["recall@7"]["a"] == 1.0
    for run in "ab":
        assert curve[(run, "recall", 7)] == out["metrics"]["recall@7"][run] == 1.0
        for m in CURVE_METRICS:
            assert curve[(run, m, 7)] == out["metrics"][f"{m}@7"][run] == 1.0, (run, m)
    assert all(0 <= v <= 1 for v in curve.values())


def test_a_small_curve_worked_by_hand(tmp_path, write_log, compare):
    # q1: relevant x, y, z found at 1, 3 and 5; q2: relevant x found at 2 (binary grades)
    rows = [
        {"question_id": "q1", "retrieved_ids": ["x", "n1", "y", "n2", "z"],
         "relevant_ids": ["x", "y", "z"]},
        {"question_id": "q2", "retrieved_ids": ["n1", "x", "n2", "n3", "n4"],
         "relevant_ids": ["x"]},
    ]  # fmt: skip
    log = write_log(tmp_path / "a.parquet", rows)
    out = compare(log, log, tmp_path / "out", "--k", 3, "--n-boot", 100, "--gain", "linear")
    curve = {(m, k): v for (run, m, k), v in _curve(out).items() if run == "a"}
    by_hand = {
        # k: q1 and q2
        "recall": [(1 / 3, 0), (1 / 3, 1), (2 / 3, 1), (2 / 3, 1), (1, 1)],
        "precision": [(1, 0), (1 / 2, 1 / 2), (2 / 3, 1 / 3), (2 / 4, 1 / 4), (3 / 5, 1 / 5)],
        "hit": [(1, 0), (1, 1), (1, 1), (1, 1), (1, 1)],
        "mrr": [(1, 0), (1, 1 / 2), (1, 1 / 2), (1, 1 / 2), (1, 1 / 2)],
        # R-precision: found in the top R = 3 of q1, the top 1 of q2
        "rprec": [(1 / 3, 0), (1 / 3, 0), (2 / 3, 0), (2 / 3, 0), (2 / 3, 0)],
        "all": [(0, 0), (0, 1), (0, 1), (0, 1), (1, 1)],
        # average precision at k: precision at each hit so far over R (the sum exact)
        "map": [(1 / 3, 0), (1 / 3, 1 / 2), (_added(1, 2 / 3) / 3, 1 / 2),
                (_added(1, 2 / 3) / 3, 1 / 2), (_added(1, 2 / 3, 3 / 5) / 3, 1 / 2)],
    }  # fmt: skip
    for m, scores in by_hand.items():
        for k, (q1, q2) in enumerate(scores, start=1):
            exact = (Fraction(q1) + Fraction(q2)) / 2
            if m == "precision":  # counted: one rounding of the exact mean
                assert curve[(m, k)] == float(exact), (m, k)
            else:  # each score a double, their sum rounded once, then halved
                assert curve[(m, k)] == float(Fraction(q1) + Fraction(q2)) / 2, (m, k)
            assert curve[(m, k)] == pytest.approx(float(exact), rel=1e-15), (m, k)
    # nDCG (linear gains of 1): q1's IDCG grows to 1 + 1/log2(3) + 1/2 at k = 3
    dcg1 = [1, 1, 1 + 1 / math.log2(4), 1 + 1 / math.log2(4), 1 + 1 / 2 + 1 / math.log2(6)]
    idcg1 = [1, 1 + 1 / math.log2(3), *[1 + 1 / math.log2(3) + 1 / 2] * 3]
    dcg2 = [0, 1 / math.log2(3), *[1 / math.log2(3)] * 3]
    for k in range(1, 6):
        expected = (dcg1[k - 1] / idcg1[k - 1] + dcg2[k - 1]) / 2
        assert curve[("ndcg", k)] == pytest.approx(expected, rel=1e-15), k
    # at the prompt k = 3, the headline
    for m in CURVE_METRICS:
        assert curve[(m, 3)] == out["metrics"][f"{m}@3"]["a"], m


def _random_rows(rng: random.Random, n: int, depth: int) -> list[dict]:
    rows = []
    pool = [f"p{i}" for i in range(120)]
    for i in range(n):
        relevant = rng.sample(pool, rng.randint(1, 8))
        ranking = rng.sample(pool, depth)
        # most questions find some of their evidence, somewhere in the ranking
        for label in relevant:
            if rng.random() < 0.5:
                ranking[rng.randrange(depth)] = label
        ranking = list(dict.fromkeys(ranking))
        rows.append(
            {
                "question_id": f"q{i}",
                "retrieved_ids": ranking,
                "relevant_ids": relevant,
                "relevant_grades": [rng.randint(1, 3) for _ in relevant],
            }
        )
    return rows


def _exact_mean(scores: list[float]) -> float:
    """The curve's mean: each score as a multiple of 2^-60 (exact from 2^-8 up), their sum
    exact, rounded to a double once, then divided by n."""
    total = sum(round(Fraction(s) * 2**60) for s in scores)
    return float(total) / 2**60 / len(scores)


@pytest.mark.parametrize("gain", ["exponential", "linear"])
def test_the_curve_at_the_prompt_k_is_the_headline_on_a_random_log(
    tmp_path, write_log, compare, gain
):
    rng = random.Random(7)
    k, depth = 10, 50
    a = write_log(tmp_path / "a.parquet", _random_rows(rng, 200, depth))
    b = write_log(tmp_path / "b.parquet", _random_rows(rng, 200, depth))
    out = compare(a, b, tmp_path / "out", "--k", k, "--n-boot", 100, "--gain", gain)
    curve = _curve(out)
    assert {key[2] for key in curve} == set(range(1, depth + 1))
    assert all(0 <= v <= 1 for v in curve.values()), "a bounded metric outside [0, 1]"
    for run in "ab":
        for m in CURVE_METRICS:
            name = f"{m}@{k}"
            headline = out["metrics"][name]
            assert headline["n"] == 200
            scores = [q[f"{name}_{run}"] for q in out["per_question"]]
            got = curve[(run, m, k)]
            if m == "precision":  # hits / k each: the curve counts hits, n * k of them at most
                exact = sum(Fraction(round(s * k)) for s in scores) / (len(scores) * k)
                assert got == float(exact), (run, m)
            else:
                assert got == _exact_mean(scores), (run, m)
            if m in ("hit", "all"):  # 0/1: numpy's sum is exact too
                assert got == headline[run], (run, m)
            else:  # numpy adds the doubles in float: the last bit may differ
                assert abs(got - headline[run]) <= math.ulp(headline[run]), (run, m)


def test_a_deep_ranking_keeps_the_curve_small_and_exact(tmp_path, write_log, compare):
    """One ranking 5,000 deep made a curve row for every k (a 200,000-deep one, 3.2 million
    rows and a 239 MB JSON). The curve holds every k to 1,000, then at most 1,000 log-spaced k
    to the deepest ranking; each is the exact mean there: q1 finds its passage at rank 3,000,
    q2 at rank 1, so recall reads 0.5 below k = 3,000 and 1 from it."""
    deep = [f"n{i}" for i in range(5000)]
    deep[2999] = "r1"
    rows = [
        {"question_id": "q1", "retrieved_ids": deep, "relevant_ids": ["r1"]},
        {"question_id": "q2", "retrieved_ids": ["r2", "m1", "m2"], "relevant_ids": ["r2"]},
    ]
    a, b = write_log(tmp_path / "a.parquet", rows), write_log(tmp_path / "b.parquet", rows)
    out = compare(a, b, tmp_path / "out", "--k", 3, "--n-boot", 100)
    recall = {int(r["k"]): r["value"] for r in out["metric_curve"]
              if r["run"] == "a" and r["metric"] == "recall"}  # fmt: skip
    ks = sorted(recall)
    assert ks[:1000] == list(range(1, 1001)) and ks[-1] == 5000
    assert 100 < len(ks) - 1000 <= 1000  # log-spaced past 1,000
    assert len(out["metric_curve"]) == 2 * len(CURVE_METRICS) * len(ks)
    assert all(recall[k] == 0.5 for k in ks if k < 3000)
    assert all(recall[k] == 1.0 for k in ks if k >= 3000)
