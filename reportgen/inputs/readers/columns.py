"""Columns read from a text format, turned into one Arrow table in the run-log contract's types.

Readers hand over plain Python columns (a name -> one value per row); this module converts the
contract's columns to their types, naming the file, line and column of any value it cannot read.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import math
import re
import threading
import tokenize
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from ...errors import InputError
from ...formatting import fmt_count
from ..contract import BY_NAME, FLAG, LABEL, OFFSET_LIMIT, spelled_flag

Columns = dict[str, list[Any]]

TEXT_ID_LENGTH = 16  # hex digits of sha256 kept when a text stands for an id
_INTEGER = re.compile(r"[+-]?(0|[1-9][0-9]{0,17})")  # fits in int64
_DIGITS = re.compile(r"[+-]?[0-9]+")  # a whole number of any length
_WHOLE_FLOAT = re.compile(r"-?(0|[1-9][0-9]*)\.0+")  # 7.0: a whole number in a float's spelling
_NUMBER = re.compile(
    r"[+-]?((0|[1-9][0-9]*)(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?(inf|infinity|nan)",
    re.IGNORECASE,
)


OTHER_CELLS = 3  # other unreadable cells a message names, after the first


class Unreadable(ValueError):
    """A cell the contract cannot read; the message says why, in the user's words."""


def text_id(prefix: str, text: str) -> str:
    """A stable id for a text (a question, a passage): ``prefix`` and the start of its sha256."""
    return prefix + hashlib.sha256(text.encode("utf-8")).hexdigest()[:TEXT_ID_LENGTH]


def parse_list(value: Any) -> list[Any] | None:
    """A list cell: a list already (JSONL, Parquet) or text written as a JSON array, as numpy
    prints an array, or as Python's repr of a list (what pandas' ``to_csv`` writes for a list
    column: the second when the frame came from Parquet, the third when it was built of lists)."""
    if value is None or isinstance(value, list):
        return value
    if hasattr(value, "tolist"):  # numpy arrays from pandas' Parquet reader
        return list(value.tolist())
    text = str(value).strip()
    if not text:
        return None
    for parse in (json.loads, _numpy_array, _python_list):
        try:
            parsed = parse(text)
        except Unreadable:
            raise
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(parsed, list | tuple):
            return list(parsed)
    if text.startswith("[") and text.endswith("]"):
        raise Unreadable(
            "is not a list: its items are not quoted (as DuckDB writes lists), and a comma inside "
            'a text would split it; write a JSON array such as ["p1", "p2"] or a Python list '
            "literal, or save the log as Parquet or JSONL"
        )
    raise Unreadable('is not a list; write it as a JSON array such as ["p1", "p2"]')


_LAYOUT = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER})
_NUMPY_WORDS = {"nan": None, "inf": math.inf}  # a missing item is left to the row checks


def _numpy_array(text: str) -> list[Any] | None:
    """The items of a 1-D array as numpy prints it, ``['p1' 'p2']``, ``[2 1]`` or, for an array
    of objects (spans), ``[{'doc_id': 'd1', ...}\n {'doc_id': 'd2', ...}]`` (no commas between
    items, lines wrapped); None for other text. Read token by token, since Python would join
    adjacent texts into one and the list would become one long id."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except tokenize.TokenError:
        return None
    inner = [t for t in tokens if t.type not in _LAYOUT]
    if len(inner) < 2 or (inner[0].string, inner[-1].string) != ("[", "]"):
        return None
    starts = _line_starts(text)
    items: list[Any] = []
    sign = ""
    depth, opened = 0, (0, 0)
    for token in inner[1:-1]:
        if token.string == "...":
            raise Unreadable(
                "is an array numpy printed shortened (with '...'), so items are lost; keep the "
                "log as Parquet or write it as JSON Lines (pandas' to_parquet or "
                "to_json(orient='records', lines=True); DuckDB's COPY ... TO 'run.parquet' or "
                "'run.jsonl')"
            )
        if depth or token.string == "{":  # an object item: its own literal, commas inside
            depth += {"{": 1, "[": 1, "(": 1, "}": -1, "]": -1, ")": -1}.get(token.string, 0)
            opened = token.start if token.string == "{" and depth == 1 else opened
            if not depth:
                begin, end = (starts[row - 1] + col for row, col in (opened, token.end))
                items.append(_python_list(text[begin:end]))
            continue
        if token.string == "-" and not sign:
            sign = "-"
            continue
        if token.type == tokenize.NUMBER:
            items.append(_literal(sign + token.string))
        elif token.type == tokenize.NAME and token.string in _NUMPY_WORDS:
            word = _NUMPY_WORDS[token.string]
            items.append(-word if sign and word is not None else word)
        elif token.type == tokenize.STRING and not sign:
            items.append(_literal(token.string))
        else:
            return None
        sign = ""
    return None if sign or depth else items


def _line_starts(text: str) -> list[int]:
    """The offset in ``text`` of each line's first character, for tokenize's (row, col)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


