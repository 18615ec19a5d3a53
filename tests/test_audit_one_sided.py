"""The audit and the fair-comparison checks on logs that measure something in one run, or on
some questions, only: a closed-book baseline, a token count lost to a timeout, a run that sends
no context, an empty prompt, prompts that --k leaves uncompared."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd
import pytest
from test_readers import fail


def _rows(n: int, **extra) -> list[dict]:
    """n questions, each with one relevant passage among three in the prompt."""
    return [
        {
            "question_id": f"q{i}",
            "retrieved_ids": ["p1", "p2", "p3"],
            "relevant_ids": ["p2"],
            "context_ids": ["p1", "p2", "p3"],
            "correct": i % 2 == 0,
            **extra,
        }
        for i in range(n)
    ]


def _run(tmp_path: Path, compare, a: list[dict], b: list[dict], *options) -> dict:
    pd.DataFrame(a).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame(b).to_parquet(tmp_path / "b.parquet")
    return compare(tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "o", *options)


def test_a_closed_book_baseline_has_no_golden_set_to_change(tmp_path, compare):
    # A retrieves and labels; B answers from memory and logs no label: nothing was relabelled,
    # so --strict compares them (compare asserts exit 0)
    a = _rows(6, answerable=True)
    b = [{"question_id": r["question_id"], "correct": not r["correct"]} for r in a]
    out = _run(tmp_path, compare, a, b, "--strict")
    assert out["audit"]["label_changes"] == [] and out["audit"]["labels_compared"] == []
    page = (tmp_path / "o" / "report.html").read_text()
    assert "golden set changed" not in page
    assert "No labels to compare between the runs" in page


def test_sections_needing_labels_ask_them_of_the_run_without_them(tmp_path, compare):
    """A labels its passages, B does not: "log relevant_ids" read as if neither did."""
    a = _rows(6, faithfulness=1.0)
    b = [{k: v for k, v in r.items() if k != "relevant_ids"} for r in a]
    _run(tmp_path, compare, a, b)
    page = (tmp_path / "o" / "report.html").read_text()
    (note,) = re.findall(r"Not scored: [^<]*", page)
    assert f"faithfulness on retrieval hits (log relevant_ids in {tmp_path / 'b.parquet'})" in (
        html.unescape(note)
    )
    assert "(log relevant_ids)" not in html.unescape(note)


def test_answerable_logged_by_one_run_only_is_not_a_changed_label(tmp_path, compare):
    a = _rows(6, answerable=True)
    b = _rows(6)
    b[4] = dict(b[4], relevant_ids=["p3"])  # relabelled in B: the one change
    out = _run(tmp_path, compare, a, b)
    assert out["audit"]["labels_compared"] == ["relevant_ids"]
    assert out["audit"]["label_changes"] == [{"question_id": "q4", "changed": "relevant labels"}]


def _budget(tmp_path: Path, compare, a_tokens: list, b_tokens: list) -> dict:
    a = [dict(r, context_tokens=t) for r, t in zip(_rows(len(a_tokens)), a_tokens, strict=True)]
    b = [dict(r, context_tokens=t) for r, t in zip(_rows(len(b_tokens)), b_tokens, strict=True)]
    return _run(tmp_path, compare, a, b)["fairness"]["context budget"]


@pytest.mark.parametrize("lost", [None, float("inf")])
def test_the_token_budget_is_compared_where_both_runs_measured_it(tmp_path, compare, lost):
    # B sends twice the tokens; one count of B lost (null, or inf from a timeout): the budget
    # is still in tokens, over the 5 questions measured in both, not 3 passages against 3
    budget = _budget(tmp_path, compare, [1000.0] * 6, [lost] + [2000.0] * 5)
    assert budget["numbers"]["unit_tokens"] == 1
    assert (budget["numbers"]["a"], budget["numbers"]["b"]) == (1000.0, 2000.0)
    assert budget["flagged"]
    assert budget["text"] == (
        "Mean context per question: A 1000.0 tokens, B 2000.0 tokens (+100%) over the 5 "
        "questions measured in both; any gain of B may come from its bigger budget, not a "
        "better retriever or generator."
    )


def test_a_run_that_sends_no_context_is_not_within_budget(tmp_path, compare):
    budget = _budget(tmp_path, compare, [0.0] * 6, [500.0] * 6)
    assert budget["flagged"] and budget["numbers"]["relative"] is None
    assert "within" not in budget["text"]
    assert budget["text"].startswith("Mean context per question: A 0.0 tokens, B 500.0 tokens;")


def test_a_smaller_budget_in_b_names_a_as_the_bigger(tmp_path, compare):
    budget = _budget(tmp_path, compare, [1000.0] * 6, [500.0] * 6)
    assert budget["flagged"] and budget["numbers"]["relative"] == pytest.approx(-0.5)
    assert budget["text"].endswith(
        "any gain of A may come from its bigger budget, not a better retriever or generator."
    )


@pytest.mark.parametrize(("b_tokens", "flagged"), [(500.0, False), (2000.0, True)])
def test_the_budget_reads_which_run_is_ahead(tmp_path, compare, b_tokens, flagged):
    """B answers 4 more of 6 questions right: with half A's budget its lead cannot come from a
    bigger budget, and the check said "any gain of A may come from its bigger budget" in Read
    first, beside a verdict that A lost; with twice A's budget it may."""
    a = [dict(r, context_tokens=1000.0, correct=i % 3 == 0) for i, r in enumerate(_rows(6))]
    b = [dict(r, context_tokens=b_tokens, correct=True) for r in _rows(6)]
    out = _run(tmp_path, compare, a, b)
    budget = out["fairness"]["context budget"]
    assert budget["flagged"] is flagged
    assert budget["text"].endswith(
        "any gain of B may come from its bigger budget, not a better retriever or generator."
        if flagged
        else "B is ahead on correct with the smaller budget, so the budget does not explain "
        "B \u2212 A."
    )
    assert any("Mean context per question" in w for w in out["warnings"]) is flagged  # Read first


