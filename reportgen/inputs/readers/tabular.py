"""Row formats read into plain columns: CSV, TSV and JSONL (one JSON object per line)."""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from ...errors import InputError, not_utf8
from ...formatting import fmt_count
from .columns import Columns
from .promptfoo import TABLE_EXPORT, is_table_export

# the columns and the file line of each row; None for a Parquet file, which has rows, not lines
Rows = tuple[Columns, list[int] | None]

PANDAS_INDEX = frozenset({"", "Unnamed: 0"})  # first header of to_csv with the index, re-saved
# the longest field read: Python's csv module stops at 131,072 characters, less than a long
# answer or a retrieved document logged whole; 2**31 - 1 is the most every platform takes
FIELD_LIMIT = 2**31 - 1


def record_columns(records: list[dict[str, Any]]) -> Columns:
    """Rows as objects (JSON Lines, a JSON array of records) as columns: every key of any row,
    a row without it missing there."""
    names = list(dict.fromkeys(name for record in records for name in record))
    return {name: [record.get(name) for record in records] for name in names}


def read_delimited(path: Path, delimiter: str) -> Rows:
    """A CSV or TSV file with a header line, its names without surrounding spaces; an empty cell
    is a missing value. A first column with no name (or pandas' ``Unnamed: 0``) is the index
    pandas' ``to_csv`` writes: dropped.

    Read strictly: a lenient reader takes a quote that is never closed as the start of one
    field holding the rest of the file, and the rows after it would vanish without a word.
    """
    limit = csv.field_size_limit(FIELD_LIMIT)
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    start = 1  # the first line of the row being read, for an error
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            hint = _first_line(path, handle, delimiter)
            handle.seek(0)
            if hint:  # Excel's "sep=," above the header: read past it, count it in the lines
                handle.readline()
            reader = csv.reader(handle, delimiter=delimiter, strict=True)
            # "question_id, correct" is written by hand or by spreadsheets: the names are the
            # column's, the spaces no part of it
            names = [name.strip() for name in next(reader)]
            one_field(path, names, delimiter)
            index = _header(path, names)
            start = reader.line_num + hint + 1
            for fields in reader:
                if fields:  # a blank line holds no row
                    # the line the row starts on: it ends on line_num, past the line breaks
                    # its quoted fields hold (an answer of several lines)
                    line = reader.line_num + hint - sum(map(_breaks, fields))
                    if len(fields) != len(names):
                        where = f"line {line}"
                        raise field_count_error(path, where, len(fields), len(names), delimiter)
                    record = dict(zip(names, fields, strict=True))
                    if index is not None:
                        del record[index]
                    records.append(record)
                    lines.append(line)
                start = reader.line_num + hint + 1
    except UnicodeDecodeError:
        raise InputError(not_utf8(path)) from None
    except csv.Error as exc:
        raise InputError(
            f"{path}: line {start}: not a readable text table ({exc}); check the quoting of "
            "the fields from that line (a quote opened and never closed, or text after a "
            "closing quote)"
        ) from None
    finally:
        csv.field_size_limit(limit)
    if not records:  # a log of no rows: metrics takes it as an empty shard, compare refuses it
        return {name: [] for name in names[1 if index is not None else 0 :]}, lines
    return record_columns(records), lines


def field_count_error(
    path: Path, where: str, fields: int, header: int, delimiter: str
) -> InputError:
    """The one line for the row of a CSV or TSV table (a log, a passage table) starting
    ``where`` ("line 3") whose number of ``fields`` is not the ``header``'s: with more, a comma
    or tab in a value split it; with fewer, a field was left out (a missing value is an empty
    one)."""
    more = fields > header
    split = "a tab" if delimiter == "\t" else "a comma"
    fix = (
        f"quote values that contain {split}"
        if more
        else "give every column a field, an empty one for a missing value"
    )
    return InputError(
        f"{path}: {where} has {fmt_count(fields, 'field')}, {'more' if more else 'fewer'} "
        f"than the header's {header}; {fix}"
    )


def _first_line(path: Path, handle: TextIO, delimiter: str) -> int:
    """1 when the first line is Excel's hint of the file's delimiter (``sep=,``), which is no
    header and which the reader skips; else 0. InputError for a file whose first line is no
    header: blank (the file empty, or blank lines above the header, which read as a header of
    no column), a hint of another delimiter, or a JSON object (JSON Lines under a CSV or TSV
    name, as pandas' ``to_json(lines=True)`` writes: its quotes failed the reader, or named
    columns like ``{"question_id": "q1"``)."""
    first = handle.readline()
    hinted = first.rstrip("\r\n")
    if hinted.lower().startswith("sep=") and len(hinted) == 5:
        if hinted[4] == delimiter:
            return 1
        kind = "TSV" if delimiter == "\t" else "CSV"
        raise InputError(
            f"{path}: line 1 says the fields are separated by {hinted[4]!r}, not by the "
            f"{kind}'s {delimiter!r}; save it again with {delimiter!r} (or as {kind})"
        )
    if not first.strip():
        blank = 1 + next((n for n, line in enumerate(handle) if line.strip()), -1)
        raise InputError(
            f"{path}: line {blank + 1} is the first that is not blank; start the file with "
            "the header line"
            if blank
            else f"{path}: the file is empty; write a header line, then one row per question"
        )
    if not isinstance(first_json(path), dict):
        return 0
    kind = "TSV" if delimiter == "\t" else "CSV"
    raise InputError(
        f"{path}: JSON Lines (one object a line), not {kind}; name the file .jsonl or pass "
        "--format jsonl"
    )


