"""Repeated answers: several rows per question with a sample (or epoch) column."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import two_run_view
from test_diag_pages import page_text

from reportgen.analysis.samples import spread
from reportgen.cli import cli

# Hand-worked logs: three questions, three samples of q1 and q2 and two of q3 in each run.
# Every sample's evidence p1 is in its prompt or not, so hit is 0/1 per sample.
A = {
    "q1": [(True, 1.0, ["p1"]), (False, 0.5, ["p9"]), (True, 0.6, ["p1"])],
    "q2": [(False, 0.2, ["p9"]), (False, 0.4, ["p9"]), (False, 0.3, ["p9"])],
    "q3": [(True, 0.9, ["p1"]), (True, 0.7, ["p1"])],
}
B = {
    "q1": [(True, 1.0, ["p1"]), (True, 1.0, ["p1"]), (True, 0.7, ["p1"])],
    "q2": [(True, 0.5, ["p1"]), (False, 0.5, ["p9"]), (True, 0.8, ["p1"])],
    "q3": [(False, 0.6, ["p9"]), (True, 0.6, ["p1"])],
}


def _frame(answers: dict, column: str = "sample") -> pd.DataFrame:
    rows = [
        {
            "question_id": q,
            column: s,
            "slice": "s1" if q != "q3" else "s2",
            "relevant_ids": ["p1"],
            "context_ids": context,
            "correct": correct,
            "faithfulness": faithful,
        }
        for q, samples in answers.items()
        for s, (correct, faithful, context) in enumerate(samples)
    ]
    return pd.DataFrame(rows)


def _compare(tmp_path: Path, a: pd.DataFrame, b: pd.DataFrame, *options: str):
    a.to_parquet(tmp_path / "a.parquet")
    b.to_parquet(tmp_path / "b.parquet")
    html, out = tmp_path / "r.html", tmp_path / "r.json"
    args = ["compare", str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), "-o", str(html)]
    result = CliRunner().invoke(cli, [*args, "--n-boot", "200", *options])
    return result, (two_run_view(json.loads(out.read_text())) if out.exists() else None), html


def _mean_of_means(answers: dict, i: int) -> float:
    return float(np.mean([np.mean([float(s[i]) for s in v]) for v in answers.values()]))


def test_scores_are_averaged_within_a_question_before_pairing(tmp_path):
    result, report, _ = _compare(tmp_path, _frame(A), _frame(B))
    assert result.exit_code == 0, result.output
    m = report["metrics"]
    assert m["correct"]["a"] == pytest.approx(5 / 9)  # (2/3 + 0 + 1) / 3
    assert m["correct"]["b"] == pytest.approx(13 / 18)  # (1 + 2/3 + 1/2) / 3
    assert m["faithfulness"]["a"] == pytest.approx(0.6)  # (0.7 + 0.3 + 0.8) / 3
    assert m["faithfulness"]["b"] == pytest.approx((0.9 + 0.6 + 0.6) / 3)
    assert m["hit@1"]["a"] == pytest.approx(5 / 9)  # the same samples put p1 in the prompt
    assert m["correct"]["n"] == 3 and report["n_paired"] == 3
    # shares are continuous: q1 and q2 went up, q3 down; no fixed / broken count
    assert (m["correct"]["wins"], m["correct"]["losses"]) == (2, 1)
    assert m["correct"]["fixed"] is None and m["correct"]["broken"] is None
    # the continuous test under 1,000 questions; on 3, where the studentized interval is
    # undefined, Student's t test, which inverts the interval (t's alone)
    assert m["correct"]["test"] == "Student's t"


def test_decomposition_matches_the_hand_worked_numbers(tmp_path):
    _, report, html = _compare(tmp_path, _frame(A), _frame(B))
    faith = report["samples"]["faithfulness"]["A"]
    # sample variances 0.07, 0.01, 0.02; mean 1/m = (1/3 + 1/3 + 1/2) / 3 = 7/18
    noise = (0.07 + 0.01 + 0.02) / 3 * 7 / 18
    assert faith["within"] == pytest.approx(noise)
    assert faith["between"] == pytest.approx(0.07 - noise)  # variance of 0.7, 0.3, 0.8
    assert faith["within_share"] == pytest.approx(noise / 0.07)
    assert faith["samples"] == pytest.approx(18 / 7)
    assert faith["samples_to_halve"] == 6  # 18/7 (2 - s) / (1 - s) = 5.73 for s = 0.185
    assert "How much of the spread is sampling noise?" in html.read_text()


def _numpy_spread(a: pd.DataFrame, b: pd.DataFrame, column: str) -> dict[str, float]:
    """The decomposition of B - A from the raw rows, with numpy alone."""
    noise = 0.0
    means = []
    for frame in (a, b):
        groups = [g[column].to_numpy(dtype=float) for _, g in frame.groupby("question_id")]
        variances = [np.var(g, ddof=1) for g in groups if len(g) > 1]
        noise += np.mean(variances) * np.mean([1 / len(g) for g in groups])
        means.append(np.array([g.mean() for g in groups]))
    total = np.var(means[1] - means[0], ddof=1)
    return {"within": noise, "between": max(total - noise, 0), "share": noise / max(total, noise)}


@pytest.mark.parametrize("metric", ["correct", "faithfulness"])
def test_difference_decomposition_matches_numpy(tmp_path, metric):
    _, report, _ = _compare(tmp_path, _frame(A), _frame(B))
    got = report["samples"][metric]["B - A"]
    want = _numpy_spread(_frame(A), _frame(B), metric)
    assert got["within"] == pytest.approx(want["within"])
    assert got["between"] == pytest.approx(want["between"])
    assert got["within_share"] == pytest.approx(want["share"])


def test_epoch_is_another_name_of_sample(tmp_path):
    _, by_sample, _ = _compare(tmp_path, _frame(A), _frame(B))
    _, by_epoch, _ = _compare(tmp_path, _frame(A, "epoch"), _frame(B, "epoch"))
    assert by_epoch["metrics"] == by_sample["metrics"]
    assert by_epoch["samples"] == by_sample["samples"]


def test_sample_in_one_run_only(tmp_path):
    """A single answer per question in A, several in B: B's are averaged, A's taken as they
    are; A's noise cannot be measured, so neither can the difference's."""
    single = _frame({q: v[:1] for q, v in A.items()}).drop(columns="sample")
    result, report, _ = _compare(tmp_path, single, _frame(B))
    assert result.exit_code == 0, result.output
    assert report["metrics"]["correct"]["a"] == pytest.approx(2 / 3)  # q1, q3 right first time
    assert report["metrics"]["correct"]["b"] == pytest.approx(_mean_of_means(B, 0))
    assert report["samples"]["correct"]["A"]["within"] is None
    assert report["samples"]["correct"]["B"]["within"] is not None
    assert report["samples"]["correct"]["B - A"]["within_share"] is None


def test_labels_that_differ_between_samples_are_refused_naming_the_row(tmp_path):
    a = _frame(A)
    a.at[4, "relevant_ids"] = ["p2"]  # q2's second sample
    result, _, html = _compare(tmp_path, a, _frame(B))
    assert result.exit_code == 2
    line = result.output.strip().splitlines()[-1]
    assert "a.parquet" in line and "row 5" in line and "'q2'" in line
    assert "relevant_ids" in line and "row 4" in line
    assert not html.exists()


def test_a_repeated_sample_is_a_duplicate(tmp_path):
    a = _frame(A)
    a.at[1, "sample"] = 0  # q1 sample 0 twice
    result, _, _ = _compare(tmp_path, a, _frame(B))
    assert result.exit_code == 2
    assert "'q1' with sample 0 appears in rows 1 and 2" in result.output  # the pair repeats


def test_repeats_in_a_sample_column_that_names_none_are_duplicates(tmp_path):
    """A sample column every row leaves null names no sample: its repeated ids are duplicates,
    the rows without a sample being one group (not a null matching nothing)."""
    a = _frame(A).astype({"sample": object})
    a["sample"] = None
    result, _, html = _compare(tmp_path, a, _frame(B))
    assert result.exit_code == 2 and not html.exists()
    assert result.stderr == (
        f"ragreport: error: {tmp_path / 'a.parquet'}: question_id 'q1' appears in rows 1 and 2; "
        "each question must appear once per run (once per sample with a sample column)\n"
    )


@pytest.mark.parametrize("column", ["sample", "epoch"])
@pytest.mark.parametrize("unnamed", [None, " "])
def test_a_row_without_a_sample_beside_named_ones_is_refused(tmp_path, column, unnamed):
    """It was read as a sample named '' of its question, beside the named ones."""
    b = _frame(B, column).astype({column: str if unnamed else object})
    b.at[4, column] = unnamed  # q2's second sample
    result, _, html = _compare(tmp_path, _frame(A, column), b)
    assert result.exit_code == 2 and not html.exists()
    assert result.output.strip().splitlines()[-1] == (
        f"ragreport: error: {tmp_path / 'b.parquet'}: row 5 (question_id 'q2'): {column} is null "
        "or blank while other rows name theirs; name the sample of every row (one row per "
        "question and sample)"
    )


def test_a_sample_column_of_nulls_only_is_no_samples(tmp_path):
    _, expected, _ = _compare(
        tmp_path,
        _frame({q: v[:1] for q, v in A.items()}).drop(columns="sample"),
        _frame({q: v[:1] for q, v in B.items()}).drop(columns="sample"),
    )
    nulls = [_frame({q: v[:1] for q, v in r.items()}).assign(sample=None) for r in (A, B)]
    result, report, _ = _compare(tmp_path, *nulls)
    assert result.exit_code == 0, result.output
    assert report["metrics"] == expected["metrics"] and report["samples"] is None


def test_sample_and_epoch_together_are_refused(tmp_path):
    a = _frame(A).assign(epoch=0)
    result, _, _ = _compare(tmp_path, a, _frame(B))
    assert result.exit_code == 2
    assert "both sample and epoch" in result.output


def _simulate(rng, n: int, m: int, between: float, within: float) -> pd.DataFrame:
    mu = rng.normal(0.5, math.sqrt(between), n)
    values = mu[:, None] + rng.normal(0, math.sqrt(within), (n, m))
    q = np.repeat(np.arange(n), m)
    return pd.DataFrame(
        {
            "run": "a",
            "question_id": q.astype(str),
            "metric": "faithfulness",
            "value": values.ravel(),
        }
    )


def _summarise(frame: pd.DataFrame) -> pd.DataFrame:
    return (
        frame.groupby(["run", "question_id", "metric"])["value"]
        .agg(n="count", mean="mean", variance="var")
        .reset_index()
    )


def test_decomposition_recovers_known_variances():
    """Questions with between-question variance 0.04 and within-question variance 0.09, four
    samples each, in both runs: within is 0.09 / 4 per run, between 0.04, and the difference's
    noise is the sum of both runs'."""
    rng = np.random.default_rng(7)
    n, m, between, within = 4000, 4, 0.04, 0.09
    a = _simulate(rng, n, m, between, within)
    b = _simulate(rng, n, m, between, within).assign(run="b")
    got = {s.run: s for s in spread(_summarise(pd.concat([a, b])), ("faithfulness",))}
    assert got["A"].within == pytest.approx(within / m, rel=0.05)
    assert got["A"].between == pytest.approx(between, rel=0.1)
    assert got["B - A"].within == pytest.approx(2 * within / m, rel=0.05)
    assert got["B - A"].between == pytest.approx(2 * between, rel=0.1)
    share = (within / m) / (between + within / m)
    assert got["A"].within_share == pytest.approx(share, rel=0.1)
    # with the samples the formula names, the share measured again is half
    halve = got["A"].samples_to_halve
    assert halve is not None
    again = spread(
        _summarise(pd.concat([_simulate(rng, n, halve, between, within), b])), ("faithfulness",)
    )[0]
    assert again.within_share == pytest.approx(share / 2, rel=0.15)


