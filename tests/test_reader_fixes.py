"""Reader bugs met on logs as pandas and hand edits write them: each read as the other formats
read the same data, or refused with one line naming the file and line."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner
from test_input_validate import labelled, validate
from test_readers import fail

from reportgen.cli import cli
from reportgen.inputs.readers import ReadOptions, read

FILL = "give every column a field, an empty one for a missing value"
SHORT = f"line 3 has 2 fields, fewer than the header's 3; {FILL}"
LONG = "line 3 has 4 fields, more than the header's 3; quote values that contain {}"


@pytest.mark.parametrize(
    ("row", "message"),
    [("q2,false", SHORT), ("q2,false,1,2", LONG.format("a comma"))],
)
def test_a_csv_row_with_another_number_of_fields_is_named_by_its_line(tmp_path, row, message):
    """A row with fewer fields stopped every command with a traceback (AttributeError)."""
    path = tmp_path / "run.csv"
    path.write_text(f"question_id,correct,faithfulness\nq1,true,0.5\n{row}\nq3,true,1\n")
    expected = f"{path}: {message}"
    assert validate(path, code=2) == [labelled(path, expected)]
    assert fail("compare", path, path, "-o", tmp_path / "r.html") == f"ragreport: error: {expected}"
    assert fail("convert", path, "-o", tmp_path / "r.parquet") == f"ragreport: error: {expected}"


def test_a_short_row_is_named_by_the_line_it_starts_on(tmp_path):
    """A row whose quoted answer holds a line break starts a line above the one it ends on."""
    path = tmp_path / "run.tsv"
    path.write_text('question_id\tanswer\tcorrect\nq1\t"two\nlines"\nq2\tb\ttrue\n')
    assert validate(path, code=2) == [
        f"{path}: error: line 2 has 2 fields, fewer than the header's 3; {FILL}"
    ]
    path.write_text('question_id\tanswer\tcorrect\nq1\t"two\nlines"\ttrue\tx\n')
    assert validate(path, code=2) == [f"{path}: error: line 2 has 4 fields, more than the "
                                      "header's 3; quote values that contain a tab"]  # fmt: skip


def test_a_ragas_csv_row_with_fewer_fields_is_named_by_its_line(tmp_path):
    path = tmp_path / "ragas.csv"
    path.write_text("user_input,response,faithfulness\nq one,a,0.5\nq two,b\nq three,c,1\n")
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line == f"ragreport: error: {path}: {SHORT}"


PANDAS = (
    "a table as pandas' to_json lays it out (column -> {row -> value}), not BEIR results; write "
    "records, one object a line, at full precision (pandas writes 10 decimals by default): "
    "to_json('run.jsonl', orient='records', lines=True, double_precision=15)"
)


@pytest.mark.parametrize(
    ("frame", "options"),
    [
        # columns named by --map: it was read as BEIR results, "pass --qrels FILE"
        ({"id": ["q1", "q2"], "passed": [True, False]}, ["--map", "question_id=id",
                                                         "--map", "correct=passed"]),
        # no column of the run log, but values no BEIR score is: texts, booleans, lists, null
        ({"id": ["q1", "q2"], "verdict": ["yes", None]}, []),
        ({"id": [1, 2], "ids": [["p1"], ["p2"]]}, []),
    ],
)  # fmt: skip
def test_a_pandas_frame_of_other_column_names_is_not_taken_for_beir(tmp_path, frame, options):
    path = tmp_path / "run.json"
    pd.DataFrame(frame).to_json(path)  # column -> {row -> value}, to_json's default
    assert validate(path, *options, code=2) == [f"{path}: error: {PANDAS}"]


@pytest.mark.parametrize(
    "frame",
    [
        {"question_id": ["q1", "q2"], "correct": [True, False]},
        {"id": ["q1", "q2"], "verdict": ["yes", None]},  # told by pandas' row labels, 0 and 1
    ],
)
def test_a_pandas_frame_laid_out_by_index_is_described_as_it_lies(tmp_path, frame):
    """orient='index' writes row -> {column -> value}; the refusal described to_json's default,
    the other way round."""
    path = tmp_path / "run.json"
    pd.DataFrame(frame).to_json(path, orient="index")
    index = PANDAS.replace(
        "(column -> {row -> value})", "(row -> {column -> value}, orient='index')"
    )
    assert validate(path, code=2) == [f"{path}: error: {index}"]


@pytest.mark.parametrize("text", ['{"foo": 1}', '"run"', '{"q1": {"d1": 0.5}, "n": 2}'])
def test_a_json_file_of_no_format_read_is_refused_at_once(tmp_path, text):
    """{"foo": 1} asked for --qrels as BEIR results, and then was "not BEIR results"."""
    path, qrels = tmp_path / "run.json", tmp_path / "qrels.tsv"
    path.write_text(text)
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    said = (
        f"{path}: not a run log in any format read from .json: not promptfoo output (an evalId "
        "or a results list), BEIR results ({query_id: {doc_id: score}}) or records (an array "
        "of objects, one a row); check that this is the log meant"
    )
    assert validate(path, code=2) == [labelled(path, said)]
    assert validate(path, "--qrels", qrels, code=2) == [labelled(path, said)]


def test_beir_results_ranking_the_same_documents_for_every_query_are_read(tmp_path, compare):
    """A reranker's results score one candidate set per query: every query has the same keys,
    as a pandas frame's columns have, but every value is a number."""
    path, qrels = tmp_path / "results.json", tmp_path / "qrels.tsv"
    path.write_text(json.dumps({"q1": {"d1": 0.2, "d2": 0.9}, "q2": {"d1": 1, "d2": 0.8}}))
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td1\t1\n")
    out = compare(path, path, tmp_path / "o", "--qrels", qrels, "--k", 1)
    assert out["metrics"]["recall@1"]["a"] == 0.5  # q1 ranks d1 second, q2 first


