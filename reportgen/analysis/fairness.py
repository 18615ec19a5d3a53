"""Fair-comparison checks: could something other than a better system explain the gain?"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..formatting import fmt_change, fmt_count, fmt_num
from .metrics import MetricTables, every_prompt, run_prompts
from .registry import ANSWER, SCORE
from .spans import CHAR_METRICS

BUDGET_TOLERANCE = 0.10  # relative difference of the mean context budget
# flagged, these say that B - A may not be a better retriever (or generator): the
# page's "Read first" box and the Markdown summary carry them, beside the numbers CI reads
READ_FIRST = ("context budget", "prompt k")
CEILING_GAP = 0.02  # best possible means further apart: the runs have different room
LOW_CEILING = 0.5  # best possible mean below it: read the metric against its ceiling
# what measures the context, best first: tokens as logged; a span log's prompt characters, which
# compare chunkings of different sizes; else the passages of the prompt (context_ids: what the
# generator received, whether or not --k scores another cut of the ranking)
BUDGET_UNITS = (
    ("context_tokens", "tokens"),
    ("prompt_chars", "characters"),
    ("passages", "passages"),
)


@dataclass(frozen=True)
class Check:
    name: str
    flagged: bool
    text: str
    numbers: dict[str, float | int | None]


def _modes(sizes: pd.Series) -> list[int]:
    """The most common prompt sizes, smallest first (several on a tie); none without a prompt."""
    if not len(sizes):
        return []
    found, counts = np.unique(sizes.to_numpy(), return_counts=True)
    return [int(size) for size in found[counts == counts.max()]]


def fairness(tables: MetricTables, ahead: tuple[str, str] | None = None) -> list[Check]:
    """The checks of a comparison; ``ahead``: the run ahead on the headline's mean ("A" or "B")
    and the headline, None when they are level, which the budget's advice reads."""
    p = tables.paired
    # passages is NULL where a prompt is null (not logged): compared where both are known
    measured = _measured(p, "passages")
    known = measured[["passages_a", "passages_b"]]
    passages = bool((known > 0).any().any())  # a run that sent none is a size too
    checks = []
    answers = any(tables.metric(m).kind in (ANSWER, SCORE) for m in tables.metrics)
    budget = _budget(p, passages, "retriever or generator" if answers else "retriever", ahead)
    if budget is not None:
        checks.append(budget)
    # with --k, prompts that are all empty are a size too: the metrics score k passages of
    # rankings no generator received
    sized = passages or (tables.k_source == "--k" and len(known) > 0)
    if tables.named_cutoff is not None and sized:
        modes = prompt_modes(tables)
        k_a, k_b = (next(iter(modes[run]), None) for run in "ab")  # ties: the smaller
        differ = known["passages_a"] != known["passages_b"]
        off_k = off_cutoff(tables, modes)
        one = modes["a"] == modes["b"] and len(modes["a"]) == 1  # one size both runs sent
        flagged = k_a != k_b or bool(differ.any()) or off_k
        share = float(differ.mean())
        text = (
            f"Passages in the prompt, most often: A {_or(modes['a'])}, B {_or(modes['b'])}; "
            "they differ on "
            f"{int(differ.sum())} of "
            + (
                f"{fmt_count(len(known), 'question')}."
                if len(known) == len(p)
                else f"the {fmt_count(len(known), 'question')} whose prompt both runs log."
            )
            + (
                _own_lengths(tables, measured, tables.named_cutoff)
                if not flagged
                else " Retrieval metrics then compare different cutoffs: each run's are scored "
                f"on its own prompts, whatever the @{tables.named_cutoff} in their names."
                if tables.k_source == "context_ids"
                else f" The retrieval metrics score the top {tables.named_cutoff} of both "
                f"rankings (--k); {_received(modes, tables.named_cutoff)} prompts of other sizes"
                + (
                    f", so --k {k_a} would score what they received."
                    if off_k and one and k_a
                    else "."
                )
            )
        )
        checks.append(Check("prompt k", flagged, text, {"a": k_a, "b": k_b, "share_differ": share}))
    # one passage may cover several span labels and one label need several passages: no ceiling
    if (
        "precision" in tables.metrics
        and tables.named_cutoff
        and CHAR_METRICS[0] not in tables.metrics
    ):
        checks += _ceilings(tables, tables.named_cutoff)
    return checks


def prompt_modes(tables: MetricTables) -> dict[str, list[int]]:
    """Each run's most common prompt sizes (several on a tie), over every prompt both runs log:
    a question's mean of its samples' is no prompt's size. None logged: no size."""
    if "passages_a" not in tables.paired:
        return {"a": [], "b": []}
    measured = _measured(tables.paired, "passages")
    return {run: _modes(run_prompts(measured, run)) for run in "ab"}


