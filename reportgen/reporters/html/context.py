"""The one typed object the templates receive: every string and number already decided.

The templates format nothing themselves beyond choosing where things go; numbers are turned to
text here with the helpers of ``formatting``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from ... import __version__
from ...analysis.audit import EXAMPLES, UNJUDGED_GAP, Unjudged
from ...analysis.binary_power import EXACT_BELOW
from ...analysis.fairness import (
    BUDGET_TOLERANCE,
    CEILING_GAP,
    LOW_CEILING,
    off_cutoff,
    prompt_modes,
)
from ...analysis.gates import GateResult
from ...analysis.power import CARRIED_BELOW, FEW_CLUSTERS
from ...analysis.registry import RETRIEVAL, base_name
from ...analysis.skew import HIGHLY_SKEWED
from ...analysis.slices import SMALL_SLICE, SliceResult, in_slice_order, is_finding
from ...analysis.spans import CHAR_METRICS
from ...analysis.spans import definitions as span_definitions
from ...analysis.stats import (
    CLUSTERED_NORMAL,
    EXACT_FLIPS,
    FEW_CHANGED,
    NORMAL_FROM,
    NORMAL_LIMIT,
    NORMAL_LIMIT_FROM,
    ONE_WAY_BELOW,
    ONE_WAY_RARER,
    POWER,
    RANDOM_FLIPS,
    SKEW_BOUND,
    STUDENT_T,
    STUDENTIZED_BELOW,
    SYMMETRIC_LIMIT_FROM,
    significance,
)
from ...comparison.compare import (
    CHANGED_SHOWN,
    Comparison,
    Headline,
    lacking_retrieval,
    too_fine_note,
)
from ...diagnosis.diagnose import JUDGED, OFF_QUESTION_BELOW, TARGET, WALK, metric_digits
from ...diagnosis.stages import CELL_NAMES, CELL_TITLES, MAX_JUDGE_GAP
from ...formatting import (
    NOISE,
    and_joined,
    fmt_count,
    fmt_diff,
    fmt_interval,
    fmt_num,
    fmt_p,
    fmt_pct,
    fmt_share,
    interval_side,
    listed,
    metric_label,
    shown_value,
)
from ...inputs.logged import in_spans, log, log_curve, log_retrieval, tool_of
from ...provenance import gzip_data_url, library_versions
from ..report import row_digits
from ..user_text import shown_text
from . import charts
from .charts import Chart, RunColours
from .diagnosis_view import NONE_ANSWERABLE, DiagnosisView, diagnosis_view, none_answerable
from .samples_view import SampleRow, sample_definitions, sample_rows

CURVE_EVERY_K = 100  # the metric-vs-k chart draws every k up to here, then log-spaced ones
MAX_DIGITS = 6  # a change shown with more digits than this reads as no change


@dataclass(frozen=True)
class RunRow:
    key: str = field(metadata={"help": "the run's label: 'A' or 'B' unless --label names it"})
    name: str = field(metadata={"help": "file name as given"})
    sha256: str = field(metadata={"help": "sha256 of the file's bytes"})
    size: str = field(metadata={"help": "file size, human readable"})
    n_questions: int = field(metadata={"help": "distinct question ids in the file"})


@dataclass(frozen=True)
class OptionRow:
    flag: str = field(metadata={"help": "the command-line flag, '--n-boot'"})
    value: str = field(metadata={"help": "its value as given, or what its default means"})


@dataclass(frozen=True)
class MetricRow:
    name: str
    n: int
    a: str
    b: str
    diff: str
    interval: str
    wlt: str = field(metadata={"help": "wins / losses / ties of B against A"})
    fixed_broken: str = field(metadata={"help": "'fixed / broken' for binary metrics, else ''"})
    p: str
    direction: str = field(
        metadata={"help": "'up' (B better), 'down' (B worse) or 'none': the interval's side"}
    )


@dataclass(frozen=True)
class CellTable:
    run: str
    n: int
    cells: dict[str, int]


@dataclass(frozen=True)
class ChangedRow:
    question_id: str
    slice: str
    question: str
    change: str
    values: list[str]


@dataclass(frozen=True)
class MatrixCell:
    text: str = field(metadata={"help": "B - A of one metric in one slice, or 'n/a'"})
    flag: str = field(
        metadata={"help": "'regression' (a finding), 'direction' (worse here, not proven) or ''"}
    )


@dataclass(frozen=True)
class MatrixRow:
    value: str = field(metadata={"help": "the slice value"})
    cells: list[MatrixCell] = field(metadata={"help": "one per metric, as matrix_metrics"})


@dataclass(frozen=True)
class SliceRow:
    value: str
    metric: MetricRow
    p_holm: str
    flags: list[str] = field(
        metadata={"help": "'regression', 'worse here (direction)', 'direction, not proof'"}
    )


@dataclass(frozen=True)
class SliceTable:
    column: str
    metric: str
    rows: list[SliceRow]
    chart: Chart
    matrix_metrics: list[str] = field(metadata={"help": "column heads of the diff matrix"})
    matrix: list[MatrixRow]


@dataclass(frozen=True)
class LabelChange:
    question_id: str
    changed: str = field(metadata={"help": "what of its labels changed between the runs"})


@dataclass(frozen=True)
class SliceCount:
    value: str
    n: int = field(metadata={"help": "paired questions in the slice"})


@dataclass(frozen=True)
class SliceCoverage:
    column: str  # a slice column
    counts: list[SliceCount]  # its values, in slice order


@dataclass(frozen=True)
class Smell:
    title: str
    in_a: int = field(metadata={"help": "questions of A that show it"})
    in_b: int = field(metadata={"help": "questions of B that show it"})
    examples: str = field(metadata={"help": "example question ids, comma-separated"})


@dataclass(frozen=True)
class AuditView:
    n_paired: int
    exploratory: bool
    label_changes: list[LabelChange]  # the first EXAMPLES; every one is in the JSON
    changed_labels: int  # questions whose labels changed, listed or not
    labels_compared: list[str]  # the label columns both runs log
    labels: str  # the label column to log where none is: relevant_spans in span logs
    coverage: list[SliceCoverage]  # one per slice column
    unanswerable: str
    smells: list[Smell]
    unjudged: UnjudgedLine | None  # None: not measured


@dataclass(frozen=True)
class UnjudgedLine:
    """The audit's sentence on unjudged@k, and whether the runs differ by UNJUDGED_GAP or more."""

    text: str
    flagged: bool


