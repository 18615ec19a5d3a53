"""``compare`` end to end: compute, build the context, render, write every file."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from . import junit_report, markdown_report, report_json
from .compare import Comparison, run_comparison
from .context import build_context
from .errors import OutputError
from .gates import Requirements
from .metrics import Options
from .output import write_all
from .render import render


@dataclass(frozen=True)
class Outputs:
    html: Path
    json: Path
    markdown: Path | None = None
    junit: Path | None = None

    def __post_init__(self) -> None:
        if len(set(self.paths)) < len(self.paths):
            raise OutputError(f"{self.html}: two outputs share one path; give each its own")

    @property
    def paths(self) -> list[Path]:
        return [p for p in (self.html, self.json, self.markdown, self.junit) if p is not None]


def make_report(
    path_a: Path,
    path_b: Path,
    options: Options,
    outputs: Outputs,
    requirements: Requirements | None = None,
) -> Comparison:
    result = run_comparison(path_a, path_b, options, requirements)
    document = report_json.build(result)
    questions = report_json.per_question(result)
    downloads = {
        "per-question.csv.gz": report_json.to_csv(questions),
        "report-summary.json.gz": json.dumps(document, allow_nan=False),
    }
    context = build_context(result, os.environ.get("SOURCE_DATE_EPOCH"), downloads)
    files = {
        outputs.html: render(context),
        outputs.json: report_json.dumps(document, questions),
    }
    if outputs.markdown is not None:
        files[outputs.markdown] = markdown_report.render(result, outputs.html.name)
    if outputs.junit is not None:
        files[outputs.junit] = junit_report.render(result)
    write_all(files, inputs=[path_a, path_b])
    return result
