"""Several runs: one baseline against each candidate, end to end.

Pairing on the questions every run has, labels and --baseline, Bonferroni's adjustment over the
candidates (against a hand computation), simultaneous intervals (their level, and their
family-wise coverage by simulation), the winner's curse, gates and summaries with several
candidates, and the packaged JSON Schema.
"""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator
from markdown_it import MarkdownIt
from scipy import integrate, stats

from reportgen.analysis import holdout
from reportgen.analysis import stats as stats_module
from reportgen.analysis.metrics import Options
from reportgen.analysis.stats import compare_metric
from reportgen.cli import cli
from reportgen.comparison.compare import run_comparison
from reportgen.comparison.study import chance_gain, family_level, run_study
from reportgen.errors import InputError
from reportgen.inputs.database import RunDatabase
from reportgen.reporters import json_report

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
A = SAMPLE / "fare_rules_a_baseline.parquet"
B = SAMPLE / "fare_rules_b_reranker.parquet"
C = SAMPLE / "fare_rules_c_prompt.parquet"
FAST = ("--n-boot", "300")


def invoke(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.output


def compare_runs(out: Path, *logs: object, options: tuple[object, ...] = FAST) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    code, output = invoke("compare", *logs, "-o", out / "r.html", *options)
    assert code == 0, output
    return json.loads((out / "r.json").read_text())


def rows(ids: list[str], correct: list[bool]) -> list[dict]:
    return [
        {
            "question_id": q,
            "retrieved_ids": ["p1", "p2", "p3"],
            "context_ids": ["p1", "p2"],
            "relevant_ids": ["p1"] if ok else ["p9"],
            "correct": ok,
        }
        for q, ok in zip(ids, correct, strict=True)
    ]


@pytest.fixture(scope="module")
def three(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("three")
    return out, compare_runs(out, A, B, C, options=("--n-boot", "1000", "--markdown", out / "r.md"))


# --- pairing and labels -------------------------------------------------------------------------


def test_pairs_the_questions_every_run_has_and_lists_the_missing_per_run(tmp_path, write_log):
    ids = [f"q{i}" for i in range(12)]
    base = write_log(tmp_path / "base.parquet", rows(ids, [True, False] * 6))
    one = write_log(tmp_path / "one.parquet", rows(ids + ["extra"], [True] * 13))
    two = write_log(tmp_path / "two.parquet", rows(ids[:9], [False, True, True] * 3))
    doc = compare_runs(tmp_path / "out", base, one, two)
    assert [r["label"] for r in doc["runs"]] == ["base", "one", "two"]
    assert [r["role"] for r in doc["runs"]] == ["baseline", "candidate", "candidate"]
    assert doc["n_paired"] == 9
    assert doc["missing"] == {"base": ["extra"], "one": [], "two": ["q9", "q10", "q11", "extra"]}
    assert [c["n_paired"] for c in doc["comparisons"]] == [9, 9]
    assert any("missing from run two" in w and "q9, q10, q11" in w for w in doc["warnings"])
    correct = doc["comparisons"][0]["metrics"]["correct"]
    assert (correct["n"], correct["a"], correct["b"]) == (9, 5 / 9, 1.0)  # q0..q8 only


def test_labels_and_baseline_choose_names_and_the_reference(tmp_path):
    doc = compare_runs(
        tmp_path,
        A,
        B,
        C,
        "--label",
        "base",
        "--label",
        "rerank",
        "--label",
        "prompt",
        "--baseline",
        "rerank",
    )
    assert [r["label"] for r in doc["runs"]] == ["rerank", "base", "prompt"]
    assert doc["baseline"] == "rerank"
    first = doc["comparisons"][0]
    assert (first["baseline"], first["candidate"]) == ("rerank", "base")
    # base against rerank is the reverse of rerank against base: 10 fixed and 32 broken
    assert (first["metrics"]["correct"]["fixed"], first["metrics"]["correct"]["broken"]) == (10, 32)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--label", "x"), "--label: 1 label for 3 run logs"),
        (("--label", "x", "--label", "x", "--label", "y"), "run label 'x' is given to two logs"),
        (("--baseline", "nope"), "--baseline nope: no run has that label"),
        # the summary read "2 candidates against , on the 240 questions every run has"
        (("--label", "", "--label", "b", "--label", "c"), "--label: label 1 is empty; give"),
        (("--label", "a", "--label", " \t", "--label", "c"), "--label: label 2 is blank; give"),
    ],
)
def test_bad_labels_are_one_line_errors(tmp_path, args, message):
    code, output = invoke("compare", A, B, C, "-o", tmp_path / "r.html", *FAST, *args)
    assert code == 2
    assert message in output
    assert not (tmp_path / "r.html").exists()


def test_a_single_log_is_refused(tmp_path):
    code, output = invoke("compare", A, "-o", tmp_path / "r.html")
    assert code == 2
    assert "at least one candidate log" in output


def test_each_run_is_scored_once_however_many_pairs_it_is_in(tmp_path, monkeypatch):
    """The baseline is in every pair, but its rows are read and scored once: three runs make
    three scorings (not four), and the report is the same as when each pair scores both."""
    scorings = []
    prepare = RunDatabase.prepare

    def counted(db: RunDatabase, *args: object, **kwargs: object) -> None:
        scorings.append(db.files["a"].label)
        prepare(db, *args, **kwargs)

    monkeypatch.setattr(RunDatabase, "prepare", counted)
    doc = compare_runs(tmp_path, A, B, C)
    assert sorted(scorings) == sorted(["fare_rules_a_baseline", "fare_rules_b_reranker",
                                       "fare_rules_c_prompt"])  # fmt: skip
    for comparison, candidate in zip(doc["comparisons"], (B, C), strict=True):
        alone = run_comparison(A, candidate, Options(n_boot=300))
        assert comparison["metrics"]["correct"]["a"] == alone.comparisons["correct"].a
        assert comparison["metrics"]["correct"]["b"] == alone.comparisons["correct"].b
        assert comparison["metrics"]["ndcg@5"]["diff"] == alone.comparisons["ndcg@5"].diff


# --- multiplicity -------------------------------------------------------------------------------


def test_the_p_adjusted_over_the_candidates_is_bonferroni_s_as_the_intervals(three):
    """Every interval is at 1 - 0.05 / 2: each metric's p adjusted over the 2 candidates is
    the same Bonferroni adjustment, min(1, 2 p), worked out here from each section's own p."""
    _, doc = three
    family = doc["family"]
    assert family["n_candidates"] == 2 and family["adjustment"] == "Bonferroni"
    for c in doc["comparisons"]:
        for metric, m in c["metrics"].items():
            assert family["p_adjusted"][c["candidate"]][metric] == pytest.approx(
                min(1.0, 2 * m["p"])
            )


def fixing_logs(folder: Path, changes: dict[str, tuple[int, int]]) -> list[Path]:
    """A baseline of 200 questions, 100 of them correct, then per candidate name one that fixes
    and breaks (fixed, broken) of its questions."""
    correct = np.arange(200) % 2 == 0
    wrong, right = np.flatnonzero(~correct), np.flatnonzero(correct)
    logs = {"base": correct}
    for name, (fixed, broken) in changes.items():
        logs[name] = correct.copy()
        logs[name][wrong[:fixed]] = True
        logs[name][right[:broken]] = False
    ids = [f"q{i:03}" for i in range(200)]
    for name, values in logs.items():
        pd.DataFrame({"question_id": ids, "correct": values}).to_parquet(folder / f"{name}.parquet")
    return [folder / f"{name}.parquet" for name in logs]


def test_the_summary_s_adjusted_p_is_the_one_its_verdict_rests_on(tmp_path):
    """Five candidates of 200 questions fixing 6, 7, 8 and 9 and breaking none, and fixing 12
    breaking 1: McNemar's exact p is 2 / 2^f, and 2 (1 + 13) / 2^13 for 12 / 1. Each verdict
    reads its 99% interval and its test's p against 0.01, so the p beside it is 5 p (Bonferroni),
    read against 0.05. Holm's, shown before, read 0.031 beside "no evidence" (6 fixed) and
    beside a borderline "better" (7 fixed) alike."""
    changes = {"f6": (6, 0), "f7": (7, 0), "f8": (8, 0), "f9": (9, 0), "f12b1": (12, 1)}
    logs = fixing_logs(tmp_path, changes)
    out = tmp_path / "out"
    doc = compare_runs(out, *logs, options=(*FAST, "--markdown", out / "r.md"))
    raw = [2 / 2**6, 2 / 2**7, 2 / 2**8, 2 / 2**9, 2 * 14 / 2**13]
    bonferroni = [0.15625, 0.078125, 0.0390625, 0.01953125, 0.01708984375]
    assert [r["p"] for r in doc["summary"]] == pytest.approx(raw)
    assert [r["p_adjusted"] for r in doc["summary"]] == pytest.approx(bonferroni)
    assert [doc["family"]["p_adjusted"][c]["correct"] for c in changes] == pytest.approx(bonferroni)
    for r in doc["summary"]:  # the p shown and the verdict it sits beside agree
        no_evidence = r["outcome"] == "no evidence of a difference"
        assert r["borderline"] == (no_evidence != (r["p_adjusted"] >= 0.05)), r["candidate"]
    page = (out / "r.html").read_text()
    assert "<th>Bonferroni p</th>" in page and "Holm" not in page.split('id="family"')[0]
    assert "each candidate&#39;s own p times 5, capped at 1 (Bonferroni" in page
    markdown = (out / "r.md").read_text()
    assert "| p (Bonferroni) |" in markdown and "| 0.156 | 6 / 0 |" in markdown
    assert "| 0.078 | 7 / 0 | better (borderline) |" in markdown


