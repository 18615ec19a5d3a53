"""Which link failed: every number of the diagnosis against hand-built logs and hand counts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_diag_pages import page_text

from reportgen.diagnosis.diagnose import Diagnosis, diagnose
from reportgen.diagnosis.stages import Dominant, Missing, cohen_kappa
from reportgen.inputs.database import RunDatabase
from reportgen.inputs.load import open_run
from reportgen.reporters.json_report import diagnosis_fields

SAMPLES = Path(__file__).resolve().parent.parent / "sample_runs"


def row(qid: str, **overrides) -> dict:
    """A question that works: evidence 'e' ranked first, in the context, cited, answered right."""
    return {
        "question_id": qid,
        "slice": "s",
        "retrieved_ids": ["e", "x1", "x2"],
        "relevant_ids": ["e"],
        "context_ids": ["e", "x1"],
        "correct": True,
        "faithfulness": 1.0,
        "answer_relevance": 0.9,
        "answerable": True,
        "abstained": False,
        "cited_ids": ["e"],
    } | overrides


MISSED = {"retrieved_ids": ["x1", "x2", "x3"], "context_ids": ["x1", "x2"]}  # not a candidate
RANKED_OUT = {"retrieved_ids": ["x1", "x2", "e"], "context_ids": ["x1", "x2"]}  # below the cut
UNANSWERABLE = {"relevant_ids": [], "answerable": False, "cited_ids": []}
# ranked first, left out of a prompt of two: the ranking is right, the prompt's assembly is not
ASSEMBLED_OUT = {"retrieved_ids": ["e", "x1", "x2"], "context_ids": ["x1", "x2"]}


def open_db(
    tmp_path: Path, rows_a: list[dict], rows_b: list[dict], k: int | None = None
) -> RunDatabase:
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, rows in zip(paths, (rows_a, rows_b), strict=True):
        pd.DataFrame(rows).to_parquet(path)
    db = RunDatabase(open_run(paths[0], "A"), open_run(paths[1], "B"))
    db.prepare(k)
    return db


def details_of(tmp_path: Path, rows_a: list[dict], rows_b: list[dict], k: int | None = None):
    db = open_db(tmp_path, rows_a, rows_b, k)
    try:
        return db.frame("answer_stage", k=k)
    finally:
        db.close()


def run(
    tmp_path: Path, rows_a: list[dict], rows_b: list[dict], named_cutoff: int | None = None, **kw
) -> Diagnosis:
    """Diagnose two hand-built logs, with the metric curve when they log retrieved_ids."""
    db = open_db(tmp_path, rows_a, rows_b)
    try:
        pairs = db.pairs("answer_stage", k=None)
        depth = db.frame("ranking_depth")["depth"].iloc[0]
        curve = None
        if not pd.isna(depth):
            curve = db.frame(
                "metric_curve",
                depth=int(depth),
                cutoffs=list(range(1, int(depth) + 1)),
                exponential=True,
            )
    finally:
        db.close()
    return diagnose(pairs, curve, named_cutoff, n_boot=200, confidence=0.95, seed=0, **kw)


def stage(d: Diagnosis, metric: str):
    return next(s for s in d.stages if s.metric == metric)


# --- answer_stage.sql --------------------------------------------------------------------------


def test_answer_stage_columns(tmp_path):
    a = [
        row("q1", cited_ids=["e", "x1", "zz", "e"]),  # duplicate, in context, fabricated
        row("q2", **RANKED_OUT, abstained=None),
        row("q3", **(UNANSWERABLE | {"answerable": None})),
        row("q4", relevant_ids=None, answerable=None, cited_ids=None),
    ]
    b = [row(q, abstained=None) for q in ("q1", "q2", "q3", "q4")]
    d = details_of(tmp_path, a, b).set_index(["run", "question_id"])
    q1 = d.loc[("a", "q1")]
    assert (q1.n_cited, q1.n_cited_in_context, q1.n_cited_relevant, q1.n_cited_used) == (3, 2, 1, 1)
    q2 = d.loc[("a", "q2")]
    assert not q2.evidence_in_context and q2.evidence_in_candidates
    assert not q2.abstained  # NULL in a run that logs it: false
    q3 = d.loc[("a", "q3")]
    assert not q3.answerable and pd.isna(q3.evidence_in_context) and q3.n_relevant == 0
    q4 = d.loc[("a", "q4")]
    assert q4.answerable and pd.isna(q4.n_cited) and pd.isna(q4.n_cited_relevant)
    assert d.loc["b", "abstained"].isna().all()  # B never logs abstained
    # answerable as logged, or from labels (q3's empty list); q4 has neither: an assumption
    assert d.loc["a", "answerable_known"].tolist() == [True, True, True, False]


def test_answer_stage_prompt_is_the_first_k_without_context_ids(tmp_path):
    rows = [row("q1", retrieved_ids=["x1", "e"], context_ids=None, cited_ids=["e"])]
    d = details_of(tmp_path, rows, rows, k=1).set_index("run")
    assert not d.loc["a", "evidence_in_context"] and d.loc["a", "evidence_in_candidates"]
    assert d.loc["a", "n_cited_in_context"] == 0
    d = details_of(tmp_path, rows, rows, k=2).set_index("run")
    assert d.loc["a", "evidence_in_context"] and d.loc["a", "n_cited_used"] == 1


def test_evidence_never_retrieved_is_not_in_the_prompt_of_the_first_k(tmp_path):
    """--k without context_ids: evidence absent from the whole ranking is not in the prompt
    (it read NULL, unknown, and such a question left the 2x2 and was called unlabelled)."""
    rows = [row("q1", retrieved_ids=["x1", "x2"], context_ids=None, correct=False)]
    d = details_of(tmp_path, rows, rows, k=1).set_index("run")
    in_context = d.loc["a", "evidence_in_context"]
    assert not pd.isna(in_context) and not in_context
    assert not d.loc["a", "evidence_in_candidates"]


def test_questions_whose_evidence_was_never_retrieved_are_retrieval_failures(
    tmp_path, write_log, compare
):
    """40 questions, --k 5, no context_ids: the even ones have their evidence at rank 3, the odd
    ones nowhere; every third is correct. By hand: even: 7 correct (working as designed), 13
    wrong (generation failure); odd: 7 answered from memory, 13 retrieval failures, each a
    retrieval miss (not unlabelled)."""
    rows = []
    for i in range(40):
        ranking = [f"x{i}-{j}" for j in range(10)]
        if i % 2 == 0:
            ranking[2] = f"p{i}"
        rows.append(
            {"question_id": f"q{i}", "retrieved_ids": ranking, "relevant_ids": [f"p{i}"],
             "correct": i % 3 == 0, "faithfulness": 1.0}
        )  # fmt: skip
    doc = compare(
        write_log(tmp_path / "a.parquet", rows), write_log(tmp_path / "b.parquet", rows),
        tmp_path / "out", "--k", 5,
    )  # fmt: skip
    assert doc["cells"]["a"] == {
        "working_as_designed": 7,
        "generation_failure": 13,
        "answered_from_memory": 7,
        "retrieval_failure": 13,
    }
    classes = doc["failure_classes"]["a"]
    assert (classes["retrieval miss"], classes["unlabelled"]) == (13, 0)


def test_exemplars_query_returns_both_runs_rows(tmp_path):
    db = open_db(tmp_path, [row("q1"), row("q2")], [row("q2"), row("q1")])
    try:
        frame = db.frame("exemplars", ids=["q1"], k=None)
    finally:
        db.close()
    assert frame[["run", "question_id"]].values.tolist() == [["a", "q1"], ["b", "q1"]]
    assert frame.loc[0, "retrieved_ids"].tolist() == ["e", "x1", "x2"]
    assert {"answer", "reference_answer", "relevant_grades", "cited_ids"} <= set(frame.columns)


# --- failure classes ---------------------------------------------------------------------------

CLASS_CASES = {
    "ok": {},
    "retrieval miss": {**MISSED, "correct": False},
    "ranking miss": {**RANKED_OUT, "correct": False},
    "assembly miss": {**ASSEMBLED_OUT, "correct": False},
    "prompt miss": {"retrieved_ids": None, "context_ids": ["x1", "x2"], "correct": False},
    "hallucination": {"correct": False, "faithfulness": 0.5},
    "off-question": {"correct": False, "answer_relevance": 0.2},
    "faithful but wrong": {"correct": False},
    "answered from memory": {**RANKED_OUT, "faithfulness": 0.2},
    "unlabelled support": {**RANKED_OUT},
    "wrong abstention": {"abstained": True, "correct": False},
    "missed abstention": {**UNANSWERABLE, "correct": False},
    "unlabelled": {"relevant_ids": [], "answerable": True, "correct": False},
}


def test_each_failure_class_from_one_question(tmp_path):
    a = [row(name, **case) for name, case in CLASS_CASES.items()]
    a.append(row("refused", **UNANSWERABLE, abstained=True, correct=False))  # right to refuse
    b = [row(r["question_id"]) for r in a]
    d = run(tmp_path, a, b)
    assert d.per_question is not None
    got = dict(zip(d.per_question.question_id, d.per_question.failure_class_a, strict=True))
    assert got == {name: name for name in CLASS_CASES} | {"refused": "ok"}
    assert d.failure_classes["a"] == {
        "retrieval miss": 1,
        "ranking miss": 1,
        "assembly miss": 1,
        "prompt miss": 1,
        "hallucination": 1,
        "off-question": 1,
        "faithful but wrong": 1,
        "generation failure": 0,
        "answered from memory": 1,
        "unlabelled support": 1,
        "wrong abstention": 1,
        "missed abstention": 1,
        "unlabelled": 1,
        "ok": 2,
    }
    assert d.failure_classes["b"]["ok"] == 14
    assert d.dominant["a"].failure_class == "retrieval miss"  # a tie: the earliest link wins
    assert d.dominant["a"].owner == "retrieval/corpus"


def test_thresholds_move_the_generation_classes(tmp_path):
    a = [row("q1", correct=False, faithfulness=0.8, answer_relevance=0.6)]
    strict = run(tmp_path, a, a)
    loose = run(tmp_path, a, a, supported_threshold=0.75, relevance_threshold=0.7)
    assert strict.per_question.failure_class_a[0] == "hallucination"
    assert loose.per_question.failure_class_a[0] == "off-question"


def test_faithfulness_alone_tells_a_hallucination_without_answer_relevance(tmp_path):
    """Hallucination is decided by faithfulness alone: a wrong answer with its evidence in the
    prompt and low faithfulness is one whether or not answer_relevance is logged (or null);
    answer_relevance only splits the off-question answers from the faithful wrong ones, which
    without it are faithful but wrong still. They read "generation failure", whose next
    experiment told a generator the judge found fully supported to "answer only from the
    passages"; only a wrong answer whose faithfulness is unknown is one."""
    rows = [
        row("unfaithful", correct=False, faithfulness=0.2),
        row("faithful", correct=False, faithfulness=1.0),
        row("faithful_too", correct=False, faithfulness=0.9),
        row("unscored", correct=False, faithfulness=None),
    ]
    a = [{k: v for k, v in r.items() if k != "answer_relevance"} for r in rows]
    d = run(tmp_path, a, a, supported_threshold=0.8)
    classes = dict(zip(d.per_question.question_id, d.per_question.failure_class_a, strict=True))
    assert classes == {
        "unfaithful": "hallucination",
        "faithful": "faithful but wrong",
        "faithful_too": "faithful but wrong",
        "unscored": "generation failure",
    }
    assert d.dominant["a"].failure_class == "faithful but wrong"
    assert d.dominant["a"].owner == "retrieval/corpus"
    experiment = d.next_experiment["a"]
    assert experiment is not None and experiment.stage != "generation"
    assert "answer only from the passages" not in experiment.change
    null_relevance = [row("unfaithful", correct=False, faithfulness=0.2, answer_relevance=None)]
    null_relevance.append(row("off", correct=False, answer_relevance=0.1))
    d = run(tmp_path, null_relevance, null_relevance, supported_threshold=0.8)
    classes = dict(zip(d.per_question.question_id, d.per_question.failure_class_a, strict=True))
    assert classes == {"unfaithful": "hallucination", "off": "off-question"}