@pytest.mark.parametrize(
    ("dropped", "credited"),
    [("correct", "a better retriever."), ("retrieved_ids", "a better retriever or generator.")],
)
def test_the_budget_names_what_a_gain_would_credit(tmp_path, compare, dropped, credited):
    # retrieval-only logs credit the retriever; answer-only logs (no ranking scored) still
    # name the retriever, which chose the context, and the generator, whose answers are scored
    a = [dict(r, context_tokens=1000.0) for r in _rows(6)]
    b = [dict(r, context_tokens=2000.0) for r in _rows(6)]
    for row in a + b:
        del row[dropped]
        if dropped == "retrieved_ids":
            del row["relevant_ids"]
    budget = _run(tmp_path, compare, a, b)["fairness"]["context budget"]
    assert budget["text"].endswith(f"its bigger budget, not {credited}")


def test_prompts_of_varying_length_say_how_many_hold_the_named_k(tmp_path, compare):
    """Both runs send the same prompts, 2 to 6 passages, 3 of 10 of 4: the metrics are named
    @4 and each question is scored at its own prompt; the check said only "most often: A 4,
    B 4; they differ on 0 of 10 questions"."""
    ids = ["p1", "p2", "p3", "p4", "p5", "p6"]
    lengths = [2, 2, 4, 3, 4, 4, 5, 5, 6, 6]
    a = [
        dict(r, context_ids=ids[:n], retrieved_ids=ids)
        for r, n in zip(_rows(10), lengths, strict=True)
    ]
    check = _run(tmp_path, compare, a, [dict(r) for r in a])["fairness"]["prompt k"]
    assert not check["flagged"]
    assert check["text"] == (
        "Passages in the prompt, most often: A 4, B 4; they differ on 0 of 10 questions. Prompts "
        "hold 2 to 6 passages, 3 of A's 10 and 3 of B's 10 hold 4: each question's retrieval "
        "metrics score its own prompt, whatever the @4 in their names."
    )
    same = _run(tmp_path, compare, _rows(10), _rows(10))["fairness"]["prompt k"]
    assert (
        same["text"]
        == "Passages in the prompt, most often: A 3, B 3; they differ on 0 of 10 questions."
    )


def test_prompt_sizes_that_differ_on_few_questions_are_counted(tmp_path, compare):
    # one prompt of 300 differs: its share rounds to 0%, the count does not
    a = _rows(300)
    b = [dict(r) for r in a]
    b[7] = dict(b[7], context_ids=["p1", "p2", "p3", "p4"])
    check = _run(tmp_path, compare, a, b, "--n-boot", 200)["fairness"]["prompt k"]
    assert check["flagged"] and check["numbers"]["share_differ"] == pytest.approx(1 / 300)
    assert check["text"] == (
        "Passages in the prompt, most often: A 3, B 3; they differ on 1 of 300 questions. "
        "Retrieval metrics then compare different cutoffs: each run's are scored on its "
        "own prompts, whatever the @3 in their names."
    )


