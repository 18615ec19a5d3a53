"""Passage tables: where each passage of a run lies in its document.

A run cut into passages its own way logs passage ids (retrieved_ids, context_ids); with its
passage table (``--passages``: passage_id, doc_id, start, end, character offsets with end
exclusive) those ids become retrieved_spans and context_spans, ranked alike, so the run is
scored against span labels (relevant_spans) without spans in its log, and two runs cut
differently are compared on the same labels.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyarrow import csv

from ...errors import InputError, not_a_file
from ...formatting import agreeing, bidi_isolated, fmt_count, fmt_listed, row_named
from ...resources import query_text
from ..contract import BY_NAME, integer_problem, type_problem
from ..engine import connection
from .columns import place
from .compressed import refuse_gzip
from .tabular import field_count_error, one_field, record_line

COLUMNS = {"passage_id": pa.string(), "doc_id": pa.string(), "start": pa.int64(), "end": pa.int64()}
ID_LISTS = {"retrieved_ids": "retrieved_spans", "context_ids": "context_spans"}
LISTED = 5  # labelled documents named in a note; the rest are counted
DELIMITERS = {".csv": ",", ".tsv": "\t"}  # a passage table read as text, by its name
_PROBLEMS = {
    "missing": "has no {column}; give every passage its passage_id, doc_id, start and end",
    "negative": "has {column} {value} below 0; offsets count characters from 0",
    "empty": "has start {value} >= end; a passage spans at least one character (end exclusive)",
    "repeated": "repeats passage_id {value!r}; give each passage one row",
}


def read_passages(path: Path) -> pa.Table:
    """The passage table at ``path`` (Parquet, CSV or TSV), checked: every column present and
    readable, every offset 0 or more with start < end, each passage_id once."""
    if not path.is_file():
        raise InputError(f"{path}: {not_a_file(path)}; pass a passage table with --passages")
    refuse_gzip(path)
    delimiter = DELIMITERS.get(path.suffix.lower())
    invalid: list[csv.InvalidRow] = []  # the row whose number of fields is not the header's

    def refuse(row: csv.InvalidRow) -> str:
        invalid.append(row)
        return "error"

    try:
        if delimiter is not None:
            options = csv.ParseOptions(delimiter=delimiter, invalid_row_handler=refuse)
            # every column as text: "007" is not 7, and offsets are parsed exactly below
            text = dict.fromkeys(COLUMNS, pa.string())
            convert = csv.ConvertOptions(column_types=text, strings_can_be_null=True)  # "": missing
            # one thread: a row is numbered only when the file is read in order
            table = csv.read_csv(
                path,
                read_options=csv.ReadOptions(use_threads=False),
                parse_options=options,
                convert_options=convert,
            )
        else:
            table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        if invalid and delimiter is not None:
            row = invalid[0]  # numbered from the header, row 1
            where = _where(path, row.number - 1)
            fields, header = row.actual_columns, row.expected_columns
            raise field_count_error(path, where, fields, header, delimiter) from None
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(
            f"{path}: not a readable passage table ({reason}); write it as Parquet, CSV or TSV "
            f"with the columns {', '.join(COLUMNS)}"
        ) from None
    if delimiter is not None:
        one_field(path, table.column_names, delimiter, formats=False)
    missing = [name for name in COLUMNS if name not in table.column_names]
    if missing:
        raise InputError(
            f"{path}: no column {', '.join(missing)}; a passage table has the columns "
            f"{', '.join(COLUMNS)}"
        )
    for name in ("start", "end"):  # offsets as text: every cell of a CSV, or a Parquet column
        column = table[name].combine_chunks()
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            offsets = _text_offsets(path, name, column)
            table = table.set_column(table.column_names.index(name), name, offsets)
    columns = {}
    for name, arrow_type in COLUMNS.items():
        offsets = arrow_type == pa.int64()
        found = integer_problem(table[name].combine_chunks()) if offsets else None
        if found is not None:
            raise InputError(
                f"{path}: {_where(path, found[0] + 1)} has {name} {found[1]}; offsets count whole "
                "characters (read as they are, never rounded): fix the value in the table"
            )
        try:
            columns[name] = table[name].cast(arrow_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            kind = "integers" if arrow_type == pa.int64() else "text"
            raise InputError(
                f"{path}: column {name} has type {table[name].type}; expected {kind}"
            ) from None
    passages = pa.table(columns)
    found = _query(path, "passage_problems", passages=passages).to_pylist()
    if found:
        row, problem, column, value = found[0].values()
        detail = _PROBLEMS[problem].format(column=column, value=value)
        raise InputError(f"{path}: {_where(path, row)} {detail}")
    return passages


def _where(path: Path, row: int) -> str:
    """The 1-based data ``row`` as a message names it: by its line in a CSV or TSV table (the
    line an editor shows; row 3 is line 4 under the header), by its row in a Parquet one."""
    delimiter = DELIMITERS.get(path.suffix.lower())
    line = None if delimiter is None else record_line(path, row, delimiter)
    return f"row {row}" if line is None else f"line {line}"


def _text_offsets(path: Path, name: str, text: pa.Array) -> pa.Array:
    """A CSV column of offsets, read as text, as exact integers: read as numbers, one row
    written 200.0 made the column floats and rounded 9007199254740993 to its neighbour. Plain
    digits are cast at once; any other cell (200.0, 1e3) is read as a decimal, exactly."""
    plain = pc.fill_null(pc.match_substring_regex(text, r"^\s*-?[0-9]+\s*$"), True)
    if pc.all(plain).as_py():
        try:
            return pc.utf8_trim_whitespace(text).cast(pa.int64())
        except pa.ArrowInvalid:
            pass  # beyond 2**63 - 1: named below
    values: list[int | None] = []
    for row, cell in enumerate(text.to_pylist(), start=1):
        if cell is None:
            values.append(None)  # a missing value, named by the table's checks
            continue
        number = _decimal(cell)
        if number is None:
            problem = "not a number"
        elif not number.is_finite():
            problem = "not a finite number"  # as a Parquet table's inf reads
        elif number != number.to_integral_value():
            problem = "not a whole number"
        elif abs(number) >= 2**63:
            problem = "beyond 2**63 - 1, the largest integer read"
        else:
            values.append(int(number))
            continue
        raise InputError(
            f"{path}: {_where(path, row)} has {name} {cell.strip()}, {problem}; offsets count "
            "whole characters (read as they are, never rounded): fix the value in the table"
        )
    return pa.array(values, pa.int64())


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text.strip())
    except InvalidOperation:
        return None


def _query(source: Path, name: str, **views: pa.Table) -> pa.Table:
    """The result of queries/<name>.sql over ``views`` (the passage table, the log's rows or its
    labels), read from ``source``."""
    with connection(source) as con:
        for view, table in views.items():
            con.register(view, table)
        return con.sql(query_text(name)).to_arrow_table()


def passage_spans(
    path: Path,
    table: pa.Table,
    passages: pa.Table,
    passages_path: Path,
    lines: Sequence[int] | None = None,
    unit: str = "line",
) -> tuple[pa.Table, list[str]]:
    """``table`` (a run log) with retrieved_spans and context_spans from its id lists; and a note
    naming the labelled documents the passage table lacks, whose labels no passage of this run
    can cover. InputError naming the row (by its ``lines``, Source.lines) for a passage id the
    table lacks."""
    present = {ids: spans for ids, spans in ID_LISTS.items() if ids in table.column_names}
    given = [spans for spans in ID_LISTS.values() if spans in table.column_names]
    if given or not present:
        raise InputError(
            f"{path}: --passages maps retrieved_ids and context_ids to spans, and this log has "
            + (
                f"{given[0]} already; for a table of another log alone, write that log with its "
                "spans first (ragreport convert LOG --passages TABLE -o LOG.parquet) and compare "
                "without --passages"
                if given
                else "neither of them"
            )
        )
    log = pa.table(
        {
            "row_number": pa.array(np.arange(1, table.num_rows + 1)),
            **{ids: _strings(table[ids]) if ids in present else _nulls(table) for ids in ID_LISTS},
        }
    )
    unknown = _query(path, "passage_unknown", passages=passages, log=log).to_pylist()
    if unknown:
        row, column, passage = unknown[0].values()
        ids = table["question_id"] if "question_id" in table.column_names else None
        question = None if ids is None else ids[row - 1].as_py()
        where = row_named(
            row, question, None if lines is None else place(lines, row - 1, unit=unit)
        )
        raise InputError(
            f"{path}: {where}: {column} has passage {passage!r}, which {passages_path} does not "
            "list; add it to the passage table or pass the table of this run"
        )
    spans = _query(path, "passage_spans", passages=passages, log=log)
    for name in present.values():
        table = table.append_column(name, spans[name])
    return table, _unreachable_labels(path, table, passages, passages_path)


def _strings(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """An id list column as list<string> (ids logged as integers are accepted)."""
    return column.cast(pa.list_(pa.string()))


def _nulls(table: pa.Table) -> pa.Array:
    return pa.nulls(table.num_rows, pa.list_(pa.string()))


def _near_documents(unknown: list[str], table: list[str]) -> str:
    """The clause on labelled documents the table names but for spaces around the id or the
    Unicode form of its letters (NFD, as macOS writes file names, against NFC): the note's
    names read as the table's; "" when none is so."""
    for form, why in (
        (lambda doc: doc.strip(), "spaces around it"),
        (lambda doc: unicodedata.normalize("NFC", doc), "the Unicode form of its letters"),
    ):
        near = {form(doc): doc for doc in table}
        found = [(doc, near[form(doc)]) for doc in unknown if form(doc) in near]
        if found:
            label, listed = found[0]
            return (
                f"; {fmt_count(len(found), 'of them', 'of them')} "
                f"{agreeing(len(found), 'differs', 'differ')} from a document of the table only "
                f"in {why} ({label!r} against {listed!r}): write the doc_id alike in both"
            )
    return ""


