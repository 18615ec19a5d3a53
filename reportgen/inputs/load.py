"""Open a run log: check it is a Parquet file whose columns follow the contract.

Only the file's footer is read here (schema and row count); rows are read by DuckDB later.
"""

from __future__ import annotations

import dataclasses
import decimal
import hashlib
import json
import math
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import InputError
from ..formatting import fmt_count, row_named
from .contract import (
    BY_NAME,
    FALSE_WORDS,
    KEY_COLUMNS,
    TRUE_WORDS,
    derived_table_problem,
    flag_problem,
    float_key,
    integer_problem,
    is_list_type,
    is_text,
    key_problem,
    logged_flag,
    pairing_problems,
    type_problem,
    wide_number,
)
from .readers import ReadOptions, parquet_file, read
from .scored_table import ScoredTable, scored_table


@dataclass(frozen=True)
class RunFile:
    """One run log as given on the command line."""

    label: str
    path: Path
    sha256: str
    size_bytes: int
    n_rows: int
    columns: frozenset[str]  # every column of the file, contract or not
    table: pa.Table | None = None  # the log as read from another format; None: Parquet files
    files: tuple[Path, ...] = ()  # Parquet shards read together (a folder or a glob)
    shard_rows: tuple[int, ...] = ()  # the rows of each of ``files``, for messages
    # the columns some shards lack, each with its refusal (load.patchy_columns)
    patchy: Mapping[str, str] = dataclasses.field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what the reader of another format did, for the report
    read: ReadOptions = ReadOptions()  # how it was read, recorded so a report can be re-run
    scores: tuple[str, ...] = ()  # score columns its tool wrote (RAGAS, promptfoo)
    qrels_sha256: str | None = None  # of the --qrels file a TREC or BEIR run was judged by
    # of a log convert wrote from one read with --qrels: the --rel-level its labels were read
    # with (its Parquet metadata, RATED_KEY), which the report states as it states the original's
    rated_at: int | None = None
    # its passage table (--passages), every passage of its cutting, retrieved or not: the audit
    # judges a label across a cut on these rather than on the passages its rankings hold
    passages: pa.Table | None = None
    tool: str | None = None  # the tool that wrote it: ragas, promptfoo, trec, beir; None: a log
    # for messages (Source): the file's name of a column read from another, where each row is
    sources: Mapping[str, str] = dataclasses.field(default_factory=dict)
    lines: Sequence[int] | None = None
    unit: str = "line"
    # the per-question table ragreport metrics wrote, read in place of the log; ``columns``,
    # ``tool`` and ``scores`` are then the log's, as the table records them
    scored: ScoredTable | None = None

    @property
    def shards(self) -> tuple[tuple[str, int], ...]:
        """Each shard's name (under the folder given, else as found) and rows, so that a
        message names the shard of a row: rows are numbered across the shards."""
        if len(self.shard_rows) != len(self.files):  # not read as shards here
            return ()
        names = [f.relative_to(self.path) if self.path.is_dir() else f for f in self.files]
        return tuple(zip(map(str, names), self.shard_rows, strict=True))

    @property
    def rel_level(self) -> int | None:
        """The lowest grade judged relevant (--rel-level) in the qrels the run's labels were read
        from, as a table records it of its log; None when its labels are its own (or a table
        written before the level was recorded)."""
        if self.scored is not None:
            return self.scored.logged.rel_level
        return self.read.rel_level if self.read.qrels is not None else self.rated_at


# Parquet key-value metadata ``convert`` writes: the score columns the log's evaluation tool
# wrote (RAGAS, promptfoo), so the converted log compares them as the original does, and the
# reader's notes (promptfoo's results that ended in an error), so its report says them too.
SCORES_KEY = b"ragreport:scores"
NOTES_KEY = b"ragreport:notes"
RATED_KEY = b"ragreport:rel_level"  # the --rel-level of the qrels its labels were read from


