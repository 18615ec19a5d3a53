"""Altair chart specs of the report. Each returns a Vega-Lite dict with its data inline.

Colours are from the Okabe-Ito palette (safe for the common colour-vision deficiencies).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from ...analysis.registry import CHARTED
from ...analysis.slices import SMALL_SLICE
from ...formatting import bidi_isolated, fmt_diff
from ..user_text import drawable
from . import svg_process


@dataclass(frozen=True)
class Chart:
    """A chart as the page shows it."""

    id: str
    title: str
    reading: str = field(metadata={"help": "one sentence: what the chart says"})
    spec: dict[str, Any] = field(metadata={"help": "Vega-Lite spec, data inline"})

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", drawable(self.spec))  # its texts go into an SVG
        svg_process.ahead(self.spec)  # its static SVG is drawn while the page builds the rest


@dataclass(frozen=True)
class RunColours:
    """The colours of the two runs a comparison's charts draw: A (the baseline) and B."""

    a: str
    b: str

    def scale(self) -> alt.Scale:
        return alt.Scale(domain=["A", "B"], range=[self.a, self.b])


RUN_COLOURS = RunColours(a="#E69F00", b="#56B4E9")  # the two-run page's
OUTCOME_COLOURS = {"B wins": "#0072B2", "tie": "#BBBBBB", "B loses": "#D55E00"}
MAX_POINTS = 400  # a chart draws at most this many per-question marks
MAX_CUTOFFS = 200  # the metric-vs-k chart draws at most this many cutoffs per line
WIDTH = 640
SMALL, ENOUGH = f"under {SMALL_SLICE} questions", f"{SMALL_SLICE} or more"  # forest legend


def _outcome_scale() -> alt.Scale:
    return alt.Scale(domain=list(OUTCOME_COLOURS), range=list(OUTCOME_COLOURS.values()))


def differences(
    question_ids: list[str], diff: np.ndarray, metric: str, higher_is_better: bool = True
) -> dict[str, Any]:
    """Per-question B - A of one metric, sorted: a waterfall of wins and losses (a win is a
    fall for a metric where lower is better).

    Past MAX_POINTS questions the sorted curve is drawn through evenly spaced ranks, which keeps
    its shape; the tooltips then show ranks, not question ids.
    """
    order = np.argsort(-diff, kind="stable")
    ranks = np.arange(1, len(diff) + 1)
    if len(diff) > MAX_POINTS:
        order = order[np.linspace(0, len(diff) - 1, MAX_POINTS).round().astype(int)]
        ranks = ranks[np.linspace(0, len(diff) - 1, MAX_POINTS).round().astype(int)]
    values = diff[order]
    gain = values if higher_is_better else -values
    frame = pd.DataFrame(
        {
            "rank": ranks,
            "question_id": [question_ids[i] for i in order],
            "diff": values,
            "text": [fmt_diff(v) for v in values],  # as the cells print it, for the tooltip
            "outcome": np.where(gain > 0, "B wins", np.where(gain < 0, "B loses", "tie")),
        }
    )
    chart = alt.Chart(frame, title=f"Per-question difference B \u2212 A in {metric}")
    # every question a tie (B = A): bars of no height drew an empty frame; a tick at 0 each
    marked = chart.mark_bar() if values.any() else chart.mark_tick(orient="horizontal", thickness=4)
    return (
        marked.encode(
            x=alt.X(
                "rank:Q",
                title="questions, sorted by difference",
                scale=alt.Scale(domain=[0, int(ranks[-1]) + 1], nice=False),
            ),
            y=alt.Y("diff:Q", title=f"B \u2212 A ({metric})"),
            color=alt.Color("outcome:N", scale=_outcome_scale(), title=None),
            tooltip=[
                alt.Tooltip("question_id:N"),
                alt.Tooltip("text:N", title="diff"),  # as the cell prints it: 0.000, not −0.000
                alt.Tooltip("outcome:N"),
            ],
        )
        .properties(width=WIDTH, height=220)
        .to_dict(validate=False)
    )


LOG_K_ABOVE = 100  # deeper rankings draw k on a log scale, so the prompt's few k stay visible


