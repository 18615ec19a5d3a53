"""The Markdown and JUnit summaries, read back by real parsers: markdown-it-py with GFM tables,
junitparser."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import two_run_view
from junitparser import Failure, JUnitXml
from markdown_it import MarkdownIt

from reportgen.analysis import holdout
from reportgen.analysis.gates import RuleResult
from reportgen.cli import cli
from reportgen.comparison.study import WinnersCurse
from reportgen.reporters.markdown_report import MAX_CHARS, SECTION_CUT, fit

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_A = ROOT / "sample_runs" / "fare_rules_a_baseline.parquet"
SAMPLE_B = ROOT / "sample_runs" / "fare_rules_b_reranker.parquet"
RULES = ("correct >= -0.02", "latency_ms <= 150", "faithfulness within 0.01")
MINUS = "\u2212"  # the report's minus sign


def run(a: Path, b: Path, out: Path, *extra: str) -> tuple[int, str, str, Path, Path]:
    out.mkdir(exist_ok=True)
    md, xml = out / "summary.md", out / "gate.xml"
    args = ["compare", str(a), str(b), "-o", str(out / "report.html")]
    args += ["--markdown", str(md), "--junit", str(xml), *extra]
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.stdout, result.stderr, md, xml


def tables(markdown: str) -> list[list[list[str]]]:
    """Every GFM table as rows of cell texts (header first), as markdown-it-py parses it."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    out: list[list[list[str]]] = []
    for before, t in zip(tokens, tokens[1:], strict=False):
        if t.type == "table_open":
            out.append([])
        elif t.type == "tr_open":
            out[-1].append([])
        elif t.type == "inline" and before.type in ("th_open", "td_open"):
            parts = [c.content for c in t.children or [] if c.type in ("text", "code_inline")]
            out[-1][-1].append("".join(parts))
    return out


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample")
    extra = [arg for rule in RULES for arg in ("--require", rule)]
    code, _, err, md, xml = run(SAMPLE_A, SAMPLE_B, out, *extra)
    assert code == 1, err
    return md.read_text(), xml, two_run_view(json.loads((out / "report.json").read_text()))


def test_a_score_where_lower_is_better_says_so_in_the_markdown(tmp_path):
    """--lower-is-better latency_ms: the metric table's row names it as the page's does, so
    the summary's negative B - A reads as the gain it is."""
    rng = np.random.default_rng(0)
    ids = [f"q{i}" for i in range(40)]
    latency = rng.gamma(2, 100, 40)
    logs = []
    for name, scale in (("a", 1.0), ("b", 0.7)):
        logs.append(tmp_path / f"{name}.parquet")
        pd.DataFrame({"question_id": ids, "latency_ms": latency * scale}).to_parquet(logs[-1])
    code, _, err, md, _ = run(*logs, tmp_path / "out", "--lower-is-better", "latency_ms")
    assert code == 0, err
    (metrics,) = [t for t in tables(md.read_text()) if t[0][0] == "Metric"]
    assert [row[0] for row in metrics[1:]] == ["latency_ms (lower is better)"]
    assert metrics[1][3].startswith("\u2212")  # B - A below 0: B is faster
    page = (tmp_path / "out" / "report.html").read_text()
    assert "latency_ms (lower is better)" in page


def test_markdown_tables_render_with_the_numbers(sample):
    markdown, _, doc = sample
    gate, metrics, regressions, inputs = tables(markdown)
    assert gate[0] == ["Candidate", "Rule", "Result", "Estimate", "Interval", "Numbers"]
    assert [(row[1], row[2]) for row in gate[1:]] == [
        ("correct >= -0.02", "pass"),
        ("latency_ms <= 150", "fail"),
        ("faithfulness within 0.01", "inconclusive (counts as fail)"),
    ]
    names = [row[0] for row in metrics[1:]]
    # a cost's B - A above 0 is a loss: its row says lower is better, as the page's does
    assert names == [*doc["metrics"], *(f"{cost} (lower is better)" for cost in doc["cost"])]
    correct = metrics[1 + names.index("correct")]
    m = doc["metrics"]["correct"]
    assert correct[1:4] == [f"{m['a']:.3f}", f"{m['b']:.3f}", f"+{m['diff']:.3f}"]
    latency = metrics[1 + names.index("latency_ms (lower is better)")]  # 4 digits of A
    assert latency[1:3] == [f"{doc['cost']['latency_ms'][k]:.0f}" for k in ("a", "b")]
    flagged = [r for r in regressions[1:]]
    expected = [
        (value, metric)
        for value, per_metric in doc["slices"]["slice"].items()
        for metric, s in per_metric.items()
        if s["regression"]
    ]
    assert sorted((r[1], r[2]) for r in flagged) == sorted(expected)
    assert [row[2] for row in inputs[1:]] == [run["sha256"][:12] for run in doc["runs"]]


def test_markdown_states_verdict_changes_and_the_attachment(sample):
    markdown, _, doc = sample
    m = doc["metrics"]["correct"]
    assert f"**{doc['verdict']['outcome']}** on **correct**" in markdown
    reason = MarkdownIt("commonmark").renderInline(markdown.split("\n")[2])
    assert doc["verdict"]["reason"].replace("<", "&lt;") in reason  # whole, not cut
    assert "### Gate: FAIL" in markdown and "one-sided at the 97.5% level" in markdown
    assert f"Fixed {m['fixed']}, broken {m['broken']}" in markdown
    assert "The full report is the attached HTML, report.html." in markdown


def test_the_headline_changes_count_the_questions_it_scores(tmp_path):
    """Retrieval logs whose unanswerable questions have no labelled evidence: the headline's
    changes said "of 240 paired questions" where the metric scores 226 of them."""
    logs = []
    for path in (SAMPLE_A, SAMPLE_B):
        logs.append(tmp_path / path.name)
        kept = ["question_id", "slice", "retrieved_ids", "relevant_ids", "context_ids"]
        pq.write_table(pq.read_table(path).select(kept), logs[-1])
    code, _, err, md, _ = run(*logs, tmp_path / "out", "--n-boot", "200")
    assert code == 0, err
    markdown = md.read_text()
    doc = json.loads((tmp_path / "out" / "report.json").read_text())["comparisons"][0]
    c = doc["metrics"][doc["headline"]]
    assert c["n"] == 226 < doc["n_paired"] == 240
    assert (
        f"{c['wins']} better, {c['losses']} worse, {c['ties']} unchanged (of 226 questions "
        "scored in both runs)." in markdown
    )


