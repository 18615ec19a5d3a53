"""The "which link failed" sections as the templates get them: text decided, numbers formatted."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ...comparison.compare import Comparison
from ...diagnosis.diagnose import COSTS, UNITS
from ...diagnosis.stages import (
    CELL_NAMES,
    CELL_TITLES,
    FAILURE_CLASSES,
    MEMORY,
    OK,
    OWNERS,
    UNLABELLED_SUPPORT,
    Agreement,
)
from ...formatting import (
    agreeing,
    and_joined,
    fmt_count,
    fmt_diff,
    fmt_interval,
    fmt_num,
    fmt_p,
    interval_side,
)
from ...inputs.load import RunFile
from ...inputs.logged import log, log_retrieval, tool_of
from ..user_text import shown_text
from . import charts
from .charts import Chart, RunColours

CANDIDATES_SHOWN = 20  # ranked candidates drawn per drill-down
CASES_OPEN = 3  # drill-downs shown unfolded; the others open with a click
MOVES_SHOWN = 4  # largest moves between the retrieval-by-answer cells named under the table


@dataclass(frozen=True)
class StageRow:
    stage: str
    metric: str
    population: str
    a: str = field(metadata={"help": "A's mean with its interval and n"})
    b: str
    diff: str
    interval: str
    n: int = field(metadata={"help": "questions in both runs' populations"})
    p: str
    direction: str


@dataclass(frozen=True)
class Step:
    question: str
    metric: str
    value: str
    threshold: str
    passed: bool
    passed_on: bool = field(
        default=False,
        metadata={"help": "under its bar, yet the walk went on: no answer was lost there"},
    )


@dataclass(frozen=True)
class Experiment:
    run: str
    stage: str
    change: str
    metric: str | None  # None: a logging step, which nothing judges
    comparison: str | None
    refuted_if: str | None
    path: list[Step]


@dataclass(frozen=True)
class Candidate:
    rank: int
    id: str
    grade: int | None = field(metadata={"help": "label grade; None: not labelled relevant"})
    in_prompt: bool
    cited: bool


@dataclass(frozen=True)
class Exemplar:
    group: str = field(metadata={"help": "why it is shown: a run's dominant class, or broken"})
    run: str
    question_id: str
    question: str
    failure_class: str
    owner: str
    candidates: list[Candidate]
    cutoff: int | None = field(metadata={"help": "rank after which the prompt cutoff is drawn"})
    more: int = field(metadata={"help": "candidates not drawn"})
    context: list[str] | None = field(metadata={"help": "None when context_ids is not logged"})
    answer: str
    reference: str
    scores: str
    open: bool = field(default=False, metadata={"help": "unfolded: one of the first CASES_OPEN"})


@dataclass(frozen=True)
class Judge:
    label: str
    n: int
    accuracy: str
    kappa: str
    judge_yes: str = field(metadata={"help": "judged yes: 'human yes / human no'"})
    judge_no: str = field(metadata={"help": "judged no: 'human yes / human no'"})
    warning: str | None
    gap: str = field(metadata={"help": "B's accuracy - A's on the pooled row, else ''"})


@dataclass(frozen=True)
class CostRow:
    name: str
    a: str
    b: str
    diff: str
    interval: str
    relative: str


@dataclass(frozen=True)
class MissingColumn:
    stage: str = field(metadata={"help": "the section or link not scored"})
    needs: str = field(metadata={"help": "the column(s) that would score it"})
    hint: str = field(metadata={"help": "what would score it, as the page says it"})


NONE_ANSWERABLE = "no question is answerable, so none has evidence to locate"
# what would score a section that needs located evidence then, as a hint reads it
ADD_ANSWERABLE = "add answerable questions, their evidence labelled: no question here is answerable"


def none_answerable(result: Comparison) -> bool:
    """Whether both logs mark questions answerable and every paired one is not (a set of
    questions to refuse): there is no evidence to label, and a hint to label it misleads."""
    runs = result.runs.values()
    n = result.audit.n_paired
    return all("answerable" in r.columns for r in runs) and n > 0 and result.audit.unanswerable == n


def _hint(needs: str, runs: list[RunFile], unanswerable: bool) -> str:
    """What would score a section that wants ``needs``: label the evidence where both logs have
    the label column but no paired question has labelled evidence in it (no advice where every
    question is ``unanswerable``: none has any), else log the columns (in the words of the tool
    that wrote the runs: see inputs/logged.py)."""
    if needs in ("relevant_ids", "relevant_spans"):
        logged = frozenset.intersection(*(r.columns for r in runs))
        labels = [c for c in ("relevant_ids", "relevant_spans") if c in logged]
        if labels and unanswerable:
            return ADD_ANSWERABLE
        if labels:
            return f"label the evidence in {labels[0]}: it is logged, but no question has any"
        if tool_of(runs) is not None:
            return log(["relevant_ids", "context_ids"], runs)
        return log_retrieval(runs)
    if needs == "answerable" and all("answerable" in r.columns for r in runs):
        return "no question is unanswerable: none has answerable false or an empty relevant_ids"
    return log(re.split(r", | and ", needs), runs)


@dataclass(frozen=True)
class TransitionRow:
    cell: str = field(metadata={"help": "the questions' retrieval-by-answer cell in A"})
    counts: list[int] = field(metadata={"help": "how many are in each cell in B"})


@dataclass(frozen=True)
class ClassRow:
    name: str
    owner: str = field(metadata={"help": "who owns the fix: retrieval, ranking, generation"})
    a: int
    b: int


# where a question has several answers, what of this section reads one of them
FIRST_SAMPLES = (
    "A question answered more than once is diagnosed by its first sample (by its sample id): "
    "the links, the next experiment, the failure classes and the cells read each question's "
    "first sample, where the metrics above and the costs below average its samples."
)


@dataclass(frozen=True)
class DiagnosisView:
    stages: list[StageRow]
    missing: list[MissingColumn]
    cell_good: str = field(metadata={"help": "what the 2x2's good column counts"})
    transitions: list[TransitionRow]
    moves: list[str] = field(metadata={"help": "the MOVES_SHOWN largest moves between cells"})
    classes: list[ClassRow]
    dominant: list[str]
    chart: Chart | None
    experiments: list[Experiment]
    experiment_notes: list[str] = field(
        metadata={"help": "why a run has no next experiment (the column that would give one)"}
    )
    judge: list[Judge]
    cost: list[CostRow]
    summary: str | None
    exemplars: list[Exemplar]
    cases_note: str | None = field(metadata={"help": "says so when not every case is drawn"})
    supported: str | None = field(metadata={"help": "the supported rule; None without it"})
    supported_dominates: bool = field(metadata={"help": "the rule decides the results"})
    first_samples: str | None = field(
        metadata={"help": "with repeated answers, that the links read first samples; else None"}
    )


def _stage_rows(result: Comparison) -> list[StageRow]:
    rows = []
    for s in result.diagnosis.stages:
        d = s.diff
        rows.append(
            StageRow(
                stage=s.stage,
                metric=s.metric,
                population=s.population,
                a=f"{fmt_num(s.a.mean)} [{fmt_num(s.a.ci_low)}, {fmt_num(s.a.ci_high)}]",
                b=f"{fmt_num(s.b.mean)} [{fmt_num(s.b.ci_low)}, {fmt_num(s.b.ci_high)}]",
                diff=fmt_diff(d.diff),
                interval=fmt_interval(d.ci_low, d.ci_high),
                n=d.n,
                p=fmt_p(d.p),
                direction=interval_side(d.ci_low, d.ci_high, s.higher_is_better),
            )
        )
    return rows


def _experiment_notes(result: Comparison) -> list[str]:
    """A run without a next experiment reached the answers, which only ``correct`` can judge."""
    advice = log(["correct"], result.runs.values())
    return [
        f"Run {run.upper()}: no next experiment is proposed: the walk along the chain reached "
        "the answers (no link before them fell short of its bar, or none could be located), "
        f"which need correct to be judged ({advice})."
        for run in ("b", "a")
        if result.diagnosis.next_experiment.get(run) is None
    ]


def _experiments(result: Comparison) -> list[Experiment]:
    out = []
    for run in ("b", "a"):
        e = result.diagnosis.next_experiment.get(run)
        if e is None:
            continue
        out.append(
            Experiment(
                run=run.upper(),
                stage=e.stage,
                change=e.change,
                metric=e.metric,
                comparison=e.comparison,
                refuted_if=e.refuted_if,
                path=[
                    Step(
                        s.question,
                        s.metric,
                        fmt_num(s.value),
                        fmt_num(s.threshold),
                        s.passed,
                        # the walk stops at a step under its bar unless no answer was lost there
                        not s.passed and i < len(e.path) - 1,
                    )
                    for i, s in enumerate(e.path)
                ],
            )
        )
    return out


def _judge_row(label: str, a: Agreement, gap: str) -> Judge:
    c = a.confusion
    return Judge(
        label=label,
        n=a.n,
        accuracy=fmt_num(a.accuracy),
        kappa=fmt_num(a.kappa),
        judge_yes=f"{c['true']['true']} / {c['true']['false']}",
        judge_no=f"{c['false']['true']} / {c['false']['false']}",
        warning=a.warning,
        gap=gap,
    )


def _judge(result: Comparison) -> list[Judge]:
    """Per label: both runs pooled, then each run's answers on their own; one row when only one
    run's answers have human labels, saying so."""
    out = []
    for label, a in result.diagnosis.judge_agreement.items():
        if len(a.by_run) == 1:
            (run,) = a.by_run
            other = "B" if run == "a" else "A"
            only = f"{label}, {run.upper()}'s answers only ({other}'s have no human label)"
            out.append(_judge_row(only, a, ""))
            continue
        gap = fmt_diff(a.accuracy_gap) if a.accuracy_gap is not None else ""
        out.append(_judge_row(f"{label}, both runs", a, gap))
        out += [
            replace(_judge_row(f"{label}, {run.upper()}'s answers", own, ""), warning=None)
            for run, own in a.by_run.items()
        ]
    return out


