"""``compare`` end to end: compute, build the context, render, write every file."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from . import junit_report, markdown_report, report_json
from .compare import Comparison, run_comparison
from .context import build_context
from .gates import Requirements
from .metrics import Options
from .output import check_outputs, new_run_id, write_all
from .readers import ReadOptions
from .render import render


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
    path_a: Path,
    path_b: Path,
    options: Options,
    outputs: Outputs,
    requirements: Requirements | None = None,
    reading: tuple[ReadOptions, ReadOptions] = (ReadOptions(), ReadOptions()),
) -> Comparison:
    inputs = [path_a, path_b, *(r.qrels for r in reading if r.qrels)]
    check_outputs(outputs.paths, inputs=inputs)  # before the long part
    result = run_comparison(path_a, path_b, options, requirements, reading)
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    run_id = new_run_id(
        epoch, result.runs["a"].sha256, result.runs["b"].sha256, repr((options, reading))
    )
    document = {"run_id": run_id, **report_json.build(result)}
    questions = report_json.per_question(result)
    downloads = {
        "per-question.csv.gz": report_json.to_csv(questions),
        "report-summary.json.gz": json.dumps(document, allow_nan=False),
    }
    context = build_context(result, epoch, downloads)
    files = {
        outputs.html: render(context, run_id),
        outputs.json: report_json.dumps(document, questions),
    }
    if outputs.markdown is not None:
        files[outputs.markdown] = markdown_report.render(result, outputs.html.name)
    if outputs.junit is not None:
        files[outputs.junit] = junit_report.render(result)
    write_all(files, inputs=inputs)
    return result
