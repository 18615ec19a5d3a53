"""The page's sentences on legal but degenerate logs (one question, no change, every question
moved alike, identical runs): each says only what the numbers show."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from test_diag_pages import page_text

from reportgen.cli import cli
from reportgen.formatting import fmt_interval


def _logs(tmp_path, a: dict, b: dict):
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, columns in zip(paths, (a, b), strict=True):
        pd.DataFrame(columns).to_parquet(path)
    return paths


def test_one_question_has_no_interval_and_no_zero_outside_it(tmp_path, compare):
    paths = _logs(tmp_path, {"question_id": ["q1"], "correct": [False]},
                  {"question_id": ["q1"], "correct": [False]})  # fmt: skip
    compare(*paths, tmp_path / "out")
    text = page_text(tmp_path / "out" / "report.html")
    assert "One question gives no interval: every resample is its one difference." in text
    assert "lie in none" not in text and "zero is outside" not in text
    assert (
        "The only question did not change on correct between A and B. With no question changed "
        "there is no spread to tell from how many questions would find a difference." in text
    )
    assert "no larger set would settle it" not in text
    assert "B wins on 0 questions, loses on 0 and ties on 1." in text
    assert "hides the losses" not in text


def test_every_question_moved_alike_states_no_power_it_cannot_know(tmp_path, compare):
    """30 questions, faithfulness +0.25 each: the resampled detectable difference is 0, which the
    power sentence stated as 'a true difference of 0.000 would be found'."""
    ids = [f"q{i}" for i in range(30)]
    paths = _logs(tmp_path, {"question_id": ids, "faithfulness": [0.25] * 30},
                  {"question_id": ids, "faithfulness": [0.5] * 30})  # fmt: skip
    doc = compare(*paths, tmp_path / "out")
    text = page_text(tmp_path / "out" / "report.html")
    assert (
        "Every question moved by the same 0.250, so there is no spread to tell from how many "
        "questions would find a difference." in text
    )
    assert "A true difference of 0.000" not in text
    assert "B wins on 30 questions, loses on 0 and ties on 0." in text
    assert (doc["power"]["min_detectable"], doc["power"]["needed_n"]) == (None, None)


def test_identical_runs_are_not_said_to_depend_on_k(tmp_path, compare):
    rankings = [["p1", "p2", "p3", "p4"], ["p5", "p6", "p7", "p8"]]
    log = {
        "question_id": ["q1", "q2"],
        "retrieved_ids": rankings,
        "context_ids": [r[:2] for r in rankings],
        "relevant_ids": [["p3"], ["p5"]],
    }
    paths = _logs(tmp_path, log, log)
    compare(*paths, tmp_path / "out")
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Which run wins depends on k" not in page
    assert "Read each metric at the prompt" in page


def test_the_curve_says_k_is_the_scored_cutoff_where_the_prompts_hold_another_size(
    tmp_path, compare
):
    """Rankings 20 deep, prompts (context_ids) of 3, --k 10: the curve's reading said "only the
    passages up to the prompt cutoff reach the generator" and its title "Read each metric at
    the prompt's k = 10", beside a fairness check saying the prompts held 3."""
    ids = [f"q{i}" for i in range(12)]
    rankings = [[f"d{i}-{j}" for j in range(20)] for i in range(12)]
    log = {"question_id": ids, "retrieved_ids": rankings, "context_ids": [r[:3] for r in rankings],
           "relevant_ids": [[r[i % 12]] for i, r in enumerate(rankings)]}  # fmt: skip
    paths = _logs(tmp_path, log, log)
    compare(*paths, tmp_path / "out", "--k", 10)
    text = page_text(tmp_path / "out" / "report.html")
    assert (
        "Over retrieved_ids at k = 10: nDCG A 0.379, B 0.379; k is --k, while the generators "
        "received the prompts logged (context_ids), most often 3 passages."
    ) in text
    assert "reach the generator" not in text
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Read each metric at the cutoff --k scores, k = 10 (dashed)" in page
    assert "the prompt's k = 10" not in page


def _every_third(run: int) -> list[bool]:
    return [(i + run) % 3 == 0 for i in range(20)]


