"""``verify``: check an archived report against its logs by re-running it with its options.

The logs' sha256 (and their qrels files') must match the report's; the comparison is then
re-run with the options the report records (``params``, and the gate's rules) and every number
of the new JSON is compared with the archived one, floats to RELATIVE_TOLERANCE. ``tool``
(versions) and the logs' paths are not compared: a report may be verified on another machine,
from another folder. Versions that differ from the installed ones are named in a warning, since
the last digits of a number may then differ.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import click
import pyarrow as pa
import pyarrow.parquet as pq

from . import __version__
from .analysis.gates import Requirements, RuleError, parse_rule
from .analysis.metrics import Options
from .cli import compare as compare_command
from .comparison.study import run_study
from .errors import InputError
from .formatting import fmt_count
from .inputs.load import open_log, sha256_of, table_path
from .inputs.readers import ReadOptions
from .provenance import library_versions
from .reporters import json_report

RELATIVE_TOLERANCE = 1e-9  # the last bits of a float may differ across machines
_NOT_COMPARED = ("tool", "run_id")  # versions, and the id of each run, differ by design


@dataclass(frozen=True)
class Verification:
    checked: int  # numbers compared
    difference: str | None  # the first differing value, by JSON path; None when all match
    warnings: tuple[str, ...] = ()  # versions that differ from the report's


def version_warnings(tool: Any) -> tuple[str, ...]:
    """One warning naming the tool and library versions of the report that differ from the
    installed ones; none when all agree or the report records none."""
    if not isinstance(tool, dict):
        return ()
    recorded = {"ragreport": tool.get("version"), **(tool.get("libraries") or {})}
    installed = {"ragreport": __version__, **library_versions()}
    differ = [name for name, version in recorded.items() if installed.get(name, version) != version]
    if not differ:
        return ()
    made = ", ".join(f"{name} {recorded[name]}" for name in differ)
    now = ", ".join(f"{name} {installed[name]}" for name in differ)
    return (
        f"the report was made with {made}; installed: {now}; numbers may differ in their last "
        "digits",
    )


def _qrels_difference(report: Path, i: int, run: dict[str, Any], read: ReadOptions) -> str | None:
    """The JSON path of the qrels file's sha256 when the file is not the one the report read."""
    recorded = run.get("read", {}).get("qrels_sha256")
    if recorded is None or read.qrels is None:
        return None
    if not read.qrels.is_file():
        raise InputError(
            f"{read.qrels}: no such qrels file (run {run['label']} of {report}); put the file "
            "the report read at this path"
        )
    if sha256_of(read.qrels) == recorded:
        return None
    return f"runs[{i}].read.qrels_sha256: {read.qrels} is not the qrels file the report read"


