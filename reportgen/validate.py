"""``validate``: every problem of a run log, one line per kind, with the checks compare uses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .analysis.audit import unplaced
from .analysis.metrics import (
    MetricTables,
    Options,
    check_cutoff,
    compute_tables,
    plan,
    score_questions,
)
from .analysis.registry import ANSWER, SCORE, names
from .analysis.samples import Unscored
from .errors import InputError
from .formatting import agreeing, fmt_count, listed
from .inputs.database import RunDatabase
from .inputs.load import RunFile, SchemaError, open_log, run_value_problems, with_rows
from .inputs.readers import ReadOptions
from .inputs.readers.promptfoo import SeveralRuns
from .inputs.row_checks import EXAMPLES


@dataclass(frozen=True)
class Validation:
    lines: list[str]  # one per kind of problem; a single "ok" line when there is none
    refused: bool  # compare would refuse this log


def validate(path: Path, options: ReadOptions) -> Validation:
    """The file, then its schema, then (when the schema holds) every value the contract's types
    hold but its ranges do not (a 0/1 column's 2), every row problem, then whether
    compare can compute a metric from the log: from its columns, then (when no row refuses it)
    from its values, the log scored and paired with itself as compare pairs two logs.

    Rows are checked only against a schema that holds: a column of the wrong type cannot be read
    in the contract's type.
    """
    try:
        run = with_rows(open_log(path, "", options, values=False))
        values = run_value_problems(run)
    except SeveralRuns as error:
        advice = error.advice("check one at a time with --run-filter NAME")
        return Validation([_error(path, advice)], True)
    except SchemaError as error:
        return Validation([_error(path, p) for p in error.problems], refused=True)
    except InputError as error:
        return Validation([_error(path, str(error))], refused=True)
    settings = Options(cutoff=_cutoff(run))
    db = RunDatabase(run)
    try:
        found = db.read(settings.cutoff)
        refused = bool(values) or any(p.refused for p in found)
        refusal, unknown = (None, []) if refused else _scored(db, settings)
        misplaced = [] if refused or refusal else [u.said() for u in unplaced(db)]
    except InputError as error:  # a value the queries cannot read: named by the first lines
        return Validation([_error(path, v) for v in values or [str(error)]], refused=True)
    finally:
        db.close()
    # a RAGAS table's retrieved_contexts are both its ranking and its prompt: a problem of the
    # column is found in each, and said once
    problems = dict.fromkeys(p.summary() for p in found)
    scored = [_error(path, refusal)] if refusal else unknown
    lines = [_error(path, v) for v in values] + list(problems) + scored
    # how the reader read the file, as compare's warnings say it: a RAGAS score that failed
    notes = [f"{path}: note: {note}" for note in (*run.notes, *_both_labels(run), *misplaced)]
    asked = "" if refused or refusal else _k_asked(run)
    if not lines:
        rows = f"{fmt_count(run.n_rows, 'row')} {agreeing(run.n_rows, 'follows', 'follow')}"
        ok = f"{path}: ok, {rows} the run-log contract{'; ' + asked if asked else ''}"
        return Validation([ok, *notes], False)
    # values left out (or labels merged) are no refusal: what compare asks still holds
    return Validation(lines + [f"{path}: {asked}"] * bool(asked) + notes, refused or bool(refusal))


def _error(path: Path, line: str) -> str:
    """A refusal's ``line`` labelled as the row checks label theirs (``FILE: error: ...``): it
    names its file first, ``path`` or, in a folder of shards, a shard under it."""
    name = str(path)
    end = line.find(": ", len(name)) if line.startswith(name) else -1
    if end < 0:
        return f"{path}: error: {line}"
    return f"{line[:end]}: error: {line[end + 2 :]}"


def _scored(db: RunDatabase, settings: Options) -> tuple[str | None, list[str]]:
    """The log of ``db`` (its rows read and passed) scored and paired with itself as compare
    pairs two logs: compare's refusal, when it has one (no metric its columns allow, or none
    its values give: every label list empty, a score null throughout), else the values it
    would leave out as unknown (_unknown)."""
    run = db.files["a"]
    try:
        plan((run, run), settings)
        db.match(settings.cutoff, settings.span_coverage)
        score_questions(db, settings.cutoff, settings.gain == "exponential")
        scored = db.scored_run()
        pair = RunDatabase(run, run, scored=(scored, scored))
        try:
            tables = compute_tables(pair, settings, curve=False)
        finally:
            pair.close()
    except InputError as error:
        return str(error), []
    return None, _unknown(run, tables)


def _unknown(run: RunFile, tables: MetricTables) -> list[str]:
    """What compare leaves out of a metric because a value it needs is null, which no row check
    names, as compare's warnings count it: a labelled question without the ranking scored (its
    retrieval metrics are unknown), an answer score or score column null on some questions
    (compared on the rest) or on all (not compared), a sample's null among a question's
    samples (the question's mean is over the others), and the retrieval metrics of a log whose
    every prompt is empty."""
    path, p, lines = run.path, tables.paired, []
    column = tables.ranking_column
    if tables.without_ranking:
        ids = p["question_id"][p["k_a"].isna() & (p["n_relevant_a"] > 0)]
        lines.append(
            _left_out(
                path,
                ids,
                f"labelled evidence and {column} null",
                f"compare leaves {agreeing(len(ids), 'its', 'their')} retrieval metrics out as "
                f"unknown; log {column} for every question (an empty list when there was none)",
            )
        )
    for base in tables.metrics:
        metric, ids = tables.metric(base), p["question_id"][p[f"{base}_a"].isna()]
        if metric.kind in (ANSWER, SCORE) and len(ids):
            name = tables.name(base)
            lines.append(
                _left_out(
                    path,
                    ids,
                    f"{metric.source or base} null",
                    f"compare scores {name} on the other questions only, and its interval, test "
                    "and gate rules read them alone",
                )
            )
    for base in names(ANSWER):
        if base in run.columns and base not in tables.metrics and p[f"{base}_a"].isna().all():
            lines.append(
                f"{path}: left out: {base} is null on every question, so compare leaves it out "
                "of the comparison; log it where it was scored"
            )
    if tables.retrieval_left_out:
        lines.append(f"{path}: left out: the retrieval metrics: {tables.retrieval_left_out}")
    unranked = [u for u in tables.unranked_samples if u.run == "a"]
    if unranked:
        lines.append(
            _samples_left_out(
                path,
                [(u.question_id, f"sample {listed(u.samples)}", len(u.samples)) for u in unranked],
                f"{column} null",
                "compare leaves each out of its question's retrieval metrics, the mean over the "
                "question's other samples",
            )
        )
    by_metric: dict[str, list[Unscored]] = {}
    for u in tables.unscored_samples:
        if u.run == "a" and tables.metric(u.metric).kind in (ANSWER, SCORE):
            by_metric.setdefault(u.metric, []).append(u)
    for base, left in by_metric.items():
        lines.append(
            _samples_left_out(
                path,
                [(u.question_id, f"{u.unscored} of {u.samples} samples", u.unscored) for u in left],
                f"{tables.metric(base).source or base} null",
                f"compare's {tables.name(base)} of each such question is the mean over its "
                "other samples",
            )
        )
    return lines


def _samples_left_out(
    path: Path, questions: list[tuple[str, str, int]], what: str, consequence: str
) -> str:
    """A line of samples left out of their questions' means, while other samples of the same
    questions have the value: (question_id, which samples, how many) each."""
    n, m = sum(q[2] for q in questions), len(questions)
    shown = "; ".join(f"{listed([q])}: {which}" for q, which, _ in questions[:EXAMPLES])
    more = f" and {m - EXAMPLES} more" if m > EXAMPLES else ""
    return (
        f"{path}: left out: {fmt_count(n, 'sample')} of {fmt_count(m, 'question')} with {what} "
        f"while other samples of {agreeing(m, 'the question', 'those questions')} have it "
        f"({shown}{more}); {consequence}"
    )


def _left_out(path: Path, ids: pd.Series, what: str, consequence: str) -> str:
    """A line of questions left out, as the row checks' lines name rows: the count, up to
    EXAMPLES of their ids, what they lack and what compare does."""
    more = f" and {len(ids) - EXAMPLES} more" if len(ids) > EXAMPLES else ""
    shown = listed(ids.head(EXAMPLES).astype(str)) + more
    return (
        f"{path}: left out: {fmt_count(len(ids), 'question')} with {what}: {shown}; {consequence}"
    )


def _both_labels(run: RunFile) -> list[str]:
    """Which labels compare scores in a log of both relevant_ids and relevant_spans: a user who
    kept the passage labels of an old chunking beside new span labels is told which count."""
    if {"relevant_ids", "relevant_spans"} <= run.columns:
        return [
            "relevant_ids and relevant_spans are both logged: compare scores relevant_spans where "
            "the other log has them too, else relevant_ids"
        ]
    return []


def _k_asked(run: RunFile) -> str:
    """The --k compare asks of the log, scored here at a k of 1 (_cutoff), in compare's words
    ("compare: ..."); "" when it asks none."""
    try:
        check_cutoff((run, run), None)
    except InputError as error:
        return "compare: " + str(error).removeprefix(f"{run.path}: ")
    return ""


def _cutoff(run: RunFile) -> int | None:
    """A --k under which ``compare`` scores what the log allows: none when it logs its prompt
    (context_ids or context_spans), as compare reads it by default; else any k, when it logs
    a ranking, since compare then asks for one."""
    if {"context_ids", "context_spans"} & run.columns:
        return None
    return 1 if {"retrieved_ids", "retrieved_spans"} & run.columns else None
