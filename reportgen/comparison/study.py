"""A study: one baseline run compared with each of several candidate runs.

Each run is scored once (``metrics.score_run``); each candidate is then compared with the
baseline exactly as two runs are (``compare.compare_runs``), on the questions every run has.
Every interval is at the Bonferroni level 1 - (1 - confidence) / m for m candidates, so that
the verdicts of all candidates hold together at --confidence, and every p adjusted over the
candidates is Bonferroni's too, min(1, m p): the verdict reads its test's p against
(1 - confidence) / m, so the adjusted p beside it reads against 1 - confidence alike. When the
report names a best candidate, it says by how much picking the best of m overstates its gain.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..analysis import holdout
from ..analysis.audit import EXAMPLES
from ..analysis.gates import GateResult, Requirements, RuleError
from ..analysis.holdout import Holdout
from ..analysis.metrics import Options, score_run, scored_labels, typical_prompt
from ..analysis.registry import base_name, parse_name
from ..analysis.stats import cluster_covariance, compare_metric, own_mean, significance
from ..errors import InputError
from ..formatting import (
    NOISE,
    agreeing,
    bidi_isolated,
    fmt_count,
    fmt_diff,
    fmt_listed,
    fmt_num,
    fmt_pct,
)
from ..inputs.database import RunDatabase, float32_columns
from ..inputs.load import RunFile, Source, open_source, source_path, source_stem
from ..inputs.readers import ReadOptions, runs_in
from ..progress import stage
from .compare import (
    Comparison,
    Headline,
    check_pair_rules,
    compare_runs,
    one_value_a_question,
    pair_columns,
    same_rel_level,
)
from .questions import open_questions
from .scored_log import scored_beside_tables
from .scored_pairs import prompt_sizes, question_ids

CHANCE_DRAWS = 100_000  # normal draws behind the chance gain: Monte Carlo error < 0.5% of it
MAX_RUNS = 8  # the colour-blind-safe palette has 8 colours; each run keeps one on every chart
TWO_RUN_LABELS = ("A", "B")  # the labels of two runs without --label, as the report always said
FAMILY_METHOD = "Bonferroni"  # of the intervals and of the p adjusted over the candidates


@dataclass(frozen=True)
class SummaryRow:
    """One candidate against the baseline, on its headline metric."""

    candidate: str
    metric: str
    baseline_mean: float
    candidate_mean: float
    diff: float
    ci_low: float  # at the family level (FAMILY_METHOD)
    ci_high: float
    p: float
    p_adjusted: float  # over the candidates (FAMILY_METHOD)
    fixed: int | None
    broken: int | None
    outcome: str  # the verdict's outcome
    borderline: bool  # the verdict's test and interval disagree
    relevance: str | None = None  # with a margin: the verdict's reading of the interval against it

    @property
    def reads(self) -> str:
        """The outcome for a table of candidates: "better", "worse" or no evidence (with a
        margin, against it: "better; whether by at least 0.05 is not settled", "equivalent
        within 0.05"), and whether the evidence is borderline (the candidate's section says
        why)."""
        reading = (self.relevance or self.outcome).removeprefix("B ")
        return reading + (" (borderline)" if self.borderline else "")


@dataclass(frozen=True)
class Family:
    """How the candidates are tested together."""

    n_candidates: int
    confidence: float  # --confidence: what the intervals hold with, together
    interval_confidence: float  # the level of each interval
    method: str  # of the intervals
    adjustment: str  # of p_adjusted: the intervals' method, which the verdicts rest on
    p_adjusted: dict[str, dict[str, float]]  # candidate -> metric -> p over the candidates

    @property
    def sentence(self) -> str:
        return (
            f"{self.n_candidates} candidates are compared with the baseline: each interval is at "
            f"{self.interval_confidence * 100:.4g}% ({self.method}), so that all "
            f"{self.n_candidates} hold together with {self.confidence * 100:.4g}% confidence, "
            f"and the summary's adjusted p is each candidate's own p times {self.n_candidates}, "
            f"capped at 1 ({self.adjustment}, as the intervals), so that it reads against "
            f"{fmt_pct(1 - self.confidence)} as each verdict's test does; each candidate's "
            "section gives its own p, unadjusted."
        )


@dataclass(frozen=True)
class WinnersCurse:
    """The best candidate's gain, and how much of it choosing the best of m can explain."""

    best: str
    metric: str
    diff: float
    n_candidates: int
    standard_error: float  # the candidates' typical standard error of the headline difference
    expected_max: float  # overstatement in those standard errors
    overstatement: float  # what the best of m equally good candidates gains by chance (below
    # zero for a metric where lower is better)
    spread: float  # standard deviation of the candidates' headline differences
    correlation: float  # mean correlation of the candidates' per-question differences
    tied_with: tuple[str, ...] = ()  # the other candidates whose gain equals the best's
    cluster: str | None = None  # --cluster: the errors and covariance are cluster-robust
    held_out: bool = False  # --holdout: the held-out questions measure the choice
    held_out_candidate: str | None = None  # --holdout: the candidate they measure, the best on
    # the other questions, which need not be the best on all of them
    held_out_straddles: bool = False  # --holdout: clusters lie on both sides of it

    @property
    def sentence(self) -> str:
        """The paragraph on the page and in the summary; a number the data leave undefined
        (NaN in the JSON) is left out with the reason, never printed as nan."""
        m = self.n_candidates
        if len(self.tied_with) == m - 1:
            return self._all_tie
        clustered = "" if self.cluster is None else f", clustered by {self.cluster}"
        errors = (
            # the mean of the candidates' standard errors: one that equals the baseline has 0
            f"{self.expected_max:.2f} times the candidates' mean standard error, "
            f"{fmt_num(self.standard_error)}, "
            if np.isfinite(self.expected_max)
            else ""
        )
        correlation = (
            f": mean correlation {self.correlation:.2f}"
            if np.isfinite(self.correlation)
            else "; their correlation is undefined, a candidate's difference being the same on "
            "every question"
        )
        chance = (
            f"were the {m} equally good, the best would still show about "
            f"{fmt_diff(self.overstatement)} by chance ({errors}given the covariance of the "
            f"candidates' per-question differences, which share the baseline{clustered}"
            f"{correlation})"
            if np.isfinite(self.overstatement)
            else "by how much is not estimated, fewer than two questions being scored in every run"
        )
        leader = (
            f"{self.best} comes out best of the {m} candidates on {self.metric} "
            f"({fmt_diff(self.diff)} against the baseline)"
            if not self.tied_with
            else f"{', '.join([self.best, *self.tied_with[:-1]])} and {self.tied_with[-1]} tie "
            f"for best of the {m} candidates on {self.metric} ({fmt_diff(self.diff)} each against "
            "the baseline)"
        )
        return (
            f"{leader}. The best of {m} measured on the same "
            f"questions looks better than it is: {chance}; the candidates' differences spread by "
            f"{fmt_num(self.spread)}. Only questions that played no part in the choice measure its "
            f"difference without this bias{self._held_out_clause}"
        )

    @property
    def _all_tie(self) -> str:
        """Every candidate at the best's difference: picking one of them picks no larger gain,
        so a chance gain of the best (0.000 for copies of one log) would correct nothing."""
        names = f"{', '.join([self.best, *self.tied_with[:-1]])} and {self.tied_with[-1]}"
        held = (
            ""
            if self.held_out_candidate is None
            else f" The held-out check (--holdout) measures {self.held_out_candidate}, the best "
            "on the questions not held out."
        )
        return (
            f"The {self.n_candidates} candidates tie on {self.metric} ({names}: "
            f"{fmt_diff(self.diff)} each against the baseline): with no spread between them none "
            f"is chosen over another, so there is no choice to correct for.{held}"
        )

    @property
    def _held_out_clause(self) -> str:
        """Which candidate the held-out check measures: chosen on the questions not held out,
        it need not be the best on all of them, whose difference no question then measures
        without the bias."""
        chosen = self.held_out_candidate
        leaders = [self.best, *self.tied_with]
        if chosen is None:
            return " (--holdout holds some out for that)."
        # clusters on both sides carry their luck into the held-out questions (the check says)
        straddle = (
            " Clusters with questions on both sides of --holdout carry some of it into the "
            "held-out ones."
            if self.held_out_straddles
            else ""
        )
        if leaders == [chosen]:
            return (
                ": the held-out ones (--holdout) would, but clusters with questions on both "
                "sides of it carry some of it into them."
                if straddle
                else ": the held-out ones (--holdout) do."
            )
        if chosen in leaders:
            return (
                f": the held-out check (--holdout) measures {chosen}'s, the best on the "
                "questions not held out." + straddle
            )
        named = " or ".join(f"{name}'s" for name in leaders)
        return (
            f", and none measure {named} here: on the questions not held out the best is "
            f"{chosen}, so the held-out check (--holdout) measures {chosen}'s difference instead."
            + straddle
        )