def _read_report(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read the report ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(
            f"{path}: not a report JSON ({exc}); pass the .json compare wrote"
        ) from None
    missing = [
        k for k in ("params", "runs", "gate") if not isinstance(document, dict) or k not in document
    ]
    if missing:
        raise InputError(
            f"{path}: no {', '.join(missing)} in this JSON; verify reads reports written by "
            "ragreport compare from this version on"
        )
    return document


def _sidecar(report: Path, path: Path) -> tuple[list[dict[str, Any]], str | None]:
    """The rows of the report's per-question Parquet file (looked for beside the report, then
    at the path it records) and the id of the run that wrote it."""
    found = next((p for p in (report.parent / path.name, path) if p.is_file()), None)
    if found is None:
        raise InputError(
            f"{report}: its per-question rows are in {path}, which is missing; put that file "
            "beside the report"
        )
    try:
        table = pq.read_table(found)
    except (OSError, pa.ArrowInvalid) as exc:
        raise InputError(f"{found}: not a per-question Parquet file ({exc})") from None
    run_id = (table.schema.metadata or {}).get(json_report.RUN_ID_KEY, b"").decode() or None
    return table.to_pylist(), run_id


def _options(path: Path, params: dict[str, Any]) -> Options:
    listed = ("slices", "score_columns", "lower_is_better", "margins")
    wrong = next((n for n in listed if not isinstance(params.get(n, []), list)), None)
    if wrong:
        raise InputError(f"{path}: params.{wrong} is not a list; the report cannot be re-run")
    try:
        options = Options.from_json(params)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{path}: params lacks {exc}; the report cannot be re-run") from None
    wrong = _out_of_range(options)
    if wrong:
        raise InputError(
            f"{path}: params.{wrong} is not a value compare takes; the report cannot be re-run "
            "(verify a report as ragreport wrote it)"
        )
    return options


def _out_of_range(options: Options) -> str | None:
    """The first option the report records that compare's own option would refuse (its type
    and range, and the check of a single value's callback): an edited or foreign JSON, which
    would otherwise stop the re-run with a traceback."""
    params = {flag: p for p in compare_command.params for flag in p.opts}
    for f in fields(Options):
        param, value = params[f.metadata["flag"]], getattr(options, f.name)
        if value is None or param.multiple:  # the lists' items were read by from_json
            continue
        try:
            checked = param.type.convert(value, param, None)
            if param.callback is not None:
                param.callback(click.Context(compare_command), param, checked)
        except click.ClickException:
            return str(f.metadata["json"])
    return None


def _reading(path: Path, run: dict[str, Any]) -> ReadOptions:
    """How the report read this log (format, qrels, mapping...); Parquet defaults before it was
    recorded."""
    try:
        return ReadOptions.from_json(run["read"]) if "read" in run else ReadOptions()
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{path}: runs[].read lacks {exc}; the report cannot be re-run") from None


def _requirements(path: Path, gate: Any) -> Requirements | None:
    if gate is None:
        return None
    try:
        return Requirements(tuple(parse_rule(r) for r in gate["rules"]), gate["inconclusive"])
    except (KeyError, TypeError) as exc:
        raise InputError(f"{path}: gate lacks {exc}; the report cannot be re-run") from None
    except RuleError as exc:
        raise InputError(f"{path}: gate: {exc}") from None


def _runs(path: Path, document: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's runs, each with the label, path and sha256 a re-run needs."""
    runs = document["runs"]
    if not isinstance(runs, list):
        raise InputError(
            f"{path}: runs is not a list; verify reads schema_version 2 and later reports"
        )
    for i, run in enumerate(runs):
        lacking = [
            k for k in ("label", "path", "sha256") if not isinstance(run, dict) or k not in run
        ]
        if lacking:
            raise InputError(
                f"{path}: runs[{i}] lacks {', '.join(lacking)}; the report cannot be re-run"
            )
    if len(runs) < 2:
        raise InputError(f"{path}: runs holds fewer than two logs; the report cannot be re-run")
    return runs


def first_difference(actual: Any, expected: Any, path: str = "") -> tuple[str | None, int]:
    """The JSON path of the first value that differs (floats to RELATIVE_TOLERANCE), and how
    many numbers were compared up to there."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        checked = 0
        for key in dict.fromkeys([*expected, *actual]):
            where = f"{path}.{key}" if path else key
            if key not in actual or key not in expected:
                return where, checked
            found, n = first_difference(actual[key], expected[key], where)
            checked += n
            if found:
                return found, checked
        return None, checked
    if isinstance(expected, list) and isinstance(actual, list):
        checked = 0
        for i in range(max(len(actual), len(expected))):
            if i >= len(actual) or i >= len(expected):
                return f"{path}[{i}]", checked
            found, n = first_difference(actual[i], expected[i], f"{path}[{i}]")
            checked += n
            if found:
                return found, checked
        return None, checked
    numbers = (int, float)
    if isinstance(expected, numbers) and isinstance(actual, numbers):
        if isinstance(expected, bool) or isinstance(actual, bool):
            return (None if actual is expected else path), 1
        same = math.isclose(actual, expected, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-12)
        return (None if same else path), 1
    return (None if actual == expected else path), 0


def _describe(path: str, actual: Any, expected: Any) -> str:
    def at(document: Any) -> Any:
        for part in path.replace("[", ".[").split("."):
            if not part:
                continue
            try:
                document = document[int(part[1:-1])] if part.startswith("[") else document[part]
            except (KeyError, IndexError, TypeError):
                return "(absent)"
        return document

    return f"{path}: report {at(expected)!r}, re-run {at(actual)!r}"


def verify(report: Path, logs: list[Path]) -> Verification:
    """Re-run ``report`` on ``logs`` (default: the paths it records) and compare every number."""
    document = _read_report(report)
    runs = _runs(report, document)
    requirements = _requirements(report, document["gate"])
    if logs and len(logs) != len(runs):
        raise InputError(
            f"{report}: the report compares {fmt_count(len(runs), 'log')}; pass {len(runs)} (the "
            "baseline first, in the report's order) or none to use the recorded paths"
        )
    if not logs and not all(isinstance(run.get("path"), str) for run in runs):
        raise InputError(f"{report}: runs[].path is not a path; pass the logs after the report")
    paths = logs or [Path(run["path"]) for run in runs]
    reading = tuple(_reading(report, run) for run in runs)
    warnings = version_warnings(document.get("tool"))
    for i, (run, path, read) in enumerate(zip(runs, paths, reading, strict=True)):
        if not logs and path == table_path(run["label"]):
            raise InputError(
                f"{report}: run {run['label']} was a table in memory, which no file "
                "reproduces (its sha256 is of its Arrow stream); write the tables to Parquet "
                "and compare the files for a report that verify can check"
            )
        if not (path.exists() or "*" in str(path)):
            raise InputError(f"{path}: no such log (run {run['label']} of {report}); pass its path")
        qrels = _qrels_difference(report, i, run, read)
        if qrels is not None:
            return Verification(0, qrels, warnings)
        if open_log(path, run["label"], read).sha256 != run["sha256"]:
            read_as = (
                f"{path} with its passage table {read.passages} (one sha256 covers both)"
                if read.passages is not None
                else path
            )
            return Verification(
                0, f"runs[{i}].sha256: {read_as} is not the log the report read", warnings
            )
    sidecar = document.pop("per_question_file", None)
    if sidecar is not None:
        rows, run_id = _sidecar(report, Path(sidecar["path"]))
        if run_id != document.get("run_id"):
            return Verification(
                0, f"per_question_file: {sidecar['path']} is from another run", warnings
            )
        document["per_question"] = rows
    study = run_study(
        paths,
        _options(report, document["params"]),
        requirements,
        reading=reading,
        labels=tuple(run["label"] for run in runs),
    )
    fresh = json.loads(json_report.dumps(json_report.build(study), json_report.per_question(study)))
    for name in _NOT_COMPARED:
        fresh.pop(name, None)
        document.pop(name, None)
    for mine, theirs in zip(fresh["runs"], document["runs"], strict=True):
        mine["path"] = theirs["path"]
        for key in set(mine.get("read", {})) - set(theirs.get("read", {})):
            del mine["read"][key]  # how to read a log, recorded by a later version
    found, checked = first_difference(fresh, document)
    return Verification(checked, found and _describe(found, fresh, document), warnings)