def test_every_interval_is_at_the_bonferroni_level(three, tmp_path):
    _, doc = three
    assert doc["family"]["interval_confidence"] == pytest.approx(1 - 0.05 / 2)
    assert [c["confidence"] for c in doc["comparisons"]] == pytest.approx([0.975, 0.975])
    # the same pair compared alone at 97.5% gives the same interval
    alone = compare_runs(tmp_path, A, C, options=("--n-boot", "1000", "--confidence", "0.975"))
    c = doc["comparisons"][1]["metrics"]["correct"]
    assert (c["ci_low"], c["ci_high"]) == pytest.approx(
        (
            alone["comparisons"][0]["metrics"]["correct"]["ci_low"],
            alone["comparisons"][0]["metrics"]["correct"]["ci_high"],
        )
    )
    assert doc["summary"][1]["ci_low"] == c["ci_low"]
    assert (
        doc["summary"][1]["p_adjusted"]
        == doc["family"]["p_adjusted"][doc["summary"][1]["candidate"]]["correct"]
    )


def test_simultaneous_intervals_cover_every_true_difference_together():
    """Three candidates with known differences: all three intervals at the family level cover
    the truth in at least about 95% of simulated studies (per-interval 95% would not)."""
    rng = np.random.default_rng(7)
    m, n, studies = 3, 200, 300
    level = family_level(0.95, m)
    truth = [0.0, 0.1, -0.05]
    together = alone = 0
    for s in range(studies):
        base = rng.normal(0, 1, n)
        covered_family, covered_single = [], []
        for shift in truth:
            cand = base + shift + rng.normal(0, 1, n)
            for lv, out in ((level, covered_family), (0.95, covered_single)):
                c, _ = compare_metric(
                    "m", base, cand, binary=False, n_boot=400, confidence=lv, seed=s
                )
                out.append(c.ci_low <= shift <= c.ci_high)
        together += all(covered_family)
        alone += all(covered_single)
    assert together / studies >= 0.93
    assert alone / studies < together / studies


# --- the winner's curse -------------------------------------------------------------------------


def expected_max(m: int) -> float:
    """E[max of m independent standard normals] (m * x * phi(x) * Phi(x)^(m - 1), integrated):
    the oracle of the chance gain of independent candidates."""
    value, _ = integrate.quad(
        lambda x: m * x * stats.norm.pdf(x) * stats.norm.cdf(x) ** (m - 1), -np.inf, np.inf
    )
    return float(value)


def test_expected_maximum_of_normals_matches_the_closed_forms():
    assert expected_max(1) == pytest.approx(0.0, abs=1e-9)
    assert expected_max(2) == pytest.approx(1 / math.sqrt(math.pi))
    assert expected_max(3) == pytest.approx(3 / (2 * math.sqrt(math.pi)))
    draws = np.random.default_rng(0).normal(size=(200_000, 5)).max(axis=1).mean()
    assert expected_max(5) == pytest.approx(draws, abs=0.01)


def test_chance_gain_of_independent_candidates_is_the_expected_maximum():
    differences = np.random.default_rng(1).normal(0, 0.3, size=(4000, 5))
    se = 0.3 / math.sqrt(4000)
    gain, correlation = chance_gain(differences, seed=0)
    assert gain == pytest.approx(expected_max(5) * se, rel=0.03)
    assert correlation == pytest.approx(0, abs=0.03)


def test_chance_gain_of_two_correlated_candidates_has_the_closed_form():
    """E[max(X, Y)] for zero-mean normals is sd(X - Y) / sqrt(2 pi) (Clark, 1961)."""
    rng = np.random.default_rng(2)
    baseline = rng.normal(0, 1, 3000)
    differences = rng.normal(0, 1, (3000, 2)) - baseline[:, None]  # share the baseline
    gain, correlation = chance_gain(differences, seed=0)
    spread = np.std(differences[:, 0] - differences[:, 1], ddof=1) / math.sqrt(3000)
    assert gain == pytest.approx(spread / math.sqrt(2 * math.pi), rel=0.02)
    assert correlation == pytest.approx(0.5, abs=0.05)
    assert gain < expected_max(2) * math.sqrt(2) / math.sqrt(3000) * 0.8  # not the independent


def test_chance_gain_of_the_same_candidate_twice_is_zero_not_below():
    """Two candidates with the same per-question differences: the best of them gains nothing by
    chance; the draws' own mean lands a little either side of 0, and a negative gain cannot be."""
    rng = np.random.default_rng(3)
    column = rng.normal(0.05, 0.5, 3000)
    for seed in range(5):
        gain, correlation = chance_gain(np.column_stack([column, column]), seed=seed)
        assert gain == pytest.approx(0.0, abs=1e-12) and gain >= 0.0
        assert correlation == pytest.approx(1.0)


def test_winners_curse_names_the_best_and_the_chance_gain(three):
    out, doc = three
    curse = doc["winners_curse"]
    assert curse["best"] == "fare_rules_b_reranker" and curse["tied_with"] == []
    assert curse["diff"] == pytest.approx(0.09166666666666666)
    errors = [
        c["metrics"]["correct"]["sd"] / math.sqrt(c["metrics"]["correct"]["n"])
        for c in doc["comparisons"]
    ]
    assert curse["standard_error"] == pytest.approx(np.mean(errors))
    # two candidates: E[max] is sd((B - A) - (C - A)) / sqrt(n) / sqrt(2 pi), from the logs
    logs = [pd.read_parquet(log).set_index("question_id")["correct"] for log in (A, B, C)]
    both = pd.concat(logs, axis=1, join="inner").astype(float)
    spread = np.std(both.iloc[:, 1] - both.iloc[:, 2], ddof=1) / math.sqrt(len(both))
    assert curse["overstatement"] == pytest.approx(spread / math.sqrt(2 * math.pi), rel=0.02)
    assert curse["expected_max"] == pytest.approx(curse["overstatement"] / np.mean(errors))
    # the two candidates' per-question differences in correct, and their correlation
    records = pd.DataFrame(doc["per_question"])
    records["d"] = records["correct_b"] - records["correct_a"]
    d = records.pivot(index="question_id", columns="candidate", values="d")
    rho = float(np.corrcoef(d.to_numpy(), rowvar=False)[0, 1])
    assert curse["correlation"] == pytest.approx(rho)
    html = (out / "r.html").read_text()
    assert "The winner&#39;s curse" in html or "The winner's curse" in html
    assert "The best of 2 measured on the same questions looks better than it is" in html
    assert "looks better than it is" in (out / "r.md").read_text()


def test_the_winner_s_curse_under_clusters_uses_the_cluster_robust_covariance(tmp_path, write_log):
    """Ten documents of eight questions, each candidate better on some documents and worse on
    others: under --cluster the candidates' errors, correlation and chance gain come from the
    covariance of their mean differences over documents, worked out here by hand."""
    rng = np.random.default_rng(11)
    docs = np.repeat(np.arange(10), 8)
    ids = [f"q{i}" for i in range(80)]
    base = rng.random(80) < 0.5
    outcomes = [base] + [
        rng.random(80) < np.clip(0.5 + rng.normal(0, 0.35, 10)[docs], 0, 1) for _ in range(3)
    ]
    logs = []
    for name, correct in zip(["base", "c0", "c1", "c2"], outcomes, strict=True):
        frame = pd.DataFrame({"question_id": ids, "doc_id": [f"d{d}" for d in docs]})
        frame.assign(correct=correct).to_parquet(tmp_path / f"{name}.parquet")
        logs.append(tmp_path / f"{name}.parquet")
    curse = run_study(logs, Options(n_boot=300, cluster="doc_id")).curse
    plain = run_study(logs, Options(n_boot=300)).curse
    differences = np.column_stack([c.astype(float) - base for c in outcomes[1:]])
    mean = differences.mean(axis=0)
    covariance = np.zeros((3, 3))
    for doc in range(10):
        r = (differences[docs == doc] - mean).sum(axis=0)
        covariance += np.outer(r, r)
    covariance *= 10 / 9 / 80**2
    scale = np.sqrt(np.diag(covariance))
    correlation = covariance / np.outer(scale, scale)
    draws = np.random.default_rng(5).multivariate_normal(np.zeros(3), covariance, 400_000)
    assert curse.cluster == "doc_id" and "clustered by doc_id" in curse.sentence
    assert curse.standard_error == pytest.approx(scale.mean())
    assert curse.correlation == pytest.approx(correlation[~np.eye(3, dtype=bool)].mean())
    assert curse.overstatement == pytest.approx(draws.max(axis=1).mean(), rel=0.02)
    naive = np.cov(differences, rowvar=False) / 80
    assert plain.standard_error == pytest.approx(np.sqrt(np.diag(naive)).mean())
    assert curse.standard_error > 1.2 * plain.standard_error  # design effects above 1