def with_reading(table: pa.Table, run: RunFile) -> pa.Table:
    """``table`` with what was read of ``run`` beside its columns, its scores and notes and the
    --rel-level its labels were read with, recorded in its schema's metadata (for a converted
    log)."""
    recorded = {SCORES_KEY: list(run.scores), NOTES_KEY: list(run.notes), RATED_KEY: run.rel_level}
    return table.replace_schema_metadata(
        {**(table.schema.metadata or {})}
        | {key: json.dumps(value).encode() for key, value in recorded.items() if value}
    )


def _rated_at(schema: pa.Schema) -> int | None:
    """The --rel-level with_reading recorded in a Parquet log; None where it recorded none, or
    the metadata is not a whole grade of 1 or more (a file another tool wrote)."""
    try:
        level = json.loads((schema.metadata or {}).get(RATED_KEY) or "null")
    except ValueError:
        return None
    return level if type(level) is int and level >= 1 else None


def _recorded(schema: pa.Schema, key: bytes) -> tuple[str, ...]:
    """The texts ``with_reading`` recorded under ``key`` in a Parquet log; none where the
    metadata is not a list of texts (a file another tool wrote under the same key)."""
    text = (schema.metadata or {}).get(key)
    try:
        texts = json.loads(text) if text else []
    except ValueError:
        return ()
    if not isinstance(texts, list):
        return ()
    return tuple(t for t in texts if isinstance(t, str))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def name_problems(path: Path, names: list[str]) -> list[str]:
    """Two columns whose names differ at most in case: SQL cannot tell them apart."""
    seen: dict[str, str] = {}
    problems = []
    for name in names:
        other = seen.get(name.lower())
        if other is None:
            seen[name.lower()] = name
        elif other == name:
            problems.append(f"{path}: column {name!r} appears twice; keep one of them")
        else:
            problems.append(
                f"{path}: columns {other!r} and {name!r} differ only in case; rename one"
            )
    return problems


def case_problems(path: Path, names: list[str]) -> list[str]:
    """A run-log column written in another case ("Correct"), or with characters that do not
    show around it (a zero-width space, a second byte-order mark, a space), which SQL would
    read as an extra column: refused, where the report would go on without it and say nothing
    (or refuse the log for "no question_id column", which its header plainly showed)."""
    problems = []
    for name in names:
        plain = _plain(name)
        if name in BY_NAME or plain not in BY_NAME or plain in names:
            continue
        if plain == name.lower():
            problems.append(
                f"{path}: column {name!r} is the run-log column {plain!r} in another case and "
                f"would not be read; rename it, or map it with --map {plain}={name}"
            )
        else:
            problems.append(
                f"{path}: column {name!r} is the run-log column {plain!r} with characters that "
                "do not show (or spaces) in its name and would not be read; rename it "
                f"{plain!r}"
            )
    return problems


def _plain(name: str) -> str:
    """A column name as it shows: without format characters (zero-width spaces, byte-order
    marks) or the spaces around it, in lower case."""
    return "".join(c for c in name if unicodedata.category(c) != "Cf").strip().lower()


def schema_problems(path: Path, schema: pa.Schema) -> list[str]:
    """Every breach of the contract visible in the schema, one line each, in column order."""
    derived = derived_table_problem(path, schema.names, schema.metadata)
    if derived is not None:
        return [derived]
    problems = name_problems(path, schema.names)
    problems += case_problems(path, schema.names)
    problems += pairing_problems(path, schema.names)
    if "question_id" not in schema.names:
        problems.append(
            f"{path}: no question_id column; every run log needs one row per question "
            "with a unique question_id"
        )
    for field in schema:
        column = BY_NAME.get(field.name)
        problem = column and type_problem(column, field.type)
        if problem:
            # question_id a log cannot go without; without its sample column a log of samples
            # repeats every question, so neither is to be dropped
            fix = (
                "convert it to text or whole numbers"
                if field.name in KEY_COLUMNS
                else "convert it or drop the column"
            )
            problems.append(f"{path}: column {field.name} {problem}; {fix}")
    return problems


