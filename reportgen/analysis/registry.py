"""Every metric the report compares, in one place: what it is, how it is named and defined.

Each list of metrics (report order, the metric-vs-k chart, the per-question SQL columns, the
definitions) is derived from ``METRICS``, so adding a metric touches this registry, its SQL
and its tests. Scores the logs already carry (``--metric COLUMN``) become entries of kind
SCORE built at run time with ``score``.

A retrieval metric's public name carries the prompt cutoff it was scored at (``ndcg@5``);
``public_name`` builds it and ``parse_name`` reads it back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RETRIEVAL, CONTEXT, ANSWER, SCORE = "retrieval", "context", "answer", "score"
# a public name, as rules write it: a score column may carry hyphens, dots and its settings in
# parentheses (promptfoo's score_context-faithfulness, RAGAS' factual_correctness(mode=f1))
NAME_PATTERN = r"[A-Za-z_][\w.\-]*(?:\([^()\s]*\))?(?:@\d+)?"
_PUBLIC = re.compile(r"^(?P<base>.+?)(?:@(?P<cutoff>\d+))?$")
UNIT = (0.0, 1.0)  # the range of a share or a 0/1 outcome


@dataclass(frozen=True)
class Metric:
    """One per-question metric. ``definition`` may hold ``{gain}``, the nDCG gain formula."""

    name: str  # base name: the SQL column stem (``ndcg`` in ``ndcg_a``)
    kind: str  # RETRIEVAL (at the prompt cutoff), CONTEXT (span characters), ANSWER or SCORE
    binary: bool  # 0/1 per answer: fixed/broken and McNemar's test
    definition: str
    higher_is_better: bool = True
    curve: bool = False  # computed at every cutoff k (queries/metric_curve.sql)
    charted: bool = False  # drawn on the metric-vs-k chart, in registry order
    source: str | None = None  # SCORE: the column of the logs it reads
    bounds: tuple[float, float] | None = UNIT  # one question's range; None: not known

    @property
    def at_cutoff(self) -> bool:
        """Named with the prompt cutoff it was scored at (``recall@5``)."""
        return self.kind == RETRIEVAL


def _retrieval(name: str, definition: str, binary: bool = False, charted: bool = True) -> Metric:
    return Metric(name, RETRIEVAL, binary, definition, curve=True, charted=charted)


METRICS = (
    _retrieval("recall", "|rel \u2229 top k| / |rel|."),
    _retrieval("precision", "|rel \u2229 top k| / k, dividing by k even when fewer were ranked."),
    _retrieval("hit", "1 if any relevant passage is in the top k, else 0.", binary=True),
    _retrieval("mrr", "1 / rank of the first relevant passage within the top k, else 0."),
    _retrieval(
        "ndcg",
        "DCG@k / IDCG@k with gain {gain} for grade g and discount log2(rank + 1); IDCG orders "
        "all labelled passages of the question ideally, retrieved or not.",
    ),
    _retrieval(
        "map",
        "Average precision at k (trec_eval's map_cut_k): the precision at the rank of each "
        "relevant passage in the top k, summed, divided by |rel|; its mean is MAP.",
        charted=False,
    ),
    _retrieval(
        "rprec",
        "R-precision: |rel \u2229 top R| / R with R = |rel| (trec_eval's Rprec), the ranking "
        "cut at k when k < R.",
        charted=False,
    ),
    _retrieval(
        "all", "1 if every relevant passage is in the top k, else 0.", binary=True, charted=False
    ),
    Metric(
        "evidence_recall",
        CONTEXT,
        False,
        "Labelled characters that reached the prompt / labelled characters, whatever the cutting.",
    ),
    Metric(
        "context_precision",
        CONTEXT,
        False,
        "Labelled characters in the prompt / characters in the prompt (overlapping passages "
        "count their shared characters once; 0 for an empty prompt).",
    ),
    Metric(
        "evidence_iou",
        CONTEXT,
        False,
        "Labelled characters in the prompt / characters that are labelled or in the prompt "
        "(intersection over union, as in Chroma's technical report on chunking evaluation, "
        "2024, which calls it token-level and measures it on character ranges, as here).",
    ),
    Metric(
        "correct", ANSWER, True, "Share of questions whose answer is correct against the reference."
    ),
    Metric(
        "faithfulness", ANSWER, False, "Mean share of the answer's claims supported by its context."
    ),
)
BY_NAME = {m.name: m for m in METRICS}


def names(*kinds: str) -> tuple[str, ...]:
    """The base names of the built-in metrics of these kinds, in report order."""
    return tuple(m.name for m in METRICS if m.kind in kinds)


CURVE = tuple(m.name for m in METRICS if m.curve)  # the metrics of queries/metric_curve.sql
CHARTED = tuple(m.name for m in METRICS if m.charted)  # the metric-vs-k chart's panels


def public_name(metric: Metric, cutoff: int | None) -> str:
    """``ndcg@5`` for a retrieval metric scored at cutoff 5, the base name otherwise."""
    return f"{metric.name}@{cutoff}" if metric.at_cutoff else metric.name


def parse_name(name: str) -> tuple[str, int | None]:
    """The base name and cutoff of a public name: ``ndcg@5`` -> (``ndcg``, 5)."""
    match = _PUBLIC.match(name)
    assert match is not None  # the pattern matches every non-empty string
    cutoff = match["cutoff"]
    return match["base"], None if cutoff is None else int(cutoff)


def base_name(name: str) -> str:
    """``ndcg`` for ``ndcg@5``, the name itself otherwise."""
    return parse_name(name)[0]


def value_range(name: str) -> tuple[float, float] | None:
    """The range [lo, hi] of a question's value (so of a run's mean) of the built-in metric of
    this public name. None for any other name (a score of the logs, a cost, a count), whose
    range the registry does not know."""
    metric = BY_NAME.get(base_name(name))
    return None if metric is None else metric.bounds


def difference_range(name: str) -> tuple[float, float] | None:
    """The range of B - A (on one question, so of its mean too) of the built-in metric of this
    public name: [lo - hi, hi - lo] for values in [lo, hi]; None as for value_range."""
    bounds = value_range(name)
    if bounds is None:
        return None
    low, high = bounds
    return low - high, high - low


def score(column: str, binary: bool, higher_is_better: bool) -> Metric:
    """A score the logs already carry, compared like any metric under its column's name."""
    kind = "0/1 score" if binary else "score"
    direction = "higher" if higher_is_better else "lower"
    return Metric(
        column,
        SCORE,
        binary,
        f"The logs' own {kind} in column {column}, averaged over questions; {direction} is better.",
        higher_is_better=higher_is_better,
        source=column,
        bounds=None,
    )