def _cost(result: Comparison) -> list[CostRow]:
    """Each cost's row, named with its unit where its name lacks it ("latency (ms)", "context
    tokens"; the column's name with the unit read "latency ms (ms)")."""
    out = []
    for column, change in result.diagnosis.cost.items():
        c = change.comparison
        label, (unit, digits) = COSTS[column], UNITS[column]
        out.append(
            CostRow(
                name=label if unit in label else f"{label} ({unit})",
                a=f"{c.a:.{digits}f}",
                b=f"{c.b:.{digits}f}",
                diff=fmt_diff(c.diff, digits),
                interval=fmt_interval(c.ci_low, c.ci_high, digits),
                relative=_relative(change.relative_pct),
            )
        )
    return out


def _relative(pct: float) -> str:
    """B's change as a share of A's mean, or why there is none (A's mean is 0)."""
    return "n/a (A is 0)" if math.isnan(pct) else fmt_diff(pct, 0) + "%"


def _classes(result: Comparison, colours: RunColours) -> tuple[list[ClassRow], Chart | None]:
    counts = result.diagnosis.failure_classes
    if counts is None:
        return [], None
    rows = [
        ClassRow(name, OWNERS[name], counts["a"][name], counts["b"][name])
        for name in FAILURE_CLASSES
        if counts["a"][name] or counts["b"][name]
    ]
    frame = pd.DataFrame(
        [(run, r.name, n) for r in rows for run, n in (("a", r.a), ("b", r.b))],
        columns=["run", "failure_class", "n"],
    )
    chart = Chart(
        id="failure-classes",
        title="Failure classes of both runs",
        reading=" ".join(_dominant(result)) or "Neither run has a failing question.",
        spec=charts.failure_classes(frame, colours),
    )
    return rows + [ClassRow(OK, "", counts["a"][OK], counts["b"][OK])], chart


