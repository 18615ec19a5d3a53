"""Per-question metrics of both runs, paired on question_id (computed by the SQL in queries/)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from ..errors import InputError
from ..formatting import agreeing, bidi_named, fmt_pct
from ..inputs.database import RunDatabase, ScoredRun
from ..inputs.load import RunFile
from ..inputs.logged import lacking
from ..inputs.unpaired import named_ids, spaced_apart
from .registry import ANSWER, BY_NAME, CONTEXT, RETRIEVAL, Metric, names, public_name
from .samples import Spread, Unscored, decompose
from .scores import Scores, user_scores, with_scores


def _option(default: Any, key: str, flag: str, show: Callable[[Any], str] = str) -> Any:
    """A field of Options with what both outputs need: its key in the JSON's ``params`` (kept
    when the attribute is renamed), the command-line flag the page lists it under, and how the
    page shows its value."""
    return field(default=default, metadata={"json": key, "flag": flag, "show": show})


def _or(unset: str) -> Callable[[Any], str]:
    """Show a value as itself, or ``unset`` when it is None or empty."""
    return lambda value: (
        unset
        if value is None or value == ()
        else ", ".join(value)
        if isinstance(value, tuple)
        else str(value)
    )


def _margins(margins: tuple[tuple[str, float], ...]) -> str:
    return ", ".join(f"{m}={v}" if m else str(v) for m, v in margins) or "none"


# the fields that name columns of the logs (holdout: "COLUMN=VALUE" or a fraction)
_NAMING = ("slices", "cluster", "holdout", "score_columns", "lower_is_better")


@dataclass(frozen=True)
class Options:
    """Every option that changes a number in the report, each recorded in the JSON's ``params``
    and listed on the page from its field's metadata (``_option``)."""

    # --k: the prompt is the first cutoff of retrieved_ids; None: each question's context_ids (or
    # context_spans)
    cutoff: int | None = _option(
        None, "k", "--k", _or("context_ids or context_spans (when logged)")
    )
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
    # columns of the logs compared as metrics
    score_columns: tuple[str, ...] = _option(
        (),
        "score_columns",
        "--metric",
        _or("none (RAGAS and promptfoo scores are compared as read)"),
    )
    # such columns where less is better
    lower_is_better: tuple[str, ...] = _option(
        (), "lower_is_better", "--lower-is-better", _or("none")
    )

    def __post_init__(self) -> None:
        """Refuse a column named with a bidi control (U+202E, right-to-left override): the
        report's sentences name these columns as they are, where a logged value is isolated on
        its own."""
        for f in fields(self):
            value = getattr(self, f.name) if f.name in _NAMING else ()
            for name in (value,) if isinstance(value, str) else value or ():
                if (why := bidi_named(name)) is not None:
                    raise InputError(f"{f.metadata['flag']} {name!r}: {why}")

    def to_json(self) -> dict[str, Any]:
        """Every field under its JSON key, as the JSON's ``params`` records it."""
        return {f.metadata["json"]: getattr(self, f.name) for f in fields(self)}

    def shown(self) -> list[tuple[str, str]]:
        """Every field as the page lists it: (flag, value as text)."""
        return [
            (f.metadata["flag"], f.metadata["show"](getattr(self, f.name))) for f in fields(self)
        ]


