"""Generate a seeded pair of synthetic run logs (A and B) of N questions for benchmarking.

Usage: ``python bench/make_logs.py N OUT_DIR [--seed S]`` writes ``OUT_DIR/a.parquet`` and
``OUT_DIR/b.parquet``.

The story: one retriever's candidate pool of 100 passages per question, ranked by run A; run B
re-scores the same pool with noise and a small bonus for labelled passages, so B's ranking is a
perturbed version of A's that is a little better. Both runs send their top 5 to the generator;
an answer is more often correct when a (higher-graded) labelled passage is in its context, and
the two runs share their "luck" draws, so their per-question outcomes are correlated, as real
paired runs are. Labels (``relevant_ids`` / ``relevant_grades``) are identical in A and B.

Everything is vectorised: passage ids are fixed-width strings ("d123456#2") built as a byte
matrix and handed to Arrow as buffers, and rows are produced and written in batches (one
Parquet row group each), so memory stays bounded by the batch size for any N.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

DEPTH = 100  # length of retrieved_ids
CONTEXT = 5  # passages sent to the generator: the first CONTEXT of retrieved_ids
MAX_REL = 4  # labelled passages per question: 0..MAX_REL
BATCH = 50_000  # rows per batch (and per Parquet row group)
N_DOCS = 1_000_000  # passage ids are d000000#0 .. d999999#9
SLICES = np.array(
    [
        "refunds",
        "changes",
        "baggage",
        "rule_lookup",
        "loyalty",
        "payments",
        "disruptions",
        "group_travel",
    ]
)
SLICE_P = np.array([0.2, 0.18, 0.16, 0.14, 0.12, 0.1, 0.06, 0.04])
# Probability of a correct answer by the best grade in context (0 = no labelled passage).
P_CORRECT = np.array([0.18, 0.5, 0.72, 0.86])
P_CORRECT_UNLABELLED = 0.35  # questions without labels: evidence unknown

SCHEMA = pa.schema(
    [
        ("question_id", pa.string()),
        ("slice", pa.string()),
        ("retrieved_ids", pa.list_(pa.string())),
        ("relevant_ids", pa.list_(pa.string())),
        ("relevant_grades", pa.list_(pa.int64())),
        ("context_ids", pa.list_(pa.string())),
        ("correct", pa.bool_()),
        ("faithfulness", pa.float64()),
    ]
)


def _strings(chars: np.ndarray) -> pa.StringArray:
    """An Arrow string array from an (n, width) uint8 matrix of ASCII characters."""
    n, width = chars.shape
    offsets = np.arange(0, (n + 1) * width, width, dtype=np.int32)
    data = np.ascontiguousarray(chars).reshape(-1)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))


# "00" .. "99" as uint16 whose two bytes are the ASCII digits: numbers are written in pairs.
_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode(), dtype=np.uint16)


def _put_digits(chars: np.ndarray, start: int, pairs: int, values: np.ndarray) -> None:
    """Write ``values`` zero-padded to 2 * pairs digits into ``chars[:, start:]``."""
    out = np.empty((len(values), pairs), dtype=np.uint16)
    for i in range(pairs):
        pair = values // 100 ** (pairs - 1 - i)
        if i:
            pair %= 100
        np.take(_PAIRS, pair, out=out[:, i])
    chars[:, start : start + 2 * pairs] = out.view(np.uint8)


def passage_chars(codes: np.ndarray) -> np.ndarray:
    """Passage codes -> their ids "d{c // 10:06d}#{c % 10}" as an (..., 9) uint8 matrix."""
    flat = codes.reshape(-1).astype(np.int32)
    chars = np.empty((len(flat), 9), dtype=np.uint8)
    chars[:, 0] = ord("d")
    _put_digits(chars, 1, 3, flat // 10)
    chars[:, 7] = ord("#")
    chars[:, 8] = flat % 10 + ord("0")
    return chars.reshape(*codes.shape, 9)


def question_ids(start: int, n: int) -> pa.StringArray:
    """q00000001, q00000002, ... (9 characters, up to 99,999,999 questions)."""
    chars = np.empty((n, 9), dtype=np.uint8)
    chars[:, 0] = ord("q")
    _put_digits(chars, 1, 4, np.arange(start + 1, start + n + 1, dtype=np.int64))
    return _strings(chars.reshape(n, 9))


def _lists(values: pa.Array, lengths: np.ndarray) -> pa.ListArray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), values)


def _fixed_lists(chars: np.ndarray) -> pa.ListArray:
    """An (n, width, 9) matrix of passage-id characters -> list<string> of width ids per row."""
    n, width, size = chars.shape
    values = _strings(chars.reshape(n * width, size))
    return _lists(values, np.full(n, width, dtype=np.int32))


def make_batch(rng: np.random.Generator, start: int, n: int) -> tuple[pa.Table, pa.Table]:
    """Rows start .. start + n of both runs."""
    # Labels: 0..4 passages of the question's topic document (chunks 1..4), grades 1..3.
    n_rel = rng.choice(np.arange(1, MAX_REL + 1), size=n, p=[0.35, 0.3, 0.2, 0.15])
    n_rel[rng.random(n) < 0.05] = 0  # ~5% without labelled evidence
    slot = np.arange(MAX_REL)
    labelled = slot < n_rel[:, None]  # (n, MAX_REL)
    topic = rng.integers(0, N_DOCS, size=n)
    rel_codes = topic[:, None] * 10 + slot + 1
    grades = rng.choice(np.array([1, 2, 3], dtype=np.int64), size=(n, MAX_REL), p=[0.4, 0.35, 0.25])

    # The candidate pool: a labelled passage is retrieved at all with probability 0.85; the
    # other slots hold distractors from other documents (never the topic document).
    other = (topic[:, None] + rng.integers(1, N_DOCS, size=(n, DEPTH))) % N_DOCS
    pool = other * 10 + rng.integers(0, 10, size=(n, DEPTH))
    in_pool = labelled & (rng.random((n, MAX_REL)) < 0.85)
    pool[:, :MAX_REL] = np.where(in_pool, rel_codes, pool[:, :MAX_REL])
    pool_grade = np.zeros((n, DEPTH), dtype=np.int8)
    pool_grade[:, :MAX_REL] = np.where(in_pool, grades, 0)
    is_rel = pool_grade > 0

    # A ranks by a noisy score with labelled passages ahead on average; B re-scores A's pool.
    score_a = rng.standard_normal((n, DEPTH)) + 1.6 * is_rel + 0.15 * pool_grade
    score_b = score_a + 0.6 * rng.standard_normal((n, DEPTH)) + 0.5 * is_rel

    luck = rng.random(n)  # shared by both runs: paired outcomes are correlated
    faith_m = rng.integers(1, 5, size=n)  # claims in the answer, 1..4
    qid = question_ids(start, n)
    slices = pa.array(SLICES[rng.choice(len(SLICES), size=n, p=SLICE_P)])
    rel_lists = _lists(_strings(passage_chars(rel_codes[labelled])), n_rel)
    grade_lists = _lists(pa.array(grades[labelled]), n_rel)

    # The pool's ids are formatted once; each run's ranking reorders them as 9-byte records.
    pool_ids = passage_chars(pool).view("V9")[..., 0]  # (n, DEPTH) of 9-byte ids
    del pool, other, is_rel
    tables = []
    for score in (score_a, score_b):
        order = np.argsort(-score, axis=1, kind="stable")
        ranked = np.take_along_axis(pool_ids, order, axis=1)[..., None].view(np.uint8)
        best = np.take_along_axis(pool_grade, order[:, :CONTEXT], axis=1).max(axis=1)
        p = np.where(n_rel > 0, P_CORRECT[best], P_CORRECT_UNLABELLED)
        correct = luck < p
        supported = rng.binomial(faith_m, np.where(correct, 0.9, 0.55))
        tables.append(
            pa.Table.from_arrays(
                [
                    qid,
                    slices,
                    _fixed_lists(ranked),
                    rel_lists,
                    grade_lists,
                    _fixed_lists(ranked[:, :CONTEXT]),
                    pa.array(correct),
                    pa.array(supported / faith_m),
                ],
                schema=SCHEMA,
            )
        )
        del order, ranked
    return tables[0], tables[1]


def write_logs(
    n: int, out_dir: Path, seed: int = 0, batch: int = BATCH, row_group: int | None = None
) -> tuple[Path, Path]:
    """Write OUT_DIR/a.parquet and OUT_DIR/b.parquet with n questions each, in row groups of a
    batch, or of ``row_group`` rows (the same rows: a streaming writer's tiny row groups)."""
    if not 1 <= n <= 99_999_999:
        raise ValueError("N must be between 1 and 99,999,999")
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = out_dir / "a.parquet", out_dir / "b.parquet"
    rng = np.random.default_rng(seed)
    options = dict(compression="zstd", use_dictionary=["slice"])
    writers = [pq.ParquetWriter(path, SCHEMA, **options) for path in paths]
    try:
        for start in range(0, n, batch):
            size = min(batch, n - start)
            for writer, table in zip(writers, make_batch(rng, start, size), strict=True):
                writer.write_table(table, row_group_size=row_group or size)
    finally:
        for writer in writers:
            writer.close()
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, help="questions per run")
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--row-group-size", type=int, help="rows per row group (default: 50,000)")
    args = parser.parse_args()
    began = time.perf_counter()
    paths = write_logs(args.n, args.out_dir, args.seed, row_group=args.row_group_size)
    sizes = ", ".join(f"{p} {p.stat().st_size / 1e6:.1f} MB" for p in paths)
    print(f"wrote {sizes} in {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
