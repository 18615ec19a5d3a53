"""Plain-Python reference of the span-labelled metrics (no duckdb, numpy or pandas).

Definitions (per question), written from the README independently of ``queries/``:

* labels: ``relevant_spans`` (doc_id, start, end, grade; grade None = 1); grade 0 is dropped;
  overlapping labels of one document are merged into one label with their highest grade;
* a passage (doc_id, start, end) covers a label when it overlaps it and the overlap is at least
  ``coverage`` times the label's length (coverage 0: any overlap);
* first(label) = 1-based rank of the first passage of the ranking that covers it;
* the covered labels in order of (first, highest grade, label name) are hit 1, 2, ...; hit j
  takes the slot max(first_j, j), so a passage covering several labels gives them its rank while
  j <= first_j, and the next slots past it, the best grade first;
* recall = |first <= k| / R; precision = distinct passages of the top k covering any label / k
  (a passage listed twice counts once, as a passage id does);
  hit, mrr = 1 / min first; ndcg = sum of gain / log2(slot + 1) over slots <= k, divided by the
  ideal DCG of the R labels' grades at k; map = sum of j / slot_j over slot_j <= k, / R;
  rprec = |first <= min(R, k)| / R; all = 1 when every label has first <= k.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Span = tuple[str, int, int]


def merge(labels: Sequence[tuple[str, int, int, int | None]]) -> list[tuple[str, int, int, int]]:
    """Labels of grade > 0, overlapping ones merged (highest grade)."""
    out: list[list] = []
    for doc, start, end, grade in sorted((d, s, e, 1 if g is None else g) for d, s, e, g in labels):
        if grade <= 0:
            continue
        if out and out[-1][0] == doc and start < out[-1][2]:
            out[-1][2] = max(out[-1][2], end)
            out[-1][3] = max(out[-1][3], grade)
        else:
            out.append([doc, start, end, grade])
    return [tuple(x) for x in out]  # type: ignore[misc]


def covers(passage: Span, label: tuple[str, int, int, int], coverage: float) -> bool:
    overlap = min(passage[2], label[2]) - max(passage[1], label[1])
    return passage[0] == label[0] and overlap > 0 and overlap >= coverage * (label[2] - label[1])


def _gain(grade: int, kind: str) -> float:
    return 2.0**grade - 1 if kind == "exponential" else float(grade)


def span_metrics(
    ranking: Sequence[Span],
    k: int,
    labels: Sequence[tuple[str, int, int, int | None]],
    coverage: float = 0.0,
    kind: str = "exponential",
) -> dict[str, float]:
    merged = merge(labels)
    n = len(merged)
    firsts = []
    for label in merged:
        ranks = [i for i, p in enumerate(ranking, 1) if covers(p, label, coverage)]
        if ranks:
            firsts.append((ranks[0], f"{label[0]}:{label[1]}-{label[2]}", label[3]))
    firsts.sort(key=lambda hit: (hit[0], -hit[2], hit[1]))
    hits = [(f, g) for f, _, g in firsts if f <= k]
    slots = [(max(f, j), g) for j, (f, g) in enumerate(hits, 1)]
    top = ranking[:k]
    covering = sum(any(covers(p, label, coverage) for label in merged) for p in set(top))
    ideal = sorted((g for *_, g in merged), reverse=True)[:k]
    idcg = sum(_gain(g, kind) / math.log2(i + 1) for i, g in enumerate(ideal, 1))
    dcg = sum(_gain(g, kind) / math.log2(s + 1) for s, g in slots if s <= k)
    return {
        "recall": len(hits) / n,
        "precision": covering / k if k else 0.0,
        "hit": float(bool(hits)),
        "mrr": 1 / hits[0][0] if hits else 0.0,
        "ndcg": dcg / idcg if idcg else 0.0,
        "map": sum(j / s for j, (s, _) in enumerate(slots, 1) if s <= k) / n,
        "rprec": sum(f <= min(n, k) for f, _ in hits) / n,
        "all": float(len(hits) == n),
    }


def _union(spans: Sequence[Span]) -> set[tuple[str, int]]:
    return {(doc, c) for doc, start, end in spans for c in range(start, end)}


def char_measures(
    prompt: Sequence[Span], labels: Sequence[tuple[str, int, int, int | None]]
) -> dict[str, float]:
    """Character sets, counted one by one: labelled, in the prompt, and both."""
    evidence = _union([(d, s, e) for d, s, e, _ in merge(labels)])
    shown = _union(prompt)
    both = len(evidence & shown)
    return {
        "evidence_recall": both / len(evidence),
        "context_precision": both / len(shown) if shown else 0.0,
        "evidence_iou": both / len(evidence | shown),
    }
