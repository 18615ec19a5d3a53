"""Retrieval metrics of ``compare`` against the official outputs of NIST trec_eval.

The qrels and the run of ``tests/data/trec_eval`` (see NOTICE.md there) are turned into a run
log: retrieved_ids ordered the way trec_eval orders them (score descending, ties broken by
doc_id descending), relevant_ids = the judged documents above a grade threshold,
relevant_grades = their grades. The same log is given as A and as B, with ``--gain linear``
(trec_eval's ndcg_cut uses the grade as gain), and every value is compared with trec_eval's
per-query and ``all`` lines to the 4 decimals it prints. trec_eval's ``all`` is a mean over the
queries; here every query has a relevant document, so it is the tool's mean as well.

Measures: P_k = precision@k, recall_k = recall@k, success_k = hit@k, ndcg_cut_k = ndcg@k,
recip_rank = mrr@k for k >= the depth of the run (500), i.e. the whole list.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from reportgen.analysis.registry import base_name

DATA = Path(__file__).parent / "data" / "trec_eval"
DEPTH = 500
HALF_UNIT = 0.5e-4 + 1e-9  # trec_eval prints values rounded to 4 decimals

# name -> (qrels file, lowest grade that is relevant, trec_eval output, measures to check)
BINARY_MEASURES = ("P", "recall", "success", "recip_rank")
LOGS = {
    # binary qrels: every measure; ndcg with grades 0/1 is the same in linear gain
    "aq": ("qrels.test", 1, "out.test.aq", (*BINARY_MEASURES, "ndcg_cut")),
    # graded qrels (-1..4): ndcg_cut with the grades as gains (negative grades count as 0)
    "aql_graded": ("qrels.rel_level", 1, "out.test.aql", ("ndcg_cut",)),
    # out.test.aql ran with -l2: binary measures count grade >= 2 as relevant
    "aql_level2": ("qrels.rel_level", 2, "out.test.aql", BINARY_MEASURES),
}
# 1000 > depth: P_1000 divides by 1000 although 500 were retrieved, and mrr@1000 has no
# effective cutoff, like recip_rank.
KS = {"aq": (1, 5, 10, 1000), "aql_graded": (5, 10), "aql_level2": (1, 5, 10, 1000)}


def read_qrels(name: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in (DATA / name).read_text().splitlines():
        if line.strip():
            qid, _, doc, grade = line.split()
            qrels[qid][doc] = int(grade)
    return qrels


def read_ranking() -> dict[str, list[str]]:
    """Documents of each query in trec_eval's order: score descending, ties by doc_id
    descending (the rank column is ignored)."""
    runs: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for line in (DATA / "results.test").read_text().splitlines():
        if line.strip():
            qid, _, doc, _rank, score, _run = line.split()
            runs[qid].append((float(score), doc))
    return {q: [d for _, d in sorted(v, reverse=True)] for q, v in runs.items()}


def read_output(name: str) -> dict[tuple[str, str], float]:
    out = {}
    for line in (DATA / name).read_text().splitlines():
        measure, qid, value = (f.strip() for f in line.split("\t"))
        if measure != "runid" and not measure.startswith("relstring"):  # not numbers
            out[(measure, qid)] = float(value)
    return out


def log_rows(qrels_name: str, min_grade: int) -> list[dict]:
    qrels = read_qrels(qrels_name)
    ranking = read_ranking()
    rows = []
    for qid in sorted(ranking):
        judged = qrels[qid]
        rel = sorted(d for d, g in judged.items() if g >= min_grade)
        rows.append(
            {
                "question_id": qid,
                "slice": "trec",
                "retrieved_ids": ranking[qid],
                "relevant_ids": rel,
                "relevant_grades": [judged[d] for d in rel],
            }
        )
    return rows


def tool_metric(measure: str, k: int) -> str | None:
    """The tool's metric for the trec_eval measure at cutoff k (None if there is none)."""
    if measure == "recip_rank":
        return f"mrr@{k}" if k >= DEPTH else None
    return {"P": "precision", "recall": "recall", "success": "hit", "ndcg_cut": "ndcg"}[
        measure
    ] + f"@{k}"