def test_candidates_of_the_same_gain_tie_for_best_rather_than_one_coming_out_best(tmp_path):
    """The same candidate under two names beside a third: neither comes out best; they tie
    for best (each copy alone is the all-tie case below)."""
    twin = tmp_path / "b_twin.parquet"
    twin.write_bytes(B.read_bytes())
    out = tmp_path / "out"
    doc = compare_runs(out, A, B, twin, C, options=(*FAST, "--markdown", out / "r.md"))
    curse = doc["winners_curse"]
    assert (curse["best"], curse["tied_with"]) == ("fare_rules_b_reranker", ["b_twin"])
    sentence = (
        "fare_rules_b_reranker and b_twin tie for best of the 3 candidates on correct "
        "(+0.092 each against the baseline)."
    )
    html = (out / "r.html").read_text()
    assert sentence in html and "comes out best" not in html
    assert "tie for best of the 3 candidates" in (out / "r.md").read_text()


def test_candidates_that_all_tie_leave_no_choice_to_correct_for(tmp_path):
    """Eight copies of one log: the 7 candidates tie at 0.000, and the paragraph said the best
    of 7 "looks better than it is" and would "still show about 0.000 by chance"."""
    for i in range(1, 9):
        (tmp_path / f"r{i}.parquet").write_bytes(A.read_bytes())
    out = tmp_path / "out"
    logs = [tmp_path / f"r{i}.parquet" for i in range(1, 9)]
    doc = compare_runs(out, *logs, options=(*FAST, "--markdown", out / "r.md"))
    assert doc["winners_curse"]["tied_with"] == [f"r{i}" for i in range(3, 9)]
    said = (
        "The 7 candidates tie on correct (r2, r3, r4, r5, r6, r7 and r8: 0.000 each against the "
        "baseline): with no spread between them none is chosen over another, so there is no "
        "choice to correct for."
    )
    for page in ((out / "r.html").read_text(), (out / "r.md").read_text()):
        assert said in page
        assert "looks better than it is" not in page and "by chance" not in page


def test_the_stated_overstatement_of_the_best_matches_known_truth():
    """Four candidates of equal true gain (+3 points of correct over a 60% baseline): the best
    measured one's excess over the truth averages what the page states
    (bench/simulate_winners_curse.py has the full table); without the covariance of the
    differences the page said 1.4 times too much."""
    rng = np.random.default_rng(0)
    m, n, data_sets = 4, 1000, 300
    over, stated = [], []
    t_base, t_cand = (-stats.norm.ppf(p) * math.sqrt(2) for p in (0.6, 0.63))
    for _ in range(data_sets):
        ease = rng.standard_normal(n)
        base = ease + rng.standard_normal(n) > t_base
        cand = ease[:, None] + rng.standard_normal((n, m)) > t_cand
        diffs = cand.astype(float) - base[:, None]
        over.append(diffs.mean(axis=0).max() - 0.03)
        stated.append(chance_gain(diffs, seed=0)[0])
    assert np.mean(over) / np.mean(stated) == pytest.approx(1.0, abs=0.15)


def test_a_candidate_without_the_headline_column_is_not_ranked_by_another_metric(
    tmp_path, write_log
):
    """c logs no correct, so its own headline is nDCG (+0.5 here); the best gain in correct is
    b's +0.2, and the run charts and the held-out check rank only the runs that log it."""
    ids = [f"q{i}" for i in range(40)]
    base = write_log(tmp_path / "base.parquet", rows(ids, [True, False] * 20))
    b = write_log(tmp_path / "b.parquet", rows(ids, [True] * 28 + [False] * 12))
    c = write_log(tmp_path / "c.parquet", rows(ids, [True] * 24 + [False] * 16))
    d_rows = rows(ids, [True] * 40)  # every question's evidence in the prompt: nDCG 1
    for r in d_rows:
        del r["correct"]
    d = write_log(tmp_path / "d.parquet", d_rows)
    doc = compare_runs(tmp_path / "out", base, b, c, d, options=(*FAST, "--holdout", "0.5"))
    assert [r["metric"] for r in doc["summary"]] == ["correct", "correct", "ndcg@2"]
    curse = doc["winners_curse"]
    assert (curse["best"], curse["metric"], curse["n_candidates"]) == ("b", "correct", 2)
    assert curse["diff"] == pytest.approx(doc["summary"][0]["diff"]) == pytest.approx(0.2)
    assert [m["label"] for m in doc["run_means"]] == ["base", "b", "c"]
    assert doc["holdout"]["n_candidates"] == 2 and doc["holdout"]["chosen"] in {"b", "c"}


def test_the_matrix_of_runs_is_in_the_json_as_the_page_counts_it(tmp_path, write_log):
    """The "Which runs differ" chart counted pairs of runs whose intervals the JSON lacked."""
    ids = [f"q{i}" for i in range(40)]
    base = write_log(tmp_path / "base.parquet", rows(ids, [True, False] * 20))  # 0.5
    b = write_log(tmp_path / "b.parquet", rows(ids, [True] * 28 + [False] * 12))  # 0.7
    c = write_log(tmp_path / "c.parquet", rows(ids, [True] * 24 + [False] * 16))  # 0.6
    doc = compare_runs(tmp_path / "out", base, b, c)
    cells = {(m["row"], m["column"]): m for m in doc["matrix"]}
    assert len(cells) == 6 and {m["confidence"] for m in cells.values()} == {1 - 0.05 / 3}
    assert cells["base", "b"]["diff"] == pytest.approx(0.2)
    assert cells["b", "c"]["diff"] == pytest.approx(-0.1)
    for (row, column), m in cells.items():
        mirror = cells[column, row]
        assert (m["diff"], m["ci_low"], m["ci_high"]) == (
            -mirror["diff"], -mirror["ci_high"], -mirror["ci_low"]
        )  # fmt: skip
        excludes_zero = m["ci_low"] > 0 or m["ci_high"] < 0
        assert m["differs"] == (excludes_zero and m["p"] < 0.05 / 3)
        assert m["borderline"] == (excludes_zero != (m["p"] < 0.05 / 3))
    differing = sum(m["differs"] for m in cells.values()) // 2
    page = (tmp_path / "out" / "r.html").read_text()
    assert f"{differing} of 3 pairs of runs" in page


def six_of_forty_fixed(folder: Path) -> list[Path]:
    """A baseline wrong on 40 questions, "fixes" right on 6 of them, "same" the baseline again."""
    ids = [f"q{i:02}" for i in range(40)]
    runs = {"a": [False] * 40, "fixes": [i < 6 for i in range(40)], "same": [False] * 40}
    for name, correct in runs.items():
        pd.DataFrame({"question_id": ids, "correct": correct}).to_parquet(
            folder / f"{name}.parquet"
        )
    return [folder / f"{name}.parquet" for name in runs]


def test_a_pair_of_runs_whose_interval_and_test_disagree_is_borderline_not_different(tmp_path):
    """Of 40 questions "fixes" fixes 6 and breaks none, "same" is the baseline again. Over 3
    pairs of runs each interval is at 1 - 0.05 / 3: the score statistic 6 / sqrt(6) = 2.45 is
    past z = 2.39 and a resample without a fixed question has chance (34/40)^40 = 0.15%, under
    0.83%, so the interval of fixes against either excludes zero; McNemar's exact p is
    2 / 2^6 = 0.031, above 0.05 / 3 = 0.0167. The chart counted both pairs as differing, where
    the verdict calls such a pair borderline."""
    out, logs = tmp_path / "out", six_of_forty_fixed(tmp_path)
    doc = compare_runs(out, *logs)
    cells = {(m["row"], m["column"]): m for m in doc["matrix"]}
    for pair in (("a", "fixes"), ("fixes", "same")):
        for cell in (cells[pair], cells[pair[::-1]]):
            assert cell["ci_low"] > 0 or cell["ci_high"] < 0
            assert cell["p"] == pytest.approx(0.03125)
            assert (cell["differs"], cell["borderline"]) == (False, True)
    assert (cells["a", "same"]["differs"], cells["a", "same"]["borderline"]) == (False, False)
    page = (out / "r.html").read_text()
    assert (
        "0 of 3 pairs of runs differ in correct, their interval and test agreeing at the "
        "Bonferroni level over every pair; 2 more are borderline, their interval and test "
        "disagreeing: a and fixes, fixes and same."
    ) in page


