"""The golden-set audit, shown before any result: is this set fit to decide on?"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..formatting import fmt_count, listed
from ..inputs.database import RunDatabase
from ..inputs.load import RunFile
from ..inputs.readers.ragas import CONTEXTS
from .metrics import MetricTables
from .slices import slice_labels
from .stats import as_compared

EXPLORATORY_BELOW = 50  # paired questions
# what label_drift.sql compares
LABEL_COLUMNS = ("relevant_ids", "relevant_spans", "answerable", "reference_answer")
EXAMPLES = 10
UNJUDGED_GAP = 0.05  # unjudged@k of the runs this far apart: the audit flags the pool bias

SMELL_TITLES = {
    "short_ranking": "rankings shorter than k",
    # scored once, at its first position (relevant.sql), while the prompt's length counts both
    "repeated_passage": (
        "a passage repeated within the prompt: scored once, while each copy takes a slot of k"
    ),
    "answerable_unlabelled": "marked answerable but without labelled evidence",
    "duplicate_question": "the same question about the same source",
    "span_across_cut": "a labelled span across a cut: no passage the run logged contains it whole",
}
CUT_BY_TABLE = (  # a passage table (--passages) holds every passage of the run's cutting
    "a labelled span across a cut: no passage of the run's passage table (the rankings', "
    "without one) contains it whole"
)
NO_SOURCE = (
    "duplicated question texts (log source_id when one question is asked of several documents)"
)


@dataclass(frozen=True)
class Smell:
    kind: str
    title: str
    counts: dict[str, int]  # run ("a", "b") -> questions
    examples: list[str]  # question ids, first few


@dataclass(frozen=True)
class Unjudged:
    """Unjudged@k: the mean share of the passages the retrieval metrics score (each prompt, or
    the top k with --k) that no label judged, over the paired
    questions labelled in both runs (their first sample, as every label check reads). A data
    caveat, not a quality metric: the run with more unjudged passages has its retrieval metrics
    understated wherever one of them is relevant (pool bias)."""

    k: int
    n: int  # paired questions scored in both runs
    a: float
    b: float
    diff: float  # b - a


@dataclass(frozen=True)
class Unplaced:
    """A run whose logged passages lie in none of the documents its span labels name
    (queries/span_documents.sql): every question scores 0, a naming mismatch, not a retrieval
    miss."""

    run: str  # "a" or "b"
    labelled: int  # documents its labels name
    a_labelled: str  # one of them
    a_logged: str  # a document a passage of the run lies in

    def said(self) -> str:
        return (
            f"no passage it logged lies in any of the {fmt_count(self.labelled, 'document')} "
            f"its labels name (a label names {self.a_labelled!r}, a passage "
            f"{self.a_logged!r}), so every retrieval measure reads 0 on every question; check "
            "that the logs and the labels write each doc_id alike"
        )


def unplaced(db: RunDatabase) -> tuple[Unplaced, ...]:
    """The runs of ``db`` whose passages miss every labelled document; not one of a passage
    table, whose own note names the documents it lacks."""
    if not any("relevant_spans" in run.columns for run in db.files.values()):
        return ()
    rows = db.frame("span_documents").to_dict("records")
    return tuple(Unplaced(**row) for row in rows if db.files[row["run"]].passages is None)


@dataclass(frozen=True)
class Audit:
    n_paired: int
    exploratory: bool
    label_changes: list[tuple[str, str]]  # (question_id, what changed)
    labels_compared: tuple[str, ...]  # the label columns both runs log; () nothing to compare
    coverage: dict[str, list[tuple[str, int]]]  # slice column -> (value, paired questions)
    unanswerable: int  # paired questions unanswerable in A (answerable false or no evidence)
    smells: list[Smell]
    unjudged: Unjudged | None  # None: no label of grade 0 (nothing judged not relevant), or spans
    unanswerable_by: str = ""  # what made run A's questions unanswerable, in the audit's words
    unplaced: tuple[Unplaced, ...] = ()  # runs whose passages miss every labelled document

    @property
    def unanswerable_share(self) -> float:
        return self.unanswerable / self.n_paired if self.n_paired else 0.0


def audit(
    db: RunDatabase, tables: MetricTables, slice_values: Mapping[str, pd.Series], strict: bool
) -> Audit:
    drift = db.frame("label_drift")
    changes = list(zip(drift["question_id"], drift["changed"], strict=True))
    golden = audited(db.files, tables, slice_values, strict, changes)
    smells_frame = db.frame("data_smells", k=tables.named_cutoff or 0)
    smells_frame = _paired(smells_frame, tables)
    titles = SMELL_TITLES
    if not any("source_id" in run.columns for run in db.files.values()):
        titles = titles | {"duplicate_question": NO_SOURCE}
    if any(run.passages is not None for run in db.files.values()):
        titles = titles | {"span_across_cut": CUT_BY_TABLE}
    smells = []
    for kind, title in titles.items():
        rows = smells_frame[smells_frame["kind"] == kind]
        if rows.empty:
            continue
        counts = {run: int((rows["run"] == run).sum()) for run in ("a", "b")}
        examples = list(dict.fromkeys(rows["question_id"]))[:EXAMPLES]
        smells.append(Smell(kind, title, counts, examples))
    return replace(golden, smells=smells, unjudged=unjudged(db, tables), unplaced=unplaced(db))


def audited(
    runs: Mapping[str, RunFile],
    tables: MetricTables,
    slice_values: Mapping[str, pd.Series],
    strict: bool,
    changes: list[tuple[str, str]],
) -> Audit:
    """The audit of what the paired tables and the label changes tell, however the runs were
    read (no data smell, no unjudged@k: the logs' rows tell those); --strict refuses changed
    labels."""
    if strict and changes:
        shown = listed(q for q, _ in changes[:EXAMPLES])
        raise InputError(
            f"{runs['b'].path}: the golden set changed between the runs on "
            f"{fmt_count(len(changes), 'question')} ({shown}); score both runs on one frozen "
            "label set, "
            f"or drop --strict to see the report with a warning{passages_apart(runs)}"
        )
    counts = {c: slice_labels(v).value_counts().sort_index() for c, v in slice_values.items()}
    coverage = {column: [(str(v), int(n)) for v, n in c.items()] for column, c in counts.items()}
    unanswerable = int((~tables.paired["answerable_a"].astype(bool)).sum())
    n = len(tables.paired)
    return Audit(
        n_paired=n,
        exploratory=n < EXPLORATORY_BELOW,
        label_changes=changes,
        labels_compared=tuple(
            c for c in LABEL_COLUMNS if all(c in r.columns for r in runs.values())
        ),
        coverage=coverage,
        unanswerable=unanswerable,
        smells=[],
        unjudged=None,
        unanswerable_by=_unanswerable_by(runs["a"]),
    )


def passages_apart(runs: Mapping[str, RunFile]) -> str:
    """Why every label differs where one run identifies passages by ids and the other by hashes
    of their texts (a RAGAS table logging texts only): one golden set may read as changed on
    every question. "" when both identify them alike."""
    texts = CONTEXTS["relevant_ids"][1]
    by_text = {
        key: run.tool == "ragas" and run.sources.get("relevant_ids") == texts
        for key, run in runs.items()
    }
    if by_text["a"] == by_text["b"]:
        return ""
    a, b = (
        f"by hashes of their texts ({texts})"
        if by_text[key]
        else f"by ids ({runs[key].sources.get('relevant_ids', 'relevant_ids')})"
        for key in "ab"
    )
    return (
        f"; run {runs['a'].label} identifies passages {a} and run {runs['b'].label} {b}, so no "
        "label of one can equal the other's: log the same kind in both runs"
    )


def _unanswerable_by(run: RunFile) -> str:
    """What made run A's questions unanswerable (README, "Answerable"): a question whose labels
    judge no passage relevant has no labelled evidence, so a TREC or BEIR topic judged with no
    relevant document is one; said, since no golden set of theirs marks questions so."""
    if run.tool in ("trec", "beir"):
        return "judged with no relevant document"
    if "answerable" in run.columns:
        return "answerable false, or where it is null, no label of grade > 0"
    return "no label of grade > 0"


def unjudged(db: RunDatabase, tables: MetricTables) -> Unjudged | None:
    """Unjudged@k of both runs, when the labels judge some passage not relevant (grade 0): without
    such labels every passage not labelled relevant looks unjudged. Span labels judge text, not
    passages, and are left out."""
    spans = any("relevant_spans" in run.columns for run in db.files.values())
    if tables.named_cutoff is None or spans:
        return None
    pairs = db.pairs("unjudged", k=tables.named_cutoff if tables.k_source == "--k" else None)
    if not (pairs["not_relevant_a"].sum() + pairs["not_relevant_b"].sum()):
        return None
    both = pairs[["unjudged_a", "unjudged_b"]].dropna()
    if both.empty:
        return None
    a, b = float(both["unjudged_a"].mean()), float(both["unjudged_b"].mean())
    # as compared, off the noise of binary fractions (0.20 - 0.15 = 0.0499...), so that runs
    # exactly UNJUDGED_GAP apart are flagged as the rule says
    return Unjudged(k=tables.named_cutoff, n=len(both), a=a, b=b, diff=float(as_compared(b - a)))


def _paired(frame: pd.DataFrame, tables: MetricTables) -> pd.DataFrame:
    """The rows of paired questions; in Arrow, where pandas' isin over a million strings takes
    seconds."""
    ids = pa.array(tables.paired["question_id"], pa.string())
    return frame[
        pc.is_in(pa.array(frame["question_id"], pa.string()), value_set=ids).to_numpy(
            zero_copy_only=False
        )
    ]
