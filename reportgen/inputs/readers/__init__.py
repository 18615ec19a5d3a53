"""Readers of the logs people already have, one per format, chosen by kind.

Each reader turns its input into one table in the run-log contract (``inputs/contract.py``)
plus notes for the report (how questions were paired, what was left out). Parquet files,
directories of shards and globs are not read here: DuckDB reads them directly.
"""

from __future__ import annotations

import glob
import json
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq

from ...errors import InputError, not_a_file
from ...formatting import agreeing
from ..contract import BY_NAME, derived_table_problem
from ..listing import files_under
from ..scored_table import is_scored_table
from .columns import duckdb_readable, narrow_floats, narrowed, to_table
from .compressed import refuse_gzip
from .passages import passage_spans, read_passages
from .promptfoo import (
    looks_like_promptfoo,
    looks_like_promptfoo_result,
    promptfoo_columns,
    refuse_promptfoo_table,
    results_of_lines,
    run_names,
    short_labels,
)
from .ragas import OFFERED, QUESTION, failed_scores, looks_like_ragas, ragas_columns
from .ranking import (
    first_fields,
    ranked_table,
    read_beir_qrels,
    read_beir_results,
    read_trec_qrels,
    read_trec_run,
)
from .tabular import Rows, first_json, read_delimited, read_jsonl, record_columns

FORMATS = ("parquet", "arrow", "csv", "tsv", "jsonl", "trec", "ragas", "promptfoo", "beir")
_BY_SUFFIX = {
    ".parquet": "parquet",
    ".arrow": "arrow",  # Arrow IPC files: pandas' and polars' to_feather / write_ipc
    ".feather": "arrow",
    ".ipc": "arrow",
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".trec": "trec",
    ".run": "trec",
}
_SPREADSHEETS = frozenset({".xlsx", ".xlsm", ".xls", ".ods"})
_GLOB = frozenset("*?[")
V = TypeVar("V")  # the values of one column


@dataclass(frozen=True)
class ReadOptions:
    """How to read one run log: every option of the command line that concerns reading."""

    format: str | None = None  # one of FORMATS; None: chosen by extension and content
    qrels: Path | None = None  # judgements of a TREC run or BEIR results
    rel_level: int = 1  # lowest grade that is relevant (trec_eval's -l)
    mapping: tuple[tuple[str, str], ...] = ()  # (run-log column, the file's column)
    run_filter: str | None = None  # the run of a promptfoo file holding several
    passages: Path | None = None  # the run's passage table: its passage ids as document spans

    def files(self) -> dict[Path, str]:
        """The files these options name besides the log, each with its option: an output
        must not overwrite them."""
        named = (("--qrels", self.qrels), ("--passages", self.passages))
        return {path: option for option, path in named if path is not None}

    def to_json(self) -> dict[str, Any]:
        """Every field, as a report's ``runs[].read`` records it."""
        paths = {name: _text(getattr(self, name)) for name in ("qrels", "passages")}
        return {**asdict(self), **paths}


def _text(path: Path | None) -> str | None:
    return None if path is None else str(path)


@dataclass(frozen=True)
class Source:
    """What a reader made of a run log."""

    files: tuple[Path, ...]  # the files read, for provenance
    table: pa.Table | None  # the contract table; None: DuckDB reads ``files`` as Parquet
    notes: tuple[str, ...] = field(default=())
    scores: tuple[str, ...] = ()  # score columns the producing tool wrote, offered as metrics
    passages: pa.Table | None = None  # its passage table (--passages): the run's whole cutting
    tool: str | None = None  # the tool that wrote it: ragas, promptfoo, trec, beir; None: a log
    # for messages: the file's own name of a run-log column read from another (--map, a var)
    sources: Mapping[str, str] = field(default_factory=dict)
    # where each row is in the file: the ``unit`` (a line, a promptfoo result) lines[i] holds
    # row i; None: a Parquet file's rows, named "row N"
    lines: Sequence[int] | None = None
    unit: str = "line"


def parquet_files(path: Path) -> tuple[Path, ...]:
    """The Parquet files of a file, a directory of shards or a glob, in name order."""
    if path.is_dir():
        files = files_under(path, "*.parquet")
        where = f"no .parquet file in the folder {path}"
        _refuse_other_format(path, files or files_under(path, "*"))
    elif _shards(path):
        files = sorted(Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file())
        where = f"no file matches the pattern {path}"
        _refuse_other_format(path, files)
    elif path.is_file():
        return (path,)
    else:
        raise _missing(path)
    if not files:
        raise InputError(f"{path}: {where}; pass a folder or pattern of Parquet run logs")
    return tuple(files)


