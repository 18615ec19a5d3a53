"""Plain-Python reference implementation of the per-question retrieval metrics.

Written from the metric definitions of the spec, independently of ``reportgen`` and
``queries/`` (no numpy, no pandas, no duckdb), so that it can serve as a test oracle.

Definitions (per question):

* labels: ``relevant_ids`` with parallel ``relevant_grades``; grades absent (``None``)
  means every label has grade 1; a label listed twice keeps its highest grade;
* rel = labelled passages with grade > 0 (grade 0 or negative is *not* relevant);
* top_k = the first k entries of the ranking; a passage id appearing more than once counts
  only at its first position, the later copies still occupy their slots and earn nothing;
* recall@k = |rel ∩ top_k| / |rel|
* precision@k = |rel ∩ top_k| / k (divide by k even when fewer than k were retrieved)
* hit@k = 1 if any relevant passage is in top_k else 0
* mrr@k = 1 / rank of the first relevant passage within top_k, else 0
* ndcg@k = DCG@k / IDCG@k, gain 2^g - 1 ("exponential") or g ("linear"),
  discount log2(rank + 1), IDCG from the ideal order of ALL relevant labels of the
  question (also the ones that were never retrieved), truncated at k; summed in exact
  fractions, so any grade has a reference.
* map@k = average precision at k: the sum, over the relevant passages in top_k, of the
  precision at their rank, divided by |rel| (trec_eval's map_cut_k)
* rprec@k = |rel ∩ top_min(R, k)| / R with R = |rel| (R-precision, cut at k)
* all@k = 1 if every relevant passage is in top_k else 0

Every metric is ``None`` for a question without any relevant passage.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction

METRICS = ("recall", "precision", "hit", "mrr", "ndcg", "map", "rprec", "all")


def label_grades(
    relevant_ids: Sequence[str] | None, relevant_grades: Sequence[int] | None = None
) -> dict[str, int]:
    """Map each labelled passage to its grade (highest grade wins for repeated labels)."""
    ids = list(relevant_ids or [])
    if relevant_grades is None:
        grades = [1] * len(ids)
    else:
        grades = [int(g) for g in relevant_grades]
        if len(grades) != len(ids):
            raise ValueError("relevant_ids and relevant_grades differ in length")
    out: dict[str, int] = {}
    for pid, g in zip(ids, grades, strict=True):
        if pid not in out or g > out[pid]:
            out[pid] = g
    return out


def relevant_set(grades: dict[str, int]) -> set[str]:
    return {pid for pid, g in grades.items() if g > 0}


def _first_occurrences(ranking: Sequence[str], k: int) -> list[tuple[int, str]]:
    """(1-based rank, id) of the first occurrence of each id within the first k slots."""
    seen: set[str] = set()
    out: list[tuple[int, str]] = []
    for i, pid in enumerate(list(ranking)[:k], start=1):
        if pid in seen:
            continue
        seen.add(pid)
        out.append((i, pid))
    return out


def gain(g: int, kind: str = "exponential") -> int:
    """Exact, as DCG's sums are (any grade: 2^2000 - 1 has no float)."""
    if g <= 0:
        return 0
    if kind == "exponential":
        return 2**g - 1
    if kind == "linear":
        return g
    raise ValueError(f"unknown gain {kind!r}")


def discount(rank: int) -> Fraction:
    return Fraction(math.log2(rank + 1))


def recall(ranking, k, relevant_ids, relevant_grades=None):
    rel = relevant_set(label_grades(relevant_ids, relevant_grades))
    if not rel:
        return None
    found = {pid for _, pid in _first_occurrences(ranking, k) if pid in rel}
    return len(found) / len(rel)


def precision(ranking, k, relevant_ids, relevant_grades=None):
    rel = relevant_set(label_grades(relevant_ids, relevant_grades))
    if not rel:
        return None
    found = {pid for _, pid in _first_occurrences(ranking, k) if pid in rel}
    return len(found) / k


def hit(ranking, k, relevant_ids, relevant_grades=None):
    rel = relevant_set(label_grades(relevant_ids, relevant_grades))
    if not rel:
        return None
    return 1.0 if any(pid in rel for _, pid in _first_occurrences(ranking, k)) else 0.0


def mrr(ranking, k, relevant_ids, relevant_grades=None):
    rel = relevant_set(label_grades(relevant_ids, relevant_grades))
    if not rel:
        return None
    for rank, pid in _first_occurrences(ranking, k):
        if pid in rel:
            return 1.0 / rank
    return 0.0


def dcg(ranking, k, grades: dict[str, int], kind: str = "exponential") -> Fraction:
    total = Fraction(0)
    for rank, pid in _first_occurrences(ranking, k):
        g = grades.get(pid, 0)
        if g > 0:
            total += gain(g, kind) / discount(rank)
    return total


def idcg(k, grades: dict[str, int], kind: str = "exponential") -> Fraction:
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    return sum(
        (gain(g, kind) / discount(rank) for rank, g in enumerate(ideal, start=1)), Fraction(0)
    )


def ndcg(ranking, k, relevant_ids, relevant_grades=None, kind: str = "exponential"):
    grades = label_grades(relevant_ids, relevant_grades)
    if not relevant_set(grades):
        return None
    return float(dcg(ranking, k, grades, kind) / idcg(k, grades, kind))


def average_precision(ranking, k, relevant_ids, relevant_grades=None):
    rel = relevant_set(label_grades(relevant_ids, relevant_grades))
    if not rel:
        return None
    hits, total = 0, 0.0
    for rank, pid in _first_occurrences(ranking, k):
        if pid in rel:
            hits += 1
            total += hits / rank
    return total / len(rel)


def r_precision(ranking, k, relevant_ids, relevant_grades=None):
    rel = relevant_set(label_grades(relevant_ids, relevant_grades))
    if not rel:
        return None
    top = {pid for _, pid in _first_occurrences(ranking, min(k, len(rel)))}
    return len(rel & top) / len(rel)


def all_relevant(ranking, k, relevant_ids, relevant_grades=None):
    rel = relevant_set(label_grades(relevant_ids, relevant_grades))
    if not rel:
        return None
    return 1.0 if rel <= {pid for _, pid in _first_occurrences(ranking, k)} else 0.0


def all_metrics(ranking, k, relevant_ids, relevant_grades=None, kind="exponential"):
    """Every metric for one question, keyed by the names of METRICS."""
    return {
        "recall": recall(ranking, k, relevant_ids, relevant_grades),
        "precision": precision(ranking, k, relevant_ids, relevant_grades),
        "hit": hit(ranking, k, relevant_ids, relevant_grades),
        "mrr": mrr(ranking, k, relevant_ids, relevant_grades),
        "ndcg": ndcg(ranking, k, relevant_ids, relevant_grades, kind),
        "map": average_precision(ranking, k, relevant_ids, relevant_grades),
        "rprec": r_precision(ranking, k, relevant_ids, relevant_grades),
        "all": all_relevant(ranking, k, relevant_ids, relevant_grades),
    }


def mean(values: Iterable[float | None]) -> float | None:
    """Mean over the non-None values (questions with no relevant passage are left out)."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return sum(vals) / len(vals)
