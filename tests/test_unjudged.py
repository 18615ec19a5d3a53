"""unjudged@k, the audit's share of the top k that no label judged, against hand-worked cases and
ir_measures' Judged@k (unjudged = 1 - Judged), through the TREC reader and Parquet logs."""

from __future__ import annotations

import numpy as np
import pytest
from test_trec_eval_oracle import DATA, read_qrels, read_ranking

from reportgen.analysis.audit import UNJUDGED_GAP, Unjudged
from reportgen.reporters.html.context import _unjudged


def _trec(tmp_path, runs: dict[str, str], qrels: str):
    paths = {}
    for name, text in runs.items():
        paths[name] = tmp_path / f"{name}.trec"
        paths[name].write_text(text)
    (tmp_path / "qrels").write_text(qrels)
    return paths, tmp_path / "qrels"


def test_unjudged_by_hand_and_outside_the_verdict(tmp_path, compare):
    paths, qrels = _trec(
        tmp_path,
        {
            "a": "1 Q0 d1 1 4 a\n1 Q0 d2 2 3 a\n1 Q0 d3 3 2 a\n1 Q0 d4 4 1 a\n"
            "2 Q0 d1 1 2 a\n2 Q0 d2 2 1 a\n",
            "b": "1 Q0 d5 1 4 b\n1 Q0 d1 2 3 b\n1 Q0 d6 3 2 b\n1 Q0 d2 4 1 b\n"
            "2 Q0 d3 1 2 b\n2 Q0 d1 2 1 b\n",
        },
        # judged: topic 1 d1 (relevant), d2 and d3 (not); topic 2 d1 (relevant), d9 (not)
        "1 0 d1 1\n1 0 d2 0\n1 0 d3 -1\n2 0 d1 1\n2 0 d9 0\n",
    )
    out = compare(paths["a"], paths["b"], tmp_path / "o", "--qrels", qrels, "--k", 3)
    # A: topic 1 top 3 d1 d2 d3 all judged: 0; topic 2 ranks 2, d2 unjudged: 1/2. Mean 1/4.
    # B: topic 1 d5 d1 d6: 2/3; topic 2 d3 d1, d3 judged for topic 1 only: 1/2. Mean 7/12.
    unjudged = out["audit"]["unjudged"]
    assert unjudged["k"] == 3 and unjudged["n"] == 2
    assert unjudged["a"] == pytest.approx(1 / 4)
    assert unjudged["b"] == pytest.approx(7 / 12)
    assert unjudged["diff"] == pytest.approx(1 / 3)
    # judged not relevant is not relevant: both runs find d1 of each topic
    assert out["metrics"]["mrr@3"]["a"] == 1.0
    assert out["metrics"]["mrr@3"]["b"] == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert not any(name.startswith("unjudged") for name in out["metrics"])
    html = (tmp_path / "o" / "report.html").read_text()
    assert (
        "Unjudged@3, the share of the top 3 passages that no label judged (a data caveat, not "
        "in the verdict): A 0.250, B 0.583, B \u2212 A +0.333, over 2 questions. B has more "
        "unjudged passages in its top 3, so its retrieval metrics are understated"
    ) in html
    assert '<li class="flag">Unjudged@3' in html


def test_no_label_of_grade_zero_means_no_unjudged(tmp_path, compare):
    paths, qrels = _trec(tmp_path, {"a": "1 Q0 d1 1 4 a\n1 Q0 d2 2 3 a\n"}, "1 0 d1 1\n")
    out = compare(paths["a"], paths["a"], tmp_path / "o", "--qrels", qrels, "--k", 2)
    assert out["audit"]["unjudged"] is None
    assert "Unjudged@" not in (tmp_path / "o" / "report.html").read_text()


def _judged(qrels: dict[str, dict[str, int]], runs: dict[str, list[str]], k: int) -> float:
    """The mean over queries of ir_measures' Judged@k, each ranking given as scores that keep
    its order."""
    ir_measures = pytest.importorskip("ir_measures")
    run = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in runs.items()}
    measure = ir_measures.parse_measure(f"Judged@{k}")
    return ir_measures.calc_aggregate([measure], qrels, run)[measure]


@pytest.mark.parametrize("k", [5, 10, 100, 500])
def test_unjudged_is_one_minus_judged_of_ir_measures_on_trec_data(tmp_path, compare, k):
    run = DATA / "results.test"
    out = compare(
        run, run, tmp_path, "--qrels", DATA / "qrels.test", "--k", k, "--n-boot", 100
    )  # fmt: skip
    expected = 1 - _judged(read_qrels("qrels.test"), read_ranking(), k)
    unjudged = out["audit"]["unjudged"]
    assert unjudged["a"] == pytest.approx(expected, abs=1e-12)
    assert unjudged["b"] == unjudged["a"] and unjudged["diff"] == 0


