"""Rankings with separate relevance judgements: TREC run files and qrels, BEIR/MTEB results.

trec_eval's semantics: a topic's documents are ordered by score descending, ties broken by
docno descending (the run's rank column is ignored); a document is relevant when its grade is at
least the relevance level (trec_eval's ``-l``, default 1), and a negative or lower grade means
judged not relevant. Topics of the run without judgements and judged topics the run lacks are
left out, as trec_eval leaves them out, and listed in the report's notes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

from ...errors import InputError
from .columns import Columns

Ranking = dict[str, dict[str, float]]  # topic -> docno -> score
Qrels = dict[str, dict[str, int]]  # topic -> docno -> grade
LISTED = 10  # topics named in a note; the rest are counted


def _fields(path: Path, counts: tuple[int, ...], form: str) -> Iterator[tuple[int, list[str]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text; save it as UTF-8") from None
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) not in counts:
            raise InputError(
                f"{path}: line {number} has {len(fields)} fields; expected {form} "
                "separated by spaces or tabs"
            )
        yield number, fields


def _number(path: Path, number: int, text: str, what: str, kind: type) -> float:
    try:
        value = kind(text)
    except ValueError:
        raise InputError(
            f"{path}: line {number}: {what} {text!r} is not a number; fix the line"
        ) from None
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{path}: line {number}: {what} is {text}; give a finite score")
    return value


def read_trec_run(path: Path) -> Ranking:
    """``qid Q0 docno rank score tag`` lines; a docno repeated within a topic is an error."""
    ranking: Ranking = {}
    first_line: dict[tuple[str, str], int] = {}
    for number, (qid, _, docno, _rank, score, _tag) in _fields(
        path, (6,), "6 (qid Q0 docno rank score tag)"
    ):
        seen = first_line.setdefault((qid, docno), number)
        if seen != number:
            raise InputError(
                f"{path}: line {number}: docno {docno!r} already ranked for topic {qid!r} at "
                f"line {seen}; keep one line per document and topic"
            )
        ranking.setdefault(qid, {})[docno] = _number(path, number, score, "score", float)
    if not ranking:
        raise InputError(f"{path}: no ranked document; write `qid Q0 docno rank score tag` lines")
    return ranking


def read_trec_qrels(path: Path) -> Qrels:
    """``qid iter docno rel`` lines (the iter column is ignored)."""
    qrels: Qrels = {}
    for number, (qid, _, docno, grade) in _fields(path, (4,), "4 (qid iter docno rel)"):
        qrels.setdefault(qid, {})[docno] = int(_number(path, number, grade, "grade", int))
    return qrels


def read_beir_qrels(path: Path) -> Qrels:
    """BEIR's qrels TSV: a header ``query-id corpus-id score``, then one judgement a line."""
    qrels: Qrels = {}
    for number, (qid, docno, grade) in _fields(path, (3,), "3 (query-id corpus-id score)"):
        if number == 1 and not grade.lstrip("-").isdigit():
            continue  # the header
        qrels.setdefault(qid, {})[docno] = int(_number(path, number, grade, "score", int))
    return qrels


def read_beir_results(path: Path) -> Ranking:
    """BEIR/MTEB result JSON: ``{qid: {doc_id: score}}``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a JSON file ({exc}); pass BEIR results JSON") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise InputError(
            f"{path}: not BEIR results; expected an object {{query_id: {{doc_id: score}}}}"
        )
    ranking: Ranking = {}
    for qid, scores in data.items():
        for docno, score in scores.items():
            if isinstance(score, bool) or not isinstance(score, int | float):
                raise InputError(
                    f"{path}: query {qid!r}, document {docno!r}: score {score!r} is not a "
                    "number; fix the value"
                )
            ranking.setdefault(str(qid), {})[str(docno)] = float(score)
    return ranking


def _listed(topics: list[str]) -> str:
    shown = ", ".join(topics[:LISTED])
    return shown + (f" and {len(topics) - LISTED} more" if len(topics) > LISTED else "")


def ranked_columns(
    ranking: Ranking, qrels: Qrels, rel_level: int, qrels_path: Path
) -> tuple[Columns, list[str]]:
    """One row per topic of the run: retrieved_ids in trec_eval's order, the relevant documents
    and their grades; and the notes on topics that are not judged or not run."""
    topics = sorted(ranking)
    ordered = {
        qid: [d for _, d in sorted(((s, d) for d, s in ranking[qid].items()), reverse=True)]
        for qid in topics
    }
    relevant = {
        qid: sorted(d for d, g in qrels[qid].items() if g >= rel_level)
        for qid in topics
        if qid in qrels
    }
    columns: Columns = {
        "question_id": topics,
        "retrieved_ids": [ordered[q] for q in topics],
        "relevant_ids": [relevant.get(q) for q in topics],
        "relevant_grades": [
            [qrels[q][d] for d in relevant[q]] if q in relevant else None for q in topics
        ],
    }
    notes = [
        f"Ranked by score descending, ties by document id descending (the rank column is "
        f"ignored); relevant: grade >= {rel_level} in {qrels_path.name}"
    ]
    unjudged = [q for q in topics if q not in qrels]
    if unjudged:
        notes.append(
            f"{len(unjudged)} topic(s) of the run have no judgements in {qrels_path.name} and "
            f"are not scored: {_listed(unjudged)}"
        )
    not_run = sorted(q for q in qrels if q not in ranking)
    if not_run:
        notes.append(
            f"{len(not_run)} judged topic(s) of {qrels_path.name} are absent from the run and "
            f"not scored: {_listed(not_run)}"
        )
    return columns, notes
