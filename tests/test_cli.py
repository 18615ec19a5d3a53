"""The command line as a user drives it: success output, and every input error as one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import chdir
from pathlib import Path

import click
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import two_run_view

from reportgen.cli import cli


def log(path: Path, rows: list[dict]) -> Path:
    pd.DataFrame(rows).to_parquet(path)
    return path


def good_rows(n: int = 12, flip: int = 0) -> list[dict]:
    return [
        {
            "question_id": f"q{i}",
            "slice": "s",
            "retrieved_ids": ["p1", "p2", "p3"],
            "relevant_ids": ["p2"],
            "relevant_grades": [2],
            "context_ids": ["p1", "p2"],
            "correct": i < n // 2 + flip,
        }
        for i in range(n)
    ]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    return log(tmp_path / "a.parquet", good_rows()), log(tmp_path / "b.parquet", good_rows(flip=3))


def test_compare_writes_html_and_json_beside_it(pair, tmp_path):
    a, b = pair
    code, out, err = run("compare", str(a), str(b), "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    doc = two_run_view(json.loads((tmp_path / "r.json").read_text()))
    assert doc["metrics"]["correct"]["fixed"] == 3
    assert out.startswith(doc["verdict"]["outcome"] + ":")


@pytest.mark.parametrize(
    ("options", "code"),
    [((), 0), (("--require", "correct < 0"), 1), (("--k", "0"), 2)],
)
def test_the_installed_command_exits_with_its_code_and_says_everything(
    pair, tmp_path, options, code
):
    """``python -m reportgen`` (as the console script, ``run``) ends the process without
    tearing the interpreter down: its exit code, its stdout line and its files are all there."""
    a, b = pair
    out = tmp_path / "r.html"
    command = [sys.executable, "-m", "reportgen", "compare", str(a), str(b), "-o", str(out)]
    done = subprocess.run(
        [*command, "--n-boot", "100", *options], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == code, done.stderr
    if code == 2:
        assert done.stdout == "" and not out.exists()
        assert done.stderr.startswith("ragreport: error: ") and done.stderr.count("\n") == 1
        return
    doc = two_run_view(json.loads(out.with_suffix(".json").read_text()))
    assert done.stdout.startswith(doc["verdict"]["outcome"] + ":"), done.stdout
    assert ("gate: fail" in done.stdout) == (code == 1)
    assert done.stdout.endswith(f"wrote {out}, {out.with_suffix('.json')}\n")
    assert out.read_text().rstrip().endswith("</html>")


def test_the_cli_module_run_as_a_script_is_the_command(pair, tmp_path):
    """``python -m reportgen.cli`` exited 0 having done nothing, a CI step so written passing
    every gate unchecked: it runs the command, as ``python -m reportgen`` does."""
    a, b = pair
    out = tmp_path / "r.html"
    command = [sys.executable, "-m", "reportgen.cli", "compare", str(a), str(b), "-o", str(out)]
    done = subprocess.run(
        [*command, "--n-boot", "100", "--require", "correct < 0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "gate: fail" in done.stdout and out.exists()


# Ctrl-C while the statistics run: as Python delivers it, and as DuckDB turns it into an
# error when it stops a query ("python", "query"), or ignored as in a job started with
# SIGINT ignored ("ignored"). The child sets the handler it starts with in a terminal
# itself: a test process started in the background of a shell inherits SIGINT ignored.
_CTRL_C = """
import os, signal, sys
import reportgen.pipeline as pipeline
from reportgen.command import run

study = pipeline.run_study
def interrupted(*args, **kwargs):
    try:
        os.kill(os.getpid(), signal.SIGINT)
    except KeyboardInterrupt:
        if sys.argv[1] == "query":
            raise RuntimeError("Query interrupted") from None
        raise
    return study(*args, **kwargs)

