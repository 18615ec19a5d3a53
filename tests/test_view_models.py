"""What the templates receive: named dataclasses (no positional tuples), and the numbers that
are rules quoted from their constants, not retyped."""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from reportgen.analysis.metrics import Options
from reportgen.comparison.study import run_study
from reportgen.reporters.html import context, diagnosis_view, samples_view, study_view

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs"
VIEWS = (context, diagnosis_view, samples_view, study_view)


def _classes() -> list[type]:
    return [
        obj
        for module in VIEWS
        for obj in vars(module).values()
        if dataclasses.is_dataclass(obj) and obj.__module__ == module.__name__
    ]


def _has_tuple(hint: object) -> bool:
    if typing.get_origin(hint) is tuple or hint is tuple:
        return True
    return any(_has_tuple(arg) for arg in typing.get_args(hint))


@pytest.mark.parametrize("cls", _classes(), ids=lambda c: c.__name__)
def test_view_models_are_frozen_and_name_every_field(cls):
    assert cls.__dataclass_params__.frozen
    hints = typing.get_type_hints(cls)
    positional = [f.name for f in dataclasses.fields(cls) if _has_tuple(hints[f.name])]
    assert not positional, f"{cls.__name__}: tuples in {positional}; give them a dataclass"


def test_templates_unpack_no_tuples():
    unpacking = re.compile(r"{%-?\s*for\s+\w+\s*,")
    found = [
        path.name
        for path in (ROOT / "templates").glob("*.html")
        if unpacking.search(path.read_text(encoding="utf-8"))
    ]
    assert not found


@pytest.fixture(scope="module")
def pair():
    logs = [SAMPLE / "fare_rules_a_baseline.parquet", SAMPLE / "fare_rules_b_reranker.parquet"]
    return run_study(logs, Options(n_boot=200)).pairs[0]


@pytest.mark.parametrize(
    ("constant", "value", "term", "quoted"),
    [
        ("SMALL_SLICE", 17, "Slices", "Under 17 questions: a direction, not proof, whatever"),
        ("STUDENTIZED_BELOW", 2500, "Interval", "where under 2,500 questions changed (B \u2212 A"),
        ("STUDENTIZED_BELOW", 2500, "Test", "from 2,500 changed, the paired permutation"),
        ("POWER", 0.9, "How much the set can tell", "(found 90% of the time)"),
        ("CEILING_GAP", 0.03, "Fair comparison", "more than 0.03 apart"),
        ("LOW_CEILING", 0.4, "Fair comparison", "one is under 0.4."),
        ("BUDGET_TOLERANCE", 0.2, "Fair comparison", "flagged past 20% apart"),
        ("TARGET", 0.7, "Next experiment", "the first link whose share is under 0.7 ("),
        ("OFF_QUESTION_BELOW", 0.4, "Failure classes", "answer relevance below 0.4: off-question"),
        ("MAX_JUDGE_GAP", 0.2, "Judge agreement", "differ by more than 0.2."),
    ],
)
def test_definitions_quote_the_rules_constants(monkeypatch, pair, constant, value, term, quoted):
    """Changing a rule's constant changes its definition: the text is not retyped."""
    monkeypatch.setattr(context, constant, value)
    text = dict(context.definitions(pair))[term]
    assert quoted in text


def test_pairing_definition_counts_wins_in_the_better_direction(pair):
    """Wins and fixed are oriented (scores.oriented): the definition must say so, or it is false
    for a lower-is-better metric, whose win is B below A."""
    text = dict(context.definitions(pair))["Pairing"]
    assert "B better than, worse than, equal to A" in text
    assert "below for a metric where lower is better" in text


def test_the_definitions_say_an_abstention_is_classed_without_a_verdict(pair):
    """An abstained answer whose correct is null is a wrong abstention (ok on an unanswerable
    question) and a failed answer in its 2x2 cell, as the code means it; the definitions said
    an answer without a verdict gets no class, and counted none of them."""
    text = dict(context.definitions(pair))
    assert text["Failure classes"].endswith(
        "An answer without a correct verdict gets no class, unless it abstained: the abstention "
        "decides its class, with or without one."
    )
    assert "abstained" in text["Failure classes"].split(";")[0]
    assert "an abstention, judged or not, is no good answer" in text["Retrieval-by-answer"]


