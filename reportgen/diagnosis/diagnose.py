"""Which link failed, and what to try next: the diagnosis of both runs, question by question.

``diagnose`` takes queries/answer_stage.sql's rows of both runs side by side and the metric
curve; the report renders the returned ``Diagnosis`` and computes nothing itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ..analysis.registry import base_name
from ..analysis.slices import SMALL_SLICE
from ..analysis.stats import MetricComparison, compare_metric
from ..formatting import fmt_count, fmt_diff, fmt_pct, named_value
from .stages import (
    CELL_NAMES,
    FAILURE_CLASSES,
    OK,
    PROMPT_MISS,
    RUNS,
    Agreement,
    Dominant,
    Missing,
    Paired,
    StageScore,
    cell_transitions,
    cells,
    count_labels,
    dominant_class,
    failure_classes,
    good_answers,
    in_table,
    judge_agreement,
    stage_scores,
)

TARGET = 0.8  # the decision path's bar at every step
OFF_QUESTION_BELOW = 0.5  # a wrong, faithful answer less relevant than this is off-question
# Each step asks whether a share reaches TARGET (its yes/no), never whether every question passes
ASKED = {  # the population an answer step judges, as its question names it
    "hits": "the questions whose evidence reached the prompt",
    "all questions": "all questions",
    "answerable questions": "the answerable questions",
}
N_EXEMPLARS = 5
STALE = "faithful but wrong"  # the failure class of an answer that follows its passages
PARTIAL = {  # the experiment where the stale answers had only lower-graded evidence
    "retrieval": "retrieve a passage of each question's highest labelled grade: no candidate "
    "held one for most of the faithful but wrong answers, which followed the lower-graded "
    "evidence they were given; add lexical (BM25) search beside the dense retriever (hybrid)",
    "ranking": "rerank so that a passage of each question's highest labelled grade reaches the "
    "prompt: for most of the faithful but wrong answers a candidate held one, and the prompt "
    "only lower-graded evidence",
}
COSTS = {"latency_ms": "latency", "cost_usd": "cost", "context_tokens": "context tokens"}
UNITS = {"latency_ms": ("ms", 1), "cost_usd": ("USD", 5), "context_tokens": ("tokens", 1)}
COST_DIGITS = 4  # significant digits of a cost (latency, dollars, tokens)
COMPARISON = (
    "paired per question on the same questions and golden set (bootstrap interval, paired test)"
)


def metric_digits(name: str, scale: float) -> int:
    """Decimals of a metric's numbers in a table: a score's 3, a cost column's enough for four
    significant digits of ``scale`` (1540 ms, 0.004123 USD), also where a rule or
    --lower-is-better has it compared as a score: at 3 decimals 0.003942 USD read 0.004, its
    interval [+0.001, +0.001]."""
    if base_name(name) not in COSTS or not math.isfinite(scale) or scale == 0:
        return 3
    return max(0, COST_DIGITS - 1 - math.floor(math.log10(abs(scale))))


@dataclass(frozen=True)
class Step:
    question: str
    metric: str
    value: float
    threshold: float
    passed: bool
    link: str  # one of WALK


END_TO_END = "end-to-end"  # the stage of a step where no labelled evidence is located
# the links the next experiment walks, in order; the last two judge answers (correct)
WALK = ("candidates", "prompt", "answers", "unanswerable")
JUDGED = ("answers", "unanswerable")


@dataclass(frozen=True)
class Experiment:
    """The next change to try for a run, the metric and comparison that judge it and the result
    that would refute it. An end-to-end step (no labelled evidence located) is the logging
    that would locate it alone: no link can be blamed, and logging moves no metric, so it has
    none of the three (None)."""

    # retrieval | ranking | context assembly | generation | corpus (faithful but wrong on the
    # hits) | end-to-end (no evidence located, or the prompt's misses with no candidates logged
    # to place them) | slices | golden set (no answer fails)
    stage: str
    change: str
    metric: str | None
    comparison: str | None
    refuted_if: str | None
    numbers: dict[str, float]
    path: tuple[Step, ...]

    @property
    def text(self) -> str:
        change = f"{self.change[0].upper()}{self.change[1:]}"
        if self.refuted_if is None:
            return f"{change}."
        return (
            f"{change}; judge it by {self.metric}, {self.comparison}; it is refuted if "
            f"{self.refuted_if}."
        )


@dataclass(frozen=True)
class CostChange:
    comparison: MetricComparison
    relative_pct: float  # (mean B - mean A) / mean A, in %; 0 when both are 0, NaN when A's is


@dataclass(frozen=True)
class Diagnosis:
    stages: tuple[StageScore, ...]
    missing: tuple[Missing, ...]
    cells: dict[str, dict[str, int]] | None  # run -> cell -> questions (correct and supported)
    cells_correct: dict[str, dict[str, int]] | None  # the same with correct alone
    transitions: dict[str, dict[str, int]] | None  # cell in A -> cell in B -> questions
    moves: tuple[dict[str, Any], ...]  # {"from", "to", "n"}, off-diagonal, most questions first
    failure_classes: dict[str, dict[str, int]] | None  # run -> class (and "ok") -> questions
    dominant: dict[str, Dominant | None]
    per_question: pd.DataFrame | None  # question_id, failure_class_a, failure_class_b
    costs: pd.DataFrame | None  # question_id and <cost>_a, <cost>_b of each cost compared
    next_experiment: dict[str, Experiment | None]
    judge_agreement: dict[str, Agreement]  # "correct", "faithful"
    cost: dict[str, CostChange]  # by column: latency_ms, cost_usd, context_tokens
    summary: str | None
    exemplars: dict[str, list[str]]  # run -> question ids of its dominant class
    broken: list[str]  # correct in A, wrong in B


def diagnose(
    pairs: pd.DataFrame,
    curve: pd.DataFrame | None,
    named_cutoff: int | None,
    *,
    n_boot: int,
    confidence: float,
    seed: int,
    supported_threshold: float = 1.0,
    relevance_threshold: float = OFF_QUESTION_BELOW,
    clusters: pd.Series | None = None,
    spans: bool = False,
    promptless: frozenset[str] = frozenset(),
    passageless: Mapping[str, frozenset[str]] | None = None,
) -> Diagnosis:
    """Diagnose the questions present in both runs: ``pairs`` holds answer_stage.sql's rows of
    both side by side (RunDatabase.pairs).

    ``curve``: mean retrieval metrics over retrieved_ids at every k (run, metric, k, value), or
    None without retrieved_ids; ``named_cutoff`` is the prompt cutoff that metric names carry
    (None: no retrieval metric). ``clusters``: --cluster's label by question_id; the cost
    comparisons resample them, as the report's metrics do, since a gate rule on a cost reads
    its interval. ``spans``: the logs locate their evidence in spans (logged.in_spans), so the
    columns a section or a step asks to log are relevant_spans and context_spans.
    ``promptless``: the runs ("a", "b") whose every prompt is empty, where no ranking can help
    and no correct answer rests on an unlabelled passage of its prompt. ``passageless``: each
    run's questions whose prompt held no passage, whose correct answers came from memory.
    """
    p = Paired(pairs, spans)
    groups = None if clusters is None else clusters.loc[p.frame["question_id"]].to_numpy()
    stages, missing = stage_scores(
        p, n_boot=n_boot, confidence=confidence, seed=seed, clusters=groups
    )
    has_correct = p.logged("correct")
    evidence_need = p.evidence_need()
    # Without a way to locate the evidence every wrong answer would read "unlabelled": no classes.
    classes = (
        {
            r: failure_classes(
                p,
                r,
                supported_threshold,
                relevance_threshold,
                p.frame["question_id"].isin((passageless or {}).get(r, ())).to_numpy(),
            )
            for r in RUNS
        }
        if has_correct and not evidence_need
        else None
    )
    needs = ", ".join([*([] if has_correct else ["correct"]), *filter(None, [evidence_need])])
    if needs:  # each column they lack: correct alone does not locate the evidence
        missing += [Missing("failure classes", needs), Missing("cells", needs)]
    cell = (
        {r: cells(p, r, supported_threshold) for r in RUNS}
        if has_correct and not evidence_need
        else None
    )
    if classes and cell:
        missing += _unclassified(p, classes, cell)
    if classes and any((classes[r] == PROMPT_MISS).any() for r in RUNS):
        missing.append(Missing("prompt misses told apart by link", p.ranking))
    transitions, moves = cell_transitions(cell["a"], cell["b"]) if cell else (None, ())
    dominant = {r: dominant_class(classes[r]) if classes else None for r in RUNS}
    judge = judge_agreement(p, supported_threshold)
    if not judge:  # no answer has both a judge's and a human's label
        missing.append(Missing("judge agreement", "human_correct, human_faithful"))
    cost: dict[str, CostChange] = {}
    costs: dict[str, np.ndarray] = {}
    for column, label in COSTS.items():
        if not p.logged(column):
            missing.append(Missing(label, column))
            continue
        costs |= {f"{column}_{run}": p.values(column, run) for run in RUNS}
        comparison, _ = compare_metric(
            column,
            costs[f"{column}_a"],
            costs[f"{column}_b"],
            binary=False,
            n_boot=n_boot,
            confidence=confidence,
            seed=seed,
            clusters=groups,
        )
        cost[column] = _cost_of(comparison)
    correct = next((s.diff for s in stages if s.metric == "correct"), None)
    return Diagnosis(
        stages=tuple(stages),
        missing=tuple(missing),
        cells=None if cell is None else {r: count_labels(cell[r], CELL_NAMES) for r in RUNS},
        cells_correct=None
        if cell is None
        else {r: count_labels(cells(p, r, None), CELL_NAMES) for r in RUNS},
        transitions=transitions,
        moves=moves,
        failure_classes=None
        if classes is None
        else {r: count_labels(classes[r], (*FAILURE_CLASSES, OK)) for r in RUNS},
        dominant=dominant,
        per_question=None
        if classes is None
        else pd.DataFrame(
            {
                "question_id": p.frame["question_id"],
                "failure_class_a": np.asarray(classes["a"], dtype=object),
                "failure_class_b": np.asarray(classes["b"], dtype=object),
            }
        ),
        costs=pd.DataFrame({"question_id": p.frame["question_id"], **costs}) if costs else None,
        next_experiment={
            r: _next_experiment(
                p,
                r,
                curve,
                named_cutoff,
                supported_threshold,
                confidence,
                classes and classes[r],
                r in promptless,
            )
            for r in RUNS
        },
        judge_agreement=judge,
        cost=cost,
        summary=_summary(correct, cost),
        exemplars={
            r: _exemplars(p, r, classes[r], d.failure_class)
            for r, d in dominant.items()
            if classes and d
        },
        broken=_in_file_order(
            p, "a", (p.values("correct", "a") == 1) & (p.values("correct", "b") == 0)
        ),
    )


def _mostly_stale(classes: pd.Categorical | None, hits: np.ndarray) -> bool:
    """Whether the commonest failure class of the wrong answers on ``hits`` is "faithful but
    wrong" (ties go to the generator's classes, which the hits' step names first)."""
    if classes is None:
        return False
    counts = pd.Series(np.asarray(classes, dtype=object)[hits]).value_counts()
    stale = int(counts.get(STALE, 0))
    others = counts.drop([STALE, OK], errors="ignore")
    return stale > 0 and stale > (int(others.max()) if len(others) else 0)