def test_a_judge_score_only_one_run_logs_splits_neither_runs_classes(tmp_path):
    """A logs faithfulness and answer relevance, B neither: A's wrong answers with evidence
    would read hallucination and off-question, B's the same answers generation failure, a
    shift made by a column. Both runs are classified without them, as the 2x2 cells are."""
    a = [
        row("q1", correct=False, faithfulness=0.2),
        row("q2", correct=False, answer_relevance=0.2),
    ]
    b = [{k: v for k, v in r.items() if k not in ("faithfulness", "answer_relevance")} for r in a]
    d = run(tmp_path, a, b)
    assert d.per_question.failure_class_a.tolist() == ["generation failure"] * 2
    assert d.per_question.failure_class_b.tolist() == ["generation failure"] * 2
    both = run(tmp_path, a, a)  # logged in both runs, the scores split the class again
    assert both.per_question.failure_class_a.tolist() == ["hallucination", "off-question"]


def test_an_answer_without_a_verdict_is_not_a_wrong_one(tmp_path):
    """correct NULL (not judged): no class, no cell, and the generation step is judged on the
    judged hits alone; a refusal still reads as one."""
    a = [
        row("judged_right"),
        row("judged_wrong", correct=False),
        row("unjudged", correct=None),
        row("unjudged_unscored", correct=None, faithfulness=None),
        row("correct_unscored", faithfulness=None),  # supported cannot be told
        row("refused", **UNANSWERABLE, abstained=True, correct=None),
        row("refused_wrongly", abstained=True, correct=None),
    ]
    d = run(tmp_path, a, [row(r["question_id"]) for r in a], named_cutoff=2)
    classes = dict(zip(d.per_question.question_id, d.per_question.failure_class_a, strict=True))
    assert pd.isna(classes["unjudged"]) and pd.isna(classes["unjudged_unscored"])
    assert classes["refused"] == "ok" and classes["refused_wrongly"] == "wrong abstention"
    assert d.failure_classes["a"]["faithful but wrong"] == 1
    assert d.failure_classes["a"]["generation failure"] == 0
    assert d.cells["a"] == {
        "working_as_designed": 1,
        "generation_failure": 2,  # judged_wrong, refused_wrongly
        "answered_from_memory": 0,
        "retrieval_failure": 0,
    }
    assert d.cells_correct["a"]["working_as_designed"] == 2  # correct_unscored counts here
    assert path_of(d)[-1] == ("correct and supported on hits", 1 / 3, False)
    assert Missing("failure class and cell of 2 of A's answers", "correct on every answer") in (
        d.missing
    )


def test_dominant_class_exemplars_follow_each_runs_file_order(tmp_path):
    a = [row(f"q{i}", **RANKED_OUT, correct=False) for i in range(7)] + [row("q7")]
    b = [row(f"q{i}", correct=False, faithfulness=0.0) if i < 4 else row(f"q{i}") for i in range(8)]
    d = run(tmp_path, a, b[::-1])  # B's file lists the questions backwards
    assert d.exemplars == {"a": ["q0", "q1", "q2", "q3", "q4"], "b": ["q3", "q2", "q1", "q0"]}
    assert d.dominant["b"].failure_class == "hallucination"
    assert d.broken == []  # A is already wrong on q0..q3
    broken = run(tmp_path, [row("q1"), row("q2")], [row("q1", correct=False), row("q2")]).broken
    assert broken == ["q1"]


def test_only_questions_in_both_runs(tmp_path):
    d = run(tmp_path, [row("q1"), row("only_a", correct=False)], [row("q1")])
    assert d.per_question.question_id.tolist() == ["q1"]
    assert stage(d, "correct").a.n == 1


# --- cells and transitions ---------------------------------------------------------------------