ignored = sys.argv[1] == "ignored"
signal.signal(signal.SIGINT, signal.SIG_IGN if ignored else signal.default_int_handler)
pipeline.run_study = interrupted
sys.argv = ["ragreport", *sys.argv[2:]]
run()
"""


@pytest.mark.parametrize("where", ["python", "query"])
def test_ctrl_c_exits_130_not_a_gate_failure_and_without_a_traceback(pair, tmp_path, where):
    a, b = pair
    out = tmp_path / "r.html"
    command = ["compare", str(a), str(b), "-o", str(out), "--require", "correct >= 0"]
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C, where, *command],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr == "\nAborted!\n"  # as click says it, and no traceback
    assert sorted(tmp_path.iterdir()) == sorted([a, b])  # nothing written


# Ctrl-C while `python -m reportgen` loads the command line's modules (DuckDB, Arrow), about
# half a second: the signal arrives as the first of them is imported.
_CTRL_C_AT_IMPORT = """
import builtins, os, runpy, signal, sys
imported = builtins.__import__
def importing(name, *args, **kwargs):
    if name == "duckdb" and "duckdb" not in sys.modules:
        os.kill(os.getpid(), signal.SIGINT)
    return imported(name, *args, **kwargs)

builtins.__import__ = importing
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.argv = ["ragreport", *sys.argv[1:]]
runpy.run_module("reportgen", run_name="__main__")
"""


def test_ctrl_c_while_the_command_starts_says_aborted_and_exits_130(pair, tmp_path):
    """It printed an import's traceback and the process died by the signal (-2)."""
    a, b = pair
    command = ["compare", str(a), str(b), "-o", str(tmp_path / "r.html")]
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_AT_IMPORT, *command],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr == "\nAborted!\n"
    assert sorted(tmp_path.iterdir()) == sorted([a, b])


def test_a_job_that_ignores_ctrl_c_is_not_stopped_by_it(pair, tmp_path):
    """SIGINT ignored when the command starts (nohup, a shell's background job) stays ignored."""
    a, b = pair
    out = tmp_path / "r.html"
    command = ["compare", str(a), str(b), "-o", str(out)]
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C, "ignored", *command],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_text().rstrip().endswith("</html>")


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["-o", ""], "Invalid value for '-o' / '--output': an empty path; give the path of a file"),
        (["-o", "r.html", "--json", ""], "Invalid value for '--json': an empty path"),
        (["-o", "new/"], "new/ names a folder; give the path of a file inside it"),
        (["-o", "r.html", "--markdown", "sub/"], "'--markdown': sub/ names a folder"),
        (["-o", "x" * 251 + ".html"], "x.html: its name is 256 bytes, more than the 255 a file"),
    ],
)
def test_an_output_path_that_names_no_file_is_refused_in_one_line(pair, tmp_path, given, said):
    """A path ending with a slash would lose it (Path("new/") is "new", written as a file);
    an empty one read as "." or failed with a traceback; a name past 255 bytes too."""
    a, b = pair
    with chdir(tmp_path):
        code, out, err = run("compare", str(a), str(b), *given)
    assert code == 2 and out == ""
    assert said in err and err.count("\n") == 1, err
    assert sorted(tmp_path.iterdir()) == sorted([a, b])


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["compare", "a", "b", "--bogus-##[x]"], "No such option '--bogus-#\\x23[x]'; see "
         "'ragreport compare --help'"),
        (["##[error]x"], "No such command '#\\x23[error]x'; see 'ragreport --help'"),
        (["compare"], "Missing argument 'BASELINE CANDIDATE...'"),
        (["compare", "a", "b", "-o", "r.html", "--inconclusive", "maybe"],
         "Invalid value for '--inconclusive': 'maybe' is not one of 'fail', 'pass'"),
    ],
)  # fmt: skip
def test_a_usage_error_is_one_line(tmp_path, given, said):
    """click's usage errors were its block of four lines ("Usage: ...", "Try ...", "Error:
    ..."), and the text of an unknown option or command printed raw: "##[" there is a GitHub
    workflow command. One line, as every refusal; exit 2; nothing written."""
    with chdir(tmp_path):
        code, out, err = run(*given)
    assert (code, out) == (2, "")
    assert err.startswith(f"ragreport: error: {said}") and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []


def test_an_output_name_near_the_longest_is_written(pair, tmp_path):
    """Its staged copy's name (hidden, with a suffix) was past 255 bytes: "cannot write"."""
    a, b = pair
    name = "é" * 120 + "r.html"  # 246 bytes
    code, _, err = run(
        "compare", str(a), str(b), "-o", str(tmp_path / name), "--json", str(tmp_path / "r.json")
    )
    assert code == 0, err
    assert (tmp_path / name).read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([a.name, b.name, name, "r.json"])