def _stale_link(p: Paired, run: str, stale: np.ndarray) -> str:
    """The link most of the ``stale`` answers (faithful but wrong on the hits) point to: the
    corpus where their prompt held a passage of the question's highest labelled grade (the
    answer followed it and is wrong); else the ranking where a candidate held one, the
    retrieval where none did (the answer followed the lower-graded evidence it was given). A
    tie goes to the earlier link: retrieval, ranking, corpus."""
    best = p.values("best_evidence_in_context", run)[stale] == 1
    ranked = p.values("best_evidence_in_candidates", run)[stale] == 1
    counts = {
        "retrieval": int((~best & ~ranked).sum()),
        "ranking": int((~best & ranked).sum()),
        "corpus": int(best.sum()),
    }
    return max(counts, key=lambda link: counts[link])


def _mostly_assembled_out(p: Paired, run: str, missed: np.ndarray) -> bool:
    """Whether more of the questions whose evidence ``missed`` the prompt (those answered
    wrongly, where there are some) had it ranked within the prompt's length (the prompt left it
    out: the failure classes' assembly misses) than ranked below it (their ranking misses): a
    tie goes to the ranking, the earlier link. Evidence no candidate holds counts for neither,
    as neither fix brings it: counted for the ranking, 3 assembly misses against 2 ranking and
    2 retrieval misses had proposed a reranker beside "fails most often by assembly miss"."""
    ranked = p.values("evidence_ranked_for_prompt", run)[missed] == 1
    candidates = p.values("evidence_in_candidates", run)[missed] == 1
    return int(ranked.sum()) > int((candidates & ~ranked).sum())