class _PlainLiterals(ast.NodeTransformer):
    """``nan`` (pandas writes a missing item of a list so) as None, and numpy's scalars
    (``np.str_('p1')``, numpy 2's repr of a list of them) as the literal they wrap."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Constant(None) if node.id == "nan" else node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        module = func.value if isinstance(func, ast.Attribute) else None
        numpy = isinstance(module, ast.Name) and module.id in ("np", "numpy")
        if numpy and len(node.args) == 1 and not node.keywords:
            return self.visit(node.args[0])
        return node


# CPython 3.11's parser keeps its AST recursion depth in state the threads share: two logs read
# at once (a study opens its logs on a thread pool) stopped a comparison with "SystemError: AST
# constructor recursion depth mismatch"; every parse of a cell takes this lock
_PARSING = threading.Lock()


def _literal(text: str) -> Any:
    with _PARSING:
        return ast.literal_eval(text)


def _python_list(text: str) -> Any:
    """A literal in Python's syntax, its ``nan`` items missing: the row checks then name the
    missing item with its column and row, instead of the list being refused as no list."""
    with _PARSING:
        tree = ast.parse(text, mode="eval")
    return ast.literal_eval(_PlainLiterals().visit(tree))


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _bool(value: Any) -> bool:
    """true/false, yes/no, 1/0 in any case, and 1.0/0.0 (contract.spelled_flag, as a Parquet
    log's text is read): pandas writes a 0/1 column holding a missing value as floats, and JSON
    writers may write 1.0."""
    if isinstance(value, bool):
        return value
    spelled = spelled_flag(str(value))
    if spelled is None:
        raise Unreadable("is not true or false")
    return spelled


def _float(value: Any) -> float:
    if isinstance(value, bool):
        raise Unreadable("is not a number")
    return float(value)


def _int(value: Any) -> int:
    """A whole number; text is refused, as a Parquet log's column of text is (JSON's "25" would
    read as 25, and "1e1" as 10)."""
    if isinstance(value, str):
        raise Unreadable("is text, not a number")
    number = value if isinstance(value, int) else float(value)
    if isinstance(value, bool) or not float(number).is_integer():
        raise Unreadable("is not an integer")
    if abs(number) >= OFFSET_LIMIT:
        raise Unreadable("is beyond 2**63 - 1, the largest integer read")
    return int(number)


def _spans(fields: tuple[str, ...]) -> tuple[pa.DataType, Callable[[Any], list[Any] | None]]:
    """The Arrow type of a span column of ``fields`` and the conversion of one of its cells."""

    def span(value: Any) -> dict[str, Any]:
        """One span: an object with doc_id, start and end (and grade, where ``fields`` has it)."""
        if not isinstance(value, dict):
            raise Unreadable(
                'has an item that is not a span {"doc_id": ..., "start": ..., "end": ...}'
            )
        lacking = [key for key in ("doc_id", "start", "end") if key not in value]
        if lacking:  # the cell's preview may be cut before the span
            raise Unreadable(f"has a span without {' or '.join(map(repr, lacking))}")
        converted = {}
        for name in fields:
            item = value.get(name)
            if _missing(item):
                continue  # a missing field is named by the row checks
            try:
                converted[name] = _key(item) if name == "doc_id" else _int(item)
            except (ValueError, TypeError, OverflowError) as exc:
                reason = exc if isinstance(exc, Unreadable) else "is not a number"
                raise Unreadable(f"has a span whose {name} {item!r} {reason}") from None
        return converted

    kinds = [(f, pa.string() if f == "doc_id" else pa.int64()) for f in fields]
    return pa.list_(pa.struct(kinds)), _items(span, named=False)  # span names the item


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _id(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return _text(value)


def _key(value: Any) -> str:
    """An identifier (question_id, sample, a passage id): text or a whole number, as a Parquet
    log must hold it. A list, an object or true would pair by its JSON text, and a fraction
    by its shortest spelling (JSON's 3.10 is 3.1)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise Unreadable("is not an id (text or a whole number)")
    if isinstance(value, float) and not math.isfinite(value):
        raise Unreadable("is not an id (text or a whole number)")
    if isinstance(value, float) and not value.is_integer():
        raise Unreadable("is a fraction, which JSON may have shortened; write the id as text")
    if isinstance(value, float) and abs(value) > 2**53:  # 12345678901234567.0 reads ...568
        raise Unreadable("is a number past 2**53, whose last digits JSON loses; write it as text")
    return _id(value)


def _cell_key(value: str) -> str:
    """An id in a CSV or TSV cell, text without a type: a whole number written as a float
    (``7.0``, as pandas' ``to_csv`` writes an integer column holding a missing value) is the
    number JSON reads, as an item of a list cell (``[7.0]``) is: ``7``. Any other text is the id
    as written (``007``, ``7.5``, ``1e3``)."""
    text = value.strip()
    return _key(json.loads(text) if _WHOLE_FLOAT.fullmatch(text) else value)


def _items(convert: Callable[[Any], Any], named: bool = True) -> Callable[[Any], list[Any] | None]:
    """The conversion of a list cell, item by item with ``convert``; ``named``: the reason an
    item cannot be read names it within the list (list_item)."""
    one = (lambda item: list_item(convert, item)) if named else convert

    def each(value: Any) -> list[Any] | None:
        items = parse_list(value)
        if items is None or (convert is _key and all(type(item) is str for item in items)):
            return items  # ids that are text already: the common case, kept as they are
        # A missing item stays missing: the row checks refuse it, since a null is never evidence.
        return [None if _null_item(item) else one(item) for item in items]

    return each


def list_item(convert: Callable[[Any], Any], item: Any) -> Any:
    """One item of a list cell; the reason it cannot be read names it within the list."""
    try:
        return convert(item)
    except Unreadable as exc:
        raise Unreadable(f"has an item, {_shown(item)}, that {exc}") from None


def _null_item(item: Any) -> bool:
    return item is None or (isinstance(item, float) and math.isnan(item))


_NARROW_FLOATS = (pa.float32(), pa.float16())  # DuckDB reads a float16 as a float32


def duckdb_readable(table: pa.Table) -> pa.Table:
    """``table`` with the types DuckDB reads from a Parquet file but not from Arrow widened as
    it reads them there: float16 as float32, a decimal256 as a decimal of at most 38 digits or
    else a double ("Unsupported Internal Arrow Type" stopped every command on a Feather log
    with a float16 column, used or not)."""
    fields = [field.with_type(_readable(field.type)) for field in table.schema]
    schema = pa.schema(fields, table.schema.metadata)
    return table if schema.equals(table.schema) else table.cast(schema)


def _readable(kind: pa.DataType) -> pa.DataType:
    if pa.types.is_float16(kind):
        return pa.float32()
    if pa.types.is_decimal256(kind):
        return pa.decimal128(kind.precision, kind.scale) if kind.precision <= 38 else pa.float64()
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        item = kind.value_field.with_type(_readable(kind.value_type))
        return pa.list_(item) if pa.types.is_list(kind) else pa.large_list(item)
    if pa.types.is_struct(kind):
        return pa.struct([field.with_type(_readable(field.type)) for field in kind])
    return kind


def narrow_floats(schemas: Iterable[pa.Schema]) -> frozenset[str]:
    """The columns some of ``schemas`` holds as float32 (or float16): the queries read them at
    float32 precision in every run compared (RunDatabase)."""
    return frozenset(f.name for schema in schemas for f in schema if f.type in _NARROW_FLOATS)


def narrowed(table: pa.Table, narrow: frozenset[str], sources: Mapping[str, str]) -> pa.Table:
    """``table`` with each float column read from a file column of ``narrow`` (``sources``:
    a column's name in the file, where it was renamed) back in float32, which holds its values
    exactly: the row reader holds every number as a Python float, and a float32 log read so
    would lose the precision it is compared at."""
    for i, name in enumerate(table.column_names):
        if sources.get(name, name) in narrow and pa.types.is_floating(table.field(i).type):
            table = table.set_column(i, name, table.column(i).cast(pa.float32()))
    return table


# contract type name -> (Arrow type, conversion of one non-missing cell)
_CONVERT: dict[str, tuple[pa.DataType, Callable[[Any], Any]]] = {
    "string (whole numbers accepted)": (pa.string(), _key),
    "string": (pa.string(), _id),
    "list<string>": (pa.list_(pa.string()), _items(_key)),
    "list<int>": (pa.list_(pa.int64()), _items(_int)),
    **{c.type_name: _spans(c.fields) for c in BY_NAME.values() if c.fields},
    FLAG: (pa.bool_(), _bool),
    "float 0..1": (pa.float64(), _float),
    "number": (pa.float64(), _float),
}
# a CSV or TSV file's cells, all text
_DELIMITED = {**_CONVERT, "string (whole numbers accepted)": (pa.string(), _cell_key)}


def place(lines: Sequence[int] | None, *rows: int, unit: str = "line") -> str:
    """Where the 0-based ``rows`` (one or two) are, as a message names them: their file lines
    ("line 3", "lines 2 and 5"; ``unit`` names another numbering, promptfoo's results), else (a
    Parquet file, which has rows, not lines) their rows."""
    numbers = [lines[row] for row in rows] if lines is not None else [row + 1 for row in rows]
    unit = unit if lines is not None else "row"
    return f"{unit}{'s' if len(rows) > 1 else ''} {' and '.join(map(str, numbers))}"


def spells_score(value: Any) -> bool:
    """Whether a cell is, or spells, a number or true/false (as _spelled reads a column of
    them): what a score column's cells must be."""
    if isinstance(value, bool | int | float):
        return True
    text = str(value).strip()
    return bool(_NUMBER.fullmatch(text)) or text.lower() in ("true", "false")


def _extra(values: list[Any]) -> pa.Array:
    """A column outside the contract: as Arrow infers it, else as text. Cells that are all text
    (as every cell of a CSV or TSV is) and all spell numbers, or all true/false, are read as
    such, so that a score column can be compared (``--metric``); a column missing in every row
    holds no value of any kind (Arrow's null type), as a score that failed on every row."""
    try:
        array = pa.array(_spelled(values))
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):  # mixed kinds, ints past int64
        array = None
    if array is None or _empty_struct(array.type):  # Parquet cannot hold a struct of no field
        # a JSON NaN among texts is no value, as a Parquet float's NaN: as the text "NaN" it
        # was a slice of its own, and one --cluster cluster of every such question
        texts = [None if v is None or is_nan(v) else _text(v) for v in values]
        return pa.array(texts, type=pa.string())
    return array


