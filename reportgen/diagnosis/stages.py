"""Per-link scores of both runs, each question's failure class, and how far the judge behind the
scores agrees with human labels (from queries/answer_stage.sql's rows).

A stage is scored only on the questions where it can fail on its own: the generator is judged on
retrieval hits, so a retrieval change that adds hard hits does not read as a generation loss.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ..analysis.registry import METRICS
from ..analysis.stats import MetricComparison, compare_metric, own_mean
from ..formatting import fmt_count

RUNS = ("a", "b")
CELL_NAMES = (
    "working_as_designed",  # evidence in context, answer correct and supported
    "generation_failure",  # evidence in context, answer wrong or unsupported
    "answered_from_memory",  # no evidence in context, answer correct and supported
    "retrieval_failure",  # no evidence in context, answer wrong or unsupported
)
# The cells as the report names them. Three differ from their JSON keys: the failure classes
# "generation failure" and "answered from memory" count other questions (a wrong answer whose
# scores cannot split it; a correct answer not supported), so a cell of the same name would
# show another number under the same words; and evidence missing from the prompt may be the
# retrieval's, the ranking's or the assembly's miss, which the failure classes tell apart.
CELL_TITLES = {
    "working_as_designed": "working as designed",
    "generation_failure": "failed despite evidence",
    "answered_from_memory": "good without evidence",
    "retrieval_failure": "failed without evidence",
}
MEMORY = "answered from memory"  # correct, with no labelled evidence in the prompt
# correct and supported by its prompt, which holds no labelled evidence: a passage there holds
# what the answer rests on, and no label marks it (not memory: the judge found it in the prompt)
UNLABELLED_SUPPORT = "unlabelled support"
CORRECT_ANSWERS = (MEMORY, UNLABELLED_SUPPORT)  # classes of correct answers: no failure
# a wrong answer whose evidence missed the prompt of a question with no ranking logged: the
# retrieval's, the ranking's or the assembly's miss, which retrieved_ids would tell apart
PROMPT_MISS = "prompt miss"
# Pipeline order: a tie for the dominant class goes to the earlier link, whose fix comes first.
FAILURE_CLASSES = (
    "retrieval miss",
    "ranking miss",
    "assembly miss",
    PROMPT_MISS,
    "hallucination",
    "off-question",
    "faithful but wrong",
    "generation failure",
    MEMORY,
    UNLABELLED_SUPPORT,
    "wrong abstention",
    "missed abstention",
    "unlabelled",
)
OK = "ok"
MIN_HUMAN_LABELS = 30  # fewer, or a lower kappa: the judge's scores carry a warning
MIN_KAPPA = 0.6
MAX_JUDGE_GAP = 0.1  # judge accuracy further apart between the runs: the judge may favour one
OWNERS = {
    "retrieval miss": "retrieval/corpus",
    "ranking miss": "ranking",
    # ranked within the prompt's length, left out of the prompt: a filter, deduplication,
    # truncation or reordering between the ranking and the prompt dropped it
    "assembly miss": "context assembly",
    PROMPT_MISS: "retrieval, ranking or context assembly",
    "hallucination": "generation",
    "off-question": "generation",
    "faithful but wrong": "retrieval/corpus",  # the answer follows a stale or wrong passage
    "generation failure": "generation",
    MEMORY: "retrieval/corpus",
    UNLABELLED_SUPPORT: "golden set",
    "wrong abstention": "abstention policy",
    "missed abstention": "abstention policy",
    "unlabelled": "golden set",
}


@dataclass(frozen=True)
class RunScore:
    """One run's mean over its population, with the interval of its own mean (own_mean's,
    of B - 0); no interval on one question."""

    mean: float
    n: int
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class StageScore:
    stage: str  # end-to-end | generation | abstention | citations
    metric: str
    population: str
    a: RunScore
    b: RunScore
    diff: MetricComparison  # B - A over the questions in the population of both runs

    @property
    def higher_is_better(self) -> bool:
        """Every stage score but wrong refusals, of which fewer is better."""
        return self.metric != "wrong refusals"


@dataclass(frozen=True)
class Missing:
    stage: str
    needs: str  # the column that would enable it


@dataclass(frozen=True)
class Dominant:
    failure_class: str
    n: int
    owner: str  # who fixes it: retrieval/corpus, ranking, generation, abstention policy, golden set


@dataclass(frozen=True)
class Agreement:
    """Automatic judge against human labels, pooled over both runs' labelled questions, and per
    run: a judge that agrees with humans on one variant's answers and not on the other's biases
    the paired comparison however good its pooled figures look."""

    n: int
    accuracy: float
    kappa: float
    confusion: dict[str, dict[str, int]]  # judge verdict ("true"/"false") -> human verdict -> n
    warning: str | None
    by_run: dict[str, Agreement] = field(default_factory=dict)  # run -> its own labels only
    accuracy_gap: float | None = None  # B's accuracy - A's, when both runs have human labels


LOCATE = {"relevant_ids": "n_relevant", "context_ids": "has_prompt"}  # log column: its trace
SPAN_LOCATE = {"relevant_spans": "n_relevant", "context_spans": "has_prompt"}  # of span logs


class Paired:
    """Both runs' rows of the questions in both, side by side by question_id (answer_stage.sql
    paired by RunDatabase.pairs: every column as <column>_a and <column>_b)."""

    def __init__(self, frame: pd.DataFrame, spans: bool = False) -> None:
        self.frame = frame
        # the columns that locate the evidence, as the logs would log them (in_spans)
        self.locate = SPAN_LOCATE if spans else LOCATE
        self.labels = next(iter(self.locate))
        # the ranking to log where a prompt's miss needs telling apart by link
        self.ranking = "retrieved_spans" if spans else "retrieved_ids"

    def values(self, column: str, run: str) -> np.ndarray:
        """The column as floats (booleans 0/1), NaN where NULL."""
        return self.frame[f"{column}_{run}"].to_numpy(dtype=float, na_value=np.nan)

    def logged(self, column: str) -> bool:
        """True when both runs have a value of ``column`` somewhere."""
        return all(self.frame[f"{column}_{run}"].notna().any() for run in RUNS)

    def evidence_need(self) -> str | None:
        """The columns that would locate the evidence (labels and a prompt), or None when both
        runs can."""
        if self.logged("evidence_in_context"):
            return None
        needs = [c for c in self.locate if any(c in self.unlogged_locators(run) for run in RUNS)]
        # both logged, never on one question: the labels are what is short
        return " and ".join(needs) or self.labels

    def unlogged_locators(self, run: str) -> list[str]:
        """The run-log columns that locate the evidence which the run logs on no question."""
        located = self.locate.items()
        return [column for column, name in located if not (self.values(name, run) > 0).any()]


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return np.divide(num, den, out=np.full(len(num), np.nan), where=den > 0)


_HITS = "retrieval hits"  # labelled evidence in the run's context, as the page's note says
STAGES = {  # metric: stage, the column it needs, its questions in each run
    "correct": ("end-to-end", "correct", "all questions"),
    "faithfulness": ("generation", "faithfulness", _HITS),
    "answer relevance": ("generation", "answer_relevance", _HITS),
    "context utilization": ("generation", "cited_ids", _HITS + " whose answer cites"),
    "correct refusals": ("abstention", "abstained", "unanswerable questions"),
    "wrong refusals": ("abstention", "abstained", "answerable questions"),
    "citations in context": ("citations", "cited_ids", "answers that cite"),
    "citations relevant": ("citations", "cited_ids", "answers that cite, labels logged"),
}
# Every stage score lies in [0, 1] (a verdict, a judge's share, a share of citations): B - A in
# [-1, 1], given to compare_metric, whose default range knows only the registry's metrics
DIFFERENCE_RANGE = (-1.0, 1.0)
# 0/1 per question: the registry's binary metrics, and whether an answer abstained
_BINARY = frozenset({m.name for m in METRICS if m.binary} | {"correct refusals", "wrong refusals"})


def _stage_values(p: Paired, run: str) -> dict[str, np.ndarray]:
    """Each stage metric per question, NaN outside its population.

    Context utilization: of an answer's distinct citations, the share that point into its context
    AND are labelled relevant (it used the evidence it was given). Citation shares are per answer
    with at least one citation; every score is averaged over questions. Refusals are scored on
    the questions whose answerability the run logs (answerable, or labels): one without either
    is answerable by assumption only, and a log without labels had read every abstention as a
    wrong refusal.
    """
    hit = p.values("evidence_in_context", run) == 1
    known = p.values("answerable_known", run) == 1
    answerable = known & (p.values("answerable", run) == 1)
    unanswerable = known & (p.values("answerable", run) == 0)
    abstained, cited = p.values("abstained", run), p.values("n_cited", run)
    return {
        "correct": p.values("correct", run),
        "faithfulness": np.where(hit, p.values("faithfulness", run), np.nan),
        "answer relevance": np.where(hit, p.values("answer_relevance", run), np.nan),
        "context utilization": np.where(hit, _ratio(p.values("n_cited_used", run), cited), np.nan),
        "correct refusals": np.where(unanswerable, abstained, np.nan),
        "wrong refusals": np.where(answerable, abstained, np.nan),
        "citations in context": _ratio(p.values("n_cited_in_context", run), cited),
        "citations relevant": _ratio(p.values("n_cited_relevant", run), cited),
    }


def stage_scores(
    p: Paired, *, n_boot: int, confidence: float, seed: int, clusters: np.ndarray | None = None
) -> tuple[list[StageScore], list[Missing]]:
    """Every stage whose columns both runs log, in STAGES order; the others as Missing.

    Each run is scored on its own population; B - A on the questions in both runs' populations.
    ``clusters``: --cluster's label of each paired question, resampled whole as in every other
    interval of the report.
    """
    values = {run: _stage_values(p, run) for run in RUNS}
    evidence_need = p.evidence_need()
    scores, missing = [], []
    unlogged = {c for run in RUNS for c in p.unlogged_locators(run)}  # labels, a prompt
    labels, prompt = (c if c in unlogged else None for c in p.locate)
    for metric, (stage, needs, population) in STAGES.items():
        # every column it lacks: "log cited_ids" alone was no way to score what also needs a
        # prompt to look in or labels to meet
        also = {
            "context utilization": [evidence_need],
            "citations in context": [prompt],
            "citations relevant": [labels],
        }.get(metric, [])
        if not p.logged("n_cited" if needs == "cited_ids" else needs):
            missing.append(Missing(metric, " and ".join([needs, *filter(None, also)])))
            continue
        if stage == "generation" and evidence_need:
            missing.append(Missing(f"{metric} on retrieval hits", evidence_need))
            continue
        if any(also):  # citations logged, but no prompt to look in or no labels to meet
            missing.append(Missing(metric, " and ".join(filter(None, also))))
            continue
        a, b = values["a"][metric], values["b"][metric]
        if stage == "abstention" and (np.isnan(a).all() or np.isnan(b).all()):
            # no question of the row's kind in a run (none unanswerable, or none whose
            # answerability is logged): a row of n/a said nothing of what would score it
            missing.append(Missing(metric, "answerable"))
            continue
        diff, _ = compare_metric(
            metric,
            a,
            b,
            binary=metric in _BINARY,
            n_boot=n_boot,
            confidence=confidence,
            seed=seed,
            clusters=clusters,
            span=DIFFERENCE_RANGE,
        )
        if not diff.n:  # no question in both populations: nothing was tested, so no p
            diff = replace(diff, p=float("nan"))
        own = [
            own_mean(
                metric,
                v,
                binary=metric in _BINARY,
                n_boot=n_boot,
                confidence=confidence,
                seed=seed,
                span=(0.0, 1.0),
                clusters=clusters,
            )
            for v in (a, b)
        ]
        run_a, run_b = (RunScore(r.b, r.n, r.ci_low, r.ci_high) for r in own)
        scores.append(StageScore(stage, metric, population, run_a, run_b, diff))
    return scores, missing


def good_answers(p: Paired, run: str, supported_threshold: float | None) -> np.ndarray:
    """1 when correct and supported (faithfulness >= threshold), else 0; correct alone without
    faithfulness or without a threshold. NaN when it cannot be told: correct is NULL (unless
    the run abstained: no answer is not a good one), or a correct answer's faithfulness is; an
    unjudged answer is not a wrong one."""
    correct = p.values("correct", run)
    correct = np.where(np.isnan(correct) & (p.values("abstained", run) == 1), 0, correct)
    if supported_threshold is None or not p.logged("faithfulness"):
        return correct
    faithfulness = p.values("faithfulness", run)
    supported = np.where(np.isnan(faithfulness), np.nan, faithfulness >= supported_threshold)
    return np.where(correct == 1, supported, correct)


def in_table(p: Paired, run: str) -> np.ndarray:
    """The questions the retrieval-by-answer table places: answerable, evidence located."""
    located = ~np.isnan(p.values("evidence_in_context", run))
    return located & (p.values("answerable", run) == 1)


def cells(p: Paired, run: str, supported_threshold: float | None) -> pd.Categorical:
    """Each question's retrieval-by-answer cell; None outside answerable labelled questions and
    where good_answers cannot tell."""
    good = good_answers(p, run, supported_threshold)
    hit = p.values("evidence_in_context", run) == 1
    outside = ~in_table(p, run) | np.isnan(good)
    return labelled([outside, hit & (good == 1), hit, good == 1], (None, *CELL_NAMES))


def failure_classes(
    p: Paired,
    run: str,
    supported_threshold: float,
    relevance_threshold: float,
    passageless: np.ndarray | None = None,
) -> pd.Categorical:
    """Each question's failure class, by the first rule that applies.

    1. unanswerable: abstained -> ok; not judged (correct NULL) -> none; wrong -> missed
       abstention; else ok;
    2. answerable and abstained -> wrong abstention; not judged -> none;
    3. evidence cannot be located (no labelled evidence, or no prompt logged): wrong ->
       unlabelled, else ok;
    4. correct: evidence in context -> ok; else faithfulness at or above supported_threshold
       -> unlabelled support (the prompt supports it, so a passage there lacks its label), else
       (unsupported, or faithfulness missing, or the question's prompt empty:
       ``passageless``, no passage to rest on, whatever a judge made of it) answered from memory;
    5. wrong, evidence not in context: ranked within the first n of retrieved_ids, n the
       length of the logged context_ids (at least 1) -> assembly miss (the ranking held it
       where a prompt of that size takes it; an empty prompt dropped what it put first);
       elsewhere among the candidates -> ranking miss, else retrieval miss; without
       retrieved_ids (no candidates to look in) -> prompt miss;
    6. wrong with evidence in context: faithfulness missing -> generation failure;
       faithfulness < supported_threshold -> hallucination; then (a faithful answer)
       answer_relevance < relevance_threshold -> off-question; else (answer_relevance at or
       above it, or missing) faithful but wrong. Faithfulness alone tells a hallucination;
       answer_relevance only splits the off-question answers from the faithful ones, which
       without it are faithful but wrong still: an answer the judge found fully supported was
       no failure to answer from the passages, which is what a generation failure's fix asks.

    A score only one run logs is missing in both (as in good_answers): else that run's wrong
    answers would split into hallucinations and the like while the other's all read
    "generation failure", and the comparison would show a shift that is only a column.
    """
    answerable = p.values("answerable", run) == 1
    abstained = p.values("abstained", run) == 1
    judged = p.values("correct", run)
    correct, unjudged = judged == 1, np.isnan(judged)
    evidence = p.values("evidence_in_context", run)
    unlogged = np.full(len(correct), np.nan)
    faithfulness = p.values("faithfulness", run) if p.logged("faithfulness") else unlogged
    relevance = p.values("answer_relevance", run) if p.logged("answer_relevance") else unlogged
    empty = np.zeros(len(correct), bool) if passageless is None else passageless
    rules: tuple[tuple[np.ndarray, str | None], ...] = (
        (~answerable & abstained, OK),
        (~answerable & unjudged, None),
        (~answerable & ~correct, "missed abstention"),
        (~answerable, OK),
        (abstained, "wrong abstention"),
        (unjudged, None),
        (np.isnan(evidence) & ~correct, "unlabelled"),
        (np.isnan(evidence), OK),
        (
            correct & (evidence == 0) & (faithfulness >= supported_threshold) & ~empty,
            UNLABELLED_SUPPORT,
        ),
        (correct & (evidence == 0), MEMORY),
        (correct, OK),
        ((evidence == 0) & (p.values("evidence_ranked_for_prompt", run) == 1), "assembly miss"),
        ((evidence == 0) & np.isnan(p.values("evidence_in_candidates", run)), PROMPT_MISS),
        ((evidence == 0) & (p.values("evidence_in_candidates", run) == 1), "ranking miss"),
        (evidence == 0, "retrieval miss"),
        (np.isnan(faithfulness), "generation failure"),
        (faithfulness < supported_threshold, "hallucination"),
        (relevance < relevance_threshold, "off-question"),
    )
    conditions, names = zip(*rules, strict=True)
    return labelled(list(conditions), (*names, "faithful but wrong"))


def labelled(conditions: list[np.ndarray], names: tuple[str | None, ...]) -> pd.Categorical:
    """Each question's name of the first condition it meets, the last name when it meets none;
    a None name leaves the question without one. Categorical: at 1M questions, strings made per
    question took 0.5 s and counting them 0.4 s."""
    codes = np.select(conditions, list(range(len(conditions))), len(conditions))
    categories = list(dict.fromkeys(name for name in names if name is not None))
    recode = np.array([-1 if name is None else categories.index(name) for name in names])
    return pd.Categorical.from_codes(recode[codes], categories=categories)


def count_labels(labels: pd.Categorical, names: tuple[str, ...]) -> dict[str, int]:
    counts = pd.Series(labels).value_counts()  # once: not a pass per name
    return {name: int(counts.get(name, 0)) for name in names}


def cell_transitions(
    a: pd.Categorical, b: pd.Categorical
) -> tuple[dict[str, dict[str, int]], tuple[dict[str, Any], ...]]:
    """Cell in A -> cell in B over questions in the 2x2 of both runs; moves most first."""
    pairs = pd.DataFrame({"from": a, "to": b}, dtype=object).dropna().value_counts()
    counts = {f: {t: int(pairs.get((f, t), 0)) for t in CELL_NAMES} for f in CELL_NAMES}
    moves = [
        {"from": f, "to": t, "n": n}
        for f, row in counts.items()
        for t, n in row.items()
        if f != t and n
    ]
    return counts, tuple(sorted(moves, key=lambda m: -m["n"]))


def dominant_class(classes: pd.Categorical) -> Dominant | None:
    """The most common class of wrong answers; a tie goes to the earliest link in
    FAILURE_CLASSES. The classes of correct answers (CORRECT_ANSWERS) only where no answer is
    wrong: 25 correct answers with unlabelled support outranked 15 faithful but wrong ones,
    and the worked cases and the fix followed the answers the run got right."""
    counts = count_labels(classes, FAILURE_CLASSES)
    for group in (
        [c for c in FAILURE_CLASSES if c not in CORRECT_ANSWERS],
        list(CORRECT_ANSWERS),
    ):
        best = max(group, key=lambda c: counts[c])
        if counts[best]:
            return Dominant(best, counts[best], OWNERS[best])
    return None


def cohen_kappa(table: np.ndarray) -> float:
    """Cohen's kappa (1960): agreement beyond chance, (p_o - p_e) / (1 - p_e).

    ``table[i, j]`` counts items rater one puts in class i and rater two in class j; NaN when
    chance agreement is certain (both raters use one class only).
    """
    n = table.sum()
    observed = np.trace(table) / n
    expected = table.sum(axis=1) @ table.sum(axis=0) / n**2
    return float("nan") if expected == 1 else float((observed - expected) / (1 - expected))


def judge_agreement(p: Paired, supported_threshold: float) -> dict[str, Agreement]:
    """Judge against human labels where both exist, pooled over both runs and per run."""
    result = {}
    for name, judge_column in (("correct", "correct"), ("faithful", "faithfulness")):
        verdicts = {}
        for run in RUNS:
            judge, human = p.values(judge_column, run), p.values(f"human_{name}", run)
            if name == "faithful":
                judge = np.where(np.isnan(judge), np.nan, judge >= supported_threshold)
            keep = ~(np.isnan(judge) | np.isnan(human))
            verdicts[run] = (judge[keep] == 1, human[keep] == 1)
        judge, human = (np.concatenate([v[i] for v in verdicts.values()]) for i in (0, 1))
        if not len(judge):
            continue
        by_run = {r: _agreement(*v) for r, v in verdicts.items() if len(v[0])}
        gap = by_run["b"].accuracy - by_run["a"].accuracy if len(by_run) == 2 else None
        pooled = _agreement(judge, human)
        warning = pooled.warning
        if gap is not None and abs(gap) > MAX_JUDGE_GAP:
            bias = (
                f"The judge agrees with humans on {by_run['a'].accuracy:.0%} of A's answers and "
                f"{by_run['b'].accuracy:.0%} of B's: it may favour one variant's style, which "
                "biases B \u2212 A"
            )
            warning = bias if warning is None else f"{bias}. {warning}"
        result[name] = replace(pooled, warning=warning, by_run=by_run, accuracy_gap=gap)
    return result


def _agreement(judge: np.ndarray, human: np.ndarray) -> Agreement:
    table = np.array([[np.sum(j & h) for h in (human, ~human)] for j in (judge, ~judge)])
    n = int(table.sum())
    kappa = cohen_kappa(table)
    reasons = [f"Only {fmt_count(n, 'human label')}"] if n < MIN_HUMAN_LABELS else []
    if not kappa >= MIN_KAPPA:
        reasons.append(
            "Cohen's kappa is undefined (one verdict only)"
            if math.isnan(kappa)
            else f"Cohen's kappa {kappa:.2f} is below {MIN_KAPPA}"
        )
    warning = (
        "; ".join(reasons) + ": model-judged scores are only as good as the judge"
        if reasons
        else None
    )
    confusion = {
        j: {h: int(table[i, k]) for k, h in enumerate(("true", "false"))}
        for i, j in enumerate(("true", "false"))
    }
    return Agreement(n, float(np.trace(table) / n), kappa, confusion, warning)
