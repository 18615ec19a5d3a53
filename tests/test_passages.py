"""Passage tables (--passages): runs logged with passage ids scored against span labels, checked
against the same runs logged with their spans, and the one-line errors of bad tables."""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from test_input_validate import labelled
from test_readers import fail

from reportgen.cli import cli

ROOT = Path(__file__).resolve().parent.parent
CHUNKINGS = [ROOT / "sample_runs" / f"manuals_{n}.parquet" for n in ("a_chunk400", "b_chunk1000")]


def _name(span: dict) -> str:
    return f"{span['doc_id']}/{span['start']}"


def as_passage_ids(log: Path, out: Path) -> tuple[Path, Path]:
    """The span log ``log`` rewritten with passage ids, and its passage table (every passage the
    log retrieves, plus one it never retrieves)."""
    rows = pq.read_table(log).to_pylist()
    spans = {_name(s): s for r in rows for s in r["retrieved_spans"] + r["context_spans"]}
    spans["unretrieved/0"] = {"doc_id": "unretrieved", "start": 0, "end": 10}
    table = pa.table(
        {
            "passage_id": list(spans),
            "doc_id": [s["doc_id"] for s in spans.values()],
            "start": [s["start"] for s in spans.values()],
            "end": [s["end"] for s in spans.values()],
        }
    )
    passages = out / f"{log.stem}_passages.parquet"
    pq.write_table(table, passages)
    logged = pq.read_table(log).drop_columns(["retrieved_spans", "context_spans"])
    for column in ("retrieved", "context"):
        ids = [[_name(s) for s in r[f"{column}_spans"]] for r in rows]
        logged = logged.append_column(f"{column}_ids", pa.array(ids, pa.list_(pa.string())))
    path = out / f"{log.stem}_ids.parquet"
    pq.write_table(logged, path)
    return path, passages


def test_passage_ids_score_as_the_spans_they_stand_for(tmp_path, compare):
    (a, a_passages), (b, b_passages) = (as_passage_ids(log, tmp_path) for log in CHUNKINGS)
    spans = compare(*CHUNKINGS, tmp_path / "spans", "--n-boot", 200)
    ids = compare(
        a, b, tmp_path / "ids", "--n-boot", 200, "--passages", a_passages, "--passages", b_passages
    )
    assert "evidence_recall" in ids["metrics"] and "ndcg@3" in ids["metrics"]
    assert ids["metrics"] == spans["metrics"]
    assert [r["read"]["passages"] for r in ids["runs"]] == [str(a_passages), str(b_passages)]
    # verify re-reads each log with its recorded passage table
    result = CliRunner().invoke(cli, ["verify", str(tmp_path / "ids" / "report.json")])
    assert result.exit_code == 0, result.output
    # the table changed, the log did not: the line names both (it blamed the log alone)
    table = pq.read_table(a_passages)
    pq.write_table(table.set_column(3, "end", pc.add(table["end"], 1)), a_passages)
    result = CliRunner().invoke(cli, ["verify", str(tmp_path / "ids" / "report.json")])
    assert result.exit_code == 1
    assert (
        f"runs[0].sha256: {a} with its passage table {a_passages} (one sha256 covers both) is "
        "not the log the report read"
    ) in result.output


def _large(table: pa.Table) -> pa.Table:
    """``table`` with the large string and list types polars writes (large_string,
    large_list), the values the same."""

    def widened(t: pa.DataType) -> pa.DataType:
        if pa.types.is_string(t):
            return pa.large_string()
        if pa.types.is_list(t):
            return pa.large_list(widened(t.value_type))
        if pa.types.is_struct(t):
            return pa.struct([f.with_type(widened(f.type)) for f in t])
        return t

    return table.cast(pa.schema([f.with_type(widened(f.type)) for f in table.schema]))