def test_samples_of_one_question_are_one_question_elsewhere(tmp_path):
    """Samples share the question's text (no duplicate-question smell), and a question of one
    run only is listed once, not once per sample."""
    a = _frame(A).assign(question=lambda f: "What about " + f["question_id"] + "?")
    extra = _frame({"q4": B["q1"]})
    b = pd.concat([_frame(B), extra]).assign(question=lambda f: "What about " + f["question_id"])
    result, report, _ = _compare(tmp_path, a, b)
    assert result.exit_code == 0, result.output
    missing = report["report"]["missing"]  # run label -> the ids it lacks
    assert missing.get("A") == ["q4"] and not missing.get("B")
    assert "duplicate_question" not in report["audit"]["smells"]
    assert report["n_paired"] == 3


def test_samples_per_question_of_a_uniform_log_is_exactly_its_count():
    """30 questions of 3 samples each, 1 in run B: 3 and 1 per question, and 1.5 for B - A (the
    harmonic mean), as written in the JSON; summing thirty 1/3 wrote 2.999999999999999."""
    rng = np.random.default_rng(3)
    a = _simulate(rng, 30, 3, 0.04, 0.09)
    b = _simulate(rng, 30, 1, 0.04, 0.09).assign(run="b")
    got = {s.run: s.samples for s in spread(_summarise(pd.concat([a, b])), ("faithfulness",))}
    assert got == {"A": 3.0, "B": 1.0, "B - A": 1.5}


