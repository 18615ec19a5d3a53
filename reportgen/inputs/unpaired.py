"""Questions that pair with nothing, named so the reader can find them: a RAGAS question's id is
a hash of its text, which names no row of the file, so it is named by its line and its text."""

from __future__ import annotations

from collections.abc import Sequence

from ..formatting import agreeing, fmt_count
from .load import RunFile
from .readers.columns import place, text_id
from .readers.ragas import QUESTION

SHOWN_CHARS = 60  # of a question's text: enough to tell it apart and find it


def named_ids(run: RunFile, ids: Sequence[str], shown: int = 3) -> str:
    """The first ``shown`` of ``ids`` as a message names them, and how many more: RAGAS'
    questions by line and the start of their text, quoted to show its line ends; other ids
    quoted as they are, since their spelling is the point (7.0 and 7, q1 and Q1)."""
    texts = _texts(run)
    names = [
        f"{_where(run, texts[q][0])} ({_start(texts[q][1])!r})" if q in texts else repr(q)
        for q in ids[:shown]
    ]
    more = len(ids) - shown
    return ", ".join(names) + (f" and {more:,} more" if more > 0 else "")


def spaced_apart(runs: tuple[RunFile, RunFile], unmatched: Sequence[Sequence[str]]) -> str:
    """The clause on unpaired RAGAS questions whose texts are the same in both runs (one table
    pairs on its question_id, the other on a hash of its text) or differ only in line ends or
    spaces (a CSV saved with CRLF inside a cell), where the two runs have them; "" when none
    do."""
    texts = [_texts(run) for run in runs]
    same = set.intersection(
        *({texts[i][q][1] for q in ids if q in texts[i]} for i, ids in enumerate(unmatched))
    )
    if same:
        return f"; {_paired_apart(runs, len(same))}"
    plain = []  # per run: the unpaired texts with their spaces collapsed -> row
    for run_texts, ids in zip(texts, unmatched, strict=True):
        plain.append(
            {" ".join(run_texts[q][1].split()): run_texts[q][0] for q in ids if q in run_texts}
        )
    near = [text for text in plain[0] if text in plain[1]]
    if not near:
        return ""
    first = ", ".join(
        f"{run.path}'s {_where(run, rows[near[0]])}" for run, rows in zip(runs, plain, strict=True)
    )
    return (
        f"; {fmt_count(len(near), 'question')} {agreeing(len(near), 'differs', 'differ')} only "
        f"in line endings or spaces ({first}), and RAGAS rows are paired on the exact "
        f"{QUESTION}: write it alike in both runs"
    )


def ids_spaced_apart(labels: tuple[str, str], unmatched: Sequence[Sequence[str]]) -> str:
    """The clause on unpaired question ids of the two runs that are one id but for spaces
    around it ('q1 ' of a hand-edited CSV against 'q1'): listed unquoted, the two lists read
    alike and nothing said why they did not pair; "" when none are."""
    stripped = {q.strip(): q for q in unmatched[1]}
    near = [(q, stripped[q.strip()]) for q in unmatched[0] if q.strip() in stripped]
    if not near:
        return ""
    a, b = near[0]
    return (
        f"; {fmt_count(len(near), 'question')} {agreeing(len(near), 'differs', 'differ')} only "
        f"in spaces around {agreeing(len(near), 'its', 'their')} question_id ({a!r} in run "
        f"{labels[0]}, {b!r} in run {labels[1]}), and ids are paired exactly: write them alike "
        "in both runs"
    )


def _paired_apart(runs: tuple[RunFile, RunFile], n: int) -> str:
    """Why ``n`` questions of the same text in both RAGAS runs did not pair: one table pairs
    on a hash of its text (no question_id column), the other on its own question_id."""
    asked = f"{fmt_count(n, 'question')} {agreeing(n, 'has', 'have')} the same {QUESTION}"
    hashed = [run for run in runs if _hashed(run)]
    if len(hashed) == 1:
        (text,) = hashed
        (own,) = [run for run in runs if run is not text]
        return (
            f"{asked} in both runs under other ids: {text.path} has no question_id and pairs "
            f"on a hash of {QUESTION}, {own.path} on its question_id; give both tables a "
            "question_id column, or neither"
        )
    return f"{asked} in both runs under other question_ids: give both runs the same ids"


def _hashed(run: RunFile) -> bool:
    """Whether a RAGAS run's ids are hashes of its question texts (its table has no id)."""
    return all(text_id("q-", text) == q for q, (_, text) in _texts(run).items())


def _texts(run: RunFile) -> dict[str, tuple[int, str]]:
    """A RAGAS run's question ids -> (row, user_input); empty for any other run, whose ids are
    its own."""
    if run.tool != "ragas" or run.table is None:
        return {}
    ids, questions = (run.table[c].to_pylist() for c in ("question_id", "question"))
    return {q: (row, text) for row, (q, text) in enumerate(zip(ids, questions, strict=True))}


def _where(run: RunFile, row: int) -> str:
    return place(run.lines, row, unit=run.unit)


def _start(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."
