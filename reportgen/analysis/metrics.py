"""Per-question metrics of both runs, paired on question_id (computed by the SQL in queries/)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, NoReturn

import pandas as pd

from ..errors import InputError
from ..inputs.contract import has_samples
from ..inputs.database import RunDatabase
from .registry import ANSWER, BY_NAME, CONTEXT, RETRIEVAL, Metric, names, public_name
from .samples import Spread, decompose
from .scores import user_scores, with_scores


@dataclass(frozen=True)
class Options:
    """Every option that changes a number in the report."""

    cutoff: int | None = None  # --k: the prompt is the first cutoff of retrieved_ids; None:
    # each question's context_ids (the JSON's params keep the key "k")
    gain: str = "exponential"
    n_boot: int = 5000
    confidence: float = 0.95
    seed: int = 0
    slices: tuple[str, ...] = ()  # slice columns; empty: "slice" when logged
    strict: bool = False  # refuse to compare when the golden labels changed between runs
    supported_threshold: float | None = None  # faithfulness from which an answer is supported;
    # None: the rule that fits the scores (supported.py)
    margins: tuple[tuple[str, float], ...] = ()  # --margin: (metric, or "" for all, margin)
    cluster: str | None = None  # --cluster: column of the document or conversation asked about
    span_coverage: float = 0.0  # --span-coverage: share of a labelled span a passage must cover
    holdout: str | None = None  # --holdout: "COLUMN=VALUE" or a fraction such as "0.3"
    score_columns: tuple[str, ...] = ()  # --metric: columns of the logs compared as metrics
    lower_is_better: tuple[str, ...] = ()  # --lower-is-better: such columns where less is better

    def to_json(self) -> dict[str, Any]:
        """Every field, as the JSON's ``params`` records it (tuples become lists)."""
        fields = asdict(self)
        return {"k": fields.pop("cutoff"), **fields}

    @classmethod
    def from_json(cls, params: dict[str, Any]) -> Options:
        """The options a report's ``params`` records; KeyError names a field it lacks."""
        optional = ("score_columns", "lower_is_better")  # absent from older reports
        values = {
            f.name: params.get(f.name, ())
            if f.name in optional
            else params["k" if f.name == "cutoff" else f.name]
            for f in fields(cls)
        }
        for name in ("slices", *optional):
            values[name] = tuple(values[name])
        values["margins"] = tuple((str(m), float(v)) for m, v in values["margins"])
        return cls(**values)


@dataclass(frozen=True)
class MetricTables:
    """What the SQL layer hands to the statistics layer."""

    named_cutoff: int | None  # K in metric names (recall@K): --k, else the most common prompt
    # length; None without retrieval metrics
    k_source: str  # "--k" or "context_ids"
    metrics: tuple[str, ...]  # base names (recall, ..., correct), in report order
    paired: pd.DataFrame  # one row per paired question: question_id, slice, <base>_a, <base>_b
    curve: pd.DataFrame | None  # run, metric, k, value; None without retrieved_ids
    only_a: list[str]
    only_b: list[str]
    without_evidence: int  # paired questions left out of the retrieval metrics
    samples: tuple[Spread, ...] = ()  # variance within vs between questions; () unsampled
    scores: tuple[Metric, ...] = ()  # the score columns of the logs compared as metrics
    notes: tuple[str, ...] = ()  # about the score columns offered, for the report's warnings

    def metric(self, base: str) -> Metric:
        """The registry entry of a metric of these tables (a score column's is built here)."""
        return next((m for m in self.scores if m.name == base), None) or BY_NAME[base]

    def binary(self, base: str) -> bool:
        """A 0/1 score per question; averaged over samples it is a share, hence continuous."""
        return self.metric(base).binary and not self.samples

    def difference(self, base: str) -> pd.Series:
        """B - A of one metric per paired question, NaN where a run has no score."""
        return self.paired[f"{base}_b"] - self.paired[f"{base}_a"]

    def name(self, base: str) -> str:
        """The metric's public name: ``ndcg@5`` for retrieval metrics, the base name otherwise."""
        return public_name(self.metric(base), self.named_cutoff)


def _in_both(db: RunDatabase, column: str) -> bool:
    return all(column in run.columns for run in db.files.values())