def test_cells_and_transitions(tmp_path):
    a = [
        row("q1"),  # working -> working
        row("q2", **MISSED, correct=False),  # retrieval failure -> working
        row("q3", **RANKED_OUT, correct=False),  # retrieval failure -> working
        row("q4"),  # working -> generation failure (correct but unsupported in B)
        row("q5", **MISSED),  # answered from memory -> retrieval failure
        row("q6", **UNANSWERABLE),  # left out: unanswerable
    ]
    b = [row("q1"), row("q2"), row("q3"), row("q4", faithfulness=0.5)]
    b += [row("q5", **MISSED, correct=False), row("q6", **UNANSWERABLE)]
    d = run(tmp_path, a, b)
    assert d.cells == {
        "a": {
            "working_as_designed": 2,
            "generation_failure": 0,
            "answered_from_memory": 1,
            "retrieval_failure": 2,
        },
        "b": {
            "working_as_designed": 3,
            "generation_failure": 1,
            "answered_from_memory": 0,
            "retrieval_failure": 1,
        },
    }
    t = d.transitions
    assert t is not None
    assert t["retrieval_failure"]["working_as_designed"] == 2
    assert t["working_as_designed"] == {
        "working_as_designed": 1,
        "generation_failure": 1,
        "answered_from_memory": 0,
        "retrieval_failure": 0,
    }
    assert sum(n for to in t.values() for n in to.values()) == 5
    assert list(d.moves) == [
        {"from": "retrieval_failure", "to": "working_as_designed", "n": 2},
        {"from": "working_as_designed", "to": "generation_failure", "n": 1},
        {"from": "answered_from_memory", "to": "retrieval_failure", "n": 1},
    ]
    loose = run(tmp_path, a, b, supported_threshold=0.5)  # q4 in B now counts as supported
    assert loose.cells["b"]["generation_failure"] == 0


# --- stages ------------------------------------------------------------------------------------


def test_stage_scores_on_their_populations(tmp_path):
    a = [
        row("q1", cited_ids=["e", "x1"]),  # hit: utilization 1/2
        row("q2", faithfulness=0.5, answer_relevance=0.5),  # hit
        row("q3", **MISSED, faithfulness=0.0, answer_relevance=0.0, cited_ids=["zz"]),  # miss
        row("q4", **UNANSWERABLE, abstained=True),  # refused right
        row("q5", **MISSED, abstained=True, correct=False, cited_ids=[]),  # refused wrongly
    ]
    b = [
        row("q1", faithfulness=0.5, answer_relevance=0.7),  # hit
        row("q2", **MISSED, faithfulness=1.0),  # miss
        row("q3"),  # hit
        row("q4", **UNANSWERABLE, correct=False),
        row("q5", **MISSED, correct=False, cited_ids=[]),
    ]
    d = run(tmp_path, a, b)
    faith = stage(d, "faithfulness")
    assert (faith.a.mean, faith.a.n, faith.b.mean, faith.b.n) == (0.75, 2, 0.75, 2)
    assert (faith.diff.n, faith.diff.a, faith.diff.b) == (1, 1.0, 0.5)  # hits in both: q1
    assert "hits" in faith.population
    relevance = stage(d, "answer relevance")
    assert relevance.a.mean == pytest.approx(0.7) and relevance.b.mean == pytest.approx(0.8)
    use = stage(d, "context utilization")
    assert (use.a.mean, use.a.n, use.b.mean) == (0.75, 2, 1.0)
    refusals = stage(d, "correct refusals")
    assert (refusals.a.mean, refusals.a.n, refusals.b.mean) == (1.0, 1, 0.0)
    assert refusals.diff.broken == 1
    wrong = stage(d, "wrong refusals")
    assert (wrong.a.mean, wrong.a.n, wrong.b.mean) == (0.25, 4, 0.0)
    in_context = stage(d, "citations in context")
    assert in_context.a.mean == pytest.approx(2 / 3) and in_context.a.n == 3
    relevant = stage(d, "citations relevant")
    assert relevant.a.mean == pytest.approx(0.5)
    correct = stage(d, "correct")
    assert (correct.a.mean, correct.b.mean, correct.diff.diff) == (0.8, 0.6, pytest.approx(-0.2))
    assert correct.a.ci_low <= correct.a.mean <= correct.a.ci_high
    assert [(m.stage, m.needs) for m in d.missing] == [
        ("judge agreement", "human_correct, human_faithful"),
        ("latency", "latency_ms"),
        ("cost", "cost_usd"),
        ("context tokens", "context_tokens"),
    ]


def test_refusals_are_scored_only_where_answerability_is_logged(tmp_path):
    """Without `answerable` and labels every question is answerable by assumption: the
    abstentions on unanswerable questions read as wrong refusals (2 of 4, 0.5, in both runs).
    Both refusal rows now ask for `answerable`, also where one run logs labels; logged
    `answerable` alone scores them."""
    bare = {"relevant_ids": None, "answerable": None, "cited_ids": None}
    plain = [row("q1", **bare), row("q2", **bare)]
    refused = [row(q, **bare, abstained=True, correct=False) for q in ("q3", "q4")]
    for a, b in [
        (plain + refused, plain + refused),
        (
            [row("q1"), row("q2"), *(row(q, **UNANSWERABLE, abstained=True) for q in ("q3", "q4"))],
            plain + refused,
        ),
    ]:
        d = run(tmp_path, a, b)
        assert not {"correct refusals", "wrong refusals"} & {s.metric for s in d.stages}
        needs = [(m.stage, m.needs) for m in d.missing if "refusals" in m.stage]
        assert needs == [("correct refusals", "answerable"), ("wrong refusals", "answerable")]
    logged = [
        *(row(q, relevant_ids=None, cited_ids=None) for q in ("q1", "q2")),
        *(row(q, **bare | {"answerable": False}, abstained=True) for q in ("q3", "q4")),
    ]
    d = run(tmp_path, logged, logged)
    assert (stage(d, "wrong refusals").a.mean, stage(d, "wrong refusals").a.n) == (0.0, 2)
    assert (stage(d, "correct refusals").a.mean, stage(d, "correct refusals").a.n) == (1.0, 2)


def test_stage_intervals_stay_in_the_range_a_share_can_move(tmp_path):
    """Two questions: Student's t reaches [-5.85, +6.85] for a share in [0, 1]; B - A of one
    lies in [-1, +1], whether or not the registry knows the score's name."""
    a = [row("q1", cited_ids=["zz"], answer_relevance=0.2), row("q2")]
    b = [row("q1"), row("q2")]
    d = run(tmp_path, a, b)
    for metric in ("citations in context", "answer relevance"):
        s = stage(d, metric).diff
        assert s.diff == pytest.approx(0.5 if metric == "citations in context" else 0.35)
        assert (s.ci_low, s.ci_high) == (-1.0, 1.0)


def test_a_stage_without_a_question_in_both_populations_has_no_p(tmp_path):
    d = run(tmp_path, [row("q1", **MISSED)], [row("q1")])  # A has no hit to judge
    faithfulness = stage(d, "faithfulness")
    assert (faithfulness.a.n, faithfulness.b.n, faithfulness.diff.n) == (0, 1, 0)
    assert np.isnan(faithfulness.diff.p)


def test_log_without_the_new_columns_scores_correctness_only(tmp_path):
    keep = ("question_id", "retrieved_ids", "relevant_ids", "context_ids", "correct")
    a = [{k: v for k, v in r.items() if k in keep} for r in (row("q1"), row("q2", correct=False))]
    d = run(tmp_path, a, a, named_cutoff=2)
    assert [s.metric for s in d.stages] == ["correct"]
    assert [(m.stage, m.needs) for m in d.missing] == [
        ("faithfulness", "faithfulness"),
        ("answer relevance", "answer_relevance"),
        ("context utilization", "cited_ids"),
        ("correct refusals", "abstained"),
        ("wrong refusals", "abstained"),
        ("citations in context", "cited_ids"),
        ("citations relevant", "cited_ids"),
        ("judge agreement", "human_correct, human_faithful"),
        ("latency", "latency_ms"),
        ("cost", "cost_usd"),
        ("context tokens", "context_tokens"),
    ]
    assert d.dominant["a"].failure_class == "generation failure"
    assert d.judge_agreement == {} and d.cost == {} and d.summary is None
    document = diagnosis_fields(d)
    json.dumps(document, allow_nan=False)
    assert document["next_experiment"]["a"]["stage"] == "generation"


