"""``compare`` of the per-question tables ``ragreport metrics`` writes, beside ``compare`` of
the logs they were scored from, in one run.

Usage: ``python bench/tables_bench.py [--sizes 100000,1000000] [--repeats 3]``

For each N: the seeded log pair of make_logs.py (shared with side_by_side.py's cache); each log
scored once by ``ragreport metrics`` (the map stage, timed: on a cluster it runs where the log
lives); then, as separate cold processes in alternating order, ``compare a.parquet b.parquet``
and ``compare a-metrics.parquet b-metrics.parquet``. Prints the sizes of the logs and the
tables, the medians of wall time, CPU time and peak memory of each command, and whether the two
reports agree on every metric's difference and interval.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from side_by_side import load_average, logs, timed  # noqa: E402


def metrics_table(log: Path, out: Path) -> tuple[float, float, float]:
    """Score one log into ``out``: wall, CPU and peak memory of the command."""
    argv = [sys.executable, "-m", "reportgen", "metrics", str(log), "-o", str(out)]
    wall, cpu, peak, _ = timed(argv)
    return wall, cpu, peak


def compared(inputs: tuple[Path, Path], out: Path) -> list[str]:
    return [sys.executable, "-m", "reportgen", "compare", *map(str, inputs), "-o",
            str(out.with_suffix(".html")), "--json", str(out)]  # fmt: skip


def intervals(report: Path) -> dict[str, tuple[float, float, float]]:
    """Each metric's difference and interval, from a report's JSON."""
    metrics = json.loads(report.read_text())["comparisons"][0]["metrics"]
    return {name: (m["diff"], m["ci_low"], m["ci_high"]) for name, m in metrics.items()}


def bench_size(n: int, repeats: int, work: Path) -> None:
    pair = logs(n, 0)
    tables = tuple(work / f"{p.stem}-metrics.parquet" for p in pair)
    scoring = [metrics_table(log, table) for log, table in zip(pair, tables, strict=True)]
    size = {name: sum(p.stat().st_size for p in paths) / 2**20
            for name, paths in (("logs", pair), ("tables", tables))}  # fmt: skip
    print(f"\nN = {n:,} (load average {load_average()}): logs {size['logs']:.1f} MiB, "
          f"tables {size['tables']:.1f} MiB")  # fmt: skip
    for log, (wall, cpu, peak) in zip(pair, scoring, strict=True):
        print(f"  ragreport metrics {log.name}: {wall:.2f} s wall, {cpu:.2f} s CPU, {peak:.0f} MiB")
    runs: dict[str, list[tuple[float, float, float]]] = {"logs": [], "tables": []}
    order = ["logs", "tables"]
    for i in range(repeats):
        for name in order if i % 2 == 0 else order[::-1]:
            inputs = pair if name == "logs" else tables
            wall, cpu, peak, _ = timed(compared(inputs, work / f"{name}.json"))
            runs[name].append((wall, cpu, peak))
    for name, times in runs.items():
        wall, cpu, peak = (statistics.median(t[i] for t in times) for i in range(3))
        print(f"  compare of the {name}: {wall:.2f} s wall, {cpu:.2f} s CPU, {peak:.0f} MiB "
              f"(medians of {repeats})")  # fmt: skip
    same = intervals(work / "logs.json") == intervals(work / "tables.json")
    print(f"  every metric's difference and interval the same: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000", help="comma-separated question counts")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for n in (int(s) for s in args.sizes.split(",")):
            bench_size(n, args.repeats, Path(folder))


if __name__ == "__main__":
    main()
