"""``compare`` end to end: compute, build the context, render, write both files."""

from __future__ import annotations

import json
import os
from pathlib import Path

from . import report_json
from .compare import run_comparison
from .context import build_context
from .metrics import Options
from .output import write_all
from .readers import ReadOptions
from .render import render
from .verdict import Verdict


def make_report(
    path_a: Path,
    path_b: Path,
    options: Options,
    html_path: Path,
    json_path: Path,
    reading: tuple[ReadOptions, ReadOptions] = (ReadOptions(), ReadOptions()),
) -> Verdict:
    result = run_comparison(path_a, path_b, options, reading)
    document = report_json.build(result)
    questions = report_json.per_question(result)
    downloads = {
        "per-question.csv.gz": report_json.to_csv(questions),
        "report-summary.json.gz": json.dumps(document, allow_nan=False),
    }
    context = build_context(result, os.environ.get("SOURCE_DATE_EPOCH"), downloads)
    write_all(
        {html_path: render(context), json_path: report_json.dumps(document, questions)},
        inputs=[path_a, path_b, *(r.qrels for r in reading if r.qrels)],
    )
    return result.verdict
