"""The JSON of every number in the report, in the shape of ``report.schema.json``.

schema_version 3: the runs and the comparisons (one per candidate against the baseline) are
lists; the p of a candidate adjusted over the candidates is ``p_adjusted`` (Bonferroni's);
CHANGELOG.md says how a reader of versions 1 and 2 migrates.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import asdict, fields
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyarrow import csv

from .. import __version__
from ..analysis.gates import GateResult
from ..analysis.metrics import MetricTables
from ..analysis.slices import SliceResult
from ..analysis.stats import MetricComparison
from ..comparison.compare import Comparison
from ..comparison.study import Study
from ..diagnosis.diagnose import Diagnosis
from ..diagnosis.stages import Agreement
from ..inputs.engine import connect
from ..provenance import library_versions
from ..resources import query_text
from .report import Report, study_warnings

SCHEMA_VERSION = 3
SCHEMA_FILE = "report.schema.json"  # the JSON Schema of the document, shipped in the package
RUN_ID_KEY = b"ragreport-run-id"  # the Parquet metadata key naming the run that wrote the file


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) that every document of SCHEMA_VERSION satisfies."""
    return json.loads(resources.files(__package__).joinpath(SCHEMA_FILE).read_text("utf-8"))


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become null, numpy scalars become Python numbers."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def comparison_fields(c: MetricComparison) -> dict[str, Any]:
    return {k: v for k, v in asdict(c).items() if k != "metric"}


def slices_by_value(per_metric: dict[str, list[SliceResult]]) -> dict[str, Any]:
    """slice value -> metric -> ``metrics`` fields plus p_holm, p_bound_holm, regression, finding,
    small."""
    out: dict[str, dict[str, Any]] = {}
    for metric, rows in per_metric.items():
        for r in rows:
            out.setdefault(r.value, {})[metric] = {
                **comparison_fields(r.comparison),
                "p_holm": r.p_holm,
                "p_bound_holm": r.p_bound_holm,
                "regression": r.regression,
                "finding": r.finding,
                "small": r.small,
            }
    return out


def _pair_questions(result: Comparison) -> pd.DataFrame:
    """A pair's rows: what every number of the report is computed from, each other slice
    column as ``slice:<column>`` and the cluster column as ``cluster:<column>`` (the value
    compare read; the prefix keeps a log's column from taking the name of one of the rows' own,
    candidate or correct_a), the costs as the cost table compares them."""
    tables = result.tables
    columns = {"question_id": "question_id", "slice": "slice"}
    for base in tables.metrics:
        for run in ("a", "b"):
            columns[f"{base}_{run}"] = f"{tables.name(base)}_{run}"
    frame = tables.paired[list(columns)].rename(columns=columns)
    for column, values in result.slice_values.items():
        if column != "slice":  # the column slice is the rows' own
            frame[f"slice:{column}"] = values.to_numpy()
    if result.options.cluster is not None and result.cluster_values is not None:
        frame[f"cluster:{result.options.cluster}"] = result.cluster_values.to_numpy()
    for extra in (result.diagnosis.per_question, result.diagnosis.costs):
        if extra is not None:  # a cost compared as a metric is that metric's column already
            kept = [c for c in extra.columns if c == "question_id" or c not in frame.columns]
            frame = frame.merge(extra[kept], on="question_id", how="left")
    return frame


def per_question(study: Study) -> pd.DataFrame:
    """One row per candidate and paired question: the candidate's label, the question's slice,
    every metric in the baseline (_a) and the candidate (_b), its failure classes; with
    --holdout, whether the question is held out (the held-out difference's questions)."""
    frame = pd.concat(
        [_pair_questions(pair).assign(candidate=pair.runs["b"].label) for pair in study.pairs],
        ignore_index=True,
    ).pipe(lambda f: f[["candidate", *f.columns.drop("candidate")]])  # a later candidate's
    # own columns (one the first does not log) come after "candidate" in the concatenation
    if study.holdout is not None:
        frame["held_out"] = frame["question_id"].isin(study.holdout.question_ids)
    return frame


# A text cell a spreadsheet would read as a formula (OWASP, "CSV Injection")
FORMULA = r"^[=+\-@\t\r]"


def to_csv(frame: pd.DataFrame) -> str:
    """The table as CSV (Arrow's writer: an order of magnitude faster than pandas'). A text
    cell that starts like a formula (= + - @, a tab or a carriage return: a question id such as
    ``=HYPERLINK(...)``) gets a leading ' so that a spreadsheet shows it as text instead of
    running it; the JSON and the Parquet file keep every value as logged."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    for i, field in enumerate(table.schema):
        kind = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            cells = table.column(i).cast(kind)
            quoted = pc.if_else(
                pc.match_substring_regex(cells, FORMULA),
                pc.utf8_replace_slice(cells, 0, 0, "'"),
                cells,
            )
            table = table.set_column(i, pa.field(field.name, kind), quoted)
    sink = io.BytesIO()
    csv.write_csv(table, sink, csv.WriteOptions(quoting_style="needed"))
    return sink.getvalue().decode("utf-8")


def to_parquet(frame: pd.DataFrame, run_id: str) -> bytes:
    """The table as Parquet (zstd), its metadata naming the run that wrote it, like the JSON's
    ``run_id``, so a per-question file and a JSON from different runs can be told apart."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.replace_schema_metadata({**table.schema.metadata, RUN_ID_KEY: run_id.encode()})
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


