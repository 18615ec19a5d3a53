"""``ragreport compare`` next to pytrec_eval and ranx on the same logs, in one run.

Usage: ``python bench/side_by_side.py [--sizes 10000,100000] [--repeats 3] [--large-repeats 3]
[--profile]``

For each N: generate (or reuse) the seeded log pair of make_logs.py (depth 100, the top 5 sent to
the generator), turn it into the dicts the two libraries take (qrels {qid: {doc: grade}} and one
run {qid: {doc: score}} per log, questions with labelled evidence only, score = 100 - rank, a
repeated passage id at its first place) and pickle them. Then time, as separate cold
processes, in alternating order (A B C, C B A, ...):

- ``python -m reportgen compare a.parquet b.parquet -o report.html --gain linear`` (the whole
  command: reading Parquet, every metric and statistic, charts, HTML and JSON);
- ``python bench/library_eval.py pytrec_eval DICTS K`` and ``... ranx DICTS K``: import, unpickle
  the prebuilt dicts, and compute recall, precision, hit (success), reciprocal rank and nDCG at K
  for both runs.

Each run's wall time, CPU time (user + system over all its threads, from RUSAGE_CHILDREN) and
peak memory (GNU ``/usr/bin/time -f %M``, where installed) are recorded: on a shared machine the
CPU time is the steadier measure of the work done. ``--also REV`` adds ``compare@REV``, the same
command run from ``git archive REV`` (as ``bench/run_bench.py --snapshot`` does), timed in the
same alternating order, to measure a change against the commit before it.
One untimed warm-up run of each comes first (the OS caches the files); it also times a second
evaluation inside the library's process, which shows what numba's compilation costs ranx in
each new process. Prints the medians, compare's ratio to each library (whole
process, and against the library's evaluation alone) and whether the three agree on the means.
``--profile`` adds a cProfile of compare at the largest N, its time grouped by stage.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from reportgen.analysis.registry import CHARTED, base_name

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from make_logs import CONTEXT, write_logs  # noqa: E402
from run_bench import GNU_TIME, compiled, export  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "ragreport-bench-logs"
TOOLS = ("compare", "pytrec_eval", "ranx")
LARGE = 100_000  # sizes from which --large-repeats applies
AGREEMENT = 1e-9  # the means of the three tools must agree to this (mrr aside, see library_eval)
# Stages of compare, each the cumulative time of the functions named (file suffix, function),
# chosen so that none is inside another.
STAGES = {
    "open logs (footer, sha256)": [("reportgen/inputs/load.py", "open_log")],
    "DuckDB: read + per-question SQL": [
        ("reportgen/inputs/database.py", "__init__"),
        ("reportgen/analysis/metrics.py", "compute_tables"),
    ],
    "DuckDB: slices, texts, audit, answer stage, exemplars": [
        ("reportgen/comparison/compare.py", "_slice_values"),
        ("reportgen/analysis/audit.py", "audit"),
        ("reportgen/inputs/database.py", "frame"),
    ],
    "diagnosis (bootstraps of stages, cost)": [("reportgen/diagnosis/diagnose.py", "diagnose")],
    "bootstrap + tests per metric": [("reportgen/analysis/stats.py", "compare_metric")],
    "slices": [("reportgen/analysis/slices.py", "slice_results")],
    "JSON document and per-question records": [
        ("reportgen/reporters/json_report.py", "build"),
        ("reportgen/reporters/json_report.py", "per_question"),
        ("reportgen/reporters/json_report.py", "to_csv"),
        ("reportgen/reporters/json_report.py", "dumps"),
    ],
    "page context and charts": [("reportgen/reporters/html/context.py", "build_context")],
    "HTML template": [("reportgen/reporters/html/render.py", "render")],
    "write files": [("reportgen/output.py", "write_all")],
}


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def logs(n: int, seed: int) -> tuple[Path, Path]:
    folder = CACHE / f"n{n}-seed{seed}"
    paths = folder / "a.parquet", folder / "b.parquet"
    if not all(p.exists() for p in paths):
        write_logs(n, folder, seed)
    return paths


def dicts(paths: tuple[Path, Path], out: Path) -> int:
    """Pickle the libraries' inputs built from the logs; the number of judged questions."""
    columns = ["question_id", "retrieved_ids", "relevant_ids", "relevant_grades"]
    runs = []
    qrels: dict[str, dict[str, int]] = {}
    for path in paths:
        table = pq.read_table(path, columns=columns).to_pydict()
        run = {}
        for qid, retrieved, relevant, grades in zip(*table.values(), strict=True):
            if relevant:
                qrels[qid] = dict(zip(relevant, grades, strict=True))
                ranking: dict[str, float] = {}
                for rank, doc in enumerate(retrieved):  # a repeated id keeps its first place
                    ranking.setdefault(doc, float(100 - rank))
                run[qid] = ranking
        runs.append(run)
    with out.open("wb") as handle:
        pickle.dump({"qrels": qrels, "runs": runs}, handle, protocol=pickle.HIGHEST_PROTOCOL)
    return len(qrels)