def test_json_option_moves_the_json(pair, tmp_path):
    a, b = pair
    target = tmp_path / "elsewhere.json"
    code, _, err = run(
        "compare", str(a), str(b), "-o", str(tmp_path / "r.html"), "--json", str(target)
    )
    assert code == 0, err
    assert target.exists() and not (tmp_path / "r.json").exists()


def expect_error(tmp_path: Path, a: Path, b: Path, *needles: str, extra: tuple = ()) -> None:
    out = tmp_path / "out" / "r.html"
    out.parent.mkdir(exist_ok=True)
    code, _, err = run("compare", str(a), str(b), "-o", str(out), *extra)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ragreport: error: ")
    for needle in needles:
        assert needle in lines[0]
    assert "Traceback" not in err
    assert list(out.parent.iterdir()) == [], "nothing may be written on error"


def test_missing_file(pair, tmp_path):
    a, _ = pair
    expect_error(tmp_path, a, tmp_path / "nope.parquet", "nope.parquet", "no such file")


def test_not_parquet(pair, tmp_path):
    a, _ = pair
    bad = tmp_path / "bad.parquet"
    bad.write_text("question_id,correct\nq1,true\n")
    expect_error(tmp_path, a, bad, "bad.parquet", "not a readable Parquet file")


def test_missing_question_id(pair, tmp_path):
    a, _ = pair
    b = log(tmp_path / "noid.parquet", [{"id": "q1", "correct": True}])
    expect_error(tmp_path, a, b, "noid.parquet", "no question_id column")


def test_duplicate_question_id(pair, tmp_path):
    a, _ = pair
    rows = good_rows()
    rows[7]["question_id"] = "q2"
    b = log(tmp_path / "dup.parquet", rows)
    expect_error(tmp_path, a, b, "dup.parquet", "'q2'", "rows 3 and 8")


def test_wrong_column_type(pair, tmp_path):
    a, _ = pair
    rows = good_rows()
    for r in rows:
        r["correct"] = ["yes"]
    b = log(tmp_path / "typed.parquet", rows)
    expect_error(tmp_path, a, b, "typed.parquet", "column correct", "expected bool")


def test_grades_length_mismatch(pair, tmp_path):
    a, _ = pair
    rows = good_rows()
    rows[4]["relevant_grades"] = [2, 1]
    b = log(tmp_path / "grades.parquet", rows)
    expect_error(tmp_path, a, b, "grades.parquet", "row 5", "'q4'", "2 grades for 1 relevant_ids")


def test_faithfulness_out_of_range(pair, tmp_path):
    a, _ = pair
    rows = good_rows()
    for r in rows:
        r["faithfulness"] = 0.5
    rows[1]["faithfulness"] = 1.5
    b = log(tmp_path / "faith.parquet", rows)
    expect_error(tmp_path, a, b, "faith.parquet", "row 2", "1.5")


def test_no_metric_computable(tmp_path):
    a = log(tmp_path / "a.parquet", [{"question_id": "q1", "question": "x"}])
    b = log(tmp_path / "b.parquet", [{"question_id": "q1", "question": "x"}])
    expect_error(tmp_path, a, b, "no metric can be computed")


def test_logs_that_share_no_metric_are_told_what_each_logs(tmp_path):
    """An answer-only baseline against a retrieval-only candidate: each log can be scored, on
    columns the other lacks; the error said both "need" columns one of them has."""
    a = log(tmp_path / "a.parquet", [{"question_id": "q1", "correct": True, "faithfulness": 0.5}])
    b = log(
        tmp_path / "b.parquet",
        [{"question_id": "q1", "retrieved_ids": ["p1", "p2"], "relevant_ids": ["p2"]}],
    )
    expect_error(
        tmp_path, a, b,
        f"{a} and {b}: no metric is logged by both ({a} logs correct, faithfulness; {b} logs "
        "relevant_ids with retrieved_ids); compare logs that share one, or add its columns to "
        "the other log",
    )  # fmt: skip


