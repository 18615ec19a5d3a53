"""``compare`` end to end: compute, let each requested reporter render its file, write them all."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .analysis.gates import Requirements
from .analysis.metrics import Options
from .comparison.study import Study, run_study
from .inputs.readers import ReadOptions
from .output import check_outputs, new_run_id, write_all
from .reporters import html_report, json_report, junit_report, markdown_report
from .reporters.report import Report, Reporter


@dataclass(frozen=True)
class Outputs:
    html: Path
    json: Path
    markdown: Path | None = None
    junit: Path | None = None

    def requested(self) -> list[tuple[Path, Reporter]]:
        """Each path to write, with the reporter of its format."""
        reporters = (
            (self.html, html_report.render),
            (self.json, json_report.render),
            (self.markdown, markdown_report.render),
            (self.junit, junit_report.render),
        )
        return [(path, reporter) for path, reporter in reporters if path is not None]

    @property
    def paths(self) -> list[Path]:
        return [path for path, _ in self.requested()]


def make_report(
    paths: list[Path],
    options: Options,
    outputs: Outputs,
    requirements: Requirements | None = None,
    reading: tuple[ReadOptions, ...] | None = None,
    labels: tuple[str, ...] = (),
    baseline: str | None = None,
) -> Study:
    """Compare the baseline (first, or --baseline) with every other log and write each output."""
    inputs = [*paths, *(r.qrels for r in reading or () if r.qrels)]
    check_outputs(outputs.paths, inputs=inputs)  # before the long part
    study = run_study(paths, options, requirements, reading, labels, baseline)
    run_id = study_run_id(study, repr((options, reading, labels, baseline)))
    report = build_report(study, run_id, outputs.html.name)
    write_all({path: render(report) for path, render in outputs.requested()}, inputs=inputs)
    return study


def study_run_id(study: Study, settings: str) -> str:
    """A fresh id, or with SOURCE_DATE_EPOCH one derived from the inputs and ``settings``."""
    return new_run_id(
        os.environ.get("SOURCE_DATE_EPOCH"), *(run.sha256 for run in study.runs), settings
    )


def build_report(study: Study, run_id: str, html_name: str) -> Report:
    """What every reporter is fed; the JSON document is built here, once."""
    return Report(
        study=study,
        run_id=run_id,
        source_date_epoch=os.environ.get("SOURCE_DATE_EPOCH"),
        html_name=html_name,
        document=json_report.document(study, run_id),
        per_question=json_report.per_question(study),
    )