def _unclassified(
    p: Paired, classes: dict[str, pd.Categorical], cell: dict[str, pd.Categorical]
) -> list[Missing]:
    """How many answers each run leaves out of the classes and the 2x2: one without a verdict
    has neither; a correct one whose support cannot be told (faithfulness null where it counts)
    keeps its class but has no cell."""
    unjudged = {r: int(classes[r].isna().sum()) for r in RUNS}
    unscored = {  # in the table's questions, correct, no cell
        r: int((pd.isna(cell[r]) & (p.values("correct", r) == 1) & in_table(p, r)).sum())
        for r in RUNS
    }
    found = []
    for what, counts, needs in (
        ("failure class and cell of {} answers", unjudged, "correct on every answer"),
        ("cell of {} correct answers", unscored, "faithfulness on every correct answer"),
    ):
        runs = [f"{n} of {r.upper()}'s" for r, n in counts.items() if n]
        if runs:
            found.append(Missing(what.format(" and ".join(runs)), needs))
    return found


def _exemplars(p: Paired, run: str, classes: pd.Categorical, failure_class: str) -> list[str]:
    """The first N_EXEMPLARS questions of ``failure_class`` in the run's own file order."""
    return _in_file_order(p, run, np.asarray(classes == failure_class))[:N_EXEMPLARS]


