"""The comparison pipeline: open both logs, score them in SQL, add statistics, decide.

Everything the report shows is in the returned ``Comparison``; rendering computes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .audit import Audit, audit
from .database import RunDatabase
from .diagnosis import COSTS, Diagnosis, diagnose
from .errors import InputError
from .fairness import Check, fairness
from .gates import GateResult, Requirements, candidate_evidence, check_rules, evaluate
from .load import RunFile, open_run
from .metrics import BINARY, MetricTables, Options, compute_tables
from .power import Power, power_of
from .slices import SliceResult, slice_results
from .stats import MetricComparison, compare_metric
from .verdict import Verdict, decide

MAX_EXEMPLARS = 60  # drill-downs rendered: dominant-class examples first, then broken questions
CHANGED_SHOWN = 200  # rows of the changed-questions table; the JSON holds every question


@dataclass(frozen=True)
class Comparison:
    options: Options
    runs: dict[str, RunFile]  # "a", "b"
    tables: MetricTables
    comparisons: dict[str, MetricComparison]  # by public metric name, in report order
    headline: str
    headline_means: np.ndarray  # bootstrap means of the headline difference
    verdict: Verdict
    diagnosis: Diagnosis
    exemplars: pd.DataFrame  # queries/exemplars.sql rows of the drill-down questions
    changed: pd.DataFrame  # paired rows whose headline changed, in table order, with "change";
    # "question" holds the text of the first CHANGED_SHOWN
    slices: dict[str, dict[str, list[SliceResult]]]  # column -> metric -> per slice
    audit: Audit
    fairness: list[Check]
    power: Power
    warnings: list[str]
    gate: GateResult | None = None  # None without rules

    @property
    def paired(self) -> pd.DataFrame:
        return self.tables.paired


def _slice_columns(runs: dict[str, RunFile], options: Options) -> list[str]:
    if not options.slices:
        return ["slice"] if any("slice" in r.columns for r in runs.values()) else []
    for column in options.slices:
        if not any(column in r.columns for r in runs.values()):
            raise InputError(
                f"{runs['a'].path}: no column {column!r} (asked for by --slice) in either run "
                "log; name a column the logs have"
            )
    return list(dict.fromkeys(options.slices))


def run_comparison(
    path_a: Path, path_b: Path, options: Options, requirements: Requirements | None = None
) -> Comparison:
    runs = {"a": open_run(path_a, "A"), "b": open_run(path_b, "B")}
    db = RunDatabase(runs["a"], runs["b"])
    try:
        tables = compute_tables(db, options)
        if requirements:
            check_rules(
                requirements.rules,
                scores=[tables.name(base) for base in tables.metrics],
                costs=[c for c in COSTS if all(c in r.columns for r in runs.values())],
                columns=_slice_columns(runs, options),
            )
        headline = headline_metric(tables)
        changed = changed_questions(tables, headline)
        texts = db.frame("question_texts", ids=changed["question_id"][:CHANGED_SHOWN].tolist())
        changed = changed.merge(texts, on="question_id", how="left")
        ids = tables.paired[["question_id"]]
        slice_values = {
            column: ids.merge(db.frame("slice_values", column=column), how="left")["value"]
            for column in _slice_columns(runs, options)
        }
        golden = audit(db, tables, next(iter(slice_values.values()), None), options.strict)
        diagnosis = diagnose(
            db.frame("answer_stage", k=options.k),
            tables.curve,
            tables.k,
            n_boot=options.n_boot,
            confidence=options.confidence,
            seed=options.seed,
            supported_threshold=options.supported_threshold,
        )
        shown = [q for ids in diagnosis.exemplars.values() for q in ids] + diagnosis.broken
        exemplars = db.frame("exemplars", ids=list(dict.fromkeys(shown))[:MAX_EXEMPLARS])
    finally:
        db.close()
    comparisons: dict[str, MetricComparison] = {}
    means: dict[str, np.ndarray] = {}
    for base in tables.metrics:
        name = tables.name(base)
        comparisons[name], means[name] = compare_metric(
            name,
            tables.paired[f"{base}_a"].to_numpy(dtype=float),
            tables.paired[f"{base}_b"].to_numpy(dtype=float),
            binary=base in BINARY,
            n_boot=options.n_boot,
            confidence=options.confidence,
            seed=options.seed,
        )
    slices = slice_results(tables, slice_values, comparisons, options)
    regressions = [
        r for per_metric in slices.values() for r in per_metric[headline] if r.regression
    ]
    change = tables.difference(headline.split("@")[0]).abs()
    gate = None
    if requirements:
        costs = {name: cost.comparison for name, cost in diagnosis.cost.items()}
        candidate = candidate_evidence(
            runs["b"].label, requirements.rules, tables, slice_values, comparisons | costs, options
        )
        gate = evaluate(requirements, [candidate], options.confidence)
    return Comparison(
        options=options,
        runs=runs,
        tables=tables,
        comparisons=comparisons,
        headline=headline,
        headline_means=means[headline],
        verdict=decide(comparisons[headline], options.confidence, regressions),
        diagnosis=diagnosis,
        exemplars=exemplars,
        changed=changed,
        slices=slices,
        audit=golden,
        fairness=fairness(tables),
        power=power_of(
            comparisons[headline], options.confidence, float(change[change > 0].mean() or 0)
        ),
        warnings=_warnings(tables, golden),
        gate=gate,
    )


def headline_metric(tables: MetricTables) -> str:
    """The verdict's metric: correct when logged, else nDCG at the prompt, else the first."""
    if "correct" in tables.metrics:
        return "correct"
    return tables.name("ndcg" if "ndcg" in tables.metrics else tables.metrics[0])


def changed_questions(tables: MetricTables, headline: str) -> pd.DataFrame:
    """Paired questions whose headline score changed: fixed (or better) first, then broken (or
    worse), each by the size of the change; "change" names it."""
    base = headline.split("@")[0]
    delta = tables.difference(base).fillna(0)
    up, down = ("fixed", "broken") if base in BINARY else ("better", "worse")
    changed = tables.paired.assign(
        change=np.where(delta > 0, up, down), order=(delta < 0).astype(int), size=-delta.abs()
    )[delta != 0]
    return changed.sort_values(["order", "size"], kind="stable").drop(columns=["order", "size"])


def _warnings(tables: MetricTables, golden: Audit) -> list[str]:
    warnings = []
    for run, ids in (("A", tables.only_a), ("B", tables.only_b)):
        if ids:
            shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
            warnings.append(f"{len(ids)} question(s) only in run {run} are not compared: {shown}")
    if golden.label_changes:
        shown = ", ".join(q for q, _ in golden.label_changes[:10])
        warnings.append(
            f"The golden set changed between the runs on {len(golden.label_changes)} "
            f"question(s) ({shown}): each run was scored on its own labels there"
        )
    if golden.exploratory:
        warnings.append(
            f"Only {golden.n_paired} paired questions: treat every conclusion as exploratory"
        )
    if tables.without_evidence:
        warnings.append(
            f"{tables.without_evidence} paired question(s) have no labelled evidence and are "
            "left out of the retrieval metrics"
        )
    return warnings
