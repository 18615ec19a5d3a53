"""True/false columns logged as numbers or text: pandas writes a 0/1 column that holds a missing
value as floats (1.0, 0.0, NaN), many tools write 0/1 as integers, and a judge's verdict is often
kept as its word. They read as true/false, a missing value as missing, and any other number or
word is refused naming its row."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import two_run_view

from reportgen.cli import cli

# 10 questions; None is a question whose correct is missing (left out of the comparison)
A = [1, 1, 1, 0, 0, 0, 1, 0, None, 1]
B = [1, 0, 1, 1, 1, 0, 1, 1, 1, None]
# paired where both are logged: q0-q7. Fixed (0 -> 1): q3, q4, q7; broken (1 -> 0): q1
FIXED, BROKEN, PAIRED = 3, 1, 8


def log(path: Path, column: pa.Array, name: str = "correct") -> Path:
    ids = pa.array([f"q{i}" for i in range(len(column))])
    pq.write_table(pa.table({"question_id": ids, name: column}), path)
    return path


def as_floats(values: list, *, nan: bool) -> pa.Array:
    """As pandas writes them (a missing value null), or as other tools do (NaN kept)."""
    if nan:
        return pa.array([np.nan if v is None else float(v) for v in values], from_pandas=False)
    return pa.array([None if v is None else float(v) for v in values], pa.float64())


def compare(tmp_path: Path, a: Path, b: Path) -> tuple[int, str, dict | None]:
    out = tmp_path / "out" / "r.html"
    out.parent.mkdir(exist_ok=True)
    args = ["compare", str(a), str(b), "-o", str(out), "--n-boot", "200", "--quiet"]
    result = CliRunner().invoke(cli, args)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    json_path = out.with_suffix(".json")
    doc = two_run_view(json.loads(json_path.read_text())) if json_path.exists() else None
    return result.exit_code, result.stderr, doc


def correct_counts(doc: dict) -> tuple[int, int, int]:
    c = doc["metrics"]["correct"]
    return c["n"], c["fixed"], c["broken"]


@pytest.mark.parametrize(
    "column",
    [
        pytest.param(lambda v: as_floats(v, nan=False), id="float, null missing"),
        pytest.param(lambda v: as_floats(v, nan=True), id="float, NaN missing"),
        pytest.param(lambda v: pa.array(v, pa.int64()), id="int64"),
        pytest.param(lambda v: pa.array(v, pa.uint8()), id="uint8"),
        pytest.param(lambda v: pa.array([None if x is None else x == 1 for x in v]), id="bool"),
    ],
)
def test_numbers_read_as_true_and_false(tmp_path, column):
    a = log(tmp_path / "a.parquet", column(A))
    b = log(tmp_path / "b.parquet", column(B))
    code, err, doc = compare(tmp_path, a, b)
    assert code == 0, err
    assert correct_counts(doc) == (PAIRED, FIXED, BROKEN)


def test_csv_and_json_lines_read_floats_too(tmp_path):
    """pandas' to_csv writes the float column as 1.0, 0.0 and an empty cell."""
    text = "question_id,correct\n" + "".join(
        f"q{i},{'' if v is None else float(v)}\n" for i, v in enumerate(A)
    )
    (tmp_path / "a.csv").write_text(text)
    floats = [None if v is None else float(v) for v in B]
    lines = [json.dumps({"question_id": f"q{i}", "correct": v}) for i, v in enumerate(floats)]
    (tmp_path / "b.jsonl").write_text("\n".join(lines) + "\n")
    code, err, doc = compare(tmp_path, tmp_path / "a.csv", tmp_path / "b.jsonl")
    assert code == 0, err
    assert correct_counts(doc) == (PAIRED, FIXED, BROKEN)


@pytest.mark.parametrize(
    ("name", "values", "shown"),
    [
        ("correct", [1.0, 0.0, 0.5, 1.0], "correct has 0.5"),
        ("abstained", [0, 1, 1, 2], "abstained has 2"),
        ("human_correct", [1.0, None, -1.0, 0.0], "human_correct has -1.0"),
        ("correct", [1.0, float("inf"), 0.0, 1.0], "correct has inf"),
    ],
)
def test_another_number_is_refused_naming_its_row(tmp_path, name, values, shown):
    bad = log(tmp_path / "bad.parquet", pa.array(values), name)
    good = log(tmp_path / "good.parquet", pa.array([True, False, True, True]))
    code, err, doc = compare(tmp_path, good, bad)
    row = next(i for i, v in enumerate(values) if v is not None and v not in (0, 1))
    assert code == 2 and doc is None and "Traceback" not in err
    assert err.strip() == (
        f"ragreport: error: {bad}: row {row + 1} (question_id 'q{row}'): {shown}; a true/false "
        "column logged as numbers holds 1 (true) or 0 (false): fix the value in the log"
    )
    assert not (tmp_path / "out" / "r.html").exists()


