"""RAGAS and JSON inputs that once ended in a traceback, a wrong score or a misleading line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from test_eval_tool_readers import ragas_frame

from reportgen.cli import cli

QUESTIONS = [f"Question {i}?" for i in range(12)]
RETRIEVED = "(candidate passages as ranked by the retriever, best first; may be longer than k)"


def refused(*args: object) -> str:
    """Run the CLI expecting bad input: exit 2, one line of output, no traceback; the line as
    compare's after its prefix "ragreport: error: " (validate's names the log, then "error: ")."""
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    if args[0] == "validate":
        assert lines[0].startswith(f"{args[1]}: error: "), lines[0]
        return lines[0].replace(": error: ", ": ", 1)
    return lines[0].removeprefix("ragreport: error: ")


def written(frame: pd.DataFrame, path: Path) -> Path:
    """``frame`` written as pandas writes a table of ``path``'s suffix (Parquet, JSONL, CSV)."""
    if path.suffix == ".parquet":
        frame.to_parquet(path)
    elif path.suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_csv(path, index=False)
    return path


def write_duckdb_csv(path: Path) -> Path:
    """A RAGAS table with its contexts written as DuckDB's COPY ... TO 'x.csv' writes lists."""
    path.write_text(
        "user_input,retrieved_contexts,faithfulness\n"
        'What is the refund window?,"[Refunds within 24 h., Fees apply.]",1.0\n'
        "Can I change my flight?,[Changes cost 50 EUR.],0.5\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("command", ["validate", "convert", "compare"])
def test_a_duckdb_list_is_refused_in_one_line_naming_the_files_column(tmp_path, command):
    log = write_duckdb_csv(tmp_path / "ragas_duckdb.csv")
    args = {
        "validate": ("validate", log),
        "convert": ("convert", log, "-o", tmp_path / "out.parquet"),
        "compare": ("compare", log, log, "-o", tmp_path / "r.html"),
    }[command]
    line = refused(*args)
    assert line == (
        f"{log}: line 2, column retrieved_contexts: '[Refunds within 24 h., Fees apply.]' is not "
        "a list: its items are not quoted (as DuckDB writes lists), and a comma inside a text "
        'would split it; write a JSON array such as ["p1", "p2"] or a Python list literal, or '
        f"save the log as Parquet or JSONL {RETRIEVED}; fix the value or drop the column"
    )


def ragas_scores(folder: Path, suffix: str) -> tuple[Path, Path]:
    """Two RAGAS runs; B's context_recall failed on every row (NaN throughout)."""
    a = pd.DataFrame(
        {
            "user_input": QUESTIONS,
            "faithfulness": np.linspace(0.1, 0.9, 12),
            "context_recall": np.linspace(0.2, 0.8, 12),
        }
    )
    b = a.assign(faithfulness=np.linspace(0.2, 1.0, 12), context_recall=np.nan)
    paths = folder / f"ra.{suffix}", folder / f"rb.{suffix}"
    for path, frame in zip(paths, (a, b), strict=True):
        frame.to_csv(path, index=False) if suffix == "csv" else frame.to_parquet(path)
    return paths


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_ragas_score_failed_on_every_row_is_left_out_and_counted(tmp_path, compare, suffix):
    a, b = ragas_scores(tmp_path, suffix)
    out = compare(a, b, tmp_path / "out", "--n-boot", 100)
    assert "context_recall" not in out["metrics"]
    assert out["metrics"]["faithfulness"]["n"] == 12
    warnings = out["warnings"]
    assert "Run B: 12 rows have no context_recall (NaN: the RAGAS metric failed)" in warnings
    assert any(
        "context_recall: no paired question has a value in both runs, so it is left out of the "
        "comparison" in w
        for w in warnings
    ), warnings
    text = " ".join(warnings)
    assert "holds" not in text and "VARCHAR" not in text and "NULL" not in text


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_validate_and_metrics_say_what_compare_warns_of_a_failed_ragas_score(tmp_path, suffix):
    """validate said only "ok" and metrics only "wrote" of a table whose context_recall failed
    on every row: the scores compare leaves out, and warns of, went unmentioned. metrics prints
    the reader's notes as convert does."""
    _, b = ragas_scores(tmp_path, suffix)
    failed = "12 rows have no context_recall (NaN: the RAGAS metric failed)"
    result = CliRunner().invoke(cli, ["validate", str(b)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        f"{b}: ok, 12 rows follow the run-log contract",
        f"{b}: note: Questions paired on a hash of user_input (RAGAS rows carry no id)",
        f"{b}: note: {failed}",
    ]
    result = CliRunner().invoke(cli, ["metrics", str(b), "-o", str(tmp_path / "m.parquet")])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-2:] == [
        failed,
        f"wrote {tmp_path / 'm.parquet'} (12 questions)",
    ]


def test_a_csv_metric_empty_in_every_row_of_one_run_agrees_with_parquet(tmp_path, compare):
    a, b = tmp_path / "ja.csv", tmp_path / "jb.csv"
    a.write_text("question_id,correct,judge\nq1,true,0.5\nq2,false,0.7\nq3,true,0.2\n")
    b.write_text("question_id,correct,judge\nq1,true,\nq2,false,\nq3,true,\n")
    reports = {}
    for kind in ("csv", "parquet"):
        logs = [a, b]
        if kind == "parquet":
            logs = [tmp_path / "ja.parquet", tmp_path / "jb.parquet"]
            for text, path in zip((a, b), logs, strict=True):
                pd.read_csv(text).to_parquet(path)
        reports[kind] = compare(*logs, tmp_path / kind, "--n-boot", 100, "--metric", "judge")
    for out in reports.values():
        assert "judge" not in out["metrics"]
        assert out["metrics"]["correct"]["n"] == 3
        assert any(w.startswith("judge: no paired question has a value") for w in out["warnings"])


def test_retrieved_ids_against_reference_texts_are_refused(tmp_path):
    frame = pd.DataFrame(
        {
            "user_input": ["Refund window?", "Change fee?", "Baggage?"],
            "retrieved_context_ids": [["p1", "p2"], ["p3"], ["p4"]],
            "reference_contexts": [["Refunds within 24 h."], ["Changes cost 50 EUR."], ["Bag."]],
            "faithfulness": [1.0, 0.5, 0.2],
        }
    )
    a, b = tmp_path / "ids_a.parquet", tmp_path / "ids_b.parquet"
    frame.to_parquet(a)
    frame.assign(faithfulness=[0.9, 0.6, 0.4]).to_parquet(b)
    line = refused("compare", a, b, "-o", tmp_path / "r.html")
    assert line == (
        f"{a}: retrieved_context_ids are passage ids but reference_contexts "
        "are texts, so no passage can match; log reference_context_ids, or retrieved_contexts "
        "(texts) to hash both sides"
    )


def test_runs_identifying_passages_differently_are_said_to(tmp_path, compare):
    """Run A logs passage ids, run B only texts (hashed): every label differs, which read as
    "The golden set changed between the runs on 3 questions" and nothing more."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    ragas_frame([1.0, 0.5, 0.2], True).to_json(a, orient="records", lines=True)
    ragas_frame([0.9, 0.6, 0.4], False).to_json(b, orient="records", lines=True)
    apart = (
        "run A identifies passages by ids (reference_context_ids) and run B by hashes of their "
        "texts (reference_contexts), so no label of one can equal the other's: log the same "
        "kind in both runs"
    )
    out = compare(a, b, tmp_path / "o", "--n-boot", 100)
    changed = [w for w in out["warnings"] if w.startswith("The golden set changed")]
    assert len(changed) == 1 and changed[0].endswith(f"own labels there; {apart}")
    line = refused("compare", a, b, "--strict", "-o", tmp_path / "r.html")
    assert line.endswith(f"or drop --strict to see the report with a warning; {apart}")


def test_unpaired_ragas_questions_are_named_by_line_and_text(tmp_path):
    """They were named by the hashes they are paired on ('q-02b466e97204b670'), and a text
    saved with CRLF inside in one run and LF in the other paired with nothing, unsaid."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    long = "How long does a refund of a cancelled flight take, and who pays for it?"
    for path, questions in (
        (a, ["Refund window?\r\nsecond", long]),
        (b, ["Refund window?\nsecond", "Other?"]),
    ):
        frame = pd.DataFrame({"user_input": questions, "faithfulness": [1.0, 0.5]})
        frame.to_json(path, orient="records", lines=True)
    line = refused("compare", a, b, "-o", tmp_path / "r.html")
    assert line == (
        f"{a} and {b}: no question_id in common ({a}'s line 1 ('Refund window?\\r\\nsecond'), "
        "line 2 ('How long does a refund of a cancelled flight take, and who p...'); "
        f"{b}'s line 1 ('Refund window?\\nsecond'), line 2 ('Other?')); 1 question differs only "
        "in line endings or "
        f"spaces ({a}'s line 1, {b}'s line 1), and RAGAS rows are paired on the exact "
        "user_input: write it alike in both runs; compare two runs of the same question set"
    )


def test_a_json_array_of_records_reads_as_its_rows(tmp_path, compare):
    """pandas' to_json(orient="records") writes a table as a JSON array of objects: it was
    refused and sent to JSON Lines. It reads as the same rows in JSON Lines (a RAGAS table
    too, by its columns); an array of other items, or none, is refused in one line."""
    rows = [
        {"question_id": f"q{i}", "correct": i % 3 != 0, "faithfulness": (i % 4) / 4}
        for i in range(12)
    ]
    records, lines = tmp_path / "run_records.json", tmp_path / "run.jsonl"
    records.write_text(json.dumps(rows))
    lines.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = compare(records, records, tmp_path / "r", "--n-boot", 100)
    assert out["metrics"] == compare(lines, lines, tmp_path / "l", "--n-boot", 100)["metrics"]
    assert out["metrics"]["correct"]["a"] == pytest.approx(8 / 12)
    ragas = tmp_path / "ragas.json"
    ragas_frame([1.0, 0.5, 0.25], True).to_json(ragas, orient="records")
    assert compare(ragas, ragas, tmp_path / "g", "--n-boot", 100)["metrics"]["faithfulness"][
        "a"
    ] == pytest.approx(1.75 / 3)
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tp1\t1\n")
    assert refused("validate", records, "--qrels", tmp_path / "qrels.tsv").startswith(
        f"{records}: read as JSON records, which carries its own labels"
    )
    for text, message in (
        ("[1, 2]", "item 1 of the JSON array is not an object; write one object per row, as "
                   "to_json(orient='records') does"),
        ("[]", "an empty JSON array; write one object per question"),
    ):  # fmt: skip
        records.write_text(text)
        assert refused("validate", records) == f"{records}: {message}"


def test_errors_name_the_files_own_column(tmp_path):
    log = tmp_path / "x.csv"
    log.write_text('user_input,retrieved_context_ids,faithfulness\nRefund window?,"[p1, p2]",0.5\n')
    line = refused("validate", log)
    assert line.startswith(f"{log}: line 2, column retrieved_context_ids: '[p1, p2]' is not a list")
    assert line.endswith(f"{RETRIEVED}; fix the value or drop the column")
    mapped = tmp_path / "m.csv"
    mapped.write_text("question_id,id\nq1,maybe\n")
    line = refused("validate", mapped, "--map", "correct=id")
    assert line == (
        f"{mapped}: line 2, column id: 'maybe' is not true or false (the answer is correct "
        "against the reference); fix the value or drop the column"
    )
    question = tmp_path / "q.csv"
    question.write_text("q,faithfulness\n,0.5\n")
    line = refused("validate", question, "--map", "user_input=q")
    assert line == (
        f"{question}: line 2 has no q; RAGAS rows are paired on the question text, so give every "
        "row its question"
    )


@pytest.mark.parametrize("suffix", ["parquet", "jsonl", "csv"])
def test_contexts_dumped_as_documents_are_refused_naming_the_row(tmp_path, suffix):
    """LangChain Documents dumped whole ({"page_content": ..., "metadata": ...}) were hashed as
    their JSON, so no context matched a reference text: every retrieval metric of the run read
    0 and the same texts as strings in the other run read "B better", validate saying ok."""
    frame = ragas_frame([1.0, 0.5, 0.2], False)
    frame["retrieved_contexts"] = [
        [{"page_content": text, "metadata": {"source": "kb"}} for text in texts]
        for texts in frame["retrieved_contexts"]
    ]
    path = written(frame, tmp_path / f"docs.{suffix}")
    where = "line 2" if suffix == "csv" else "line 1" if suffix == "jsonl" else "row 1"
    for args in (("validate", path), ("compare", path, path, "-o", tmp_path / "r.html")):
        line = refused(*args)
        assert line.startswith(f"{path}: {where}, column retrieved_contexts: "), line
        assert 'has an item, {"page_content": ' in line
        assert (
            "that is not a text; write each context as its text (a LangChain Document's "
            "page_content)" in line
        )
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("missing", [None, "", "  "])
@pytest.mark.parametrize("suffix", ["parquet", "jsonl", "csv"])
def test_a_missing_passage_text_is_no_evidence(tmp_path, missing, suffix):
    """A null or blank text in retrieved_contexts and in reference_contexts were each hashed
    into a passage id, the same one: the missing passage of the prompt matched the missing
    label, a hit and a fixed question that validate called ok. A null or blank text is no
    passage, refused as a null inside a run log's id list is."""
    frame = ragas_frame([1.0, 0.5, 0.2], False)
    frame.at[0, "retrieved_contexts"] = [missing, "Fees"]
    frame.at[0, "reference_contexts"] = [missing]
    path = written(frame, tmp_path / f"ragas.{suffix}")
    line = refused("compare", path, path, "-o", tmp_path / "r.html")
    where = "line 2" if suffix == "csv" else "line 1" if suffix == "jsonl" else "row 1"
    assert line.startswith(f"{path}: {where} (question_id ")
    # a blank text was called a null, and validate listed the problem twice (the contexts
    # are the ranking and the prompt both)
    assert line.endswith(
        "retrieved_contexts has 1 null(s) or blank text(s); a null or blank text is no passage: "
        "drop it or log the text"
    )
    checked = CliRunner().invoke(cli, ["validate", str(path)])
    assert checked.exit_code == 2
    problems = [line for line in checked.output.splitlines() if ": error: " in line]
    assert [p.split(" in ")[1].split(":")[0] for p in problems] == [
        "retrieved_contexts",
        "reference_contexts",
    ]


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_a_ragas_table_with_a_question_id_is_read_as_ragas_and_paired_on_it(tmp_path, suffix):
    """A RAGAS table to which the user added question_id was read as a plain run log: its
    contexts and scores were dropped without a word (faithfulness alone compared), and with
    --format ragas the note said the rows were paired on a hash of user_input while they were
    paired on question_id. B's questions are reworded here: they pair on the ids."""
    paths = []
    for run, scores in (("a", [1.0, 0.5, 0.2]), ("b", [0.9, 0.6, 0.4])):
        frame = ragas_frame(scores, False)
        frame.insert(0, "question_id", ["q1", "q2", "q3"])
        if run == "b":
            frame["user_input"] = frame["user_input"] + " (reworded)"
        paths.append(tmp_path / f"{run}.{suffix}")
        frame.to_parquet(paths[-1]) if suffix == "parquet" else frame.to_csv(paths[-1], index=False)
    args = ["compare", *map(str, paths), "-o", str(tmp_path / "r.html"), "--n-boot", "200"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "r.json").read_text())
    comparison = doc["comparisons"][0]
    assert comparison["n_paired"] == 3
    assert {"recall@1", "ndcg@1", "faithfulness", "answer_relevance"} <= set(comparison["metrics"])
    notes = doc["warnings"] + comparison["warnings"]
    assert "Run A: Questions paired on question_id (not on user_input)" in notes
    assert not any("hash of user_input" in note for note in notes)


