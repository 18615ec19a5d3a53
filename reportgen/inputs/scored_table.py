"""A per-question table ``ragreport metrics`` wrote, read where ``compare`` takes a run log.

The table is a log already scored: one row per question with its metrics, the keys of its
golden labels, the first answer's outcome at each link of the chain (``answer_stage``), and in
its schema metadata the options it was scored with and what it records of the log
(``LoggedAs``). ``compare`` pairs two such tables as it pairs the logs' scored questions; what
only the log's rows give (question texts, worked cases, data checks, the metric-vs-k curve) the
report says it lacks.
"""

from __future__ import annotations

import glob
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import NoReturn

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import InputError
from ..formatting import row_named
from .contract import BY_NAME as CONTRACT
from .contract import LARGEST_VALUE, SCORING_KEY, type_problem
from .listing import files_under

LOG_KEY = "ragreport.log"  # what compare needs to know of the log it was scored from (LoggedAs)
SHARE = (0.0, 1.0)  # the range of every metric ragreport scores (analysis.registry's bounds)
GLOB = frozenset("*?[")  # a path holding one of these is a glob of shards
ANSWER_STAGE = "answer_stage"  # the column of each question's queries/answer_stage.sql row
# the struct column of the log's columns kept for compare's --slice and --cluster, one value a
# question (ragreport metrics --slice, --cluster); absent when none was asked for
KEPT = "kept_columns"
# the columns compare reads of every table beside its metrics (ragreport metrics writes them all)
REQUIRED = (
    *("question_id", "slice", "k", "n_relevant", "answerable", "passages"),
    *("evidence_in_context", "relevant_key", "answerable_key", "reference_key", ANSWER_STAGE),
)
# fields of the answer rows (queries/answer_stage.sql) that the diagnosis reads and tables of an
# earlier ragreport lack: without them it could not tell an assembly miss or graded evidence
ANSWER_FIELDS = (
    "evidence_ranked_for_prompt",
    "best_evidence_in_context",
    "best_evidence_in_candidates",
)
Settings = tuple[int | None, str | None, float | None]  # k, gain, span_coverage (Scoring.of)
LABEL_CHANGES = {  # the label fingerprints, named as compare names what changed
    "relevant": "relevant labels",
    "answerable": "answerable",
    "reference": "reference answer",
}


@dataclass(frozen=True)
class LoggedAs:
    """What a per-question table records of the log it was scored from, so that ``compare``
    reads the table as it would have read the log: the log's columns (what the report can
    score, and the advice on what it lacks), the tool that wrote it, the tool's score columns
    the table carries, the carried columns logged as true/false, whether a question of the
    log had more than one sample (a mean over samples of a 0/1 outcome is no 0/1 outcome), what
    its reader said of it and the warnings on the values left out of it: compare's report
    repeats them; and the --rel-level its labels were read from qrels with, so that compare
    scores every run at one level (None: the log carried its own labels, or the table was
    written before this record).
    """

    columns: tuple[str, ...]
    tool: str | None
    scores: tuple[str, ...]
    binary: tuple[str, ...]
    sampled: bool
    carried: tuple[str, ...]  # the log's own columns the table carries: its tool's scores, costs
    notes: tuple[str, ...]  # the reader's (RunFile.notes)
    left_out: tuple[str, ...]  # RowProblem.warning of each problem that left values out
    rel_level: int | None  # of the qrels the log's labels were read from (RunFile.rel_level)

    def to_json(self) -> str:
        return json.dumps({f.name: getattr(self, f.name) for f in fields(self)})


@dataclass(frozen=True)
class ScoredTable:
    """A per-question table as read: its rows, the options each metric was scored with
    (``Scoring.of`` of reportgen/analysis/scoring.py) and what it records of its log."""

    table: pa.Table
    scoring: dict[str, Settings]
    logged: LoggedAs
    files: tuple[Path, ...]  # the table's files: one, or its shards' in name order; () when
    # its log was scored in this process (``in_memory``)

    @property
    def carried(self) -> tuple[str, ...]:
        """The log's own columns the table carries (its tool's scores and costs), compared as
        the logs' would be."""
        return tuple(c for c in self.logged.carried if c in self.table.column_names)

    @property
    def scored_here(self) -> bool:
        """Whether this is a log's table made in this process (``in_memory``), not one read."""
        return not self.files

    @property
    def kept(self) -> tuple[str, ...]:
        """The log's columns kept for ``compare --slice`` and ``--cluster`` (besides slice)."""
        if KEPT not in self.table.column_names:
            return ()
        kept = self.table.schema.field(KEPT).type
        return tuple(kept.field(i).name for i in range(kept.num_fields))


