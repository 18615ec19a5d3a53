"""The parts of an archived report JSON that ``verify`` reads, each checked for its type here.

An edited or foreign JSON would otherwise reach the re-run with a float where an integer goes
or a list where an object goes, and end in a traceback (exit 1, which CI reads as tampering).
Every key verify reads is checked against the type of the field it fills, before anything uses
it; a value of another type, or an absent key, is one line and exit 2. JSON numbers are taken
as written: an integer option written ``200.0`` is refused, not rounded.
"""

from __future__ import annotations

import json
import types
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, Union, get_args, get_origin, get_type_hints

import click

from . import __version__
from .analysis.gates import FAIL, PASS, Requirements, RuleError, parse_rule
from .analysis.metrics import Options
from .cli import compare as compare_command
from .errors import InputError
from .inputs.readers import FORMATS, ReadOptions

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


@dataclass(frozen=True)
class Tool:
    version: str  # of ragreport
    libraries: dict[str, str]  # name: version


@dataclass(frozen=True)
class Sidecar:
    """The Parquet file that holds the per-question rows of a large report."""

    path: str
    rows: int


@dataclass(frozen=True)
class ArchivedRun:
    label: str
    path: str  # as given to compare
    sha256: str
    read: ReadOptions
    qrels_sha256: str | None  # None: the log was read without qrels


@dataclass(frozen=True)
class _Gate:
    rules: tuple[str, ...]
    inconclusive: str


@dataclass(frozen=True)
class _Run:
    label: str
    path: str
    sha256: str


@dataclass(frozen=True)
class Archived:
    """What verify needs of a report, typed; ``document`` is the whole JSON, whose every
    number the re-run is compared with."""

    document: dict[str, Any]
    tool: Tool
    options: Options
    runs: tuple[ArchivedRun, ...]
    requirements: Requirements | None
    sidecar: Sidecar | None
    run_id: str


class _Mistyped(Exception):
    """A JSON value is not of the type its field holds."""


