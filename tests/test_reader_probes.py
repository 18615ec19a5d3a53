"""Logs as other tools re-save them (a Parquet log re-written by pandas, JSON laid out by pandas
or DuckDB): read as the original log, or refused with one line saying what to write instead."""

from __future__ import annotations

import shlex
import subprocess

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from test_eval_tool_readers import ragas_frame
from test_readers import fail, metrics

from reportgen.cli import cli

LONG = [f"fr-{i:04d}#{i % 9}" for i in range(30)]  # numpy wraps its print of these over lines
ROWS = [
    {
        "question_id": "q1",
        "retrieved_ids": LONG,
        "relevant_ids": [LONG[1], LONG[20]],
        "relevant_grades": [2, 1],
        "correct": True,
    },
    {
        "question_id": "q2",
        "retrieved_ids": LONG[::-1],
        "relevant_ids": [LONG[3]],
        "relevant_grades": [1],
        "correct": False,
    },
]


def twin_metrics(compare, folder, log, twin, *options):
    """The report of ``log`` compared with itself, its metrics asserted the same as ``twin``'s:
    one log's rows in another format or layout."""
    expected = compare(twin, twin, folder / "twin", "--n-boot", 100, *options)
    out = compare(log, log, folder / "log", "--n-boot", 100, *options)
    assert metrics(out) == metrics(expected)
    return out


def test_csv_of_a_parquet_log_reads_numpy_printed_lists(tmp_path, write_log, compare):
    parquet = write_log(tmp_path / "run.parquet", ROWS)
    csv = tmp_path / "run.csv"
    pd.read_parquet(parquet).to_csv(csv, index=False)
    assert "' '" in csv.read_text() and "[2 1]" in csv.read_text()  # numpy's print, no commas
    out = twin_metrics(compare, tmp_path, csv, parquet, "--k", 25)
    assert metrics(out)["recall@25"] == pytest.approx((1 + 0) / 2)  # q2 evidence at rank 27


def test_csv_of_a_parquet_span_log_reads_numpy_printed_spans(tmp_path, compare):
    # pandas reads a list of structs as an array of dicts; to_csv writes numpy's print of it,
    # items apart by a newline and no comma: it was refused as DuckDB's unquoted list
    parquet, csv = tmp_path / "run.parquet", tmp_path / "run.csv"
    spans = [{"doc_id": "d1", "start": 0, "end": 10}, {"doc_id": "d2", "start": 5, "end": 9}]
    row = {"retrieved_spans": spans, "context_spans": spans[1:], "correct": True}
    frame = pd.DataFrame(
        [
            dict(row, question_id="q1", relevant_spans=[dict(spans[0], grade=2)]),
            dict(row, question_id="q2", relevant_spans=[dict(spans[1], start=2, grade=1)]),
        ]
    )
    frame.to_parquet(parquet)
    pd.read_parquet(parquet).to_csv(csv, index=False)
    assert "}\n {'doc_id': 'd2'" in csv.read_text()  # numpy's print, no comma
    out = twin_metrics(compare, tmp_path, csv, parquet)
    # q1's label is in the ranking only; q2's prompt covers 4 of its label's 7 characters
    assert metrics(out)["recall@1"] == pytest.approx(0.5)
    assert metrics(out)["evidence_recall"] == pytest.approx((0 + 4 / 7) / 2)


def test_ragas_csv_of_a_parquet_result_reads_numpy_printed_contexts(tmp_path, compare):
    parquet, csv = tmp_path / "ragas.parquet", tmp_path / "ragas.csv"
    ragas_frame([1.0, 1.0, 1.0], False).to_parquet(parquet)
    pd.read_parquet(parquet).to_csv(csv, index=False)
    out = twin_metrics(compare, tmp_path, csv, parquet)
    assert metrics(out)["recall@1"] == pytest.approx(1 / 3)


