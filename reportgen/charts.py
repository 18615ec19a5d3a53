"""Altair chart specs of the report. Each returns a Vega-Lite dict with its data inline.

Colours are from the Okabe-Ito palette (safe for the common colour-vision deficiencies).
"""

from __future__ import annotations

from typing import Any

import altair as alt
import numpy as np
import pandas as pd

RUN_COLOURS = {"A": "#E69F00", "B": "#56B4E9"}
OUTCOME_COLOURS = {"B wins": "#0072B2", "tie": "#BBBBBB", "B loses": "#D55E00"}
MAX_POINTS = 1000  # a chart draws at most this many per-question marks
WIDTH = 640


def _outcome_scale() -> alt.Scale:
    return alt.Scale(domain=list(OUTCOME_COLOURS), range=list(OUTCOME_COLOURS.values()))


def differences(question_ids: list[str], diff: np.ndarray, metric: str) -> dict[str, Any]:
    """Per-question B - A of one metric, sorted: a waterfall of wins (up) and losses (down).

    Past MAX_POINTS questions the sorted curve is drawn through evenly spaced ranks, which keeps
    its shape; the tooltips then show ranks, not question ids.
    """
    order = np.argsort(-diff, kind="stable")
    ranks = np.arange(1, len(diff) + 1)
    if len(diff) > MAX_POINTS:
        order = order[np.linspace(0, len(diff) - 1, MAX_POINTS).round().astype(int)]
        ranks = ranks[np.linspace(0, len(diff) - 1, MAX_POINTS).round().astype(int)]
    values = diff[order]
    frame = pd.DataFrame(
        {
            "rank": ranks,
            "question_id": [question_ids[i] for i in order],
            "diff": values,
            "outcome": np.where(values > 0, "B wins", np.where(values < 0, "B loses", "tie")),
        }
    )
    return (
        alt.Chart(frame, title=f"Per-question difference B \u2212 A in {metric}")
        .mark_bar()
        .encode(
            x=alt.X(
                "rank:Q",
                title="questions, sorted by difference",
                scale=alt.Scale(domain=[0, int(ranks[-1]) + 1], nice=False),
            ),
            y=alt.Y("diff:Q", title=f"B \u2212 A ({metric})"),
            color=alt.Color("outcome:N", scale=_outcome_scale(), title=None),
            tooltip=["question_id:N", alt.Tooltip("diff:Q", format="+.3f"), "outcome:N"],
        )
        .properties(width=WIDTH, height=220)
        .to_dict()
    )


def metric_curve(curve: pd.DataFrame, prompt_k: int) -> dict[str, Any]:
    """Mean retrieval metrics of both runs at every cutoff, the prompt cutoff marked."""
    frame = curve.assign(run=curve["run"].str.upper())
    depth = int(frame["k"].max())
    base = alt.Chart(frame)
    lines = base.mark_line().encode(
        x=alt.X("k:Q", title="cutoff k (passages)", scale=alt.Scale(domain=[1, depth], nice=False)),
        y=alt.Y("value:Q", title="mean over questions", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color(
            "run:N",
            title="run",
            scale=alt.Scale(domain=list(RUN_COLOURS), range=list(RUN_COLOURS.values())),
        ),
        strokeDash=alt.StrokeDash("run:N", legend=None),
        tooltip=["run:N", "metric:N", "k:Q", alt.Tooltip("value:Q", format=".3f")],
    )
    headroom = (
        alt.Chart(pd.DataFrame({"start": [prompt_k], "end": [depth]}))
        .mark_rect(color="#000000", opacity=0.06)
        .encode(x="start:Q", x2="end:Q")
    )
    cutoff = (
        alt.Chart(pd.DataFrame({"k": [prompt_k]}))
        .mark_rule(color="#000000", strokeDash=[4, 3])
        .encode(x="k:Q")
    )
    return (
        alt.layer(headroom, cutoff, lines, data=frame)
        .properties(width=230, height=170)
        .facet(
            facet=alt.Facet(
                "metric:N", title=None, sort=["recall", "precision", "hit", "mrr", "ndcg"]
            ),
            columns=3,
            data=frame,
        )
        .properties(
            title=f"Which run wins depends on k: the prompt holds k = {prompt_k} "
            "(dashed); the shaded part is headroom, not quality"
        )
        .to_dict()
    )


def bootstrap(
    means: np.ndarray, diff: float, low: float, high: float, metric: str, confidence_label: str
) -> dict[str, Any]:
    """Histogram of the bootstrap means of B - A, the interval (dashed) and zero (solid) marked."""
    counts, edges = np.histogram(means, bins=40)
    bins = pd.DataFrame({"start": edges[:-1], "end": edges[1:], "resamples": counts})
    marks = pd.DataFrame(
        {
            "x": [0.0, low, high, diff],
            "mark": [
                "zero",
                f"{confidence_label} interval",
                f"{confidence_label} interval",
                "observed difference",
            ],
        }
    )
    bars = (
        alt.Chart(bins)
        .mark_bar(color="#999999")
        .encode(
            x=alt.X("start:Q", bin="binned", title=f"B \u2212 A in {metric}, mean of a resample"),
            x2="end:Q",
            y=alt.Y("resamples:Q", title="resamples"),
        )
    )
    rules = (
        alt.Chart(marks)
        .mark_rule(size=2)
        .encode(
            x="x:Q",
            color=alt.Color(
                "mark:N",
                title=None,
                scale=alt.Scale(
                    domain=["zero", f"{confidence_label} interval", "observed difference"],
                    range=["#000000", "#D55E00", "#0072B2"],
                ),
            ),
            strokeDash=alt.StrokeDash(
                "mark:N",
                legend=None,
                scale=alt.Scale(
                    domain=["zero", f"{confidence_label} interval", "observed difference"],
                    range=[[1, 0], [6, 3], [1, 0]],
                ),
            ),
            tooltip=["mark:N", alt.Tooltip("x:Q", format="+.4f")],
        )
    )
    return (
        alt.layer(bars, rules)
        .properties(
            width=WIDTH,
            height=200,
            title=f"Bootstrap distribution of the mean difference in {metric}",
        )
        .to_dict()
    )