def score_questions(db: RunDatabase, cutoff: int | None, exponential: bool) -> None:
    """Score every question of every run (after ``db.prepare``) at the prompt cutoff (None: its
    context_ids): each answer, the precision of span-labelled questions, then the mean over a
    question's samples (table question_means)."""
    db.execute("question_metrics", k=cutoff, exponential=exponential)
    db.execute("span_precision", k=cutoff)
    db.execute("question_means")


def compute_tables(db: RunDatabase, options: Options) -> MetricTables:
    spans = _in_both(db, "relevant_spans")
    has_labels = _in_both(db, "relevant_ids") or spans
    has_retrieved = _in_both(db, "retrieved_ids") or _in_both(db, "retrieved_spans")
    has_context = _in_both(db, "context_ids") or _in_both(db, "context_spans")
    if has_labels and has_retrieved and options.cutoff is None and not has_context:
        raise InputError(
            f"{db.files['a'].path}: no context_ids column, so the prompt cutoff is unknown; "
            "pass --k with the number of passages the generator received"
        )
    if options.cutoff is not None and not has_retrieved:
        raise InputError(
            f"{db.files['a'].path}: --k cuts retrieved_ids, which these logs do not have; "
            "drop --k to score context_ids"
        )
    retrieval = has_labels and (has_retrieved if options.cutoff is not None else has_context)
    answer = tuple(m for m in names(ANSWER) if _in_both(db, m))
    scores = user_scores(db, options.score_columns, options.lower_is_better)
    if not retrieval and not answer and not scores.metrics:
        _no_metric(db)
    exponential = options.gain == "exponential"
    db.prepare(options.cutoff, options.span_coverage)
    score_questions(db, options.cutoff, exponential)
    paired = with_scores(db, db.frame("paired"), scores.metrics)
    unmatched = db.frame("unmatched")
    if paired.empty:
        raise InputError(
            f"{db.files['a'].path} and {db.files['b'].path}: no question_id in common; "
            "compare two runs of the same question set"
        )
    unlabelled = paired[["recall_a", "recall_b"]].isna().any(axis=1) if retrieval else None
    if unlabelled is not None and unlabelled.all():
        retrieval = False  # no paired question has labelled evidence in both runs
        if not answer and not scores.metrics:
            _no_metric(db)
    metrics = (
        (names(RETRIEVAL) if retrieval else ())
        + (names(CONTEXT) if retrieval and spans else ())
        + answer
    )
    own = tuple(m.name for m in scores.metrics)
    sampled = any(has_samples(run.columns) for run in db.files.values())
    spreads = decompose(db, metrics) if sampled else ()  # scores: the logs' own averages
    curve = None
    if retrieval and has_retrieved and not spans:  # the curve counts passage labels
        depth = int(db.frame("ranking_depth")["depth"].iloc[0] or 0)
        if depth:
            curve = db.frame("metric_curve", depth=depth, exponential=exponential)
    named = options.cutoff if options.cutoff is not None else _typical_context_length(paired)
    return MetricTables(
        named_cutoff=named if retrieval else None,
        k_source="--k" if options.cutoff is not None else "context_ids",
        metrics=metrics + own,
        paired=paired,
        curve=curve,
        only_a=unmatched.loc[unmatched.run == "a", "question_id"].tolist(),
        only_b=unmatched.loc[unmatched.run == "b", "question_id"].tolist(),
        without_evidence=0 if unlabelled is None else int(unlabelled.sum()),
        samples=spreads,
        scores=scores.metrics,
        notes=scores.notes,
    )


def _no_metric(db: RunDatabase) -> NoReturn:
    raise InputError(
        f"{db.files['a'].path} and {db.files['b'].path}: no metric can be computed; "
        "the logs need relevant_ids (with labelled evidence) with retrieved_ids or context_ids, "
        "or correct, or faithfulness, or a score column named with --metric"
    )


def _typical_context_length(paired: pd.DataFrame) -> int:
    """The most common prompt size (ties: the smaller), used to name metrics when k varies."""
    counts = pd.concat([paired["k_a"], paired["k_b"]]).value_counts()
    return int(counts[counts == counts.max()].index.min()) if len(counts) else 0
