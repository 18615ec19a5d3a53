"""Span offsets and grades as logged: values no integer can stand for, and the column a problem
of a span log is named by (the one the log has, not the id lists made from its spans)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from test_input_validate import labelled, validate
from test_readers import fail

from reportgen.cli import cli

OFFSET = pa.int64()


def _spans(offset: pa.DataType, grade: bool) -> pa.DataType:
    fields = [("doc_id", pa.string()), ("start", offset), ("end", offset)]
    return pa.list_(pa.struct(fields + ([("grade", offset)] if grade else [])))


def _log(tmp_path: Path, column: str, second: dict | None, offset: pa.DataType) -> Path:
    """Two questions labelled with spans and ranked by spans; question q2's ``column`` holds
    ``second`` (a span) where q1's holds d1[0, 5)."""
    first = {"doc_id": "d1", "start": 0, "end": 5}
    columns = {}
    for name in ("relevant_spans", "retrieved_spans", "context_spans"):
        grade = name == "relevant_spans"
        span = {**first, "grade": 1} if grade else first
        value = second if name == column else span
        kind = _spans(offset if name == column else OFFSET, grade)
        columns[name] = pa.array([[span], [value]], kind)
    path = tmp_path / "run.parquet"
    pq.write_table(
        pa.table({"question_id": ["q1", "q2"], **columns, "correct": [True, False]}), path
    )
    return path


@pytest.mark.parametrize(
    ("column", "span", "offset", "message"),
    [
        (
            "relevant_spans",
            {"doc_id": "d1", "start": 2.7, "end": 9.6, "grade": 1},
            pa.float64(),
            "relevant_spans has start 2.7, not a whole number",
        ),
        (
            "relevant_spans",
            {"doc_id": "d1", "start": 2, "end": 9, "grade": 0.4},
            pa.float64(),
            "relevant_spans has grade 0.4, not a whole number",
        ),
        (
            "context_spans",
            {"doc_id": "d1", "start": 0, "end": 9.5},
            pa.float64(),
            "context_spans has end 9.5, not a whole number",
        ),
        (
            "retrieved_spans",
            {"doc_id": "d1", "start": 0, "end": 2**63 + 5},
            pa.uint64(),
            "retrieved_spans has end 9223372036854775813, beyond 2**63 - 1, the largest "
            "integer read",
        ),
        (
            "relevant_spans",
            {"doc_id": "d1", "start": 0, "end": 1e30, "grade": 1},
            pa.float64(),
            "relevant_spans has end 1e+30, beyond 2**63 - 1, the largest integer read",
        ),
        (
            "relevant_spans",
            {"doc_id": "d1", "start": Decimal("2.5"), "end": 9, "grade": 1},
            pa.decimal128(18, 1),
            "relevant_spans has start 2.5, not a whole number",
        ),
    ],
)
def test_an_offset_or_grade_no_integer_holds_is_refused_with_its_row(
    tmp_path, column, span, offset, message
):
    log = _log(tmp_path, column, span, offset)
    line = fail("compare", log, log, "-o", tmp_path / "r.html")
    assert f"{log}: row 2 (question_id 'q2'): {message}; " in line
    assert "fix the value in the log" in line
    # validate: compare's refusal first, then the first bad value of each other field (2.7's
    # span ends at 9.6, no integer either)
    bad = [
        field
        for field, value in span.items()
        if field != "doc_id" and (value >= 2**63 or not float(value).is_integer())
    ]
    lines = validate(log, code=2)
    assert lines[0] == labelled(log, line.split("error: ", 1)[1]) and len(lines) == len(bad)
    assert all(f" has {field} " in text for field, text in zip(bad, lines, strict=True))


