"""Span labels: hand-worked matches, a plain-Python reference, the CLI end to end."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import two_run_view
from test_diag_pages import page_text

from reportgen.analysis.spans import CHAR_METRICS
from reportgen.analysis.spans import definitions as span_definitions
from reportgen.cli import cli
from reportgen.inputs.database import RunDatabase
from reportgen.inputs.load import open_run
from tests.span_reference import char_measures, span_metrics

RANGE = "; expected character offsets 0 <= start < end (end exclusive)"
METRICS = ("recall", "precision", "hit", "mrr", "ndcg", "map", "rprec", "all")


def _span(doc: str, start: int, end: int, grade: int | None = None) -> dict:
    span = {"doc_id": doc, "start": start, "end": end}
    return span if grade is None else dict(span, grade=grade)


# d1[100, 200) (grade 2) and d1[150, 250) overlap: one label d1[100, 250) of grade 2.
LABELS = [_span("d1", 100, 200, 2), _span("d1", 150, 250, 1), _span("d1", 600, 700, 1)]
SMALL = [_span("d1", 100, 200), _span("d1", 500, 600), _span("d1", 200, 300), _span("d1", 650, 750)]
LARGE = [_span("d1", 0, 300), _span("d1", 600, 900)]
A_ROWS = [  # 100-character passages; the prompt is the first two
    {"question_id": "q1", "relevant_spans": LABELS, "retrieved_spans": SMALL,
     "context_spans": SMALL[:2]},
    {"question_id": "q2", "relevant_spans": [_span("d1", 10, 20), _span("d1", 30, 40)],
     "retrieved_spans": [_span("d1", 0, 100)], "context_spans": [_span("d1", 0, 100)]},
]  # fmt: skip
B_ROWS = [  # 300-character passages; the prompt is both
    dict(A_ROWS[0], retrieved_spans=LARGE, context_spans=LARGE),
    dict(A_ROWS[1], retrieved_spans=[_span("d1", 0, 300)], context_spans=[_span("d1", 0, 300)]),
]


def _logs(tmp_path: Path, a_rows: list[dict], b_rows: list[dict]) -> tuple[Path, Path]:
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pd.DataFrame(a_rows).to_parquet(a)
    pd.DataFrame(b_rows).to_parquet(b)
    return a, b


def _metrics(a: Path, b: Path, k: int | None, coverage: float = 0.0) -> pd.DataFrame:
    db = RunDatabase(open_run(a, "A"), open_run(b, "B"))
    try:
        db.prepare(k, coverage)
        db.execute("question_metrics", k=k, exponential=True)
        db.execute("span_precision", k=k)
        db.execute("question_means")
        db.execute("question_chars")
        return db.frame("paired").set_index("question_id")
    finally:
        db.close()


def _prepared_frame(
    a: Path, b: Path, name: str, coverage: float = 0.0, **params: object
) -> pd.DataFrame:
    """The frame of query ``name`` over the two logs, read without --k."""
    db = RunDatabase(open_run(a, "A"), open_run(b, "B"))
    try:
        db.prepare(None, coverage)
        return db.frame(name, **params)
    finally:
        db.close()


def test_hand_worked_spans_any_overlap(tmp_path: Path):
    m = _metrics(*_logs(tmp_path, A_ROWS, B_ROWS), k=None)
    q1 = m.loc["q1"]
    # A's prompt d1[100,200) d1[500,600): the first covers d1[100,250); d1[500,600) ends where
    # d1[600,700) starts, so it covers nothing. recall 1/2, precision 1/2, first hit at 1;
    # DCG = (2^2 - 1) / log2(2) = 3, IDCG = 3 + 1 / log2(3) = 3.6309
    assert (q1.recall_a, q1.precision_a, q1.mrr_a) == pytest.approx((0.5, 0.5, 1.0))
    assert q1.ndcg_a == pytest.approx(3 / (3 + 1 / 1.5849625), abs=1e-6)
    # B's two 300-character passages cover one label each
    assert (q1.recall_b, q1.precision_b, q1.ndcg_b, q1.all_b) == pytest.approx((1, 1, 1, 1))
    assert (q1.n_relevant_a, q1.n_relevant_b) == (2, 2)  # three labels, two after merging
    # characters: labels d1[100,250) and d1[600,700) = 250. A's prompt: 200 characters, 100 of
    # them labelled; B's: 600, all 250 labelled. The small chunks are more precise and miss more.
    assert (q1.evidence_recall_a, q1.context_precision_a, q1.evidence_iou_a) == pytest.approx(
        (100 / 250, 100 / 200, 100 / 350)
    )
    assert (q1.evidence_recall_b, q1.context_precision_b, q1.evidence_iou_b) == pytest.approx(
        (1, 250 / 600, 250 / 600)
    )
    # q2: one passage covers both labels: precision 1/1, not 2/1; nDCG stays at 1; in AP the
    # second label takes slot 2, past the prompt's one: 1/2, as two passage labels of which
    # rank 1 holds one read at k = 1 (it read 1, past what any passage-labelled run could)
    q2 = m.loc["q2"]
    assert (q2.recall_a, q2.precision_a, q2.ndcg_a, q2.map_a) == pytest.approx((1, 1, 1, 0.5))


def test_coverage_fraction_decides_which_passage_counts(tmp_path: Path):
    a, b = _logs(tmp_path, A_ROWS, B_ROWS)
    # ranking SMALL at k = 4: d1[100,200) covers 100/150 of d1[100,250), d1[200,300) 50/150,
    # d1[650,750) 50/100 of d1[600,700)
    half = _metrics(a, b, k=4, coverage=0.5).loc["q1"]
    assert (half.recall_a, half.precision_a) == pytest.approx((1.0, 2 / 4))
    most = _metrics(a, b, k=4, coverage=0.7).loc["q1"]
    assert (most.recall_a, most.precision_a, most.hit_a) == pytest.approx((0.0, 0.0, 0.0))
    anything = _metrics(a, b, k=4).loc["q1"]
    assert (anything.recall_a, anything.precision_a, anything.mrr_a) == pytest.approx(
        (1.0, 3 / 4, 1.0)
    )


def test_coverage_at_exactly_the_share_counts(tmp_path: Path):
    """A passage holding exactly the --span-coverage share of a label covers it, also where the
    share times the label's length is not exact in binary floating point (0.55 * 100)."""
    label, passage = _span("d1", 0, 100), _span("d1", 45, 400)  # 55 of the label's characters
    rows = [{"question_id": "q1", "relevant_spans": [label], "retrieved_spans": [passage]}]
    m = _metrics(*_logs(tmp_path, rows, rows), k=1, coverage=0.55).loc["q1"]
    assert (m.recall_a, m.precision_a, m.hit_a) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize(
    ("coverage", "rule"),
    [
        (0.0, "overlaps it by at least one character"),
        (0.55, "covers at least 55% of its characters (--span-coverage 0.55)"),
        (1.0, "contains it whole (--span-coverage 1)"),
    ],
)
def test_definition_states_the_coverage_rule(coverage: float, rule: str):
    """--span-coverage 1 reads as the whole label, not as "at least 1 of its characters"."""
    ((_, text),) = span_definitions(CHAR_METRICS, coverage)
    assert f"A passage is relevant to a label when it {rule};" in text


