"""One test per SQL file in queries/: its output columns and a hand-worked row."""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reportgen.inputs.database import RunDatabase
from reportgen.inputs.load import open_run
from reportgen.reporters.html.diagnosis_view import _exemplar
from reportgen.resources import query_text, resource_dir

SAMPLE_RUNS = Path(__file__).resolve().parent.parent / "sample_runs"

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
    assert db.frame("row_problems", examples=5, largest=2**53).empty


def test_relevant(db):
    rel = db.con.execute("SELECT * FROM relevant WHERE run = 'a' ORDER BY question_id, id").df()
    assert db.con.execute("SELECT count(*) FROM facts").fetchone() == (6,)
    assert list(rel.columns) == [
        "run",
        "question_id",
        "sample",
        "id",
        "grade",
        "ideal_rank",
        "n_relevant",
        "top_grade",
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
    assert (q1["top_grade"] == 2).all()  # the highest grade of the question, on every label


def test_question_metrics(db):
    def table(**params):
        db.execute("question_metrics", **params)
        return db.con.execute("SELECT * FROM question_metrics").df()

    m = table(k=3, exponential=True)
    assert list(m.columns) == [
        "run",
        "question_id",
        "sample",
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
        "passages",
        "answerable",
    ]
    # the prompt the generator received, whatever cut --k scores: B's q1 context is [p3]
    assert m[(m.run == "b") & (m.question_id == "q1")].iloc[0].passages == 1
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


def test_a_null_ranking_is_unknown_not_empty(tmp_path: Path):
    """A null context_ids (or, with --k, retrieved_ids) was not logged: the question's retrieval
    metrics are unknown (NULL), while an empty list is a prompt that holds nothing (0)."""
    labelled = {"relevant_ids": ["p1"], "correct": True, "answerable": None}
    rows = [
        dict(labelled, question_id="null", retrieved_ids=None, context_ids=None),
        dict(labelled, question_id="empty", retrieved_ids=[], context_ids=[]),
        dict(labelled, question_id="found", retrieved_ids=["p1"], context_ids=["p1"]),
    ]
    a = tmp_path / "a.parquet"
    pd.DataFrame(rows).to_parquet(a)
    db = RunDatabase(open_run(a, "A"))
    try:
        db.prepare(None)
        for k in (None, 3):
            db.execute("question_metrics", k=k, exponential=False)
            m = db.con.execute("SELECT * FROM question_metrics").df().set_index("question_id")
            scores = ["recall", "precision", "hit", "mrr", "ndcg", "map", "rprec", "all"]
            assert m.loc["null", scores].isna().all() and pd.isna(m.loc["null", "k"])
            assert (m.loc["empty", scores] == 0).all() and m.loc["empty", "k"] == (k or 0)
            assert (m.loc["found", ["recall", "hit", "ndcg", "all"]] == 1).all()
            # the prompt of the null row is unknown; its labels still make it answerable
            assert pd.isna(m.loc["null", "evidence_in_context"])
            assert not m.loc["empty", "evidence_in_context"]
            assert m.loc["null", "answerable"] and m.loc["null", "n_relevant"] == 1
    finally:
        db.close()


def test_curve_sums(db):
    db.execute("curve_sums", exponential=False)
    sums = db.con.execute("SELECT * FROM curve_sums WHERE run = 'a' ORDER BY k").df()
    metrics = ["recall", "precision", "hit", "mrr", "ndcg", "map", "rprec", "all"]
    assert list(sums.columns) == ["run", "k", *metrics, "ndcg_at"]
    # paired questions with evidence: q1 only, labels p2 (grade 2) and p9 (never found); its
    # scores change at k = 2, where p2 is found (at k = 1, IDCG@1 = 2 and DCG 0: no ndcg_at)
    assert sums["k"].tolist() == [2]
    assert pd.isna(sums.loc[0, "ndcg_at"])
    one = 2**60  # fixed_point: a score as a multiple of 2^-60
    at_2 = sums.loc[0]
    # from 0 to recall and rprec 1/2, hit 1, mrr 1/2, AP (1/2) / 2; one relevant passage
    expected = {"recall": one // 2, "rprec": one // 2, "hit": one, "mrr": one // 2}
    expected |= {"map": one // 4, "precision": 1, "all": 0}  # p9 is never found
    assert {m: int(at_2[m]) for m in expected} == expected
    # linear gains 2 and 1: nDCG@2 = (2 / log2(3)) / (2 + 1 / log2(3))
    ndcg = 2 / math.log2(3) / (2 + 1 / math.log2(3))
    assert int(at_2["ndcg"]) / one == pytest.approx(ndcg, abs=1e-15)


@pytest.mark.parametrize(
    ("runs", "k"),
    [
        (("fare_rules_a_baseline", "fare_rules_b_reranker"), None),
        (("manuals_a_chunk400", "manuals_b_chunk1000"), 3),
    ],
)
def test_the_maps_over_questions_give_the_same_bits_in_batches(runs, k):
    """question_metrics and the curve's sums filled a few questions at a time: the same rows
    and the same bits as in one batch (sample logs, passage and span labels)."""

    def scored(batch_rows: int) -> tuple[pd.DataFrame, pd.DataFrame, int]:
        logs = [open_run(SAMPLE_RUNS / f"{run}.parquet", run) for run in runs]
        database = RunDatabase(*logs, batch_rows=batch_rows)
        database.prepare(k)
        database.execute("question_metrics", k=k, exponential=True)
        metrics = database.con.execute(
            "SELECT * FROM question_metrics ORDER BY run, row_number"
        ).df()
        curve = database.frame(
            "metric_curve", depth=10, cutoffs=list(range(1, 10 + 1)), exponential=True
        )
        rows = database.con.execute("SELECT count(*) FROM facts").fetchone()[0]
        database.close()
        return metrics, curve, rows

    metrics, curve, rows = scored(10**9)
    batched_metrics, batched_curve, _ = scored(37)
    assert rows > 5 * 37  # several batches
    assert metrics["recall"].notna().sum() > 100
    pd.testing.assert_frame_equal(batched_metrics, metrics, check_exact=True)
    pd.testing.assert_frame_equal(batched_curve, curve, check_exact=True)


def test_the_tables_of_a_log_over_one_batch_are_compressed_once_read(tmp_path):
    """facts, relevant and question_means of a log of several batches are checkpointed, which
    has DuckDB compress them (a 1M-question comparison then stays under 2 GiB); a log of one
    batch is not. Measured as DuckDB counts the memory of its tables; the answer stage's rows,
    paired the same way, are the same rows either way."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from make_logs import write_logs

    logs = write_logs(20_000, tmp_path)

    def table_memory(batch_rows: int) -> tuple[int, str]:
        database = RunDatabase(*(open_run(p, p.stem) for p in logs), batch_rows=batch_rows)
        try:
            database.prepare(None)
            database.execute("question_metrics", k=None, exponential=True)
            database.execute("question_means")
            database.execute("question_chars")
            database.drop("question_metrics")  # a TEMP table, in batches
            rows.append(database.pairs("answer_stage", k=None))
            return database.con.execute(
                "SELECT sum(memory_usage_bytes), current_setting('allocator_background_threads')"
                " FROM duckdb_memory() WHERE tag = 'IN_MEMORY_TABLE'"
            ).fetchone()
        finally:
            database.close()

    rows: list[pd.DataFrame] = []
    (one_batch, _), (batches, returned) = table_memory(10**9), table_memory(10_000)
    pd.testing.assert_frame_equal(rows[1], rows[0])
    assert len(rows[0]) == 20_000
    assert one_batch > 10 * 2**20
    assert batches < one_batch / 4
    assert returned is True  # and the memory queries free goes back to the system


def test_metric_curve(db):
    curve = db.frame("metric_curve", depth=4, cutoffs=list(range(1, 4 + 1)), exponential=False)
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
    db.execute("question_means")
    db.execute("question_chars")
    p = db.frame("paired")
    assert p["question_id"].tolist() == ["q1", "q2"]
    assert {"k_a", "k_b", "n_relevant_a", "answerable_b", "correct_a", "ndcg_b"} <= set(p.columns)
    assert (p.correct_a.iloc[0], p.correct_b.iloc[0]) == (1.0, 0.0)
    # one sample a question: its passages are its prompt's size, and no sample is left out
    assert p[["prompt_sizes_a", "unranked_samples_b"]].isna().all().all()


def test_paired_of_one_sample_a_question_leaves_its_lists_out(tmp_path: Path):
    """Without samples, RunDatabase.paired reads the query with its list columns left out and
    puts them back as nulls: the same frame as the query's own, column for column and in
    question order, over 5,000 questions in shuffled file order (several of DuckDB's vectors)."""
    rng = np.random.default_rng(3)
    ids = [f"q{i:05d}" for i in rng.permutation(5000)]
    rows = [
        {"question_id": q, "retrieved_ids": ["p1", "p2"], "relevant_ids": ["p2"],
         "context_ids": ["p1"], "correct": bool(rng.integers(2)), "slice": f"s{i % 7}"}
        for i, q in enumerate(ids)
    ]  # fmt: skip
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pd.DataFrame(rows).to_parquet(a)
    pd.DataFrame(rows[::-1]).to_parquet(b)
    db = RunDatabase(open_run(a, "A"), open_run(b, "B"))
    try:
        db.prepare(None)
        db.execute("question_metrics", k=None, exponential=True)
        db.execute("question_means")
        db.execute("question_chars")
        got, whole = db.paired(sampled=False), db.frame("paired")
        assert got["question_id"].tolist() == sorted(ids)
        assert {"prompt_sizes_a", "unranked_samples_b"} <= set(got.columns)
        pd.testing.assert_frame_equal(got, whole)
    finally:
        db.close()


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
    v = db.slice_values("intent").set_index("question_id")["value"]
    assert v[["q1", "q2", "q3"]].tolist() == ["how-to", "lookup", "lookup"]
    assert pd.isna(v["q4"])  # B does not log intent


def test_label_drift(db):
    d = db.frame("label_drift")
    assert d.to_dict(orient="records") == [{"question_id": "q1", "changed": "relevant labels"}]


def md5_key(question_id: str, text: str) -> int:
    """The key queries/rules.sql's question_key defines: MD5's first 8 bytes, little-endian."""
    digest = hashlib.md5(f"{question_id}\x1d{text}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def test_fingerprints(db):
    f = db.frame("fingerprints", run="a")  # run A's questions, as ragreport metrics opens one log
    assert list(f.columns) == [
        "question_id", "relevant_key", "answerable_key", "reference_key", "outputs_key"
    ]  # fmt: skip
    assert f["question_id"].tolist() == ["q1", "q2", "q3"]
    q1 = f.iloc[0]
    # passage chr(31) grade, sorted, chr(30) between
    assert q1["relevant_key"] == md5_key("q1", "p0\x1f0\x1ep2\x1f2\x1ep9\x1f1")
    assert q1["answerable_key"] == md5_key("q1", "true")
    assert q1["reference_key"] == md5_key("q1", "")  # no reference_answer logged
    # retrieved_ids, context_ids, answer, cited_ids, correct, faithfulness, answer_relevance,
    # abstained; one sample, so the sum over samples is its key
    fields = ["p1\x1fp2\x1fp2\x1fp3", "p1\x1fp2\x1fp2", "", "", "true", "1.0", "", ""]
    assert q1["outputs_key"] == md5_key("q1", "\x1e".join(fields))
    assert f.iloc[1]["relevant_key"] == md5_key("q2", "")  # no labels


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
    e = db.frame("exemplars", ids=["q1"], k=None)
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
    found = db.frame("row_problems", examples=3, largest=2**53)
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


def _span_db(tmp_path: Path) -> RunDatabase:
    """One question labelled d1[0,10) and d1[5,20) (merged) and d1[40,50); passages d1[0,45) then
    d1[45,60) then d1[100,110): the first covers both labels, the second the last."""
    spans = {
        "question_id": "s1",
        "relevant_spans": [
            {"doc_id": "d1", "start": 0, "end": 10, "grade": 1},
            {"doc_id": "d1", "start": 5, "end": 20, "grade": 2},
            {"doc_id": "d1", "start": 40, "end": 50, "grade": 1},
        ],
        "retrieved_spans": [
            {"doc_id": "d1", "start": 0, "end": 45},
            {"doc_id": "d1", "start": 45, "end": 60},
            {"doc_id": "d1", "start": 100, "end": 110},
        ],
    }
    path = tmp_path / "spans.parquet"
    pd.DataFrame([spans]).to_parquet(path)
    database = RunDatabase(open_run(path, "A"), open_run(path, "B"))
    database.prepare(3)
    return database


def test_span_matches(tmp_path: Path):
    db = _span_db(tmp_path)
    m = db.con.execute("SELECT * FROM span_matches WHERE run = 'a' ORDER BY id, pos_retrieved").df()
    assert list(m.columns) == [
        "run", "question_id", "sample", "id", "grade", "n_merged", "doc_id", "start", "end",
        "pos_retrieved", "pos_context",
    ]  # fmt: skip
    assert m[["id", "grade", "n_merged", "pos_retrieved"]].values.tolist() == [
        ["d1:0-20", 2, 2, 1],  # the two overlapping labels, merged with the higher grade
        ["d1:40-50", 1, 1, 1],
        ["d1:40-50", 1, 1, 2],
    ]
    rel = db.con.execute("SELECT id, pos_retrieved FROM relevant WHERE run = 'a' ORDER BY id")
    assert rel.fetchall() == [("d1:0-20", 1), ("d1:40-50", 1)]
    db.close()


def test_span_precision(tmp_path: Path):
    db = _span_db(tmp_path)
    db.execute("question_metrics", k=3, exponential=False)
    db.execute("span_precision", k=3)
    got = db.con.execute("SELECT precision, ndcg FROM question_metrics WHERE run = 'a'")
    # passages 1 and 2 cover a label, 3 does not: 2 / 3 (the per-label count would give 3 / 3).
    # Both labels at rank 1 take slots 1 and 2: DCG = 2 + 1 / log2(3) = IDCG
    assert got.fetchone() == pytest.approx((2 / 3, 1.0))
    db.close()


def test_span_documents(tmp_path: Path):
    """Run A's passages lie in 'docs/d1.md' and 'docs/d2.md', its labels name d1 and d2 (and a
    label of grade 0 names d0, which nothing measures): no question's passage is in a labelled
    document. Run B's second question has a passage in d2, outside its label: B is not named
    (its rankings hold no label either, but a document is shared)."""
    label = {"doc_id": "d1", "start": 0, "end": 10, "grade": 1}
    rows = []
    for run in "ab":
        moved = "docs/d2.md" if run == "a" else "d2"
        rows.append([
            {"question_id": "q1", "relevant_spans": [label, dict(label, doc_id="d0", grade=0)],
             "retrieved_spans": [{"doc_id": "docs/d1.md", "start": 0, "end": 50}]},
            {"question_id": "q2", "relevant_spans": [dict(label, doc_id="d2")],
             "retrieved_spans": [{"doc_id": moved, "start": 100, "end": 150}]},
        ])  # fmt: skip
    paths = [tmp_path / f"{run}.parquet" for run in "ab"]
    for path, run_rows in zip(paths, rows, strict=True):
        pd.DataFrame(run_rows).to_parquet(path)
    db = RunDatabase(open_run(paths[0], "A"), open_run(paths[1], "B"))
    db.prepare(3)
    got = db.frame("span_documents")
    assert got.to_dict("records") == [
        {"run": "a", "labelled": 2, "a_labelled": "d1", "a_logged": "docs/d1.md"}
    ]
    db.close()


def test_span_chars(tmp_path: Path):
    db = _span_db(tmp_path)
    db.execute("question_metrics", k=3, exponential=False)
    db.execute("question_means")
    db.execute("question_chars")
    got = db.frame("paired")
    # labels d1[0,20) and d1[40,50): 30 characters; prompt d1[0,45) d1[45,60) d1[100,110): 70;
    # labelled characters in it: 20 + 5 + 5 = 30
    assert db.con.execute(
        "SELECT evidence_chars, prompt_chars, overlap_chars FROM span_chars WHERE run = 'a'"
    ).fetchall() == [(30, 70, 30)]
    assert (got.evidence_recall_a[0], got.context_precision_b[0], got.evidence_iou_a[0]) == (
        pytest.approx(1.0),
        pytest.approx(30 / 70),
        pytest.approx(30 / 70),
    )
    db.close()


def test_question_chars(tmp_path: Path):
    """Two samples of one question: prompts d1[0,10) (all 10 of the label d1[0,20): evidence
    recall 0.5, precision 1) and d1[10,50) (the other 10 of 40: 0.5 and 0.25); the question's
    measures are the samples' means."""
    label = [{"doc_id": "d1", "start": 0, "end": 20, "grade": 1}]
    rows = [
        {"question_id": "q1", "sample": "1", "relevant_spans": label,
         "context_spans": [{"doc_id": "d1", "start": 0, "end": 10}]},
        {"question_id": "q1", "sample": "2", "relevant_spans": label,
         "context_spans": [{"doc_id": "d1", "start": 10, "end": 50}]},
    ]  # fmt: skip
    path = tmp_path / "spans.parquet"
    pd.DataFrame(rows).to_parquet(path)
    db = RunDatabase(open_run(path, "A"))
    db.prepare(None)
    db.execute("question_chars")
    got = db.con.execute("SELECT * FROM question_chars").df().iloc[0]
    db.close()
    assert (got.run, got.question_id) == ("a", "q1")
    assert (got.evidence_recall, got.context_precision, got.prompt_chars) == (0.5, 0.625, 25)
    assert got.evidence_iou == pytest.approx((10 / 20 + 10 / 50) / 2)


def test_span_chars_of_a_null_prompt_are_unknown(tmp_path: Path):
    """A null retrieved_spans (with --k, the prompt) was not logged: its character measures are
    NULL, where an empty one's are 0."""
    label = [{"doc_id": "d1", "start": 0, "end": 10, "grade": 1}]
    rows = [
        {"question_id": "null", "relevant_spans": label, "retrieved_spans": None},
        {"question_id": "empty", "relevant_spans": label, "retrieved_spans": []},
    ]
    path = tmp_path / "spans.parquet"
    pd.DataFrame(rows).to_parquet(path)
    db = RunDatabase(open_run(path, "A"))
    db.prepare(3)
    got = db.con.execute(
        "SELECT question_id, evidence_chars, prompt_chars, overlap_chars, evidence_recall, "
        "context_precision, evidence_iou FROM span_chars ORDER BY question_id"
    ).fetchall()
    db.close()
    assert got == [("empty", 10, 0, 0, 0.0, 0.0, 0.0), ("null", 10, None, None, None, None, None)]


def test_data_smells_finds_a_label_across_a_cut(tmp_path: Path):
    db = _span_db(tmp_path)
    # d1[0,20) lies inside d1[0,45); d1[40,50) is cut at 45 between d1[0,45) and d1[45,60)
    s = db.frame("data_smells", k=3)
    assert s[["run", "kind", "question_id"]].values.tolist() == [
        ["a", "span_across_cut", "s1"],
        ["b", "span_across_cut", "s1"],
    ]
    db.close()


# Samples: q1 answered three times in A (context p2, p1, p2), twice in B; q2 once in each.
SAMPLED_A = [
    dict(A_ROWS[0], sample=0, context_ids=["p2"], correct=True, faithfulness=1.0),
    dict(A_ROWS[0], sample=1, context_ids=["p1"], correct=False, faithfulness=0.5),
    dict(A_ROWS[0], sample=2, context_ids=["p2"], correct=True, faithfulness=0.6),
    dict(A_ROWS[1], sample=0),
]
SAMPLED_B = [
    dict(A_ROWS[0], sample=0, context_ids=["p1"], correct=False, faithfulness=0.4),
    dict(A_ROWS[0], sample=1, context_ids=["p2"], correct=True, faithfulness=0.8),
    dict(A_ROWS[1], sample=0),
]


@pytest.fixture
def sampled(tmp_path: Path):
    a, b = tmp_path / "sa.parquet", tmp_path / "sb.parquet"
    pd.DataFrame(SAMPLED_A).to_parquet(a)
    pd.DataFrame(SAMPLED_B).to_parquet(b)
    database = RunDatabase(open_run(a, "A"), open_run(b, "B"))
    database.prepare(None)
    database.execute("question_metrics", k=None, exponential=True)
    database.execute("question_means")
    database.execute("question_chars")
    yield database
    database.close()


def test_question_means(sampled):
    m = sampled.con.execute("SELECT * FROM question_means ORDER BY run, question_id").df()
    q1 = m[(m.run == "a") & (m.question_id == "q1")].iloc[0]
    assert q1.samples == 3 and q1.row_number == 0 and q1.k == 1
    # hit per sample 1, 0, 1; correct 1, 0, 1; faithfulness 1, 0.5, 0.6
    assert (q1.hit, q1.correct, q1.faithfulness) == pytest.approx((2 / 3, 2 / 3, 0.7))
    assert q1.n_relevant == 2 and q1.evidence_in_context  # in the prompt of some sample
    b1 = m[(m.run == "b") & (m.question_id == "q1")].iloc[0]
    assert (b1.samples, b1.hit, b1.faithfulness) == (2, pytest.approx(0.5), pytest.approx(0.6))
    assert list(q1.prompt_sizes) == [1, 1, 1] and pd.isna(q1.unranked_samples)
    q2 = m[(m.run == "a") & (m.question_id == "q2")].iloc[0]
    assert pd.isna(q2.prompt_sizes) and pd.isna(q2.unranked_samples)  # one sample: its own


def test_question_means_of_a_sample_without_a_prompt(tmp_path: Path):
    """q1's sample 1 logs no context_ids: left out of the question's retrieval metrics and
    prompt sizes, and named; k is the smallest of the other prompts (2 and 1 passages)."""
    rows = [
        dict(A_ROWS[0], sample=0, context_ids=["p2", "p1"]),  # p2 at rank 1: hit 1
        dict(A_ROWS[0], sample=1, context_ids=None),
        dict(A_ROWS[0], sample=2, context_ids=["p1"]),  # hit 0
    ]
    path = tmp_path / "a.parquet"
    pd.DataFrame(rows).to_parquet(path)
    database = RunDatabase(open_run(path, "A"))
    database.prepare(None)
    database.execute("question_metrics", k=None, exponential=True)
    database.execute("question_means")
    q1 = database.con.execute("SELECT * FROM question_means").df().iloc[0]
    database.close()
    assert (q1.samples, q1.k, q1.hit, q1.passages) == (3, 1, 0.5, 1.5)
    assert list(q1.prompt_sizes) == [2, 1] and list(q1.unranked_samples) == ["1"]


@pytest.mark.parametrize("sample", [None, 1])
def test_sampled(sampled, db, tmp_path: Path, sample):
    db.execute("question_metrics", k=None, exponential=True)
    db.execute("question_means")
    assert sampled.sampled() and not db.sampled()
    # a sample column of nulls only names no samples; one of sample 1 on every row (inspect-ai's
    # epoch of a single epoch) names one a question: nothing is averaged either way
    a, b = tmp_path / "na.parquet", tmp_path / "nb.parquet"
    pd.DataFrame(A_ROWS).assign(sample=sample).to_parquet(a)
    pd.DataFrame(B_ROWS).assign(sample=sample).to_parquet(b)
    single = RunDatabase(open_run(a, "A"), open_run(b, "B"))
    single.prepare(None)
    single.execute("question_metrics", k=None, exponential=True)
    single.execute("question_means")
    assert not single.sampled()
    single.close()


def test_sample_spread(sampled):
    s = sampled.frame("sample_spread")
    assert list(s.columns) == [
        *("run", "question_id", "metric", "n", "unscored", "samples", "mean", "variance")
    ]
    f = s[(s.run == "a") & (s.question_id == "q1") & (s.metric == "faithfulness")].iloc[0]
    # 1, 0.5, 0.6: mean 0.7, squares 0.09 + 0.04 + 0.01 over 2
    assert (f.n, f["mean"], f.variance) == (3, pytest.approx(0.7), pytest.approx(0.07))
    assert (f.unscored, f.samples) == (0, 3)
    single = s[(s.run == "a") & (s.question_id == "q2") & (s.metric == "correct")].iloc[0]
    assert single.n == 1 and pd.isna(single.variance)
    # q2 has no labelled evidence: no retrieval score
    assert set(s.loc[s.metric == "recall", "question_id"]) == {"q1"}


def test_first_sample(sampled):
    sampled.execute("first_sample")
    rows = sampled.con.execute("SELECT run, question_id, sample FROM facts ORDER BY ALL").fetchall()
    assert rows == [("a", "q1", "0"), ("a", "q2", "0"), ("b", "q1", "0"), ("b", "q2", "0")]


def test_first_sample_is_the_first_by_its_id(tmp_path: Path):
    """Not the first row: A's ids are all whole numbers, so 2 comes before 10 and -5 before -1;
    one of B's is not (007, with its leading zero, is text), so B's order as text: "10" before
    "9", "007" before "7"."""
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    a_ids = {"question_id": ["q1", "q1", "q1", "q2", "q2"], "sample": [10, 3, 2, -1, -5]}
    b_ids = {"question_id": ["q1", "q1", "q2", "q2"], "sample": ["9", "10", "7", "007"]}
    pd.DataFrame(a_ids).to_parquet(a)
    pd.DataFrame(b_ids).to_parquet(b)
    db = RunDatabase(open_run(a, "A"), open_run(b, "B"))
    try:
        db.execute("facts", k=None)
        db.execute("first_sample")
        rows = db.con.execute("SELECT run, question_id, sample, row_number FROM facts ORDER BY ALL")
        assert rows.fetchall() == [
            ("a", "q1", "2", 2),
            ("a", "q2", "-5", 4),
            ("b", "q1", "10", 1),
            ("b", "q2", "007", 3),
        ]
    finally:
        db.close()


def test_sample_repeats(tmp_path: Path):
    """A repeat in any sample's prompt marks every sample of its question, so the one
    first_sample.sql keeps carries it; a question of one sample, or of none repeating, is kept
    as it is."""
    rows = [
        {"question_id": "q1", "sample": 0, "context_ids": ["p1", "p2"]},
        {"question_id": "q1", "sample": 1, "context_ids": ["p1", "p1"]},
        {"question_id": "q2", "sample": 0, "context_ids": ["p1"]},
        {"question_id": "q2", "sample": 1, "context_ids": ["p2"]},
        {"question_id": "q3", "sample": 0, "context_ids": ["p3", "p3"]},
    ]
    path = tmp_path / "log.parquet"
    pd.DataFrame(rows).to_parquet(path)
    db = RunDatabase(open_run(path, "A"))
    try:
        db.execute("facts", k=None)
        db.execute("sample_repeats")
        db.execute("first_sample")
        found = db.con.execute(
            "SELECT question_id, sample, repeated_in_prompt FROM facts ORDER BY ALL"
        ).fetchall()
    finally:
        db.close()
    assert found == [("q1", "0", True), ("q2", "0", False), ("q3", "0", True)]


def test_sample_problems(tmp_path):
    rows = [dict(r) for r in SAMPLED_A]
    rows[2]["relevant_grades"] = [1, 1, 0]  # q1's third sample grades p2 differently
    rows[1]["slice"] = "changes"
    path = tmp_path / "labels.parquet"
    pd.DataFrame(rows).to_parquet(path)
    db = RunDatabase(open_run(path, "A"))
    db.execute("facts", k=None)
    found = db.frame("sample_problems", examples=3)
    db.close()
    assert found[["kind", "column_name", "n"]].values.tolist() == [
        ["sample_labels", "slice", 1],
        ["sample_labels", "relevant_ids", 1],
    ]
    assert list(found.iloc[0].row_numbers) == [1] and list(found.iloc[1].row_numbers) == [2]
    assert list(found.iloc[0].details) == ["row 1 has refunds, this row changes"]


def test_run_metrics(tmp_path: Path):
    path = tmp_path / "a.parquet"
    pd.DataFrame(A_ROWS).to_parquet(path)
    database = RunDatabase(open_run(path, "A"))  # one log, as ragreport metrics reads it
    database.prepare(None)
    database.execute("question_metrics", k=None, exponential=True)
    database.execute("question_means")  # one sample per question: the same scores
    database.execute("question_chars")
    m = database.frame("run_metrics")
    database.close()
    assert list(m.columns) == [
        "question_id", "slice", "k", "n_relevant", "prompt_chars", "recall", "precision", "hit",
        "mrr", "ndcg", "map", "rprec", "all", "evidence_recall", "context_precision",
        "evidence_iou", "correct", "faithfulness", "answerable", "passages",
        "evidence_in_context", "prompt_sizes", "unranked_samples",
    ]  # fmt: skip
    assert m.question_id.tolist() == ["q1", "q2", "q3"]  # file order
    # q1's context p1, p2, p2: one of its two relevant passages, first at rank 2
    q1 = m.iloc[0]
    assert (q1.k, q1.recall, q1.precision, q1.mrr) == pytest.approx((3, 0.5, 1 / 3, 0.5))
    assert pd.isna(m.iloc[1].recall)  # q2 has no labelled evidence
    assert (m.iloc[2].recall, m.iloc[2].correct) == (1.0, 1.0)
    assert m.prompt_sizes.isna().all() and m.unranked_samples.isna().all()  # one sample each


def test_column_types(db):
    types = db.frame("column_types").set_index(["run", "column_name"])["data_type"]
    assert (types["a", "correct"], types["a", "faithfulness"]) == ("BOOLEAN", "DOUBLE")
    assert types["a", "intent"] == "VARCHAR"
    assert ("b", "intent") not in types.index  # B does not log intent


def test_score_column(sampled, tmp_path: Path):
    s = sampled.frame("score_column", column="correct", largest=2**53, single=False)
    s = s.set_index(["run", "question_id"])
    # q1 in A: correct in samples 0 and 2 of three; in B: sample 1 of two; booleans as 0/1
    assert s.loc[("a", "q1"), "value"] == pytest.approx(2 / 3)
    assert s.loc[("b", "q1"), "value"] == pytest.approx(1 / 2)
    assert list(s.columns) == [
        *("value", "not_finite", "too_large", "n", "unscored", "samples", "variance")
    ]
    # their samples' spread: 1, 0, 1 vary by (1/9 + 4/9 + 1/9) / 2 = 1/3, and 0, 1 by 1/2
    assert (s.n["a", "q1"], s.variance["a", "q1"]) == (3, pytest.approx(1 / 3))
    assert (s.n["b", "q1"], s.variance["b", "q1"]) == (2, pytest.approx(1 / 2))
    path = tmp_path / "nan.parquet"  # NaN and infinities are missing values, not scores
    pd.DataFrame(
        {
            "question_id": ["q1", "q1", "q2", "q3", "q3"],
            "sample": [0, 1, 0, 0, 1],
            "x": [0.5, float("nan"), np.inf, 1e16, -2e16],
        }
    ).to_parquet(path)
    db = RunDatabase(open_run(path, "A"))
    got = db.frame("score_column", column="x", largest=2**53, single=False)
    got = got.set_index(["run", "question_id"])
    db.close()
    assert got.value["a", "q1"] == 0.5 and pd.isna(got.value["a", "q2"])
    # pandas writes NaN as null, a missing value; the infinity is counted for the warning
    assert (got.not_finite["a", "q1"], got.not_finite["a", "q2"]) == (0, 1)
    # that null is a sample without a value, of two (the warning of samples left out)
    assert (got.unscored["a", "q1"], got.samples["a", "q1"], got.unscored["a", "q2"]) == (1, 2, 0)
    # beyond 2**53 (about 9.0e15): the largest in magnitude, for the refusal to name
    assert got.too_large["a", "q3"] == -2e16 and got.too_large[["a"]].isna().sum() == 2


def test_score_column_at_float32_precision(tmp_path: Path):
    """With ``single`` (either log holds the column as float32) each value is the shortest
    decimal of its float32: float32(0.7) is 0.7, float64 2/3 is 0.6666667, as float32's 2/3;
    past float32's range or not finite a value stays as it is."""
    path = tmp_path / "x.parquet"
    x = [0.7, 2 / 3, 1e39, float("inf"), 1e-8]
    pd.DataFrame({"question_id": [f"q{i}" for i in range(5)], "x": x}).to_parquet(path)
    db = RunDatabase(open_run(path, "A"))
    got = db.frame("score_column", column="x", largest=1e30, single=True)
    db.close()
    values = got[got.run == "a"].set_index("question_id")
    assert values.value.tolist()[:2] == [0.7, 0.6666667] and values.value["q4"] == 1e-8
    assert values.too_large["q2"] == 1e39 and values.not_finite["q3"] == 1


def test_first_row(sampled):
    # the first row of the questions named, among a run's rows (B: q1 in rows 0 and 1, q2 in 2)
    def first(*ids):
        return sampled.frame("first_row", run="b", question_ids=list(ids)).to_dict("records")

    assert first("q2", "q1") == [{"row_number": 0, "question_id": "q1"}]
    assert first("q2") == [{"row_number": 2, "question_id": "q2"}]
    assert sampled.frame("first_row", run="a", question_ids=["q9"]).empty


def test_unjudged(db):
    def table(k):
        frame = db.frame("unjudged", k=k)
        assert list(frame.columns) == [
            "run",
            "question_id",
            "row_number",
            "unjudged",
            "not_relevant",
        ]
        return frame.set_index(["run", "question_id"])

    prompt = table(None)  # the top k is context_ids
    # A q1: p1 p2 p2, p2 labelled (each slot counts): 1 of 3 unjudged; p0 is its grade-0 label
    assert prompt.loc[("a", "q1"), ["unjudged", "not_relevant"]].tolist() == pytest.approx(
        [1 / 3, 1]
    )
    assert pd.isna(prompt.loc[("a", "q2"), "unjudged"])  # no label: left out
    assert prompt.loc[("a", "q3"), "unjudged"] == 0
    assert prompt.loc[("b", "q1"), "unjudged"] == 1  # B's prompt p3 was never judged
    # --k 2 over retrieved_ids p1 p2 (facts read at that k); q3 ranks one passage: min(k, ranked)
    db.prepare(2)
    assert table(2).loc[("a", "q1"), "unjudged"] == pytest.approx(1 / 2)
    assert table(2).loc[("a", "q3"), "unjudged"] == 0


def _lines_db(lines: list[tuple]):
    import duckdb
    import pyarrow as pa

    con = duckdb.connect()
    names = ["line", "qid", "docno", "value"]
    con.register(
        "lines", pa.table(dict(zip(names, map(list, zip(*lines, strict=True)), strict=True)))
    )
    return con


def test_ranking_problems():
    def first(lines, integer, unique):
        con = _lines_db(lines)
        params = {"integer": integer, "unique": unique}
        return con.execute(query_text("ranking_problems"), params).fetchall()

    ok = [(1, "1", "d1", "3.5"), (2, "1", "d2", "-1e2"), (3, "2", "d1", "7")]
    assert first(ok, False, True) == []
    repeated = [*ok, (4, "2", "x", "bad"), (5, "1", "d1", "2")]
    assert first(repeated, False, True) == [(4, "not_number", "2", "x", "bad", 4)]
    assert first(repeated[:3] + repeated[4:], False, True) == [(5, "repeated", "1", "d1", None, 1)]
    assert first(repeated[:3] + repeated[4:], False, False) == []  # qrels: a later line wins
    assert first([(1, "1", "d1", "inf")], False, True) == [(1, "not_finite", "1", "d1", "inf", 1)]
    assert first([(1, "1", "d1", "1.5"), (2, "1", "d2", "+2")], True, False)[0][:2] == (
        1,
        "not_number",
    )


def test_ranked_topics():
    import duckdb
    import pyarrow as pa

    con = duckdb.connect()
    con.register(
        "ranking",
        pa.table({"qid": ["1", "1", "1", "2"], "docno": ["a", "c", "b", "a"],
                  "value": ["0.5", "0.9", "0.5", "1"]}),
    )  # fmt: skip
    con.register(
        "judgements",
        pa.table({"line": [1, 2, 3, 4, 5], "qid": ["1", "1", "1", "1", "3"],
                  "docno": ["a", "b", "z", "a", "a"], "value": ["2", "1", "-1", "3", "1"]}),
    )  # fmt: skip
    rows = con.execute(query_text("ranked_topics"), {"rel_level": 2}).fetchall()
    assert rows == [
        # c (0.9), then the tie at 0.5 by docno descending; a judged twice keeps its last grade
        # (3); b's grade 1 is below the level and z's -1 negative: judged, not relevant (0)
        ("1", ["c", "b", "a"], ["a", "b", "z"], [3, 0, 0]),
        ("2", ["a"], None, None),  # no judgements; topic 3 is judged but not ranked
    ]


def _passage_query(
    name: str, passages: dict, log: dict | None = None, view: str = "log"
) -> list[tuple]:
    """queries/<name>.sql over the views passages and ``view`` (the log's rows, or its labels)."""
    import duckdb
    import pyarrow as pa

    con = duckdb.connect()
    con.register("passages", pa.table(passages))
    if log is not None:
        con.register(view, pa.table(log))
    return con.execute(query_text(name)).fetchall()


PASSAGES = {"passage_id": ["p1", "p2"], "doc_id": ["d1", "d1"], "start": [0, 5], "end": [5, 9]}


def test_passage_problems():
    assert _passage_query("passage_problems", PASSAGES) == []
    bad = {
        "passage_id": ["p1", "p2", "p1", None],
        "doc_id": ["d1", "d1", "d2", "d3"],
        "start": [0, 9, 0, 0],
        "end": [5, 4, 3, 1],
    }
    assert _passage_query("passage_problems", bad) == [(2, "empty", "start", "9")]
    bad["start"][1] = -1
    assert _passage_query("passage_problems", bad) == [(2, "negative", "start", "-1")]
    bad["start"][1] = 0
    assert _passage_query("passage_problems", bad) == [(3, "repeated", "passage_id", "p1")]
    bad["passage_id"][2] = "p3"
    assert _passage_query("passage_problems", bad) == [(4, "missing", "passage_id", None)]


def test_passage_unknown():
    log = {"row_number": [1, 2], "retrieved_ids": [["p1", None], ["p2", "p9"]],
           "context_ids": [["p1"], ["p8"]]}  # fmt: skip
    # within a row retrieved_ids is named before context_ids; a null id is not unknown
    assert _passage_query("passage_unknown", PASSAGES, log) == [(2, "retrieved_ids", "p9")]
    log["retrieved_ids"][1] = ["p2"]
    assert _passage_query("passage_unknown", PASSAGES, log) == [(2, "context_ids", "p8")]


def test_passage_gaps():
    """End exclusive: p1 [0, 5) and p2 [5, 9) touch; p3 [12, 20) leaves [9, 12) to no passage."""
    passages = {"passage_id": ["p1", "p2", "p3"], "doc_id": ["d1"] * 3, "start": [0, 5, 12],
                "end": [5, 9, 20]}  # fmt: skip
    labels = {"doc_id": ["d1", "d1", "d1", "d1", "d1", "d2"],
              "start": [4, 9, 10, 8, 20, 0], "end": [6, 12, 11, 10, 30, 3]}  # fmt: skip
    # [9, 12) and [10, 11) lie in the gap; [8, 10) overlaps p2; [20, 30) is past the last
    # passage and d2 has none (each said apart)
    gaps = _passage_query("passage_gaps", passages, labels, view="labels")
    assert gaps == [("d1", 9, 12), ("d1", 10, 11)]


def test_passage_gaps_agree_with_every_pair_checked():
    """Random passages (overlapping, sharing starts, some documents without any) and labels,
    against a check of every passage of the label's document."""
    rng = np.random.default_rng(7)
    starts, ends = rng.integers(0, 30, 60) * 10, rng.integers(1, 15, 60)  # shared starts
    passages = {"passage_id": [f"p{i}" for i in range(60)],
                "doc_id": [f"d{i}" for i in rng.integers(0, 6, 60)],
                "start": starts.tolist(), "end": (starts + ends).tolist()}  # fmt: skip
    starts, ends = rng.integers(0, 330, 400), rng.integers(1, 10, 400)
    labels = {"doc_id": [f"d{i}" for i in rng.integers(0, 8, 400)], "start": starts.tolist(),
              "end": (starts + ends).tolist()}  # fmt: skip
    spans = list(zip(passages["doc_id"], passages["start"], passages["end"], strict=True))
    expected = sorted(
        (doc, start, end)
        for doc, start, end in zip(labels["doc_id"], labels["start"], labels["end"], strict=True)
        if any(d == doc and e > start for d, _, e in spans)
        and not any(d == doc and s < end and e > start for d, s, e in spans)
    )
    assert len(expected) > 10  # gaps are found, not only their absence
    assert _passage_query("passage_gaps", passages, labels, view="labels") == expected


def test_passage_spans():
    log = {"row_number": [1, 2, 3], "retrieved_ids": [["p2", "p1", None], [], None],
           "context_ids": [["p2"], None, ["p1"]]}  # fmt: skip
    d1 = [{"doc_id": "d1", "start": 0, "end": 5}, {"doc_id": "d1", "start": 5, "end": 9}]
    assert _passage_query("passage_spans", PASSAGES, log) == [
        ([d1[1], d1[0], None], [d1[1]]),  # ranked as logged; a null id, a null span
        ([], None),  # an empty list stays empty, a missing one missing
        (None, [d1[0]]),
    ]


def test_rules(db):
    """The shared rules, hand-worked: the prompt is context_ids when logged, else the first k;
    the ranking scored is the first k with --k, else context_ids."""
    got = db.con.execute(
        """
        SELECT prompt_ids(['c1'], ['r1', 'r2', 'r3'], 2),  -- context logged: it, whatever k
               prompt_ids(NULL, ['r1', 'r2', 'r3'], 2),    -- else the first k retrieved
               prompt_ids(NULL, ['r1', 'r2', 'r3'], NULL), -- neither: no prompt
               in_prompt(true, NULL, 1, 2),                -- not in the logged context
               in_prompt(false, NULL, 2, 2),               -- rank 2 of a cutoff of 2
               in_prompt(false, NULL, 3, 2),
               scored_list(['c1'], ['r1', 'r2', 'r3'], 2),  -- with --k: the first k retrieved
               scored_list(['c1'], ['r1', 'r2', 'r3'], NULL),  -- without: the context
               scored_pos(4, 1, NULL),
               scored_pos(4, 1, 2),
               answerable(false, true, 2),                 -- as logged
               answerable(NULL, true, NULL),               -- labels logged, none relevant
               answerable(NULL, true, 1),
               answerable(NULL, false, NULL)               -- no labels logged at all
        """
    ).fetchone()
    assert got == (
        ["c1"],
        ["r1", "r2"],
        None,
        False,
        True,
        False,
        ["r1", "r2"],
        ["c1"],
        4,
        1,
        False,
        False,
        True,
        True,
    )


def test_exact_sum_is_the_correctly_rounded_sum_in_any_row_order(db):
    """exact_sum against math.fsum (the exact sum rounded once): equal bits, and the same bits
    for every order of the rows, where DuckDB's own sum differs with the order."""
    rng = np.random.default_rng(7)
    values = rng.uniform(2**-7, 1.0, 50_000) * rng.choice([1.0, 3.0, 100.0], 50_000)
    query = "SELECT exact_sum(v), sum(v) FROM (SELECT unnest($v) AS v)"
    exact, plain = zip(
        *(
            db.con.execute(query, {"v": rng.permutation(values).tolist()}).fetchone()
            for _ in range(4)
        ),
        strict=True,
    )
    assert set(exact) == {math.fsum(values)}
    assert len(set(plain)) > 1  # the order-dependent sum it replaces
    nothing = db.con.execute("SELECT exact_sum(v) FROM (SELECT 1.0 AS v) WHERE false").fetchone()
    assert nothing == (None,)  # as sum: no row, no sum


def test_pair_rows(db):
    """A per-run query's rows side by side: the questions in both runs only (q3 is only in A,
    q4 only in B), in A's row order, every column but run once per run, against pandas'
    merge."""
    rows = db.frame("answer_stage", k=None).sort_values("row_number")
    a, b = (rows[rows.run == run].drop(columns="run") for run in "ab")
    expected = a.merge(b, on="question_id", suffixes=("_a", "_b")).reset_index(drop=True)
    got = db.pairs("answer_stage", k=None)
    assert got["question_id"].tolist() == ["q1", "q2"]
    assert sorted(got.columns) == sorted(expected.columns)
    pd.testing.assert_frame_equal(got[expected.columns], expected, check_dtype=False)
    assert got.loc[0, "correct_a"] and not got.loc[0, "correct_b"]  # B breaks q1
    assert db.con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'run_rows'"
    ).fetchone() == (0,)  # the rows are not kept


def test_span_rules(db):
    """The span rules, hand-worked: spans apart (sorted, no two share a character; touching is
    apart, another document never overlaps) and the first span that cannot be measured."""
    lists = [
        [],
        [("d1", 0, 10), ("d1", 10, 20)],  # touching
        [("d1", 0, 10), ("d1", 5, 20)],
        [("d1", 0, 100), ("d1", 10, 20), ("d1", 30, 40)],  # the first contains the others
        [("d1", 0, 10), ("d1", 20, 30), ("d1", 25, 40)],  # only the last two overlap
        [("d1", 0, 10), ("d2", 5, 20)],
        [("d1", 0, 10), ("d1", 7, 7), (None, 1, 2), ("d1", -1, 3)],
    ]
    spans = [[{"doc_id": d, "start": s, "end": e} for d, s, e in spans] for spans in lists]
    got = db.con.execute(
        "SELECT list(spans_apart(sorted) ORDER BY i), list(bad_span(sorted) ORDER BY i) "
        "FROM (SELECT i, list_sort($spans[i]) AS sorted FROM range(1, $n + 1) AS t(i))",
        {"spans": spans, "n": len(spans)},
    ).fetchone()
    assert got[0] == [True, True, False, False, False, True, False]
    assert got[1][:6] == [None] * 6
    # sorted, the list reads d1 [-1, 3) first: the first span that cannot be measured
    assert got[1][6] == {"doc_id": "d1", "start": -1, "end": 3}


def test_paired_ids(db):
    ids = db.con.execute("SELECT question_id FROM paired_ids ORDER BY question_id").fetchall()
    assert ids == [("q1",), ("q2",)]  # q3 only in A, q4 only in B


def test_a_label_listed_twice_is_scored_and_drawn_with_its_highest_grade(tmp_path: Path):
    """relevant_ids [p2, p2] with grades [2, 0]: one label of grade 2, for the metrics and for
    the worked case alike (the worked case once showed p2 as not labelled)."""
    row = {
        "question_id": "q1",
        "retrieved_ids": ["p1", "p2", "p3"],
        "relevant_ids": ["p2", "p2"],
        "relevant_grades": [2, 0],
        "context_ids": ["p1", "p2"],
        "correct": True,
    }
    path = tmp_path / "a.parquet"
    pd.DataFrame([row]).to_parquet(path)
    db = RunDatabase(open_run(path, "A"), open_run(path, "B"))
    try:
        db.prepare(None)
        db.execute("question_metrics", k=None, exponential=True)
        metrics = db.con.execute("SELECT * FROM question_metrics WHERE run = 'a'").df().iloc[0]
        exemplars = db.frame("exemplars", ids=["q1"], k=None)
    finally:
        db.close()
    # one relevant passage, at rank 2 of a prompt of 2: hit, recall 1, MRR 1/2,
    # nDCG = (2^2 - 1) / log2(3) over the ideal (2^2 - 1) / log2(2)
    assert (metrics.n_relevant, metrics.hit, metrics.recall, metrics.mrr) == (1, 1.0, 1.0, 0.5)
    assert metrics.ndcg == pytest.approx(1 / math.log2(3))
    candidates = list(exemplars.iloc[0].candidates)
    assert [(c["id"], c["grade"], c["in_prompt"]) for c in candidates] == [
        ("p1", None, True),
        ("p2", 2, True),
        ("p3", None, False),
    ]
    drawn = _exemplar(exemplars.iloc[0], "group", "ok", None).candidates
    assert [(c.id, c.grade, c.in_prompt) for c in drawn] == [
        ("p1", None, True),
        ("p2", 2, True),
        ("p3", None, False),
    ]


def test_duckdb_spills_into_the_system_temp_folder_not_the_working_one(db):
    """A comparison too large for memory spills to disk; into ``.tmp`` of the working folder by
    DuckDB's default, which a killed run would leave in the user's project."""
    import tempfile

    (spill,) = db.con.execute("SELECT current_setting('temp_directory')").fetchone()
    assert Path(spill).parent == Path(tempfile.gettempdir())
    assert Path(spill).name.startswith("ragreport-duckdb-")


def test_json_lines():
    """The per-question rows of the JSON: each row a line, every value read back as it was
    (doubles to the last bit, user text with quotes, newlines and control characters),
    non-finite numbers as null, and the rows in the table's order over many of DuckDB's row
    groups."""
    from reportgen.reporters.json_report import dumps

    n = 300_000  # DuckDB scans this in several parallel chunks
    rng = np.random.default_rng(5)
    score = rng.random(n) / 3
    score[[3, 7, 11]] = [np.nan, np.inf, -np.inf]
    frame = pd.DataFrame({
        "question_id": [f"q{i}" for i in range(n)],
        'odd "key"\n': ['a"b\\c\n\u2028é\x01</script>', None] * (n // 2),
        "ndcg@5_a": score,
        "count": pd.array([1, None] * (n // 2), dtype="Int64"),
        "grade": pd.array([0.5, None] * (n // 2), dtype="Float64"),
    })  # fmt: skip
    text = dumps({"n": n}, frame)
    rows = json.loads(text)["per_question"]
    assert text.count("\n") == n + 5  # "{", "n", "per_question": [, the rows, "]", "}"
    assert [r["question_id"] for r in rows] == [f"q{i}" for i in range(n)]
    assert [r["ndcg@5_a"] for r in rows[:12:4]] == [score[0], score[4], score[8]]
    assert all(rows[i]["ndcg@5_a"] is None for i in (3, 7, 11))
    finite = np.isfinite(score)
    assert np.array_equal([r["ndcg@5_a"] for r in rows if r["ndcg@5_a"] is not None], score[finite])
    odd = 'a"b\\c\n\u2028é\x01</script>'
    assert rows[0]['odd "key"\n'] == odd and rows[1]['odd "key"\n'] is None
    assert (rows[0]["count"], rows[1]["count"], rows[0]["grade"], rows[1]["grade"]) == (
        1, None, 0.5, None,
    )  # fmt: skip
    assert json.loads(dumps({}, frame.iloc[:0]))["per_question"] == []


def test_ctrl_c_while_duckdb_reads_an_arrow_source_is_an_interrupt_not_bad_input():
    """Ctrl-C while a CSV log (read into Arrow) was scanned reached the user as "a.csv: a value
    cannot be read (... KeyboardInterrupt ...); check the log with ragreport validate": DuckDB
    wraps the interrupt of the Arrow stream it reads."""
    import types

    import duckdb
    import pyarrow as pa

    from reportgen.inputs.database import RunDatabase

    schema = pa.schema([("x", pa.int64())])

    def batches():
        yield pa.record_batch([pa.array([1])], schema=schema)
        raise KeyboardInterrupt

    con = duckdb.connect()
    con.register("src", pa.RecordBatchReader.from_batches(schema, batches()))
    stub = types.SimpleNamespace(con=con, files={})
    with pytest.raises(KeyboardInterrupt):
        RunDatabase._execute(stub, "SELECT count(*) FROM src", {})  # type: ignore[arg-type]