def test_a_cost_is_named_once_with_its_unit(pair):
    """The cost table read "latency ms (ms)", "cost usd (USD)" and "context tokens (tokens)"."""
    rows = diagnosis_view._cost(pair)
    assert [r.name for r in rows] == ["latency (ms)", "cost (USD)", "context tokens"]
    cost = {column: change.comparison for column, change in pair.diagnosis.cost.items()}
    assert [r.a for r in rows] == [
        f"{cost['latency_ms'].a:.1f}",
        f"{cost['cost_usd'].a:.5f}",
        f"{cost['context_tokens'].a:.1f}",
    ]


def test_a_cost_change_from_a_mean_of_zero_has_no_share():
    """(B - A) / A is undefined at A = 0: the cost table says why, not "n/a%"."""
    assert diagnosis_view._relative(float("nan")) == "n/a (A is 0)"
    assert diagnosis_view._relative(37.4) == "+37%"


_RANKING = ("retrieved_ids", "relevant_grades", "cited_ids")
# the prompt step without candidates logged, which cannot place its misses on one link
_UNPLACED = (
    "hit@k; with no candidates logged to place its misses on the retrieval, the ranking or the "
    "context assembly, its step is to log retrieved_ids"
)
# a prompt under its bar whose misses cost no answer is passed on (where answers are judged)
_PASSED_ON = (
    " (a prompt under it where every question whose evidence missed it was answered correctly "
    "is passed on: no answer is lost there)"
)


@pytest.mark.parametrize(
    ("dropped", "walk"),
    [
        (
            (),
            "the share of questions whose evidence reached the candidates (hit at the ranking's "
            "full depth), then the prompt (hit@k; the context assembly's experiment, not the "
            "ranking's, where most prompts that missed their evidence had it ranked within their "
            "length), then of the hits the share answered correctly and with support, then of "
            "the unanswerable questions, if any, the share refused or answered correctly.",
        ),
        (
            _RANKING,
            f"the share of questions whose evidence reached the prompt ({_UNPLACED}), then of the "
            "hits the share answered correctly and with support, then of the unanswerable "
            "questions, if any, the share refused or answered correctly.",
        ),
        (
            (*_RANKING, "faithfulness"),
            f"the share of questions whose evidence reached the prompt ({_UNPLACED}), then of the "
            "hits the share answered correctly, then of the unanswerable questions, if any, the "
            "share refused or answered correctly.",
        ),
        (
            (*_RANKING, "relevant_ids", "context_ids"),
            "the share of the answerable questions answered correctly and with support, then of "
            "the unanswerable questions, if any, the share refused or answered correctly.",
        ),
        (
            ("correct", "faithfulness", "human_correct", "human_faithful", "answer_relevance"),
            "the share of questions whose evidence reached the candidates (hit at the ranking's "
            "full depth), then the prompt (hit@k; the context assembly's experiment, not the "
            "ranking's, where most prompts that missed their evidence had it ranked within their "
            "length). The answers are not judged without correct: past the prompt no experiment "
            "is proposed.",
        ),
    ],
    ids=["ranking", "prompt", "prompt, no faithfulness", "answers", "no correct"],
)
def test_the_next_experiment_definition_walks_the_links_the_logs_have(tmp_path, dropped, walk):
    """The definition spoke of candidates and hits for answer-only logs, and of support where
    no faithfulness is logged: it names the links the walk takes in this report, from the first
    the logs allow."""
    logs = []
    for name in ("fare_rules_a_baseline", "fare_rules_b_reranker"):
        table = pq.read_table(SAMPLE / f"{name}.parquet")
        logs.append(tmp_path / f"{name}.parquet")
        pq.write_table(table.drop_columns(list(dropped)), logs[-1])
    text = dict(context.definitions(run_study(logs, Options(n_boot=200)).pairs[0]))
    passed_on = _PASSED_ON if "correct" not in dropped and "context_ids" not in dropped else ""
    assert text["Next experiment"].startswith(
        f"Walk the chain and stop at the first link whose share is under 0.8{passed_on}: {walk}"
    )
    hit = "Hit, not recall: one passage that answers the question is all an answer needs."
    assert text["Next experiment"].endswith(hit) == ("relevant_ids" not in dropped)


