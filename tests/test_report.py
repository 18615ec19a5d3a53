"""The report as a whole: the sample's story, reproducibility, provenance, missing sections."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import two_run_view

from reportgen.cli import cli

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_A = ROOT / "sample_runs" / "fare_rules_a_baseline.parquet"
SAMPLE_B = ROOT / "sample_runs" / "fare_rules_b_reranker.parquet"


def run(*args: str, env: dict | None = None) -> str:
    result = CliRunner().invoke(cli, list(args), env=env)
    assert result.exit_code == 0, result.output + result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> tuple[str, dict]:
    out = tmp_path_factory.mktemp("sample") / "report.html"
    run("compare", str(SAMPLE_A), str(SAMPLE_B), "-o", str(out), "--n-boot", "2000")
    return out.read_text(), two_run_view(json.loads(out.with_suffix(".json").read_text()))


def test_sample_tells_its_story(sample):
    html, doc = sample
    assert doc["verdict"]["outcome"] == "B better"
    assert doc["headline"] == "correct"
    assert "<th>test p</th>" in html and "unadjusted" not in html  # one candidate: no family
    assert doc["metrics"]["correct"]["fixed"] > doc["metrics"]["correct"]["broken"] > 0
    rule_lookup = doc["slices"]["slice"]["rule_lookup"]["correct"]
    assert rule_lookup["regression"] and rule_lookup["diff"] < 0
    # 48 questions, Holm-adjusted p 0.22: a direction in the slice table, not a verdict finding
    assert not rule_lookup["finding"] and doc["verdict"]["regressions"] == []
    assert doc["slices"]["slice"]["group_travel"]["correct"]["small"]
    assert len(doc["audit"]["label_changes"]) == 3
    assert doc["fairness"]["context budget"]["flagged"]
    assert doc["dominant"]["a"]["failure_class"] == "ranking miss"
    assert doc["dominant"]["b"]["failure_class"] == "hallucination"
    assert doc["next_experiment"]["a"]["stage"] == "ranking"
    assert {"answerable_unlabelled", "repeated_passage", "duplicate_question"} <= set(
        doc["audit"]["smells"]
    )
    for text in (
        "worse here (direction)",
        "Golden-set audit",
        "Which link failed",
        "The next experiment",
        "Worked cases",
        "Can the judge be trusted?",
    ):
        assert text in html


def test_provenance_is_in_the_page_and_json(sample):
    html, doc = sample
    for key, path in ((0, SAMPLE_A), (1, SAMPLE_B)):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert doc["runs"][key]["sha256"] == digest and digest in html
        assert doc["runs"][key]["size_bytes"] == path.stat().st_size
        assert doc["runs"][key]["n_questions"] == 240
    for library, version in doc["tool"]["libraries"].items():
        assert f"{library} {version}" in html
    assert {"duckdb", "numpy", "scipy", "altair"} <= set(doc["tool"]["libraries"])
    assert "--n-boot 2000" in html


def _download(html: str, name: str) -> str:
    match = re.search(
        rf'download="{re.escape(name)}" href="data:application/gzip;base64,([^"]+)"', html
    )
    assert match, name
    return gzip.decompress(base64.b64decode(match.group(1))).decode()


def test_downloads_carry_the_numbers(sample):
    html, doc = sample
    summary = json.loads(_download(html, "report-summary.json.gz"))
    assert summary == {k: v for k, v in doc["report"].items() if k != "per_question"}
    table = pd.read_csv(__import__("io").StringIO(_download(html, "per-question.csv.gz")))
    assert len(table) == doc["n_paired"] == 240
    # any figure can be recomputed from the table: the headline means and fixed count
    assert table["correct_a"].mean() == pytest.approx(doc["metrics"]["correct"]["a"])
    assert table["ndcg@5_b"].mean() == pytest.approx(doc["metrics"]["ndcg@5"]["b"])
    fixed = ((table["correct_a"] == 0) & (table["correct_b"] == 1)).sum()
    assert fixed == doc["metrics"]["correct"]["fixed"]


def test_the_download_shows_formulas_as_text(tmp_path, write_log):
    """A question id or slice a spreadsheet would run as a formula (=, +, -, @) is prefixed
    with ' in the page's CSV download only; the JSON keeps the values as logged."""
    ids = ['=HYPERLINK("http://x","y")', "+1", "-2", "@SUM(A1)", "q4", "a=b"]
    rows = [
        {"question_id": q, "slice": "=cmd" if i % 2 else "plain", "correct": i % 2 == 0}
        for i, q in enumerate(ids)
    ]
    a = write_log(tmp_path / "a.parquet", rows)
    b = write_log(tmp_path / "b.parquet", [dict(r, correct=True) for r in rows])
    out = tmp_path / "report.html"
    run("compare", str(a), str(b), "-o", str(out), "--n-boot", "200")
    table = pd.read_csv(
        __import__("io").StringIO(_download(out.read_text(), "per-question.csv.gz"))
    )
    shown = {("'" + q if i < 4 else q, "'=cmd" if i % 2 else "plain") for i, q in enumerate(ids)}
    assert set(zip(table["question_id"], table["slice"], strict=True)) == shown
    doc = json.loads(out.with_suffix(".json").read_text())
    assert [r["question_id"] for r in doc["per_question"]] == sorted(ids)  # by question_id


def test_a_null_answer_shows_no_answer_line(tmp_path):
    """B's answer to q1 is null (a run that ended in an error): its worked case shows no
    answer, where it showed "nan"; so are a null question and reference answer."""
    ids = ["q1", "q2", "q3"]
    a = pd.DataFrame({"question_id": ids, "correct": True, "answer": ["x", "y", "z"]})
    b = a.assign(correct=[False, True, True], answer=[None, "y", "z"])
    b["question"] = [None, "q?", "q?"]
    b["reference_answer"] = [None, "r", "r"]
    a.to_parquet(tmp_path / "a.parquet")
    b.to_parquet(tmp_path / "b.parquet")
    out = tmp_path / "report.html"
    run("compare", str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), "-o", str(out))
    page = out.read_text()
    assert "Broken by B" in page and "<dd>nan</dd>" not in page and ">nan<" not in page


def render_sample(folder: Path, epoch: str, n_boot: str) -> tuple[bytes, bytes]:
    """The sample report's HTML and JSON bytes, rendered into ``folder`` at ``epoch``."""
    out = folder / "report.html"
    folder.mkdir()
    run(
        "compare",
        str(SAMPLE_A),
        str(SAMPLE_B),
        "-o",
        str(out),
        "--n-boot",
        n_boot,
        env={"SOURCE_DATE_EPOCH": epoch},
    )
    return out.read_bytes(), out.with_suffix(".json").read_bytes()


