"""``compare`` end to end: compute, build the context, render, write every file."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .analysis.gates import Requirements
from .analysis.metrics import Options
from .comparison.study import Study, run_study
from .inputs.readers import ReadOptions
from .output import check_outputs, new_run_id, write_all
from .progress import stage
from .reporters import json_report, junit_report, markdown_report
from .reporters.html.context import build_context
from .reporters.html.render import render, render_study
from .reporters.html.study_view import build_study_context


@dataclass(frozen=True)
class Outputs:
    html: Path
    json: Path
    markdown: Path | None = None
    junit: Path | None = None

    @property
    def paths(self) -> list[Path]:
        return [p for p in (self.html, self.json, self.markdown, self.junit) if p is not None]


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
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    run_id = new_run_id(
        epoch, *(run.sha256 for run in study.runs), repr((options, reading, labels, baseline))
    )
    stage("charts and the page")
    document = {"run_id": run_id, **json_report.build(study)}
    questions = json_report.per_question(study)
    downloads = {
        "per-question.csv.gz": json_report.to_csv(questions),
        "report-summary.json.gz": json.dumps(document, allow_nan=False),
    }
    contexts = [
        build_context(pair, epoch, downloads if i == 0 else {})
        for i, pair in enumerate(study.pairs)
    ]
    page = (
        render(contexts[0], run_id)
        if study.family is None and study.holdout is None
        else render_study(build_study_context(study, contexts), run_id)
    )
    stage("writing")
    files = {outputs.html: page, outputs.json: json_report.dumps(document, questions)}
    if outputs.markdown is not None:
        files[outputs.markdown] = markdown_report.render(study, outputs.html.name)
    if outputs.junit is not None:
        files[outputs.junit] = junit_report.render(study)
    write_all(files, inputs=inputs)
    return study