def metric_curve(
    curve: pd.DataFrame, named_cutoff: int, colours: RunColours, marked: str = "the prompt's k"
) -> dict[str, Any]:
    """Mean retrieval metrics of both runs at every cutoff, the cutoff of the metrics' names
    marked (``marked`` says what it is: the prompt's k, or the cutoff --k scores where the
    prompts logged hold another number of passages).

    Rankings deeper than MAX_CUTOFFS are drawn through log-spaced cutoffs (dense where the
    metrics change fast), always including 1, the prompt's k and the deepest; the title says so.
    Rankings that end short of the cutoff (a --k past every ranking) leave no headroom: the axis
    runs to the cutoff, drawn past the lines' end, and the title says where they end.
    """
    curve = curve[curve["metric"].isin(CHARTED)]  # the JSON has every metric
    frame = curve.assign(run=curve["run"].str.upper())
    depth = int(frame["k"].max())
    drawn = ""
    if depth > MAX_CUTOFFS:
        cutoffs = np.unique(np.geomspace(1, depth, MAX_CUTOFFS - 1).round().astype(int))
        frame = frame[frame["k"].isin([*cutoffs, named_cutoff])]
        drawn = f" Drawn at {frame['k'].nunique()} of the {depth} cutoffs."
    end = max(depth, named_cutoff)  # the axis' end: the cutoff, where the rankings end short
    log = end > LOG_K_ABOVE
    base = alt.Chart()
    lines = base.mark_line().encode(
        x=alt.X(
            "k:Q",
            title=f"cutoff k (passages{', log scale' if log else ''})",
            scale=alt.Scale(domain=[1, end], nice=False, type="log" if log else "linear"),
        ),
        y=alt.Y("value:Q", title="mean over questions", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("run:N", title="run", scale=colours.scale()),
        strokeDash=alt.StrokeDash("run:N", legend=None),
        tooltip=[
            *map(alt.Tooltip, ["run:N", "metric:N", "k:Q"]),
            alt.Tooltip("value:Q", format=".3f"),
        ],
    )
    # One row per panel, so the cutoff and the headroom are drawn once in each.
    once = base.transform_filter((alt.datum.k == 1) & (alt.datum.run == "A"))
    headroom = once.mark_rect(color="#000000", opacity=0.06).encode(
        x=alt.XDatum(named_cutoff), x2=alt.X2Datum(depth)
    )
    cutoff = once.mark_rule(color="#000000", strokeDash=[4, 3]).encode(x=alt.XDatum(named_cutoff))
    marks = [headroom, cutoff] if named_cutoff < depth else [cutoff]
    reading = (
        "the shaded part past it is headroom, not quality."
        if named_cutoff < depth
        else f"the rankings end at {depth}{', short of it' if depth < named_cutoff else ''}."
    )
    return (
        alt.layer(*marks, lines, data=frame)
        .properties(width=230, height=170)
        .facet(
            facet=alt.Facet("metric:N", title=None, sort=list(CHARTED)),
            columns=3,
        )
        # an x axis under each panel: shared, it was drawn under the empty cell of a last row
        .resolve_axis(x="independent")
        .properties(
            title=f"Read each metric at {marked} = {named_cutoff} (dashed): {reading}{drawn}"
        )
        .to_dict(validate=False)
    )


def _bin_edges(values: np.ndarray, bins: int = 40, span: float = 1.0) -> np.ndarray | int:
    """About ``bins`` equal bins; on a lattice (means of a binary outcome are multiples of 1/n)
    each bin holds the same number of lattice points, so the histogram shows no false spikes.
    One value (B = A: every resample 0) is one bar centred on it, 1/``bins`` of ``span`` (the
    axis the chart draws) wide: numpy's bins of v - 0.5 to v + 0.5 drew it from v to v + 0.025,
    right of the zero line and across an upper bound of +0.016."""
    points = np.unique(values)
    if len(points) < 2:
        return np.array([-0.5, 0.5]) * span / bins + (points[0] if len(points) else 0.0)
    step = float(np.min(np.diff(points)))
    span = float(points[-1] - points[0])
    if not np.allclose((points - points[0]) / step, np.round((points - points[0]) / step)):
        return bins
    width = step * max(1, int(np.ceil(span / step / bins)))
    return np.arange(points[0] - step / 2, points[-1] + width, width)


def bootstrap(
    means: np.ndarray,
    diff: float,
    low: float,
    high: float,
    metric: str,
    confidence_label: str,
    *,
    normal: bool = False,
) -> dict[str, Any]:
    """Histogram of the bootstrap means of B - A (with ``normal``: draws of the mean's normal
    limit, which stand for them on large sets), the interval (dashed) and zero (solid) marked."""
    drawn_at = np.array([0.0, low, high, diff, *means[:1]])
    span = float(np.nanmax(drawn_at) - np.nanmin(drawn_at)) or 1.0
    counts, edges = np.histogram(means, bins=_bin_edges(means, span=span))
    unit, drawn = ("draws", "a draw of the mean") if normal else ("resamples", "mean of a resample")
    bins = pd.DataFrame({"start": edges[:-1], "end": edges[1:], unit: counts})
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
            x=alt.X("start:Q", bin="binned", title=f"B \u2212 A in {metric}, {drawn}"),
            x2=alt.X2("end:Q"),
            y=alt.Y(f"{unit}:Q", title=unit),
        )
    )
    rules = (
        alt.Chart(marks)
        .mark_rule(size=2)
        .encode(
            x=alt.X("x:Q"),
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
            tooltip=[alt.Tooltip("mark:N"), alt.Tooltip("x:Q", format="+.4f")],
        )
    )
    return (
        alt.layer(bars, rules)
        .properties(
            width=WIDTH,
            height=200,
            title=f"{'Normal limit' if normal else 'Bootstrap distribution'} of the mean "
            f"difference in {metric}",
        )
        .to_dict(validate=False)
    )


