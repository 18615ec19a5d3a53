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
from .output import MAX_JSON_ROWS, SIDECAR_SUFFIX, check_outputs, new_run_id, write_all
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
    per_question: Path | None = None  # None: in the JSON, or beside it past MAX_JSON_ROWS

    @property
    def paths(self) -> list[Path]:
        named = (self.html, self.json, self.markdown, self.junit, self.per_question)
        return [p for p in named if p is not None]

    def written(self, study: Study) -> list[Path]:
        """Every file a report of ``study`` writes."""
        sidecar = self.sidecar(sum(len(pair.paired) for pair in study.pairs))
        return [*self.paths, *([sidecar] if sidecar not in (None, self.per_question) else [])]

    def sidecar(self, rows: int) -> Path | None:
        """Where the per-question rows go when not in the JSON: the path asked for, else one
        beside the JSON when there are more than the JSON holds."""
        if self.per_question is None and rows > MAX_JSON_ROWS:
            return self.json.with_suffix(SIDECAR_SUFFIX)
        return self.per_question


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
    sidecar = outputs.sidecar(len(questions))
    if sidecar is not None:
        document["per_question_file"] = {"path": str(sidecar), "rows": len(questions)}
    downloads = {
        **({"per-question.csv.gz": json_report.to_csv(questions)} if sidecar is None else {}),
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
    files: dict[Path, str | bytes] = {
        outputs.html: page,
        outputs.json: json_report.dumps(document, questions if sidecar is None else None),
    }
    if sidecar is not None:
        files[sidecar] = json_report.to_parquet(questions, run_id)
    if outputs.markdown is not None:
        files[outputs.markdown] = markdown_report.render(study, outputs.html.name)
    if outputs.junit is not None:
        files[outputs.junit] = junit_report.render(study)
    write_all(files, inputs=inputs)
    return study
