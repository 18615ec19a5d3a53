"""promptfoo files each command cannot read as one log: the advice fits the command, and a file
of no result or of repeated results says so."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from test_eval_tool_readers import promptfoo_file, result
from test_input_validate import labelled, validate
from test_readers import fail

from reportgen.cli import cli

TWO_RUNS = [result("openai:gpt-4o", "refund", 0, True), result("mistral:large", "refund", 0, False)]
SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs" / "fare_rules_a_baseline.parquet"
RUNS = "holds 2 runs (openai:gpt-4o | qa; mistral:large | qa)"


def test_each_command_advises_on_a_file_of_several_runs_in_its_own_terms(tmp_path):
    path = promptfoo_file(tmp_path / "out.json", TWO_RUNS)
    advice = f"{path}: error: {RUNS}; check one at a time with --run-filter NAME"
    assert validate(path, code=2) == [advice]
    line = fail("convert", path, "-o", tmp_path / "log.parquet")
    assert line.endswith(
        f"{path}: {RUNS}; a run log holds one run: convert each with --run-filter NAME to its "
        "own -o file"
    )
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line.endswith(
        f"{path}: {RUNS}; choose one with --run-filter, or give the file alone to compare them all"
    )
    line = fail("metrics", path, "-o", tmp_path / "m.parquet")
    assert line.endswith(
        f"{path}: {RUNS}; a metrics table holds one run: score each with --run-filter NAME to "
        "its own -o file"
    )
    assert validate(path, "--run-filter", "mistral:large", code=0) == [
        f"{path}: ok, 1 row follows the run-log contract",
        f"{path}: note: read as the file's run \u201cmistral:large | qa\u201d; tests paired on "
        "their description, else a hash of vars",
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


def test_only_results_that_ended_in_an_error_are_counted_as_errors(tmp_path, compare):
    failed = result("p", "change", 1, False, error="Expected output to contain 'free'")
    errored = result("p", "wifi", 2, False, error="Rate limit", gradingResult=None, score=0)
    rows = [result("p", "refund", 0, True), failed, errored]
    newer = [dict(row, failureReason=reason) for row, reason in zip(rows, (0, 1, 2), strict=True)]
    older = rows  # versions before failureReason: an error leaves nothing graded
    for name, results in (("newer", newer), ("older", older)):
        path = promptfoo_file(tmp_path / f"{name}.json", results)
        out = compare(path, path, tmp_path / name, "--n-boot", 100)
        error = "Run A: 1 result ended in an error; counted as not correct, as promptfoo "
        assert (
            error + "counts them, with no latency or cost (no answer was given)" in out["warnings"]
        ), name
        assert out["metrics"]["correct"]["a"] == pytest.approx(1 / 3)
        # the errored call's 102 ms and its cost are no answer's: the mean of 100 and 101
        rows = pd.DataFrame(out["per_question"]).set_index("question_id")
        assert rows["latency_ms_a"].isna().sum() == 1 and rows["cost_usd_a"].isna().sum() == 1
        assert rows["latency_ms_a"].mean() == pytest.approx(100.5)


def test_a_provider_that_failed_every_call_passes_no_latency_or_cost_gate(tmp_path):
    """Every call of B ended in an error after 3 ms at no cost: the report said B answered at
    -100% latency and -100% cost, and gates on both passed (exit 0) while the provider answered
    nothing. B has no latency now, so a rule on it cannot be judged: exit 2, naming it."""
    a = [result("p", f"t{i}", i, i % 2 == 0, latencyMs=2000 + i, cost=0.01) for i in range(12)]
    b = [
        result("p", f"t{i}", i, False, failureReason=2, error="Rate limit", response=None,
               gradingResult=None, score=0, latencyMs=3, cost=0)
        for i in range(12)
    ]  # fmt: skip
    a_path = promptfoo_file(tmp_path / "a.json", a)
    b_path = promptfoo_file(tmp_path / "b.json", b)
    for rule in ("latency_ms <= -1000", "cost_usd <= 0"):
        line = fail("compare", a_path, b_path, "-o", tmp_path / "r.html", "--require", rule)
        assert line.startswith(f"ragreport: error: rule '{rule}': {b_path} has no value"), line
        assert not (tmp_path / "r.html").exists()


def test_the_run_is_named_in_the_user_s_own_words(tmp_path, compare):
    rows = [result("p", "refund", 0, True), result("p", "wifi", 1, False)]
    for row in rows:
        row["prompt"] = {"raw": "Answer:\n{{question}}", "label": 'Bob\'s "short" prompt'}
    path = promptfoo_file(tmp_path / "out.json", rows)
    out = compare(path, path, tmp_path / "o", "--n-boot", 100)
    assert (
        "Run A: read as the file's run “p | Bob's \"short\" prompt”; tests paired on their "
        "description, else a hash of vars"
    ) in out["warnings"]


def test_vars_of_any_json_value_are_converted(tmp_path):
    rows = [result("p", d, i, True) for i, d in enumerate(["refund", "wifi", "seat"])]
    values = [
        {"n": 1, "big": 2**70, "meta": {}},
        {"n": "two", "big": 1, "meta": {}},
        {"n": 3.5, "big": 2, "meta": {}},
    ]
    for row, extra in zip(rows, values, strict=True):
        row["testCase"]["vars"] = row["vars"] = {"question": "?", **extra}
    path = promptfoo_file(tmp_path / "out.json", rows)
    target = tmp_path / "log.parquet"
    outcome = CliRunner().invoke(cli, ["convert", str(path), "-o", str(target)])
    assert outcome.exit_code == 0, outcome.output
    table = pq.read_table(target)
    # mixed kinds, an integer past int64 and an empty object: kept as their JSON text
    assert table["n"].to_pylist() == ["1", "two", "3.5"]
    assert table["big"].to_pylist() == [str(2**70), "1", "2"]
    assert table["meta"].to_pylist() == ["{}", "{}", "{}"]


@pytest.mark.parametrize(
    "table",
    [  # older exports: vars and a column per run; newer: a description and the grader's reason
        'question,[openai:gpt-4o] qa\nrefund?,"[PASS] 30 days"\nwifi?,"[FAIL] no\n---\nyes"\n',
        "Description,question,[openai:gpt-4o] qa,Grader Reason,Comment\n"
        'refund,refund?,[PASS] 30 days,,\nwifi,wifi?,"[ERROR] ",,\n',
        # today's: the outcome in a Status column of each run (so twice with two runs), the
        # answers bare; it read "no question_id column", or "column 'Status' appears twice"
        "Description,question,[openai:gpt-4o-mini] qa,Status,Score,Named Scores,Grader Reason,"
        'Comment\nrefund,refund?,"30 days\nor 60",PASS,1.00,,,\nwifi,wifi?,no,FAIL,0.00,,r,\n',
        "Description,question,[a] qa,Status,Score,Named Scores,Grader Reason,Comment,[b] qa,"
        "Status,Score,Named Scores,Grader Reason,Comment\n"
        "refund,refund?,30 days,PASS,1.00,,,,30,PASS,1.00,,,\n",
    ],
)
def test_promptfoo_s_table_export_is_sent_to_its_json(tmp_path, table):
    path = tmp_path / "out.csv"
    path.write_text(table)
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line == (
        f"ragreport: error: {path}: is promptfoo's table export (a column of answers per run, "
        "their outcomes as text), not a run log; pass the JSON that `promptfoo eval -o "
        "out.json` writes"
    )


def test_a_var_named_sample_is_a_test_input_not_repeated_answers(tmp_path, compare):
    """promptfoo holds one answer per test, so a var named sample (or epoch) is kept as
    var_sample: it switched the comparison to repeated answers (a bootstrap-t test, no fixed
    and broken counts) where the file is one answer per test."""
    rows = [
        result(provider, f"case {i}", i, ok, testCase={
            "description": f"case {i}", "vars": {"question": f"q{i}", "sample": "Dear customer"},
        })
        for i in range(12)
        for provider, ok in (("openai:a", i % 3 != 0), ("openai:b", i % 4 != 0))
    ]  # fmt: skip
    path = promptfoo_file(tmp_path / "out.json", rows)
    out = compare(
        path, path, tmp_path / "o", "--run-filter", "openai:a", "--run-filter", "openai:b",
        "--slice", "var_sample", "--n-boot", 100,
    )  # fmt: skip
    correct = out["metrics"]["correct"]
    # A wrong on 0, 3, 6, 9; B on 0, 4, 8: fixed 3, 6, 9; broken 4, 8
    assert (correct["fixed"], correct["broken"], correct["test"]) == (3, 2, "McNemar exact")
    assert out["samples"] is None
    assert list(out["slices"]["var_sample"]) == ["Dear customer"]


def test_vars_named_like_the_results_columns_are_kept_under_var(tmp_path):
    """A var Score beside promptfoo's score refused the file ("differ only in case"), a var
    answer was dropped, and a var Slice was a run-log column in another case."""
    rows = [
        result("p", f"case {i}", i, i % 2 == 0, testCase={
            "description": f"case {i}", "vars": {"Score": "high", "answer": "42", "Slice": "x"},
        })
        for i in range(4)
    ]  # fmt: skip
    path = promptfoo_file(tmp_path / "out.json", rows)
    out = tmp_path / "log.parquet"
    done = CliRunner().invoke(cli, ["convert", str(path), "-o", str(out)])
    assert done.exit_code == 0, done.output
    table = pq.read_table(out).to_pydict()
    assert table["var_Score"] == ["high"] * 4 and table["var_Slice"] == ["x"] * 4
    assert table["var_answer"] == [42] * 4 and "Score" not in table and "Slice" not in table


def test_a_var_named_question_id_is_said_to_be_kept_and_paired_on_when_mapped(tmp_path):
    """It was kept as var_question_id unsaid, and with --map question_id=var_question_id the
    note still said the tests were "paired on their description"."""
    rows = [
        result("p", f"case {i}", i, True, testCase={
            "description": f"case {i}", "vars": {"question_id": f"00{i}"},
        })
        for i in range(3)
    ]  # fmt: skip
    path = promptfoo_file(tmp_path / "out.json", rows)
    read = f"{path}: note: read as the file's run \u201cp | qa\u201d; tests paired on "
    assert validate(path, code=0)[1] == (
        f"{read}their description, else a hash of vars, not on the var question_id (kept as "
        "var_question_id; --map question_id=var_question_id pairs on it)"
    )
    mapped = validate(path, "--map", "question_id=var_question_id", code=0)
    assert mapped[1] == f"{read}var_question_id (--map)"


def test_a_var_read_as_a_run_log_column_is_named_as_the_var(tmp_path):
    """A var faithfulness is the run-log column (a label the test carries), so a value it
    cannot hold is refused; the message named "column faithfulness", which the file has not."""
    rows = [
        result("p", f"case {i}", i, True, testCase={
            "description": f"case {i}", "vars": {"faithfulness": "high" if i == 2 else 0.5},
        })
        for i in range(4)
    ]  # fmt: skip
    path = promptfoo_file(tmp_path / "out.json", rows)
    assert fail("compare", path, path, "-o", tmp_path / "r.html") == (
        f"ragreport: error: {path}: result 3, column vars.faithfulness: 'high' is not float "
        "0..1 (share of the answer's claims supported by its context); fix the value or drop the "
        "column"
    )


def test_a_var_out_of_range_is_named_as_the_var_and_its_place_in_the_results(tmp_path):
    """A share of 1.7 was named "row 2 ... faithfulness": the file has no column faithfulness,
    and row 2 of the run read (--run-filter) is the file's 4th result; its id is a hash of the
    vars, found nowhere in the file."""
    rows = [
        result(provider, "", i, True, testCase={"vars": {"faithfulness": 1.7 if i else 0.5}})
        for i in range(2)
        for provider in ("openai:gpt-4o", "mistral:large")
    ]
    path = promptfoo_file(tmp_path / "out.json", rows)
    lines = validate(path, "--run-filter", "mistral:large", code=2)
    assert lines[0].startswith(
        f"{path}: error: 1 row with share_range in vars.faithfulness: result 4 (question_id 'vars-"
    ), lines
    assert lines[0].endswith("vars.faithfulness is 1.7; expected a share between 0 and 1")


def test_a_study_gives_a_note_every_comparison_shares_once(tmp_path):
    """Each candidate's comparison repeats the baseline's reading note and the score columns'
    note; the study's "Read first" listed each once per candidate (9 lines for 3)."""
    providers = ["openai:gpt-4o-mini", "openai:gpt-4o", "mistral:large"]
    topics = ["refund", "wifi", "seat", "meal", "pet"]
    path = promptfoo_file(
        tmp_path / "out.json",
        [
            result(p, d, i, (i + n) % 2 == 0)
            for n, p in enumerate(providers)
            for i, d in enumerate(topics)
        ],
    )
    out = tmp_path / "r.html"
    result_ = CliRunner().invoke(cli, ["compare", str(path), "-o", str(out), "--n-boot", "100"])
    assert result_.exit_code == 0, result_.output
    warnings = json.loads(out.with_suffix(".json").read_text())["warnings"]
    read = "; tests paired on their description, else a hash of vars"
    assert [w for w in warnings if w.endswith(read)] == [
        f"Run {p}: read as the file's run “{p} | qa”{read}" for p in providers
    ]
    scores = [w for w in warnings if "Score columns of the logs' evaluation tool" in w]
    assert len(scores) == 1 and scores[0].startswith("all candidates: Score columns")
    assert not any("same log" in w for w in warnings)  # one file, read as three runs


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ({"temperature": 1}, "two providers under one name (test case 'refund' twice)"),
        (None, "two providers of one id under one name (test case 'refund' twice, prompts 0 and "
         "1 of the same text)"),
    ],
)  # fmt: skip
def test_two_providers_under_one_name_are_told_to_label_the_providers(tmp_path, config, said):
    """The same provider id twice (promptIdx 1) with another config was read as one run and
    refused as the output of `promptfoo eval --repeat 2`, which it is not. Without a config in
    the results (a sweep of temperatures whose results promptfoo writes alike), the refusal said
    to label the prompts, which are one prompt: labelling it splits nothing."""
    rows = [result("openai:gpt-4o-mini", d, i, True) for i, d in enumerate(["refund", "wifi"])]
    provider = {"id": "openai:gpt-4o-mini"} | ({"config": config} if config else {"label": ""})
    second = [dict(r, promptIdx=1, provider=provider) for r in rows]
    path = promptfoo_file(tmp_path / "out.json", rows + second)
    message = (
        f"{path}: run 'openai:gpt-4o-mini | qa' holds the results of {said}; give each provider "
        "a label in the promptfoo config, so that each is a run of its own"
    )
    assert fail("compare", path, "-o", tmp_path / "r.html").endswith(message)
    assert validate(path, code=2) == [labelled(path, message)]