def test_a_slice_column_of_the_log_s_own_must_agree_across_samples(tmp_path):
    """--slice difficulty where q2's samples say "easy" and "hard": refused in one line naming
    the log, the column and the question (the slices placed it by whichever row came first).
    Agreeing samples are compared; without a sample column the repeat is a duplicate id."""
    a, b = _frame(A), _frame(B)
    a["difficulty"] = b["difficulty"] = a["question_id"].map({"q1": "easy", "q2": "easy"})
    agreeing, doc, html = _compare(tmp_path, a, b, "--slice", "difficulty")
    assert agreeing.exit_code == 0, agreeing.output
    assert list(doc["slices"]["difficulty"]) == ["(none)", "easy"]
    html.unlink()
    b.loc[(b.question_id == "q2") & (b["sample"] == 1), "difficulty"] = "hard"
    result, _, _ = _compare(tmp_path, a, b, "--slice", "difficulty")
    assert result.exit_code == 2 and not html.exists()
    assert result.stderr == (
        f"ragreport: error: {tmp_path / 'b.parquet'}: column 'difficulty' (asked for "
        "by --slice) has more than one value for question 'q2'; a question's samples share its "
        "slice: give each question one value\n"
    )
    unsampled = b.drop(columns="sample")
    result, _, _ = _compare(tmp_path, a.drop(columns="sample"), unsampled, "--slice", "difficulty")
    assert result.exit_code == 2 and "appears in rows 1 and 2; each question must" in result.stderr