@dataclass(frozen=True)
class RunMean:
    """One run's own headline mean and interval (not a difference)."""

    label: str
    mean: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class MatrixCell:
    """Run ``column`` minus run ``row`` on the headline metric, over the shared questions."""

    row: str
    column: str
    diff: float
    ci_low: float  # at the Bonferroni level over every pair of runs (confidence)
    ci_high: float
    confidence: float
    p: float  # the paired test of the same difference, unadjusted: read against 1 - confidence

    @property
    def _excludes_zero(self) -> bool:
        return self.ci_low > 0 or self.ci_high < 0

    @property
    def _significant(self) -> bool:
        return self.p < significance(self.confidence)

    @property
    def differs(self) -> bool:
        """Interval and test agree that the runs differ, as a verdict that is not borderline."""
        return self._excludes_zero and self._significant

    @property
    def borderline(self) -> bool:
        """The interval and the test disagree, as in a borderline verdict."""
        return self._excludes_zero != self._significant


@dataclass(frozen=True)
class Study:
    options: Options  # as given; each pair's options carry the family's interval level
    runs: list[RunFile]  # the baseline first, then the candidates in order
    pairs: list[Comparison]  # one per candidate: (baseline, candidate)
    missing: dict[str, list[str]]  # run label -> ids another run has and this one lacks
    family: Family | None  # None with one candidate
    summary: list[SummaryRow]
    run_means: list[RunMean]
    curse: WinnersCurse | None  # None with one candidate
    matrix: list[MatrixCell]  # every ordered pair of runs; empty with one candidate
    gate: GateResult | None
    holdout: Holdout | None = None  # with --holdout
    # --holdout COLUMN=VALUE: a candidate logging COLUMN with other values than the baseline's
    # (the side is the baseline's), as a warning each
    holdout_notes: tuple[str, ...] = ()

    @property
    def baseline(self) -> RunFile:
        return self.runs[0]

    @property
    def headline(self) -> str:
        """The metric the run chart, the matrix, the winner's curse and --holdout rank by."""
        return ranked_headline(self.pairs)

    @property
    def n_questions(self) -> list[int]:
        """The distinct question ids of each log, as ``runs``."""
        return [self.pairs[0].n_questions["a"], *(p.n_questions["b"] for p in self.pairs)]

    @property
    def n_paired(self) -> int:
        return len(self.pairs[0].paired)

    @property
    def warnings(self) -> list[str]:
        missing = [
            f"{fmt_count(len(ids), 'question')} missing from run {label} "
            f"{agreeing(len(ids), 'is', 'are')} left out of every comparison: "
            + fmt_listed(ids, EXAMPLES)
            for label, ids in self.missing.items()
            if ids and self.family is not None
        ]
        unranked = [
            f"Candidate {p.runs['b'].label} is compared on {p.headline}, not {self.headline}: "
            f"it is left out of the chart of every run, the matrix and the ranking on "
            f"{self.headline}"
            + (
                f"; pass --k {cutoff} to score every run at {cutoff}"
                if (cutoff := parse_name(self.headline)[1]) is not None
                and base_name(p.headline) == base_name(self.headline)
                else ""
            )
            for p in self.pairs
            if self.headline not in p.comparisons and self.family is not None
        ]
        return missing + unranked + _same_candidates(self.runs[1:]) + list(self.holdout_notes)