def gate_fields(gate: GateResult | None) -> dict[str, Any] | None:
    """The rules, the policy for inconclusive ones, the level of each bound, every result."""
    if gate is None:
        return None
    return {
        "outcome": gate.outcome,
        "rules": list(gate.rules),
        "inconclusive": gate.inconclusive,
        "confidence": gate.confidence,
        "one_sided_level": gate.one_sided_level,
        "passing_candidates": gate.passing_candidates(),
        "results": [asdict(r) for r in gate.results],
    }


def diagnosis_fields(d: Diagnosis) -> dict[str, Any]:
    """The diagnosis of one comparison: its links, cells, classes, next experiments, costs."""
    return _clean(
        {
            "stages": [asdict(s) for s in d.stages],
            "missing": [asdict(m) for m in d.missing],
            "cells": d.cells_correct,
            "cells_supported": d.cells,
            "transitions": d.transitions,
            "transition_moves": list(d.moves),
            "failure_classes": d.failure_classes,
            "dominant": {r: dominant and asdict(dominant) for r, dominant in d.dominant.items()},
            "next_experiment": {
                r: e and {"text": e.text, **asdict(e)} for r, e in d.next_experiment.items()
            },
            "judge_agreement": {k: _agreement(v) for k, v in d.judge_agreement.items()},
            "cost": {
                k: asdict(v.comparison) | {"relative_pct": v.relative_pct}
                for k, v in d.cost.items()
            },
            "summary": d.summary,
            "exemplars": d.exemplars,
            "broken": d.broken,
        }
    )


def _agreement(agreement: Agreement) -> dict[str, Any]:
    """The pooled figures, and each run's without the keys that only pooling has."""
    out = asdict(agreement)
    out["by_run"] = {
        run: {k: v for k, v in own.items() if k not in ("by_run", "accuracy_gap")}
        for run, own in out["by_run"].items()
    }
    return out


def samples_fields(tables: MetricTables) -> dict[str, Any] | None:
    """metric -> run (A, B, B - A) -> the Spread's numbers; None when no question has several
    samples."""
    if not tables.samples:
        return None
    out: dict[str, dict[str, Any]] = {}
    for s in tables.samples:
        fields = asdict(s)
        del fields["metric"], fields["run"]
        out.setdefault(tables.name(s.metric), {})[s.run] = fields
    return out


def _pair(result: Comparison) -> dict[str, Any]:
    """One candidate against the baseline: everything a two-run report said of B against A."""
    return {
        "baseline": result.runs["a"].label,
        "candidate": result.runs["b"].label,
        "n_paired": len(result.paired),
        "confidence": result.options.confidence,
        "headline": result.headline,
        "verdict": asdict(result.verdict),
        "metrics": {name: comparison_fields(c) for name, c in result.comparisons.items()},
        "metric_curve": (
            result.tables.curve.to_dict(orient="records")
            if result.tables.curve is not None
            else None
        ),
        **diagnosis_fields(result.diagnosis),
        "supported": asdict(result.supported),
        "slices": {
            column: slices_by_value(per_metric) for column, per_metric in result.slices.items()
        },
        "audit": {
            "n_paired": result.audit.n_paired,
            "exploratory": result.audit.exploratory,
            "label_changes": [
                {"question_id": q, "changed": what} for q, what in result.audit.label_changes
            ],
            "labels_compared": list(result.audit.labels_compared),
            "coverage": {c: dict(counts) for c, counts in result.audit.coverage.items()},
            "unanswerable": result.audit.unanswerable,
            "unanswerable_share": result.audit.unanswerable_share,
            "smells": {s.kind: asdict(s) for s in result.audit.smells},
            "unjudged": result.audit.unjudged and asdict(result.audit.unjudged),
        },
        "fairness": {c.name: asdict(c) for c in result.fairness},
        "power": asdict(result.power),
        "samples": samples_fields(result.tables),
        "warnings": result.warnings,
        "gate": gate_fields(result.gate),
        "scores": {
            m.name: {
                "source": m.source,
                "binary": result.tables.binary(m.name),
                "higher_is_better": m.higher_is_better,
            }
            for m in result.tables.scores
        },
    }


def _holdout(study: Study) -> dict[str, Any] | None:
    """--holdout's fields; its questions are the per-question rows' ``held_out``."""
    h = study.holdout
    if h is None:
        return None
    kept = {f.name: getattr(h, f.name) for f in fields(h) if f.name != "question_ids"}
    return {**kept, "held_out": comparison_fields(h.held_out), "metric": h.held_out.metric}