def scored_table(path: Path) -> ScoredTable | None:
    """The per-question table at ``path`` (a file, or a folder or glob of the tables of a log's
    shards, in name order), or None when ``path`` is none (a run log, or no Parquet file at all:
    the log readers then say what it is)."""
    files = _files(path)
    if not _tables(files):
        return None
    parts = [_part(file, files[0]) for file in files]
    scoring: dict[str, Settings] = {}  # each metric's settings in the first shard that has it
    for part in parts:
        for metric, settings in part.scoring.items():
            scoring.setdefault(metric, settings)
    for file, part in zip(files, parts, strict=True):
        differs = first_difference(part.scoring, scoring)
        if differs is not None:
            metric, was, other = differs
            raise InputError(
                f"{file}: its {metric} was scored with {was}, and {files[0]}'s with {other}; "
                "score every shard with the same --k, --gain and --span-coverage"
            )
    tools = list(dict.fromkeys(part.logged.tool for part in parts))
    if len(tools) > 1:
        raise InputError(
            f"{path}: tables of logs written by different tools ({tools[0]}, {tools[1]}); "
            "pass the tables of one run's shards"
        )
    kept = next((part for part in parts if part.kept != parts[0].kept), None)
    if kept is not None:
        raise InputError(
            f"{kept.files[0]}: keeps {_named(kept.kept)} of its log, and {files[0]} keeps "
            f"{_named(parts[0].kept)}; score every shard with the same --slice and --cluster"
        )
    level = one_rel_level(
        [(file, part.logged.rel_level) for file, part in zip(files, parts, strict=True)],
        "score every shard at one level",
    )
    table = pa.concat_tables(_numbered(parts), promote_options="default")
    _one_row_a_question(path, table["question_id"])
    carried = [c for part in parts for c in part.logged.binary]
    logged = LoggedAs(
        columns=tuple(sorted({c for part in parts for c in part.logged.columns})),
        tool=tools[0],
        scores=tuple(dict.fromkeys(c for part in parts for c in part.logged.scores)),
        binary=tuple(  # true/false in every shard that carries it
            c
            for c in dict.fromkeys(carried)
            if all(c in part.logged.binary for part in parts if c in part.table.column_names)
        ),
        sampled=any(part.logged.sampled for part in parts),
        carried=tuple(dict.fromkeys(c for part in parts for c in part.logged.carried)),
        notes=tuple(dict.fromkeys(n for part in parts for n in part.logged.notes)),
        left_out=tuple(w for part in parts for w in part.logged.left_out),
        rel_level=level,
    )
    return ScoredTable(table, scoring, logged, files)


def is_scored_table(path: Path) -> bool:
    """Whether ``path`` holds per-question tables (its first file's metadata tells; no row is
    read)."""
    return _tables(_files(path))


def scored_with(path: Path) -> tuple[dict[str, Settings], bool] | None:
    """The options each metric of the table at ``path`` was scored with, and whether its log
    was labelled with spans, from its first file's metadata (no row is read; scored_table
    checks that its shards agree); None when ``path`` holds no table, or one whose metadata
    ``scored_table`` refuses with its reason."""
    files = _files(path)
    if not _tables(files):
        return None
    try:
        scoring, logged = _recorded(_metadata(files[0]))
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    return scoring, "relevant_spans" in logged.columns


def _tables(files: tuple[Path, ...]) -> bool:
    """Whether ``files`` are per-question tables: the first file's metadata tells."""
    return bool(files) and SCORING_KEY.encode() in _metadata(files[0])


def in_memory(table: pa.Table) -> ScoredTable:
    """The table ``ragreport metrics`` makes of a log, as it would be read from its file."""
    scoring, logged = _recorded(table.schema.metadata or {})
    return ScoredTable(table, scoring, logged, ())


def first_difference(
    scoring: dict[str, Settings], wanted: Mapping[str, Settings]
) -> tuple[str, str, str] | None:
    """The first metric of ``scoring`` scored otherwise than ``wanted`` has it, with the option
    that differs as recorded and as wanted (``_other_setting``); None when all agree."""
    for metric, recorded in scoring.items():
        differs = _other_setting(recorded, wanted[metric])
        if differs is not None:
            return metric, *differs
    return None