def _unlabelled(**extra) -> list[dict]:
    """Two logs of 20 questions that rank and prompt passages, with relevant_ids logged and
    empty on every question, correct on every third (another third in B), and ``extra``
    columns (a callable: of the run, 0 or 1)."""
    ids = [f"q{i}" for i in range(20)]
    return [
        {"question_id": ids, "retrieved_ids": [["p1", "p2", "p3"]] * 20,
         "context_ids": [["p1", "p2"]] * 20, "relevant_ids": [[]] * 20,
         "correct": _every_third(run),
         **{k: v(run) if callable(v) else v for k, v in extra.items()}}
        for run in (0, 1)
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("extra", "hint", "retrieval"),
    [
        (
            {},
            "label the evidence in relevant_ids: it is logged, but no question has any",
            "no question has labelled evidence (a label of grade > 0); label the evidence of the "
            "answerable questions",
        ),
        (
            {"answerable": [False] * 20, "abstained": _every_third},
            "add answerable questions, their evidence labelled: no question here is answerable",
            "no question is answerable, so none has evidence to locate",
        ),
    ],
    ids=["unlabelled", "every question unanswerable"],
)
def test_labels_logged_but_empty_ask_for_labels_not_for_the_column(
    tmp_path, compare, extra, hint, retrieval
):
    """relevant_ids is logged in both runs and empty on every question: every section that
    needs labelled evidence says to label it, none to log columns the logs have; where every
    question is marked unanswerable (a refusal suite) there is no evidence to label, and they
    say so (they asked to label it)."""
    compare(*_logs(tmp_path, *_unlabelled(**extra)), tmp_path / "out")
    text = page_text(tmp_path / "out" / "report.html")
    assert f"To see this table, {hint}." in text
    assert f"failure classes ({hint}); cells ({hint})" in text
    assert f"Retrieval metrics and the metric-vs-k chart: {retrieval}." in text
    for asked in ("log relevant_ids", "log retrieved_ids", "log context_ids"):
        assert asked not in text
    assert ("label the evidence" in text) == (not extra)


def test_the_bootstrap_chart_names_its_interval_rather_than_a_share_of_the_bars(tmp_path, compare):
    """20 questions: the interval is studentized (or its level expanded, or widened by the
    score bound of 15 changes all one way), so it holds more than 95% of the bars; the reading
    said '95% of resampled differences lie in [...]'."""
    ids = [f"q{i}" for i in range(20)]
    a = [0.1 * (i % 7) for i in range(20)]
    b = [min(1.0, x + 0.05 * (i % 4)) for i, x in enumerate(a)]
    paths = _logs(tmp_path, {"question_id": ids, "faithfulness": a},
                  {"question_id": ids, "faithfulness": b})  # fmt: skip
    doc = compare(*paths, tmp_path / "out", "--n-boot", 2000)
    c = doc["metrics"]["faithfulness"]
    text = page_text(tmp_path / "out" / "report.html")
    interval = fmt_interval(c["ci_low"], c["ci_high"])
    assert (
        f"The 95% interval ({c['interval']}) is {interval}; zero is "
        f"{'inside' if c['ci_low'] <= 0 <= c['ci_high'] else 'outside'} it. The bars are 2,000 "
        "resampled mean differences." in text
    )
    assert "of resampled differences lie in" not in text


def test_the_bootstrap_chart_names_student_t_without_nested_parentheses(tmp_path, compare):
    """Three questions: the studentized bootstrap is undefined and Student's t is the interval
    alone; its label carries its own parenthesis, which the chart's sentence nested."""
    ids = ["q0", "q1", "q2"]
    paths = _logs(tmp_path, {"question_id": ids, "faithfulness": [0.1, 0.5, 0.9]},
                  {"question_id": ids, "faithfulness": [0.3, 0.6, 0.6]})  # fmt: skip
    doc = compare(*paths, tmp_path / "out")
    c = doc["metrics"]["faithfulness"]
    assert c["interval"] == "Student's t (studentized bootstrap undefined)"
    text = page_text(tmp_path / "out" / "report.html")
    # differences 0.2, 0.1, -0.3: mean 0, sd sqrt(0.07), t(0.975, 2 df) 4.303 -> +-0.657
    assert (
        "The 95% interval (Student's t, as the studentized bootstrap is undefined here) is "
        "[\u22120.657, +0.657]; zero is inside it." in text
    )
    assert "(Student's t (" not in text