def test_two_runs_of_one_mean_differ_by_zero_not_minus_zero(tmp_path, write_log):
    """The mirrored cell of two equal runs was -0.0: "-0.0" in the JSON, "−0.000" on the
    chart's cell as a screen reader and a tooltip gave it."""
    ids = [f"q{i}" for i in range(40)]
    logs = [
        write_log(tmp_path / f"{name}.parquet", rows(ids, correct))
        for name, correct in [
            ("base", [True, False] * 20),
            ("same", [False, True] * 20),  # the mean of base, on other questions
            ("b", [True] * 28 + [False] * 12),
        ]
    ]
    doc = compare_runs(tmp_path / "out", *logs)
    zeros = [m["diff"] for m in doc["matrix"] if m["diff"] == 0]
    assert len(zeros) == 2 and all(math.copysign(1, d) == 1 for d in zeros)
    assert '"diff": -0.0' not in (tmp_path / "out" / "r.json").read_text()
    page = (tmp_path / "out" / "r.html").read_text()
    assert "diff: +0.000" not in page and "diff: −0.000" not in page
    assert "diff: 0.000" in page  # the cell's own text, in the static chart's labels


def smaller_prompt_logs(folder: Path, write_log) -> list[Path]:
    """Four retrieval-only logs of 40 questions (hits of 20, 28, 36 and 22 in the prompt):
    the third's prompt holds one passage, the others' two."""
    ids = [f"q{i}" for i in range(40)]
    logs = []
    for name, hits, prompt in (("base", 20, 2), ("b", 28, 2), ("c", 36, 1), ("d", 22, 2)):
        logged = rows(ids, [True] * hits + [False] * (40 - hits))
        for r in logged:
            del r["correct"]
            r["context_ids"] = r["context_ids"][:prompt]
        logs.append(write_log(folder / f"{name}.parquet", logged))
    return logs


def test_a_candidate_with_a_smaller_prompt_is_adjusted_with_the_others_but_not_ranked(
    tmp_path, write_log
):
    """c's prompt holds one passage, the others two: its headline is ndcg@1. The summary's p
    is adjusted over the 3 candidates whatever its metric, as its interval is, and c
    is kept out of the run chart, the matrix and the ranking on ndcg@2, with a warning saying
    so and how to score every run alike."""
    base, b, c, d = smaller_prompt_logs(tmp_path, write_log)
    study = run_study([base, b, c, d], Options(n_boot=300))
    assert [r.metric for r in study.summary] == ["ndcg@2", "ndcg@1", "ndcg@2"]
    raw = [r.p for r in study.summary]
    assert [r.p_adjusted for r in study.summary] == pytest.approx([min(1.0, 3 * p) for p in raw])
    assert "each candidate's own p times 3, capped at 1 (Bonferroni" in study.family.sentence
    assert [m.label for m in study.run_means] == ["base", "b", "d"]
    assert {cell.row for cell in study.matrix} == {"base", "b", "d"}
    curse = study.curse
    assert (curse.metric, curse.n_candidates, curse.best) == ("ndcg@2", 2, "b")
    assert "best of the 2 candidates on ndcg@2" in curse.sentence
    assert study.warnings == [
        "Candidate c is compared on ndcg@1, not ndcg@2: it is left out of the chart of every "
        "run, the matrix and the ranking on ndcg@2; pass --k 2 to score every run at 2"
    ]
    scored_alike = compare_runs(tmp_path / "k", base, b, c, d, options=(*FAST, "--k", "2"))
    assert [r["metric"] for r in scored_alike["summary"]] == ["ndcg@2"] * 3
    assert scored_alike["winners_curse"]["n_candidates"] == 3


def test_the_candidate_with_the_smaller_prompt_is_left_out_wherever_it_is_listed(
    tmp_path, write_log
):
    """Listed first, c (ndcg@1) set the headline the study ranked by, and the two candidates
    compared on ndcg@2 were the ones left out of the chart, the matrix and the ranking. The
    study ranks by the headline most candidates share."""
    base, b, c, d = smaller_prompt_logs(tmp_path, write_log)
    study = run_study([base, c, b, d], Options(n_boot=300))
    assert [r.metric for r in study.summary] == ["ndcg@1", "ndcg@2", "ndcg@2"]
    assert study.headline == "ndcg@2"
    assert [m.label for m in study.run_means] == ["base", "b", "d"]
    # the baseline's own mean is its ndcg@2, as in b's comparison, not its ndcg@1
    assert study.run_means[0].mean == pytest.approx(study.summary[1].baseline_mean)
    assert {cell.row for cell in study.matrix} == {"base", "b", "d"}
    assert (study.curse.metric, study.curse.n_candidates, study.curse.best) == ("ndcg@2", 2, "b")
    assert study.warnings == [
        "Candidate c is compared on ndcg@1, not ndcg@2: it is left out of the chart of every "
        "run, the matrix and the ranking on ndcg@2; pass --k 2 to score every run at 2"
    ]


def test_the_chance_gain_of_a_lower_is_better_headline_is_a_fall(tmp_path, write_log):
    """Where less is better the best of m equally good candidates shows a fall by chance: the
    page printed it as a rise (+), against the best candidate's own negative gain."""
    rng = np.random.default_rng(2)
    spread = rng.normal(100, 20, 60)
    logs = []
    for name, shift in (("a", 0), ("b", -3), ("c", -1), ("d", 2)):
        frame = pd.DataFrame(
            {
                "question_id": [f"q{i}" for i in range(60)],
                "latency_ms": spread + shift + rng.normal(0, 5, 60),
            }
        )
        frame.to_parquet(tmp_path / f"{name}.parquet")
        logs.append(tmp_path / f"{name}.parquet")
    markdown = tmp_path / "r.md"
    options = (*FAST, "--lower-is-better", "latency_ms", "--markdown", markdown)
    doc = compare_runs(tmp_path / "out", *logs, options=options)
    curse = doc["winners_curse"]
    assert curse["best"] == "b" and curse["diff"] < 0
    assert curse["overstatement"] < 0 < curse["expected_max"]
    # printed as the tables print a difference, with a minus sign (U+2212), not a hyphen
    fall = f"\u2212{-curse['overstatement']:.3f}"
    best = f"(\u2212{-curse['diff']:.3f} against the baseline)"
    page = markdown.read_text()
    assert f"the best would still show about {fall} by chance" in page
    assert best in page and "-0." not in page


def test_two_runs_have_no_family_and_no_curse(tmp_path):
    doc = compare_runs(tmp_path, A, B)
    assert doc["family"] is None and doc["winners_curse"] is None
    assert [r["label"] for r in doc["runs"]] == ["A", "B"]
    assert doc["comparisons"][0]["confidence"] == 0.95


# --- outputs ------------------------------------------------------------------------------------


def test_three_run_page_has_the_summary_navigation_and_each_section(three):
    out, doc = three
    html = (out / "r.html").read_text()
    assert html.count('<details class="candidate"') == 2
    for i, c in enumerate(doc["comparisons"], start=1):
        assert f'href="#candidate-{i}"' in html
        assert f"{c['candidate']} vs {c['baseline']}" in html
    assert 'id="chart-run-means"' in html and 'id="chart-run-matrix"' in html
    ids = [part.split('"')[0] for part in html.split('id="chart-')[1:]]
    assert len(ids) == len(set(ids)), "every chart id on the page is distinct"


def test_the_page_lists_the_confidence_given_not_each_interval_s_level(three):
    """Two candidates at --confidence 0.95: each interval is at 97.5% (Bonferroni), which the
    family sentence says; the options list what was given, so that a re-run reproduces it."""
    out, doc = three
    html = (out / "r.html").read_text()
    options = html[html.index("Options: ") :].split("<br>")[0]
    assert "--confidence 95%" in options and "97.5%" not in options
    assert doc["family"]["interval_confidence"] == 0.975
    assert "each interval is at 97.5% (Bonferroni)" in html
    # the summary's p is adjusted, each section's its own: the page says which is which
    assert "each candidate&#39;s section gives its own p, unadjusted" in html
    assert html.count("<th>test p, unadjusted</th>") == 2  # each section's metric table


def test_the_run_chart_names_its_level_beside_the_candidates_adjusted_one(three):
    """Each run's own interval is one run's, at --confidence (95%), where the candidates'
    differences beside it are at 97.5%: the chart's reading says which it shows."""
    out, doc = three
    html = (out / "r.html").read_text()
    assert "Each run&#39;s own mean with its 95% interval (one run&#39;s, so not adjusted" in html
    assert doc["family"]["interval_confidence"] == 0.975


def test_markdown_has_one_row_per_candidate(three):
    out, doc = three
    text = (out / "r.md").read_text()
    for row in doc["summary"]:
        line = next(
            x
            for x in text.splitlines()
            if x.startswith(f"| {row['candidate']}".replace("_", "\\_"))
        )
        assert f"{row['diff']:+.3f}" in line


