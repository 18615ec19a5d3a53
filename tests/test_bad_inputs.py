"""Bad and odd inputs, generated in tmp_path: each case is a correct report (its numbers checked
against a computation written here) or exit 2 with one line naming the file, column, row or
option, no traceback, and the previous outputs untouched."""

from __future__ import annotations

import contextlib
import decimal
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import two_run_view
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from reportgen import output
from reportgen.analysis.metrics import Options, compute_tables
from reportgen.cli import cli
from reportgen.comparison.compare import MAX_SLICE_VALUES, run_comparison
from reportgen.errors import OutputError
from reportgen.inputs.database import RunDatabase
from reportgen.inputs.load import open_run
from reportgen.reporters.html import charts

PREVIOUS = {"r.html": "previous html", "r.json": "previous json"}
NO_ROWS_HINT = (
    "write one row per question (an export that failed, or a filter that kept nothing, writes none)"
)


def rows(n: int = 12, flip: int = 0, **extra) -> list[dict]:
    """n questions; A answers the first n/2 correctly, B ``flip`` more. p2 is the evidence."""
    return [
        {
            "question_id": f"q{i}",
            "slice": "s",
            "retrieved_ids": ["p1", "p2", "p3"],
            "relevant_ids": ["p2"],
            "context_ids": ["p1", "p2"] if i % 3 else ["p1"],
            "correct": i < n // 2 + flip,
            **extra,
        }
        for i in range(n)
    ]


def write(path: Path, data: list[dict] | pa.Table, **parquet_options) -> Path:
    if not isinstance(data, pa.Table):  # every key of every row (from_pylist reads the first)
        names = dict.fromkeys(name for row in data for name in row)
        data = pa.table({name: [row.get(name) for row in data] for name in names})
    table = data
    pq.write_table(table, path, **parquet_options)
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception  # a traceback is a failure of the test, shown as one
    return result.exit_code, result.stdout, result.stderr


def compare(tmp_path: Path, a: Path, b: Path, *options: str) -> tuple[int, str, str]:
    """--n-boot 100 unless ``options`` give their own (an option given twice is refused)."""
    quick = () if "--n-boot" in options else ("--n-boot", "100")
    return invoke("compare", a, b, "-o", tmp_path / "out" / "r.html", *quick, *options)


def out_folder(tmp_path: Path) -> Path:
    """The output folder, holding a previous report that a refusal must leave as it was."""
    folder = tmp_path / "out"
    folder.mkdir(exist_ok=True)
    for name, text in PREVIOUS.items():
        (folder / name).write_text(text)
    return folder


def refused(tmp_path: Path, a: Path, b: Path, *needles: str, options: tuple = ()) -> str:
    """Exit 2, one line with every needle, no traceback, the previous report untouched."""
    folder = out_folder(tmp_path)
    code, _, err = compare(tmp_path, a, b, *options)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith("ragreport: error: ") and "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert {p.name: p.read_text() for p in folder.iterdir()} == PREVIOUS
    return lines[0]


def report(tmp_path: Path, a: Path, b: Path, *options: str) -> dict:
    (tmp_path / "out").mkdir(exist_ok=True)
    code, _, err = compare(tmp_path, a, b, *options)
    assert code == 0, err
    return two_run_view(json.loads((tmp_path / "out" / "r.json").read_text()))


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return write(tmp_path / "good.parquet", rows())


# ---------------------------------------------------------------- malformed files


def _truncated(path: Path) -> None:
    write(path, rows())
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _garbage_between_magic(path: Path) -> None:
    path.write_bytes(b"PAR1" + b"\x00garbage" * 50 + b"PAR1")


MALFORMED = {
    "empty file": lambda p: p.write_bytes(b""),
    "csv named .parquet": lambda p: p.write_text("question_id,correct\nq1,true\n"),
    "truncated parquet": _truncated,
    "garbage between magic bytes": _garbage_between_magic,
    "json": lambda p: p.write_text('[{"question_id": "q1"}]'),
    "nul bytes only": lambda p: p.write_bytes(b"\x00" * 4096),
}