@pytest.mark.parametrize("offset", [pa.float64(), pa.decimal128(18, 0)])
def test_whole_offsets_logged_as_floats_are_read_as_they_are(tmp_path, compare, offset):
    """DuckDB writes offsets computed in SQL as DECIMAL(18,0): refused ("expected an integer")
    where the same offsets as doubles were read."""
    span = {"doc_id": "d1", "start": 0, "end": 5}
    log = _log(tmp_path, "context_spans", span, offset)
    assert validate(log, code=0) == [f"{log}: ok, 2 rows follow the run-log contract"]
    (tmp_path / "i").mkdir()
    integers = _log(tmp_path / "i", "context_spans", span, OFFSET)
    read = compare(log, log, tmp_path / "o")["metrics"]
    assert read == compare(integers, integers, tmp_path / "p")["metrics"] and read


@pytest.mark.parametrize(
    ("column", "span", "message"),
    [
        ("context_spans", None, "context_spans has 1 null(s)"),
        ("retrieved_spans", None, "retrieved_spans has 1 null(s)"),
        # an empty document name is no name, as a null is: a label no passage could find
        (
            "relevant_spans",
            {"doc_id": "", "start": 0, "end": 5, "grade": 1},
            "relevant_spans has a span with no doc_id; name the document of every span",
        ),
        (
            "context_spans",
            {"doc_id": "", "start": 0, "end": 5},
            "context_spans has a span with no doc_id; name the document of every span",
        ),
        (
            "relevant_spans",
            {"doc_id": "d1", "start": 0, "end": 5, "grade": -1},
            "relevant_spans has grade -1; expected 0 or more",
        ),
    ],
)
def test_a_problem_of_a_span_log_names_the_span_column(tmp_path, column, span, message):
    log = _log(tmp_path, column, span, OFFSET)
    line = fail("compare", log, log, "-o", tmp_path / "r.html")
    assert f"{log}: row 2 (question_id 'q2'): {message}" in line


def test_a_span_ranking_without_a_prompt_asks_for_context_spans(tmp_path):
    """A log of retrieved_spans, no context_spans and no --k was told it had "no context_ids
    column", a column no span log needs. A log of passage ids made spans by its passage table
    is still asked for its own column, context_ids."""
    log = _log(tmp_path, "context_spans", None, OFFSET)
    pq.write_table(pq.read_table(log).drop_columns("context_spans"), log)
    asked = (
        "so the prompt cutoff is unknown; pass --k with the number of passages the generator "
        "received"
    )
    line = fail("compare", log, log, "-o", tmp_path / "r.html")
    assert line == f"ragreport: error: {log}: no context_spans column, {asked}"
    assert validate(log, code=0) == [
        f"{log}: ok, 2 rows follow the run-log contract; compare: no context_spans column, {asked}"
    ]
    ids = tmp_path / "ids.parquet"
    spans = pq.read_table(log).drop_columns("retrieved_spans")
    pq.write_table(spans.append_column("retrieved_ids", pa.array([["p1"], ["p1"]])), ids)
    line = fail(
        "compare", ids, ids, "-o", tmp_path / "r.html", "--passages", _passages(tmp_path, "")
    )
    assert line == f"ragreport: error: {ids}: no context_ids column, {asked}"


def _passages(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "passages.csv"
    path.write_text("passage_id,doc_id,start,end\np1,d1,0,5\n" + text)
    return path


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("p2,d1,2.7,9\n", "line 3 has start 2.7, not a whole number"),
        ("p2,d1,2,1e30\n", "line 3 has end 1e30, beyond 2**63 - 1, the largest integer read"),
        ("p2,d1,2,-4\n", "line 3 has end -4 below 0"),
    ],
)
def test_a_passage_offset_no_integer_holds_or_below_0_is_named(tmp_path, row, message):
    log = tmp_path / "ids.parquet"
    pq.write_table(
        pa.table(
            {
                "question_id": ["q1"],
                "retrieved_ids": [["p1", "p2"]],
                "relevant_spans": pa.array(
                    [[{"doc_id": "d1", "start": 0, "end": 5, "grade": 1}]], _spans(OFFSET, True)
                ),
            }
        ),
        log,
    )
    passages = _passages(tmp_path, row)
    line = fail("compare", log, log, "-o", tmp_path / "r.html", "--k", 2, "--passages", passages)
    assert f"{passages}: {message}" in line


