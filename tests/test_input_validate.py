"""``validate`` refuses what ``compare`` refuses, with the same sentence, labelled as an error."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from test_readers import fail

from reportgen.cli import cli


def validate(*args: object, code: int) -> list[str]:
    result = CliRunner().invoke(cli, ["validate", *map(str, args)])
    assert result.exit_code == code, result.output
    return result.output.strip().splitlines()


def labelled(path: object, refusal: str) -> str:
    """compare's ``refusal`` of the log ``path`` as validate lists it: ``PATH: error: ...``, as
    every line of a problem that refuses the log (a row problem's too)."""
    return f"{path}: error: {refusal.removeprefix(f'{path}: ')}"


def test_a_log_with_no_metric_is_refused_as_compare_refuses_it(tmp_path):
    log = tmp_path / "run.parquet"
    pq.write_table(pa.table({"question_id": ["q1", "q2"], "question": ["a", "b"]}), log)
    refusal = fail("compare", log, log, "-o", tmp_path / "r.html").split("error: ", 1)[1]
    assert "no metric can be computed" in refusal and refusal.count(str(log)) == 1
    assert validate(log, code=2) == [labelled(log, refusal)]


@pytest.mark.parametrize(
    ("columns", "found"),
    [
        (  # the columns of retrieval metrics, but not one labelled question
            {"relevant_ids": [[], []], "context_ids": [["p1"], ["p2"]]},
            "no metric can be computed",
        ),
        (
            {"faithfulness": pa.array([None, None], pa.float64())},
            # "no paired question ... in both runs" named a pairing of one file
            "no question has a value of faithfulness (null throughout); log its values",
        ),
    ],
)
def test_a_log_whose_values_give_no_metric_is_refused_as_compare_refuses_it(
    tmp_path, columns, found
):
    log = tmp_path / "run.parquet"
    pq.write_table(pa.table({"question_id": ["q1", "q2"], **columns}), log)
    refusal = fail("compare", log, log, "-o", tmp_path / "r.html").split("error: ", 1)[1]
    assert found in refusal and refusal.count(str(log)) == 1
    assert validate(log, code=2) == [labelled(log, refusal)]


def test_a_promptfoo_file_of_no_outcome_is_refused_as_one_file(tmp_path):
    path = tmp_path / "out.json"
    path.write_text('{"results": [{"a": 1}]}')  # a result that names nothing promptfoo writes
    assert validate(path, code=2)[0] == (
        f"{path}: error: result 1 is no promptfoo result (it has none of prompt, provider, "
        "response, success, testCase); check --format, or pass the file `promptfoo eval -o "
        "out.json` writes"
    )
    path.write_text('{"results": [{"provider": "p", "prompt": {"raw": "x"}}]}')
    assert validate(path, code=2)[0] == (
        f"{path}: error: no question has a value of correct or score (null throughout); log "
        "their values"
    )


@pytest.mark.parametrize(
    "columns",
    [
        {"relevant_ids": [["p1"]], "context_ids": [["p1"]]},
        {"correct": [True]},
        {"retrieved_ids": [["p1", "p2"]], "correct": [True]},  # no labels: no --k to ask for
    ],
)
def test_a_log_compare_scores_is_ok(tmp_path, columns):
    log = tmp_path / "run.parquet"
    pq.write_table(pa.table({"question_id": ["q1"], **columns}), log)
    assert validate(log, code=0) == [f"{log}: ok, 1 row follows the run-log contract"]


def _trec(tmp_path: Path, qrels: str) -> tuple[Path, Path]:
    run, judged = tmp_path / "run.trec", tmp_path / "judged.qrels"
    run.write_text("q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.5 r\nq2 Q0 d3 1 1.0 r\n")
    judged.write_text(qrels)
    return run, judged


@pytest.mark.parametrize(
    ("qrels", "found"),
    [
        ("", "has no judgement"),
        ("q9 0 d1 1\n", "judges none of the run's topics"),
        ("q1 0 d1 0\n", "judges no document of the run's topics relevant (grade >= 1)"),
    ],
)
def test_qrels_with_no_relevant_document_of_the_run_are_refused(tmp_path, qrels, found):
    run, judged = _trec(tmp_path, qrels)
    line = fail("compare", run, run, "-o", tmp_path / "r.html", "--k", 2, "--qrels", judged)
    assert f"{judged}: {found}, so no metric can be computed; pass the qrels of this run" in line
    # the qrels file is named after the log validated, whose check it failed
    expected = f"{run}: error: {line.split('error: ', 1)[1]}"
    assert validate(run, "--qrels", judged, code=2) == [expected]


@pytest.mark.parametrize("level", [1, 2])
def test_a_lower_rel_level_is_advised_only_where_there_is_one(tmp_path, level):
    """Grades all 0 at the default --rel-level 1 were refused "...; pass the qrels of this run,
    or a lower --rel-level if lower grades mean relevant", an option that refuses 0."""
    run, judged = _trec(tmp_path, "q1 0 d1 0\nq1 0 d2 1\n" if level == 2 else "q1 0 d1 0\n")
    args = ("-o", tmp_path / "r.html", "--k", 2, "--qrels", judged, "--rel-level", level)
    line = fail("compare", run, run, *args)
    assert line.endswith(
        "pass the qrels of this run, or a lower --rel-level if lower grades mean relevant"
        if level == 2
        else "pass the qrels of this run"
    )


def test_a_reader_s_own_refusal_is_not_replaced_by_the_file_s_schema(tmp_path):
    """A --map'd log lacks question_id until mapped: the refusal of the mapping is the one to
    show, not the raw file's "no question_id column"."""
    path = tmp_path / "m.parquet"
    pq.write_table(pa.table({"qid": ["q1", "q2"], "ok": [True, False]}), path)
    assert validate(path, "--map", "question_id=nope", code=2) == [
        f"{path}: error: --map question_id=nope: no column 'nope'; the file's columns are qid, ok"
    ]


def test_a_value_out_of_range_is_listed_with_every_other_problem(tmp_path):
    """A 0/1 column holding 2 stopped validate at that row, and nothing else was listed, where
    validate lists every problem by kind: each such column's first value is listed, in row
    order, with the sentence compare refuses the log with, and the row problems after them."""
    log = tmp_path / "run.parquet"
    table = {
        "question_id": ["q1", "q2", "q3", "q3"],
        "faithfulness": [0.5, 1.5, 0.0, 0.2],
        "abstained": [0, 0, 0, 3],
        "correct": [1, 2, 0, 1],
    }
    pq.write_table(pa.table(table), log)
    refusal = fail("compare", log, log, "-o", tmp_path / "r.html").split("error: ", 1)[1]
    flag = (
        "a true/false column logged as numbers holds 1 (true) or 0 (false): fix the value in "
        "the log"
    )
    assert refusal == f"{log}: row 2 (question_id 'q2'): correct has 2; {flag}"
    lines = validate(log, code=2)
    assert lines[:2] == [
        labelled(log, refusal),
        f"{log}: error: row 4 (question_id 'q3'): abstained has 3; {flag}",
    ]
    assert lines[2].startswith(f"{log}: error: 1 row with share_range in faithfulness: row 2 ")
    assert lines[3].startswith(f"{log}: error: 1 row with duplicate_id in question_id: row 4 ")
    assert len(lines) == 4


def test_a_ranking_without_context_ids_is_said_to_need_k(tmp_path):
    """validate said "ok" with no word of the --k compare then asks for."""
    log = tmp_path / "ranked.parquet"
    table = {"question_id": ["q1", "q2"], "retrieved_ids": [["p1", "p2"], ["p3"]],
             "relevant_ids": [["p2"], ["p3"]]}  # fmt: skip
    pq.write_table(pa.table(table), log)
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table(table), other)
    asked = (
        "no context_ids column, so the prompt cutoff is unknown; pass --k with the number of "
        "passages the generator received"
    )
    refusal = fail("compare", log, other, "-o", tmp_path / "r.html")
    assert refusal == f"ragreport: error: {log} and {other}: {asked}"
    assert validate(log, code=0) == [
        f"{log}: ok, 2 rows follow the run-log contract; compare: {asked}"
    ]


