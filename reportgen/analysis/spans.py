"""Evidence labelled as document spans: the character-level measures and their definitions.

Span labels (``relevant_spans``) survive re-chunking, so two runs that cut the documents
differently are scored against the same labels: the passage-level metrics through the passages
that cover each label (queries/span_matches.sql), and the measures here on characters, which do
not depend on the cutting at all (queries/span_chars.sql).
"""

from __future__ import annotations

from .registry import CONTEXT, names

CHAR_METRICS = names(CONTEXT)


def definitions(metrics: tuple[str, ...], coverage: float) -> list[tuple[str, str]]:
    """How span labels are scored, when the report scores them (each character measure's own
    definition is in the registry)."""
    if CHAR_METRICS[0] not in metrics:
        return []
    return [("Span labels", _rule(coverage))]


def _rule(coverage: float) -> str:
    """The span-label rule, with the share of a label a passage must cover as a percentage: "at
    least 1 of its characters" would read as one character, not as the whole label."""
    if coverage == 0:
        covers = "overlaps it by at least one character"
    elif coverage == 1:
        covers = "contains it whole (--span-coverage 1)"
    else:
        covers = (
            f"covers at least {coverage * 100:g}% of its characters (--span-coverage {coverage:g})"
        )
    return (
        "Evidence is labelled as character spans of the documents (relevant_spans, end "
        "exclusive); overlapping labels of one question are merged into one, with the highest "
        f"grade. A passage is relevant to a label when it {covers}; each label counts as "
        "found at the rank of the first passage relevant to it, so recall, hit, MRR, R-"
        "precision and all are those of passage labels. Precision@k: passages of the top k "
        "relevant to any label / k. nDCG and AP: the j-th label found takes slot max(rank, j), "
        "so labels found by one passage share its rank while fewer labels than ranks have been "
        "found, and take the next slots once more have; neither exceeds 1, and a slot past k "
        "is past the cutoff in both."
    )