def test_a_candidate_that_is_the_baseline_s_own_log_is_named(tmp_path, compare):
    """The same log given twice (a path mistyped in CI) gave 'no evidence of a difference' and
    passed every no-worse rule with no word that nothing was compared; a copy of the same bytes
    is the same log (the runs of one promptfoo file are not: tests/test_input_promptfoo.py)."""
    ids = [f"q{i}" for i in range(12)]
    paths = _logs(tmp_path, {"question_id": ids, "correct": [i % 3 > 0 for i in range(12)]},
                  {"question_id": ids, "correct": [True] * 12})  # fmt: skip
    copy = tmp_path / "copy.parquet"
    copy.write_bytes(paths[0].read_bytes())
    same = compare(paths[0], copy, tmp_path / "same")
    digest = same["runs"][0]["sha256"][:12]
    assert same["warnings"][0] == (
        f"Run B is the same log as run A (sha256 {digest}, read the same way): every difference "
        "is 0 by construction; check the logs given"
    )
    other = compare(*paths, tmp_path / "other")
    assert not any("same log" in w for w in other["warnings"])


def test_a_candidate_with_the_baseline_s_outputs_in_another_file_is_named(tmp_path, compare):
    """The baseline's rows shuffled and written with another compression: 'no evidence of a
    difference' with an interval and no caveat, where merge of the same logs said "A and B are
    the same run". One answer's text changed (no metric moves) is another run."""
    rows = pd.DataFrame({
        "question_id": [f"q{i}" for i in range(12)],
        "retrieved_ids": [[f"p{i}", "x"] for i in range(12)],
        "context_ids": [[f"p{i}", "x"] for i in range(12)],
        "relevant_ids": [[f"p{i}"] for i in range(12)],
        "answer": [f"answer {i}" for i in range(12)],
        "correct": [i % 3 > 0 for i in range(12)],
    })  # fmt: skip
    a, b, c = (tmp_path / f"{n}.parquet" for n in "abc")
    rows.to_parquet(a)
    rows.sample(frac=1, random_state=1).to_parquet(b, compression="gzip")
    rows.assign(answer=["answer 0 reworded", *rows["answer"][1:]]).to_parquet(c)
    same = compare(a, b, tmp_path / "same")
    assert same["warnings"][0] == (
        "Run B's outputs are run A's on every paired question (rankings, prompts, answers and "
        "their judgements), though the logs differ as files: every difference in quality is 0 "
        "by construction; check the logs given"
    )
    other = compare(a, c, tmp_path / "other")
    assert not any("outputs are" in w for w in other["warnings"])
    tables = [tmp_path / f"{log.stem}-metrics.parquet" for log in (a, b)]
    for log, table in zip((a, b), tables, strict=True):  # the tables ragreport metrics writes
        assert CliRunner().invoke(cli, ["metrics", str(log), "-o", str(table)]).exit_code == 0
    assert compare(*tables, tmp_path / "tables")["warnings"][0] == same["warnings"][0]


def test_two_candidates_that_are_one_log_are_named(tmp_path, compare):
    """A candidate's path given twice: the two "tie for best" and the winner's curse reads a
    choice between them, with no word that they are one log."""
    ids = [f"q{i}" for i in range(12)]
    paths = _logs(tmp_path, {"question_id": ids, "correct": [i % 3 > 0 for i in range(12)]},
                  {"question_id": ids, "correct": [True] * 12})  # fmt: skip
    copy = tmp_path / "copy.parquet"
    copy.write_bytes(paths[1].read_bytes())
    doc, markdown = _study(tmp_path / "same", paths[0], paths[1], copy)
    digest = doc["runs"][1]["sha256"][:12]
    line = (
        f"Candidate copy is the same log as candidate b (sha256 {digest}, read the same way): "
        "they tie by construction; check the logs given"
    )
    assert [w for w in doc["warnings"] if "same log" in w] == [line]
    assert f"- {line}".replace("_", "\\_") in markdown
    other = tmp_path / "c.parquet"
    pd.DataFrame({"question_id": ids, "correct": [i % 2 > 0 for i in range(12)]}).to_parquet(other)
    doc, markdown = _study(tmp_path / "distinct", paths[0], paths[1], other)
    assert not any("same log" in w for w in doc["warnings"]) and "same log" not in markdown