def build(study: Study) -> dict[str, Any]:
    o = study.options
    tables = study.pairs[0].tables
    return _clean(
        {
            "schema_version": SCHEMA_VERSION,
            "tool": {
                "name": "ragreport",
                "version": __version__,
                "libraries": library_versions(),
            },
            "params": {**o.to_json(), "k_source": tables.k_source, "k_named": tables.named_cutoff},
            "runs": [
                {
                    "label": run.label,
                    "role": "baseline" if i == 0 else "candidate",
                    "path": str(run.path),
                    "sha256": run.sha256,
                    "size_bytes": run.size_bytes,
                    "n_questions": n_questions,
                    "read": {**run.read.to_json(), "qrels_sha256": run.qrels_sha256},
                    "scored": run.scored is not None and not run.scored.scored_here,
                    "labels_rel_level": run.rel_level,
                }
                for i, (run, n_questions) in enumerate(
                    zip(study.runs, study.n_questions, strict=True)
                )
            ],
            "baseline": study.baseline.label,
            "n_paired": study.n_paired,
            "missing": study.missing,
            "family": asdict(study.family) if study.family else None,
            "summary": [asdict(row) for row in study.summary],
            "run_means": [asdict(m) for m in study.run_means],
            "matrix": [
                {**asdict(c), "differs": c.differs, "borderline": c.borderline}
                for c in study.matrix
            ],
            "winners_curse": asdict(study.curse) if study.curse else None,
            "holdout": _holdout(study),
            "comparisons": [_pair(pair) for pair in study.pairs],
            "warnings": study_warnings(study),
            "gate": gate_fields(study.gate),
        }
    )


def document(study: Study, run_id: str, sidecar: Path | None, rows: int) -> dict[str, Any]:
    """The document of every number but the per-question rows, headed by the run's id; with
    ``sidecar``, where those ``rows`` are instead."""
    return with_file({"run_id": run_id, **build(study)}, sidecar, rows)


def with_file(document: dict[str, Any], sidecar: Path | None, rows: int) -> dict[str, Any]:
    """``document`` naming the Parquet file its ``rows`` are in (``sidecar``; None: none)."""
    if sidecar is None:
        return document
    return {**document, "per_question_file": {"path": str(sidecar), "rows": rows}}


def json_bytes(report: Report) -> int:
    """The bytes of the report's JSON with its per-question rows in it: the document's exactly,
    the rows' as row_bytes estimates them."""
    return len(dumps(report.document, None).encode()) + row_bytes(report.per_question)


def render(report: Report) -> str:
    return dumps(report.document, report.per_question if report.sidecar is None else None)


def dumps(document: dict[str, Any], per_question: pd.DataFrame | None) -> str:
    """The JSON file: one top-level key a line and one question a line under ``per_question``,
    so that it reads in an editor and writes fast (the C encoders, no indentation).

    ``per_question`` None: the rows are in the Parquet file the document's
    ``per_question_file`` names, and ``per_question`` is an empty list."""
    lines = [f"{json.dumps(k)}: {json.dumps(v, allow_nan=False)}" for k, v in document.items()]
    head = "{\n" + "".join(f"{line},\n" for line in lines) + '"per_question": ['
    rows = [] if per_question is None else json_rows(per_question)
    if not rows:
        return head + "]\n}\n"
    rows[0] = f"{head}\n{rows[0]}"  # so that the one join below is the only copy of the rows
    rows[-1] += "\n]\n}\n"
    return ",\n".join(rows)


ROWS_MEASURED = 1_000  # rows json_rows writes to estimate the size of all (row_bytes)


def row_bytes(frame: pd.DataFrame) -> int:
    """The bytes the rows of ``frame`` take in the JSON (json_rows, one a line), estimated
    from up to ROWS_MEASURED of them evenly spaced: writing them all to find out cost as much
    as writing the JSON, which a file beside it then replaces."""
    if frame.empty:
        return 0
    sample = frame.iloc[np.linspace(0, len(frame) - 1, min(len(frame), ROWS_MEASURED)).astype(int)]
    written = sum(len(row.encode()) + 2 for row in json_rows(sample))  # and its ",\n"
    return math.ceil(written * len(frame) / len(sample))


def json_rows(frame: pd.DataFrame) -> list[str]:
    """Each row of ``frame`` as a JSON object; a number that is not finite is null, as
    everywhere in the file.

    DuckDB writes them (about four times as fast as pandas' lines at 100k questions, and each
    double to its shortest exact text rather than 15 digits)."""
    numbers = frame.select_dtypes("float")
    if np.isinf(numbers.to_numpy(dtype=float, na_value=np.nan)).any():
        frame = frame.assign(**numbers.replace([np.inf, -np.inf], np.nan))
    with connect() as con:
        con.register("per_question", pa.Table.from_pandas(frame, preserve_index=False))
        return con.sql(query_text("json_lines")).to_arrow_table().column("line").to_pylist()