def test_without_labels_generation_stages_name_the_labels(tmp_path):
    a = [
        {"question_id": "q1", "correct": True, "faithfulness": 1.0},
        {"question_id": "q2", "correct": False, "faithfulness": 0.5},
    ]
    d = run(tmp_path, a, a)
    missing = [(m.stage, m.needs) for m in d.missing]
    # neither labels nor a prompt: logging the labels alone would not locate the evidence
    needs = "relevant_ids and context_ids"
    assert ("faithfulness on retrieval hits", needs) in missing
    assert ("cells", needs) in missing
    assert d.cells is None and d.transitions is None
    # without labels no wrong answer can be placed on the chain: no classes, not "unlabelled"
    assert ("failure classes", needs) in missing
    assert "log relevant_ids and context_ids so" in d.next_experiment["a"].change
    with_prompt = [r | {"context_ids": ["p1"]} for r in a]
    assert "log relevant_ids so" in run(tmp_path, with_prompt, a).next_experiment["a"].change
    assert ("cells", "relevant_ids") in [
        (m.stage, m.needs) for m in run(tmp_path, with_prompt, with_prompt).missing
    ]
    labelled = [r | {"relevant_ids": ["p1"]} for r in a]
    assert ("cells", "context_ids") in [
        (m.stage, m.needs) for m in run(tmp_path, labelled, labelled).missing
    ]
    assert d.failure_classes is None and d.dominant == {"a": None, "b": None}
    experiment = d.next_experiment["a"]
    assert experiment is not None
    # nothing marks a question unanswerable, so the population is every question
    assert [s.metric for s in experiment.path] == ["correct and supported on all questions"]
    # nothing locates the evidence, so the step is end-to-end, not blamed on the generator
    assert experiment.path[0].value == 0.5 and experiment.stage == "end-to-end"
    assert experiment.path[0].question == (
        "Of all questions, does the share answered correctly and faithfully reach its bar?"
    )


def test_without_located_evidence_the_next_step_is_the_logging_alone(tmp_path, compare):
    """Answer-only logs: an unsupported wrong answer is as often a retrieval miss as a
    generation failure (on the sample's answer-only cut, 33 of A's 69 unsupported answers were
    ranking or retrieval misses on the full logs), so the step below the bar named no link but
    told the run to instruct its model, judged by correct. The step is the logging that would
    locate the evidence, which moves no metric: nothing judges it or refutes it."""
    a = [
        {"question_id": "q1", "correct": True, "faithfulness": 1.0},
        {"question_id": "q2", "correct": False, "faithfulness": 0.2},
        {"question_id": "q3", "correct": False, "faithfulness": 1.0},
    ]
    experiment = run(tmp_path, a, a).next_experiment["a"]
    assert experiment is not None and experiment.stage == "end-to-end"
    assert experiment.path[0].value == pytest.approx(1 / 3) and not experiment.path[0].passed
    assert experiment.change.startswith("log relevant_ids and context_ids so the next report")
    assert "instruct" not in experiment.change and "model" not in experiment.change
    assert (experiment.metric, experiment.comparison, experiment.refuted_if) == (None, None, None)
    assert experiment.text == f"{experiment.change[0].upper()}{experiment.change[1:]}."
    paths = []
    for name in ("a", "b"):
        frame = pd.DataFrame(a * 5).assign(question_id=[f"q{i}" for i in range(15)])
        frame.to_parquet(tmp_path / f"{name}.parquet")
        paths.append(tmp_path / f"{name}.parquet")
    doc = compare(*paths, tmp_path / "out")
    page = (tmp_path / "out" / "report.html").read_text()
    section = page[page.index("The next experiment</h3>") :].split("<h3>")[0]
    assert "no change to the pipeline is proposed" in section
    assert "Judge it by" not in section and "refuted" not in section
    assert doc["next_experiment"]["a"]["refuted_if"] is None
    assert "where the answers fall short of their bar, the step is to log the columns" in page


def test_without_correct_or_located_evidence_every_missing_column_is_named(tmp_path, compare):
    """Faithfulness alone: the failure classes and cells named correct as all they need, though
    correct without relevant_ids and context_ids would locate nothing; the note on the missing
    next experiment said the walk "reached generation" with no link judged before."""
    a = [{"question_id": f"q{i}", "faithfulness": (i % 4) / 4} for i in range(12)]
    d = run(tmp_path, a, a)
    missing = [(m.stage, m.needs) for m in d.missing]
    needs = "correct, relevant_ids and context_ids"
    assert ("failure classes", needs) in missing and ("cells", needs) in missing
    assert d.next_experiment == {"a": None, "b": None}
    paths = []
    for name in ("a", "b"):
        pd.DataFrame(a).to_parquet(tmp_path / f"{name}.parquet")
        paths.append(tmp_path / f"{name}.parquet")
    compare(*paths, tmp_path / "out")
    text = page_text(tmp_path / "out" / "report.html")
    assert "reached the answers (no link before them fell short of its bar, or none" in text
    assert "reached generation" not in text


def test_without_labels_an_answerable_column_narrows_the_population(tmp_path):
    a = [
        {"question_id": "q1", "correct": True, "faithfulness": 1.0, "answerable": True},
        {"question_id": "q2", "correct": False, "faithfulness": 0.5, "answerable": True},
        {"question_id": "q3", "correct": False, "faithfulness": 1.0, "answerable": False},
    ]
    experiment = run(tmp_path, a, a).next_experiment["a"]
    assert experiment is not None
    assert [s.metric for s in experiment.path] == ["correct and supported on answerable questions"]
    assert experiment.path[0].value == 0.5  # q1 of q1, q2: q3 is not answerable


# --- the decision path -------------------------------------------------------------------------


def path_of(d: Diagnosis, run_key: str = "a") -> list[tuple[str, float, bool]]:
    experiment = d.next_experiment[run_key]
    assert experiment is not None
    return [(s.metric, s.value, s.passed) for s in experiment.path]


def test_path_candidates_fail(tmp_path):
    a = [row(f"q{i}", **MISSED, correct=False) for i in range(3)] + [
        row(f"q{i}") for i in range(3, 10)
    ]
    d = run(tmp_path, a, a, named_cutoff=2)
    assert path_of(d) == [("hit@3", 0.7, False)]
    experiment = d.next_experiment["a"]
    assert experiment.stage == "retrieval"
    assert experiment.metric == "hit@3"
    assert experiment.numbers == {"hit@3": 0.7}
    assert "interval" in experiment.refuted_if and "paired" in experiment.comparison


def test_path_names_each_runs_own_ranking_depth(tmp_path):
    """The curve runs to A's 3 candidates; B ranks 2, so its first step is hit@2, not hit@3."""
    a = [row(f"q{i}") for i in range(10)]
    b = [row(f"q{i}", retrieved_ids=["e", "x1"]) for i in range(10)]
    d = run(tmp_path, a, b, named_cutoff=2)
    assert path_of(d, "a")[0] == ("hit@3", 1.0, True)
    assert path_of(d, "b")[0] == ("hit@2", 1.0, True)


def test_path_names_the_prompt_by_context_when_k_cuts_another_list(tmp_path):
    """--k 1 with context_ids: hit@1 of the metric table scores retrieved_ids (0 here), the
    prompt is context_ids (evidence in every one): the step must not call 1.0 hit@1."""
    rows = [row(f"q{i}", retrieved_ids=["x1", "e", "x2"], context_ids=["e"]) for i in range(10)]
    db = open_db(tmp_path, rows, rows, k=1)
    try:
        pairs = db.pairs("answer_stage", k=1)
    finally:
        db.close()
    d = diagnose(pairs, None, 1, n_boot=200, confidence=0.95, seed=0)
    # without the curve (as from per-question tables) the candidates come from each question's
    assert path_of(d)[:2] == [("hit@3", 1.0, True), ("hit@context", 1.0, True)]
    assert path_of(run(tmp_path, rows, rows, named_cutoff=1))[1][0] == "hit@1"  # no --k


