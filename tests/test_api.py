"""The Python API: logs as paths, DataFrames or Arrow tables, compared as the command compares."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import run_compare, write_run_log
from test_passages import CHUNKINGS, as_passage_ids

import reportgen
from reportgen.cli import cli
from reportgen.errors import InputError, OutputError

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"
BASELINE = SAMPLE / "fare_rules_a_baseline.parquet"
RERANKER = SAMPLE / "fare_rules_b_reranker.parquet"
PROMPT = SAMPLE / "fare_rules_c_prompt.parquet"
FAST = {"n_boot": 1000}

# Hand-worked: 10 questions; the candidate fixes q1, q4 and q7 and breaks none.
A_CORRECT = [1, 0, 0, 1, 0, 1, 0, 0, 1, 0]
B_CORRECT = [1, 1, 0, 1, 1, 1, 0, 1, 1, 0]


def _frame(correct: list[int]) -> pd.DataFrame:
    ids = [f"q{i}" for i in range(len(correct))]
    return pd.DataFrame({"question_id": ids, "correct": [bool(c) for c in correct]})


@pytest.fixture(scope="module")
def sample_result():
    return reportgen.compare(BASELINE, str(RERANKER), **FAST)


def test_a_dataframe_against_a_file_gives_the_hand_worked_numbers(tmp_path):
    baseline = write_run_log(
        tmp_path / "a.parquet",
        [{"question_id": f"q{i}", "correct": bool(c)} for i, c in enumerate(A_CORRECT)],
    )
    result = reportgen.compare(baseline, _frame(B_CORRECT), labels=["base", "new"], **FAST)
    (row,) = result.metrics.to_dict("records")
    assert (row["candidate"], row["metric"], row["n"]) == ("new", "correct", 10)
    assert row["baseline"] == pytest.approx(0.4) and row["candidate_mean"] == pytest.approx(0.7)
    assert row["diff"] == pytest.approx(0.3)
    assert (row["wins"], row["losses"], row["ties"]) == (3, 0, 7)
    assert (row["fixed"], row["broken"]) == (3, 0)
    # McNemar's exact test on 3 fixed, 0 broken: 2 * 0.5^3
    assert row["p"] == pytest.approx(0.25) and row["p_adjusted"] == pytest.approx(0.25)
    assert [r.label for r in result.study.runs] == ["base", "new"]


def test_any_table_that_exports_an_arrow_stream_is_a_run(tmp_path):
    """A DuckDB relation, a RecordBatchReader (or a polars DataFrame) was refused as "a
    DuckDBPyRelation; give a path, a pandas DataFrame or an Arrow table": each exports an Arrow
    stream, read once, and compares as the same rows in a file."""
    import duckdb

    baseline = write_run_log(
        tmp_path / "a.parquet",
        [{"question_id": f"q{i}", "correct": bool(c)} for i, c in enumerate(A_CORRECT)],
    )
    candidate = pa.Table.from_pandas(_frame(B_CORRECT), preserve_index=False)
    con = duckdb.connect()
    relation = con.sql(f"SELECT * FROM read_parquet('{baseline}')")
    result = reportgen.compare(relation, candidate.to_reader(), **FAST)
    (row,) = result.metrics.to_dict("records")
    assert (row["fixed"], row["broken"], row["p"]) == (3, 0, pytest.approx(0.25))
    assert [r.path.name for r in result.study.runs] == ["<A>", "<B>"]
    assert result.metrics.equals(reportgen.compare(baseline, candidate, **FAST).metrics)
    bad = con.sql("SELECT 'q1' AS question_id, 2 AS correct")
    with pytest.raises(InputError, match="<B>: row 1 \\(question_id 'q1'\\): correct has 2"):
        reportgen.compare(relation, bad, **FAST)


def test_the_numbers_are_those_of_the_command(tmp_path, sample_result):
    document = run_compare(BASELINE, RERANKER, tmp_path, "--n-boot", "1000")
    expected = document["metrics"]
    frame = sample_result.metrics.set_index("metric")
    assert list(frame.index) == list(expected)
    for name, m in expected.items():
        row = frame.loc[name]
        for field in ("n", "a", "b", "diff", "ci_low", "ci_high", "p", "wins", "losses", "ties"):
            column = {"a": "baseline", "b": "candidate_mean"}.get(field, field)
            assert row[column] == pytest.approx(m[field], abs=1e-12), (name, field)


def test_dataframes_arrow_tables_and_files_give_the_same_numbers(sample_result):
    table = pq.read_table(RERANKER)
    for candidate in (table, table.to_pandas()):
        result = reportgen.compare(BASELINE, candidate, **FAST)
        pd.testing.assert_frame_equal(result.metrics, sample_result.metrics)
    assert result.study.runs[1].path == Path("<B>")  # named by its label in messages and JSON


def test_several_candidates_get_p_adjusted_over_them_and_a_gate():
    result = reportgen.compare(
        BASELINE, RERANKER, PROMPT, rules=["correct >= -0.02", "correct > 0.5"], **FAST
    )
    frame = result.metrics
    assert sorted(frame["candidate"].unique()) == ["fare_rules_b_reranker", "fare_rules_c_prompt"]
    # Bonferroni over two candidates, as the intervals: each p doubles, capped at 1
    assert list(frame["p_adjusted"]) == pytest.approx([min(1, 2 * p) for p in frame["p"]])
    assert result.passed is False  # no candidate gains half a point of correct


def test_bad_options_get_the_command_s_message():
    with pytest.raises(InputError, match=r"'--n-boot': 5 is not in the range 100<=x<=100000"):
        reportgen.compare(BASELINE, RERANKER, n_boot=5)
    with pytest.raises(InputError, match="'--margin'"):
        reportgen.compare(BASELINE, RERANKER, margins="correct=-1")
    # a bad rule, refused by the command with exit 2, is an InputError here too
    with pytest.raises(InputError, match="rule 'correct >>= 0': cannot read it"):
        reportgen.compare(BASELINE, RERANKER, rules=["correct >>= 0"])
    with pytest.raises(TypeError, match="nboot"):
        reportgen.compare(BASELINE, RERANKER, nboot=5)
    with pytest.raises(TypeError, match="run 2: a list; give a path, a pandas DataFrame, an Arrow"):
        reportgen.compare(BASELINE, [1, 2])
    # outputs are Result's methods: a path given as an option would be silently ignored
    for output in ("per_question_path", "json_path", "quiet"):
        with pytest.raises(TypeError, match=f"unknown option {output}"):
            reportgen.compare(BASELINE, RERANKER, **{output: "x"})


def test_a_bad_table_is_named_by_its_label():
    frame = pq.read_table(RERANKER).to_pandas().drop(columns=["question_id"])
    with pytest.raises(InputError, match=r"^<rerank>: no question_id column"):
        reportgen.compare(BASELINE, frame, labels=["base", "rerank"])


def test_the_notebook_view_escapes_labels_and_shows_the_headline():
    result = reportgen.compare(
        _frame(A_CORRECT), _frame(B_CORRECT), labels=["<b>base</b>", "new & improved"], **FAST
    )
    view = result._repr_html_()
    assert "<b>base</b>" not in view and "&lt;b&gt;base&lt;/b&gt;" in view
    assert "new &amp; improved" in view
    assert "+0.300" in view and "3 / 0" in view


def test_to_html_and_to_json_carry_one_run_id(tmp_path, sample_result):
    page = sample_result.to_html(tmp_path / "report.html").read_text(encoding="utf-8")
    document = json.loads(sample_result.to_json())
    assert document["run_id"] == sample_result.run_id
    assert re.search(rf'<meta name="ragreport-run-id" content="{sample_result.run_id}"', page)
    with pytest.raises(OutputError):
        sample_result.to_html(tmp_path / "missing" / "report.html")
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "an empty path; give the path of a file"),
        (".", ". names a folder; give the path of a file inside it"),
        ("report/", "report/ names a folder; give the path of a file inside it"),
    ],
)
def test_to_html_of_a_path_that_names_no_file(tmp_path, monkeypatch, sample_result, path, message):
    """to_html('') and to_html('.') raised a ValueError ("has an empty name"), where the
    command refuses such a path in one line; 'report/' would have written a file report."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OutputError, match=f"^{re.escape(message)}$"):
        sample_result.to_html(path)
    assert list(tmp_path.iterdir()) == []


