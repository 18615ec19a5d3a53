"""The interval of a continuous B - A where fewer than FEW_CHANGED questions changed among ties.

The bootstrap of two changed values among 198 ties reads an interval as narrow as those two
values allow: a reranker that lifts nDCG by 0.35 on 5% of 50 questions (often one or two of
them in a set) was missed by 9 to 11% of 95% intervals. Where the difference's range is known,
the interval is also at least Tango's score interval of the gains and losses as shares of the
range (a 0/1 outcome is the case whose changes are all as large as the range allows, which
bounds the variance of any other with the same shares), and a run's own mean at least
Wilson's. Oracles: Tango's statistic and Wilson's interval written out here from the papers
and solved with brentq, and the interval's own inversion at its bounds;
bench/simulate_no_spread.py measures the coverage.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from reportgen.analysis.stats import (
    CLUSTERED_FEW_CHANGED,
    FEW_CHANGED_SCORED,
    FEW_CHANGED_SCORED_OWN,
    ONE_WAY_BELOW,
    bound_p,
    compare_metric,
    compare_with_sides,
    own_mean,
)

Z = stats.norm.ppf(0.975)
N = 200


def _tango(gains: float, losses: float, n: int) -> tuple[float, float]:
    """Tango's (1998) score interval of a paired difference, from his eq. 3 (the restricted
    maximum likelihood estimate of the discordant share) and the score statistic, each bound a
    root found by brentq."""

    def statistic(delta: float) -> float:
        return _tango_statistic(gains, losses, n, delta)

    estimate = (gains - losses) / n
    low = optimize.brentq(lambda d: statistic(d) - Z, -1 + 1e-12, estimate)
    high = optimize.brentq(lambda d: statistic(d) + Z, estimate, 1 - 1e-12)
    return low, high


def _tango_statistic(gains: float, losses: float, n: int, delta: float) -> float:
    """Tango's score statistic at ``delta``, the restricted maximum likelihood estimate of the
    discordant share from his eq. 3."""
    a = 2 * n
    b = -gains - losses + (2 * n - gains + losses) * delta
    c = -losses * delta * (1 - delta)
    q = (-b + np.sqrt(b * b - 4 * a * c)) / (2 * a)
    return (gains - losses - n * delta) / np.sqrt(n * (2 * q + delta * (1 - delta)))


def _wilson(successes: float, n: int) -> tuple[float, float]:
    """Wilson's (1927) interval: the p with (successes - n p)^2 = Z^2 n p (1 - p)."""
    roots = np.roots([n * n + Z * Z * n, -(2 * n * successes + Z * Z * n), successes**2])
    return float(min(roots)), float(max(roots))


def _ranked(changes: list[float], n: int = N) -> tuple[np.ndarray, np.ndarray]:
    """n questions' nDCG in A and B, the first len(changes) changed by those amounts."""
    a = np.linspace(0.2, 0.4, n)
    b = a.copy()
    b[: len(changes)] += changes
    return a, b


def _compare(name: str, a: np.ndarray, b: np.ndarray, **options):
    return compare_with_sides(
        name, a, b, binary=False, n_boot=1000, confidence=0.95, seed=0, **options
    )


def test_two_gains_among_ties_reach_what_unseen_changes_could_add():
    """+0.2 and +0.3 on 2 of 200 questions (mean +0.0025): the bootstrap's upper bound was
    near 3 x 0.3 / 200; Tango's score interval of 0.5 gains in 200 reaches 0.021."""
    c, _, _ = _compare("ndcg@5", *_ranked([0.2, 0.3]))
    low, high = _tango(0.5, 0.0, N)
    assert c.interval == FEW_CHANGED_SCORED
    assert c.ci_high == pytest.approx(high, abs=1e-9)
    assert high > 0.02
    assert c.ci_low == pytest.approx(low, abs=1e-9)  # below the bootstrap's, near -0.006


def test_gains_and_losses_are_shares_of_the_range():
    """A difference in [-2, 2]: +0.4, +0.6 and -0.2 are shares 0.2, 0.3 and 0.1 of 2."""
    c, _, _ = _compare("m", *_ranked([0.4, 0.6, -0.2]), span=(-2.0, 2.0))
    low, high = _tango(0.5, 0.1, N)
    assert (c.ci_low, c.ci_high) == pytest.approx((2 * low, 2 * high), abs=1e-9)


