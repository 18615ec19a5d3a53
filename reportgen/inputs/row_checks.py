"""Row-level problems of a run log, as queries/row_problems.sql finds them, in the user's words.

One query finds every problem; ``compare`` refuses a log on its first error, ``validate`` lists
them all. Values that are left out rather than refused (a timeout logged as inf) become warnings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..formatting import agreeing, fmt_count, row_named
from .readers.columns import place
from .readers.ragas import CONTEXTS

EXAMPLES = 5  # examples listed per kind of problem
# the cost columns whose values queries/row_problems.sql checks row by row (not_finite,
# negative, too_large): a warning on them names the row, and no other check repeats it
ROW_CHECKED = ("context_tokens", "latency_ms", "cost_usd")

# kind -> (what is wrong, with {column} and {detail}; what to do)
_WORDS = {
    "null_id": ("has no question_id (null or blank)", "give every row one"),
    "duplicate_id": (
        "repeats a question_id ({detail})",
        "each question must appear once per run (once per sample with a sample column)",
    ),
    "sample_labels": (
        "{column} differs between samples of the question: {detail}",
        "samples of a question share its labels; fix the labels or the question_id",
    ),
    "null_sample": (
        "{column} is null or blank while other rows name theirs",
        "name the sample of every row (one row per question and sample)",
    ),
    "grades_length": ("relevant_grades has {detail}", "give one grade per relevant id"),
    "null_in_list": (
        "{column} has {detail}",
        "a null is no id, span or grade and is never evidence: drop it or log the value",
    ),
    "empty_id": (
        "{column} has an empty id ''",
        "an empty id names no passage, and would match another empty id as evidence: drop it "
        "or log the passage's id",
    ),
    "grade_range": ("{column} has grade {detail}", "expected 0 or more (0 = not relevant)"),
    "share_range": ("{column} is {detail}", "expected a share between 0 and 1"),
    "negative": ("{column} is {detail}", "expected 0 or more"),
    "not_finite": ("{column} is {detail}", "left out of every mean; log a missing value as null"),
    "too_large": (
        "{column} is {detail}",
        "beyond 2**53 (about 9.0e15) the statistics cannot sum it exactly: rescale the column "
        "(seconds rather than ms, thousands of tokens)",
    ),
    "span_doc": ("{column} has a span with no doc_id", "name the document of every span"),
    "span_range": (
        "{column} has span {detail}",
        "expected character offsets 0 <= start < end (end exclusive)",
    ),
    "merged_spans": ("{column} has {detail}", "merged into one label before measuring"),
    "ungraded": (
        "{column} is null for {detail}",
        "each of those labels is read as grade 1 (relevant); log their grades to keep a label "
        "of grade 0 not relevant",
    ),
}
# a list of texts (RAGAS' contexts) hashed to ids: a null there is a null or blank text
_TEXTS = frozenset(texts for _, texts in CONTEXTS.values())
_TEXT_WORDS = (
    "{column} has {detail} or blank text(s)",
    "a null or blank text is no passage: drop it or log the text",
)
# what a problem that refuses nothing does with its rows, as validate's summary says it
_DONE = {"merged_spans": "merged", "ungraded": "read as grade 1"}


@dataclass(frozen=True)
class RowProblem:
    """One kind of problem in one column of one log: how many rows, and the first examples."""

    path: Path
    kind: str
    column: str
    refused: bool  # an error (the log is refused), else the values are left out with a warning
    n: int
    rows: tuple[int, ...]  # 1-based rows of the first examples
    question_ids: tuple[str | None, ...]
    details: tuple[str | None, ...]
    # where the rows are in the file (RunFile.lines): line 3 of a CSV, result 4 of a promptfoo
    # file; None: rows, as a Parquet file has them
    lines: Sequence[int] | None = None
    unit: str = "line"
    # a folder or glob log's shards (RunFile.shards): a row is named in its shard too
    shards: tuple[tuple[str, int], ...] = ()

    def _where(self, *rows: int) -> str:
        """The 1-based ``rows`` (one or two) as the file's reader finds them; in a log of
        shards, with the shard and its own row: 'rows 1 (part-000.parquet row 1) and 20001
        (part-003.parquet row 1)'."""
        if len(self.shards) < 2:
            return place(self.lines, *(row - 1 for row in rows), unit=self.unit)
        ends = np.cumsum([n for _, n in self.shards])
        named = []
        for row in rows:
            shard = int(np.searchsorted(ends, row))  # the first shard ending at or past it
            start = int(ends[shard - 1]) if shard else 0
            named.append(f"{row} ({self.shards[shard][0]} row {row - start})")
        return f"row{'s' if len(rows) > 1 else ''} {' and '.join(named)}"

    def _example(self, i: int) -> str:
        where = row_named(self.rows[i], self.question_ids[i], self._where(self.rows[i]))
        if self.kind == "null_id":
            return where
        detail = self.details[i]
        if self.kind == "duplicate_id":  # "first seen at row 1", as the file's reader finds it
            sample = self._sample(i)
            first = f"first seen at {self._where(self._first(i))}"
            detail = f"and its {sample}, {first}" if sample else first
        elif self.kind == "sample_labels":  # "row 1 has x, this row y"; x and y are logged text
            first, rest = str(detail).split(" has ", 1)
            detail = f"{self._where(int(first.removeprefix('row ')))} has {rest}"
        what = self._words[0].format(column=self.column, detail=detail)
        return f"{where} {what}" if self.kind == "duplicate_id" else f"{where}: {what}"

    @property
    def _words(self) -> tuple[str, str]:
        """What is wrong and what to do, in the words of the column as the log wrote it."""
        if self.kind == "null_in_list" and self.column in _TEXTS:
            return _TEXT_WORDS
        return _WORDS[self.kind]

    def _first(self, i: int) -> int:
        """The row a duplicate_id example's question_id was first seen at (its detail)."""
        return int(str(self.details[i]).rsplit(" ", 1)[1])

    def _sample(self, i: int) -> str:
        """A duplicate_id example's sample ('sample 0') in a log of samples, where a question_id
        repeats by design and what repeats is the pair; else ''."""
        return str(self.details[i]).rsplit("first seen at row ", 1)[0].removesuffix(", ")

    def error(self) -> str:
        """The first example as compare's one-line refusal."""
        hint = self._words[1]
        if self.kind == "null_id":
            where = self._where(self.rows[0])
            return f"{self.path}: {where} has no question_id (null or blank); {hint}"
        if self.kind == "duplicate_id":
            sample = f" with {self._sample(0)}" if self._sample(0) else ""
            return (
                f"{self.path}: question_id {self.question_ids[0]!r}{sample} appears in "
                f"{self._where(self._first(0), self.rows[0])}; {hint}"
            )
        return f"{self.path}: {self._example(0)}; {hint}"

    def summary(self) -> str:
        """Every row of this kind in one line: the count and up to EXAMPLES examples."""
        examples = "; ".join(self._example(i) for i in range(len(self.rows)))
        more = f" and {self.n - len(self.rows)} more" if self.n > len(self.rows) else ""
        label = "error" if self.refused else _DONE.get(self.kind, "left out")
        return (
            f"{self.path}: {label}: {fmt_count(self.n, 'row')} with {self.kind} in {self.column}: "
            f"{examples}{more}; {self._words[1]}"
        )

    def warning(self) -> str:
        """A value left out, as a report warning."""
        if self.kind == "merged_spans":
            return (
                f"{fmt_count(self.n, 'question')} of {self.path.name} "
                f"{agreeing(self.n, 'has', 'have')} overlapping relevant_spans, "
                f"merged into one label each before measuring, first at {self._where(self.rows[0])}"
            )
        if self.kind == "ungraded":
            return (
                f"{fmt_count(self.n, 'row')} of {self.path.name} {agreeing(self.n, 'has', 'have')} "
                "relevant_ids but a null relevant_grades: each of their labels is read as grade 1 "
                f"(relevant), first at {self._where(self.rows[0])}"
            )
        first = self._where(self.rows[0])
        return f"{not_finite(self.n, self.column, self.path.name)}, first at {first}"


def not_finite(n: int, column: str, log: str) -> str:
    """The warning for ``n`` values of ``column`` in the log file ``log`` left out of the means
    for being inf or NaN (a cost column's rows, or a score column's, which has no row numbers)."""
    return (
        f"{fmt_count(n, 'value')} of {column} in {log} {agreeing(n, 'is', 'are')} not finite "
        f"(inf or NaN) and {agreeing(n, 'is', 'are')} left out"
    )