@pytest.mark.parametrize(
    "ids",
    [("s1", "s2"), (2, 10), ("2", "10")],
    ids=["text", "integers", "whole numbers as text"],
)
@pytest.mark.parametrize("written", ["in order", "reversed"])
def test_the_first_sample_by_its_id_stands_for_the_question(tmp_path, ids, written):
    """The single-answer sections read each question's first sample by its id (numbers as
    numbers: 2 before 10), whatever the row order. B's q1: the first sample is wrong with its
    evidence missed, the second right; q2 and q3 right, one sample each. A is right on all."""
    first, second = ids
    a = pd.DataFrame(
        {
            "question_id": ["q1", "q2", "q3"],
            "relevant_ids": [["p1"]] * 3,
            "context_ids": [["p1"]] * 3,
            "correct": True,
        }
    )
    b = pd.DataFrame(
        {
            "question_id": ["q1", "q1", "q2", "q3"],
            "sample": [first, second, first, first],
            "relevant_ids": [["p1"]] * 4,
            "context_ids": [["p9"], ["p1"], ["p1"], ["p1"]],
            "correct": [False, True, True, True],
            "answer": ["the first answer", "the second answer", "ok", "ok"],
        }
    )
    if written == "reversed":
        b = b.iloc[::-1].reset_index(drop=True)
    result, report, html = _compare(tmp_path, a, b)
    assert result.exit_code in (0, 1), result.output
    end_to_end = next(s for s in report["stages"] if s["stage"] == "end-to-end")
    assert end_to_end["b"]["mean"] == pytest.approx(2 / 3)  # q1's first sample is wrong
    assert report["cells"]["b"]["working_as_designed"] == 2
    assert report["cells"]["b"]["retrieval_failure"] == 1  # q1: evidence missed, wrong
    assert report["broken"] == ["q1"]
    cases = page_text(html)
    cases = cases[cases.index("Broken by B") :]
    assert "the first answer" in cases and "the second answer" not in cases


def _compare_tables(tmp_path: Path, a: pd.DataFrame, b: pd.DataFrame):
    """``_compare`` of the tables ``ragreport metrics`` writes of each log, in place of the logs."""
    tables = []
    for name, log in (("a", a), ("b", b)):
        log.to_parquet(tmp_path / f"{name}-log.parquet")
        tables.append(str(tmp_path / f"{name}-metrics.parquet"))
        made = CliRunner().invoke(
            cli, ["metrics", str(tmp_path / f"{name}-log.parquet"), "-o", tables[-1]]
        )
        assert made.exit_code == 0, made.output
    html, out = tmp_path / "r.html", tmp_path / "r.json"
    result = CliRunner().invoke(cli, ["compare", *tables, "-o", str(html), "--n-boot", "200"])
    return result, (two_run_view(json.loads(out.read_text())) if out.exists() else None), html