def _random_spans(rng: random.Random, n: int, length: int) -> list[dict]:
    spans = []
    for _ in range(n):
        start = rng.randrange(0, 1000)
        spans.append(_span(rng.choice(["d1", "d2"]), start, start + rng.randrange(1, length)))
    return spans


def _random_rows(rng: random.Random, n: int) -> list[dict]:
    """Questions of 4 labels of grade 0 to 2 and a ranking of 8 passages, on two documents."""
    rows = []
    for i in range(n):
        labels = [dict(s, grade=rng.choice([0, 1, 2])) for s in _random_spans(rng, 4, 120)]
        ranking = _random_spans(rng, 8, 300)
        rows.append({"question_id": f"q{i}", "relevant_spans": labels, "retrieved_spans": ranking})
    return rows


@pytest.mark.parametrize("coverage", [0.0, 0.3, 1.0])
def test_span_metrics_match_the_plain_python_reference(tmp_path: Path, coverage: float):
    rows = _random_rows(random.Random(7), 40)
    m = _metrics(*_logs(tmp_path, rows, rows), k=5, coverage=coverage)
    checked = 0
    for row in rows:
        labels = [(s["doc_id"], s["start"], s["end"], s["grade"]) for s in row["relevant_spans"]]
        if not any(g > 0 for *_, g in labels):
            assert pd.isna(m.loc[row["question_id"], "recall_a"])
            continue
        ranking = [(s["doc_id"], s["start"], s["end"]) for s in row["retrieved_spans"]]
        expected = span_metrics(ranking, 5, labels, coverage)
        got = m.loc[row["question_id"]]
        expected |= char_measures(ranking[:5], labels)  # the prompt: the top 5
        for metric in METRICS + CHAR_METRICS:
            assert got[f"{metric}_a"] == pytest.approx(expected[metric]), (row, metric)
            assert 0 <= got[f"{metric}_a"] <= 1
        checked += 1
    assert checked > 30


