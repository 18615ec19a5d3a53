"""The run-log contract: which columns a run log may have and the types each accepts.

Only ``question_id`` is required; every other column switches on the report sections that use
it. Types are checked on the Parquet schema before any row is read, so a wrong type is named
with its column instead of failing deep inside a query.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

_Check = Callable[[pa.DataType], bool]


def _decoded(check: _Check) -> _Check:
    """``check`` applied to the values of a dictionary-encoded column (a pandas category)."""

    def decoded(t: pa.DataType) -> bool:
        return check(t.value_type if pa.types.is_dictionary(t) else t)

    return decoded


@_decoded
def is_text(t: pa.DataType) -> bool:
    # string_view: what newer pyarrow and polars write; DuckDB reads all three as VARCHAR
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def is_list_type(t: pa.DataType) -> bool:
    """A list of any Arrow layout DuckDB reads as a LIST: a ranking of fixed depth can be
    written as fixed_size_list."""
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


@_decoded
def _id(t: pa.DataType) -> bool:
    return is_text(t) or pa.types.is_integer(t)


@_decoded
def _key(t: pa.DataType) -> bool:
    """question_id and sample: an id, or whole numbers logged as floats (pandas writes an
    integer column that held a missing value as float64), read as the integers they are, as
    a CSV's 7.0 is; key_problem refuses a value that is not one."""
    return _id(t) or float_key(t)


def float_key(t: pa.DataType) -> bool:
    """A key column's type (KEY_COLUMNS) that holds its ids as floats or decimals, read as the
    whole numbers they must be (key_problem)."""
    return pa.types.is_floating(t) or pa.types.is_decimal(t)


@_decoded
def _label(t: pa.DataType) -> bool:
    """A slice's value: one with a text of its own (text, a number, a boolean, a date or a
    time), read as text as --slice reads any column: a log's own `slice` of booleans or dates
    was refused while the same values under another name were read."""
    return (
        _id(t)
        or pa.types.is_floating(t)
        or pa.types.is_decimal(t)
        or pa.types.is_boolean(t)
        or pa.types.is_temporal(t)
    )


@_decoded
def _number(t: pa.DataType) -> bool:
    """An offset or a grade of a span: integers, or numbers checked to be whole on load
    (integer_problem), as DuckDB writes 300::DECIMAL(18,0) or pandas 300.0."""
    return pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_decimal(t)


@_decoded
def _measure(t: pa.DataType) -> bool:
    """A number, or a decimal (DuckDB types 12.25 as one; money often is one). A span's offsets
    and grade are _number's: whole numbers of any of these types."""
    return _number(t) or pa.types.is_decimal(t)


@_decoded
def _flag(t: pa.DataType) -> bool:
    """True/false, a number that must be 1 or 0, or text that must spell one (spelled_flag;
    flag_problem): pandas writes a 0/1 column that holds a missing value as floats, many tools
    write 0/1 as integers, and a judge's verdict is often kept as its word."""
    return pa.types.is_boolean(t) or _number(t) or is_text(t)


def _list_of(item: _Check) -> _Check:
    def check(t: pa.DataType) -> bool:
        is_list = is_list_type(t)
        # list<null>: every list empty or all null, as pandas infers it
        return is_list and (pa.types.is_null(t.value_type) or item(t.value_type))

    return check


def _spans(t: pa.DataType) -> bool:
    """A list of document spans: structs with doc_id, start and end (and grade, optional)."""
    item = t.value_type if is_list_type(t) else None
    if item is None or pa.types.is_null(item):
        return item is not None
    names = (
        {item.field(i).name for i in range(item.num_fields)} if pa.types.is_struct(item) else set()
    )
    return {"doc_id", "start", "end"} <= names


# field of a span -> (its check, what it must hold)
SPAN_FIELDS: dict[str, tuple[_Check, str]] = {
    "doc_id": (_id, "a string (the document)"),
    "start": (_number, "an integer (a character offset)"),
    "end": (_number, "an integer (a character offset, exclusive)"),
    "grade": (_number, "an integer (the label's grade)"),
}


OFFSET_LIMIT = 2**63  # offsets and grades are read as signed 64-bit integers
LARGEST_VALUE = 2**53
"""The largest magnitude of a cost or score value the statistics take. Up to 2**53 a double
holds every whole number, so token counts and their differences are exact, and the squares of
differences (at most 2**108) summed over any number of questions stay far from overflow; past
it two counts a few apart read as one (2**62 + 49 - 2**62 is 0), and from about 1e154 the
squares of the spreads overflow to inf, leaving the interval and p-value meaningless."""


