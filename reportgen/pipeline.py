"""``compare`` end to end: compute, build the context, render, write every file."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from .analysis.gates import Requirements
from .analysis.metrics import Options
from .comparison.study import Study, run_study
from .inputs.readers import ReadOptions
from .output import check_outputs, new_run_id, write_all
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
    study = run_study(list(paths), options, requirements, reading, labels, baseline)
    run_id = study_run_id(study, repr((options, reading, labels, baseline)))
    texts = Texts(study, run_id, outputs.html.name)
    files = {outputs.html: texts.html(), outputs.json: texts.json()}
    if outputs.markdown is not None:
        files[outputs.markdown] = texts.markdown()
    if outputs.junit is not None:
        files[outputs.junit] = texts.junit()
    write_all(files, inputs=inputs)
    return study


def study_run_id(study: Study, settings: str) -> str:
    """A fresh id, or with SOURCE_DATE_EPOCH one derived from the inputs and ``settings``."""
    return new_run_id(
        os.environ.get("SOURCE_DATE_EPOCH"), *(run.sha256 for run in study.runs), settings
    )


@dataclass(frozen=True)
class Texts:
    """Every output of one study, each rendered when asked for, all stamped with one run_id."""

    study: Study
    run_id: str
    html_name: str  # the page's file name, which the Markdown links to

    @cached_property
    def _document(self) -> dict[str, Any]:
        return {"run_id": self.run_id, **json_report.build(self.study)}

    @cached_property
    def _questions(self) -> pd.DataFrame:
        return json_report.per_question(self.study)

    def json(self) -> str:
        return json_report.dumps(self._document, self._questions)

    def html(self) -> str:
        epoch = os.environ.get("SOURCE_DATE_EPOCH")
        downloads = {
            "per-question.csv.gz": json_report.to_csv(self._questions),
            "report-summary.json.gz": json.dumps(self._document, allow_nan=False),
        }
        contexts = [
            build_context(pair, epoch, downloads if i == 0 else {})
            for i, pair in enumerate(self.study.pairs)
        ]
        if self.study.family is None and self.study.holdout is None:
            return render(contexts[0], self.run_id)
        return render_study(build_study_context(self.study, contexts), self.run_id)

    def markdown(self) -> str:
        return markdown_report.render(self.study, self.html_name)

    def junit(self) -> str:
        return junit_report.render(self.study)