@pytest.mark.parametrize("coverage", [0.0, 0.5])
def test_metric_curve_of_span_labels_matches_the_reference_at_every_k(
    tmp_path: Path, coverage: float
):
    rows = _random_rows(random.Random(11), 40)
    a, b = _logs(tmp_path, rows, rows)
    curve = _prepared_frame(
        a, b, "metric_curve", coverage, depth=8, cutoffs=list(range(1, 9)), exponential=True
    )
    curve = curve[curve.run == "a"].set_index(["metric", "k"]).value
    scored = []  # the reference, per question with a label of grade > 0
    for row in rows:
        labels = [(s["doc_id"], s["start"], s["end"], s["grade"]) for s in row["relevant_spans"]]
        if any(g > 0 for *_, g in labels):
            ranking = [(s["doc_id"], s["start"], s["end"]) for s in row["retrieved_spans"]]
            scored.append((ranking, labels))
    assert len(scored) > 30
    for k in (1, 2, 3, 5, 8):
        for metric in METRICS:
            expected = sum(span_metrics(r, k, ls, coverage)[metric] for r, ls in scored)
            assert curve[(metric, k)] == pytest.approx(expected / len(scored)), (metric, k)


def _compare(tmp_path: Path, a: Path, b: Path, *options: str) -> tuple[int, str]:
    """--n-boot 200 unless ``options`` give their own (an option given twice is refused)."""
    quick = () if "--n-boot" in options else ("--n-boot", "200")
    result = CliRunner().invoke(
        cli, ["compare", str(a), str(b), "-o", str(tmp_path / "r.html"), *quick, *options]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.stderr


def test_a_label_across_a_cut_is_judged_on_its_own_runs_passages(tmp_path: Path):
    # q1, both runs: label d1[40, 50); A cuts it at 45, B's d1[0, 100) holds it whole.
    # q2: A labels d2[0, 10), held whole by A's d2[0, 20); B labels d2[500, 510), which B's
    # d2[505, 600) cuts. A's d2[495, 520) lies in B's label and B's d2[0, 5) in A's reach:
    # neither run's passages decide for the other's labels.
    a_rows = [
        {"question_id": "q1", "relevant_spans": [_span("d1", 40, 50)],
         "retrieved_spans": [_span("d1", 0, 45), _span("d1", 45, 60)]},
        {"question_id": "q2", "relevant_spans": [_span("d2", 0, 10)],
         "retrieved_spans": [_span("d2", 0, 20), _span("d2", 495, 520)]},
    ]  # fmt: skip
    b_rows = [
        {"question_id": "q1", "relevant_spans": [_span("d1", 40, 50)],
         "retrieved_spans": [_span("d1", 0, 100)]},
        {"question_id": "q2", "relevant_spans": [_span("d2", 500, 510)],
         "retrieved_spans": [_span("d2", 0, 5), _span("d2", 505, 600)]},
    ]  # fmt: skip
    a, b = _logs(tmp_path, a_rows, b_rows)
    smells = _prepared_frame(a, b, "data_smells", k=2)
    cut = smells[smells["kind"] == "span_across_cut"]
    assert cut[["run", "question_id"]].values.tolist() == [["a", "q1"], ["b", "q2"]]


@pytest.mark.parametrize(
    ("column", "span", "says"),
    [
        ("relevant_spans", _span("d1", 30, 10), "relevant_spans has span d1 [30, 10)" + RANGE),
        ("retrieved_spans", _span("d1", -5, 10), "retrieved_spans has span d1 [-5, 10)" + RANGE),
        ("context_spans", _span("d1", 7, 7), "context_spans has span d1 [7, 7)" + RANGE),
        (
            "relevant_spans",
            _span(None, 0, 10),  # type: ignore[arg-type]
            "relevant_spans has a span with no doc_id; name the document of every span",
        ),
    ],
)
def test_a_bad_span_is_refused_with_its_row(tmp_path: Path, column: str, span: dict, says: str):
    bad = [A_ROWS[0], dict(A_ROWS[1], **{column: [*A_ROWS[1][column], span]})]
    a, b = _logs(tmp_path, A_ROWS, bad)
    code, stderr = _compare(tmp_path, a, b)
    assert code == 2
    assert stderr.strip().splitlines() == [
        f"ragreport: error: {b}: row 2 (question_id 'q2'): {says}"
    ]
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "r.json").exists()


