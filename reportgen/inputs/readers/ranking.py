"""Rankings with separate relevance judgements: TREC run files and qrels, BEIR/MTEB results.

trec_eval's semantics: a topic's documents are ordered by score descending, compared in single
precision as trec_eval holds them, ties broken by docno descending (the run's rank column is
ignored); a document is relevant when its grade is at least the relevance level (trec_eval's
``-l``, default 1), and a negative or lower grade means judged not relevant. Topics of the run
without judgements and judged topics the run lacks are left out, as trec_eval leaves them out, and
listed in the report's notes; so are topics judged with no relevant document, which trec_eval
counts in its means (0 but for ndcg_cut at -l above 1) and the report, having no evidence to find,
leaves out of the retrieval metrics. Every judged document is kept in relevant_ids, those judged
not relevant with grade 0, so that unjudged@k can tell a passage judged not relevant from one never
judged.

Files are split into fields by Arrow and checked, ordered and grouped by DuckDB (queries
ranking_problems and ranked_topics), never line by line in Python: a run of a million lines
and its qrels read in about 1.5 s of CPU (bench/trec_bench.py).
"""

from __future__ import annotations

import codecs
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv

from ...errors import InputError, not_utf8
from ...formatting import agreeing, fmt_count, fmt_listed
from ...resources import query_text
from ..engine import connection
from .compressed import refuse_gzip

LISTED = 10  # topics named in a note; the rest are counted
_NAMES = ("qid", "docno", "value")  # the fields kept of each line, at a Layout's positions


@dataclass(frozen=True)
class Layout:
    """Where a line's fields are, in one kind of whitespace-separated file."""

    form: str  # the fields, as messages name them
    width: int  # fields a line has
    positions: tuple[int, int, int]  # of the topic, the document and the value
    value: str  # what the value is called in messages
    integer: bool  # the value is a grade (an integer), else a score
    unique: bool  # a document may be listed once per topic
    header: bool = False  # a first line whose value is not an integer is a header


TREC_RUN = Layout("6 (qid Q0 docno rank score tag)", 6, (0, 2, 4), "score", False, True)
TREC_QRELS = Layout("4 (qid iter docno rel)", 4, (0, 2, 3), "grade", True, False)
BEIR_QRELS = Layout("3 (query-id corpus-id score)", 3, (0, 1, 2), "score", True, False, True)


def _split(path: Path, layout: Layout) -> tuple[pa.Table, tuple[int, int] | None]:
    """Every line split on runs of whitespace, as trec_eval splits it: the lines of
    ``layout.width`` fields as (line, qid, docno, value), all text; and (line, fields) of the
    first other non-blank line."""
    refuse_gzip(path)
    data = path.read_bytes().removeprefix(codecs.BOM_UTF8)  # as Arrow's CSV reader drops it
    offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int64).tobytes())
    text = pa.LargeStringArray.from_buffers(1, offsets, pa.py_buffer(data))
    try:
        text.validate(full=True)
    except pa.ArrowInvalid:
        raise InputError(not_utf8(path)) from None
    tidy = _tidy(data, layout)
    if tidy is not None:
        return tidy, None
    fields = pc.ascii_split_whitespace(
        pc.ascii_trim_whitespace(pc.split_pattern(text, "\n").flatten())
    )
    counts = pc.list_value_length(fields)
    blank = pc.equal(pc.list_element(fields, 0), "")  # a blank line splits into one empty field
    counts = pc.if_else(blank, 0, counts)
    kept = pc.equal(counts, layout.width)
    rows = fields.filter(kept)
    table = pa.table(
        {
            "line": pa.array(np.arange(1, len(fields) + 1)).filter(kept),
            **{n: pc.list_element(rows, i) for n, i in zip(_NAMES, layout.positions, strict=True)},
        }
    )
    other = pc.index(pc.and_(pc.invert(kept), pc.not_equal(counts, 0)), True).as_py()
    return table, None if other < 0 else (other + 1, counts[other].as_py())


