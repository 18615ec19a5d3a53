"""The wall time of each stage of ``ragreport compare``, this checkout beside another commit.

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
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from run_bench import compiled, export  # noqa: E402
from side_by_side import logs  # noqa: E402

# Run in the child: record each stage's start, then the command's return, as JSON in the file
# named by its first argument.
DRIVER = """
import json, sys, time
began = time.perf_counter()
record, sys.argv[1:] = sys.argv[1], sys.argv[2:]
import reportgen.progress as progress
marks = []
class Recorder:
    def stage(self, name):
        marks.append((name, time.perf_counter() - began))
progress._current = Recorder()
from reportgen.cli import main
try:
    main(sys.argv[1:])
except SystemExit as stop:  # click ends every command with one; a failed command fails here
    if stop.code:
        raise
marks.append(("return", time.perf_counter() - began))
open(record, "w").write(json.dumps(marks))
"""


def durations(marks: list[tuple[str, float]]) -> dict[str, float]:
    """Seconds in each stage (the "B against A: " prefix of a two-run comparison dropped), the
    last one up to the command's return, and the total."""
    names = ["imports"] + [name.split(": ")[-1] for name, _ in marks[:-1]]
    times = [0.0] + [t for _, t in marks]
    spans = zip(names, times[:-1], times[1:], strict=True)
    return {**{name: end - start for name, start, end in spans}, "total": times[-1]}


def run(source: Path, paths: tuple[Path, Path], out: Path) -> dict[str, float]:
    record = out / "stages.json"
    argv = [sys.executable, "-c", DRIVER, str(record), "compare", *map(str, paths)]
    done = subprocess.run(
        [*argv, "-o", str(out / "r.html"), "--quiet"], cwd=source, stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(source)}, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"compare failed in {source} (exit {done.returncode})")
    marks = json.loads(record.read_text())
    return durations(marks)


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
        timings: dict[str, list[dict[str, float]]] = {name: [] for name in sources}
        for repeat in range(args.repeats):
            order = list(sources) if repeat % 2 == 0 else list(sources)[::-1]
            for name in order:
                timings[name].append(run(sources[name], paths, Path(tmp)))
    stages = list(timings["this checkout"][0])
    print(f"N = {args.n:,}: median wall seconds of {args.repeats} runs each, alternating")
    print(f"{'stage':28s}" + "".join(f"{name:>16s}" for name in sources))
    for stage in stages:
        medians = [statistics.median(t[stage] for t in timings[name]) for name in sources]
        print(f"{stage:28s}" + "".join(f"{m:16.2f}" for m in medians))


if __name__ == "__main__":
    main()