def _study(out: Path, *logs: Path) -> tuple[dict, str]:
    """The JSON and the Markdown summary of ``compare`` on several logs (the first the
    baseline)."""
    out.mkdir()
    args = ["compare", *map(str, logs), "-o", str(out / "r.html"), "--markdown", str(out / "s.md")]
    result = CliRunner().invoke(cli, [*args, "--n-boot", "200"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads((out / "r.json").read_text()), (out / "s.md").read_text()


# B - A is 0 on 16 questions and a multiple of 0.2 on the rest: the bootstrap-t interval's lower
# bound falls on a resample whose t equals the observed one, zero up to float noise (1.4e-17),
# and the test's p is exactly 0.05
ON_THE_EDGE = [(0.2, 0.2), (0.4, 0.4), (0.0, 0.2), (0.2, 0.2), (0.2, 0.0), (0.4, 0.0), (0.0, 0.2),
               (0.4, 0.4), (0.0, 0.4), (0.0, 0.4), (0.0, 0.0), (0.2, 0.2), (0.2, 0.2), (0.2, 0.0),
               (0.4, 0.4), (0.2, 0.2), (0.0, 0.0), (0.2, 0.4), (0.0, 0.2), (0.0, 0.2), (0.2, 0.2),
               (0.2, 0.6), (0.2, 0.2), (0.2, 0.2), (0.0, 0.2), (0.0, 0.0), (0.0, 0.0), (0.0, 0.2),
               (0.2, 0.2), (0.0, 0.2)]  # fmt: skip


def test_a_bound_zero_up_to_float_noise_is_zero_in_the_verdict_and_the_gate(tmp_path):
    """It read as above zero: "B better" and a passing superiority gate (exit 0) over an
    interval printed [0.000, +0.136] with p = 0.050."""
    import json

    from click.testing import CliRunner

    from reportgen.cli import cli

    ids = [f"q{i:02d}" for i in range(len(ON_THE_EDGE))]
    paths = _logs(tmp_path, {"question_id": ids, "score": [a for a, _ in ON_THE_EDGE]},
                  {"question_id": ids, "score": [b for _, b in ON_THE_EDGE]})  # fmt: skip
    args = ["compare", *map(str, paths), "-o", str(tmp_path / "r.html"), "--metric", "score"]
    result = CliRunner().invoke(cli, [*args, "--n-boot", "1000", "--require", "score > 0"])
    assert result.exit_code == 1, result.output
    score = json.loads((tmp_path / "r.json").read_text())["comparisons"][0]["metrics"]["score"]
    assert score["ci_low"] == 0.0 and score["p"] == 0.05
    assert result.output.startswith(
        "no evidence of a difference: The 95% interval of B \u2212 A for score is "
        "[0.000, +0.136], includes zero; bootstrap-t test p = 0.050"
    )
    assert "borderline" not in result.output  # p = 0.05 does not reject at 95% either
    assert "inconclusive (counts as fail)  B  score > 0:" in result.output


def test_significance_is_one_minus_confidence_without_float_error():
    from reportgen.analysis.stats import significance

    assert 1 - 0.95 != 0.05 and significance(0.95) == 0.05 and significance(0.99) == 0.01


def test_retrieval_left_out_names_the_log_that_lacks_a_ranking(tmp_path, compare):
    """A ranks and labels, B logs answers only: the page said to log relevant_ids with
    context_ids, as if neither log had them."""
    ids = [f"q{i}" for i in range(12)]
    ranked = {"question_id": ids, "correct": [i % 2 > 0 for i in range(12)],
              "relevant_ids": [[f"p{i}"] for i in range(12)],
              "context_ids": [[f"p{i}", "x"] for i in range(12)]}  # fmt: skip
    answers = {"question_id": ids, "correct": [i % 3 > 0 for i in range(12)]}
    paths = _logs(tmp_path, ranked, answers)
    compare(*paths, tmp_path / "out")
    text = page_text(tmp_path / "out" / "report.html")
    assert (
        "Retrieval metrics: they need a ranking (retrieved_ids or context_ids), which "
        f"{paths[1]} does not log ({paths[0]} does)." in text
    )
    paths = _logs(tmp_path, answers, answers)  # neither ranks: the columns that would enable it
    compare(*paths, tmp_path / "both")
    text = page_text(tmp_path / "both" / "report.html")
    assert "Retrieval metrics: log relevant_ids with context_ids (or retrieved_ids" in text


def test_the_advice_asks_only_for_the_columns_both_logs_lack(tmp_path, compare):
    """Logs that rank (retrieved_ids, context_ids) but label nothing were asked to "log
    relevant_ids with context_ids (or retrieved_ids and pass --k)" and, for the metric-vs-k
    chart, to "log retrieved_ids and relevant_ids": columns they have. Logs that label but
    send no prompt are asked for the prompt."""
    ids = [f"q{i}" for i in range(12)]
    correct = [i % 2 > 0 for i in range(12)]
    ranked = {"question_id": ids, "correct": correct,
              "retrieved_ids": [[f"p{i}", "x", "y"] for i in range(12)],
              "context_ids": [[f"p{i}", "x"] for i in range(12)]}  # fmt: skip
    compare(*_logs(tmp_path, ranked, ranked), tmp_path / "out")
    text = page_text(tmp_path / "out" / "report.html")
    assert "Retrieval metrics: log relevant_ids." in text
    assert "Metric-vs-k chart: log relevant_ids." in text
    assert "To see this table, log relevant_ids." in text
    assert "with context_ids" not in text and "log retrieved_ids" not in text
    labelled = {"question_id": ids, "correct": correct, "relevant_ids": [["p1"]] * 12}
    (tmp_path / "l").mkdir()
    compare(*_logs(tmp_path / "l", labelled, labelled), tmp_path / "out2")
    text = page_text(tmp_path / "out2" / "report.html")
    assert "Retrieval metrics: log context_ids (or retrieved_ids and pass --k)." in text
    assert "Metric-vs-k chart: log retrieved_ids." in text


def test_a_metric_one_log_lacks_is_named_and_asked_of_that_log(tmp_path, compare):
    """B logs no correct: the verdict fell on nDCG with no warning, and the page said "log
    correct" as if A did not log it; likewise faithfulness and latency, and a ranking."""
    ids = [f"q{i}" for i in range(12)]
    full = {"question_id": ids, "correct": [i % 2 > 0 for i in range(12)],
            "faithfulness": [i / 12 for i in range(12)],
            "latency_ms": [100.0 + i for i in range(12)],
            "relevant_ids": [[f"p{i}"] for i in range(12)],
            "context_ids": [[f"p{i}", "x"] for i in range(12)]}  # fmt: skip
    lean = {"question_id": ids, "correct": [i % 3 > 0 for i in range(12)],
            "relevant_ids": full["relevant_ids"]}  # fmt: skip
    paths = _logs(tmp_path, full, lean)
    doc = compare(*paths, tmp_path / "out")
    a, b = paths
    assert doc["comparisons"][0]["warnings"][:3] == [
        "Retrieval metrics are not compared: they need a ranking (retrieved_ids or "
        f"context_ids), which {b} does not log ({a} does)",
        f"faithfulness is not compared: {b} does not log faithfulness ({a} does); log it in "
        "both runs",
        f"latency_ms is not compared: {b} does not log latency_ms ({a} does); log it in both runs",
    ]
    text = page_text(tmp_path / "out" / "report.html")  # "log cited_ids and context_ids in b"
    assert f"context utilization (log cited_ids in both logs and context_ids in {b});" in text
    pd.DataFrame({k: v for k, v in full.items() if k != "correct"}).to_parquet(b)
    doc = compare(a, b, tmp_path / "no-correct")
    assert doc["comparisons"][0]["warnings"][0] == (
        f"correct is not compared: {b} does not log correct ({a} does); log it in both runs"
    )
    text = page_text(tmp_path / "no-correct" / "report.html")
    assert f"Not scored: correct (log correct in {b});" in text
    assert "(log correct)" not in text


@pytest.mark.parametrize(
    ("n", "fixed", "broken", "shown"), [(200, 42, 25, "0.0498"), (100, 22, 10, "0.0501")]
)
def test_a_p_near_the_bar_shows_its_side(tmp_path, n, fixed, broken, shown):
    """McNemar's p of 0.0498 and of 0.0501 both read "p = 0.050", beside "B better" and a
    passing gate in one case, "borderline" and a failing gate in the other: the verdict and the
    metric tables now give a p beside the bar the digits that keep it on its side, as the
    slices' adjusted p already did."""
    a = [i >= fixed and i < fixed + broken + 40 for i in range(n)]
    b = [i < fixed or fixed + broken <= i < fixed + broken + 40 for i in range(n)]
    ids = [f"q{i}" for i in range(n)]
    paths = _logs(tmp_path, {"question_id": ids, "correct": a}, {"question_id": ids, "correct": b})
    md = tmp_path / "s.md"
    args = ["compare", *map(str, paths), "-o", str(tmp_path / "r.html"), "--markdown", str(md)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "r.json").read_text())["comparisons"][0]
    assert (doc["metrics"]["correct"]["fixed"], doc["metrics"]["correct"]["broken"]) == (
        fixed,
        broken,
    )
    assert f"McNemar exact test p = {shown} (fixed {fixed}, broken {broken}," in result.output
    row = next(line for line in md.read_text().splitlines() if line.startswith("| **correct"))
    assert row.endswith(f"| {shown} |")
    page = (tmp_path / "r.html").read_text()
    assert f"<td>{shown}</td>" in page