def test_ragas_questions_unpaired_for_a_space_are_named_by_line_and_text(tmp_path):
    """B's first question saved with a trailing space: it pairs with nothing, and the warning
    listed it as q-d40c6d3c742d1006, a hash of its text that is in neither file, with no word
    that it differs from A's first question only in a space."""
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    ragas_frame([1.0, 0.5, 0.2], False).to_csv(a, index=False)
    frame = ragas_frame([0.9, 0.6, 0.4], False)
    frame.loc[0, "user_input"] += " "
    frame.to_csv(b, index=False)
    args = ["compare", str(a), str(b), "-o", str(tmp_path / "r.html"), "--n-boot", "200"]
    assert CliRunner().invoke(cli, args).exit_code == 0
    warnings = json.loads((tmp_path / "r.json").read_text())["comparisons"][0]["warnings"]
    first = ragas_frame([1.0, 0.5, 0.2], False)["user_input"][0]
    assert f"1 question only in run A is not compared: line 2 ({first!r})" in warnings
    assert (
        f"1 question only in run B is not compared: line 2 ({first + ' '!r}); 1 question differs "
        f"only in line endings or spaces ({a}'s line 2, {b}'s line 2), and RAGAS rows are "
        "paired on the exact user_input: write it alike in both runs"
    ) in warnings