def wide_number(t: pa.DataType) -> bool:
    """A number type that can hold a value no signed 64-bit integer holds: a float or a
    decimal (2.7, 1e30) or a uint64 beyond 2**63 - 1."""
    return pa.types.is_floating(t) or pa.types.is_decimal(t) or pa.types.is_uint64(t)


TRUE_WORDS = ("true", "1", "yes", "t", "y")  # a true/false value logged as text, in any case
FALSE_WORDS = ("false", "0", "no", "f", "n")
FLAG_SPACE = " \t\n\r\x0b\x0c"  # trimmed from such a text, on load and in the queries alike
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def spelled_flag(text: str) -> bool | None:
    """The true/false value a text spells, trimmed of FLAG_SPACE: a word of TRUE_WORDS or
    FALSE_WORDS in any case, or a number equal to 1 or 0 (``1.0``, as a float column turned to
    text reads); None when it spells neither."""
    word = text.strip(FLAG_SPACE).lower()
    if word in TRUE_WORDS or word in FALSE_WORDS:
        return word in TRUE_WORDS
    if _DECIMAL.fullmatch(word) and float(word) in (0.0, 1.0):
        return float(word) == 1.0
    return None


def logged_flag(column: Column, t: pa.DataType) -> bool:
    """Whether ``column`` is a true/false column logged as numbers (1 and 0) or as text."""
    return column.check is _flag and not pa.types.is_boolean(t)


def flag_problem(values: pa.Array) -> tuple[int, str] | None:
    """The index of the first value of a true/false column logged as numbers that is neither 1
    nor 0 (nulls and NaN are missing values), or logged as text that spells neither
    (spelled_flag; nulls are missing values), and the value; None when every value is one."""
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if is_text(values.type):
        if pa.types.is_string_view(values.type):  # Arrow's kernels below take no views
            values = values.cast(pa.large_string())
        distinct = pc.unique(values).drop_null().to_pylist()  # a handful of words
        unspelled = [text for text in distinct if spelled_flag(text) is None]
        bad = pc.is_in(values, pa.array(unspelled, values.type))
    else:
        doubles = pc.cast(values, pa.float64())
        bad = pc.invert(pc.or_(pc.is_in(doubles, pa.array([0.0, 1.0])), pc.is_nan(doubles)))
    index = pc.index(pc.fill_null(bad, False), True).as_py()
    return None if index < 0 else (index, repr(values[index].as_py()))


def integer_problem(values: pa.Array) -> tuple[int, str] | None:
    """The index of the first value of ``values`` (numbers) that is not an integer below
    OFFSET_LIMIT, and what it is: the queries would round a fraction without a word, and stop
    on a larger value with no column named. None when every value is one (nulls are left to
    the row checks)."""
    if not wide_number(values.type):
        return None
    if pa.types.is_decimal(values.type):
        values = pc.cast(values, pa.float64())  # exact for the integers read, up to 2**53
    if pa.types.is_floating(values.type):
        whole = pc.and_(pc.is_finite(values), pc.equal(pc.floor(values), values))
        bad = pc.invert(pc.and_(whole, pc.less(pc.abs(values), float(OFFSET_LIMIT))))
    else:
        bad = pc.greater_equal(values, pa.scalar(OFFSET_LIMIT, values.type))
    index = pc.index(pc.fill_null(bad, False), True).as_py()
    if index < 0:
        return None
    value = values[index].as_py()
    if isinstance(value, float) and not math.isfinite(value):
        return index, f"{value!r}, not a finite number"
    if isinstance(value, float) and not value.is_integer():
        return index, f"{value!r}, not a whole number"
    return index, f"{value!r}, beyond 2**63 - 1, the largest integer read"


# the largest whole number each float holds exactly, with every one below it: past it a
# float32 id of 16777217 was written as 16777216, and 12345678901234567.0 reads ...568
KEY_LIMITS = {16: 2**11, 32: 2**24, 64: 2**53}


def key_problem(values: pa.Array) -> tuple[int, str] | None:
    """The index of the first value of a key column logged as floats or decimals (_key) that
    is not a whole number its type holds exactly, and what it is, as a CSV's or JSON's id is
    refused (readers/columns.py); None when every value is one (nulls are left to the row
    checks). A decimal of whole numbers is read exactly, up to 2**63 - 1."""
    if pa.types.is_decimal(values.type):
        try:
            pc.cast(values, pa.int64())  # safe: refuses a fraction or an overflow
            return None
        except pa.ArrowInvalid:
            limit = 2**63 - 1
    else:
        limit = KEY_LIMITS[values.type.bit_width]
    doubles = pc.cast(values, pa.float64())
    whole = pc.and_(pc.is_finite(doubles), pc.equal(pc.floor(doubles), doubles))
    bad = pc.invert(pc.and_(whole, pc.less_equal(pc.abs(doubles), float(limit))))
    index = pc.index(pc.fill_null(bad, False), True).as_py()
    if index < 0:
        return None
    value = doubles[index].as_py()
    if not math.isfinite(value):
        return index, f"{value!r}, not a finite number"
    if not value.is_integer():
        return index, f"{values[index].as_py()}, a fraction"
    if pa.types.is_decimal(values.type):
        return index, f"{values[index].as_py()}, beyond 2**63 - 1, the largest integer read"
    bits = values.type.bit_width
    return index, (
        f"{value!r}, past {KEY_LIMITS[bits]:,}, beyond which a float{bits} does not hold every "
        "whole number: its last digits may have been lost"
    )


