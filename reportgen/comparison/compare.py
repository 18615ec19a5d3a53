"""The comparison pipeline: open both logs, score them in SQL, add statistics, decide.

Everything the report shows is in the returned ``Comparison``; rendering computes nothing.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..analysis.audit import EXAMPLES, Audit, passages_apart
from ..analysis.fairness import READ_FIRST, Check, fairness
from ..analysis.gates import (
    GateResult,
    Requirements,
    candidate_evidence,
    check_rule_columns,
    check_rules,
    evaluate,
    rule_costs,
)
from ..analysis.metrics import (
    RETRIEVAL_NEEDS,
    MetricTables,
    Options,
    Unranked,
    passageless,
    plan,
    promptless,
)
from ..analysis.power import Power, power_of
from ..analysis.registry import (
    ANSWER,
    CONTEXT,
    RETRIEVAL,
    SCORE,
    base_name,
    difference_range,
    names,
    parse_name,
)
from ..analysis.samples import Unscored
from ..analysis.scores import oriented, own_name
from ..analysis.slices import SliceResult, slice_results
from ..analysis.spans import CHAR_METRICS
from ..analysis.stats import MetricComparison, as_compared, compare_metric
from ..analysis.supported import SupportedRule, supported_rule
from ..analysis.verdict import Verdict, decide, margin_for
from ..diagnosis.diagnose import COSTS, Diagnosis, diagnose, metric_digits, with_means
from ..errors import InputError
from ..formatting import NOISE, agreeing, fmt_count, fmt_listed, fmt_pct, listed, named_value
from ..inputs.contract import ASKED_SCORES, has_samples
from ..inputs.contract import BY_NAME as CONTRACT
from ..inputs.database import ScoredRun
from ..inputs.load import RunFile, Source, open_source, refuse_patchy
from ..inputs.logged import in_spans, log
from ..inputs.readers import ReadOptions
from ..inputs.scored_table import one_rel_level
from ..inputs.unpaired import ids_spaced_apart, named_ids, spaced_apart
from ..limits import MAX_N_BOOT
from ..progress import stage
from .questions import Questions, open_questions

MAX_SLICE_VALUES = 50  # a slice column with more values is left out: its forest would be unreadable
MAX_EXEMPLARS = 60  # drill-downs rendered: dominant-class examples first, then broken questions
CHANGED_SHOWN = 200  # rows of the changed-questions table; the JSON holds every question
TAIL_RESAMPLES = 10  # resamples wanted beyond each bound of an interval (few_resamples)


@dataclass(frozen=True)
class Headline:
    """What a comparison knows once every metric's interval is computed, before the slices':
    enough for the page's charts of the headline (``compare_runs``' ``drafted``)."""

    options: Options
    tables: MetricTables
    comparisons: dict[str, MetricComparison]
    headline: str
    headline_means: np.ndarray
    place: tuple[int, int]  # run B's among the candidates (1: the first), and their number


@dataclass(frozen=True)
class Comparison:
    options: Options
    runs: dict[str, RunFile]  # "a", "b"
    n_questions: dict[str, int]  # "a", "b": the distinct question ids of each log (a log of
    # repeated answers has more rows than questions)
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
    slice_values: dict[str, pd.Series]  # column -> each paired question's value, in table order
    cluster_values: pd.Series | None  # --cluster's value of each paired question; None without
    too_fine: dict[str, int]  # slice columns left out, with their number of values
    audit: Audit
    fairness: list[Check]
    power: Power
    warnings: list[str]
    supported: SupportedRule  # when an answer counts as supported, and how much that decides
    gate: GateResult | None = None  # None without rules
    # the warnings about --margin values the verdict does not read (among ``warnings`` too),
    # which the command also prints on stderr, as it does a gate rule's like them
    margin_notes: tuple[str, ...] = ()

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


def pair_columns(a: RunFile, b: RunFile, options: Options) -> None:
    """Refuse, before any row is read, options that two runs' columns cannot serve, and a
    shard of either that lacks a column they name (a --metric gate judged on the shards that
    have it)."""
    _slice_columns({"a": a, "b": b}, options)
    plan((a, b), options)
    holdout = (options.holdout or "").partition("=")[0]
    named = (*options.slices, options.cluster, holdout, *options.score_columns)
    for run in (a, b):
        refuse_patchy(run, [c for c in (*named, *options.lower_is_better) if c])


def same_rel_level(runs: Iterable[RunFile]) -> None:
    """Refuse runs whose labels were read from qrels at two --rel-levels: one relevance judged
    at two thresholds is two sets of labels under one name, and a run judged at the lower one
    gains on every retrieval metric. A TREC or BEIR run has this command's level, a converted
    log and a metrics table the one they record (RunFile.rel_level)."""
    one_rel_level(
        [(run.path, run.rel_level) for run in runs],
        "read every run at one level: a run given with --qrels at this command's --rel-level, "
        "a converted log or a ragreport metrics table at the one it records",
    )


def _slice_values(
    questions: Questions, runs: dict[str, RunFile], options: Options
) -> tuple[dict[str, pd.DataFrame], dict[str, int]]:
    """Each slice column's value per question, read before any metric is computed so that a
    column too fine to slice by is reported once, early, and left out of the report; the
    columns left out, with their number of values."""
    kept, too_fine = {}, {}
    for column in _slice_columns(runs, options):
        values = questions.slice_values(column)
        if column != "slice":  # the contract's column is checked with the labels, by row
            one_value_a_question(values, column, runs)
        n = values["value"].nunique()
        if n > MAX_SLICE_VALUES:
            too_fine[column] = n
        else:
            kept[column] = values
    return kept, too_fine


def check_pair_rules(
    pair: tuple[RunFile, RunFile],
    options: Options,
    requirements: Requirements,
    keep: list[str] | None = None,
    scored: tuple[ScoredRun, ScoredRun] | None = None,
) -> None:
    """Refuse a rule the comparison of ``pair`` (as compare_runs takes it) cannot judge, reading
    only what its rules are checked against: slice values, per-question metrics (no curve) and
    cost columns. A study checks every candidate so before it compares any: checked inside each
    comparison, a rule the last candidate cannot judge was refused after the bootstraps of all
    the others."""
    runs = {"a": pair[0], "b": pair[1]}
    options = _with_rule_costs(options, requirements, runs)
    questions = open_questions(runs["a"], runs["b"], keep, scored)
    try:
        _, too_fine = _slice_values(questions, runs, options)
        check_rule_columns(requirements.rules, _slice_columns(runs, options), too_fine)
        tables = questions.tables(options, curve=False)
        answers = questions.answers(options.cutoff)
        _check_pair_rules(requirements, runs, options, tables, answers)
    finally:
        questions.close()


def _check_pair_rules(
    requirements: Requirements,
    runs: dict[str, RunFile],
    options: Options,
    tables: MetricTables,
    answers: pd.DataFrame,
) -> None:
    """Refuse a rule on a metric the comparison of ``runs`` does not have (check_rules), before
    any bootstrap.

    A cost column is compared only where a paired question has a value of it in both runs
    (``answers``, the rows the diagnosis compares costs on): a rule on one that a log leaves
    empty (null, or inf left out) would read no question, an inconclusive rule that
    ``--inconclusive pass`` let through, so it is refused naming that log, as a score is."""
    costs = [c for c in COSTS if (answers[f"{c}_a"].notna() & answers[f"{c}_b"].notna()).any()]
    check_rules(
        requirements.rules,
        scores=[tables.name(base) for base in tables.metrics],
        costs=costs,
        why_absent=lambda metric: _why_not_compared(runs, options, metric, tables.paired, answers),
    )


def _why_not_compared(
    runs: dict[str, RunFile],
    options: Options,
    metric: str,
    paired: pd.DataFrame,
    answers: pd.DataFrame,
) -> str | None:
    """Why a rule's metric, a column of the logs, is not compared, and what to do: the name it
    is compared under (a tool's column read as a run-log one), the option that compares it, or
    the log to complete (_not_compared); None for a name the logs lack."""
    read_as = {source: column for run in runs.values() for column, source in run.sources.items()}
    compared = metric in read_as and f"{read_as[metric]}_a" in paired  # a metric of the report
    if compared and read_as[metric] != metric:  # RAGAS' answer_relevancy
        return (
            f"the logs' {metric} is read as {read_as[metric]}; name {read_as[metric]} in the rule"
        )
    # a column of the logs' own that --metric would compare, but that no option names
    unasked = not (
        (metric in CONTRACT and metric not in ASKED_SCORES)
        or own_name(metric)
        or metric in _compared_when_logged(runs, options)
    )
    if unasked and all(metric in run.columns for run in runs.values()):
        flag = shlex.quote(metric)
        return (
            f"{metric!r} is a column of both logs, which the report compares only when asked: "
            f"pass --metric {flag} (--lower-is-better {flag} where less is better), or drop the "
            "rule"
        )
    why = _not_compared(runs, options, metric, paired, answers)
    return why and f"{why}, so it is not compared; log it in every run or drop the rule"


def _compared_when_logged(runs: dict[str, RunFile], options: Options) -> tuple[str, ...]:
    """The columns the report compares where every log has them: answer metrics, costs, the
    --metric and --lower-is-better columns and the scores the logs' tool wrote."""
    return (
        *names(ANSWER),
        *COSTS,
        *options.score_columns,
        *options.lower_is_better,
        *(score for run in runs.values() for score in run.scores),
    )


def _not_compared(
    runs: dict[str, RunFile],
    options: Options,
    metric: str,
    paired: pd.DataFrame,
    answers: pd.DataFrame,
) -> str | None:
    """Why a rule's metric, a column the report compares when every log has it (an answer
    metric, a cost, a --metric or --lower-is-better column, a tool's score), is not compared:
    the log that lacks the column or has no value of it on a paired question (a cost's values
    are those of ``answers``, a score's of ``paired``), or no question with a value in both.
    None otherwise (the rule then names a metric the report does not know)."""
    column, cutoff = parse_name(metric)
    if cutoff is not None and column in names(RETRIEVAL):
        need = lacking_retrieval(runs)
        return need and f"{metric} needs {need}"
    if column not in _compared_when_logged(runs, options):
        return None
    if not any(column in run.columns for run in runs.values()):
        return None
    if one := _logged_by_one(runs, column):
        return one
    values = paired if f"{column}_a" in paired or column not in COSTS else answers
    empty = [
        key
        for key in runs
        if f"{column}_{key}" not in values or values[f"{column}_{key}"].isna().all()
    ]
    if len(empty) == 1:
        other = "b" if empty[0] == "a" else "a"
        return (
            f"{runs[empty[0]].path} has no value of {column} on a paired question "
            f"({runs[other].path} has)"
        )
    return (
        f"no paired question of {runs['a'].path} and {runs['b'].path} has a value of {column} "
        "in both"
    )


def _logged_by_one(runs: dict[str, RunFile], column: str) -> str | None:
    """When one log has ``column`` and the other lacks it, "b.parquet does not log correct
    (a.parquet does)"; None otherwise."""
    having = [run for run in runs.values() if column in run.columns]
    lacking = [run for run in runs.values() if column not in run.columns]
    if not having or not lacking:
        return None
    return f"{lacking[0].path} does not log {column} ({having[0].path} does)"


def _one_sided(runs: dict[str, RunFile]) -> list[str]:
    """The metrics left out because one log lacks their columns: the verdict then falls on
    another metric (a log without correct had its ranking decide, with no word of why)."""
    need = lacking_retrieval(runs)
    notes = [f"Retrieval metrics are not compared: they need {need}"] if need else []
    for column in (*names(ANSWER), *COSTS):
        if one := _logged_by_one(runs, column):
            notes.append(f"{column} is not compared: {one}; log it in both runs")
    return notes


def lacking_retrieval(runs: dict[str, RunFile]) -> str | None:
    """What the log of a pair that cannot have retrieval metrics lacks, when the other can
    ("a ranking (retrieved_ids or context_ids), which b.parquet does not log (a.parquet
    does)"); None otherwise (neither can, or both can)."""
    able = [r for r in runs.values() if all(set(c) & r.columns for c in RETRIEVAL_NEEDS.values())]
    unable = [r for r in runs.values() if r not in able]
    if not able or not unable:
        return None
    need, columns = next(
        (n, c) for n, c in RETRIEVAL_NEEDS.items() if not set(c) & unable[0].columns
    )
    return (
        f"{need} ({' or '.join(columns[:2])}), which {unable[0].path} does not log "
        f"({able[0].path} does)"
    )


def one_value_a_question(
    values: pd.DataFrame,
    column: str,
    runs: dict[str, RunFile],
    flag: str = "--slice",
    noun: str | None = None,
) -> None:
    """A question's samples share its slice or cluster: a column of a log's own, given to
    ``flag`` (--slice or --cluster), that gives one question two values is refused (the
    question would be placed by whichever row came first, so the numbers would follow the
    rows' order). Without a sample column a repeated question id is refused as a duplicate.
    ``noun``: what the samples share, where the flag does not name it."""
    for key, run in runs.items():
        varying = values.loc[values[f"varies_{key}"].fillna(False).astype(bool), "question_id"]
        if has_samples(run.columns) and len(varying):
            raise InputError(
                f"{run.path}: column {column!r} (asked for by {flag}) has more than one value for "
                f"question {_first_of(varying)}; a question's samples share its "
                f"{noun or flag.removeprefix('--')}: give each question one value"
            )


def _first_of(ids: pd.Series) -> str:
    """The first question by id, as a message names it ("'q1' and 2 others"): the same whatever
    the rows' order."""
    more = f" and {fmt_count(len(ids) - 1, 'other')}" if len(ids) > 1 else ""
    return f"{ids.min()!r}{more}"


def too_fine_note(column: str, n: int) -> str:
    """Why a slice column is missing from the slices (the read-first box, the slices section
    and the pull-request summary say it alike)."""
    return (
        f"Slice column {column!r} has {n:,} values, more than {MAX_SLICE_VALUES}: it is left out "
        "of the slices; pick a coarser column with --slice"
    )


def run_comparison(
    path_a: Source,
    path_b: Source,
    options: Options,
    requirements: Requirements | None = None,
    reading: tuple[ReadOptions, ReadOptions] = (ReadOptions(), ReadOptions()),
    labels: tuple[str, str] = ("A", "B"),
    keep: list[str] | None = None,
) -> Comparison:
    """Compare run B with run A; ``keep`` restricts both to those questions (a study pairs the
    questions common to all its runs). Both are logs or both are tables: a study scores a log
    among tables (scored_beside_tables)."""
    runs = (open_source(path_a, labels[0], reading[0]), open_source(path_b, labels[1], reading[1]))
    same_rel_level(runs)
    return compare_runs(runs, options, requirements, keep)


def compare_runs(
    pair: tuple[RunFile, RunFile],
    options: Options,
    requirements: Requirements | None = None,
    keep: list[str] | None = None,
    scored: tuple[ScoredRun, ScoredRun] | None = None,
    accepted: Callable[[], object] | None = None,
    candidate_name: str = "B",
    held: tuple[int, int] | None = None,
    drafted: Callable[[Headline], object] | None = None,
    place: tuple[int, int] = (1, 1),
) -> Comparison:
    """Compare run B with run A, opened; ``scored``: both runs already scored (score_run), so
    that a study scores each run once however many pairs it is in; ``accepted``: called once
    the logs and rules have passed their checks, before the statistics; ``candidate_name``: what
    the verdict calls run B in its slice regressions; ``held``: the distinct question ids of
    each log when ``keep`` leaves some out of the database (the study counts them as it pairs),
    else they are the paired questions and those of one run only; ``drafted``: called with the
    headline's intervals before the slices' are computed (the page starts drawing its charts);
    ``place``: run B's among the candidates compared with run A, and their number."""
    runs = {"a": pair[0], "b": pair[1]}
    labels = (pair[0].label, pair[1].label)
    options = _with_rule_costs(options, requirements, runs)
    named = f"{labels[1]} against {labels[0]}"
    questions = open_questions(runs["a"], runs["b"], keep, scored)
    try:
        by_question, too_fine = _slice_values(questions, runs, options)
        if requirements:
            check_rule_columns(requirements.rules, _slice_columns(runs, options), too_fine)
        by_cluster = _cluster_values(questions, runs, options)
        stage(f"{named}: per-question metrics")
        tables = questions.tables(options)
        answers = questions.answers(options.cutoff)
        if requirements:
            _check_pair_rules(requirements, runs, options, tables, answers)
        if accepted:
            accepted()
        headline = headline_metric(tables)
        changed = changed_questions(tables, headline)
        texts = questions.texts(changed["question_id"][:CHANGED_SHOWN].tolist())
        changed = changed.merge(texts, on="question_id", how="left")
        ids = tables.paired[["question_id"]]
        merged = {column: ids.merge(values, how="left") for column, values in by_question.items()}
        slice_values = {column: m["value"] for column, m in merged.items()}
        disagreeing = {
            column: m.loc[m["differs"].fillna(False).astype(bool), "question_id"].tolist()
            for column, m in merged.items()
        }
        clusters = _cluster_labels(by_cluster, ids)
        stage(f"{named}: diagnosis")
        golden = questions.audit(tables, slice_values, options.strict)
        supported = _supported(answers, options)
        diagnosis = diagnose(
            answers,
            tables.curve,
            tables.named_cutoff,
            n_boot=options.n_boot,
            confidence=options.confidence,
            seed=options.seed,
            supported_threshold=supported.threshold,
            clusters=None if clusters is None else pd.Series(clusters, ids["question_id"]),
            spans=in_spans(runs.values()),
            promptless=frozenset(r for r in "ab" if promptless(tables.paired, r)),
            passageless={r: passageless(tables.paired, r) for r in "ab"},
        )
        shown = [q for ids in diagnosis.exemplars.values() for q in ids] + diagnosis.broken
        exemplars = questions.exemplars(list(dict.fromkeys(shown))[:MAX_EXEMPLARS], options.cutoff)
        same = _same_log(runs) or _same_outputs(runs, tables, questions)
    finally:
        questions.close()
    stage(f"{named}: intervals")
    comparisons: dict[str, MetricComparison] = {}
    measured: dict[str, MetricComparison] = {}  # wins as B - A > 0, as the cost section counts
    means: dict[str, np.ndarray] = {}
    for base in tables.metrics:
        name = tables.name(base)
        measured[name], means[name] = compare_metric(
            name,
            tables.paired[f"{base}_a"].to_numpy(dtype=float),
            tables.paired[f"{base}_b"].to_numpy(dtype=float),
            binary=tables.binary(base),
            n_boot=options.n_boot,
            confidence=options.confidence,
            seed=options.seed,
            clusters=clusters,
        )
        comparisons[name] = oriented(measured[name], tables.metric(base))
    # a cost a rule compares as a metric (latency_ms[slice] <= 0) keeps its cost's wins: B more
    diagnosis = with_means(diagnosis, measured)
    _check_margins(options, comparisons)
    if drafted:
        drafted(Headline(options, tables, comparisons, headline, means[headline], place))
    stage(f"{named}: intervals by slice")
    slices, evidence = slice_results(tables, slice_values, comparisons, options, clusters)
    regressions = [r for per_metric in slices.values() for r in per_metric[headline] if r.finding]
    gate = None
    if requirements:
        costs = {name: cost.comparison for name, cost in diagnosis.cost.items()}
        candidate = candidate_evidence(
            runs["b"].label,
            requirements.rules,
            tables,
            evidence,
            costs | comparisons,
            options,
            clusters,
        )
        gate = evaluate(requirements, [candidate], options.confidence)
    n_paired = len(tables.paired)
    sign = 1 if tables.metric(base_name(headline)).higher_is_better else -1
    lead = sign * comparisons[headline].diff  # B - A in the better direction; NaN: no question
    checks = fairness(
        tables, ("B", headline) if lead >= NOISE else ("A", headline) if lead <= -NOISE else None
    )
    digits = metric_digits(headline, comparisons[headline].a)  # as the headline's row
    counts = held or (n_paired + len(tables.only_a), n_paired + len(tables.only_b))
    margin_notes = tuple(_unread_margins(options, headline))
    return Comparison(
        options=options,
        runs=runs,
        n_questions=dict(zip("ab", counts, strict=True)),
        tables=tables,
        comparisons=comparisons,
        headline=headline,
        headline_means=means[headline],
        verdict=decide(
            comparisons[headline],
            options.confidence,
            regressions,
            margin_for(options.margins, headline),
            tables.metric(base_name(headline)).higher_is_better,
            candidate_name,
            digits,
        ),
        diagnosis=diagnosis,
        exemplars=exemplars,
        changed=changed,
        slices=slices,
        slice_values=slice_values,
        cluster_values=None if by_cluster is None else ids.merge(by_cluster, how="left")["value"],
        too_fine=too_fine,
        audit=golden,
        fairness=checks,
        power=power_of(comparisons[headline], options.confidence, digits),
        warnings=[
            *same,
            *(f"Run {r.label}: {note}" for r in runs.values() for note in r.notes),
            *(too_fine_note(column, n) for column, n in too_fine.items()),
            *questions.warnings,
            *_warnings(tables, golden, runs),
            *(c.text.removesuffix(".") for c in checks if c.flagged and c.name in READ_FIRST),
            *_slice_disagreements(disagreeing, labels),
            *_one_run_columns(runs, by_question, options.cluster),
            *tables.notes,
            *_cluster_hint(runs, options),
            *few_resamples(options.n_boot, options.confidence, _bootstrapped(comparisons, slices)),
            *margin_notes,
        ],
        supported=supported,
        gate=gate,
        margin_notes=margin_notes,
    )


def _with_rule_costs(
    options: Options, requirements: Requirements | None, runs: dict[str, RunFile]
) -> Options:
    """Cost columns of both logs that candidate and per-slice rules name, compared as
    lower-is-better scores: those rules read per-question values (a cost column the logs lack
    is left for check_rules to name). With repeated answers every cost both runs carry is, so
    that the cost section reads the means over a question's samples (``with_means``), not the
    first sample the diagnosis' answers hold."""
    costs = [c for c in rule_costs(requirements) if all(c in r.columns for r in runs.values())]
    if any(_sampled(run) for run in runs.values()):
        costs += [c for c in COSTS if all(_carries(run, c) for run in runs.values())]
    lower = tuple(dict.fromkeys((*options.lower_is_better, *costs)))
    return replace(options, lower_is_better=lower) if costs else options


def _sampled(run: RunFile) -> bool:
    """Whether the run may answer a question more than once: a log's sample column, or a
    table that records a question of several samples."""
    return run.scored.logged.sampled if run.scored else has_samples(run.columns)


def _carries(run: RunFile, column: str) -> bool:
    """Whether the run can be compared on ``column``: a log's, or a table's carried, column."""
    return column in (run.scored.carried if run.scored else run.columns)


def _supported(answers: pd.DataFrame, options: Options) -> SupportedRule:
    """The supported rule, fitted to the answers the diagnosis classifies (answer_stage's rows,
    a question's first sample): fitted to the means over samples, 0/1 verdicts read as graded
    scores and its shares were of other answers than the table's cells."""
    columns = {
        name: {r: answers[f"{name}_{r}"].to_numpy(dtype=float, na_value=np.nan) for r in "ab"}
        for name in ("faithfulness", "correct")
    }
    return supported_rule(columns["faithfulness"], columns["correct"], options.supported_threshold)


LIKELY_CLUSTERS = ("doc_id", "document_id", "source_id", "conversation_id", "session_id")


def _cluster_values(
    questions: Questions, runs: dict[str, RunFile], options: Options
) -> pd.DataFrame | None:
    """queries/slice_values.sql's rows for --cluster's column, read before any metric is
    computed; None without --cluster. A question is one unit of the resampling, its B − A in
    one cluster: a question whose samples disagree on its value, or whose value differs between
    the runs, is refused, as taking either value would leave its dependence on the other's
    questions out of the interval."""
    column = options.cluster
    if column is None:
        return None
    if not any(column in r.columns for r in runs.values()):
        raise InputError(
            f"{runs['a'].path}: no column {column!r} (asked for by --cluster) in either run "
            "log; name a column the logs have"
        )
    values = questions.slice_values(column)
    one_value_a_question(values, column, runs, "--cluster")
    differing = values.loc[values["differs"].fillna(False).astype(bool), "question_id"]
    if len(differing):
        raise InputError(
            f"{runs['b'].path}: column {column!r} (asked for by --cluster) has another value "
            f"than in {runs['a'].path} for question {_first_of(differing)}; its B − A is "
            "resampled within one cluster, which both runs must give it: log the same value in "
            "both"
        )
    return values


def _same_outputs(
    runs: dict[str, RunFile], tables: MetricTables, questions: Questions
) -> list[str]:
    """A candidate whose outputs are the baseline's on every paired question, in another file
    (rows in another order, another compression: a pipeline that wrote the baseline again):
    looked for only where every metric ties on every question."""
    if any(as_compared(tables.difference(base).dropna()).any() for base in tables.metrics):
        return []
    if not questions.same_outputs(tables.paired["question_id"].astype(str).tolist()):
        return []
    a, b = runs["a"], runs["b"]
    return [
        f"Run {b.label}'s outputs are run {a.label}'s on every paired question (rankings, "
        "prompts, answers and their judgements), though the logs differ as files: every "
        "difference in quality is 0 by construction; check the logs given"
    ]


def _cluster_labels(values: pd.DataFrame | None, ids: pd.DataFrame) -> np.ndarray | None:
    """--cluster's value for every paired question (a question without one is its own)."""
    if values is None:
        return None
    labels = ids.merge(values, how="left")["value"]
    alone = "\x00" + ids["question_id"].astype(str)
    return labels.fillna(alone).astype(str).to_numpy()


def _same_log(runs: dict[str, RunFile]) -> list[str]:
    """A candidate that is the baseline's own log, read the same way (a path mistyped in CI):
    every difference is 0 by construction, and a rule that B be no worse passes unread."""
    a, b = runs["a"], runs["b"]
    if (a.sha256, a.read) != (b.sha256, b.read):
        return []
    return [
        f"Run {b.label} is the same log as run {a.label} (sha256 {a.sha256[:12]}, read the same "
        "way): every difference is 0 by construction; check the logs given"
    ]


def _cluster_hint(runs: dict[str, RunFile], options: Options) -> list[str]:
    """Name a logged column that looks like a document or conversation id, when unused."""
    if options.cluster is not None:
        return []
    logged = [c for c in LIKELY_CLUSTERS if any(c in r.columns for r in runs.values())]
    tables = [r.scored for r in runs.values() if r.scored is not None]

    def how(column: str) -> str:
        if any(column not in t.kept for t in tables):
            return (
                f"kept in the tables by ragreport metrics --cluster {column}, --cluster "
                f"{column} resamples them together"
            )
        return f"--cluster {column} resamples them together"

    return [
        f"Column {column} looks like the document or conversation each question is about; "
        f"questions that share one are not independent: {how(column)} (intervals can "
        "otherwise be too narrow)"
        for column in logged[:1]
    ]


def _bootstrapped(
    comparisons: dict[str, MetricComparison], slices: dict[str, dict[str, list[SliceResult]]]
) -> list[tuple[str, MetricComparison]]:
    """The intervals whose bounds the report decides on, each named: every metric's, and every
    slice's of SMALL_SLICE questions or more (a smaller slice gives a direction, never a
    finding)."""
    sliced = [
        (f"{name} in slice {r.column} = {named_value(r.value)}", r.comparison)
        for per_metric in slices.values()
        for name, rows in per_metric.items()
        for r in rows
        if not r.small
    ]
    return [*comparisons.items(), *sliced]


def few_resamples(
    n_boot: int, confidence: float, intervals: Iterable[tuple[str, MetricComparison]]
) -> list[str]:
    """Warn when fewer than TAIL_RESAMPLES resamples lie beyond each bound of the interval that
    reads its resamples furthest out (MetricComparison.resampled; an interval whose bounds are
    Student's t or a score interval reads none): the bound is then about the most extreme
    resample, and moves with --seed (--n-boot 100 at 99.9%: 0.05 beyond each, the verdict
    flipping between seeds). On few questions the expanded percentile takes its bounds beyond
    the nominal level (a 95% interval on 10 questions at 98.29%), so more resamples are needed
    there. A warning, not a refusal: --confidence 0.999 with the default --n-boot (2.5 beyond)
    is a choice CI may have made, and the intervals that draw no resamples (Student's t, from
    10,000 changed questions or 1,000 of nearly symmetric differences) are unaffected."""
    return too_few_resamples(
        n_boot,
        confidence,
        [
            (
                level,
                name,
                fmt_count(c.clusters, "cluster") if c.clusters else fmt_count(c.n, "question"),
            )
            for name, c in intervals
            if (level := c.resampled) is not None
        ],
    )


def too_few_resamples(
    n_boot: int, confidence: float, read: list[tuple[float, str, str]]
) -> list[str]:
    """few_resamples' warning over intervals given as (the level their quantiles were read at,
    name, its questions or clusters in words), as merge's replicate intervals are."""
    if not read:
        return []
    level, name, units = max(read, key=lambda named: named[0])
    tail = 1 - level
    # rounded: 1 - 0.9 is not 0.1; a level that is 1 in floats (2 questions) leaves none beyond
    needed = math.ceil(round(2 * TAIL_RESAMPLES / tail, 6)) if tail > 0 else math.inf
    if n_boot >= needed:
        return []
    interval = f"a {fmt_pct(confidence)} interval drawn from them"
    if level != confidence:
        interval = (
            f"the {fmt_pct(confidence)} interval of {name} on {units}, which takes its bounds "
            f"at the {fmt_pct(level)} level of its resamples (the expanded percentile, which "
            "corrects the bootstrap's narrowness on few)"
        )
    remedy = (
        f"--n-boot {needed:,} or more leaves {TAIL_RESAMPLES}"
        if needed <= MAX_N_BOOT
        else f"no --n-boot up to {MAX_N_BOOT:,} leaves {TAIL_RESAMPLES}"
    )
    return [
        f"--n-boot {n_boot:,} leaves fewer than {TAIL_RESAMPLES} resamples (about "
        f"{n_boot * tail / 2:.2g}) beyond each bound of {interval}: a bound is "
        f"then about the most extreme resample and moves with --seed; {remedy}"
    ]


def _check_margins(options: Options, comparisons: dict[str, MetricComparison]) -> None:
    """InputError for a margin of a metric the report lacks, or one given twice (the last
    silently won, and the JSON recorded both)."""
    known = set(comparisons) | {base_name(name) for name in comparisons}
    given: dict[str, float] = {}
    for name, margin in options.margins:
        if name and name not in known:
            raise InputError(
                f"--margin {name}={margin:g}: no metric {name!r} in this report; name one of "
                + ", ".join(comparisons)
            )
        if name in given:
            both = f"{given[name]:g} and {margin:g}"
            which = f"of {name}" if name else "for every metric"
            raise InputError(f"--margin {which} is given twice ({both}); give it once")
        given[name] = margin


def _unread_margins(options: Options, headline: str) -> list[str]:
    """A note for each margin of a metric the verdict does not read (it reads its own metric's
    only): checked, then read nowhere, it said nothing of that metric; and for the one it reads
    where that margin is past any difference the metric can take ("equivalent within 5" of a
    score in [0, 1] holds whatever the logs hold, as a gate's "correct within 5" does)."""
    unread = [
        f"--margin {name}={margin:g} is not read: the verdict reads the margin of its metric, "
        f"{headline}, only; the intervals of {name} are in the metric table"
        for name, margin in options.margins
        if name and name not in (headline, base_name(headline))
    ]
    named, span = dict(options.margins), difference_range(headline)
    key = next((k for k in (headline, base_name(headline), "") if k in named), None)
    if key is None or span is None or named[key] < span[1]:
        return unread
    given = f"{key}={named[key]:g}" if key else f"{named[key]:g}"
    return unread + [
        f"--margin {given} is past any difference of {headline}: B − A lies in "
        f"[{span[0]:g}, {span[1]:g}], so the verdict's reading against it says nothing; give a "
        "margin inside that range"
    ]


def headline_metric(tables: MetricTables) -> str:
    """The verdict's metric: correct when logged, else nDCG at the prompt, else the first."""
    if "correct" in tables.metrics:
        return "correct"
    return tables.name("ndcg" if "ndcg" in tables.metrics else tables.metrics[0])


def changed_questions(tables: MetricTables, headline: str) -> pd.DataFrame:
    """Paired questions whose headline score changed: those that got worse because B lost every
    piece of evidence A had in its prompt (hit 1 -> 0) first, then fixed (or better), then broken
    (or worse), each by the size of the change; "change" names it. B - A is read as the wins,
    losses and ties read it (as_compared): float noise is no change."""
    base = base_name(headline)
    sign = 1 if tables.metric(base).higher_is_better else -1  # a gain is a decrease otherwise
    delta = sign * as_compared(tables.difference(base).fillna(0))
    up, down = ("fixed", "broken") if tables.binary(base) else ("better", "worse")
    lost = (delta < 0) & ("hit" in tables.metrics)
    if "hit" in tables.metrics:
        lost &= (tables.paired["hit_a"] == 1) & (tables.paired["hit_b"] == 0)
    changed = tables.paired.assign(
        change=np.select([lost, delta > 0], ["lost evidence", up], down),
        order=np.select([lost, delta > 0], [0, 1], 2),
        size=-delta.abs(),
    )[delta != 0]
    return changed.sort_values(["order", "size"], kind="stable").drop(columns=["order", "size"])


def _slice_disagreements(disagreeing: dict[str, list[str]], labels: tuple[str, str]) -> list[str]:
    """A slice column whose value for a question differs between the two logs: the slices
    place the question by run A's value, which the reader should know is a choice."""
    return [
        f"Slice column {column!r} has another value in run {labels[1]} than in run "
        f"{labels[0]} for {fmt_count(len(ids), 'paired question')} ({fmt_listed(ids, EXAMPLES)}); "
        f"the slices place them by run {labels[0]}'s"
        for column, ids in disagreeing.items()
        if ids
    ]


def _one_run_columns(
    runs: dict[str, RunFile], slices: Iterable[str], cluster: str | None
) -> list[str]:
    """A slice or --cluster column that one log alone has: every question is placed by that
    run's values, the candidate's own where the baseline lacks it, which the report said nothing
    of (a column two runs log with other values is named by _slice_disagreements)."""
    asked = [(column, "Slice") for column in slices] + [(cluster, "Cluster")] * bool(cluster)
    out = []
    for column, kind in asked:
        having = [r for r in runs.values() if column in r.columns]
        if len(having) == 1:
            lacking = next(r for r in runs.values() if r is not having[0])
            out.append(
                f"{kind} column {column!r} is logged in run {having[0].label} only, not in run "
                f"{lacking.label} ({lacking.path.name}): the {kind.lower()}s place every question "
                f"by run {having[0].label}'s values"
            )
    return out


def _warnings(tables: MetricTables, golden: Audit, runs: dict[str, RunFile]) -> list[str]:
    labels = (runs["a"].label, runs["b"].label)
    warnings = _one_sided(runs)
    unpaired = (tables.only_a, tables.only_b)
    for run, ids in zip(runs.values(), unpaired, strict=True):
        if ids:
            # a RAGAS id is a hash of the question's text: named by its line and text instead
            named = (
                named_ids(run, ids, EXAMPLES) if run.tool == "ragas" else fmt_listed(ids, EXAMPLES)
            )
            warnings.append(
                f"{fmt_count(len(ids), 'question')} only in run {run.label} "
                f"{agreeing(len(ids), 'is', 'are')} not compared: {named}"
            )
    if all(unpaired):  # a RAGAS text, else an id, that is one question but for its spaces
        pair = (runs["a"], runs["b"])
        warnings[-1] += spaced_apart(pair, unpaired) or ids_spaced_apart(labels, unpaired)
    if all("relevant_spans" in r.columns for r in runs.values()):  # the spans are scored
        unread = [f"run {r.label}" for r in runs.values() if "relevant_ids" in r.columns]
        if unread:
            warnings.append(
                f"relevant_ids of {' and '.join(unread)} {agreeing(len(unread), 'is', 'are')} "
                "not scored: both runs log relevant_spans, and those are (they hold whatever "
                "the chunking)"
            )
    warnings += [f"Run {runs[u.run].label}: {u.said()}" for u in golden.unplaced]
    if golden.label_changes:
        shown = listed(q for q, _ in golden.label_changes[:EXAMPLES])
        warnings.append(
            "The golden set changed between the runs on "
            f"{fmt_count(len(golden.label_changes), 'question')} ({shown}): each run was scored "
            f"on its own labels there{passages_apart(runs)}"
        )
    if golden.exploratory:
        warnings.append(
            f"Only {fmt_count(golden.n_paired, 'paired question')}: treat every conclusion as "
            "exploratory"
        )
    if tables.without_evidence:
        warnings.append(
            f"{fmt_count(tables.without_evidence, 'paired question')} "
            f"{agreeing(tables.without_evidence, 'has', 'have')} no labelled evidence and "
            f"{agreeing(tables.without_evidence, 'is', 'are')} left out of the retrieval metrics"
        )
    if tables.without_ranking:
        column = tables.ranking_column
        warnings.append(
            f"{fmt_count(tables.without_ranking, 'paired question')} "
            f"{agreeing(tables.without_ranking, 'has', 'have')} {column} null in one run or "
            f"both, so {agreeing(tables.without_ranking, 'its', 'their')} retrieval metrics are "
            f"unknown and left out; {log([column], runs.values())} for every question (an empty "
            "list when there was none)"
        )
    for key in "ab":
        if left := [u for u in tables.unranked_samples if u.run == key]:
            warnings.append(_unranked_samples(left, key, tables, runs))
        warnings += _unscored_samples(tables, key, runs)
    return warnings + _unscored_answers(tables, labels)


def _prompt_is_ranking(tables: MetricTables, run: RunFile) -> bool:
    """Whether the ranking scored is the prompt, so that a sample without one has no character
    measures either: without --k, or in a log whose prompt is the ranking's top k."""
    return tables.k_source == "context_ids" or not {"context_ids", "context_spans"} & set(
        run.columns
    )


def _unranked_samples(
    left: list[Unranked], key: str, tables: MetricTables, runs: dict[str, RunFile]
) -> str:
    """The samples of run ``key`` left out of their questions' retrieval metrics, as a question
    is left out when its ranking is null: here its other samples give its mean, so the samples
    are named. Its character measures lose them too when the ranking is the prompt (no --k, or
    a log whose prompt is the ranking's top k)."""
    column, n, m = tables.ranking_column, sum(len(u.samples) for u in left), len(left)
    what = "retrieval metrics" + (
        " and character measures"
        if _prompt_is_ranking(tables, runs[key]) and CHAR_METRICS[0] in tables.metrics
        else ""
    )
    shown = "; ".join(
        f"{listed([u.question_id])}: {agreeing(len(u.samples), 'sample', 'samples')} "
        f"{listed(u.samples)}"
        for u in left[:EXAMPLES]
    ) + (f" and {m - EXAMPLES} more" if m > EXAMPLES else "")
    questions = agreeing(m, "the question's", "their questions'")
    return (
        f"{fmt_count(n, 'sample')} of {fmt_count(m, 'paired question')} in run {runs[key].label} "
        f"{agreeing(n, 'has', 'have')} {column} null while other samples of "
        f"{agreeing(m, 'the question', 'those questions')} log it ({shown}), so "
        f"{agreeing(n, 'it is', 'they are')} left out of {questions} {what}, which are the means "
        f"over the other samples; {log([column], runs.values())} for every sample (an empty "
        "list when there was none)"
    )


def _unscored_samples(tables: MetricTables, key: str, runs: dict[str, RunFile]) -> list[str]:
    """The samples of run ``key`` without a value of a metric their question's other samples
    have, which its mean over samples leaves out: an answer score (a judge that timed out on
    one sample), a score column, or the character measures of a sample whose prompt alone is
    null (their ranking's, and the retrieval metrics', are _unranked_samples'). Metrics that
    leave out the same samples share one warning."""
    run = runs[key]
    kinds = {ANSWER, SCORE} | (set() if _prompt_is_ranking(tables, run) else {CONTEXT})
    prompt = next((c for c in ("context_spans", "context_ids") if c in run.columns), "context_ids")
    left: dict[str, list[Unscored]] = {}
    for u in tables.unscored_samples:
        if u.run == key and tables.metric(u.metric).kind in kinds:
            left.setdefault(u.metric, []).append(u)
    grouped: dict[tuple[tuple[str, int, int], ...], list[str]] = {}
    for metric, questions in left.items():
        counts = tuple((u.question_id, u.unscored, u.samples) for u in questions)
        grouped.setdefault(counts, []).append(metric)
    warnings = []
    for rows, metrics in grouped.items():
        n, m, k = sum(r[1] for r in rows), len(rows), len(metrics)
        names = [tables.name(metric) for metric in metrics]
        named = " and ".join(filter(None, [listed(names[:-1]), listed(names[-1:])]))
        shown = "; ".join(f"{listed([q])}: {u} of {s}" for q, u, s in rows[:EXAMPLES]) + (
            f" and {m - EXAMPLES} more" if m > EXAMPLES else ""
        )
        columns = dict.fromkeys(
            prompt if tables.metric(b).kind == CONTEXT else tables.metric(b).source or b
            for b in metrics
        )
        whose = agreeing(m, "the question's", "each of those questions'")
        warnings.append(
            f"{named} {agreeing(k, 'has', 'have')} no value on {fmt_count(n, 'sample')} of "
            f"{fmt_count(m, 'paired question')} in run {run.label} while other samples of "
            f"{agreeing(m, 'the question', 'those questions')} have one ({shown} samples), so "
            f"{whose} {named} {agreeing(k, 'is the mean', 'are the means')} over its other "
            f"samples; {log(columns, runs.values())} for every sample"
        )
    return warnings


def _unscored_answers(tables: MetricTables, labels: tuple[str, str]) -> list[str]:
    """An answer score left null on some paired questions is compared over the rest only, and
    its verdict and gate rules read those alone: 3 of 60 scored passed 'faithfulness >= -0.05'
    with no word. (Retrieval metrics say why they leave questions out above.)"""
    p, notes = tables.paired, []
    for base in tables.metrics:
        if tables.metric(base).kind not in (ANSWER, SCORE):
            continue
        missing = [int(p[f"{base}_{run}"].isna().sum()) for run in "ab"]
        scored = int(p[[f"{base}_a", f"{base}_b"]].notna().all(axis=1).sum())
        if scored < len(p):
            without = " and ".join(
                f"{n:,} in run {label}" for n, label in zip(missing, labels, strict=True) if n
            )
            notes.append(
                f"{tables.name(base)} is compared on {scored:,} of "
                f"{fmt_count(len(p), 'paired question')}: it has no value on {without}, and its "
                "interval, test and gate rules read the rest only"
            )
    return notes
