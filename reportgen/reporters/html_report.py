"""The HTML reporter: the two-run page, or the page of a study (one baseline, several
candidates), with the per-question table and the JSON offered for download."""

from __future__ import annotations

import json

from . import json_report
from .html.context import build_context
from .html.render import render as render_pair
from .html.render import render_study
from .html.study_view import build_study_context
from .report import Report


def render(report: Report) -> str:
    study = report.study
    downloads = {
        "per-question.csv.gz": json_report.to_csv(report.per_question),
        "report-summary.json.gz": json.dumps(report.document, allow_nan=False),
    }
    contexts = [
        build_context(pair, report.source_date_epoch, downloads if i == 0 else {})
        for i, pair in enumerate(study.pairs)
    ]
    if study.family is None and study.holdout is None:
        return render_pair(contexts[0], report.run_id)
    return render_study(build_study_context(study, contexts), report.run_id)