@dataclass(frozen=True)
class Unranked:
    """Samples of a paired question scored in the retrieval metrics whose ranking scored is null
    (not logged) while its other samples' is not: the question's retrieval metrics are the
    mean over those others."""

    run: str  # "a" or "b"
    question_id: str
    samples: tuple[str, ...]


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
    without_evidence: int  # paired questions without labelled evidence in a run: no retrieval
    # metrics
    without_ranking: int = 0  # paired questions with evidence whose ranking scored is null in
    # a run (not logged): no retrieval metrics
    ranking_column: str = "context_ids"  # the column that ranking is: context_ids, with --k
    # retrieved_ids (or their spans)
    unranked_samples: tuple[Unranked, ...] = ()  # of questions counted in neither of the above
    samples: tuple[Spread, ...] = ()  # variance within vs between questions; () unsampled
    unscored_samples: tuple[Unscored, ...] = ()  # samples a compared question's mean leaves out
    sampled: bool = False  # a question has several samples: its 0/1 score is then a share
    scores: tuple[Metric, ...] = ()  # the score columns of the logs compared as metrics
    notes: tuple[str, ...] = ()  # about the score columns offered, for the report's warnings
    retrieval_left_out: str | None = None  # why logs with labels and a ranking score no
    # retrieval: labels of two kinds, or no passage in any prompt

    def metric(self, base: str) -> Metric:
        """The registry entry of a metric of these tables (a score column's is built here)."""
        return next((m for m in self.scores if m.name == base), None) or BY_NAME[base]

    def binary(self, base: str) -> bool:
        """A 0/1 score per question: a 0/1 metric, or one of [0, 1] whose every paired value is
        0 or 1 in both runs (recall@5 with one labelled passage a question is hit@5: tested
        apart, 11 fixed and 3 broken of 100 read McNemar's p 0.057 on hit@5, borderline, and
        the bootstrap-t's 0.032 on recall@5, a plain gain that a gate's superiority rule
        passed). Averaged over samples it is a share, hence continuous."""
        if self.sampled:
            return False
        metric = self.metric(base)
        return metric.binary or base in self._zero_one

    @cached_property
    def _zero_one(self) -> frozenset[str]:
        """The metrics of range [0, 1] that every question scored in both runs scores 0 or 1
        in both: those are compared (a recall of 0.5 in a run whose other side logged no
        ranking is compared on no question, and made recall@2 continuous beside an identical
        hit@2)."""
        kept = set()
        for base in self.metrics:
            if self.metric(base).bounds != (0.0, 1.0):
                continue
            values = self.paired[[f"{base}_a", f"{base}_b"]].to_numpy(dtype=float)
            values = values[~np.isnan(values).any(axis=1)]
            if len(values) and np.isin(values, (0.0, 1.0)).all():
                kept.add(base)
        return frozenset(kept)

    def own_range(self, base: str) -> tuple[float, float] | None:
        """The range a run's own mean of ``base`` lies in (not its difference's): the metric's
        bounds, a 0/1 score's [0, 1] (a share over samples too); None for a score or cost of
        unknown range."""
        metric = self.metric(base)
        return metric.bounds or ((0.0, 1.0) if metric.binary else None)

    def difference(self, base: str) -> pd.Series:
        """B - A of one metric per paired question, NaN where a run has no score."""
        return self.paired[f"{base}_b"] - self.paired[f"{base}_a"]

    def name(self, base: str) -> str:
        """The metric's public name: ``ndcg@5`` for retrieval metrics, the base name otherwise."""
        return public_name(self.metric(base), self.named_cutoff)


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
    for run in runs:
        check_span_rankings(run)
    check_cutoff(runs, options.cutoff)
    spans = _in_both(runs, "relevant_spans")
    has_labels = _in_both(runs, "relevant_ids") or spans
    has_retrieved = _in_both(runs, "retrieved_ids") or _in_both(runs, "retrieved_spans")
    has_context = _in_both(runs, "context_ids") or _in_both(runs, "context_spans")
    retrieval = has_labels and (has_retrieved if options.cutoff is not None else has_context)
    answer = tuple(m for m in names(ANSWER) if _in_both(runs, m))
    scores = options.score_columns or options.lower_is_better or any(r.scores for r in runs)
    if not retrieval and not answer and not scores:
        _no_metric(runs)
    return Plan(spans, retrieval, has_retrieved, answer)


RANKINGS = ("retrieved_ids", "context_ids", "retrieved_spans", "context_spans")
# what a log needs for retrieval metrics: one column of each, the first two named in messages
RETRIEVAL_NEEDS = {"a ranking": RANKINGS, "labels": ("relevant_ids", "relevant_spans")}


def check_cutoff(runs: tuple[RunFile, RunFile], cutoff: int | None) -> None:
    """InputError where --k and the logs' columns disagree: labels and a ranking but no prompt
    (context_ids) need a --k; a --k needs a ranking to cut. A run that logs no ranking beside
    one whose ranking --k cuts is no disagreement: their pair compares no retrieval metric, as
    without --k (a table scored with --k beside an answer-only log). compare and metrics share
    it."""
    has_labels = _in_both(runs, "relevant_ids") or _in_both(runs, "relevant_spans")
    has_retrieved = _in_both(runs, "retrieved_ids") or _in_both(runs, "retrieved_spans")
    has_context = _in_both(runs, "context_ids") or _in_both(runs, "context_spans")
    if has_labels and has_retrieved and cutoff is None and not has_context:
        raise _no_prompt(runs)
    if cutoff is not None and not has_retrieved:
        cut = any({"retrieved_ids", "retrieved_spans"} & run.columns for run in runs)
        if unranked := lacking(runs, *RANKINGS):
            if cut:
                return
            raise InputError(
                f"{unranked}: no ranking (retrieved_ids or context_ids) for --k to cut; drop --k"
            )
        kind = "spans" if _in_both(runs, "context_spans") else "ids"
        unranked = lacking(runs, "retrieved_ids", "retrieved_spans")
        raise InputError(
            f"{unranked}: --k cuts retrieved_{kind}, which "
            f"{'these logs do' if ' and ' in unranked else 'this log does'} not have; "
            f"drop --k to score context_{kind}"
        )


