"""Per-question metrics of both runs, paired on question_id (computed by the SQL in queries/)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, NoReturn

import pandas as pd

from ..errors import InputError
from ..inputs.contract import has_samples
from ..inputs.database import RunDatabase, ScoredRun
from ..inputs.load import RunFile
from .samples import Spread, decompose
from .spans import CHAR_METRICS

RETRIEVAL = ("recall", "precision", "hit", "mrr", "ndcg", "map", "rprec", "all")
ANSWER = ("correct", "faithfulness")
BINARY = frozenset({"hit", "all", "correct"})


@dataclass(frozen=True)
class Options:
    """Every option that changes a number in the report."""

    k: int | None = None
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

    def to_json(self) -> dict[str, Any]:
        """Every field, as the JSON's ``params`` records it (tuples become lists)."""
        return asdict(self)

    @classmethod
    def from_json(cls, params: dict[str, Any]) -> Options:
        """The options a report's ``params`` records; KeyError names a field it lacks."""
        values = {f.name: params[f.name] for f in fields(cls)}
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


def _in_both(runs: tuple[RunFile, RunFile], column: str) -> bool:
    return all(column in run.columns for run in runs)


@dataclass(frozen=True)
class Plan:
    """What two runs' columns allow to be scored, decided before any row is read."""

    spans: bool  # both runs are labelled with spans
    retrieval: bool  # retrieval metrics can be computed
    has_retrieved: bool
    answer: tuple[str, ...]  # the answer metrics both runs log


def plan(runs: tuple[RunFile, RunFile], options: Options) -> Plan:
    """The metrics two runs' columns allow; InputError for options the columns cannot serve."""
    spans = _in_both(runs, "relevant_spans")
    has_labels = _in_both(runs, "relevant_ids") or spans
    has_retrieved = _in_both(runs, "retrieved_ids") or _in_both(runs, "retrieved_spans")
    has_context = _in_both(runs, "context_ids") or _in_both(runs, "context_spans")
    if has_labels and has_retrieved and options.k is None and not has_context:
        raise InputError(
            f"{runs[0].path}: no context_ids column, so the prompt cutoff is unknown; "
            "pass --k with the number of passages the generator received"
        )
    if options.k is not None and not has_retrieved:
        raise InputError(
            f"{runs[0].path}: --k cuts retrieved_ids, which these logs do not have; "
            "drop --k to score context_ids"
        )
    retrieval = has_labels and (has_retrieved if options.k is not None else has_context)
    answer = tuple(m for m in ANSWER if _in_both(runs, m))
    if not retrieval and not answer:
        _no_metric(runs)
    return Plan(spans, retrieval, has_retrieved, answer)


def score_questions(db: RunDatabase, k: int | None, exponential: bool) -> None:
    """Score every question of every run (after ``db.prepare``): each answer, the precision of
    span-labelled questions, then the mean over a question's samples (table question_means)."""
    db.execute("question_metrics", k=k, exponential=exponential)
    db.execute("span_precision", k=k)
    db.execute("question_means")


def score_run(run: RunFile, options: Options, keep: list[str] | None = None) -> ScoredRun:
    """One run scored alone, once, for every pair of runs it is in (``keep``: the questions
    the runs share)."""
    db = RunDatabase(run, keep=keep)
    try:
        db.prepare(options.k, options.span_coverage)
        score_questions(db, options.k, options.gain == "exponential")
        return db.scored_run()
    finally:
        db.close()


def compute_tables(db: RunDatabase, options: Options) -> MetricTables:
    """Both runs' per-question metrics paired, the metric-vs-k curve and what was left out;
    the runs are scored here unless ``db`` holds them scored."""
    runs = (db.files["a"], db.files["b"])
    p = plan(runs, options)
    retrieval, answer, spans = p.retrieval, p.answer, p.spans
    exponential = options.gain == "exponential"
    if not db.scored:
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
            _no_metric(runs)
    metrics = (
        (RETRIEVAL if retrieval else ()) + (CHAR_METRICS if retrieval and spans else ()) + answer
    )
    sampled = any(has_samples(run.columns) for run in db.files.values())
    spreads = decompose(db, metrics) if sampled else ()
    curve = None
    if retrieval and p.has_retrieved and not spans:  # the curve counts passage labels
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


def _no_metric(runs: tuple[RunFile, RunFile]) -> NoReturn:
    raise InputError(
        f"{runs[0].path} and {runs[1].path}: no metric can be computed; "
        "the logs need relevant_ids (with labelled evidence) with retrieved_ids or context_ids, "
        "or correct, or faithfulness"
    )


def _typical_context_length(paired: pd.DataFrame) -> int:
    """The most common prompt size (ties: the smaller), used to name metrics when k varies."""
    counts = pd.concat([paired["k_a"], paired["k_b"]]).value_counts()
    return int(counts[counts == counts.max()].index.min()) if len(counts) else 0