def _unreachable_labels(
    path: Path, table: pa.Table, passages: pa.Table, passages_path: Path
) -> list[str]:
    """Notes on labels no passage of the table can reach: of a document it lacks (a misspelt
    doc_id), past the end of the last passage of their document (offsets of another version
    of it, or of bytes rather than characters), or in a gap between its passages (text the
    chunker put in no passage). Labels of grade > 0 only (no grade is 1): one of grade 0 is
    dropped before anything is measured, so that no passage reaches it changes nothing."""
    column = table["relevant_spans"] if "relevant_spans" in table.column_names else None
    if column is None or type_problem(BY_NAME["relevant_spans"], column.type) is not None:
        return []  # no labels, or labels the log's checks refuse, naming the column
    spans = pc.list_flatten(column)
    if not len(spans):  # list<null> too: every list empty or null
        return []
    # a document id as the table's ids are read: text (polars writes large_string, and an id
    # logged as an integer is accepted); the offsets as logged, checked with the log
    labels = pa.table(
        {
            "doc_id": pc.struct_field(spans, "doc_id").cast(pa.string()),
            "start": pc.struct_field(spans, "start"),
            "end": pc.struct_field(spans, "end"),
        }
    )
    measured = pc.is_valid(labels["doc_id"])
    if spans.type.get_field_index("grade") >= 0:
        graded = pc.greater(pc.struct_field(spans, "grade"), 0)
        measured = pc.and_(measured, pc.fill_null(graded, True))
    labels = labels.filter(measured).group_by(["doc_id", "start", "end"])
    labels = labels.aggregate([])
    known = passages.group_by("doc_id").aggregate([("end", "max")])
    placed = labels.join(known, "doc_id", join_type="left outer")
    unknown = sorted(set(placed.filter(pc.is_null(placed["end_max"]))["doc_id"].to_pylist()))
    past = placed.filter(pc.greater_equal(placed["start"], placed["end_max"]))
    past = past.sort_by([("doc_id", "ascending"), ("start", "ascending")]).to_pylist()
    notes = []
    if unknown:
        shown = [repr(doc) for doc in unknown]  # quoted: 'd1' beside the table's 'd1 ' shows
        notes.append(
            f"{fmt_count(len(unknown), 'labelled document')} "
            f"{agreeing(len(unknown), 'appears', 'appear')} in no passage of "
            f"{passages_path.name}, so no passage of this run can cover "
            f"{agreeing(len(unknown), 'its', 'their')} labels: {fmt_listed(shown, LISTED)}"
            + _near_documents(unknown, known["doc_id"].to_pylist())
        )
    if past:
        shown = [f"{bidi_isolated(p['doc_id'])} [{p['start']}, {p['end']})" for p in past]
        notes.append(
            f"{fmt_count(len(past), 'label')} {agreeing(len(past), 'starts', 'start')} past the "
            f"last passage of {agreeing(len(past), 'its', 'their')} document in "
            f"{passages_path.name}, so no passage of this run can cover "
            f"{agreeing(len(past), 'it', 'them')}: {fmt_listed(shown, LISTED)}; check that the "
            "labels and the table count characters of the same version of each document"
        )
    gaps = _query(path, "passage_gaps", passages=passages, labels=labels).to_pylist()
    if gaps:
        shown = [f"{bidi_isolated(g['doc_id'])} [{g['start']}, {g['end']})" for g in gaps]
        notes.append(
            f"{fmt_count(len(gaps), 'label')} {agreeing(len(gaps), 'lies', 'lie')} in a gap "
            f"between the passages of {agreeing(len(gaps), 'its', 'their')} document in "
            f"{passages_path.name} (or before the first), so no passage of this run can cover "
            f"{agreeing(len(gaps), 'it', 'them')}: {fmt_listed(shown, LISTED)}; the chunker "
            "put that text in no passage"
        )
    return notes