def test_swapping_the_runs_mirrors_the_interval():
    a, b = _ranked([0.2, 0.3, -0.1])
    forward, _, _ = _compare("ndcg@5", a, b)
    backward, _, _ = _compare("ndcg@5", b, a)
    assert (backward.ci_low, backward.ci_high) == pytest.approx(
        (-forward.ci_high, -forward.ci_low), abs=1e-12
    )


@pytest.mark.parametrize(
    "changes",
    [
        [0.1, 0.2, 0.3, -0.1, -0.2, -0.3],  # 6 changed, 3 the rarer way
        list(np.linspace(-0.3, 0.3, 12)),
        list(np.linspace(0.1, 0.3, ONE_WAY_BELOW)),  # 20 changed, all one way
    ],
)
def test_from_few_changed_both_ways_on_the_bootstrap_reads_alone(changes):
    """5 changed questions or more, at least 3 each way, or 20 or more: the interval is the
    one a score of unknown range gets (the bootstrap's), not widened."""
    a, b = _ranked(changes)
    ranged, _, _ = _compare("ndcg@5", a, b)
    alone, _, _ = _compare("m", a, b)
    assert ranged.interval == alone.interval != FEW_CHANGED_SCORED
    assert (ranged.ci_low, ranged.ci_high) == (alone.ci_low, alone.ci_high)


@pytest.mark.parametrize(
    ("changes", "rarer"),
    [([-0.15] * 9, 0), ([-0.15] * 15 + [0.1, 0.2], 2), (list(np.linspace(0.1, 0.3, 19)), 0)],
)
def test_few_changes_nearly_all_one_way_reach_what_unseen_changes_could_add(changes, rarer):
    """9 of 50 questions down 0.15 and the rest tied is what a metric that rarely gains much
    and often loses a little (mean 0) draws in most sets of 50: the bootstrap of the losses
    alone lay wholly below 0 ("B worse") in 17% of such sets. Under 20 changed with fewer than
    3 the rarer way, the interval is Tango's score interval of the changes as shares of the
    range, as under 5 changed."""
    n = 50
    a, b = _ranked(changes, n)
    c, _, _ = _compare("ndcg@5", a, b)
    alone, _, _ = _compare("m", a, b)
    gains = sum(x for x in changes if x > 0)
    losses = -sum(x for x in changes if x < 0)
    low, high = _tango(gains, losses, n)
    assert min(c.wins, c.losses) == rarer
    assert c.interval == FEW_CHANGED_SCORED
    assert (c.ci_low, c.ci_high) == pytest.approx((low, high), abs=1e-9)
    assert c.ci_low <= alone.ci_low and c.ci_high >= alone.ci_high
    if changes == [-0.15] * 9:
        assert alone.ci_high < 0 <= c.ci_high  # the bootstrap's "B worse" is no verdict here
        assert c.p >= 0.05 and c.test.endswith("and bounded score")


def test_the_power_sentence_says_why_one_way_changes_find_little():
    from reportgen.analysis.power import power_of

    a, b = _ranked([-0.15] * 9, 50)
    c, _, _ = _compare("ndcg@5", a, b)
    sentence = power_of(c, 0.95).sentence
    assert (
        "With 9 questions changed, 0 of them the other way, the interval allows for what the "
        "unchanged ones could hide (large changes the other way this set did not draw)"
    ) in sentence
    assert "no difference can be found" not in sentence
    # 9 of 60 such changes are still under the bound, found only from about 12 changed: a
    # size read "takes about 51 questions (you have 50)"
    assert sentence.endswith(
        "How many questions would find the observed difference of 0.027 is not stated: while so "
        "few change, nearly all one way, the bound holds whatever the set's size."
    )
    assert power_of(c, 0.95).needed_n is None


def test_under_few_changed_a_score_of_unknown_range_keeps_the_bootstrap():
    """A score of the logs has no range to bound an unseen change by."""
    c, _, _ = _compare("judge", *_ranked([0.2, 0.3]))
    assert c.interval != FEW_CHANGED_SCORED
    assert c.ci_high < 0.01


def test_a_gate_reads_the_interval_at_its_bounds():
    """The one-sided p at each bound is the tail it was read at (2.5% at 95%); a gate
    'ndcg@5 >= -0.005' no longer passes on two gains among 200 ties."""
    c, means, sides = _compare("ndcg@5", *_ranked([0.2, 0.3]))
    assert bound_p(sides, means, c.ci_high, upper=True) == pytest.approx(0.025)
    assert bound_p(sides, means, c.ci_low, upper=False) == pytest.approx(0.025)
    assert bound_p(sides, means, c.ci_high + 0.005, upper=True) < 0.025
    assert bound_p(sides, means, -0.005, upper=False) > 0.025