def command(
    tool: str, paths: tuple[Path, Path], pickled: Path, out: Path, again: bool = False
) -> list[str]:
    if tool.startswith("compare"):
        report = str(out / f"{tool}.html")
        return [sys.executable, "-m", "reportgen", "compare", *map(str, paths), "-o", report,
                "--json", str(out / f"{tool}.json"), "--gain", "linear"]  # fmt: skip
    argv = [sys.executable, str(HERE / "library_eval.py"), tool, str(pickled), str(CONTEXT)]
    return argv + ["again"] * again


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], cwd: Path = REPO) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (user + system, every thread), peak RSS in MiB (NaN without
    GNU time) and stdout of one child; ``cwd`` is where ``-m reportgen`` is imported from."""
    cpu = _children_cpu()
    with tempfile.NamedTemporaryFile("r", suffix=".maxrss") as rss:
        wrapped = [str(GNU_TIME), "-f", "%M", "-o", rss.name, *argv] if GNU_TIME.exists() else argv
        started = time.perf_counter()
        done = subprocess.run(wrapped, cwd=cwd, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - started
        peak = int(rss.read().split()[-1]) / 1024 if GNU_TIME.exists() else float("nan")
    return wall, _children_cpu() - cpu, peak, done.stdout


def compare_means(out: Path) -> list[dict[str, float]]:
    """Each run's means of the five metrics, from compare's JSON."""
    document = json.loads((out / "compare.json").read_text())
    means: list[dict[str, float]] = [{}, {}]
    for name, metric in document["comparisons"][0]["metrics"].items():
        base = base_name(name)
        if base in CHARTED:
            means[0][base], means[1][base] = metric["a"], metric["b"]
    return means


def bench_size(n: int, args: argparse.Namespace, work: Path, sources: dict[str, Path]) -> None:
    """Time every tool at N; ``sources``: compare's label -> the folder it is imported from."""
    paths = logs(n, args.seed)
    libraries = [t for t in TOOLS[1:] if t in args.tools.split(",")]
    pickled = work / f"dicts-{n}.pickle"
    judged = f"{dicts(paths, pickled):,} judged" if libraries else "no library"
    out = work / f"out-{n}"
    out.mkdir()
    print(f"\nN = {n:,} ({judged}), load average before: {load_average()}", flush=True)
    tools = [*sources, *libraries]

    def run(tool: str, again: bool = False) -> tuple[float, float, float, str]:
        return timed(command(tool, paths, pickled, out, again), sources.get(tool, REPO))

    outputs = {tool: run(tool, again=True)[3] for tool in tools}  # untimed warm-up
    walls: dict[str, list[float]] = {tool: [] for tool in tools}
    cpus: dict[str, list[float]] = {tool: [] for tool in tools}
    peaks: dict[str, list[float]] = {tool: [] for tool in tools}
    evals: dict[str, list[float]] = {tool: [] for tool in libraries}
    repeats = args.repeats if n < LARGE else args.large_repeats
    for repeat in range(repeats):
        for tool in tools if repeat % 2 == 0 else tools[::-1]:
            wall, cpu, peak, stdout = run(tool)
            walls[tool].append(wall)
            cpus[tool].append(cpu)
            peaks[tool].append(peak)
            if tool in libraries:
                evals[tool].append(json.loads(stdout)["eval_s"])
    medians = {tool: statistics.median(times) for tool, times in walls.items()}
    cpu_medians = {tool: statistics.median(times) for tool, times in cpus.items()}
    for tool in tools:
        line = (
            f"  {tool:12} median {medians[tool]:7.2f} s wall, {cpu_medians[tool]:7.2f} s CPU, "
            f"peak {max(peaks[tool]):,.0f} MiB"
        )
        print(line + "  (wall of each run: " + ", ".join(f"{t:.2f}" for t in walls[tool]) + ")")
    for tool in [t for t in tools if t != "compare"]:
        print(
            f"  compare / {tool}: {medians['compare'] / medians[tool]:.2f} wall, "
            f"{cpu_medians['compare'] / cpu_medians[tool]:.2f} CPU (whole processes)"
            + (
                f"; {_against_evaluation(medians['compare'], evals[tool], outputs[tool])}"
                if tool in libraries
                else ""
            )  # fmt: skip
        )
    for tool in sources:
        files = [out / f"{tool}{suffix}" for suffix in (".html", ".json", ".per-question.parquet")]
        sizes = ", ".join(f"{f.name} {f.stat().st_size / 1e6:,.2f} MB" for f in files if f.exists())
        print(f"  {tool} wrote {sizes}")
    print(f"  load average after: {load_average()}")
    means = {"compare": compare_means(out)}
    means |= {tool: json.loads(outputs[tool])["means"] for tool in libraries}
    for tool in libraries:
        worst = max(
            abs(means[tool][run][m] - means["compare"][run][m])
            for run in (0, 1)
            for m in means["compare"][run]
            if not (tool == "pytrec_eval" and m == "mrr")
        )
        agree = "agree" if worst <= AGREEMENT else "DIFFER"
        print(f"  means of compare and {tool} {agree} (largest difference {worst:.1e})")


