"""Compare runs from Python, in a notebook or a script: logs as paths, DataFrames or Arrow tables
(or any table that exports an Arrow stream: polars, DuckDB).

    import reportgen
    result = reportgen.compare("baseline.parquet", candidate_frame, labels=["base", "rerank"])
    result.metrics            # one row per candidate and metric
    result.to_html("report.html")
    result                    # in a notebook: the verdicts and the headline table

Keyword arguments are the options of ``ragreport compare`` under their Python names (``k``,
``n_boot``, ``confidence``, ``slices``, ``margins``, ``rules``, ``log_format``, ``qrels``, ...),
given as the command line takes them (``margins=["correct=0.02"]``; a lone string is one value),
each of its type there (``k`` an int, ``strict`` a bool), and checked by the command's own
definitions, so a value the command refuses is refused here with the same words.
"""

from __future__ import annotations

import numbers
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, TypeAlias

import click
import numpy as np
import pandas as pd
import pyarrow as pa

from .cli import check_decodable, cli, reading_from, refuse_undecodable, settings_from
from .comparison.study import Study, run_labels, run_study
from .errors import InputError, OutputError
from .formatting import agreeing, fmt_diff, fmt_interval, fmt_num, fmt_p
from .inputs.load import Source, name_problems, open_table, table_path
from .inputs.readers import ReadOptions, mapped
from .inputs.readers.columns import duckdb_readable
from .output import check_outputs, unnamed, write_all
from .pipeline import Outputs, build_report, files_read, page_run_id, placed, study_run_id
from .reporters import html_report, json_report, per_question_report
from .reporters.html.render import environment
from .reporters.report import Report


