"""What the page of a study (one baseline, several candidates) shows above the candidates'
own sections: the summary table, the multiplicity and winner's-curse sentences, two charts."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from ...comparison.study import Study
from ...formatting import (
    agreeing,
    fmt_count,
    fmt_diff,
    fmt_interval,
    fmt_num,
    fmt_p,
    fmt_pct,
    interval_side,
)
from . import charts
from .charts import Chart, RunColours
from .context import OptionRow, ReportContext, RunRow, in_section


@dataclass(frozen=True)
class SummaryLine:
    anchor: str  # id of the candidate's section
    candidate: str
    colour: str
    metric: str
    baseline: str
    candidate_mean: str
    diff: str
    interval: str
    p_adjusted: str  # over the candidates, as StudyContext.adjustment says
    fixed_broken: str
    outcome: str
    direction: str  # up, down or none: the colour of the difference


@dataclass(frozen=True)
class CandidateSection:
    anchor: str
    label: str
    colour: str
    baseline: str
    context: ReportContext


@dataclass(frozen=True)
class GateLink:
    candidate: str
    anchor: str  # of the candidate's own gate section


@dataclass(frozen=True)
class StudyGate:
    """The gate over every candidate, above the sections that give each one's rules."""

    passed: bool
    outcome: str  # pass or fail
    detail: str  # the checks failed, the candidates passing, the one-sided level
    links: list[GateLink]  # each candidate ruled, in the order of the sections


@dataclass(frozen=True)
class StudyContext:
    title: str
    baseline: str
    baseline_colour: str
    n_paired: int
    family: str
    adjustment: str  # of the summary's p: the method of the candidates' intervals
    curse: str | None
    holdout: str | None
    gate: StudyGate | None
    warnings: list[str]
    summary: list[SummaryLine]
    charts: list[Chart]
    sections: list[CandidateSection]
    runs: list[RunRow]
    colours: dict[str, str]  # run label -> its colour on every chart
    footer: ReportContext  # the first section's, with the options as given (each section's
    # carry the family's interval level: 97.5% for --confidence 0.95 over two candidates)


def _charts(study: Study, colours: dict[str, str]) -> list[Chart]:
    headline = study.headline
    means = pd.DataFrame(
        {
            "run": [m.label for m in study.run_means],
            "mean": [m.mean for m in study.run_means],
            "low": [m.ci_low for m in study.run_means],
            "high": [m.ci_high for m in study.run_means],
        }
    )
    out = [
        Chart(
            id="run-means",
            title=f"{headline} of every run",
            reading=f"Each run's own mean with its {fmt_pct(study.options.confidence)} interval "
            "(one run's, so not adjusted for the candidates); the differences, which are paired "
            "and so narrower, are in the table above.",
            spec=charts.run_means(means, headline, [colours[r] for r in means["run"]]),
        )
    ]
    if study.matrix:
        cells = pd.DataFrame(
            {
                "row": [c.row for c in study.matrix],
                "column": [c.column for c in study.matrix],
                "diff": [c.diff for c in study.matrix],
                "text": [fmt_diff(c.diff) for c in study.matrix],
                "differs": [c.differs for c in study.matrix],
                "borderline": [c.borderline for c in study.matrix],
            }
        )
        out.append(
            Chart(
                id="run-matrix",
                title="Which runs differ",
                reading=_matrix_reading(study),
                spec=charts.difference_matrix(cells, headline),
            )
        )
    return out


def _matrix_reading(study: Study) -> str:
    """How many pairs of runs differ, interval and test agreeing as in a verdict that is not
    borderline, and the borderline pairs by name: an interval that excludes zero beside a test
    that does not is no more a difference here than in a verdict."""
    order = [run.label for run in study.runs]
    pairs = [c for c in study.matrix if order.index(c.row) < order.index(c.column)]
    differing = sum(c.differs for c in pairs)
    borderline = [f"{c.row} and {c.column}" for c in pairs if c.borderline]
    return (
        f"{differing} of {fmt_count(len(pairs), 'pair')} of runs "
        f"{agreeing(differing, 'differs', 'differ')} in {study.headline}, their interval and test "
        "agreeing at the Bonferroni level over every pair"
        + (
            f"; {len(borderline)} more {agreeing(len(borderline), 'is', 'are')} borderline, "
            f"{agreeing(len(borderline), 'its', 'their')} interval and test disagreeing: "
            f"{', '.join(borderline)}."
            if borderline
            else "."
        )
    )


def study_colours(study: Study) -> dict[str, str]:
    """Run label -> its colour, the baseline first, kept on every chart of the page."""
    return dict(zip((r.label for r in study.runs), charts.STUDY_COLOURS, strict=False))


def candidate_colours(candidate: int) -> RunColours:
    """The colours the section of a study's ``candidate``-th candidate (1: the first) draws A
    (the baseline) and B (it) in: study_colours', by the runs' order."""
    return RunColours(charts.STUDY_COLOURS[0], charts.STUDY_COLOURS[candidate])


def _gate(study: Study, sections: list[CandidateSection]) -> StudyGate | None:
    """The command's gate line, as the page's own: each section's gate shows only its rules."""
    gate = study.gate
    if gate is None:
        return None
    ruled = {r.candidate for r in gate.results}
    return StudyGate(
        passed=gate.passed,
        outcome=gate.outcome,
        detail=gate.tally,
        links=[GateLink(s.label, f"{s.anchor}-gate") for s in sections if s.label in ruled],
    )


def build_study_context(study: Study, pair_contexts: list[ReportContext]) -> StudyContext:
    colours = study_colours(study)
    anchors = [f"candidate-{i + 1}" for i in range(len(study.pairs))]
    sections = [
        CandidateSection(
            anchor=anchor,
            label=pair.runs["b"].label,
            colour=colours[pair.runs["b"].label],
            baseline=study.baseline.label,
            context=in_section(context, f"{anchor}-"),
        )
        for anchor, pair, context in zip(anchors, study.pairs, pair_contexts, strict=True)
    ]
    summary = [
        SummaryLine(
            anchor=section.anchor,
            candidate=row.candidate,
            colour=section.colour,
            metric=row.metric,
            baseline=fmt_num(row.baseline_mean),
            candidate_mean=fmt_num(row.candidate_mean),
            diff=fmt_diff(row.diff),
            interval=fmt_interval(row.ci_low, row.ci_high),
            p_adjusted=fmt_p(row.p_adjusted),
            fixed_broken=f"{row.fixed:,} / {row.broken:,}" if row.fixed is not None else "",
            outcome=row.reads,
            direction=interval_side(row.ci_low, row.ci_high),
        )
        for row, section in zip(study.summary, sections, strict=True)
    ]
    return StudyContext(
        title=" vs ".join(r.path.name for r in study.runs),
        baseline=study.baseline.label,
        baseline_colour=colours[study.baseline.label],
        n_paired=study.n_paired,
        family=study.family.sentence if study.family else "",
        adjustment=study.family.adjustment if study.family else "",
        curse=study.curse.sentence if study.curse else None,
        holdout=study.holdout.sentence if study.holdout else None,
        gate=_gate(study, sections),
        warnings=study.warnings,
        summary=summary,
        charts=_charts(study, colours),
        sections=sections,
        runs=[pair_contexts[0].runs[0], *(c.runs[1] for c in pair_contexts)],
        colours=colours,
        footer=replace(
            sections[0].context,
            options=[OptionRow(flag, value) for flag, value in study.options.shown()],
        ),
    )