@pytest.mark.parametrize("suffix", ["csv", "tsv", "jsonl"])
def test_float_ids_pandas_writes_pair_with_integer_ids_in_every_text_format(
    tmp_path, compare, suffix
):
    """A float id column (an integer column that held a missing value) is 1.0 in CSV as in
    JSON; it read as '1.0' from CSV and paired with no integer id."""
    floats, ints = tmp_path / f"floats.{suffix}", tmp_path / "ints.parquet"
    frame = pd.DataFrame({"question_id": [1.0, 2.0, 3.0, 4.0], "correct": [True, False] * 2})
    if suffix == "jsonl":
        frame.to_json(floats, orient="records", lines=True)
    else:
        frame.to_csv(floats, sep="\t" if suffix == "tsv" else ",", index=False)
        assert "\n1.0" in floats.read_text()
    frame.astype({"question_id": int}).to_parquet(ints)
    assert compare(floats, ints, tmp_path / "out")["n_paired"] == 4


def test_csv_ids_other_than_a_whole_float_are_text_as_written(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text("question_id,correct\n7.0,true\n007,false\n7.5,true\n1e3,false\n-0.00,true\n")
    table = read(path, ReadOptions()).table
    assert table["question_id"].to_pylist() == ["7", "007", "7.5", "1e3", "0"]


SLICES = ["a", "", "", None, "a", "", None, "a"]  # 3 empty texts, 2 nulls


@pytest.mark.parametrize("suffix", ["jsonl", "json", "parquet", "csv"])
def test_an_empty_slice_text_stays_apart_from_a_missing_slice_where_the_format_has_both(
    tmp_path, compare, suffix
):
    """JSON's "" is a text, as Parquet's: it was merged into (none) with the nulls. A CSV or TSV
    file has no empty text apart from an empty cell, a missing value."""
    path = tmp_path / f"run.{suffix}"
    frame = pd.DataFrame({"question_id": [f"q{i}" for i in range(8)], "slice": SLICES,
                          "correct": [i % 2 == 0 for i in range(8)]})  # fmt: skip
    if suffix == "parquet":
        frame.to_parquet(path)
    elif suffix == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_json(path, orient="records", lines=suffix == "jsonl")
    slices = compare(path, path, tmp_path / "out")["slices"]["slice"]
    counts = {name: value["correct"]["n"] for name, value in slices.items()}
    assert counts == ({"(none)": 5, "a": 3} if suffix == "csv" else {"": 3, "(none)": 2, "a": 3})


def test_a_column_held_in_folder_names_is_named_as_not_read(tmp_path, compare):
    """A folder pandas writes with partition_cols=["slice"] holds slice in its folder names
    (slice=x/...), not in its files: the slices were lost with no word."""
    ids = ["q1", "q2", "q3", "q4"]
    frame = pd.DataFrame(
        {"question_id": ids, "correct": [True, False, True, True],
         "slice": ["x", "y", "x", "y"], "topic": ["t", "t", "u", "u"]}
    )  # fmt: skip
    frame.to_parquet(tmp_path / "a", partition_cols=["slice", "topic"])
    frame.drop(columns=["slice", "topic"]).to_parquet(tmp_path / "b.parquet")
    out = compare(tmp_path / "a", tmp_path / "b.parquet", tmp_path / "o")
    # B holds A's outputs, which the first warning says; this one follows
    assert out["comparisons"][0]["warnings"][1] == (
        f"Run A: the folders of {tmp_path / 'a'} are named like columns, as a partitioned "
        "dataset's are: slice and topic are in the folder names only, which are not read; write "
        "them into the files (pandas: to_parquet without partition_cols) to compare by them"
    )
    assert out["n_paired"] == 4


def test_a_column_held_in_folder_names_and_in_every_file_is_read_without_a_word(tmp_path, compare):
    """DuckDB's COPY ... (PARTITION_BY (slice), WRITE_PARTITION_COLUMNS true) writes slice into
    the files as well as the folder names: the report compared the slices and said it could
    not. Only topic, in the names alone, is named."""
    import duckdb

    frame = pd.DataFrame(
        {"question_id": [f"q{i}" for i in range(8)], "correct": [i % 3 > 0 for i in range(8)],
         "slice": list("xxxxyyyy"), "topic": list("tuvwtuvw")}
    )  # fmt: skip
    duckdb.sql(
        f"COPY (SELECT * EXCLUDE (topic) FROM frame) TO '{tmp_path / 'a'}' "
        "(FORMAT PARQUET, PARTITION_BY (slice), WRITE_PARTITION_COLUMNS true)"
    )
    out = compare(tmp_path / "a", tmp_path / "a", tmp_path / "o")
    assert not [w for w in out["warnings"] if "folder names" in w]
    assert {name: value["correct"]["n"] for name, value in out["slices"]["slice"].items()} == {
        "x": 4,
        "y": 4,
    }
    for (value, topic), rows in frame.groupby(["slice", "topic"]):  # slice in the files too
        (tmp_path / "b" / f"slice={value}" / f"topic={topic}").mkdir(parents=True)
        rows.drop(columns="topic").to_parquet(
            tmp_path / "b" / f"slice={value}" / f"topic={topic}" / "0.parquet"
        )
    out = compare(tmp_path / "b", tmp_path / "a", tmp_path / "p")
    assert [w for w in out["warnings"] if "folder names" in w] == [
        f"Run A: the folders of {tmp_path / 'b'} are named like columns, as a partitioned "
        "dataset's are: topic is in the folder names only, which are not read; write it into "
        "the files (pandas: to_parquet without partition_cols) to compare by it"
    ]


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_convert_refuses_a_log_of_no_rows_as_compare_does(tmp_path, suffix):
    """convert wrote a log of 0 rows that compare and validate refuse."""
    log = tmp_path / f"empty.{suffix}"
    empty = pd.DataFrame({"question_id": pd.Series([], dtype=str), "correct": []})
    empty.to_parquet(log) if suffix == "parquet" else empty.to_csv(log, index=False)
    out = tmp_path / "out.parquet"
    result = CliRunner().invoke(cli, ["convert", str(log), "-o", str(out)])
    assert result.exit_code == 2
    assert result.output == (
        f"ragreport: error: {log}: the log has no rows; write one row per question (an export "
        "that failed, or a filter that kept nothing, writes none)\n"
    )
    assert not out.exists()