def test_path_ranking_fails(tmp_path):
    a = [row(f"q{i}", **RANKED_OUT, correct=False) for i in range(3)] + [
        row(f"q{i}") for i in range(3, 10)
    ]
    d = run(tmp_path, a, a, named_cutoff=2)
    assert path_of(d) == [("hit@3", 1.0, True), ("hit@2", 0.7, False)]
    assert d.next_experiment["a"].stage == "ranking"
    assert "rerank the top 3" in d.next_experiment["a"].change


def test_evidence_ranked_first_and_left_out_of_the_prompt_is_the_assembly_s_miss(tmp_path):
    """The ranking puts the evidence first on every question; B's prompt of two passages leaves
    it out on 3 of 10. That was called a ranking miss, and the next experiment reranked a
    ranking that was already right."""
    a = [row(f"q{i}") for i in range(10)]
    b = [row(f"q{i}", **ASSEMBLED_OUT, correct=False) for i in range(3)] + a[3:]
    d = run(tmp_path, a, b, named_cutoff=2)
    assert d.failure_classes["b"]["assembly miss"] == 3
    assert d.failure_classes["b"]["ranking miss"] == 0
    assert (d.dominant["b"].failure_class, d.dominant["b"].owner) == (
        "assembly miss",
        "context assembly",
    )
    assert path_of(d, "b") == [("hit@3", 1.0, True), ("hit@2", 0.7, False)]
    experiment = d.next_experiment["b"]
    assert experiment.stage == "context assembly"
    assert "rerank" not in experiment.change
    assert "drops top-ranked evidence" in experiment.change


def test_a_prompt_missing_evidence_ranked_below_its_length_is_the_ranking_s(tmp_path):
    """Of 6 prompts of 20 without their evidence, the stage is the one most of them point to:
    ranked within the prompt's length, the assembly; below it, the ranking; a tie goes to the
    ranking, the earlier link."""

    def stage_of(assembled: int) -> str:
        rows = (
            [row(f"q{i}", **ASSEMBLED_OUT, correct=False) for i in range(assembled)]
            + [row(f"q{i}", **RANKED_OUT, correct=False) for i in range(assembled, 6)]
            + [row(f"q{i}") for i in range(6, 20)]
        )
        d = run(tmp_path, rows, rows, named_cutoff=2)
        assert path_of(d)[1] == ("hit@2", 0.7, False)
        return d.next_experiment["a"].stage

    assert [stage_of(n) for n in (2, 3, 4)] == ["ranking", "ranking", "context assembly"]


def test_evidence_no_candidate_holds_counts_for_neither_assembly_nor_ranking(tmp_path):
    """3 wrong answers assembled out, 2 ranked out and 2 never retrieved, of 10: the assembly
    is the dominant class and the link to fix (3 against 2); the 2 no candidate holds, which
    neither a reranker nor the assembly brings, had counted for the ranking (3 against 4)."""
    rows = (
        [row(f"q{i}", **ASSEMBLED_OUT, correct=False) for i in range(3)]
        + [row(f"q{i}", **RANKED_OUT, correct=False) for i in range(3, 5)]
        + [row(f"q{i}", **MISSED, correct=False) for i in range(5, 7)]
        + [row(f"q{i}") for i in range(7, 10)]
    )
    d = run(tmp_path, rows, rows, named_cutoff=2)
    assert path_of(d) == [("hit@3", 0.8, True), ("hit@2", 0.3, False)]
    assert d.dominant["a"].failure_class == "assembly miss"
    assert d.next_experiment["a"].stage == "context assembly"


def test_an_empty_prompt_under_evidence_ranked_first_is_the_assembly_s_miss(tmp_path):
    """The ranking put the evidence first and the prompt is empty: the assembly dropped it, not
    the ranking (a prompt of no passage read as "ranked within its length" for none)."""
    a = [row(f"q{i}") for i in range(10)]
    b = [row(f"q{i}", context_ids=[], correct=False) for i in range(3)] + a[3:]
    d = run(tmp_path, a, b, named_cutoff=2)
    assert d.failure_classes["b"]["assembly miss"] == 3
    assert d.next_experiment["b"].stage == "context assembly"


def test_a_prompt_below_its_bar_that_cost_no_answer_is_passed_on(tmp_path):
    """5 of 20 prompts miss their evidence (ranked below the cut), all 5 answered correctly;
    the 3 wrong answers had theirs in the prompt. The walk stopped at the prompt (hit@2 0.75)
    and proposed reranking, which would fix none of them; it goes on to the hits."""
    a = (
        [row(f"q{i}", **RANKED_OUT) for i in range(5)]
        + [row(f"q{i}", correct=False) for i in range(5, 8)]
        + [row(f"q{i}") for i in range(8, 20)]
    )
    d = run(tmp_path, a, a, named_cutoff=2)
    assert path_of(d)[1] == ("hit@2", 0.75, False)
    assert path_of(d)[2][0] == "correct and supported on hits"
    assert d.next_experiment["a"].stage != "ranking"
    # one of the misses answered wrongly: the prompt is the link to fix again
    a[0] = row("q0", **RANKED_OUT, correct=False)
    assert run(tmp_path, a, a, named_cutoff=2).next_experiment["a"].stage == "ranking"


def test_a_miss_of_the_prompt_with_no_candidates_logged_is_on_no_one_link(tmp_path):
    """No retrieved_ids: 6 of 20 prompts miss their evidence, answered wrongly. They were
    "retrieval miss" (defined as "among no candidate", which nothing logged tells) while the
    next experiment was to "rerank the retrieved candidates": two owners, both guessed."""
    bare = [{k: v for k, v in row(f"q{i}").items() if k != "retrieved_ids"} for i in range(20)]
    a = [dict(r, context_ids=["x1", "x2"], correct=False) if i < 6 else r
         for i, r in enumerate(bare)]  # fmt: skip
    d = run(tmp_path, a, a, named_cutoff=2)
    assert d.failure_classes["a"]["retrieval miss"] == 0
    assert d.dominant["a"] == Dominant("prompt miss", 6, "retrieval, ranking or context assembly")
    experiment = d.next_experiment["a"]
    assert experiment.stage == "end-to-end" and experiment.metric is None
    assert experiment.change.startswith("log retrieved_ids so the next report can tell")
    assert Missing("prompt misses told apart by link", "retrieved_ids") in d.missing
    # with the candidates logged, the same misses are placed: ranked below the prompt's two
    ranked = [dict(r, retrieved_ids=["x1", "x2", "e"]) for r in a]
    d = run(tmp_path, ranked, ranked, named_cutoff=2)
    assert (
        d.failure_classes["a"]["ranking miss"] == 6 and d.failure_classes["a"]["prompt miss"] == 0
    )
    assert d.next_experiment["a"].stage == "ranking"
    assert all(m.stage != "prompt misses told apart by link" for m in d.missing)


def test_a_correct_answer_the_prompt_supports_without_a_label_is_not_from_memory(tmp_path):
    """25 correct answers, faithfulness 1.0, their labelled passage ranked below the prompt:
    "answered from memory" (owned by retrieval/corpus), though the judge found them supported
    by the prompt, and the run's most common problem over its 15 wrong answers. They are
    unlabelled support (the golden set's), and the dominant class is the wrong answers'."""
    a = (
        [row(f"q{i:02d}", **RANKED_OUT) for i in range(25)]
        + [row(f"q{i:02d}", correct=False, answer_relevance=0.9) for i in range(25, 40)]
        + [row(f"q{i:02d}") for i in range(40, 100)]
    )
    d = run(tmp_path, a, a, named_cutoff=2, supported_threshold=0.8)
    assert d.failure_classes["a"]["unlabelled support"] == 25
    assert d.failure_classes["a"]["answered from memory"] == 0
    assert d.dominant["a"] == Dominant("faithful but wrong", 15, "retrieval/corpus")
    # unsupported, the same answers are from memory; they lead only where no answer is wrong
    unsupported = [dict(r, faithfulness=0.2) if i < 25 else r for i, r in enumerate(a)]
    d = run(tmp_path, unsupported, unsupported, named_cutoff=2, supported_threshold=0.8)
    assert d.failure_classes["a"]["answered from memory"] == 25
    right = [r for r in a if r["correct"]]
    d = run(tmp_path, right, right, named_cutoff=2, supported_threshold=0.8)
    assert d.dominant["a"] == Dominant("unlabelled support", 25, "golden set")