def test_a_log_of_large_types_with_a_passage_table_scores_as_the_same_log(tmp_path, compare):
    """A log written by polars (large_string ids and doc_ids) with a passage table stopped the
    report with a traceback: its labels' documents could not be joined with the table's."""
    (a, a_passages), _ = (as_passage_ids(log, tmp_path) for log in CHUNKINGS)
    large = tmp_path / "large.parquet"
    pq.write_table(_large(pq.read_table(a)), large)
    assert pq.read_schema(large).field("relevant_spans").type.value_type[0].type == "large_string"
    plain = compare(a, a, tmp_path / "plain", "--n-boot", 100, "--passages", a_passages)
    wide = compare(large, large, tmp_path / "wide", "--n-boot", 100, "--passages", a_passages)
    assert wide["metrics"] == plain["metrics"] and "evidence_recall" in wide["metrics"]
    # labels of another type than a list of spans are refused naming the column, as without
    # a passage table (they stopped the reading of the table with a traceback)
    text = tmp_path / "text.parquet"
    table = pq.read_table(a)
    labels = pa.array([str(v) for v in table["relevant_spans"].to_pylist()])
    pq.write_table(
        table.set_column(table.schema.get_field_index("relevant_spans"), "relevant_spans", labels),
        text,
    )
    line = fail("compare", text, text, "-o", tmp_path / "r.html", "--passages", a_passages)
    assert f"{text}: column relevant_spans has type string, expected list<struct<" in line


def _log(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "run.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


LABELLED = {
    "question_id": "q1",
    "retrieved_ids": ["p1", "p2"],
    "relevant_spans": [{"doc_id": "d1", "start": 0, "end": 5, "grade": 1}],
    "correct": True,
}


def _table(tmp_path: Path, text: str, suffix: str = ".csv") -> Path:
    path = tmp_path / f"passages{suffix}"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("passage_id,doc_id,start,end\np1,d1,0,5\np2,d1,7,7\n", "line 3 has start 7 >= end"),
        ("passage_id,doc_id,start,end\np1,d1,-3,5\np2,d1,5,9\n", "line 2 has start -3 below 0"),
        ("passage_id,doc_id,start,end\np1,d1,0,5\np1,d2,0,5\n", "line 3 repeats passage_id 'p1'"),
        ("passage_id,doc_id,start,end\np1,,0,5\np2,d1,0,5\n", "line 2 has no doc_id"),
        ("passage_id,doc_id,start\np1,d1,0\n", "no column end; a passage table has the columns"),
        (
            "passage_id,doc_id,start,end\np1,d1,0,5\np2,d1,zero,5\n",
            "line 3 has start zero, not a number; offsets count whole characters",
        ),
        (
            "passage_id,doc_id,start,end\np1,d1,0,5\np2,d1,5,inf\n",
            "line 3 has end inf, not a finite number; offsets count whole characters",
        ),
        (
            "passage_id,doc_id,start,end\np1,d1,0,9223372036854775808\n",
            "line 2 has end 9223372036854775808, beyond 2**63 - 1, the largest integer read",
        ),
    ],
)
def test_a_bad_passage_table_is_named_with_its_row(tmp_path, table, message):
    """A CSV table's rows are named by their lines, as an editor shows them (row 2 under the
    header is line 3), as a log's are."""
    log, passages = _log(tmp_path, [LABELLED]), _table(tmp_path, table)
    line = fail("compare", log, log, "-o", tmp_path / "r.html", "--k", 2, "--passages", passages)
    assert f"{passages}: {message}" in line


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        # an empty doc_id was accepted where no question retrieved the passage (a CSV's empty
        # cell reads as missing), and else blamed on the log: "retrieved_spans has a span with
        # no doc_id" of a log without that column
        ({"doc_id": ["d1", ""]}, "row 2 has no doc_id"),
        ({"passage_id": ["p1", ""]}, "row 2 has no passage_id"),
        # offsets as text: plain digits were read, ' 400' and '400.0' refused as "column start
        # has type string; expected integers", naming no row; read as a CSV table's are
        ({"start": ["0", "four"]}, "row 2 has start four, not a number; offsets count whole"),
    ],
)
def test_a_bad_parquet_passage_table_is_named_as_a_csv_one(tmp_path, columns, message):
    log = _log(tmp_path, [LABELLED])
    table = {"passage_id": ["p1", "p2"], "doc_id": ["d1", "d1"], "start": [0, 5], "end": [5, 9]}
    passages = tmp_path / "passages.parquet"
    pq.write_table(pa.table({**table, **columns}), passages)
    line = fail("compare", log, log, "-o", tmp_path / "r.html", "--k", 2, "--passages", passages)
    assert f"{passages}: {message}" in line