def test_two_prompts_of_one_label_are_told_to_label_the_prompts(tmp_path):
    """One provider, two prompt files both called prompt.txt (promptIdx 0 and 1): the refusal
    said to label the providers, which cannot tell the two prompts apart."""
    rows = [result("openai:gpt-4o-mini", d, i, True) for i, d in enumerate(["refund", "wifi"])]
    rows = [dict(r, prompt=dict(r["prompt"], label="prompt.txt")) for r in rows]
    other = [dict(r, promptIdx=1, prompt=dict(r["prompt"], raw="Answer briefly.")) for r in rows]
    path = promptfoo_file(tmp_path / "out.json", rows + other)
    assert validate(path, code=2) == [
        f"{path}: error: run 'openai:gpt-4o-mini | prompt.txt' holds the results of two prompts "
        "under one label (test case 'refund' twice, prompts 0 and 1); give each prompt a label in "
        "the promptfoo config, so that each is a run of its own"
    ]


def test_a_file_of_too_many_runs_given_alone_says_how_to_choose(tmp_path):
    providers = [f"provider-{n}" for n in range(10)]
    path = promptfoo_file(tmp_path / "out.json", [result(p, "refund", 0, True) for p in providers])
    assert fail("compare", path, "-o", tmp_path / "r.html").endswith(
        f"{path}: holds 10 runs; compare at most 8 at once: give the file once per run chosen, "
        "each with --run-filter NAME"
    )