@dataclass(frozen=True)
class Column:
    name: str
    type_name: str
    check: _Check
    meaning: str
    fields: tuple[str, ...] = ()  # of the spans of a span column, whose types are checked


FLAG = "bool (1/0 and yes/no accepted)"
LABEL = "string (numbers, booleans and dates read as text)"

COLUMNS: tuple[Column, ...] = (
    Column(
        "question_id", "string (whole numbers accepted)", _key, "pairing key, unique within a run"
    ),
    Column("question", "string", is_text, "the question text, shown in drill-downs"),
    Column(
        "slice",
        LABEL,
        _label,
        "the question's slice (intent class, product area)",
    ),
    Column(
        "retrieved_ids",
        "list<string>",
        _list_of(_id),
        "candidate passages as ranked by the retriever, best first; may be longer than k",
    ),
    Column(
        "relevant_ids",
        "list<string>",
        _list_of(_id),
        "labelled evidence passages; empty for an unanswerable question",
    ),
    Column(
        "relevant_grades",
        "list<int>",
        # whole numbers, checked on load: pandas writes grades as floats, DuckDB [2.0, 1.0] as
        # decimals
        _list_of(_measure),
        "graded labels aligned with relevant_ids (2 = answers it, 1 = helpful, 0 = judged, not "
        "relevant); absent: all 1",
    ),
    Column(
        "context_ids",
        "list<string>",
        _list_of(_id),
        "the passages the generator actually received, in prompt order",
    ),
    Column("correct", FLAG, _flag, "the answer is correct against the reference"),
    Column(
        "faithfulness",
        "float 0..1",
        _measure,
        "share of the answer's claims supported by its context",
    ),
    Column("answer", "string", is_text, "the generated answer, shown in drill-downs"),
    Column("reference_answer", "string", is_text, "the reference answer, shown in drill-downs"),
    Column("answer_relevance", "float 0..1", _measure, "the answer addresses the question asked"),
    Column(
        "answerable",
        FLAG,
        _flag,
        "the question can be answered from the corpus (default: it has labelled evidence)",
    ),
    Column("abstained", FLAG, _flag, "the assistant declined to answer"),
    Column("cited_ids", "list<string>", _list_of(_id), "passages the answer cites"),
    Column("human_correct", FLAG, _flag, "human label of correctness (a subset)"),
    Column("human_faithful", FLAG, _flag, "human label of faithfulness (a subset)"),
    Column("context_tokens", "number", _measure, "tokens of context in the prompt"),
    Column("latency_ms", "number", _measure, "end-to-end latency in milliseconds"),
    Column("cost_usd", "number", _measure, "cost of the answer in US dollars"),
    Column(
        "source_id",
        "string",
        _id,
        "the document the question is about; one question text may be asked of many sources",
    ),
    Column(
        "sample",
        "string (whole numbers accepted)",
        _key,
        "which of several answers to the question this row is; one row per question and sample",
    ),
    Column(
        "epoch",
        "string (whole numbers accepted)",
        _key,
        "another name of sample; log one of the two",
    ),
)

# run-log columns of scores or flags of an answer that the report compares only when asked
# (--metric); the others it compares whenever logged, or are not scores
ASKED_SCORES = ("answer_relevance", "abstained", "human_correct", "human_faithful")

SPANS = "list<struct<doc_id string, start int, end int>>"
COLUMNS += (
    Column(
        "relevant_spans",
        SPANS.replace("end int", "end int, grade int"),
        _spans,
        "labelled evidence as character spans of the source documents (end exclusive; grade "
        "optional, default 1), shared by runs that cut the documents differently",
        tuple(SPAN_FIELDS),
    ),
    Column(
        "retrieved_spans",
        SPANS,
        _spans,
        "where each retrieved passage lies in its document, ranked like retrieved_ids",
        ("doc_id", "start", "end"),
    ),
    Column(
        "context_spans",
        SPANS,
        _spans,
        "where each passage of the prompt lies, in prompt order",
        ("doc_id", "start", "end"),
    ),
)