def test_with_k_the_prompts_the_generators_received_are_compared(tmp_path, compare):
    """--k 3 scores the top 3 of both rankings, but the generators received context_ids: A's
    prompt of 2 passages, B's of 6. The budget and the prompt sizes compare those (with --k
    no budget was compared, and B's three times bigger prompt went unflagged)."""
    a = [dict(r, relevant_ids=["p1", "p2", "p3"], context_ids=["p1", "p2"]) for r in _rows(6)]
    b = [dict(r, context_ids=[f"p{i}" for i in range(1, 7)]) for r in a]
    out = _run(tmp_path, compare, a, b, "--k", "3")
    budget = out["fairness"]["context budget"]
    assert (budget["numbers"]["a"], budget["numbers"]["b"]) == (2.0, 6.0) and budget["flagged"]
    assert budget["text"].startswith("Mean context per question: A 2.0 passages, B 6.0 passages")
    sizes = out["fairness"]["prompt k"]
    assert (sizes["numbers"]["a"], sizes["numbers"]["b"]) == (2, 6) and sizes["flagged"]
    assert sizes["text"].endswith(
        "The retrieval metrics score the top 3 of both rankings (--k); the generators received "
        "prompts of other sizes."
    )


def test_a_k_other_than_the_prompts_both_runs_logged_is_flagged(tmp_path, compare):
    """Both runs' prompts hold 3 passages; --k 5 scored the top 5 of the rankings, where B's
    evidence sat at rank 4: hit@5 read B - A 0.000 beside correct -0.5, and the check read
    "they differ on 0 of 6 questions", unflagged."""
    a = _rows(6, correct=True, retrieved_ids=["p2", "p1", "p3", "p4", "p5"])
    b = [dict(r, retrieved_ids=["p1", "p3", "p4", "p2", "p5"]) for r in a]
    for r in b[:3]:
        r.update(context_ids=["p1", "p3", "p4"], correct=False)
    out = _run(tmp_path, compare, a, b, "--k", "5", "--markdown", tmp_path / "o" / "s.md")
    sizes = out["fairness"]["prompt k"]
    assert (sizes["numbers"]["a"], sizes["numbers"]["b"]) == (3, 3) and sizes["flagged"]
    assert sizes["text"] == (
        "Passages in the prompt, most often: A 3, B 3; they differ on 0 of 6 questions. The "
        "retrieval metrics score the top 5 of both rankings (--k); the generators received "
        "prompts of other sizes, so --k 3 would score what they received."
    )
    assert out["metrics"]["hit@5"]["diff"] == 0
    assert sizes["text"].removesuffix(".") in out["warnings"]
    summary = (tmp_path / "o" / "s.md").read_text()
    assert "### Read first" in summary and "so --k 3 would score what they received" in summary
    assert "Read first" not in _run(tmp_path, compare, a, a, "--k", "3")["warnings"]
    assert _run(tmp_path, compare, a, a, "--k", "3")["fairness"]["prompt k"]["flagged"] is False


def test_a_k_tied_for_the_commonest_prompt_size_is_not_flagged(tmp_path, compare):
    """Half the prompts hold 5 passages, half 3, in both runs: --k 5 read "most often: A 3, B
    3 ... so --k 3 would score what they received", wrong for the half that held 5."""
    a = _rows(8, retrieved_ids=["p1", "p2", "p3", "p4", "p5"])
    for r in a[:4]:
        r["context_ids"] = ["p1", "p2", "p3", "p4", "p5"]
    sizes = _run(tmp_path, compare, a, a, "--k", "5")["fairness"]["prompt k"]
    assert not sizes["flagged"]
    assert sizes["text"] == (
        "Passages in the prompt, most often: A 3 or 5, B 3 or 5; they differ on 0 of 8 questions."
    )
    sizes = _run(tmp_path, compare, a, a, "--k", "4")["fairness"]["prompt k"]
    assert sizes["flagged"] and sizes["text"].endswith("received prompts of other sizes.")


def test_a_bigger_prompt_s_gain_is_read_first_in_the_markdown(tmp_path, compare):
    """The rankings are the same; B's prompts hold 10 passages and twice A's tokens, A's 5. B's
    retrieval metrics, named @5, score its 10: a gate's mrr@5 > 0 passed, and the Markdown CI
    posts said nothing of the budget or the cutoffs, which the page's fairness section flagged."""
    ranking = [f"p{i}" for i in range(1, 11)]
    a = _rows(6, retrieved_ids=ranking, relevant_ids=["p7"], context_ids=ranking[:5])
    a = [dict(r, context_tokens=1000.0) for r in a]
    b = [dict(r, context_ids=ranking, context_tokens=2000.0) for r in a]
    md = tmp_path / "o" / "s.md"
    out = _run(tmp_path, compare, a, b, "--markdown", md)
    read_first = md.read_text().split("### Read first")[1].split("###")[0]
    assert "A 1000.0 tokens, B 2000.0 tokens (+100%); any gain of B may come from its bigger " in (
        read_first
    )
    assert "Passages in the prompt, most often: A 5, B 10; they differ on 6 of 6 questions" in (
        read_first
    )
    assert "whatever the @&#8203;5 in their names" in read_first  # no @-mention on GitHub
    assert [w for w in out["warnings"] if w.startswith(("Mean context", "Passages in"))] == [
        out["fairness"][name]["text"].removesuffix(".") for name in ("context budget", "prompt k")
    ]


