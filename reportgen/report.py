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
    document = report_json.build(result)
    html = render(build_context(result, os.environ.get("SOURCE_DATE_EPOCH")))
    write_all({html_path: html, json_path: report_json.dumps(document)}, inputs=[path_a, path_b])
    return result.verdict