def test_numpy_shortened_list_is_refused(tmp_path):
    path = tmp_path / "run.csv"
    ids = np.array([f"p{i}" for i in range(2000)])  # numpy prints 1,000 items at most
    pd.DataFrame({"question_id": ["q1"], "retrieved_ids": [ids], "correct": [True]}).to_csv(
        path, index=False
    )
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert f"{path}: line 2, column retrieved_ids: " in line
    # DuckDB's COPY to CSV was advised, whose unquoted lists are refused too
    assert (
        "is an array numpy printed shortened (with '...'), so items are lost; keep the log as "
        "Parquet or write it as JSON Lines (pandas' to_parquet or to_json(orient='records', "
        "lines=True); DuckDB's COPY ... TO 'run.parquet' or 'run.jsonl')" in line
    )


def test_list_of_numpy_scalars_is_read(tmp_path, write_log, compare):
    path = tmp_path / "run.csv"
    frame = pd.DataFrame(ROWS)
    for column in ("retrieved_ids", "relevant_ids", "relevant_grades"):
        frame[column] = frame[column].map(lambda items: list(np.array(items)))
    frame.to_csv(path, index=False)
    assert "np.str_('fr-0001#1')" in path.read_text()
    parquet = write_log(tmp_path / "run.parquet", ROWS)
    twin_metrics(compare, tmp_path, path, parquet, "--k", 25)


@pytest.mark.parametrize("kind", ["csv", "tsv", "jsonl", "promptfoo", "trec", "ragas", "arrow"])
def test_missing_file_with_a_format_is_named(tmp_path, kind):
    path = tmp_path / "missing.log"
    line = fail("compare", path, path, "-o", tmp_path / "r.html", "--format", kind)
    assert f"{path}: no such file; pass the path of a run log" in line


def test_ragas_format_on_another_extension_is_refused(tmp_path, compare):
    path = tmp_path / "ragas.txt"
    ragas_frame([1.0, 1.0, 1.0], True).to_json(path, orient="records")
    line = fail("compare", path, path, "-o", tmp_path / "r.html", "--format", "ragas")
    assert f"{path}: RAGAS results are read from .csv, .tsv, .jsonl, .json, .parquet or " \
        ".feather" in line  # fmt: skip
    records = tmp_path / "ragas.json"  # to_json(orient="records"): read, as without --format
    path.rename(records)
    out = compare(records, records, tmp_path / "o", "--n-boot", 100, "--format", "ragas")
    assert out["metrics"]["faithfulness"]["a"] == 1.0


def test_truncated_parquet_with_map_is_named(tmp_path):
    whole, path = tmp_path / "whole.parquet", tmp_path / "run.parquet"
    pd.DataFrame({"id": ["q1"], "correct": [True]}).to_parquet(whole)
    path.write_bytes(whole.read_bytes()[:200])
    line = fail("compare", path, path, "-o", tmp_path / "r.html", "--map", "question_id=id")
    assert f"{path}: not a readable Parquet file" in line


def test_json_lines_in_a_json_file_say_so(tmp_path, write_log):
    parquet = write_log(tmp_path / "run.parquet", ROWS)
    path = tmp_path / "run.json"  # DuckDB's COPY ... TO 'run.json' writes this too
    pd.read_parquet(parquet).to_json(path, orient="records", lines=True)
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert f"{path}: JSON Lines (one object a line)" in line
    assert "pass --format jsonl or name the file .jsonl" in line


@pytest.mark.parametrize("orient", ["columns", "index", "split", "table"])
def test_json_of_a_pandas_table_is_not_taken_for_beir(tmp_path, write_log, orient):
    parquet = write_log(tmp_path / "run.parquet", ROWS)
    path = tmp_path / "run.json"
    pd.read_parquet(parquet).to_json(path, orient=orient)  # "columns": to_json's default
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert f"{path}: a table as pandas' to_json lays it out" in line
    assert "orient='records', lines=True" in line


def test_a_csv_separated_by_semicolons_says_so(tmp_path, write_log):
    """Spreadsheets where the comma is the decimal mark write this; it was told to "quote
    values that contain a comma"."""
    path = tmp_path / "run.csv"
    pd.read_parquet(write_log(tmp_path / "run.parquet", ROWS)).to_csv(path, sep=";", index=False)
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert f"{path}: the header is one field, 'question_id;retrieved_ids;" in line
    assert "separated by semicolons; write the table with commas" in line