@pytest.mark.parametrize("source", ["logs", "tables"])
def test_the_prompt_size_is_the_most_common_over_every_sample_s_prompt(tmp_path, source):
    """A answers q1 to q3 three times, twice with a prompt of 2 passages and once of 1; B once
    each, with 2: 9 of the 12 prompts hold 2 passages, so the metrics are named @2, and A's
    prompt most often holds 2 (the smallest of each question's prompts named them @1, and A's
    mean of 5/3 passages a question read as 1)."""
    prompts = {"s1": ["p1", "p2"], "s2": ["p1", "p2"], "s3": ["p1"]}
    a = pd.DataFrame(
        [
            {"question_id": q, "sample": s, "relevant_ids": ["p1"], "context_ids": c}
            for q in ("q1", "q2", "q3")
            for s, c in prompts.items()
        ]
    )
    b = pd.DataFrame({"question_id": ["q1", "q2", "q3"], "relevant_ids": [["p1"]] * 3}).assign(
        context_ids=[["p1", "p2"]] * 3
    )
    result, report, _ = (_compare_tables if source == "tables" else _compare)(tmp_path, a, b)
    assert result.exit_code == 0, result.output
    assert list(report["metrics"])[:2] == ["recall@2", "precision@2"]
    assert report["fairness"]["prompt k"]["text"] == (
        "Passages in the prompt, most often: A 2, B 2; they differ on 3 of 3 questions. "
        "Retrieval metrics then compare different cutoffs: each run's are scored on its "
        "own prompts, whatever the @2 in their names."
    )
    assert report["fairness"]["prompt k"]["numbers"]["a"] == 2


@pytest.mark.parametrize("source", ["logs", "tables"])
def test_samples_without_a_prompt_are_named_in_a_warning(tmp_path, source):
    """B's q1 sample 1 and q2 samples 0 and 2 log no context_ids: each question's retrieval
    metrics are the mean over its other samples (hit@1: q1 1, q2 0 from its sample 1, q3 1/2),
    and the warning names them, as a question whose prompt is null is named."""
    b = _frame(B)
    for row in (1, 3, 5):  # q1's sample 1, q2's samples 0 and 2
        b.at[row, "context_ids"] = None
    result, report, _ = (_compare_tables if source == "tables" else _compare)(
        tmp_path, _frame(A), b
    )
    assert result.exit_code == 0, result.output
    assert report["metrics"]["hit@1"]["b"] == pytest.approx(0.5)
    assert (
        "3 samples of 2 paired questions in run B have context_ids null while other samples of "
        "those questions log it (q1: sample 1; q2: samples 0, 2), so they are left out of their "
        "questions' retrieval metrics, which are the means over the other samples; log "
        "context_ids for every sample (an empty list when there was none)"
    ) in report["warnings"]


def test_samples_without_an_answer_score_are_named_in_a_warning(tmp_path):
    """B's judge left correct null on q1's sample 1 and q2's samples 0 and 2, and faithfulness
    and a score column on q3's sample 0: each question's score is the mean over its other
    samples (correct: q1 2 of 2 true, q2 its sample 1 false, q3 1 of 2; faithfulness: q1 0.9,
    q2 0.6, q3 0.6 from its sample 1), and a warning names them, metrics that leave out the
    same samples sharing one."""
    b = _frame(B).assign(judge=[0.5, 1.0, 0.0, 1.0, 0.5, 1.0, 0.25, 0.75])
    b["correct"] = b["correct"].astype(object)
    for row in (1, 3, 5):  # q1's sample 1, q2's samples 0 and 2
        b.at[row, "correct"] = None
    b.at[6, "faithfulness"] = None  # q3's sample 0
    b.at[6, "judge"] = None
    a = _frame(A).assign(judge=0.5)
    result, report, _ = _compare(tmp_path, a, b, "--metric", "judge")
    assert result.exit_code == 0, result.output
    assert report["metrics"]["correct"]["b"] == pytest.approx((1 + 0 + 1 / 2) / 3)
    assert report["metrics"]["faithfulness"]["b"] == pytest.approx((0.9 + 0.6 + 0.6) / 3)
    assert report["metrics"]["judge"]["b"] == pytest.approx((0.5 + 2.5 / 3 + 0.75) / 3)
    assert (
        "correct has no value on 3 samples of 2 paired questions in run B while other samples "
        "of those questions have one (q1: 1 of 3; q2: 2 of 3 samples), so each of those "
        "questions' correct is the mean over its other samples; log correct for every sample"
    ) in report["warnings"]
    assert (
        "faithfulness and judge have no value on 1 sample of 1 paired question in run B while "
        "other samples of the question have one (q3: 1 of 2 samples), so the question's "
        "faithfulness and judge are the means over its other samples; log faithfulness and "
        "judge for every sample"
    ) in report["warnings"]
    assert not [w for w in report["warnings"] if "run A while" in w]