_KIND_NAMES = {"arrow": "Feather", "jsonl": "JSON Lines", "json": "JSON", "promptfoo": "promptfoo"}


def _refuse_other_format(path: Path, files: list[Path]) -> None:
    """A folder or glob of ``files`` holding a log of another format (a CSV file): only Parquet
    is read in shards, and the Parquet reader's own refusal would say only that it is none."""
    kinds = {**_BY_SUFFIX, ".json": "json"}
    other = next((f for f in files if kinds.get(f.suffix.lower(), "parquet") != "parquet"), None)
    if other is not None:
        raise _shards_only(path, kinds[other.suffix.lower()], f"it holds {other.name}")


def _shards_only(path: Path, kind: str, found: str) -> InputError:
    name = _KIND_NAMES.get(kind, kind.upper())
    return InputError(
        f"{path}: a folder or glob is read as Parquet shards only, and {found}, not Parquet; "
        f"pass one {name} file per log, or convert each file to Parquet (ragreport convert)"
    )


def _partition_notes(path: Path, files: tuple[Path, ...]) -> list[str]:
    """A folder of shards whose subfolders are named like columns (``slice=faq``), as a
    partitioned dataset's are (pandas' ``partition_cols``): those columns are in the names, not
    in the files, and are not read; said, since a slice lost so is otherwise lost unseen. A
    column every file holds as well (DuckDB's WRITE_PARTITION_COLUMNS) is read from the files."""
    if not path.is_dir():
        return []
    folders = {part for f in files for part in f.relative_to(path).parent.parts}
    named = sorted({part.split("=", 1)[0] for part in folders if "=" in part})
    if named:  # the footers only
        held = [set(parquet_file(f).schema_arrow.names) for f in files]
        named = [name for name in named if not all(name in names for names in held)]
    if not named:
        return []
    columns, it = " and ".join(named), agreeing(len(named), "it", "them")
    return [
        f"the folders of {path} are named like columns, as a partitioned dataset's are: "
        f"{columns} {agreeing(len(named), 'is', 'are')} in the folder names only, which are not "
        f"read; write {it} into the files (pandas: to_parquet without partition_cols) to "
        f"compare by {it}"
    ]


def arrow_table(path: Path) -> pa.Table:
    """An Arrow IPC file (Feather), as pandas' ``to_feather`` and polars' ``write_ipc`` write it;
    InputError when it is none."""
    with _unreadable(
        path,
        "Arrow IPC (Feather)",
        "write it with pandas.DataFrame.to_feather, or the run log as Parquet",
    ):
        return duckdb_readable(feather.read_table(path))


def parquet_file(path: Path) -> pq.ParquetFile:
    """The Parquet file at ``path``, its footer read; InputError when there is none."""
    if path.is_dir():
        raise InputError(f"{path}: is a folder; pass the path of one Parquet run log")
    if not path.is_file():
        raise InputError(f"{path}: {not_a_file(path)}; pass the path of a Parquet run log")
    with _unreadable(path, "Parquet", _PARQUET_FIX):
        return pq.ParquetFile(path)


_PARQUET_FIX = "write the run log with pandas.DataFrame.to_parquet or pyarrow.parquet.write_table"


def parquet_bytes(data: bytes, path: Path) -> pa.Table:
    """The Parquet file ``path`` read from its bytes (a cluster's worker has them, not the
    path); InputError when they are not Parquet, as parquet_file gives."""
    with _unreadable(path, "Parquet", _PARQUET_FIX):
        return pq.read_table(pa.BufferReader(data))