@pytest.mark.parametrize(
    "name, options, plain",
    [
        ("run.csv.gz", [], "run.csv"),
        ("run.csv", ["--format", "csv"], "run.unzipped.csv"),
        ("my run.csv", ["--format", "csv"], "my run.unzipped.csv"),
    ],
)
def test_a_gzipped_log_says_so(tmp_path, write_log, name, options, plain):
    """pandas writes run.csv.gz compressed: it was told to pass --format, and with --format csv
    that the file was not UTF-8. The command given works as written from any folder (it names
    the path as given; a bare gunzip refuses a name without .gz), and its output reads as the
    log."""
    path = tmp_path / name
    pd.read_parquet(write_log(tmp_path / "run.parquet", ROWS)).to_csv(
        path, index=False, compression="gzip"
    )
    line = fail("compare", path, path, "-o", tmp_path / "r.html", *options)
    command = f"gunzip -c {shlex.quote(str(path))} > {shlex.quote(str(tmp_path / plain))}"
    assert line == (
        f"ragreport: error: {path}: gzip-compressed; decompress it ({command}) and pass the "
        "file that writes"
    )
    subprocess.run(command, shell=True, cwd="/", check=True)
    written = tmp_path / plain
    assert pd.read_csv(written)["question_id"].tolist() == [r["question_id"] for r in ROWS]


@pytest.mark.parametrize("name, options", [("run.csv", []), ("run.parquet", ["--format", "jsonl"])])
def test_a_parquet_log_read_as_text_is_named_parquet(tmp_path, write_log, name, options):
    """A Parquet log under a text extension (or --format) was told "line 1, byte 209 (0x84) is
    not UTF-8 text; save the file as UTF-8", which sends its writer astray."""
    path = tmp_path / name
    path.write_bytes(write_log(tmp_path / "log.parquet", ROWS).read_bytes())
    line = fail("compare", path, path, "-o", tmp_path / "r.html", *options)
    assert line == (
        f"ragreport: error: {path}: a Parquet file, not text; a Parquet run log is read by its "
        ".parquet extension or --format parquet"
    )
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("option", ["--qrels", "--passages"])
def test_a_gzipped_qrels_or_passage_table_says_so(tmp_path, option):
    """The log's own check did not reach these: a gzipped qrels file was "not UTF-8 text", a
    passage table "not a readable passage table (... Parquet magic bytes not found ...)"."""
    import gzip
    from pathlib import Path

    data = Path(__file__).parent / "data" / "trec_eval"
    packed = tmp_path / "packed.gz"
    packed.write_bytes(gzip.compress(b"passage_id,doc_id,start,end\np1,d1,0,5\n"))
    run = data / "results.test"
    qrels = packed if option == "--qrels" else data / "qrels.test"
    extra = ["--passages", packed] if option == "--passages" else []
    line = fail("compare", run, run, "--qrels", qrels, "-o", tmp_path / "r.html", *extra)
    assert line == (
        f"ragreport: error: {packed}: gzip-compressed; decompress it (gunzip -c {packed} > "
        f"{tmp_path / 'packed'}) and pass the file that writes"
    )