def test_a_ranking_with_values_left_out_is_still_said_to_need_k(tmp_path):
    """Values left out (an inf latency) are no refusal, but their line replaced the "ok" line,
    and with it the --k compare asks for: validate passed a log compare then refused."""
    log = tmp_path / "ranked.parquet"
    table = {"question_id": ["q1", "q2"], "retrieved_ids": [["p1", "p2"], ["p3"]],
             "relevant_ids": [["p2"], ["p3"]], "latency_ms": [float("inf"), 5.0]}  # fmt: skip
    pq.write_table(pa.table(table), log)
    lines = validate(log, code=0)
    assert [line.split(": ")[1] for line in lines] == ["left out", "compare"]
    assert lines[1] == (
        f"{log}: compare: no context_ids column, so the prompt cutoff is unknown; pass --k with "
        "the number of passages the generator received"
    )


@pytest.mark.parametrize("suffix", ["parquet", "feather", "csv", "jsonl"])
def test_every_schema_breach_is_listed_whatever_the_format(tmp_path, suffix):
    """validate lists every breach of the schema, one line each; it did so for a Parquet log
    only, and stopped at the first one of a Feather, CSV or JSON Lines log, so a user fixed a
    column, ran it again and met the next."""
    path = tmp_path / f"run.{suffix}"
    frame = pd.DataFrame({"qid": ["q1", "q2"], "Correct": [1, 0], "faithfulness": [0.5, 0.7]})
    {
        "parquet": lambda: frame.to_parquet(path),
        "feather": lambda: frame.to_feather(path),
        "csv": lambda: frame.to_csv(path, index=False),
        "jsonl": lambda: frame.to_json(path, orient="records", lines=True),
    }[suffix]()
    assert validate(path, code=2) == [
        f"{path}: error: column 'Correct' is the run-log column 'correct' in another case and "
        "would not be read; rename it, or map it with --map correct=Correct",
        f"{path}: error: no question_id column; every run log needs one row per question with a "
        "unique question_id",
    ]


