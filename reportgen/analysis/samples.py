"""Repeated answers: several rows per question, one per ``sample`` (or ``epoch``).

Each sample is scored as a question is, and the samples of a question are averaged before the
runs are paired (queries/question_means.sql). Here the variance of those per-question means is
split into the part that comes from the samples disagreeing (within a question) and the part
that comes from the questions differing (between questions), under the model
y(q, s) = mu(q) + e(q, s): the variance of a mean over n questions of m samples each is
between / n + within / (n m).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .scores import score_samples

if TYPE_CHECKING:
    from ..inputs.database import RunDatabase
    from .metrics import MetricTables

_FLOAT_SLACK = 1e-9  # m' of exactly 6 computed as 6.0000000001 still asks for 6 samples


@dataclass(frozen=True)
class Spread:
    """Where the variance of one metric's per-question values comes from, for one run or for
    the paired difference B - A."""

    metric: str  # base name (ndcg)
    run: str  # "A", "B" or "B - A"
    n_questions: int
    samples: float  # samples per question (harmonic mean: the one the noise formula uses)
    within: float | None  # noise of a per-question mean: the variance between the samples of a
    # question / samples (B - A: the sum of both runs'); None with no question sampled twice
    between: float | None  # variance of the per-question means less that noise (the questions'
    # own spread); None under 2 questions
    within_share: float | None  # share of the per-question mean's variance that is sample noise
    samples_to_halve: int | None  # samples per question that would halve within_share; None
    # when there is no noise to halve or no between-question variance to keep


@dataclass(frozen=True)
class Unscored:
    """A compared question of one run some of whose samples have no value of a metric (null)
    while others have one: its value is the mean over those others."""

    run: str  # "a" or "b"
    metric: str  # base name (correct)
    question_id: str
    unscored: int  # its samples without a value
    samples: int  # all its samples


def samples_to_halve(samples: float, share: float | None) -> int | None:
    """Samples per question at which the within-question share is half of ``share``.

    Noise falls as 1 / m: share(m) = w / m / (b + w / m), so share(m') = share(m) / 2 at
    m' = m (2 - s) / (1 - s).
    """
    if share is None or share <= 0 or share >= 1:
        return None
    return math.ceil(samples * (2 - share) / (1 - share) - _FLOAT_SLACK)


def _split(noise: float | None, total: float | None) -> tuple[float | None, float | None]:
    """(between-question variance, within share) from the noise of the per-question means and
    their total variance; the between part is floored at 0 (sampling error can push it below)."""
    if noise is None or total is None:
        return None, None
    between = max(total - noise, 0.0)
    return between, (noise / (between + noise) if between + noise > 0 else None)


def _run_spread(metric: str, run: str, q: pd.DataFrame) -> Spread:
    """One run's spread from its per-question rows (n, mean, variance of the samples): the
    noise is the mean of the questions' sample variances x the mean of 1 / samples."""
    sampled = q.loc[q["n"] >= 2, "variance"]
    # harmonic mean, one division per distinct count: 30 questions of 3 samples give 3, where
    # summing thirty 1/3 gave 2.999999999999999
    counts = q["n"].value_counts()
    samples = len(q) / float((counts / counts.index).sum())
    noise = float(sampled.mean()) / samples if len(sampled) else None
    total = float(q["mean"].var(ddof=1)) if len(q) >= 2 else None
    between, share = _split(noise, total)
    return Spread(
        metric=metric,
        run=run,
        n_questions=len(q),
        samples=samples,
        within=noise,
        between=between,
        within_share=share,
        samples_to_halve=samples_to_halve(samples, share),
    )


def spread(per_question: pd.DataFrame, metrics: tuple[str, ...]) -> tuple[Spread, ...]:
    """A, B and B - A for every metric, over the questions scored in both runs.

    ``per_question`` has run, question_id, metric, n (samples scored), mean and variance (of the
    samples); ``metrics`` are the base names, in report order. The difference's noise is the
    sum of both runs' noise (their samples are drawn independently).
    """
    out: list[Spread] = []
    for name in metrics:
        rows = per_question[per_question["metric"] == name]
        a = rows[rows["run"] == "a"].set_index("question_id")
        b = rows[rows["run"] == "b"].set_index("question_id")
        common = a.index.intersection(b.index)
        if len(common) == 0:
            continue
        a, b = a.loc[common], b.loc[common]
        spread_a, spread_b = _run_spread(name, "A", a), _run_spread(name, "B", b)
        noise = (
            None
            if spread_a.within is None or spread_b.within is None
            else spread_a.within + spread_b.within
        )
        diff = (b["mean"] - a["mean"]).to_numpy(dtype=float)
        total = float(np.var(diff, ddof=1)) if len(diff) >= 2 else None
        between, share = _split(noise, total)
        # samples of both runs scaled together: the difference's noise falls as 1 / m too; their
        # harmonic mean as 2ab / (a + b), which gives 2.4 for 2 and 3 (2 / (1/2 + 1/3) does not)
        m = 2 * spread_a.samples * spread_b.samples / (spread_a.samples + spread_b.samples)
        out += [
            spread_a,
            spread_b,
            Spread(
                metric=name,
                run="B - A",
                n_questions=len(common),
                samples=m,
                within=noise,
                between=between,
                within_share=share,
                samples_to_halve=samples_to_halve(m, share),
            ),
        ]
    return tuple(out)


def decompose(
    db: RunDatabase, tables: MetricTables
) -> tuple[tuple[Spread, ...], tuple[Unscored, ...]]:
    """The spread of every metric of ``tables``, the score columns' read from the logs' rows as
    their means are, and the samples each compared question's mean leaves out; then facts and
    relevant cut to one answer per question for the sections that read single answers (needs
    question_metrics and question_means)."""
    per_question = db.frame("sample_spread")
    if tables.scores:
        own = score_samples(db, tables.scores, tables.paired["question_id"])
        per_question = pd.concat([per_question, own], ignore_index=True)
    spreads = spread(per_question, tables.metrics)
    db.execute("sample_repeats")
    db.execute("first_sample")
    db.execute("relevant")
    return spreads, unscored(per_question, tables)


def unscored(per_question: pd.DataFrame, tables: MetricTables) -> tuple[Unscored, ...]:
    """Every compared question of a metric some of whose samples have no value of it: a
    question whose samples all lack it is not compared, and the report says so elsewhere."""
    rows = per_question[per_question["unscored"] > 0]
    p, out = tables.paired, []
    for metric, group in rows[rows["metric"].isin(tables.metrics)].groupby("metric", sort=False):
        compared = set(p.loc[p[[f"{metric}_a", f"{metric}_b"]].notna().all(axis=1), "question_id"])
        out += [
            Unscored(r.run, str(metric), r.question_id, int(r.unscored), int(r.samples))
            for r in group.itertuples()
            if r.question_id in compared
        ]
    return tuple(sorted(out, key=lambda u: (u.run, tables.metrics.index(u.metric), u.question_id)))