def test_a_labelled_provider_is_chosen_by_its_id_too(tmp_path, compare):
    """README: --run-filter takes the provider; a labelled provider's id "matched none"."""
    rows = [
        dict(result(provider, f"case {i}", i, ok), provider={"id": provider, "label": label})
        for i in range(12)
        for provider, label, ok in (
            ("openai:gpt-4o-mini", "mini", i % 3 != 0),
            ("openai:gpt-4o", "big", i % 4 != 0),
        )
    ]
    path = promptfoo_file(tmp_path / "out.json", rows)
    out = compare(
        path, path, tmp_path / "o", "--run-filter", "openai:gpt-4o-mini",
        "--run-filter", "openai:gpt-4o", "--n-boot", 100,
    )  # fmt: skip
    # mini wrong on 0, 3, 6, 9; big on 0, 4, 8: fixed 3, 6, 9; broken 4, 8
    assert (out["metrics"]["correct"]["fixed"], out["metrics"]["correct"]["broken"]) == (3, 2)
    # one id shared by two labelled runs is said to match both, not none
    hot = [dict(r, provider={"id": "openai:gpt-4o", "label": "hot"}) for r in rows[1::2]]
    both = promptfoo_file(tmp_path / "both.json", rows + hot)
    said = fail("compare", both, both, "-o", tmp_path / "r.html", "--run-filter", "openai:gpt-4o")
    assert "--run-filter 'openai:gpt-4o' matches 2 of the runs in the file" in said