def test_no_question_in_common(pair, tmp_path):
    a, _ = pair
    rows = good_rows()
    for r in rows:
        r["question_id"] += "-other"
    b = log(tmp_path / "other.parquet", rows)
    expect_error(tmp_path, a, b, "no question_id in common")


def test_runs_with_no_question_in_common_show_how_each_spells_its_ids(tmp_path):
    """A CSV's 07 is the text "07", a Parquet log's 7 the text "7": "no question_id in
    common" alone did not say why."""
    a = tmp_path / "a.csv"
    a.write_text("question_id,correct\n" + "".join(f"0{i},true\n" for i in range(5)))
    b = log(tmp_path / "b.parquet", [{"question_id": i, "correct": True} for i in range(5)])
    expect_error(
        tmp_path, a, b,
        f"{a} and {b}: no question_id in common ({a}'s '00', '01', '02' and 2 more; {b}'s "
        "'0', '1', '2' and 2 more); compare two runs of the same question set",
    )  # fmt: skip


def test_rankings_without_context_need_k(tmp_path):
    rows = good_rows()
    for r in rows:
        del r["context_ids"]
    a, b = log(tmp_path / "a.parquet", rows), log(tmp_path / "b.parquet", rows)
    expect_error(tmp_path, a, b, "pass --k")
    code, _, err = run("compare", str(a), str(b), "-o", str(tmp_path / "r.html"), "--k", "2")
    assert code == 0, err


def test_refuses_to_overwrite_an_input(pair, tmp_path):
    a, b = pair
    before = a.read_bytes()
    code, _, err = run("compare", str(a), str(b), "-o", str(tmp_path / "r.html"), "--json", str(a))
    assert code == 2 and "is one of the input run logs" in err
    assert a.read_bytes() == before
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(("reads", "option"), [("--gate", "--gate"), ("--map", "--map")])
@pytest.mark.parametrize("output", ["--markdown", "--junit", "--json"])
def test_refuses_to_overwrite_a_gate_or_mapping_file(pair, tmp_path, reads, option, output):
    """'--gate gate.toml --markdown gate.toml' replaced the rules with the summary, exit 0."""
    a, b = pair
    read = tmp_path / "read.txt"
    read.write_text('require = ["correct >= -0.5"]\n' if reads == "--gate" else "correct=correct\n")
    before = read.read_bytes()
    html = tmp_path / "r.html"
    code, _, err = run(
        "compare", str(a), str(b), "-o", str(html), reads, str(read), output, str(read)
    )
    assert code == 2, err
    assert (
        err == f"ragreport: error: {read}: is the file {option} reads; choose another output path\n"
    )
    assert read.read_bytes() == before and not html.exists()


def test_a_default_json_path_on_an_input_names_the_option(pair, tmp_path):
    """A log named like the report's default JSON (evals.json beside -o evals.html): the
    error says the path is --json's default, which the user did not type."""
    a, b = pair
    evals = tmp_path / "evals.json"
    evals.write_bytes(a.read_bytes())
    code, _, err = run("compare", "--format", "parquet", str(evals), str(b), "-o",
                       str(tmp_path / "evals.html"))  # fmt: skip
    assert code == 2
    assert err == (
        f"ragreport: error: {evals}: the default path of --json (the report's path with .json) "
        "is one of the input run logs; give another with --json\n"
    )
    assert evals.read_bytes() == a.read_bytes()


def test_existing_report_survives_a_failed_run(pair, tmp_path):
    a, _ = pair
    report = tmp_path / "r.html"
    report.write_text("previous report")
    code, _, _ = run("compare", str(a), str(tmp_path / "missing.parquet"), "-o", str(report))
    assert code == 2
    assert report.read_text() == "previous report"