@dataclass(frozen=True)
class FairnessCheck:
    name: str
    flagged: bool
    text: str


@dataclass(frozen=True)
class Library:
    name: str
    version: str


@dataclass(frozen=True)
class Definition:
    term: str
    text: str


@dataclass(frozen=True)
class Download:
    name: str = field(metadata={"help": "file name offered to the browser"})
    url: str = field(metadata={"help": "data: URL of the gzipped file"})
    size: str = field(metadata={"help": "compressed size, human readable"})


@dataclass(frozen=True)
class ReportContext:
    title: str
    generated: str | None = field(metadata={"help": "generation time, UTC; None when unknown"})
    tool_version: str
    libraries: list[Library]
    downloads: list[Download] = field(metadata={"help": "per-question table and report JSON"})
    runs: list[RunRow]
    options: list[OptionRow] = field(metadata={"help": "every field of Options"})
    n_paired: int
    warnings: list[str]
    verdict_outcome: str
    verdict_reason: str
    verdict_class: str
    regressions: list[str]
    audit: AuditView
    slices: list[SliceTable]
    slices_left_out: list[str] = field(metadata={"help": "why each slice column is not sliced"})
    slice_hint: str = field(metadata={"help": "what would slice the report, in its tool's words"})
    fairness: list[FairnessCheck]
    no_check: str = field(metadata={"help": "what the checks read, shown when none applies"})
    power: str
    headline: str
    metric_rows: list[MetricRow]
    charts: list[Chart]
    cells: list[CellTable]
    cell_names: dict[str, str]
    changed_columns: list[str]
    changed_rows: list[ChangedRow]
    changed_total: int
    missing: list[str] = field(metadata={"help": "sections left out, each naming the column"})
    definitions: list[Definition]
    diagnosis: DiagnosisView
    changed_slice: bool = field(metadata={"help": "a slice is logged: show its column"})
    changed_text: bool = field(metadata={"help": "a shown question has its text: show them"})
    colours: RunColours = field(metadata={"help": "A's and B's colour on every chart"})
    gate: GateResult | None = field(default=None, metadata={"help": "rule results; None: no rule"})
    samples: list[SampleRow] = field(
        default_factory=list, metadata={"help": "variance within vs between questions"}
    )
    anchor: str = field(
        default="",
        metadata={"help": "prefix of its sections' element ids: '' alone on a page"},
    )
    rows_in: str = field(
        default="the JSON's per_question list",
        metadata={"help": "where every question's row is, for what the page leaves out"},
    )
    holdout: str | None = field(
        default=None,
        metadata={"help": "the held-out check of the one candidate (--holdout); None: none"},
    )


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    raise AssertionError