def test_the_markdown_of_a_study_gives_each_candidates_verdict_sentence(tmp_path):
    """The table of candidates reads one word a candidate ("worse"); the sentence behind it
    carries what the word leaves out: here that B's "worse" rests on a lower bound the left
    tail of its latency difference leaves unsure (30 ms slower on 39 of 40 questions, 100 ms
    faster on one). The page's section and the command's output gave the sentence; the
    summary a pull request shows did not."""
    n = 40
    rng = np.random.default_rng(5)
    a = rng.normal(1000, 50, n)
    slower = rng.normal(30, 5, n)
    slower[0] = -100.0
    logs = []
    for name, values in (("base", a), ("slow", a + slower), ("same", a + rng.normal(0, 5, n))):
        frame = pd.DataFrame({"question_id": [f"q{i}" for i in range(n)], "latency_ms": values})
        frame.to_parquet(tmp_path / f"{name}.parquet")
        logs.append(tmp_path / f"{name}.parquet")
    markdown = tmp_path / "r.md"
    options = ("--n-boot", "2000", "--lower-is-better", "latency_ms", "--markdown", markdown)
    doc = compare_runs(tmp_path / "out", *logs, options=options)
    text = markdown.read_text()
    rendered = MarkdownIt("commonmark").render(text)
    for pair in doc["comparisons"]:
        verdict = pair["verdict"]
        line = next(x for x in text.splitlines() if x.startswith(f"- {pair['candidate']}: "))
        assert f"**{verdict['outcome']}** on **latency\\_ms**" in line
        assert html.escape(verdict["reason"], quote=False) in rendered  # whole, not cut
    slow = next(p for p in doc["comparisons"] if p["candidate"] == "slow")["verdict"]
    assert slow["outcome"] == "B worse"
    assert "the lower bound may miss more often than its level says" in slow["reason"]


def test_gate_rules_apply_to_each_candidate(tmp_path):
    code, output = invoke(
        "compare",
        A,
        B,
        C,
        "-o",
        tmp_path / "r.html",
        *FAST,
        "--require",
        "correct > 0",
        "--junit",
        tmp_path / "r.xml",
    )
    assert code == 1, output  # the prompt variant's lower bound is below 0
    doc = json.loads((tmp_path / "r.json").read_text())
    results = {r["candidate"]: r["outcome"] for r in doc["gate"]["results"]}
    assert results == {"fare_rules_b_reranker": "pass", "fare_rules_c_prompt": "inconclusive"}
    assert doc["gate"]["passing_candidates"] == ["fare_rules_b_reranker"]
    xml = (tmp_path / "r.xml").read_text()
    assert xml.count("<testcase") == 2 and 'name="candidate2.sha256"' in xml


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ("faithfulness >= -0.5", "{d} does not log faithfulness ({a} does)"),
        ("latency_ms <= 50", "{d} has no value of latency_ms on a paired question ({a} has)"),
    ],
)
def test_a_rule_the_last_candidate_cannot_judge_is_refused_before_any_bootstrap(
    tmp_path, monkeypatch, rule, why
):
    """The third log lacks the rule's metric: the rules were checked inside each pair's
    comparison, so the first two candidates' bootstraps ran (seconds to minutes at scale)
    before the bad rule was refused. Every rule is checked against every candidate first."""
    ids = [f"q{i}" for i in range(20)]
    logs = [tmp_path / f"{name}.parquet" for name in "abcd"]
    for log, correct in zip(logs, ([True] * 20, [False] * 20, [True, False] * 10), strict=False):
        pd.DataFrame(rows(ids, correct)).assign(faithfulness=0.5, latency_ms=100.0).to_parquet(log)
    last = pd.DataFrame(rows(ids, [False, True] * 10)).assign(latency_ms=float("nan"))
    last.to_parquet(logs[3])

    def resampled(*args: object, **kwargs: object) -> None:
        raise AssertionError("a bootstrap ran before the rule was refused")

    monkeypatch.setattr(stats_module, "bootstrap_moments", resampled)
    monkeypatch.setattr(stats_module, "normal_draws", resampled)
    out = tmp_path / "out"
    out.mkdir()
    code, output = invoke("compare", *logs, "-o", out / "r.html", *FAST, "--require", rule)
    assert code == 2, output
    assert output == (
        f"ragreport: error: rule {rule!r}: {why.format(a=logs[0], d=logs[3])}, so it is not "
        "compared; log it in every run or drop the rule\n"
    )
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("cutoff", [2, 1])
def test_a_rule_on_a_metric_named_by_prompt_size_names_the_log_whose_prompt_differs(
    tmp_path, write_log, cutoff
):
    """With c's prompt at one passage and the others' at two, ndcg@2 is refused by c's
    comparison and ndcg@1 by the others': the message names c's log and the --k that makes the
    rule's name hold in every comparison, never a name another comparison then refuses."""
    logs = smaller_prompt_logs(tmp_path, write_log)
    rule = f"ndcg@{cutoff} >= -0.05"
    code, output = invoke("compare", *logs, "-o", tmp_path / "r.html", *FAST, "--require", rule)
    assert code == 2, output
    assert output.strip().splitlines()[-1] == (
        f"ragreport: error: rule {rule!r}: {logs[2]}'s prompt holds 1 passage, the others' 2, "
        "so no retrieval metric has one name in every comparison; pass --k "
        f"{cutoff} to score every run at {cutoff}, or drop the rule"
    )
    code, output = invoke(
        "compare", *logs, "-o", tmp_path / "k.html", *FAST, "--require", rule, "--k", cutoff
    )
    assert code in (0, 1), output  # judged, in every comparison
    doc = json.loads((tmp_path / "k.json").read_text())
    assert [(r["rule"], r["candidate"]) for r in doc["gate"]["results"]] == [
        (rule, "b"),
        (rule, "c"),
        (rule, "d"),
    ]


def test_verify_re_runs_three_logs(three):
    out, _ = three
    code, output = invoke("verify", out / "r.json")
    assert code == 0, output
    assert "verified" in output


def test_the_packaged_schema_is_valid_and_describes_every_output(three, tmp_path):
    schema = json_report.json_schema()
    Draft202012Validator.check_schema(schema)
    out, doc = three
    Draft202012Validator(schema).validate(doc)
    Draft202012Validator(schema).validate(compare_runs(tmp_path, A, B))
    broken = {**doc, "runs": {"a": doc["runs"][0]}}  # the shape of schema_version 1
    assert not Draft202012Validator(schema).is_valid(broken)


# --- holdout ------------------------------------------------------------------------------------


def test_holdout_fraction_is_seeded_and_drawn_within_each_slice():
    strata = pd.Series(["x"] * 50 + ["y"] * 30 + ["z"] * 20)
    first = holdout.split("0.3", strata, None, seed=1, path="log")
    again = holdout.split("0.3", strata, None, seed=1, path="log")
    other = holdout.split("0.3", strata, None, seed=2, path="log")
    assert (first.held_out == again.held_out).all()
    assert (first.held_out != other.held_out).any()
    per_slice = pd.Series(first.held_out).groupby(strata).sum().to_dict()
    assert per_slice == {"x": 15, "y": 9, "z": 6}


@pytest.mark.parametrize("size", [1, 2, 3])
def test_holdout_fraction_of_small_slices_is_the_fraction_of_the_questions(size):
    """60 questions in slices of 1, 2 or 3 at 30%: 18 held out, as the page says, spread over
    the slices at random and never more than a slice's share rounded up (rounded slice by
    slice, slices of 1 held out none and slices of 2 half the questions)."""
    strata = pd.Series([f"s{i // size}" for i in range(60)])
    held = [holdout.split("0.3", strata, None, seed=s, path="log").held_out for s in (0, 1)]
    assert [h.sum() for h in held] == [18, 18] and (held[0] != held[1]).any()
    assert pd.Series(held[0]).groupby(strata).sum().max() == math.ceil(0.3 * size)


def test_holdout_with_clusters_holds_out_whole_clusters_and_resamples_them(tmp_path):
    """20 documents of 5 questions, --cluster doc_id --holdout 0.5: 10 whole documents held
    out (a document on both sides carries its luck into the held-out questions), and the
    held-out interval resamples them as every other interval does, not single questions."""
    rng = np.random.default_rng(9)
    doc = np.repeat(np.arange(20), 5)
    shared = rng.normal(0, 0.3, 20)[doc]
    logs = []
    for name, shift in (("a", 0.0), ("b", 0.02), ("c", 0.01)):
        values = 0.5 + (shared if shift else 0.0) + shift + rng.normal(0, 0.1, 100)
        frame = pd.DataFrame(
            {
                "question_id": [f"q{i}" for i in range(100)],
                "doc_id": [f"d{d}" for d in doc],
                "faithfulness": np.clip(values, 0, 1),
            }
        )
        frame.to_parquet(tmp_path / f"{name}.parquet")
        logs.append(tmp_path / f"{name}.parquet")
    options = (*FAST, "--cluster", "doc_id", "--holdout", "0.5")
    doc_json = compare_runs(tmp_path / "out", *logs, options=options)
    h = doc_json["holdout"]
    assert h["rule"] == "50% of the clusters, drawn at random (seed 0)"  # no slice logged
    assert (h["n_held_out"], h["held_out"]["clusters"]) == (50, 10)
    assert (
        h["held_out"]["interval"]
        == doc_json["comparisons"][0]["metrics"]["faithfulness"]["interval"]
    )
    split = holdout.split("0.5", pd.Series([None] * 100), None, 0, "log", doc.astype(str))
    per_doc = pd.Series(split.held_out).groupby(doc).mean()
    assert set(per_doc) == {0.0, 1.0} and per_doc.sum() == 10
    # one document held out gives no interval (it printed [+nan, +nan]): refused
    one = np.repeat(["d0", "d1"], 50)
    with pytest.raises(InputError, match="holds out the questions of one cluster"):
        holdout.split("0.5", pd.Series([None] * 100), None, 0, "log", one)