def test_past_the_rows_a_json_holds_to_html_writes_them_beside_the_page(
    tmp_path, sample_result, monkeypatch
):
    """The command puts the rows of a large comparison in a Parquet file, not the page (a
    million questions made a 23 MB page); to_html embedded them whatever their number."""
    held = len(sample_result.to_json().encode())  # the JSON with its 240 rows
    monkeypatch.setattr("reportgen.pipeline.MAX_JSON_BYTES", held - 1)
    page = sample_result.to_html(tmp_path / "report.html").read_text(encoding="utf-8")
    beside = tmp_path / "report.per-question.parquet"
    rows = pq.read_table(beside).to_pandas()
    pd.testing.assert_frame_equal(rows, sample_result.per_question)
    assert 'download="per-question.csv.gz"' not in page
    assert 'download="report-summary.json.gz"' in page
    monkeypatch.setattr("reportgen.pipeline.MAX_JSON_BYTES", held)
    page = sample_result.to_html(tmp_path / "at.html").read_text(encoding="utf-8")
    assert 'download="per-question.csv.gz"' in page
    assert not (tmp_path / "at.per-question.parquet").exists()
    # the page replaced at report.html had its rows beside it; this one holds them: the file,
    # another run's rows, is removed, as the command removes it; one no page wrote is left
    fresh = reportgen.compare(BASELINE, str(RERANKER), **FAST)
    fresh.to_html(tmp_path / "report.html")
    assert not beside.exists()
    pq.write_table(pa.table({"x": [1]}), beside)
    fresh.to_html(tmp_path / "report.html")
    assert beside.exists()


