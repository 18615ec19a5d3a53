"""Time ``ragreport compare`` on generated log pairs of growing size.

Usage: ``python bench/run_bench.py [--sizes 10000,100000,1000000] [--repeats 3] [--seed 0]``

For each N: generate (or reuse from the cache folder) a seeded log pair with make_logs.py, run
``python -m reportgen compare a.parquet b.parquet -o report.html`` as a child process --repeats
times (once for N >= 1,000,000 unless --large-repeats says otherwise), and print one table row:
input sizes, median / min / max wall time, peak memory of the child and output sizes.

Peak memory: each run is wrapped in GNU ``/usr/bin/time -f %M -o FILE`` (max RSS of the child
in KiB, written to its own file so it never mixes with the command's stderr). Where
/usr/bin/time is missing, a tiny Python launcher runs the module in-process with runpy and
writes its own ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` to the same kind of file.
RUSAGE_CHILDREN of this process is not used: it is a high-water mark over all children so far,
so it cannot tell one run's peak from an earlier, larger one.

The package under test is the working tree by default (the child runs with the repository root
as its working directory, so ``-m reportgen`` imports it from there). ``--snapshot REV`` tests
a commit instead: ``git archive REV`` is unpacked into a temporary folder (a read-only git
command), so edits made in the working tree while the benchmark runs cannot change or break it.

Report outputs (and any snapshot) go to temporary folders removed at the end; a run that exceeds
--timeout is killed with its whole process group and reported as such.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from make_logs import write_logs  # noqa: E402

GNU_TIME = Path("/usr/bin/time")
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "ragreport-bench-logs"
TARGET = (100_000, 10.0)  # at 100k paired questions the command must stay under 10 s
LAUNCHER = """\
import resource, runpy, sys
out = sys.argv.pop(1)
sys.argv[0] = "reportgen"
try:
    runpy.run_module("reportgen", run_name="__main__", alter_sys=True)
finally:
    with open(out, "w") as f:
        f.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
"""


@dataclass
class Result:
    n: int
    input_mb: float
    generate_s: float | None  # None: taken from the cache
    times: list[float] = field(default_factory=list)
    peak_mb: list[float] = field(default_factory=list)
    html_mb: float | None = None
    json_mb: float | None = None
    error: str | None = None
    verdict: str = ""


def mb(path: Path) -> float:
    return path.stat().st_size / 1e6


def logs_for(n: int, seed: int, cache: Path) -> tuple[Path, Path, float | None]:
    """The cached log pair of (n, seed), generated first when missing."""
    folder = cache / f"n{n}-seed{seed}"
    a, b = folder / "a.parquet", folder / "b.parquet"
    if a.is_file() and b.is_file():
        return a, b, None
    cache.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".n{n}-seed{seed}-", dir=cache))
    began = time.perf_counter()
    try:
        write_logs(n, partial, seed)
        shutil.rmtree(folder, ignore_errors=True)
        partial.rename(folder)  # complete or absent: an interrupted run leaves no half pair
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return a, b, time.perf_counter() - began


def command(a: Path, b: Path, html: Path, rss_file: Path) -> list[str]:
    compare = ["compare", str(a), str(b), "-o", str(html)]
    if GNU_TIME.is_file():
        gnu_time = [str(GNU_TIME), "-f", "%M", "-o", str(rss_file)]
        return [*gnu_time, sys.executable, "-m", "reportgen", *compare]
    return [sys.executable, "-c", LAUNCHER, str(rss_file), *compare]


def describe_source(source: Path, snapshot: str | None) -> str:
    head = git("rev-parse", "--short", snapshot or "HEAD")
    if snapshot:
        return f"snapshot of {snapshot} ({head}) in {source}"
    dirty = [line for line in git("status", "--porcelain").splitlines() if line[3:10] != "bench/"]
    return f"working tree at {head}" + (f" with {len(dirty)} changed paths" if dirty else "")


def git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "?"


def compiled(source: Path) -> Path:
    """``source`` with its package's bytecode written, as an install leaves it. Where Python
    writes none on import (PYTHONDONTWRITEBYTECODE), each run of a git archive, or of a
    checkout whose modules changed since they were last compiled, would compile them again:
    0.15 s of every start (twice that on a loaded machine), which no user's run pays."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(source / "reportgen")], check=True
    )
    return source


