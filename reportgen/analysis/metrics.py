"""Per-question metrics of both runs, paired on question_id (computed by the SQL in queries/)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, NoReturn

import pandas as pd

from ..errors import InputError
from ..formatting import fmt_pct
from ..inputs.contract import has_samples
from ..inputs.database import RunDatabase
from .samples import Spread, decompose
from .spans import CHAR_METRICS

RETRIEVAL = ("recall", "precision", "hit", "mrr", "ndcg", "map", "rprec", "all")
ANSWER = ("correct", "faithfulness")
BINARY = frozenset({"hit", "all", "correct"})


def _option(default: Any, key: str, flag: str, show: Callable[[Any], str] = str) -> Any:
    """A field of Options with what both outputs need: its key in the JSON's ``params`` (kept
    when the attribute is renamed), the command-line flag the page lists it under, and how the
    page shows its value."""
    return field(default=default, metadata={"json": key, "flag": flag, "show": show})


def _or(unset: str) -> Callable[[Any], str]:
    """Show a value as itself, or ``unset`` when it is None or empty."""
    return lambda value: unset if value is None or value == () else str(value)


def _margins(margins: tuple[tuple[str, float], ...]) -> str:
    return ", ".join(f"{m}={v}" if m else str(v) for m, v in margins) or "none"


@dataclass(frozen=True)
class Options:
    """Every option that changes a number in the report, each recorded in the JSON's ``params``
    and listed on the page from its field's metadata (``_option``)."""

    k: int | None = _option(None, "k", "--k", _or("context_ids"))
    gain: str = _option("exponential", "gain", "--gain")
    n_boot: int = _option(5000, "n_boot", "--n-boot")
    confidence: float = _option(0.95, "confidence", "--confidence", fmt_pct)
    seed: int = _option(0, "seed", "--seed")
    # slice columns; empty: "slice" when logged
    slices: tuple[str, ...] = _option(
        (), "slices", "--slice", lambda v: ", ".join(v) or "slice (when logged)"
    )
    # refuse to compare when the golden labels changed between runs
    strict: bool = _option(False, "strict", "--strict", lambda v: "on" if v else "off")
    # faithfulness from which an answer is supported; None: the rule that fits the scores
    # (supported.py)
    supported_threshold: float | None = _option(
        None, "supported_threshold", "--supported-threshold", _or("fitted to the scores")
    )
    # (metric, or "" for all, margin)
    margins: tuple[tuple[str, float], ...] = _option((), "margins", "--margin", _margins)
    # column of the document or conversation asked about
    cluster: str | None = _option(None, "cluster", "--cluster", _or("none"))
    # share of a labelled span a passage must cover
    span_coverage: float = _option(0.0, "span_coverage", "--span-coverage")
    # "COLUMN=VALUE" or a fraction such as "0.3"
    holdout: str | None = _option(None, "holdout", "--holdout", _or("none"))

    def to_json(self) -> dict[str, Any]:
        """Every field under its JSON key, as the JSON's ``params`` records it."""
        return {f.metadata["json"]: getattr(self, f.name) for f in fields(self)}

    def shown(self) -> list[tuple[str, str]]:
        """Every field as the page lists it: (flag, value as text)."""
        return [
            (f.metadata["flag"], f.metadata["show"](getattr(self, f.name))) for f in fields(self)
        ]

    @classmethod
    def from_json(cls, params: dict[str, Any]) -> Options:
        """The options a report's ``params`` records; KeyError names a key it lacks."""
        values = {f.name: params[f.metadata["json"]] for f in fields(cls)}
        values["slices"] = tuple(values["slices"])
        values["margins"] = tuple((str(m), float(v)) for m, v in values["margins"])
        return cls(**values)


@dataclass(frozen=True)
class MetricTables:
    """What the SQL layer hands to the statistics layer."""

    k: int | None  # K in metric names (recall@K); None without retrieval metrics
    k_source: str  # "--k" or "context_ids"
    metrics: tuple[str, ...]  # base names (recall, ..., correct), in report order
    paired: pd.DataFrame  # one row per paired question: question_id, slice, <base>_a, <base>_b
    curve: pd.DataFrame | None  # run, metric, k, value; None without retrieved_ids
    only_a: list[str]
    only_b: list[str]
    without_evidence: int  # paired questions left out of the retrieval metrics
    samples: tuple[Spread, ...] = ()  # variance within vs between questions; () unsampled

    def binary(self, base: str) -> bool:
        """A 0/1 score per question; averaged over samples it is a share, hence continuous."""
        return base in BINARY and not self.samples

    def difference(self, base: str) -> pd.Series:
        """B - A of one metric per paired question, NaN where a run has no score."""
        return self.paired[f"{base}_b"] - self.paired[f"{base}_a"]

    def name(self, base: str) -> str:
        """The metric's public name: ``ndcg@5`` for retrieval metrics, the base name otherwise."""
        return f"{base}@{self.k}" if base in RETRIEVAL else base