@pytest.mark.parametrize("make", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_file(tmp_path, good, make):
    bad = tmp_path / "bad.parquet"
    make(bad)
    refused(tmp_path, good, bad, "bad.parquet", "not a readable Parquet file")


def test_missing_file(tmp_path, good):
    refused(tmp_path, good, tmp_path / "nope.parquet", "nope.parquet", "no such file")


def test_folder_without_parquet_as_run_log(tmp_path, good):
    # A folder is read as Parquet shards; one without any is refused, naming it.
    folder = tmp_path / "logs.parquet"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a log")
    refused(tmp_path, folder, good, "logs.parquet", "no .parquet file in the folder")


def test_pipe_as_run_log(tmp_path, good):
    pipe = tmp_path / "pipe.parquet"
    os.mkfifo(pipe)
    refused(tmp_path, good, pipe, "pipe.parquet", "not a regular file")


# ---------------------------------------------------------------- schema problems


def _typed(column: str, array: pa.Array) -> pa.Table:
    table = pa.Table.from_pylist(rows())
    if column in table.column_names:
        table = table.drop_columns([column])
    return table.append_column(column, array)


SCHEMA = {
    "no question_id": (
        pa.Table.from_pylist(rows()).drop_columns(["question_id"]),
        "no question_id column",
    ),
    "correct as a list": (_typed("correct", pa.array([["yes"]] * 12)), "column correct"),
    "correct as other words": (
        _typed("correct", pa.array(["yes", "no", "maybe"] * 4)),
        "row 3 (question_id 'q2'): correct has 'maybe'",
    ),
    # read as an extra column, the report went on without correctness and said nothing
    "Correct in another case": (
        pa.Table.from_pylist(rows()).rename_columns(
            ["Correct" if c == "correct" else c for c in pa.Table.from_pylist(rows()).column_names]
        ),
        "column 'Correct' is the run-log column 'correct' in another case and would not be "
        "read; rename it, or map it with --map correct=Correct",
    ),
    # a zero-width space (or a second byte-order mark) after a header's name: the log was
    # refused for "no question_id column", which the header plainly showed
    "question_id with a character that does not show": (
        pa.Table.from_pylist(rows()).rename_columns(
            [
                c + "\u200b" if c == "question_id" else c
                for c in pa.Table.from_pylist(rows()).column_names
            ]
        ),
        "column 'question_id\\u200b' is the run-log column 'question_id' with characters that do "
        "not show (or spaces) in its name and would not be read; rename it 'question_id'",
    ),
    "faithfulness as string": (_typed("faithfulness", pa.array(["1"] * 12)), "faithfulness"),
    "retrieved_ids as string": (_typed("retrieved_ids", pa.array(["p1"] * 12)), "retrieved_ids"),
    "grades as text": (
        _typed("relevant_grades", pa.array([["1"]] * 12)),
        "column relevant_grades has type list<element: string>, expected list<int>",
    ),
    "nested id lists": (_typed("relevant_ids", pa.array([[["p2"]]] * 12)), "relevant_ids"),
    # it said "convert it or drop the column" of the one column a log cannot go without
    "boolean question_id": (
        _typed("question_id", pa.array([True, False] * 6)),
        "column question_id has type bool, expected string (whole numbers accepted) (pairing key, "
        "unique within a run); convert it to text or whole numbers",
    ),
    # nor of a sample column: without it a log of samples repeats every question
    "boolean sample": (
        _typed("sample", pa.array([False] * 12)),
        "column sample has type bool, expected string (whole numbers accepted) (which of several "
        "answers to the question this row is; one row per question and sample); convert it to "
        "text or whole numbers",
    ),
    # floats are read as the whole numbers they hold, as a CSV's 7.0 is; a fraction would pair
    # by a spelling of it
    "fractional question_id": (
        _typed("question_id", pa.array([0.0, 1.0, 2.0, 3.5, *range(4, 12)], pa.float64())),
        "row 4 (question_id '3.5'): question_id has 3.5, a fraction; an id is text or a whole "
        "number: fix the value, or write the column as text",
    ),
    "float sample past 2**53": (
        _typed("sample", pa.array([0.0] * 11 + [2.0**60])),
        "row 12 (question_id 'q11'): sample has 1.152921504606847e+18, past "
        "9,007,199,254,740,992, beyond which a float64 does not hold every whole number: its "
        "last digits may have been lost",
    ),
    "float32 question_id past 2**24": (
        _typed("question_id", pa.array([*map(float, range(11)), 2.0**24 + 2], pa.float32())),
        "row 12 (question_id '16777218'): question_id has 16777218.0, past 16,777,216, beyond "
        "which a float32",
    ),
    "decimal question_id of a fraction": (
        _typed(
            "question_id",
            pa.array(
                [decimal.Decimal(i) for i in range(11)] + [decimal.Decimal("11.5")],
                pa.decimal128(10, 1),
            ),
        ),
        "row 12 (question_id '11.5'): question_id has 11.5, a fraction",
    ),
    "struct slice": (_typed("slice", pa.array([{"x": 1}] * 12)), "column slice"),
    "span grade as text": (
        _typed(
            "relevant_spans",
            pa.array([[{"doc_id": "d1", "start": 0, "end": 5, "grade": "high"}]] * 12),
        ),
        "column relevant_spans has field grade of type string, expected an integer",
    ),
    "span offset as text": (
        _typed("retrieved_spans", pa.array([[{"doc_id": "d1", "start": "0", "end": 5}]] * 12)),
        "column retrieved_spans has field start of type string, expected an integer",
    ),
    "span document as a list": (
        _typed("context_spans", pa.array([[{"doc_id": ["d1"], "start": 0, "end": 5}]] * 12)),
        "column context_spans has field doc_id of type list<element: string>, expected a string",
    ),
    "same name twice": (
        pa.Table.from_pylist(rows()).append_column("correct", pa.array([True] * 12)),
        "column 'correct' appears twice",
    ),
    "names differing in case": (
        pa.Table.from_pylist(rows()).append_column("Correct", pa.array([True] * 12)),
        "'correct' and 'Correct' differ only in case",
    ),
    # each row was refused for "1 grades for 0 relevant_ids", as if its labels were empty
    "grades beside misspelt labels": (
        pa.Table.from_pylist(rows(relevant_grades=[2])).rename_columns(
            ["relevent_ids" if c == "relevant_ids" else c for c in [*rows()[0], "relevant_grades"]]
        ),
        "relevant_grades grades the labels in relevant_ids, a column it lacks (is "
        "'relevent_ids' that column?); name the labels' column relevant_ids, map it with --map "
        "relevant_ids=COLUMN, or drop relevant_grades",
    ),
    "grades without labels": (
        pa.Table.from_pylist(rows(relevant_grades=[2])).drop_columns(["relevant_ids"]),
        "relevant_grades grades the labels in relevant_ids, a column it lacks; name the",
    ),
}


@pytest.mark.parametrize("table, needle", SCHEMA.values(), ids=SCHEMA.keys())
def test_schema_problem(tmp_path, good, table, needle):
    bad = write(tmp_path / "schema.parquet", table)
    refused(tmp_path, good, bad, "schema.parquet", needle)
    code, out, _ = invoke("validate", bad)
    assert code == 2 and needle in out, out


# ---------------------------------------------------------------- row problems


def _with(row: int, **values) -> list[dict]:
    data = rows(flip=3)
    data[row].update(values)
    return data


ROWS = {
    "null question_id": (_with(4, question_id=None), ["row 5 has no question_id"]),
    # accepted, it was listed as nothing: "1 question only in run A is not compared: "
    "empty question_id": (_with(4, question_id=""), ["row 5 has no question_id (null or blank)"]),
    "blank question_id": (_with(2, question_id=" \t"), ["row 3 has no question_id (null or"]),
    "duplicate question_id": (_with(7, question_id="q2"), ["'q2'", "rows 3 and 8"]),
    "grades misaligned": (_with(4, relevant_grades=[2, 1]), ["row 5", "2 grades for 1"]),
    "null in relevant_ids": (_with(3, relevant_ids=[None]), ["row 4", "relevant_ids has 1 null"]),
    "null in context_ids": (_with(3, context_ids=[None, "p9"]), ["row 4", "context_ids"]),
    "null in retrieved_ids": (_with(3, retrieved_ids=["p1", None]), ["row 4", "retrieved_ids"]),
    "null in cited_ids": (_with(3, cited_ids=[None]), ["row 4", "cited_ids"]),
    # an empty id matched another one as evidence: a ranking of '' then recalled labels of ''
    "empty id in relevant_ids": (
        _with(3, relevant_ids=[""]),
        ["row 4 (question_id 'q3'): relevant_ids has an empty id ''", "drop it or log"],
    ),
    "empty id in context_ids": (_with(3, context_ids=["p1", ""]), ["row 4", "context_ids has an"]),
    "empty id in retrieved_ids": (_with(6, retrieved_ids=[""]), ["row 7", "retrieved_ids has an"]),
    "empty id in cited_ids": (_with(3, cited_ids=[""]), ["row 4", "cited_ids has an empty id"]),
    "null grade": (_with(3, relevant_grades=[None]), ["row 4", "relevant_grades has 1 null"]),
    "negative grade": (_with(3, relevant_grades=[-1]), ["row 4", "grade -1"]),
    "faithfulness above 1": (_with(1, faithfulness=1.5), ["row 2", "faithfulness is 1.5"]),
    "faithfulness below 0": (_with(1, faithfulness=-0.1), ["row 2", "faithfulness is -0.1"]),
    "faithfulness inf": (_with(1, faithfulness=float("inf")), ["row 2", "faithfulness is inf"]),
    "answer_relevance 1.5": (_with(2, answer_relevance=1.5), ["row 3", "answer_relevance is 1.5"]),
    "negative latency": (_with(5, latency_ms=-3.0), ["row 6", "latency_ms is -3.0"]),
    "negative cost": (_with(5, cost_usd=-0.5), ["row 6", "cost_usd is -0.5"]),
    "negative context_tokens": (_with(5, context_tokens=-1), ["row 6", "context_tokens is -1.0"]),
    # past 2**53 a double drops whole units, and 1e308 squared is inf: refused, not reported
    "latency 1e308": (_with(5, latency_ms=1e308), ["row 6", "latency_ms is 1e+308", "2**53"]),
    "context_tokens 2**53 + 2": (
        _with(5, context_tokens=2**53 + 2),
        ["row 6", "context_tokens is 9007199254740994", "rescale the column"],
    ),
    "cost 1e20": (_with(0, cost_usd=1e20), ["row 1", "cost_usd is 1e+20", "2**53"]),
}


@pytest.mark.parametrize("data, needles", ROWS.values(), ids=ROWS.keys())
def test_row_problem(tmp_path, good, data, needles):
    bad = write(tmp_path / "rows.parquet", data)
    refused(tmp_path, good, bad, "rows.parquet", *needles)


def test_nan_written_by_pandas_is_checked_like_nan_written_by_arrow(tmp_path, good):
    frame = pd.DataFrame(rows())
    frame["faithfulness"] = 0.5
    frame.loc[3, "faithfulness"] = np.nan  # pandas writes NaN as null: no value, not a breach
    frame.loc[5, "faithfulness"] = np.inf
    frame.to_parquet(tmp_path / "pd.parquet")
    refused(tmp_path, good, tmp_path / "pd.parquet", "row 6", "faithfulness is inf")


# ---------------------------------------------------------------- options


OPTIONS = {
    "negative seed": (["--seed", "-1"], "'--seed'"),
    "nan confidence": (["--confidence", "nan"], "'--confidence'"),
    "confidence 1": (["--confidence", "1"], "'--confidence'"),
    "confidence 0.4": (["--confidence", "0.4"], "'--confidence'"),
    "nan threshold": (["--supported-threshold", "nan"], "'--supported-threshold'"),
    "threshold 2": (["--supported-threshold", "2"], "'--supported-threshold'"),
    "a billion resamples": (["--n-boot", "1000000000"], "100<=x<=100000"),
    "ten resamples": (["--n-boot", "10"], "'--n-boot'"),
    "k zero": (["--k", "0"], "'--k'"),
    "k not a number": (["--k", "abc"], "'--k'"),
    "unknown gain": (["--gain", "cubic"], "'--gain'"),
    "unknown slice column": (["--slice", "nope"], "'nope'"),
}


@pytest.mark.parametrize("options, needle", OPTIONS.values(), ids=OPTIONS.keys())
def test_option_out_of_range(tmp_path, good, options, needle):
    refused(tmp_path, good, good, needle, options=tuple(options))


# ---------------------------------------------------------------- odd but valid content


def diff_of_correct(a: list[dict], b: list[dict]) -> float:
    """B - A in correct over the shared question ids, computed here in plain Python."""
    ca = {r["question_id"]: r["correct"] for r in a}
    cb = {r["question_id"]: r["correct"] for r in b}
    shared = ca.keys() & cb.keys()
    return sum(cb[q] - ca[q] for q in shared) / len(shared)


def recall(data: list[dict]) -> float:
    """Mean share of relevant ids in context_ids, over questions with evidence."""
    scores = [
        len(set(r["relevant_ids"]) & set(r["context_ids"])) / len(set(r["relevant_ids"]))
        for r in data
        if r["relevant_ids"]
    ]
    return sum(scores) / len(scores)


def scored(tmp_path: Path, a: list[dict], b: list[dict], **options) -> dict:
    """The comparison (no rendering) of two logs written from ``a`` and ``b``."""
    pa_, pb = write(tmp_path / "a.parquet", a), write(tmp_path / "b.parquet", b)
    result = run_comparison(pa_, pb, Options(n_boot=100, **options))
    return {name: (c.a, c.b, c.diff) for name, c in result.comparisons.items()} | {
        "warnings": result.warnings,
        "slices": result.slices,
    }


def test_unicode_and_nul_bytes_in_ids_and_text(tmp_path):
    a = rows()
    for i, r in enumerate(a):
        r["question_id"] = f"q\u00e9\u4e2d\U0001f600\x00{i}"
        r["question"] = "\x00\u202e<script>alert(1)</script>"
        r["relevant_ids"] = ["\u00fc\x00p"]
        r["context_ids"] = ["\u00fc\x00p"] if i % 2 else ["x"]
        r["slice"] = "\u0645\u0631\u062d\u0628\u0627"
    b = [dict(r, correct=not r["correct"]) for r in a]
    got = scored(tmp_path, a, b)
    assert got["correct"][2] == pytest.approx(diff_of_correct(a, b))
    assert got["recall@1"][0] == pytest.approx(recall(a)) == 0.5


def test_megabyte_answers(tmp_path):
    a = rows(answer="\u00e9" * 500_000 + "\x00")  # 1 MB of UTF-8 each
    got = scored(tmp_path, a, rows(flip=3))
    assert got["correct"][2] == pytest.approx(3 / 12)


@pytest.mark.parametrize("column", ["run", "file_row_number", "row_number", "rows_a", "value"])
def test_log_columns_named_like_internal_ones(tmp_path, column):
    a = [dict(r, **{column: f"v{i % 2}"}) for i, r in enumerate(rows())]
    b = [dict(r, **{column: f"v{i % 2}"}) for i, r in enumerate(rows(flip=3))]
    got = scored(tmp_path, a, b, slices=(column,))
    assert got["correct"][2] == pytest.approx(diff_of_correct(a, b))
    per_slice = {r.value: r.comparison.diff for r in got["slices"][column]["correct"]}
    assert per_slice == pytest.approx({"v0": 2 / 6, "v1": 1 / 6})  # q6, q8 | q7 fixed


def test_dictionary_encoded_and_large_types(tmp_path):
    frame = pd.DataFrame(rows())
    frame["slice"] = pd.Categorical(["x", "y"] * 6)
    frame["question_id"] = frame["question_id"].astype("category")
    frame.to_parquet(tmp_path / "cat.parquet")
    large = pa.Table.from_pylist(rows(flip=3))
    large = large.cast(
        pa.schema(
            [
                pa.field(f.name, pa.large_list(pa.large_string()))
                if pa.types.is_list(f.type)
                else pa.field(f.name, pa.large_string())
                if pa.types.is_string(f.type)
                else f
                for f in large.schema
            ]
        )
    )
    write(tmp_path / "large.parquet", large)
    result = run_comparison(
        tmp_path / "cat.parquet", tmp_path / "large.parquet", Options(n_boot=100)
    )
    assert result.comparisons["correct"].diff == pytest.approx(3 / 12)
    assert {r.value for r in result.slices["slice"]["correct"]} == {"x", "y"}


def test_integer_question_ids(tmp_path):
    a = [dict(r, question_id=i) for i, r in enumerate(rows())]
    b = [dict(r, question_id=i) for i, r in enumerate(rows(flip=3))]
    assert scored(tmp_path, a, b)["correct"][2] == pytest.approx(3 / 12)


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_latency_is_left_out_and_counted(tmp_path, value):
    a = [dict(r, latency_ms=100.0 * (i + 1)) for i, r in enumerate(rows())]
    for i in (2, 5, 9):
        a[i]["latency_ms"] = value
    got = scored(tmp_path, a, rows(flip=3))
    assert any("3 values of latency_ms" in w and "row 3" in w for w in got["warnings"])


def test_inf_latency_through_the_whole_command(tmp_path):
    a = write(tmp_path / "a.parquet", rows(latency_ms=float("inf")))
    b = write(tmp_path / "b.parquet", rows(flip=3, latency_ms=250.0))
    doc = report(tmp_path, a, b)
    assert any("12 values of latency_ms" in w for w in doc["warnings"])
    assert doc["metrics"]["correct"]["diff"] == pytest.approx(3 / 12)


def test_a_row_without_grades_in_a_graded_log_reads_grade_1_and_says_so(tmp_path):
    """It was read as grade 1 without a word; a grade 0 lost upstream then counts as relevant."""
    graded = rows(relevant_ids=["p2", "p3"], relevant_grades=[2, 0])
    ungraded = [dict(r, relevant_grades=None) if i in (4, 7) else r for i, r in enumerate(graded)]
    ones = [dict(r, relevant_grades=[1, 1]) if i in (4, 7) else r for i, r in enumerate(graded)]
    a = write(tmp_path / "a.parquet", ungraded)
    doc = report(tmp_path, a, write(tmp_path / "b.parquet", rows(flip=3)))
    assert (
        "2 rows of a.parquet have relevant_ids but a null relevant_grades: each of their labels "
        "is read as grade 1 (relevant), first at row 5"
    ) in doc["warnings"]
    (tmp_path / "ones").mkdir()
    expected = report(tmp_path / "ones", write(tmp_path / "ones" / "a.parquet", ones),
                      write(tmp_path / "ones" / "b.parquet", rows(flip=3)))  # fmt: skip
    assert doc["metrics"]["precision@2"]["a"] == expected["metrics"]["precision@2"]["a"] > 0
    code, out, _ = invoke("validate", str(a))
    assert code == 0 and "read as grade 1: 2 rows with ungraded in relevant_grades" in out


def test_values_of_2_53_are_compared_exactly(tmp_path):
    # the largest value taken: 2**53 - i is exact in a double, so B - A is -5.5 tokens, and a
    # score of 2**53 against -2**53 differs by -2**54 (squares 2**108), no numpy warning
    a = write(tmp_path / "a.parquet", rows(context_tokens=2**53, judge=2.0**53))
    b = [dict(r, context_tokens=2**53 - i, judge=-(2.0**53)) for i, r in enumerate(rows(flip=3))]
    (tmp_path / "out").mkdir()
    code, _, err = compare(tmp_path, a, write(tmp_path / "b.parquet", b), "--metric", "judge")
    assert code == 0 and err == "", err
    doc = two_run_view(json.loads((tmp_path / "out" / "r.json").read_text()))
    tokens, judge = doc["cost"]["context_tokens"], doc["metrics"]["judge"]
    assert (tokens["a"], tokens["diff"], tokens["n"]) == (2**53, -5.5, 12)
    assert (judge["a"], judge["diff"], judge["n"]) == (2.0**53, -(2.0**54), 12)


@pytest.mark.parametrize("flag", ["--metric", "--lower-is-better"])
def test_score_too_large_to_sum_is_refused(tmp_path, flag):
    # 1e308 against 1.7e308 gave null means and p = 0 ("inf inf +inf"), warnings on stderr
    a = write(tmp_path / "a.parquet", rows(judge=1e15))
    b = [dict(r, judge=1.7e308 if i in (4, 7) else 0.5) for i, r in enumerate(rows(flip=3))]
    b = write(tmp_path / "judged.parquet", b)
    needles = ("judged.parquet: row 5 (question_id 'q4'): judge is 1.7e+308", "rescale")
    refused(tmp_path, a, b, *needles, options=(flag, "judge"))


def test_validate_refuses_a_cost_too_large_to_sum(tmp_path):
    path = write(tmp_path / "slow.parquet", _with(2, latency_ms=1e308))
    code, out, _ = invoke("validate", path)
    assert code == 2 and "1 row with too_large in latency_ms: row 3" in out, out


def test_no_labelled_evidence_compares_correct(tmp_path):
    a = rows(relevant_ids=[])
    b = rows(relevant_ids=[], flip=3)
    got = scored(tmp_path, a, b)
    assert "recall@2" not in got and got["correct"][2] == pytest.approx(3 / 12)
    assert any("12 paired questions have no labelled evidence" in w for w in got["warnings"])


def test_no_labelled_evidence_and_no_correct_is_one_line(tmp_path):
    data = [{k: v for k, v in r.items() if k != "correct"} for r in rows(relevant_ids=[])]
    log = write(tmp_path / "a.parquet", data)
    refused(tmp_path, log, log, "no metric can be computed")


ZERO_ROWS = {
    "every column": lambda: pd.DataFrame(rows()).iloc[:0],
    "question_id alone": lambda: pd.DataFrame({"question_id": pd.Series([], dtype=str)}),
}


@pytest.mark.parametrize("frame", ZERO_ROWS.values(), ids=ZERO_ROWS.keys())
def test_a_log_with_no_rows_is_named(tmp_path, good, frame):
    # it read "no question_id in common", or "--k cuts retrieved_ids ..." without that column
    empty = tmp_path / "empty.parquet"
    frame().to_parquet(empty)
    refused(tmp_path, empty, good, "empty.parquet: the log has no rows", options=("--k", "5"))
    code, out, _ = invoke("validate", empty)
    assert code == 2 and out.strip() == f"{empty}: error: the log has no rows; {NO_ROWS_HINT}", out


def test_empty_lists_only(tmp_path):
    a = rows(retrieved_ids=[], context_ids=[], relevant_ids=["p2"])
    got = scored(tmp_path, a, rows(flip=3))
    name = next(n for n in got if n.startswith("recall@"))
    assert got[name][0] == 0.0 and got[name][1] == pytest.approx(recall(rows()))
    # named by B's commonest prompt: A's empty ones named every metric recall@0
    assert name == "recall@2"


def test_fifty_thousand_passage_rankings(tmp_path):
    deep = [f"p{j}" for j in range(50_000)]
    a = [dict(r, retrieved_ids=deep, relevant_ids=[f"p{1000 * i}"]) for i, r in enumerate(rows())]
    b = [dict(r, retrieved_ids=deep[::-1]) for r in a]
    write(tmp_path / "a.parquet", a), write(tmp_path / "b.parquet", b)
    result = run_comparison(tmp_path / "a.parquet", tmp_path / "b.parquet", Options(n_boot=100))
    curve = result.tables.curve
    # recall at k over retrieved_ids: question i's evidence is at position 1000 i + 1 in A; the
    # curve holds every k to 1,000, then 1,000 log-spaced k to the depth
    at = curve[(curve.run == "a") & (curve.metric == "recall")].set_index("k")["value"]
    assert list(at.index[:1000]) == list(range(1, 1001)) and len(at) <= 2000
    assert at[1] == pytest.approx(1 / 12) and at[1000] == pytest.approx(1 / 12)
    assert at[at.index < 5001].iloc[-1] == pytest.approx(5 / 12)
    assert at[at.index >= 5001].iloc[0] == pytest.approx(6 / 12)
    assert at[50_000] == 1.0
    spec = charts.metric_curve(curve, result.tables.named_cutoff, charts.RUN_COLOURS)
    assert len(spec["datasets"][next(iter(spec["datasets"]))]) <= 2 * 5 * charts.MAX_CUTOFFS
    assert "Drawn at" in json.dumps(spec) and "of the 50000 cutoffs" in json.dumps(spec)


def test_six_hundred_deep_rankings_draw(tmp_path):
    deep = [f"p{j}" for j in range(600)]
    a = [dict(r, retrieved_ids=deep) for r in rows()]
    doc = report(tmp_path, write(tmp_path / "a.parquet", a), write(tmp_path / "b.parquet", a))
    assert doc["metrics"]["recall@2"]["diff"] == 0.0


def test_ten_thousand_slices_are_reported_once_and_left_out(tmp_path):
    n = 10_000
    a = [dict(r, slice=f"s{i}", context_ids=["p2"]) for i, r in enumerate(rows(n))]
    b = [dict(r, correct=not r["correct"]) for r in a]
    md = tmp_path / "out" / "summary.md"
    doc = report(
        tmp_path,
        write(tmp_path / "a.parquet", a),
        write(tmp_path / "b.parquet", b),
        "--markdown",
        str(md),
    )
    notes = [w for w in doc["warnings"] if "Slice column 'slice'" in w]
    assert len(notes) == 1 and f"{n:,} values, more than {MAX_SLICE_VALUES}" in notes[0]
    assert doc["slices"] == {} and doc["metrics"]["correct"]["diff"] == 0.0
    # the slices section and the summary say why there are no slices, not "log a slice column"
    page = (tmp_path / "out" / "r.html").read_text()
    section = page[page.index('<h2 id="slices">') :]
    section = section[: section.index("<h2", 4)]
    assert f"has {n:,} values, more than {MAX_SLICE_VALUES}" in section
    assert "Log a slice column" not in section
    summary = md.read_text()
    assert f"has {n:,} values, more than {MAX_SLICE_VALUES}" in summary
    assert "No slice" not in summary


def test_fifty_slices_are_kept(tmp_path):
    a = [dict(r, slice=f"s{i % MAX_SLICE_VALUES}") for i, r in enumerate(rows(100))]
    got = scored(tmp_path, a, rows(100, flip=3))
    assert len(got["slices"]["slice"]["correct"]) == MAX_SLICE_VALUES


# ---------------------------------------------------------------- files written many ways


def metrics_of(path: Path) -> tuple[float, float]:
    """Mean correct and recall@k of the log paired with itself, as the SQL layer scores them."""
    db = RunDatabase(open_run(path, "A"), open_run(path, "B"))
    try:
        paired = compute_tables(db, Options()).paired
    finally:
        db.close()
    return paired["correct_a"].mean(), paired["recall_a"].mean()


EXPECTED = (6 / 12, recall(rows()))


@pytest.mark.parametrize("codec", ["NONE", "SNAPPY", "GZIP", "BROTLI", "ZSTD", "LZ4"])
def test_every_compression(tmp_path, codec):
    path = write(tmp_path / "c.parquet", rows(), compression=codec)
    assert metrics_of(path) == pytest.approx(EXPECTED)


@pytest.mark.parametrize("version", ["1.0", "2.4", "2.6"])
@pytest.mark.parametrize("page", ["1.0", "2.0"])
def test_every_format_version(tmp_path, version, page):
    path = write(tmp_path / "v.parquet", rows(), version=version, data_page_version=page)
    assert metrics_of(path) == pytest.approx(EXPECTED)


def test_written_by_duckdb(tmp_path):
    frame = pd.DataFrame(rows())  # noqa: F841  (read by DuckDB by name)
    path = tmp_path / "duck.parquet"
    duckdb.sql(f"COPY (SELECT * FROM frame) TO '{path}' (FORMAT parquet)")
    assert metrics_of(path) == pytest.approx(EXPECTED)


def test_written_by_pandas_with_an_index(tmp_path):
    path = tmp_path / "pandas.parquet"
    pd.DataFrame(rows()).set_index("slice").to_parquet(path)  # slice becomes an index column
    assert metrics_of(path) == pytest.approx(EXPECTED)


def test_small_row_groups(tmp_path):
    path = write(tmp_path / "groups.parquet", rows(), row_group_size=1)
    assert metrics_of(path) == pytest.approx(EXPECTED)


# ---------------------------------------------------------------- outputs


def test_html_and_json_at_one_path(tmp_path, good):
    folder = out_folder(tmp_path)
    for args in (["-o", folder / "r.json"], ["-o", folder / "r.html", "--json", folder / "r.html"]):
        code, _, err = invoke("compare", good, good, *args)
        assert code == 2 and "two outputs share one path" in err and len(err.splitlines()) == 1
    assert {p.name: p.read_text() for p in folder.iterdir()} == PREVIOUS


def test_two_outputs_to_one_device(tmp_path, good):
    """--markdown /dev/stdout --junit /dev/stdout wrote the XML alone, and the command said it
    wrote both; /dev/null takes several (a gate's Markdown alone)."""
    folder = out_folder(tmp_path)
    gate = ("--require", "correct >= -0.5")
    for second in ("--junit", "--json"):
        code, out, err = invoke(
            "compare", good, good, "-o", folder / "r.html", "--markdown", "/dev/stdout",
            second, "/dev/stdout", *gate,
        )  # fmt: skip
        assert code == 2 and out == "", out
        assert err == (
            "ragreport: error: /dev/stdout: two outputs share one path; give each output its own "
            "path (only /dev/null takes several)\n"
        )
    assert {p.name: p.read_text() for p in folder.iterdir()} == PREVIOUS
    code, _, err = invoke(
        "compare", good, good, "-o", "/dev/null", "--json", "/dev/null", "--markdown",
        folder / "s.md", "--n-boot", "100", *gate,
    )  # fmt: skip
    assert code == 0, err
    assert (folder / "s.md").read_text().startswith("## ragreport")
    # /dev/stdout and /dev/stderr into one pipe are two paths, each written whole
    both = subprocess.run(
        [sys.executable, "-m", "reportgen", "compare", good, good, "-o", folder / "p.html",
         "--n-boot", "100", "--quiet", *gate, "--markdown", "/dev/stdout", "--junit",
         "/dev/stderr"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert both.returncode == 0, both.stdout
    assert "## ragreport" in both.stdout and "<testsuite" in both.stdout


def test_output_is_a_folder(tmp_path, good):
    folder = out_folder(tmp_path)
    code, _, err = invoke("compare", good, good, "-o", folder)
    assert code == 2 and "is a folder" in err and len(err.splitlines()) == 1


def test_output_under_a_regular_file(tmp_path, good):
    # fails for root too: a regular file cannot hold a folder
    code, _, err = invoke("compare", good, good, "-o", good / "r.html")
    assert code == 2 and "is not a folder" in err and len(err.splitlines()) == 1


def test_output_folder_missing(tmp_path, good):
    code, _, err = invoke("compare", good, good, "-o", tmp_path / "none" / "r.html")
    assert code == 2 and "folder" in err and "does not exist" in err


def test_output_checked_before_computing(tmp_path):
    # a log that would be refused later, at its rows: the output problem is named first
    bad = write(tmp_path / "a.parquet", _with(1, faithfulness=7.0))
    code, _, err = invoke("compare", bad, bad, "-o", tmp_path / "none" / "r.html")
    assert code == 2 and "does not exist" in err


def test_output_over_an_input(tmp_path, good):
    before = good.read_bytes()
    code, _, err = invoke("compare", good, good, "-o", tmp_path / "r.html", "--json", good)
    assert code == 2 and "is one of the input run logs" in err
    assert good.read_bytes() == before


def test_device_output_is_written_not_replaced(tmp_path, good):
    code, _, err = invoke("compare", good, good, "-o", "/dev/null", "--json", tmp_path / "r.json")
    assert code == 0, err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert json.loads((tmp_path / "r.json").read_text())["n_paired"] == 12


@pytest.mark.parametrize("device", ["/dev/null", "/dev/stdout"])
def test_a_device_report_without_json_leaves_no_file_among_the_devices(tmp_path, device):
    # the JSON's default path beside -o /dev/stdout was /dev/stdout.json: a file left in /dev
    good = write(tmp_path / "good.parquet", rows(12))
    stray = Path(f"{device}.json")
    assert not stray.exists()
    command = [sys.executable, "-m", "reportgen", "compare", str(good), str(good), "-o", device]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"ragreport: error: {stray}: the default path of --json (the report's path with .json) "
        "would be a file among the devices, beside a report written to a device or a pipe; "
        "give --json PATH\n"
    )
    assert not stray.exists()


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="no /dev/shm")
def test_a_report_in_dev_shm_is_a_file_with_its_json_beside_it(tmp_path, good):
    # /dev/shm is a folder of files: only the devices' own folder was meant
    folder = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        code, _, err = invoke("compare", good, good, "-o", folder / "r.html", "--n-boot", "100")
        assert code == 0, err
        assert json.loads((folder / "r.json").read_text())["n_paired"] == 12
    finally:
        shutil.rmtree(folder)


def test_both_outputs_may_go_to_dev_null(tmp_path, good):
    # a CI job that wants the Markdown summary alone throws the page and the JSON away
    md = tmp_path / "s.md"
    args = ("-o", "/dev/null", "--json", "/dev/null", "--markdown", md, "--n-boot", "100")
    code, _, err = invoke("compare", good, good, *args)
    assert code == 0, err
    assert md.read_text().startswith("## ragreport: ")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_json_to_stdout_through_a_pipe(tmp_path, good):
    # /dev/stdout into a pipe is a link to no real path: it is written through, not refused;
    # the command's lines followed the JSON into the pipe, and go to stderr instead
    command = [sys.executable, "-m", "reportgen", "compare", str(good), str(good)]
    command += ["-o", str(tmp_path / "r.html"), "--json", "/dev/stdout", "--n-boot", "100"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["n_paired"] == 12  # the JSON alone
    assert done.stderr.endswith(f"wrote {tmp_path / 'r.html'}, /dev/stdout\n")


@pytest.mark.parametrize("path", ["/dev/stdout", "/proc/self/fd/1", "-"])
def test_a_summary_appended_to_a_file_keeps_what_the_file_held(tmp_path, good, path):
    """--markdown /dev/stdout >> "$GITHUB_STEP_SUMMARY", as GitHub's documentation appends a job
    summary: the Markdown was written to a temporary file renamed over the summary, so the
    earlier steps' summaries were lost. It is written to the descriptor the shell opened."""
    summary = tmp_path / "summary.md"
    summary.write_text("## an earlier step\n")
    command = [sys.executable, "-m", "reportgen", "compare", str(good), str(good), "-o"]
    command += [str(tmp_path / "r.html"), "--markdown", path, "--n-boot", "100"]
    with summary.open("a") as sink:
        done = subprocess.run(command, stdout=sink, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = summary.read_text()
    assert text.startswith("## an earlier step\n## ragreport: A vs B, both of good.parquet\n")
    assert text.count("## ragreport:") == 1 and "wrote " not in text  # the lines on stderr


def test_a_dash_is_stdout(tmp_path, good):
    # -o - wrote files named "-" and "-.json" in the working folder
    command = [sys.executable, "-m", "reportgen", "compare", str(good), str(good), "-o", "-"]
    command += ["--json", str(tmp_path / "r.json"), "--n-boot", "100"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("<!DOCTYPE html>") and done.stdout.endswith("</html>")
    assert done.stderr.endswith(f"wrote /dev/stdout, {tmp_path / 'r.json'}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.parquet", "r.json"]


@pytest.mark.parametrize("into", ["pipe", "file"])
def test_a_report_on_stdout_sends_the_gate_s_lines_to_stderr(tmp_path, good, into):
    """-o /dev/stdout with a failing rule: the verdict and the gate's lines trailed the page in
    a pipe, and in a file (> r.html) the page, written from the start through a descriptor of
    its own, overwrote them: exit 1 and not a line saying which rule failed."""
    command = [sys.executable, "-m", "reportgen", "compare", str(good), str(good), "-o"]
    command += ["/dev/stdout", "--json", str(tmp_path / "r.json"), "--n-boot", "100"]
    command += ["--require", "correct > 0"]
    page = tmp_path / "r.html"
    with page.open("w") if into == "file" else contextlib.nullcontext() as sink:
        stdout = sink if sink is not None else subprocess.PIPE
        done = subprocess.run(
            command, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120
        )
    html = page.read_text() if into == "file" else done.stdout
    assert done.returncode == 1
    assert html.startswith("<!DOCTYPE html>") and html.endswith("</html>")
    lines = done.stderr.splitlines()
    assert lines[1].startswith("gate: fail (1 of 1 rule check failed")
    assert lines[2].startswith("  inconclusive (counts as fail)  B  correct > 0: difference 0")
    assert lines[3] == f"wrote /dev/stdout, {tmp_path / 'r.json'}"


def test_full_device_is_one_line_and_the_other_output_untouched(tmp_path, good):
    folder = out_folder(tmp_path)
    code, _, err = invoke("compare", good, good, "-o", folder / "r.html", "--json", "/dev/full")
    assert (
        code == 2
        and err.strip() == "ragreport: error: /dev/full: cannot write (No space left on device)"
    )
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    assert {p.name: p.read_text() for p in folder.iterdir()} == PREVIOUS


def test_both_outputs_carry_one_run_id(tmp_path, good):
    doc = report(tmp_path, good, good)
    html = (tmp_path / "out" / "r.html").read_text()
    assert f'<meta name="ragreport-run-id" content="{doc["run_id"]}">' in html
    again = report(tmp_path, good, good)
    assert again["run_id"] != doc["run_id"]


def test_symlinked_output_replaces_its_target(tmp_path, good):
    folder = out_folder(tmp_path)
    (tmp_path / "link.html").symlink_to(folder / "r.html")
    code, _, err = invoke("compare", good, good, "-o", tmp_path / "link.html")
    assert code == 0, err
    assert (tmp_path / "link.html").is_symlink()
    assert (folder / "r.html").read_text().startswith("<!DOCTYPE html>")


def staged_files(folder: Path) -> dict[Path, str]:
    return {folder / "r.html": "new html", folder / "r.json": "new json"}


# mkstemp 1 and 2 test each folder; 3 and 4 stage the files; fsync and link run once per file
STEPS = ["mkstemp-1", "mkstemp-3", "mkstemp-4", "fsync-2", "link-1", "replace-1", "replace-2"]


def _fault(monkeypatch, step: str, fault: BaseException | None) -> None:
    """Make the ``step`` of writing fail with ``fault`` (None: a SIGTERM to this process)."""

    def strike() -> None:
        if fault is None:
            os.kill(os.getpid(), signal.SIGTERM)
        else:
            raise fault

    def wrap(module, name, nth=1):
        real = getattr(module, name)
        calls = []

        def patched(*args, **kwargs):
            calls.append(1)
            if len(calls) == nth:
                strike()
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, patched)

    name, _, nth = step.partition("-")
    module = output.tempfile if name == "mkstemp" else output.os
    if name == "mkstemp":  # NamedTemporaryFile goes through tempfile._mkstemp_inner
        name = "_mkstemp_inner"
    wrap(module, name, int(nth or 1))


@pytest.mark.parametrize(
    "fault, step",
    [("SIGTERM", step) for step in STEPS]
    # a failed hard link falls back to a copy, so "link" is tested with a signal only
    + [("disk full", step) for step in STEPS if step != "link-1"],
)
def test_a_fault_at_each_step_leaves_the_previous_report(tmp_path, monkeypatch, step, fault):
    folder = out_folder(tmp_path)
    error = OSError(28, "No space left on device") if fault == "disk full" else None
    _fault(monkeypatch, step, error)
    expected = OutputError if fault == "disk full" else SystemExit
    with pytest.raises(expected) as raised:
        output.write_all(staged_files(folder), inputs=[])
    if fault == "disk full":
        assert str(raised.value).startswith(str(folder / "r."))  # the path given, no temp name
        assert "No space left on device" in str(raised.value)
    else:
        assert raised.value.code == 128 + signal.SIGTERM
    assert sorted(p.name for p in folder.iterdir()) == sorted(PREVIOUS)  # no temporaries
    assert {p.name: p.read_text() for p in folder.iterdir()} == PREVIOUS
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_a_stream_is_written_only_once_every_file_is_in_place(tmp_path, monkeypatch):
    """`--markdown /dev/stdout >> "$GITHUB_STEP_SUMMARY"`: a full disk on the JSON after the
    summary had gone to the stream left it appended to the job's summary, with exit 2."""
    folder = out_folder(tmp_path)
    summary = tmp_path / "summary.md"
    summary.write_text("an earlier step\n")
    with summary.open("a") as held:
        stream = Path(f"/dev/fd/{held.fileno()}")
        files = {stream: "## ragreport\n", **staged_files(folder)}
        _fault(monkeypatch, "fsync-2", OSError(28, "No space left on device"))
        with pytest.raises(OutputError, match="r.json: cannot write"):
            output.write_all(files, inputs=[])
        assert summary.read_text() == "an earlier step\n"
        assert {p.name: p.read_text() for p in folder.iterdir()} == PREVIOUS
        monkeypatch.undo()
        output.write_all(files, inputs=[])
    assert summary.read_text() == "an earlier step\n## ragreport\n"
    assert (folder / "r.json").read_text() == "new json"


@pytest.mark.parametrize("step", ["mkstemp", "link"])
@pytest.mark.parametrize(
    ("sent", "stop"), [(signal.SIGTERM, SystemExit), (signal.SIGINT, KeyboardInterrupt)]
)
def test_a_signal_just_as_a_file_is_made_leaves_no_file(tmp_path, monkeypatch, step, sent, stop):
    """A SIGTERM or Ctrl-C between the making of a temporary (or a backup's link) and its
    recording left the file, empty or a second name of the previous report, beside the
    outputs."""
    folder = out_folder(tmp_path)
    module = output.tempfile if step == "mkstemp" else output.os
    make = getattr(module, step)

    def made(*args, **kwargs):
        result = make(*args, **kwargs)
        os.kill(os.getpid(), sent)
        return result

    monkeypatch.setattr(module, step, made)
    interrupt = signal.signal(signal.SIGINT, signal.default_int_handler)  # not a job's SIG_IGN
    try:
        with pytest.raises(stop):
            output.write_all(staged_files(folder), inputs=[])
    finally:
        signal.signal(signal.SIGINT, interrupt)
    assert {p.name: p.read_text() for p in folder.iterdir()} == PREVIOUS


def test_write_all_commits_both(tmp_path):
    folder = out_folder(tmp_path)
    output.write_all(staged_files(folder), inputs=[])
    assert {p.name: p.read_text() for p in folder.iterdir()} == {
        "r.html": "new html",
        "r.json": "new json",
    }


# ---------------------------------------------------------------- validate


def test_validate_clean_log(good):
    code, out, _ = invoke("validate", good)
    assert code == 0 and out.strip() == f"{good}: ok, 12 rows follow the run-log contract"


def test_validate_lists_every_kind_with_counts(tmp_path):
    data = rows(20)
    for i in range(8):
        data[i]["relevant_ids"] = [None]
    data[3]["question_id"] = "q1"
    for i in (10, 11):
        data[i]["faithfulness"] = 2.0
    data[12]["latency_ms"] = float("inf")
    log = write(tmp_path / "v.parquet", data)
    code, out, _ = invoke("validate", log)
    lines = out.strip().splitlines()
    assert code == 2 and len(lines) == 4
    nulls = next(line for line in lines if "null_in_list" in line)
    assert "8 rows" in nulls and "row 5 (question_id 'q4')" in nulls and "and 3 more" in nulls
    assert "row 6" not in nulls  # five examples, then a count
    assert any("1 row with duplicate_id" in line and "row 4" in line for line in lines)
    assert any("2 rows with share_range in faithfulness" in line for line in lines)
    assert lines[-1].startswith(f"{log}: left out: 1 row with not_finite in latency_ms")


def test_validate_left_out_values_only_exit_0(tmp_path):
    log = write(tmp_path / "v.parquet", rows(cost_usd=float("nan")))
    code, out, _ = invoke("validate", log)
    assert code == 0 and "left out: 12 rows" in out


def test_validate_schema_problems_all_listed(tmp_path, good):
    table = _typed("correct", pa.array([["yes"]] * 12)).append_column("Slice", pa.array(["x"] * 12))
    log = write(tmp_path / "s.parquet", table)
    code, out, _ = invoke("validate", log, good, tmp_path / "missing.parquet")
    lines = out.strip().splitlines()
    assert code == 2 and len(lines) == 4
    assert "differ only in case" in lines[0] and "column correct" in lines[1]
    assert lines[2].endswith("rows follow the run-log contract") and "no such file" in lines[3]


def test_validate_and_compare_agree(tmp_path, good):
    bad = write(tmp_path / "bad.parquet", _with(2, relevant_ids=["p2", None]))
    _, out, _ = invoke("validate", bad)
    line = refused(tmp_path, good, bad, "row 3")
    assert line.split(": ", 3)[3].split(";")[0] in out


@pytest.mark.parametrize(
    ("column", "values"), [("question_id", [1.2, 1.4, 2.0]), ("sample", [0.5, 1.5, 2.5])]
)
def test_validate_lists_a_fractional_id_without_a_false_repeat(tmp_path, column, values):
    """validate lists every problem, so it read on past a fraction: read as integers, ids 1.2
    and 1.4 were "question_id '1' repeats a question_id", samples 1.5 and 2.5 one "sample 2"."""
    data = [{**row, "question_id": "q1"} for row in rows(3)]  # one question, if not column
    table = pa.Table.from_pylist(data).drop_columns([column] if column == "question_id" else [])
    log = write(tmp_path / "frac.parquet", table.append_column(column, pa.array(values)))
    code, out, _ = invoke("validate", log)
    assert code == 2, out
    assert f"{column} has {values[0]}, a fraction" in out
    assert "repeat" not in out and "duplicate" not in out, out


# ---------------------------------------------------------------- never a traceback

_ids = st.one_of(st.none(), st.text(max_size=3), st.sampled_from(["p1", "p2", "p3"]))
_share = st.one_of(
    st.none(), st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, 0.5, 1.0])
)
_row = st.fixed_dictionaries(
    {"question_id": st.one_of(st.none(), st.sampled_from(["q1", "q2", "q3", "q4"]))},
    optional={
        "retrieved_ids": st.one_of(st.none(), st.lists(_ids, max_size=4)),
        "relevant_ids": st.one_of(st.none(), st.lists(_ids, max_size=2)),
        "context_ids": st.one_of(st.none(), st.lists(_ids, max_size=3)),
        "correct": st.one_of(st.none(), st.booleans()),
        "faithfulness": _share,
        "latency_ms": _share,
        "slice": st.one_of(st.none(), st.text(max_size=2)),
    },
)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(a=st.lists(_row, min_size=1, max_size=6), b=st.lists(_row, min_size=1, max_size=6))
# found by this test: correct null throughout B; rankings and prompts null throughout both
@example(a=[{"question_id": "q1"}], b=[{"question_id": "q1", "correct": None}])
@example(
    a=[{"question_id": "q3", "retrieved_ids": None, "context_ids": None, "relevant_ids": [""]}],
    b=[{"question_id": "q3", "retrieved_ids": None, "context_ids": None, "relevant_ids": [""]}],
)
def test_any_log_gives_a_report_or_one_line(tmp_path, a, b):
    folder = tmp_path / "h"
    folder.mkdir(exist_ok=True)
    for name, data in (("a", a), ("b", b)):
        if not any(data[0].keys() - {"question_id"}):
            data[0]["correct"] = True
        frame = pd.DataFrame(data)
        try:
            frame.to_parquet(folder / f"{name}.parquet")
        except (pa.ArrowException, ValueError):
            return  # pandas cannot write this mix of types: no log to test
    code, _, err = invoke(
        "compare",
        folder / "a.parquet",
        folder / "b.parquet",
        "-o",
        folder / "r.html",
        "--n-boot",
        "100",
    )
    assert code in (0, 2), err
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and err.startswith("ragreport: error: ")


def test_a_metric_null_throughout_one_run_is_named_not_compared(tmp_path):
    """A metric logged but null for every question of one run has nothing to compare: it is
    left out with a warning naming it, and when it is the only metric the refusal names it
    (found by the test above: the headline's empty chart raised IndexError)."""
    a = tmp_path / "a.parquet"
    b = tmp_path / "b.parquet"
    pd.DataFrame({"question_id": ["q1", "q2"], "correct": [True, False]}).to_parquet(a)
    pd.DataFrame({"question_id": ["q1", "q2"], "correct": [None, None]}).to_parquet(b)
    line = refused(tmp_path, a, b)
    assert line == (
        f"ragreport: error: {a} and {b}: no paired question has a value of correct in both "
        "runs; log it for the same questions in both runs"
    )

    pd.DataFrame(
        {"question_id": ["q1", "q2"], "correct": [True, True], "faithfulness": [0.9, 0.4]}
    ).to_parquet(b)
    pd.DataFrame(
        {"question_id": ["q1", "q2"], "correct": [True, False], "faithfulness": [None, None]}
    ).to_parquet(a)
    code, _, err = compare(tmp_path, a, b)
    assert code == 0, err
    doc = json.loads((tmp_path / "out" / "r.json").read_text())
    assert list(doc["comparisons"][0]["metrics"]) == ["correct"]
    assert (
        "faithfulness: no paired question has a value in both runs, so it is left out of the "
        "comparison; log it for the same questions in both runs" in doc["warnings"]
    )


def test_whole_numbers_logged_as_floats_pair_with_the_same_ids_as_text(tmp_path):
    """pandas writes an integer column that held a missing value as float64: a Parquet log of
    question_id 1.0, 2.0, ... was refused ("convert it to text or whole numbers") where the same
    log as CSV was read as 1, 2, ...; it pairs with ids logged as text, sample and the slice
    column (read from the log as written) included."""
    data = rows(8)
    a = pd.DataFrame(data).assign(
        question_id=np.arange(8, dtype=float) + 1, sample=0.0, slice=["x", "y"] * 4
    )
    b = pd.DataFrame(rows(8, flip=2)).assign(
        question_id=[str(i + 1) for i in range(8)], sample="0", slice=["x", "y"] * 4
    )
    a.to_parquet(tmp_path / "a.parquet")
    b.to_csv(tmp_path / "b.csv", index=False)
    doc = report(tmp_path, tmp_path / "a.parquet", tmp_path / "b.csv", "--slice", "slice")
    assert doc["n_paired"] == 8
    pairs = {q["question_id"]: q["correct_b"] - q["correct_a"] for q in doc["per_question"]}
    assert pairs == {str(i + 1): float(i in (4, 5)) for i in range(8)}
    slices = doc["slices"]["slice"]
    assert {value: s["correct"]["n"] for value, s in slices.items()} == {"x": 4, "y": 4}


def _retrieval(doc: dict) -> dict:
    """Each retrieval metric's n, A's mean and B's mean in a report's comparison."""
    metrics = doc["comparisons"][0]["metrics"]
    return {f"{m} {f}": v[f] for m, v in metrics.items() if "@" in m for f in ("n", "a", "b")}


@pytest.mark.parametrize("column", ["context_ids", "retrieved_ids"])
def test_a_null_ranking_is_left_out_not_scored_as_empty(tmp_path, column):
    """A question whose ranking scored (context_ids; with --k, retrieved_ids) is null was not
    logged: scoring it as an empty prompt made run A's recall look 0.18 lower than it is and B
    the better retriever. Now its retrieval metrics are left out with a warning naming the
    column, and they and the metric-vs-k curve are those of the logs without the question."""
    sample = Path(__file__).resolve().parent.parent / "sample_runs"
    a = pd.read_parquet(sample / "fare_rules_a_baseline.parquet")
    b = pd.read_parquet(sample / "fare_rules_b_reranker.parquet")
    options = ("--k", "5") if column == "retrieved_ids" else ()
    unlogged = np.random.default_rng(0).random(len(a)) < 0.3
    with_nulls = a.copy()
    with_nulls.loc[unlogged, column] = None
    docs = {}
    for name, (run_a, run_b) in {
        "nulls": (with_nulls, b),
        "without": (a[~unlogged], b[b.question_id.isin(a.question_id[~unlogged])]),
    }.items():
        folder = tmp_path / name
        (folder / "out").mkdir(parents=True)
        run_a.to_parquet(folder / "a.parquet")
        run_b.to_parquet(folder / "b.parquet")
        code, _, err = compare(folder, folder / "a.parquet", folder / "b.parquet", *options)
        assert code == 0, err
        docs[name] = json.loads((folder / "out" / "r.json").read_text())
    nulls, without = docs["nulls"], docs["without"]
    assert _retrieval(nulls) == pytest.approx(_retrieval(without))
    assert len(_retrieval(nulls)) == 8 * 3
    if column == "retrieved_ids":
        curve, oracle = (
            {(r["metric"], r["k"]): r["value"] for r in doc["comparisons"][0]["metric_curve"]
             if r["run"] == "a"}
            for doc in (nulls, without)
        )  # fmt: skip
        assert len(curve) == 8 * 20 and curve == pytest.approx(oracle)
    labelled = (with_nulls.relevant_ids.str.len() > 0) & unlogged
    unknown = a.question_id[labelled].isin(b.question_id[b.relevant_ids.str.len() > 0]).sum()
    assert (
        unknown > 1
        and (
            f"{unknown} paired questions have {column} null in one run or both, so their "
            f"retrieval metrics are unknown and left out; log {column} for every question (an "
            "empty list when there was none)"
        )
        in nulls["warnings"]
    )


def test_rankings_null_throughout_leave_no_retrieval_metric(tmp_path):
    """Prompts null for every question: no retrieval metric (no more ``ndcg@0``, every question
    scored as an empty prompt), and the warning names the column to log."""
    sample = Path(__file__).resolve().parent.parent / "sample_runs"
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, name in ((a, "fare_rules_a_baseline"), (b, "fare_rules_b_reranker")):
        run = pd.read_parquet(sample / f"{name}.parquet")
        run["context_ids"] = None
        run.to_parquet(path)
    (tmp_path / "out").mkdir()
    code, _, err = compare(tmp_path, a, b)
    assert code == 0, err
    doc = json.loads((tmp_path / "out" / "r.json").read_text())
    assert list(doc["comparisons"][0]["metrics"]) == ["correct", "faithfulness"]
    assert any(
        w.startswith("226 paired questions have context_ids null in one run or both")
        for w in doc["warnings"]
    )


# ---------------------------------------------------------------- DuckDB's memory budget


def test_duckdb_gets_half_the_machine_memory_by_default(good, monkeypatch):
    """Not DuckDB's 80%, which left too little beside it for a 10M-question comparison."""
    monkeypatch.delenv("RAGREPORT_MEMORY_LIMIT", raising=False)
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    cgroup = Path("/sys/fs/cgroup/memory.max")
    if cgroup.is_file() and cgroup.read_text().strip().isdigit():
        total = min(total, int(cgroup.read_text()))
    db = RunDatabase(open_run(good, "A"))
    try:
        (setting,) = db.con.execute("SELECT current_setting('memory_limit')").fetchone()
    finally:
        db.close()
    value, unit = setting.split()  # as DuckDB shows it, such as "11.7 GiB"
    got = float(value) * {"GiB": 2**30, "MiB": 2**20}[unit]
    assert got == pytest.approx(total / 2, rel=0.01)


def test_memory_limit_from_the_environment(tmp_path, good, monkeypatch):
    monkeypatch.setenv("RAGREPORT_MEMORY_LIMIT", "300MiB")
    db = RunDatabase(open_run(good, "A"))
    try:
        (setting,) = db.con.execute("SELECT current_setting('memory_limit')").fetchone()
    finally:
        db.close()
    assert setting == "300.0 MiB"
    monkeypatch.setenv("RAGREPORT_MEMORY_LIMIT", "lots")
    refused(tmp_path, good, good, "RAGREPORT_MEMORY_LIMIT=lots", "such as 4GB")


def test_a_trec_run_read_beyond_the_budget_is_refused_naming_it(tmp_path, monkeypatch):
    """The readers open DuckDB with the comparison's budget, not DuckDB's default of 80%."""
    trec = Path(__file__).resolve().parent / "data" / "trec_eval"
    monkeypatch.setenv("RAGREPORT_MEMORY_LIMIT", "1MB")
    run = trec / "results.test"
    options = ("--format", "trec", "--qrels", str(trec / "qrels.test"), "--k", "10")
    line = refused(tmp_path, run, run, options=options)
    assert line == (
        f"ragreport: error: {run}: reading needs more memory than DuckDB's budget of 1MB; "
        "set RAGREPORT_MEMORY_LIMIT higher (such as 8GB), or free memory"
    )


def test_a_comparison_beyond_the_budget_is_refused_with_what_to_do(tmp_path, good, monkeypatch):
    monkeypatch.setenv("RAGREPORT_MEMORY_LIMIT", "5MB")
    refused(tmp_path, good, good, str(good), "budget of 5MB", "RAGREPORT_MEMORY_LIMIT higher")


def test_decimal_measures_are_numbers(tmp_path):
    """latency_ms, cost_usd and faithfulness written as decimals (DuckDB types 12.25 as one;
    money often is one) are compared as numbers; they were refused as "decimal128, expected
    number". Means against a hand computation."""
    import duckdb

    rows = {
        "a": "('q1', true, 12.25, 0.0031, 0.50), ('q2', false, 3.50, 0.0020, 0.25), "
        "('q3', true, 7.00, 0.0012, 1.00)",
        "b": "('q1', true, 10.25, 0.0030, 0.75), ('q2', true, 3.00, 0.0041, 0.50), "
        "('q3', false, 8.00, 0.0015, 1.00)",
    }
    for run, values in rows.items():
        duckdb.sql(
            f"COPY (SELECT * FROM (VALUES {values}) AS t(question_id, correct, latency_ms, "
            f"cost_usd, faithfulness)) TO '{tmp_path / run}.parquet' (FORMAT PARQUET)"
        )
    assert (
        str(pq.read_schema(tmp_path / "a.parquet").field("latency_ms").type) == "decimal128(4, 2)"
    )
    result = run_comparison(tmp_path / "a.parquet", tmp_path / "b.parquet", Options(n_boot=100))
    faithful = result.comparisons["faithfulness"]
    assert (faithful.a, faithful.b) == pytest.approx(((0.5 + 0.25 + 1) / 3, (0.75 + 0.5 + 1) / 3))
    cost = result.diagnosis.cost
    assert cost["latency_ms"].comparison.a == pytest.approx((12.25 + 3.5 + 7) / 3)
    assert cost["cost_usd"].comparison.b == pytest.approx((0.0030 + 0.0041 + 0.0015) / 3)