def test_offsets_of_a_parquet_passage_table_as_text_read_as_a_csv_s(tmp_path, compare):
    log = _log(tmp_path, [LABELLED])
    tables = {}
    for kind, start in (("numbers", [0, 5]), ("text", ["0", " 5.0"])):
        tables[kind] = tmp_path / f"{kind}.parquet"
        table = {"passage_id": ["p1", "p2"], "doc_id": ["d1", "d1"], "start": start}
        pq.write_table(pa.table({**table, "end": [5, 9]}), tables[kind])
    got = {
        kind: compare(log, log, tmp_path / kind, "--k", 2, "--passages", path, "--n-boot", 100)
        for kind, path in tables.items()
    }
    assert got["text"]["metrics"] == got["numbers"]["metrics"]


@pytest.mark.parametrize(
    ("suffix", "table", "where"),
    [
        # a blank line and a quoted doc_id of two lines above the bad row: it starts on line 6
        (".csv", 'passage_id,doc_id,start,end\np1,d1,0,5\n\np2,"manual\nB",0,5\np3,d1,9,2\n',
         "line 6"),
        (".tsv", "passage_id\tdoc_id\tstart\tend\np1\td1\t0\t5\n\np3\td1\t9\t2\n", "line 4"),
        (".parquet", None, "row 2"),  # a Parquet table has rows, not lines
    ],
)  # fmt: skip
def test_a_passage_table_row_is_named_by_its_line_past_blank_lines_and_line_breaks(
    tmp_path, suffix, table, where
):
    log = _log(tmp_path, [LABELLED])
    passages = tmp_path / f"passages{suffix}"
    if table is None:
        pq.write_table(
            pa.table({"passage_id": ["p1", "p3"], "doc_id": ["d1", "d1"], "start": [0, 9],
                      "end": [5, 2]}),
            passages,
        )  # fmt: skip
    else:
        passages.write_text(table)
    line = fail("compare", log, log, "-o", tmp_path / "r.html", "--k", 2, "--passages", passages)
    assert f"{passages}: {where} has start 9 >= end" in line, line


@pytest.mark.parametrize(
    ("suffix", "table", "message"),
    [
        (".csv", "passage_id,doc_id,start,end\np1,d,0,150\np2,d,150\n",
         "line 3 has 3 fields, fewer than the header's 4; give every column a field, an empty "
         "one for a missing value"),
        # past a blank line and a doc_id of two lines, as a log's rows are named
        (".tsv", 'passage_id\tdoc_id\tstart\tend\np1\t"d\nB"\t0\t5\n\np2\td\t5\t9\t9\n',
         "line 5 has 5 fields, more than the header's 4; quote values that contain a tab"),
    ],
)  # fmt: skip
def test_a_passage_table_row_of_another_number_of_fields_is_named_by_its_line(
    tmp_path, suffix, table, message
):
    """It was "not a readable passage table (CSV parse error: Expected 4 columns, got 3: ...)",
    with no line."""
    log, passages = _log(tmp_path, [LABELLED]), _table(tmp_path, table, suffix)
    line = fail("compare", log, log, "-o", tmp_path / "r.html", "--k", 2, "--passages", passages)
    assert line == f"ragreport: error: {passages}: {message}"


@pytest.mark.parametrize(
    ("make", "state"),
    [(lambda p: None, "no such file"), (os.mkfifo, "not a regular file")],
    ids=["missing", "pipe"],
)
def test_a_passage_table_that_is_no_file_says_which(tmp_path, make, state):
    """A pipe exists: "no such file" sent the user looking for a typo in its path."""
    log, passages = _log(tmp_path, [LABELLED]), tmp_path / "passages.csv"
    make(passages)
    line = fail("compare", log, log, "-o", tmp_path / "r.html", "--passages", passages)
    assert line.endswith(f"{passages}: {state}; pass a passage table with --passages")