def _same_candidates(candidates: list[RunFile]) -> list[str]:
    """Candidates that are one log read the same way (a path given twice): they tie by
    construction, and the ranking and the winner's curse read a choice that is none."""
    first: dict[tuple[str, object], RunFile] = {}
    lines = []
    for run in candidates:
        if (seen := first.setdefault((run.sha256, run.read), run)) is not run:
            lines.append(
                f"Candidate {run.label} is the same log as candidate {seen.label} (sha256 "
                f"{run.sha256[:12]}, read the same way): they tie by construction; check the "
                "logs given"
            )
    return lines


def run_labels(
    paths: Sequence[Source], labels: tuple[str, ...], held: tuple[str, ...] = ()
) -> list[str]:
    """--label in order, else the labels of the runs one file holds (``held``), else A and B
    for two runs, else each file's stem; all distinct."""
    if labels and len(labels) != len(paths):
        raise InputError(
            f"--label: {fmt_count(len(labels), 'label')} for {len(paths)} run logs; give one per "
            "log, in order"
        )
    blank = next((i for i, label in enumerate(labels, start=1) if not label.strip()), None)
    if blank is not None:  # every sentence and table names the run by it
        raise InputError(
            f"--label: label {blank} is {'empty' if not labels[blank - 1] else 'blank'}; give "
            "each run a label that is not blank, or drop --label"
        )
    if not labels:
        labels = held or (
            TWO_RUN_LABELS if len(paths) == 2 else tuple(source_stem(p) for p in paths)
        )
    repeated = [label for label in dict.fromkeys(labels) if labels.count(label) > 1]
    if repeated:
        raise InputError(
            f"--label: run label {repeated[0]!r} is given to two logs; give each run its own "
            "label with --label"
        )
    # a label holding a bidi control is isolated with it: every sentence that names the run
    # then reads as written around the label; a right-to-left label without one stays as
    # written, the key the JSON and a gate's results name the run by
    return [bidi_isolated(label, letters=False) for label in labels]