def _labels(values: list[Any], delimited: bool) -> pa.Array:
    """A slice column as text, spelled as queries/rules.sql's slice_value spells a typed one,
    so that the same values name the same slices in any format: a CSV or TSV file's cells as
    the numbers or booleans they spell (as --slice reads the file's other columns), a JSON
    log's as typed; a whole number without its .0, NaN as no value."""
    cells = _spelled([None if v == "" else v for v in values]) if delimited else values
    return pa.array([None if v is None else _label(v) for v in cells], type=pa.string())


def _label(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return None
        whole = value.is_integer() and abs(value) < 2**53  # past it, DuckDB's 1e+20
        return str(int(value)) if whole else repr(value)
    return _text(value)


def _empty_struct(kind: pa.DataType) -> bool:
    """Whether ``kind`` is, or holds, a struct of no field (what ``{}`` in every cell gives)."""
    if pa.types.is_struct(kind):
        return kind.num_fields == 0 or any(_empty_struct(f.type) for f in kind)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _empty_struct(kind.value_type)
    return False


def _spelled(values: list[Any]) -> list[Any]:
    """``values`` as the numbers or booleans their text spells when every cell is text that
    spells one kind (an empty cell is missing); else as they are. Integers stay integers; a
    leading zero ("007") is a code, kept as text."""
    cells = [None if _missing(v) or is_nan(v) else v for v in values]
    present = [v for v in cells if v is not None]
    if not present:
        return cells  # every row missing: a column of no value, whatever its kind
    if not all(isinstance(v, str) for v in present):
        return values
    words = {v.strip().lower() for v in present}
    if words <= {"true", "false"}:
        return [None if v is None else v.strip().lower() == "true" for v in cells]
    spelled = {v.strip() for v in present}
    if not all(_NUMBER.fullmatch(v) for v in spelled):
        return values
    whole = all(_INTEGER.fullmatch(v) for v in spelled)
    number = int if whole else float
    # a number that would change the value the text names stays text: a whole number past
    # int64 (a 19-digit id, a double keeps 15 to 17 digits of it), or two texts that read as
    # one number ("3.1" and "3.10", sections of a manual), which would merge two slices; NaN
    # and infinity spelled two ways ("nan" by Python, "NaN" by polars) are one missing value or
    # one bound, no sections
    if any(_DIGITS.fullmatch(v) and not _INTEGER.fullmatch(v) for v in spelled):
        return values
    finite = {v for v in spelled if math.isfinite(number(v))}
    if len({repr(number(v)) for v in finite}) < len(finite):
        return values
    return [None if v is None else number(v) for v in cells]


def to_table(
    path: object,
    columns: Columns,
    lines: Sequence[int] | None = None,
    sources: Mapping[str, str] | None = None,
    unit: str = "line",
    delimited: bool = False,
) -> pa.Table:
    """The contract table of ``columns``; ``lines[i]`` is the file line (or the ``unit``) of
    row i, and ``sources`` the file's own name of a renamed column, for messages; ``delimited``:
    the cells are a CSV or TSV file's, text without types."""
    arrays: dict[str, pa.Array] = {}
    first: tuple[str, str, str, Any, str] | None = None  # where, shown, name, value, reason
    others: list[str] = []  # every other cell that cannot be read, as the message names it
    cells: set[tuple[str, str]] = set()
    for name, values in columns.items():
        column = BY_NAME.get(name)
        if column is None:
            # a CSV or TSV file's empty cell is a missing value, as in the contract's columns:
            # read as the text "", a --cluster column put every such question in one cluster
            arrays[name] = _extra([None if delimited and v == "" else v for v in values])
            continue
        if column.type_name == LABEL:
            arrays[name] = _labels(values, delimited)
            continue
        arrow_type, convert = (_DELIMITED if delimited else _CONVERT)[column.type_name]
        # a text column's "" is the empty text in JSON, as in Parquet (a slice's "(empty)"); a
        # CSV or TSV file has no empty text apart from an empty cell, a missing value
        empty_text = convert is _id and not delimited
        converted = []
        for row, value in enumerate(values):
            try:
                missing = value is None if empty_text else _missing(value)
                converted.append(None if missing else convert(value))
            except (ValueError, TypeError, OverflowError) as exc:
                # read on, so that the message counts them all: one fix, not one run per cell
                where = place(lines, row, unit=unit)
                shown = (sources or {}).get(name, name)
                if first is None:
                    reason = exc if isinstance(exc, Unreadable) else f"is not {column.type_name}"
                    first = (where, shown, name, value, str(reason))
                    cells.add((where, shown))
                elif (where, shown) not in cells:  # a file column read as two is one cell
                    cells.add((where, shown))
                    others.append(f"{where}, column {shown} ({_shown(value)})")
                converted.append(None)
        if first is None:
            arrays[name] = pa.array(converted, type=arrow_type)
    if first is not None:
        raise cell_error(path, *first, others=others)
    return pa.table(arrays)


def cell_error(
    path: object,
    where: str,
    shown: str,
    name: str,
    value: Any,
    reason: str,
    others: Sequence[str] = (),
) -> InputError:
    """The one line for a cell that cannot be read: the file's own column ``shown`` is named,
    since the user looks for it in the file, not the run-log column ``name`` it became; with
    how many ``others`` cannot be read either, the first OTHER_CELLS of them named."""
    more = ""
    if others:
        named = "; ".join(others[:OTHER_CELLS]) + ("; ..." if len(others) > OTHER_CELLS else "")
        more = f" ({fmt_count(len(others), 'more cell')} cannot be read: {named})"
    return InputError(
        f"{path}: {where}, column {shown}: {_shown(value)} {reason} "
        f"({BY_NAME[name].meaning}); fix the value{_missing_word(path, value)}"
        f"{'' if name == 'question_id' else ' or drop the column'}{more}"  # the one it needs
    )


# what other tools write for a missing value (R's write.csv: NA), which is text to a reader
MISSING_WORDS = frozenset({"na", "n/a", "null", "none", "missing"})


def _missing_word(path: object, value: Any) -> str:
    """How the file writes a missing value, after a cell spelled as another tool writes one."""
    if not isinstance(value, str) or value.strip().lower() not in MISSING_WORDS:
        return ""
    delimited = str(path).lower().endswith((".csv", ".tsv"))
    return f" (a missing value is {'an empty cell' if delimited else 'null'}, not {value!r})"


def _shown(value: Any) -> str:
    """A cell's value as a message shows it: true, null, a list or an object in JSON's spelling
    (the file's, for a JSON log; Python's True or {'a': 1} is in no file), text and numbers as
    Python writes them ('maybe', 3.1, inf)."""
    plain = value is None or isinstance(value, bool | list | dict)
    text = json.dumps(value, ensure_ascii=False, default=str) if plain else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)