def test_string_views_and_fixed_size_lists_read_as_strings_and_lists(tmp_path, compare):
    """Newer pyarrow and polars write these layouts; both were refused ("has type
    string_view"), though DuckDB reads them as VARCHAR and LIST."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    plain = pa.Table.from_pylist([{**r, "retrieved_ids": r["retrieved_ids"][:20]} for r in ROWS])
    views = plain.cast(
        plain.schema.set(0, pa.field("question_id", pa.string_view())).set(
            1, pa.field("retrieved_ids", pa.list_(pa.string(), 20))
        )
    )
    assert str(views.schema.field("retrieved_ids").type).startswith("fixed_size_list")
    pq.write_table(plain, tmp_path / "plain.parquet")
    pq.write_table(views, tmp_path / "views.parquet")
    twin = tmp_path / "plain.parquet"
    out = twin_metrics(compare, tmp_path, tmp_path / "views.parquet", twin, "--k", 10)
    assert len(metrics(out)) >= 8


@pytest.mark.parametrize("written", ["float64", "decimal"])
def test_grades_pandas_wrote_as_floats_read_as_the_integers_they_are(tmp_path, compare, written):
    """pandas writes grades computed as floats as list<double>, DuckDB its literal [2.0, 1.0] as
    decimals; a CSV of the same log ("[2.0]") was read while the Parquet was refused. A fraction
    is still refused, with its row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    plain = pa.Table.from_pylist(ROWS)
    floats = plain.cast(plain.schema.set(3, pa.field("relevant_grades", pa.list_(pa.float64()))))
    if written == "decimal":
        decimals = pa.field("relevant_grades", pa.list_(pa.decimal128(2, 1)))
        floats = floats.cast(floats.schema.set(3, decimals))
    pq.write_table(plain, tmp_path / "plain.parquet")
    pq.write_table(floats, tmp_path / "floats.parquet")
    plain_log, floats_log = tmp_path / "plain.parquet", tmp_path / "floats.parquet"
    out = twin_metrics(compare, tmp_path, floats_log, plain_log, "--k", 25)
    # the grades count: q1's grades 2 and 1 at ranks 2 and 21 (gain 2**grade - 1), q2's at 27
    ideal = 3 + 1 / np.log2(3)
    assert out["metrics"]["ndcg@25"]["a"] == pytest.approx(
        ((3 / np.log2(3) + 1 / np.log2(22)) / ideal + 0) / 2, abs=1e-12
    )
    fraction = [{**r, "relevant_grades": [2.0, 0.5]} if r is ROWS[0] else r for r in ROWS]
    pq.write_table(
        pa.Table.from_pylist(fraction).cast(floats.schema), tmp_path / "fraction.parquet"
    )
    assert fail("compare", tmp_path / "fraction.parquet", plain_log, "-o", tmp_path / "x.html") == (
        f"ragreport: error: {tmp_path / 'fraction.parquet'}: row 1 (question_id 'q1'): "
        "relevant_grades has a grade of 0.5, not a whole number; offsets and grades are integers "
        "(read as they are, never rounded): fix the value in the log"
    )


def test_ragas_answer_relevancy_is_compared_like_its_other_scores(tmp_path, compare):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    ragas_frame([1.0, 1.0, 1.0], True).to_csv(a, index=False)  # answer_relevancy .9 .8 .7
    frame = ragas_frame([1.0, 1.0, 1.0], True).assign(answer_relevancy=[1.0, float("nan"), 0.4])
    frame.to_csv(b, index=False)
    rule = ("--require", "answer_relevance >= -1", "--inconclusive", "pass")  # a rule may name it
    out = compare(a, b, tmp_path / "out", "--n-boot", 100, *rule)
    relevance = out["metrics"]["answer_relevance"]
    assert (relevance["a"], relevance["b"], relevance["n"]) == (0.8, 0.7, 2)  # q2 failed in B
    assert [w for w in out["warnings"] if "no answer_relevan" in w] == [
        "Run B: 1 row has no answer_relevancy (NaN: the RAGAS metric failed)"
    ]


def test_map_file_with_a_byte_order_mark(tmp_path):
    path, mapping = tmp_path / "run.csv", tmp_path / "map.txt"
    path.write_text("id,correct\nq1,true\n")
    mapping.write_text("question_id=id\n", encoding="utf-8-sig")  # as Windows' Notepad saves it
    result = CliRunner().invoke(cli, ["validate", str(path), "--map", str(mapping)])
    assert result.exit_code == 0, result.output
    assert "ok, 1 row follows the run-log contract" in result.output


def test_csv_header_with_spaces_after_the_commas(tmp_path, compare):
    path = tmp_path / "run.csv"
    path.write_text("question_id, correct, faithfulness\nq1, true, 0.5\nq2, false, 1\n")
    out = compare(path, path, tmp_path / "out", "--n-boot", 100)
    assert (metrics(out)["correct"], metrics(out)["faithfulness"]) == (0.5, 0.75)
    path.write_text("question_id, correct,correct\nq1, true, false\n")
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert f"{path}: column 'correct' appears twice in the header; keep one" in line


