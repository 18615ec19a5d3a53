"""Every count a reader meets agrees with its noun: "1 question", "2 questions", on the page, in
the Markdown summary and on the command line, for logs of one and two questions."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from test_diag_pages import page_text

from reportgen.cli import cli
from reportgen.formatting import agreeing, fmt_count
from reportgen.reporters.markdown_report import MAX_RULE_ROWS

ONE_PLURAL = re.compile(r"\b1 (?:[a-z-]+ )?(?:questions|passages|rows|labels|candidates)\b")


def question(i: int, **columns) -> dict:
    """Question q{i}: p1 is its labelled passage, ranked first and the whole prompt."""
    return {
        "question_id": f"q{i}",
        "retrieved_ids": ["p1", "p2"],
        "relevant_ids": ["p1"],
        "context_ids": ["p1"],
        **columns,
    }


def compare_logs(folder: Path, logs: list[list[dict]], *options: str) -> tuple[int, str]:
    """``compare`` on ``logs`` (the baseline first), written to ``folder`` as report.html and
    report.md: its exit code and what it printed."""
    folder.mkdir()
    paths = []
    for name, rows in zip("abc", logs, strict=False):
        paths.append(folder / f"{name}.parquet")
        pd.DataFrame(rows).to_parquet(paths[-1])
    outputs = ["-o", str(folder / "report.html"), "--markdown", str(folder / "report.md")]
    args = ["compare", *map(str, paths), *outputs, "--n-boot", "200", *options]
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.output


def run(folder: Path, logs: list[list[dict]], *options: str) -> tuple[str, str, str]:
    """A ``compare`` that succeeds: the page's text, the Markdown summary and what it printed."""
    code, output = compare_logs(folder, logs, *options)
    assert code == 0, output
    return page_text(folder / "report.html"), (folder / "report.md").read_text(), output


@pytest.mark.parametrize(
    ("n", "page", "summary"),
    [
        (
            1,
            [
                "Golden-set audit 1 paired question: under 50",
                "B wins on 1 question, loses on 0 and ties on 0.",
                "they differ on 0 of 1 question.",
                "Run A (1 question)",
                "Run B (1 question)",
                "Run A fails most often by generation failure (1 question): the fix",
            ],
            "correct: Fixed 1, broken 0 (of 1 question scored in both runs).",
        ),
        (
            2,
            [
                "Golden-set audit 2 paired questions: under 50",
                "B wins on 1 question, loses on 1 and ties on 0;",
                "they differ on 0 of 2 questions.",
                "Run A (2 questions)",
                "Run B fails most often by generation failure (1 question): the fix",
            ],
            "correct: Fixed 1, broken 1 (of 2 questions scored in both runs).",
        ),
    ],
    ids=["one question", "two questions"],
)
def test_a_count_of_one_is_singular_and_the_others_plural(tmp_path, n, page, summary):
    """B gets q0 right where A got it wrong and, of two questions, q1 wrong where A got it
    right: one win, one failure per run; totals of one singular, of two plural."""
    text, markdown, _ = run(
        tmp_path / "logs",
        [
            [question(0, correct=False), question(1, correct=True)][:n],
            [question(0, correct=True), question(1, correct=False)][:n],
        ],
    )
    assert [sentence for sentence in page if sentence not in text] == []
    assert summary in markdown
    assert not ONE_PLURAL.search(text) and not ONE_PLURAL.search(markdown)


def test_one_win_one_loss_and_one_tie_in_the_verdict(tmp_path):
    score = [0.2, 0.9, 0.5], [0.6, 0.1, 0.5]  # q0 up, q1 down, q2 level
    logs = [[{"question_id": f"q{i}", "score": s} for i, s in enumerate(run)] for run in score]
    text, markdown, output = run(tmp_path / "scores", logs, "--metric", "score")
    for words in (text, markdown, output):
        assert "(1 win, 1 loss, 1 tie, over 3 questions)" in words


def test_a_prompt_of_one_passage(tmp_path):
    """--k 1, and a grade-0 label so that the audit counts unjudged passages."""
    judged = {"relevant_ids": ["p1", "p9"], "relevant_grades": [1, 0]}
    text, _, _ = run(
        tmp_path / "k1",
        [[question(0, correct=True, **judged)], [question(0, correct=False, **judged)]],
        "--k",
        "1",
    )
    assert "Retrieval is scored at k = 1 (--k): the first 1 passage of retrieved_ids." in text
    assert "Unjudged@1, the share of the top 1 passage that no label judged" in text
    assert "B \u2212 A 0.000, over 1 question." in text


def test_one_human_label(tmp_path):
    """Only A's q0 carries a human verdict: the judge is checked against 1 label."""
    text, _, _ = run(
        tmp_path / "human",
        [
            [question(0, correct=True, human_correct=True), question(1, correct=True)],
            [question(0, correct=True), question(1, correct=False)],
        ],
    )
    assert "correct, A's answers only (B's have no human label): Only 1 human label;" in text
    assert "correct, both runs" not in text


