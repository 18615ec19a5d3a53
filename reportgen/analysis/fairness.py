"""Fair-comparison checks: could something other than a better system explain the gain?"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..formatting import fmt_num
from .metrics import MetricTables
from .spans import CHAR_METRICS

BUDGET_TOLERANCE = 0.10  # relative difference of the mean context budget
CEILING_GAP = 0.02  # best possible means further apart: the runs have different room
LOW_CEILING = 0.5  # best possible mean below it: read the metric against its ceiling


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
    # span logs: the prompt's characters, which compare chunkings of different sizes (NULL
    # where a prompt is not logged: compared where both are known, as passages are)
    measured = p.loc[p[["prompt_chars_a", "prompt_chars_b"]].notna().all(axis=1)]
    chars = not tokens and len(measured) > 0
    unit, column = (
        ("tokens", "context_tokens")
        if tokens
        else ("characters", "prompt_chars")
        if chars
        else ("passages", "k")
    )
    # k is NULL where a prompt is null (not logged): passages are compared where both are known
    known = p.loc[p[["k_a", "k_b"]].notna().all(axis=1), ["k_a", "k_b"]]
    passages = tables.k_source == "context_ids" and bool((known > 0).any().all())
    if tokens or chars or passages:
        budget = p if tokens else measured if chars else known
        a, b = float(budget[f"{column}_a"].mean()), float(budget[f"{column}_b"].mean())
        relative = (b - a) / a if a else None
        flagged = relative is not None and abs(relative) > BUDGET_TOLERANCE
        text = (
            f"Mean context per question: A {a:.1f} {unit}, B {b:.1f} {unit}"
            + (f" ({relative:+.0%})" if relative is not None else "")
            + (
                ""
                if len(budget) == len(p)
                else f" over the {len(budget)} questions measured in both"
            )
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
    if tables.named_cutoff is not None and passages:
        k_a = _mode(known["k_a"].to_numpy())
        k_b = _mode(known["k_b"].to_numpy())
        differ = known["k_a"] != known["k_b"]
        flagged = k_a != k_b or bool(differ.any())
        share = float(differ.mean())
        text = (
            f"Passages in the prompt, most often: A {k_a}, B {k_b}; they differ on "
            f"{share:.0%} of "
            + (
                "questions."
                if len(known) == len(p)
                else f"the {len(known)} questions whose prompt both runs log."
            )
            + (" Retrieval metrics then compare different cutoffs." if flagged else "")
        )
        checks.append(Check("prompt k", flagged, text, {"a": k_a, "b": k_b, "share_differ": share}))
    # one passage may cover several span labels and one label need several passages: no ceiling
    if (
        "precision" in tables.metrics
        and tables.named_cutoff
        and CHAR_METRICS[0] not in tables.metrics
    ):
        checks += _ceilings(tables)
    return checks


def _ceilings(tables: MetricTables) -> list[Check]:
    """The best mean each capped metric can reach at the run's own prompt cutoff.

    With R relevant passages and k slots, precision@k is at most min(R, k) / k and recall@k at
    most min(R, k) / R; hit, MRR and nDCG can always reach 1. A ceiling changes how to read the
    comparison when it differs between the runs (a gain may be room, not quality) or when it is
    so low that the metric's values say little against 1.
    """
    p, k = tables.paired, tables.named_cutoff
    checks = []
    for metric, bound in (
        ("precision", lambda r, slots: np.minimum(r, slots) / slots),
        ("recall", lambda r, slots: np.minimum(r, slots) / r),
    ):
        if metric not in tables.metrics:
            continue
        best: dict[str, float] = {}
        for run in ("a", "b"):
            r = p[f"n_relevant_{run}"].to_numpy(dtype=float)
            slots = p[f"k_{run}"].to_numpy(dtype=float, na_value=np.nan)  # NaN: not logged
            scored = (r > 0) & (slots > 0)
            if scored.any():
                best[run] = float(bound(r[scored], slots[scored]).mean())
        if len(best) < 2 or min(best.values()) >= 1:
            continue
        a, b = best["a"], best["b"]
        median = float(np.median(p.loc[p["n_relevant_a"] > 0, "n_relevant_a"]))
        name = f"{metric}@{k}"
        apart = abs(b - a) > CEILING_GAP
        low = min(a, b) < LOW_CEILING
        bound_text = (
            f"{name} cannot exceed {fmt_num(a)} here in either run"
            if fmt_num(a) == fmt_num(b)
            else f"{name} cannot exceed {fmt_num(a)} in A and {fmt_num(b)} in B"
        )
        why = f"questions have a median of {median:g} relevant passage(s) for {k} slots"
        if apart:
            advice = "; the runs have different room: part of B \u2212 A may be room, not quality."
        elif low:
            advice = f"; read its values against {fmt_num(min(a, b))}, not against 1."
        else:
            advice = "; the same in both runs, so B \u2212 A reads as it is."
        checks.append(
            Check(
                f"{metric} ceiling",
                apart or low,
                f"{bound_text} ({why}){advice}",
                {"a": a, "b": b, "ceiling": min(a, b), "median_relevant": median, "k": k},
            )
        )
    return checks