def _no_prompt(runs: tuple[RunFile, RunFile]) -> InputError:
    """The --k a ranking without a prompt needs: a TREC or BEIR run never logs one, so it is
    told so rather than asked for a prompt column."""
    prompts = {"context_ids", "context_spans"}
    unprompted = lacking(runs, *prompts)
    if all(r.tool in ("trec", "beir") for r in runs if not prompts & r.columns):
        return InputError(
            f"{unprompted}: a TREC or BEIR run has no prompt, only a ranking; pass --k, the "
            "depth its retrieval metrics are scored at"
        )
    return InputError(
        f"{unprompted}: no {_prompt_column(runs)} column, so the prompt cutoff is unknown; "
        "pass --k with the number of passages the generator received"
    )


def _prompt_column(runs: tuple[RunFile, RunFile]) -> str:
    """The prompt column a log without one would log, as it logs its ranking: context_spans
    beside retrieved_spans alone (a problem of a span log names the span column), else
    context_ids (a passage table makes the spans of both id lists)."""
    unprompted = [r for r in runs if not {"context_ids", "context_spans"} & r.columns]
    named = ("context_ids" if "retrieved_ids" in r.columns else "context_spans" for r in unprompted)
    return " or ".join(dict.fromkeys(named))


def check_span_rankings(run: RunFile) -> None:
    """A log labelled with spans whose passages are ids only: no id can match a span, so every
    retrieval metric would read 0 (or, beside a run with spans, be dropped unsaid)."""
    ids = [c for c in ("retrieved_ids", "context_ids") if c in run.columns]
    if "relevant_spans" not in run.columns or not ids:
        return
    if not {"retrieved_spans", "context_spans"} & run.columns:
        raise InputError(
            f"{run.path}: labels its evidence with relevant_spans but logs its passages only as "
            f"ids ({', '.join(ids)}), which match no span; pass --passages with its passage "
            "table (passage_id, doc_id, start, end), or log retrieved_spans or context_spans"
        )


def score_questions(db: RunDatabase, cutoff: int | None, exponential: bool) -> None:
    """Score every question of every run (after ``db.prepare``) at the prompt cutoff (None: its
    context_ids): each answer, the precision of span-labelled questions, then the mean over a
    question's samples (tables question_means and question_chars)."""
    db.execute("question_metrics", k=cutoff, exponential=exponential)
    db.execute("span_precision", k=cutoff)
    db.execute("question_means")
    db.execute("question_chars")


def score_run(
    run: RunFile,
    options: Options,
    keep: list[str] | None = None,
    single: frozenset[str] = frozenset(),
) -> ScoredRun:
    """One run scored alone, once, for every pair of runs it is in (``keep``: the questions
    the runs share; ``single``: the columns some run holds as float32, read so in all)."""
    db = RunDatabase(run, keep=keep, single=single)
    try:
        db.prepare(options.cutoff, options.span_coverage)
        score_questions(db, options.cutoff, options.gain == "exponential")
        return db.scored_run()
    finally:
        db.close()