def read_report(path: Path) -> Archived:
    """The report at ``path``, every key verify reads checked; InputError names the first
    that is absent or of another type."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read the report ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        beside = path.with_suffix(".json")
        if path.suffix.lower() in (".html", ".htm") and beside.is_file():
            raise InputError(f"{path}: is the report's page; pass {beside}") from None
        raise InputError(
            f"{path}: not a report JSON ({exc}); pass the .json compare wrote"
        ) from None
    if not isinstance(document, dict):
        raise InputError(f"{path}: not a report JSON (not an object); pass the .json compare wrote")
    keys = _Keys(path, None)
    tool = keys.load(Tool, keys.get(document, "tool", "tool"), "tool")
    keys = _Keys(path, tool.version)
    sidecar = keys.get(document, "per_question_file", "per_question_file", default=None)
    runs = keys.get(document, "runs", "runs")
    if not isinstance(runs, list):
        raise keys.mistyped("runs", runs, "a list")
    if len(runs) < 2:
        raise InputError(f"{path}: runs holds fewer than two logs; the report cannot be re-run")
    archived_runs = tuple(keys.run(run, f"runs[{i}]") for i, run in enumerate(runs))
    labels = [run.label for run in archived_runs]
    again = next((i for i, label in enumerate(labels) if label in labels[:i]), None)
    if again is not None:
        raise InputError(
            f"{path}: runs[{again}].label {json.dumps(labels[again])} is also "
            f"runs[{labels.index(labels[again])}]'s, so the report cannot be checked; verify the "
            "JSON as ragreport compare wrote it"
        )
    return Archived(
        document=document,
        tool=tool,
        options=keys.options(keys.get(document, "params", "params")),
        runs=archived_runs,
        requirements=keys.requirements(keys.get(document, "gate", "gate")),
        sidecar=None if sidecar is None else keys.load(Sidecar, sidecar, "per_question_file"),
        run_id=keys.value(document, "run_id", str, "run_id"),
    )


@dataclass(frozen=True)
class _Keys:
    """Reads the keys of one report, naming the report and the key in every error."""

    report: Path
    version: str | None  # the report's ragreport version, once read

    def get(self, data: dict[str, Any], key: str, where: str, default: Any = ...) -> Any:
        if key in data:
            return data[key]
        if default is not ...:
            return default
        if self.version is not None and self.version != __version__:
            raise InputError(
                f"{self.report}: the report lacks {where}; it was made with ragreport "
                f"{self.version} (installed: {__version__}): verify it with that version"
            )
        raise InputError(
            f"{self.report}: the report lacks {where}, so it cannot be checked; verify the JSON "
            "as ragreport compare wrote it"
        )

    def mistyped(self, where: str, value: Any, kind: str) -> InputError:
        shown = json.dumps(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        return InputError(
            f"{self.report}: {where} is {shown}, not {kind}, so the report cannot be checked; "
            "verify the JSON as ragreport compare wrote it"
        )

    def value(self, data: dict[str, Any], key: str, hint: Any, where: str) -> Any:
        """``data[key]`` as a field typed ``hint`` holds it."""
        value = self.get(data, key, where)
        try:
            return _convert(hint, value)
        except _Mistyped:
            raise self.mistyped(where, value, _kind(hint)) from None

    def load(self, cls: type[T], data: Any, where: str, key: str | None = None) -> T:
        """An instance of dataclass ``cls`` from the JSON object ``data``, each field read
        from the key its metadata names under ``key`` (None: the field's name)."""
        if not isinstance(data, dict):
            raise self.mistyped(where, data, "an object")
        hints = get_type_hints(cls)
        values = {
            f.name: self.value(
                data,
                name := f.metadata[key] if key else f.name,
                hints[f.name],
                f"{where}.{name}",
            )
            for f in fields(cls)
        }
        return cls(**values)

    def options(self, params: Any) -> Options:
        options = self.load(Options, params, "params", key="json")
        wrong = _out_of_range(options)
        if wrong:
            raise InputError(
                f"{self.report}: params.{wrong} is not a value compare takes, so the report "
                "cannot be checked; verify the JSON as ragreport compare wrote it"
            )
        return options

    def run(self, data: Any, where: str) -> ArchivedRun:
        run = self.load(_Run, data, where)
        if not run.path:
            raise self.mistyped(f"{where}.path", run.path, "the path of a log")
        read = self.get(data, "read", f"{where}.read")
        options = self.load(ReadOptions, read, f"{where}.read")
        if options.format is not None and options.format not in FORMATS:
            formats = f"one of {', '.join(FORMATS)}, or null"
            raise self.mistyped(f"{where}.read.format", options.format, formats)
        if options.rel_level < 1:
            raise self.mistyped(f"{where}.read.rel_level", options.rel_level, "1 or more")
        digest = self.value(read, "qrels_sha256", str | None, f"{where}.read.qrels_sha256")
        return ArchivedRun(run.label, run.path, run.sha256, options, digest)

    def requirements(self, gate: Any) -> Requirements | None:
        if gate is None:
            return None
        read = self.load(_Gate, gate, "gate")
        if read.inconclusive not in (PASS, FAIL):
            raise self.mistyped("gate.inconclusive", read.inconclusive, f"{PASS} or {FAIL}")
        try:
            return Requirements(tuple(parse_rule(r) for r in read.rules), read.inconclusive)
        except RuleError as exc:
            raise InputError(f"{self.report}: gate: {exc}") from None


def _convert(hint: Any, value: Any) -> Any:
    """``value`` as a field typed ``hint`` holds it (a list as a tuple, a string as a Path);
    _Mistyped when it is of another type."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        for option in args:
            try:
                return _convert(option, value)
            except _Mistyped:
                continue
        raise _Mistyped
    if origin is tuple and isinstance(value, list):
        items = args[:1] * len(value) if args[-1] is Ellipsis else args
        if len(items) != len(value):
            raise _Mistyped
        return tuple(_convert(h, v) for h, v in zip(items, value, strict=True))
    if origin is dict and isinstance(value, dict):
        return {_convert(args[0], k): _convert(args[1], v) for k, v in value.items()}
    if hint is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if hint is Path and isinstance(value, str):
        return Path(value)
    plain = {type(None): type(None), bool: bool, int: int, str: str}
    if hint in plain and type(value) is plain[hint]:  # type(): True is no integer
        return value
    raise _Mistyped


def _kind(hint: Any) -> str:
    """``hint`` in words, as the message of a value of another type says it."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        return " or ".join(_kind(a) for a in args)
    if origin is tuple:
        if args[-1] is Ellipsis:
            return f"a list, each {_kind(args[0])}"
        return f"a list of {len(args)}: {', '.join(_kind(a) for a in args)}"
    if origin is dict:
        return f"an object, each value {_kind(args[1])}"
    words = {type(None): "null", bool: "true or false", int: "an integer", float: "a number"}
    return words.get(hint, "a string")


def _out_of_range(options: Options) -> str | None:
    """The first option the report records that compare's own option would refuse (its range,
    and the check of a single value's callback)."""
    params = {flag: p for p in compare_command.params for flag in p.opts}
    for f in fields(Options):
        param, value = params[f.metadata["flag"]], getattr(options, f.name)
        if value is None or param.multiple:  # the lists' items were typed by load
            continue
        try:
            checked = param.type.convert(value, param, None)
            if param.callback is not None:
                param.callback(click.Context(compare_command), param, checked)
        except click.ClickException:
            return str(f.metadata["json"])
    return None