def test_promptfoo_s_json_lines_output_reads_as_its_json(tmp_path, compare):
    """`promptfoo eval -o out.jsonl` writes one result a line; it read as a run log with no
    question_id, and --format jsonl said the same. Versions that wrote the results batch by
    batch without a newline after each batch put two results on one line."""
    rows = [
        result(provider, f"case {i}", i, ok)
        for i in range(12)
        for provider, ok in (("openai:gpt-4o-mini", i % 3 != 0), ("openai:gpt-4o", i % 4 != 0))
    ]
    runs = ("--run-filter", "openai:gpt-4o-mini", "--run-filter", "openai:gpt-4o", "--n-boot", 100)
    json_file = promptfoo_file(tmp_path / "out.json", rows)
    expected = compare(json_file, json_file, tmp_path / "j", *runs)
    lines = [json.dumps(r) for r in rows]
    for name, text in (
        ("out.jsonl", "\n".join(lines) + "\n"),
        # batches of 5 joined by "\n", each appended with no newline after it
        ("batched.jsonl", "".join("\n".join(lines[i : i + 5]) for i in range(0, 24, 5))),
        ("crlf.ndjson", "\r\n".join(lines) + "\r\n"),
    ):
        path = tmp_path / name
        path.write_text(text)
        out = compare(path, path, tmp_path / name.replace(".", "_"), *runs)
        assert out["metrics"] == expected["metrics"], name
        # mini wrong on 0, 3, 6, 9; big on 0, 4, 8: fixed 3, 6, 9; broken 4, 8
        assert (out["metrics"]["correct"]["fixed"], out["metrics"]["correct"]["broken"]) == (3, 2)
    jsonl = tmp_path / "out.jsonl"
    assert validate(jsonl, "--run-filter", "openai:gpt-4o", code=0) == [
        f"{jsonl}: ok, 12 rows follow the run-log contract",
        f"{jsonl}: note: read as the file's run \u201copenai:gpt-4o | qa\u201d; tests paired on "
        "their description, else a hash of vars",
    ]
    named = tmp_path / "lines.json"
    named.write_text((tmp_path / "out.jsonl").read_text())
    assert fail("compare", named, "-o", tmp_path / "r.html").endswith(
        f"{named}: promptfoo's JSON Lines output (one result a line), not one JSON document; "
        "name the file .jsonl"
    )
    (tmp_path / "bad.jsonl").write_text(lines[0] + "\n" + lines[1][:-1] + "\n")
    assert fail("compare", tmp_path / "bad.jsonl", "-o", tmp_path / "r.html").endswith(
        "bad.jsonl: line 2 is not JSON (Expecting ',' delimiter at column "
        f"{len(lines[1])}); pass the file `promptfoo eval -o out.jsonl` writes"
    )


