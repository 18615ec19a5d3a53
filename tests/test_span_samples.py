"""Span labels with repeated answers: each sample matched and measured on its own, the question's
value the mean over its samples, checked by hand and against single-sample logs averaged with
numpy."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import two_run_view
from test_diag_pages import page_text
from test_passages import as_passage_ids
from test_spans import LABELS, LARGE, METRICS, SMALL, _logs, _metrics, _random_spans, _span

from reportgen.analysis.spans import CHAR_METRICS
from reportgen.cli import cli

MEASURED = METRICS + CHAR_METRICS + ("prompt_chars",)

# q1 answered twice by A: a prompt of two 100-character passages, then one of two 300-character
# passages (LABELS merge into d1[100, 250) of grade 2 and d1[600, 700), 250 characters); q2 once.
Q2 = {"question_id": "q2", "relevant_spans": [_span("d1", 10, 20)]}
A_SAMPLED = [
    {"question_id": "q1", "sample": "1", "relevant_spans": LABELS, "retrieved_spans": SMALL,
     "context_spans": SMALL[:2]},
    {"question_id": "q1", "sample": "2", "relevant_spans": LABELS, "retrieved_spans": LARGE,
     "context_spans": LARGE},
    dict(Q2, sample="1", retrieved_spans=[_span("d1", 0, 100)],
         context_spans=[_span("d1", 0, 100)]),
]  # fmt: skip
B_SINGLE = [  # no sample column: one answer per question
    {"question_id": "q1", "relevant_spans": LABELS, "retrieved_spans": LARGE,
     "context_spans": LARGE},
    dict(Q2, retrieved_spans=[_span("d2", 0, 100)], context_spans=[_span("d2", 0, 100)]),
]  # fmt: skip


def test_hand_worked_samples_of_span_labels(tmp_path: Path):
    q1 = _metrics(*_logs(tmp_path, A_SAMPLED, B_SINGLE), k=None).loc["q1"]
    # sample 1: d1[100,200) finds d1[100,250), d1[500,600) nothing: recall 1/2, precision 1/2;
    # 100 of its 200 characters are labelled, 100 of the 250 labelled ones reached it.
    # sample 2: both labels found by one passage each: recall 1, precision 1; all 250 labelled
    # characters are in its 600.
    assert (q1.recall_a, q1.precision_a, q1.hit_a, q1.all_a) == pytest.approx((0.75, 0.75, 1, 0.5))
    assert q1.evidence_recall_a == pytest.approx((100 / 250 + 1) / 2)
    assert q1.context_precision_a == pytest.approx((100 / 200 + 250 / 600) / 2)
    assert q1.evidence_iou_a == pytest.approx((100 / 350 + 250 / 600) / 2)
    assert q1.prompt_chars_a == pytest.approx((200 + 600) / 2)
    assert q1.n_relevant_a == 2  # the labels of a question, not of its samples added up
    # B, one answer: the second sample's numbers
    assert (q1.recall_b, q1.precision_b, q1.evidence_recall_b) == pytest.approx((1, 1, 1))


def _random_log(rng: random.Random, n: int, sampled: bool) -> list[dict]:
    """n questions of 3 labels (grade 0 to 2) on two documents, each answered 1 to 3 times
    (once without ``sampled``) with a ranking of 8 passages of its own."""
    rows = []
    for i in range(n):
        labels = [dict(s, grade=rng.choice([0, 1, 2])) for s in _random_spans(rng, 3, 150)]
        for s in range(rng.randint(1, 3) if sampled else 1):
            ranking = _random_spans(rng, 8, 300)
            row = {
                "question_id": f"q{i}",
                "relevant_spans": labels,
                "retrieved_spans": ranking,
                "context_spans": ranking[:3],
            }
            rows.append(dict(row, sample=str(s)) if sampled else row)
    return rows


def _per_sample(tmp_path: Path, rows: list[dict], k: int | None) -> pd.DataFrame:
    """Each sample's rows as a log of their own, scored alone: one row per question and sample
    (indexed by question_id) with the columns <metric>_a."""
    frames = []
    for s in sorted({r["sample"] for r in rows}):
        one = [{c: v for c, v in r.items() if c != "sample"} for r in rows if r["sample"] == s]
        folder = tmp_path / f"sample{s}"
        folder.mkdir(parents=True)
        frames.append(_metrics(*_logs(folder, one, one), k=k))
    return pd.concat(frames)[[f"{m}_a" for m in MEASURED]]


def _single_sample_means(tmp_path: Path, rows: list[dict], k: int | None) -> pd.DataFrame:
    """The single-sample logs' values averaged per question with numpy."""
    stacked = _per_sample(tmp_path, rows, k)
    return pd.DataFrame(
        {
            c: {q: np.mean(g[c].to_numpy()) for q, g in stacked.groupby(level=0)}
            for c in stacked.columns
        }
    )