def test_every_output_states_the_one_sided_level_alike(tmp_path):
    """At --confidence 0.9 each bound is one-sided at 95%: the page, the Markdown and the line
    the command prints write it the same way (the page wrote 95.0%)."""
    rule = "correct >= -0.02"
    code, out, err, md, _ = run(
        SAMPLE_A, SAMPLE_B, tmp_path / "out", "--require", rule, "--confidence", "0.9"
    )
    assert code == 0, err  # its lower bound is 0.04583 at 95% one-sided
    page = re.sub(r"\s+", " ", (tmp_path / "out" / "report.html").read_text())
    assert "Each bound is one-sided at the 95% level;" in page
    assert "one-sided at the 95% level (the 90% two-sided interval)" in md.read_text()
    assert "bounds at the one-sided 95% level)" in out
    detail = json.loads((tmp_path / "out" / "report.json").read_text())["gate"]["results"][0]
    assert "one-sided 95% lower bound" in detail["detail"]


def rows(n: int, slice_of, correct_b) -> list[dict]:
    return [
        {"question_id": f"q{i}", "slice": slice_of(i), "correct": i % 2 == 0, "b": correct_b(i)}
        for i in range(n)
    ]


def write(path: Path, records: list[dict], run: str) -> Path:
    frame = pd.DataFrame(records)
    if run == "b":
        frame["correct"] = frame["b"]
    frame.drop(columns="b").to_parquet(path)
    return path


def test_user_text_is_escaped(tmp_path):
    hostile = "a|b *em* _u_ `code` <script>x</script> [l](http://x)"
    # B fixes the "big" slice and breaks one question of the hostile slice: a regression there
    records = rows(60, lambda i: hostile if i < 10 else "big", lambda i: i >= 10 or i % 2 == 0)
    for r in records[:10]:
        r["b"] = r["correct"] and r["question_id"] != "q0"
    folder = tmp_path / "x|y*_<z>"
    folder.mkdir()
    a = write(folder / "a|*_<a>.parquet", records, "a")
    b = write(folder / "b`.parquet", records, "b")
    code, _, err, md, _ = run(a, b, tmp_path / "out", "--n-boot", "200")
    assert code == 0, err
    markdown = md.read_text()
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    assert "<script>" not in html and "<em>" not in html and "<a " not in html
    assert "<code>" not in html.split("sha256")[0]  # the only code spans are the sha256 digests
    *_, regressions, inputs = tables(markdown)
    # shown as written, a zero-width space keeping GitHub from linking the address
    shown = hostile.replace("http://", "http:\u200b//")
    assert regressions[1][:3] == ["slice", shown, "correct"]
    assert [row[1] for row in inputs[1:]] == ["a|*_<a>.parquet", "b`.parquet"]
    assert "ragreport: a|\\*" not in html


def test_a_label_never_begins_a_line_with_a_ci_workflow_command(tmp_path):
    """A study's stdout lines and its summary's best-candidate sentence begin with a label;
    "::error::x" there was a GitHub Actions error annotation in the job's log."""
    sample_c = ROOT / "sample_runs" / "fare_rules_c_prompt.parquet"
    labels = ["--label", "base", "--label", "::error::x", "--label", "c"]
    code, out, err, md, _ = run(
        SAMPLE_A, SAMPLE_B, tmp_path, str(sample_c), *labels, "--require", "correct >= -0.1"
    )
    assert code == 0, err
    markdown = md.read_text()
    lines = out.splitlines() + markdown.splitlines()
    assert not [line for line in lines if line.startswith("::")]
    assert any(line.startswith("\\x3a:error::x: B better") for line in out.splitlines()), out
    rendered = MarkdownIt("commonmark").enable("table").render(markdown)
    assert "<p>::error::x comes out best of the 2 candidates" in rendered


def test_no_printed_line_is_a_ci_workflow_command(tmp_path):
    """GitHub's runner reads a workflow command in a line whose first non-blank characters are
    "::" and in "##[" anywhere: a candidate's indented regression line ("  ::error::x
    regresses on slice = s0") raised an error annotation, and a label "v2 ##[error]boom" did on
    every line it was printed on."""
    # B breaks 30 of slice s0's 40 questions and fixes 100 of the other 160
    records = rows(
        200,
        lambda i: "s0" if i < 40 else "s1",
        lambda i: (i % 2 == 0 and i >= 30) if i < 40 else True,
    )
    a = write(tmp_path / "a.parquet", records, "a")
    b = write(tmp_path / "b.parquet", records, "b")
    labels = ["--label", "base", "--label", "::error::x", "--label", "v2 ##[error]boom"]
    rule = ("--require", "correct >= -1")
    code, out, err, _, _ = run(a, b, tmp_path / "out", str(b), *labels, *rule)
    assert code == 0, err
    assert "  \\x3a:error::x regresses on slice = s0" in out, out
    lines = out.splitlines()
    assert not [line for line in lines if line.lstrip().startswith("::") or "##[" in line]
    assert sum("v2 #\\x23[error]boom" in line for line in lines) >= 3  # verdict, gate lines


def test_markdown_stays_under_githubs_limit(tmp_path):
    """45 regressing slices with 300-character names and 150 rules: still under 65,536."""
    name = "s" * 300

    def slice_of(i: int) -> str:
        return f"{i // 2:04d}{name}" if i < 90 else "big"

    def correct_b(i: int) -> bool:
        return i >= 90  # B breaks the one correct question of each small slice

    records = rows(400, slice_of, correct_b)
    for r in records[90:]:
        r["correct"] = False  # and fixes every question of "big"
    a, b = write(tmp_path / "a.parquet", records, "a"), write(tmp_path / "b.parquet", records, "b")
    rules = [arg for i in range(150) for arg in ("--require", f"correct >= -0.{i:03d}")]
    code, _, err, md, xml = run(a, b, tmp_path / "out", "--n-boot", "100", *rules)
    assert code in (0, 1), err
    markdown = md.read_text()
    assert len(markdown) < MAX_CHARS
    gate, _, regressions, _ = tables(markdown)
    assert len(gate) - 1 == 60 and "90 more rule results are in the JSON" in markdown
    assert len(regressions) - 1 == 30 and "15 more flagged slices" in markdown
    # 2 questions: never a finding, and marked as giving a direction, not proof
    assert {row[-1] for row in regressions[1:]} == {"direction, not proof"}
    assert len(JUnitXml.fromfile(str(xml))) == 1