def test_a_study_of_one_question(tmp_path):
    one = [question(0, correct=True)]
    text, _, _ = run(tmp_path / "study", [one, one, [question(0, correct=False)]])
    assert "2 candidates \u00b7 1 question every run has" in text


def test_one_rule_result_more_than_the_summary_shows(tmp_path):
    """MAX_RULE_ROWS + 1 passing rules: the Markdown lists 60 and counts the one left over.
    (1 of 2 questions fixed: the interval's lower bound is -0.486, so the margins start at
    -0.5.)"""
    margins = [f"correct >= -{500 + i}e-3" for i in range(MAX_RULE_ROWS + 1)]
    rules = [x for margin in margins for x in ("--require", margin)]
    _, markdown, _ = run(
        tmp_path / "rules",
        [
            [question(0, correct=True), question(1, correct=False)],
            [question(0, correct=True), question(1, correct=True)],
        ],
        *rules,
    )
    assert "\n1 more rule result is in the JSON and the JUnit file (it passes).\n" in markdown


def test_the_prompt_sizes_of_the_1_question_both_runs_log(tmp_path):
    """A logs no prompt for q1: the prompt sizes are compared on q0 alone."""
    text, _, _ = run(
        tmp_path / "prompts",
        [
            [question(0, correct=True), question(1, correct=True, context_ids=None)],
            [question(0, correct=True, context_ids=["p1", "p2"]), question(1, correct=False)],
        ],
    )
    assert "they differ on 1 of the 1 question whose prompt both runs log." in text
    assert (
        "(questions have a median of 1 relevant passage for a median of 1 slot in A and 2 in B)"
        in text
    )


def test_a_gate_of_one_rule(tmp_path):
    logs = [[question(0, correct=True), question(1, correct=second)] for second in (True, False)]
    code, output = compare_logs(tmp_path / "gate", logs, "--require", "correct >= 0")
    assert code == 1 and "gate: fail (1 of 1 rule check failed;" in output


def test_a_holdout_that_leaves_1_other_question(tmp_path):
    rows = [question(i, correct=True, split="test" if i else "dev") for i in range(11)]
    code, output = compare_logs(tmp_path / "holdout", [rows, rows], "--holdout", "split=test")
    assert code == 2
    assert "leaves 10 held-out and 1 other question; each side needs 10 or more" in output


def test_commands_on_a_one_question_log(tmp_path):
    """metrics, merge, convert and validate on one question: '(1 question)', 'over 1 question',
    '(1 row)', '1 row follows'."""
    log = tmp_path / "one.parquet"
    pd.DataFrame([question(0, correct=True)]).to_parquet(log)

    def invoke(*args: object) -> str:
        result = CliRunner().invoke(cli, [str(a) for a in args])
        assert result.exit_code == 0, result.output
        return result.stdout  # merge of a run with itself says so on stderr

    sums = tmp_path / "one.sums.parquet"
    metrics = tmp_path / "one.metrics.parquet"
    written = invoke("metrics", log, "-o", metrics, "--partial-sums", sums, "--n-boot", 100)
    assert written.strip() == f"wrote {metrics}, {sums} (1 question)"
    merged = invoke("merge", "--a", sums, "--b", sums).splitlines()
    one = "over 1 question; one question gives no interval"
    assert merged and all(line.endswith(one) for line in merged)
    converted = tmp_path / "converted.parquet"
    assert invoke("convert", log, "-o", converted).strip() == f"wrote {converted} (1 row)"
    assert invoke("validate", log).strip() == f"{log}: ok, 1 row follows the run-log contract"


def test_fmt_count_takes_an_irregular_plural():
    assert [fmt_count(n, "loss", "losses") for n in (0, 1, 2)] == ["0 losses", "1 loss", "2 losses"]
    assert [agreeing(n, "is", "are") for n in (0, 1, 2)] == ["are", "is", "are"]


def test_answers_from_memory_are_not_called_failures(tmp_path):
    """A correct answer without its evidence in the prompt is a problem of retrieval, not a
    failed answer: the dominant-class sentence says so (it read "Run A fails most often by
    answered from memory")."""
    from_memory = {"context_ids": ["p2"]}  # p1, the evidence, ranked but not sent
    logs = [
        [question(0, correct=True, **from_memory), question(1, correct=True, **from_memory)],
        [question(0, correct=True, **from_memory), question(1, correct=True)],
    ]
    text, _, _ = run(tmp_path / "memory", logs)
    assert (
        "Run A's most common problem is answered from memory (2 questions answered correctly "
        "with no labelled evidence in the prompt): the fix belongs to retrieval/corpus."
    ) in text
    assert "Run B's most common problem is answered from memory (1 question answered" in text
    assert "fails most often by answered from memory" not in text
