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
        kind = BY_NAME[metric].kind if metric in BY_NAME else None  # None: a log's own column
        return (
            self.k if kind in (RETRIEVAL, CONTEXT) else None,
            self.gain if metric == "ndcg" else None,
            self.span_coverage if kind == RETRIEVAL and spans else None,
        )