@pytest.mark.parametrize("k", [None, 5])
def test_sampled_span_logs_equal_single_sample_logs_averaged(tmp_path: Path, k: int | None):
    rng = random.Random(3)
    a, b = _random_log(rng, 30, sampled=True), _random_log(rng, 30, sampled=True)
    assert any(r["sample"] == "2" for r in a) and any(r["sample"] == "0" for r in a)
    got = _metrics(*_logs(tmp_path, a, b), k=k)
    for run, rows in (("a", a), ("b", b)):
        want = _single_sample_means(tmp_path / run, rows, k)
        labelled = want["recall_a"].notna()
        assert labelled.sum() > 20
        for metric in MEASURED:
            expected = want.loc[labelled, f"{metric}_a"]
            actual = got.loc[expected.index, f"{metric}_{run}"]
            assert actual.to_numpy() == pytest.approx(expected.to_numpy()), (run, metric)
        assert got.loc[~labelled, f"recall_{run}"].isna().all()


def _compare(tmp_path: Path, a: Path, b: Path, name: str, *options: str) -> tuple[dict, str]:
    out = tmp_path / name
    args = ["compare", str(a), str(b), "-o", str(out / "r.html"), "--n-boot", "200", *options]
    out.mkdir()
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return json.loads((out / "r.json").read_text()), (out / "r.html").read_text()


def test_compare_reports_sampled_span_logs(tmp_path: Path):
    rng = random.Random(5)
    a_rows, b_rows = _random_log(rng, 40, sampled=True), _random_log(rng, 40, sampled=False)
    a, b = _logs(tmp_path, a_rows, b_rows)
    raw, html = _compare(tmp_path, a, b, "sampled")
    doc = two_run_view(raw)
    paired = _metrics(a, b, k=None)
    for metric in CHAR_METRICS + ("ndcg",):
        both = paired[[f"{metric}_a", f"{metric}_b"]].dropna()  # scored in both runs
        m = doc["metrics"][metric if metric in CHAR_METRICS else "ndcg@3"]
        assert (m["n"], m["a"]) == (len(both), pytest.approx(both[f"{metric}_a"].mean()))
    # the sampling noise of A's evidence recall over the questions both runs measure, from each
    # sample's value with numpy: the mean variance of a question's samples x the mean of
    # 1 / samples
    both = paired[["evidence_recall_a", "evidence_recall_b"]].dropna()
    values = _per_sample(tmp_path, a_rows, None)["evidence_recall_a"]
    groups = [g.to_numpy() for _, g in values[values.index.isin(both.index)].groupby(level=0)]
    noise = np.mean([np.var(g, ddof=1) for g in groups if len(g) > 1]) * np.mean(
        [1 / len(g) for g in groups]
    )
    samples = doc["samples"]["evidence_recall"]["A"]
    assert samples["n_questions"] == len(groups) == len(both) > 30
    assert samples["within"] == pytest.approx(noise)
    assert "How much of the spread is sampling noise?" in html and "evidence_recall" in html
    # the sections that read single answers read each question's first sample
    first = [r for r in a_rows if r["sample"] == "0"]
    first_log = tmp_path / "first.parquet"
    pd.DataFrame(first).drop(columns="sample").to_parquet(first_log)
    single = two_run_view(_compare(tmp_path, first_log, b, "first")[0])
    assert doc["metric_curve"] == single["metric_curve"]