AXIS_LABEL = 48  # characters of a slice's label on the slice chart's axis, cut in its middle


def forest(
    rows: pd.DataFrame, overall: float, metric: str, column: str, higher_is_better: bool
) -> dict[str, Any]:
    """One row per slice: B - A with its interval, zero (solid) and the overall difference (dashed),
    each point coloured as B's loss where B is worse (below zero, or above where lower is better).

    ``rows`` has columns slice, n, diff, low, high, small (bool).
    """
    frame = rows.assign(
        label=[
            f"{bidi_isolated(s)} (n={n:,})" for s, n in zip(rows["slice"], rows["n"], strict=True)
        ],
        evidence=np.where(rows["small"], SMALL, ENOUGH),
        text=[fmt_diff(d) for d in rows["diff"]],  # as the slice table prints it
    )
    # a long slice value is cut in its middle on the axis (Vega cuts a label at its end, and
    # "(n=34)" went with it); the rows, and the tooltip, keep the whole label. No axis title:
    # Vega placed it over labels drawn so, and the chart's title names the column
    cut = (
        f"length(datum.label) > {AXIS_LABEL} ? substring(datum.label, 0, {AXIS_LABEL // 2 - 1})"
        f" + '\u2026' + substring(datum.label, length(datum.label) - {AXIS_LABEL // 2})"
        " : datum.label"
    )
    axis = alt.Axis(labelExpr=cut, labelLimit=320)
    y = alt.Y("label:N", title=None, sort=list(frame["label"]), axis=axis)
    whiskers = (
        alt.Chart(frame)
        .mark_rule(strokeWidth=2)
        .encode(
            y=y,
            x=alt.X("low:Q", title=f"B \u2212 A in {metric}"),
            x2=alt.X2("high:Q"),
            color=alt.ColorValue("#555555"),
        )
    )
    points = (
        alt.Chart(frame)
        .mark_point(filled=True, size=90)
        .encode(
            y=y,
            x=alt.X("diff:Q"),
            shape=alt.Shape(
                "evidence:N",
                title=None,
                scale=alt.Scale(domain=[ENOUGH, SMALL], range=["circle", "triangle-up"]),
            ),
            color=alt.ColorValue(
                **alt.condition(
                    alt.datum.diff < 0 if higher_is_better else alt.datum.diff > 0,
                    alt.value(OUTCOME_COLOURS["B loses"]),
                    alt.value(OUTCOME_COLOURS["B wins"]),
                )
            ),
            tooltip=[
                alt.Tooltip("label:N"),
                alt.Tooltip("text:N", title="diff"),  # as the cell prints it: 0.000, not −0.000
                alt.Tooltip("low:Q", format="+.3f"),
                alt.Tooltip("high:Q", format="+.3f"),
            ],
        )
    )
    zero = alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(color="#000000").encode(x=alt.X("x:Q"))
    mean = (
        alt.Chart(pd.DataFrame({"x": [overall]}))
        .mark_rule(color="#0072B2", strokeDash=[5, 3])
        .encode(x=alt.X("x:Q"))
    )
    return (
        alt.layer(zero, mean, whiskers, points)
        .properties(
            width=420,
            height=max(60, 28 * len(frame)),
            title=f"{metric} by {column}: B \u2212 A per slice (dashed: overall)",
        )
        .to_dict(validate=False)
    )