def test_a_column_mapped_twice_from_different_sources_is_refused(tmp_path):
    """'--map question_id=id --map question_id=q' kept the last without a word; the same pair
    given twice (on the line and in a file) is one mapping."""
    path, mapping = tmp_path / "run.csv", tmp_path / "map.txt"
    path.write_text("id,q,correct\nq1,x1,true\n")
    mapping.write_text("question_id=id\n")
    line = fail("validate", path, "--map", "question_id=id", "--map", "question_id=q")
    assert line == (
        "ragreport: error: --map question_id=q: question_id is mapped from 'id' already, and "
        "now from 'q'; map each run-log column once"
    )
    result = CliRunner().invoke(
        cli, ["validate", str(path), "--map", "question_id=id", "--map", str(mapping)]
    )
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("suffix", ["feather", "arrow"])
def test_an_arrow_ipc_file_reads_as_its_parquet(tmp_path, write_log, compare, suffix):
    """pandas' to_feather and polars' write_ipc write Arrow IPC files: "cannot tell the format
    from the extension '.feather'", and no --format read them. They read as the same rows in
    Parquet, a RAGAS table and --map included."""
    frame = pd.read_parquet(write_log(tmp_path / "run.parquet", ROWS))
    path = tmp_path / f"run.{suffix}"
    frame.to_feather(path)
    expected = twin_metrics(compare, tmp_path, path, tmp_path / "run.parquet", "--k", 25)
    assert metrics(expected)
    renamed = tmp_path / f"renamed.{suffix}"
    frame.rename(columns={"question_id": "id"}).to_feather(renamed)
    mapped = compare(renamed, renamed, tmp_path / "m", "--n-boot", 100, "--k", 25,
                     "--map", "question_id=id")  # fmt: skip
    assert metrics(mapped) == metrics(expected)
    ragas = tmp_path / f"ragas.{suffix}"
    ragas_frame([1.0, 0.5, 0.25], True).to_feather(ragas)
    csv = tmp_path / "ragas.csv"
    ragas_frame([1.0, 0.5, 0.25], True).to_csv(csv, index=False)
    assert metrics(compare(ragas, ragas, tmp_path / "r", "--n-boot", 100)) == metrics(
        compare(csv, csv, tmp_path / "c", "--n-boot", 100)
    )
    broken = tmp_path / f"broken.{suffix}"
    broken.write_bytes(path.read_bytes()[:100])
    line = fail("compare", broken, broken, "-o", tmp_path / "r.html")
    assert f"{broken}: not a readable Arrow IPC (Feather) file (" in line


@pytest.mark.parametrize("suffix", ["xlsx", "xls", "ods"])
def test_a_spreadsheet_is_told_to_be_saved_as_csv(tmp_path, suffix):
    path = tmp_path / f"run.{suffix}"
    path.write_bytes(b"PK\x03\x04 not read")
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line.endswith(
        f"{path}: a spreadsheet (.{suffix}), which is not read; save the sheet as CSV (pandas: "
        "read_excel(path).to_csv('run.csv', index=False))"
    )


def test_a_feather_log_with_float16_or_decimal256_columns_reads_as_its_parquet(
    tmp_path, write_log, compare
):
    """DuckDB reads a float16 and a decimal256 from a Parquet file but not from Arrow: a Feather
    log holding either, in a compared column or an unused one, stopped every command on
    "Unsupported Internal Arrow Type" (a traceback, exit 1, which CI reads as a failed gate).
    They read as their Parquet file reads them."""
    table = pq.read_table(write_log(tmp_path / "run.parquet", ROWS))
    faithful = pa.array([0.25, 0.5, 0.75, 1.0][: table.num_rows] * 10)[: table.num_rows]
    table = table.append_column("faithfulness", faithful.cast(pa.float16()))
    table = table.append_column("judge", faithful.cast(pa.float16()))
    table = table.append_column("cost", pa.array([1] * table.num_rows).cast(pa.decimal256(40, 2)))
    pq.write_table(table, tmp_path / "wide.parquet")
    feather.write_feather(table, tmp_path / "wide.feather")
    wide = tmp_path / "wide.feather"
    out = twin_metrics(compare, tmp_path, wide, tmp_path / "wide.parquet", "--k", 25)
    assert "faithfulness" in metrics(out)
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "wide.feather")])
    assert result.exit_code == 0, result.output
