"""What a comparison of several runs costs against the two-run comparison of the same questions.

Usage: ``python bench/study_cost.py [--size 10000] [--runs 5] [--repeats 3] [--seed 0]
[--snapshot REV]``

Writes (or reuses) the seeded pair of make_logs.py and derives further candidates from B: each
shuffles the first 10 passages of B's ranking per question with its own seed (so its prompt, the
first 5, changes) and flips 10% of B's ``correct``; the labels stay A's. Then times, as cold
processes in alternating order (two runs, N runs, N runs, two runs, ...):

- ``python -m reportgen compare a.parquet b.parquet -o report.html``
- ``python -m reportgen compare a.parquet b.parquet c.parquet ... -o report.html``

and prints each one's median wall and CPU time (user + system over all its threads) and their
ratio. ``--snapshot REV`` times a commit (``git archive REV`` in a temporary folder) instead of
the working tree.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from make_logs import CONTEXT, DEPTH, write_logs  # noqa: E402
from run_bench import compiled, export  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "ragreport-bench-logs"
SHUFFLED = 10  # a derived candidate reorders the first SHUFFLED passages of B's ranking
FLIPPED = 0.1  # and flips this share of B's correct


def derive(b: Path, out: Path, seed: int) -> None:
    """A candidate like B: its top SHUFFLED passages reordered, FLIPPED of correct flipped."""
    table = pq.read_table(b)
    rng = np.random.default_rng(seed)
    ranked = table["retrieved_ids"].combine_chunks()
    ids = ranked.flatten().to_numpy(zero_copy_only=False).reshape(-1, DEPTH)
    order = np.argsort(rng.random((len(ids), SHUFFLED)), axis=1)
    ids[:, :SHUFFLED] = np.take_along_axis(ids[:, :SHUFFLED], order, axis=1)
    retrieved = pa.ListArray.from_arrays(ranked.offsets, pa.array(ids.reshape(-1)))
    prompt = pa.array(ids[:, :CONTEXT].tolist(), pa.list_(pa.string()))
    correct = table["correct"].to_numpy() ^ (rng.random(len(ids)) < FLIPPED)
    table = table.set_column(table.schema.get_field_index("retrieved_ids"), "retrieved_ids",
                             retrieved)  # fmt: skip
    table = table.set_column(table.schema.get_field_index("context_ids"), "context_ids", prompt)
    table = table.set_column(table.schema.get_field_index("correct"), "correct", pa.array(correct))
    pq.write_table(table, out, compression="zstd")


def logs(n: int, runs: int, seed: int) -> list[Path]:
    folder = CACHE / f"n{n}-seed{seed}"
    a, b = folder / "a.parquet", folder / "b.parquet"
    if not (a.exists() and b.exists()):
        write_logs(n, folder, seed)
    paths = [a, b]
    for i in range(2, runs):
        path = folder / f"{chr(ord('a') + i)}.parquet"
        if not path.exists():
            derive(b, path, seed * 1000 + i)
        paths.append(path)
    return paths


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one child process."""
    cpu = _children_cpu()
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, capture_output=True, check=True)
    return time.perf_counter() - started, _children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--snapshot", help="a commit to time instead of the working tree")
    args = parser.parse_args()
    paths = logs(args.size, args.runs, args.seed)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        cwd = compiled(REPO)
        if args.snapshot:
            cwd = work / "snapshot"
            cwd.mkdir()
            export(args.snapshot, cwd)
        commands = {
            2: [*map(str, paths[:2])],
            args.runs: [*map(str, paths)],
        }
        report = str(work / "report.html")
        argv = {n: [sys.executable, "-m", "reportgen", "compare", *logs_, "-o", report]
                for n, logs_ in commands.items()}  # fmt: skip
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"N = {args.size:,} questions, {args.runs} runs; load average before: {load}")
        for n in argv:  # warm-up, untimed: the OS caches the files
            timed(argv[n], cwd)
        walls: dict[int, list[float]] = {n: [] for n in argv}
        cpus: dict[int, list[float]] = {n: [] for n in argv}
        for repeat in range(args.repeats):
            for n in list(argv) if repeat % 2 == 0 else list(argv)[::-1]:
                wall, cpu = timed(argv[n], cwd)
                walls[n].append(wall)
                cpus[n].append(cpu)
        for n in argv:
            print(
                f"  {n} runs: median {statistics.median(walls[n]):6.2f} s wall, "
                f"{statistics.median(cpus[n]):6.2f} s CPU (wall of each: "
                + ", ".join(f"{t:.2f}" for t in walls[n])
                + ")"
            )
        two, many = 2, args.runs
        print(
            f"  {many} runs / 2 runs: "
            f"{statistics.median(walls[many]) / statistics.median(walls[two]):.2f} wall, "
            f"{statistics.median(cpus[many]) / statistics.median(cpus[two]):.2f} CPU"
        )
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"  load average after: {load}")


if __name__ == "__main__":
    main()