@pytest.fixture(scope="module")
def logs(tmp_path_factory, write_log):
    d = tmp_path_factory.mktemp("trec")
    return {
        name: write_log(d / f"{name}.parquet", log_rows(qrels, min_grade))
        for name, (qrels, min_grade, _, _) in LOGS.items()
    }


@pytest.fixture(scope="module")
def outputs(logs, tmp_path_factory, compare):
    d = tmp_path_factory.mktemp("trec_out")
    return {
        (name, k): compare(
            logs[name], logs[name], d / f"{name}_{k}", "--k", k, "--gain", "linear",
            "--n-boot", 100,
        )
        for name in LOGS
        for k in KS[name]
    }  # fmt: skip


def test_conversion_matches_num_rel_and_num_ret():
    for name, (qrels, min_grade, out_name, _) in LOGS.items():
        out = read_output(out_name)
        rows = log_rows(qrels, min_grade)
        for row in rows:
            q = row["question_id"]
            assert len(row["retrieved_ids"]) == out[("num_ret", q)] == DEPTH
            assert len(set(row["retrieved_ids"])) == DEPTH
            if name != "aql_graded":  # out.test.aql counts num_rel at grade >= 2
                assert len(row["relevant_ids"]) == out[("num_rel", q)]
        assert len(rows) == out[("num_q", "all")] == 3


@pytest.mark.parametrize("name,k", [(n, k) for n in LOGS for k in KS[n]])
def test_against_trec_eval(outputs, name, k):
    _, _, out_name, measures = LOGS[name]
    expected = read_output(out_name)
    out = outputs[(name, k)]
    assert out["params"]["gain"] == "linear" and out["params"]["k"] == k
    per_q = {r["question_id"]: r for r in out["per_question"]}
    checked, bad = 0, []
    for measure in measures:
        trec = "recip_rank" if measure == "recip_rank" else f"{measure}_{k}"
        metric = tool_metric(measure, k)
        if metric is None or (trec, "all") not in expected:
            continue
        for qid, row in per_q.items():
            for side in ("a", "b"):
                got = row[f"{metric}_{side}"]
                if abs(got - expected[(trec, qid)]) > HALF_UNIT:
                    bad.append((trec, qid, side, got, expected[(trec, qid)]))
        entry = out["metrics"][metric]
        assert entry["n"] == 3
        for side in ("a", "b"):
            if abs(entry[side] - expected[(trec, "all")]) > HALF_UNIT:
                bad.append((trec, "all", side, entry[side], expected[(trec, "all")]))
        checked += 1
    assert checked >= 1
    assert not bad, bad


@pytest.mark.parametrize("name", list(LOGS))
def test_metric_curve_against_trec_eval_all(outputs, name):
    # metric_curve holds the mean of every metric at k = 1..500; trec_eval prints the `all`
    # line at k = 5, 10, 15, 20, 30, 100, 200, 500 (1000 is beyond the run's depth).
    _, _, out_name, measures = LOGS[name]
    expected = read_output(out_name)
    out = outputs[(name, KS[name][0])]
    curve = {
        (r["run"], base_name(r["metric"]), int(r["k"])): r["value"] for r in out["metric_curve"]
    }
    base = {"P": "precision", "recall": "recall", "success": "hit", "ndcg_cut": "ndcg"}
    checked, bad = 0, []
    for measure in measures:
        if measure == "recip_rank":
            pairs = [("mrr", DEPTH, "recip_rank")]
        else:
            pairs = [(base[measure], k, f"{measure}_{k}") for k in range(1, DEPTH + 1)]
        for metric, k, trec in pairs:
            if (trec, "all") not in expected:
                continue
            for run in ("a", "b"):
                got = curve[(run, metric, k)]
                if abs(got - expected[(trec, "all")]) > HALF_UNIT:
                    bad.append((trec, run, got, expected[(trec, "all")]))
            checked += 1
    assert checked >= 3
    assert not bad, bad
