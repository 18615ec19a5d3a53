"""The repeated-answers section: the variance decomposition as table rows and definitions."""

from __future__ import annotations

from dataclasses import dataclass

from ...analysis.metrics import MetricTables


@dataclass(frozen=True)
class SampleRow:
    """One metric and run (A, B or B - A) of the decomposition, formatted."""

    metric: str
    run: str
    n: int
    samples: str
    within: str
    between: str
    share: str
    to_halve: str


def _var(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def sample_rows(tables: MetricTables) -> list[SampleRow]:
    return [
        SampleRow(
            metric=tables.name(s.metric),
            run=s.run,
            n=s.n_questions,
            samples=f"{s.samples:.3g}",
            within=_var(s.within),
            between=_var(s.between),
            share="n/a" if s.within_share is None else f"{s.within_share:.0%}",
            to_halve="n/a" if s.samples_to_halve is None else str(s.samples_to_halve),
        )
        for s in tables.samples
    ]


def sample_definitions(tables: MetricTables) -> list[tuple[str, str]]:
    """The definitions of averaged scores and of the decomposition, when samples are logged."""
    if not tables.samples:
        return []
    return [
        (
            "Samples",
            "Each row of a run with a sample (or epoch) column is one answer to its question; "
            "every score is computed per answer as for a single one, then averaged over the "
            "question's samples before the runs are paired, so a 0/1 score (correct, hit, all) "
            "becomes the share of samples that scored 1 and is compared as a continuous score: "
            "the continuous test, no fixed / broken count (wins and losses count questions whose "
            "share went up or down). Sections about single answers (retrieval by answer, "
            "diagnosis, drill-downs, metric curve, label checks) read each question's first "
            "sample by its id (as numbers when every id of the run is a whole number without a "
            "leading zero, else as text), whatever the row order.",
        ),
        (
            "Within / between",
            "Model: score(q, s) = mu(q) + e(q, s), so the variance of a mean over n questions of "
            "m samples is between / n + within / (n m). Within: the mean over questions sampled "
            "at least twice of the variance of their samples, divided by m (the harmonic mean of "
            "samples per question): the noise of a per-question mean. Between: the variance of "
            "the per-question means less that noise (floored at 0). For B \u2212 A the noise is "
            "the sum of both runs' and the total is the variance of the per-question "
            "differences. Share: within / (within + between). Samples to halve it: m (2 \u2212 "
            "s) / (1 \u2212 s) for share s, rounded up; n/a when there is no noise or nothing "
            "but noise.",
        ),
    ]