# the classes of correct answers, and what tells each apart, as the dominant class says it
CORRECT_CLASSES = {
    MEMORY: "",
    UNLABELLED_SUPPORT: ", which the judge found the prompt supports: a passage there lacks "
    "its label",
}


def _dominant(result: Comparison) -> list[str]:
    """Each run's most common failure class, with the link whose fix it needs. An answer from
    memory, or with unlabelled support, is correct: its run is right without the labelled
    evidence, not failing."""
    lines = []
    for run, d in result.diagnosis.dominant.items():
        if d is None:
            continue
        counted = fmt_count(d.n, "question")
        if d.failure_class in CORRECT_CLASSES:
            lines.append(
                f"Run {run.upper()}'s most common problem is {d.failure_class} ({counted} "
                f"answered correctly with no labelled evidence in the prompt"
                f"{CORRECT_CLASSES[d.failure_class]}): the fix belongs to {d.owner}."
            )
        else:
            lines.append(
                f"Run {run.upper()} fails most often by {d.failure_class} ({counted}): "
                f"the fix belongs to {d.owner}."
            )
    return lines + _moved(result)


def _moved(result: Comparison) -> list[str]:
    """The failure classes of wrong answers that grew most from A to B, and those that shrank
    most, with the link each one's fix belongs to: where A already fails most often at one
    link, the dominant classes name that link for both runs, and the link B's change moved went
    unsaid (2 answers faithful to the wrong evidence, beside 3 ranking misses in both runs,
    read only as the table's 0 and 2)."""
    counts = result.diagnosis.failure_classes
    if counts is None:
        return []
    change = {
        name: counts["b"][name] - counts["a"][name]
        for name in FAILURE_CLASSES
        if name not in CORRECT_CLASSES
    }
    lines = []
    for verb, extreme in (("grew", max(change.values())), ("shrank", min(change.values()))):
        if extreme == 0:
            continue
        named = [
            f"{name} ({counts['a'][name]:,} to {fmt_count(counts['b'][name], 'question')}, "
            f"whose fix belongs to {OWNERS[name]})"
            for name, moved in change.items()
            if moved == extreme
        ]
        classes, be = ("failure class", "is") if len(named) == 1 else ("failure classes", "are")
        lines.append(f"From A to B, the {classes} that {verb} most {be} {and_joined(named)}.")
    return lines


