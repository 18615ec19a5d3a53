"""Each reader on small files written as the producing tool writes them, broken ones included.

Every good file is compared with the same log written as Parquet (the reader must give the same
numbers), and every broken one must stop ``compare`` with one line naming the file and line,
exit code 2 and nothing written.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from reportgen.cli import cli
from reportgen.errors import InputError
from reportgen.inputs.readers import ReadOptions, read

ROWS = [  # a run log: q1 hit at rank 2, q2 misses, q3 hit at rank 1
    {
        "question_id": "q1",
        "retrieved_ids": ["p7", "p2", "p9"],
        "relevant_ids": ["p2"],
        "context_ids": ["p7", "p2"],
        "correct": True,
        "faithfulness": 1.0,
    },
    {
        "question_id": "q2",
        "retrieved_ids": ["p4", "p1", "p3"],
        "relevant_ids": ["p3", "p8"],
        "context_ids": ["p4", "p1"],
        "correct": False,
        "faithfulness": 0.5,
    },
    {
        "question_id": "q3",
        "retrieved_ids": ["p5", "p6", "p0"],
        "relevant_ids": ["p5"],
        "context_ids": ["p5", "p6"],
        "correct": True,
        "faithfulness": 0.75,
    },
]


def fail(*args: object) -> str:
    """Run the CLI expecting bad input: exit 2, one line on stderr, no report written."""
    out = Path(str(args[args.index("-o") + 1])) if "-o" in args else None
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ragreport: error: "), result.output
    assert out is None or not out.exists()
    return lines[0]


def metrics(out: dict) -> dict[str, float]:
    return {name: m["a"] for name, m in out["metrics"].items()}


@pytest.fixture
def parquet_log(tmp_path, write_log):
    return write_log(tmp_path / "run.parquet", ROWS)


@pytest.fixture
def reference(parquet_log, tmp_path, compare):
    return compare(parquet_log, parquet_log, tmp_path / "ref", "--n-boot", 100)


def test_csv_with_json_arrays_matches_parquet(tmp_path, compare, reference):
    path = tmp_path / "run.csv"
    frame = pd.DataFrame(ROWS)
    for column in ("retrieved_ids", "relevant_ids", "context_ids"):
        frame[column] = frame[column].map(json.dumps)
    frame.to_csv(path, index=False)
    out = compare(path, path, tmp_path / "out", "--n-boot", 100)
    assert metrics(out) == metrics(reference)
    assert metrics(out)["mrr@2"] == pytest.approx((1 / 2 + 0 + 1) / 3)


def test_tsv_with_pandas_list_repr_and_jsonl(tmp_path, compare, reference):
    tsv = tmp_path / "run.tsv"
    pd.DataFrame(ROWS).to_csv(tsv, sep="\t", index=False)  # lists as ['p7', 'p2', 'p9']
    jsonl = tmp_path / "run.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    out = compare(tsv, jsonl, tmp_path / "out", "--n-boot", 100)
    assert {n: (m["a"], m["b"]) for n, m in out["metrics"].items()} == {
        n: (v, v) for n, v in metrics(reference).items()
    }


def test_parquet_folder_and_glob_read_as_one_log(tmp_path, write_log, compare, reference):
    shards = tmp_path / "shards"
    shards.mkdir()
    write_log(shards / "part-0.parquet", ROWS[:2])
    write_log(shards / "part-1.parquet", ROWS[2:])
    out = compare(shards, f"{shards}/*.parquet", tmp_path / "out", "--n-boot", 100)
    assert metrics(out) == metrics(reference)
    assert out["runs"][0]["n_questions"] == 3


def test_hidden_files_beside_the_shards_are_not_read(tmp_path, write_log, compare, reference):
    """macOS writes "._part-0.parquet" beside a copied shard (not Parquet), Spark a
    "_temporary" folder of a job still writing, and a notebook ".ipynb_checkpoints": the folder
    was refused as holding a file that is "not a readable Parquet file", or read twice. Names
    starting with "." or "_" are skipped, as Arrow and Spark skip them."""
    shards = tmp_path / "shards"
    (shards / "_temporary" / "0").mkdir(parents=True)
    (shards / ".ipynb_checkpoints").mkdir()
    write_log(shards / "part-0.parquet", ROWS[:2])
    write_log(shards / "part-1.parquet", ROWS[2:])
    (shards / "._part-0.parquet").write_bytes(b"\x00\x05\x16\x07 AppleDouble")
    write_log(shards / "_temporary" / "0" / "part-0.parquet", ROWS[:2])
    write_log(shards / ".ipynb_checkpoints" / "part-1.parquet", ROWS[2:])
    out = compare(shards, shards, tmp_path / "out", "--n-boot", 100)
    assert metrics(out) == metrics(reference)
    assert out["runs"][0]["n_questions"] == 3


def test_parquet_folder_duplicate_across_shards(tmp_path, write_log):
    shards = tmp_path / "shards"
    shards.mkdir()
    write_log(shards / "part-0.parquet", ROWS)
    write_log(shards / "part-1.parquet", ROWS[:1])
    line = fail("compare", shards, shards, "-o", tmp_path / "r.html")
    # rows are numbered across the shards, and each is named in its shard, which it did not
    assert line == (
        f"ragreport: error: {shards}: question_id 'q1' appears in rows 1 (part-0.parquet row 1) "
        "and 4 (part-1.parquet row 1); each question must appear once per run (once per sample "
        "with a sample column)"
    )


@pytest.mark.parametrize("name", ["a [v2].parquet", "run?.parquet", "run*.parquet"])
def test_a_file_whose_name_holds_a_glob_s_characters_is_that_file(
    tmp_path, write_log, compare, reference, name
):
    # read as a pattern, "a [v2].parquet" matched no file ("a v.parquet" would) and was refused
    log = write_log(tmp_path / name, ROWS)
    out = compare(log, log, tmp_path / "out", "--n-boot", 100)
    assert metrics(out) == metrics(reference)
    assert [run["path"] for run in out["runs"]] == [str(log), str(log)]


def test_shards_whose_names_hold_a_glob_s_characters_are_read_once(
    tmp_path, write_log, compare, reference
):
    # DuckDB reads a path as a pattern: 'p[1].parquet' matched 'p1.parquet' as well
    shards = tmp_path / "shards"
    shards.mkdir()
    write_log(shards / "p[1].parquet", ROWS[:2])
    write_log(shards / "p1.parquet", ROWS[2:])
    out = compare(shards, shards, tmp_path / "out", "--n-boot", 100)
    assert metrics(out) == metrics(reference)
    assert out["runs"][0]["n_questions"] == 3


def test_a_shard_without_a_column_the_others_have_is_refused(tmp_path, write_log, compare):
    """DuckDB reads shards by name, so the rows of one that lacked `correct` had none: the
    verdict read "over 2 questions" of 3 without a word. Refused in compare, validate and
    metrics, naming the shard, the column and a shard that has it; an empty shard, or one with
    a column the report does not read, is read as before."""
    shards = tmp_path / "shards"
    shards.mkdir()
    write_log(shards / "part-0.parquet", ROWS[:2])
    write_log(shards / "part-1.parquet", [{k: v for k, v in ROWS[2].items() if k != "correct"}])
    said = (
        f"ragreport: error: {shards / 'part-1.parquet'}: no column 'correct', which "
        f"part-0.parquet, another shard of {shards}, has: its 1 row would have no value there; "
        "write the column in every shard (null where a value is unknown)"
    )
    assert fail("compare", shards, shards, "-o", tmp_path / "r.html") == said
    assert fail("metrics", shards, "-o", tmp_path / "m.parquet") == said
    result = CliRunner().invoke(cli, ["validate", str(shards)])
    # validate names the shard, then "error:", as its lines name a file
    listed = said.replace("ragreport: error: ", "").replace(": no column", ": error: no column")
    assert result.exit_code == 2 and result.output == listed + "\n"
    write_log(shards / "part-1.parquet", [dict(ROWS[2], note="x")])  # read by nothing
    pq.write_table(pa.table({"question_id": pa.array([], pa.string())}), shards / "part-2.parquet")
    out = compare(shards, shards, tmp_path / "out", "--n-boot", 100)
    assert out["metrics"]["correct"]["n"] == 3


def test_shards_of_float_and_text_question_ids_are_refused(tmp_path, write_log, compare):
    """Float ids are read as the integers they hold, but DuckDB reads shards as one table of one
    type: a shard of 1.0, 2.0 beside a shard of '3' made '1.0' and '2.0', which paired with
    nothing. Refused, naming both shards; floats beside integers read as the integers."""
    shards = tmp_path / "shards"
    shards.mkdir()
    _ids_as(shards / "part-0.parquet", ROWS[:2], [1.0, 2.0], pa.float64())
    _ids_as(shards / "part-1.parquet", ROWS[2:], ["3"], pa.string())
    said = (
        f"ragreport: error: {shards / 'part-0.parquet'}: column question_id holds floats, which "
        f"part-1.parquet, another shard of {shards}, holds as text: read together, its 7.0 would "
        "pair with no '7'; write the column as text in every shard"
    )
    assert fail("compare", shards, shards, "-o", tmp_path / "r.html") == said
    _ids_as(shards / "part-1.parquet", ROWS[2:], [3], pa.int64())
    text = _ids_as(tmp_path / "text.parquet", ROWS, ["1", "2", "3"], pa.string())
    out = compare(shards, text, tmp_path / "out", "--n-boot", 100)
    assert out["n_paired"] == 3 and out["metrics"]["correct"]["n"] == 3


def _ids_as(path: Path, rows: list[dict], ids: list, kind: pa.DataType) -> Path:
    """``rows`` written with ``ids`` as their question_id, of type ``kind``."""
    table = pa.Table.from_pylist(rows)
    where = table.schema.get_field_index("question_id")
    pq.write_table(table.set_column(where, "question_id", pa.array(ids, kind)), path)
    return path


@pytest.mark.parametrize(
    "flags",
    [
        ("--metric", "judge"),
        ("--lower-is-better", "judge"),
        ("--slice", "region"),
        ("--cluster", "region"),
        ("--holdout", "region=eu"),
    ],
)
def test_a_shard_without_a_column_an_option_names_is_refused(tmp_path, write_log, compare, flags):
    """A column named by an option, missing from one shard: a --metric gate was judged on the
    shards that had it, and --holdout region=eu held out fewer questions, without a word."""
    shards = tmp_path / "shards"
    shards.mkdir()
    extra = [{"judge": 0.5 + i / 10, "region": "eu" if i % 2 else "us"} for i in range(3)]
    write_log(shards / "part-0.parquet", ROWS[:2])
    pq.write_table(
        pq.read_table(shards / "part-0.parquet")
        .append_column("judge", pa.array([e["judge"] for e in extra[:2]]))
        .append_column("region", pa.array([e["region"] for e in extra[:2]])),
        shards / "part-0.parquet",
    )
    write_log(shards / "part-1.parquet", ROWS[2:])
    column = flags[1].partition("=")[0]
    assert fail("compare", shards, shards, "-o", tmp_path / "r.html", *flags) == (
        f"ragreport: error: {shards / 'part-1.parquet'}: no column {column!r}, which "
        f"part-0.parquet, another shard of {shards}, has: its 1 row would have no value there; "
        "write the column in every shard (null where a value is unknown)"
    )
    out = compare(shards, shards, tmp_path / "out", "--n-boot", 100)  # neither column read
    assert out["metrics"]["correct"]["n"] == 3


def test_empty_folder_and_unmatched_glob(tmp_path):
    assert "no .parquet file in the folder" in fail("compare", tmp_path, tmp_path, "-o", "x.html")
    line = fail("compare", f"{tmp_path}/*.parquet", tmp_path, "-o", tmp_path / "r.html")
    assert "no file matches the pattern" in line


@pytest.mark.parametrize("given", ["*.csv", "shards"])
def test_a_glob_or_folder_of_csv_files_is_said_to_be_read_as_parquet_only(tmp_path, given):
    """A glob of CSV files was refused as "not a readable Parquet file", with advice to write
    Parquet, and a folder of them as holding no .parquet file."""
    shards = tmp_path / "shards"
    shards.mkdir()
    for part in ("s1", "s2"):
        (shards / f"{part}.csv").write_text("question_id,correct\nq1,true\n")
    log = f"{shards}/*.csv" if given == "*.csv" else str(shards)
    line = fail("compare", log, log, "-o", tmp_path / "r.html")
    assert line == (
        f"ragreport: error: {log}: a folder or glob is read as Parquet shards only, and it holds "
        "s1.csv, not Parquet; pass one CSV file per log, or convert each file to Parquet "
        "(ragreport convert)"
    )


def test_a_folder_given_with_another_format_is_said_to_be_read_as_parquet_only(tmp_path):
    """--format csv on a folder was refused as "is a folder; pass the path of a run log"."""
    line = fail("compare", tmp_path, tmp_path, "--format", "csv", "-o", tmp_path / "r.html")
    assert "a folder or glob is read as Parquet shards only, and --format is csv, not Parquet; " \
        "pass one CSV file per log" in line  # fmt: skip


def test_csv_bad_value_names_line_and_column(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text('question_id,correct,retrieved_ids\nq1,true,"[""p1""]"\nq2,maybe,"[]"\n')
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert f"{path}: line 3, column correct: 'maybe' is not true or false" in line
    path.write_text("question_id,correct,retrieved_ids\nq1,true,p1 p2\n")
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert "line 2, column retrieved_ids: 'p1 p2' is not a list; write it as a JSON array" in line


@pytest.mark.parametrize(
    "name, text, written",
    [
        ("r.csv", "question_id,correct\nq1,true\nq2,NA\n", "an empty cell"),  # R's write.csv
        ("r.jsonl", '{"question_id": "q1", "correct": "NULL"}\n', "null"),
    ],
)
def test_a_missing_value_spelled_as_another_tool_writes_it_says_how_to_write_one(
    tmp_path, name, text, written
):
    """R writes a missing value as NA, which is text to a reader: refused, as before, now
    saying how the file writes a missing value."""
    path = tmp_path / name
    path.write_text(text)
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    value = "'NA'" if name == "r.csv" else "'NULL'"
    said = f"{value} is not true or false (the answer is correct against the reference); fix "
    assert (
        said + f"the value (a missing value is {written}, not {value}) or drop the column" in line
    )


def test_csv_bad_values_are_counted_in_the_one_line(tmp_path):
    """Every unreadable cell is counted, the first three after the first named: a CSV export
    with a bad value in every row was fixed one run per cell."""
    path = tmp_path / "run.csv"
    rows = "".join(f"q{i},maybe,{0.5 if i % 2 else 'high'}\n" for i in range(1, 7))
    path.write_text("question_id,correct,faithfulness\n" + rows)
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line == (
        f"ragreport: error: {path}: line 2, column correct: 'maybe' is not true or false (the "
        "answer is correct against the reference); fix the value or drop the column (8 more "
        "cells cannot be read: "
        "line 3, column correct ('maybe'); line 4, column correct ('maybe'); line 5, column "
        "correct ('maybe'); ...)"
    )
    path.write_text("question_id,correct,faithfulness\nq1,true,0.5\nq2,false,high\n")
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line.endswith("line 3, column faithfulness: 'high' is not float 0..1 (share of the "
                         "answer's claims supported by its context); fix the value or drop the "
                         "column")  # fmt: skip
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("question_id", [1, 2], "[1, 2] is not an id (text or a whole number)"),
        ("question_id", {"a": 1}, '{"a": 1} is not an id'),
        ("question_id", True, "true is not an id"),
        ("question_id", 3.1, "3.1 is a fraction, which JSON may have shortened; write the id"),
        ("question_id", 12345678901234567.0, "is a number past 2**53, whose last digits JSON"),
        ("question_id", float("inf"), "inf is not an id (text or a whole number)"),
        ("sample", [0], "[0] is not an id"),
        ("retrieved_ids", ["p1", {"id": "p2"}], 'has an item, {"id": "p2"}, that is not an id'),
        ("relevant_spans", [{"doc_id": [1], "start": 0, "end": 9}], "doc_id [1] is not an id"),
    ],
)
def test_a_json_id_that_parquet_would_refuse_is_refused(tmp_path, column, value, reason):
    """A list, an object, true or a fraction was read as its JSON text ("[1, 2]", "true",
    "3.1") and paired by it; a Parquet log of the same ids is refused for their type. The
    value is shown as the file spells it (true, {"a": 1}), not as Python does."""
    path = tmp_path / "run.jsonl"
    rows = [{"question_id": f"q{i}", "correct": True} for i in range(2)]
    rows[1][column] = value
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line.startswith(f"ragreport: error: {path}: line 2, column {column}: "), line
    assert reason in line
    assert line.endswith("fix the value") == (column == "question_id"), line  # it is needed


def test_whole_numbers_of_a_json_id_read_as_integers(tmp_path, compare):
    """1.0 is how pandas writes an integer id of a column with a missing value: it pairs with 1."""
    floats, ints = tmp_path / "floats.jsonl", tmp_path / "ints.csv"
    floats.write_text("".join(json.dumps({"question_id": float(i), "correct": i % 2 == 0})
                              + "\n" for i in range(4)))  # fmt: skip
    ints.write_text("question_id,correct\n" + "".join(f"{i},{i < 3}\n" for i in range(4)))
    doc = compare(floats, ints, tmp_path / "out")
    assert doc["n_paired"] == 4


def test_jsonl_broken_line(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text('{"question_id": "q1", "correct": true}\n\n{"question_id": "q2", \n')
    assert f"{path}: line 3 is not JSON" in fail("compare", path, path, "-o", tmp_path / "r.html")


def test_unknown_extension_asks_for_format(tmp_path):
    path = tmp_path / "run.log"
    path.write_text("x")
    assert "pass --format" in fail("compare", path, path, "-o", tmp_path / "r.html")


def test_qrels_with_a_log_that_has_labels(tmp_path, parquet_log):
    line = fail("compare", parquet_log, parquet_log, "-o", tmp_path / "r.html", "--qrels", __file__)
    assert f"{parquet_log}: read as parquet, which carries its own labels" in line


def test_a_trec_run_compares_with_a_log_that_has_labels(tmp_path, compare):
    """--qrels and --format applied to every log, so a TREC baseline beside a candidate logged
    in full could not be compared: --qrels refused the log, and --format trec misread it. The
    qrels serve the TREC run; --format is given once per log."""
    run, qrels = tmp_path / "baseline.txt", tmp_path / "qrels.txt"
    run.write_text(
        "".join(f"q{q} Q0 d{d}-{q} {d} {4 - d} base\n" for q in (1, 2, 3, 4) for d in (1, 2, 3))
    )
    qrels.write_text("".join(f"q{q} 0 d{d}-{q} 1\n" for q in (1, 2, 3, 4) for d in (1, 3)))
    candidate = tmp_path / "candidate.parquet"
    ranked = [[f"d3-{q}", f"d1-{q}"] for q in (1, 2, 3, 4)]
    pd.DataFrame(
        {
            "question_id": [f"q{q}" for q in (1, 2, 3, 4)],
            "retrieved_ids": ranked,
            "relevant_ids": [[f"d1-{q}", f"d3-{q}"] for q in (1, 2, 3, 4)],
        }
    ).to_parquet(candidate)
    out = compare(run, candidate, tmp_path / "o", "--format", "trec", "--format", "parquet",
                  "--qrels", qrels, "--k", 2, "--n-boot", 100)  # fmt: skip
    # the baseline's top 2 hold one of its 2 relevant documents, the candidate's both
    assert (out["metrics"]["recall@2"]["a"], out["metrics"]["recall@2"]["b"]) == (0.5, 1.0)
    assert out["metrics"]["recall@2"]["n"] == 4
    # BEIR results (a .json, told from promptfoo output by its content) beside the same log
    results, beir_qrels = tmp_path / "results.json", tmp_path / "qrels.tsv"
    results.write_text(
        json.dumps({f"q{q}": {f"d{d}-{q}": 4 - d for d in (1, 2, 3)} for q in (1, 2, 3, 4)})
    )
    beir_qrels.write_text(
        "query-id\tcorpus-id\tscore\n"
        + "".join(f"q{q}\td{d}-{q}\t1\n" for q in (1, 2, 3, 4) for d in (1, 3))
    )
    out = compare(results, candidate, tmp_path / "b", "--qrels", beir_qrels, "--k", 2,
                  "--n-boot", 100)  # fmt: skip
    assert (out["metrics"]["recall@2"]["a"], out["metrics"]["recall@2"]["b"]) == (0.5, 1.0)
    line = fail("compare", candidate, candidate, "-o", tmp_path / "r.html", "--qrels", qrels)
    assert f"{candidate}: read as parquet, which carries its own labels" in line
    line = fail("compare", run, candidate, "-o", tmp_path / "r.html", "--qrels", qrels,
                "--format", "trec", "--format", "parquet", "--format", "csv")  # fmt: skip
    assert line.endswith("--format given 3 times; give it once for every log or once per log (2)")


def test_map_renames_house_columns(tmp_path, compare):
    path = tmp_path / "house.csv"
    pd.DataFrame({"id": ["a", "b", "c"], "passed": [True, False, True]}).to_csv(path, index=False)
    mapping = tmp_path / "mapping.txt"
    mapping.write_text("# run-log column = house column\nquestion_id = id\n")
    out = compare(path, path, tmp_path / "out", "--map", mapping, "--map", "correct=passed")
    assert out["metrics"]["correct"]["a"] == pytest.approx(2 / 3)
    line = fail("compare", path, path, "-o", tmp_path / "r.html", "--map", "correct=ok")
    assert "--map correct=ok: no column 'ok'; the file's columns are id, passed" in line
    line = fail("compare", path, path, "-o", tmp_path / "r.html", "--map", "correct=")
    assert "'correct=' is not COLUMN=SOURCE" in line


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_mapped_column_out_of_range_is_named_by_the_files_name(tmp_path, suffix):
    """--map faithfulness=faith: a share of 1.7 was named "faithfulness", a column the file
    has not."""
    frame = pd.DataFrame({"question_id": ["q1", "q2"], "faith": [0.5, 1.7]})
    path = tmp_path / f"run.{suffix}"
    frame.to_csv(path, index=False) if suffix == "csv" else frame.to_parquet(path)
    line = fail("compare", path, path, "-o", tmp_path / "r.html", "--map", "faithfulness=faith")
    where = "line 3" if suffix == "csv" else "row 2"  # a text file's line, a Parquet row
    assert line == (
        f"ragreport: error: {path}: {where} (question_id 'q2'): faith is 1.7; expected a share "
        "between 0 and 1"
    )


def test_a_mapped_parquet_cell_is_named_by_its_row(tmp_path):
    """A Parquet file has rows, not lines: the message said "line 2" of it."""
    path = tmp_path / "house.parquet"
    pd.DataFrame({"question_id": ["a", "b", "c"], "score": [1.0, 0.5, 0.0]}).to_parquet(path)
    line = fail("compare", path, path, "-o", tmp_path / "r.html", "--map", "correct=score")
    assert f"{path}: row 2, column score: 0.5 is not true or false" in line


def test_convert_writes_the_log_compare_reads(tmp_path, compare, reference):
    jsonl = tmp_path / "run.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    converted = tmp_path / "converted.parquet"
    result = CliRunner().invoke(cli, ["convert", str(jsonl), "-o", str(converted)])
    assert result.exit_code == 0 and result.output == f"wrote {converted} (3 rows)\n"
    assert pd.read_parquet(converted).columns.tolist() == list(ROWS[0])
    out = compare(converted, converted, tmp_path / "out", "--n-boot", 100)
    assert metrics(out) == metrics(reference)


def test_convert_refuses_bad_rows_and_its_input(tmp_path, parquet_log):
    jsonl = tmp_path / "run.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in [*ROWS, ROWS[0]]))
    line = fail("convert", jsonl, "-o", tmp_path / "out.parquet")
    assert f"{jsonl}: question_id 'q1' appears in lines 1 and 4" in line
    before = parquet_log.read_bytes()
    result = CliRunner().invoke(cli, ["convert", str(parquet_log), "-o", str(parquet_log)])
    assert result.exit_code == 2 and f"{parquet_log}: is one of the input run logs" in result.output
    assert parquet_log.read_bytes() == before


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("log.jsonl", '{"question_id": "q1", "relevant_ids": ["p1", null], "correct": true}\n',
         "line 1"),
        ("log.csv", 'question_id,relevant_ids,correct\nq1,"[""p1"", NaN]",true\n', "line 2"),
    ],
)  # fmt: skip
def test_a_null_inside_an_id_list_of_a_text_log_is_refused(tmp_path, name, text, where):
    # A null id is no evidence: it must reach the row checks as a null, not as the text "null".
    log = tmp_path / name
    log.write_text(text)
    result = CliRunner().invoke(cli, ["validate", str(log)])
    assert result.exit_code == 2, result.output
    assert "null_in_list in relevant_ids" in result.output
    assert f"{where} (question_id 'q1')" in result.output  # the file's line, not row 1


def _text_log(path: Path, columns: dict[str, list[str]]) -> Path:
    """``columns`` written as a CSV or TSV (by the suffix) cell by cell, as text."""
    sep = "\t" if path.suffix == ".tsv" else ","
    rows = zip(*([name, *cells] for name, cells in columns.items()), strict=True)
    path.write_text("".join(sep.join(row) + "\n" for row in rows))
    return path


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_text_cells_outside_the_contract_are_read_as_what_they_spell(tmp_path, suffix):
    log = _text_log(
        tmp_path / f"run{suffix}",
        {
            "question_id": ["001", "002", "003"],  # the contract's columns keep their types
            "slice": ["1", "2", "2"],
            "correct": ["true", "false", "1"],
            "passed": ["true", "False", "TRUE"],
            "tokens": ["10", "-20", "35"],
            "judge_score": ["0.9", "", "1e-1"],
            "code": ["007", "010", "7"],  # a leading zero: a code, not a number
            "note": ["1", "two", "3"],
        },
    )
    out = tmp_path / "run.parquet"
    result = CliRunner().invoke(cli, ["convert", str(log), "-o", str(out)])
    assert result.exit_code == 0, result.output
    table = pq.read_table(out)
    assert {f.name: str(f.type) for f in table.schema} == {
        "question_id": "string", "slice": "string", "correct": "bool", "passed": "bool",
        "tokens": "int64", "judge_score": "double", "code": "string", "note": "string",
    }  # fmt: skip
    assert table.to_pydict() == {
        "question_id": ["001", "002", "003"], "slice": ["1", "2", "2"],
        "correct": [True, False, True], "passed": [True, False, True], "tokens": [10, -20, 35],
        "judge_score": [0.9, None, 0.1], "code": ["007", "010", "7"], "note": ["1", "two", "3"],
    }  # fmt: skip


def test_text_cells_stay_text_where_a_number_would_change_what_they_name(tmp_path):
    """Sections "3.1" and "3.10" read as one number merged two slices; 19-digit conversation
    ids read as doubles became one cluster (1.2345678901234568e+18). Scores keep reading as
    numbers, whole and decimal together."""
    log = _text_log(
        tmp_path / "run.csv",
        {
            "question_id": ["q1", "q2", "q3"],
            "section": ["3.1", "3.10", "3.2"],
            "conversation": ["1234567890123456789", "1234567890123456788", "12"],
            "score": ["1", "0.5", "0"],
            "exact": ["0.25", "1e-3", "-0"],
        },
    )
    out = tmp_path / "run.parquet"
    result = CliRunner().invoke(cli, ["convert", str(log), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert pq.read_table(out).select(["section", "conversation", "score", "exact"]).to_pydict() == {
        "section": ["3.1", "3.10", "3.2"],
        "conversation": ["1234567890123456789", "1234567890123456788", "12"],
        "score": [1.0, 0.5, 0.0],
        "exact": [0.25, 0.001, -0.0],
    }


def test_nan_and_infinity_spelled_two_ways_are_still_numbers(tmp_path):
    """A score column holding both "nan" (Python's spelling) and "NaN" (polars', DuckDB's), a
    log put together from two writers, was read as text, and --metric refused it as VARCHAR:
    the two spellings name one value, as "inf" and "Infinity" do, not two sections."""
    log = _text_log(
        tmp_path / "run.csv",
        {
            "question_id": ["q1", "q2", "q3", "q4", "q5"],
            "judge_score": ["nan", "NaN", "0.5", "inf", "Infinity"],
        },
    )
    out = tmp_path / "run.parquet"
    result = CliRunner().invoke(cli, ["convert", str(log), "-o", str(out)])
    assert result.exit_code == 0, result.output
    scores = pq.read_table(out).column("judge_score")
    assert scores.type == pa.float64()
    assert scores.to_pylist()[2:] == [0.5, math.inf, math.inf]
    assert all(math.isnan(v) for v in scores.to_pylist()[:2])


def test_excel_s_delimiter_hint_above_the_header_is_read_past(tmp_path):
    """Excel writes "sep=," above the header of a CSV it is told to keep readable: the file was
    refused with "column 2 of the header has no name; name it", a column the file lacks. The
    hint is read past and still counted in the lines a message names; a hint of another
    delimiter is refused by name."""
    log = tmp_path / "run.csv"
    log.write_bytes(b"sep=,\r\nquestion_id,correct\r\nq1,TRUE\r\nq2,FALSE\r\n")
    out = tmp_path / "run.parquet"
    result = CliRunner().invoke(cli, ["convert", str(log), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert pq.read_table(out).select(["question_id", "correct"]).to_pydict() == {
        "question_id": ["q1", "q2"],
        "correct": [True, False],
    }
    log.write_bytes(b"sep=,\r\nquestion_id,correct\r\nq1,TRUE\r\nq2,maybe\r\n")
    with pytest.raises(InputError, match=r"run.csv: line 4, column correct: 'maybe'"):
        read(log, ReadOptions())
    log.write_text("sep=;\nquestion_id;correct\nq1;true\n")
    with pytest.raises(InputError) as error:
        read(log, ReadOptions())
    assert str(error.value) == (
        f"{log}: line 1 says the fields are separated by ';', not by the CSV's ','; save it "
        "again with ',' (or as CSV)"
    )


def test_text_score_columns_compare_as_metrics(tmp_path, compare):
    columns = {"question_id": ["q1", "q2", "q3"], "correct": ["true", "false", "true"]}
    logs = {
        "a.csv": {"passed": ["true", "false", "false"], "tokens": ["10", "20", "30"]},
        "b.tsv": {"passed": ["true", "true", "true"], "tokens": ["12", "18", "25"]},
    }
    a, b = (_text_log(tmp_path / name, {**columns, **scores}) for name, scores in logs.items())
    out = compare(a, b, tmp_path / "o", "--metric", "passed", "--lower-is-better", "tokens")
    assert out["scores"] == {
        "passed": {"source": "passed", "binary": True, "higher_is_better": True},
        "tokens": {"source": "tokens", "binary": False, "higher_is_better": False},
    }
    passed, tokens = out["metrics"]["passed"], out["metrics"]["tokens"]
    assert (passed["a"], passed["b"], passed["fixed"]) == (pytest.approx(1 / 3), 1, 2)
    assert (tokens["a"], tokens["b"]) == (20, pytest.approx(55 / 3))


@pytest.mark.parametrize("index", ["", "Unnamed: 0"])
def test_the_index_column_pandas_writes_is_dropped(tmp_path, index):
    path = tmp_path / "run.csv"
    frame = pd.DataFrame(ROWS)
    frame.to_csv(path)  # the index first, its header empty
    if index:
        pd.read_csv(path).to_csv(path, index=False)  # read back and saved: "Unnamed: 0"
    assert path.read_text().split(",", 1)[0] == index
    out = tmp_path / "run.parquet"
    result = CliRunner().invoke(cli, ["convert", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert pq.read_schema(out).names == list(frame.columns)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "run.csv",
            "question_id,correct,correct\nq1,true,false\n",
            "column 'correct' appears twice",
        ),
        ("run.tsv", "question_id\tcorrect\tcorrect\nq1\ttrue\tfalse\n", "column 'correct' appears"),
        ("run.csv", "question_id,,correct\nq1,x,true\n", "column 2 of the header has no name"),
        (
            "run.jsonl",
            '{"question_id": "q1", "correct": true}\n{"question_id": "q2", "correct": true, '
            '"correct": false}\n',
            "line 2 has the key 'correct' twice",
        ),
    ],
)
def test_a_column_named_twice_is_refused(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    assert f"{path}: {message}" in fail("compare", path, path, "-o", tmp_path / "r.html")
    assert CliRunner().invoke(cli, ["validate", str(path)]).exit_code == 2


@pytest.mark.parametrize(
    ("name", "text", "options", "said"),
    [
        # each with one byte of Latin-1 (é) on one line: "not UTF-8 text", no line
        ("log.csv", b"question_id,correct\nq1,true\nq\xe9,false\n", {}, "line 3, byte 2 (0xe9)"),
        (
            "log.jsonl",
            b'{"question_id": "q1"}\n{"question_id": "q\xe9"}\n',
            {},
            "line 2, byte 19 (0xe9)",
        ),
        (
            "run.trec",
            b"1 Q0 d1 1 2.0 r\n1 Q0 d\xe9 2 1.0 r\n",
            {"format": "trec"},
            "line 2, byte 7 (0xe9)",
        ),
    ],
)
def test_a_byte_that_is_not_utf8_is_named_by_its_line(tmp_path, name, text, options, said):
    path = tmp_path / name
    path.write_bytes(text)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n")
    if options:
        options = {**options, "qrels": qrels}
    with pytest.raises(InputError) as raised:
        read(path, ReadOptions(**options))
    assert str(raised.value) == f"{path}: {said} is not UTF-8 text; save the file as UTF-8"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"question_id": "q\x01"}', "Invalid control character at column 19"),
        ('{"question_id": "q', "Unterminated string starting at column 17"),
        ('{"question_id" "q"}', "Expecting ':' delimiter at column 16"),
    ],
)
def test_a_line_that_is_not_json_says_where_in_it(tmp_path, line, reason):
    """json's reason ended "at" with no place: "(Invalid control character at)"."""
    path = tmp_path / "log.jsonl"
    path.write_text('{"question_id": "q0"}\n' + line)  # the last line, cut short
    with pytest.raises(InputError) as raised:
        read(path, ReadOptions())
    assert str(raised.value) == (
        f"{path}: line 2 is not JSON ({reason}); write one JSON object per line"
    )