def test_csv_offsets_are_read_exactly_beside_a_whole_number_written_as_a_float(tmp_path, compare):
    """One row written 200.0 made a CSV's start column floats, which rounded 2**53 + 1 to
    2**53: the passage then covered a label it lies beside."""
    big = 2**53
    label = {"doc_id": "d7", "start": big, "end": big + 1, "grade": 1}
    log = _log(tmp_path, [dict(LABELLED, relevant_spans=[label], context_ids=["p6"])])
    rows = f"p1,d1,200.0,300\np2,d1,300,400\np6,d7,{big + 1},{big + 3}\n"
    passages = _table(tmp_path, "passage_id,doc_id,start,end\n" + rows)
    out = compare(log, log, tmp_path / "o", "--passages", passages, "--n-boot", 100)
    assert out["metrics"]["recall@1"]["a"] == 0.0
    assert out["metrics"]["evidence_recall"]["a"] == 0.0


def test_an_unknown_passage_id_names_the_row_of_the_log(tmp_path):
    log = _log(tmp_path, [LABELLED, dict(LABELLED, question_id="q2", retrieved_ids=["p1", "p7"])])
    passages = _table(
        tmp_path, "passage_id\tdoc_id\tstart\tend\np1\td1\t0\t5\np2\td1\t5\t9\n", ".tsv"
    )
    line = fail("compare", log, log, "-o", tmp_path / "r.html", "--k", 2, "--passages", passages)
    assert line.endswith(
        f"{log}: row 2 (question_id 'q2'): retrieved_ids has passage 'p7', which {passages} does "
        "not list; add it "
        "to the passage table or pass the table of this run"
    )
    text = tmp_path / "run.jsonl"  # a text log's row is named by its line
    text.write_text("".join(json.dumps(r) + "\n\n" for r in pq.read_table(log).to_pylist()))
    line = fail("compare", text, text, "-o", tmp_path / "r.html", "--k", 2, "--passages", passages)
    assert f"{text}: line 3 (question_id 'q2'): retrieved_ids has passage 'p7'" in line


def test_a_log_with_spans_takes_no_passage_table(tmp_path):
    """A log of spans beside a log of ids whose table is given: the refusal said "drop one of
    the two", as if the spans had to go; it names the route that compares them, which works."""
    spans = tmp_path / "spans"
    spans.mkdir()
    log = _log(spans, [dict(LABELLED, retrieved_spans=[{"doc_id": "d1", "start": 0, "end": 5}])])
    passages = _table(tmp_path, "passage_id,doc_id,start,end\np1,d1,0,5\np2,d1,5,9\n")
    ids = _log(tmp_path, [LABELLED])
    line = fail("compare", log, ids, "-o", tmp_path / "r.html", "--k", 2, "--passages", passages)
    assert line.endswith(
        "has retrieved_spans already; for a table of another log alone, write that log with its "
        "spans first (ragreport convert LOG --passages TABLE -o LOG.parquet) and compare without "
        "--passages"
    )
    converted = tmp_path / "ids-spans.parquet"
    runner = CliRunner()
    args = ["convert", str(ids), "--passages", str(passages), "-o", str(converted)]
    done = runner.invoke(cli, args)
    assert done.exit_code == 0, done.output
    args = ["compare", str(log), str(converted), "-o", str(tmp_path / "r.html"), "--k", "2"]
    done = runner.invoke(cli, args)
    assert done.exit_code == 0, done.output
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["comparisons"][0]["metrics"]["recall@2"]["b"] == 1.0