def compute_tables(db: RunDatabase, options: Options, curve: bool = True) -> MetricTables:
    """Both runs' per-question metrics paired, the metric-vs-k curve (unless ``curve`` is
    false: validate asks only whether a metric can be computed) and what was left out; the runs
    are scored here unless ``db`` holds them scored."""
    runs = (db.files["a"], db.files["b"])
    p = plan(runs, options)
    scores = user_scores(db, options.score_columns, options.lower_is_better)
    if not p.retrieval and not p.answer and not scores.metrics:  # the tool's scores were unusable
        _no_metric(runs)
    exponential = options.gain == "exponential"
    if not db.scored:
        db.prepare(options.cutoff, options.span_coverage)
        score_questions(db, options.cutoff, exponential)
    sampled = db.sampled()
    if not sampled:  # question_means holds every score; only decompose reads the samples' rows
        db.drop("question_metrics")
    paired, not_finite = with_scores(db, db.paired(sampled), scores.metrics)
    unmatched = db.frame("unmatched")
    tables = paired_tables(
        runs,
        options,
        p,
        replace(scores, notes=scores.notes + tuple(not_finite)),
        paired,
        (unmatched.loc[unmatched.run == r, "question_id"].tolist() for r in "ab"),
        sampled,
    )
    spreads, unscored = decompose(db, tables) if sampled else ((), ())
    # paired holds them now; the curve and the sections after read facts and relevant
    db.drop("question_metrics", "question_means", "question_chars")
    by_k = None
    if curve and tables.named_cutoff is not None and p.has_retrieved:
        depth = db.frame("ranking_depth")["depth"].iloc[0]  # NULL: every ranking is null
        if pd.notna(depth) and depth > 0:
            cutoffs = curve_cutoffs(int(depth), tables.named_cutoff)
            by_k = db.frame(
                "metric_curve", depth=int(depth), cutoffs=cutoffs, exponential=exponential
            )
    return replace(tables, samples=spreads, unscored_samples=unscored, curve=by_k)


CURVE_DENSE_TO = 1_000  # the metric-vs-k curve holds every k up to here, then log-spaced ones


def curve_cutoffs(depth: int, named_cutoff: int) -> list[int]:
    """The k of the metric-vs-k curve: every k up to CURVE_DENSE_TO, then as many again
    log-spaced to the deepest ranking, with the prompt's k: one ranking 200,000 deep made a
    curve of 3.2 million rows (a 239 MB JSON, 70 s) of which the chart draws 200."""
    ratio, steps = depth / CURVE_DENSE_TO, CURVE_DENSE_TO - 1
    far = [round(CURVE_DENSE_TO * ratio ** (i / steps)) for i in range(steps + 1)]
    every = range(1, min(depth, CURVE_DENSE_TO) + 1)
    return sorted({*every, *(far if depth > CURVE_DENSE_TO else []), named_cutoff, depth})


def paired_tables(
    runs: tuple[RunFile, RunFile],
    options: Options,
    p: Plan,
    scores: Scores,
    paired: pd.DataFrame,
    unmatched: Iterable[list[str]],
    sampled: bool,
) -> MetricTables:
    """The tables of two runs' questions paired (paired.sql's columns, with the score columns'
    ``with_scores`` adds), whichever way they were scored: the metrics compared, the cutoff
    they are named at and what is left out, with no curve and no spread of samples (the
    logs' rows give those)."""
    retrieval, answer = p.retrieval, p.answer
    only_a, only_b = unmatched
    if paired.empty:  # the first ids of each show a difference of spelling (7.0 and 7, q1 and Q1)
        firsts = zip(runs, (only_a, only_b), strict=True)
        seen = "; ".join(f"{run.path}'s {named_ids(run, ids)}" for run, ids in firsts)
        raise InputError(
            f"{_logs(runs)}: no question_id in common ({seen})"
            f"{spaced_apart(runs, (only_a, only_b))}; compare two runs of the same question set"
        )
    unscorable = paired[["recall_a", "recall_b"]].isna().any(axis=1) if retrieval else None
    if unscorable is not None and unscorable.all():
        retrieval = False  # no paired question has labelled evidence and a ranking in both runs
        if not answer and not scores.metrics:
            _no_metric(runs)
    named = options.cutoff if options.cutoff is not None else _typical_context_length(paired)
    empty = empty_prompts(runs, options.cutoff, p) if retrieval and named == 0 else None
    if empty:  # every metric would read 0 at k = 0 in both runs, whatever they retrieved
        retrieval, unscorable = False, None
        if not answer and not scores.metrics:
            raise InputError(f"{_logs(runs)}: {empty}")
    metrics = (
        (names(RETRIEVAL) if retrieval else ())
        + (names(CONTEXT) if retrieval and p.spans else ())
        + answer
    )
    own = tuple(m.name for m in scores.metrics)
    unscored = [m for m in metrics + own if not _scored_in_both(paired, m)]
    metrics = tuple(m for m in metrics if m not in unscored)
    own = tuple(m for m in own if m not in unscored)
    if not metrics and not own:
        raise _unscored(runs, unscored)
    left_out = mixed_labels(runs) or empty
    # labelled, but the ranking scored is null (the evidence of an unlabelled question is 0)
    unranked = paired[["k_a", "k_b"]].isna().any(axis=1) & (
        paired[["n_relevant_a", "n_relevant_b"]] > 0
    ).all(axis=1)
    return MetricTables(
        named_cutoff=named if retrieval else None,
        k_source="--k" if options.cutoff is not None else "context_ids",
        metrics=metrics + own,
        paired=paired,
        curve=None,
        only_a=only_a,
        only_b=only_b,
        without_evidence=0 if unscorable is None else int((unscorable & ~unranked).sum()),
        without_ranking=0 if unscorable is None else int((unscorable & unranked).sum()),
        ranking_column=_ranking_column(runs, options.cutoff),
        unranked_samples=() if unscorable is None else _unranked_samples(paired[~unscorable]),
        sampled=sampled,
        scores=tuple(m for m in scores.metrics if m.name in own),
        notes=scores.notes
        + tuple(_unscored_note(m) for m in unscored)
        + tuple(f"Retrieval metrics are not compared: {m}" for m in [left_out] if m),
        retrieval_left_out=left_out,
    )


