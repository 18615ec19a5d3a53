"""README's "Use in CI": the gate file, the GitHub Actions commands and the shell script run as
written, on the sample logs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from reportgen.analysis.gates import parse_rule, read_gate_file

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
SAMPLE_A = ROOT / "sample_runs" / "fare_rules_a_baseline.parquet"
SAMPLE_B = ROOT / "sample_runs" / "fare_rules_b_reranker.parquet"
CI = README.split("## Use in CI", 1)[1].split("\n## ", 1)[0]


def block(language: str, after: str) -> str:
    found = re.search(rf"{re.escape(after)}.*?```{language}\n(.*?)```", CI, re.S)
    assert found, f"README lost its {language} block after {after!r}"
    return found.group(1)


def shell(script: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(
        ["sh", "-c", script, "sh", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def gate_file(tmp_path: Path) -> Path:
    path = tmp_path / "release-gate.toml"
    path.write_text(block("toml", "A gate file"))
    return path


def test_gate_file_example_reads(tmp_path):
    rules = [parse_rule(r) for r in read_gate_file(gate_file(tmp_path))]
    assert [r.kind for r in rules] == ["difference", "difference", "difference", "slice"]


def test_github_actions_compare_step_fails_the_job_after_writing_everything(tmp_path):
    yaml = block("yaml", "### GitHub Actions")
    step = yaml.split("run: |\n", 1)[1].split("      - name: Job summary")[0]
    script = textwrap.dedent(step)
    script = script.replace("runs/baseline.parquet", str(SAMPLE_A))
    script = script.replace("runs/candidate.parquet", str(SAMPLE_B))
    gate_file(tmp_path)
    done = shell(script, tmp_path)
    assert done.returncode == 1, done.stderr  # the sample's latency rises by ~630 ms
    assert "fail  B  latency_ms <= 150" in done.stdout
    written = sorted(p.name for p in (tmp_path / "ragreport").iterdir())
    assert written == ["gate.xml", "report.html", "report.json", "summary.md"]
    assert "path: ragreport/" in yaml


def _summary_step(yaml: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    step = yaml.split("      - name: Job summary", 1)[1].split("      - name:", 1)[0]
    run = step.split("run:", 1)[1]  # a block (|) or one line
    script = textwrap.dedent(run.split("\n", 1)[1]) if run.startswith(" |") else run.strip()
    summary = cwd / "step_summary.md"
    summary.write_text("")
    done = shell(f'GITHUB_STEP_SUMMARY="{summary}"\n{script}', cwd)
    return done, summary.read_text()


def test_github_actions_summary_is_this_run_s_or_none(tmp_path):
    """A run with bad input (exit 2) writes nothing: the summary step failed on a missing file
    ("cat: ... No such file"), and on a runner that keeps its workspace it showed the summary
    of an earlier run as this one's."""
    yaml = block("yaml", "### GitHub Actions")
    step = textwrap.dedent(yaml.split("run: |\n", 1)[1].split("      - name: Job summary")[0])
    gate_file(tmp_path)
    good = step.replace("runs/baseline.parquet", str(SAMPLE_A))
    good = good.replace("runs/candidate.parquet", str(SAMPLE_B))
    assert shell(good, tmp_path).returncode == 1
    done, summary = _summary_step(yaml, tmp_path)
    assert done.returncode == 0 and "### Gate: FAIL" in summary
    bad = good.replace(str(SAMPLE_B), "missing.pq")
    assert shell(bad, tmp_path).returncode == 2
    done, summary = _summary_step(yaml, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "### Gate" not in summary and "wrote no summary" in summary


def test_shell_script_passes_on_the_sample_and_prints_the_summary(tmp_path):
    done = shell(block("sh", "### A plain shell script"), tmp_path, str(SAMPLE_A), str(SAMPLE_B))
    assert done.returncode == 0, done.stderr
    assert "### Gate: PASS" in done.stdout
    bad = shell(block("sh", "### A plain shell script"), tmp_path, str(SAMPLE_A), "missing.pq")
    assert bad.returncode == 2 and "missing.pq" in bad.stderr
    assert "### Gate" not in bad.stdout  # not the summary the passing run left


def test_the_borderline_example_reads_as_the_readme_quotes_it(tmp_path):
    """README quotes 5 of 10 questions fixed, none broken, where the interval and McNemar's test
    disagree: the verdict calls it borderline and a rule on B − A is inconclusive with the p."""
    import pandas as pd

    ids = [f"q{i}" for i in range(10)]
    pd.DataFrame({"question_id": ids, "correct": [False] * 10}).to_parquet(tmp_path / "a.parquet")
    b = pd.DataFrame({"question_id": ids, "correct": [True] * 5 + [False] * 5})
    b.to_parquet(tmp_path / "b.parquet")
    done = subprocess.run(
        [sys.executable, "-m", "reportgen", "compare", "a.parquet", "b.parquet", "-o", "r.html"]
        + ["--require", "correct > 0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stderr
    assert "[+0.084, +0.900]" in done.stdout and "evidence is borderline" in done.stdout
    assert "inconclusive" in done.stdout and "p = 0.0625" in done.stdout
    quoted = " ".join(README.split())
    assert "5 of 10 questions fixed and none broken give the interval [+0.084, +0.900]" in quoted
    assert "McNemar's p 0.062)" in quoted
    gate = "the interval is [+0.084, +0.900], McNemar's p 0.0625), the rule is inconclusive"
    assert gate in quoted


def test_the_validate_example_prints_what_readme_shows(tmp_path):
    """The two lines README's "Checking a log" shows, from the log they describe."""
    import pandas as pd

    rows = [
        {
            "question_id": f"q{i}",
            "retrieved_ids": ["p1", "p2", "p3"],
            "relevant_ids": ["p1", None] if i < 8 else ["p1"],
            "context_ids": ["p1", "p2"],
            "correct": bool(i % 2),
            "latency_ms": float("inf") if i == 12 else 100.0 + i,
        }
        for i in range(20)
    ]
    pd.DataFrame(rows).to_parquet(tmp_path / "run_b.parquet")
    done = subprocess.run(
        [sys.executable, "-m", "reportgen", "validate", "run_b.parquet"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    shown = README.split("$ ragreport validate run_b.parquet\n", 1)[1].split("```", 1)[0]
    assert (done.stdout + done.stderr).splitlines() == shown.splitlines()