def _in_both(db: RunDatabase, column: str) -> bool:
    return all(column in run.columns for run in db.files.values())


def score_questions(db: RunDatabase, k: int | None, exponential: bool) -> None:
    """Score every question of every run (after ``db.prepare``): each answer, the precision of
    span-labelled questions, then the mean over a question's samples (table question_means)."""
    db.execute("question_metrics", k=k, exponential=exponential)
    db.execute("span_precision", k=k)
    db.execute("question_means")


def compute_tables(db: RunDatabase, options: Options) -> MetricTables:
    spans = _in_both(db, "relevant_spans")
    has_labels = _in_both(db, "relevant_ids") or spans
    has_retrieved = _in_both(db, "retrieved_ids") or _in_both(db, "retrieved_spans")
    has_context = _in_both(db, "context_ids") or _in_both(db, "context_spans")
    if has_labels and has_retrieved and options.k is None and not has_context:
        raise InputError(
            f"{db.files['a'].path}: no context_ids column, so the prompt cutoff is unknown; "
            "pass --k with the number of passages the generator received"
        )
    if options.k is not None and not has_retrieved:
        raise InputError(
            f"{db.files['a'].path}: --k cuts retrieved_ids, which these logs do not have; "
            "drop --k to score context_ids"
        )
    retrieval = has_labels and (has_retrieved if options.k is not None else has_context)
    answer = tuple(m for m in ANSWER if _in_both(db, m))
    if not retrieval and not answer:
        _no_metric(db)
    exponential = options.gain == "exponential"
    db.prepare(options.k, options.span_coverage)
    score_questions(db, options.k, exponential)
    paired = db.frame("paired")
    unmatched = db.frame("unmatched")
    if paired.empty:
        raise InputError(
            f"{db.files['a'].path} and {db.files['b'].path}: no question_id in common; "
            "compare two runs of the same question set"
        )
    unlabelled = paired[["recall_a", "recall_b"]].isna().any(axis=1) if retrieval else None
    if unlabelled is not None and unlabelled.all():
        retrieval = False  # no paired question has labelled evidence in both runs
        if not answer:
            _no_metric(db)
    metrics = (
        (RETRIEVAL if retrieval else ()) + (CHAR_METRICS if retrieval and spans else ()) + answer
    )
    sampled = any(has_samples(run.columns) for run in db.files.values())
    spreads = decompose(db, metrics) if sampled else ()
    curve = None
    if retrieval and has_retrieved and not spans:  # the curve counts passage labels
        depth = int(db.frame("ranking_depth")["depth"].iloc[0] or 0)
        if depth:
            curve = db.frame("metric_curve", max_k=depth, exponential=exponential)
    k = options.k if options.k is not None else _typical_context_length(paired)
    return MetricTables(
        k=k if retrieval else None,
        k_source="--k" if options.k is not None else "context_ids",
        metrics=metrics,
        paired=paired,
        curve=curve,
        only_a=unmatched.loc[unmatched.run == "a", "question_id"].tolist(),
        only_b=unmatched.loc[unmatched.run == "b", "question_id"].tolist(),
        without_evidence=0 if unlabelled is None else int(unlabelled.sum()),
        samples=spreads,
    )


def _no_metric(db: RunDatabase) -> NoReturn:
    raise InputError(
        f"{db.files['a'].path} and {db.files['b'].path}: no metric can be computed; "
        "the logs need relevant_ids (with labelled evidence) with retrieved_ids or context_ids, "
        "or correct, or faithfulness"
    )


def _typical_context_length(paired: pd.DataFrame) -> int:
    """The most common prompt size (ties: the smaller), used to name metrics when k varies."""
    counts = pd.concat([paired["k_a"], paired["k_b"]]).value_counts()
    return int(counts[counts == counts.max()].index.min()) if len(counts) else 0