def first_json(path: Path) -> Any:
    """The first JSON value of the first line of ``path`` that is not blank (None when there is
    none, or it is no JSON): what tells JSON Lines (a log's or promptfoo's) from other text."""
    try:
        with path.open(encoding="utf-8-sig") as handle:
            line = next((line for line in handle if line.strip()), "")
        return json.JSONDecoder().raw_decode(line.strip())[0]
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def record_line(path: Path, row: int, delimiter: str) -> int | None:
    """The line on which the 1-based data ``row`` of a CSV or TSV file starts (blank lines
    skipped, as every reader here skips them; a record whose quoted fields hold line breaks
    named by its first line), for the message about it; None past the end. Read again only
    for that message: a table read by Arrow keeps no lines."""
    limit = csv.field_size_limit(FIELD_LIMIT)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle, delimiter=delimiter)
            records = (r for r in reader if r)  # the header first
            next(records, None)
            for n, record in enumerate(records, start=1):
                if n == row:
                    return reader.line_num - sum(map(_breaks, record))
    finally:
        csv.field_size_limit(limit)
    return None


def _breaks(value: str) -> int:
    """The line breaks in a field, as the reader counts lines (\\n, \\r\\n or \\r)."""
    return value.count("\n") + value.count("\r") - value.count("\r\n")


def one_field(path: Path, names: Sequence[str], delimiter: str, formats: bool = True) -> None:
    """InputError for a header that is one field holding semicolons: a table separated by them
    (as spreadsheets write CSV where the comma is the decimal mark), which read as one column
    named for them all, or as a row "with more fields than the header"; or, read as TSV, one
    holding commas: a CSV under a TSV name, whose one column is no question_id. ``formats``:
    the file may be given --format (a run log; not a passage table)."""
    if len(names) != 1:
        return
    if delimiter == "," and ";" in names[0]:
        raise InputError(
            f"{path}: the header is one field, {names[0]!r}: the columns are separated by "
            "semicolons; write the table with commas (to_csv's default) or as TSV"
        )
    for found, other, kind in (("\t", ",", "csv"), (",", "\t", "tsv")):
        if delimiter == found and other in names[0]:
            separator, given = ("commas", "tabs") if kind == "csv" else ("tabs", "commas")
            raise InputError(
                f"{path}: the header is one field, {names[0]!r}: the columns are separated by "
                f"{separator}, not {given}; name the file .{kind}"
                + (f" or pass --format {kind}" if formats else "")
            )


def _header(path: Path, names: Sequence[str]) -> str | None:
    """The name of pandas' index column when the header starts with one; InputError for a column
    named twice (one of the two would be lost) or another column with no name."""
    if is_table_export(names):  # its runs' Status and Comment columns repeat: say what it is
        raise InputError(TABLE_EXPORT.format(path=path))
    index = names[0] if names and names[0] in PANDAS_INDEX else None
    seen: set[str] = set()
    for number, name in enumerate(names, start=1):
        if name in seen:
            raise InputError(f"{path}: column {name!r} appears twice in the header; keep one")
        if not name and number > 1:
            raise InputError(f"{path}: column {number} of the header has no name; name it")
        seen.add(name)
    return index


def _object(path: Path, number: int) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """The object of line ``number`` from its pairs; InputError for a key given twice (JSON
    keeps the last, and one of the two values would be lost)."""

    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        record = dict(pairs)
        if len(record) < len(pairs):
            key = next(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
            raise InputError(f"{path}: line {number} has the key {key!r} twice; keep one")
        return record

    return build


def read_jsonl(path: Path) -> Rows:
    """One JSON object per line; blank lines are skipped, and a byte order mark at the start
    (as some Windows editors write), as for CSV."""
    records, lines = [], []
    try:
        with path.open(encoding="utf-8-sig") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line, object_pairs_hook=_object(path, number))
                except json.JSONDecodeError as exc:
                    # json's reason names no place ("Invalid control character at"): its column
                    joint = " " if exc.msg.endswith(" at") else " at "
                    raise InputError(
                        f"{path}: line {number} is not JSON ({exc.msg}{joint}column {exc.colno}); "
                        "write one JSON object per line"
                    ) from None
                if not isinstance(record, dict):
                    raise InputError(
                        f"{path}: line {number} is not a JSON object; write one object per line"
                    )
                records.append(record)
                lines.append(number)
    except UnicodeDecodeError:
        raise InputError(not_utf8(path)) from None
    if not records:
        raise InputError(f"{path}: no JSON object in the file; write one per question")
    return record_columns(records), lines