def export(rev: str, dest: Path) -> None:
    """Unpack ``git archive rev`` (the committed files of rev) into dest, compiled."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", rev], capture_output=True, check=True
    )
    tar_path = dest / "snapshot.tar"
    tar_path.write_bytes(archive.stdout)
    with tarfile.open(tar_path) as tar:
        tar.extractall(dest, filter="data")
    tar_path.unlink()
    compiled(dest)


def run_once(a: Path, b: Path, out: Path, timeout: float, source: Path) -> tuple[float, float, str]:
    """One timed run: wall seconds, peak RSS in MB, first line of stdout."""
    html, rss_file = out / "report.html", out / "maxrss.txt"
    cmd = command(a, b, html, rss_file)
    began = time.perf_counter()
    child = subprocess.Popen(
        cmd,
        cwd=source,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: a timeout kills the whole tree
    )
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        raise RuntimeError(f"killed after the {timeout:.0f} s timeout") from None
    wall = time.perf_counter() - began
    if child.returncode != 0:
        tail = " | ".join(stderr.strip().splitlines()[-3:])
        raise RuntimeError(f"exit code {child.returncode}: {tail}")
    peak_kib = float(rss_file.read_text().split()[-1])
    return wall, peak_kib / 1024, stdout.splitlines()[0] if stdout else ""


def bench(n: int, repeats: int, seed: int, cache: Path, timeout: float, source: Path) -> Result:
    a, b, generate_s = logs_for(n, seed, cache)
    result = Result(n=n, input_mb=mb(a) + mb(b), generate_s=generate_s)
    with tempfile.TemporaryDirectory(prefix="ragreport-bench-out-") as tmp:
        out = Path(tmp)
        for _ in range(repeats):
            try:
                wall, peak, verdict = run_once(a, b, out, timeout, source)
            except RuntimeError as exc:
                result.error = str(exc)
                break
            result.times.append(wall)
            result.peak_mb.append(peak)
            result.verdict = verdict
            if result.html_mb is None:
                result.html_mb = mb(out / "report.html")
                result.json_mb = mb(out / "report.json")
            for leftover in out.iterdir():
                leftover.unlink()
    return result


def fmt(value: float | None, spec: str = ".2f") -> str:
    return "-" if value is None else format(value, spec)


def print_table(results: list[Result]) -> None:
    head = (
        f"{'N':>9} {'in A+B MB':>9} {'gen s':>6} {'runs':>4} {'median s':>8} {'min s':>7} "
        f"{'max s':>7} {'peak RSS MB':>11} {'HTML MB':>8} {'JSON MB':>8}"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        times = r.times
        print(
            f"{r.n:>9,} {r.input_mb:>9.1f} {fmt(r.generate_s, '.1f'):>6} {len(times):>4} "
            f"{fmt(statistics.median(times) if times else None):>8} "
            f"{fmt(min(times) if times else None):>7} {fmt(max(times) if times else None):>7} "
            f"{fmt(max(r.peak_mb) if r.peak_mb else None, '.0f'):>11} "
            f"{fmt(r.html_mb):>8} {fmt(r.json_mb):>8}"
        )
    for r in results:
        if r.error:
            print(f"N={r.n:,}: FAILED after {len(r.times)} run(s): {r.error}")
    n_target, limit = TARGET
    for r in results:
        if r.n == n_target and r.times and not r.error:
            median = statistics.median(r.times)
            verdict = "PASS" if median < limit else "FAIL"
            print(f"target: N={n_target:,} under {limit:.0f} s: {verdict} (median {median:.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default="10000,100000,1000000",
        help="comma-separated question counts [default: 10000,100000,1000000]",
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs per size [default: 3]")
    parser.add_argument(
        "--large-repeats",
        type=int,
        default=1,
        help="runs per size for N >= 1,000,000 [default: 1]",
    )
    parser.add_argument("--seed", type=int, default=0, help="generator seed [default: 0]")
    parser.add_argument(
        "--cache",
        type=Path,
        default=DEFAULT_CACHE,
        help="folder of generated log pairs, keyed by N and seed",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=480,
        help="seconds before one run is killed [default: 480]",
    )
    parser.add_argument(
        "--snapshot",
        metavar="REV",
        help="benchmark the committed files of REV (e.g. HEAD) instead of the working tree",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragreport-bench-src-") as tmp:
        source = compiled(REPO)
        if args.snapshot:
            source = Path(tmp)
            export(args.snapshot, source)
        run_all(args, source)


def run_all(args: argparse.Namespace, source: Path) -> None:
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]

    print(
        f"ragreport compare benchmark, {datetime.datetime.now():%Y-%m-%d %H:%M}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"peak RSS via {'/usr/bin/time -f %M' if GNU_TIME.is_file() else 'runpy launcher'}"
    )
    print(f"package: {describe_source(source, args.snapshot)}")
    results = []
    for n in sizes:
        repeats = args.large_repeats if n >= 1_000_000 else args.repeats
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"N={n:,}: {repeats} run(s), load average before: {load}", flush=True)
        result = bench(n, repeats, args.seed, args.cache, args.timeout, source)
        if result.verdict:
            print(f"  {result.verdict}", flush=True)
        results.append(result)
    print()
    print_table(results)


if __name__ == "__main__":
    main()