def _other_setting(recorded: Settings, wanted: Settings) -> tuple[str, str] | None:
    """The first option of ``recorded`` that is not ``wanted``'s, each as its flag and value
    ("--k 5", "--k unset (each question's context_ids)"); None when they agree."""
    for flag, was, other in zip(
        ("--k", "--gain", "--span-coverage"), recorded, wanted, strict=True
    ):
        if was != other:
            return option_text(flag, was), option_text(flag, other)
    return None


def option_text(flag: str, value: object) -> str:
    """A scoring option as a table records it, as the command line gives it ("--k 5")."""
    if flag == "--k" and value is None:
        return "--k unset (each question's context_ids)"
    return f"{flag} {value}"


def one_rel_level(read: list[tuple[Path, int | None]], advice: str) -> int | None:
    """The one --rel-level of the qrels that the labels of ``read`` (each file's, None where its
    labels are its own or a table does not record how) were read with; two levels are refused,
    naming a file read at each and ending with ``advice``: one relevance judged at two
    thresholds is two sets of labels under one name."""
    levels: dict[int, Path] = {}
    for file, level in read:
        if level is not None:
            levels.setdefault(level, file)
    if len(levels) > 1:
        (one, first), (two, other) = list(levels.items())[:2]
        raise InputError(
            f"{other}: its labels were read from qrels with --rel-level {two}, and {first}'s "
            f"with --rel-level {one}; {advice}"
        )
    return next(iter(levels), None)


def _named(columns: tuple[str, ...]) -> str:
    if not columns:
        return "no column"
    return f"the column{'s' if len(columns) > 1 else ''} {', '.join(columns)}"


def _numbered(parts: list[ScoredTable]) -> list[pa.Table]:
    """The shards' tables with the row numbers of their answer stages (a row of the shard's log)
    after those of the shards before: the diagnosis orders its examples by them, in file order
    across shards as a log's shards are."""
    out, offset = [], 0
    for part in parts:
        rows = pc.struct_field(part.table[ANSWER_STAGE], "row_number")
        if offset:  # the first shard, or one after shards without rows, keeps its numbers
            stage = part.table[ANSWER_STAGE].combine_chunks()
            rows = pc.add(stage.field("row_number"), offset)
            fields = [stage.type.field(i) for i in range(stage.type.num_fields)]
            arrays = [rows if f.name == "row_number" else stage.field(f.name) for f in fields]
            renumbered = pa.StructArray.from_arrays(arrays, fields=fields)
            column = part.table.schema.get_field_index(ANSWER_STAGE)
            out.append(part.table.set_column(column, ANSWER_STAGE, renumbered))
        else:
            out.append(part.table)
        if len(rows):
            offset = pc.max(rows).as_py() + 1
    return out


def _one_row_a_question(path: Path, ids: pa.ChunkedArray) -> None:
    """Refuse a question twice (a table re-saved with rows appended, or shards that overlap):
    its metrics would count twice."""
    if len(pc.unique(ids)) == len(ids):  # a quarter of count_distinct's time
        return
    counts = pc.value_counts(ids.cast(pa.string())).flatten()
    repeated = [
        v for v, n in zip(counts[0].to_pylist(), counts[1].to_pylist(), strict=True) if n > 1
    ]
    if repeated:
        raise InputError(
            f"{path}: question {repeated[0]!r} has more than one row; a table of "
            "per-question metrics has one row a question: write it again with ragreport metrics"
        )


def _files(path: Path) -> tuple[Path, ...]:
    """The Parquet files of a file, folder or glob; () when there are none."""
    if path.is_file():
        return (path,)
    if path.is_dir():
        return tuple(files_under(path, "*.parquet"))
    if GLOB & set(str(path)):
        return tuple(
            sorted(p for p in map(Path, glob.glob(str(path), recursive=True)) if p.is_file())
        )
    return ()


def _metadata(file: Path) -> dict[bytes, bytes]:
    try:
        return pq.read_schema(file).metadata or {}
    except (OSError, pa.ArrowException):
        return {}