def test_a_citation_score_not_scored_names_every_column_it_needs(tmp_path):
    """Answer-only logs were told "context utilization (log cited_ids)" and "citations relevant
    (log cited_ids)", which cited_ids alone does not score; with cited_ids logged and no prompt,
    "citations in context" was a row of n/a, named nowhere as not scored."""
    answers = [{"question_id": f"q{i}", "correct": i % 2 == 0, "faithfulness": 1.0}
               for i in range(10)]  # fmt: skip
    d = run(tmp_path, answers, answers)
    needs = {m.stage: m.needs for m in d.missing}
    assert needs["context utilization"] == "cited_ids and relevant_ids and context_ids"
    assert needs["citations in context"] == "cited_ids and context_ids"
    assert needs["citations relevant"] == "cited_ids and relevant_ids"
    cited = [dict(r, cited_ids=[f"c{i}"]) for i, r in enumerate(answers)]
    d = run(tmp_path, cited, cited)
    needs = {m.stage: m.needs for m in d.missing}
    assert needs["citations in context"] == "context_ids"
    assert needs["citations relevant"] == "relevant_ids"
    assert [s.metric for s in d.stages if s.stage == "citations"] == []


def test_the_prompt_step_weighs_the_misses_that_failed(tmp_path):
    """B's 4 wrong answers lost evidence ranked first; 6 right ones had it ranked below their
    prompt. Counting every miss sent B to reranking, which would change none of its wrong
    answers."""
    a = [row(f"q{i}") for i in range(20)]
    b = (
        [row(f"q{i}", **ASSEMBLED_OUT, correct=False) for i in range(4)]
        + [row(f"q{i}", **RANKED_OUT) for i in range(4, 10)]
        + a[10:]
    )
    d = run(tmp_path, a, b, named_cutoff=2)
    assert path_of(d, "b")[1] == ("hit@2", 0.5, False)
    assert d.next_experiment["b"].stage == "context assembly"


def test_evidence_ranked_for_the_prompt_needs_a_logged_prompt(tmp_path):
    """Without context_ids the prompt is the first k of the ranking: nothing assembles it, so
    the column is NULL and no question is an assembly miss."""
    a = [row("q1", **ASSEMBLED_OUT), row("q2", **RANKED_OUT), row("q3", **MISSED)]
    frame = details_of(tmp_path, a, a).set_index(["run", "question_id"]).loc["a"]
    assert frame["evidence_ranked_for_prompt"].tolist() == [True, False, False]
    bare = [{k: v for k, v in r.items() if k != "context_ids"} for r in a]
    frame = details_of(tmp_path, bare, bare, k=2).set_index(["run", "question_id"]).loc["a"]
    assert frame["evidence_ranked_for_prompt"].isna().all()
    assert frame["evidence_in_context"].tolist() == [True, False, False]


def test_faithful_but_wrong_answers_on_lower_graded_evidence_send_it_to_the_ranking(tmp_path):
    """Each question labels 'e' grade 2 (answers it) and 'h' grade 1 (helps). On 6 of 20, B's
    ranking puts 'e' below its prompt of two, which holds 'h': the answers follow it faithfully
    and are wrong. The next experiment sent that to the corpus ("refresh or drop stale
    documents"), which is the same in both runs, while the ranking left out the best passage."""
    graded = {"relevant_ids": ["e", "h"], "relevant_grades": [2, 1]}
    good = {**graded, "retrieved_ids": ["e", "h", "x1"], "context_ids": ["e", "h"]}
    partial = {**graded, "retrieved_ids": ["h", "x1", "e"], "context_ids": ["h", "x1"]}
    a = [row(f"q{i}", **good) for i in range(20)]
    b = [row(f"q{i}", **partial, correct=False) for i in range(6)] + a[6:]
    d = run(tmp_path, a, b, named_cutoff=2)
    assert d.failure_classes["b"]["faithful but wrong"] == 6
    assert path_of(d, "b")[1:] == [
        ("hit@2", 1.0, True),  # a grade-1 passage is evidence in the prompt
        ("correct and supported on hits", 0.7, False),
    ]
    assert d.next_experiment["b"].stage == "ranking"
    assert "highest labelled grade" in d.next_experiment["b"].change
    # the best passage in those prompts and the answers still wrong: a stale passage, the corpus
    stale = [row(f"q{i}", **good, correct=False) for i in range(6)] + a[6:]
    assert run(tmp_path, a, stale, named_cutoff=2).next_experiment["b"].stage == "corpus"
    # the best passage among no candidate: no reranking brings it, the retrieval must
    unretrieved = {**graded, "retrieved_ids": ["h", "x1", "x2"], "context_ids": ["h", "x1"]}
    lost = [row(f"q{i}", **unretrieved, correct=False) for i in range(6)] + a[6:]
    experiment = run(tmp_path, a, lost, named_cutoff=2).next_experiment["b"]
    assert experiment.stage == "retrieval"
    assert experiment.change.startswith("retrieve a passage of each question's highest")


def test_faithful_but_wrong_answers_on_the_hits_send_the_next_experiment_to_the_corpus(tmp_path):
    """Evidence in every prompt, answers faithful to it and wrong (a stale passage): the classes
    gave the fix to retrieval/corpus while the next experiment, on the same page, blamed the
    generator and asked it to answer only from the passages, which it already does."""
    stale = [row(f"q{i}", correct=False) for i in range(6)] + [row(f"q{i}") for i in range(6, 10)]
    d = run(tmp_path, stale, stale, named_cutoff=2)
    assert (d.dominant["a"].failure_class, d.dominant["a"].owner) == (
        "faithful but wrong",
        "retrieval/corpus",
    )
    experiment = d.next_experiment["a"]
    assert path_of(d)[-1] == ("correct and supported on hits", 0.4, False)
    assert experiment.stage == "corpus"
    assert experiment.change.startswith("check the passages the faithful but wrong answers follow")
    hallucinated = [row(f"q{i}", correct=False, faithfulness=0.2) for i in range(4)]
    mixed = hallucinated + stale[4:]  # 4 hallucinations against 2 faithful but wrong
    assert run(tmp_path, mixed, mixed, named_cutoff=2).next_experiment["a"].stage == "generation"


def test_path_generation_fails(tmp_path):
    a = [row(f"q{i}", faithfulness=0.5) for i in range(3)] + [row(f"q{i}") for i in range(3, 10)]
    d = run(tmp_path, a, a, named_cutoff=2)
    assert path_of(d)[-1] == ("correct and supported on hits", 0.7, False)
    assert d.next_experiment["a"].stage == "generation"
    assert d.next_experiment["a"].path[-1].question == (
        "Of the questions whose evidence reached the prompt, does the share answered correctly "
        "and faithfully reach its bar?"
    )


def test_path_ends_at_the_weakest_slice(tmp_path):
    a = [row(f"q{i}", slice="easy") for i in range(10)]
    a += [row(f"q{i}", slice="hard", correct=i != 19) for i in range(10, 20)]
    a += [row(f"q{i}", slice="tiny", correct=False) for i in range(20, 22)]  # weakest by chance
    d = run(tmp_path, a, a, named_cutoff=2)
    assert [p[2] for p in path_of(d)] == [True, True, True]
    experiment = d.next_experiment["a"]
    assert experiment.stage == "slices" and "hard" in experiment.change
    assert experiment.numbers["correct on hard"] == 0.9