BY_NAME = {c.name: c for c in COLUMNS}


def type_problem(column: Column, arrow_type: pa.DataType) -> str | None:
    """Why ``arrow_type`` is not acceptable for ``column``, or None when it is.

    A column of nulls only (Parquet's null type) is accepted as "no values".
    """
    if pa.types.is_null(arrow_type):
        return None
    if not column.check(arrow_type):
        return f"has type {arrow_type}, expected {column.type_name} ({column.meaning})"
    return _field_problem(column, arrow_type)


def _field_problem(column: Column, arrow_type: pa.DataType) -> str | None:
    """A field of ``column``'s spans whose type cannot hold it (a grade logged as text): named
    here, since the queries would stop on it with no column named."""
    item = arrow_type.value_type if column.fields else None
    if item is None or not pa.types.is_struct(item):
        return None  # not a span column, or list<null>: every list empty
    for name in column.fields:
        index = item.get_field_index(name)
        if index < 0:
            continue  # grade is optional; a missing doc_id, start or end fails column.check
        field_type = item.field(index).type
        check, holds = SPAN_FIELDS[name]
        if not pa.types.is_null(field_type) and not check(field_type):
            return f"has field {name} of type {field_type}, expected {holds}"
    return None


SAMPLE_COLUMNS = ("sample", "epoch")  # epoch: inspect-ai's name for the same thing
KEY_COLUMNS = ("question_id", *SAMPLE_COLUMNS)  # what pairs rows: text or whole numbers (_key)


def pairing_problems(path: Path, names: list[str]) -> list[str]:
    """Columns that cannot be read as their partners stand: the sample named twice (which of
    the two pairs the rows is unclear), and grades without the labels they grade, where each
    row was refused for "3 grades for 0 relevant_ids", as if its labels were empty (a misspelt
    ``relevent_ids`` is named)."""
    problems = []
    if all(c in names for c in SAMPLE_COLUMNS):
        problems.append(
            f"{path}: has both sample and epoch, two names of one column; drop one of them"
        )
    if "relevant_grades" in names and "relevant_ids" not in names:
        near = difflib.get_close_matches("relevant_ids", [n for n in names if n not in BY_NAME])
        like = f" (is {near[0]!r} that column?)" if near else ""
        problems.append(
            f"{path}: relevant_grades grades the labels in relevant_ids, a column it lacks"
            f"{like}; name the labels' column relevant_ids, map it with --map "
            "relevant_ids=COLUMN, or drop relevant_grades"
        )
    return problems


def has_samples(columns: frozenset[str]) -> bool:
    return any(c in columns for c in SAMPLE_COLUMNS)


SCORING_KEY = "ragreport.scoring"  # schema metadata: (k, gain, span_coverage) by metric
# Columns that mark a table another ragreport command wrote from a log, never a log itself:
# the per-question metrics of ``ragreport metrics`` and its --partial-sums (reportgen/shards.py)
# (one of its k and answerable columns may have been dropped since).
_METRICS_MARKS = frozenset({"question_id", "n_relevant"})
_METRICS_EITHER = frozenset({"k", "answerable"})
_SUMS_MARKS = frozenset({"metric", "seed", "key_sum", "weighted", "weights"})
_EVIDENCE = ("retrieved_ids", "context_ids", "relevant_ids", "retrieved_spans", "context_spans")


def derived_table_problem(
    path: Path, names: Iterable[str], metadata: Mapping[bytes, bytes] | None = None
) -> str | None:
    """The advice for a table ``ragreport metrics`` wrote, given where a run log is needed: its
    columns would otherwise read as a log of odd types, or of no metric. Without the schema
    ``metadata`` metrics writes (a copy saved again by pandas or DuckDB, or a text file) compare
    cannot read it as a table either, and the advice says so."""
    given = set(names)
    if given >= _METRICS_MARKS and _METRICS_EITHER & given and not given.intersection(_EVIDENCE):
        if SCORING_KEY.encode() not in (metadata or {}):
            return (
                f"{path}: holds per-question metrics without the metadata ragreport metrics "
                "writes beside them (saving the table again with pandas or DuckDB drops it), so "
                "it reads as neither a table nor a run log; write it again with ragreport "
                "metrics from its log (filter the log to keep some of its questions)"
            )
        return (
            f"{path}: is a table of per-question metrics (as ragreport metrics writes it), not a "
            "run log; pass the run log it was scored from"
        )
    if given >= _SUMS_MARKS and "question_id" not in given:
        return (
            f"{path}: is a file of partial sums (as ragreport metrics --partial-sums writes it), "
            "not a run log; give it to ragreport merge, or pass the run log here"
        )
    return None