def _wide_integers(schema: pa.Schema) -> dict[str, list[str]]:
    """Column -> where its integers are logged as floats or uint64 (see
    contract.integer_problem): the offset and grade fields of a span column, or "" for the
    items of ``relevant_grades`` (pandas writes whole-number grades as floats). The common
    int64 needs no look at the values."""
    wide = {}
    for field in schema:
        column = BY_NAME.get(field.name)
        if column is None or not is_list_type(field.type):
            continue
        item = field.type.value_type
        if field.name == "relevant_grades" and wide_number(item):
            wide[field.name] = [""]
        if not pa.types.is_struct(item):
            continue  # not a span column, or one of nulls only
        found = [
            name
            for name in column.fields
            if name != "doc_id"  # an id, read as text
            and item.get_field_index(name) >= 0
            and wide_number(item.field(name).type)
        ]
        if found:
            wide[field.name] = found
    return wide


def _float_keys(schema: pa.Schema) -> list[str]:
    """question_id and the sample column where logged as floats or decimals (contract._key)."""
    return [field.name for field in schema if field.name in KEY_COLUMNS and float_key(field.type)]


def _logged_flags(schema: pa.Schema) -> list[str]:
    """The true/false columns of ``schema`` logged as numbers or text (contract.logged_flag)."""
    return [
        field.name
        for field in schema
        if field.name in BY_NAME and logged_flag(BY_NAME[field.name], field.type)
    ]


def check_values(path: Path, schema: pa.Schema, read: Callable[[list[str]], pa.Table]) -> None:
    """Raise InputError naming the row of the first value whose type the contract accepts but
    whose value it does not (see value_problems)."""
    problems = value_problems(path, schema, read)
    if problems:
        raise InputError(problems[0])


def value_problems(
    path: Path, schema: pa.Schema, read: Callable[[list[str]], pa.Table]
) -> list[str]:
    """The first value of each column (and span field) whose type the contract accepts but
    whose value it does not, in row order: a span offset or a grade that is not an integer of
    the range read (2.7, 0.4, 1e30), a true/false column's number that is not 1 or 0 (0.5, 2)
    or text that spells neither (maybe, 0.5), a question_id or sample logged as floats that is
    not a whole number (1.5, NaN).
    ``read`` gives the named columns of the log; only a log with such columns is read here."""
    wide, flags, keys = _wide_integers(schema), _logged_flags(schema), _float_keys(schema)
    if not wide and not flags and not keys:
        return []
    table = read(list(dict.fromkeys(["question_id", *wide, *flags, *keys])))
    found: list[tuple[int, str, str]] = []  # (row, what, what to do)
    for name in keys:
        bad = key_problem(table[name].combine_chunks())
        if bad is not None:
            found.append((bad[0], f"{name} has {bad[1]}", _KEY_FIX))
    for name, fields in wide.items():
        lists = table[name].combine_chunks()
        items, parents = pc.list_flatten(lists), pc.list_parent_indices(lists)
        for field in fields:
            bad = integer_problem(pc.struct_field(items, field) if field else items)
            if bad is not None:
                what = f"{name} has {field or 'a grade of'} {bad[1]}"
                found.append((parents[bad[0]].as_py(), what, _INTEGER_FIX))
    for name in flags:
        values = table[name].combine_chunks()
        bad = flag_problem(values)
        if bad is not None:
            fix = _TEXT_FLAG_FIX if is_text(values.type) else _FLAG_FIX
            found.append((bad[0], f"{name} has {bad[1]}", fix))
    return [
        f"{path}: {row_named(row + 1, _as_read(table['question_id'][row].as_py()))}: {what}; {fix}"
        for row, what, fix in sorted(found, key=lambda item: item[0])
    ]