def test_per_question_rows_are_those_of_the_json(sample_result):
    rows = sample_result.per_question
    document = json.loads(sample_result.to_json())
    assert len(rows) == len(document["per_question"]) == document["n_paired"]
    first = document["per_question"][0]
    assert rows.iloc[0]["question_id"] == first["question_id"]
    assert rows.iloc[0]["correct_b"] == first["correct_b"]


def test_verify_of_a_report_on_a_table_says_no_file_reproduces_it(tmp_path):
    result = reportgen.compare(BASELINE, pd.read_parquet(RERANKER), labels=["base", "rerank"])
    report = tmp_path / "r.json"
    report.write_text(result.to_json())
    run = CliRunner().invoke(cli, ["verify", str(report)])
    assert run.exit_code == 2
    assert run.output == (
        f"ragreport: error: {report}: run rerank was a table in memory, which no file reproduces "
        "(its sha256 is of its Arrow stream); write the tables to Parquet and compare the files "
        "for a report that verify can check\n"
    )


def test_importing_the_package_stays_light():
    """``import reportgen`` (the command line's first step) loads no analysis library."""
    code = "import sys, reportgen; print(sorted({'pandas', 'duckdb'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _refused_over(result: reportgen.Result, path: Path, reason: str) -> None:
    """``result.to_html(path)`` is refused with ``reason`` and leaves the file as it was."""
    before = path.read_bytes()
    with pytest.raises(OutputError, match=f"^{re.escape(f'{path}: {reason}')}; choose another"):
        result.to_html(path)
    assert path.read_bytes() == before