def _part(path: Path, first: Path) -> ScoredTable:
    """One file of per-question metrics, checked (``first``: the first of its shards)."""
    metadata = _metadata(path)
    if SCORING_KEY.encode() not in metadata:
        raise InputError(
            f"{path}: not a table of per-question metrics, beside {first}, which is one; pass "
            "the tables of a run's shards alone"
        )
    if LOG_KEY.encode() not in metadata:
        raise InputError(
            f"{path}: a table of per-question metrics written by an earlier ragreport, which "
            "did not record what compare needs of its log; write it again with ragreport "
            "metrics, or pass the run log"
        )
    try:
        scoring, as_logged = _recorded(metadata)
        table = pq.read_table(path)
    except (OSError, pa.ArrowException, ValueError, KeyError, TypeError) as error:
        raise InputError(
            f"{path}: a table of per-question metrics that cannot be read ({error}); write it "
            "again with ragreport metrics"
        ) from None
    missing = [c for c in (*REQUIRED, *scoring) if c not in table.column_names]
    if missing:
        raise InputError(
            f"{path}: a table of per-question metrics without its column {missing[0]} (saved "
            "again by another tool?); write it again with ragreport metrics, or pass the run log"
        )
    answers = table.schema.field(ANSWER_STAGE).type
    fields = {answers.field(i).name for i in range(answers.num_fields)}
    if lacking := [f for f in ANSWER_FIELDS if f not in fields]:
        raise InputError(
            f"{path}: a table of per-question metrics written by an earlier ragreport, whose "
            f"answer rows lack {lacking[0]}; write it again with ragreport metrics, or pass the "
            "run log"
        )
    _check_values(path, table, scoring, as_logged.carried)
    return ScoredTable(table, scoring, as_logged, (path,))


def _check_values(
    path: Path, table: pa.Table, scoring: Mapping[str, Settings], carried: tuple[str, ...]
) -> None:
    """Refuse a value ``ragreport metrics`` does not write (a table edited by hand or another
    tool), as the contract refuses a log's, in one line naming the row: a question_id of the
    contract's types, none null or blank, and metrics that are numbers, finite and in their
    range (``carried``: the log's own columns among them, costs and its tool's scores)."""
    ids = table["question_id"]
    problem = type_problem(CONTRACT["question_id"], ids.type)
    if problem is not None:
        _refuse(path, f"column question_id {problem}")
    text = ids.cast(pa.string())
    blank = pc.or_kleene(pc.is_null(text), pc.equal(pc.utf8_trim_whitespace(text), ""))
    row = pc.index(blank, True).as_py()
    if row >= 0:
        _refuse(path, f"row {row + 1} has no question_id (null or blank)")
    for metric in scoring:
        values = table[metric]
        if pa.types.is_null(values.type):
            continue
        if not (pa.types.is_floating(values.type) or pa.types.is_integer(values.type)):
            _refuse(path, f"column {metric} has type {values.type}, expected numbers")
        doubles = values.cast(pa.float64())
        low, high = _range(metric, carried)
        outside = pc.invert(pc.and_(pc.greater_equal(doubles, low), pc.less_equal(doubles, high)))
        bad = pc.fill_null(pc.or_(pc.invert(pc.is_finite(doubles)), outside), False)
        row = pc.index(bad, True).as_py()
        if row >= 0:
            value = doubles[row].as_py()
            what = (
                "not a finite number"
                if not math.isfinite(value)
                else f"outside [{low:g}, {high:g}]"
            )
            where = row_named(row + 1, text[row].as_py())
            _refuse(path, f"{where}: {metric} is {value!r}, {what}")


def _range(metric: str, carried: tuple[str, ...]) -> tuple[float, float]:
    """The values a table's metric can take: a metric ragreport scores is a share or a 0/1
    outcome (SHARE, the range of every one the registry holds), a carried cost is 0 or more,
    a carried score of the log's tool is up to the contract's largest magnitude."""
    if metric not in carried:
        return SHARE
    return (0.0 if metric in CONTRACT else -LARGEST_VALUE), float(LARGEST_VALUE)


def _refuse(path: Path, problem: str) -> NoReturn:
    raise InputError(f"{path}: {problem}; write it again with ragreport metrics")


def _recorded(metadata: Mapping[bytes, bytes]) -> tuple[dict[str, Settings], LoggedAs]:
    """The options each metric was scored with and what the table records of its log."""
    recorded = json.loads(metadata[SCORING_KEY.encode()]).items()
    logged = json.loads(metadata[LOG_KEY.encode()])
    return {m: (v[0], v[1], v[2]) for m, v in recorded}, LoggedAs(
        columns=tuple(logged["columns"]),
        tool=logged["tool"],
        scores=tuple(logged["scores"]),
        binary=tuple(logged["binary"]),
        sampled=bool(logged["sampled"]),
        carried=tuple(logged["carried"]),
        notes=tuple(logged["notes"]),
        left_out=tuple(logged["left_out"]),
        rel_level=logged.get("rel_level"),
    )