def _in_file_order(p: Paired, run: str, where: np.ndarray) -> list[str]:
    """The ids of the questions ``where`` holds, in the order of ``run``'s log (the rows are
    paired by question_id): the order its reader knows them in."""
    order = np.argsort(p.values("row_number", run), kind="stable")
    return p.frame["question_id"].iloc[order[where[order]]].tolist()


def _next_experiment(
    p: Paired,
    run: str,
    curve: pd.DataFrame | None,
    named_cutoff: int | None,
    supported_threshold: float,
    confidence: float,
    classes: pd.Categorical | None = None,
    promptless: bool = False,
) -> Experiment | None:
    """Walk the chain from the first link and stop at the first below TARGET.

    Retrieval steps use hit (some labelled passage reached the list), not recall: one passage
    that answers the question is all an answer needs, and hit is the test the failure classes
    use, so the path and the dominant class blame the same link. Without a curve (per-question
    tables) the candidates step reads each question's own; without retrieved_ids the path
    starts at the prompt; without labelled evidence, at generation, judged on all
    answerable questions. None when it reaches generation and ``correct`` is not logged. Past
    every bar: the golden set when no answer fails, else the weakest slice of SMALL_SLICE or more
    judged answers with a wrong one, else the last link again. Below the bar on the hits, where
    the run's failure ``classes`` there are most often "faithful but wrong" (the answer follows
    a stale or wrong passage), the corpus is the link to fix, as the classes say, not the
    generator, which already answers from the passages; the ranking or the retrieval, where
    most of those prompts held no passage of the question's highest labelled grade
    (_stale_link). Below the bar at the prompt, the
    context assembly is the link to fix where more of the questions whose evidence missed the
    prompt had it ranked within the prompt's length (reranking cannot move it higher) than
    below it, else the ranking (_mostly_assembled_out); where the run's every prompt is empty
    (``promptless``), the prompt itself.
    Where every question whose evidence missed the prompt was answered correctly, the walk goes
    on past the prompt, which cost no answer: a better ranking would fix none.
    """
    path: list[Step] = []

    def step(question: str, metric: str, value: float, link: str) -> Step:
        path.append(Step(question, metric, value, TARGET, bool(value >= TARGET), link))
        return path[-1]

    def experiment(stage: str, change: str, metric: str, **extra: float) -> Experiment:
        numbers = {s.metric: s.value for s in path} | extra
        if stage == END_TO_END:  # logging alone: nothing to judge it by
            return Experiment(stage, change, None, None, None, numbers, tuple(path))
        refuted = (
            f"the paired {fmt_pct(confidence)} interval of (changed \u2212 current) {metric} "
            "includes zero or lies below it"
        )
        return Experiment(stage, change, metric, COMPARISON, refuted, numbers, tuple(path))

    hits = (
        curve[(curve["run"] == run) & (curve["metric"] == "hit")]
        if curve is not None
        else pd.DataFrame()
    )
    depth, at_depth = None, None
    found = p.values("evidence_in_candidates", run)
    if len(hits):
        at_depth = float(hits.loc[hits["k"] == hits["k"].max(), "value"].iloc[0])
        # the curve runs to the deeper run's rankings; past its own, a run's hit stays the same
        depth = min(int(hits["k"].max()), int(np.nanmax(p.values("depth", run))))
    elif not np.isnan(found).all():  # per-question tables carry no curve: each question's own
        at_depth, depth = float(np.nanmean(found)), int(np.nanmax(p.values("depth", run)))
    if at_depth is not None and depth is not None:
        asked = "Does the share of questions whose evidence reached the candidates reach its bar?"
        if not step(asked, f"hit@{depth}", at_depth, "candidates").passed:
            return experiment(
                "retrieval",
                "add lexical (BM25) search beside the dense retriever (hybrid) and revisit "
                "chunking; check the labels of questions whose evidence no candidate holds",
                f"hit@{depth}",
            )
    evidence = p.values("evidence_in_context", run)
    located = ~np.isnan(evidence)
    if located.any():
        # hit@k names the metric table's figure only where that table scores the prompt
        scored = named_cutoff is not None and bool(p.values("prompt_is_scored", run)[located].all())
        name = f"hit@{named_cutoff}" if scored else "hit@context"
        asked = "Does the share of questions whose evidence reached the prompt reach its bar?"
        missed = located & (evidence == 0)
        wrong = missed & (p.values("correct", run) == 0)  # what the fix is for, if any
        below = not step(asked, name, float(evidence[located].mean()), "prompt").passed
        # every answer whose evidence missed the prompt right: the prompt cost no answer
        if below and (wrong.any() or not p.logged("correct")):
            if promptless:  # neither a reranker nor assembly moves evidence into no prompt
                return experiment(
                    "context assembly",
                    "put the top-ranked passages in the prompt: no prompt of this run holds "
                    "one, so no labelled evidence reaches the generator",
                    name,
                )
            failed = wrong if wrong.any() else missed
            if np.isnan(p.values("evidence_in_candidates", run)[failed]).all():
                # no candidates logged: the prompt's miss is on no one link (prompt misses)
                return experiment(
                    END_TO_END,
                    f"log {p.ranking} so the next report can tell whether the retrieval, the "
                    "ranking or the context assembly loses the evidence the prompts miss: until "
                    "then that miss is on no one link, so no change to the pipeline is proposed",
                    name,
                )
            if _mostly_assembled_out(p, run, failed):
                return experiment(
                    "context assembly",
                    "make the prompt take what the ranking put first: find the step between "
                    "the ranking and the prompt that drops top-ranked evidence (a filter, "
                    "deduplication, truncation to the token budget, reordering) and keep it",
                    name,
                )
            pool = (
                f"the top {fmt_count(depth, 'candidate')}" if depth else "the retrieved candidates"
            )
            return experiment(
                "ranking",
                f"rerank {pool} with a cross-encoder, with metadata filters and duplicate "
                "removal; a larger k only if the token budget allows",
                name,
            )
        scope, population, stage = evidence == 1, "hits", "generation"
        change = (
            "put the strongest evidence first in the prompt and instruct the model to answer "
            "only from the passages and abstain otherwise"
        )
    else:
        scope = p.values("answerable", run) == 1
        population = "all questions" if scope.all() else "answerable questions"
        # no labelled evidence located: the failing link cannot be named, so no change to the
        # pipeline either (an answer without support is as often a retrieval miss as a
        # generation failure); the step is the logging that would name it
        stage = END_TO_END
        unlogged = p.unlogged_locators(run) or [p.labels]
        change = (
            f"log {' and '.join(unlogged)} so the next report can locate the evidence and name "
            "the link that fails (retrieval, the prompt or generation): until then no wrong "
            "answer can be placed on the chain, so no change to the pipeline is proposed"
        )
    if not p.logged("correct"):
        return None
    verdicts = good_answers(p, run, supported_threshold)
    good = verdicts[scope]
    good = good[~np.isnan(good)]  # an unjudged answer is neither good nor bad
    faithful = p.logged("faithfulness")
    metric = f"correct{' and supported' if faithful else ''} on {population}"
    asked = (
        f"Of {ASKED[population]}, does the share answered correctly"
        f"{' and faithfully' if faithful else ''} reach its bar?"
    )
    # no judged answer in scope (every question unanswerable): nothing to call below the bar
    if len(good) and not step(asked, metric, float(good.mean()), "answers").passed:
        if stage == "generation" and _mostly_stale(classes, scope):
            stage, change = (
                "corpus",
                (
                    "check the passages the faithful but wrong answers follow: refresh or drop "
                    "stale or wrong documents (a newer version, a date filter), and the labels "
                    "that call them evidence"
                ),
            )
            link = _stale_link(p, run, scope & (np.asarray(classes, dtype=object) == STALE))
            if link != "corpus":
                stage, change = link, PARTIAL[link]
        return experiment(stage, change, metric)
    unanswerable = p.values("answerable", run) == 0
    abstains = not np.isnan(p.values("abstained", run)).all()  # NULL throughout: not logged
    refused = unanswerable & (p.values("abstained", run) == 1)
    # a refusal of an unanswerable question is right, whatever its verdict (failure_classes)
    correct = np.where(refused, 1.0, p.values("correct", run))
    handled = correct[unanswerable]
    handled = handled[~np.isnan(handled)]
    refusals = f"{'refused or ' if abstains else ''}correct on unanswerable questions"
    asked = (
        f"Of the unanswerable questions, does the share {'refused or ' if abstains else ''}"
        "answered correctly reach its bar?"
    )
    abstention = (
        "abstention",
        "instruct the model to say it cannot answer when its passages do not hold the answer, "
        "and check the unanswerable questions it answered"
        + ("" if abstains else ", and log abstained so the next report can count the refusals"),
        refusals,
    )
    share = float(handled.mean()) if len(handled) else None
    if share is not None and not step(asked, refusals, share, "unanswerable").passed:
        return experiment(*abstention)
    failing = (verdicts == 0) & ~refused
    if not failing.any():
        answers = "judged answer" if np.isnan(verdicts).any() else "answer"
        links = "every link" if len(good) else "every link with something to judge"
        return Experiment(
            "golden set",
            f"{links} passes its bar and no {answers} fails, so this golden set cannot show "
            "what to fix next: add questions the run gets wrong (harder ones, new topics)",
            "correct on the added questions",
            "the current run on the added questions",
            "it answers every added question correctly too",
            {s.metric: s.value for s in path},
            tuple(path),
        )
    # past every bar, failing mostly on unanswerable questions: the last link is theirs
    if (failing & unanswerable).sum() > (failing & ~unanswerable).sum():
        return experiment(*abstention)
    grouped = pd.Series(correct).groupby(p.frame[f"slice_{run}"])
    by_slice, sizes = grouped.mean(), grouped.count()  # over the judged answers
    # a slice of a few questions is weakest by chance; one without a wrong answer has none to
    # fix (a refusal of an unanswerable question is a right one)
    by_slice = by_slice[(sizes >= SMALL_SLICE) & (by_slice < 1)]
    if by_slice.empty:  # no slice to single out: the last link again
        if (correct == 0).any() and p.frame[f"slice_{run}"].isna().all():
            # logging a column moves no metric: it goes beside the link's experiment, not for it
            change += ", and log a slice column to find where the questions still fail"
        return experiment(stage, change, metric)
    weakest = str(by_slice.idxmin())
    return experiment(
        "slices",
        f"find and fix what fails most in the weakest slice, {named_value(weakest)}",
        f"correct on the {named_value(weakest)} slice",
        **{f"correct on {weakest}": float(by_slice.min())},
    )