def test_ragas_tables_paired_on_other_ids_are_told_so(tmp_path):
    """A question_id added to one RAGAS table only: the same texts pair on its ids in one run
    and on their hashes in the other, so none paired, and the refusal said they "differ only in
    line endings or spaces", which they do not."""
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    ragas_frame([1.0, 0.5, 0.2], False).to_parquet(a)
    frame = ragas_frame([0.9, 0.6, 0.4], False)
    frame.insert(0, "question_id", ["q1", "q2", "q3"])
    frame.to_parquet(b)
    line = refused("compare", a, b, "-o", tmp_path / "r.html")
    assert line.endswith(
        f"; 3 questions have the same user_input in both runs under other ids: {a} has no "
        f"question_id and pairs on a hash of user_input, {b} on its question_id; give both "
        "tables a question_id column, or neither; compare two runs of the same question set"
    )
    assert "line endings or spaces" not in line


def test_a_rule_naming_ragas_answer_relevancy_is_told_its_name_here(tmp_path):
    """A rule written with RAGAS' name, answer_relevancy, was refused as no metric of the logs,
    which read that column as answer_relevance."""
    path = tmp_path / "ragas.csv"
    ragas_frame([1.0, 0.5, 0.2], False).to_csv(path, index=False)
    line = refused("compare", path, path, "-o", tmp_path / "r.html", "--require",
                   "answer_relevancy >= -0.02")  # fmt: skip
    assert line == (
        "rule 'answer_relevancy >= -0.02': the logs' answer_relevancy is read as "
        "answer_relevance; name answer_relevance in the rule"
    )