def test_span_labels_with_passage_ids_and_no_table_are_refused(tmp_path):
    """Without --passages no id matches a span: every retrieval metric read 0 (or, beside a run
    logging spans, was dropped), and the failure classes blamed the retriever."""
    ids = _log(tmp_path, [dict(LABELLED, context_ids=["p1"])])
    spans = tmp_path / "spans.parquet"
    pq.write_table(
        pa.Table.from_pylist(
            [dict(LABELLED, context_spans=[{"doc_id": "d1", "start": 0, "end": 5}])]
        ),
        spans,
    )
    message = (
        f"{ids}: labels its evidence with relevant_spans but logs its passages only as ids "
        "(retrieved_ids, context_ids), which match no span; pass --passages with its passage "
        "table (passage_id, doc_id, start, end), or log retrieved_spans or context_spans"
    )
    assert fail("compare", spans, ids, "-o", tmp_path / "r.html").endswith(message)
    assert fail("metrics", ids, "-o", tmp_path / "m.parquet").endswith(message)
    checked = CliRunner().invoke(cli, ["validate", str(ids)])
    assert checked.exit_code == 2 and checked.output.strip() == labelled(ids, message)


def test_a_labelled_document_no_passage_covers_is_a_warning(tmp_path, compare):
    label = {"doc_id": "d9", "start": 0, "end": 4, "grade": 1}
    log = _log(
        tmp_path,
        [dict(LABELLED, question_id=f"q{i}", relevant_spans=LABELLED["relevant_spans"] + [label])
         for i in range(3)],
    )  # fmt: skip
    passages = _table(tmp_path, "passage_id,doc_id,start,end\np1,d1,0,5\np2,d1,5,9\n")
    out = compare(log, log, tmp_path / "o", "--k", 2, "--passages", passages, "--n-boot", 100)
    assert (
        "1 labelled document appears in no passage of passages.csv, so no passage of this run "
        "can cover its labels: 'd9'"
    ) in "\n".join(out["warnings"])
    # p1 covers d1:0-5, the one label of d1; d9's label is found by no passage
    assert out["metrics"]["recall@2"]["a"] == pytest.approx(1 / 2)


@pytest.mark.parametrize(
    ("table_id", "why"),
    [("d1 ", "spaces around it"), ("man\u0075\u0301al", "the Unicode form of its letters")],
)
def test_a_labelled_document_the_table_names_but_for_its_form_says_so(
    tmp_path, compare, table_id, why
):
    """The table's 'd1 ' (a trailing space) or NFD 'manúal' (macOS' file names) against the
    labels' 'd1' or NFC 'manúal': the warning named the label's id unquoted, reading as the
    table's, and every metric read 0 with no hint why."""
    label_id = unicodedata.normalize("NFC", table_id.strip())
    label = {"doc_id": label_id, "start": 0, "end": 4, "grade": 1}
    log = _log(
        tmp_path, [dict(LABELLED, question_id=f"q{i}", relevant_spans=[label]) for i in range(3)]
    )
    passages = _table(tmp_path, f"passage_id,doc_id,start,end\np1,{table_id},0,5\np2,d0,5,9\n")
    out = compare(log, log, tmp_path / "o", "--k", 2, "--passages", passages, "--n-boot", 100)
    assert (
        "1 labelled document appears in no passage of passages.csv, so no passage of this run "
        f"can cover its labels: {label_id!r}; 1 of them differs from a document of the table "
        f"only in {why} ({label_id!r} against {table_id!r}): write the doc_id alike in both"
    ) in "\n".join(out["warnings"])


