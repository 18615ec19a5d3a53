"""Text logs as other tools write them: long fields, pandas' lists with a missing item, a byte
order mark, a quote never closed; and convert's output name."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from test_input_validate import labelled, validate
from test_readers import fail

from reportgen.cli import cli


def test_a_csv_field_longer_than_pythons_csv_limit_is_read(tmp_path):
    answer = "x" * 200_000  # Python's csv module stops at 131,072 characters by default
    path = tmp_path / "run.csv"
    pd.DataFrame({"question_id": ["q1", "q2"], "answer": [answer, "y"], "correct": [True, False]}
                 ).to_csv(path, index=False)  # fmt: skip
    assert validate(path, code=0) == [f"{path}: ok, 2 rows follow the run-log contract"]


def test_a_quote_never_closed_refuses_the_file_with_its_line(tmp_path):
    """A lenient CSV reader reads the rest of the file into the field the quote opens: q3 and
    q4 would vanish from the comparison without a word."""
    path = tmp_path / "run.csv"
    path.write_text('question_id,answer,correct\nq1,a,true\nq2,"he said ""hi,true\n'
                    "q3,b,false\nq4,c,true\n")  # fmt: skip
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert f"{path}: line 3: not a readable text table (unexpected end of data)" in line
    assert validate(path, code=2)[0] == labelled(path, line.split("error: ", 1)[1])


@pytest.mark.parametrize("suffix", ["csv", "tsv"])
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty; write a header line, then one row per question"),
        ("\n \n", "the file is empty; write a header line, then one row per question"),
        # read as a header of no column: "line 3 has 2 fields, more than the header's 0"
        ("\n\nquestion_id,correct\nq1,true\n",
         "line 3 is the first that is not blank; start the file with the header line"),
        # pandas' to_json(lines=True) under a .csv name: "not a readable text table"
        ('{"question_id": "q1", "correct": true}\n{"question_id": "q2", "correct": false}\n',
         "JSON Lines (one object a line), not {kind}; name the file .jsonl or pass --format "
         "jsonl"),
    ],
)  # fmt: skip
def test_a_text_table_without_a_header_line_says_what_it_holds(tmp_path, suffix, text, message):
    path = tmp_path / f"run.{suffix}"
    path.write_text(text)
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line == f"ragreport: error: {path}: {message.format(kind=suffix.upper())}"
    sep = "\t" if suffix == "tsv" else ","
    path.write_text(f"question_id{sep}correct\n")  # a header and no row: a log of no rows
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line == (
        f"ragreport: error: {path}: the log has no rows; write one row per question (an export "
        "that failed, or a filter that kept nothing, writes none)"
    )


@pytest.mark.parametrize(
    ("name", "text", "said", "fmt"),
    [
        ("run.tsv", "question_id,correct\nq1,true\n", "commas, not tabs", "csv"),
        ("run.csv", "question_id\tcorrect\nq1\ttrue\n", "tabs, not commas", "tsv"),
    ],
)
def test_a_table_under_the_other_name_is_named_by_its_separator(tmp_path, name, text, said, fmt):
    """Read with the other separator, its header is one column named for them all: "no
    question_id column"."""
    path = tmp_path / name
    path.write_text(text)
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    header = repr(text.split("\n")[0])
    assert line == (
        f"ragreport: error: {path}: the header is one field, {header}: the columns are "
        f"separated by {said}; name the file .{fmt} or pass --format {fmt}"
    )
    ok = CliRunner().invoke(cli, ["validate", "--format", fmt, str(path)])
    assert ok.exit_code == 0, ok.output


def test_a_row_problem_names_the_line_its_record_starts_on(tmp_path):
    """A quoted answer of three lines: the record was named by its last line, where no
    question_id is; a second record of q1 "repeats it (first seen at line 4)"."""
    path = tmp_path / "run.csv"
    path.write_text(
        'question_id,answer,correct\nq1,"one\ntwo\r\nthree",true\n\nq1,x,false\n,y,true\n'
    )
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [
        f"{path}: error: 1 row with duplicate_id in question_id: line 6 (question_id 'q1') "
        "repeats a question_id (first seen at line 2); each question must appear once per run "
        "(once per sample with a sample column)",
        f"{path}: error: 1 row with null_id in question_id: line 7; give every row one",
    ]
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert f"{path}: question_id 'q1' appears in lines 2 and 6; each question" in line