def test_values_compare_leaves_out_as_unknown_are_named(tmp_path):
    """validate said "ok" for a log whose nulls compare then left out with a warning: labelled
    questions without a prompt (their retrieval metrics unknown) and a score null."""
    sample = Path(__file__).resolve().parent.parent / "sample_runs"
    run = pd.read_parquet(sample / "fare_rules_a_baseline.parquet")
    labelled = run.index[run.relevant_ids.str.len() > 0]
    unlabelled = run.index[run.relevant_ids.str.len() == 0]
    for row in [*labelled[:7], unlabelled[0]]:  # an unlabelled question has no metric to lose
        run.at[row, "context_ids"] = None
    run.loc[labelled[10], "faithfulness"] = None
    log = tmp_path / "nulls.parquet"
    run.to_parquet(log)
    ids = run.question_id[labelled[:5]].tolist()
    assert validate(log, code=0) == [
        f"{log}: left out: 7 questions with labelled evidence and context_ids null: "
        f"{', '.join(ids)} and 2 more; compare leaves their retrieval metrics out as unknown; "
        "log context_ids for every question (an empty list when there was none)",
        f"{log}: left out: 1 question with faithfulness null: {run.question_id[labelled[10]]}; "
        "compare scores faithfulness on the other questions only, and its interval, test and "
        "gate rules read them alone",
    ]
    # the counts are compare's own
    out = tmp_path / "out"
    out.mkdir()
    result = CliRunner().invoke(cli, ["compare", str(log), str(log), "-o", str(out / "r.html")])
    assert result.exit_code == 0, result.output
    warnings = (out / "r.json").read_text()
    assert "7 paired questions have context_ids null in one run or both" in warnings
    assert "faithfulness is compared on 239 of 240 paired questions" in warnings


def test_a_score_null_throughout_and_samples_left_out_are_named(tmp_path):
    """validate said "ok" where compare left faithfulness out (null on every question) and
    where a question's mean left out one of its samples (its context_ids or correct null)."""
    sample = Path(__file__).resolve().parent.parent / "sample_runs"
    run = pd.read_parquet(sample / "fare_rules_a_baseline.parquet")
    run["faithfulness"] = None
    log = tmp_path / "unscored.parquet"
    run.to_parquet(log)
    assert validate(log, code=0) == [
        f"{log}: left out: faithfulness is null on every question, so compare leaves it out of "
        "the comparison; log it where it was scored"
    ]
    run = pd.read_parquet(sample / "fare_rules_a_baseline.parquet")
    samples = pd.concat([run.assign(sample=s) for s in range(3)], ignore_index=True)
    samples["correct"] = samples["correct"].astype("boolean")
    first, second = (samples.index[(samples.question_id == "q0002") & (samples["sample"] == s)]
                     for s in (0, 1))  # fmt: skip
    samples.at[first[0], "context_ids"] = None
    samples.loc[second, "correct"] = pd.NA
    log = tmp_path / "samples.parquet"
    samples.to_parquet(log)
    assert validate(log, code=0) == [
        f"{log}: left out: 1 sample of 1 question with context_ids null while other samples of "
        "the question have it (q0002: sample 0); compare leaves each out of its question's "
        "retrieval metrics, the mean over the question's other samples",
        f"{log}: left out: 1 sample of 1 question with correct null while other samples of the "
        "question have it (q0002: 1 of 3 samples); compare's correct of each such question is "
        "the mean over its other samples",
    ]