def _jsonl(tmp_path: Path, *rows: dict) -> Path:
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


SPAN_ROW = {
    "question_id": "q1",
    "relevant_spans": [{"doc_id": "d1", "start": 2, "end": 9}],
    "retrieved_spans": [
        {"doc_id": "d1", "start": 0, "end": 5},
        {"doc_id": "d1", "start": 5, "end": 12},
    ],
    "context_spans": [{"doc_id": "d1", "start": 0, "end": 5}],
    "correct": True,
}


def test_spans_of_a_jsonl_log_score_as_the_same_log_in_parquet(tmp_path, compare):
    log = _jsonl(tmp_path, SPAN_ROW, dict(SPAN_ROW, question_id="q2", correct=False))
    parquet = tmp_path / "run.parquet"
    pq.write_table(
        pa.Table.from_pylist([SPAN_ROW, dict(SPAN_ROW, question_id="q2", correct=False)]), parquet
    )
    read = compare(log, log, tmp_path / "j", "--n-boot", 100)["metrics"]
    assert read == compare(parquet, parquet, tmp_path / "p", "--n-boot", 100)["metrics"]
    assert read["evidence_recall"]["a"] == pytest.approx(3 / 7)  # d1[2, 5) of the label d1[2, 9)


@pytest.mark.parametrize(
    ("span", "message"),
    [
        ({"doc_id": "d1", "start": 2.7, "end": 9}, "has a span whose start 2.7 is not an integer"),
        (
            {"doc_id": "d1", "start": 2, "end": 1e30},
            "has a span whose end 1e+30 is beyond 2**63 - 1",
        ),
        # the key lacking is named: the cell's preview may end before it
        ({"doc": "d1", "start": 2, "end": 9}, "has a span without 'doc_id'"),
        ({"doc_id": "d1", "start": 2, "grade": 1}, "has a span without 'end'"),
        (["d1", 2, 9], "has an item that is not a span"),
        # JSON's text is no number, as a Parquet column of text is none: "1e1" read as 10
        ({"doc_id": "d1", "start": "1e1", "end": 9}, "has a span whose start '1e1' is text"),
        ({"doc_id": "d1", "start": 2, "end": "25"}, "has a span whose end '25' is text"),
        (
            {"doc_id": "d1", "start": 2, "end": 9, "grade": "2"},
            "has a span whose grade '2' is text, not a number",
        ),
    ],
)
def test_a_bad_span_of_a_jsonl_log_is_named_with_its_line(tmp_path, span, message):
    log = _jsonl(tmp_path, SPAN_ROW, dict(SPAN_ROW, question_id="q2", relevant_spans=[span]))
    line = fail("compare", log, log, "-o", tmp_path / "r.html")
    assert f"{log}: line 2, column relevant_spans: " in line and message in line


def test_a_csv_grade_beyond_the_integers_read_is_named_with_its_line(tmp_path):
    log = tmp_path / "run.csv"
    log.write_text(
        'question_id,relevant_ids,relevant_grades,context_ids\nq1,"[""p1""]",[1e30],"[""p1""]"\n'
    )
    line = fail("compare", log, log, "-o", tmp_path / "r.html")
    assert (
        f"{log}: line 2, column relevant_grades: '[1e30]' has an item, 1e+30, that is beyond "
        "2**63 - 1"
    ) in line


