"""--holdout: choose the best candidate on some questions, report its gain on the others.

The best of several candidates measured on the same questions overstates its gain (the
winner's curse). Held-out questions, on which the choice was not made, give an unbiased
estimate of the chosen candidate's difference, with its own interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError
from ..formatting import fmt_count, fmt_diff, fmt_interval, fmt_pct, p_clause
from .stats import MetricComparison, compare_metric, significance

MIN_SIDE = 10  # questions each side of the split needs for a difference worth reporting


@dataclass(frozen=True)
class Split:
    """Which paired questions are held out, and the rule that chose them."""

    rule: str  # what the page says, e.g. "30% of the questions, drawn within each slice"
    held_out: np.ndarray  # bool per paired question, in the order of the pairs' tables
    clusters: np.ndarray | None = None  # --cluster's label per paired question

    @property
    def straddling(self) -> int:
        """Clusters with questions on both sides (COLUMN=VALUE; a fraction draws whole ones)."""
        if self.clusters is None:
            return 0
        return len(set(self.clusters[self.held_out]) & set(self.clusters[~self.held_out]))


@dataclass(frozen=True)
class Holdout:
    rule: str
    n_selection: int
    n_held_out: int
    chosen: str  # the candidate with the largest headline gain on the selection questions
    n_candidates: int  # the candidates it was chosen from; with one, nothing was chosen
    selection_diff: float  # its gain there
    held_out: MetricComparison  # chosen - baseline on the held-out questions only
    confidence: float  # of its interval: one comparison, so --confidence itself, where the
    # candidates' intervals beside it are Bonferroni-adjusted (97.5% for two)
    straddling: int = 0  # clusters (--cluster) with questions on both sides: Split.straddling
    # the held-out questions' ids, for the per-question rows (not the JSON's holdout: a fraction
    # of a million questions is a list of 300,000)
    question_ids: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)

    @property
    def sentence(self) -> str:
        c = self.held_out
        chosen = (
            f"{self.chosen} was chosen as the best on the other {self.n_selection} "
            f"({fmt_diff(self.selection_diff)} in {c.metric})"
            if self.n_candidates > 1
            else f"{self.chosen}, the only candidate, differs by "
            f"{fmt_diff(self.selection_diff)} in {c.metric} on the other {self.n_selection}"
        )
        level = fmt_pct(self.confidence)
        # the test of the same difference, as the verdict gives it: where it and the interval
        # disagree (5 fixed, 0 broken: the interval excludes zero, McNemar's p is 0.0625), the
        # interval alone would read as more than the evidence holds
        excludes_zero = c.ci_low > 0 or c.ci_high < 0
        disagree = excludes_zero != (c.p < significance(self.confidence))
        # the held-out questions scored in both runs, on which the interval stands, where some
        # lack a score (it read "(100 questions)" beside an interval over 58)
        scored = f", {c.n:,} scored in both" if c.n != self.n_held_out else ""
        return (
            f"Held out: {self.rule} ({fmt_count(self.n_held_out, 'question')}{scored}). "
            f"{chosen}; on the "
            f"held-out questions alone its difference is {fmt_diff(c.diff)}, {level} interval "
            f"{fmt_interval(c.ci_low, c.ci_high)}, {c.test} test "
            f"{p_clause(c.p, significance(self.confidence))}"
            + (
                f": the test and the interval disagree at {level}, so the evidence is borderline."
                if disagree
                else "."
            )
            + (
                f" {fmt_count(self.straddling, 'cluster')} (--cluster) "
                f"{'has' if self.straddling == 1 else 'have'} questions on both sides: the "
                "held-out ones share their luck with those the choice was made on, so this "
                "difference still carries some of the winner's curse; hold out whole clusters "
                "(a fraction draws them)."
                if self.straddling
                else ""
            )
        )


def parse(value: str) -> tuple[str, str] | float:
    """'0.3' -> 0.3; 'split=test' -> ("split", "test"). ValueError for anything else."""
    column, sep, wanted = value.partition("=")
    if sep:
        if not column or not wanted:
            raise ValueError(value)
        return column, wanted
    fraction = float(value)
    if not 0 < fraction < 1:
        raise ValueError(value)
    return fraction


def _equals(values: pd.Series, wanted: str) -> np.ndarray:
    """Which values are ``wanted``: as text, or as numbers (a float column's 1.0 is split=1);
    true or false in any case (a boolean column's slices read true, Python writes True)."""
    flag = wanted.lower() in ("true", "false")
    same = values == (wanted.lower() if flag else wanted)
    number = pd.to_numeric(pd.Series([wanted]), errors="coerce").iloc[0]
    if pd.notna(number):
        same |= pd.to_numeric(values, errors="coerce") == number
    return same.fillna(False).to_numpy(dtype=bool)


def _allocate(fraction: float, sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Questions to hold out of each slice: round(fraction x questions) in all, each slice its
    share rounded down plus one for the largest remainders (ties drawn at random). Rounding each
    slice on its own held out half of slices of 2 at 30%, and none of slices of 1."""
    quota = fraction * sizes
    counts = np.floor(quota).astype(int)
    extra = int(round(fraction * sizes.sum())) - counts.sum()
    order = np.lexsort((rng.random(len(sizes)), counts - quota))  # largest remainder first
    counts[order[:extra]] += 1
    return counts


def split(
    value: str,
    strata: pd.Series,
    column_values: pd.Series | None,
    seed: int,
    path: str,
    clusters: np.ndarray | None = None,
) -> Split:
    """The held-out questions: those whose column has the value, or a seeded fraction drawn
    within each stratum (slice) so that every slice is held out in proportion. With
    ``clusters`` (--cluster) the fraction is of whole clusters, each in its first question's
    slice: a document's questions on both sides would carry its luck into the held-out ones."""
    rule = parse(value)
    if isinstance(rule, tuple):
        column, wanted = rule
        assert column_values is not None
        held = _equals(column_values.astype("string"), wanted)
        text = f"the questions whose {column} is {wanted}"
    else:
        rng = np.random.default_rng(seed)
        units, _ = pd.factorize(clusters if clusters is not None else np.arange(len(strata)))
        codes, _ = pd.factorize(strata.fillna("\x00").astype(str))
        unit_strata = codes[np.unique(units, return_index=True)[1]]
        chosen = np.zeros(len(unit_strata), dtype=bool)
        for group, n in enumerate(_allocate(rule, np.bincount(unit_strata), rng)):
            chosen[rng.choice(np.flatnonzero(unit_strata == group), n, replace=False)] = True
        held = chosen[units]
        drawn = "questions" if clusters is None else "clusters"
        where = "within each slice" if codes.max(initial=0) > 0 else "at random"
        text = f"{fmt_pct(rule)} of the {drawn}, drawn {where} (seed {seed})"  # 0.4%, not 0%
    if min(held.sum(), (~held).sum()) < MIN_SIDE:
        raise InputError(
            f"{path}: --holdout {value} leaves {int(held.sum())} held-out and "
            f"{fmt_count(int((~held).sum()), 'other question')}; each side needs {MIN_SIDE} or more"
        )
    if clusters is not None and len(set(clusters[held])) < 2:
        raise InputError(
            f"{path}: --holdout {value} holds out the questions of one cluster (--cluster); an "
            "interval that resamples clusters needs 2 or more: hold out more questions"
        )
    return Split(text, held, clusters)


def evaluate(
    split_: Split,
    metric: str,
    baseline: np.ndarray,
    candidates: list[tuple[str, np.ndarray]],
    *,
    binary: bool,
    n_boot: int,
    confidence: float,
    seed: int,
    question_ids: np.ndarray,
    higher_is_better: bool = True,
    asked: str = "--holdout",
) -> Holdout:
    """Choose the candidate with the largest mean gain on the selection questions (the largest
    fall for a metric where lower is better), then compare it with the baseline on the
    held-out questions alone. InputError (``asked``: the log and the option, for its message)
    where the chosen candidate and the baseline both score fewer than MIN_SIDE questions on a
    side: split checks the questions, and missing scores leave fewer (4 of 12, or none).
    ``question_ids``: the paired questions' ids, in the order of ``split_``."""
    held, chosen_on = split_.held_out, ~split_.held_out
    sign = 1 if higher_is_better else -1

    def gain(values: np.ndarray) -> float:
        diff = values[chosen_on] - baseline[chosen_on]
        return float(np.nanmean(diff)) if np.isfinite(diff).any() else sign * float("-inf")

    label, best = max(candidates, key=lambda item: sign * gain(item[1]))
    scored = np.isfinite(best - baseline)
    for side, name in ((held, "held-out"), (chosen_on, "other")):
        if scored[side].sum() < MIN_SIDE:
            raise InputError(
                f"{asked} leaves {int(scored[side].sum())} of the {int(side.sum())} {name} "
                f"questions with a {metric} score in both the baseline and {label}; each side "
                f"needs {MIN_SIDE} or more: hold out more questions, or log the missing scores"
            )
    comparison, _ = compare_metric(
        metric,
        baseline[held],
        best[held],
        binary=binary,
        n_boot=n_boot,
        confidence=confidence,
        seed=seed,
        clusters=None if split_.clusters is None else split_.clusters[held],
    )
    return Holdout(
        rule=split_.rule,
        n_selection=int(chosen_on.sum()),
        n_held_out=int(held.sum()),
        chosen=label,
        n_candidates=len(candidates),
        selection_diff=gain(best),
        held_out=comparison,
        confidence=confidence,
        straddling=split_.straddling,
        question_ids=question_ids[held],
    )
