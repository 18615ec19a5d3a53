"""What every reporter is fed: one comparison's results and the facts of this run of the tool.

The reporters (``html_report``, ``json_report``, ``markdown_report``, ``junit_report``,
``per_question_report``) are siblings: each has ``render(report)`` (text, or bytes for the
Parquet file of per-question rows) and computes no number of its own. The JSON document is built
once, before any reporter runs (``json_report.document``): the HTML offers it for download and
the JSON file writes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from ..comparison.compare import Comparison
from ..comparison.study import Study
from ..diagnosis.diagnose import metric_digits


@dataclass(frozen=True)
class Report:
    study: Study
    run_id: str  # recorded in every output, so files of different runs can be told apart
    source_date_epoch: str | None  # the generation time for reproducible builds; None: now
    html_name: str  # the HTML's file name, which the summaries point the reader to
    document: dict[str, Any]  # the JSON of every number but the per-question rows
    per_question: pd.DataFrame  # one row per candidate and paired question
    sidecar: Path | None = None  # where those rows go when not in the JSON (Parquet)


def study_warnings(study: Study) -> list[str]:
    """The page's "Read first" caveats: the study's, then each comparison's (named by
    candidate when there are several, unless they name their run already). One every
    comparison gives (how the baseline was read, the tool's score columns) is given once, for
    all candidates."""
    if study.family is None:
        return study.warnings + study.pairs[0].warnings

    runs = tuple(f"Run {run.label}: " for run in study.runs)

    def named(label: str, warning: str) -> str:
        return warning if warning.startswith(runs) else f"{label}: {warning}"

    shared = set.intersection(*(set(p.warnings) for p in study.pairs))
    every = [named("all candidates", w) for w in study.pairs[0].warnings if w in shared]
    own = [named(p.runs["b"].label, w) for p in study.pairs for w in p.warnings if w not in shared]
    return study.warnings + every + own


class Reporter(Protocol):
    """One output format: the text of its file."""

    def __call__(self, report: Report) -> str | bytes: ...


def row_digits(result: Comparison, name: str) -> int:
    """Decimals of every row of a metric (its overall row and its slices'): those of its
    overall A mean, so a column of slice rows does not read +5 under +5.0 where one slice's
    latencies are three times another's."""
    overall = result.comparisons.get(name) or result.diagnosis.cost[name].comparison
    return metric_digits(name, overall.a)