def test_to_html_never_overwrites_a_log_or_a_file_the_comparison_read(tmp_path):
    """to_html("a.csv") replaced a CSV log (any log but Parquet) with the page, and the gate
    and mapping files too, which the command refuses to overwrite."""
    a, b = tmp_path / "a.csv", tmp_path / "b.tsv"
    _frame(A_CORRECT).to_csv(a, index=False)
    _frame(B_CORRECT).to_csv(b, index=False, sep="\t")
    gate, mapping = tmp_path / "gate.toml", tmp_path / "map.txt"
    gate.write_text('require = ["correct >= -1"]\n')
    mapping.write_text("correct=correct\n")
    result = reportgen.compare(a, b, gate_file=gate, mapping=[str(mapping)], **FAST)
    for log in (a, b):
        _refused_over(result, log, "is one of the input run logs")
    _refused_over(result, gate, "is the file --gate reads")
    _refused_over(result, mapping, "is the file --map reads")
    assert result.to_html(tmp_path / "report.html").is_file()


def test_to_html_never_overwrites_qrels_or_a_passage_table(tmp_path):
    runs = [tmp_path / "a.trec", tmp_path / "b.trec"]
    for run, docs in zip(runs, (["d1", "d2"], ["d2", "d1"]), strict=True):
        ranked = list(enumerate(docs, start=1))
        run.write_text("".join(f"q{q} Q0 {d} {r} {9 - r} x\n" for q in range(3) for r, d in ranked))
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"q{q} 0 d{q % 2 + 1} 1\n" for q in range(3)))
    result = reportgen.compare(*runs, qrels=qrels, k=1, **FAST)
    _refused_over(result, runs[0], "is one of the input run logs")
    _refused_over(result, qrels, "is the file --qrels reads")
    (a, a_passages), (b, b_passages) = (as_passage_ids(log, tmp_path) for log in CHUNKINGS)
    result = reportgen.compare(a, b, passages=[a_passages, b_passages], **FAST)
    _refused_over(result, a, "is one of the input run logs")
    _refused_over(result, b_passages, "is the file --passages reads")


def test_one_table_alone_is_named_by_its_label():
    """The message held the repr of the whole table (about 2,000 characters)."""
    message = "compare: <base> is one run; give a baseline log and at least one candidate log"
    with pytest.raises(InputError, match=f"^{re.escape(message)}$"):
        reportgen.compare(_frame(A_CORRECT), labels=["base"])
    with pytest.raises(InputError, match=r"^compare: <run1> is one run; give"):
        reportgen.compare(pa.table(_frame(A_CORRECT)))


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"k": 3.9}, "'--k': k=3.9 is a float; give an int"),  # ran with k=3
        ({"n_boot": 1000.7}, "'--n-boot': n_boot=1000.7 is a float; give an int"),
        ({"k": True}, "'--k': k=True is a bool; give an int"),
        ({"k": np.True_}, "'--k': k=np.True_ is a bool; give an int"),
        ({"k": [3]}, "'--k': k=[3] is a list; give an int"),  # a TypeError from click
        ({"strict": 1}, "'--strict': strict=1 is an int; give a bool"),  # an AttributeError
        ({"labels": [1, 2]}, "'--label': labels=[1, 2] holds 1, an int; give a list of strings"),
        ({"margins": 0.02}, "'--margin': margins=0.02 is a float; give a list of strings"),
        ({"rules": iter(["correct >= 0"])}, "'--require': rules=<list_iterator"),
    ],
)
def test_an_option_of_another_type_is_refused_in_one_line(given, message):
    with pytest.raises(InputError, match=f"^Invalid value for {re.escape(message)}"):
        reportgen.compare(_frame(A_CORRECT), _frame(B_CORRECT), **given)


def test_a_lone_string_is_one_value_of_a_repeatable_option():
    """labels="AB" was split into the labels A and B."""
    with pytest.raises(InputError, match=r"^--label: 1 label for 2 run logs"):
        reportgen.compare(_frame(A_CORRECT), _frame(B_CORRECT), labels="AB")
    result = reportgen.compare(
        _frame(A_CORRECT), _frame(B_CORRECT), rules="correct >= -0.1", n_boot=np.int64(1000), k=None
    )
    assert result.passed is True
    assert json.loads(result.to_json())["params"]["n_boot"] == 1000


