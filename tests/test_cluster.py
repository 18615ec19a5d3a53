"""--cluster: questions about one document are resampled and permuted together."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import two_run_view
from scipy import stats
from test_power_sentences import cluster_multiplier_oracle
from test_readers import fail
from test_slices_audit import compare, question

import reportgen
from reportgen.analysis.stats import compare_metric, design_effect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import simulate  # noqa: E402
import simulate_clusters  # noqa: E402


def test_design_effect_hand_worked():
    # two documents: both questions of the first gain 1, both of the second 0.
    # mean 0.5; cluster residuals S_g - mean n_g = 2 - 1, 0 - 1 = +1, -1;
    # clustered variance 2 / (2 - 1) x (1 + 1) / 4^2 = 0.25; naive s^2 / n = (1/3) / 4;
    # design effect 0.25 / (1/12) = 3
    diff = np.array([1.0, 1.0, 0.0, 0.0])
    assert design_effect(diff, np.array([0, 0, 1, 1])) == pytest.approx(3.0)
    # one question per cluster: (n / (n - 1)) sum (d - mean)^2 / n^2 = s^2 / n exactly
    assert design_effect(diff, np.arange(4)) == pytest.approx(1.0)
    # equal cluster means: 0, which the sums 0.1 + 0.2 + 0.3 and 0.3 + 0.2 + 0.1 miss by 1e-16
    assert design_effect(np.array([0.1, 0.2, 0.3, 0.3, 0.2, 0.1]), np.repeat([0, 1], 3)) == 0.0
    # B - A one value: both variances are 0, and 0 / 0 is no design effect (it read 1)
    assert design_effect(np.zeros(4), np.array([0, 0, 1, 1])) is None
    assert design_effect(np.full(4, 0.25), np.array([0, 0, 1, 1])) is None


def test_design_effect_is_the_variance_the_clustered_interval_uses():
    # clusters of 1 and 3 questions, d = 1, 0, 0, 0: n 4, sums 1, 0, mean 0.25, residuals
    # +0.75, -0.75; CR2: (0.5625 / 0.75 + 0.5625 / 0.25) / 16 = 0.1875; the cluster means'
    # form: (1/16 + 9/16) x var(1, 0) = 0.625 x 0.5 = 0.3125, the larger; naive s^2 / n =
    # 0.25 / 4; design effect 0.3125 / 0.0625 = 5 (the ratio estimator's 2.25 was stated
    # before, beside an interval of the larger variance)
    diff = np.array([1.0, 0.0, 0.0, 0.0])
    assert design_effect(diff, np.array([0, 1, 1, 1])) == pytest.approx(5.0)
    # as the comparison states it, beside its cluster standard error: 2 of 240 questions in
    # one cluster
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 2, 240).astype(float), rng.integers(0, 2, 240).astype(float)
    clusters = np.array(["p"] * 2 + ["q"] * 238)
    c, _ = compare_metric(
        "correct", a, b, binary=True, n_boot=2000, confidence=0.95, seed=1, clusters=clusters
    )
    naive = c.sd**2 / c.n
    assert c.design_effect == pytest.approx(c.cluster_se**2 / naive)


def test_cluster_interval_resamples_whole_clusters():
    """Every question of a document moves together: the cluster bootstrap's means take only
    the values of cluster resamples, the test flips clusters (2^4 = 16 flips, exact)."""
    labels = np.repeat(np.arange(4), 5)
    diff = np.repeat([0.4, 0.2, -0.1, 0.3], 5)
    a = np.zeros(20)
    c, means = compare_metric(
        "m", a, a + diff, binary=False, n_boot=2000, confidence=0.95, seed=1, clusters=labels
    )
    assert (c.clusters, c.n) == (4, 20)
    # equal sizes: a resample's mean is the mean of 4 drawn cluster values (multiples of 0.1),
    # so 40 x mean is a whole number; resampling questions would give multiples of 0.1 / 20
    assert np.allclose(means * 40, np.round(means * 40))
    assert not np.allclose(means * 40, np.round(means * 40)[0])  # and they vary
    # flips of the cluster sums (2, 1, -0.5, 1.5), total 4: |sum| >= 4 for (+,+,+,+) = 4 and
    # (+,+,-,+) = 5 and their two negations: 4 of 16
    assert c.p == pytest.approx(4 / 16)
    assert c.test == "paired permutation of clusters"


def _clustered(diffs: list[list[float]]):
    """compare_metric of B - A given per cluster, seed 1, 2,000 resamples, no range cut."""
    labels = np.repeat(np.arange(len(diffs)), [len(d) for d in diffs])
    diff = np.concatenate([np.asarray(d, dtype=float) for d in diffs])
    a = np.zeros(len(diff))
    return compare_metric(
        "m", a, a + diff, binary=False, n_boot=2000, confidence=0.95, seed=1, clusters=labels
    )[0]


def test_three_clusters_take_student_t_on_their_means():
    """3 documents of 4 questions, each document's questions moving together: +0.4, +0.1,
    -0.2. The cluster bootstrap cannot leave [-0.2, +0.4] (it covered 74% at 3 clusters); by
    hand, t on the 3 means: mean 0.1, sd 0.3, se 0.3 / sqrt(3), t(2, 0.975) = 4.303."""
    c = _clustered([[0.4] * 4, [0.1] * 4, [-0.2] * 4])
    half = stats.t.ppf(0.975, 2) * 0.3 / np.sqrt(3)
    assert (c.ci_low, c.ci_high) == pytest.approx((0.1 - half, 0.1 + half))
    assert c.ci_low < -0.6 and c.ci_high > 0.8
    assert c.interval == "cluster bootstrap and t over clusters, the wider on each side"


def test_unequal_clusters_a_shared_shift_per_document():
    """3 and 17 questions (the probe's case): +0.5 on the first, 0 on the second; mean 1.5 / 20
    = 0.075. Weights 0.15, 0.85; were each document's mean one draw of the same spread, the
    mean's variance is (0.15^2 + 0.85^2) x var(0.5, 0) = 0.745 x 0.125 = 0.093125, above the
    CR2 form's (residuals +-1.275: 1.275^2 (1 / 0.85 + 1 / 0.15) / 20^2 = 0.031875)."""
    c = _clustered([[0.5] * 3, [0.0] * 17])
    half = stats.t.ppf(0.975, 1) * np.sqrt(0.745 * 0.125)
    assert (c.ci_low, c.ci_high) == pytest.approx((0.075 - half, 0.075 + half))


def test_unequal_clusters_independent_questions():
    """1, 1 and 2 questions: +0.5, +0.5 and (0, 0); mean 0.25, residuals S_g - n_g mean =
    +0.25, +0.25, -0.5. CR2: (0.0625 / 0.75 + 0.0625 / 0.75 + 0.25 / 0.5) / 4^2 = 1 / 24,
    above the shared-shift form, (1/16 + 1/16 + 1/4) x var(0.5, 0.5, 0) = 0.375 / 12 (no
    within-document noise to take out: the two questions tie). Degrees of freedom 1.8
    (test_degrees_of_freedom_of_unequal_clusters)."""
    c = _clustered([[0.5], [0.5], [0.0, 0.0]])
    half = stats.t.ppf(0.975, 1.8) * np.sqrt(1 / 24)
    assert (c.ci_low, c.ci_high) == pytest.approx((0.25 - half, 0.25 + half))
    assert (c.cluster_se, c.cluster_df) == pytest.approx((np.sqrt(1 / 24), 1.8))


def test_a_cluster_of_one_question_brings_no_spread_of_its_own():
    """1 question (+1), 1 question (0) and a document of 2 (+1, 0): mean 0.5, share 0.25, 0.25,
    0.5. CR2: residuals 0.5, -0.5, 0: (0.25 / 0.75 + 0.25 / 0.75) / 16 = 1 / 24. The cluster
    means 1, 0, 0.5 vary by 0.25; weighted, 0.375 x 0.25 = 0.09375, which the report took
    before: most of it is the single questions' own noise. By the analysis of variance: within
    the document (1 - 0.5)^2 + (0 - 0.5)^2 = 0.5 over n - G = 1 degree of freedom, 0.5; between,
    (1 x 0.25 + 1 x 0.25 + 2 x 0) / 2 = 0.25; n_0 = (4 - 6 / 4) / 2 = 1.25; the shared spread
    (0.25 - 0.5) / 1.25 = -0.2; the variance 0.375 x -0.2 + 0.5 / 4 = 0.05, above CR2: se
    sqrt(0.05); design effect 0.05 over s^2 / n = (1/3) / 4, 0.6."""
    c = _clustered([[1.0], [0.0], [1.0, 0.0]])
    assert c.cluster_se == pytest.approx(np.sqrt(0.05))
    half = stats.t.ppf(0.975, 1.8) * np.sqrt(0.05)
    assert (c.ci_low, c.ci_high) == pytest.approx((0.5 - half, 0.5 + half))
    assert c.design_effect == pytest.approx(0.6)


@pytest.mark.parametrize("offset", [1e7, 1e8, 1e9])
def test_a_difference_far_from_zero_beside_its_spread_keeps_its_standard_error(offset):
    """A shift of every B - A moves no spread: the standard error over clusters is the same. The
    within-cluster sum of squares taken as sum d^2 - S_g^2 / n_g lost it to float cancellation:
    -2.3% at 1e7 times the spread, -28% at 1e8, +56% at 1e9."""
    rng = np.random.default_rng(5)
    sizes = [3, 17, 1, 1, 1, 1, 1, 1, 1, 1, 20, 2]
    diffs = [list(rng.normal(0, 0.5, size) + rng.normal()) for size in sizes]
    base = _clustered(diffs)
    moved = _clustered([[d + offset for d in cluster] for cluster in diffs])
    assert moved.cluster_se == pytest.approx(base.cluster_se, rel=1e-6)


def _satterthwaite(sizes: list[int]) -> float:
    """tr(M)^2 / tr(M^2) of the n x n matrix M whose form y' M y is the CR2 variance of the
    mean (up to 1 / n^2): M = sum_g (I - J/n) 1_g 1_g' (I - J/n) / (1 - n_g / n)."""
    n, codes = sum(sizes), np.repeat(np.arange(len(sizes)), sizes)
    centre = np.eye(n) - np.ones((n, n)) / n
    m = np.zeros((n, n))
    for g, size in enumerate(sizes):
        u = centre @ (codes == g).astype(float)
        m += np.outer(u, u) / (1 - size / n)
    return np.trace(m) ** 2 / np.trace(m @ m)


@pytest.mark.parametrize(
    "sizes", [[1, 1, 2], [5, 5, 5, 5], [17, 1, 1, 1], [10, 5, 3, 2], [10] * 6 + [1] * 20]
)
def test_degrees_of_freedom_of_unequal_clusters(sizes):
    """Student's t over clusters takes Satterthwaite's degrees of freedom of the CR2 variance
    (capped at G - 1): the closed form against the n x n matrices it is of. 1, 1 and 2
    questions by hand: weights 4/3, 4/3, 2 and n_g (1 - n_g / n) = 0.75, 0.75, 1 give trace
    4; trace of the square 2 (16/9)(0.5625 - 1/16) + 4 (1 - 1) + (4/3 + 4/3 + 8)^2 / 16 = 80/9;
    16 / (80/9) = 1.8. Equal sizes: G - 1."""
    from reportgen.analysis.stats import cluster_degrees

    want = min(len(sizes) - 1, _satterthwaite(sizes))
    assert cluster_degrees(np.array(sizes)) == pytest.approx(want)
    assert cluster_degrees(np.array([1, 1, 2])) == pytest.approx(1.8)
    assert cluster_degrees(np.array([5, 5, 5, 5])) == pytest.approx(3.0)
    assert 9 < cluster_degrees(np.array([10] * 6 + [1] * 20)) < 10  # 26 clusters, not 25 df


def test_questions_without_a_document_are_not_a_design_effect(tmp_path):
    """80 questions drawn independently, 60 in 6 documents of 10 and 20 with no doc_id (each
    its own cluster). The single questions' means carried their whole variance into the spread
    of the cluster means: design effect 6.8 and "no evidence" of a gain that every question
    shows without --cluster. Their own noise is taken out: the design effect is near 1 and the
    verdict the same as over questions."""
    rng = np.random.default_rng(1)
    docs = [None if i % 4 == 0 else f"d{i % 8}" for i in range(80)]
    draws = {run: rng.random(80) < p for run, p in (("a", 0.5), ("b", 0.68))}
    a = [question(i, "s", bool(draws["a"][i]), doc_id=docs[i]) for i in range(80)]
    b = [question(i, "s", bool(draws["b"][i]), doc_id=docs[i]) for i in range(80)]
    code, out, naive = compare(tmp_path, a, b)
    assert code == 0 and naive["verdict"]["outcome"] == "B better", out
    code, out, doc = compare(tmp_path, a, b, "--cluster", "doc_id")
    assert code == 0, out
    c = doc["metrics"]["correct"]
    assert c["clusters"] == 26 and c["design_effect"] < 2, c
    assert 9 < c["cluster_df"] < 10
    assert doc["verdict"]["outcome"] == "B better", doc["verdict"]


def test_two_clusters_no_longer_call_b_better(tmp_path):
    """20 questions about 2 documents; B fixes 3 of one's 10 and 1 of the other's. The cluster
    bootstrap's interval lay within the 2 documents' gains, [+0.1, +0.3], and the verdict said
    "B better" (on null data at 2 clusters it did so in 54% of sets); with one degree of freedom
    t reaches 12.7 se = 1.27 either way, cut to [-1, +1]: no evidence, and a gate asking B to be
    no worse by 0.05 no longer passes on it."""
    a = [question(i, "s", False, doc_id=f"d{i // 10}") for i in range(20)]
    b = [question(i, "s", i in (0, 1, 2, 10), doc_id=f"d{i // 10}") for i in range(20)]
    code, out, doc = compare(tmp_path, a, b, "--cluster", "doc_id")
    assert code == 0, out
    c = doc["metrics"]["correct"]
    assert (c["clusters"], c["diff"]) == (2, pytest.approx(0.2))
    assert (c["ci_low"], c["ci_high"]) == pytest.approx((-1.0, 1.0))
    assert doc["verdict"]["outcome"] == "no evidence of a difference"
    assert "B better" not in doc["verdict"]["reason"]
    rule = ("--require", "correct >= -0.05")  # B no worse by 0.05: the test is not asked
    code, out, _ = compare(tmp_path, a, b, "--cluster", "doc_id", *rule)
    assert code == 1 and "inconclusive (counts as fail)  B  correct >= -0.05" in out, out


@pytest.mark.parametrize("documents", [2, 4])
def test_clusters_that_gained_alike_are_no_evidence_of_a_difference(tmp_path, documents):
    """24 questions about 2 (or 4) documents, B fixing a third of each document's: the means of
    the documents are one value, so the cluster bootstrap and t read [+0.333, +0.333] and the
    interval was Tango's over the 24 questions, [+0.149, +0.533]: "B better" and 'correct >= 0'
    passing, where the test over the documents gives p 0.5 (0.125 for 4). The documents are the
    units: Wilson's bound on the share of them that could differ, as for a score."""
    n = 24
    a = [question(i, "s", False, doc_id=f"d{i % documents}") for i in range(n)]
    b = [question(i, "s", i % 3 == 1, doc_id=f"d{i % documents}") for i in range(n)]
    code, out, doc = compare(tmp_path, a, b, "--cluster", "doc_id")
    assert code == 0 and doc is not None, out
    c = doc["metrics"]["correct"]
    assert (c["clusters"], c["diff"], c["p"]) == (
        documents,
        pytest.approx(1 / 3),
        2 ** (1 - documents),
    )
    z2 = stats.norm.ppf(0.975) ** 2
    share = z2 / (documents + z2)
    assert (c["ci_low"], c["ci_high"]) == pytest.approx(
        (1 / 3 - share * (1 / 3 + 1), 1 / 3 + share * (1 - 1 / 3))
    )
    assert doc["verdict"]["outcome"] == "no evidence of a difference"
    code, out, _ = compare(tmp_path, a, b, "--cluster", "doc_id", "--require", "correct >= 0")
    assert code == 1 and "inconclusive (counts as fail)  B  correct >= 0" in out, out


def test_cluster_option_end_to_end(tmp_path):
    """60 questions about 6 documents: B fixes all of 3 documents, breaks none elsewhere."""
    a = [question(i, "s", False, doc_id=f"d{i // 10}") for i in range(60)]
    b = [question(i, "s", i < 30, doc_id=f"d{i // 10}") for i in range(60)]
    code, out, naive = compare(tmp_path, a, b)
    assert code == 0, out
    assert any("--cluster doc_id" in w for w in naive["warnings"])
    code, out, doc = compare(tmp_path, a, b, "--cluster", "doc_id")
    assert code == 0, out
    c = doc["metrics"]["correct"]
    assert c["clusters"] == 6 and c["design_effect"] > 5
    assert c["ci_high"] - c["ci_low"] > 2 * (
        naive["metrics"]["correct"]["ci_high"] - naive["metrics"]["correct"]["ci_low"]
    )
    assert "6 clusters, design effect" in doc["verdict"]["reason"]
    # power: t over the 6 document means (1, 1, 1, 0, 0, 0: se sqrt(0.3 / 6), 5 degrees of
    # freedom), not the 60
    # questions counted as 60 / design effect independent ones
    assert doc["power"]["min_detectable"] == pytest.approx(
        cluster_multiplier_oracle(5) * np.sqrt(0.3 / 6), rel=0.005
    )
    assert "of sets of 6 clusters like these" in doc["power"]["sentence"]
    assert doc["power"]["min_detectable"] > naive["power"]["min_detectable"]
    assert not any("--cluster" in w for w in doc["warnings"])
    code, out, _ = compare(tmp_path, a, b, "--cluster", "conversation")
    assert code == 2 and "no column 'conversation' (asked for by --cluster)" in out


def test_cluster_intervals_cover_where_naive_ones_do_not():
    reps = 200
    naive, clustered, effect = simulate.cluster_coverage(40, 5, reps, 20260101)
    tolerance = 0.01 + 2.5 * np.sqrt(0.95 * 0.05 / reps)
    assert abs(clustered - 0.95) <= tolerance, clustered
    assert naive < 0.85 and effect > 2, (naive, effect)


@pytest.mark.parametrize("layout", ["equal", "unequal"])
def test_few_clusters_cover_95_percent(layout):
    """bench/simulate_clusters.py, quick: null data sets of 2 and 4 documents (10 questions on
    average, half the variance shared by a document); the cluster bootstrap alone covered about
    50% and 86%."""
    reps = 200
    tolerance = 2.5 * np.sqrt(0.95 * 0.05 / reps)
    for groups in (2, 4):
        r = simulate_clusters.cluster_rates(layout, groups, 0.0, reps, 20261201)
        assert r["report"] >= 0.95 - tolerance, (groups, r)
        assert r["bootstrap"] < 0.9, (groups, r)  # the simulation still sees the old shortfall


def test_the_stated_difference_on_four_unequal_clusters_is_found_80_percent_of_the_time():
    """bench/simulate_clusters.py's power check, quick: documents of 17, 1, 1 and 1 questions,
    half the variance shared; a fresh set with the stated difference (either way) has its
    interval exclude zero in about 80% of sets (80.4% of 2,000). The question-level formula's
    difference was found in 8.8%."""
    reps = 200
    r = simulate_clusters.power_rates("unequal 17+1+1+1", reps, 20261201)
    assert abs(r["now"] - 0.8) <= 2.5 * np.sqrt(0.8 * 0.2 / reps), r
    assert r["before"] < 0.4, r


def test_t_alone_over_many_clusters_misses_as_the_wider_interval_did():
    """bench/simulate_clusters.py's many-clusters check, quick: 1,100 documents of 1 to 5
    questions with a normal shift each take t over the clusters alone in every set, and it
    misses on each side about as often as the wider interval of the cluster bootstrap and t."""
    reps = 100
    r = simulate_clusters.many_rates("normal", 1100, reps, 20261207)
    assert r["limit"] == 1.0, r
    tolerance = 2.5 * np.sqrt(0.025 * 0.975 / reps)
    for side in ("low", "high"):
        assert r[f"now {side}"] <= 0.025 + tolerance, r
        assert abs(r[f"now {side}"] - r[f"before {side}"]) <= 0.02, r
    assert 0.98 <= r["width"] <= 1.0, r


def test_cluster_reaches_the_slices(tmp_path):
    """Slice s is 12 questions about 2 documents, and all 6 broken are one document's: over
    questions McNemar's p is 2 / 2^6 = 0.031, a regression finding; over its 2 documents the
    flips of (-6, 0) all reach |6|, p = 1, no finding. Slice t: 8 documents, 3 fixed in each."""
    a, b = [], []
    for i in range(60):
        doc, place = i // 6, i % 6
        s = doc < 2
        a.append(question(i, "s" if s else "t", s or place >= 3, doc_id=f"d{doc}"))
        b.append(question(i, "s" if s else "t", doc == 1 or not s, doc_id=f"d{doc}"))
    code, out, naive = compare(tmp_path, a, b)
    assert code == 0, out
    flagged = naive["slices"]["slice"]["s"]["correct"]
    assert flagged["p"] == pytest.approx(2 / 2**6) and flagged["finding"]
    code, out, doc = compare(tmp_path, a, b, "--cluster", "doc_id")
    assert code == 0, out
    s = doc["slices"]["slice"]["s"]["correct"]
    assert (s["clusters"], s["p"], s["finding"]) == (2, 1.0, False)
    assert doc["slices"]["slice"]["t"]["correct"]["clusters"] == 8
    assert doc["verdict"]["regressions"] == []
    # a gate's per-slice rule reads the same clustered slices: it fails CI without --cluster
    # and passes with it; a rule on B's own value resamples the 10 documents too
    rules = ("--require", "correct[slice] >= 0", "--require", "candidate.correct >= 0.5")
    code, out, _ = compare(tmp_path, a, b, *rules)
    assert code == 1, out
    code, out, gated = compare(tmp_path, a, b, "--cluster", "doc_id", *rules)
    assert code == 0, out
    own = next(r for r in gated["gate"]["results"] if r["rule"] == "candidate.correct >= 0.5")
    c = compare_metric(
        "correct",
        np.zeros(60),
        np.array([float(r["correct"]) for r in b]),
        binary=True,
        n_boot=5000,
        confidence=0.95,
        seed=0,
        clusters=np.array([r["doc_id"] for r in b]),
    )[0]
    assert own["low"] == pytest.approx(c.ci_low) and own["high"] == pytest.approx(c.ci_high)


def test_one_cluster_is_called_a_cluster_not_a_question(tmp_path):
    """30 questions about one document: no interval, because of one cluster; the verdict said
    "One question gives no interval", and a per-slice rule, each slice one document, "every
    slice has one scored question"."""
    a = [
        question(i, "x" if i < 15 else "y", i % 2 == 0, doc="d1" if i < 15 else "d2")
        for i in range(30)
    ]
    b = [dict(r, correct=True) if i < 5 else r for i, r in enumerate(a)]
    one = [dict(r, doc="d1") for r in a], [dict(r, doc="d1") for r in b]
    code, out, doc = compare(tmp_path, *one, "--cluster", "doc")
    assert code == 0, out
    assert doc["verdict"]["reason"].startswith("One cluster gives no interval of B − A for correct")
    # one cluster has no spread between clusters: no design effect (it read 1.00), and its
    # method names none (it named "Wilson's bound on the share of clusters", with no interval)
    assert doc["metrics"]["correct"]["design_effect"] is None
    assert doc["metrics"]["correct"]["ci_low"] is None
    assert doc["metrics"]["correct"]["interval"] == (
        "none: one question, or one cluster, has no spread to measure"
    )
    assert "design effect" not in doc["verdict"]["reason"]
    code, out, _ = compare(
        tmp_path, a, b, "--cluster", "doc", "--require", "correct[slice] >= -0.1"
    )
    assert code == 1
    assert "every slice of slice has one scored cluster, and one cluster gives no interval" in out
    # two documents, no question changed: no design effect either (it read 1.00, "no
    # clustering", where neither variance has a spread), and the verdict says why
    same = [dict(r, correct=False) for r in a]
    code, out, doc = compare(tmp_path, same, same, "--cluster", "doc")
    assert code == 0, out
    assert doc["metrics"]["correct"]["design_effect"] is None
    assert doc["verdict"]["reason"].endswith(
        "; questions resampled in 2 clusters, no design effect (B − A is one value: neither "
        "variance has a spread)."
    )


def test_a_cost_rule_resamples_the_clusters_whatever_the_other_rules(tmp_path):
    """6 documents, B's latency moves by one amount per document (+-40, +-30, +-20 ms): over
    60 questions 'latency_ms <= 15' passed, over 6 documents it is inconclusive. The rule read
    the diagnosis's cost comparison, which ignored --cluster, unless a candidate rule on the
    same column made it a score: then it read the clustered interval, so one rule changed
    another's outcome."""
    shift = [40, -40, 30, -30, 20, -20]
    a = [question(i, "s", True, doc_id=f"d{i // 10}", latency_ms=1000.0) for i in range(60)]
    b = [dict(r, latency_ms=1000.0 + shift[i // 10] + i % 3) for i, r in enumerate(a)]
    rule = ("--cluster", "doc_id", "--require", "latency_ms <= 15")
    results = []
    for extra in ((), ("--require", "candidate.latency_ms <= 5000")):
        code, out, _ = compare(tmp_path, a, b, *rule, *extra)
        assert code == 1, out
        doc = two_run_view(json.loads((tmp_path / "r.json").read_text()))
        assert doc["cost"]["latency_ms"]["clusters"] == 6
        results.append(doc["gate"]["results"][0])
    assert results[0] == results[1]
    assert results[0]["outcome"] == "inconclusive" and results[0]["high"] > 15


def test_few_clusters_whose_bounds_are_t_s_warn_of_no_resamples():
    """3 documents of 8 questions: Student's t over the 3 document means (2 degrees of freedom,
    computed here with the ratio-estimator standard error) lies outside the cluster
    bootstrap, which cannot reach past the extreme document means, on both sides; so the
    interval reads no resamples (resampled None) and no --n-boot is asked for, where the
    cluster bootstrap's expanded level at 3 clusters would have asked for over 100,000."""
    from reportgen.comparison.compare import few_resamples

    rng = np.random.default_rng(4)
    clusters = np.repeat(["d1", "d2", "d3"], 8)
    d = np.repeat([0.05, 0.2, -0.1], 8) + rng.normal(0, 0.05, 24)
    c, _ = compare_metric(
        "m", np.zeros(24), d, binary=False, n_boot=5000, confidence=0.95, seed=0,
        clusters=clusters,
    )  # fmt: skip
    sums = np.array([d[clusters == g].sum() for g in ("d1", "d2", "d3")])
    se = np.sqrt(3 / 2 * ((sums - 8 * d.mean()) ** 2).sum()) / 24
    half = stats.t.ppf(0.975, 2) * se
    assert (c.ci_low, c.ci_high) == pytest.approx((d.mean() - half, d.mean() + half))
    assert c.resampled is None
    assert few_resamples(5000, 0.95, [("m", c)]) == []
    # the same differences as independent questions: the studentized side reads its resamples
    alone, _ = compare_metric(
        "m", np.zeros(24), d, binary=False, n_boot=100, confidence=0.999, seed=0
    )
    assert alone.resampled == 0.999 and few_resamples(100, 0.999, [("m", alone)]) != []


def test_a_run_s_own_share_with_clusters_keeps_wilson_s_width():
    """6 of 6 correct in 3 documents: the cluster bootstrap and t over clusters both read
    [1, 1], so `candidate.correct >= 0.99` passed with --cluster; the interval now also takes
    Wilson's, whose lower bound for 6 of 6 is n / (n + z^2) (the closed form at p = 1)."""
    from reportgen.analysis.stats import CLUSTERED_SCORED_OWN

    clusters = np.repeat(["d1", "d2", "d3"], 2)
    c, _ = compare_metric(
        "correct", np.zeros(6), np.ones(6), binary=True, n_boot=2000, confidence=0.95, seed=0,
        clusters=clusters, own=True,
    )  # fmt: skip
    z = stats.norm.ppf(0.975)
    assert c.ci_low == pytest.approx(6 / (6 + z * z)) and c.ci_high == 1.0
    assert c.interval == CLUSTERED_SCORED_OWN


def _sampled(doc_of) -> list[dict]:
    """8 questions about 4 documents, each answered twice; ``doc_of(i, sample)`` is the row's
    document."""
    return [
        question(i, "s", (i + s) % 3 == 0, doc=doc_of(i, s), sample=f"s{s}")
        for i in range(8)
        for s in (1, 2)
    ]


def test_a_cluster_its_samples_disagree_on_is_refused_whatever_the_row_order(tmp_path):
    """q000's second answer in run B says document d3, its first d0: --cluster placed it by
    whichever row came first (the interval and design effect changed with the file's row
    order, with no word), where --slice refuses the same log. metrics --cluster refused it with
    --slice's words."""
    a = _sampled(lambda i, s: f"d{i // 2}")
    b = _sampled(lambda i, s: "d3" if (i, s) == (0, 2) else f"d{i // 2}")
    refusal = (
        f"ragreport: error: {tmp_path / 'b.parquet'}: column 'doc' (asked for by --cluster) has "
        "more than one value for question 'q000'; a question's samples share its cluster: give "
        "each question one value"
    )
    for rows in (b, [b[1], b[0], *b[2:]]):  # q000's two answers in either order
        code, out, _ = compare(tmp_path, a, rows, "--cluster", "doc")
        assert (code, out.strip()) == (2, refusal)
    out = tmp_path / "m.parquet"
    assert fail("metrics", tmp_path / "b.parquet", "--cluster", "doc", "-o", out) == refusal
    code, out, doc = compare(tmp_path, a, a, "--cluster", "doc")
    assert code == 0 and doc["metrics"]["correct"]["clusters"] == 4, out


def test_a_cluster_the_runs_disagree_on_is_refused(tmp_path):
    """Run B puts q000 in document d3, run A in d0: --cluster resampled it with d0's questions
    (run A's value) unsaid, though its B − A also moves with d3's. A question whose value one
    run leaves null is placed by the other's."""
    a = [question(i, "s", i % 3 == 0, doc=f"d{i // 2}") for i in range(8)]
    b = [dict(r, doc="d3") if i == 0 else r for i, r in enumerate(a)]
    code, out, _ = compare(tmp_path, a, b, "--cluster", "doc")
    assert (code, out.strip()) == (
        2,
        f"ragreport: error: {tmp_path / 'b.parquet'}: column 'doc' (asked for by --cluster) has "
        f"another value than in {tmp_path / 'a.parquet'} for question 'q000'; its B − A is "
        "resampled within one cluster, which both runs must give it: log the same value in both",
    )
    b = [dict(r, doc=None) if i == 0 else r for i, r in enumerate(a)]
    code, out, doc = compare(tmp_path, a, b, "--cluster", "doc")
    assert code == 0 and doc["metrics"]["correct"]["clusters"] == 4, out


def _three_runs(**options) -> dict:
    """A baseline and two candidates on 40 questions of 2 documents; c1 gains 0.10 on every
    question of d1 and 0.05 on every one of d2: 2 units of evidence, not 40."""
    base = pd.DataFrame(
        {
            "question_id": [f"q{i}" for i in range(40)],
            "doc": ["d1"] * 20 + ["d2"] * 20,
            "faithfulness": np.r_[np.linspace(0.3, 0.7, 20), np.linspace(0.3, 0.7, 20)],
        }
    )
    c1 = base.assign(faithfulness=base.faithfulness + np.r_[np.full(20, 0.1), np.full(20, 0.05)])
    c2 = base.assign(faithfulness=base.faithfulness + np.r_[np.full(20, 0.02), np.zeros(20)])
    result = reportgen.compare(base, c1, c2, labels=["base", "c1", "c2"], n_boot=1000, **options)
    return json.loads(result.to_json())


def test_the_matrix_and_the_run_chart_resample_clusters():
    """The run-by-run matrix and the run chart ignored --cluster: with 5 documents and no true
    difference the matrix outlined some pair in 28% of sets (its level states 5%), beside
    verdicts that resampled the documents and found nothing."""
    naive, clustered = _three_runs(), _three_runs(cluster="doc")
    cell = {(m["row"], m["column"]): m for m in clustered["matrix"]}[("base", "c1")]
    bare = {(m["row"], m["column"]): m for m in naive["matrix"]}[("base", "c1")]
    assert bare["ci_low"] > 0  # 40 questions that all gained
    assert cell["ci_low"] < 0 < cell["ci_high"]  # two documents that gained
    c1 = {m["label"]: m for m in clustered["run_means"]}["c1"]
    c1_bare = {m["label"]: m for m in naive["run_means"]}["c1"]
    assert c1["ci_high"] - c1["ci_low"] > 4 * (c1_bare["ci_high"] - c1_bare["ci_low"])


@pytest.mark.parametrize("delimiter", [",", "\t"])
def test_an_empty_cluster_cell_of_a_csv_is_a_question_alone_as_a_null_is(tmp_path, delimiter):
    """A CSV's empty doc_id was read as the text "", so every question without one fell in one
    cluster (7 clusters where the Parquet of the same rows has 26): another interval and another
    verdict for the same data."""
    doc = [None if i % 4 == 0 else f"d{i % 8}" for i in range(80)]
    results = []
    for kind in ("parquet", "text"):
        paths = []
        for run, p in (("a", 0.5), ("b", 0.68)):
            correct = np.random.default_rng(ord(run)).random(80) < p
            ids = [f"q{i}" for i in range(80)]
            frame = pd.DataFrame({"question_id": ids, "doc_id": doc, "correct": correct})
            path = tmp_path / f"{run}.{kind}"
            if kind == "parquet":
                frame.to_parquet(path)
            else:
                path = path.with_suffix(".csv" if delimiter == "," else ".tsv")
                frame.to_csv(path, sep=delimiter, index=False)
            paths.append(path)
        results.append(
            json.loads(reportgen.compare(*paths, n_boot=300, cluster="doc_id").to_json())
        )
    parquet, text = (r["comparisons"][0]["metrics"]["correct"] for r in results)
    assert parquet["clusters"] == 6 + 20
    assert text == parquet


def test_past_10000_changed_clusters_the_interval_is_t_over_them():
    """The cluster bootstrap draws every cluster in every resample: 0.4 s a call at 20,000
    documents, dozens of calls a report. Past 10,000 clusters whose sums differ, as past
    10,000 changed questions, the interval is Student's t over the clusters alone. Oracle: with
    every cluster one question both of the report's variance estimates are s^2 / n and the
    degrees of freedom n - 1, so the interval is the plain t interval."""
    rng = np.random.default_rng(3)
    n = 12_000
    a = rng.random(n)
    b = a + rng.normal(0.01, 0.2, n)
    c, means = compare_metric(
        "m", a, b, binary=False, n_boot=1000, confidence=0.95, seed=0, clusters=np.arange(n)
    )
    diff = b - a
    half = stats.t.ppf(0.975, n - 1) * diff.std(ddof=1) / np.sqrt(n)
    assert (c.ci_low, c.ci_high) == pytest.approx((diff.mean() - half, diff.mean() + half))
    assert c.interval == "Student's t over clusters (normal limit)" and c.resampled is None
    assert c.clusters == n and len(means) == 1000
    assert means.mean() == pytest.approx(diff.mean()) and means.std() == pytest.approx(
        half / stats.t.ppf(0.975, n - 1), rel=0.1
    )


def test_under_the_limit_the_clusters_are_still_resampled():
    """900 documents whose sums all differ are under the 1,000 from which even a symmetric
    difference takes t: the cluster bootstrap still sets a bound."""
    rng = np.random.default_rng(4)
    labels = np.repeat(np.arange(900), 3)
    a = rng.random(len(labels))
    b = a + rng.normal(0, 0.2, len(labels))
    c, _ = compare_metric(
        "m", a, b, binary=False, n_boot=1000, confidence=0.95, seed=0, clusters=labels
    )
    assert c.interval == "cluster bootstrap and t over clusters, the wider on each side"


def test_the_verdict_says_t_over_the_clusters_was_taken(tmp_path):
    """A 0/1 outcome over 11,000 documents: the verdict names t over the clusters, not
    resampling, and the label the score interval beside it."""
    rows = [
        question(i, "s", bool(i % 3), doc=f"d{i // 2}", faithfulness=(i % 7) / 7)
        for i in range(22_000)
    ]
    moved = [dict(r, correct=(i % 5 > 0), faithfulness=(i % 11) / 11) for i, r in enumerate(rows)]
    code, out, doc = compare(tmp_path, rows, moved, "--cluster", "doc", "--quiet")
    assert code == 0, out
    assert "Student's t over 11,000 clusters (the cluster bootstrap's normal limit)" in out
    correct = doc["metrics"]["correct"]
    assert correct["interval"] == (
        "Student's t over clusters (normal limit) and Tango's score interval, the wider on each "
        "side"
    )
    assert doc["metrics"]["faithfulness"]["interval"] == "Student's t over clusters (normal limit)"
