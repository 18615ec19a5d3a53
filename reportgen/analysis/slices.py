"""Every metric broken down by slice: where the gain comes from and where B regresses."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..formatting import EMPTY, NOISE
from .metrics import MetricTables, Options
from .registry import base_name
from .scores import oriented
from .stats import (
    IntervalSides,
    MetricComparison,
    bound_p,
    compare_with_sides,
    holm,
    significance,
)

SMALL_SLICE = 10  # fewer questions than this give a direction, not proof
MISSING = "(none)"


@dataclass(frozen=True)
class SliceEvidence:
    """The difference in one slice, with its bootstrap means and the sides of its interval (for
    the one-sided p-value of its bound at a rule's margin)."""

    value: str
    comparison: MetricComparison
    means: np.ndarray
    sides: IntervalSides


@dataclass(frozen=True)
class SliceResult:
    column: str
    value: str
    comparison: MetricComparison
    p_holm: float
    p_bound_holm: float  # one-sided p of the interval lying wholly on the worse side of 0
    # (stats.bound_p), Holm-adjusted over the same slices: a per-slice gate rule's reading
    regression: bool  # B worse here (beyond NOISE), flagged: a finding, or against an overall
    # gain (B ahead on the overall mean), where a loss short of a finding is a direction
    finding: bool  # B worse here, SMALL_SLICE questions or more, Holm-adjusted p < 1 - confidence
    # and p_bound_holm < (1 - confidence) / 2, whatever B does overall

    @property
    def small(self) -> bool:
        return self.comparison.n < SMALL_SLICE


def slice_results(
    tables: MetricTables,
    values: dict[str, pd.Series],
    overall: dict[str, MetricComparison],
    options: Options,
    clusters: np.ndarray | None = None,
) -> tuple[dict[str, dict[str, list[SliceResult]]], dict[tuple[str, str], list[SliceEvidence]]]:
    """column -> metric name -> one result per slice value (sorted by value); and (metric
    name, column) -> the evidence of each slice (in_slice_order; one of no question too),
    which a gate's per-slice rules read, so that they judge the table's own resamples.

    ``values`` maps a slice column to its value for each paired question (aligned with
    ``tables.paired``); ``clusters`` (--cluster, aligned likewise) are resampled within each
    slice as overall: a slice of 12 questions about 2 documents is 2 independent units.
    Holm's adjustment runs over every slice of one metric, of all slice columns together, so
    that the chance of any false regression finding on a metric stays at 1 - confidence (the
    family-wise error rate). The slices are compared on as many threads as there are cores,
    each drawing its bootstrap on one: a slice is a few milliseconds of numpy, too little to
    split further, and its numbers depend on its seed only.
    """
    scores = {
        base: tuple(tables.paired[f"{base}_{run}"].to_numpy(dtype=float) for run in "ab")
        for base in tables.metrics
    }
    tasks = [
        (column, base, value, positions)
        for column, series in values.items()
        for members in [_members(slice_labels(series))]
        for base in tables.metrics
        for value, positions in members.items()
    ]

    def compared(task: tuple[str, str, str, np.ndarray]) -> tuple[SliceEvidence, float]:
        _, base, value, positions = task
        a, b = scores[base]
        c, means, sides = compare_with_sides(
            tables.name(base),
            a[positions],
            b[positions],
            binary=tables.binary(base),
            n_boot=options.n_boot,
            confidence=options.confidence,
            seed=options.seed,
            clusters=None if clusters is None else clusters[positions],
            threads=1,
        )
        # B worse lies below 0, or above it where lower is better: the bound on that side
        bound = bound_past(c, means, sides, 0.0, tables.metric(base).higher_is_better)
        return SliceEvidence(value, c, means, sides), bound

    scored: dict[tuple[str, str], list[tuple[str, MetricComparison, float]]] = {
        (column, tables.name(base)): [] for column in values for base in tables.metrics
    }
    evidence: dict[tuple[str, str], list[SliceEvidence]] = {
        (name, column): [] for (column, name) in scored
    }
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # a slice per thread
        for (column, base, value, _), (found, bound) in zip(
            tasks, pool.map(compared, tasks), strict=True
        ):
            evidence[tables.name(base), column].append(found)
            if found.comparison.n:
                row = (value, oriented(found.comparison, tables.metric(base)), bound)
                scored[column, tables.name(base)].append(row)
    adjusted: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for name in overall:
        family = [key for key in scored if key[1] == name]
        tested = holm([c.p for key in family for _, c, _ in scored[key]])
        bounds = holm([bound for key in family for _, _, bound in scored[key]])
        pairs = list(zip(tested, bounds, strict=True))
        for key in family:
            adjusted[key], pairs = pairs[: len(scored[key])], pairs[len(scored[key]) :]
    out: dict[str, dict[str, list[SliceResult]]] = {column: {} for column in values}
    alpha = significance(options.confidence)
    for (column, name), rows in scored.items():
        out[column][name] = []
        for (value, c, _), (p, bound) in zip(rows, adjusted[column, name], strict=True):
            higher = tables.metric(base_name(name)).higher_is_better
            finding = is_finding(c, p, bound, alpha, higher)
            # a difference under NOISE is float rounding (0.3 - 0.1 against 0.5 - 0.7), no
            # direction for a slice to go against, nor a slice going against it; a finding is
            # flagged whatever B does overall: a flat mean hides a loss as a rising one does
            sign = 1 if higher else -1
            against = sign * overall[name].diff >= NOISE and sign * c.diff <= -NOISE
            result = SliceResult(column, value, c, p, bound, against or finding, finding)
            out[column][name].append(result)
    return out, evidence


def bound_past(
    c: MetricComparison, means: np.ndarray, sides: IntervalSides, value: float, upper: bool
) -> float:
    """One-sided p that the slice's ``upper`` bound lies below ``value`` (else its lower bound
    above it), as stats.bound_p reads the interval the report prints; 1 for a slice without an
    interval (one question, or one cluster of --cluster): it gives no evidence. The slice
    table and a per-slice rule both read a slice's bound here: the table had read the
    resamples of one value as p 0, and the two took one slice into their Holm families two
    ways."""
    if math.isnan(c.ci_low) or math.isnan(c.ci_high):
        return 1.0
    return bound_p(sides, means, value, upper, max(abs(c.a), abs(c.b)))


def is_finding(
    c: MetricComparison, p_holm: float, p_bound_holm: float, alpha: float, higher_is_better: bool
) -> bool:
    """A slice's loss that is a finding: B worse (beyond NOISE), Holm-adjusted ``p_holm`` below
    ``alpha``, SMALL_SLICE questions or more (fewer give a direction, however small the p), and
    the interval wholly on the worse side at the level Holm's adjustment asks for
    (``p_bound_holm`` below ``alpha`` / 2, one side), as a gate's per-slice rule reads it: where
    the test and the interval disagree it is no finding. Every question of a slice of 15 down
    0.3 read a regression (sign flips, Holm 0.0002, an interval of [-0.443, -0.035] before the
    adjustment) where 'faithfulness[slice] >= 0' passed (its bound's Holm-adjusted p 0.034)."""
    sign = 1 if higher_is_better else -1
    return (
        sign * c.diff <= -NOISE
        and p_holm < alpha
        and c.n >= SMALL_SLICE
        and p_bound_holm < alpha / 2
    )


def _members(labels: pd.Series) -> dict[str, np.ndarray]:
    """Each slice value (in_slice_order) -> the positions of its questions, in question order.

    Grouped once per column rather than once per metric: sorting and comparing every question's
    label for each metric cost about a second at 100,000 questions.
    """
    codes, names = pd.factorize(labels)
    positions = {str(name): np.flatnonzero(codes == k) for k, name in enumerate(names)}
    return {value: positions[value] for value in in_slice_order(positions)}


def slice_labels(values: pd.Series) -> pd.Series:
    """Each question's slice value as text, as every table and JSON key names it: a null is
    MISSING, and a logged value that reads like a placeholder (MISSING, or EMPTY, the page's
    name for the empty value) is quoted, so that a slice logged as "(none)" is not merged with
    the questions that have no value, nor "(empty)" shown as the empty one."""
    labels = values.fillna(MISSING).astype(str)
    logged = values.notna() & labels.isin([MISSING, EMPTY])
    return labels.mask(logged, '"' + labels + '"')


def in_slice_order(values: Iterable[str]) -> list[str]:
    """Distinct slice values in the order every table lists them: as numbers when each one is a
    finite number (2 before 10, where text puts "10" first), else as text; the empty value and
    MISSING first either way."""
    distinct = sorted(set(values))
    first = [v for v in distinct if v in ("", MISSING)]
    rest = [v for v in distinct if v not in ("", MISSING)]
    numbers = [_number(v) for v in rest]
    if all(n is not None for n in numbers):
        rest = [v for _, v in sorted(zip(numbers, rest, strict=True))]
    return first + rest


def _number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None
