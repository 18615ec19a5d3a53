"""Every metric broken down by slice: where the gain comes from and where B regresses."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .metrics import BINARY, MetricTables, Options
from .stats import MetricComparison, compare_metric, holm

SMALL_SLICE = 10  # fewer questions than this give a direction, not proof
MISSING = "(none)"


@dataclass(frozen=True)
class SliceResult:
    column: str
    value: str
    comparison: MetricComparison
    p_holm: float
    regression: bool  # B - A is negative here while positive overall

    @property
    def small(self) -> bool:
        return self.comparison.n < SMALL_SLICE


def slice_results(
    tables: MetricTables,
    values: dict[str, pd.Series],
    overall: dict[str, MetricComparison],
    options: Options,
) -> dict[str, dict[str, list[SliceResult]]]:
    """column -> metric name -> one result per slice value (sorted by value).

    ``values`` maps a slice column to its value for each paired question (aligned with
    ``tables.paired``). Holm's adjustment runs over the slices of one metric and column.
    """
    out: dict[str, dict[str, list[SliceResult]]] = {}
    for column, series in values.items():
        labels = series.fillna(MISSING).astype(str).to_numpy()
        out[column] = {}
        for base in tables.metrics:
            name = tables.name(base)
            a = tables.paired[f"{base}_a"].to_numpy(dtype=float)
            b = tables.paired[f"{base}_b"].to_numpy(dtype=float)
            scored = []
            for value in np.unique(labels):
                mask = labels == value
                c, _ = compare_metric(
                    name,
                    a[mask],
                    b[mask],
                    binary=base in BINARY,
                    n_boot=options.n_boot,
                    confidence=options.confidence,
                    seed=options.seed,
                )
                if c.n:
                    scored.append((str(value), c))
            adjusted = holm([c.p_sign for _, c in scored])
            out[column][name] = [
                SliceResult(
                    column=column,
                    value=value,
                    comparison=c,
                    p_holm=p,
                    regression=overall[name].diff > 0 and c.diff < 0,
                )
                for (value, c), p in zip(scored, adjusted, strict=True)
            ]
    return out
