"""Row formats read into plain columns: CSV, TSV and JSONL (one JSON object per line)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from ...errors import InputError
from .columns import Columns

Rows = tuple[Columns, list[int]]  # the columns and the file line of each row


def _columns(records: list[dict[str, Any]]) -> Columns:
    names = list(dict.fromkeys(name for record in records for name in record))
    return {name: [record.get(name) for record in records] for name in names}


def read_delimited(path: Path, delimiter: str) -> Rows:
    """A CSV or TSV file with a header line; an empty cell is a missing value."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle, delimiter=delimiter)
            records, lines = [], []
            for record in reader:
                if None in record:
                    raise InputError(
                        f"{path}: line {reader.line_num} has more fields than the header "
                        f"({len(reader.fieldnames or [])}); quote values that contain "
                        f"{'a tab' if delimiter == chr(9) else 'a comma'}"
                    )
                records.append(record)
                lines.append(reader.line_num)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{path}: not a readable text table ({exc}); save it as UTF-8") from None
    if not records:
        raise InputError(f"{path}: no rows under the header; write one row per question")
    return _columns(records), lines


def read_jsonl(path: Path) -> Rows:
    """One JSON object per line; blank lines are skipped."""
    records, lines = [], []
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(
                        f"{path}: line {number} is not JSON ({exc.msg}); write one JSON object "
                        "per line"
                    ) from None
                if not isinstance(record, dict):
                    raise InputError(
                        f"{path}: line {number} is not a JSON object; write one object per line"
                    )
                records.append(record)
                lines.append(number)
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text; save it as UTF-8") from None
    if not records:
        raise InputError(f"{path}: no JSON object in the file; write one per question")
    return _columns(records), lines