def _as_read(question_id: object) -> object:
    """A logged question_id as the report names it: a whole float or decimal as its integer
    (7.0 is '7'), another as its text (1.5, not Decimal('1.5'))."""
    if isinstance(question_id, float | decimal.Decimal):
        whole = math.isfinite(question_id) and question_id == int(question_id)
        return str(int(question_id)) if whole else str(question_id)
    return question_id


def run_value_problems(run: RunFile) -> list[str]:
    """value_problems of a log opened without them (``open_log(..., values=False)``): of its
    table, or of each Parquet file, rows numbered within the file as when it is opened."""
    if run.table is not None:
        return value_problems(run.path, run.table.schema, run.table.select)
    problems = []
    for file in run.files or (run.path,):
        parquet = parquet_file(file)
        problems += value_problems(file, parquet.schema_arrow, _columns_of(parquet))
    return problems


def _columns_of(parquet: pq.ParquetFile) -> Callable[[list[str]], pa.Table]:
    return lambda names: parquet.read(columns=names)


_KEY_FIX = "an id is text or a whole number: fix the value, or write the column as text"
_INTEGER_FIX = (
    "offsets and grades are integers (read as they are, never rounded): fix the value in the log"
)
_FLAG_FIX = (
    "a true/false column logged as numbers holds 1 (true) or 0 (false): fix the value in the log"
)
_TEXT_FLAG_FIX = (
    f"a true/false column logged as text holds {'/'.join(TRUE_WORDS)} (true) or "
    f"{'/'.join(FALSE_WORDS)} (false), in any case: fix the value in the log"
)


def open_run(path: Path, label: str, values: bool = True) -> RunFile:
    """Check ``path`` against the contract and describe it; raise InputError on any breach
    (``values``: of its values too, else of its schema only)."""
    parquet = parquet_file(path)
    schema = parquet.schema_arrow
    check_schema(path, schema)
    if values:
        check_values(path, schema, _columns_of(parquet))
    return RunFile(
        label=label,
        path=path,
        sha256=sha256_of(path),
        size_bytes=path.stat().st_size,
        n_rows=parquet.metadata.num_rows,
        columns=frozenset(schema.names),
        notes=_recorded(schema, NOTES_KEY),
        rated_at=_rated_at(schema),
        scores=tuple(n for n in _recorded(schema, SCORES_KEY) if n in schema.names),
    )