def test_a_float16_column_reads_as_from_its_parquet_file(tmp_path):
    """DuckDB reads no float16 from Arrow: the table raised NotImplementedException."""
    frame = _frame(B_CORRECT).assign(faithfulness=[i / 10 for i in range(10)])
    table = pa.table(frame)
    table = table.set_column(2, "faithfulness", table["faithfulness"].cast(pa.float16()))
    pq.write_table(table, tmp_path / "b.parquet")
    a = _frame(A_CORRECT).assign(faithfulness=0.5)
    from_file = reportgen.compare(a, tmp_path / "b.parquet", **FAST)
    pd.testing.assert_frame_equal(reportgen.compare(a, table, **FAST).metrics, from_file.metrics)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: pd.concat([f, f[["correct"]]], axis=1), "column 'correct' appears twice"),
        (lambda f: f.set_index("question_id"), "question_id is the DataFrame's index, not a"),
        (
            lambda f: f.set_axis(pd.MultiIndex.from_product([f.columns, ["x"]]), axis=1),
            "the DataFrame's columns have 2 levels of names; give each column one name",
        ),
    ],
)
def test_a_frame_a_file_cannot_be_is_refused_in_one_line(change, message):
    """A duplicated column escaped as pyarrow's ValueError; question_id as the index, or columns
    of two levels, read as "no question_id column"."""
    with pytest.raises(InputError, match=f"^<B>: {re.escape(message)}"):
        reportgen.compare(_frame(A_CORRECT), change(_frame(B_CORRECT)))


def test_mapping_renames_a_table_s_columns_as_a_file_s():
    """mapping= was ignored for tables: the table below had "no question_id column"."""
    renamed = {"question_id": "id", "correct": "ok"}
    a, b = (_frame(c).rename(columns=renamed) for c in (A_CORRECT, B_CORRECT))
    result = reportgen.compare(a, pa.table(b), mapping=["question_id=id", "correct=ok"], **FAST)
    assert result.metrics.loc[0, ["metric", "diff"]].tolist() == ["correct", pytest.approx(0.3)]
    with pytest.raises(InputError, match=r"^<A>: --map correct=right: no column 'right'"):
        reportgen.compare(a, b, mapping=["question_id=id", "correct=right"])


@pytest.mark.parametrize(
    "option",
    [
        {"passages": "/no/such/table.csv"},  # span metrics were dropped without a word
        {"log_format": "trec"},
        {"qrels": __file__},
        {"run_filters": ["openai:gpt"]},
    ],
)
def test_a_reading_option_a_table_cannot_use_is_refused(option):
    (name,) = option
    message = f"<A>: {name}= is for a log read from a file, not a table in memory; drop it"
    with pytest.raises(InputError, match=f"^{re.escape(message)}"):
        reportgen.compare(_frame(A_CORRECT), _frame(B_CORRECT), **option)


def test_a_table_s_note_names_its_run_once():
    """It read "Run base: Run base was handed over in memory, ..."."""
    result = reportgen.compare(_frame(A_CORRECT), _frame(B_CORRECT), labels=["base", "new"])
    warnings = json.loads(result.to_json())["warnings"]
    for label in ("base", "new"):
        assert f"Run {label}: handed over in memory, not read from a file." in warnings
    assert not any("Run base: Run" in w for w in warnings)


NOT_UTF8 = "holds bytes that are not UTF-8"