class ArrowStream(Protocol):
    """A table that exports itself as an Arrow stream (the Arrow PyCapsule interface): a polars
    DataFrame, a DuckDB relation, a pyarrow RecordBatchReader."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...


RunLike: TypeAlias = str | os.PathLike[str] | pd.DataFrame | pa.Table | ArrowStream
# the command's runs and outputs: here arguments and methods of Result (to_html, to_json,
# per_question), not options
_NOT_OPTIONS = {
    "runs", "labels", "baseline", "output", "json_path", "markdown_path", "junit_path",
    "per_question_path", "quiet",
}  # fmt: skip
METRIC_COLUMNS = (
    "candidate", "metric", "n", "baseline", "candidate_mean", "diff", "ci_low", "ci_high",
    "confidence", "p", "p_adjusted", "wins", "losses", "ties", "fixed", "broken", "test",
)  # fmt: skip
_PLACEHOLDER = ("baseline", "candidate", "-o", "report.html")  # a parse needs them; never read


def _command() -> click.Command:
    return cli.commands["compare"]


def _settings(given: dict[str, Any], labels: Any, baseline: Any) -> dict[str, Any]:
    """Every option of ``ragreport compare``, with ``labels`` and ``baseline``, from ``given``
    or its default, checked by the command's own parameter definitions (``given`` serves as the
    defaults of a parse)."""
    command = _command()
    params = {str(p.name): p for p in command.params}
    names = set(params) - _NOT_OPTIONS
    unknown = sorted(set(given) - names)
    if unknown:
        raise TypeError(
            f"compare() got {agreeing(len(unknown), 'an unknown option', 'unknown options')} "
            f"{', '.join(unknown)}; known: " + ", ".join(sorted(names))
        )
    values = {**given, "labels": labels, "baseline": baseline}
    defaults = {
        name: _checked(params[name], name, value)
        for name, value in values.items()
        if value is not None
    }
    try:
        context = command.make_context("compare", [*_PLACEHOLDER], default_map=defaults)
    except click.ClickException as exc:
        raise InputError(exc.format_message()) from None
    refuse_undecodable(context)
    return dict(context.params)


def _checked(param: click.Parameter, name: str, value: Any) -> Any:
    """``value`` as the command line hands it to click: each value of the type the option
    takes, a repeatable option's as a tuple (a lone string or path as one value). Checked here
    because click would round a float for an int (k=3.9 as 3), split a string into letters
    (labels="AB") or fail deep inside on a list."""
    kind, noun = _kind(param)
    if not param.multiple:
        return _converted(param, f"{name}={value!r} is {_type(value)}", value, kind, _a(noun))
    if isinstance(value, str | os.PathLike):
        value = (value,)
    expected = f"a list of {noun}s"
    if not isinstance(value, list | tuple):
        raise _wrong(param, f"{name}={value!r} is {_type(value)}", expected)
    return tuple(
        _converted(param, f"{name}={value!r} holds {item!r}, {_type(item)}", item, kind, expected)
        for item in value
    )


_BOOL = bool | np.bool_  # a flag's values: numpy's True (a comparison's) is one


def _kind(param: click.Parameter) -> tuple[Any, str]:
    """The Python type of the values of ``param``, and its noun for messages."""
    if isinstance(param, click.Option) and param.is_flag:
        return _BOOL, "bool"
    if isinstance(param.type, click.types.IntParamType):
        return numbers.Integral, "int"
    if isinstance(param.type, click.types.FloatParamType):
        return numbers.Real, "number"
    if isinstance(param.type, click.Path):
        return str | os.PathLike, "path"
    return str, "string"


def _converted(param: click.Parameter, shown: str, value: Any, kind: Any, expected: str) -> Any:
    """``value`` if of ``kind``, a NumPy number or bool as a Python one; a bool is no number
    here, though Python counts it one."""
    if not isinstance(value, kind) or (kind is not _BOOL and isinstance(value, _BOOL)):
        raise _wrong(param, shown, expected)
    if kind is _BOOL:
        return bool(value)
    if kind is numbers.Integral:
        return int(value)
    return float(value) if kind is numbers.Real else value


def _a(noun: str) -> str:
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


def _type(value: Any) -> str:
    """'an int', 'a list': the type of ``value`` with its article."""
    return _a(type(value).__name__)


def _wrong(param: click.Parameter, shown: str, expected: str) -> InputError:
    flags = " / ".join(f"'{o}'" for o in param.opts)
    return InputError(f"Invalid value for {flags}: {shown}; give {expected}")


def _sources(
    runs: tuple[RunLike, ...], labels: tuple[str, ...], reading: tuple[ReadOptions, ...]
) -> list[Source]:
    """Paths stay paths (read as the command reads them, with ``reading``); tables are checked
    now, under the label they will carry, so that a message names the run as the report will."""
    stems: list[Path] = []
    for i, run in enumerate(runs):
        if isinstance(run, str | os.PathLike):
            stems.append(Path(run))
        elif isinstance(run, pd.DataFrame | pa.Table) or hasattr(run, "__arrow_c_stream__"):
            stems.append(Path(f"run{i + 1}"))
        else:
            raise TypeError(
                f"run {i + 1}: a {type(run).__name__}; give a path, a pandas DataFrame, an "
                "Arrow table or another table that exports an Arrow stream (a polars DataFrame, "
                "a DuckDB relation)"
            )
    names = run_labels(stems, labels)
    return [
        stem
        if isinstance(run, str | os.PathLike)
        else open_table(_table(run, table_path(name), options), name)
        for run, stem, name, options in zip(runs, stems, names, reading, strict=True)
    ]


def _path(run: RunLike) -> Path | None:
    return Path(run) if isinstance(run, str | os.PathLike) else None


# ReadOptions fields (with their names in compare()) that read a log file: a table has none
_FILE_READING = (
    ("format", "log_format"),
    ("qrels", "qrels"),
    ("run_filter", "run_filters"),
    ("passages", "passages"),
)


def _table(
    run: pd.DataFrame | pa.Table | ArrowStream, where: Path, options: ReadOptions
) -> pa.Table:
    """``run`` with its columns mapped as ``options`` say; an option only a file can use is
    refused rather than ignored (passages= ignored would drop the span metrics unsaid)."""
    for field, name in _FILE_READING:
        if getattr(options, field) is not None:
            raise InputError(
                f"{where}: {name}= is for a log read from a file, not a table in memory; drop "
                "it, or write the table to Parquet and give its path"
            )
    table = _arrow(run, where)
    if not options.mapping:
        return table
    columns = dict(zip(table.column_names, table.columns, strict=True))
    return pa.table(mapped(where, columns, options.mapping))


def _arrow(run: pd.DataFrame | pa.Table | ArrowStream, where: Path) -> pa.Table:
    """``run`` as an Arrow table, in the types DuckDB reads from Arrow (duckdb_readable)."""
    if isinstance(run, pa.Table):
        table = run
    elif isinstance(run, pd.DataFrame):  # its index is no column: checked, not exported
        table = _from_frame(run, where)
    else:
        try:
            table = pa.table(run)  # read once: a stream (a RecordBatchReader) is used up
        except pa.ArrowException as error:
            raise InputError(f"{where}: cannot be read as an Arrow table ({error})") from None
    return duckdb_readable(table)


def _from_frame(frame: pd.DataFrame, where: Path) -> pa.Table:
    """The columns of ``frame`` (not its index), refused in the words a file's schema gets, or
    naming what a DataFrame has and a file has not (an index, levels of column names)."""
    if isinstance(frame.columns, pd.MultiIndex):
        raise InputError(
            f"{where}: the DataFrame's columns have {frame.columns.nlevels} levels of names; give "
            "each column one name (frame.columns = ['_'.join(map(str, c)) for c in frame.columns])"
        )
    names = [str(name) for name in frame.columns]
    problems = name_problems(where, names)
    if problems:
        raise InputError(problems[0])
    if "question_id" not in names and "question_id" in frame.index.names:
        raise InputError(
            f"{where}: question_id is the DataFrame's index, not a column; pass "
            "frame.reset_index(), which makes it one"
        )
    try:
        return pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowException, TypeError, ValueError):
        name, reason = _unreadable_column(frame)
        raise InputError(
            f"{where}: column {name} cannot be read as one type ({reason}); give it values of "
            "one type, as a Parquet file holds them (ids as text: .astype(str))"
        ) from None


def _unreadable_column(frame: pd.DataFrame) -> tuple[str, str]:
    """The first column of ``frame`` Arrow cannot read (a question_id of texts and numbers, a
    correct holding 'maybe', a sparse column), and Arrow's reason, on its first line."""
    for name in frame.columns:
        if isinstance(frame[name].dtype, pd.SparseDtype):
            return str(name), "a sparse column; make it dense with .sparse.to_dense()"
        try:
            pa.Array.from_pandas(frame[name])
        except (pa.ArrowException, TypeError, ValueError) as exc:
            return str(name), (str(exc).splitlines() or [type(exc).__name__])[0]
    return "?", "no single column fails alone"