def test_ceilings_of_samples_read_each_sample_s_prompt(tmp_path):
    """Two relevant passages; A answers each question twice, with a prompt of 1 passage and one
    of 3. Its precision is the mean of the samples', at most (1 + 2/3) / 2 = 5/6, and its recall
    at most (1/2 + 1) / 2 = 3/4: the smallest prompt alone gave ceilings of 1 and 1/2. B's
    prompts of 2 can reach 1 on both."""
    rows = [
        {"question_id": f"q{i}", "sample": s, "relevant_ids": ["p1", "p2"], "context_ids": c}
        for i in range(4)
        for s, c in enumerate([["p1"], ["p1", "p2", "x"]])
    ]
    b = pd.DataFrame(
        {"question_id": [f"q{i}" for i in range(4)], "relevant_ids": [["p1", "p2"]] * 4}
    ).assign(context_ids=[["p1", "x"]] * 4)
    result, report, _ = _compare(tmp_path, pd.DataFrame(rows), b)
    assert result.exit_code == 0, result.output
    fairness = report["fairness"]
    precision = fairness["precision ceiling"]["numbers"]
    recall = fairness["recall ceiling"]["numbers"]
    assert (precision["a"], precision["b"]) == (pytest.approx(5 / 6), 1.0)
    assert (recall["a"], recall["b"]) == (pytest.approx(3 / 4), 1.0)
    assert "a median of 2 slots" in fairness["recall ceiling"]["text"]


@pytest.mark.parametrize("column", ["sample", "epoch"])
def test_one_sample_per_question_is_scored_as_without_the_column(tmp_path, column):
    """inspect-ai writes epoch 1 on every row of a single epoch: nothing is averaged, so correct
    stays a 0/1 outcome. Of 20 questions B fixes q1, q3, q5 and q7 and breaks none: McNemar's
    exact p = 2 x 0.5^4 = 0.125 (the bootstrap-t test of shares gave 0.042), and there is no
    sampling noise to show."""
    a = pd.DataFrame({"question_id": [f"q{i}" for i in range(20)]})
    a["correct"] = [i % 2 == 0 for i in range(20)]
    b = a.assign(correct=[i % 2 == 0 or i < 8 for i in range(20)])
    _, plain, _ = _compare(tmp_path, a, b)
    result, report, html = _compare(tmp_path, a.assign(**{column: 1}), b.assign(**{column: 1}))
    assert result.exit_code == 0, result.output
    correct = report["metrics"]["correct"]
    assert (correct["test"], correct["p"]) == ("McNemar exact", pytest.approx(0.125))
    assert (correct["fixed"], correct["broken"]) == (4, 0)
    assert report["metrics"] == plain["metrics"] and report["samples"] is None
    assert "How much of the spread is sampling noise?" not in html.read_text()