def _items(value: Any) -> list[Any] | None:
    """A list column's value as a list; None when NULL."""
    return list(value) if isinstance(value, list | tuple | np.ndarray) else None


def _exemplar(row: Any, group: str, failure_class: str, k: int | None) -> Exemplar:
    """A drill-down as queries/exemplars.sql marked its candidates (labels and prompt as scored)."""
    context = _items(row.context_ids)
    ranked = _items(row.candidates) or []
    cited = set(_items(row.cited_ids) or [])
    candidates = [
        Candidate(
            rank,
            str(c["id"]),
            None if c["grade"] is None else int(c["grade"]),
            bool(c["in_prompt"]),
            c["id"] in cited,
        )
        for rank, c in enumerate(ranked[:CANDIDATES_SHOWN], start=1)
    ]
    cutoff = k if k is not None else (len(context) if context is not None else None)
    scores = ", ".join(
        f"{name} {fmt_num(value) if isinstance(value, float) else value}"
        for name, value in (
            ("correct", None if pd.isna(row.correct) else ("yes" if row.correct else "no")),
            ("faithfulness", row.faithfulness),
            ("answer relevance", row.answer_relevance),
        )
        if value is not None and not (isinstance(value, float) and np.isnan(value))
    )
    return Exemplar(
        group=group,
        run=str(row.run).upper(),
        question_id=str(row.question_id),
        question=shown_text(row.question),
        failure_class=failure_class,
        owner=OWNERS.get(failure_class, ""),
        candidates=candidates,
        cutoff=cutoff,
        more=max(0, len(ranked) - CANDIDATES_SHOWN),
        context=None if context is None else [str(c) for c in context],
        answer=shown_text(row.answer),
        reference=shown_text(row.reference_answer),
        scores=scores,
    )


def _exemplars(result: Comparison) -> list[Exemplar]:
    d = result.diagnosis
    rows = {(r.run, r.question_id): r for r in result.exemplars.itertuples()}
    classes = d.per_question.set_index("question_id") if d.per_question is not None else None

    def failure(run: str, qid: str) -> str:
        return str(classes.at[qid, f"failure_class_{run}"]) if classes is not None else ""

    out = []
    for run, ids in d.exemplars.items():
        dominant = d.dominant[run]
        group = f"Run {run.upper()}: {dominant.failure_class}" if dominant else f"Run {run}"
        out += [
            _exemplar(rows[run, q], group, failure(run, q), result.tables.named_cutoff)
            for q in ids
            if (run, q) in rows
        ]
    out += [
        _exemplar(
            rows["b", q],
            "Broken by B (correct in A, wrong in B)",
            failure("b", q),
            result.tables.named_cutoff,
        )
        for q in d.broken
        if ("b", q) in rows
    ]
    return [replace(e, open=i < CASES_OPEN) for i, e in enumerate(out)]


def _cases_note(result: Comparison) -> str | None:
    shown = set(result.exemplars["question_id"])
    missing = [q for q in result.diagnosis.broken if q not in shown]
    if not missing:
        return None
    drawn = len(result.diagnosis.broken) - len(missing)
    return (
        f"{drawn} of the {fmt_count(len(result.diagnosis.broken), 'question')} B broke "
        f"{agreeing(drawn, 'is', 'are')} drawn here; "
        "the JSON's broken list names them all."
    )


def diagnosis_view(result: Comparison, colours: RunColours) -> DiagnosisView:
    d = result.diagnosis
    classes, chart = _classes(result, colours)
    transitions = d.transitions or {}
    runs = list(result.runs.values())
    return DiagnosisView(
        stages=_stage_rows(result),
        missing=[
            MissingColumn(m.stage, m.needs, _hint(m.needs, runs, none_answerable(result)))
            for m in d.missing
        ],
        cell_good="answer correct and supported"
        if "faithfulness" in result.tables.metrics
        else "answer correct",
        transitions=[
            TransitionRow(CELL_TITLES[name], [transitions[name][to] for to in CELL_NAMES])
            for name in CELL_NAMES
            if name in transitions
        ],
        moves=[
            f"{CELL_TITLES[m['from']]} \u2192 {CELL_TITLES[m['to']]}: {m['n']}"
            for m in d.moves[:MOVES_SHOWN]
        ],
        classes=classes,
        dominant=_dominant(result),
        chart=chart,
        experiments=_experiments(result),
        experiment_notes=_experiment_notes(result),
        judge=_judge(result),
        cost=_cost(result),
        summary=d.summary,
        exemplars=_exemplars(result),
        cases_note=_cases_note(result),
        supported=result.supported.text
        if {"correct", "faithfulness"} <= set(result.tables.metrics)
        else None,
        supported_dominates=result.supported.dominates,
        first_samples=FIRST_SAMPLES if result.tables.sampled else None,
    )