@pytest.mark.parametrize(
    ("dropped", "handled"),
    [((), "refused or answered correctly"), (("abstained",), "answered correctly")],
    ids=["abstained", "no abstained"],
)
def test_a_set_of_unanswerable_questions_is_defined_without_hits(tmp_path, dropped, handled):
    """A set whose every question is unanswerable walks from the unanswerable questions: its
    definition spoke of hits (no passage answers such a question), and of refusals where no
    run logs them."""
    logs = []
    for name in ("fare_rules_a_baseline", "fare_rules_b_reranker"):
        table = pq.read_table(SAMPLE / f"{name}.parquet").drop_columns(list(dropped))
        logs.append(tmp_path / f"{name}.parquet")
        pq.write_table(table.filter(pc.invert(table["answerable"])), logs[-1])
    text = dict(context.definitions(run_study(logs, Options(n_boot=200)).pairs[0]))
    assert text["Next experiment"] == (
        "Walk the chain and stop at the first link whose share is under 0.8: the share of the "
        f"unanswerable questions {handled}. If every link holds, the weakest slice of 10 or more "
        "judged questions with a wrong answer; without one, the last link again; when no answer "
        "fails, add harder questions to the golden set."
    )


@pytest.mark.parametrize(
    ("cutoff", "scored"),
    [
        (
            None,
            "Retrieval is scored at the passages the generator received: each question's own "
            "context_spans, k = its length",
        ),
        (3, "Retrieval is scored at k = 3 (--k): the first 3 passages of retrieved_spans. "),
    ],
)
def test_the_prompt_cutoff_of_a_span_log_names_its_own_columns(cutoff, scored):
    """The chunking pair logs no context_ids and no relevant_ids: the definition named them.
    With --k it says the cutoff alone: "at the passages the generator received" was false of
    --k 1 beside prompts of 8 passages, where the prompt-size check said so."""
    logs = [SAMPLE / f"manuals_{c}.parquet" for c in ("a_chunk400", "b_chunk1000")]
    pair = run_study(logs, Options(n_boot=200, cutoff=cutoff)).pairs[0]
    text = dict(context.definitions(pair))["Prompt cutoff"]
    assert text.startswith(scored)
    assert ("generator received" in text) == (cutoff is None)
    assert "rel = labelled spans of grade > 0;" in text and "context_ids" not in text


def test_a_log_of_no_link_to_walk_has_no_next_experiment_definition(tmp_path):
    """A log of faithfulness alone walks no link (no ranking, no prompt, no correct): the
    definitions are made without one, not refused."""
    logs = []
    for name in ("fare_rules_a_baseline", "fare_rules_b_reranker"):
        logs.append(tmp_path / f"{name}.parquet")
        table = pq.read_table(SAMPLE / f"{name}.parquet").select(["question_id", "faithfulness"])
        pq.write_table(table, logs[-1])
    text = dict(context.definitions(run_study(logs, Options(n_boot=200)).pairs[0]))
    assert "Next experiment" not in text


@pytest.mark.parametrize(
    ("cutoff", "named"), [(None, "hit@k;"), (3, "hit@k, or hit@context where")]
)
def test_the_walk_s_prompt_share_is_defined_by_the_names_its_steps_read(cutoff, named):
    """With --k 3 and context_ids logged, the walk's step read "hit@context = 0.748", a name
    the definitions never gave: they said hit@k alone."""
    logs = [
        SAMPLE / f"{name}.parquet" for name in ("fare_rules_a_baseline", "fare_rules_b_reranker")
    ]
    pair = run_study(logs, Options(n_boot=200, cutoff=cutoff)).pairs[0]
    steps = {s.metric for e in pair.diagnosis.next_experiment.values() if e for s in e.path}
    assert ("hit@context" in steps) == (cutoff is not None)
    walk = dict(context.definitions(pair))["Next experiment"]
    assert f"then the prompt ({named}" in walk


def test_no_definition_of_a_span_report_names_the_id_columns():
    """The chunking pair logs spans: the failure classes' definition said "no candidates logged
    (retrieved_ids)", and a prompt miss's step "log retrieved_ids", columns a span log has no
    use for."""
    logs = [SAMPLE / f"manuals_{c}.parquet" for c in ("a_chunk400", "b_chunk1000")]
    pair = run_study(logs, Options(n_boot=200)).pairs[0]
    text = dict(context.definitions(pair))
    assert "no candidates logged (retrieved_spans) to look in" in text["Failure classes"]
    named = [title for title, said in text.items() if "_ids" in said]
    assert named == []