def test_with_k_and_no_prompt_no_check_asks_for_a_logged_column(tmp_path, compare):
    # neither tokens nor context_ids: no budget; three labels fill the three slots: no ceiling
    rows = [
        {k: v for k, v in dict(r, relevant_ids=["p1", "p2", "p3"]).items() if k != "context_ids"}
        for r in _rows(6)
    ]
    out = _run(tmp_path, compare, rows, rows, "--k", "3")
    assert out["fairness"] == {}
    page = (tmp_path / "o" / "report.html").read_text()
    assert "log context_tokens or context_ids to compare" not in page
    assert (
        "No check applies to these logs: prompts are compared by their tokens (log "
        "context_tokens) or by their passages (log context_ids)"
    ) in page


def test_an_empty_prompt_lowers_the_ceiling_it_is_scored_against(tmp_path, compare):
    # two relevant passages, two slots; B's prompt is empty on 3 of 6 questions, which score 0
    # in its means: B's recall@2 and precision@2 cannot exceed 3/6, A's reach 1
    a = [dict(r, relevant_ids=["p2", "p3"], context_ids=["p1", "p2"]) for r in _rows(6)]
    b = [dict(r, context_ids=[] if i < 3 else r["context_ids"]) for i, r in enumerate(a)]
    out = _run(tmp_path, compare, a, b)
    assert out["metrics"]["recall@2"]["b"] == pytest.approx(0.25)  # 0, 0, 0, 1/2, 1/2, 1/2
    for metric in ("recall", "precision"):
        ceiling = out["fairness"][f"{metric} ceiling"]
        assert (ceiling["numbers"]["a"], ceiling["numbers"]["b"]) == (1.0, 0.5)
        assert ceiling["flagged"] and "may be room, not quality" in ceiling["text"]


def test_a_run_that_sends_no_passage_is_a_prompt_size_and_a_budget(tmp_path, compare):
    """B sends every question an empty prompt and no token count is logged: the prompt-size
    check and the budget in passages were both left out, since B had no passage to count."""
    a = _rows(6)
    b = [dict(r, context_ids=[]) for r in _rows(6)]
    fair = _run(tmp_path, compare, a, b)["fairness"]
    assert fair["prompt k"]["flagged"]
    assert fair["prompt k"]["numbers"] == {"a": 3, "b": 0, "share_differ": 1.0}
    assert fair["prompt k"]["text"].startswith(
        "Passages in the prompt, most often: A 3, B 0; they differ on 6 of 6 questions."
    )
    budget = fair["context budget"]
    assert (budget["numbers"]["a"], budget["numbers"]["b"]) == (3.0, 0.0)
    assert budget["text"].startswith("Mean context per question: A 3.0 passages, B 0.0 passages")


def test_an_empty_prompt_is_no_ceiling_and_k_names_the_run_it_misreads(tmp_path, compare):
    """B sends no passage: its precision ceiling was 0, and the check advised reading the
    metrics "against 0.000, not against 1"; with --k 3, A's prompts hold 3, yet the check said
    "the generators received prompts of other sizes", A's among them."""
    a = _rows(6)
    b = [dict(r, context_ids=[]) for r in _rows(6)]
    fair = _run(tmp_path, compare, a, b)["fairness"]
    assert "precision ceiling" not in fair and "recall ceiling" not in fair
    fair = _run(tmp_path, compare, a, b, "--k", "3")["fairness"]
    assert fair["prompt k"]["text"].endswith(
        "The retrieval metrics score the top 3 of both rankings (--k); run B's generator "
        "received prompts of other sizes."
    )
    # the ceiling of --k is the rankings' own: the same 3 slots in both runs
    assert fair["precision ceiling"]["numbers"]["ceiling"] == pytest.approx(1 / 3)