def test_holdout_fraction_is_drawn_within_the_slices_of_slice_option(tmp_path):
    """--slice topic, no slice column: half of each topic is held out (20 of 40 x, 10 of 20 y),
    so B, better by 1 on x only, differs by 20/30 there; the draw ignored topic and still said
    "within each slice"."""
    frame = pd.DataFrame(
        {
            "question_id": [f"q{i}" for i in range(60)],
            "topic": ["x"] * 40 + ["y"] * 20,
            "faithfulness": 0.0,
        }
    )
    frame.to_parquet(tmp_path / "a.parquet")
    frame.assign(faithfulness=[1.0] * 40 + [0.0] * 20).to_parquet(tmp_path / "b.parquet")
    options = (*FAST, "--slice", "topic", "--holdout", "0.5")
    h = compare_runs(
        tmp_path / "out", tmp_path / "a.parquet", tmp_path / "b.parquet", options=options
    )["holdout"]
    assert h["rule"] == "50% of the questions, drawn within each slice (seed 0)"
    assert h["held_out"]["diff"] == pytest.approx(20 / 30)
    assert h["selection_diff"] == pytest.approx(20 / 30)


def test_holdout_by_a_number_matches_a_float_column():
    values = pd.Series(["0.0", "1.0", "2.0"] * 10)
    chosen = holdout.split("split=1", pd.Series([None] * 30), values, seed=0, path="log")
    assert chosen.held_out.tolist() == [False, True, False] * 10


def test_holdout_by_a_flag_matches_it_in_any_case():
    """A boolean column's slices read "true" and "false", as text True and False do: the
    --holdout is_test=True a Python user writes held out no question ("leaves 0 held-out")."""
    values = pd.Series(["true", "false", "false"] * 10)
    for wanted in ("True", "true", "TRUE"):
        chosen = holdout.split(f"is_test={wanted}", pd.Series([None] * 30), values, 0, "log")
        assert chosen.held_out.tolist() == [True, False, False] * 10
    text = pd.Series(["Truth", "true"] * 15)  # a word that only begins so is no flag
    assert holdout.split("k=True", pd.Series([None] * 30), text, 0, "log").held_out.sum() == 15


def test_holdout_by_column_value_and_refusals():
    values = pd.Series(["test"] * 12 + ["dev"] * 20 + [None] * 3)
    chosen = holdout.split("split=test", pd.Series([None] * 35), values, seed=0, path="log")
    assert chosen.held_out.tolist() == [True] * 12 + [False] * 23
    with pytest.raises(InputError, match="each side needs 10 or more"):
        holdout.split("split=dev", pd.Series([None] * 20), values[:20], seed=0, path="log")
    for bad in ("0", "1.5", "=x", "split=", "many"):
        with pytest.raises(ValueError):
            holdout.parse(bad)


def test_the_best_is_chosen_on_the_rest_and_measured_on_the_held_out_only():
    n = 40
    held = np.arange(n) < 20  # the first 20 are held out
    base = np.zeros(n)
    lucky = np.where(held, 0.0, 0.5)  # best on the selection questions, no gain held out
    steady = np.full(n, 0.2)
    result = holdout.evaluate(
        holdout.Split("rule", held),
        "m",
        base,
        [("steady", steady), ("lucky", lucky)],
        binary=False,
        n_boot=200,
        confidence=0.95,
        seed=0,
        question_ids=np.arange(n),
    )
    assert result.chosen == "lucky" and result.selection_diff == pytest.approx(0.5)
    assert list(result.question_ids) == list(range(20))
    assert (result.n_selection, result.n_held_out) == (20, 20)
    assert result.held_out.n == 20 and result.held_out.diff == pytest.approx(0.0)
    expected = "on the held-out questions alone its difference is 0.000, 95% interval ["
    assert expected in result.sentence


def test_the_held_out_sentence_gives_the_test_and_says_when_it_disagrees():
    """5 of 15 held-out questions fixed, none broken: the interval (the wider of the bootstrap's
    and Tango's) excludes zero, but McNemar's exact p is 2 x 0.5^5 = 0.0625. The sentence gave
    the interval alone, which reads as more than the evidence holds."""
    n = 30
    held = np.arange(n) < 15
    base = np.zeros(n)
    fixed = np.where(np.arange(n) < 5, 1.0, 0.0)
    result = holdout.evaluate(
        holdout.Split("rule", held), "correct", base, [("b", fixed)],
        binary=True, n_boot=2000, confidence=0.95, seed=0, question_ids=np.arange(n),
    )  # fmt: skip
    c = result.held_out
    assert (c.fixed, c.broken, c.p) == (5, 0, pytest.approx(0.0625))
    assert c.ci_low > 0
    assert result.sentence.endswith(
        ", McNemar exact test p = 0.062: the test and the interval disagree at 95%, so the "
        "evidence is borderline."
    )
    agreeing = holdout.evaluate(
        holdout.Split("rule", held), "correct", base, [("b", base)],
        binary=True, n_boot=2000, confidence=0.95, seed=0, question_ids=np.arange(n),
    )  # fmt: skip
    assert agreeing.sentence.endswith(", McNemar exact test p = 1.000.")


def test_a_side_scored_on_fewer_than_10_questions_is_refused():
    """split counts the questions; missing scores can leave fewer scored in both runs: 12 held
    out with the candidate's score missing on 8 reported an interval on 4, and with the
    baseline's missing on all 12 "difference n/a ... McNemar exact test p = 1.000"."""
    n = 40
    held = np.arange(n) < 12
    base = np.zeros(n)
    gaps = np.where(np.arange(n) < 8, np.nan, 1.0)  # missing on 8 of the 12 held out
    with pytest.raises(InputError) as refused:
        holdout.evaluate(
            holdout.Split("rule", held), "correct", base, [("b", gaps)],
            binary=True, n_boot=200, confidence=0.95, seed=0, question_ids=np.arange(n),
            asked="log: --holdout 0.3",
        )  # fmt: skip
    assert str(refused.value) == (
        "log: --holdout 0.3 leaves 4 of the 12 held-out questions with a correct score in both "
        "the baseline and b; each side needs 10 or more: hold out more questions, or log the "
        "missing scores"
    )
    other = np.where(np.arange(n) >= 22, np.nan, 1.0)  # 10 of the 28 others scored ...
    with pytest.raises(InputError, match="leaves 9 of the 28 other questions"):
        holdout.evaluate(  # ... and the baseline's missing on one of them
            holdout.Split("rule", held), "correct", np.where(np.arange(n) == 12, np.nan, base),
            [("b", other)], binary=True, n_boot=200, confidence=0.95, seed=0,
            question_ids=np.arange(n),
        )  # fmt: skip
    ten = np.where(np.arange(n) < 2, np.nan, 1.0)  # 10 of the 12 held out: enough
    kept = holdout.evaluate(
        holdout.Split("rule", held), "correct", base, [("b", ten)],
        binary=True, n_boot=200, confidence=0.95, seed=0, question_ids=np.arange(n),
    )  # fmt: skip
    assert kept.held_out.n == 10


def test_a_holdout_with_its_scores_missing_exits_2_and_writes_nothing(tmp_path):
    ids = [f"q{i:02}" for i in range(40)]
    split = ["h"] * 12 + ["o"] * 28
    correct = [False] * 40
    for name, values in (("a", [None] * 12 + correct[12:]), ("b", [True] * 40)):
        frame = pd.DataFrame({"question_id": ids, "split": split, "correct": values})
        frame.astype({"correct": "boolean"}).to_parquet(tmp_path / f"{name}.parquet")
    code, output = invoke(
        "compare", tmp_path / "a.parquet", tmp_path / "b.parquet", "-o", tmp_path / "r.html",
        "--holdout", "split=h",
    )  # fmt: skip
    assert code == 2, output
    assert "--holdout split=h leaves 0 of the 12 held-out questions with a correct score" in output
    assert "Traceback" not in output and not (tmp_path / "r.html").exists()