def test_a_samples_label_difference_names_both_lines(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text("question_id,sample,slice,correct\nq1,1,x,true\nq2,1,x,true\nq1,2,y,true\n")
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert (
        f"{path}: error: 1 row with sample_labels in slice: line 4 (question_id 'q1'): slice "
        "differs between samples of the question: line 2 has x, this row y"
    ) in result.output


def test_a_score_too_large_names_its_line(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text("question_id,myscore\nq1,1\n\nq2,1e17\n")
    line = fail("compare", path, path, "-o", tmp_path / "r.html", "--metric", "myscore")
    assert f"{path}: line 4 (question_id 'q2'): myscore is 1e+17; beyond 2**53" in line


def test_an_empty_shard_written_with_pandas_index_has_no_column_of_no_name(tmp_path):
    path = tmp_path / "shard.csv"
    pd.DataFrame({"question_id": pd.Series([], dtype=str)}).assign(correct=[]).to_csv(path)
    assert path.read_text().startswith(",question_id,correct")
    out = tmp_path / "m.parquet"
    result = CliRunner().invoke(cli, ["metrics", str(path), "-o", str(out)])
    assert result.exit_code == 0 and result.stderr == "", result.output
    logged = json.loads(pq.read_schema(out).metadata[b"ragreport.log"])
    assert sorted(logged["columns"]) == ["correct", "question_id"]


@pytest.mark.parametrize("suffix", ["csv", "tsv", "parquet"])
def test_metrics_takes_a_log_of_no_rows_as_an_empty_shard_in_every_format(tmp_path, suffix):
    """A header-only CSV or TSV was refused ("no rows under the header") where a Parquet log
    of no rows is an empty shard: the same shard written by another tool."""
    path = tmp_path / f"shard.{suffix}"
    empty = pd.DataFrame(
        {"question_id": pd.Series([], dtype=str), "correct": pd.Series([], dtype=bool)}
    )
    if suffix == "parquet":
        empty.to_parquet(path)
    else:
        empty.to_csv(path, sep="," if suffix == "csv" else "\t", index=False)
    out = tmp_path / "m.parquet"
    result = CliRunner().invoke(cli, ["metrics", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"wrote {out} (0 questions)\n"
    assert pq.read_table(out).num_rows == 0


def test_a_missing_item_of_a_pandas_list_is_named_as_missing(tmp_path):
    path = tmp_path / "run.csv"
    frame = pd.DataFrame(
        {
            "question_id": ["q1", "q2"],
            "relevant_ids": [["p1"], ["p1"]],
            "context_ids": [["p1"], ["p1", np.nan]],  # to_csv writes "['p1', nan]"
            "correct": [True, False],
        }
    )
    frame.to_csv(path, index=False)
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line.endswith(
        f"{path}: line 3 (question_id 'q2'): context_ids has 1 null(s); a null is no id, span or "
        "grade and is never evidence: drop it or log the value"
    )


def test_a_jsonl_file_with_a_byte_order_mark_is_read_as_csv_is(tmp_path):
    rows = [{"question_id": "q1", "correct": True}, {"question_id": "q2", "correct": False}]
    text = "".join(json.dumps(row) + "\n" for row in rows)
    for name, content in (
        ("run.jsonl", text),
        ("run.csv", "question_id,correct\nq1,true\nq2,false\n"),
    ):
        path = tmp_path / name
        path.write_text(content, encoding="utf-8-sig")  # a byte order mark first
        assert validate(path, code=0) == [f"{path}: ok, 2 rows follow the run-log contract"]


def test_convert_refuses_an_output_name_that_is_not_parquet(tmp_path):
    log = tmp_path / "run.jsonl"
    log.write_text('{"question_id": "q1", "correct": true}\n')
    out = tmp_path / "out.csv"
    line = fail("convert", log, "-o", out)
    assert line.endswith(
        f"-o {out}: convert writes a Parquet run log; give a path ending in .parquet"
    )
