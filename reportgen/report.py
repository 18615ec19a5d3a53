"""``compare`` end to end: compute, build the context, render, write both files."""

from __future__ import annotations

import os
from pathlib import Path

from . import report_json
from .compare import run_comparison
from .context import build_context
from .metrics import Options
from .output import write_all
from .render import render
from .verdict import Verdict


def make_report(
    path_a: Path, path_b: Path, options: Options, html_path: Path, json_path: Path
) -> Verdict:
    result = run_comparison(path_a, path_b, options)
    json_text = report_json.dumps(report_json.build(result))
    downloads = {
        "per-question.csv.gz": report_json.per_question_csv(result),
        "report.json.gz": json_text,
    }
    context = build_context(result, os.environ.get("SOURCE_DATE_EPOCH"), downloads)
    write_all({html_path: render(context), json_path: json_text}, inputs=[path_a, path_b])
    return result.verdict