def off_cutoff(tables: MetricTables, modes: dict[str, list[int]]) -> bool:
    """Whether --k scores the top k of the rankings while the generators most often received
    prompts of another size (``modes``, prompt_modes): the metrics then count passages the
    generators never received, or miss some they did (a size tied for most common with k is
    not another size most often)."""
    return tables.k_source != "context_ids" and all(
        modes[run] and tables.named_cutoff not in modes[run] for run in "ab"
    )


def _own_lengths(tables: MetricTables, measured: pd.DataFrame, k: int) -> str:
    """Where prompts of one size in each question hold different numbers of passages from
    question to question (context_ids scored as logged), how many of each run's hold the
    ``k`` of the metrics' names: each question is scored at its own prompt's length, and
    @4 over prompts of 2 to 6 passages, 3 of 10 of them 4, had said nothing of it. Empty
    otherwise (one size throughout, or --k, which scores every ranking at k). ``measured``:
    the questions whose prompt both runs log (_measured), as the check's counts read them."""
    if tables.k_source != "context_ids":
        return ""
    sizes = {run: run_prompts(measured, run) for run in "ab"}
    if all(series.nunique() <= 1 for series in sizes.values()):
        return ""
    every = pd.concat(list(sizes.values()))
    held = " and ".join(
        f"{int((series == k).sum()):,} of {run.upper()}'s {len(series):,}"
        for run, series in sizes.items()
    )
    return (
        f" Prompts hold {int(every.min())} to {int(every.max())} passages, {held} hold {k}: "
        "each question's retrieval metrics score its own prompt, whatever the "
        f"@{k} in their names."
    )


def _received(modes: dict[str, list[int]], k: int) -> str:
    """Whose generator received prompts of other sizes than k: the one run whose commonest
    sizes leave k out, else both (or, where both most often sent k, those that did not)."""
    other = [run.upper() for run in "ab" if modes[run] and k not in modes[run]]
    return f"run {other[0]}'s generator received" if len(other) == 1 else "the generators received"


def _or(sizes: list[int]) -> str:
    """'5', or '3 or 5' for sizes tied for most common."""
    return " or ".join(map(str, sizes))


def _budget(
    p: pd.DataFrame, passages: bool, compared: str, ahead: tuple[str, str] | None
) -> Check | None:
    """The mean context per question of each run in the best unit measured, over the questions
    measured in both (a null or infinite value is no measurement; NULL where a prompt is not
    logged): a variant that wins by sending more context is flagged. ``compared`` names what a
    gain would otherwise credit: the retriever, and the generator where answers are scored.
    Where the run ahead on the headline (``ahead``) sent less context, its budget cannot explain
    its lead, so it is said and not flagged, as a ceiling is (_ceilings)."""
    units = ((c, u, _measured(p, c)) for c, u in BUDGET_UNITS if c != "passages" or passages)
    column, unit, measured = next((found for found in units if len(found[2])), (None, "", None))
    if column is None or measured is None:
        return None
    a, b = float(measured[f"{column}_a"].mean()), float(measured[f"{column}_b"].mean())
    relative = (b - a) / a if a else None
    # no context in A: any context in B is more, by no ratio
    apart = a != b if relative is None else abs(relative) > BUDGET_TOLERANCE
    bigger = "B" if b > a else "A"
    leader, headline = ahead or (None, "")
    flagged = apart and leader in (None, bigger)
    text = (
        f"Mean context per question: A {a:.1f} {unit}, B {b:.1f} {unit}"
        + (f" ({fmt_change(relative)})" if relative is not None else "")
        + (
            ""
            if len(measured) == len(p)
            else f" over the {fmt_count(len(measured), 'question')} measured in both"
        )
        + (
            f"; any gain of {bigger} may come from its bigger budget, not a better {compared}."
            if flagged
            else f"; {leader} is ahead on {headline} with the smaller budget, so the budget does "
            "not explain B \u2212 A."
            if apart
            else f"; within {BUDGET_TOLERANCE:.0%}."
        )
    )
    numbers = {"a": a, "b": b, "relative": relative, "unit_tokens": int(column == "context_tokens")}
    return Check("context budget", flagged, text, numbers)


def _measured(p: pd.DataFrame, column: str) -> pd.DataFrame:
    return p.loc[p[[f"{column}_a", f"{column}_b"]].notna().all(axis=1)]


