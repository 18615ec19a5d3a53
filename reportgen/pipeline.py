"""``compare`` end to end: compute, let each requested reporter render its file, write them all."""

from __future__ import annotations

import re
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .analysis.gates import Requirements
from .analysis.metrics import Options
from .comparison.study import Study, run_study
from .epoch import source_date_epoch
from .inputs.readers import ReadOptions, mapping_files
from .output import (
    MAX_JSON_BYTES,
    SIDECAR_SUFFIX,
    check_outputs,
    check_parquet_name,
    new_run_id,
    write_all,
)
from .progress import stage
from .reporters import (
    html_report,
    json_report,
    junit_report,
    markdown_report,
    per_question_report,
)
from .reporters.html import svg_process
from .reporters.report import Report, Reporter


@dataclass(frozen=True)
class Outputs:
    html: Path
    json: Path
    markdown: Path | None = None
    junit: Path | None = None
    per_question: Path | None = None  # None: in the JSON, or beside it past MAX_JSON_BYTES
    json_given: bool = True  # False: ``json`` is the default beside the report (no --json)

    def requested(self, sidecar: Path | None = None) -> list[tuple[Path, Reporter]]:
        """Each path to write, with the reporter of its format; ``sidecar``: where the
        per-question rows go when they are not in the JSON."""
        reporters = (
            (self.html, html_report.render),
            (self.json, json_report.render),
            (self.markdown, markdown_report.render),
            (self.junit, junit_report.render),
            (sidecar or self.per_question, per_question_report.render),
        )
        return [(path, reporter) for path, reporter in reporters if path is not None]

    @property
    def paths(self) -> list[Path]:
        """The paths asked for (a sidecar chosen by size is not among them)."""
        return [path for path, _ in self.requested()]

    def written(self, sidecar: Path | None) -> list[Path]:
        """Every file a report writes whose per-question rows go to ``sidecar`` (None: into
        the JSON; Outputs.sidecar)."""
        return [path for path, _ in self.requested(sidecar)]

    def replaced_run_id(self) -> str | None:
        """The run id of the report JSON at ``json`` that this report is to replace (its first
        key, as json_report writes it), read before it is written; None where there is none
        or where ``json`` is no regular file (/dev/stdout on a pipe would wait to be written)."""
        try:
            if not self.json.is_file():
                return None
            with self.json.open("rb") as file:
                head = file.read(256)
        except OSError:
            return None
        match = re.match(rb'\{\s*"run_id":\s*"([^"]+)"', head)
        return match[1].decode() if match else None

    def stale_sidecar(self, sidecar: Path | None, replaced: str | None) -> Path | None:
        """The per-question file of the report this one replaced (``replaced``: its run id),
        beside the JSON, where this report (its rows in ``sidecar``) writes none there: no JSON
        names it any more, and the folder held another run's rows. None where the file there is
        another report's (a --per-question path another JSON names) or one no report wrote."""
        beside = self.json.with_suffix(SIDECAR_SUFFIX)
        if replaced is None or beside in self.written(sidecar) or not beside.is_file():
            return None
        try:
            metadata = pq.read_schema(beside).metadata or {}
        except (OSError, pa.ArrowException):
            return None
        return beside if metadata.get(json_report.RUN_ID_KEY) == replaced.encode() else None

    def sidecar(self, report: Report) -> Path | None:
        """Where the per-question rows of ``report`` (built with them in the JSON) go instead:
        the path asked for, else one beside the JSON when the JSON holding them would pass
        MAX_JSON_BYTES (json_report.json_bytes); None: they stay in the JSON."""
        if self.per_question is None and json_report.json_bytes(report) > MAX_JSON_BYTES:
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
    read: Mapping[Path, str] | None = None,
) -> tuple[Study, Path | None]:
    """Compare the baseline (first, or --baseline) with every other log and write each output.
    ``read``: the other files the command reads (``files_read``), by option. Returns the study
    and where its per-question rows went (None: into the JSON; Outputs.sidecar)."""
    inputs = list(paths)
    read = read or {}
    defaults = {} if outputs.json_given else {outputs.json: "--json"}
    check_outputs(outputs.paths, inputs, defaults, read)  # before the long part
    if outputs.per_question is not None:
        check_parquet_name(
            outputs.per_question, "--per-question", "the per-question rows are written as Parquet"
        )
    with svg_process.started():  # its start-up runs beside the statistics
        study = run_study(
            paths,
            options,
            requirements,
            reading,
            labels,
            baseline,
            html_report.preload,
            html_report.draw_ahead,
        )
        run_id = study_run_id(study, repr((options, reading, labels, baseline)))
        stage("charts and the page")
        report = build_report(study, run_id, outputs.html.name)
        sidecar = outputs.sidecar(report)
        report = placed(report, sidecar)
        files = rendered(report, outputs.requested(sidecar))
    stage("writing")
    write_all(files, inputs, read)
    return study, sidecar


def files_read(settings: Mapping[str, Any], reading: tuple[ReadOptions, ...]) -> dict[Path, str]:
    """Every file ``compare`` reads besides the run logs (--qrels, --passages, a --map file,
    --gate), each with its option, from a parse's ``settings``: no output may overwrite one."""
    read = {path: option for r in reading for path, option in r.files().items()}
    read.update(mapping_files(settings["mapping"]))
    read.update(dict.fromkeys(settings["gate_file"], "--gate"))
    return read


def rendered(report: Report, requested: list[tuple[Path, Reporter]]) -> dict[Path, str | bytes]:
    """Each file's content, in the order asked. The page renders here while the other files
    render on a thread: the page waits for its SVGs from the child, and the JSON's rows and the
    Parquet file are made by DuckDB and Arrow, which release the GIL."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        beside = {
            path: pool.submit(render, report)
            for path, render in requested
            if render is not html_report.render
        }
        return {
            path: beside[path].result() if path in beside else render(report)
            for path, render in requested
        }


def study_run_id(study: Study, settings: str) -> str:
    """A fresh id, or with SOURCE_DATE_EPOCH one derived from the inputs and ``settings``."""
    return new_run_id(source_date_epoch(), *(run.sha256 for run in study.runs), settings)


def build_report(
    study: Study,
    run_id: str,
    html_name: str,
    sidecar: Path | None = None,
    epoch: str | None = None,
) -> Report:
    """What every reporter is fed; the JSON document is built here, once. ``epoch``: the time
    the page gives (seconds since 1970), else SOURCE_DATE_EPOCH's or now."""
    questions = json_report.per_question(study)
    return Report(
        study=study,
        run_id=run_id,
        source_date_epoch=epoch or source_date_epoch(),
        html_name=html_name,
        document=json_report.document(study, run_id, sidecar, len(questions)),
        per_question=questions,
        sidecar=sidecar,
    )


def placed(report: Report, sidecar: Path | None) -> Report:
    """``report`` with its per-question rows in the Parquet file ``sidecar`` (None: as it is,
    the rows in the JSON)."""
    if sidecar is None:
        return report
    document = json_report.with_file(report.document, sidecar, len(report.per_question))
    return replace(report, document=document, sidecar=sidecar)


def page_run_id(page: Path) -> str | None:
    """The run id a report page at ``page`` records (its ragreport-run-id meta, in its head),
    read before the page is replaced; None where there is none."""
    try:
        with page.open("rb") as file:
            head = file.read(4096)
    except OSError:
        return None
    match = re.search(rb'<meta name="ragreport-run-id" content="([^"]+)">', head)
    return match[1].decode() if match else None