def _tidy(data: bytes, layout: Layout) -> pa.Table | None:
    """The common file, read by Arrow's CSV reader (several times faster than splitting every
    line): one separator, a space or a tab, once between fields, none at either end of a line,
    no blank line, every line of ``layout.width`` fields. None for any other file."""
    has_tab = b"\t" in data
    if has_tab and b" " in data:
        return None
    sep = b"\t" if has_tab else b" "
    loose = (sep * 2, b"\n" + sep, sep + b"\n", sep + b"\r", b"\n\n", b"\n\r", b"\v", b"\f")
    lone_cr = data.count(b"\r") != data.count(b"\r\n")
    if not data or data[:1].isspace() or lone_cr or any(s in data for s in loose):
        return None
    try:
        table = csv.read_csv(
            pa.BufferReader(data),
            csv.ReadOptions(column_names=[f"f{i}" for i in range(layout.width)]),
            csv.ParseOptions(delimiter=sep.decode(), quote_char=False, escape_char=False),
            csv.ConvertOptions(column_types={f"f{i}": pa.string() for i in range(layout.width)}),
        )
    except pa.ArrowInvalid:  # a line of another number of fields: the general split names it
        return None
    columns = {n: table.column(i) for n, i in zip(_NAMES, layout.positions, strict=True)}
    return pa.table({"line": pa.array(np.arange(1, table.num_rows + 1)), **columns})


def _read(path: Path, layout: Layout) -> pa.Table:
    """The (line, qid, docno, value) of every line of ``path``; InputError naming the first
    bad line: a wrong number of fields, a value that is not a number (an integer for a grade),
    an infinite score, or a document repeated within a topic where that is refused."""
    table, malformed = _split(path, layout)
    if layout.integer:  # a grade written 1.0 (pandas' float column) is the integer 1
        whole = pc.replace_substring_regex(table["value"], r"^([+-]?[0-9]+)\.0*$", r"\1")
        table = table.set_column(table.schema.get_field_index("value"), "value", whole)
    first = table.slice(0, 1).to_pylist()
    if layout.header and first and first[0]["line"] == 1:
        table = table if first[0]["value"].lstrip("-").isdigit() else table.slice(1)
    with connection(path) as con:
        con.register("lines", table)
        params = {"integer": layout.integer, "unique": layout.unique}
        found = con.execute(query_text("ranking_problems"), params).fetchone()
    if malformed is not None and (found is None or malformed[0] < found[0]):
        number, count = malformed
        raise InputError(
            f"{path}: line {number} has {count} fields; expected {layout.form} "
            "separated by spaces or tabs"
        )
    if found is None:
        return table
    number, problem, qid, docno, value, first_line = found
    if problem == "repeated":
        raise InputError(
            f"{path}: line {number}: docno {docno!r} already ranked for topic {qid!r} at "
            f"line {first_line}; keep one line per document and topic"
        )
    if problem == "not_number":
        kind = "an integer" if layout.integer else "a number"  # "1.5" is a number, no grade
        raise InputError(
            f"{path}: line {number}: {layout.value} {value!r} is not {kind}; fix the line"
        )
    raise InputError(f"{path}: line {number}: {layout.value} is {value}; give a finite score")


def read_trec_run(path: Path) -> pa.Table:
    """``qid Q0 docno rank score tag`` lines; a docno repeated within a topic is an error."""
    ranking = _read(path, TREC_RUN)
    if not ranking.num_rows:
        raise InputError(f"{path}: no ranked document; write `qid Q0 docno rank score tag` lines")
    return ranking


def first_fields(path: Path, count: int) -> list[list[str]]:
    """The fields of the first ``count`` non-blank lines of ``path``, to tell a qrels file's
    layout before reading it."""
    found: list[list[str]] = []
    with path.open("rb") as lines:
        for line in lines:
            fields = line.removeprefix(codecs.BOM_UTF8).decode("utf-8", "replace").split()
            if fields:
                found.append(fields)
            if len(found) == count:
                break
    return found