def test_holdout_by_a_column_splitting_clusters_says_their_luck_reaches_the_held_out(tmp_path):
    """--cluster doc_id --holdout split=test with split drawn per question: 29 of 30 documents
    had questions on both sides, so the held-out questions shared the document luck that chose
    the best, and the page still said they measure its difference "without this bias"."""
    rng = np.random.default_rng(0)
    doc = np.repeat(np.arange(30), 10)
    split = np.where(rng.random(300) < 0.3, "test", "dev")
    logs = []
    for name, luck in (("a", 0.0), ("b", 0.1), ("c", 0.1), ("d", 0.1)):
        values = 0.5 + rng.normal(0, luck, 30)[doc] + rng.normal(0, 0.2, 300)
        frame = pd.DataFrame({"question_id": [f"q{i}" for i in range(300)],
                              "doc_id": [f"d{d}" for d in doc], "split": split,
                              "faithfulness": np.clip(values, 0, 1)})  # fmt: skip
        frame.to_parquet(tmp_path / f"{name}.parquet")
        logs.append(tmp_path / f"{name}.parquet")
    options = (*FAST, "--cluster", "doc_id", "--holdout", "split=test")
    doc_json = compare_runs(tmp_path / "out", *logs, options=options)
    both = pd.DataFrame({"doc": doc, "held": split == "test"}).groupby("doc")["held"].nunique()
    assert doc_json["holdout"]["straddling"] == int((both == 2).sum()) == 29
    page = html.unescape((tmp_path / "out" / "r.html").read_text())
    assert (
        "29 clusters (--cluster) have questions on both sides: the held-out ones share their "
        "luck with those the choice was made on, so this difference still carries some of the "
        "winner's curse; hold out whole clusters (a fraction draws them)."
    ) in page
    assert "the held-out ones (--holdout) do." not in page
    whole = compare_runs(tmp_path / "whole", *logs, options=(*FAST, "--cluster", "doc_id",
                                                             "--holdout", "0.3"))  # fmt: skip
    assert whole["holdout"]["straddling"] == 0


def test_holdout_by_a_column_its_samples_disagree_on_is_refused(tmp_path):
    """A split drawn per row of a log of 3 answers a question: each question fell on the side of
    whichever of its rows came first, so the same rows in another order gave another held-out
    set and verdict; --slice refuses such a column, and so does --holdout."""
    rows = [{"question_id": f"q{i:02}", "sample": s, "correct": (i + s) % 3 > 0,
             "split": "test" if (i * 3 + s) % 4 == 0 else "dev"}
            for i in range(60) for s in range(3)]  # fmt: skip
    logs = []
    for name in "abc":
        pd.DataFrame(rows).to_parquet(tmp_path / f"{name}.parquet")
        logs.append(tmp_path / f"{name}.parquet")
    code, output = invoke(*["compare", *logs], "-o", tmp_path / "r.html", "--holdout", "split=test")
    assert code == 2 and not (tmp_path / "r.html").exists()
    assert output.strip().endswith(
        "column 'split' (asked for by --holdout) has more than one value for question 'q00' and "
        "44 others; a question's samples share its side of the holdout: give each question one "
        "value"
    )


def _split_logs(tmp_path, candidate_rows):
    """A baseline of one answer a question split test/dev, and a candidate of ``candidate_rows``."""
    base = [{"question_id": f"q{i:02}", "correct": i % 3 > 0,
             "split": "test" if i % 3 == 0 else "dev"} for i in range(60)]  # fmt: skip
    logs = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    pd.DataFrame(base).to_parquet(logs[0])
    pd.DataFrame(candidate_rows(base)).to_parquet(logs[1])
    return logs


def test_holdout_by_a_column_a_candidate_s_samples_disagree_on_is_refused(tmp_path):
    """The candidate's own column is checked as the baseline's is: its 3 samples of q00 on two
    sides of the split were accepted, where --slice refused them."""

    def samples(base):
        rows = [dict(r, sample=s) for r in base for s in range(3)]
        rows[1]["split"] = "test" if rows[1]["split"] == "dev" else "dev"  # q00, sample 1
        return rows

    logs = _split_logs(tmp_path, samples)
    code, output = invoke("compare", *logs, "-o", tmp_path / "r.html", "--holdout", "split=test")
    assert code == 2 and not (tmp_path / "r.html").exists()
    assert output.strip().endswith(
        "b.parquet: column 'split' (asked for by --holdout) has more than one value for question "
        "'q00'; a question's samples share its side of the holdout: give each question one value"
    )


def test_a_candidate_whose_split_differs_from_the_baseline_s_is_warned_of(tmp_path):
    """Every question on the other side of the split in B's log: the held-out difference rests
    on the baseline's split, which B's log contradicts; --slice warned of such a column, and
    --holdout said nothing."""

    def flipped(base):
        return [dict(r, split="dev" if r["split"] == "test" else "test") for r in base]

    logs = _split_logs(tmp_path, flipped)
    doc = compare_runs(tmp_path / "out", *logs, options=(*FAST, "--holdout", "split=test"))
    note = (
        "--holdout column 'split' has another value in run B than in run A for 60 paired "
        "questions (q00, q01, q02, q03, q04, q05, q06, q07, q08, q09 and 50 more); the held-out "
        "questions are run A's"
    )
    assert note in doc["warnings"]
    assert doc["holdout"]["n_held_out"] == 20  # the baseline's split: q00, q03, ... q57
    agreeing = _split_logs(tmp_path, lambda base: base)
    doc = compare_runs(tmp_path / "same", *agreeing, options=(*FAST, "--holdout", "split=test"))
    assert not any("--holdout column" in w for w in doc["warnings"])


def test_holdout_end_to_end(tmp_path):
    doc = compare_runs(tmp_path, A, B, C, options=(*FAST, "--holdout", "0.4"))
    h = doc["holdout"]
    assert doc["params"]["holdout"] == "0.4"
    # round(0.4 n) of each slice: refunds 66, changes 64, baggage 55, rule_lookup 48, group 7
    assert h["n_held_out"] == 26 + 26 + 22 + 19 + 3 and h["n_selection"] == 240 - 96
    assert h["chosen"] in {"fare_rules_b_reranker", "fare_rules_c_prompt"}
    assert h["held_out"]["n"] == 96
    # one comparison, at --confidence, beside the candidates' Bonferroni 97.5% intervals: the
    # sentence names its level, which the page would otherwise leave to be read as 97.5%
    assert h["confidence"] == 0.95
    page = (tmp_path / "r.html").read_text()
    assert "Held-out check" in page
    assert re.search(r"held-out questions alone its difference is [^<]*, 95% interval \[", page)
    # the winner's curse points to the held-out check, not to the option already given
    assert doc["winners_curse"]["held_out"] is True
    assert "without this bias: the held-out ones (--holdout) do." in page
    assert "holds some out for that" not in page
    code, output = invoke("compare", A, B, "-o", tmp_path / "x.html", "--holdout", "2")
    assert code == 2 and "--holdout" in output and not (tmp_path / "x.html").exists()


def test_the_held_out_questions_are_in_the_per_question_rows(tmp_path):
    """A fraction is drawn by the seed within each slice: the JSON's holdout gave its counts
    and difference, but not which questions, so the held-out difference could not be recomputed
    from the rows. Each row now says whether its question is held out: the chosen candidate's
    rows held out give the held-out difference and count, and every candidate's rows mark the
    same questions."""
    doc = compare_runs(tmp_path, A, B, C, options=(*FAST, "--holdout", "0.4", "--seed", "7"))
    h, rows = doc["holdout"], pd.DataFrame(doc["per_question"])
    assert "question_ids" not in h
    metric = h["metric"]
    chosen = rows[(rows["candidate"] == h["chosen"]) & rows["held_out"]]
    assert len(chosen) == h["n_held_out"] == 96
    diff = (chosen[f"{metric}_b"].astype(float) - chosen[f"{metric}_a"].astype(float)).mean()
    assert diff == pytest.approx(h["held_out"]["diff"])
    marked = rows.groupby("candidate")["held_out"].apply(
        lambda s: frozenset(rows.loc[s[s].index, "question_id"])
    )
    assert len(set(marked)) == 1
    other = compare_runs(
        tmp_path / "seed8", A, B, C, options=(*FAST, "--holdout", "0.4", "--seed", "8")
    )
    again = pd.DataFrame(other["per_question"])
    assert set(again.loc[again["held_out"], "question_id"]) != set(
        rows.loc[rows["held_out"], "question_id"]
    )


def test_the_winner_s_curse_names_the_candidate_the_held_out_check_measures(tmp_path):
    """Held out: slice h (20 questions). "overall" gains 10 of 40 elsewhere and 20 of 20 in h,
    +30/60 = +0.500 in all; "rest" gains 20 of 40 elsewhere and none in h, +0.333. overall
    comes out best, but rest is the best on the other 40 and the one measured held out: the
    paragraph said the held-out questions measured the best's difference."""
    ids = [f"q{i:02}" for i in range(60)]
    held = np.arange(60) >= 40
    logs = {
        "base": np.zeros(60, dtype=bool),
        "overall": held | (np.arange(60) < 10),
        "rest": np.arange(60) < 20,
    }
    for name, correct in logs.items():
        frame = pd.DataFrame({"question_id": ids, "split": np.where(held, "h", "o")})
        frame.assign(correct=correct).to_parquet(tmp_path / f"{name}.parquet")
    out = tmp_path / "out"
    options = (*FAST, "--holdout", "split=h", "--markdown", out / "r.md")
    doc = compare_runs(out, *(tmp_path / f"{name}.parquet" for name in logs), options=options)
    assert (doc["winners_curse"]["best"], doc["holdout"]["chosen"]) == ("overall", "rest")
    assert doc["winners_curse"]["held_out_candidate"] == "rest"
    assert doc["holdout"]["selection_diff"] == pytest.approx(0.5)
    said = (
        "Only questions that played no part in the choice measure its difference without this "
        "bias, and none measure overall&#39;s here: on the questions not held out the best is "
        "rest, so the held-out check (--holdout) measures rest&#39;s difference instead."
    )
    assert said in (out / "r.html").read_text()
    assert html.unescape(said) in (out / "r.md").read_text()
    assert "the held-out ones (--holdout) do" not in (out / "r.html").read_text()