def test_overlapping_labels_are_counted_once_per_question_not_per_sample(tmp_path: Path):
    a, b = _logs(tmp_path, A_SAMPLED, B_SINGLE)
    doc = two_run_view(_compare(tmp_path, a, b, "merged")[0])
    merged = [w for w in doc["warnings"] if "overlapping relevant_spans" in w]
    assert merged == [w for w in merged if w.startswith("1 question of")] and len(merged) == 2
    result = CliRunner().invoke(cli, ["validate", str(a)])
    assert result.exit_code == 0, result.output
    assert "1 row with merged_spans" in result.output


def test_a_passage_table_serves_sampled_logs(tmp_path: Path):
    rng = random.Random(9)
    rows = _random_log(rng, 20, sampled=True)
    for row in rows:  # 100-character chunks: a passage is named by its document and start
        starts = [100 * rng.randrange(10) for _ in range(8)]
        chunks = [_span(rng.choice(["d1", "d2"]), s, s + 100) for s in starts]
        row.update(retrieved_spans=chunks, context_spans=chunks[:3])
    a, b = _logs(tmp_path, rows, rows[::-1])
    (a_ids, a_passages), (b_ids, b_passages) = (as_passage_ids(log, tmp_path) for log in (a, b))
    spans = two_run_view(_compare(tmp_path, a, b, "spans")[0])
    options = ("--passages", str(a_passages), "--passages", str(b_passages))
    mapped = two_run_view(_compare(tmp_path, a_ids, b_ids, "ids", *options)[0])
    assert "evidence_recall" in mapped["metrics"] and mapped["samples"] is not None
    assert mapped["metrics"] == spans["metrics"] and spans["metrics"]["ndcg@3"]["a"] > 0
    assert mapped["samples"] == spans["samples"]