def test_a_label_across_a_cut_is_judged_on_every_passage_of_the_table(tmp_path, compare):
    """Label d1 [90, 110): A retrieves p1 [0, 100) and p3 [100, 200), which cut it, but A's table
    also has p2 [50, 150), which holds it whole and was never retrieved: A cuts no label. B's
    table has the two passages it retrieves, which cut it."""
    label = {"doc_id": "d1", "start": 90, "end": 110, "grade": 1}
    rows = [{"question_id": f"q{i}", "retrieved_ids": ["p1", "p3"], "relevant_spans": [label],
             "correct": i % 2 == 0} for i in range(4)]  # fmt: skip
    log = _log(tmp_path, rows)
    whole = _table(
        tmp_path, "passage_id,doc_id,start,end\np1,d1,0,100\np2,d1,50,150\np3,d1,100,200\n"
    )
    cut = tmp_path / "cut.csv"
    cut.write_text("passage_id,doc_id,start,end\np1,d1,0,100\np3,d1,100,200\n")
    out = compare(
        log, log, tmp_path / "o", "--k", 2, "--passages", whole, "--passages", cut, "--n-boot", 100
    )
    assert out["audit"]["smells"]["span_across_cut"]["counts"] == {"a": 0, "b": 4}
    assert out["audit"]["smells"]["span_across_cut"]["title"] == (  # not "the run logged"
        "a labelled span across a cut: no passage of the run's passage table (the rankings', "
        "without one) contains it whole"
    )
    # both retrieve the same two passages, so the metrics agree
    assert out["metrics"]["recall@2"]["a"] == out["metrics"]["recall@2"]["b"] == 1.0


def test_labels_no_passage_of_the_table_reaches_are_warnings(tmp_path, compare):
    """Labels no passage of the table reaches count as missed, as a misspelt doc_id's do, and say
    why. d1 [20, 30) starts past the last passage (offsets of another version of the document,
    or bytes for characters); d1 [6, 9) lies between p1 [0, 5) and p2 [10, 20) (text the
    chunker put in no passage: a heading, a footer); d1 [12, 15) lies in p2."""
    spans = [{"doc_id": "d1", "start": s, "end": e, "grade": 1} for s, e in ((6, 9), (12, 15))]
    rows = [dict(LABELLED, question_id=f"q{i}", relevant_spans=spans) for i in range(2)]
    past = {"doc_id": "d1", "start": 20, "end": 30, "grade": 1}
    rows.append(dict(LABELLED, question_id="q2", relevant_spans=[past]))
    log = _log(tmp_path, rows)
    passages = _table(tmp_path, "passage_id,doc_id,start,end\np1,d1,0,5\np2,d1,10,20\n")
    out = compare(log, log, tmp_path / "o", "--k", 2, "--passages", passages, "--n-boot", 100)
    assert (
        "Run A: 1 label starts past the last passage of its document in passages.csv, so no "
        "passage of this run can cover it: d1 [20, 30); check that the labels and the table "
        "count characters of the same version of each document"
    ) in out["warnings"]
    assert (
        "Run A: 1 label lies in a gap between the passages of its document in passages.csv (or "
        "before the first), so no passage of this run can cover it: d1 [6, 9); the chunker put "
        "that text in no passage"
    ) in out["warnings"]
    # q0 and q1 find d1 [12, 15) and miss d1 [6, 9); q2 misses its one label
    assert out["metrics"]["recall@2"]["a"] == pytest.approx((1 / 2 + 1 / 2 + 0) / 3)


def test_grade_0_labels_no_passage_reaches_are_no_warning(tmp_path, compare):
    """A label of grade 0 (judged, not relevant) is dropped before anything is measured, as the
    across-cut audit drops it; one in a document the table lacks (d9), past the last passage
    (d1 [20, 30)) or in a gap (d1 [6, 9)) was warned of as evidence no passage could cover. A
    label with no grade counts as grade 1, and one in a gap (d1 [7, 9)) is still named."""
    found = {"doc_id": "d1", "start": 0, "end": 5, "grade": 1}
    judged = [{"doc_id": d, "start": s, "end": e, "grade": 0}
              for d, s, e in (("d9", 0, 4), ("d1", 20, 30), ("d1", 6, 9))]  # fmt: skip
    rows = [dict(LABELLED, question_id=f"q{i}", relevant_spans=[found, *judged]) for i in range(2)]
    ungraded = {"doc_id": "d1", "start": 7, "end": 9, "grade": None}
    rows.append(dict(LABELLED, question_id="q2", relevant_spans=[found, ungraded]))
    log = _log(tmp_path, rows)
    passages = _table(tmp_path, "passage_id,doc_id,start,end\np1,d1,0,5\np2,d1,10,20\n")
    out = compare(log, log, tmp_path / "o", "--k", 2, "--passages", passages, "--n-boot", 100)
    assert [w for w in out["warnings"] if "no passage of this run can cover" in w] == [
        f"Run {run}: 1 label lies in a gap between the passages of its document in passages.csv "
        "(or before the first), so no passage of this run can cover it: d1 [7, 9); the chunker "
        "put that text in no passage"
        for run in "AB"
    ]
    # q0 and q1 find their one label of grade > 0; q2 finds d1 [0, 5), not d1 [7, 9)
    assert out["metrics"]["recall@2"]["a"] == pytest.approx((1 + 1 + 1 / 2) / 3)