def _cost_of(comparison: MetricComparison) -> CostChange:
    """A cost's B - A with B's change as a share of A's mean."""
    a, b = comparison.a, comparison.b
    return CostChange(comparison, (b / a - 1) * 100 if a else (0.0 if b == 0 else float("nan")))


def with_means(d: Diagnosis, comparisons: dict[str, MetricComparison]) -> Diagnosis:
    """The diagnosis with its costs and its summary's correct read from the report's metrics
    where they are compared: the means over a question's samples, where the answers the
    diagnosis reads are its first sample's, so that one number is one number on the page."""
    cost = {
        name: _cost_of(comparisons[name]) if name in comparisons else change
        for name, change in d.cost.items()
    }
    stage = next((s.diff for s in d.stages if s.metric == "correct"), None)
    correct = comparisons.get("correct", stage)
    return replace(d, cost=cost, summary=_summary(correct, cost))


def _summary(correct: MetricComparison | None, cost: dict[str, CostChange]) -> str | None:
    """'B is +9.2 points on correct at +37% latency, +11% cost and +6% context tokens.'"""
    parts = [_cost_change(name, c) for name, c in cost.items() if c.comparison.n]
    if not parts:
        return None
    at = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    if correct is None:
        return f"B runs at {at}."
    return f"B is {fmt_diff(correct.diff * 100, 1)} points on correct at {at}."


def _cost_change(name: str, change: CostChange) -> str:
    """'+37% latency'; 'cost from 0 to 0.01000 USD' when A's is 0, where no share is defined."""
    if not math.isnan(change.relative_pct):
        return f"{fmt_diff(change.relative_pct, 0)}% {COSTS[name]}"
    unit, digits = UNITS[name]
    return f"{COSTS[name]} from 0 to {change.comparison.b:.{digits}f} {unit}"