def read_trec_qrels(path: Path) -> pa.Table:
    """``qid iter docno rel`` lines (the iter column is ignored; a document judged twice with
    two grades is an error)."""
    qrels = _read(path, TREC_QRELS)
    _refuse_regrades(path, qrels)
    return qrels


def read_beir_qrels(path: Path) -> pa.Table:
    """BEIR's qrels TSV: a header ``query-id corpus-id score``, then one judgement a line."""
    qrels = _read(path, BEIR_QRELS)
    _refuse_regrades(path, qrels)
    return qrels


def _refuse_regrades(path: Path, qrels: pa.Table) -> None:
    """InputError naming the line where a topic's document is judged again with another grade:
    which of the two holds is unknown (trec_eval refuses any document judged twice). The same
    judgement repeated is one judgement."""
    newline = pa.scalar("\n", qrels["qid"].type)  # no field holds one
    pairs = pc.binary_join_element_wise(qrels["qid"], qrels["docno"], newline)
    if pc.count_distinct(pairs).as_py() == qrels.num_rows:
        return  # each document judged once: the common file, at a third of the grouping's cost
    grade = pc.cast(pc.utf8_ltrim(qrels["value"], "+"), pa.int64())  # "+2": checked an integer
    judged = qrels.append_column("grade", grade)
    spread = judged.group_by(["qid", "docno"]).aggregate([("grade", "min"), ("grade", "max")])
    regraded = spread.filter(pc.not_equal(spread["grade_min"], spread["grade_max"]))
    if not regraded.num_rows:
        return
    first: dict[tuple[str, str], dict] = {}
    for row in judged.join(regraded, ["qid", "docno"]).sort_by("line").to_pylist():
        seen = first.setdefault((row["qid"], row["docno"]), row)
        if seen["grade"] != row["grade"]:
            raise InputError(
                f"{path}: line {row['line']}: document {row['docno']!r} of topic "
                f"{row['qid']!r} is judged {row['grade']} here and {seen['grade']} at line "
                f"{seen['line']}; keep one judgement per topic and document"
            )