def failure_classes(counts: pd.DataFrame, colours: RunColours) -> dict[str, Any]:
    """Questions per failure class, both runs side by side (``counts``: run, failure_class, n)."""
    frame = counts.assign(run=counts["run"].str.upper())
    order = list(dict.fromkeys(frame["failure_class"]))
    return (
        alt.Chart(frame, title="Failure classes: where each run loses its questions")
        .mark_bar()
        .encode(
            y=alt.Y("failure_class:N", title=None, sort=order),
            yOffset=alt.YOffset("run:N"),
            x=alt.X("n:Q", title="questions"),
            color=alt.Color("run:N", title="run", scale=colours.scale()),
            tooltip=list(map(alt.Tooltip, ["run:N", "failure_class:N", "n:Q"])),
        )
        .properties(width=420, height=alt.Step(11))
        .to_dict(validate=False)
    )


# Okabe-Ito, in an order whose neighbours differ most: one colour per run of a study, on every
# chart; the two-run page keeps RUN_COLOURS.
STUDY_COLOURS = (
    "#000000",
    "#E69F00",
    "#56B4E9",
    "#009E73",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
    "#F0E442",
)


def run_means(frame: pd.DataFrame, metric: str, colours: list[str]) -> dict[str, Any]:
    """Every run's mean of the headline metric with its interval, one colour per run.

    ``frame`` has columns run, mean, low, high, in run order (the baseline first).
    """
    scale = alt.Scale(domain=list(frame["run"]), range=colours)
    y = alt.Y("run:N", title=None, sort=list(frame["run"]))
    whiskers = (
        alt.Chart(frame)
        .mark_rule(strokeWidth=2)
        .encode(
            y=y, x=alt.X("low:Q", title=metric, scale=alt.Scale(zero=False)), x2=alt.X2("high:Q")
        )
        .encode(color=alt.Color("run:N", scale=scale, legend=None))
    )
    points = (
        alt.Chart(frame)
        .mark_point(filled=True, size=110)
        .encode(
            y=y,
            x=alt.X("mean:Q"),
            color=alt.Color("run:N", scale=scale, legend=None),
            tooltip=[
                alt.Tooltip("run:N"),
                alt.Tooltip("mean:Q", format=".3f"),
                alt.Tooltip("low:Q", format=".3f"),
                alt.Tooltip("high:Q", format=".3f"),
            ],
        )
    )
    return (
        alt.layer(whiskers, points)
        .properties(width=420, height=max(60, 30 * len(frame)), title=f"{metric} of every run")
        .to_dict(validate=False)
    )


def difference_matrix(frame: pd.DataFrame, metric: str) -> dict[str, Any]:
    """Run by run: the mean headline difference column - row; a cell is outlined when its
    interval and its test agree that the runs differ.

    ``frame`` has columns row, column, diff, text, differs and borderline (bool), and the run
    order in both.
    """
    order = list(dict.fromkeys(frame["row"]))
    base = alt.Chart(frame).encode(
        x=alt.X("column:N", title="run", sort=order),
        y=alt.Y("row:N", title="minus run", sort=order),
    )
    limit = float(max(frame["diff"].abs().max(), 1e-9))
    cells = base.mark_rect(stroke="#000000").encode(
        color=alt.Color(
            "diff:Q",
            title=f"\u0394 {metric}",
            scale=alt.Scale(scheme="blueorange", reverse=True, domain=[-limit, limit]),
        ),
        strokeWidth=alt.StrokeWidthValue(
            **alt.condition(alt.datum.differs, alt.value(2.5), alt.value(0))
        ),
        tooltip=[
            *map(alt.Tooltip, ["row:N", "column:N"]),
            alt.Tooltip("text:N", title="diff"),  # as the cell prints it: 0.000, not −0.000
            alt.Tooltip("differs:N"),
            alt.Tooltip("borderline:N"),
        ],
    )
    text = base.mark_text(fontSize=12).encode(text=alt.Text("text:N"))
    return (
        alt.layer(cells, text)
        .properties(
            width=70 * len(order),
            height=40 * len(order),
            title=f"Column run \u2212 row run in {metric} (outlined: interval and test find a "
            "difference)",
        )
        .to_dict(validate=False)
    )