def _unranked_samples(scored: pd.DataFrame) -> tuple[Unranked, ...]:
    """The samples whose ranking is null of the paired questions ``scored`` in the retrieval
    metrics: scored, they have a sample with a ranking (question_means.sql's unranked_samples)."""
    out = []
    for run in "ab":
        column = f"unranked_samples_{run}"
        listed = scored.loc[scored[column].notna(), ["question_id", column]]
        out += [Unranked(run, q, tuple(map(str, s))) for q, s in listed.itertuples(index=False)]
    return tuple(out)


def _ranking_column(runs: tuple[RunFile, RunFile], cutoff: int | None) -> str:
    """The list the retrieval metrics score: context_ids, or with --k retrieved_ids (the ids,
    or else the spans, the runs log)."""
    ids = "retrieved_ids" if cutoff is not None else "context_ids"
    spans = ids.replace("_ids", "_spans")
    return ids if _in_both(runs, ids) or not _in_both(runs, spans) else spans


def empty_prompts(runs: tuple[RunFile, RunFile], cutoff: int | None, p: Plan) -> str:
    """Why retrieval is not compared when no prompt of either run holds a passage (and no --k
    scores their rankings): every metric would read 0 in both at k = 0, named @0. Said of one
    log too (validate pairs a log with itself)."""
    column = _ranking_column(runs, cutoff)
    ranked = column.replace("context", "retrieved")
    return f"every prompt is empty ({column} holds no passage on any question)" + (
        f"; pass --k N to score the first N passages of {ranked}" if p.has_retrieved else ""
    )


def scored_labels(runs: list[RunFile]) -> list[RunFile]:
    """The runs as their labels are scored: where some run logs no relevant_spans, a log of
    relevant_ids beside its relevant_spans (the passage labels of an old chunking) is scored
    on its relevant_ids, as the others are, and says so. Each run is scored alone, so its spans
    were scored against the other's passage ids (a "B better" on identical rankings), and the
    spans' grades went with its ids by position."""
    if all("relevant_spans" in run.columns for run in runs):
        return runs
    note = (
        "relevant_spans is not scored: another run logs no relevant_spans, so every run is "
        "scored on relevant_ids"
    )
    return [
        replace(run, columns=run.columns - {"relevant_spans"}, notes=(*run.notes, note))
        if {"relevant_ids", "relevant_spans"} <= run.columns and run.scored is None
        else run
        for run in runs
    ]


def mixed_labels(runs: tuple[RunFile, RunFile]) -> str | None:
    """Why retrieval is not compared when each run labels its evidence its own way (passage
    ids in one, document spans in the other): the two kinds share no scale. None otherwise."""
    kinds = [[c for c in ("relevant_ids", "relevant_spans") if c in run.columns] for run in runs]
    if not all(kinds) or set(kinds[0]) & set(kinds[1]):
        return None
    return (
        f"run {runs[0].label} labels its evidence as {kinds[0][0]} and run {runs[1].label} as "
        f"{kinds[1][0]}; log one of them in both runs"
    )