def test_a_log_of_both_label_columns_says_which_are_scored(tmp_path, compare):
    """relevant_ids beside relevant_spans (passage labels of an old chunking kept beside span
    labels): the spans are scored where both logs have them, and nothing said so."""
    sample = Path(__file__).resolve().parent.parent / "sample_runs"
    paths = []
    for name in ("manuals_a_chunk400", "manuals_b_chunk1000"):
        table = pq.read_table(sample / f"{name}.parquet")
        ids = [
            [f"{name}-{i}" for i in range(len(s or []))]
            for s in table["relevant_spans"].to_pylist()
        ]
        paths.append(tmp_path / f"{name}.parquet")
        pq.write_table(
            table.append_column("relevant_ids", pa.array(ids, pa.list_(pa.string()))), paths[-1]
        )
    assert validate(paths[0], code=0)[-1] == (
        f"{paths[0]}: note: relevant_ids and relevant_spans are both logged: compare scores "
        "relevant_spans where the other log has them too, else relevant_ids"
    )
    unread = (
        "relevant_ids of run A and run B are not scored: both runs log relevant_spans, and those "
        "are (they hold whatever the chunking)"
    )
    assert unread in compare(*paths, tmp_path / "both")["warnings"]
    ids_only = tmp_path / "ids_only.parquet"
    pq.write_table(pq.read_table(paths[1]).drop_columns(["relevant_spans"]), ids_only)
    doc = compare(paths[0], ids_only, tmp_path / "mixed")
    assert [w for w in doc["warnings"] if "not scored" in w] == [
        "Run A: relevant_spans is not scored: another run logs no relevant_spans, so every run "
        "is scored on relevant_ids"
    ]
    assert "evidence_recall" not in doc["metrics"]


def test_spans_beside_ids_are_not_scored_against_a_log_of_ids(tmp_path, compare):
    """A logs relevant_ids (no relevant_grades) beside span labels of grades 2 and 1, B the
    same ids, rankings and prompts without spans: each run was scored alone, A on its spans
    and B on its ids, so identical runs read "B better" on nDCG@2 ([+0.098, +0.273]) with the
    golden set "changed" on every question (the spans' grades went with A's ids); with three
    ids beside two spans the log was refused for "2 grades for 3 relevant_ids"."""
    label = pa.struct([("doc_id", pa.string()), ("start", pa.int64()), ("end", pa.int64()),
                       ("grade", pa.int64())])  # fmt: skip
    span = pa.struct([("doc_id", pa.string()), ("start", pa.int64()), ("end", pa.int64())])
    n = 40

    def write(path: Path, ids: list[str], spans: bool) -> Path:
        columns: dict[str, pa.Array | list] = {"question_id": [f"q{i}" for i in range(n)]}
        if spans:
            labels = [{"doc_id": "d", "start": 10, "end": 50, "grade": 2},
                      {"doc_id": "d", "start": 150, "end": 190, "grade": 1}]  # fmt: skip
            ranked = [{"doc_id": "d", "start": s, "end": s + 100} for s in (100, 0, 200)]
            columns["relevant_spans"] = pa.array([labels] * n, pa.list_(label))
            columns["retrieved_spans"] = pa.array([ranked] * n, pa.list_(span))
            columns["context_spans"] = pa.array([ranked[:2]] * n, pa.list_(span))
        columns |= {"relevant_ids": [ids] * n, "retrieved_ids": [["p2", "p1", "p3"]] * n,
                    "context_ids": [["p2", "p1"]] * n}  # fmt: skip
        pq.write_table(pa.table(columns), path)
        return path

    ids_b = write(tmp_path / "ids_b.parquet", ["p1", "p2"], spans=False)
    for ids in (["p1", "p2"], ["p1", "p2", "p3"]):
        both = write(tmp_path / f"both_{len(ids)}.parquet", ids, spans=True)
        expected = compare(write(tmp_path / "ids_a.parquet", ids, False), ids_b, tmp_path / "e")
        doc = compare(both, ids_b, tmp_path / f"o{len(ids)}")
        assert doc["metrics"] == expected["metrics"]
        assert doc["metrics"]["ndcg@2"]["a"] == 1.0  # each label of grade 1, ranked 2 and 1
        assert validate(both, code=0)[0] == f"{both}: ok, 40 rows follow the run-log contract"