def test_a_run_log_forced_to_promptfoo_is_told_it_is_none(tmp_path):
    """A run log's JSON Lines read with --format promptfoo became one run named 'provider' of
    one test repeated on every row, refused as `promptfoo eval --repeat 3` output."""
    log = tmp_path / "run.jsonl"
    frame = pd.DataFrame({"question_id": ["q1", "q2", "q3"], "correct": [True, False, True]})
    frame.to_json(log, orient="records", lines=True)
    args = ["compare", str(log), str(log), "-o", str(tmp_path / "r.html"), "--format", "promptfoo"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"ragreport: error: {log}: result 1 is no promptfoo result (it has none of prompt, "
        "provider, response, success, testCase); check --format, or pass the file `promptfoo "
        "eval -o out.json` writes"
    )


def test_promptfoo_before_prompt_labels_reads_a_run_per_prompt(tmp_path):
    """promptfoo's first output (2023) had no provider and named a prompt by its `display`,
    with `raw` its text with the test's vars filled in: each of 40 tests was read as a run
    ("holds 80 runs")."""
    shown = ["prompts/terse.txt: Answer {{question}}", "prompts/cited.txt: Cite {{question}}"]
    results = [
        {
            "prompt": {
                "raw": display.split(": ")[1].replace("{{question}}", f"q{t}?"),
                "display": display,
            },
            "vars": {"question": f"q{t}?"},
            "response": {"output": f"answer {t}"},
            "success": t % 2 == 0 if p == 0 else t % 4 != 3,
            "score": 1.0,
            "latencyMs": 100,
        }
        for t in range(40)
        for p, display in enumerate(shown)
    ]
    path = tmp_path / "out.json"
    path.write_text(json.dumps({"version": 1, "results": results, "table": {}, "stats": {}}))
    out = tmp_path / "r.html"
    done = CliRunner().invoke(cli, ["compare", str(path), "-o", str(out), "--n-boot", "100"])
    assert done.exit_code == 0, done.output
    report = json.loads(out.with_suffix(".json").read_text())
    assert [(run["label"], run["n_questions"]) for run in report["runs"]] == [
        (shown[0], 40),
        (shown[1], 40),
    ]
    correct = report["comparisons"][0]["metrics"]["correct"]
    assert (correct["a"], correct["b"], correct["fixed"], correct["broken"]) == (0.5, 0.75, 10, 0)


