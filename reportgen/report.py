"""``compare`` end to end: compute, build the context, render, write both files."""

from __future__ import annotations

import json
import os
from pathlib import Path

from . import report_json
from .compare import run_comparison
from .context import build_context
from .metrics import Options
from .output import check_outputs, new_run_id, write_all
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
    inputs = [path_a, path_b, *(r.qrels for r in reading if r.qrels)]
    check_outputs([html_path, json_path], inputs=inputs)  # before the long part
    result = run_comparison(path_a, path_b, options, reading)
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
    write_all(
        {html_path: render(context, run_id), json_path: report_json.dumps(document, questions)},
        inputs=inputs,
    )
    return result.verdict