def as_words(values: list, true: str, false: str) -> list:
    return [None if v is None else true if v == 1 else false for v in values]


@pytest.mark.parametrize(
    "column",
    [
        pytest.param(lambda v: pa.array(as_words(v, "true", "false")), id="true/false"),
        pytest.param(lambda v: pa.array(as_words(v, "\tTrue ", " FALSE\n")), id="case, spaces"),
        pytest.param(lambda v: pa.array(as_words(v, "yes", "No")), id="yes/no"),
        pytest.param(lambda v: pa.array(as_words(v, "Y", "n")), id="y/n"),
        pytest.param(lambda v: pa.array(as_words(v, "t", "F")), id="t/f"),
        pytest.param(lambda v: pa.array(as_words(v, "1", "0")), id="1/0 as text"),
        pytest.param(lambda v: pa.array(as_words(v, "1.0", " 0.0")), id="floats as text"),
        pytest.param(
            lambda v: pa.array(as_words(v, "yes", "no"), pa.large_string()), id="large_string"
        ),
        pytest.param(
            lambda v: pa.array(as_words(v, "yes", "no"), pa.string_view()), id="string_view"
        ),
        pytest.param(
            lambda v: pa.array(as_words(v, "true", "false")).dictionary_encode(),
            id="a pandas category",
        ),
    ],
)
def test_text_reads_as_the_text_formats_read_it(tmp_path, column):
    """A judge's verdict kept as its text, as pandas writes an object column of words: the
    words a CSV or JSON Lines log may hold read as true and false, in any case."""
    a = log(tmp_path / "a.parquet", column(A))
    b = log(tmp_path / "b.parquet", column(B))
    code, err, doc = compare(tmp_path, a, b)
    assert code == 0, err
    assert correct_counts(doc) == (PAIRED, FIXED, BROKEN)


@pytest.mark.parametrize(
    ("values", "shown"),
    [
        (["yes", "no", "maybe", "yes"], "correct has 'maybe'"),
        (["true", "false", "", "true"], "correct has ''"),
        (["true", "0.5", "false", "true"], "correct has '0.5'"),
        (["true", "false", "nan", "true"], "correct has 'nan'"),
        (["true", "false", "true", "tru e"], "correct has 'tru e'"),
    ],
)
@pytest.mark.parametrize("kind", [pa.string(), pa.string_view()], ids=str)
def test_other_text_is_refused_naming_its_row(tmp_path, values, shown, kind):
    bad = log(tmp_path / "bad.parquet", pa.array(values, kind))
    good = log(tmp_path / "good.parquet", pa.array([True, False, True, True]))
    code, err, doc = compare(tmp_path, good, bad)
    row = next(i for i, v in enumerate(values) if repr(v) in shown)
    assert code == 2 and doc is None and "Traceback" not in err
    assert err.strip() == (
        f"ragreport: error: {bad}: row {row + 1} (question_id 'q{row}'): {shown}; a true/false "
        "column logged as text holds true/1/yes/t/y (true) or false/0/no/f/n (false), in any "
        "case: fix the value in the log"
    )
    assert not (tmp_path / "out" / "r.html").exists()


def test_shards_of_numbers_and_of_text_read_as_one_log(tmp_path):
    """A folder of shards, one written with the column as floats (pandas, a NaN among them),
    one as words: DuckDB reads the two as text, the floats spelled 1.0, 0.0 and nan."""
    a = log(tmp_path / "a.parquet", pa.array(A, pa.int64()))
    b = tmp_path / "b.parquet"
    b.mkdir()
    for part, rows in (("0", range(5)), ("1", range(5, 10))):
        ids = pa.array([f"q{i}" for i in rows])
        values = [B[i] for i in rows]
        column = (
            as_floats(values, nan=True) if part == "0" else pa.array(as_words(values, "yes", "no"))
        )
        pq.write_table(
            pa.table({"question_id": ids, "correct": column}), b / f"part-{part}.parquet"
        )
    code, err, doc = compare(tmp_path, a, b)
    assert code == 0, err
    assert correct_counts(doc) == (PAIRED, FIXED, BROKEN)


def test_another_type_is_refused_by_type(tmp_path):
    bad = log(tmp_path / "bad.parquet", pa.array([["yes"], ["no"]]))
    good = log(tmp_path / "good.parquet", pa.array([True, False]))
    code, err, _ = compare(tmp_path, good, bad)
    assert code == 2
    assert "column correct has type list<" in err
    assert "expected bool (1/0 and yes/no accepted) (the answer is correct" in err