def _random_logs(seed: int, n: int = 40, pool: int = 30):
    """Two runs ranking a shared pool; labels of grades 0..2 on part of it, some questions
    without labels, some rankings shorter than k."""
    rng = np.random.default_rng(seed)
    rows = {"a": [], "b": []}
    for i in range(n):
        docs = [f"q{i}d{j}" for j in range(pool)]
        labelled = rng.choice(pool, size=rng.integers(0, 12), replace=False)
        relevant = [docs[j] for j in labelled]
        grades = rng.integers(0, 3, size=len(relevant)).tolist()
        for run in rows:
            depth = int(rng.integers(2, 15))
            ranking = [docs[j] for j in rng.permutation(pool)[:depth]]
            rows[run].append(
                {
                    "question_id": f"q{i}",
                    "retrieved_ids": ranking,
                    "context_ids": ranking[:5],
                    "relevant_ids": relevant if i % 7 else None,
                    "relevant_grades": grades if i % 7 else None,
                }
            )
    return rows


@pytest.mark.parametrize("seed", [1, 2])
def test_unjudged_against_ir_measures_on_random_logs(tmp_path, compare, write_log, seed):
    rows = _random_logs(seed)
    paths = {run: write_log(tmp_path / f"{run}.parquet", r) for run, r in rows.items()}
    qrels = {
        r["question_id"]: dict(zip(r["relevant_ids"], r["relevant_grades"], strict=True))
        for r in rows["a"]
        if r["relevant_ids"]
    }

    def expected(run: str, key: str, k: int) -> float:
        return 1 - _judged(qrels, {r["question_id"]: r[key] for r in rows[run]}, k)

    out = compare(paths["a"], paths["b"], tmp_path / "k", "--k", 8, "--n-boot", 100)
    assert out["audit"]["unjudged"]["a"] == pytest.approx(expected("a", "retrieved_ids", 8))
    assert out["audit"]["unjudged"]["b"] == pytest.approx(expected("b", "retrieved_ids", 8))
    # without --k the top k is each question's context_ids (here at most 5 passages)
    out = compare(paths["a"], paths["b"], tmp_path / "context", "--n-boot", 100)
    assert out["audit"]["unjudged"]["k"] == 5
    assert out["audit"]["unjudged"]["b"] == pytest.approx(expected("b", "context_ids", 5))


@pytest.mark.parametrize(("gaps", "advice"), [(0.34, False), (-0.34, False), (1.2, True)])
def test_the_pool_bias_advice_comes_only_with_the_flag(gaps, advice):
    """A gap under UNJUDGED_GAP is stated, not acted on: no advice to judge more passages."""
    a, b = 0.2, 0.2 + gaps * UNJUDGED_GAP
    line = _unjudged(Unjudged(k=5, n=100, a=a, b=b, diff=b - a), top_k=True)
    assert line is not None and line.flagged == advice
    assert ("judge them before trusting the difference" in line.text) == advice


def test_without_k_each_prompt_is_read_whole_and_the_line_says_so(tmp_path, compare, write_log):
    """Ten prompts of p1..p5, all judged, and two of those five with five unjudged passages
    after them: unjudged@5 reads each prompt whole, as the retrieval metrics do (2 x 5/10 over
    12 questions), where the line said "the share of the top 5 passages", which holds none."""
    labels = {"relevant_ids": ["p1", "p2", "p3", "p4", "p5"], "relevant_grades": [1, 0, 0, 0, 0]}
    top = ["p1", "p2", "p3", "p4", "p5"]
    rows = [
        {"question_id": f"q{i}", "retrieved_ids": top, "context_ids": top, **labels}
        for i in range(10)
    ] + [
        {"question_id": f"q{i}", "retrieved_ids": top, "context_ids": top + ["x1", "x2", "x3",
         "x4", "x5"], **labels}
        for i in range(10, 12)
    ]  # fmt: skip
    path = write_log(tmp_path / "a.parquet", rows)
    out = compare(path, path, tmp_path / "o", "--n-boot", 100)
    unjudged = out["audit"]["unjudged"]
    assert unjudged["k"] == 5 and unjudged["a"] == pytest.approx(2 * 0.5 / 12)
    html = (tmp_path / "o" / "report.html").read_text()
    assert "Unjudged@5, the share of the passages of each question&#39;s prompt that no" in html
    assert "top 5 passages" not in html