def test_path_names_no_slice_where_nothing_fails(tmp_path):
    """Every link holds and no slice of 10 or more questions has a wrong answer: the experiment
    goes back to the last link rather than telling the reader to fix what fails in a slice
    that fails nowhere."""
    a = [row(f"q{i}", slice=f"s{i % 2}") for i in range(20)] + [row("q20", correct=False)]
    d = run(tmp_path, a, a, named_cutoff=2)
    experiment = d.next_experiment["a"]
    assert [p[2] for p in path_of(d)] == [True, True, True]
    assert experiment.stage == "generation" and "slice" not in experiment.change
    assert experiment.metric == "correct and supported on hits"


def test_past_every_bar_the_refusals_and_their_slice_read_a_refusal_as_right(tmp_path):
    """60 answerable questions all right; 20 unanswerable, 17 refused (correct logged false, as
    a judge writes) and 3 answered. The experiment was the generator's, judged by correct on
    hits at 1.000 already; with a slice column, "correct on offtopic" read 0.0 for 17 right
    refusals, a bar no change could pass."""
    a = [row(f"q{i}", slice=None) for i in range(60)]
    a += [
        row(f"q{i}", **UNANSWERABLE, slice=None, abstained=i < 77, correct=False)
        for i in range(60, 80)
    ]
    d = run(tmp_path, a, a, named_cutoff=2)
    assert path_of(d)[-1] == ("refused or correct on unanswerable questions", 0.85, True)
    assert d.next_experiment["a"].stage == "abstention"
    sliced = [dict(r, slice="offtopic" if r["answerable"] is False else "docs") for r in a]
    experiment = run(tmp_path, sliced, sliced, named_cutoff=2).next_experiment["a"]
    assert experiment.stage == "abstention"  # the 3 failing answers are the unanswerable ones
    # 6 of 60 answerable wrong now: more than the 3 unanswerable, so the slices; the weakest
    # is offtopic at 17 of 20 (a refusal is a right answer), not at 0 of 20
    failed = {f"q{i}" for i in range(6)}
    wrong = [dict(r, correct=False) if r["question_id"] in failed else r for r in sliced]
    experiment = run(tmp_path, wrong, wrong, named_cutoff=2).next_experiment["a"]
    assert experiment.stage == "slices" and "offtopic" in experiment.change
    assert experiment.numbers["correct on offtopic"] == 0.85


def test_without_abstained_the_unanswerable_step_speaks_of_correct_answers(tmp_path):
    a = [{k: v for k, v in row(f"q{i}").items() if k != "abstained"} for i in range(20)]
    a += [
        {k: v for k, v in row(f"q{i}", **UNANSWERABLE, correct=i < 25).items() if k != "abstained"}
        for i in range(20, 30)
    ]
    d = run(tmp_path, a, a, named_cutoff=2)
    step = d.next_experiment["a"].path[-1]
    assert (step.metric, step.value, step.passed) == (
        "correct on unanswerable questions",
        0.5,
        False,
    )
    assert step.question == (
        "Of the unanswerable questions, does the share answered correctly reach its bar?"
    )
    assert d.next_experiment["a"].change.endswith(
        ", and log abstained so the next report can count the refusals"
    )


def test_path_past_every_bar_without_slices_asks_for_them_beside_the_last_link(tmp_path):
    """No slice logged, every link holds, one answer wrong: the experiment was "log a slice
    column", judged by correct and supported on hits, which logging a column cannot move. It
    is the last link's experiment, as README says, with the slice column asked for beside it."""
    a = [row(f"q{i}", slice=None, correct=i != 0) for i in range(20)]
    experiment = run(tmp_path, a, a, named_cutoff=2).next_experiment["a"]
    assert experiment.stage == "generation"
    assert experiment.metric == "correct and supported on hits"
    assert experiment.change.startswith("put the strongest evidence first in the prompt")
    assert experiment.change.endswith(
        ", and log a slice column to find where the questions still fail"
    )


def test_path_of_a_run_where_no_answer_fails_asks_for_harder_questions(tmp_path):
    """Every answer right (an unanswerable question refused): no link or slice is called weak,
    and no experiment is judged by a score already at its best."""
    a = [row(f"q{i}", slice=f"s{i % 2}") for i in range(20)]
    a.append(row("q20", **UNANSWERABLE, abstained=True, correct=False))
    d = run(tmp_path, a, a, named_cutoff=2)
    experiment = d.next_experiment["a"]
    assert [p[2] for p in path_of(d)] == [True, True, True, True]
    assert experiment.stage == "golden set"
    assert experiment.metric == "correct on the added questions"
    assert "slice" not in experiment.change and "no answer fails" in experiment.change
    unjudged = a + [row("q21", correct=None)]
    assert "no judged answer fails" in run(tmp_path, unjudged, unjudged).next_experiment["a"].change
    shaky = a + [row("q21", faithfulness=0.0)]  # right but unsupported: generation again
    unsupported = run(tmp_path, shaky, shaky, named_cutoff=2)
    assert unsupported.next_experiment["a"].stage == "generation"


def test_path_does_not_fail_a_step_with_no_answer_to_judge(tmp_path):
    """Every question unanswerable: no answerable question to judge, so no step reads "n/a: no";
    the two missed abstentions are what the walk points at, past its bars: the abstention, not
    "log relevant_ids" (logged, and empty) judged by correct on no answerable question."""
    a = [row(f"q{i}", **UNANSWERABLE, abstained=i < 8, correct=False) for i in range(10)]
    d = run(tmp_path, a, a)
    experiment = d.next_experiment["a"]
    assert path_of(d) == [("refused or correct on unanswerable questions", 0.8, True)]
    assert experiment.stage == "abstention"
    assert experiment.metric == "refused or correct on unanswerable questions"
    assert "relevant_ids" not in experiment.change


def test_path_of_a_run_that_answers_its_unanswerable_questions_ends_at_the_abstention(tmp_path):
    """10 of 40 questions unanswerable: A refuses them all, B answers them all wrongly. Every
    answerable question was right, so the walk passed every bar and asked B to "log a slice
    column", judged by a metric that logging cannot move, while its failure classes named
    missed abstention."""
    a = [row(f"q{i}") for i in range(30)]
    a += [row(f"q{i}", **UNANSWERABLE, abstained=True, correct=False) for i in range(30, 40)]
    a = [dict(r, slice=None) for r in a]
    b = a[:30] + [dict(r, abstained=False) for r in a[30:]]
    d = run(tmp_path, a, b, named_cutoff=2)
    assert d.dominant["b"].failure_class == "missed abstention"
    assert path_of(d, "b")[-1] == ("refused or correct on unanswerable questions", 0.0, False)
    experiment = d.next_experiment["b"]
    assert experiment.stage == "abstention"
    assert experiment.metric == "refused or correct on unanswerable questions"
    assert d.next_experiment["a"].stage == "golden set"
    # a judge that calls an answer to an unanswerable question correct (it says there is no
    # answer) counts it as handled, as the failure classes do
    judged = a[:30] + [dict(r, abstained=False, correct=True) for r in a[30:]]
    assert run(tmp_path, a, judged).next_experiment["b"].stage == "golden set"


def test_path_without_retrieved_ids_starts_at_the_prompt(tmp_path):
    a = [{k: v for k, v in row(f"q{i}").items() if k != "retrieved_ids"} for i in range(4)]
    d = run(tmp_path, a, a)
    assert [p[0] for p in path_of(d)] == ["hit@context", "correct and supported on hits"]


# --- judge agreement, cost ---------------------------------------------------------------------


def test_cohen_kappa_against_a_hand_worked_table():
    # n = 50, p_o = 35/50 = 0.7; p_e = (25 * 30 + 25 * 20) / 50^2 = 0.5; kappa = 0.2 / 0.5
    assert cohen_kappa(np.array([[20, 5], [10, 15]])) == pytest.approx(0.4)
    assert cohen_kappa(np.array([[7, 0], [0, 3]])) == 1.0
    assert np.isnan(cohen_kappa(np.array([[4, 0], [0, 0]])))


