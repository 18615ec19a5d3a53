"""promptfoo files each command cannot read as one log: the advice fits the command, and a file
of no result or of repeated results says so."""

from __future__ import annotations

from test_eval_tool_readers import promptfoo_file, result
from test_input_validate import validate
from test_readers import fail

TWO_RUNS = [result("openai:gpt-4o", "refund", 0, True), result("mistral:large", "refund", 0, False)]
RUNS = "holds 2 runs (openai:gpt-4o | qa; mistral:large | qa)"


def test_each_command_advises_on_a_file_of_several_runs_in_its_own_terms(tmp_path):
    path = promptfoo_file(tmp_path / "out.json", TWO_RUNS)
    assert validate(path, code=2) == [f"{path}: {RUNS}; check one at a time with --run-filter NAME"]
    line = fail("convert", path, "-o", tmp_path / "log.parquet")
    assert line.endswith(
        f"{path}: {RUNS}; a run log holds one run: convert each with --run-filter NAME to its "
        "own -o file"
    )
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line.endswith(
        f"{path}: {RUNS}; choose one with --run-filter, or give the file alone to compare them all"
    )
    assert validate(path, "--run-filter", "mistral:large", code=0) == [
        f"{path}: ok, 1 rows follow the run-log contract"
    ]


def test_a_file_of_no_result_says_the_eval_ran_no_test(tmp_path):
    path = promptfoo_file(tmp_path / "out.json", [])
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line.endswith(
        f"{path}: its results list is empty, so the eval ran no test; pass the output of "
        "`promptfoo eval -o out.json` run with at least one test and provider"
    )


def test_results_of_a_repeated_eval_are_named_as_such(tmp_path):
    repeated = [result("p", case, i, i < 2) for i, case in enumerate(["refund", "wifi"] * 3)]
    path = promptfoo_file(tmp_path / "out.json", repeated)
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line.endswith(
        f"{path}: test case 'refund' has 3 results with the same vars in run 'p | qa', as "
        "`promptfoo eval --repeat 3` writes; a promptfoo file is read as one answer per test: "
        "pass the output of an eval without --repeat, or log the repeats as a run log with a "
        "sample column"
    )


def test_two_tests_of_one_description_are_told_apart_from_repeats(tmp_path):
    other = result("p", "refund", 1, True)
    other["testCase"]["vars"] = other["vars"] = {"question": "refund by card?"}
    path = promptfoo_file(tmp_path / "out.json", [result("p", "refund", 0, True), other])
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line.endswith(
        f"{path}: test case 'refund' appears twice in run 'p | qa'; give each test a distinct "
        "description"
    )