def test_unmatched_questions_are_listed_not_dropped(pair, tmp_path):
    a, _ = pair
    rows = good_rows()[:-2] + [dict(good_rows()[0], question_id="extra")]
    b = log(tmp_path / "b.parquet", rows)
    code, _, err = run("compare", str(a), str(b), "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["missing"] == {"A": ["extra"], "B": ["q10", "q11"]}
    assert doc["n_paired"] == 10
    assert any("only in run A" in w and "q10, q11" in w for w in doc["warnings"])
    assert "q10, q11" in (tmp_path / "r.html").read_text()


def test_ids_apart_only_by_spaces_are_said_to_be(pair, tmp_path):
    """A hand-edited CSV's 'q10 ' and ' q11' against q10 and q11: the two questions left the
    comparison with warnings listing "q10 ,  q11" and "q10, q11", which read alike; the
    warning says they differ only in spaces, quoting one of each run."""
    a, _ = pair
    rows = good_rows()
    rows[10], rows[11] = dict(rows[10], question_id="q10 "), dict(rows[11], question_id=" q11")
    b = log(tmp_path / "b.parquet", rows)
    code, _, err = run("compare", str(a), str(b), "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["n_paired"] == 10
    (warning,) = [w for w in doc["warnings"] if "only in run B" in w]
    assert warning.endswith(
        "; 2 questions differ only in spaces around their question_id ('q10' in run A, 'q10 ' "
        "in run B), and ids are paired exactly: write them alike in both runs"
    )


@pytest.mark.parametrize(
    ("options", "chosen", "labels"),
    [
        (["--baseline", "B"], "--baseline B", "B and the candidate A"),
        (["--label", "B", "--label", "A"], "--label", "B and the candidate A"),
        (["--label", "base", "--label", "A"], "--label", "base and the candidate A"),
    ],
)
def test_a_baseline_labelled_b_is_refused(pair, tmp_path, options, chosen, labels):
    """The report calls the baseline A and the candidate B: with the run labelled B as the
    baseline (or a candidate labelled A), "B worse" named the run labelled A. Refused, nothing
    written."""
    a, b = pair
    code, _, err = run("compare", str(a), str(b), "-o", str(tmp_path / "r.html"), *options)
    assert code == 2 and not (tmp_path / "r.html").exists()
    assert err == (
        f"ragreport: error: {chosen}: the report calls the baseline A and the candidate B, so "
        f"with the baseline labelled {labels} its verdict would name the wrong run; give the "
        "baseline log first, or other labels\n"
    )
    swapped = ["--label", "B", "--label", "A", "--baseline", "A"]  # roles and labels agree
    code, _, err = run("compare", str(a), str(b), "-o", str(tmp_path / "r.html"), *swapped)
    assert code == 0, err


@pytest.mark.parametrize(
    ("options", "chosen", "labels"),
    [
        (["--baseline", "B"], "--baseline B", "B and a candidate labelled A"),
        (["--label", "B", "--label", "X", "--label", "C"], "--label", "B"),
        (
            ["--label", "X", "--label", "A", "--label", "C"],
            "--label",
            "X and a candidate labelled A",
        ),
    ],
)
def test_a_study_with_a_baseline_labelled_b_is_refused(pair, tmp_path, options, chosen, labels):
    """Each candidate's section of a study calls the baseline A and the candidate B: with the
    run labelled B as the baseline, the section read "In this section A is the baseline B and B
    is A" and "B better" named the baseline. Refused as for two runs, nothing written."""
    logs = [str(tmp_path / f"{name}.parquet") for name in "ABC"]  # labelled A, B and C
    for path, source in zip(logs, (*pair, pair[1]), strict=True):
        Path(path).write_bytes(source.read_bytes())
    code, _, err = run("compare", *logs, "-o", str(tmp_path / "r.html"), *options)
    assert code == 2 and not (tmp_path / "r.html").exists()
    assert err == (
        f"ragreport: error: {chosen}: the report calls the baseline A and the candidate B, so "
        f"with the baseline labelled {labels} its verdict would name the wrong run; give the "
        "baseline log first, or other labels\n"
    )


def test_a_label_that_is_not_utf8_is_bad_input(pair, tmp_path):
    """A label given as $'b\\xff' (Python reads the byte as a lone surrogate) ended in a
    UnicodeEncodeError traceback and exit 1, a failed rule to CI, once the outputs were due."""
    extra = ("--label", "A", "--label", "b\udcff")
    needle = "--label 'b\\udcff': holds bytes that are not UTF-8; give it as UTF-8 text"
    expect_error(tmp_path, *pair, needle, extra=extra)


def test_a_log_path_that_is_not_utf8_is_bad_input(pair, tmp_path):
    """Arrow cannot open it: a traceback and exit 1."""
    odd = tmp_path / "b\udcff.parquet"
    pair[1].rename(odd)
    expect_error(tmp_path, pair[0], odd, "b\\udcff.parquet': holds bytes", "rename the file")


def test_an_option_of_one_value_given_twice_is_refused_naming_both(pair, tmp_path):
    """--inconclusive fail --inconclusive pass passed the job (the last won); --baseline b
    --baseline c compared with c. Named by its long flag, whichever spelling was given."""
    a, b = pair
    for given, said in (
        (["--inconclusive", "fail", "--inconclusive", "pass"], "--inconclusive given twice "
         "(fail, pass): give it once"),
        (["--label", "x", "--label", "y", "--baseline", "x", "--baseline", "y"], "--baseline "
         "given twice (x, y): give it once"),
        (["--seed", "1", "--seed", "1", "--seed", "2"], "--seed given 3 times (1, 1, 2): give "
         "it once"),
        (["--output", str(tmp_path / "r2.html")], f"--output given twice ({tmp_path / 'r.html'}, "
         f"{tmp_path / 'r2.html'}): give it once"),
    ):  # fmt: skip
        code, out, err = run(
            "compare", str(a), str(b), "-o", str(tmp_path / "r.html"), "--require", "correct > 0",
            *given,
        )  # fmt: skip
        assert (code, out, err) == (2, "", f"ragreport: error: {said}\n")
        assert sorted(tmp_path.iterdir()) == sorted([a, b])


def single_valued_options() -> list[tuple[str, str]]:
    """(command, long flag) of every option of every command that takes one value."""
    return [
        (name, option.opts[-1])
        for name, command in cli.commands.items()
        for option in command.params
        if isinstance(option, click.Option)
        and not (option.multiple or option.is_flag or option.count)
    ]


@pytest.mark.parametrize(("command", "flag"), single_valued_options())
def test_every_option_of_one_value_refuses_a_second(command, flag):
    """Every command's, compare's shared ones (--k in metrics, --confidence in merge) too."""
    code, out, err = run(command, flag, "one", flag, "two")
    said = f"ragreport: error: {flag} given twice (one, two): give it once\n"
    assert (code, out, err) == (2, "", said)


def test_options_that_take_several_values_still_take_them(pair, tmp_path):
    a, b = pair
    code, _, err = run(
        "compare", str(a), str(b), "-o", str(tmp_path / "r.html"), "--label", "x", "--label", "y",
        "--slice", "slice", "--slice", "slice", "--require", "correct >= -1",
        "--require", "correct <= 1", "--n-boot", "200",
    )  # fmt: skip
    assert code == 0, err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert [r["label"] for r in doc["runs"]] == ["x", "y"]
    assert len(doc["gate"]["results"]) == 2


@pytest.mark.parametrize("value", ["abc", "1e9", "99999999999999999", ""])
def test_a_source_date_epoch_that_is_no_count_of_seconds_is_one_line(pair, tmp_path, value):
    """numpy parses SOURCE_DATE_EPOCH while scipy imports: 'abc' ended in a traceback, exit 1,
    in a new process (the command's own), before any check of the tool's."""
    a, b = pair
    out = tmp_path / "r.html"
    result = subprocess.run(
        [sys.executable, "-m", "reportgen", "compare", str(a), str(b), "-o", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "SOURCE_DATE_EPOCH": value},
        check=False,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"ragreport: error: SOURCE_DATE_EPOCH={value!r}: not a count of seconds since 1970 "
        "(such as 1700000000); set it to one, or unset it\n"
    )
    assert not out.exists()


def test_the_errors_the_api_raises_are_the_package_s(monkeypatch, pair):
    import reportgen
    from reportgen import errors

    assert (reportgen.InputError, reportgen.OutputError) == (errors.InputError, errors.OutputError)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "abc")
    with pytest.raises(reportgen.InputError, match="SOURCE_DATE_EPOCH='abc'"):
        reportgen.compare(*pair)