def test_same_inputs_give_identical_bytes(tmp_path):
    one = render_sample(tmp_path / "one", "1700000000", "500")
    two = render_sample(tmp_path / "two", "1700000000", "500")
    assert one == two
    assert b"generated 2023-11-14 22:13 UTC" in one[0]


def test_json_does_not_depend_on_the_clock(tmp_path):
    early = render_sample(tmp_path / "early", "1700000000", "200")
    late = render_sample(tmp_path / "late", "1800000000", "200")
    assert early[1] == late[1]
    assert early[0] != late[0]  # the page shows when it was made


def test_logs_with_only_the_basics_name_what_would_enable_the_rest(tmp_path):
    rows = [{"question_id": f"q{i}", "correct": i % 2 == 0} for i in range(20)]
    pd.DataFrame(rows).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame(rows).to_parquet(tmp_path / "b.parquet")
    out = tmp_path / "r.html"
    run("compare", str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), "-o", str(out))
    html = out.read_text()
    doc = two_run_view(json.loads(out.with_suffix(".json").read_text()))
    assert list(doc["metrics"]) == ["correct"]
    assert doc["verdict"]["outcome"] == "no evidence of a difference"
    for hint in (
        "log relevant_ids with context_ids",
        "log retrieved_ids and relevant_ids",
        "Faithfulness: log faithfulness",
        "log a slice column",
        "(log answer_relevance)",
        "(log latency_ms)",
        "(log human_correct",
    ):
        assert hint.lower() in html.lower(), hint
    # a citation score needs a prompt to look in besides cited_ids
    needs = {m["needs"] for m in doc["missing"]}
    assert needs >= {"answer_relevance", "latency_ms", "cited_ids and context_ids"}


def test_readme_shows_the_current_help():
    readme = (ROOT / "README.md").read_text()
    block = re.search(
        r"<!-- help:compare -->\n```text\n(.*?)```\n<!-- /help:compare -->", readme, re.S
    )
    assert block, "README lost its help block"
    result = CliRunner().invoke(cli, ["compare", "--help"], terminal_width=80)
    assert block.group(1) == result.output.replace("Usage: cli compare", "Usage: ragreport compare")


def test_json_carries_the_diagnosis(sample):
    _, doc = sample
    t = doc["transitions"]
    assert set(t) == set(t["working_as_designed"]) == set(doc["cells"]["a"])
    moved = sum(n for row in t.values() for n in row.values())
    assert moved == sum(doc["cells_supported"]["a"].values())
    assert doc["transition_moves"][0]["n"] == max(m["n"] for m in doc["transition_moves"])
    step = doc["next_experiment"]["a"]
    assert step["text"].startswith("Rerank") and "refuted if" in step["text"]
    assert {r["failure_class_a"] for r in doc["per_question"]} <= set(doc["failure_classes"]["a"])