def test_k_over_prompts_empty_in_both_runs_is_flagged(tmp_path, compare):
    """Both runs send empty prompts and --k 3 scores three passages of each ranking: the check
    was left out (it needed a passage in some prompt), so nothing said so; no --k 0 is advised."""
    runs = [[dict(r, context_ids=[]) for r in _rows(6)] for _ in "ab"]
    sizes = _run(tmp_path, compare, *runs, "--k", "3")["fairness"]["prompt k"]
    assert sizes["flagged"]
    assert sizes["text"] == (
        "Passages in the prompt, most often: A 0, B 0; they differ on 0 of 6 questions. The "
        "retrieval metrics score the top 3 of both rankings (--k); the generators received "
        "prompts of other sizes."
    )


def test_no_check_names_the_columns_the_logs_have_without_asking_for_them(tmp_path, compare):
    """Both runs log context_ids and relevant_ids, every prompt empty: the sentence asked to
    "log context_ids" and "log relevant_ids", which the logs have."""
    runs = [[dict(r, context_ids=[]) for r in _rows(6)] for _ in "ab"]
    assert _run(tmp_path, compare, *runs)["fairness"] == {}
    page = (tmp_path / "o" / "report.html").read_text()
    assert (
        "No check applies to these logs: prompts are compared by their tokens (log "
        "context_tokens) or by their passages (context_ids), which hold none here; the best "
        "score precision@k and recall@k can reach is shown when it is below 1 (relevant_ids "
        "with them)."
    ) in page


def test_prompts_empty_in_both_runs_score_no_retrieval_metric_at_zero(tmp_path, compare):
    """Both runs log rankings and labels but send empty prompts, and no --k is given: every
    retrieval metric was named @0 and read 0.000 in both runs, a comparison of nothing."""
    runs = [[dict(r, context_ids=[]) for r in _rows(6)] for _ in "ab"]
    out = _run(tmp_path, compare, *runs)
    assert list(out["metrics"]) == ["correct"]
    reason = (
        "every prompt is empty (context_ids holds no passage on any question); pass --k N to "
        "score the first N passages of retrieved_ids"
    )
    assert f"Retrieval metrics are not compared: {reason}" in out["warnings"]
    page = (tmp_path / "o" / "report.html").read_text()
    assert f"Retrieval metrics and the metric-vs-k chart: {reason}." in page
    assert "@0" not in page
    # --k scores the rankings, as the sentence says
    scored = _run(tmp_path, compare, *runs, "--k", "2")["metrics"]
    assert scored["hit@2"]["a"] == 1.0 and scored["recall@2"]["b"] == 1.0


def test_prompts_empty_in_both_runs_and_no_answer_score_are_refused(tmp_path):
    runs = [[dict(r, context_ids=[]) for r in _rows(6)] for _ in "ab"]
    for run, name in zip(runs, "ab", strict=True):
        pd.DataFrame(run).drop(columns="correct").to_parquet(tmp_path / f"{name}.parquet")
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    assert fail("compare", a, b, "-o", tmp_path / "r.html") == (
        f"ragreport: error: {a} and {b}: every prompt is empty (context_ids holds no passage on "
        "any question); pass --k N to score the first N passages of retrieved_ids"
    )


def test_a_run_that_sends_no_passage_is_sent_to_fill_its_prompt_not_to_rerank(tmp_path, compare):
    """B ranks the evidence second and sends every question an empty prompt: its next
    experiment was "rerank the top 3 candidates with a cross-encoder", which can move nothing
    into a prompt of no passage."""
    a = _rows(6)
    b = [dict(r, context_ids=[], correct=False) for r in _rows(6)]
    experiment = _run(tmp_path, compare, a, b)["next_experiment"]["b"]
    assert experiment["stage"] == "context assembly"
    assert experiment["change"] == (
        "put the top-ranked passages in the prompt: no prompt of this run holds one, so no "
        "labelled evidence reaches the generator"
    )
    assert experiment["metric"] == "hit@3"
    assert [s["value"] for s in experiment["path"]] == [1.0, 0.0]  # candidates, then the prompt


def test_a_correct_answer_of_an_empty_prompt_is_from_memory_whatever_its_faithfulness(
    tmp_path, compare
):
    """Every prompt of B empty, its correct answers judged faithful: they were "unlabelled
    support", sending the golden set to label a passage of a prompt that held none."""
    a = [dict(r, faithfulness=1.0) for r in _rows(6)]
    b = [dict(r, context_ids=[]) for r in a]
    classes = _run(tmp_path, compare, a, b)["failure_classes"]["b"]
    assert (classes["answered from memory"], classes["unlabelled support"]) == (3, 0)
