"""Reading TREC runs: the reader of a past commit beside this tree's, and the same data as Parquet.

Usage: ``python bench/trec_bench.py --before REV [--after REV] [--questions 10000] [--repeats 3]``

From the seeded log pair of make_logs.py (depth 100: 10,000 questions make a 1,000,000-line
run), write each run as a TREC run file (``qid Q0 docno rank score tag``, a passage repeated in
a ranking kept at its first place) and one qrels file: the labelled passages with their grades,
and run A's other passages of its top POOL_DEPTH judged not relevant (grade 0), as a pooled
judgement would. The same data is then converted to canonical Parquet logs with the after
commit's ``ragreport convert``. Three variants are timed as separate cold processes, in
alternating order (1 2 3, 3 2 1, ...), after one untimed warm-up each:

- ``read``: ``open_log`` of run A with its qrels (the reader alone), for the TREC variants;
- ``compare``: ``python -m reportgen compare A B -o report.html --k 10`` end to end.

Each variant runs the committed files of its commit (``git archive``, as run_bench.py
``--snapshot``), so edits to the working tree during the run change nothing: ``trec`` with the
before and the after commit (default HEAD), ``parquet`` with the after commit. Prints the
medians of the wall time (with min and max) and of the CPU time (user + system over all
threads, steadier than the wall time on a shared machine).
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

import duckdb

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from make_logs import DEPTH  # noqa: E402
from run_bench import DEFAULT_CACHE, export, git, logs_for  # noqa: E402

POOL_DEPTH = 10  # run A's top passages judged (grade 0 unless labelled)
K = 10
READ = (
    "import sys; from pathlib import Path; from reportgen.inputs.load import open_log; "
    "from reportgen.inputs.readers import ReadOptions; "
    "open_log(Path(sys.argv[1]), 'A', ReadOptions(format='trec', qrels=Path(sys.argv[2])))"
)
RANKED = """
    SELECT question_id, doc, pos, relevant_ids
    FROM (
        SELECT question_id, relevant_ids, unnest(retrieved_ids) AS doc,
               generate_subscripts(retrieved_ids, 1) AS pos
        FROM read_parquet($path)
    )
    QUALIFY row_number() OVER (PARTITION BY question_id, doc ORDER BY pos) = 1
"""


def write_trec(con: duckdb.DuckDBPyConnection, log: Path, out: Path, tag: str) -> None:
    ranked = RANKED.replace("$path", f"'{log}'")
    con.execute(
        f"COPY (SELECT question_id, 'Q0', doc, pos, {DEPTH + 1} - pos, '{tag}' "
        f"FROM ({ranked}) ORDER BY question_id, pos) "
        f"TO '{out}' (FORMAT csv, DELIMITER ' ', HEADER false, QUOTE '')"
    )


def write_qrels(con: duckdb.DuckDBPyConnection, log: Path, out: Path) -> None:
    ranked = RANKED.replace("$path", f"'{log}'")
    con.execute(
        f"""COPY (
            SELECT question_id, 0, doc, grade FROM (
                SELECT question_id, unnest(relevant_ids) AS doc, unnest(relevant_grades) AS grade
                FROM read_parquet('{log}'))
            UNION ALL
            SELECT question_id, 0, doc, 0 FROM ({ranked})
            WHERE pos <= {POOL_DEPTH} AND NOT coalesce(list_contains(relevant_ids, doc), false)
            ORDER BY 1, 3
        ) TO '{out}' (FORMAT csv, DELIMITER ' ', HEADER false, QUOTE '')"""
    )


def inputs(n: int, seed: int, work: Path, source: Path) -> dict[str, Path]:
    a, b, _ = logs_for(n, seed, DEFAULT_CACHE)
    files = {name: work / name for name in ("a.trec", "b.trec", "qrels.txt")}
    con = duckdb.connect()
    write_trec(con, a, files["a.trec"], "a")
    write_trec(con, b, files["b.trec"], "b")
    write_qrels(con, a, files["qrels.txt"])
    con.close()
    for run in ("a", "b"):
        files[f"{run}.parquet"] = work / f"{run}.parquet"
        subprocess.run(
            [sys.executable, "-m", "reportgen", "convert", str(files[f"{run}.trec"]),
             "--qrels", str(files["qrels.txt"]), "-o", str(files[f"{run}.parquet"])],
            cwd=source, check=True, capture_output=True,
        )  # fmt: skip
    return files


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], source: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, all threads) of one run."""
    began, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(argv, cwd=source, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr[-500:]}")
    return time.perf_counter() - began, _children_cpu() - cpu


def steps(kind: str, files: dict[str, Path], out: Path) -> dict[str, list[str]]:
    """The timed commands of one variant: step name -> argv."""
    logs = [str(files[f"a.{kind}"]), str(files[f"b.{kind}"])]
    qrels = ["--qrels", str(files["qrels.txt"])] if kind == "trec" else []
    compare = [sys.executable, "-m", "reportgen", "compare", *logs, "-o", str(out / "r.html")]
    found = {"compare": [*compare, "--k", str(K), *qrels]}
    if kind == "trec":
        found["read"] = [sys.executable, "-c", READ, logs[0], str(files["qrels.txt"])]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV", required=True, help="the commit to compare")
    parser.add_argument("--after", metavar="REV", default="HEAD", help="[default: HEAD]")
    parser.add_argument("--questions", type=int, default=10_000, help="per run [default: 10000]")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragreport-trec-bench-") as tmp:
        work = Path(tmp)
        before, after = work / "before", work / "after"
        for rev, folder in ((args.before, before), (args.after, after)):
            folder.mkdir()
            export(rev, folder)
        files = inputs(args.questions, args.seed, work, after)
        lines = sum(1 for _ in files["a.trec"].open())
        print(
            f"{lines:,} lines in a.trec ({files['a.trec'].stat().st_size / 1e6:.0f} MB), "
            f"{sum(1 for _ in files['qrels.txt'].open()):,} qrels lines; before: {args.before} "
            f"({git('rev-parse', '--short', args.before)}), after: {args.after} "
            f"({git('rev-parse', '--short', args.after)}); load average {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        variants = {
            f"trec, {args.before}": ("trec", before),
            f"trec, {args.after}": ("trec", after),
            f"parquet, {args.after}": ("parquet", after),
        }
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        order = list(variants)
        for repeat in range(args.repeats + 1):  # the first round is a warm-up
            for name in order if repeat % 2 else order[::-1]:
                kind, source = variants[name]
                for step, argv in steps(kind, files, work).items():
                    wall_cpu = timed(argv, source)
                    if repeat:
                        times.setdefault((name, step), []).append(wall_cpu)
        print(f"{'variant':<24} {'step':<8} {'wall s':>7} {'min':>6} {'max':>6} {'CPU s':>6}")
        for (name, step), values in sorted(times.items(), key=lambda kv: kv[0][1]):
            wall = [w for w, _ in values]
            print(
                f"{name:<24} {step:<8} {statistics.median(wall):>7.2f} {min(wall):>6.2f} "
                f"{max(wall):>6.2f} {statistics.median(c for _, c in values):>6.2f}"
            )
        print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