def test_span_labels_that_differ_between_samples_are_refused_naming_the_row(tmp_path: Path):
    moved = dict(A_SAMPLED[1], relevant_spans=[_span("d1", 100, 200, 2)])
    a, b = _logs(tmp_path, [A_SAMPLED[0], moved, A_SAMPLED[2]], B_SINGLE)
    result = CliRunner().invoke(cli, ["compare", str(a), str(b), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"ragreport: error: {a}: row 2 (question_id 'q1'): relevant_spans differs between samples "
        "of the question: row 1 has "
    )
    assert not (tmp_path / "r.html").exists()


def test_drill_downs_mark_the_passages_of_the_sample_shown(tmp_path: Path):
    """B's q1 answered twice, written sample 2 first: the drill-down shows sample 1 (the first
    by id), both halves of the label d[0,100) marked in its prompt, and nothing of sample 2's
    (whose first passage covers the label)."""
    label = [_span("d", 0, 100)]
    a = [{"question_id": "q1", "relevant_spans": label, "context_spans": label, "correct": True}]
    b = [
        {"question_id": "q1", "sample": "2", "relevant_spans": label, "correct": True,
         "context_spans": [_span("d", 0, 100), _span("x", 0, 10), _span("y", 0, 10)]},
        {"question_id": "q1", "sample": "1", "relevant_spans": label, "correct": False,
         "context_spans": [_span("x", 0, 10), _span("d", 0, 50), _span("d", 50, 100)]},
    ]  # fmt: skip
    paths = _logs(tmp_path, a, b)
    html = tmp_path / "r.html"
    args = ["compare", *map(str, paths), "-o", str(html), "--n-boot", "200"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code in (0, 1), result.output
    assert two_run_view(json.loads((tmp_path / "r.json").read_text()))["broken"] == ["q1"]
    assert (
        "q1 (run B) — generation failure (fix: generation) x:0-10 ▸ d:0-50 ★1 ▸ d:50-100 ★1 ▸ "
        "prompt cutoff" in page_text(html)
    )


def test_a_sample_without_a_prompt_is_left_out_of_its_question_s_means_with_a_warning(
    tmp_path: Path,
):
    """q1's second sample logs no context_spans: its retrieval metrics and character measures
    are unknown, so q1's are its first sample's (1), and the report says so, naming it, as it
    names a question whose prompt is null. A's recall@1: (1 + 1/2 + 1) / 3; correct is averaged
    over both samples of q1."""
    label = [_span("d", 0, 10, 1)]
    found, missed = [_span("d", 0, 10)], [_span("e", 0, 10)]
    a_rows = [
        {"question_id": "q1", "sample": "1", "context_spans": found, "correct": True},
        {"question_id": "q1", "sample": "2", "context_spans": None, "correct": False},
        {"question_id": "q2", "sample": "1", "context_spans": missed, "correct": True},
        {"question_id": "q2", "sample": "2", "context_spans": found, "correct": False},
        {"question_id": "q3", "sample": "1", "context_spans": found, "correct": True},
    ]
    b_rows = [
        {"question_id": q, "context_spans": found, "correct": True} for q in ("q1", "q2", "q3")
    ]
    a, b = _logs(
        tmp_path,
        [dict(r, relevant_spans=label) for r in a_rows],
        [dict(r, relevant_spans=label) for r in b_rows],
    )
    doc = two_run_view(_compare(tmp_path, a, b, "null")[0])
    assert doc["metrics"]["recall@1"]["a"] == pytest.approx(2.5 / 3)
    assert doc["metrics"]["evidence_recall"]["a"] == pytest.approx(2.5 / 3)
    assert doc["metrics"]["correct"]["a"] == pytest.approx((0.5 + 0.5 + 1) / 3)
    assert (
        "1 sample of 1 paired question in run A has context_spans null while other samples of "
        "the question log it (q1: sample 2), so it is left out of the question's retrieval "
        "metrics and character measures, which are the means over the other samples; log "
        "context_spans for every sample (an empty list when there was none)"
    ) in doc["warnings"]


def test_with_k_a_sample_without_spans_is_named_for_its_character_measures(tmp_path: Path):
    """With --k the retrieval metrics read retrieved_spans and the character measures the
    prompt (context_spans, else the first k of retrieved_spans); q1's second sample logs
    neither. Its question's means are its first sample's (evidence recall: q1 1, q2 0 and 1, q3
    1), the retrieval metrics' warning names the sample for them, and the character measures'
    warning names it for those (the first one says retrieval metrics only: with --k the prompt
    is not the ranking)."""
    label = [_span("d", 0, 10, 1)]
    found, missed = [_span("d", 0, 10)], [_span("e", 0, 10)]
    a_rows = [
        {"question_id": "q1", "sample": "1", "context_spans": found},
        {"question_id": "q1", "sample": "2", "context_spans": None},
        {"question_id": "q2", "sample": "1", "context_spans": missed},
        {"question_id": "q2", "sample": "2", "context_spans": found},
        {"question_id": "q3", "sample": "1", "context_spans": found},
    ]
    b_rows = [{"question_id": q, "context_spans": found} for q in ("q1", "q2", "q3")]
    ranked = [
        dict(r, relevant_spans=label, retrieved_spans=None if r["context_spans"] is None else found)
        for r in a_rows
    ]
    a, b = _logs(
        tmp_path, ranked, [dict(r, relevant_spans=label, retrieved_spans=found) for r in b_rows]
    )
    doc = two_run_view(_compare(tmp_path, a, b, "k", "--k", "1")[0])
    assert doc["metrics"]["recall@1"]["a"] == pytest.approx(1.0)
    assert doc["metrics"]["evidence_recall"]["a"] == pytest.approx(2.5 / 3)
    assert (
        "1 sample of 1 paired question in run A has retrieved_spans null while other samples of "
        "the question log it (q1: sample 2), so it is left out of the question's retrieval "
        "metrics, which are the means over the other samples; log retrieved_spans for every "
        "sample (an empty list when there was none)"
    ) in doc["warnings"]
    assert (
        "evidence_recall, context_precision and evidence_iou have no value on 1 sample of 1 "
        "paired question in run A while other samples of the question have one (q1: 1 of 2 "
        "samples), so the question's evidence_recall, context_precision and evidence_iou are "
        "the means over its other samples; log context_spans for every sample"
    ) in doc["warnings"]