def _scored_in_both(paired: pd.DataFrame, base: str) -> bool:
    """Some paired question has a value of the metric in both runs: else there is nothing to
    compare (a column logged but null throughout one run)."""
    return bool((paired[f"{base}_a"].notna() & paired[f"{base}_b"].notna()).any())


def _unscored_note(base: str) -> str:
    return (
        f"{base}: no paired question has a value in both runs, so it is left out of the "
        "comparison; log it for the same questions in both runs"
    )


def _logs(runs: tuple[RunFile, RunFile]) -> str:
    """The two logs' paths, a log paired with itself (validate) named once."""
    return " and ".join(dict.fromkeys(str(run.path) for run in runs))


def _unscored(runs: tuple[RunFile, RunFile], unscored: list[str]) -> InputError:
    """No metric with a value on some paired question; of a log paired with itself (validate),
    in the words of one file, which has no runs to pair."""
    named = " or ".join(unscored)
    if runs[0].path == runs[1].path:
        whose = agreeing(len(unscored), "its", "their")
        return InputError(
            f"{runs[0].path}: no question has a value of {named} (null throughout); log {whose} "
            "values"
        )
    return InputError(
        f"{_logs(runs)}: no paired question has a value of {named} in both runs; log it for the "
        "same questions in both runs"
    )


def _no_metric(runs: tuple[RunFile, RunFile]) -> NoReturn:
    """No metric both logs can give; where each can give some, what each logs (an answer-only
    baseline against a retrieval-only candidate was told both "need" columns one of them has)."""
    own = [_scorable(run) for run in runs]
    if runs[0].path != runs[1].path and all(own):
        a, b = (f"{run.path} logs {', '.join(cols)}" for run, cols in zip(runs, own, strict=True))
        raise InputError(
            f"{_logs(runs)}: no metric is logged by both ({a}; {b}); compare logs that share "
            "one, or add its columns to the other log"
        )
    raise InputError(
        f"{_logs(runs)}: no metric can be computed; "
        "the logs need relevant_ids (with labelled evidence) with retrieved_ids or context_ids, "
        "or correct, or faithfulness, or a score column named with --metric"
    )


def _scorable(run: RunFile) -> list[str]:
    """What one log could be scored on alone: its labels with a ranking, its answer metrics."""
    labels = [c for c in RETRIEVAL_NEEDS["labels"] if c in run.columns][:1]
    ranking = [c for c in RANKINGS if c in run.columns][:1]
    retrieval = [f"{labels[0]} with {ranking[0]}"] if labels and ranking else []
    return retrieval + [m for m in names(ANSWER) if m in run.columns]


def _typical_context_length(paired: pd.DataFrame) -> int:
    """The typical prompt size of both runs, used to name metrics when k varies."""
    return typical_prompt(pd.concat([run_prompts(paired, run) for run in "ab"]))


def run_prompts(paired: pd.DataFrame, run: str) -> pd.Series:
    """``every_prompt`` of one run's questions in ``paired``."""
    return every_prompt(paired[f"passages_{run}"], paired[f"prompt_sizes_{run}"])


def promptless(paired: pd.DataFrame, run: str) -> bool:
    """Whether every prompt of one run's questions in ``paired`` that is logged is empty."""
    sizes = run_prompts(paired, run)
    return len(sizes) > 0 and bool((sizes == 0).all())


def passageless(paired: pd.DataFrame, run: str) -> frozenset[str]:
    """The questions of ``paired`` whose logged prompts in one run held no passage (each
    sample's, where a question was answered several times): their answers rest on none."""
    passages = paired[f"passages_{run}"]
    return frozenset(paired.loc[passages.eq(0).fillna(False), "question_id"].astype(str))


def every_prompt(passages: pd.Series, sizes: pd.Series) -> pd.Series:
    """The passages of every prompt of some questions: each sample's of a question of several
    (``sizes``, question_means.sql's prompt_sizes), else the question's ``passages``; the mean of
    several (5/3 for prompts of 2, 2 and 1) is no prompt's size. A prompt not logged has none."""
    every = pd.concat([passages[sizes.isna()], sizes.dropna().explode()])
    return every.dropna().astype("int64")


def typical_prompt(sizes: pd.Series) -> int:
    """The most common prompt size (ties: the smaller). Empty prompts are left out (a run that
    sent none named every metric @0 while the other's prompts held passages); 0 when every
    prompt is empty."""
    counts = sizes[sizes > 0].value_counts()
    return int(counts[counts == counts.max()].index.min()) if len(counts) else 0