def test_with_a_range_of_two_a_gate_reads_the_scaled_bound():
    c, means, sides = _compare("m", *_ranked([0.4, 0.6]), span=(-2.0, 2.0))
    assert bound_p(sides, means, c.ci_high, upper=True) == pytest.approx(0.025)
    assert bound_p(sides, means, c.ci_low, upper=False) == pytest.approx(0.025)


def test_a_runs_own_mean_of_few_nonzero_values_takes_wilson():
    """MRR 0.5 and 0.25 on 2 of 200 questions, 0 elsewhere: at least Wilson's interval of 0.75
    successes in 200."""
    values = np.zeros(N)
    values[:2] = [0.5, 0.25]
    c = own_mean("mrr", values, binary=False, n_boot=1000, confidence=0.95, seed=0, span=(0.0, 1.0))
    low, high = _wilson(0.75, N)
    assert c.interval == FEW_CHANGED_SCORED_OWN
    assert c.ci_high == pytest.approx(high, abs=1e-9)
    assert c.ci_low <= low + 1e-12


def test_it_covers_where_the_bootstrap_missed():
    """A gain from U(0.1, 0.6) on 5% of 50 questions (truth 0.0175), 400 seeded sets: the
    bootstrap's interval (a score of unknown range) misses in more than 8% of them, the
    interval of a built-in metric in under 2.5%."""
    rng = np.random.default_rng(7)
    misses = {"ndcg@5": 0, "m": 0}
    for seed in range(400):
        a = rng.random(50)
        b = a + np.where(rng.random(50) < 0.05, rng.uniform(0.1, 0.6, 50), 0.0)
        for name in misses:
            c, _ = compare_metric(
                name, a, b, binary=False, n_boot=500, confidence=0.95, seed=seed, threads=1
            )
            misses[name] += not c.ci_low <= 0.0175 <= c.ci_high
    assert misses["m"] > 0.08 * 400
    assert misses["ndcg@5"] < 0.025 * 400


def test_the_test_takes_the_largest_p_and_agrees_with_the_interval():
    """Four gains of 0.5 among 8 ties: the bootstrap-t test alone finds them (p 0.039, its
    interval [+0.010, +0.380]); neither the exact sign-flip test (2 of 16 flips, p 0.125) nor
    the score test of 2 gains (z = 2 / sqrt(2), p 0.157) does, nor does the interval. Under 5
    changed the studentized side is left out: the test beside them is Student's t's."""
    a, b = _ranked([0.5] * 4, n=12)
    alone, _, _ = _compare("m", a, b)
    assert alone.p < 0.05 and alone.ci_low > 0
    c, _, _ = _compare("ndcg@5", a, b)
    assert c.test == "Student's t, paired permutation and bounded score"
    assert c.p == pytest.approx(2 * stats.norm.sf(np.sqrt(2)), rel=1e-9)
    assert c.ci_low < 0 < c.ci_high


def test_few_changed_by_the_whole_range_read_as_the_0_1_outcome_they_are():
    """4 of 5 questions from 0 to 1: recall@1 (continuous) read p 0.046 from the score test's
    normal limit and 'B better', where hit@1 of the same values read McNemar's exact 0.125
    and 'borderline'. The exact sign flips are a floor: both read 0.125, and one interval."""
    a, b = np.zeros(5), np.array([1.0, 1.0, 1.0, 1.0, 0.0])
    continuous, _, _ = _compare("recall@1", a, b)
    binary, _ = compare_metric("hit@1", a, b, binary=True, n_boot=1000, confidence=0.95, seed=0)
    assert continuous.p == pytest.approx(binary.p) == pytest.approx(0.125)
    assert (continuous.ci_low, continuous.ci_high) == pytest.approx(
        (binary.ci_low, binary.ci_high), abs=1e-9
    )