@contextmanager
def _unreadable(path: Path, kind: str, fix: str) -> Iterator[None]:
    """Arrow's error on a file that is not of ``kind`` as one line: its first line, and ``fix``."""
    try:
        yield
    except (pa.ArrowException, OSError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{path}: not a readable {kind} file ({reason}); {fix}") from None


def _shards(path: Path) -> bool:
    """Whether ``path`` is a folder or a glob of Parquet shards rather than one file: a file
    whose name holds a glob's characters ('a [v2].parquet') is that file."""
    return path.is_dir() or (bool(_GLOB & set(str(path))) and not path.is_file())


def _missing(path: Path) -> InputError:
    return InputError(f"{path}: {not_a_file(path)}; pass the path of a run log")


def named_format(path: Path) -> str | None:
    """The format ``path``'s extension names to a reader (ragreport's or another tool's), None
    for an extension that names none."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        return "JSON"
    return "a spreadsheet" if suffix in _SPREADSHEETS else _BY_SUFFIX.get(suffix)


def format_of(path: Path, options: ReadOptions) -> str:
    if _shards(path) and options.format in (None, "parquet", "ragas"):
        return options.format or "parquet"
    if _shards(path) and options.format:
        raise _shards_only(path, options.format, f"--format is {options.format}")
    if not path.is_file():
        raise _missing(path)
    refuse_gzip(path)
    if options.format:
        return options.format
    suffix = path.suffix.lower()
    if suffix == ".json":
        data = _json(path)
        if isinstance(data, list):  # records, as pandas' to_json(orient="records") writes them
            return "records"
        layout = _pandas_layout(data, options.mapping)
        if layout:
            raise InputError(
                f"{path}: a table as pandas' to_json lays it out ({layout}), not BEIR results; "
                "write records, one object a line, at full precision (pandas writes 10 decimals "
                "by default): to_json('run.jsonl', orient='records', lines=True, "
                "double_precision=15)"
            )
        if looks_like_promptfoo(data):
            return "promptfoo"
        if not _beir_shaped(data):
            raise InputError(
                f"{path}: not a run log in any format read from .json: not promptfoo output (an "
                "evalId or a results list), BEIR results ({query_id: {doc_id: score}}) or "
                "records (an array of objects, one a row); check that this is the log meant"
            )
        return "beir"
    if _BY_SUFFIX.get(suffix) == "jsonl" and looks_like_promptfoo_result(first_json(path)):
        return "promptfoo"  # promptfoo eval -o out.jsonl: one result a line
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    if options.qrels is not None:
        return "trec"
    if suffix in _SPREADSHEETS:
        raise InputError(
            f"{path}: a spreadsheet ({suffix}), which is not read; save the sheet as CSV "
            "(pandas: read_excel(path).to_csv('run.csv', index=False))"
        )
    raise InputError(
        f"{path}: cannot tell the format from the extension {suffix or '(none)'!r}; "
        f"pass --format ({', '.join(FORMATS)})"
    )


_TABLE_COLUMNS = frozenset({*BY_NAME, QUESTION})  # a run log's columns, and RAGAS' question


def _pandas_layout(data: Any, mapping: tuple[tuple[str, str], ...]) -> str | None:
    """How pandas' ``to_json`` laid out ``data`` as a table, for the message; None when it is
    no table of pandas. The columns of ``mapping`` (--map) are a table's too."""
    columns = _TABLE_COLUMNS | {source for _, source in mapping}
    if _pandas_frame(data, columns):
        return _frame_orient(data, columns)
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        if {"columns", "data"} <= data.keys():
            return "orient='split'"
        if {"schema", "data"} <= data.keys():
            return "orient='table'"
    return None


def _pandas_frame(data: Any, columns: frozenset[str]) -> bool:
    """Whether ``data`` is a table as pandas' ``to_json`` lays it out by default (column ->
    {row -> value}) or with orient="index" (row -> {column -> value}). BEIR results have that
    shape too (query -> {document -> score}); a table's inner objects all have the same keys
    (its row labels, or its columns), and it has a column named in ``columns`` or, when there
    are two inner objects or more, a value that is no number (a text, a boolean, a list, null),
    where every BEIR score is one."""
    if not isinstance(data, dict) or not data:
        return False
    rows = list(data.values())
    if not all(isinstance(row, dict) and row.keys() == rows[0].keys() for row in rows):
        return False
    if (data.keys() | rows[0].keys()) & columns:
        return True
    return len(rows) > 1 and not all(_number(v) for row in rows for v in row.values())


def _frame_orient(data: dict[str, dict[str, Any]], columns: frozenset[str]) -> str:
    """Which way round a table of ``_pandas_frame`` lies, so the refusal describes the file:
    the side naming a column in ``columns``, else the side of pandas' default row labels (0, 1,
    ...), else to_json's default."""
    inner = next(iter(data.values())).keys()
    by_index = not data.keys() & columns and (
        bool(inner & columns) or all(key.isdigit() for key in data)
    )
    return "row -> {column -> value}, orient='index'" if by_index else "column -> {row -> value}"


def _beir_shaped(data: Any) -> bool:
    """Whether ``data`` has the shape of BEIR results, an object of objects: told before asking
    for the qrels such a file needs, which another JSON file would be asked for in vain."""
    return isinstance(data, dict) and all(isinstance(v, dict) for v in data.values())


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not a JSON file ({exc}); check the file") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        first = first_json(path) if exc.msg == "Extra data" else None
        if isinstance(first, dict):  # JSON Lines: one object a line
            if looks_like_promptfoo_result(first):
                raise InputError(
                    f"{path}: promptfoo's JSON Lines output (one result a line), not one JSON "
                    "document; name the file .jsonl"
                ) from None
            raise InputError(
                f"{path}: JSON Lines (one object a line), not one JSON document; pass "
                "--format jsonl or name the file .jsonl"
            ) from None
        raise InputError(f"{path}: not a JSON file ({exc}); check the file") from None


def _promptfoo_data(path: Path) -> Any:
    """promptfoo's output as its JSON holds it, from the JSON or from the JSON Lines output
    (by the extension, as promptfoo chooses what it writes)."""
    if _BY_SUFFIX.get(path.suffix.lower()) == "jsonl":
        return results_of_lines(path)
    return _json(path)


def _parquet_rows(path: Path) -> Rows:
    files = parquet_files(path)
    for file in files:
        parquet_file(file)  # a file with no footer is named, as when DuckDB reads it
    table = pq.read_table(list(map(str, files)))
    return table.to_pydict(), None


_RAGAS_KINDS = ("csv", "tsv", "jsonl", "records", "parquet", "arrow")


def _row_format(path: Path, kind: str) -> str:
    """The format of the rows of ``path`` read as ``kind``: RAGAS tables come as CSV, TSV,
    JSONL, JSON records, Parquet or Feather, by the extension."""
    if kind != "ragas":
        return kind
    by_suffix = {**_BY_SUFFIX, ".json": "records"}
    kind = "parquet" if _shards(path) else by_suffix.get(path.suffix.lower(), "")
    if kind not in _RAGAS_KINDS:
        raise InputError(
            f"{path}: RAGAS results are read from .csv, .tsv, .jsonl, .json, .parquet or "
            f".feather, not {path.suffix or 'a file without extension'}; save the table "
            "RAGAS gives "
            "(to_pandas()) with to_parquet, to_csv or to_json(orient='records', lines=True, "
            "double_precision=15)"
        )
    return kind


def _rows(path: Path, kind: str) -> Rows:
    readers: dict[str, Callable[[Path], Rows]] = {
        "csv": lambda p: read_delimited(p, ","),
        "tsv": lambda p: read_delimited(p, "\t"),
        "jsonl": read_jsonl,
        "parquet": _parquet_rows,
        "arrow": lambda p: (arrow_table(p).to_pydict(), None),
        "records": _records,
    }
    return readers[kind](path)


def _records(path: Path) -> Rows:
    """A JSON array of objects, one a row, as pandas' ``to_json(orient="records")`` writes a
    table (a RAGAS table too); its rows are named by position, as a Parquet file's."""
    records = _json(path)
    item = next((i for i, r in enumerate(records) if not isinstance(r, dict)), None)
    if item is not None:
        raise InputError(
            f"{path}: item {item + 1} of the JSON array is not an object; write one object per "
            "row, as to_json(orient='records') does"
        )
    if not records:
        raise InputError(f"{path}: an empty JSON array; write one object per question")
    return record_columns(records), None


def _qrels(path: Path, options: ReadOptions, kind: str) -> Path:
    if options.qrels is None:
        raise InputError(
            f"{path}: a {kind.upper()} run has no relevance judgements; pass --qrels FILE"
        )
    if not options.qrels.is_file():
        raise InputError(
            f"{options.qrels}: {not_a_file(options.qrels)}; pass the qrels file with --qrels"
        )
    return options.qrels


_QRELS = {
    "trec": "TREC qrels (qid iter docno rel)",
    "beir": "BEIR's qrels (query-id corpus-id score)",
}


def _refuse_other_qrels(path: Path, qrels: Path, kind: str) -> None:
    """Qrels laid out for the other kind of ranking (TREC's four fields ending in a grade,
    BEIR's three), as when a TREC run and BEIR results share one --qrels: the log that needs
    its own is named, where the qrels reader would call the file malformed. Told by its first
    two lines: TREC qrels whose first line lost its grade are TREC qrels with a bad line 1."""
    lines = first_fields(qrels, 2)
    fields = lines[0] if lines else []
    trec_qrels = len(fields) == 4 and fields[3].lstrip("-").isdigit()
    beir_qrels = len(lines) == 2 and all(len(line) == 3 for line in lines)
    if (kind == "beir" and trec_qrels) or (kind == "trec" and beir_qrels):
        other = "trec" if kind == "beir" else "beir"
        log, own = ("a TREC run is", "TREC's") if kind == "trec" else ("BEIR results are", "BEIR's")
        raise InputError(
            f"{path}: {log} judged by {_QRELS[kind]}, and {qrels} holds {_QRELS[other]}; pass "
            f"{own}, or to compare the two kinds, convert one of the two with its own qrels "
            "first (ragreport convert LOG --qrels QRELS -o LOG.parquet)"
        )


def mapping_files(values: tuple[str, ...]) -> dict[Path, str]:
    """The ``--map`` values that name a file of mappings (the others are ``column=source``),
    each with its option: an output must not overwrite them."""
    return {Path(value): "--map" for value in values if "=" not in value}


def parse_mapping(values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``--map`` values: ``column=source`` pairs, or the path of a file of such lines (``#``
    starts a comment)."""
    pairs: list[tuple[str, str]] = []
    files = mapping_files(values)
    for value in values:
        if Path(value) not in files:
            entries = [(f"--map {value}", value)]
        else:
            try:
                text = Path(value).read_text(encoding="utf-8-sig")  # as a Windows editor saves
            except (OSError, UnicodeDecodeError) as exc:
                raise InputError(
                    f"{value}: cannot read this mapping file ({exc}); give --map COLUMN=SOURCE "
                    "or a file of such lines"
                ) from None
            entries = [
                (f"{value}: line {n}", line.split("#", 1)[0].strip())
                for n, line in enumerate(text.splitlines(), start=1)
            ]
        for where, entry in entries:
            if not entry:
                continue
            target, _, source = (part.strip() for part in entry.partition("="))
            if not target or not source:
                raise InputError(
                    f"{where}: {entry!r} is not COLUMN=SOURCE; write the run-log column, "
                    "'=', then the file's column, e.g. question_id=id"
                )
            earlier = dict(pairs).get(target, source)
            if earlier != source:  # the last would win without a word
                raise InputError(
                    f"{where}: {target} is mapped from {earlier!r} already, and now from "
                    f"{source!r}; map each run-log column once"
                )
            pairs.append((target, source))
    return tuple(dict.fromkeys(pairs))


def read_options(
    formats: tuple[str, ...],
    qrels: Path | None,
    rel_level: int,
    mapping: tuple[str, ...],
    run_filters: tuple[str, ...],
    passages: tuple[Path, ...],
    logs: Sequence[Path | None],
) -> tuple[ReadOptions, ...]:
    """One ReadOptions per run log (None: a table in memory); ``--format``, ``--run-filter``
    and ``--passages`` given once apply to every log, else one value per log, in order."""
    if qrels is None and rel_level != ReadOptions.rel_level:
        raise InputError(
            f"--rel-level {rel_level} sets the lowest relevant grade of the --qrels file; give "
            "the qrels with it, or drop it (a log's own relevant_grades are read as logged)"
        )
    n_runs = len(logs)
    kinds = _per_log("--format", formats, n_runs)
    filters = _per_log("--run-filter", run_filters, n_runs)
    tables = _per_log("--passages", passages, n_runs)
    pairs = parse_mapping(mapping)
    options = [
        ReadOptions(kind, qrels, rel_level, pairs, f, t)
        for kind, f, t in zip(kinds, filters, tables, strict=True)
    ]
    given = (("format", formats), ("run_filter", run_filters), ("passages", passages))
    once = {
        "mapping": (),
        "rel_level": ReadOptions.rel_level,
        **{name: None for name, values in given if len(values) == 1},
    }
    return _qrels_where_read(logs, _logs_beside_tables(logs, options, once))


def _logs_beside_tables(
    logs: Sequence[Path | None], options: list[ReadOptions], once: dict[str, Any]
) -> list[ReadOptions]:
    """Among per-question tables (``ragreport metrics``), the options given once for every log
    (``once``, each with the value that clears it; --map and --rel-level always) serve the logs
    alone: a table is read as written, and refuses a reading option given for it (open_scored).
    A table records the --rel-level its log was read with, and compare checks it against the
    logs' (one_rel_level)."""
    tables = [log is not None and is_scored_table(log) for log in logs]
    if all(tables) or not any(tables):
        return options
    return [replace(o, **once) if t else o for o, t in zip(options, tables, strict=True)]


def _qrels_where_read(
    logs: Sequence[Path | None], options: list[ReadOptions]
) -> tuple[ReadOptions, ...]:
    """``--qrels`` serves the TREC runs and BEIR results among the logs: a log beside them that
    carries its own labels (a Parquet log, RAGAS results) is read without it, so that a TREC
    baseline and a candidate logged in full can be compared. When no log can read it, every log
    keeps it, and reading refuses it as a mistake."""
    if len(logs) < 2 or options[0].qrels is None:
        return tuple(options)
    ranked = [_may_read_qrels(log, o) for log, o in zip(logs, options, strict=True)]
    if not any(ranked):
        return tuple(options)
    return tuple(o if r else replace(o, qrels=None) for o, r in zip(options, ranked, strict=True))


def _may_read_qrels(log: Path | None, options: ReadOptions) -> bool:
    """Whether a log may be a TREC run or BEIR results, told without reading it (a BEIR file
    can be large, and is read once): by --format, else its extension; a .json file (promptfoo
    or BEIR by its content) or one of no known extension (a TREC run, given --qrels) may."""
    if log is None:  # a table in memory
        return False
    kind = options.format or ("parquet" if _shards(log) else _BY_SUFFIX.get(log.suffix.lower()))
    return kind is None or kind in ("trec", "beir")


def _per_log(option: str, values: tuple[V, ...], n_runs: int) -> tuple[V | None, ...]:
    """An option given once for every log, once per log (in order) or not at all."""
    if len(values) not in (0, 1, n_runs):
        raise InputError(
            f"{option} given {len(values)} times; give it once for every log or once per log "
            f"({n_runs})"
        )
    return values * n_runs if len(values) == 1 else values or (None,) * n_runs


def runs_in(path: Path, options: ReadOptions) -> list[tuple[str, ReadOptions]]:
    """Each run one log holds, with its label and how to read it: a promptfoo file of several
    providers or prompts and no ``--run-filter`` is one run each (selected by its full name);
    any other log is one run, labelled by its stem."""
    if options.run_filter is not None or format_of(path, options) != "promptfoo":
        return [(path.stem, options)]
    names = run_names(path, _promptfoo_data(path))
    if len(names) < 2:
        return [(path.stem, options)]
    return [
        (label, replace(options, run_filter=name))
        for label, name in zip(short_labels(names), names, strict=True)
    ]


def mapped(path: Path, columns: dict[str, V], mapping: tuple[tuple[str, str], ...]) -> dict[str, V]:
    """``columns`` (a name -> its values) with each mapped column of the file renamed to its
    run-log name."""
    renamed = dict(columns)
    for target, source in mapping:
        if source not in columns:
            raise InputError(
                f"{path}: --map {target}={source}: no column {source!r}; the file's columns "
                f"are {', '.join(columns)}"
            )
        renamed[target] = renamed.pop(source) if source in renamed else columns[source]
    return renamed


def read(path: Path, options: ReadOptions) -> Source:
    """Read ``path`` in its format, its passage ids mapped to spans when it has a passage table;
    raise InputError naming the file and line on bad input."""
    source = _read_format(path, options)
    if options.passages is None:
        return source
    table = source.table
    if table is None:
        table = pq.read_table([str(f) for f in source.files])
    passages = read_passages(options.passages)
    table, spans = passage_spans(path, table, passages, options.passages, source.lines, source.unit)
    files, notes = (*source.files, options.passages), (*source.notes, *spans)
    return replace(source, files=files, table=table, notes=notes, passages=passages)


def _read_format(path: Path, options: ReadOptions) -> Source:
    kind = format_of(path, options)
    notes: list[str] = []
    if options.qrels is not None and kind not in ("trec", "beir"):
        raise InputError(
            f"{path}: read as {'JSON records' if kind == 'records' else kind}, which carries "
            "its own labels; --qrels is for TREC runs and "
            "BEIR results (pass --format trec or beir, or drop --qrels)"
        )
    if kind in ("trec", "beir"):
        qrels_path = _qrels(path, options, kind)
        _refuse_other_qrels(path, qrels_path, kind)
        if kind == "trec":
            ranking, qrels = read_trec_run(path), read_trec_qrels(qrels_path)
        else:
            ranking, qrels = read_beir_results(path), read_beir_qrels(qrels_path)
        table, notes = ranked_table(
            ranking, qrels, options.rel_level, qrels_path, ranks=kind == "trec"
        )
        named = mapped(
            path, dict(zip(table.column_names, table.columns, strict=True)), options.mapping
        )
        return Source(
            (path, qrels_path),
            pa.table(named),
            tuple(notes),
            tool=kind,
            sources=dict(options.mapping),
        )
    if kind == "promptfoo":
        key = dict(options.mapping).get("question_id")
        run = promptfoo_columns(path, _promptfoo_data(path), options.run_filter, key)
        columns = mapped(path, run.columns, options.mapping)
        sources = run.sources | dict(options.mapping)
        table = to_table(path, columns, run.results, sources, unit="result")
        score_names = [c for c in table.column_names if c == "score" or c.startswith("score_")]
        return Source(
            (path,),
            table,
            tuple(run.notes),
            _scores(table, score_names),
            tool=kind,
            sources=sources,
            lines=array("q", run.results),
            unit="result",
        )
    files = parquet_files(path) if kind == "parquet" else (path,)
    notes += _partition_notes(path, files)
    if kind == "parquet" and not options.mapping and not _ragas_parquet(files[0]):
        return Source(files, None, tuple(notes))
    if kind == "arrow" and not options.mapping:
        table = arrow_table(path)
        if not looks_like_ragas(table.column_names):  # typed as a Parquet log's columns
            return Source(files, table)
    rows = _row_format(path, kind)
    columns, lines = _rows(path, rows)
    columns = mapped(path, columns, options.mapping)
    refuse_promptfoo_table(path, columns)
    derived = derived_table_problem(path, columns)
    if derived is not None:  # before its columns are read in the contract's types
        raise InputError(derived)
    sources = dict(options.mapping)  # a run-log column -> the file's column, for messages
    ragas = kind == "ragas" or looks_like_ragas(list(columns))
    if ragas:
        columns, notes, sources = ragas_columns(path, columns, lines, sources)
    table = to_table(path, columns, lines, sources, delimited=rows in ("csv", "tsv"))
    table = narrowed(table, _narrow_columns(path, rows), sources)
    scores = _ragas_scores(table) if ragas else ()
    others = tuple(s for s in scores if s not in BY_NAME)  # ragas_columns noted the run log's
    notes = [*notes, *failed_scores(table, others)]
    tool = "ragas" if ragas else None
    at = None if lines is None else array("q", lines)  # 8 bytes a row, kept for messages
    return Source(files, table, tuple(notes), scores, tool=tool, sources=sources, lines=at)


def _narrow_columns(path: Path, rows: str) -> frozenset[str]:
    """The columns a Parquet or Arrow file read row by row holds as float32 (narrow_floats)."""
    if rows == "parquet":
        return narrow_floats(pq.read_schema(f) for f in parquet_files(path))
    if rows == "arrow":
        return narrow_floats([arrow_table(path).schema])
    return frozenset()


def _ragas_scores(table: pa.Table) -> tuple[str, ...]:
    """The score columns of a RAGAS table: those outside the run log, and the run-log columns
    RAGAS fills that no metric of the report reads (answer_relevance)."""
    return _scores(table, [c for c in table.column_names if c not in BY_NAME or c in OFFERED])


def _scores(table: pa.Table, names: list[str]) -> tuple[str, ...]:
    """The columns of ``names`` that hold numbers or booleans, or no value in any row (a metric
    that failed on every row): the scores a tool wrote."""
    kinds = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean, pa.types.is_null)
    return tuple(n for n in names if any(kind(table.schema.field(n).type) for kind in kinds))


def _ragas_parquet(path: Path) -> bool:
    try:
        return looks_like_ragas(pq.read_schema(path).names)
    except (pa.ArrowInvalid, OSError):
        return False  # not Parquet: opening it says so