def test_two_runs_with_a_holdout_measure_the_one_candidate_on_the_held_out(tmp_path):
    """One candidate and --holdout took the layout of several: the summary opened on "1
    candidate against A", two empty lines where the family's sentence goes, and had neither the
    verdict nor the table of metrics; the page asked "Which candidate beats the baseline?" over
    an empty paragraph. Both are now the two-run ones, with the held-out check under the gate."""
    code, output = invoke(
        "compare", A, B, "-o", tmp_path / "r.html", "--holdout", "0.3", "--markdown",
        tmp_path / "r.md", "--require", "correct >= -0.02",
    )  # fmt: skip
    assert code == 0, output
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["holdout"]["chosen"] == "B" and doc["holdout"]["n_candidates"] == 1
    assert doc["family"] is None
    held = (
        "Held out: 30% of the questions, drawn within each slice (seed 0) (72 questions). B, the "
        "only candidate, differs by +0.101 in correct on the other 168; on the held-out questions "
        "alone its difference is +0.069, 95% interval {}\u22120.003, +0.159{}, McNemar exact test "
        "p = 0.125."
    )
    markdown = (tmp_path / "r.md").read_text()
    assert markdown.startswith(
        "## ragreport: fare\\_rules\\_a\\_baseline.parquet vs "
        "fare\\_rules\\_b\\_reranker.parquet\n\n"
        "**B better** on **correct**. The 95% interval of B \u2212 A for correct is "
    )
    escaped = held.format("\\[", "\\]")  # brackets written literal in Markdown
    assert "\n### Gate: PASS\n" in markdown
    assert f"\n### Held-out check\n\n{escaped}\n\n### Metrics\n" in markdown
    assert "\n\n\n" not in markdown and "candidate against" not in markdown
    page = (tmp_path / "r.html").read_text()
    assert "<h1>Is B better than A?</h1>" in page and "Which candidate" not in page
    assert 'id="family"' not in page
    assert re.search(r'id="holdout"><strong>Held-out check</strong>\s*<p>' + re.escape(
        held.format("[", "]")), page)  # fmt: skip
    assert output.startswith("B better: The 95% interval of B \u2212 A for correct is ")


def test_static_chart_ids_are_their_chart_s_own(three):
    """Each static SVG's gradient and clip-path ids carry its chart's id: the live chart draws
    the same bare ids (gradient_0), and a url(#gradient_0) that resolved into the hidden static
    copy painted nothing (the matrix legend's colour bar went missing)."""
    out, _ = three
    page = (out / "r.html").read_text()
    defined = r'<(?:linearGradient|radialGradient|clipPath|pattern)\s[^>]*?id="([^"]+)"'
    ids = re.findall(defined, page)
    assert ids and len(ids) == len(set(ids))
    assert not [i for i in ids if re.fullmatch(r"(gradient|clip|pattern)_?\d+", i)]
    assert re.search(r"url\(#run-matrix-gradient_\d+\)", page)  # vl-convert numbers them


def test_a_later_candidate_may_log_a_column_the_first_does_not(tmp_path):
    """Baseline and second candidate log faithfulness, the first candidate does not: each
    candidate's per-question rows keep their own columns (this ended in a traceback)."""
    rng = np.random.default_rng(0)
    ids = [f"q{i}" for i in range(60)]
    base = pd.DataFrame({"question_id": ids, "correct": rng.random(60) < 0.5,
                         "faithfulness": rng.random(60)})  # fmt: skip
    paths = [tmp_path / f"{name}.parquet" for name in ("base", "plain", "judged")]
    base.to_parquet(paths[0])
    base.drop(columns="faithfulness").assign(correct=rng.random(60) < 0.6).to_parquet(paths[1])
    base.assign(faithfulness=rng.random(60)).to_parquet(paths[2])
    result = CliRunner().invoke(
        cli, ["compare", *map(str, paths), "-o", str(tmp_path / "r.html"), "--n-boot", "100"]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads((tmp_path / "r.json").read_text())["per_question"]
    judged = next(r for r in rows if r["candidate"] == "judged")
    plain = next(r for r in rows if r["candidate"] == "plain")
    assert list(judged)[:1] == ["candidate"] and judged["faithfulness_b"] is not None
    assert plain.get("faithfulness_b") is None


def test_a_borderline_verdict_reads_borderline_in_the_table_of_candidates(tmp_path):
    """6 of 40 questions fixed, none broken: the 97.5% interval of each of 2 candidates
    excludes zero (the score statistic 6 / sqrt(6) = 2.45 is past z = 2.24, and no fixed
    question in a resample has chance (34/40)^40 = 0.15%), McNemar's exact p is 2 / 2^6 =
    0.031, above 0.025. The candidate's section called the evidence borderline; the summary
    tables said only "better"."""
    out, logs = tmp_path / "out", six_of_forty_fixed(tmp_path)
    doc = compare_runs(out, *logs, options=(*FAST, "--markdown", out / "r.md"))
    summary = {row["candidate"]: row for row in doc["summary"]}
    assert summary["fixes"]["ci_low"] > 0 and summary["fixes"]["p"] == pytest.approx(0.03125)
    assert (summary["fixes"]["outcome"], summary["fixes"]["borderline"]) == ("B better", True)
    assert summary["same"]["borderline"] is False
    assert doc["comparisons"][0]["verdict"]["borderline"] is True
    assert "| 6 / 0 | better (borderline) |" in (out / "r.md").read_text()
    assert ">better (borderline)</td>" in (out / "r.html").read_text()


def test_a_run_s_own_share_in_the_run_chart_takes_wilson_s_score_interval(tmp_path, write_log):
    """A run with 3 of 3 correct: the run chart read its mean with the bootstrap alone, every
    resample 3 of 3, so [1, 1], where a candidate rule and the stage table read Wilson's score
    interval for a share, whose lower bound at p = 1 is n / (n + z^2) = 0.4385 at 95%."""
    ids = ["q0", "q1", "q2"]
    base = write_log(tmp_path / "base.parquet", rows(ids, [True, False, True]))
    b = write_log(tmp_path / "b.parquet", rows(ids, [True, True, True]))
    c = write_log(tmp_path / "c.parquet", rows(ids, [False, True, True]))
    doc = compare_runs(tmp_path / "out", base, b, c)
    n, p, z = 3, 1.0, stats.norm.ppf(0.975)
    wilson = (n / (n + z * z)) * (
        p + z * z / (2 * n) - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    )
    assert wilson == pytest.approx(0.4385, abs=5e-5)
    (own,) = [m for m in doc["run_means"] if m["label"] == "b"]
    assert own["mean"] == 1.0
    assert (own["ci_low"], own["ci_high"]) == pytest.approx((wilson, 1.0), abs=1e-12)


@pytest.mark.parametrize(
    ("value", "n", "said"),
    [("0.004", 5000, "0.4%"), ("0.996", 5000, "99.6%"), ("0.125", 160, "12.5%")],
)
def test_a_holdout_fraction_is_said_as_given(value, n, said):
    """0.004 of 5,000 read "0% of the questions ... (20 questions)", 0.996 "100%" beside 20
    others kept, and 0.125 "12%"."""
    split = holdout.split(value, pd.Series([None] * n), None, 0, "log")
    assert split.rule == f"{said} of the questions, drawn at random (seed 0)"


def test_the_held_out_sentence_counts_the_questions_its_interval_stands_on(tmp_path):
    """A fifth of faithfulness missing: the sentence said "(40 questions)" beside an interval
    over the held-out questions scored in both runs only."""
    rng = np.random.default_rng(3)
    logs = []
    for run in "abc":
        values = rng.random(200)
        values[rng.random(200) < 0.2] = np.nan
        frame = pd.DataFrame({"question_id": [f"q{i}" for i in range(200)], "faithfulness": values})
        logs.append(tmp_path / f"{run}.parquet")
        frame.to_parquet(logs[-1])
    code, output = invoke(
        "compare", *logs, "-o", tmp_path / "r.html", "--holdout", "0.2", "--n-boot", 500
    )  # fmt: skip
    assert code == 0, output
    held = json.loads((tmp_path / "r.json").read_text())["holdout"]
    scored = held["held_out"]["n"]
    assert held["n_held_out"] == 40 and scored < 40
    page = (tmp_path / "r.html").read_text()
    assert f"(seed 0) (40 questions, {scored} scored in both). c was chosen" in page