def test_cli_scores_two_chunkings_against_the_same_spans(tmp_path: Path):
    code, stderr = _compare(tmp_path, *_logs(tmp_path, A_ROWS, B_ROWS))
    assert code == 0, stderr
    doc = two_run_view(json.loads((tmp_path / "r.json").read_text()))
    assert doc["params"]["span_coverage"] == 0.0
    # both questions of each run have overlapping labels? only q1's: said once per log
    merged = [w for w in doc["warnings"] if "overlapping relevant_spans" in w]
    assert len(merged) == 2 and all(w.startswith("1 question of") for w in merged)
    # the metric-vs-k curve, over retrieved_spans. precision@1: A's and B's first passages each
    # cover a label of q1 and both of q2 (counted once). @2: A's second passage of q1
    # d1[500,600) covers nothing and q2's ranking is one passage long: (1/2 + 1/2) / 2; B's two
    # passages of q1 cover one label each: (2/2 + 1/2) / 2
    curve = json.loads((tmp_path / "r.json").read_text())["comparisons"][0]["metric_curve"]
    precision = {(p["run"], p["k"]): p["value"] for p in curve if p["metric"] == "precision"}
    assert [precision[(run, k)] for run in "ab" for k in (1, 2)] == pytest.approx([1, 0.5, 1, 0.75])


def test_the_budget_counts_the_prompts_of_unlabelled_questions(tmp_path: Path):
    """Ten labelled questions read the same 100 characters in both runs; ten unanswerable ones
    (no labels) read 100 in A and 400 in B. The budget is over all 20 (A 100, B 250), and the
    character measures over the labelled 10 only."""
    rows = {
        run: [
            {
                "question_id": f"q{i}",
                "relevant_spans": [_span("d1", 0, 100, 1)] if i < 10 else [],
                "context_spans": [_span("d1", 0, 100)]
                if i < 10
                else [_span("d1", 900, 900 + size)],
                "correct": i % 2 == 0,
            }
            for i in range(20)
        ]
        for run, size in (("a", 100), ("b", 400))
    }
    code, stderr = _compare(tmp_path, *_logs(tmp_path, rows["a"], rows["b"]))
    assert code == 0, stderr
    doc = two_run_view(json.loads((tmp_path / "r.json").read_text()))
    budget = doc["fairness"]["context budget"]
    assert (budget["numbers"]["a"], budget["numbers"]["b"]) == (100, 250)
    assert budget["flagged"]
    assert doc["metrics"]["evidence_recall"]["n"] == 10
    assert doc["metrics"]["context_precision"]["b"] == 1.0


SAMPLE = Path(__file__).resolve().parents[1] / "sample_runs"


def test_the_chunking_sample_tells_its_story(tmp_path: Path):
    a, b = SAMPLE / "manuals_a_chunk400.parquet", SAMPLE / "manuals_b_chunk1000.parquet"
    code, stderr = _compare(tmp_path, a, b, "--n-boot", "1000")
    assert code == 0, stderr
    doc = two_run_view(json.loads((tmp_path / "r.json").read_text()))
    m = doc["metrics"]
    # the 400-character chunks: more precise prompts, less of the evidence; both intervals
    # exclude 0
    assert m["context_precision"]["ci_high"] < 0 and m["evidence_iou"]["ci_high"] < 0
    assert m["evidence_recall"]["ci_low"] > 0
    budget = doc["fairness"]["context budget"]
    assert budget["flagged"] and (budget["numbers"]["a"], budget["numbers"]["b"]) == (1200, 3000)
    assert "characters" in budget["text"]
    assert "precision ceiling" not in doc["fairness"]  # no passage-count ceiling on spans
    # labels of 150 to 500 characters straddle a 400-character cut far more often
    cut = doc["audit"]["smells"]["span_across_cut"]["counts"]
    assert (cut["a"], cut["b"]) == (140, 64)
    html = (tmp_path / "r.html").read_text()
    assert "Span labels" in html and "evidence_recall" in html


