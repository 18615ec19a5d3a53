"""Scores the logs already carry, compared as metrics.

``--metric COLUMN`` compares any per-question column of every log: booleans as 0/1 outcomes
(fixed/broken, McNemar's test), numbers as continuous scores. ``--lower-is-better COLUMN`` does
the same for a column where less is better (latency, cost, tokens): wins, fixed and broken,
the verdict and the colour of a difference then count a decrease as the gain. The score
columns RAGAS and promptfoo write are offered without a flag (higher is better); one that
cannot be compared is named in a note instead.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, replace

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import InputError
from ..formatting import bidi_isolated, bidi_named, listed
from ..inputs.database import RunDatabase, temporal_columns
from ..inputs.load import RunFile
from ..inputs.readers.columns import place, spells_score
from ..inputs.row_checks import EXAMPLES, ROW_CHECKED, RowProblem, not_finite
from .registry import BY_NAME, Metric, base_name, parse_name, score
from .stats import MetricComparison

# They pair rows, or name what paired.sql derives (k_a, n_relevant_a, ...), or what the
# per-question rows hold beside the metrics (failure_class_a): not scores.
NOT_SCORES = (
    *("question_id", "sample", "epoch", "slice", "failure_class"),
    *("k", "passages", "n_relevant", "evidence_in_context", "prompt_chars"),
)
_INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT")
NUMERIC = frozenset((*_INTEGERS, *(f"U{t}" for t in _INTEGERS), "FLOAT", "DOUBLE"))  # DECIMAL too
BOOLEAN = "BOOLEAN"
# the tool's score columns where less is better (RAGAS' noise sensitivity: the share of an
# answer's claims that are wrong), compared so without --lower-is-better
LESS_IS_BETTER = ("noise_sensitivity",)
NO_VALUE = '"NULL"'  # DuckDB's type of a column missing in every row: a score that always failed


@dataclass(frozen=True)
class Scores:
    """The score columns a comparison compares, and what it says about the others."""

    metrics: tuple[Metric, ...]
    notes: tuple[str, ...]  # offered columns left out, and why; the offered ones compared


def score_kind(data_type: str | None) -> str | None:
    """BOOLEAN, "number", or None for a column that holds neither."""
    if data_type == BOOLEAN:
        return BOOLEAN
    if data_type in NUMERIC or (data_type or "").startswith("DECIMAL"):
        return "number"
    return None


# what a temporal Arrow type holds, as a refusal names it
_TEMPORAL = (
    (pa.types.is_duration, "durations"),
    (pa.types.is_timestamp, "timestamps"),
    (pa.types.is_date, "dates"),
    (pa.types.is_time, "times of day"),
)


def _problem(
    db: RunDatabase,
    types: dict[tuple[str, str], str],
    column: str,
    temporal: dict[str, dict[str, pa.DataType]],
) -> tuple[str, str] | None:
    """(the file or files to name, what to fix) when ``column`` cannot be compared as a score
    (``temporal``: each run's columns of durations, timestamps and the like, by Arrow type)."""
    a, b = db.files["a"].path, db.files["b"].path
    if (own := own_name(column)) is not None:
        return str(a), own
    if (why := bidi_named(column)) is not None:  # --metric refused it already (Options)
        return str(a), why
    for run in "ab":
        path, data_type = db.files[run].path, types.get((run, column))
        if data_type is None:
            return str(path), f"no column {column!r}; name a column every run log has"
        if (held := temporal[run].get(column)) is not None:  # DuckDB reads a duration's ticks
            kind = next(name for test, name in _TEMPORAL if test(held))
            fix = (
                "log it as numbers in one stated unit (as latency_ms is in milliseconds)"
                if kind == "durations"
                else "name a column of scores"
            )
            return str(path), f"column {column} holds {kind} ({held}), not numbers; {fix}"
        if score_kind(data_type) is None and data_type != NO_VALUE:
            return str(path), (
                f"column {column} holds {_unread(db.files[run], column) or data_type}, not "
                "numbers or booleans; log the score as numbers (an empty cell where it is "
                "missing), or as booleans rather than text (a score column's 'true' is not read "
                "as correct's is)"
            )
    kinds = {score_kind(types[run, column]) for run in "ab" if types[run, column] != NO_VALUE}
    if len(kinds) > 1:  # a column of no value in one run takes the other's kind
        return f"{a} and {b}", (
            f"column {column} is {types['a', column]} in one log and {types['b', column]} in "
            "the other; log it the same way in both"
        )
    return None


def _unread(run: RunFile, column: str) -> str | None:
    """Where a column that is text holds a cell that spells no number (a stray 'n/a' among
    40,000 numbers of a CSV): its first such cell by line or row, and how many there are; None
    where every cell spells one (text in a Parquet file)."""
    files = [str(f) for f in run.files or (run.path,)]
    table = run.table if run.table is not None else pq.read_table(files, columns=[column])
    cells = table[column].to_pylist()
    odd = [row for row, cell in enumerate(cells) if cell is not None and not spells_score(cell)]
    if not odd:
        return None
    where = place(run.lines, odd[0], unit=run.unit)
    value = cells[odd[0]]
    return f"text: {where} holds {value!r} ({len(odd):,} of {len(cells):,} cells)"


def own_name(column: str) -> str | None:
    """Why ``column`` cannot be compared as a score under its name: the name is the report's
    own; it spans lines (a CSV's quoted header cell), which no table can show as one name; or
    it ends in @N, as the report names a metric at a cutoff (``judge_v2@3`` was read as a
    metric judge_v2 at k 3, and the report ended in a traceback)."""
    rename = f"rename the column (--map NEW={column}) to compare it"
    if any(unicodedata.category(c) == "Cc" for c in column):
        return f"{column!r} holds a line break or another control character; {rename}"
    if column in NOT_SCORES or base_name(column) in BY_NAME:
        return (
            f"{column} is the name of one of the report's own metrics or of a pairing column; "
            f"{rename}"
        )
    if parse_name(column)[1] is not None:
        return f"{column} ends in @N, as the report names a metric at a cutoff; {rename}"
    return None


def not_offered_note(column: str, where: str, why: str) -> str:
    """The note on a score column of the tool that cannot be compared."""
    return (
        f"Score column {bidi_isolated(column)} of the logs' evaluation tool is not compared "
        f"({where}: {why})"
    )


def less_is_better(column: str) -> bool:
    """Whether a tool defines ``column`` as a score where less is better (LESS_IS_BETTER)."""
    return column.startswith(LESS_IS_BETTER)


def higher_is_better(column: str, lower: Iterable[str], named: Iterable[str]) -> bool:
    """The direction a score column is compared in: lower where --lower-is-better names it, or
    where the tool defines it so and no flag (``named``: those --metric or --lower-is-better
    name) chose otherwise."""
    return column not in lower and (column in named or not less_is_better(column))


def offered_note(kept: list[str]) -> list[str]:
    """The notes on the tool's score columns compared without a flag: higher is better, or
    lower, as the tool defines those of LESS_IS_BETTER."""
    higher = [c for c in kept if not less_is_better(c)]
    lower = [c for c in kept if less_is_better(c)]
    notes = []
    if higher:
        notes.append(
            "Score columns of the logs' evaluation tool compared as metrics, higher is better: "
            f"{', '.join(higher)} (--lower-is-better COLUMN for one where less is better)"
        )
    if lower:
        notes.append(
            "Score columns of the logs' evaluation tool compared as metrics, lower is better as "
            f"the tool defines them: {', '.join(lower)}"
        )
    return notes


def user_scores(db: RunDatabase, asked: tuple[str, ...], lower: tuple[str, ...]) -> Scores:
    """The score columns to compare: those of ``--metric`` and ``--lower-is-better`` (one that
    cannot be compared raises InputError), then those the logs' tool wrote (one that cannot be
    compared is named in a note)."""
    types = {(r.run, r.column_name): r.data_type for r in db.frame("column_types").itertuples()}
    wanted = {column: "--metric" for column in asked} | {c: "--lower-is-better" for c in lower}
    offered = list(dict.fromkeys(db.files["a"].scores + db.files["b"].scores))
    temporal = {r: temporal_columns(db.files[r]) if wanted or offered else {} for r in "ab"}
    for column, flag in wanted.items():
        problem = _problem(db, types, column, temporal)
        if problem:
            raise InputError(f"{problem[0]}: {flag} {column}: {problem[1]}")
    notes, kept = [], []
    for column in offered:
        problem = None if column in wanted else _problem(db, types, column, temporal)
        if problem:
            notes.append(not_offered_note(column, *problem))
        elif column not in wanted:
            kept.append(column)
    notes += offered_note(kept)
    metrics = tuple(
        score(
            c,
            binary=_binary(types["a", c], types["b", c]),
            higher_is_better=higher_is_better(c, lower, wanted),
        )
        for c in [*wanted, *kept]
    )
    return Scores(metrics, tuple(notes))


def _binary(*data_types: str) -> bool:
    """Whether the column holds booleans, read from a run where it holds any value: a column
    missing in every row of one run takes the other run's kind."""
    return BOOLEAN in data_types and all(t in (BOOLEAN, NO_VALUE) for t in data_types)


def with_scores(
    db: RunDatabase, paired: pd.DataFrame, metrics: tuple[Metric, ...]
) -> tuple[pd.DataFrame, list[str]]:
    """``paired`` with ``<column>_a`` and ``<column>_b`` of every score column (a logged column
    the SQL already pairs, context_tokens or answerable, is kept as it is), and a warning for
    each log whose column has values that are NaN or infinite (a timeout logged as inf), left
    out of the means as the cost columns' are."""
    warnings = []
    for m in metrics:
        if f"{m.name}_a" in paired.columns:
            continue
        column = m.source or m.name  # a score's column of the logs
        scored = db.score_column(column)
        refuse_too_large(db, scored, column)
        refuse_too_small(db, scored, column)
        if column not in ROW_CHECKED:  # the row checks' warning names the row
            warnings += _not_finite(scored, column, db)
        values = scored.pivot(index="question_id", columns="run", values="value")
        values = values.reindex(columns=["a", "b"]).add_prefix(f"{m.name}_")
        paired = paired.merge(values, left_on="question_id", right_index=True, how="left")
    return paired, warnings


def _not_finite(scored: pd.DataFrame, column: str, db: RunDatabase) -> list[str]:
    """For each log, its values of a score column left out as NaN or infinite, with the
    questions that hold them (the column's rows are read by question, not by row number)."""
    warnings = []
    for run, rows in scored[scored["not_finite"] > 0].groupby("run"):
        ids = rows["question_id"].astype(str)
        more = f" and {len(ids) - EXAMPLES} more" if len(ids) > EXAMPLES else ""
        warnings.append(
            f"{not_finite(int(rows['not_finite'].sum()), column, db.files[run].path.name)}, "
            f"at question_id {listed(ids.head(EXAMPLES))}{more}"
        )
    return warnings


def score_samples(db: RunDatabase, metrics: tuple[Metric, ...], paired: pd.Series) -> pd.DataFrame:
    """Each score column's samples summarised per run and question as queries/sample_spread.sql
    summarises the report's own metrics (run, question_id, metric, n, unscored: its samples whose
    value is null, samples, mean, variance), for the spread of samples: of the ``paired``
    questions (the column's rows hold every question of a log, a study's too) with a finite
    value."""
    frames = [
        db.score_column(m.source or m.name).rename(columns={"value": "mean"}).assign(metric=m.name)
        for m in metrics
    ]
    columns = ["run", "question_id", "metric", "n", "unscored", "samples", "mean", "variance"]
    return pd.concat(
        [f.loc[(f["n"] > 0) & f["question_id"].isin(paired), columns] for f in frames],
        ignore_index=True,
    )


# a score column whose every value is under this in magnitude keeps at most three significant
# digits of its differences, which the comparison reads to _DECIMALS (1e-12) decimals
SMALLEST_SCALE = 1e-9


def refuse_too_small(db: RunDatabase, scored: pd.DataFrame, column: str) -> None:
    """Refuse a score column whose values all lie under SMALLEST_SCALE: B three times A on every
    question at 1e-13 read 100 ties and an interval of [0, 0], a gate passing equivalence."""
    largest = float(scored["value"].abs().max())
    if 0 < largest < SMALLEST_SCALE:
        a, b = (db.files[run].path for run in "ab")
        where = a if a == b else f"{a} and {b}"
        raise InputError(
            f"{where}: column {column}: every value is under {SMALLEST_SCALE:g} in magnitude "
            f"(the largest {largest:.3g}), too small for its differences to be told from float "
            "noise (they are compared to 12 decimals); log it scaled, in a unit near its values"
        )


def refuse_too_large(db: RunDatabase, scored: pd.DataFrame, column: str) -> None:
    """Refuse a score column with a value the statistics cannot square and sum exactly (as
    row_problems.sql refuses a cost column's), naming the first row of a question that has one
    (a score column's rows carry no row numbers: with samples, the question's first row)."""
    for run in "ab":
        found = scored[(scored["run"] == run) & scored["too_large"].notna()]
        if found.empty:
            continue
        first = db.frame("first_row", run=run, question_ids=found["question_id"].tolist())
        row, question_id = int(first["row_number"][0]), first["question_id"][0]
        value = found.set_index("question_id")["too_large"][question_id]
        problem = RowProblem(
            db.files[run].path,
            "too_large",
            column,
            True,
            len(found),
            (row + 1,),
            (question_id,),
            (f"{value:g}",),
            lines=db.files[run].lines,
            unit=db.files[run].unit,
            shards=db.files[run].shards,
        )
        raise InputError(problem.error())


def oriented(c: MetricComparison, metric: Metric) -> MetricComparison:
    """Wins, losses, fixed and broken counted in the metric's better direction: for a
    lower-is-better score, B below A is a win and 1 -> 0 is fixed."""
    if metric.higher_is_better:
        return c
    return replace(c, wins=c.losses, losses=c.wins, fixed=c.broken, broken=c.fixed)