def _generated(epoch: str | None) -> str:
    moment = datetime.fromtimestamp(int(epoch), UTC) if epoch else datetime.now(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def metric_row(
    c: Any, higher_is_better: bool = True, digits: int | None = None, bar: float | None = None
) -> MetricRow:
    """One metric's row; a score where lower is better says so, and is coloured as a gain
    when its interval lies below zero. ``digits``: the decimals of the metric's overall row,
    which a slice's row shares (``row_digits``); by default those of ``c`` itself. ``bar``: the
    significance an overall row's p is read against (a slice's is read adjusted)."""
    digits = metric_digits(c.metric, c.a) if digits is None else digits
    return MetricRow(
        name=metric_label(c.metric, higher_is_better),
        n=c.n,
        a=fmt_num(c.a, digits),
        b=fmt_num(c.b, digits),
        diff=fmt_diff(c.diff, digits),
        interval=fmt_interval(c.ci_low, c.ci_high, digits),
        wlt=f"{c.wins:,} / {c.losses:,} / {c.ties:,}",
        fixed_broken=f"{c.fixed:,} / {c.broken:,}" if c.fixed is not None else "",
        p=fmt_p(c.p, bar),
        direction=interval_side(c.ci_low, c.ci_high, higher_is_better),
    )


def _higher_is_better(result: Comparison | Headline, c: Any) -> bool:
    return result.tables.metric(base_name(c.metric)).higher_is_better


def _prompt_apart(result: Comparison | Headline, curve: pd.Series, k: int, ranking: str) -> str:
    """Why the curve's nDCG at the prompt's k can differ from the table's: without --k the
    table scores each prompt as logged (context_ids), which need not be the top k of the
    ranking (a reranked or filtered prompt); said only then, and where the two differ."""
    tables = result.tables
    table = result.comparisons.get(tables.name("ndcg"))
    if table is None or not tables.ranking_column.startswith("context_"):
        return ""
    if all(abs(getattr(table, run) - curve.get(run, np.nan)) <= 1e-9 for run in ("a", "b")):
        return ""
    return (
        f" The table's {table.metric} (A {fmt_num(table.a)}, B {fmt_num(table.b)}) scores each "
        f"prompt as logged ({tables.ranking_column}), not the top {k} of {ranking}."
    )


def headline_charts(result: Comparison | Headline, colours: RunColours) -> list[Chart]:
    """The charts of the headline difference: per question, at every cutoff, resampled."""
    tables, c = result.tables, result.comparisons[result.headline]
    diff = tables.difference(base_name(result.headline)).to_numpy(dtype=float)
    keep = ~np.isnan(diff)
    ids = tables.paired["question_id"][keep].tolist()
    label = fmt_pct(result.options.confidence)
    out = [
        Chart(
            id="differences",
            title=f"Per-question differences in {result.headline}",
            reading=f"B wins on {fmt_count(c.wins, 'question')}, loses on {c.losses:,} and ties "
            f"on {c.ties:,}"
            + ("; the mean hides the losses, so read both sides." if c.wins and c.losses else "."),
            spec=charts.differences(ids, diff[keep], result.headline, _higher_is_better(result, c)),
        )
    ]
    if tables.curve is not None and tables.named_cutoff:
        curve = tables.curve
        k = min(tables.named_cutoff, int(curve.k.max()))  # rankings may end before the prompt
        at_k = curve[curve.k == k]
        ndcg = at_k[at_k.metric == "ndcg"].set_index("run")["value"]
        ranking = "retrieved_spans" if tables.ranking_column.endswith("_spans") else "retrieved_ids"
        modes = prompt_modes(tables)
        off = off_cutoff(tables, modes)  # --k scores another cut than the prompts logged
        apart = _prompt_apart(result, ndcg, k, ranking)
        prompts = " or ".join(map(str, sorted(set(modes["a"] + modes["b"]))))
        out.append(
            Chart(
                id="curve",
                title="Retrieval metrics at every cutoff k",
                reading=f"Over {ranking} at k = {k}"
                + (
                    f", where the rankings end, short of {tables.named_cutoff}"
                    if k < tables.named_cutoff
                    else ""
                )
                + ": nDCG A "
                f"{fmt_num(ndcg.get('a'))}, B {fmt_num(ndcg.get('b'))}"
                + (
                    f"; k is --k, while the generators received the prompts logged "
                    f"({ranking.replace('retrieved', 'context')}), most often {prompts} "
                    "passages."
                    if off
                    else "." + apart
                    if apart
                    else "; only the passages up to the prompt cutoff reach the generator."
                ),
                spec=charts.metric_curve(
                    _thin(curve, tables.named_cutoff),
                    tables.named_cutoff,
                    colours,
                    "the cutoff --k scores, k" if off else "the prompt's k",
                ),
            )
        )
    zero_inside = (
        f"zero is {'inside' if c.ci_low <= 0 <= c.ci_high else 'outside'} it."
        if not np.isnan(c.ci_low)
        else ""
    )
    interval = fmt_interval(c.ci_low, c.ci_high)
    normal = c.normal_limit  # a clustered 0/1 outcome's has Tango's interval beside it
    units = fmt_count(c.n, "question") if c.clusters is None else fmt_count(c.clusters, "cluster")
    limit = f"the mean difference's normal limit (Student's t over {units})"
    draws = f"The bars are {len(result.headline_means):,}"
    out.append(
        Chart(
            id="bootstrap",
            title=f"How sure: {'the normal limit' if normal else 'bootstrap'} of the mean "
            f"difference in {result.headline}",
            reading=f"{label} of {limit} lies in {interval}; {zero_inside} {draws} draws of it."
            if c.interval in (NORMAL_LIMIT, CLUSTERED_NORMAL)
            # the interval is not the bars' central share: its level is expanded, or it is
            # studentized, or a score interval sets a side (Definitions)
            else f"The {label} interval ({_aside(c.interval)}) is {interval}; {zero_inside} "
            + (f"{draws} draws of {limit}." if normal else f"{draws} resampled mean differences.")
            if zero_inside
            else f"One {'question' if c.clusters is None else 'cluster'} gives no interval: every "
            "resample is its one difference.",
            spec=charts.bootstrap(
                result.headline_means,
                c.diff,
                c.ci_low,
                c.ci_high,
                result.headline,
                label,
                normal=normal,
            ),
        )
    )
    return out


def _thin(curve: pd.DataFrame, named_cutoff: int) -> pd.DataFrame:
    """The curve at every k up to CURVE_EVERY_K, then at about as many log-spaced k to the
    ranking's depth: a 1,000-deep ranking draws the same shape from a tenth of the points."""
    depth = int(curve["k"].max())
    far: Any = np.geomspace(CURVE_EVERY_K, depth, CURVE_EVERY_K) if depth > CURVE_EVERY_K else []
    keep = {*range(1, CURVE_EVERY_K + 1), *np.round(far).astype(int), named_cutoff, depth}
    return curve[curve["k"].isin(keep)]


def _changed(result: Comparison) -> tuple[list[str], list[ChangedRow], int]:
    """The first rows of the changed questions, with correct, hit and nDCG in both runs."""
    tables = result.tables
    shown = [m for m in ("correct", "hit", "ndcg") if m in tables.metrics]
    rows = [
        ChangedRow(
            question_id=str(r.question_id),
            slice="" if pd.isna(r.slice) else shown_value(str(r.slice)),
            question=shown_text(r.question),
            change=str(r.change),
            values=[
                _from_to(getattr(r, f"{m}_a"), getattr(r, f"{m}_b"), tables.binary(m))
                for m in shown
            ],
        )
        for r in result.changed.head(CHANGED_SHOWN).itertuples()
    ]
    return [tables.name(m) for m in shown], rows, len(result.changed)


def _from_to(a: float, b: float, binary: bool) -> str:
    """'0.620 \u2192 0.624': binary scores as 0 and 1, others with digits that tell them apart."""
    if binary:
        return " \u2192 ".join("n/a" if pd.isna(v) else f"{v:.0f}" for v in (a, b))
    digits = 3
    while fmt_num(a, digits) == fmt_num(b, digits) and a != b and digits < MAX_DIGITS:
        digits += 1
    return f"{fmt_num(a, digits)} \u2192 {fmt_num(b, digits)}"


def _missing(result: Comparison) -> list[str]:
    have = set(result.tables.metrics)
    runs = result.runs.values()  # the advice in the words of their tool (inputs/logged.py)
    tool = tool_of(runs)
    notes = []
    mixed = result.tables.retrieval_left_out
    # both logs label and rank, but no paired question has labelled evidence
    unlabelled = result.tables.without_evidence == len(result.paired) > 0
    if "recall" not in have:
        notes.append(
            f"Retrieval metrics and the metric-vs-k chart: {mixed}."
            if mixed
            else f"Retrieval metrics and the metric-vs-k chart: {NONE_ANSWERABLE}."
            if unlabelled and none_answerable(result)
            else "Retrieval metrics and the metric-vs-k chart: no question has labelled evidence "
            "(a label of grade > 0); label the evidence of the answerable questions."
            if unlabelled
            else f"Retrieval metrics: they need {lacking}."
            if (lacking := lacking_retrieval(result.runs))
            else f"Retrieval metrics: {log(['relevant_ids', 'context_ids'], runs)}."
            if tool is not None
            else f"Retrieval metrics: {log_retrieval(runs)}."
        )
    ranked = all({"retrieved_ids", "retrieved_spans"} & r.columns for r in runs)
    if result.tables.curve is None and not (mixed or unlabelled):
        notes.append(
            "Metric-vs-k chart: compare the run logs; a table of per-question metrics does not "
            "carry their rankings."
            if result.runs["a"].scored is not None and ranked
            else f"Metric-vs-k chart: {log(['retrieved_ids', 'relevant_ids'], runs)}."
            if tool is not None
            else f"Metric-vs-k chart: {log_curve(runs)}."
        )
    if result.runs["a"].scored is not None:
        notes.append(
            "Worked cases, question texts and data checks: compare the run logs; a table of "
            "per-question metrics carries none of them."
        )
    if "correct" not in have:
        notes.append(
            f"Answer correctness and the retrieval-by-answer table: {log(['correct'], runs)}."
        )
    if "faithfulness" not in have:
        notes.append(f"Faithfulness: {log(['faithfulness'], runs)}.")
    return notes


def _rel_level(result: Comparison) -> str:
    """What --rel-level above 1 does to the grades of qrels read with it: said, since nDCG then
    differs from trec_eval's ndcg_cut, which ignores -l."""
    levels = sorted({r.rel_level for r in result.runs.values() if r.rel_level is not None})
    if not levels or levels == [1]:
        return ""
    level = " and ".join(map(str, levels))
    return (
        f" The qrels' grades below {level} (--rel-level) are judged not relevant, grade 0: nDCG "
        "gains count only the grades at or above it, where trec_eval's ndcg_cut, which ignores "
        "its -l, counts every positive grade."
    )


def links_definition(scored: set[str]) -> str:
    """The Links definition, a clause for each stage score the section shows (``scored``, by
    metric name): none speaks of a score whose columns the logs lack."""
    generation = [
        name
        for metric, name in (
            ("faithfulness", "faithfulness"),
            ("answer relevance", "answer relevance"),
            (
                "context utilization",
                "context utilization (share of an answer's distinct citations that are in its "
                "context and labelled relevant)",
            ),
        )
        if metric in scored
    ]
    citations = [m for m in ("citations in context", "citations relevant") if m in scored]
    clauses = []
    if generation:
        names = and_joined(generation)
        verb = "is" if len(generation) == 1 else "are"
        clauses.append(f"{names[0].upper()}{names[1:]} {verb} averaged over retrieval hits only.")
    if scored & {"correct refusals", "wrong refusals"}:
        clauses.append(
            "Correct refusals: share of unanswerable questions abstained on; wrong refusals: "
            "share of answerable ones; each over the questions whose answerability is logged "
            "(answerable, or relevant_ids)."
        )
    if citations:
        shares = "shares" if len(citations) > 1 else "share"
        clauses.append(
            f"{and_joined(citations).capitalize()}: {shares} of an answer's distinct citations."
        )
    return " ".join(clauses)


def next_experiment_definition(result: Comparison) -> str:
    """The walk of the next experiment from the first link it walks in this report (where the
    logs let it start) to the answers and the unanswerable questions, which only correct
    judges: without it the walk ends at the prompt. A path with no step judged nothing before
    the answers."""
    experiments = [e for e in result.diagnosis.next_experiment.values() if e]
    start = min(
        (WALK.index(e.path[0].link) for e in experiments if e.path), default=WALK.index(JUDGED[0])
    )
    judged = "correct" in result.tables.metrics
    walked = [link for link in WALK[start:] if judged or link not in JUDGED]
    if not walked:  # no link to walk: the definition is not shown
        return ""
    support = " and with support" if "faithfulness" in result.tables.metrics else ""
    # a refusal is right on an unanswerable question only where a run logs its refusals
    abstains = any("abstained" in run.columns for run in result.runs.values())
    handled = f"{'refused or ' if abstains else ''}answered correctly"
    spans = in_spans(result.runs.values())
    ranking, prompt = (
        ("retrieved_spans", "context_spans") if spans else ("retrieved_ids", "context_ids")
    )
    # the prompt's share is named hit@context where the prompt is not the list --k scores
    named = {step.metric for e in experiments for step in e.path if step.link == "prompt"}
    prompt_hit = "hit@k" + (
        f", or hit@context where the prompt is {prompt}, not the top k --k scores"
        if "hit@context" in named
        else ""
    )
    first = {
        "candidates": "the share of questions whose evidence reached the candidates (hit at "
        "the ranking's full depth)",
        "prompt": f"the share of questions whose evidence reached the prompt ({prompt_hit}; "
        "with no candidates logged to place its misses on the retrieval, the ranking or the "
        f"context assembly, its step is to log {ranking})",
        # no labelled evidence located: judged on every answerable question
        "answers": f"the share of the answerable questions answered correctly{support}",
        "unanswerable": f"the share of the unanswerable questions {handled}",
    }
    then = {
        # with a ranking, a prompt can leave out what it ranked first
        "prompt": f"then the prompt ({prompt_hit}; the context assembly's experiment, not the "
        "ranking's, where most prompts that missed their evidence had it ranked within their "
        "length)",
        "answers": f"then of the hits the share answered correctly{support}",
        "unanswerable": f"then of the unanswerable questions, if any, the share {handled}",
    }
    shares = ", ".join([first[walked[0]], *(then[link] for link in walked[1:])])
    hit = walked[0] in ("candidates", "prompt")  # the walk starts at labelled evidence
    unlocated = (
        ""
        if walked[0] != "answers"
        else " Where no labelled evidence is located, a wrong answer cannot be placed on the "
        "chain: where the answers fall short of their bar, the step is to log the columns that "
        "locate it (an end-to-end step, which moves no metric and proposes no change to the "
        "pipeline)."
    )
    past = (
        f"If every link holds, the weakest slice of {SMALL_SLICE} or more judged questions with a "
        "wrong answer; without one, the last link again; when no answer fails, add harder "
        "questions to the golden set."
        if judged
        else "The answers are not judged without correct: past the prompt no experiment is "
        "proposed."
    )
    passed_on = (
        " (a prompt under it where every question whose evidence missed it was answered "
        "correctly is passed on: no answer is lost there)"
        if judged and "prompt" in walked
        else ""
    )
    return (
        f"Walk the chain and stop at the first link whose share is under {TARGET}{passed_on}: "
        f"{shares}."
        + unlocated
        + " "
        + past
        + (
            " Hit, not recall: one passage that answers the question is all an answer needs."
            if hit
            else ""
        )
    )


def _ungraded(result: Comparison, metric: str) -> str:
    """nDCG's note where neither log grades its passage labels: every label is grade 1, so the
    gain formula the definition gives is 1 for each, which "gain 2^g − 1 for grade g" alone did
    not say."""
    runs = result.runs.values()
    logged = frozenset.union(*(r.columns for r in runs))
    if metric != "ndcg" or in_spans(runs) or "relevant_grades" in logged:
        return ""
    return " No run logs relevant_grades, so every labelled passage is grade 1 (gain 1)."


def definitions(result: Comparison) -> list[tuple[str, str]]:
    t = result.tables
    k = t.named_cutoff
    gain = "2^g \u2212 1" if result.options.gain == "exponential" else "g"
    # with --k, what the generator received is the prompt-size check's to say, not this one's
    cutoff = (
        f"Retrieval is scored at k = {k} (--k): the first {fmt_count(k, 'passage')} of "
        f"{t.ranking_column}"
        if t.k_source == "--k" and k is not None
        else "Retrieval is scored at the passages the generator received: each question's own "
        f"{t.ranking_column}, k = its length (metric names use the most common length of a "
        f"prompt that is not empty, {k})"
    )
    # span labels: each label is found at the first passage relevant to it ("Span labels")
    rel = "labelled spans" if CHAR_METRICS[0] in t.metrics else "labelled passages"
    spans = in_spans(result.runs.values())
    prompt, ranked = (
        ("context_spans", "retrieved_spans") if spans else ("context_ids", "retrieved_ids")
    )
    out = [
        (
            "Prompt cutoff",
            f"{cutoff}. "
            f"rel = {rel} of grade > 0; a passage repeated in a ranking counts once, at "
            "its first position. Questions without labelled evidence are left out of retrieval "
            "metrics." + _rel_level(result),
        ),
        *(
            (t.name(m), t.metric(m).definition.format(gain=gain) + _ungraded(result, m))
            for m in t.metrics
        ),  # fmt: skip
        (
            f"unjudged@{k}",
            "In the golden-set audit, when some label has grade 0 (judged, not relevant): the "
            "share of the passages the retrieval metrics score (each question's prompt; the top "
            "k with --k, min(k, ranked)) that carry no label of any grade, "
            "ir_measures' 1 \u2212 Judged@k, over the questions labelled in both runs. Not a "
            "quality metric and not in the verdict: a run with more unjudged passages has its "
            "retrieval metrics understated (pool bias); flagged when the runs are "
            f"{fmt_num(UNJUDGED_GAP, 2)} or more apart.",
        ),
        (
            "Pairing",
            "Questions are matched on question_id; each metric is compared over the n "
            "questions scored in both runs. Wins, losses, ties: B better than, worse than, equal "
            "to A (B \u2212 A rounded to 12 decimals: float rounding is a tie), where better is "
            "above, or below for a metric where lower is better. Fixed: 0 in A, 1 in B (1 in A, "
            "0 in B where lower is better); broken: the reverse.",
        ),
        (
            "Interval",
            f"Paired bootstrap of the mean of B \u2212 A: "
            f"{result.options.n_boot} resamples of the questions with replacement, seed "
            f"{result.options.seed}, {fmt_pct(result.options.confidence)}. Continuous metrics "
            f"where under {STUDENTIZED_BELOW:,} questions changed (B \u2212 A off 0, however "
            "many tie): on each side the wider of the studentized "
            "bootstrap and Student's t interval (t's alone where the studentized one is "
            "undefined, as on 2 or 3 questions). Where every difference is the same value c (no "
            "spread to studentize or resample), a metric of known range [lo, hi] takes c - u "
            "(c - lo) to c + u (hi - c), u = z^2 / (n + z^2) being Wilson's bound on the share "
            "of questions (clusters with --cluster) that could differ unseen (none of 20: "
            "\u00b10.161); a score of unknown range keeps c. Where 1 to "
            f"{FEW_CHANGED - 1} questions changed among ties (or lie off one difference every "
            "other question shares, and are counted from it), or under "
            f"{ONE_WAY_BELOW} with fewer than {ONE_WAY_RARER} of them the rarer way, a metric "
            "of known range takes on each side the wider of its interval (with --cluster, the "
            "clusters') and Tango's score "
            "interval of the gains and losses as shares of the range (a run's own mean: "
            "Wilson's of its values as shares, where 1 to "
            f"{FEW_CHANGED - 1} lie off the bound the others sit at): the bootstrap sees nothing "
            "of how large the unseen changes could be. Once "
            f"{NORMAL_LIMIT_FROM:,} questions differ from the commonest difference (usually: once "
            f"{NORMAL_LIMIT_FROM:,} have changed), or {SYMMETRIC_LIMIT_FROM:,} where the "
            f"differences' skewness is at most {SKEW_BOUND} sqrt(n) (by the first Edgeworth "
            "term, t then misses on each side within a tenth of its share), the bootstrap's "
            "normal limit, Student's t "
            "interval, with no resampling. Otherwise the expanded percentile interval "
            "(quantiles at Phi(sqrt(n / (n - 1)) t(n - 1, tail))); for a binary outcome, on each "
            "side the wider of it and Tango's score interval for paired proportions, which keeps "
            "its width where few questions changed (none of 20: \u00b10.161). With --cluster, "
            "whole clusters are resampled (expanded percentile over the G clusters) and on each "
            "side the wider of that interval and Student's t over the clusters is taken (t "
            f"alone once {NORMAL_LIMIT_FROM:,} clusters' sums differ from the commonest, or "
            f"{SYMMETRIC_LIMIT_FROM:,} where the skewness of their sums less size times the "
            f"mean is at most {SKEW_BOUND} sqrt(G): the bootstrap's normal limit): its "
            "variance the larger of the CR2 form (questions independent) and a shift shared by a "
            "cluster's questions (one-way analysis of variance), its degrees of freedom "
            "Satterthwaite's for the CR2 form (G - 1 for equal sizes). A metric whose values lie "
            "in [0, 1] (every built-in "
            "metric) has its interval cut to [\u22121, +1], the range its difference can take "
            "(on 2 or 3 questions Student's t reaches past it); the true difference lies in that "
            "range, so the cut changes neither the coverage nor the test. Costs and the logs' "
            "own scores are not cut. One question (or one cluster) gives no interval.",
        ),
        (
            "Skew",
            "A score, a cost or a count (not a 0/1 outcome) whose B \u2212 A is highly skewed "
            f"(adjusted skewness G1 beyond \u00b1{HIGHLY_SKEWED:g}) over fewer questions than "
            "Sugden's rule asks for a mean that skewed (n > 28 + 25 G1^2) has one bound that may "
            "miss more often than its level: the one away from the tail, which a rare large "
            "difference the questions did not draw would move. A sentence resting on that bound "
            "(the verdict, a slice's regression, a gate's rule) says so; a slice is judged by "
            "its own skewness and by the whole run's, a candidate rule by the skewness of the "
            "candidate's own values. A known range, as faithfulness' [0, 1], bounds nothing "
            "the questions missed where it is far wider than the differences; where few "
            "questions changed among ties the interval reaches to it and needs no such "
            "caveat. The bound "
            "stands: no interval read from the questions alone holds its level for every such "
            "tail, and refusing the bound as proof lost most of the power to find a true "
            "difference on that side (bench/simulate_skew.py).",
        ),
        (
            "Test",
            "Binary outcomes (a 0/1 metric, or one of [0, 1] whose every paired value is 0 or 1 "
            "in both runs, as recall with one labelled passage a question): McNemar's exact "
            "test, two-sided binomial test of fixed against broken, null hypothesis P(fixed) = "
            "1/2. Continuous metrics where under "
            f"{STUDENTIZED_BELOW:,} questions changed: the bootstrap-t test that inverts their "
            "interval (p is the smallest level whose interval excludes 0, so test and interval "
            "agree), Student's t test where that interval is t's alone; from "
            f"{STUDENTIZED_BELOW:,} changed, the paired "
            "permutation test of the mean, each difference's sign flipped, as where every "
            f"difference is the same: every flip up to {EXACT_FLIPS} changed questions, "
            f"{RANDOM_FLIPS:,} seeded random flips (p = (1 + as extreme) / (1 + flips)) under "
            f"{NORMAL_FROM:,} changed, the normal limit of the flipped sum from there; with "
            "--cluster, whole clusters flipped. Where the interval takes Tango's score "
            "interval of few changes (above), the largest p of that test (Student's t test "
            f"under {FEW_CHANGED} changed), the exact sign flips (at least 0.125 on 4 changed "
            "questions, as McNemar's) and the bounded score test, Tango's score test at 0 of "
            "the same shares; with --cluster, the larger of the clusters' flips and the "
            "bounded score test.",
        ),
        (
            "Verdict",
            f"On {result.headline}: B better (worse) when the whole interval lies above "
            "(below) zero, else no evidence of a difference; borderline where the test "
            "disagrees.",
        ),
        (
            "Retrieval-by-answer",
            "Over answerable questions with labelled evidence: evidence in context = a relevant "
            f"passage was in the prompt ({prompt}, or the top k retrieved); a good answer is "
            "correct and supported when both runs log faithfulness, else correct; an "
            "abstention, judged or not, is no good answer. "
            f"{result.supported.text}",
        ),
        (
            "Slices",
            "Each slice is compared on its own questions as above; Holm's step-down adjustment "
            "of the test's p runs over every slice of one metric, in all the slice columns "
            "together (the i-th smallest of m "
            "multiplied by m - i + 1, made monotone, capped at 1). A regression: B worse than A "
            "in a slice (B - A below zero, or above it where lower is better) with adjusted p "
            f"below 1 - confidence, {SMALL_SLICE} questions or more and an interval wholly on "
            "the worse side at the level the adjustment asks for (its bound's one-sided p, "
            "Holm-adjusted over the same slices, below (1 - confidence) / 2, as a per-slice "
            "gate rule reads it), whatever B does overall. Short of that, a slice where B is worse "
            "while ahead on the overall mean (whether or not the verdict finds that gain) is a "
            f"direction only. Under {SMALL_SLICE} questions: a direction, not proof, whatever "
            "its p. With --cluster each slice resamples its own clusters.",
        ),
        (
            "How much the set can tell",
            f"Detectable difference (found {fmt_pct(POWER)} of the time): k sd / sqrt(n), "
            f"k = t(1 - alpha/2) + t({POWER}) with n - 1 degrees of freedom and sd the spread of "
            "B - A; for a binary "
            "outcome k sqrt(psi / (n + k^2)), psi the share of changed questions, and under "
            f"{EXACT_BELOW} questions the exact difference of the bootstrap of its counts and "
            "McNemar's score statistic, as its interval takes both. "
            "Questions "
            "needed: the n at which the observed difference is that detectable difference. "
            "Continuous metrics with under 1,000 questions changed: the difference is found "
            "by resampling the observed differences, recentred at it either way (every question "
            f"moved by it); under {CARRIED_BELOW} changed, the rest tied, one that they alone "
            "carry is found less often. With --cluster: q se, se the "
            "standard error over the G clusters and q the multiple that Student's t with the "
            f"interval's degrees of freedom finds {fmt_pct(POWER)} of the time, se estimated in "
            "both sets; "
            f"the size needed is clusters like these; under {FEW_CLUSTERS} clusters no "
            "realistic difference is found. "
            "The questions needed are kept on the "
            "stated difference's side of n; a difference past the metric's range is not stated.",
        ),
        (
            "Fair comparison",
            "Context budget: mean context_tokens per question, else (span labels) the prompt's "
            f"characters, else its passages, flagged past {BUDGET_TOLERANCE:.0%} apart. "
            "Ceilings (passage labels only): the best mean a metric can reach at each run's own "
            "k over "
            "questions with R relevant passages, min(R, k) / k for precision and min(R, k) / R "
            "for recall (hit, MRR and nDCG can reach 1), a question answered several times the "
            "mean of its samples' at their own prompts; flagged when the runs' ceilings are "
            f"more than {CEILING_GAP} apart or one is under {LOW_CEILING}.",
        ),
        ("Links", links_definition({s.metric for s in result.diagnosis.stages})),
        (
            "Failure classes",
            "The first rule that applies: unanswerable and abstained: ok, whatever correct says "
            "(the abstention is the right answer); unanswerable and answered wrongly: missed "
            "abstention; "
            "answerable and abstained: wrong abstention; no labelled evidence (or no prompt "
            "logged): wrong: unlabelled, correct: ok; correct and labelled evidence not in "
            "context: supported (faithfulness at or above the threshold) by a prompt that "
            "held a passage: unlabelled support, else answered from memory; wrong, "
            "evidence not in context: ranked within the prompt's length (the logged "
            f"{prompt}; at least 1), which left it out: assembly miss; ranked below it: "
            "ranking miss; "
            f"among no candidate: retrieval miss; no candidates logged ({ranked}) to look "
            "in: prompt miss; wrong with evidence in context: faithfulness "
            "below the threshold: "
            f"hallucination; faithful, answer relevance below {OFF_QUESTION_BELOW}: "
            "off-question, else (answer relevance missing too) faithful but wrong; faithfulness "
            "missing (null, or not logged by both runs): generation failure. An answer without "
            "a correct verdict gets no class, unless it abstained: the abstention decides its "
            "class, with or without one.",
        ),
        ("Next experiment", next_experiment_definition(result)),
        (
            "Judge agreement",
            "Over the human-labelled questions of both runs, then of each run alone: accuracy, "
            "and Cohen's kappa = (p_o - p_e) / (1 - p_e), p_o the observed agreement, p_e the "
            "agreement expected from the two margins. Flagged when the accuracy on B's answers "
            f"and on A's differ by more than {MAX_JUDGE_GAP}.",
        ),
    ]
    d = result.diagnosis
    shown = {  # a section's definition goes with the section
        "Prompt cutoff": any(t.metric(m).kind == RETRIEVAL for m in t.metrics),
        "Retrieval-by-answer": d.cells is not None,
        "Slices": bool(result.slices),
        "Fair comparison": bool(result.fairness),
        "Links": any(s.stage != "end-to-end" for s in d.stages),
        "Failure classes": d.failure_classes is not None,
        "Next experiment": any(d.next_experiment.values()),
        "Judge agreement": bool(d.judge_agreement),
        f"unjudged@{k}": result.audit.unjudged is not None,
    }
    out += span_definitions(t.metrics, result.options.span_coverage)
    return [entry for entry in out if shown.get(entry[0], True)] + sample_definitions(t)


def all_charts(context: ReportContext) -> list[Chart]:
    """Every chart of the page, wherever the templates place it."""
    extra = [context.diagnosis.chart] if context.diagnosis.chart else []
    return context.charts + [t.chart for t in context.slices] + extra


def in_section(context: ReportContext, prefix: str) -> ReportContext:
    """The context with the element ids of its sections and charts prefixed, so that several
    on one page stay distinct (a link or a chart's spec found by id reaches its own)."""

    def renamed(chart: Chart) -> Chart:
        return replace(chart, id=prefix + chart.id)

    diagnosis = context.diagnosis
    if diagnosis.chart is not None:
        diagnosis = replace(diagnosis, chart=renamed(diagnosis.chart))
    return replace(
        context,
        charts=[renamed(c) for c in context.charts],
        slices=[replace(t, chart=renamed(t.chart)) for t in context.slices],
        diagnosis=diagnosis,
        anchor=prefix,
    )


def _no_check(result: Comparison) -> str:
    """Why no fair-comparison check applies, naming the columns each reads in the logs' terms
    (spans or passage ids): one the logs lack is asked for, one they log is named, and prompts
    logged with no passage on the questions both runs log are said to be so."""
    runs = list(result.runs.values())
    spans = in_spans(runs)
    prompt, labels = (
        ("context_spans", "relevant_spans") if spans else ("context_ids", "relevant_ids")
    )

    def named(column: str) -> str:
        return column if all(column in r.columns for r in runs) else log([column], runs)

    size = "characters" if spans else "passages"
    empty = ", which hold none here" if named(prompt) == prompt else ""
    ceiling = (
        ""
        if spans  # one passage may cover several span labels: no ceiling
        else "; the best score precision@k and recall@k can reach is shown when it is below 1 "
        f"({named(labels)} with them)"
    )
    return (
        f"No check applies to these logs: prompts are compared by their tokens "
        f"({named('context_tokens')}) or by their {size} ({named(prompt)}){empty}{ceiling}."
    )


def _audit(result: Comparison) -> AuditView:
    a = result.audit
    return AuditView(
        n_paired=a.n_paired,
        exploratory=a.exploratory,
        label_changes=[LabelChange(q, what) for q, what in a.label_changes[:EXAMPLES]],
        changed_labels=len(a.label_changes),
        labels_compared=list(a.labels_compared),
        labels="relevant_spans" if in_spans(result.runs.values()) else "relevant_ids",
        coverage=[
            SliceCoverage(column, [SliceCount(shown_value(value), n) for value, n in counts])
            for column, counts in a.coverage.items()
        ],
        unanswerable=f"{a.unanswerable:,} of {a.n_paired:,} ({fmt_share(a.unanswerable_share)})"
        + (f", {a.unanswerable_by}" if a.unanswerable and a.unanswerable_by else ""),
        smells=[Smell(s.title, s.counts["a"], s.counts["b"], listed(s.examples)) for s in a.smells],
        unjudged=_unjudged(a.unjudged, result.tables.k_source == "--k"),
    )


def _unjudged(u: Unjudged | None, top_k: bool) -> UnjudgedLine | None:
    """The audit's line on unjudged@k, and whether the runs differ by UNJUDGED_GAP or more.
    ``top_k``: --k cut the rankings; else each question's prompt is read whole, as the
    retrieval metrics read it, whatever the k in their names."""
    if u is None:
        return None
    read = f"top {fmt_count(u.k, 'passage')}" if top_k else "passages of each question's prompt"
    text = (
        f"Unjudged@{u.k}, the share of the {read} that no label judged "
        f"(a data caveat, not in the verdict): A {fmt_num(u.a)}, B {fmt_num(u.b)}, B \u2212 A "
        f"{fmt_diff(u.diff)}, over {fmt_count(u.n, 'question')}."
    )
    if abs(u.diff) < UNJUDGED_GAP:  # too close for pool bias to explain a difference
        return UnjudgedLine(text, False)
    more = "B" if u.diff > 0 else "A"
    where = f"top {u.k}" if top_k else "prompts"
    return UnjudgedLine(
        f"{text} {more} has more unjudged passages in its {where}, so its retrieval metrics "
        "are understated wherever one of them is relevant (pool bias); judge them before "
        "trusting the difference.",
        True,
    )


def _slices(result: Comparison) -> list[SliceTable]:
    tables: list[SliceTable] = []
    for column, per_metric in result.slices.items():
        rows = per_metric[result.headline]
        forest = pd.DataFrame(
            {
                "slice": [shown_value(r.value) for r in rows],
                "n": [r.comparison.n for r in rows],
                "diff": [r.comparison.diff for r in rows],
                "low": [r.comparison.ci_low for r in rows],
                "high": [r.comparison.ci_high for r in rows],
                "small": [r.small for r in rows],
            }
        )
        overall = result.comparisons[result.headline].diff
        higher = _higher_is_better(result, result.comparisons[result.headline])
        by_value = {
            metric: {r.value: r for r in metric_rows} for metric, metric_rows in per_metric.items()
        }
        tables.append(
            SliceTable(
                column=column,
                metric=result.headline,
                rows=[
                    SliceRow(
                        value=shown_value(r.value),
                        metric=metric_row(
                            r.comparison,
                            _higher_is_better(result, r.comparison),
                            row_digits(result, result.headline),
                        ),
                        p_holm=fmt_p(r.p_holm, significance(result.options.confidence)),
                        flags=_slice_flags(r, result),
                    )
                    for r in rows
                ],
                chart=Chart(
                    id=f"forest-{len(tables)}",
                    title=f"{result.headline} by {column}",
                    reading=_forest_reading(rows, result.headline, higher),
                    spec=charts.forest(forest, overall, result.headline, column, higher),
                ),
                matrix_metrics=list(per_metric),
                matrix=[
                    MatrixRow(
                        shown_value(value),
                        [
                            MatrixCell(
                                fmt_diff(by_value[m][value].comparison.diff)
                                if value in by_value[m]
                                else "n/a",
                                _matrix_flag(by_value[m].get(value)),
                            )
                            for m in per_metric
                        ],
                    )
                    for value in in_slice_order(r.value for m in per_metric.values() for r in m)
                ],
            )
        )
    return tables


def _slice_flags(r: SliceResult, result: Comparison) -> list[str]:
    """A slice row's note; where Holm's p alone would have made a loss a finding, why it is not:
    the page shows that p, not the bound's (the JSON's p_bound_holm)."""
    alpha = significance(result.options.confidence)
    higher = _higher_is_better(result, r.comparison)
    short = not r.finding and is_finding(r.comparison, r.p_holm, 0.0, alpha, higher)
    return (
        (["regression"] if r.finding else ["worse here (direction)"] if r.regression else [])
        + (["no finding: its interval, widened for Holm, reaches 0"] if short else [])
        + (["direction, not proof"] if r.small else [])
    )


def _matrix_flag(result: SliceResult | None) -> str:
    """A cell's mark, as the slice table words it: only a finding is a regression."""
    if result is None:
        return ""
    return "regression" if result.finding else "direction" if result.regression else ""


def _forest_reading(rows: list[Any], metric: str, higher_is_better: bool) -> str:
    sign = 1 if higher_is_better else -1
    losing = [r.value for r in rows if sign * r.comparison.diff <= -NOISE]
    if not losing:
        return f"B is at least as good as A on {metric} in every slice."
    return f"B is behind A on {metric} in: {listed(losing)}; check each interval before acting."


def download_links(downloads: dict[str, str]) -> list[Download]:
    """Each text of ``downloads`` (file name: text) gzipped into a link of the page."""
    links = []
    for name, text in downloads.items():
        url, size = gzip_data_url(text)
        links.append(Download(name=name, url=url, size=_size(size)))
    return links


def build_context(
    result: Comparison,
    source_date_epoch: str | None,
    colours: RunColours,
    ahead: list[Chart] | None = None,
) -> ReportContext:
    """The page of one comparison, without downloads (download_links); ``colours``: A's and
    B's on its charts (RUN_COLOURS on the two-run page, the runs' own on the page of a
    study); ``ahead``: its headline_charts, when they were built ahead (html_report.draw_ahead)."""
    cols, rows, total = _changed(result)
    verdict = result.verdict
    bar = significance(result.options.confidence)  # the overall rows' p is read against it
    return ReportContext(
        title=f"{result.runs['a'].path.name} vs {result.runs['b'].path.name}",
        generated=_generated(source_date_epoch),
        tool_version=__version__,
        libraries=[Library(n, v) for n, v in sorted(library_versions().items())],
        downloads=[],
        runs=[
            RunRow(
                run.label, str(run.path), run.sha256, _size(run.size_bytes), result.n_questions[key]
            )
            for key, run in result.runs.items()
        ],
        options=[OptionRow(flag, value) for flag, value in result.options.shown()],
        n_paired=len(result.paired),
        warnings=result.warnings,
        verdict_outcome=verdict.outcome,
        verdict_reason=verdict.reason,
        verdict_class={"B better": "better", "B worse": "worse"}.get(verdict.outcome, "none"),
        regressions=verdict.regressions,
        audit=_audit(result),
        slices=_slices(result),
        slices_left_out=[too_fine_note(column, n) for column, n in result.too_fine.items()],
        slice_hint=log(["slice"], result.runs.values())
        if tool_of(result.runs.values())
        else "log a slice column (or name one with --slice)",
        fairness=[FairnessCheck(c.name, c.flagged, c.text) for c in result.fairness],
        no_check=_no_check(result),
        power=result.power.sentence,
        headline=result.headline,
        metric_rows=[
            metric_row(c, _higher_is_better(result, c), bar=bar)
            for c in result.comparisons.values()
        ],
        charts=headline_charts(result, colours) if ahead is None else ahead,
        cells=[
            CellTable(run=key.upper(), n=sum(cells.values()), cells=cells)
            for key, cells in (result.diagnosis.cells or {}).items()
        ],
        cell_names={name: CELL_TITLES[name] for name in CELL_NAMES},
        changed_columns=cols,
        changed_rows=rows,
        changed_total=total,
        missing=_missing(result),
        definitions=[Definition(term, text) for term, text in definitions(result)],
        diagnosis=diagnosis_view(result, colours),
        changed_slice=bool(result.paired["slice"].notna().any()),
        changed_text=any(r.question for r in rows),
        colours=colours,
        gate=result.gate,
        samples=sample_rows(result.tables),
    )


def _aside(method: str) -> str:
    """An interval's method as the words inside a sentence's parentheses: STUDENT_T's own
    parenthesis becomes a clause, not a second pair inside the first."""
    if method == STUDENT_T:
        return "Student's t, as the studentized bootstrap is undefined here"
    return method