def test_a_run_near_the_top_mirrors_a_run_near_the_bottom():
    """198 questions at 1 and 2 at 0.7, against 198 at 0 and 2 at 0.3: the bootstrap sees two
    values in both, and both take Wilson's interval, the one the mirror of the other (the
    first read the bootstrap's [0.992, 1], the second Wilson's [0, 0.030])."""
    top, bottom = np.ones(N), np.zeros(N)
    top[:2], bottom[:2] = 0.7, 0.3
    high, low = (
        own_mean(
            "faithfulness", v, binary=False, n_boot=1000, confidence=0.95, seed=0,
            span=(0.0, 1.0),
        )
        for v in (top, bottom)
    )  # fmt: skip
    assert high.interval == low.interval == FEW_CHANGED_SCORED_OWN
    assert (high.ci_low, high.ci_high) == pytest.approx((1 - low.ci_high, 1 - low.ci_low))
    assert low.ci_high == pytest.approx(_wilson(0.6, N)[1])


def test_every_question_changed_keeps_the_bootstrap():
    """Three of three changed: no tie says that changes are rare, so the interval is
    Student's t's as before, not widened (the simulation's types changing every question
    cover at these sizes)."""
    a = np.full(3, 0.5)
    c, _, _ = _compare("faithfulness", a, a + np.array([0.30, 0.22, 0.25]))
    assert c.interval != FEW_CHANGED_SCORED
    assert c.ci_low > 0


def test_a_study_s_run_means_lie_in_the_metric_s_range(tmp_path):
    """Three retrieval-only runs of 20 questions, the one relevant passage first in 2, 3 and 4
    of them: a run's own nDCG mean was taken in its difference's range [-1, 1], its interval
    reaching -0.316 on the run chart while the candidate rules read it in [0, 1]."""
    import json

    import pandas as pd
    from test_verify import invoke

    logs = []
    for name, hits in zip("abc", (2, 3, 4), strict=True):
        rows = [
            {
                "question_id": f"q{i:02d}",
                "retrieved_ids": ([f"d{i}"] if i < hits else []) + [f"x{i}_{j}" for j in range(9)],
                "relevant_ids": [f"d{i}"],
            }
            for i in range(20)
        ]
        logs.append(tmp_path / f"{name}.parquet")
        pd.DataFrame(rows).to_parquet(logs[-1])
    code, _, err = invoke("compare", *logs, "--k", "5", "-o", tmp_path / "r.html")
    assert code == 0, err
    means = json.loads((tmp_path / "r.json").read_text())["run_means"]
    assert [m["mean"] for m in means] == pytest.approx([0.1, 0.15, 0.2])
    assert all(0 <= m["ci_low"] < m["mean"] < m["ci_high"] <= 1 for m in means), means


def test_the_power_sentence_says_few_changed_questions_cannot_show_a_difference():
    """4 of 5 questions up by 0.4: the interval includes 0, yet the sentence read 'to find the
    observed difference of 0.400 80% of the time takes about 5 questions (you have 5)'."""
    from reportgen.analysis.power import power_of

    a = np.full(5, 0.5)
    c, _, _ = _compare("ndcg@5", a, a + np.array([0.4, 0.4, 0.4, 0.4, 0.0]))
    assert c.ci_low < 0
    power = power_of(c, 0.95)
    assert (
        "With 4 questions changed no difference can be found: their exact sign flips give p of "
        "at least 0.125" in power.sentence
    )
    # the difference sets would find is of sets that move every question, not of 4 moving
    assert "Where more questions change, a true difference of 0.297 would be found" in (
        power.sentence
    )
    assert "A true difference" not in power.sentence
    assert power.needed_n is None and "takes about" not in power.sentence


# 26 of 30 questions 0.3 worse in faithfulness, 4 less so: every question is worse
SHARED_MOVE = np.array([-0.3] * 26 + [-0.2988, -0.2349, -0.1692, -0.078])


def _t(values: np.ndarray) -> tuple[float, float]:
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return values.mean() - half, values.mean() + half


def test_few_off_a_shared_move_are_counted_from_it():
    """The studentized interval read [-0.304, +1.000] and p 0.083 ("no evidence"): a resample
    that draws one or two of the 4 has a spread near 0, so its t* is noise. Counted from -0.3,
    each of the 4 is a share of the 1.3 it could move: the interval is -0.3 + 1.3 x Tango's of
    those shares, wider on each side with Student's t, and wholly below 0; a gate's bound reads
    it (its one-sided p at the upper bound is the 2.5% it was read at)."""
    a = np.full(30, 0.8)
    c, means, sides = _compare("faithfulness", a, a + SHARED_MOVE)
    low, high = _tango((SHARED_MOVE + 0.3).sum() / 1.3, 0.0, 30)
    t_low, t_high = _t(SHARED_MOVE)
    assert (c.ci_low, c.ci_high) == pytest.approx(
        (min(t_low, -0.3 + 1.3 * low), max(t_high, -0.3 + 1.3 * high)), abs=1e-9
    )
    assert c.ci_high < -0.1
    assert (c.interval, c.commonest, c.off_commonest) == (FEW_CHANGED_SCORED, -0.3, 4)
    assert c.p < 0.01 and c.test == "Student's t, paired permutation and bounded score"
    assert bound_p(sides, means, c.ci_high, upper=True) == pytest.approx(0.025)
    assert bound_p(sides, means, 0.0, upper=True) < 0.005