def test_passages_given_once_serve_every_log_and_else_once_per_log(tmp_path):
    log = _log(tmp_path, [LABELLED])
    passages = _table(tmp_path, "passage_id,doc_id,start,end\np1,d1,0,5\np2,d1,5,9\n")
    line = fail(
        "compare", log, log, log, "-o", tmp_path / "r.html", "--k", 2,
        "--passages", passages, "--passages", passages,
    )  # fmt: skip
    assert "--passages given 2 times; give it once for every log or once per log (3)" in line


def test_convert_writes_the_spans_of_the_passages(tmp_path):
    log = _log(tmp_path, [dict(LABELLED, context_ids=["p2"])])
    passages = _table(tmp_path, "passage_id,doc_id,start,end\np1,d1,0,5\np2,d1,5,9\n")
    out = tmp_path / "spans.parquet"
    result = CliRunner().invoke(
        cli, ["convert", str(log), "-o", str(out), "--passages", str(passages)]
    )
    assert result.exit_code == 0, result.output
    (row,) = pq.read_table(out).to_pylist()
    assert row["retrieved_spans"] == [
        {"doc_id": "d1", "start": 0, "end": 5},
        {"doc_id": "d1", "start": 5, "end": 9},
    ]
    assert row["context_spans"] == [{"doc_id": "d1", "start": 5, "end": 9}]
    assert row["retrieved_ids"] == ["p1", "p2"]  # the ids stay


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_ids_of_a_text_passage_table_are_text(tmp_path, suffix):
    """A document id such as "007" is text: read as the number 7, it would match no label."""
    label = {"doc_id": "007", "start": 0, "end": 5, "grade": 1}
    log = _log(tmp_path, [dict(LABELLED, retrieved_ids=["001"], relevant_spans=[label])])
    sep = "\t" if suffix == ".tsv" else ","
    lines = ["passage_id", "doc_id", "start", "end"], ["001", "007", "0", "5"]
    passages = _table(tmp_path, "".join(sep.join(line) + "\n" for line in lines), suffix)
    out = tmp_path / "spans.parquet"
    result = CliRunner().invoke(
        cli, ["convert", str(log), "-o", str(out), "--passages", str(passages)]
    )
    assert result.exit_code == 0, result.output
    (row,) = pq.read_table(out).to_pylist()
    assert row["retrieved_spans"] == [{"doc_id": "007", "start": 0, "end": 5}]


@pytest.mark.parametrize("kind", ["ids", "spans"])
def test_k_on_a_log_without_a_ranking_names_the_columns_it_logs(tmp_path, kind):
    prompt = ["p1"] if kind == "ids" else [{"doc_id": "d1", "start": 0, "end": 5}]
    row = {k: v for k, v in LABELLED.items() if k not in ("retrieved_ids", "relevant_spans")}
    spans = {"relevant_spans": LABELLED["relevant_spans"]}
    labels = {"relevant_ids": ["p1"]} if kind == "ids" else spans
    log = _log(tmp_path, [dict(row, **labels, **{f"context_{kind}": prompt})])
    assert fail("compare", log, log, "-o", tmp_path / "r.html", "--k", 2).endswith(
        f"{log}: --k cuts retrieved_{kind}, which this log does not have; drop --k to score "
        f"context_{kind}"
    )