@pytest.mark.parametrize(
    ("given", "flags", "message"),
    [
        (
            {"labels": ("a\udcff", "b")},
            ("--label", "a\udcff", "--label", "b"),
            f"--label 'a\\udcff': {NOT_UTF8}; give it as UTF-8 text",
        ),
        (
            {"rules": ["correct[sl\udcffice] >= -0.5"]},
            ("--require", "correct[sl\udcffice] >= -0.5"),
            f"--require 'correct[sl\\udcffice] >= -0.5': {NOT_UTF8}; give it as UTF-8 text",
        ),
        (
            {"slices": "sl\udcffice"},
            ("--slice", "sl\udcffice"),
            f"--slice 'sl\\udcffice': {NOT_UTF8}; give it as UTF-8 text",
        ),
    ],
    ids=["label", "rule", "slice"],
)
def test_an_option_that_is_not_utf8_is_refused_as_the_command_refuses_it(
    tmp_path, given, flags, message
):
    """A label of bytes that are not UTF-8 (read as lone surrogates) was accepted, and to_html
    then ended in a UnicodeEncodeError; such a rule was 'cannot read it', a slice 'no
    column'."""
    with pytest.raises(InputError) as refused:
        reportgen.compare(BASELINE, RERANKER, **given, **FAST)
    assert str(refused.value) == message
    out = tmp_path / "r.html"
    command = CliRunner().invoke(
        cli, ["compare", str(BASELINE), str(RERANKER), "-o", str(out), *flags]
    )
    assert (command.exit_code, command.stderr) == (2, f"ragreport: error: {message}\n")


def test_a_path_that_is_not_utf8_is_refused_as_the_command_refuses_it(tmp_path, sample_result):
    """A log path of such bytes ended in a UnicodeEncodeError; to_html wrote a page where the
    command refuses to."""
    odd = tmp_path / "b\udcff.parquet"
    odd.write_bytes(RERANKER.read_bytes())
    message = f"'{tmp_path}/b\\udcff.parquet': {NOT_UTF8}; rename the file"
    for run in (odd, str(odd)):
        with pytest.raises(InputError) as refused:
            reportgen.compare(BASELINE, run, **FAST)
        assert str(refused.value) == message
    out = tmp_path / "r.html"
    command = CliRunner().invoke(cli, ["compare", str(BASELINE), str(odd), "-o", str(out)])
    assert (command.exit_code, command.stderr) == (2, f"ragreport: error: {message}\n")
    page = tmp_path / "r\udcff.html"
    with pytest.raises(InputError) as refused:
        sample_result.to_html(page)
    assert str(refused.value) == f"'{tmp_path}/r\\udcff.html': {NOT_UTF8}; rename the file"
    assert sorted(p.name for p in tmp_path.iterdir()) == [odd.name]


def test_a_rule_given_twice_is_checked_once_with_the_command_s_warning():
    """The command warns on stderr; compare() checked the rule once and said nothing."""
    with pytest.warns(UserWarning) as caught:
        result = reportgen.compare(
            BASELINE, RERANKER, rules=["correct >= -0.5", "correct>=-0.5"], **FAST
        )
    assert [str(w.message) for w in caught if w.category is UserWarning] == [
        "rule 'correct>=-0.5' is given more than once; it is checked once"
    ]
    assert [r.rule for r in result.study.gate.results] == ["correct >= -0.5"]


@pytest.mark.parametrize(
    ("column", "values", "reason"),
    [
        ("question_id", ["q1", 2], "Expected bytes, got a 'int' object"),
        ("correct", ["maybe", True], "Expected bytes, got a 'bool' object"),
        ("correct", pd.arrays.SparseArray([True, False]),
         "a sparse column; make it dense with .sparse.to_dense()"),
    ],
)  # fmt: skip
def test_a_column_arrow_cannot_read_is_an_input_error_naming_it(column, values, reason):
    """pyarrow's own error escaped as a traceback naming no run or column."""
    frame = pd.DataFrame({"question_id": ["q1", "q2"], "correct": [True, False]})
    frame[column] = values
    good = pd.DataFrame({"question_id": ["q1", "q2"], "correct": [True, True]})
    with pytest.raises(InputError) as raised:
        reportgen.compare(frame, good)
    assert str(raised.value) == (
        f"<A>: column {column} cannot be read as one type ({reason}); give it values of one "
        "type, as a Parquet file holds them (ids as text: .astype(str))"
    )


def test_a_numpy_bool_is_a_flag_s_value():
    """strict=np.True_ (a comparison's result) was refused as "is a bool; give a bool"."""
    result = reportgen.compare(_frame(A_CORRECT), _frame(B_CORRECT), strict=np.True_)
    assert json.loads(result.to_json())["params"]["strict"] is True
