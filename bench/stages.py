"""The wall and CPU time of each stage of ``ragreport compare``, this checkout beside another
commit.

Usage: ``python bench/stages.py N [--repeats 5] [--also REV] [--seed 0]``

The stages are the ones the progress line names (``reportgen/progress.py``: reading the logs,
per-question metrics, diagnosis, intervals, intervals by slice, charts and the page, writing),
timed inside each run from the moment the command starts: a separate process per run, its
``progress._current`` replaced by a recorder, so the timing costs nothing and needs no terminal.
"imports" is from the process's start to the first stage, and ``writing`` lasts until the
command returns. With ``--also REV`` the same logs run under ``git archive REV`` too, the two
alternating (this, REV, REV, this, ...), and the medians are printed side by side: a stage's
difference between two commits shows here when the whole run's spread, seconds on a shared
machine, hides it. Logs come from make_logs.py (the cache of side_by_side.py).

A second table gives the CPU seconds of each stage, over every thread of the process (DuckDB's
and numpy's included), then those of the child that draws the static SVGs
(``reporters/html/svg_process.py``, which runs beside the stages), and their sum divided by the
machine's cores: the least wall time the run could take were its work spread perfectly, which
tells a stage that waits from a run that has no core to spare.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORES = os.cpu_count() or 1
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from run_bench import compiled, export  # noqa: E402
from side_by_side import logs  # noqa: E402

# Run in the child: record each stage's start, then the command's return (wall and CPU seconds
# since the driver began), and the CPU seconds of the processes it waited for, as JSON in the
# file named by its first argument.
DRIVER = """
import json, resource, sys, time
began, cpu = time.perf_counter(), time.process_time()
record, sys.argv[1:] = sys.argv[1], sys.argv[2:]
import reportgen.progress as progress
marks = []
class Recorder:
    def stage(self, name):
        marks.append((name, time.perf_counter() - began, time.process_time() - cpu))
progress._current = Recorder()
from reportgen.cli import main
try:
    main(sys.argv[1:])
except SystemExit as stop:  # click ends every command with one; a failed command fails here
    if stop.code:
        raise
marks.append(("return", time.perf_counter() - began, time.process_time() - cpu))
child = resource.getrusage(resource.RUSAGE_CHILDREN)  # the SVG child, waited for by now
open(record, "w").write(json.dumps({"marks": marks, "child": child.ru_utime + child.ru_stime}))
"""


def durations(marks: list[tuple[str, float, float]], clock: int) -> dict[str, float]:
    """Seconds in each stage (the "B against A: " prefix of a two-run comparison dropped), the
    last one up to the command's return, and the total, on the mark's ``clock`` (1 wall, 2 CPU)."""
    names = ["imports"] + [mark[0].split(": ")[-1] for mark in marks[:-1]]
    times = [0.0] + [mark[clock] for mark in marks]
    spans = zip(names, times[:-1], times[1:], strict=True)
    return {**{name: end - start for name, start, end in spans}, "total": times[-1]}


def run(source: Path, paths: tuple[Path, Path], out: Path) -> dict[str, dict[str, float]]:
    """One run's wall and CPU seconds by stage; the CPU ones end with the SVG child's and the
    least wall time of the whole CPU spread over the machine's cores."""
    record = out / "stages.json"
    argv = [sys.executable, "-c", DRIVER, str(record), "compare", *map(str, paths)]
    done = subprocess.run(
        [*argv, "-o", str(out / "r.html"), "--quiet"], cwd=source, stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(source)}, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"compare failed in {source} (exit {done.returncode})")
    recorded = json.loads(record.read_text())
    cpu = durations(recorded["marks"], 2)
    cpu["svg child"] = recorded["child"]
    cpu[f"sum / {CORES} cores"] = (cpu["total"] + cpu["svg child"]) / CORES
    return {"wall": durations(recorded["marks"], 1), "CPU": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("n", type=int)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--also", help="a commit to time beside this checkout")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    paths = logs(args.n, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        sources = {"this checkout": compiled(REPO)}
        if args.also:
            sources[args.also] = Path(tmp) / "snapshot"
            sources[args.also].mkdir()
            export(args.also, sources[args.also])
        timings: dict[str, list[dict[str, dict[str, float]]]] = {name: [] for name in sources}
        for repeat in range(args.repeats):
            order = list(sources) if repeat % 2 == 0 else list(sources)[::-1]
            for name in order:
                timings[name].append(run(sources[name], paths, Path(tmp)))
    for clock in ("wall", "CPU"):
        print(f"N = {args.n:,}: median {clock} seconds of {args.repeats} runs each, alternating")
        print(f"{'stage':28s}" + "".join(f"{name:>16s}" for name in sources))
        for stage in timings["this checkout"][0][clock]:
            medians = [statistics.median(t[clock][stage] for t in timings[n]) for n in sources]
            print(f"{stage:28s}" + "".join(f"{m:16.2f}" for m in medians))


if __name__ == "__main__":
    main()