def compare(
    *runs: RunLike,
    labels: str | list[str] | tuple[str, ...] = (),
    baseline: str | None = None,
    **options: Any,
) -> Result:
    """Compare the baseline (the first run, or ``baseline``) with every other run.

    Raises InputError with the command's one-line message on a bad log or option; warns
    (UserWarning) where the command warns on stderr before comparing: a rule given twice.
    """
    for run in runs:
        if isinstance(run, str | os.PathLike):
            check_decodable(Path(run))
    settings = _settings(options, labels, baseline)
    reading = reading_from(settings)([_path(run) for run in runs])
    names, baseline = settings["labels"], settings["baseline"]
    sources = _sources(runs, names, reading)
    study_options, requirements = settings_from(
        _command(), settings, sources, [n for n in settings if options.get(n) is None]
    )
    for warning in requirements.warnings if requirements else ():
        warnings.warn(warning, stacklevel=2)
    study = run_study(sources, study_options, requirements, reading, names, baseline)
    run_id = study_run_id(study, repr((study_options, reading, names, baseline)))
    logs = tuple(Path(run) for run in runs if isinstance(run, str | os.PathLike))
    return Result(study, run_id, logs, files_read(settings, reading))


@dataclass(frozen=True)
class Result:
    """One comparison, computed once; every output is rendered from it on demand."""

    study: Study
    run_id: str
    # what the comparison read, which no output may overwrite, as the command line refuses to:
    # the logs given as paths, and every other file with the option that names it (--qrels, ...)
    logs: tuple[Path, ...]
    read: Mapping[Path, str]

    @property
    def passed(self) -> bool | None:
        """Whether every gate rule passed; None without rules."""
        return None if self.study.gate is None else self.study.gate.passed

    @property
    def metrics(self) -> pd.DataFrame:
        """One row per candidate and metric: both means, B - A with its interval, the test's p
        (and with several candidates p adjusted over them), W/L/T, fixed and broken."""
        family = self.study.family
        rows = []
        for pair in self.study.pairs:
            candidate = pair.runs["b"].label
            for name, c in pair.comparisons.items():
                rows.append(
                    {
                        "candidate": candidate,
                        "metric": name,
                        "n": c.n,
                        "baseline": c.a,
                        "candidate_mean": c.b,
                        "diff": c.diff,
                        "ci_low": c.ci_low,
                        "ci_high": c.ci_high,
                        "confidence": pair.options.confidence,
                        "p": c.p,
                        "p_adjusted": c.p if family is None else family.p_adjusted[candidate][name],
                        "wins": c.wins,
                        "losses": c.losses,
                        "ties": c.ties,
                        "fixed": c.fixed,
                        "broken": c.broken,
                        "test": c.test,
                    }
                )
        frame = pd.DataFrame(rows, columns=METRIC_COLUMNS)
        return frame.astype({"fixed": "Int64", "broken": "Int64"})

    @cached_property
    def _report(self) -> Report:
        """The JSON document and per-question rows the page and the JSON share, built once (the
        file name it carries is only quoted by the Markdown summary, which a Result has not)."""
        return build_report(self.study, self.run_id, "report.html")

    def to_json(self) -> str:
        """The JSON document ``ragreport compare --json`` writes, every per-question row in it."""
        return json_report.render(self._report)

    @property
    def per_question(self) -> pd.DataFrame:
        """One row per candidate and paired question (each metric of each run, the failure
        classes): the rows of the JSON's per_question and of ``compare --per-question``."""
        return self._report.per_question

    def to_html(self, path: str | os.PathLike[str]) -> Path:
        """Write the report page to ``path`` (whole or not at all) and return the path. Past
        the rows a JSON holds, the per-question rows go to a Parquet file beside the page, as
        the command writes them (``report.per-question.parquet``), not into the page; such a
        file that the page replaced wrote, and this one does not, is removed, as the command
        removes it."""
        problem = unnamed(os.fspath(path))
        if problem:
            raise OutputError(problem)
        page = Path(path)
        check_decodable(page)
        outputs = Outputs(page, page.with_suffix(".json"))
        sidecar = outputs.sidecar(self._report)
        logs = list(self.logs)
        targets = check_outputs([page, *filter(None, [sidecar])], logs, read=self.read)
        report = placed(self._report, sidecar)
        files: dict[Path, str | bytes] = {targets[0]: html_report.render(report)}
        if sidecar is not None:
            files[targets[1]] = per_question_report.render(report)
        replaced = page_run_id(targets[0])  # its per-question file goes with it
        write_all(files, logs, self.read)
        stale = outputs.stale_sidecar(sidecar, replaced)
        if stale is not None and stale.resolve() not in {Path(p).resolve() for p in logs}:
            stale.unlink(missing_ok=True)
        return targets[0]

    def _repr_html_(self) -> str:
        """The notebook's view: each candidate's verdict and its headline metric."""
        study = self.study
        rows = [
            {
                "candidate": s.candidate,
                "metric": s.metric,
                "baseline": fmt_num(s.baseline_mean),
                "candidate_mean": fmt_num(s.candidate_mean),
                "diff": fmt_diff(s.diff),
                "interval": fmt_interval(s.ci_low, s.ci_high),
                "p": fmt_p(s.p if study.family is None else s.p_adjusted),
                "fixed_broken": "" if s.fixed is None else f"{s.fixed:,} / {s.broken:,}",
            }
            for s in study.summary
        ]
        verdicts = [
            {"label": p.runs["b"].label, "text": f"{p.verdict.outcome}: {p.verdict.reason}"}
            for p in study.pairs
        ]
        return (
            environment()
            .get_template("notebook.html")
            .render(
                runs=[r.label for r in study.runs],
                n_paired=study.n_paired,
                gate=None if study.gate is None else study.gate.headline,
                verdicts=verdicts,
                rows=rows,
                adjusted=study.family.adjustment if study.family else None,
            )
        )