def _order(paths: Sequence[Source], labels: list[str], baseline: str | None) -> list[int]:
    if len(paths) < 2:
        given = f"{source_path(paths[0])} is one run; " if paths else ""
        raise InputError(f"compare: {given}give a baseline log and at least one candidate log")
    if len(paths) > MAX_RUNS:
        raise InputError(
            f"compare: {len(paths)} run logs; compare at most {MAX_RUNS} at once (one baseline "
            f"and {MAX_RUNS - 1} candidates)"
        )
    baseline = None if baseline is None else bidi_isolated(baseline, letters=False)
    if baseline is not None and baseline not in labels:
        raise InputError(
            f"--baseline {baseline}: no run has that label; name one of {', '.join(labels)}"
        )
    first = 0 if baseline is None else labels.index(baseline)
    order = [first, *(i for i in range(len(paths)) if i != first)]
    # every comparison, a study's sections too, calls its baseline A and its candidate B
    a, b = TWO_RUN_LABELS
    base, candidates = labels[order[0]], [labels[i] for i in order[1:]]
    if base == b or a in candidates:
        chosen = f"--baseline {baseline}" if baseline is not None else "--label"
        named = (
            f"the candidate {candidates[0]}"
            if len(candidates) == 1
            else f"a candidate labelled {a}"
            if a in candidates
            else ""
        )
        raise InputError(
            f"{chosen}: the report calls the baseline {a} and the candidate {b}, so with the "
            f"baseline labelled {base}{' and ' + named if named else ''} its verdict would name "
            "the wrong run; give the baseline log first, or other labels"
        )
    return order


def family_level(confidence: float, n_candidates: int) -> float:
    """Each interval's level so that n_candidates intervals hold together at ``confidence``."""
    return confidence if n_candidates == 1 else 1 - (1 - confidence) / n_candidates


def _common_ids(
    runs: list[RunFile],
) -> tuple[list[str], dict[str, list[str]], dict[str, int]]:
    """The ids every run has (in the baseline's order), per run the ids it lacks, and per run
    how many distinct ids it has."""
    ids = {}
    for run in runs:
        if run.scored is not None:
            ids[run.label] = question_ids(run)
            continue
        db = RunDatabase(run)
        try:
            ids[run.label] = db.question_ids()
        finally:
            db.close()
    held = {label: set(v) for label, v in ids.items()}
    everywhere = set.intersection(*held.values())
    seen = list(dict.fromkeys(q for v in ids.values() for q in v))
    missing = {label: [q for q in seen if q not in held[label]] for label in ids}
    counts = {label: len(v) for label, v in ids.items()}
    return [q for q in ids[runs[0].label] if q in everywhere], missing, counts