def _ceilings(tables: MetricTables, k: int) -> list[Check]:
    """The best mean each capped metric can reach at the run's own prompt cutoff.

    With R relevant passages and k slots, precision@k is at most min(R, k) / k and recall@k at
    most min(R, k) / R; hit, MRR and nDCG can always reach 1. A ceiling changes how to read the
    comparison when it differs between the runs (a gain may be room, not quality) or when it is
    so low that the metric's values say little against 1.
    """
    p = tables.paired
    r = {run: p[f"n_relevant_{run}"].to_numpy(dtype=float) for run in ("a", "b")}
    ranked = {run: p[f"k_{run}"].to_numpy(dtype=float, na_value=np.nan) for run in ("a", "b")}
    # the questions the metrics' means are over: labelled evidence and a ranking in both runs
    scored = (r["a"] > 0) & (r["b"] > 0) & ~np.isnan(ranked["a"]) & ~np.isnan(ranked["b"])
    if not scored.any():
        return []
    at = np.flatnonzero(scored)
    slots = {run: _slots(tables, run, at, ranked[run][at]) for run in ("a", "b")}
    if not all(sizes.any() for _, sizes in slots.values()):
        return []  # a run whose prompts are all empty has no room to read against (its 0 is
        # by construction, which the prompt sizes' check says)
    checks = []
    for metric, bound in (
        ("precision", lambda rel, n: np.minimum(rel, n) / np.maximum(n, 1)),
        ("recall", lambda rel, n: np.minimum(rel, n) / rel),
    ):
        if metric not in tables.metrics:
            continue
        best = {
            run: _question_mean(bound(r[run][of], sizes), of) for run, (of, sizes) in slots.items()
        }
        if min(best.values()) >= 1:
            continue
        a, b = best["a"], best["b"]
        median = float(np.median(r["a"][scored]))
        name = f"{metric}@{k}"
        diff = np.nanmean(p[f"{metric}_b"].to_numpy(float) - p[f"{metric}_a"].to_numpy(float))
        apart = abs(b - a) > CEILING_GAP
        # more room in the run that comes out ahead may explain its lead; less cannot
        explains = apart and diff != 0 and (b > a) == (diff > 0)
        low = min(a, b) < LOW_CEILING
        bound_text = (
            f"{name} cannot exceed {fmt_num(a)} here in either run"
            if fmt_num(a) == fmt_num(b)
            else f"{name} cannot exceed {fmt_num(a)} in A and {fmt_num(b)} in B"
        )
        prompts = {run: float(np.median(sizes)) for run, (_, sizes) in slots.items()}
        varied = len(np.unique(np.concatenate([sizes for _, sizes in slots.values()]))) > 1
        slots_a = f"{prompts['a']:g} slot{'' if prompts['a'] == 1 else 's'}"
        room = (
            f"a median of {slots_a} in A and {prompts['b']:g} in B"
            if prompts["a"] != prompts["b"]
            else f"a median of {slots_a}"
            if varied
            else slots_a
        )
        why = (
            f"questions have a median of {median:g} relevant "
            f"{'passage' if median == 1 else 'passages'} for {room}"
        )
        if explains:
            ahead = "B" if diff > 0 else "A"
            advice = f"; {ahead}, ahead, has more room: part of B \u2212 A may be room, not quality"
        elif apart:
            advice = "; the runs have different room, " + (
                "but the run ahead has less of it, so room does not explain B \u2212 A"
                if diff != 0
                else "and B \u2212 A is 0"
            )
        elif not low:
            advice = "; the same in both runs, so B \u2212 A reads as it is"
        else:
            advice = ""
        if low:
            advice += f"; read its values against {fmt_num(min(a, b))}, not against 1"
        advice += "."
        checks.append(
            Check(
                f"{metric} ceiling",
                explains or low,
                f"{bound_text} ({why}){advice}",
                {"a": a, "b": b, "ceiling": min(a, b), "median_relevant": median, "k": k},
            )
        )
    return checks


def _slots(
    tables: MetricTables, run: str, at: np.ndarray, k: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The slots of every prompt scored of the questions at positions ``at`` of ``paired``
    (``k``: their k, 0 for an empty prompt, which scores 0), each with its question's position:
    one per question, or without --k, of a question answered several times, each sample's
    prompt, since its metrics are the mean of the samples' scores, each at its own prompt (the
    smallest, which question_means.sql keeps as k, overstates a precision ceiling and
    understates a recall one). Arrays, not frames: at 1M questions a copy of the paired table
    or a lookup by label cost half a second."""
    column = f"prompt_sizes_{run}"
    if tables.sampled and tables.k_source == "context_ids" and column in tables.paired:
        sizes = tables.paired[column].iloc[at].reset_index(drop=True)
        every = every_prompt(pd.Series(k), sizes)
        return at[every.index.to_numpy()], every.to_numpy(dtype=float)
    return at, k


def _question_mean(values: np.ndarray, questions: np.ndarray) -> float:
    """The mean over questions of ``values`` given per prompt with each one's question
    position: a question's prompts (its samples') averaged first."""
    sums, counts = np.bincount(questions, weights=values), np.bincount(questions)
    has = counts > 0
    return float((sums[has] / counts[has]).mean())
