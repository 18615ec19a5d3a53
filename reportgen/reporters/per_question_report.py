"""The per-question rows as Parquet, for reports whose rows do not go into the JSON (asked for
with ``--per-question``, or past MAX_JSON_ROWS rows)."""

from __future__ import annotations

from . import json_report
from .report import Report


def render(report: Report) -> bytes:
    return json_report.to_parquet(report.per_question, report.run_id)