def run_study(
    paths: Sequence[Source],
    options: Options,
    requirements: Requirements | None = None,
    reading: tuple[ReadOptions, ...] | None = None,
    labels: tuple[str, ...] = (),
    baseline: str | None = None,
    accepted: Callable[[], object] | None = None,
    drafted: Callable[[Headline], object] | None = None,
) -> Study:
    """``accepted``: called once the logs have passed their checks; ``drafted``: with each
    candidate's headline intervals, before its slices' (see compare_runs)."""
    held: tuple[str, ...] = ()
    if len(paths) == 1 and isinstance(paths[0], Path):  # one file holding several runs
        # (promptfoo): all of them, in its order
        runs_held = runs_in(paths[0], reading[0] if reading else ReadOptions())
        if len(runs_held) > MAX_RUNS:
            raise InputError(
                f"{paths[0]}: holds {len(runs_held)} runs; compare at most {MAX_RUNS} at once: "
                "give the file once per run chosen, each with --run-filter NAME"
            )
        paths = [paths[0]] * len(runs_held)
        reading = tuple(read for _, read in runs_held)
        held = tuple(label for label, _ in runs_held) if len(runs_held) > 1 else ()
        if len(runs_held) == 1:  # what keeps the file from holding two runs is said first
            open_source(paths[0], source_stem(paths[0]), reading[0])
    names = run_labels(paths, labels, held)
    order = _order(paths, names, baseline)
    paths = [paths[i] for i in order]
    names = [names[i] for i in order]
    reads = [reading[i] for i in order] if reading else [ReadOptions() for _ in paths]
    m = len(paths) - 1
    stage("reading the logs")
    # side by side: hashing two 430 MB logs (1M questions) took 0.6 s one after the other
    with ThreadPoolExecutor(max_workers=min(len(paths), os.cpu_count() or 1)) as pool:
        runs = list(pool.map(open_source, paths, names, reads))
    same_rel_level(runs)  # before a log among tables is scored
    runs = scored_beside_tables(scored_labels(runs), options)
    keep: list[str] | None = None
    missing: dict[str, list[str]] = {}
    n_questions: dict[str, int] = {}
    if m > 1:
        keep, missing, n_questions = _common_ids(runs)
        if not keep:
            raise InputError(
                f"{runs[0].path}: no question id is in every run log; the runs cannot be paired"
            )
    for run in runs[1:]:
        pair_columns(runs[0], run, options)
    # Each run scored once, for every pair it is in; one pair scores both in its own database.
    # Tables of per-question metrics are scored already.
    tables = runs[0].scored is not None
    if m > 1 and not tables:
        stage("scoring each run")
    scored = []
    if m > 1 and not tables:
        single = frozenset[str]().union(*map(float32_columns, runs))
        scored = [score_run(run, options, keep, single) for run in runs]
    if m > 1 and requirements and options.cutoff is None:
        sizes = (
            [prompt_sizes(run) for run in runs]
            if tables
            else [s.tables["facts"].column("n_context").to_pandas() for s in scored]
        )
        _check_prompt_sizes(runs, sizes, requirements)
    if m > 1 and requirements:  # every rule against every candidate, before any bootstrap
        stage("checking the rules")
        for i, run in enumerate(runs[1:], start=1):
            pair = (scored[0], scored[i]) if scored else None
            check_pair_rules((runs[0], run), options, requirements, keep, pair)
    pair_options = replace(options, confidence=family_level(options.confidence, m))
    pairs = [
        compare_runs(
            (runs[0], run),
            pair_options,
            requirements,
            keep,
            (scored[0], scored[i]) if scored else None,
            accepted,
            candidate_name=run.label if m > 1 else "B",  # among several, "B" would not say which
            held=(n_questions[runs[0].label], n_questions[run.label]) if keep else None,
            drafted=drafted,
            place=(i, m),
        )
        for i, run in enumerate(runs[1:], start=1)
    ]
    if m == 1:
        missing = {names[0]: pairs[0].tables.only_b, names[1]: pairs[0].tables.only_a}
    family = _family(pairs, options.confidence, pair_options.confidence) if m > 1 else None
    held_out, held_notes = _holdout(pairs, options) if options.holdout else (None, [])
    return Study(
        options=options,
        runs=[pairs[0].runs["a"], *(p.runs["b"] for p in pairs)],
        pairs=pairs,
        missing=missing,
        family=family,
        summary=[_summary(p, family) for p in pairs],
        run_means=_run_means(pairs, options),
        curse=_curse(pairs, options, held_out) if m > 1 else None,
        matrix=_matrix(pairs, options) if m > 1 else [],
        gate=_gate(pairs),
        holdout=held_out,
        holdout_notes=tuple(held_notes),
    )


def _check_prompt_sizes(
    runs: list[RunFile], sizes: list[pd.Series], requirements: Requirements
) -> None:
    """Refuse a rule on a retrieval metric (``ndcg@5``) when the runs' prompts hold different
    numbers of passages: each pair names its metrics at its own typical prompt size, so the
    rule would name a metric some candidates are not compared on, whichever k it gives."""
    # a log with no prompt has no retrieval metric at any k: the rule's check in its pair says so
    prompts = [
        (run.path, typical_prompt(size))
        for run, size in zip(runs, sizes, strict=True)
        if {"context_ids", "context_spans"} & run.columns
    ]
    sizes = [size for _, size in prompts]
    if len(set(sizes)) < 2:
        return
    usual = max(sorted(set(sizes)), key=sizes.count)  # the most common (ties: the smaller)
    others = [path for path, size in prompts if size == usual]
    differing = [
        f"{path}'s prompt holds {fmt_count(size, 'passage')}"
        for path, size in prompts
        if size != usual
    ]
    rest = "the others'" if len(others) > 1 else f"{others[0]}'s"
    for rule in requirements.rules:
        _, cutoff = parse_name(rule.metric)
        if cutoff is not None:
            raise RuleError(
                f"{rule.named}: {', '.join(differing)}, {rest} {usual}, so no retrieval "
                f"metric has one name in every comparison; pass --k {cutoff} to score every run "
                f"at {cutoff}, or drop the rule"
            )


def _family(pairs: list[Comparison], confidence: float, level: float) -> Family:
    """Every metric's p adjusted over all m candidates, as every interval is at 1 - alpha / m
    (whether or not each candidate logs the metric): a Holm p beside those intervals read
    "0.031" beside "no evidence" and beside a borderline "better" alike."""
    m = len(pairs)
    adjusted = {
        p.runs["b"].label: {name: min(1.0, m * c.p) for name, c in p.comparisons.items()}
        for p in pairs
    }
    return Family(m, confidence, level, FAMILY_METHOD, FAMILY_METHOD, adjusted)