def test_a_run_whose_passages_miss_every_labelled_document_is_named(tmp_path, compare):
    """B's spans name their documents 'docs/manual00.md' where the labels say 'manual00': every
    retrieval and character measure read 0, validate said ok, and the audit counted no label
    across a cut in B, all without a word."""
    sample = Path(__file__).resolve().parent.parent / "sample_runs"
    frame = pq.read_table(sample / "manuals_b_chunk1000.parquet").to_pandas()
    for column in ("retrieved_spans", "context_spans"):
        frame[column] = frame[column].map(
            lambda spans: [dict(s, doc_id=f"docs/{s['doc_id']}.md") for s in spans]
        )
    moved = tmp_path / "b.parquet"
    frame.to_parquet(moved)
    a = sample / "manuals_a_chunk400.parquet"
    doc = compare(a, moved, tmp_path / "o")
    assert [w for w in doc["warnings"] if "doc_id" in w] == [
        "Run B: no passage it logged lies in any of the 39 documents its labels name (a label "
        "names 'manual00', a passage 'docs/manual00.md'), so every retrieval measure reads 0 on "
        "every question; check that the logs and the labels write each doc_id alike"
    ]
    assert doc["metrics"]["evidence_recall"]["b"] == 0
    assert validate(moved, code=0)[-1] == (
        f"{moved}: note: no passage it logged lies in any of the 39 documents its labels name "
        "(a label names 'manual00', a passage 'docs/manual00.md'), so every retrieval measure "
        "reads 0 on every question; check that the logs and the labels write each doc_id alike"
    )
    same = compare(a, sample / "manuals_b_chunk1000.parquet", tmp_path / "p")
    assert not [w for w in same["warnings"] if "doc_id" in w]


@pytest.mark.parametrize(
    ("b_labels", "changed"),
    [
        ([("d", 0, 50, 1)], False),  # the same evidence, merged as written
        ([("d", 0, 50, 1), ("d", 200, 240, 0)], False),  # and a label of grade 0, never measured
        ([("d", 0, 40, 1)], True),
        ([("d", 0, 50, 2)], True),
    ],
)
def test_span_labels_are_compared_as_they_are_measured(tmp_path, compare, b_labels, changed):
    """A's labels [0, 30) and [20, 50) against B's [0, 50): the evidence the runs are measured
    on is one, yet the report said the golden set changed on every question ("each run was
    scored on its own labels there") and --strict refused the comparison."""
    label = pa.struct([("doc_id", pa.string()), ("start", pa.int64()), ("end", pa.int64()),
                       ("grade", pa.int64())])  # fmt: skip
    span = pa.struct([("doc_id", pa.string()), ("start", pa.int64()), ("end", pa.int64())])
    ranked = [{"doc_id": "d", "start": 0, "end": 80}, {"doc_id": "d", "start": 80, "end": 160}]

    def write(path: Path, labels: list[tuple[str, int, int, int]]) -> Path:
        spans = [dict(zip(("doc_id", "start", "end", "grade"), lab, strict=True)) for lab in labels]
        pq.write_table(
            pa.table(
                {
                    "question_id": [f"q{i}" for i in range(12)],
                    "relevant_spans": pa.array([spans] * 12, pa.list_(label)),
                    "retrieved_spans": pa.array([ranked] * 12, pa.list_(span)),
                    "context_spans": pa.array([ranked[:1]] * 12, pa.list_(span)),
                    "correct": [i % 2 == 0 for i in range(12)],
                }
            ),  # fmt: skip
            path,
        )
        return path

    a = write(tmp_path / "a.parquet", [("d", 0, 30, 1), ("d", 20, 50, 1)])
    b = write(tmp_path / "b.parquet", b_labels)
    doc = compare(a, b, tmp_path / "o", "--n-boot", 100)
    said = [w for w in doc["warnings"] if w.startswith("The golden set changed")]
    assert bool(said) == changed
    tables = [tmp_path / "ta.parquet", tmp_path / "tb.parquet"]
    for log, table in zip((a, b), tables, strict=True):  # the same from ragreport metrics' tables
        assert CliRunner().invoke(cli, ["metrics", str(log), "-o", str(table)]).exit_code == 0
    for given in ((a, b), tables):
        strict = CliRunner().invoke(
            cli, ["compare", *map(str, given), "-o", str(tmp_path / "s.html"), "--strict"]
        )
        assert strict.exit_code == (2 if changed else 0), strict.output
