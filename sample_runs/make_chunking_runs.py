"""Generate a chunking pair: the same manuals cut two ways, scored against the same span labels.

The story the data tells:

* Variant A (``manuals_a_chunk400``) cuts each manual into 400-character passages and sends the
  top 3 to the generator; variant B (``manuals_b_chunk1000``) cuts the same manuals into
  1000-character passages and also sends 3.
* Evidence is labelled once, as character spans of the manuals (``relevant_spans``), so both
  runs are scored against the same labels although their passage ids differ.
* A's small passages are more precise (context precision up) but a label cut in two by a
  400-character boundary often reaches the prompt only in part, so A loses on evidence recall
  and on correct answers; B sends 2.5 times the text, which the fairness check flags.

Run ``python sample_runs/make_chunking_runs.py``; the output is byte-identical on every run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

SEED = 2024
OUT = Path(__file__).resolve().parent
N_DOCS, DOC_CHARS = 40, 6000
N_QUESTIONS = 160
DEPTH, PROMPT = 10, 3  # passages ranked, passages sent to the generator
SPAN_TYPE = pa.list_(
    pa.struct([("doc_id", pa.string()), ("start", pa.int64()), ("end", pa.int64())])
)
LABEL_TYPE = pa.list_(
    pa.struct(
        [("doc_id", pa.string()), ("start", pa.int64()), ("end", pa.int64()), ("grade", pa.int64())]
    )
)


def _labels(rng: np.random.Generator) -> list[list[dict]]:
    """One or two evidence spans of 150 to 500 characters per question, in one manual."""
    out = []
    for _ in range(N_QUESTIONS):
        doc = f"manual{rng.integers(N_DOCS):02d}"
        spans = []
        for _ in range(rng.integers(1, 3)):
            start = int(rng.integers(0, DOC_CHARS - 500))
            spans.append(
                {"doc_id": doc, "start": start, "end": start + int(rng.integers(150, 500)),
                 "grade": int(rng.integers(1, 3))}
            )  # fmt: skip
        out.append(spans)
    return out


def _run(rng: np.random.Generator, labels: list[list[dict]], size: int, found: float) -> pa.Table:
    """Each passage overlapping a label is retrieved with probability ``found`` at a random rank
    among the top DEPTH; other passages of the corpus fill the ranking."""
    retrieved, correct, chars = [], [], []
    for spans in labels:
        evidence = {
            (s["doc_id"], c)
            for s in spans
            for c in range(s["start"] // size, (s["end"] - 1) // size + 1)
        }
        hits = [p for p in sorted(evidence) if rng.random() < found]
        ranking: list[tuple[str, int]] = []
        while len(ranking) < DEPTH - len(hits):
            other = (f"manual{rng.integers(N_DOCS):02d}", int(rng.integers(DOC_CHARS // size)))
            if other not in evidence and other not in ranking:
                ranking.append(other)
        for p in hits:
            ranking.insert(int(rng.integers(0, min(len(ranking), 4) + 1)), p)
        spans_ranked = [
            {"doc_id": d, "start": c * size, "end": min((c + 1) * size, DOC_CHARS)}
            for d, c in ranking
        ]
        retrieved.append(spans_ranked)
        shown = sum(p in evidence for p in ranking[:PROMPT]) / len(evidence)
        correct.append(bool(rng.random() < 0.2 + 0.7 * shown))
        chars.append(sum(s["end"] - s["start"] for s in spans_ranked[:PROMPT]))
    return pa.table(
        {
            "question_id": [f"m{i:03d}" for i in range(N_QUESTIONS)],
            "relevant_spans": pa.array(labels, LABEL_TYPE),
            "retrieved_spans": pa.array(retrieved, SPAN_TYPE),
            "context_spans": pa.array([r[:PROMPT] for r in retrieved], SPAN_TYPE),
            "correct": correct,
        }
    )


def main() -> None:
    rng = np.random.default_rng(SEED)
    labels = _labels(rng)
    pq.write_table(_run(rng, labels, 400, 0.75), OUT / "manuals_a_chunk400.parquet")
    pq.write_table(_run(rng, labels, 1000, 0.8), OUT / "manuals_b_chunk1000.parquet")


if __name__ == "__main__":
    main()