def _summary(pair: Comparison, family: Family | None) -> SummaryRow:
    """``family``: None with one candidate, whose p is its own."""
    c = pair.comparisons[pair.headline]
    label = pair.runs["b"].label
    return SummaryRow(
        candidate=label,
        metric=pair.headline,
        baseline_mean=c.a,
        candidate_mean=c.b,
        diff=c.diff,
        ci_low=c.ci_low,
        ci_high=c.ci_high,
        p=c.p,
        p_adjusted=c.p if family is None else family.p_adjusted[label][pair.headline],
        fixed=c.fixed,
        broken=c.broken,
        outcome=pair.verdict.outcome,
        borderline=pair.verdict.borderline,
        relevance=pair.verdict.relevance,
    )


def ranked_headline(pairs: Sequence[Comparison]) -> str:
    """The metric the study's charts, the winner's curse and --holdout rank the candidates by:
    the headline most of them are compared on (ties: the earlier candidate's), so a candidate
    whose prompt size names it otherwise (ndcg@3 among ndcg@5) is the one left out, wherever
    it is listed."""
    return Counter(p.headline for p in pairs).most_common(1)[0][0]


def _comparing_headline(pairs: list[Comparison]) -> list[Comparison]:
    """The pairs that compare the ranked headline: a candidate whose log lacks its column, or
    whose prompt size names it otherwise, is left out rather than ranked by another metric."""
    headline = ranked_headline(pairs)
    return [p for p in pairs if headline in p.comparisons]


def _headline_columns(pairs: list[Comparison]) -> list[tuple[str, np.ndarray]]:
    """Each run's per-question headline score, over the shared questions in question_id order
    (candidates without the headline metric are left out; the baseline's scores are those of a
    pair that compares it)."""
    first = _comparing_headline(pairs)[0]
    base = base_name(ranked_headline(pairs))
    columns = [(first.runs["a"].label, first.paired[f"{base}_a"])]
    columns += [(p.runs["b"].label, p.paired[f"{base}_b"]) for p in _comparing_headline(pairs)]
    return [(label, c.to_numpy(dtype=float, na_value=np.nan)) for label, c in columns]


def _column_clusters(pairs: list[Comparison], options: Options) -> np.ndarray | None:
    """--cluster's label of each row of _headline_columns (None without it): the run chart's
    and the matrix's intervals resample whole clusters, as every pair's do."""
    labels = _clusters(_comparing_headline(pairs)[0], options)
    return None if labels is None else labels.to_numpy(dtype=str)


def _headline_binary(pairs: list[Comparison], headline: str) -> bool:
    """Whether the headline is a 0/1 outcome of every run the study compares on it: of each
    pair's (a run of several samples a question, or one whose values of a metric of [0, 1] are
    not all 0 or 1, makes it continuous for every run). The first pair's alone took a run of
    samples' share of 0.575 for a 0/1 mean (its interval reaching 0.894) and tested another
    run's nDCG of 0.63 by McNemar's test."""
    return all(p.tables.binary(base_name(headline)) for p in _comparing_headline(pairs))


def _run_means(pairs: list[Comparison], options: Options) -> list[RunMean]:
    """Every run's own headline mean with its interval at --confidence, for the summary chart."""
    headline = ranked_headline(pairs)
    tables = _comparing_headline(pairs)[0].tables
    binary = _headline_binary(pairs, headline)
    clusters = _column_clusters(pairs, options)
    out = []
    for label, values in _headline_columns(pairs):
        scored = ~np.isnan(values)
        own = own_mean(
            headline,
            values[scored],
            binary=binary,
            n_boot=options.n_boot,
            confidence=options.confidence,
            seed=options.seed,
            span=tables.own_range(base_name(headline)),  # a mean's, not a difference's
            clusters=None if clusters is None else clusters[scored],
        )
        out.append(RunMean(label, own.b, own.ci_low, own.ci_high))
    return out


def _matrix(pairs: list[Comparison], options: Options) -> list[MatrixCell]:
    """Every run against every other on the headline, intervals and tests at the Bonferroni
    level over the pairs of runs."""
    columns = _headline_columns(pairs)
    n_pairs = len(columns) * (len(columns) - 1) // 2
    level = family_level(options.confidence, n_pairs)
    headline = ranked_headline(pairs)
    binary = _headline_binary(pairs, headline)
    clusters = _column_clusters(pairs, options)
    cells = []
    for i, (row, x) in enumerate(columns):
        for column, y in columns[i + 1 :]:
            c, _ = compare_metric(
                headline,
                x,
                y,
                binary=binary,
                n_boot=options.n_boot,
                confidence=level,
                seed=options.seed,
                clusters=clusters,
            )
            cells.append(MatrixCell(row, column, c.diff, c.ci_low, c.ci_high, level, c.p))
            # 0.0 - x, not -x: two runs of one mean would mirror as -0.0 (the JSON's "-0.0")
            mirror = (0.0 - c.diff, 0.0 - c.ci_high, 0.0 - c.ci_low)
            cells.append(MatrixCell(column, row, *mirror, level, c.p))
    return cells