def test_judge_agreement_pooled_over_both_runs(tmp_path):
    a = [
        row("q1", human_correct=True),
        row("q2", human_correct=False),
        row("q3", correct=False, human_correct=False),
        row("q4", human_correct=None),
    ]
    b = [
        row("q1", human_correct=True),
        row("q2", correct=False, human_correct=False),
        row("q3", correct=False, human_correct=True),
        row("q4", human_correct=None),
    ]
    d = run(tmp_path, a, b)
    assert set(d.judge_agreement) == {"correct"}
    agreement = d.judge_agreement["correct"]
    # judge x human: TT 2, TF 1, FT 1, FF 2; p_o = 4/6, p_e = (3*3 + 3*3)/36 = 0.5
    assert agreement.confusion == {
        "true": {"true": 2, "false": 1},
        "false": {"true": 1, "false": 2},
    }
    assert (agreement.n, agreement.accuracy) == (6, pytest.approx(4 / 6))
    assert agreement.kappa == pytest.approx(1 / 3)
    assert agreement.warning is not None and agreement.warning.startswith("Only 6 human labels")
    assert "only as good as the judge" in agreement.warning
    # per run: A agrees on q1, q3 (2 of 3), B on q1, q2 (2 of 3): no gap between the runs
    assert [agreement.by_run[r].accuracy for r in "ab"] == [pytest.approx(2 / 3)] * 2
    assert agreement.accuracy_gap == 0


def test_judge_that_favours_one_run_is_flagged(tmp_path):
    # the judge agrees with humans on all 4 of A's answers and on 1 of B's 4
    a = [row(f"q{i}", correct=i < 2, human_correct=i < 2) for i in range(4)]
    b = [row(f"q{i}", correct=True, human_correct=i < 1) for i in range(4)]
    agreement = run(tmp_path, a, b).judge_agreement["correct"]
    assert (agreement.n, agreement.accuracy) == (8, pytest.approx(5 / 8))
    assert agreement.by_run["a"].accuracy == 1.0 and agreement.by_run["b"].accuracy == 0.25
    assert agreement.accuracy_gap == pytest.approx(-0.75)
    assert agreement.warning is not None
    assert agreement.warning.startswith(
        "The judge agrees with humans on 100% of A's answers and 25%"
    )


def test_human_labels_of_one_run_are_not_called_both_runs_nor_missing(tmp_path, compare):
    """B logs human_correct but every value is null: the page's one row is A's answers, says
    B's have none, and the section is not listed among those wanting a column."""
    a = [row(f"q{i}", correct=i % 2 == 0, human_correct=i % 3 == 0) for i in range(6)]
    b = [row(f"q{i}", correct=i % 2 == 0, human_correct=None) for i in range(6)]
    paths = []
    for name, rows in (("a", a), ("b", b)):
        frame = pd.DataFrame(rows)
        frame["human_correct"] = frame["human_correct"].astype("boolean")
        frame.to_parquet(tmp_path / f"{name}.parquet")
        paths.append(tmp_path / f"{name}.parquet")
    doc = compare(*paths, tmp_path / "out")
    agreement = doc["judge_agreement"]["correct"]
    assert set(agreement["by_run"]) == {"a"} and agreement["accuracy_gap"] is None
    assert "judge agreement" not in [m["stage"] for m in doc["missing"]]
    text = page_text(tmp_path / "out" / "report.html")
    # agree on q0, q1, q5 of 6: judge T F T F T F, human T F F T F F
    assert "correct, A's answers only (B's have no human label) 6 0.500" in text
    section = text.split("Can the judge be trusted?")[1].split("What it costs")[0]
    assert "correct, both runs" not in section


def test_cost_differences_and_summary(tmp_path):
    a = [row(f"q{i}", correct=i < 2, latency_ms=100.0, cost_usd=0.002) for i in range(4)]
    b = [row(f"q{i}", correct=i < 3, latency_ms=150.0, cost_usd=0.001) for i in range(4)]
    d = run(tmp_path, a, b)
    latency = d.cost["latency_ms"]
    assert (latency.comparison.diff, latency.comparison.ci_low) == (50.0, 50.0)
    assert latency.relative_pct == pytest.approx(50.0)
    assert d.cost["cost_usd"].relative_pct == pytest.approx(-50.0)
    assert d.summary == "B is +25.0 points on correct at +50% latency and \u221250% cost."
    assert "context_tokens" not in d.cost


def test_a_cost_that_starts_from_zero_is_named_in_the_summary(tmp_path):
    """No share of 0 exists: the summary says what B costs rather than leaving the cost out."""
    a = [row(f"q{i}", latency_ms=100.0, cost_usd=0.0, context_tokens=0) for i in range(4)]
    b = [row(f"q{i}", latency_ms=80.0, cost_usd=0.01, context_tokens=0) for i in range(4)]
    d = run(tmp_path, a, b)
    assert d.cost["context_tokens"].relative_pct == 0.0  # 0 -> 0: no change
    assert d.summary == (
        "B is 0.0 points on correct at −20% latency, cost from 0 to 0.01000 USD and 0% "
        "context tokens."
    )


# --- the sample logs ---------------------------------------------------------------------------


def test_sample_runs_tell_the_story(tmp_path):
    db = RunDatabase(
        open_run(SAMPLES / "fare_rules_a_baseline.parquet", "A"),
        open_run(SAMPLES / "fare_rules_b_reranker.parquet", "B"),
    )
    try:
        db.prepare(None)
        pairs = db.pairs("answer_stage", k=None)
        curve = db.frame("metric_curve", depth=20, cutoffs=list(range(1, 21)), exponential=True)
    finally:
        db.close()
    d = diagnose(pairs, curve, 5, n_boot=1000, confidence=0.95, seed=0)
    assert d.dominant["a"].failure_class == "ranking miss"
    assert d.dominant["b"].failure_class == "hallucination"
    assert d.dominant["b"].owner == "generation"
    assert d.cost["latency_ms"].comparison.ci_low > 0
    assert d.next_experiment["a"].stage == "ranking"
    assert d.next_experiment["b"].stage == "generation"
    assert d.judge_agreement["correct"].accuracy == 0.875
    assert len(d.broken) == 10 and d.missing == ()
    assert d.summary is not None and d.summary.startswith("B is +9.2 points on correct at +41%")
    json.dumps(diagnosis_fields(d), allow_nan=False)


def test_a_correct_answer_from_an_empty_prompt_is_answered_from_memory(tmp_path):
    """A question whose prompt held no passage, answered correctly with faithfulness 1.0 (a
    judge's reading of an answer with no context), was classed "unlabelled support", whose
    fix is a label for a passage of the prompt: it had none. A prompt without its evidence
    still reads unlabelled support."""
    from click.testing import CliRunner

    from reportgen.cli import cli

    rows = [
        {"question_id": f"q{i}", "retrieved_ids": [f"p{i}", "x", "y"], "relevant_ids": [f"p{i}"],
         "context_ids": [f"p{i}", "x"], "correct": i % 3 != 0,
         "faithfulness": 1.0 if i % 3 else 0.2}
        for i in range(30)
    ]  # fmt: skip
    a, b = pd.DataFrame(rows), pd.DataFrame(rows)
    b.at[0, "context_ids"], b.at[0, "correct"], b.at[0, "faithfulness"] = [], True, 1.0
    b.at[1, "context_ids"], b.at[1, "faithfulness"] = ["x"], 1.0
    a.to_parquet(tmp_path / "a.parquet")
    b.to_parquet(tmp_path / "b.parquet")
    per_question = tmp_path / "q.parquet"
    args = ["compare", str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), "-o",
            str(tmp_path / "r.html"), "--per-question", str(per_question)]  # fmt: skip
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    classes = pd.read_parquet(per_question).set_index("question_id")["failure_class_b"]
    assert (classes["q0"], classes["q1"], classes["q2"]) == (
        "answered from memory",
        "unlabelled support",
        "ok",
    )