def _score_logs() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A scores 0 once a question; B twice, 0.05 either side of d: each question's samples vary
    by 0.005 (0.05^2 x 2 / 1), and their means d by 0.04 (squares 0.28 about 0.2, over 7)."""
    d = [0.5, 0.3, -0.1, 0.1, 0.2, 0.2, 0.0, 0.4]
    ids = [f"q{i + 1}" for i in range(8)]
    a = pd.DataFrame({"question_id": ids, "score": 0.0, "correct": True})
    b = pd.DataFrame(
        [
            {"question_id": q, "sample": s, "score": x + e, "correct": s == "s1"}
            for q, x in zip(ids, d, strict=True)
            for s, e in (("s1", 0.05), ("s2", -0.05))
        ]
    )
    return a, b


@pytest.mark.parametrize("only", [True, False])
def test_score_columns_have_their_sampling_noise(tmp_path, only):
    """B's within = 0.005 / 2 samples = 0.0025, between = 0.04 - 0.0025 = 0.0375, share 1/16;
    halving it takes 2 (2 - 1/16) / (1 - 1/16) = 4.13, so 5 samples. A, answered once, has no
    noise to measure, nor has B - A. With --metric score alone the section was missing."""
    a, b = _score_logs()
    if only:
        a, b = a.drop(columns="correct"), b.drop(columns="correct")
    result, report, html = _compare(tmp_path, a, b, "--metric", "score")
    assert result.exit_code == 0, result.output
    assert list(report["samples"]) == (["score"] if only else ["correct", "score"])
    score = report["samples"]["score"]
    assert score["B"]["samples"] == 2 and score["B"]["samples_to_halve"] == 5
    assert (score["B"]["within"], score["B"]["between"], score["B"]["within_share"]) == (
        pytest.approx(0.0025),
        pytest.approx(0.0375),
        pytest.approx(0.0625),
    )
    assert score["A"]["within"] is None and score["B - A"]["within_share"] is None
    page = html.read_text()
    assert page.index("How much of the spread is sampling noise?") < page.index("0.0375")


def _latency_logs() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Eight questions answered twice. A: latency 100 and 100, correct false then true; B: 50
    then 250, correct both times. Over the samples latency is A 100, B 150 (+50, +50%) and
    correct 0.5 against 1 (+50 points); B's first samples alone read 50 (-50%), +100 points."""
    ids = [f"q{i}" for i in range(8)]
    a = pd.DataFrame(
        [
            {"question_id": q, "sample": s, "correct": s == "2", "latency_ms": 100.0}
            for q in ids
            for s in ("1", "2")
        ]
    )
    b = a.assign(correct=True, latency_ms=[50.0, 250.0] * 8)
    return a, b


@pytest.mark.parametrize("options", [(), ("--lower-is-better", "latency_ms")])
def test_a_cost_of_repeated_answers_is_its_mean_everywhere(tmp_path, options):
    """The gate and the metric table read latency's means over samples, while the cost section,
    its sentence and the Markdown's row read B's first samples (50, -50%, +100 points on
    correct): every one now reads the means, with or without --lower-is-better."""
    md = tmp_path / "r.md"
    a, b = _latency_logs()
    result, report, html = _compare(tmp_path, a, b, *options, "--markdown", str(md))
    assert result.exit_code == 0, result.output
    for section in (report["metrics"]["latency_ms"], report["cost"]["latency_ms"]):
        assert (section["a"], section["b"], section["diff"]) == (100.0, 150.0, 50.0)
    assert report["cost"]["latency_ms"]["relative_pct"] == pytest.approx(50.0)
    assert report["summary"] == "B is +50.0 points on correct at +50% latency."
    (row,) = [line for line in md.read_text().splitlines() if line.startswith("| latency")]
    assert row.split(" | ")[1:5] == ["100.0", "150.0", "+50.0", "[+50.0, +50.0]"]
    assert "B is +50.0 points on correct at +50% latency." in page_text(html)


def test_the_links_say_they_read_each_question_s_first_sample(tmp_path):
    """The stage table scores each question's first answer (A's correct false: 0 of 8), not the
    means of the metric table (0.5): the page said so only in its glossary, far below; it says
    so above the table."""
    a, b = _latency_logs()
    result, report, html = _compare(tmp_path, a, b)
    assert result.exit_code == 0, result.output
    (correct,) = [s for s in report["stages"] if s["metric"] == "correct"]
    assert correct["a"]["mean"] == 0.0
    section = page_text(html).split("Which link failed")[1].split("What it costs")[0]
    assert "each question's first sample" in section


@pytest.mark.parametrize("repeating", [0, 2])
def test_a_passage_repeated_in_any_sample_s_prompt_is_a_data_smell(tmp_path, repeating):
    """The smell read the first sample of each question only: a repeat in q2's third sample,
    scored in its mean, was not listed, and listed when the same prompt was its first."""
    b = _frame(B)
    b.at[int(b.index[(b.question_id == "q2")][repeating]), "context_ids"] = ["p1", "p1"]
    result, doc, _ = _compare(tmp_path, _frame(A), b)
    assert result.exit_code == 0, result.output
    smell = doc["audit"]["smells"]["repeated_passage"]
    assert smell["counts"] == {"a": 0, "b": 1} and smell["examples"] == ["q2"]