def chance_gain(
    differences: np.ndarray, seed: int, clusters: np.ndarray | None = None
) -> tuple[float, float]:
    """What the best of m equally good candidates shows by chance, and the candidates' mean
    correlation: E[max_j Y_j] for Y ~ N(0, cov(D) / n), D the n x m per-question differences;
    with ``clusters`` (a label per row, two or more) Y's covariance is the cluster-robust one
    (cluster_covariance), as the cluster intervals resample whole clusters.

    The differences share the baseline's per-question scores, so they correlate (about 0.5 for
    candidates independent given the question); the expected maximum of m independent normals
    times a standard error would overstate the chance gain by about 1 / sqrt(1 - rho)
    (bench/simulate_winners_curse.py measures both against known truth).
    """
    n, m = differences.shape
    covariance = (
        np.cov(differences, rowvar=False) / n
        if clusters is None
        else cluster_covariance(differences, pd.factorize(clusters)[0])
    )
    draws = np.random.default_rng(seed).multivariate_normal(
        np.zeros(m), covariance, size=CHANCE_DRAWS, method="eigh"
    )
    scale = np.sqrt(np.diag(covariance))
    with np.errstate(invalid="ignore", divide="ignore"):
        correlation = covariance / np.outer(scale, scale)
    off_diagonal = correlation[~np.eye(m, dtype=bool)]
    finite = off_diagonal[np.isfinite(off_diagonal)]  # a constant difference has none
    # E[max_j Y_j] = E[max_j Y_j - mean_j Y_j], the Y having mean 0: the difference varies less
    # from draw to draw and is never negative, so the same run listed twice gains 0 by chance,
    # not the Monte Carlo error of the draws' mean (which printed as -0.000)
    gain = float((draws.max(axis=1) - draws.mean(axis=1)).mean())
    return gain, float(finite.mean()) if len(finite) else float("nan")


def _headline_differences(ranked: list[Comparison], base: str) -> pd.DataFrame:
    """Each ranked candidate's per-question difference in metric ``base``, one column each, on
    the questions where every candidate and the baseline were scored (indexed by question id)."""
    columns = [p.tables.difference(base).set_axis(p.paired["question_id"]) for p in ranked]
    return pd.concat(columns, axis=1).dropna()


def _clusters(pair: Comparison, options: Options) -> pd.Series | None:
    """--cluster's label of every paired question, as the pairs resample them: the baseline's,
    else the candidate's, else the question's own; None without --cluster."""
    if options.cluster is None:
        return None
    ids = pair.paired[["question_id"]]
    labels = _column_values(pair.runs["a"], options.cluster, ids, pair.runs["b"])
    own = "\x00" + ids["question_id"].astype(str)
    return labels.fillna(own).astype(str).set_axis(ids["question_id"])


def _curse(pairs: list[Comparison], options: Options, held: Holdout | None) -> WinnersCurse | None:
    """None when fewer than two candidates compare the headline metric: nothing was chosen.
    ``held``: --holdout's check, whose candidate the paragraph names."""
    ranked = _comparing_headline(pairs)
    if len(ranked) < 2:
        return None
    base = base_name(ranked_headline(pairs))
    headline = [(p.runs["b"].label, p.comparisons[p.tables.name(base)]) for p in ranked]
    sign = 1 if ranked[0].tables.metric(base).higher_is_better else -1
    best, c = max(headline, key=lambda item: sign * item[1].diff)  # the largest gain
    tied = tuple(name for name, h in headline if name != best and abs(h.diff - c.diff) <= NOISE)
    # each candidate's standard error as its interval sees it: cluster-robust with --cluster
    errors = [h.sd / np.sqrt(h.n) * np.sqrt(h.design_effect or 1) for _, h in headline if h.n]
    se = float(np.mean(errors)) if errors else float("nan")
    frame = _headline_differences(ranked, base)
    labels = _clusters(ranked[0], options)
    clusters = None if labels is None else labels.reindex(frame.index).to_numpy()
    enough = len(frame) > 1 if clusters is None else len(set(clusters)) > 1
    chance, correlation = (
        chance_gain(frame.to_numpy(dtype=float), options.seed, clusters)
        if enough
        else (float("nan"),) * 2
    )
    return WinnersCurse(
        best=best,
        tied_with=tied,
        metric=ranked_headline(pairs),
        diff=c.diff,
        n_candidates=len(ranked),
        standard_error=se,
        expected_max=chance / se if se > 0 else float("nan"),
        overstatement=sign * chance,  # in the direction of a gain: a fall where lower is better
        spread=float(np.std([h.diff for _, h in headline], ddof=1)),
        correlation=correlation,
        cluster=options.cluster,
        held_out=held is not None,
        held_out_candidate=None if held is None else held.chosen,
        held_out_straddles=held is not None and held.straddling > 0,
    )