def test_a_converted_log_still_says_its_results_that_ended_in_an_error(tmp_path, compare):
    """convert printed "1 result ended in an error" and wrote a Parquet log that did not hold
    it: the report of the converted log said nothing of the error its original's report
    stated. The reader's notes are recorded in the Parquet metadata and read back."""
    errored = result("p", "wifi", 2, False, error="Rate limit", gradingResult=None, score=0)
    rows = [result("p", "refund", 0, True), result("p", "change", 1, False), errored]
    reasons = [dict(r, failureReason=2 * (r is errored)) for r in rows]
    path = promptfoo_file(tmp_path / "out.json", reasons)
    log = tmp_path / "log.parquet"
    done = CliRunner().invoke(cli, ["convert", str(path), "-o", str(log)])
    assert done.exit_code == 0, done.output
    error = (
        "1 result ended in an error; counted as not correct, as promptfoo counts them, with no "
        "latency or cost (no answer was given)"
    )
    assert error in done.output
    assert validate(log, code=0)[2] == f"{log}: note: {error}"
    original = compare(path, path, tmp_path / "original", "--n-boot", 100)["warnings"]
    converted = compare(log, log, tmp_path / "converted", "--n-boot", 100)["warnings"]
    assert f"Run A: {error}" in converted and f"Run B: {error}" in converted
    said = [w for w in converted if w.startswith(("Run A: ", "Run B: "))]
    assert said == [w for w in original if w.startswith(("Run A: ", "Run B: "))]


def test_notes_metadata_another_tool_wrote_is_no_note(tmp_path):
    """A Parquet log whose ragreport:notes metadata is not a list of texts reads no note."""
    log = tmp_path / "log.parquet"
    table = pq.read_table(SAMPLE)
    for written in (b"not json", b'{"a": 1}', b'[1, "kept"]'):
        pq.write_table(table.replace_schema_metadata({b"ragreport:notes": written}), log)
        lines = validate(log, code=0)
        assert [line for line in lines if ": note: " in line] == (
            [f"{log}: note: kept"] if written.startswith(b"[") else []
        )