def test_the_chunking_sample_is_reproducible(tmp_path: Path):
    spec = importlib.util.spec_from_file_location("chunking", SAMPLE / "make_chunking_runs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.OUT = tmp_path
    module.main()
    for name in ("manuals_a_chunk400.parquet", "manuals_b_chunk1000.parquet"):
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name


def test_validate_lists_merged_labels_and_accepts_the_log():
    log = SAMPLE / "manuals_a_chunk400.parquet"
    assert _validated(log).startswith(
        f"{log}: merged: 9 rows with merged_spans in relevant_spans: row 2 (question_id 'm001'): "
        "relevant_spans has 1 span(s) overlapping an earlier one;"
    )


def _validated(log: Path) -> str:
    """What ``ragreport validate`` prints of a log it accepts."""
    result = CliRunner().invoke(cli, ["validate", str(log)])
    assert result.exit_code == 0, result.output
    return result.output


def test_character_measures_read_the_logged_prompt_under_k(tmp_path: Path):
    # q1 logs its prompt d1[0,100), the label whole; at --k 1 the ranking scored is d2[0,100)
    # alone, which covers nothing. q2 logs no prompt: it is the first passage, d1[0,50).
    rows: list[dict] = [
        {"question_id": "q1", "relevant_spans": [_span("d1", 0, 100)],
         "retrieved_spans": [_span("d2", 0, 100), _span("d1", 0, 100)],
         "context_spans": [_span("d1", 0, 100)]},
        {"question_id": "q2", "relevant_spans": [_span("d1", 0, 100)],
         "retrieved_spans": [_span("d1", 0, 50), _span("d2", 0, 100)], "context_spans": None},
    ]  # fmt: skip
    m = _metrics(*_logs(tmp_path, rows, rows), k=1)
    q1, q2 = m.loc["q1"], m.loc["q2"]
    assert (q1.recall_a, q1.precision_a) == (0.0, 0.0)
    assert (q1.evidence_recall_a, q1.context_precision_a, q1.evidence_iou_a) == (1.0, 1.0, 1.0)
    # 50 of the label's 100 characters, all 50 of the prompt's, 50 / (100 + 50 - 50)
    assert (q2.evidence_recall_a, q2.context_precision_a, q2.evidence_iou_a) == (0.5, 1.0, 0.5)


def test_a_passage_listed_twice_counts_once_in_span_precision(tmp_path: Path):
    # d1[0,100) (covering the label) at ranks 1 and 2: one relevant passage of the top 3, as
    # the passage ids p1, p1, p2 with p1 relevant
    spans = [
        {
            "question_id": "q1",
            "relevant_spans": [_span("d1", 10, 20)],
            "retrieved_spans": [_span("d1", 0, 100), _span("d1", 0, 100), _span("d2", 0, 10)],
        }
    ]
    ids = [{"question_id": "q1", "relevant_ids": ["p1"], "retrieved_ids": ["p1", "p1", "p2"]}]
    span_logs = _logs(tmp_path, spans, spans)
    (tmp_path / "ids").mkdir()
    assert _metrics(*span_logs, k=3).loc["q1"].precision_a == pytest.approx(1 / 3)
    assert _metrics(*_logs(tmp_path / "ids", ids, ids), k=3).loc["q1"].precision_a == (
        pytest.approx(1 / 3)
    )
    curve = _prepared_frame(
        span_logs[0],
        span_logs[1],
        "metric_curve",
        depth=3,
        cutoffs=list(range(1, 4)),
        exponential=True,
    )
    precision = curve[(curve.run == "a") & (curve.metric == "precision")].set_index("k").value
    assert precision.tolist() == pytest.approx([1, 1 / 2, 1 / 3])


def test_labels_found_by_one_passage_take_slots_highest_grade_first(tmp_path: Path):
    # d1[0,300) at rank 1 covers both labels; the id d1:100-200 sorts before d1:30-90, whichever
    # holds the higher grade. Grade 2 first: DCG = 3 / log2(2) + 1 / log2(3) = the ideal DCG.
    # q1 in the order of the ids would be 1 + 3 / log2(3) = 2.893 of 3.631, nDCG 0.797.
    def row(qid: str, grade_100: int, grade_30: int) -> dict:
        return {"question_id": qid,
                "relevant_spans": [_span("d1", 100, 200, grade_100), _span("d1", 30, 90, grade_30)],
                "retrieved_spans": [_span("d1", 0, 300), _span("d2", 0, 10)]}  # fmt: skip

    rows = [row("q1", 1, 2), row("q2", 2, 1)]
    a, b = _logs(tmp_path, rows, rows)
    m = _metrics(a, b, k=2)
    assert (m.loc["q1"].ndcg_a, m.loc["q2"].ndcg_a) == pytest.approx((1.0, 1.0))
    curve = _prepared_frame(
        a, b, "metric_curve", depth=2, cutoffs=list(range(1, 3)), exponential=True
    )
    # at k = 1 the slot holds grade 2 of the ideal's grade 2 in both questions
    ndcg = curve[(curve.run == "a") & (curve.metric == "ndcg")].set_index("k").value
    assert ndcg.tolist() == pytest.approx([1.0, 1.0])


def test_labels_found_by_one_passage_below_rank_1_share_its_slot(tmp_path: Path):
    # Rank 1 covers nothing, rank 2 both labels (grades 2 and 1): each takes slot max(rank, j),
    # 2 and 2, not 2 and 3. DCG = (3 + 1) / log2(3) = 2.524 of the ideal 3 + 1 / log2(3) = 3.631:
    # nDCG@2 = 0.695 (slots 2 and 3 would give 0.521). AP: (1/2 + 2/2) / 2 = 0.75.
    row = {"question_id": "q1",
           "relevant_spans": [_span("d1", 0, 10, 2), _span("d1", 20, 30, 1)],
           "retrieved_spans": [_span("d2", 0, 10), _span("d1", 0, 30)]}  # fmt: skip
    a, b = _logs(tmp_path, [row], [row])
    m = _metrics(a, b, k=2).loc["q1"]
    ideal = 3 + 1 / np.log2(3)
    assert m.ndcg_a == pytest.approx(4 / np.log2(3) / ideal)
    assert m.map_a == pytest.approx(0.75)
    ((_, text),) = span_definitions(CHAR_METRICS, 0.0)
    assert "the j-th label found takes slot max(rank, j), so labels found by one passage" in text


def test_a_label_s_slot_past_k_is_past_the_cutoff_in_ap_as_in_ndcg(tmp_path: Path):
    # Rank 2 covers three labels (grades 2, 2, 1): slots 2, 2 and 3. At k = 2 the third is past
    # the cutoff: AP (1/2 + 2/2) / 3 = 0.5, not (1/2 + 2/2 + 3/3) / 3 = 0.833, which counted a
    # slot the prompt never reached while nDCG dropped it; at k = 3 it counts: 0.833.
    row = {"question_id": "q1",
           "relevant_spans": [_span("d1", 0, 10, 2), _span("d1", 20, 30, 2),
                              _span("d1", 40, 50, 1)],
           "retrieved_spans": [_span("d2", 0, 10), _span("d1", 0, 50),
                               _span("d2", 20, 30)]}  # fmt: skip
    a, b = _logs(tmp_path, [row], [row])
    assert _metrics(a, b, k=2).loc["q1"].map_a == pytest.approx(0.5)
    assert _metrics(a, b, k=3).loc["q1"].map_a == pytest.approx(2.5 / 3)
    assert _metrics(a, b, k=1).loc["q1"].map_a == 0
    curve = _prepared_frame(
        a, b, "metric_curve", depth=3, cutoffs=list(range(1, 4)), exponential=True
    )
    ap = curve[(curve.run == "a") & (curve.metric == "map")].set_index("k").value
    assert ap.tolist() == pytest.approx([0, 0.5, 2.5 / 3])


def test_a_grade_0_label_is_not_merged_so_not_counted_as_overlapping(tmp_path: Path):
    # q1: the grade-0 label d1[50,150) overlaps both graded ones, which do not overlap each
    # other: nothing is merged. q3: d1[50,150) overlaps d1[0,100), both graded (one merge);
    # the grade-0 d1[60,70) inside them is not counted.
    rows = [
        {"question_id": "q1", "relevant_spans": [_span("d1", 0, 100, 1), _span("d1", 50, 150, 0),
                                                 _span("d1", 120, 200, 2)]},
        {"question_id": "q2", "relevant_spans": [_span("d1", 0, 100, 1)]},
        {"question_id": "q3", "relevant_spans": [_span("d1", 0, 100), _span("d1", 50, 150, 2),
                                                 _span("d1", 60, 70, 0)]},
    ]  # fmt: skip
    for row in rows:
        row["retrieved_spans"] = [_span("d1", 0, 100)]
    log = tmp_path / "g0.parquet"
    pd.DataFrame(rows).to_parquet(log)
    assert _validated(log).startswith(
        f"{log}: merged: 1 row with merged_spans in relevant_spans: row 3 (question_id 'q3'): "
        "relevant_spans has 1 span(s) overlapping an earlier one;"
    )


def test_labels_across_a_cut_agree_with_every_passage_checked(tmp_path: Path):
    """Random rankings of three documents (passages nested, overlapping, sharing starts and
    ends, one listed twice) and labels, and passages touching a label, against a check of each
    label with every passage its run logged."""
    rng = np.random.default_rng(11)

    def spans(n: int, shortest: int, longest: int) -> list[dict]:
        starts = rng.integers(0, 60, n) * 5
        ends = starts + rng.integers(shortest, longest, n)
        docs = rng.choice(["d1", "d2", "d3"], n)
        return [_span(str(d), int(s), int(e)) for d, s, e in zip(docs, starts, ends, strict=True)]

    logs = []
    for _ in "ab":
        rows = []
        for i in range(40):
            labels = [dict(span, grade=int(rng.integers(0, 3))) for span in spans(2, 5, 30)]
            ranking = spans(6, 1, 25)
            rows.append({"question_id": f"q{i}", "relevant_spans": labels,
                         "retrieved_spans": ranking + ranking[:1],
                         "context_spans": spans(1, 1, 25)})  # fmt: skip
        # passages that touch a label (end exclusive) do not overlap it: d9 [10, 20) is not cut;
        # d9 [25, 35) is, and makes d9 [20, 30) one of the passages the labels reach
        for question, label in (("touch", _span("d9", 10, 20, 1)), ("cut", _span("d9", 25, 35, 1))):
            rows.append({"question_id": question, "relevant_spans": [label],
                         "retrieved_spans": [_span("d9", 0, 10), _span("d9", 20, 30)],
                         "context_spans": []})  # fmt: skip
        logs.append(rows)
    expected = []
    for run, rows in zip("ab", logs, strict=True):
        passages = [p for r in rows for p in r["retrieved_spans"] + r["context_spans"]]
        for r in rows:
            for label in r["relevant_spans"]:
                same = [p for p in passages if p["doc_id"] == label["doc_id"]]
                over = any(p["start"] < label["end"] and p["end"] > label["start"] for p in same)
                held = any(p["start"] <= label["start"] and p["end"] >= label["end"] for p in same)
                if label["grade"] > 0 and over and not held:
                    expected.append((run, r["question_id"]))
    expected = sorted(set(expected))
    assert 10 < len(expected) < 60  # cut labels, and labels held whole, both occur
    smells = _prepared_frame(*_logs(tmp_path, *logs), "data_smells", k=2)
    cut = smells[smells["kind"] == "span_across_cut"]
    assert sorted(zip(cut["run"], cut["question_id"], strict=True)) == expected


def test_a_label_across_a_cut_is_each_label_as_written(tmp_path: Path):
    # q1: d1[0,50) lies whole in d1[0,60), d1[40,100) is d1[40,100): neither is cut, though
    # their merged label d1[0,100) lies whole in no passage. q2: d3[40,100) is cut at 60.
    # q3: only the grade-0 label d2[150,250) is cut, and it is not measured.
    rows = [
        {"question_id": "q1", "relevant_spans": [_span("d1", 0, 50), _span("d1", 40, 100)],
         "retrieved_spans": [_span("d1", 0, 60), _span("d1", 40, 100)]},
        {"question_id": "q2", "relevant_spans": [_span("d3", 0, 50), _span("d3", 40, 100)],
         "retrieved_spans": [_span("d3", 0, 60), _span("d3", 60, 100)]},
        {"question_id": "q3", "relevant_spans": [_span("d2", 0, 100), _span("d2", 150, 250, 0)],
         "retrieved_spans": [_span("d2", 0, 100), _span("d2", 100, 200)]},
    ]  # fmt: skip
    a, b = _logs(tmp_path, rows, rows)
    smells = _prepared_frame(a, b, "data_smells", k=2)
    cut = smells[smells["kind"] == "span_across_cut"]
    assert cut[["run", "question_id"]].values.tolist() == [["a", "q2"], ["b", "q2"]]


def test_labels_of_two_kinds_say_why_retrieval_is_not_compared(tmp_path: Path):
    """Run A labels passage ids, run B document spans: the two kinds share no scale, so no
    retrieval metric is compared, and the page and the warnings say why rather than asking for
    relevant_ids, which A logs."""
    ids = [
        {"question_id": f"q{i}", "retrieved_ids": ["d1:0-100", "d1:500-600"],
         "context_ids": ["d1:0-100"], "relevant_ids": ["d1:0-100"], "correct": i % 2 == 0}
        for i in range(12)
    ]  # fmt: skip
    spans = [dict(A_ROWS[0], question_id=f"q{i}", correct=i % 3 == 0) for i in range(12)]
    code, err = _compare(tmp_path, *_logs(tmp_path, ids, spans))
    assert code == 0, err
    doc = two_run_view(json.loads((tmp_path / "r.json").read_text()))
    assert list(doc["metrics"]) == ["correct"]
    why = "run A labels its evidence as relevant_ids and run B as relevant_spans; log one of them"
    assert f"Retrieval metrics are not compared: {why} in both runs" in doc["warnings"]
    page = (tmp_path / "r.html").read_text()
    assert f"Retrieval metrics and the metric-vs-k chart: {why} in both runs." in page
    assert "log relevant_ids with context_ids" not in page


@pytest.mark.parametrize(
    ("coverage", "marked", "precision"),
    [
        # any overlap: both halves of d's label count, e[0,20) at the higher of its labels' grades
        ("0", "d:0-50 ★2 ▸ d:50-100 ★2 ▸ e:0-20 ★2 ▸ f:0-10 ▸ d:0-50 ▸", 3 / 5),
        # 60% of a label: each half of d's holds 50%, e[0,20) holds both of e's whole
        ("0.6", "d:0-50 ▸ d:50-100 ▸ e:0-20 ★2 ▸ f:0-10 ▸ d:0-50 ▸", 1 / 5),
    ],
    ids=["any overlap", "60% of a label"],
)
def test_drill_downs_mark_every_passage_precision_counts(
    tmp_path: Path, coverage: str, marked: str, precision: float
):
    """Labels d[0,100) of grade 2, e[0,10) of grade 1 and e[10,20) of grade 2; a prompt of
    five passages, d[0,50) twice (counted once, at its first rank, as precision counts it)."""
    row = {
        "question_id": "q1",
        "relevant_spans": [_span("d", 0, 100, 2), _span("e", 0, 10, 1), _span("e", 10, 20, 2)],
        "context_spans": [
            _span("d", 0, 50), _span("d", 50, 100), _span("e", 0, 20), _span("f", 0, 10),
            _span("d", 0, 50),
        ],
    }  # fmt: skip
    a, b = _logs(tmp_path, [dict(row, correct=True)], [dict(row, correct=False)])
    code, stderr = _compare(tmp_path, a, b, "--span-coverage", coverage)
    assert code in (0, 1), stderr
    doc = two_run_view(json.loads((tmp_path / "r.json").read_text()))
    assert doc["per_question"][0]["precision@5_b"] == pytest.approx(precision)
    cases = page_text(tmp_path / "r.html")
    assert f"q1 (run B) — generation failure (fix: generation) {marked} prompt cutoff" in cases