class _Repeated(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a key it holds twice: a query written twice would lose
    its first ranking without a word, where a TREC run's repeated line is refused."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _Repeated(key)
        seen[key] = value
    return seen


def read_beir_results(path: Path) -> pa.Table:
    """BEIR/MTEB result JSON: ``{qid: {doc_id: score}}``. A query that retrieved nothing
    (``{}``, a BM25 query with no term in the corpus) is a row with no document: it is run, and
    scores 0, as pytrec_eval scores it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"), object_pairs_hook=_once_each)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a JSON file ({exc}); pass BEIR results JSON") from None
    except _Repeated as repeated:
        raise InputError(
            f"{path}: the key {repeated.key!r} appears twice in one object (a query id, or a "
            "doc id of one query), and JSON keeps only its last value; write each query once, "
            "with each of its documents once"
        ) from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise InputError(
            f"{path}: not BEIR results; expected an object {{query_id: {{doc_id: score}}}}"
        )
    columns: dict[str, list[object]] = {"qid": [], "docno": [], "value": []}
    for qid, scores in data.items():
        for docno, score in scores.items() or [(None, None)]:
            columns["qid"].append(str(qid))
            columns["docno"].append(None if docno is None else str(docno))
            columns["value"].append(None if docno is None else _score(path, qid, docno, score))
    if all(docno is None for docno in columns["docno"]):
        raise InputError(
            f"{path}: no ranked document; write {{query_id: {{doc_id: score}}}} with at least "
            "one document"
        )
    return pa.table(
        {
            "line": pa.nulls(len(columns["qid"]), pa.int64()),
            "qid": pa.array(columns["qid"], pa.string()),
            "docno": pa.array(columns["docno"], pa.string()),
            "value": pa.array(columns["value"], pa.float64()),
        }
    )


def _score(path: Path, qid: str, docno: str, score: object) -> float:
    """A BEIR score as a float; InputError for one that is not a finite number (NaN would rank
    first), as for a TREC run."""
    if isinstance(score, bool) or not isinstance(score, int | float):
        problem = f"score {score!r} is not a number; fix the value"
    elif not math.isfinite(score):
        problem = f"score is {score}; give a finite score"
    else:
        return float(score)
    raise InputError(f"{path}: query {qid!r}, document {docno!r}: {problem}")


def _judged_without_relevant(grades: pa.ChunkedArray) -> np.ndarray:
    """The rows whose grades are listed (the topic is judged) and none above 0."""
    grades = grades.combine_chunks()
    flat = pc.list_flatten(grades).to_numpy(zero_copy_only=False)
    relevant = np.zeros(len(grades), dtype=bool)
    relevant[pc.list_parent_indices(grades).to_numpy()[flat > 0]] = True
    judged = pc.is_valid(grades).to_numpy(zero_copy_only=False)
    return np.flatnonzero(judged & ~relevant)


def ranked_table(
    ranking: pa.Table, qrels: pa.Table, rel_level: int, qrels_path: Path, *, ranks: bool = True
) -> tuple[pa.Table, list[str]]:
    """One row per topic of the run: retrieved_ids in trec_eval's order, the relevant documents
    and their grades; and the notes on topics that are not judged or not run. ``ranks``: the
    run logs a rank column (a TREC run; BEIR results have none), which the note says is not
    read."""
    with connection(qrels_path) as con:
        con.register("ranking", ranking)
        con.register("judgements", qrels)
        table = con.sql(
            query_text("ranked_topics"), params={"rel_level": rel_level}
        ).to_arrow_table()
    if not pc.any(pc.greater(pc.list_flatten(table["relevant_grades"]), 0)).as_py():
        # every retrieval metric needs a relevant document, and a ranking has no other metric
        hint = "pass the qrels of this run"
        if not qrels.num_rows:
            found = "has no judgement"
        elif table["relevant_ids"].null_count == table.num_rows:
            found = "judges none of the run's topics"
        else:
            found = f"judges no document of the run's topics relevant (grade >= {rel_level})"
            if rel_level > 1:  # 1 is the lowest --rel-level takes
                hint += ", or a lower --rel-level if lower grades mean relevant"
        raise InputError(f"{qrels_path}: {found}, so no metric can be computed; {hint}")
    topics = table["question_id"].to_pylist()
    judged = set(pc.unique(qrels["qid"]).to_pylist())
    notes = [
        "Ranked by score descending in single precision, as trec_eval reads scores, ties by "
        f"document id descending{' (the rank column is ignored)' if ranks else ''}; relevant: "
        f"grade >= {rel_level} in {qrels_path.name}, judged not relevant: a lower grade"
    ]
    unjudged = [q for q in topics if q not in judged]
    if unjudged:
        notes.append(
            f"{fmt_count(len(unjudged), 'topic')} of the run "
            f"{agreeing(len(unjudged), 'has', 'have')} no judgements in {qrels_path.name} and "
            f"{agreeing(len(unjudged), 'is', 'are')} not scored: {fmt_listed(unjudged, LISTED)}"
        )
    none_relevant = [topics[i] for i in _judged_without_relevant(table["relevant_grades"])]
    if none_relevant:
        notes.append(
            f"{fmt_count(len(none_relevant), 'topic')} of the run "
            f"{agreeing(len(none_relevant), 'is', 'are')} judged in {qrels_path.name} with no "
            f"document at grade >= {rel_level}, and {agreeing(len(none_relevant), 'is', 'are')} "
            "left out of the retrieval metrics "
            f"(trec_eval counts them in its means): {fmt_listed(none_relevant, LISTED)}"
        )
    not_run = sorted(judged.difference(topics))
    if not_run:
        notes.append(
            f"{fmt_count(len(not_run), 'judged topic')} of {qrels_path.name} "
            f"{agreeing(len(not_run), 'is', 'are')} absent from the run and not scored: "
            f"{fmt_listed(not_run, LISTED)}"
        )
    return table, notes