def test_few_changed_among_ties_leave_the_studentized_side_out():
    """The same 4 moves among 26 ties: the studentized side read an upper bound of +1.000 (the
    range's end) beside the score bound's +0.137; now the interval is the wider of Student's t
    and the score bound alone."""
    a = np.full(30, 0.5)
    moves = SHARED_MOVE + 0.3
    c, _, _ = _compare("faithfulness", a, a + moves)
    low, high = _tango(moves.sum(), 0.0, 30)
    t_low, t_high = _t(moves)
    assert (c.ci_low, c.ci_high) == pytest.approx((min(t_low, low), max(t_high, high)), abs=1e-9)
    assert c.commonest is None and c.ci_high < 0.14


def test_a_runs_own_values_off_one_inside_the_range_are_counted_from_it():
    """B's own faithfulness, 0.5 on 26 answers and 4 above: the studentized interval read
    [0.496, 1.000]; counted from 0.5, each of the 4 is a share of the 0.5 it could move."""
    values = 0.5 + SHARED_MOVE + 0.3
    c = own_mean(
        "faithfulness", values, binary=False, n_boot=1000, confidence=0.95, seed=0, span=(0, 1)
    )
    low, high = _tango((values - 0.5).sum() / 0.5, 0.0, 30)
    t_low, t_high = _t(values)
    assert (c.ci_low, c.ci_high) == pytest.approx(
        (min(t_low, 0.5 + 0.5 * low), max(t_high, 0.5 + 0.5 * high)), abs=1e-9
    )
    assert c.interval == FEW_CHANGED_SCORED and c.ci_high < 0.6


def test_the_power_sentence_names_the_shared_move():
    from reportgen.analysis.power import power_of

    a = np.full(30, 0.8)
    c, _, _ = _compare("faithfulness", a, a + SHARED_MOVE)
    sentence = power_of(c, 0.95).sentence
    assert "26 of the 30 questions moved by the same −0.300, the other 4 otherwise" in sentence
    assert "while so few lie off the common move" in sentence
    assert power_of(c, 0.95).needed_n is None


def test_a_gate_on_a_shared_loss_fails(tmp_path, write_log):
    """faithfulness >= 0 on the 30 questions read 'inconclusive' (the interval reached +1.000):
    every question is worse, so the rule fails, and the verdict's row reads B worse."""
    from click.testing import CliRunner

    from reportgen.cli import cli

    rows = [{"question_id": f"q{i}", "correct": True, "faithfulness": 0.8} for i in range(30)]
    a = write_log(tmp_path / "a.parquet", rows)
    moved = [{**r, "faithfulness": 0.8 + d} for r, d in zip(rows, SHARED_MOVE, strict=True)]
    b = write_log(tmp_path / "b.parquet", moved)
    args = ["compare", str(a), str(b), "-o", str(tmp_path / "r.html")]
    result = CliRunner().invoke(cli, [*args, "--require", "faithfulness >= 0"])
    assert result.exit_code == 1, result.output
    assert "fail  B  faithfulness >= 0" in result.stdout


@pytest.mark.parametrize("last", [-0.1, 0.0])
def test_the_shared_move_is_counted_from_whatever_the_few_others_are(last):
    """13 of 14 questions 0.3 worse: with the 14th at -0.1 the interval was counted from -0.3
    ("no evidence", [-0.569, +0.002]); with the 14th unchanged, a set at least as good for B
    on every question, it was counted from 0 ("B worse", [-0.540, -0.003]). Both are counted
    from -0.3 now, each as Tango's interval of its one move (+0.2 or +0.3 of the 1.3 it could
    go) says, and neither excludes 0; the power sentence does not say the 13 carry the
    evidence alone."""
    from reportgen.analysis.power import power_of

    moves = np.array([-0.3] * 13 + [last])
    a = np.full(14, 0.8)
    c, _, _ = _compare("faithfulness", a, a + moves)
    low, high = _tango((last + 0.3) / 1.3, 0.0, 14)
    t_low, t_high = _t(moves)
    assert (c.ci_low, c.ci_high) == pytest.approx(
        (min(t_low, -0.3 + 1.3 * low), max(t_high, -0.3 + 1.3 * high)), abs=1e-9
    )
    assert c.ci_low < 0 < c.ci_high and (c.commonest, c.off_commonest) == (-0.3, 1)
    assert c.interval.startswith("Student's t, the studentized bootstrap where 5 or more lie off")
    sentence = power_of(c, 0.95).sentence
    assert "only those carry evidence" not in sentence
    assert "13 of the 14 questions moved by the same −0.300, the other 1 otherwise" in sentence


