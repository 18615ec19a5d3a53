"""One test per SQL file in queries/: its output columns and a hand-worked row."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from reportgen.database import RunDatabase
from reportgen.load import open_run
from reportgen.resources import resource_dir

A_ROWS = [
    {  # q1: labels p2 (grade 2) and p9 (grade 1, never retrieved); p2 retrieved twice
        "question_id": "q1",
        "question": "How do refunds work?",
        "slice": "refunds",
        "retrieved_ids": ["p1", "p2", "p2", "p3"],
        "relevant_ids": ["p2", "p9", "p0"],
        "relevant_grades": [2, 1, 0],
        "context_ids": ["p1", "p2", "p2"],
        "correct": True,
        "faithfulness": 1.0,
        "answerable": True,
        "intent": "how-to",
    },
    {  # q2: no labelled evidence
        "question_id": "q2",
        "question": "How do refunds work?",
        "slice": "refunds",
        "retrieved_ids": ["p4"],
        "relevant_ids": [],
        "relevant_grades": [],
        "context_ids": ["p4"],
        "correct": False,
        "faithfulness": 0.5,
        "answerable": True,
        "intent": "lookup",
    },
    {  # q3: only in A
        "question_id": "q3",
        "question": "Only A",
        "slice": "changes",
        "retrieved_ids": ["p5"],
        "relevant_ids": ["p5"],
        "relevant_grades": [1],
        "context_ids": ["p5"],
        "correct": True,
        "faithfulness": 1.0,
        "answerable": True,
        "intent": "lookup",
    },
]
B_ROWS = [
    dict(A_ROWS[0], relevant_grades=[1, 1, 0], context_ids=["p3"], correct=False),
    dict(A_ROWS[1]),
    dict(A_ROWS[2], question_id="q4"),
]


@pytest.fixture
def db(tmp_path: Path):
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pd.DataFrame(A_ROWS).to_parquet(a)
    pd.DataFrame(B_ROWS).drop(columns=["intent"]).to_parquet(b)
    database = RunDatabase(open_run(a, "A"), open_run(b, "B"))
    database.prepare(None)
    yield database
    database.close()


def test_every_query_file_is_tested():
    tested = {name[len("test_") :] for name in globals() if name.startswith("test_")}
    files = {p.stem for p in resource_dir("queries").glob("*.sql")}
    # runs.sql and facts.sql build the view and table that every other query reads
    assert files <= tested | {"runs", "facts"}


def test_row_problems(db):
    assert db.frame("row_problems", examples=5).empty


def test_relevant(db):
    rel = db.con.execute("SELECT * FROM relevant WHERE run = 'a' ORDER BY question_id, id").df()
    assert db.con.execute("SELECT count(*) FROM facts").fetchone() == (6,)
    assert list(rel.columns) == [
        "run",
        "question_id",
        "id",
        "grade",
        "ideal_rank",
        "n_relevant",
        "pos_retrieved",
        "pos_context",
    ]
    q1 = rel[rel.question_id == "q1"].set_index("id")
    assert list(q1.index) == ["p2", "p9"]  # grade 0 (p0) is not relevant
    assert q1.loc["p2", ["grade", "ideal_rank", "pos_retrieved", "pos_context"]].tolist() == [
        2,
        1,
        2,
        2,
    ]
    assert pd.isna(q1.loc["p9", "pos_retrieved"]) and q1.loc["p9", "n_relevant"] == 2


def test_question_metrics(db):
    def table(**params):
        db.execute("question_metrics", **params)
        return db.con.execute("SELECT * FROM question_metrics").df()

    m = table(k=3, exponential=True)
    assert list(m.columns) == [
        "run",
        "question_id",
        "row_number",
        "slice",
        "k",
        "n_relevant",
        "evidence_in_context",
        "recall",
        "precision",
        "hit",
        "mrr",
        "ndcg",
        "map",
        "rprec",
        "all",
        "correct",
        "faithfulness",
        "context_tokens",
        "answerable",
    ]
    q1 = m[(m.run == "a") & (m.question_id == "q1")].iloc[0]
    # top 3 = p1, p2, p2: one of the two relevant -> recall 1/2, precision 1/3, first at rank 2
    # DCG = (2^2 - 1) / log2(3) = 1.8928; IDCG = 3 / log2(2) + 1 / log2(3) = 3.6309
    assert (q1.recall, q1.precision, q1.hit, q1.mrr) == pytest.approx((0.5, 1 / 3, 1, 0.5))
    assert q1.ndcg == pytest.approx(1.892789 / 3.630930, abs=1e-6)
    # AP = (1/2) / 2 relevant; R = 2: top 2 = p1, p2 holds one; not every relevant is in
    assert (q1["map"], q1.rprec, q1["all"]) == pytest.approx((0.25, 0.5, 0))
    assert q1.evidence_in_context and q1.k == 3 and q1.n_relevant == 2
    q2 = m[(m.run == "a") & (m.question_id == "q2")].iloc[0]
    assert pd.isna(q2.recall) and pd.isna(q2.ndcg)
    assert q2.answerable  # as logged, although it has no labelled evidence
    # without k, the context is the ranking: B's q1 context [p3] holds no evidence
    ctx = table(k=None, exponential=False)
    b1 = ctx[(ctx.run == "b") & (ctx.question_id == "q1")].iloc[0]
    assert (b1.k, b1.recall, b1.hit, b1.evidence_in_context) == (1, 0.0, 0.0, False)


def test_metric_curve(db):
    curve = db.frame("metric_curve", max_k=4, exponential=False)
    assert list(curve.columns) == ["run", "metric", "k", "value"]
    hit = curve[(curve.run == "a") & (curve.metric == "hit")].set_index("k")["value"]
    # paired questions with evidence: q1 only (q2 has none, q3 is unpaired): hit from k = 2
    assert hit.tolist() == [0.0, 1.0, 1.0, 1.0]
    ndcg = curve[(curve.run == "a") & (curve.metric == "ndcg")].set_index("k")["value"]
    # linear gains 2, 1: IDCG@1 = 2, IDCG@2.. = 2 + 1/log2(3); DCG@2.. = 2/log2(3)
    assert ndcg[2] == pytest.approx((2 / 1.5849625) / (2 + 1 / 1.5849625))


def test_ranking_depth(db):
    assert db.frame("ranking_depth")["depth"].iloc[0] == 4


def test_paired(db):
    db.execute("question_metrics", k=2, exponential=True)
    p = db.frame("paired")
    assert p["question_id"].tolist() == ["q1", "q2"]
    assert {"k_a", "k_b", "n_relevant_a", "answerable_b", "correct_a", "ndcg_b"} <= set(p.columns)
    assert (p.correct_a.iloc[0], p.correct_b.iloc[0]) == (1.0, 0.0)


def test_unmatched(db):
    u = db.frame("unmatched")
    assert list(zip(u.run, u.question_id, strict=True)) == [("a", "q3"), ("b", "q4")]


def test_question_ids(db, tmp_path):
    assert db.question_ids() == ["q1", "q2", "q3"]  # run A's, in file order
    kept = RunDatabase(db.files["a"], db.files["b"], keep=["q2", "q4", "q1"])
    try:
        assert kept.question_ids() == ["q1", "q2"]  # only the kept ones, still in file order
        rows = kept.con.execute("SELECT run, question_id FROM runs ORDER BY run, row_number")
        assert rows.fetchall() == [("a", "q1"), ("a", "q2"), ("b", "q1"), ("b", "q2"), ("b", "q4")]
    finally:
        kept.close()


def test_slice_values(db):
    v = db.frame("slice_values", column="intent").set_index("question_id")["value"]
    assert v[["q1", "q2", "q3"]].tolist() == ["how-to", "lookup", "lookup"]
    assert pd.isna(v["q4"])  # B does not log intent


def test_label_drift(db):
    d = db.frame("label_drift")
    assert d.to_dict(orient="records") == [{"question_id": "q1", "changed": "relevant labels"}]


def test_data_smells(db):
    s = db.frame("data_smells", k=2)
    rows = set(zip(s.run, s.kind, s.question_id, strict=True))
    assert ("a", "repeated_passage", "q1") in rows
    assert ("a", "short_ranking", "q2") in rows  # one passage for k = 2
    assert ("a", "answerable_unlabelled", "q2") in rows
    assert ("a", "duplicate_question", "q1") in rows and ("a", "duplicate_question", "q2") in rows
    assert not any(
        kind == "duplicate_question" and run == "b" and q == "q4" for run, kind, q in rows
    )


def test_answer_stage(db):
    s = db.frame("answer_stage", k=None)
    b1 = s[(s.run == "b") & (s.question_id == "q1")].iloc[0]
    assert not b1.evidence_in_context and b1.evidence_in_candidates
    assert b1.answerable and not b1.correct


def test_exemplars(db):
    e = db.frame("exemplars", ids=["q1"])
    assert e["run"].tolist() == ["a", "b"]
    assert list(e.iloc[0].retrieved_ids) == ["p1", "p2", "p2", "p3"]


def test_question_texts(db):
    t = db.frame("question_texts", ids=["q1", "q4", "nope"]).sort_values("question_id")
    assert t["question_id"].tolist() == ["q1", "q4"]
    assert t["question"].tolist() == ["How do refunds work?", "Only A"]


def test_row_problems_counts_every_row_and_keeps_the_first_examples(tmp_path: Path):
    rows = [dict(A_ROWS[1], question_id=f"q{i}") for i in range(8)]
    for i in (1, 2, 4, 6):  # four rows with a null among their context ids
        rows[i]["context_ids"] = ["p4", None]
    rows[3]["faithfulness"] = 1.25
    rows[5]["question_id"] = "q0"  # repeats row 0's id
    rows[7]["faithfulness"] = float("nan")
    path = tmp_path / "bad.parquet"
    pd.DataFrame(rows).to_parquet(path)  # pandas writes the NaN as null: no value, no problem
    db = RunDatabase(open_run(path, "A"))
    db.execute("facts", k=None)
    found = db.frame("row_problems", examples=3)
    db.close()
    assert list(found.columns) == [
        "run",
        "kind",
        "column_name",
        "severity",
        "n",
        "row_numbers",
        "question_ids",
        "details",
    ]
    # errors first, then by the row where each kind first occurs
    assert found[["kind", "column_name", "n"]].values.tolist() == [
        ["null_in_list", "context_ids", 4],
        ["share_range", "faithfulness", 1],
        ["duplicate_id", "question_id", 1],
    ]
    nulls = found.iloc[0]
    assert list(nulls.row_numbers) == [1, 2, 4] and list(nulls.question_ids) == ["q1", "q2", "q4"]
    assert list(nulls.details) == ["1 null(s)"] * 3
    assert list(found.iloc[1].details) == ["1.25"]
    assert list(found.iloc[2].details) == ["first seen at row 1"]  # 1-based, as users count
