"""Time span matching against the passage-level metrics it replaces, on N questions x 100.

Usage: ``python bench/span_bench.py N OUT_DIR [--seed S] [--one-document] [--also REV
[--repeats R]]``.

Writes a seeded pair of span logs (``OUT_DIR/spans_a.parquet``, ``spans_b.parquet``): each
question has a home manual; its 100 retrieved passages are 500-character chunks (A) or
1000-character chunks (B), about a tenth of them from the home manual, and 0 to 4 labelled
spans of 100 to 600 characters in that manual; the first 5 passages are the prompt. Then it
times, in one DuckDB session each, what ``compare`` runs in DuckDB before the statistics: the row
checks, ``relevant``, ``question_metrics`` and the audit's data smells (with the labels across a
cut), once on the passage-level logs of ``make_logs.py`` (same N, ranking depth 100) and once on
the span logs (plus span matching, span precision and the character measures). Prints both wall
and CPU times (user + system over DuckDB's threads, the steadier figure on a loaded machine) and
their ratios.

``--one-document`` lays the manuals end to end as one document (``m0``, each manual's offsets
moved by its place): the same passages and labels, so every per-question number is the same,
but the audit's labels across a cut face one document of every passage, as a corpus of one
long file does.

``--also REV`` times the same steps as committed in REV (``git archive REV``, as
``run_bench.py --snapshot`` does) beside this checkout: each timing is a separate process,
the two commits alternating (this, REV, REV, this, ...) R times (default 5), and the medians are
printed side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from make_logs import write_logs
from run_bench import compiled, export

import reportgen
from reportgen.inputs.database import RunDatabase
from reportgen.inputs.load import open_run

DEPTH, CONTEXT = 100, 5
N_DOCS = 100_000
HOME_SHARE = 0.1  # passages of the ranking from the question's own manual
CHUNKS_PER_DOC = 40  # passage start = chunk * size, chunk in 0..CHUNKS_PER_DOC-1 (at 500 chars)
DOC_CHARS = CHUNKS_PER_DOC * 500  # a manual's length
MAX_LABELS = 4
REPO = Path(__file__).resolve().parent.parent
LABELS = ("passage labels", "span labels")


def _spans(docs: np.ndarray, starts: np.ndarray, ends: np.ndarray, lengths: np.ndarray, one: bool):
    """Spans of manual ``docs`` at ``starts``/``ends``, a list per question of ``lengths``; with
    ``one`` the manuals laid end to end as the one document ``m0``."""
    if one:
        starts, ends, docs = starts + docs * DOC_CHARS, ends + docs * DOC_CHARS, docs * 0
    structs = pa.StructArray.from_arrays(
        [
            pc.utf8_replace_slice(pc.cast(pa.array(docs), pa.string()), 0, 0, "m"),
            pa.array(starts),
            pa.array(ends),
        ],
        names=["doc_id", "start", "end"],
    )
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), structs)


def write_span_logs(
    n: int, out_dir: Path, seed: int = 0, one_document: bool = False
) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    home = rng.integers(N_DOCS, size=n)
    n_labels = rng.integers(0, MAX_LABELS + 1, size=n)
    label_docs = np.repeat(home, n_labels)
    label_starts = rng.integers(0, DOC_CHARS - 600, size=len(label_docs))
    label_ends = label_starts + rng.integers(100, 600, size=len(label_docs))
    labels = _spans(label_docs, label_starts, label_ends, n_labels, one_document)
    paths = []
    for name, size in (("a", 500), ("b", 1000)):
        own = rng.random((n, DEPTH)) < HOME_SHARE
        docs = np.where(own, home[:, None], rng.integers(N_DOCS, size=(n, DEPTH))).ravel()
        chunks = rng.integers(0, DOC_CHARS // size, size=n * DEPTH)
        lengths = np.full(n, DEPTH)
        ranked = _spans(docs, chunks * size, chunks * size + size, lengths, one_document)
        prompt = _spans(
            docs.reshape(n, DEPTH)[:, :CONTEXT].ravel(),
            (chunks * size).reshape(n, DEPTH)[:, :CONTEXT].ravel(),
            (chunks * size + size).reshape(n, DEPTH)[:, :CONTEXT].ravel(),
            np.full(n, CONTEXT),
            one_document,
        )
        table = pa.table(
            {
                "question_id": pc.cast(pa.array(np.arange(n)), pa.string()),
                "relevant_spans": labels,
                "retrieved_spans": ranked,
                "context_spans": prompt,
                "correct": rng.random(n) < 0.5,
            }
        )
        path = out_dir / f"spans_{name}.parquet"
        pq.write_table(table, path, row_group_size=50_000)
        paths.append(path)
    return paths[0], paths[1]


def time_metrics(a: Path, b: Path, coverage: float | None) -> tuple[float, float]:
    """Wall and CPU seconds from opening the logs to the per-question metrics table and the
    audit's data smells (named at the prompt's size, as ``compare`` names them)."""
    start, cpu = time.perf_counter(), time.process_time()
    db = RunDatabase(open_run(a, "A"), open_run(b, "B"))
    db.prepare(None, coverage or 0.0)
    db.execute("question_metrics", k=None, exponential=True)
    if coverage is not None:
        db.execute("span_precision", k=None)
    db.frame("data_smells", k=CONTEXT)
    db.close()
    return time.perf_counter() - start, time.process_time() - cpu


def _paths(out_dir: Path) -> dict[str, tuple[Path, Path]]:
    """The two pairs of logs, by label (the names write_logs and write_span_logs give them)."""
    return {
        LABELS[0]: (out_dir / "a.parquet", out_dir / "b.parquet"),
        LABELS[1]: (out_dir / "spans_a.parquet", out_dir / "spans_b.parquet"),
    }


def _timed(out_dir: Path, label: str) -> tuple[float, float]:
    return time_metrics(*_paths(out_dir)[label], coverage=None if label == LABELS[0] else 0.0)


def _timed_in(source: Path, label: str, out_dir: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one pair timed in a process of its own, with the package of
    ``source`` (a checkout or an exported commit) first on the path."""
    env = dict(os.environ, PYTHONPATH=str(source))
    argv = [sys.executable, __file__, "0", str(out_dir), "--child", label]
    done = subprocess.run(argv, env=env, cwd=source, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    if Path(result["package"]).resolve() != (source / "reportgen").resolve():
        raise SystemExit(f"timed {result['package']}, not the package of {source}")
    return result["wall"], result["cpu"]


def _side_by_side(out_dir: Path, rev: str, repeats: int) -> None:
    """This checkout and REV, alternating, each pair of logs timed ``repeats`` times."""
    with tempfile.TemporaryDirectory() as tmp:
        sources = {"this checkout": compiled(REPO), rev: Path(tmp)}
        export(rev, sources[rev])
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for i in range(repeats):
            order = list(sources) if i % 2 == 0 else list(sources)[::-1]
            for name in order:
                for label in LABELS:
                    timing = _timed_in(sources[name], label, out_dir)
                    times.setdefault((name, label), []).append(timing)
    print(f"medians of {repeats} runs each, alternating; CPU = user + system over all threads")
    for name in sources:
        wall, cpu = (
            {label: statistics.median(t[j] for t in times[(name, label)]) for label in LABELS}
            for j in (0, 1)
        )
        ratio = cpu[LABELS[1]] / cpu[LABELS[0]]
        print(
            f"{name}: "
            + ", ".join(
                f"{label} {wall[label]:.2f} s wall, {cpu[label]:.2f} s CPU" for label in LABELS
            )
            + f"; span / passage (CPU) {ratio:.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--one-document", action="store_true", help="the manuals as one document")
    parser.add_argument("--also", metavar="REV", help="also time the steps as committed in REV")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each with --also")
    parser.add_argument("--child", choices=LABELS, help=argparse.SUPPRESS)  # one timing, as JSON
    args = parser.parse_args()
    if args.child:
        wall, cpu = _timed(args.out_dir, args.child)
        package = str(Path(reportgen.__file__).parent)
        print(json.dumps({"wall": wall, "cpu": cpu, "package": package}))
        return
    args.out_dir.mkdir(parents=True, exist_ok=True)
    write_logs(args.n, args.out_dir, args.seed)
    write_span_logs(args.n, args.out_dir, args.seed, args.one_document)
    print(f"{args.n} questions x {DEPTH} passages")
    if args.also:
        _side_by_side(args.out_dir, args.also, args.repeats)
        return
    passages, spans = (_timed(args.out_dir, label) for label in LABELS)
    for name, (wall, cpu) in zip(LABELS, (passages, spans), strict=True):
        print(
            f"{name + ':':15} {wall:.2f} s wall ({wall / passages[0]:.2f}x), "
            f"{cpu:.2f} s CPU ({cpu / passages[1]:.2f}x)"
        )


if __name__ == "__main__":
    main()
