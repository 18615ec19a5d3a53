"""RAGAS evaluation results, as ``EvaluationResult.to_pandas()`` writes them.

RAGAS rows carry no question id, so questions are paired on a hash of ``user_input``; without
``*_context_ids`` the contexts are texts, and a passage is identified by a hash of its text.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ...errors import InputError
from ...formatting import agreeing, fmt_count
from .columns import (
    Columns,
    Unreadable,
    cell_error,
    is_nan,
    list_item,
    parse_list,
    place,
    text_id,
)

QUESTION = "user_input"
# RAGAS column -> run-log column, copied as they are
RENAMED = {
    "user_input": "question",
    "response": "answer",
    "reference": "reference_answer",
    "faithfulness": "faithfulness",
    "answer_relevancy": "answer_relevance",
}
# run-log list column -> (RAGAS id column, RAGAS text column hashed when the ids are absent)
CONTEXTS = {
    "retrieved_ids": ("retrieved_context_ids", "retrieved_contexts"),
    "relevant_ids": ("reference_context_ids", "reference_contexts"),
}
SCORES = ("faithfulness", "answer_relevancy")  # NaN: the RAGAS metric failed on the row
# run-log columns RAGAS fills that no metric of the report reads (faithfulness is one): offered
# as scores, as RAGAS' other score columns are
OFFERED = ("answer_relevance",)
# the run-log columns read, notes for the report, and each renamed column's name in the file
Reading = tuple[Columns, list[str], dict[str, str]]


# RAGAS before 0.2 -> the name RAGAS gives the column now: such a table is read as one of today
BEFORE_0_2 = {
    "question": QUESTION,
    "answer": "response",
    "contexts": "retrieved_contexts",
    "ground_truth": "reference",
}
_BEFORE_0_2_NEEDS = ("question", "answer", "contexts")  # what tells such a table from a log


def looks_like_ragas(names: list[str]) -> bool:
    """A RAGAS table: user_input, RAGAS' own name, with or without a question_id a user added
    (read as a run log, its contexts and scores were dropped without a word); the generic names
    of RAGAS before 0.2 (question, answer, contexts) only without one."""
    return QUESTION in names or (_before_0_2(names) and "question_id" not in names)


def _before_0_2(names: Collection[str]) -> bool:
    return QUESTION not in names and all(n in names for n in _BEFORE_0_2_NEEDS)


def _renamed_before_0_2(raw: Columns, names: Mapping[str, str]) -> tuple[Columns, dict[str, str]]:
    """A table of RAGAS before 0.2 under today's names, and the file's name of each renamed
    column for messages (a column --map gave already keeps its source's name)."""
    renamed = {BEFORE_0_2.get(n, n): values for n, values in raw.items()}
    shown = {new: names.get(old, old) for old, new in BEFORE_0_2.items() if old in raw}
    return renamed, {**names, **shown}


def _blank(value: Any) -> bool:
    """A missing cell: null, NaN, or an empty cell of a CSV."""
    return value is None or is_nan(value) or (isinstance(value, str) and not value.strip())


def _no_score(value: Any) -> bool:
    """A failed RAGAS metric: NaN in pandas, written as an empty cell, null, NaN, or the text
    NaN (as polars writes it to CSV)."""
    return _blank(value) or (isinstance(value, str) and value.strip().lower() == "nan")


def _passage_text(item: Any) -> str:
    """A context as its text. An object (a LangChain Document dumped whole) is refused: hashed
    as its JSON, it matched no label, and every retrieval metric of the run read 0."""
    if isinstance(item, bool) or not isinstance(item, str | int | float):
        raise Unreadable(
            "is not a text; write each context as its text (a LangChain Document's page_content)"
        )
    return str(item)


def _hashed(value: Any) -> list[str | None] | None:
    """A cell of passage texts as their ids; a null or blank text is no passage, a null id the
    row checks refuse as in a run log (hashed, a missing passage of the prompt matched a
    missing label, a hit)."""
    texts = parse_list(value)
    if texts is None:
        return None
    return [None if _blank(t) else text_id("text-", list_item(_passage_text, t)) for t in texts]


@dataclass(frozen=True)
class Origin:
    """Where a run-log column comes from: the column of ``raw``, and its name in the file."""

    target: str
    source: str
    shown: str


def _hashed_column(path: Path, raw: Columns, lines: list[int] | None, origin: Origin) -> list[Any]:
    """Each cell of the text column ``origin.source`` as hashes of its texts; a cell that is no
    list is named as a run-log list cell is, with its line and the file's own column."""
    hashed = []
    for row, value in enumerate(raw[origin.source]):
        try:
            hashed.append(_hashed(value))
        except Unreadable as exc:
            where = place(lines, row)
            raise cell_error(path, where, origin.shown, origin.target, value, str(exc)) from None
    return hashed


def _refuse_ids_against_texts(path: Path, raw: Columns, names: Mapping[str, str]) -> None:
    """Ids on one side and texts only on the other: an id never equals a hashed text, so every
    retrieval metric would be 0 without a word."""
    (ret_ids, ret_texts), (ref_ids, ref_texts) = CONTEXTS.values()
    for ids, texts, other_ids, other_texts in (
        (ret_ids, ref_texts, ref_ids, ret_texts),
        (ref_ids, ret_texts, ret_ids, ref_texts),
    ):
        if ids in raw and texts in raw and other_ids not in raw and other_texts not in raw:
            raise InputError(
                f"{path}: {names.get(ids, ids)} are passage ids but {names.get(texts, texts)} are "
                "texts, so no passage can match; "
                f"log {other_ids}, or {other_texts} (texts) to hash both sides"
            )


def _contexts(
    path: Path, raw: Columns, lines: list[int] | None, names: Mapping[str, str]
) -> Reading:
    """retrieved_ids and relevant_ids from the context ids, else from hashes of the context
    texts; both sides from one kind, since an id never equals a hashed text."""
    _refuse_ids_against_texts(path, raw, names)
    columns: Columns = {}
    notes = []
    sources = {}
    by_ids = {target: ids in raw for target, (ids, _) in CONTEXTS.items()}
    if not all(by_ids.values()) and all(texts in raw for _, texts in CONTEXTS.values()):
        # one side's ids can never match the other side's hashed texts: hash both sides
        unused = [ids for ids, _ in CONTEXTS.values() if ids in raw]
        absent = [ids for ids, _ in CONTEXTS.values() if ids not in raw]
        if unused:
            notes.append(
                f"{names.get(unused[0], unused[0])} not used: {absent[0]} is "
                "missing, so passages are identified by a hash of their text on both sides"
            )
        by_ids = dict.fromkeys(CONTEXTS, False)
    for target, (ids, texts) in CONTEXTS.items():
        if by_ids[target]:
            columns[target] = raw[ids]
            sources[target] = names.get(ids, ids)
        elif texts in raw:
            origin = Origin(target, texts, names.get(texts, texts))
            columns[target] = _hashed_column(path, raw, lines, origin)
            sources[target] = origin.shown
            notes.append(f"{origin.shown} are texts: a passage is identified by a hash of its text")
    return columns, notes, sources


def _text_ids(path: Path, raw: Columns, lines: list[int] | None, shown: str) -> list[str]:
    """Each row's question id, a hash of its question text (RAGAS rows carry no id): every row
    needs its question, and a question one row."""
    blank = next((row for row, q in enumerate(raw[QUESTION]) if _blank(q)), None)
    if blank is not None:
        raise InputError(
            f"{path}: {place(lines, blank)} has no {shown}; RAGAS rows are paired on the "
            "question text, so give every row its question"
        )
    questions = [str(q) for q in raw[QUESTION]]
    first: dict[str, int] = {}
    for row, question in enumerate(questions):
        seen = first.setdefault(question, row)
        if seen != row:
            raise InputError(
                f"{path}: {place(lines, seen, row)} have the same {shown}; RAGAS rows are paired "
                "on the question text, so keep one row per question"
            )
    return [text_id("q-", q) for q in questions]


def ragas_columns(
    path: Path, raw: Columns, lines: list[int] | None, names: Mapping[str, str] | None = None
) -> Reading:
    """The run-log columns of a RAGAS table, notes for the report, and the file's own name of
    each renamed column (``names``: the file's name of a column ``raw`` holds under --map's)."""
    names = names or {}
    notes = []
    if _before_0_2(raw):
        old = [n for n in BEFORE_0_2 if n in raw]
        raw, names = _renamed_before_0_2(raw, names)
        notes.append(
            f"Columns named as RAGAS before 0.2 ({', '.join(old)}) read as "
            f"{', '.join(BEFORE_0_2[n] for n in old)}"
        )
    shown = names.get(QUESTION, QUESTION)  # the file's name of it, under --map
    if QUESTION not in raw:
        raise InputError(
            f"{path}: no user_input column; pass the table RAGAS writes "
            "(EvaluationResult.to_pandas()) or map the question column with --map user_input=..."
        )
    columns: Columns
    if "question_id" in raw:  # a user's own id: paired on it, as a run log is
        columns = {"question_id": raw["question_id"]}
        notes.append(f"Questions paired on question_id (not on {shown})")
    else:
        columns = {"question_id": _text_ids(path, raw, lines, shown)}
        notes.append(f"Questions paired on a hash of {shown} (RAGAS rows carry no id)")
    sources = dict(names)  # columns kept under their name keep the file's name too
    for source, target in RENAMED.items():
        if source in raw:
            columns[target] = raw[source]
            sources[target] = names.get(source, source)
    for score in SCORES:
        failed = [row for row, v in enumerate(raw.get(score, [])) if _no_score(v)]
        if failed:
            columns[RENAMED[score]] = [None if _no_score(v) else v for v in raw[score]]
            notes.append(_failed_note(len(failed), score))
    contexts, context_notes, context_sources = _contexts(path, raw, lines, names)
    columns.update(contexts)
    notes += context_notes
    sources.update(context_sources)
    if "retrieved_ids" in columns:
        columns["context_ids"] = columns["retrieved_ids"]  # RAGAS scores what the prompt held
        sources["context_ids"] = sources["retrieved_ids"]
    kept = {QUESTION, *RENAMED, *(c for pair in CONTEXTS.values() for c in pair)}
    # other score columns, read from CSV as text, become numbers in to_table
    columns.update({name: values for name, values in raw.items() if name not in kept})
    return columns, notes, sources


def failed_scores(table: pa.Table, scores: tuple[str, ...]) -> list[str]:
    """A note per other score column (context_recall, ...) with rows of no value: the RAGAS
    metric failed there (NaN), and the row is left out of that metric, as for faithfulness."""
    notes = []
    for name in scores:
        failed = pc.sum(pc.is_null(table[name], nan_is_null=True)).as_py()
        if failed:
            notes.append(_failed_note(failed, name))
    return notes


def _failed_note(n: int, column: str) -> str:
    """The rows whose score ``column`` RAGAS could not compute (its NaN), counted."""
    return (
        f"{fmt_count(n, 'row')} {agreeing(n, 'has', 'have')} no {column} (NaN: the RAGAS metric "
        "failed)"
    )