def test_a_log_whose_every_prompt_is_empty_leaves_out_its_retrieval_metrics(tmp_path):
    """validate said "ok" for a log whose every prompt is empty, where compare scored every
    retrieval metric at k = 0 (named @0, 0 throughout); a log with no answer score is refused
    as compare refuses it."""
    sample = Path(__file__).resolve().parent.parent / "sample_runs"
    run = pd.read_parquet(sample / "fare_rules_a_baseline.parquet")
    run["context_ids"] = [[] for _ in range(len(run))]
    log = tmp_path / "closed_book.parquet"
    run.to_parquet(log)
    reason = (
        "every prompt is empty (context_ids holds no passage on any question); pass --k N to "
        "score the first N passages of retrieved_ids"
    )
    assert validate(log, code=0) == [f"{log}: left out: the retrieval metrics: {reason}"]
    ranked = tmp_path / "ranked.parquet"
    run[["question_id", "retrieved_ids", "relevant_ids", "context_ids"]].to_parquet(ranked)
    assert validate(ranked, code=2) == [f"{ranked}: error: {reason}"]


def test_a_repeated_sample_of_a_question_is_named_with_its_sample(tmp_path):
    """In a log of samples a question_id repeats by design: what repeats is the question and
    its sample, which the line names (it said only "repeats a question_id")."""
    log = tmp_path / "run.parquet"
    rows = {"question_id": ["q1", "q1", "q2", "q1"], "sample": ["0", "1", "0", "0"],
            "correct": [True, False, True, True]}  # fmt: skip
    pq.write_table(pa.table(rows), log)
    lines = validate(log, code=2)
    assert any(
        "row 4 (question_id 'q1') repeats a question_id (and its sample 0, first seen at row 1)"
        in line
        for line in lines
    ), lines
    refusal = fail("compare", log, log, "-o", tmp_path / "r.html")
    assert "question_id 'q1' with sample 0 appears in rows 1 and 4;" in refusal
    without = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"question_id": ["q1", "q1"], "correct": [True, False]}), without)
    assert any(
        "row 2 (question_id 'q1') repeats a question_id (first seen at row 1)" in line
        for line in validate(without, code=2)
    )


def test_every_line_of_a_refusal_says_error_after_its_file(tmp_path):
    """A row problem's line said "error:", a value, schema or file problem's did not, though
    each refuses the log as much: a script that looks for "error:" missed them."""
    (tmp_path / "shards").mkdir()
    logs = {
        "schema.parquet": pd.DataFrame({"qid": ["q1"], "correct": [True]}),
        "value.parquet": pd.DataFrame({"question_id": ["q1", "q2"], "correct": [1.0, 0.5]}),
        "rows.parquet": pd.DataFrame({"question_id": ["q1", "q1"], "correct": [True, False]}),
        "nothing.parquet": pd.DataFrame({"question_id": ["q1"], "question": ["a"]}),
        "shards/part-0.parquet": pd.DataFrame({"question_id": ["q1"], "correct": [1.0]}),
        "shards/part-1.parquet": pd.DataFrame({"question_id": ["q2"], "correct": [2.0]}),
    }
    for name, frame in logs.items():
        frame.to_parquet(tmp_path / name)
    paths = [tmp_path / n for n in ("schema", "value", "rows", "nothing")]
    lines = validate(*(p.with_suffix(".parquet") for p in paths), tmp_path / "shards",
                     tmp_path / "missing.parquet", code=2)  # fmt: skip
    files = [*(f"{p}.parquet" for p in paths), tmp_path / "shards/part-1.parquet"]
    files.append(tmp_path / "missing.parquet")
    assert [line.split(": error: ")[0] for line in lines] == list(map(str, files))
    assert [line.split(": error: ")[1].split(" ")[0] for line in lines] == [
        "no",  # question_id column
        "row",  # 2 (question_id 'q2'): correct has 0.5
        "1",  # row with duplicate_id
        "no",  # metric can be computed
        "row",  # 1 (question_id 'q2'): correct has 2.0
        "no",  # such file
    ]