def test_a_column_one_log_of_the_pair_lacks_names_that_log(tmp_path):
    """Both messages named the first log, which had the column."""
    row = {"question_id": "q1", "relevant_ids": ["p1"], "correct": True}
    full = tmp_path / "full.parquet"
    pq.write_table(
        pa.Table.from_pylist([dict(row, retrieved_ids=["p1"], context_ids=["p1"])]), full
    )
    (tmp_path / "b").mkdir()
    no_prompt = _log(tmp_path / "b", [dict(row, retrieved_ids=["p1"])])
    assert fail("compare", full, no_prompt, "-o", tmp_path / "r.html") == (
        f"ragreport: error: {no_prompt}: no context_ids column, so the prompt cutoff is unknown; "
        "pass --k with the number of passages the generator received"
    )
    # metrics asks for --k where compare does, and only there: it asked a log of labels and no
    # ranking for one, which compare then refused ("no ranking ... for --k to cut")
    out = tmp_path / "m.parquet"
    assert fail("metrics", no_prompt, "-o", out) == fail(
        "compare", no_prompt, no_prompt, "-o", tmp_path / "r.html"
    )
    (tmp_path / "c").mkdir()
    labels_only = _log(tmp_path / "c", [row])
    done = CliRunner().invoke(cli, ["metrics", str(labels_only), "-o", str(out)])
    assert done.exit_code == 0, done.output
    out.unlink()
    assert fail("metrics", labels_only, "-o", out, "--k", 1) == fail(
        "compare", labels_only, labels_only, "-o", tmp_path / "r.html", "--k", 1
    )
    no_ranking = _log(tmp_path, [dict(row, context_ids=["p1"])])
    assert fail("compare", full, no_ranking, "-o", tmp_path / "r.html", "--k", 1) == (
        f"ragreport: error: {no_ranking}: --k cuts retrieved_ids, which this log does not have; "
        "drop --k to score context_ids"
    )


def test_one_span_under_two_ids_in_a_prompt_is_a_repeated_passage(tmp_path, compare):
    """A passage table that names one span twice (p1 and p1b): the second copy was scored as a
    repeat (precision counts the span once) with no word, since the check compared ids."""
    passages = _table(
        tmp_path, "passage_id,doc_id,start,end\np1,d1,0,5\np1b,d1,0,5\np2,d1,5,9\np3,d2,0,9\n"
    )
    rows = [
        dict(LABELLED, question_id=f"q{i}", retrieved_ids=ids + ["p2"], context_ids=ids)
        for i, ids in enumerate([["p1", "p1b", "p3"]] * 2 + [["p1", "p2", "p3"]] * 4)
    ]
    log = _log(tmp_path, rows)
    out = compare(log, log, tmp_path / "o", "--passages", passages, "--n-boot", 100)
    smell = out["audit"]["smells"]["repeated_passage"]
    assert smell["counts"] == {"a": 2, "b": 2} and smell["examples"] == ["q0", "q1"]
    # scored once: one labelled span among the three slots of every prompt
    assert out["metrics"]["precision@3"]["a"] == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("name", "separator", "said"),
    [
        ("p.csv", ";", "separated by semicolons; write the table with commas (to_csv's default) "
         "or as TSV"),
        ("p.csv", "\t", "separated by tabs, not commas; name the file .tsv"),
        ("p.tsv", ",", "separated by commas, not tabs; name the file .csv"),
    ],
)  # fmt: skip
def test_a_passage_table_of_another_separator_is_named_so(tmp_path, name, separator, said):
    """A passage table a spreadsheet wrote with semicolons, or a TSV under a .csv name, read as
    one column and was refused for "no column passage_id, doc_id, start, end"."""
    log = _log(tmp_path, [dict(LABELLED, question_id="q1")])
    table = tmp_path / name
    table.write_text(separator.join(["passage_id", "doc_id", "start", "end"]) + "\n"
                     + separator.join(["p1", "d1", "0", "5"]) + "\n")  # fmt: skip
    header = separator.join(["passage_id", "doc_id", "start", "end"])
    line = fail("compare", log, log, "-o", tmp_path / "r.html", "--passages", table)
    assert (
        line
        == f"ragreport: error: {table}: the header is one field, {header!r}: the columns are {said}"
    )