class SchemaError(InputError):
    """A log's schema breaks the contract: the message is the first breach, ``problems`` all of
    them (validate lists every one, whatever the format the log was read from)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(problems[0])
        self.problems = problems


def check_schema(path: Path, schema: pa.Schema) -> None:
    """Raise SchemaError when ``schema`` breaks the contract."""
    problems = schema_problems(path, schema)
    if problems:
        raise SchemaError(problems)


def table_path(label: str) -> Path:
    """The path a log handed over in memory is named by in messages and the report: ``<label>``."""
    return Path(f"<{label}>")


def open_table(table: pa.Table, label: str) -> RunFile:
    """A log handed over in memory (a DataFrame or an Arrow table, from Python), checked like a
    file. Messages name it ``table_path(label)``; its sha256 is that of its Arrow IPC stream,
    batch by batch, so the same table gives the same digest."""
    where = table_path(label)
    check_schema(where, table.schema)
    check_values(where, table.schema, table.select)
    digest = hashlib.sha256(table.schema.serialize().to_pybytes())
    for batch in table.to_batches():
        digest.update(batch.serialize())
    return RunFile(
        label=label,
        path=where,
        sha256=digest.hexdigest(),
        size_bytes=table.nbytes,
        n_rows=table.num_rows,
        columns=frozenset(table.column_names),
        table=table,
        notes=("handed over in memory, not read from a file.",),  # prefixed with its run
    )


Source = Path | RunFile  # a log to open, or one opened already (a table from memory)


def open_source(source: Source, label: str, options: ReadOptions) -> RunFile:
    """``source`` opened as run ``label``: a path is read and checked, a RunFile relabelled;
    one with no rows is refused (with_rows)."""
    if isinstance(source, RunFile):
        return with_rows(replace(source, label=label))
    scored = scored_table(source)
    if scored is not None:
        return with_rows(open_scored(source, label, scored, options))
    return with_rows(open_log(source, label, options))


def open_scored(path: Path, label: str, scored: ScoredTable, options: ReadOptions) -> RunFile:
    """A per-question table of ``ragreport metrics`` as run ``label``; only the run log's own
    reading options refuse it (the table was read from the log with them already)."""
    given = [
        flag
        for flag, value in (
            ("--format", options.format not in (None, "parquet")),
            ("--qrels", options.qrels),
            ("--rel-level", options.rel_level != ReadOptions.rel_level),
            ("--map", options.mapping),
            ("--run-filter", options.run_filter),
            ("--passages", options.passages),
        )
        if value
    ]
    if given:
        raise InputError(
            f"{path}: is a table of per-question metrics (as ragreport metrics writes it), read "
            f"as written; {given[0]} applies to run logs: give it to ragreport metrics with the "
            "log, or drop it"
        )
    return RunFile(
        label=label,
        path=path,
        sha256=files_sha256({file.name: sha256_of(file) for file in scored.files}),
        size_bytes=sum(file.stat().st_size for file in scored.files),
        n_rows=scored.table.num_rows,
        columns=frozenset(scored.logged.columns),
        notes=scored.logged.notes,
        scores=scored.logged.scores,
        tool=scored.logged.tool,
        scored=scored,
    )


def with_rows(run: RunFile) -> RunFile:
    """``run``, refused when it has no row: every check after would name something else ("no
    question_id in common", a --k it cannot cut). ``metrics`` takes one: a shard of questions
    may be empty."""
    if run.n_rows == 0:
        raise InputError(
            f"{run.path}: the log has no rows; write one row per question (an export that "
            "failed, or a filter that kept nothing, writes none)"
        )
    return run


def source_path(source: Source) -> Path:
    """The path messages name a log by: its file, or ``<label>`` for a table from memory."""
    return source.path if isinstance(source, RunFile) else source


def source_stem(source: Source) -> str:
    """The default label of a log: its file's stem, or the label a table was opened with."""
    return source.label if isinstance(source, RunFile) else source.stem


def files_sha256(hashes: dict[str, str]) -> str:
    """The sha256 of a log's files, each by the name its line gives it (digest_names): the
    file's own for one file; for several, that of the lines "<sha256>  <name>" (as sha256sum
    prints them), in order."""
    if len(hashes) == 1:
        return next(iter(hashes.values()))
    digest = hashlib.sha256()
    for name, sha256 in hashes.items():
        digest.update(f"{sha256}  {name}\n".encode())
    return digest.hexdigest()


def digest_names(files: tuple[Path, ...], options: ReadOptions) -> dict[Path, str]:
    """The name each file of a log goes by in its sha256 (files_sha256): a shard its file name
    (the shards' order by name is the order of the rows), the one file of a log "log", and the
    files given with --qrels and --passages their option. So a log renamed or moved keeps its
    sha256, and ``verify`` finds it the log the report read."""
    given = {options.qrels: "--qrels", options.passages: "--passages"}
    own = [file for file in files if file not in given]
    return {file: given.get(file) or (file.name if len(own) > 1 else "log") for file in files}


@dataclass(frozen=True)
class Shape:
    """What the check of a log's shards reads of each: its path, rows and columns."""

    path: Path
    n_rows: int
    columns: frozenset[str]


def patchy_columns(path: str | Path, shards: Sequence[Shape]) -> dict[str, str]:
    """Each column some shards of the log ``path`` with rows have and another lacks, with the
    refusal that names them: DuckDB reads the shards by name, so the rows of the one lacking it
    have no value there (correct missing from one shard of four: the verdict over 15,000
    questions of 20,000, without a word). A shard without rows adds none, whatever its
    columns."""
    filled = [shard for shard in shards if shard.n_rows]
    patchy = {}
    for column in sorted(frozenset().union(*(shard.columns for shard in filled))):
        lacking = next((s for s in filled if column not in s.columns), None)
        if lacking is not None:
            other = next(s for s in filled if column in s.columns)
            patchy[column] = (
                f"{lacking.path}: no column {column!r}, which {other.path.name}, another shard "
                f"of {path}, has: its {fmt_count(lacking.n_rows, 'row')} would have no value "
                "there; write the column in every shard (null where a value is unknown)"
            )
    return patchy


def mixed_keys(path: str | Path, files: Sequence[Path]) -> str | None:
    """The refusal of a log whose shards hold question_id or sample as floats in one and as
    text in another, else None: DuckDB reads the shards as one table of text, where the
    float's 7 reads 7.0 and pairs with no question (the floats alone are read as integers)."""
    for name in KEY_COLUMNS:
        kinds: dict[str, Path] = {}
        for file in files:
            schema = pq.read_schema(file)
            if name in schema.names:
                t = schema.field(name).type
                t = t.value_type if pa.types.is_dictionary(t) else t
                kind = "float" if float_key(t) else "text" if is_text(t) else "other"
                kinds.setdefault(kind, file)
        if "float" in kinds and "text" in kinds:
            return (
                f"{kinds['float']}: column {name} holds floats, which {kinds['text'].name}, "
                f"another shard of {path}, holds as text: read together, its 7.0 would pair "
                "with no '7'; write the column as text in every shard"
            )
    return None


def refuse_patchy(run: RunFile, columns: Iterable[str]) -> None:
    """Refuse ``run`` when a shard lacks one of ``columns`` that another has (patchy_columns):
    those of the contract and a tool's scores when the log is opened, those an option names
    (--metric, --slice, ...) when the options are known."""
    for column in columns:
        if column in run.patchy:
            raise InputError(run.patchy[column])


def open_log(path: Path, label: str, options: ReadOptions, values: bool = True) -> RunFile:
    """Read a run log in any format (see reportgen/readers) and check it against the contract;
    without ``values``, its schema only (``validate`` lists run_value_problems itself)."""
    source = read(path, options)
    if source.table is None and source.files == (path,):
        return replace(open_run(path, label, values), read=options)
    shards = [open_run(f, label, values) for f in source.files] if source.table is None else []
    mixed = mixed_keys(path, [s.path for s in shards if s.n_rows])
    if mixed is not None:
        raise InputError(mixed)
    patchy = patchy_columns(path, [Shape(s.path, s.n_rows, s.columns) for s in shards])
    hashes = {file: sha256_of(file) for file in source.files}
    if source.table is not None:
        check_schema(path, source.table.schema)
        if values:
            check_values(path, source.table.schema, source.table.select)
    run = RunFile(
        label=label,
        path=path,
        sha256=files_sha256(
            {name: hashes[file] for file, name in digest_names(source.files, options).items()}
        ),
        size_bytes=sum(f.stat().st_size for f in source.files),
        n_rows=source.table.num_rows if source.table is not None else sum(s.n_rows for s in shards),
        columns=frozenset(
            source.table.column_names
            if source.table is not None
            else (c for s in shards for c in s.columns)
        ),
        table=source.table,
        files=source.files if source.table is None else (),
        shard_rows=tuple(shard.n_rows for shard in shards),
        patchy=patchy,
        notes=source.notes,
        read=options,
        scores=source.scores or tuple(dict.fromkeys(c for s in shards for c in s.scores)),
        qrels_sha256=None if options.qrels is None else hashes[options.qrels],
        passages=source.passages,
        tool=source.tool,
        sources=source.sources,
        lines=source.lines,
        unit=source.unit,
    )
    refuse_patchy(run, (*BY_NAME, *run.scores))  # what every comparison reads
    return run