def _holdout(pairs: list[Comparison], options: Options) -> tuple[Holdout, list[str]]:
    """--holdout: the best candidate chosen on the other questions, measured on the held out;
    and a warning for each candidate logging COLUMN with other values than the baseline's."""
    assert options.holdout is not None
    first = pairs[0]
    rule = holdout.parse(options.holdout)
    ids = first.paired[["question_id"]]
    values, notes = None, []
    if isinstance(rule, tuple):
        if rule[0] not in first.runs["a"].columns:
            raise InputError(
                f"{first.runs['a'].path}: no column {rule[0]!r} (asked for by --holdout); name "
                "a column the baseline log has, or give a fraction"
            )
        values = _column_values(first.runs["a"], rule[0], ids, held=True)
        notes = [
            note
            for pair in pairs
            if (note := _held_apart(first.runs["a"], pair.runs["b"], rule[0], ids)) is not None
        ]
    labels = _clusters(first, options)
    chosen = holdout.split(
        options.holdout,
        _strata(first, options, ids),
        values,
        options.seed,
        str(first.runs["a"].path),
        None if labels is None else labels.to_numpy(dtype=str),
    )
    (_, base), *candidates = _headline_columns(pairs)
    headline = ranked_headline(pairs)
    tables = _comparing_headline(pairs)[0].tables
    return holdout.evaluate(
        chosen,
        headline,
        base,
        candidates,
        binary=_headline_binary(pairs, headline),
        higher_is_better=tables.metric(base_name(headline)).higher_is_better,
        n_boot=options.n_boot,
        confidence=options.confidence,
        seed=options.seed,
        question_ids=ids["question_id"].to_numpy(),
        asked=f"{first.runs['a'].path}: --holdout {options.holdout}",
    ), notes


def _held_apart(base: RunFile, run: RunFile, column: str, ids: pd.DataFrame) -> str | None:
    """A candidate's own --holdout COLUMN: refused where its samples of a question differ in it,
    as the baseline's are; where it gives paired questions another value than the baseline's,
    a warning naming them (the side is the baseline's, so the held-out difference rests on a
    split the candidate's log contradicts there). None where it agrees or lacks the column."""
    if column not in run.columns:
        return None
    questions = open_questions(base, run)
    try:
        values = questions.slice_values(column)
    finally:
        questions.close()
    one_value_a_question(values, column, {"b": run}, "--holdout", "side of the holdout")
    merged = ids.merge(values, how="left")
    differ = merged.loc[merged["differs"].fillna(False).astype(bool), "question_id"].tolist()
    if not differ:
        return None
    return (
        f"--holdout column {column!r} has another value in run {run.label} than in run "
        f"{base.label} for {fmt_count(len(differ), 'paired question')} "
        f"({fmt_listed(differ, EXAMPLES)}); the held-out questions are run {base.label}'s"
    )


def _strata(pair: Comparison, options: Options, ids: pd.DataFrame) -> pd.Series:
    """The slice every paired question is drawn within: of the first --slice column, else of
    the slice column; one stratum when neither run logs it."""
    column = options.slices[0] if options.slices else "slice"
    if not any(column in run.columns for run in pair.runs.values()):
        return pd.Series([None] * len(ids), dtype=object)
    return _column_values(pair.runs["a"], column, ids, pair.runs["b"])


def _column_values(
    run: RunFile, column: str, ids: pd.DataFrame, other: RunFile | None = None, held: bool = False
) -> pd.Series:
    """``column`` of ``run``'s log, else of ``other``'s, for every paired question. ``held``:
    the column of --holdout COLUMN=VALUE, refused where a question's samples differ in it, as
    --slice refuses them: the question would fall on the side of whichever row came first."""
    questions = open_questions(run, other)
    try:
        values = questions.slice_values(column)
    finally:
        questions.close()
    if held:
        one_value_a_question(values, column, {"a": run}, "--holdout", "side of the holdout")
    return ids.merge(values, how="left")["value"]


def _gate(pairs: list[Comparison]) -> GateResult | None:
    """Every rule applied to each candidate: the pairs' gates as one."""
    gates = [p.gate for p in pairs if p.gate is not None]
    if not gates:
        return None
    return replace(gates[0], results=tuple(r for g in gates for r in g.results))
