"""The options a log's metrics are scored with, as a per-question table records them."""

from __future__ import annotations

from dataclasses import dataclass

from ..inputs.scored_table import Settings
from .registry import BY_NAME, CONTEXT, RETRIEVAL


@dataclass(frozen=True)
class Scoring:
    """The options a log is scored with: the prompt cutoff (None: each question's context_ids),
    the nDCG gain and the share of a labelled span a passage must cover."""

    k: int | None = None
    gain: str = "exponential"
    span_coverage: float = 0.0

    def of(self, metric: str, spans: bool) -> Settings:
        """(k, gain, span_coverage) as one metric of a log (``spans``: labelled with spans)
        depends on them, None where it does not: what every shard of both runs must share."""
        k, gain, coverage = depends_on(metric, spans)
        return (
            self.k if k else None,
            self.gain if gain else None,
            self.span_coverage if coverage else None,
        )


def depends_on(metric: str, spans: bool) -> tuple[bool, bool, bool]:
    """Whether one metric of a log (``spans``: labelled with spans) depends on --k, --gain and
    --span-coverage (a log's own column, not in the registry, on none)."""
    kind = BY_NAME[metric].kind if metric in BY_NAME else None
    return kind in (RETRIEVAL, CONTEXT), metric == "ndcg", kind == RETRIEVAL and spans