def test_long_slice_values_that_differ_at_their_ends_stay_told_apart(tmp_path):
    """Two slices named by paths of one 200-character folder: cut at the end, both rows would
    read the same; cut in the middle, each keeps its file name. A gate's reason naming one
    cuts the name so, and itself at its end, after its numbers."""
    folder = "/".join(["manuals"] * 25)
    names = {0: f"{folder}/baggage.md", 1: f"{folder}/refunds.md"}

    def slice_of(i: int) -> str:
        return names[i // 12] if i < 24 else "big"

    records = rows(100, slice_of, lambda i: i >= 24)  # B breaks both slices, fixes "big"
    for r in records[24:]:
        r["correct"] = False
    a, b = write(tmp_path / "a.parquet", records, "a"), write(tmp_path / "b.parquet", records, "b")
    rule = ("--require", "correct[slice] >= -0.05")
    code, _, err, md, _ = run(a, b, tmp_path / "out", "--n-boot", "200", *rule)
    assert code == 0, err
    gate, *_, regressions, _ = tables(md.read_text())
    shown = [row[1] for row in regressions[1:] if row[0] == "slice" and row[2] == "correct"]
    # a rule's reason is prose, cut at its end, the slice's name in it cut as in the table
    reason = f"slice slice = {min(shown)} is the likeliest below -0.05: difference -0.5, interval"
    assert gate[1][-1].startswith(reason) and "; one-sided p 0.0" in gate[1][-1]
    assert len(shown) == 2 and len(set(shown)) == 2
    for value, name in zip(sorted(shown), ["baggage.md", "refunds.md"], strict=True):
        assert value.startswith("manuals/manuals/") and value.endswith(f"manuals/{name}")
        assert "\u2026" in value and len(value) <= 120


def test_a_slice_column_left_out_is_said_in_the_words_of_the_page(tmp_path):
    """The note was cut in its middle as a name is ("it\u2026 left out of the slices")."""
    code, _, err, md, _ = run(SAMPLE_A, SAMPLE_B, tmp_path, "--slice", "question_id")
    assert code == 0, err
    note = (
        "Slice column 'question\\_id' has 240 values, more than 50: it is left out of the "
        "slices; pick a coarser column with --slice."
    )
    assert note in md.read_text().splitlines()


def test_junit_has_one_case_per_rule_with_the_numbers(sample):
    _, xml, doc = sample
    suites = list(JUnitXml.fromfile(str(xml)))
    assert len(suites) == 1
    suite = suites[0]
    assert (suite.tests, suite.failures, suite.errors) == (3, 2, 0)
    cases = {case.name: case for case in suite}
    assert list(cases) == list(RULES)
    assert cases["correct >= -0.02"].is_passed
    latency = doc["gate"]["results"][1]
    (failure,) = cases["latency_ms <= 150"].result
    assert isinstance(failure, Failure) and failure.type == "fail"
    # the fail rests on the lower bound, above the ceiling
    assert f"lower bound {latency['low']:.4g} > 150" in failure.message
    assert f"interval [{latency['low']:.6g}, {latency['high']:.6g}]" in failure.text
    (inconclusive,) = cases["faithfulness within 0.01"].result
    assert inconclusive.type == "inconclusive"
    assert cases["correct >= -0.02"].classname == "ragreport gate.B"


def test_junit_classname_keeps_a_dotted_label_one_class(tmp_path):
    """A candidate labelled gpt-4.1: viewers split a classname at its dots, so the case showed
    as class "1" of package "ragreport gate.gpt-4"; the failure's text keeps the label."""
    code, _, err, _, xml = run(
        SAMPLE_A, SAMPLE_B, tmp_path / "out", "--label", "base", "--label", "gpt-4.1",
        "--require", "latency_ms <= 150", "--n-boot", "200",
    )  # fmt: skip
    assert code == 1, err
    (suite,) = list(JUnitXml.fromfile(str(xml)))
    (case,) = list(suite)
    assert case.classname == "ragreport gate.gpt-4_1"
    (failure,) = case.result
    assert failure.text.startswith("latency_ms <= 150 is fail for gpt-4.1: ")


def test_junit_without_rules_is_an_empty_suite(tmp_path):
    code, _, err, _, xml = run(SAMPLE_A, SAMPLE_B, tmp_path / "out", "--n-boot", "200")
    assert code == 0, err
    (suite,) = list(JUnitXml.fromfile(str(xml)))
    assert suite.tests == 0 and list(suite) == []


def test_fit_cuts_at_a_line_under_the_limit():
    text = "".join(f"| row {i} |\n" for i in range(10_000))
    cut = fit(text)
    assert len(cut) < MAX_CHARS and cut.endswith(f"\n\n{SECTION_CUT}\n\n")
    kept = cut.removesuffix(f"\n{SECTION_CUT}\n\n")
    assert text.startswith(kept) and kept.endswith(" |\n")
    assert fit("short\n") == "short\n"


def test_fit_cuts_the_longest_section_and_keeps_those_after_it():
    """A gate table long past GitHub's limit (labels heavy in escaped characters): the whole was
    cut at its end, dropping the candidates' verdicts and the inputs after the table."""
    stars = "\\*" * 40  # a label of 40 asterisks, each escaped
    rows = "".join(f"| B | correct >= 0 | {stars} {i} |\n" for i in range(2_000))
    head = "## ragreport: B against A\n\nB better: the interval is above zero.\n\n"
    verdicts = "### Candidates\n\n- B: better\n\n"
    inputs = "### Inputs\n\n| A | a.parquet |\n| B | b.parquet |\n"
    cut = fit(head + "### Gate: FAIL\n\n| Candidate | Rule | Numbers |\n" + rows + "\n" +
              verdicts + "### Read first\n\n" + "- a caveat\n" * 300 + "\n" + inputs)  # fmt: skip
    assert len(cut) < MAX_CHARS
    assert cut.startswith(head + "### Gate: FAIL\n\n| Candidate | Rule | Numbers |\n| B |")
    assert f"|\n\n{SECTION_CUT}\n\n{verdicts}### Read first" in cut
    assert cut.endswith("- a caveat\n\n" + inputs)  # a section under the limit is whole
    assert cut.count(SECTION_CUT) == 1


def test_two_outputs_on_one_path_exit_2(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    result = CliRunner().invoke(
        cli,
        ["compare", str(SAMPLE_A), str(SAMPLE_B), "-o", str(out / "r.html")]
        + ["--markdown", str(out / "r.json")],
    )
    assert result.exit_code == 2 and "two outputs share one path" in result.stderr
    assert list(out.iterdir()) == []


def test_summary_without_a_slice_column_says_none_was_compared(tmp_path):
    # "No slice has B worse where B is better overall" would claim a check never made
    logs = []
    for path in (SAMPLE_A, SAMPLE_B):
        logs.append(tmp_path / path.name)
        pd.read_parquet(path).drop(columns="slice").to_parquet(logs[-1])
    code, _, err, md, _ = run(*logs, tmp_path / "out", "--n-boot", "200")
    assert code == 0, err
    regressions = md.read_text().split("### Regressions")[1].split("###")[0]
    assert regressions.strip() == (
        "No slices compared: log a slice column (or name one with --slice)."
    )


# --- several candidates ---------------------------------------------------------------------


def three_runs(folder: Path) -> list[Path]:
    """A baseline, a candidate better overall that breaks half of slice "bad" (a regression),
    and a candidate identical to the baseline (its difference is 0 on every question)."""
    slices = ["good"] * 160 + ["bad"] * 40
    base = pd.DataFrame(
        {
            "question_id": [f"q{i}" for i in range(200)],
            "slice": slices,
            "correct": [i % 2 == 0 for i in range(200)],
        }
    )
    better = base.assign(correct=[s == "good" for s in slices])
    folder.mkdir()
    paths = [folder / f"{name}.parquet" for name in ("base", "reg", "same")]
    for frame, path in zip((base, better, base), paths, strict=True):
        frame.to_parquet(path)
    return paths


@pytest.fixture(scope="module")
def several(tmp_path_factory):
    out = tmp_path_factory.mktemp("several")
    logs = three_runs(out / "logs")
    md = out / "summary.md"
    args = ["compare", *map(str, logs), "-o", str(out / "r.html"), "--markdown", str(md)]
    result = CliRunner().invoke(cli, [*args, "--n-boot", "300"])
    assert result.exit_code == 0, result.output
    return md.read_text(), (out / "r.html").read_text(), json.loads((out / "r.json").read_text())


def test_several_candidates_list_each_ones_regressions(several):
    markdown, _, doc = several
    verdicts = {c["candidate"]: c["verdict"] for c in doc["comparisons"]}
    assert verdicts["reg"]["regressions"] and not verdicts["same"]["regressions"]
    section = markdown.split("### Regressions")[1].split("### Inputs")[0]
    reg, same = section.split("#### reg")[1].split("#### same")
    assert "B \u2212 A is each candidate minus the baseline, base." in section
    (flagged,) = tables(reg)
    assert flagged[1][:3] == ["slice", "bad", "correct"] and flagged[1][-1] == "regression"
    # identical to the baseline: no direction for a slice to go against, and no loss; with two
    # candidates each comparison reads its adjusted p against 0.05 / 2
    assert same.strip() == (
        "No overall difference, and no slice's loss is a finding (Holm-adjusted p below 0.025, 10 "
        "questions or more and an interval wholly on the worse side once the adjustment widens it)."
    )


def test_several_candidates_name_the_one_that_regresses(several):
    _, html, doc = several
    verdicts = {c["candidate"]: c["verdict"] for c in doc["comparisons"]}
    (line,) = verdicts["reg"]["regressions"]
    assert line.startswith("reg regresses on slice = bad: \u22120.500 [")
    page = html.split('<ul class="regressions">')[1].split("</ul>")[0]
    assert page.startswith("<li>reg regresses on slice = bad: ") and "B regresses" not in html


def test_winners_curse_leaves_out_an_undefined_correlation(several):
    markdown, html, doc = several
    assert doc["winners_curse"]["correlation"] is None
    paragraph = next(line for line in markdown.splitlines() if "comes out best" in line)
    assert "nan" not in paragraph and "nan" not in html.split("winners-curse")[1][:2000]
    assert "their correlation is undefined, a candidate's difference being the same" in paragraph


def test_several_candidates_share_the_rows_of_flagged_slices(tmp_path):
    """Three candidates with 12 flagged slices each share the 30 rows one comparison has: 10
    each, with the rest counted, and the inputs still listed."""
    records = rows(84, lambda i: f"{i // 2:02d}{'s' * 100}" if i < 24 else "big", lambda i: i >= 24)
    for r in records[24:]:
        r["correct"] = False
    a = write(tmp_path / "a.parquet", records, "a")
    candidates = [write(tmp_path / f"{name}.parquet", records, "b") for name in "bcd"]
    md = tmp_path / "summary.md"
    args = ["compare", str(a), *map(str, candidates), "-o", str(tmp_path / "r.html")]
    result = CliRunner().invoke(cli, [*args, "--markdown", str(md), "--n-boot", "100"])
    assert result.exit_code == 0, result.output
    markdown = md.read_text()
    *_, b, c, d, inputs = tables(markdown)
    assert [len(t) - 1 for t in (b, c, d)] == [10, 10, 10]
    assert markdown.count("2 more flagged slices are in the report.") == 3
    assert len(inputs) - 1 == 4 and len(markdown) < MAX_CHARS


# --- the winner's curse and the held-out check, in words ------------------------------------


def curse(**numbers: float) -> WinnersCurse:
    values = dict(standard_error=0.02, expected_max=0.8, overstatement=0.016, correlation=0.4)
    return WinnersCurse("C", "correct", 0.1, 2, spread=0.07, **{**values, **numbers})


def test_winners_curse_prints_no_undefined_number():
    nan = float("nan")
    for sentence in (
        curse(correlation=nan).sentence,
        curse(expected_max=nan).sentence,
        curse(overstatement=nan, expected_max=nan, correlation=nan).sentence,
    ):
        assert "nan" not in sentence.lower()
    assert "standard errors" not in curse(expected_max=nan).sentence
    assert "fewer than two questions" in curse(overstatement=nan).sentence
    assert "mean correlation 0.40" in curse().sentence


def test_winners_curse_calls_no_loss_a_gain():
    """Every candidate below the baseline: the best of them lost least, and the paragraph says
    it came out best, not that it has the largest gain."""
    sentence = WinnersCurse("C", "correct", -0.1, 2, 0.02, 0.8, 0.016, 0.07, 0.4).sentence
    assert sentence.startswith(
        "C comes out best of the 2 candidates on correct (\u22120.100 against"
    )
    assert not re.search(r"\bgains?\b", sentence)


def test_winners_curse_makes_no_request_a_holdout_has_met():
    """The paragraph is printed with or without --holdout: it says what measures the gain
    without the bias, not that the choice still needs confirming."""
    assert "Confirm" not in curse().sentence
    assert curse().sentence.endswith("(--holdout holds some out for that).")
    held = replace(curse(), held_out=True, held_out_candidate=curse().best).sentence
    assert held.endswith("without this bias: the held-out ones (--holdout) do.")


def test_candidates_that_all_tie_name_the_one_the_held_out_check_measures():
    """Every candidate at the best's difference: no choice to correct for, and the held-out
    check, which chooses on fewer questions, still names its own."""
    tie = replace(curse(), best="B", tied_with=("C",), held_out=True, held_out_candidate="C")
    assert tie.sentence == (
        "The 2 candidates tie on correct (B and C: +0.100 each against the baseline): with no "
        "spread between them none is chosen over another, so there is no choice to correct for. "
        "The held-out check (--holdout) measures C, the best on the questions not held out."
    )


def test_winners_curse_names_the_candidate_held_out_when_the_choice_differs():
    """The held-out check measures the best on the other questions: among tied leaders it is
    named, and outside them the paragraph says that no question measures the leaders'."""
    leaders = dict(best="B", tied_with=("C",), n_candidates=3)
    tied = replace(curse(), **leaders, held_out=True, held_out_candidate="C")
    assert tied.sentence.endswith(
        "without this bias: the held-out check (--holdout) measures C's, the best on the "
        "questions not held out."
    )
    other = replace(tied, held_out_candidate="D").sentence
    assert other.endswith(
        "without this bias, and none measure B's or C's here: on the questions not held out the "
        "best is D, so the held-out check (--holdout) measures D's difference instead."
    )


def held_out(candidates: list[tuple[str, np.ndarray]]) -> str:
    split = holdout.Split("rule", np.arange(40) < 20)
    return holdout.evaluate(
        split,
        "m",
        np.zeros(40),
        candidates,
        binary=False,
        n_boot=100,
        confidence=0.95,
        seed=0,
        question_ids=np.arange(40),
    ).sentence


def test_holdout_with_one_candidate_says_nothing_was_chosen():
    one = held_out([("B", np.full(40, 0.2))])
    assert "chosen" not in one and "B, the only candidate, differs by +0.200 in m" in one
    two = held_out([("B", np.full(40, 0.2)), ("C", np.full(40, 0.1))])
    assert "B was chosen as the best on the other 20 (+0.200 in m)" in two


def test_two_run_summary_carries_the_pages_caveats(tmp_path):
    """18 paired questions (under 50) and two ids only in A: the summary says both, in the
    words of the page's "Read first" box."""
    records = rows(20, lambda i: "x" if i < 10 else "y", lambda i: i % 3 == 0)
    a = write(tmp_path / "a.parquet", records, "a")
    b = write(tmp_path / "b.parquet", records[:18], "b")
    code, _, err, md, _ = run(a, b, tmp_path / "out", "--n-boot", "200")
    assert code == 0, err
    tokens = MarkdownIt("commonmark").parse(md.read_text().split("### Read first")[1])
    items = [
        t.content
        for t, after in zip(tokens, tokens[1:], strict=False)
        if after.type == "paragraph_close"
    ]
    caveats = [
        "2 questions only in run A are not compared: q18, q19",
        "Only 18 paired questions: treat every conclusion as exploratory",
    ]
    assert items[:2] == caveats
    page = (tmp_path / "out" / "report.html").read_text().split('id="warnings"')[1]
    assert all(f"<li>{c}</li>" in page for c in caveats)


def regressions_section(markdown: str) -> str:
    return markdown.split("### Regressions")[1].split("###")[0].strip()


def test_summary_of_identical_runs_claims_no_overall_direction(tmp_path):
    a = tmp_path / "a.parquet"
    a.write_bytes(SAMPLE_A.read_bytes())
    code, _, err, md, _ = run(SAMPLE_A, a, tmp_path / "out", "--n-boot", "200")
    assert code == 0, err
    assert regressions_section(md.read_text()) == (
        "No overall difference, and no slice's loss is a finding (Holm-adjusted p below 0.05, 10 "
        "questions or more and an interval wholly on the worse side once the adjustment widens it)."
    )


def test_summary_of_a_worse_candidate_says_what_is_flagged(tmp_path):
    # B breaks 6 answers and fixes 3: worse overall, so no slice is checked against a gain, and
    # no slice's loss is a finding
    records = rows(60, lambda i: "x" if i < 30 else "y", lambda i: i % 2 == 0 and i >= 12)
    for r in records[:6]:
        r["b"] = not r["correct"]
    a, b = write(tmp_path / "a.parquet", records, "a"), write(tmp_path / "b.parquet", records, "b")
    code, _, err, md, _ = run(a, b, tmp_path / "out", "--n-boot", "200")
    assert code == 0, err
    assert regressions_section(md.read_text()) == (
        "No slice's loss is a finding (Holm-adjusted p below 0.05, 10 questions or more and an "
        "interval wholly on the worse side once the adjustment widens it); B is not ahead on the "
        "overall mean of any metric, so a loss short of one is not listed."
    )


def test_several_candidates_summary_carries_the_pages_caveats(tmp_path):
    """30 paired questions (under 50) and an id only in the baseline: the summary's "Read
    first" list is the page's and the JSON's, each candidate's caveats named by candidate, and
    one every comparison gives named once for all."""
    records = rows(31, lambda i: "x", lambda i: i % 2 == 0)
    base = write(tmp_path / "base.parquet", records, "a")
    b, c = (write(tmp_path / f"{name}.parquet", records[:30], name) for name in "bc")
    md, out = tmp_path / "summary.md", tmp_path / "r.html"
    args = ["compare", str(base), str(b), str(c), "-o", str(out), "--markdown", str(md)]
    result = CliRunner().invoke(cli, [*args, "--n-boot", "100"])
    assert result.exit_code == 0, result.output
    warnings = json.loads((tmp_path / "r.json").read_text())["warnings"]
    assert "all candidates: Only 30 paired questions: treat every conclusion as exploratory" in (
        warnings
    )
    assert not any(w.startswith(("b: Only", "c: Only")) for w in warnings), warnings
    tokens = MarkdownIt("commonmark").parse(md.read_text().split("### Read first")[1])
    items = [
        t.content
        for t, after in zip(tokens, tokens[1:], strict=False)
        if after.type == "paragraph_close" and t.type == "inline"
    ]
    assert items[: len(warnings)] == warnings
    # a caveat of one candidate reads "A" and "B" as its comparison does: said before the list
    head = md.read_text().split("### Read first")[0]
    assert "In each candidate's lines A is the baseline, base, and B that candidate." in head


def _regressing(folder: Path) -> tuple[Path, Path]:
    """120 questions: B fixes 45 of slice "rest", breaks all of "bad" (27, a finding) and of
    "tiny" (3, a direction), and drops faithfulness in "big" (30, a finding)."""
    rows = {"a": [], "b": []}
    layout = [("rest", 60), ("bad", 27), ("big", 30), ("tiny", 3)]
    i = 0
    for name, n in layout:
        for j in range(n):
            a_right = name != "rest" or j >= 45
            b_right = name in ("rest", "big")
            for run, right in (("a", a_right), ("b", b_right)):
                faithful = 0.5 if run == "a" or name == "tiny" else (0.1 if name == "big" else 0.9)
                rows[run].append(
                    {
                        "question_id": f"q{i}",
                        "slice": name,
                        "correct": right,
                        "faithfulness": faithful,
                    }  # fmt: skip
                )
            i += 1
    folder.mkdir(parents=True, exist_ok=True)
    paths = folder / "a.parquet", folder / "b.parquet"
    for path, run in zip(paths, "ab", strict=True):
        pd.DataFrame(rows[run]).to_parquet(path)
    return paths


def test_the_verdict_s_slice_regressions_are_printed_and_in_the_summary(tmp_path, monkeypatch):
    """The page and the JSON named the regression; the command's verdict line and the
    Markdown's did not, and a cut table of flagged slices kept directions before it."""
    import reportgen.reporters.markdown_report as markdown_report

    monkeypatch.setattr(markdown_report, "MAX_SLICE_ROWS", 1)
    a, b = _regressing(tmp_path / "logs")
    code, out, err, md, _ = run(a, b, tmp_path / "out", "--n-boot", "500")
    assert code == 0, err
    (line,) = two_run_view(json.loads((tmp_path / "out" / "report.json").read_text()))["verdict"][
        "regressions"
    ]
    assert line.startswith("B regresses on slice = bad: \u22121.000 [")
    assert f"\n  {line}\n" in out
    markdown = md.read_text()
    assert "\n- B regresses on slice = bad: \u22121.000 \\[" in markdown
    flagged = next(t for t in tables(markdown) if t[0][-1] == "Reads as")
    assert [row[-1] for row in flagged[1:]] == ["regression"]
    assert "2 more flagged slices are in the report." in markdown


def test_a_cut_gate_table_keeps_every_failing_rule(tmp_path, monkeypatch):
    """The table stopped at MAX_RULE_ROWS in the order given, failures among the rows cut."""
    import reportgen.reporters.markdown_report as markdown_report

    monkeypatch.setattr(markdown_report, "MAX_RULE_ROWS", 1)
    a, b = _regressing(tmp_path / "logs")
    rules = ("correct >= -0.5", "faithfulness >= -0.5", "correct >= 0.5")
    code, _, err, md, _ = run(a, b, tmp_path / "out", "--n-boot", "500",
                              *(arg for rule in rules for arg in ("--require", rule)))  # fmt: skip
    assert code == 1, err
    markdown = md.read_text()
    gate = next(t for t in tables(markdown) if t[0][0] == "Candidate" and t[0][1] == "Rule")
    assert [(row[1], row[2]) for row in gate[1:]] == [("correct >= 0.5", "fail")]
    assert "2 more rule results are in the JSON and the JUnit file (all pass)." in markdown


def test_a_study_summary_says_how_many_questions_it_compares(tmp_path):
    """The page's header gave the questions every run has; the Markdown gave each log's own
    count only (120, 120, 100), not the 100 compared."""
    a, b = _regressing(tmp_path / "logs")
    c = tmp_path / "logs" / "c.parquet"
    pd.read_parquet(b).iloc[20:].to_parquet(c)
    out = tmp_path / "out"
    out.mkdir()
    md = out / "summary.md"
    args = ["compare", str(a), str(b), str(c), "-o", str(out / "r.html"), "--markdown", str(md)]
    result = CliRunner().invoke(cli, [*args, "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    assert md.read_text().startswith(
        "## ragreport: 2 candidates against a, on the 100 questions every run has\n"
    )


def test_the_tables_of_candidates_read_the_margin_as_the_verdicts_do(tmp_path):
    """With --margin the verdict said "equivalent within 0.5"; the tables of candidates (page,
    Markdown) and the JSON's summary said only "no evidence of a difference"."""
    a, b = _regressing(tmp_path / "logs")
    same = tmp_path / "logs" / "same.parquet"
    pd.read_parquet(a).to_parquet(same)
    out = tmp_path / "out"
    out.mkdir()
    md = out / "summary.md"
    args = ["compare", str(a), str(b), str(same), "-o", str(out / "r.html"), "--markdown", str(md)]
    result = CliRunner().invoke(cli, [*args, "--n-boot", "200", "--margin", "correct=0.5"])
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "r.json").read_text())
    verdicts = {c["candidate"]: c["verdict"]["relevance"] for c in doc["comparisons"]}
    assert verdicts["same"] == "equivalent within 0.5"
    assert {s["candidate"]: s["relevance"] for s in doc["summary"]} == verdicts
    rows = next(t for t in tables(md.read_text()) if t[0][-1] == "Verdict")
    assert {row[0]: row[-1] for row in rows[1:]}["same"] == "equivalent within 0.5"
    assert '<td class="text">equivalent within 0.5</td>' in (out / "r.html").read_text()


def test_the_gate_table_shows_each_number_as_the_command_prints_it(tmp_path):
    """At 4 fixed decimals the ceiling's upper bound 0.0007263 read +0.0007, no higher than the
    0.0007 it breaks, beside "inconclusive"; -0.02232 read -0.0223, above the -0.02231 it falls
    short of; a candidate's own mean read +0.7375, signed as a difference. The columns now give
    the digits of the command's line (enough to tell a bound from its margin), signed only where
    the rule reads B - A."""
    rules = ("cost_usd <= 0.0007", "faithfulness >= -0.02231", "candidate.correct >= 0.5")
    extra = [arg for rule in rules for arg in ("--require", rule)]
    code, out, err, md, _ = run(SAMPLE_A, SAMPLE_B, tmp_path / "out", *extra)
    assert code == 1, err
    gate = tables(md.read_text())[0]
    assert [row[1:5] for row in gate[1:]] == [
        [rules[0], "inconclusive (counts as fail)", "+0.0006838", "[+0.0006427, +0.0007263]"],
        [rules[1], "inconclusive (counts as fail)", "+0.01701", f"[{MINUS}0.02232, +0.05731]"],
        [rules[2], "pass", "0.7375", "[0.6784, 0.7958]"],
    ]
    assert "difference 0.0006838, interval [0.0006427, 0.0007263];" in out
    assert "difference 0.01701, interval [-0.02232, 0.05731];" in out
    assert "candidate mean 0.7375 over its 240 scored questions, interval [0.6784, 0.7958];" in out


@pytest.mark.parametrize(
    ("rule", "numbers", "shown"),
    [
        # 4 significant digits would read 0.0007, the ceiling itself, for a bound above it
        ("cost_usd <= 0.0007", (68e-5, 64e-5, 70.004e-5), ("+0.00068", "[+0.00064, +0.00070004]")),
        ("correct >= -0.02", (0.01, -0.0200004, 0.04), ("+0.01", f"[{MINUS}0.0200004, +0.04]")),
        # an equivalence interval's ends, each beside its side of the margin
        ("correct within 0.01", (0, -0.0099999, 0.0100001),
         ("0", f"[{MINUS}0.0099999, +0.0100001]")),
        ("candidate.correct >= 0.8", (0.81, 0.79999, 0.83), ("0.81", "[0.79999, 0.83]")),
        ("correct >= 0", (float("nan"),) * 3, ("n/a", "none")),  # no question scored
    ],
)  # fmt: skip
def test_a_rule_s_numbers_in_a_table_stay_on_their_side_of_the_margin(rule, numbers, shown):
    result = RuleResult(rule, "B", "inconclusive", "fail", *numbers, "")
    assert result.numbers(signed=True) == shown


def test_junit_cases_of_labels_one_dot_apart_stay_apart(tmp_path):
    """gpt-4.1 and gpt-4_1 were both class "ragreport gate.gpt-4_1": each rule was two cases of
    one classname and name, which a CI viewer merges into one, and a passing case's output did
    not say whose it was. A classname two candidates would share gets each one's number (as
    the suite's properties name its log: candidate1.path)."""
    records = rows(40, lambda i: "x", lambda i: i % 2 == 0 or i < 10)
    logs = [
        write(tmp_path / f"{name}.parquet", records, name[0]) for name in ("a", "b1", "b2", "b3")
    ]
    labels = ("base", "gpt-4.1", "gpt-4_1", "b.3")
    extra = [arg for label in labels for arg in ("--label", label)]
    code, _, err, _, xml = run(*logs[:2], tmp_path / "out", *map(str, logs[2:]), *extra,
                               "--require", "correct >= -0.5", "--n-boot", "200")  # fmt: skip
    assert code == 0, err
    (suite,) = list(JUnitXml.fromfile(str(xml)))
    cases = [(case.classname, case.name, case.system_out) for case in suite]
    assert [case[:2] for case in cases] == [
        ("ragreport gate.gpt-4_1 (candidate 1)", "correct >= -0.5"),
        ("ragreport gate.gpt-4_1 (candidate 2)", "correct >= -0.5"),
        ("ragreport gate.b_3", "correct >= -0.5"),
    ]
    properties = {p.name: p.value for p in suite.properties()}
    assert properties["candidate1.path"] == str(logs[1])
    for (_, _, out), label in zip(cases, labels[1:], strict=True):
        assert out.startswith(f"correct >= -0.5 is pass for {label}: difference ")


def test_a_cost_a_rule_names_keeps_its_digits_in_the_metrics_table(tmp_path):
    """A candidate or per-slice rule on a cost compares it as a score too, and the row took a
    score's 3 decimals: cost_usd 0.004 | 0.005 | +0.001 | [+0.001, +0.001], latency_ms
    1539.587. Each keeps four significant digits, as without the rule."""
    rules = ("candidate.cost_usd <= 0.01", "latency_ms[slice] <= 2000")
    extra = [arg for rule in rules for arg in ("--require", rule)]
    code, _, err, md, _ = run(SAMPLE_A, SAMPLE_B, tmp_path / "out", *extra)
    assert code == 0, err
    (metrics,) = [t for t in tables(md.read_text()) if t[0][0] == "Metric"]
    rows = {row[0]: row[1:5] for row in metrics[1:]}
    assert rows["cost_usd (lower is better)"] == [
        "0.003942", "0.004625", "+0.000684", "[+0.000643, +0.000726]",
    ]  # fmt: skip
    assert rows["latency_ms (lower is better)"] == ["1540", "2168", "+629", "[+580, +675]"]
    # the page's metric table as the summary's: it read 0.004 | 0.005 | +0.001 | [+0.001, +0.001]
    page = (tmp_path / "out" / "report.html").read_text()
    row = re.search(r"<td[^>]*>cost_usd \(lower is better\)</td>(.*?)</tr>", page, re.S)
    assert row is not None
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>.*?</td>", row[1])]
    assert cells[1:5] == ["0.003942", "0.004625", "+0.000684", "[+0.000643, +0.000726]"]


def test_a_flagged_slice_of_a_cost_keeps_its_digits(tmp_path):
    """A per-slice rule on cost_usd slices it as a score: B cheaper overall but dearer by about
    0.0003 USD in slice y, whose row read +0.0003 [+0.0003, +0.0003] at a score's 3 decimals
    (widened to its first digit)."""
    ids = [f"q{i}" for i in range(40)]
    slices = ["x"] * 20 + ["y"] * 20
    a = [0.004 + 0.0001 * (i % 5) for i in range(40)]
    b = [c - 0.002 if s == "x" else c + 0.0003 + 0.00001 * (i % 3) for i, (c, s) in
         enumerate(zip(a, slices, strict=True))]  # fmt: skip
    logs = []
    for name, cost in (("a", a), ("b", b)):
        logs.append(tmp_path / f"{name}.parquet")
        frame = {"question_id": ids, "slice": slices, "correct": [True] * 40, "cost_usd": cost}
        pd.DataFrame(frame).to_parquet(logs[-1])
    rule = ("--require", "cost_usd[slice] <= 0.01", "--n-boot", "200")
    code, _, err, md, _ = run(*logs, tmp_path / "out", *rule)
    assert code == 0, err
    flagged = tables(regressions_section(md.read_text()))[0]
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    y = two_run_view(doc)["slices"]["slice"]["y"]["cost_usd"]
    interval = f"[+{y['ci_low']:.6f}, +{y['ci_high']:.6f}]"  # 4 digits of A's 0.0042
    assert flagged[1][:6] == ["slice", "y", "cost_usd", "20", f"+{y['diff']:.6f}", interval]


def test_the_slices_of_a_cost_share_its_digits(tmp_path):
    """A cost's slice rows took four significant digits of each slice's own mean: a slice
    near 1,500 ms read +5 [+5, +5] under rows near 500 ms reading +5.0 [+5.0, +5.0]. The rows
    of one metric take the digits of its overall row (A's 1,000 ms here: whole ms), in the
    summary's flagged slices and in the page's slice table of the headline."""
    n = 60
    ids = [f"q{i}" for i in range(n)]
    slices = ["fast"] * 30 + ["slow"] * 30
    a = [500.0 + i % 3 if s == "fast" else 1500.0 + i % 3 for i, s in enumerate(slices)]
    b = [x + 5 + 0.1 * (i % 2) for i, x in enumerate(a)]
    logs = []
    for name, latency in (("a", a), ("b", b)):
        logs.append(tmp_path / f"{name}.parquet")
        frame = {"question_id": ids, "slice": slices, "latency_ms": latency}
        pd.DataFrame(frame).to_parquet(logs[-1])
    extra = ("--metric", "latency_ms", "--lower-is-better", "latency_ms", "--n-boot", "200")
    code, _, err, md, _ = run(*logs, tmp_path / "out", *extra)
    assert code == 0, err
    (metrics,) = [t for t in tables(md.read_text()) if t[0][0] == "Metric"]
    assert metrics[1][:4] == ["latency_ms (lower is better)", "1001", "1006", "+5"]
    flagged = tables(regressions_section(md.read_text()))[0]
    assert {row[1]: row[4:6] for row in flagged[1:]} == {
        "fast": ["+5", "[+5, +5]"],
        "slow": ["+5", "[+5, +5]"],
    }
    page = (tmp_path / "out" / "report.html").read_text()
    cells = {}  # the first row of each value is the slice table's
    for value, row in re.findall(r"<tr[^>]*>\s*<td[^>]*>(fast|slow)</td>(.*?)</tr>", page, re.S):
        tds = re.findall(r"<td[^>]*>.*?</td>", row, re.S)
        cells.setdefault(value, [re.sub(r"<[^>]+>", "", c).strip() for c in tds])
    assert cells["fast"][:5] == ["30", "501", "506", "+5", "[+5, +5]"]
    assert cells["slow"][:5] == ["30", "1501", "1506", "+5", "[+5, +5]"]


def test_a_cost_headline_speaks_in_its_rows_digits(tmp_path):
    """Where a cost is the headline (logs of cost_usd alone), the verdict printed its interval
    at a score's 3 decimals widened to the first digit, [+0.0001, +0.0002], beside the table's
    [+0.000142, +0.000231]; the power sentence and a slice regression's line alike. Each now
    prints the digits of the metric's row."""
    n = 80
    ids = [f"q{i}" for i in range(n)]
    slices = ["x"] * 60 + ["y"] * 20
    a = [0.004 + 0.0001 * (i % 5) for i in range(n)]
    b = [c - 0.0004 - 0.00002 * (i % 3) if s == "x" else c + 0.0003 + 0.00001 * (i % 3)
         for i, (c, s) in enumerate(zip(a, slices, strict=True))]  # fmt: skip
    logs = []
    for name, cost in (("a", a), ("b", b)):
        logs.append(tmp_path / f"{name}.parquet")
        pd.DataFrame({"question_id": ids, "slice": slices, "cost_usd": cost}).to_parquet(logs[-1])
    extra = ("--lower-is-better", "cost_usd", "--n-boot", "500")
    code, _, err, md, _ = run(*logs, tmp_path / "out", *extra)
    assert code == 0, err
    (metrics,) = [t for t in tables(md.read_text()) if t[0][0] == "Metric"]
    row = metrics[1]
    assert row[0] == "cost_usd (lower is better)"
    diff, interval = row[3], row[4]  # 4 significant digits of A's 0.0042: 6 decimals
    assert re.fullmatch(r"−0\.\d{6}", diff) and re.fullmatch(r"\[−0\.\d{6}, −0\.\d{6}\]", interval)
    view = two_run_view(json.loads((tmp_path / "out" / "report.json").read_text()))
    verdict = view["verdict"]
    assert verdict["outcome"] == "B better"
    assert f"for cost_usd is {interval}, below zero" in verdict["reason"]
    y = view["slices"]["slice"]["y"]["cost_usd"]
    (line,) = verdict["regressions"]
    shown = f"+{y['diff']:.6f} [+{y['ci_low']:.6f}, +{y['ci_high']:.6f}] over 20 questions"
    assert line.startswith(f"B regresses on slice = y: {shown}")
    power = view["power"]
    observed = abs(view["metrics"]["cost_usd"]["diff"])
    assert f"observed difference of {observed:.6f} " in power["sentence"]
    assert f"A true difference of {power['min_detectable']:.6f} would" in power["sentence"]


def test_a_slice_loss_that_survives_holm_but_is_no_finding_is_not_denied(tmp_path):
    """In slice faq (20 questions) B moves the evidence from rank 2 to rank 3 on every question:
    each loses 1/2 - 1/3 on mrr@3, Holm-adjusted p about 0.0002, the no-spread interval reaching
    zero, so no finding. The summary said "No slice's loss survives Holm's adjustment", which
    the JSON beside it contradicted; it names the three conditions of a finding."""
    logs = []
    for label in "ab":
        records = []
        for i in range(100):
            q = f"q{i:03d}"
            other = [f"{q}_o{j}" for j in range(9)]
            ranking = [other[0], f"{q}_r", *other[1:8]]
            if label == "b" and i < 20:
                ranking = [other[0], other[1], f"{q}_r", *other[2:8]]
            records.append(
                {"question_id": q, "slice": "faq" if i < 20 else "other", "retrieved_ids": ranking,
                 "relevant_ids": [f"{q}_r"], "context_ids": ranking[:3], "correct": i % 2 == 1}
            )  # fmt: skip
        logs.append(tmp_path / f"{label}.parquet")
        pd.DataFrame(records).to_parquet(logs[-1])
    code, _, err, md, _ = run(*logs, tmp_path / "out", "--n-boot", "1000")
    assert code == 0, err
    view = two_run_view(json.loads((tmp_path / "out" / "report.json").read_text()))
    faq = view["slices"]["slice"]["faq"]["mrr@3"]
    assert faq["p_holm"] < 0.05 and not faq["finding"] and faq["ci_high"] > 0
    section = regressions_section(md.read_text())
    assert "survives Holm" not in section
    assert section.startswith(
        "No slice's loss is a finding (Holm-adjusted p below 0.05, 10 questions or more and an "
        "interval wholly on the worse side once the adjustment widens it)"
    )


def test_the_markdown_names_the_test_its_p_values_come_from_under_clusters(tmp_path):
    """With --cluster every p of the Metrics table is the permutation test of the clusters
    (0.171 for correct, fixed 30 and broken 23 in one case), while the paragraph above it said
    McNemar's exact test (0.410 for those counts)."""
    for path, name in ((SAMPLE_A, "a"), (SAMPLE_B, "b")):
        frame = pd.read_parquet(path)
        frame["doc"] = [f"d{i % 12}" for i in range(len(frame))]
        frame.to_parquet(tmp_path / f"{name}.parquet")
    code, _, err, md, _ = run(tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "o",
                              "--cluster", "doc", "--n-boot", "300")  # fmt: skip
    assert code == 0, err
    text = " ".join(md.read_text().split())
    assert (
        "p of the paired test of the same difference (the paired permutation test of the "
        "clusters (--cluster doc: whole clusters' differences flipped), for every metric; where "
        "1 to 4 questions changed among ties (or moved off one difference every other question "
        "shares) on a metric of known range, or under 20 with fewer than 3 of them the rarer "
        "way, the larger p of that test and the bounded score test)."
    ) in text
    assert "McNemar" not in text.split("### Metrics", 1)[1].split("|", 1)[0]
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    tests = {m["test"] for m in report["comparisons"][0]["metrics"].values()}
    assert tests == {"paired permutation of clusters"}
    code, _, _, md, _ = run(SAMPLE_A, SAMPLE_B, tmp_path / "plain", "--n-boot", "300")
    assert "(McNemar's exact test for 0/1 outcomes;" in " ".join(md.read_text().split())
