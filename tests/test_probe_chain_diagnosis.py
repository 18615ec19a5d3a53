"""The 2x2 cells, the failure classes and the next experiment: each sentence against its numbers."""

from __future__ import annotations

import html
import re

from reportgen.diagnosis.stages import CELL_TITLES, FAILURE_CLASSES


def row(qid: str, **overrides) -> dict:
    """Evidence 'e' ranked first and in the prompt, answered correctly and faithfully."""
    return {
        "question_id": qid,
        "retrieved_ids": ["e", "x1", "x2"],
        "relevant_ids": ["e"],
        "context_ids": ["e", "x1"],
        "correct": True,
        "faithfulness": 1.0,
    } | overrides


MISSED = {"retrieved_ids": ["x1", "x2", "x3"], "context_ids": ["x1", "x2"]}


def test_a_cell_never_shares_a_failure_class_name_that_counts_other_questions(
    tmp_path, write_log, compare
):
    """A correct answer without its evidence in the prompt is a class of its own, 'answered from
    memory' when unsupported and 'unlabelled support' when supported; the 2x2 counts it good
    only when supported, so the unsupported one sits in the retrieval failure cell. The cells'
    names are none of the classes'."""
    rows = [
        row("works"),
        row("memory_unsupported", **MISSED, faithfulness=0.0),
        row("memory_supported", **MISSED),
        row("wrong", correct=False, faithfulness=0.0),
    ]
    log = write_log(tmp_path / "a.parquet", rows)
    doc = compare(log, log, tmp_path / "out")
    assert doc["failure_classes"]["a"]["answered from memory"] == 1
    assert doc["failure_classes"]["a"]["unlabelled support"] == 1
    assert doc["failure_classes"]["a"]["generation failure"] == 0
    assert doc["cells_supported"]["a"] == {
        "working_as_designed": 1,
        "generation_failure": 1,
        "answered_from_memory": 1,
        "retrieval_failure": 1,
    }
    page = (tmp_path / "out" / "report.html").read_text()
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))
    table = text[text.index("Retrieval by answer") : text.index("Which link failed")]
    assert "1 good without evidence" in table and "1 failed despite evidence" in table
    # evidence missing from the prompt is not always the retriever's: the classes tell which
    assert "1 failed without evidence" in table and "retrieval failure" not in table
    assert "answered from memory" not in table and "generation failure" not in table
    assert not set(CELL_TITLES.values()) & set(FAILURE_CLASSES)


def test_the_report_counts_every_answer_left_out_of_the_2x2(tmp_path, write_log, compare):
    """A correct answer whose faithfulness is null keeps its class but has no cell (support
    cannot be told): the report names it beside the unjudged answer, so the 2 answers of 4 that
    A's 2x2 lacks are both accounted for."""
    rows = [
        row("works"),
        row("unjudged", correct=None),
        row("correct_unscored", faithfulness=None),
        row("wrong", correct=False),
    ]
    doc = compare(
        write_log(tmp_path / "a.parquet", rows),
        write_log(tmp_path / "b.parquet", [row(r["question_id"]) for r in rows]),
        tmp_path / "out",
    )
    assert sum(doc["cells_supported"]["a"].values()) == 2
    missing = {m["stage"]: m["needs"] for m in doc["missing"]}
    assert missing["failure class and cell of 1 of A's answers"] == "correct on every answer"
    assert missing["cell of 1 of A's correct answers"] == "faithfulness on every correct answer"
    assert not any("of B's" in stage for stage in missing)


def test_golden_set_advice_does_not_claim_an_unjudged_link_passed(tmp_path, write_log, compare):
    """A's only hit has no verdict, so the generation step has nothing to judge and is skipped:
    the advice may say the links it measured pass, not every link."""
    a = [row("hit_unjudged", correct=None), row("unlabelled", relevant_ids=None)]
    doc = compare(
        write_log(tmp_path / "a.parquet", a),
        write_log(tmp_path / "b.parquet", [row("hit_unjudged"), row("unlabelled")]),
        tmp_path / "out",
    )
    a_next, b_next = doc["next_experiment"]["a"], doc["next_experiment"]["b"]
    assert [s["metric"] for s in a_next["path"]] == ["hit@3", "hit@2"]
    assert a_next["stage"] == "golden set"
    assert a_next["text"].startswith("Every link with something to judge passes its bar and no ")
    assert b_next["text"].startswith("Every link passes its bar and no answer fails")
