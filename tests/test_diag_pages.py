"""The diagnosis as the page words it: no sentence about a column the logs do not have."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest


def page_text(path) -> str:
    """The page's visible words, tags and scripts left out."""
    page = re.sub(r"<(script|style|svg)\b.*?</\1>", " ", path.read_text(), flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def test_worked_cases_of_answer_only_logs_draw_no_ranking(tmp_path, compare):
    """Answer-only logs: the broken questions are shown by their scores, without a legend for
    ranked candidates and prompt cutoffs that do not exist, or empty answer fields."""
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, broken in zip(paths, (False, True), strict=True):
        rows = [{"question_id": f"q{i}", "correct": not (broken and i < 2)} for i in range(6)]
        pd.DataFrame(rows).to_parquet(path)
    doc = compare(*paths, tmp_path / "out")
    assert doc["broken"] == ["q0", "q1"]
    text = page_text(tmp_path / "out" / "report.html")
    cases = text[text.index("Worked cases") :]
    assert "q0 (run B) scores correct no" in cases
    assert "Ranked candidates" not in text
    assert "answer" not in cases.split("What was compared")[0]


def test_the_prompt_cutoff_is_drawn_only_where_the_prompt_ends(tmp_path, compare):
    """Each broken question's own prompt: the top 2 (line after rank 2), the top 3 while most
    prompts hold 2 (line after rank 3, not 2), and a reranked pick (no line at all). A ranking
    listing a prompt's passage again further down (twice) marked the copy as in the prompt too,
    and drew no line: the prompt read as 3 passages."""
    ranked = ["p1", "p2", "p3", "p4"]
    contexts = {"top2": ["p1", "p2"], "top3": ["p1", "p2", "p3"], "picked": ["p3", "p1"]}
    contexts |= {"twice": ["p1", "p2"]}
    contexts |= {f"q{i}": ["p1", "p2"] for i in range(4)}
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, broken in zip(paths, (False, True), strict=True):
        rows = [
            {
                "question_id": qid,
                "retrieved_ids": ["p1", "p2", "p1", "p4"] if qid == "twice" else ranked,
                "relevant_ids": ["p1"],
                "context_ids": context,
                "correct": not (broken and not qid.startswith("q")),
            }
            for qid, context in contexts.items()
        ]
        pd.DataFrame(rows).to_parquet(path)
    doc = compare(*paths, tmp_path / "out")
    assert doc["broken"] == ["top2", "top3", "picked", "twice"]
    text = page_text(tmp_path / "out" / "report.html")
    cases = text[text.index("Broken by B") :]
    drawn = dict(
        re.findall(r"(\w+) \(run B\) — generation failure \(fix: generation\) (.*?) context", cases)
    )
    assert drawn == {
        "top2": "p1 ★1 ▸ p2 ▸ prompt cutoff (k = 2) p3 p4",
        "top3": "p1 ★1 ▸ p2 ▸ p3 ▸ prompt cutoff (k = 3) p4",
        "picked": "p1 ★1 ▸ p2 p3 ▸ p4",
        "twice": "p1 ★1 ▸ p2 ▸ prompt cutoff (k = 2) p1 p4",
    }


def test_each_step_asks_whether_its_share_reaches_the_bar(tmp_path, compare):
    """B wrong on 1 of 9: 0.889 clears the bar 0.8, so the step's yes answers whether the share
    reaches the bar, not whether every question is answered correctly."""
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, wrong in zip(paths, (0, 1), strict=True):
        rows = [{"question_id": f"q{i}", "correct": i >= wrong} for i in range(9)]
        pd.DataFrame(rows).to_parquet(path)
    compare(*paths, tmp_path / "out")
    text = page_text(tmp_path / "out" / "report.html")
    assert (
        "Of all questions, does the share answered correctly reach its bar? "
        "correct on all questions = 0.889 (bar 0.800): yes" in text
    )
    assert "Are all questions answered correctly?" not in text


ANSWER_ONLY = [
    "question_id",
    "question",
    "slice",
    "correct",
    "faithfulness",
    "answer",
    "reference_answer",
    "answer_relevance",
    "answerable",
    "abstained",
]
SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"
SAMPLE_LOGS = ("fare_rules_a_baseline.parquet", "fare_rules_b_reranker.parquet")


def links_definition(page: Path) -> str:
    """The Links definition's words as the page shows them."""
    found = re.search(r"<dt>Links</dt><dd>(.*?)</dd>", page.read_text(), flags=re.S)
    assert found is not None
    return html.unescape(found[1])


def test_links_definition_of_answer_only_logs_names_only_the_refusals(tmp_path, compare):
    """Without retrieved_ids, context_ids, cited_ids or relevant_ids the section shows the
    refusals alone: its definition speaks of no retrieval hit, citation or context."""
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for name, path in zip(SAMPLE_LOGS, paths, strict=True):
        pd.read_parquet(SAMPLE / name)[ANSWER_ONLY].to_parquet(path)
    compare(*paths, tmp_path / "out")
    assert links_definition(tmp_path / "out" / "report.html") == (
        "Correct refusals: share of unanswerable questions abstained on; wrong refusals: share "
        "of answerable ones; each over the questions whose answerability is logged (answerable, "
        "or relevant_ids)."
    )


def test_links_definition_of_full_logs_names_every_score(tmp_path, compare):
    compare(*(SAMPLE / name for name in SAMPLE_LOGS), tmp_path / "out")
    assert links_definition(tmp_path / "out" / "report.html") == (
        "Faithfulness, answer relevance and context utilization (share of an answer's distinct "
        "citations that are in its context and labelled relevant) are averaged over retrieval "
        "hits only. Correct refusals: share of unanswerable questions abstained on; wrong "
        "refusals: share of answerable ones; each over the questions whose answerability is "
        "logged (answerable, or relevant_ids). Citations in context and citations relevant: "
        "shares of an answer's distinct citations."
    )


def test_links_definition_without_faithfulness_or_citations(tmp_path, compare):
    """Answer relevance on hits, no faithfulness, no cited_ids: one generation score."""
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for name, path in zip(SAMPLE_LOGS, paths, strict=True):
        log = pd.read_parquet(SAMPLE / name)
        log.drop(columns=["faithfulness", "human_faithful", "cited_ids"]).to_parquet(path)
    compare(*paths, tmp_path / "out")
    assert links_definition(tmp_path / "out" / "report.html") == (
        "Answer relevance is averaged over retrieval hits only. Correct refusals: share of "
        "unanswerable questions abstained on; wrong refusals: share of answerable ones; each "
        "over the questions whose answerability is logged (answerable, or relevant_ids)."
    )


def test_citations_without_labels_score_no_relevant_share(tmp_path, compare):
    """cited_ids logged, relevant_ids not: the Links table showed a "citations relevant" row of
    n/a on 0 answers; it is not scored, and says the labels would score it."""
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for name, path in zip(SAMPLE_LOGS, paths, strict=True):
        log = pd.read_parquet(SAMPLE / name)
        log.drop(columns=["relevant_ids", "relevant_grades"]).to_parquet(path)
    doc = compare(*paths, tmp_path / "out")
    comparison = doc["comparisons"][0]
    assert [s["metric"] for s in comparison["stages"]][-1] == "citations in context"
    assert {"stage": "citations relevant", "needs": "relevant_ids"} in comparison["missing"]
    assert links_definition(tmp_path / "out" / "report.html").endswith(
        "Citations in context: share of an answer's distinct citations."
    )


def test_a_long_text_is_shown_cut_with_how_much_more_the_log_holds(tmp_path, compare):
    """A question, answer and reference of 10,000 characters each were copied whole into the
    changed table and the worked cases: 300 such answers made a page of 31 MB."""
    ids = [f"q{i}" for i in range(12)]
    long = "<b>&" + "x" * 9_996  # escaped, and cut after 2,000 characters
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, correct in zip(paths, ([True] * 12, [False] + [True] * 11), strict=True):
        pd.DataFrame({
            "question_id": ids, "correct": correct, "question": [long] + ids[1:],
            "answer": [long] * 12, "reference_answer": [long] * 12,
        }).to_parquet(path)  # fmt: skip
    compare(*paths, tmp_path / "out")
    page = (tmp_path / "out" / "report.html").read_text()
    shown = "&lt;b&gt;&amp;" + "x" * 1_996 + "\u2026 (8,000 more characters)"
    assert (
        page.count(shown) >= 4
    )  # the changed table, the worked case's question, answer, reference
    assert "x" * 1_997 not in page and "<b>&" not in page


def test_fewer_wrong_refusals_are_coloured_as_a_gain(tmp_path, compare):
    """B abstains on none of 60 answerable questions where A abstained on 12: its drop in wrong
    refusals was coloured as a loss, by the sign alone, where correct's gain beside it read as
    one."""
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, refusing in zip(paths, (12, 0), strict=True):
        rows = [
            {"question_id": f"q{i}", "answerable": True, "abstained": i < refusing,
             "correct": i >= refusing}
            for i in range(60)
        ]  # fmt: skip
        pd.DataFrame(rows).to_parquet(path)
    doc = compare(*paths, tmp_path / "out")
    page = (tmp_path / "out" / "report.html").read_text()
    stages = page[page.index('<table class="stages">') :]
    stages = stages[: stages.index("</table>")]
    rows = re.findall(
        r'<tr class="(\w*)"><td class="text">[^<]*</td><td class="text">([^<]*)', stages
    )
    stages = {metric: side for side, metric in rows}
    assert stages["wrong refusals"] == "up"
    assert stages["correct"] == "up"
    assert doc["metrics"]["correct"]["ci_low"] > 0


def test_every_count_of_the_page_is_grouped_alike(tmp_path, compare):
    """'B wins on 2,315 questions, loses on 1152 and ties on 46533', 'fixed 2315' beside 'over
    50,000 questions': counts read one way throughout the page, the verdict and the summary
    (whose inputs table read 2500)."""
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    n = 2_500
    for path, right in zip(paths, (1_100, 2_300), strict=True):
        # B fixes 1,200 and breaks none; 200 stay wrong in both, 1,100 right in both
        rows = [{"question_id": f"q{i}", "correct": i < right} for i in range(n)]
        pd.DataFrame(rows).to_parquet(path)
    doc = compare(*paths, tmp_path / "out", "--markdown", tmp_path / "s.md")
    text = page_text(tmp_path / "out" / "report.html")
    assert "B wins on 1,200 questions, loses on 0 and ties on 1,300" in text
    assert "(fixed 1,200, broken 0, over 2,500 questions)" in doc["verdict"]["reason"]
    assert "unanswerable: 0 of 2,500" in text
    assert " 1,200 / 0 / 1,300 " in text and " 1,200 / 0 " in text  # W/L/T, fixed / broken
    changes = "Fixed 1,200, broken 0 (of 2,500 questions scored in both runs)."
    markdown = (tmp_path / "s.md").read_text()
    assert changes in markdown
    assert not re.search(r"\b\d{4,}\b", markdown)  # the inputs table read "| 2500 |"
    assert not re.search(r"\b\d{4,}\b", text.split("What was compared")[0].replace("2026", ""))


def test_refusals_of_no_unanswerable_question_are_not_a_row_of_n_a(tmp_path, compare):
    """Answer-only logs with abstained: 'correct refusals' read n/a [n/a, n/a] throughout, and
    did not say what would score it; with answerable logged true everywhere, what is missing is
    an unanswerable question."""
    for answerable, hint in ((None, "log answerable"), (True, "no question is unanswerable")):
        paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
        for path, right in zip(paths, (30, 40), strict=True):
            rows = [
                {"question_id": f"q{i}", "correct": i < right, "abstained": i >= 55}
                | ({} if answerable is None else {"answerable": answerable})
                for i in range(60)
            ]
            pd.DataFrame(rows).to_parquet(path)
        compare(*paths, tmp_path / "out")
        text = page_text(tmp_path / "out" / "report.html")
        assert "correct refusals (" + hint in text
        assert "n/a [n/a, n/a]" not in text
        assert "wrong refusals" in text  # its population, the answerable questions, is there


def test_labels_of_two_runs_are_named_beside_a_and_b(tmp_path):
    """--label named the runs in the inputs table only, with a class of the label's words (no
    run colour), and nothing said which one was A."""
    from click.testing import CliRunner

    from reportgen.cli import cli

    sample = Path(__file__).resolve().parent.parent / "sample_runs"
    logs = [sample / "fare_rules_a_baseline.parquet", sample / "fare_rules_b_reranker.parquet"]
    page = tmp_path / "r.html"
    args = ["compare", *map(str, logs), "-o", str(page), "--n-boot", "200"]
    result = CliRunner().invoke(cli, [*args, "--label", "base line", "--label", "<b>new</b>"])
    assert result.exit_code == 0, result.output
    text = page.read_text(encoding="utf-8")
    assert '<span class="run-a">A</span> (base line) ' in text
    assert '<span class="run-b">B</span> (&lt;b&gt;new&lt;/b&gt;) ' in text
    assert '<td class="text"><span class="run-a">A</span> base line</td>' in text
    assert 'class="run-base line"' not in text


@pytest.mark.parametrize("labelled", [True, False], ids=["span labels", "no labels"])
def test_span_logs_are_asked_for_span_columns(tmp_path, compare, labelled):
    """Logs of spans (the chunking pair): the audit and the next experiment asked to "log
    relevant_ids", the definitions named context_ids, and the worked cases' legend explained
    a citation mark no case shows (no cited_ids)."""
    paths = []
    for name in ("manuals_a_chunk400.parquet", "manuals_b_chunk1000.parquet"):
        table = pq.read_table(SAMPLE / name)
        paths.append(tmp_path / name)
        pq.write_table(table if labelled else table.drop_columns(["relevant_spans"]), paths[-1])
    doc = compare(*paths, tmp_path / "out")
    text = page_text(tmp_path / "out" / "report.html")
    assert "relevant_ids" not in text
    assert "what reached the prompt (▸; a line after the last when the prompt is the top of the " \
        "ranking)." in text and "what the answer cites" not in text  # fmt: skip
    prompt = "a relevant passage was in the prompt (context_spans, or the top k retrieved)"
    assert (prompt in text) == labelled
    if not labelled:
        assert "No labels to compare between the runs: log relevant_spans, answerable" in text
        for run in "ab":
            assert doc["next_experiment"][run]["change"].startswith(
                "log relevant_spans so the next report can locate the evidence"
            )
        assert {m["needs"] for m in doc["missing"]} >= {"relevant_spans"}


def test_a_prompt_step_passed_on_says_why(tmp_path, compare):
    """8 of 20 prompts miss their evidence, all 8 answered correctly; 4 hits answered wrongly.
    The walk passed the prompt step (reranking would mend no answer) but the page read "hit@2 =
    0.600 (bar 0.800): no" and went on with no word, under a definition saying it stops there."""
    rows = [
        {
            "question_id": f"q{i}",
            "retrieved_ids": ["x1", "x2", "e"] if i < 8 else ["e", "x1", "x2"],
            "relevant_ids": ["e"],
            "context_ids": ["x1", "x2"] if i < 8 else ["e", "x1"],
            "correct": not 8 <= i < 12,
            "faithfulness": 1.0,
        }
        for i in range(20)
    ]
    path = tmp_path / "a.parquet"
    pd.DataFrame(rows).to_parquet(path)
    compare(path, path, tmp_path / "out")
    text = page_text(tmp_path / "out" / "report.html")
    assert re.search(
        r"hit@2 = 0\.600 \(bar 0\.800\): no ?, passed on: every question whose evidence missed "
        "it was answered correctly",
        text,
    )
    assert (
        "stop at the first link whose share is under 0.8 (a prompt under it where every question "
        "whose evidence missed it was answered correctly is passed on: no answer is lost there)"
    ) in text


def test_the_failure_class_b_moved_is_named_with_its_link(tmp_path, compare):
    """A misses its evidence below the prompt on 3 of 10 questions; B keeps those and answers 2
    more wrongly from the evidence it was given (faithful, on the question): both runs fail
    most often by ranking miss, and the link B moved, the corpus's, had gone unsaid."""

    def question(i: int, ranked_out: bool, stale: bool) -> dict:
        ranking = ["x1", "x2", "e"] if ranked_out else ["e", "x1", "x2"]
        return {
            "question_id": f"q{i}",
            "retrieved_ids": ranking,
            "relevant_ids": ["e"],
            "context_ids": ranking[:2],
            "correct": not (ranked_out or stale),
            "faithfulness": 1.0,
            "answer_relevance": 0.9,
        }

    a = [question(i, i < 3, False) for i in range(10)]
    b = [question(i, i < 3, 3 <= i < 5) for i in range(10)]
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for rows, path in zip((a, b), paths, strict=True):
        pd.DataFrame(rows).to_parquet(path)
    compare(*paths, tmp_path / "out")
    text = page_text(tmp_path / "out" / "report.html")
    assert "Run A fails most often by ranking miss (3 questions)" in text
    assert "Run B fails most often by ranking miss (3 questions)" in text
    assert (
        "From A to B, the failure class that grew most is faithful but wrong (0 to 2 questions, "
        "whose fix belongs to retrieval/corpus)."
    ) in text
    assert "shrank most" not in text