def _against_evaluation(compare: float, evaluations: list[float], output: str) -> str:
    evaluation = statistics.median(evaluations)
    again = json.loads(output)["again_s"]
    return (
        f"{compare / evaluation:.2f} against its evaluation alone ({evaluation:.2f} s; a second "
        f"evaluation in the same process: {again:.2f} s)"
    )


def profile(paths: tuple[Path, Path], work: Path) -> None:
    """cProfile of one compare, its time split into STAGES."""
    stats_path = work / "compare.prof"
    # the command ends its process with os._exit, before `python -m cProfile` would write the
    # profile: run the click command itself and write the profile here
    launcher = (
        "import cProfile, sys; from reportgen.cli import cli; p = cProfile.Profile(); "
        "p.runcall(cli.main, sys.argv[2:], prog_name='ragreport', standalone_mode=False); "
        "p.dump_stats(sys.argv[1])"
    )
    argv = [sys.executable, "-c", launcher, str(stats_path), "compare", *map(str, paths),
            "-o", str(work / "profiled.html"), "--gain", "linear"]  # fmt: skip
    wall, _, _, _ = timed(argv)
    stats = pstats.Stats(str(stats_path))
    entries = stats.stats  # type: ignore[attr-defined]
    print(f"\nProfile of compare at {paths[0].parent.name} (wall {wall:.2f} s under cProfile)")
    total = 0.0
    for stage, functions in STAGES.items():
        seconds = sum(
            cumulative
            for (file, _, name), (_, _, _, cumulative, _) in entries.items()
            if any(file.endswith(suffix) and name == f for suffix, f in functions)
        )
        total += seconds
        print(f"  {stage:55} {seconds:6.2f} s")
    print(f"  {'start-up, imports and the rest':55} {wall - total:6.2f} s")
    print("  top functions by own time:")
    ranked = sorted(entries.items(), key=lambda item: -item[1][2])[:12]
    for (file, line, name), (_, _, own, cumulative, _) in ranked:
        where = f"{Path(file).name}:{line}" if line else file
        print(f"    {own:6.2f} s own {cumulative:6.2f} s cum  {name}  {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--large-repeats", type=int, default=3, help="repeats from 100k on")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tools", default=",".join(TOOLS), help="compare first, then libraries")
    parser.add_argument("--profile", action="store_true", help="cProfile compare at the largest N")
    parser.add_argument("--also", metavar="REV", help="also time compare as committed in REV")
    args = parser.parse_args()
    print(f"nproc {os.cpu_count()}, Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        sources = {"compare": compiled(REPO)}
        if args.also:
            sources[f"compare@{args.also}"] = work / "also"
            sources[f"compare@{args.also}"].mkdir()
            export(args.also, sources[f"compare@{args.also}"])
        sizes = [int(s) for s in args.sizes.split(",")]
        if args.profile:  # first: it needs no other tool
            profile(logs(sizes[-1], args.seed), work)
        for n in sizes:
            bench_size(n, args, work, sources)


if __name__ == "__main__":
    main()