def test_a_move_shared_at_the_range_s_end_is_counted_from_it():
    """26 of 30 questions from 1 to 0 (B - A = -1, the end of its range) and 4 from 1 to 0.5:
    counted from 0 nothing is few (every question changed), and the studentized interval of so
    few values off one reached far past them; counted from -1 the 4 are moves of +0.5 of the 2
    they could go."""
    a = np.ones(30)
    moves = np.array([-1.0] * 26 + [-0.5] * 4)
    c, _, _ = _compare("recall@5", a, a + moves)
    low, high = _tango(4 * 0.5 / 2, 0.0, 30)
    t_low, t_high = _t(moves)
    assert (c.ci_low, c.ci_high) == pytest.approx(
        (max(-1.0, min(t_low, -1 + 2 * low)), max(t_high, -1 + 2 * high)), abs=1e-9
    )
    assert (c.commonest, c.off_commonest) == (-1.0, 4) and c.ci_high < -0.5


@pytest.mark.parametrize("size", [1, 3])
def test_with_clusters_few_off_a_shared_move_are_counted_from_it(size):
    """With --cluster the score bound of few changes was left out: one question a cluster, the
    26 at -0.3 and 4 above read [-0.304, -0.265] (3 a cluster: [-0.318, -0.244]), since the
    cluster bootstrap and t over clusters see the 4 as all the spread there is, though the
    mean is -0.286. As without clusters, the interval is at least
    -0.3 + 1.3 x Tango's of the 4 shares, and the test the larger p of the clusters' flips and
    the bounded score test."""
    a = np.full(30, 0.8)
    clusters = np.arange(30) // size
    c, _, _ = _compare("faithfulness", a, a + SHARED_MOVE, clusters=clusters)
    low, high = _tango((SHARED_MOVE + 0.3).sum() / 1.3, 0.0, 30)
    assert c.ci_low <= -0.3 + 1.3 * low + 1e-12 and c.ci_high >= -0.3 + 1.3 * high - 1e-12
    assert c.ci_high < -0.1 and c.ci_low < -0.4
    assert (c.interval, c.commonest, c.off_commonest) == (CLUSTERED_FEW_CHANGED, -0.3, 4)
    assert c.test == "paired permutation of clusters and bounded score"
    score = stats.norm.sf(
        abs(_tango_statistic((SHARED_MOVE + 0.3).sum() / 1.3, 0.0, 30, 0.3 / 1.3))
    )
    assert c.p >= 2 * score - 1e-12 and c.clusters == 30 // size


def test_with_clusters_a_gate_reads_the_shared_moves_bound(tmp_path):
    """'faithfulness >= -0.35' passed with --cluster, one question a cluster, on the interval
    [-0.304, -0.265]; the 4 questions off -0.3 could hide more, and the bound that allows for
    it reaches -0.435."""
    from click.testing import CliRunner

    from reportgen.cli import cli

    rows = [
        {"question_id": f"q{i}", "doc": f"d{i}", "correct": True, "faithfulness": 0.8}
        for i in range(30)
    ]
    moved = [{**r, "faithfulness": 0.8 + d} for r, d in zip(rows, SHARED_MOVE, strict=True)]
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pd.DataFrame(rows).to_parquet(a)
    pd.DataFrame(moved).to_parquet(b)
    args = ["compare", str(a), str(b), "-o", str(tmp_path / "r.html"), "--cluster", "doc"]
    result = CliRunner().invoke(cli, [*args, "--require", "faithfulness >= -0.35"])
    assert result.exit_code == 1, result.output
    assert "inconclusive (counts as fail)  B  faithfulness >= -0.35" in result.stdout
    assert "interval [-0.4352, -0.1287]" in result.stdout  # as without --cluster
