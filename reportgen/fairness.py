"""Fair-comparison checks: could something other than a better system explain the gain?"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .formatting import fmt_num
from .metrics import MetricTables

BUDGET_TOLERANCE = 0.10  # relative difference of the mean context budget


@dataclass(frozen=True)
class Check:
    name: str
    flagged: bool
    text: str
    numbers: dict[str, float | int | None]


def _mode(values: np.ndarray) -> int | None:
    if not len(values):
        return None
    found, counts = np.unique(values, return_counts=True)
    return int(found[counts == counts.max()].min())


def fairness(tables: MetricTables) -> list[Check]:
    p = tables.paired
    checks = []
    tokens = p["context_tokens_a"].notna().all() and p["context_tokens_b"].notna().all()
    unit, column = ("tokens", "context_tokens") if tokens else ("passages", "k")
    if tokens or tables.k_source == "context_ids":
        a, b = float(p[f"{column}_a"].mean()), float(p[f"{column}_b"].mean())
        relative = (b - a) / a if a else None
        flagged = relative is not None and abs(relative) > BUDGET_TOLERANCE
        text = (
            f"Mean context per question: A {a:.1f} {unit}, B {b:.1f} {unit}"
            + (f" ({relative:+.0%})" if relative is not None else "")
            + (
                "; a bigger budget, not a better retriever, may explain the gain."
                if flagged
                else f"; within {BUDGET_TOLERANCE:.0%}."
            )
        )
        checks.append(
            Check(
                "context budget",
                flagged,
                text,
                {"a": a, "b": b, "relative": relative, "unit_tokens": int(tokens)},
            )
        )
    if tables.k is not None and tables.k_source == "context_ids":
        k_a = _mode(p["k_a"].to_numpy())
        k_b = _mode(p["k_b"].to_numpy())
        flagged = k_a != k_b or bool((p["k_a"] != p["k_b"]).any())
        share = float((p["k_a"] != p["k_b"]).mean())
        text = (
            f"Passages in the prompt, most often: A {k_a}, B {k_b}; they differ on "
            f"{share:.0%} of questions."
            + (" Retrieval metrics then compare different cutoffs." if flagged else "")
        )
        checks.append(Check("prompt k", flagged, text, {"a": k_a, "b": k_b, "share_differ": share}))
    if "precision" in tables.metrics and tables.k:
        k = tables.k
        r = p["n_relevant_a"].to_numpy(dtype=float)
        r = r[r > 0]
        if len(r):
            ceiling = float(np.minimum(r, k).mean() / k)
            median = float(np.median(r))
            flagged = ceiling < 1
            text = (
                f"precision@{k} cannot exceed {fmt_num(ceiling)} on average here: questions have "
                f"a median of {median:g} relevant passage(s) for {k} slots, so read recall and "
                "hit for retrieval quality."
                if flagged
                else f"Every question has {k} or more relevant passages: precision@{k} can reach 1."
            )
            checks.append(
                Check(
                    "precision ceiling",
                    flagged,
                    text,
                    {"ceiling": ceiling, "median_relevant": median, "k": k},
                )
            )
    return checks
