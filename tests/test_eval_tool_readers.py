"""RAGAS and promptfoo outputs read as their tools write them, broken versions included."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from test_readers import fail

from reportgen.cli import cli

QUESTIONS = ["How long is the refund window?", "Can I change my flight?", "Is <b>wifi</b> free?"]


def ragas_frame(faithfulness: list[float], with_ids: bool) -> pd.DataFrame:
    """A table shaped like RAGAS' ``EvaluationResult.to_pandas()``."""
    frame = pd.DataFrame(
        {
            "user_input": QUESTIONS,
            "retrieved_contexts": [["Refunds: 30 days.", "Fees"], ["Changes cost 50."], ["x"]],
            "reference_contexts": [["Refunds: 30 days."], ["Changes are free."], ["y"]],
            "response": ["30 days", "Yes, for 50", "Yes"],
            "reference": ["30 days", "Yes, free", "Yes"],
            "faithfulness": faithfulness,
            "answer_relevancy": [0.9, 0.8, 0.7],
            "context_recall": [1.0, 0.0, 0.0],
        }
    )
    if with_ids:
        frame.insert(2, "retrieved_context_ids", [["p1", "p2"], ["p3"], ["p9"]])
        frame.insert(3, "reference_context_ids", [["p1"], ["p4"], ["p8"]])
    return frame


@pytest.mark.parametrize("suffix", ["csv", "jsonl", "parquet"])
def test_ragas_pairs_on_user_input_and_skips_nan_scores(tmp_path, compare, suffix):
    a, b = tmp_path / f"a.{suffix}", tmp_path / f"b.{suffix}"
    frames = {a: ragas_frame([1.0, math.nan, 0.5], True), b: ragas_frame([1.0, 0.25, 1.0], True)}
    for path, frame in frames.items():
        frame = frame.iloc[::-1] if path == b else frame  # B lists the questions in reverse
        if suffix == "csv":
            frame.to_csv(path, index=False)  # lists written as Python's repr, NaN as ""
        elif suffix == "jsonl":
            frame.to_json(path, orient="records", lines=True)  # NaN written as null
        else:
            frame.to_parquet(path)
    out = compare(a, b, tmp_path / "out", "--n-boot", 100)
    faith = out["metrics"]["faithfulness"]
    assert faith["n"] == 2  # the NaN row of A is left out of the comparison
    assert (faith["a"], faith["b"]) == (pytest.approx(0.75), pytest.approx(1.0))
    hit = out["metrics"]["hit@1"]  # k: the commonest prompt size; evidence in the prompt: q1
    assert (hit["a"], hit["b"], hit["n"]) == (pytest.approx(1 / 3), pytest.approx(1 / 3), 3)
    warnings = " ".join(out["warnings"])
    assert "Run A: Questions paired on a hash of user_input" in warnings
    assert "Run A: 1 row has no faithfulness (NaN: the RAGAS metric failed)" in warnings


def test_ragas_csv_with_nan_written_as_text(tmp_path, compare):
    path = tmp_path / "ragas.csv"  # polars, or pandas with na_rep="NaN", write NaN so
    ragas_frame([1.0, math.nan, 0.5], True).to_csv(path, index=False, na_rep="NaN")
    out = compare(path, path, tmp_path / "out", "--n-boot", 100)
    faith = out["metrics"]["faithfulness"]
    assert (faith["a"], faith["n"]) == (0.75, 2)
    assert "Run A: 1 row has no faithfulness (NaN: the RAGAS metric failed)" in out["warnings"]


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_ragas_other_scores_that_failed_are_counted(tmp_path, compare, suffix):
    a, b = tmp_path / f"a.{suffix}", tmp_path / f"b.{suffix}"
    for path, recall in ((a, [1.0, math.nan, 0.0]), (b, [1.0, 1.0, 1.0])):
        frame = ragas_frame([1.0, 1.0, 1.0], True).assign(context_recall=recall)
        frame.to_csv(path, index=False) if suffix == "csv" else frame.to_parquet(path)
    out = compare(a, b, tmp_path / "out", "--n-boot", 100)
    recall = out["metrics"]["context_recall"]
    assert (recall["a"], recall["b"], recall["n"]) == (0.5, 1.0, 2)  # q2 left out
    assert "Run A: 1 row has no context_recall (NaN: the RAGAS metric failed)" in out["warnings"]
    assert not any("Run B: " in w and "have no" in w for w in out["warnings"])


def test_ragas_without_context_ids_hashes_texts(tmp_path, compare):
    path = tmp_path / "ragas.csv"
    ragas_frame([1.0, 1.0, 1.0], False).to_csv(path, index=False)
    out = compare(path, path, tmp_path / "out", "--n-boot", 100)
    # the reference text of q1 is its first retrieved text: recall 1; q2 and q3 miss
    assert out["metrics"]["recall@1"]["a"] == pytest.approx(1 / 3)
    assert any("a passage is identified by a hash of its text" in w for w in out["warnings"])


@pytest.mark.parametrize("dropped", ["reference_context_ids", "retrieved_context_ids"])
def test_ragas_ids_on_one_side_only_give_way_to_texts(tmp_path, compare, dropped):
    path = tmp_path / "ragas.csv"
    ragas_frame([1.0, 1.0, 1.0], True).drop(columns=[dropped]).to_csv(path, index=False)
    out = compare(path, path, tmp_path / "out", "--n-boot", 100)
    # as from the texts alone: q1's reference text is its first retrieved text (ids on one side
    # and hashed texts on the other would never match: every metric 0)
    assert out["metrics"]["recall@1"]["a"] == pytest.approx(1 / 3)
    kept = ({"reference_context_ids", "retrieved_context_ids"} - {dropped}).pop()
    assert (
        f"Run A: {kept} not used: {dropped} is missing, so passages are identified by a hash "
        "of their text on both sides"
    ) in out["warnings"]


def test_ragas_duplicate_question_is_refused(tmp_path):
    path = tmp_path / "ragas.csv"
    frame = ragas_frame([1.0, 1.0, 1.0], True)
    pd.concat([frame, frame.iloc[[0]]]).to_csv(path, index=False)
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert f"{path}: lines 2 and 5 have the same user_input" in line


@pytest.mark.parametrize("suffix", ["csv", "jsonl", "parquet"])
def test_ragas_row_without_a_question_is_named(tmp_path, suffix):
    path = tmp_path / f"ragas.{suffix}"
    frame = ragas_frame([1.0, 1.0, 1.0], True)
    frame.loc[1, "user_input"] = None
    frame.loc[2, "user_input"] = None  # two missing questions are no repeated question
    if suffix == "csv":
        frame.to_csv(path, index=False)
    elif suffix == "jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path)
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    # the header is line 1 of a CSV; a Parquet file has rows, not lines
    where = {"csv": "line 3", "jsonl": "line 2", "parquet": "row 2"}[suffix]
    assert line.endswith(
        f"{path}: {where} has no user_input; RAGAS rows are paired on the question text, "
        "so give every row its question"
    )


def test_ragas_csv_with_the_index_pandas_writes(tmp_path, compare):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    ragas_frame([1.0, 0.5, 0.5], True).to_csv(a)  # to_csv's default: the index, header ""
    ragas_frame([1.0, 1.0, 0.5], True).to_csv(b)
    out = compare(a, b, tmp_path / "out", "--n-boot", 100)
    assert list(out["scores"]) == ["answer_relevance", "context_recall"]  # the index is no score
    assert out["metrics"]["faithfulness"]["b"] == pytest.approx(2.5 / 3)


def result(provider: str, description: str, test_idx: int, success: bool, **extra) -> dict:
    """One entry of promptfoo's ``results.results``, as ``promptfoo eval -o out.json`` writes."""
    return {
        "provider": {"id": provider, "label": ""},
        "prompt": {"raw": "Answer: {{question}}", "label": "qa"},
        "promptIdx": 0,
        "testIdx": test_idx,
        "testCase": {"description": description, "vars": {"question": description + "?"}},
        "vars": {"question": description + "?"},
        "response": {"output": f"answer to {description}", "tokenUsage": {"total": 10}},
        "success": success,
        "score": 1.0 if success else 0.0,
        "namedScores": {"accuracy": 1.0 if success else 0.0},
        "latencyMs": 100 + test_idx,
        "cost": 0.001,
        "error": None,
        "gradingResult": {"pass": success, "score": 1.0 if success else 0.0},
        **extra,
    }


def promptfoo_file(path, results: list[dict]):
    path.write_text(
        json.dumps(
            {
                "evalId": "eval-2024-01-01",
                "results": {"version": 3, "timestamp": "2024-01-01", "results": results},
                "config": {},
                "shareableUrl": None,
            }
        )
    )
    return path


def test_promptfoo_runs_of_one_file_paired_on_test_description(tmp_path, compare):
    path = promptfoo_file(
        tmp_path / "out.json",
        [
            result("openai:gpt-4o-mini", "refund", 0, True),
            result("openai:gpt-4o-mini", "change", 1, False),
            result("openai:gpt-4o-mini", "wifi", 2, False),
            # the second provider ran the tests in another order (testIdx differs)
            result("anthropic:claude", "wifi", 0, True),
            result("anthropic:claude", "refund", 1, True),
            result("anthropic:claude", "change", 2, False, error="timeout", response=None),
        ],
    )
    line = fail("compare", path, path, "-o", tmp_path / "r.html")
    assert line.endswith(
        f"{path}: holds 2 runs (openai:gpt-4o-mini | qa; anthropic:claude | qa); choose one "
        "with --run-filter, or give the file alone to compare them all"
    )
    out = compare(
        path, path, tmp_path / "o", "--run-filter", "openai:gpt-4o-mini",
        "--run-filter", "anthropic:claude", "--n-boot", 100,
    )  # fmt: skip
    correct = out["metrics"]["correct"]
    assert (correct["a"], correct["b"], correct["fixed"], correct["broken"]) == (
        pytest.approx(1 / 3), pytest.approx(2 / 3), 1, 0,
    )  # fmt: skip
    assert any("Run B: 1 result ended in an error" in w for w in out["warnings"])
    line = fail("compare", path, path, "-o", tmp_path / "r.html", "--run-filter", "qa")
    assert "--run-filter 'qa' matches 2 of the runs in the file" in line


THREE_PROVIDERS = [
    result("openai:gpt-4o-mini", "refund", 0, True),
    result("openai:gpt-4o-mini", "change", 1, False),
    result("openai:gpt-4o-mini", "wifi", 2, False),
    result("openai:gpt-4o-mini", "seat", 3, True),
    # the other providers ran the tests in other orders (testIdx differs)
    result("anthropic:claude", "wifi", 0, True),
    result("anthropic:claude", "refund", 1, True),
    result("anthropic:claude", "seat", 2, True),
    result("anthropic:claude", "change", 3, False, error="timeout", response=None),
    result("mistral:large", "seat", 0, False),
    result("mistral:large", "change", 1, True),
    result("mistral:large", "refund", 2, True),
    result("mistral:large", "wifi", 3, False),
]


def run_json(*args: object) -> dict:
    out = Path(str(args[args.index("-o") + 1]))
    outcome = CliRunner().invoke(cli, ["compare", *(str(a) for a in args)])
    assert outcome.exit_code == 0, outcome.output
    return json.loads(out.with_suffix(".json").read_text())


def test_one_promptfoo_file_of_several_providers_is_a_comparison_of_them_all(tmp_path):
    path = promptfoo_file(tmp_path / "out.json", THREE_PROVIDERS)
    doc = run_json(path, "-o", tmp_path / "r.html", "--n-boot", 100)
    labels = ["openai:gpt-4o-mini", "anthropic:claude", "mistral:large"]
    assert [r["label"] for r in doc["runs"]] == labels  # the file's order, the first the baseline
    assert [r["read"]["run_filter"] for r in doc["runs"]] == [f"{x} | qa" for x in labels]
    assert doc["baseline"] == "openai:gpt-4o-mini" and doc["n_paired"] == 4
    # paired on the test case, not testIdx: refund, change, wifi, seat as each provider answered
    # them: openai 1 0 0 1, claude 1 0 1 1 (change ended in an error: not correct), mistral 1 1 0 0
    claude, mistral = (c["metrics"]["correct"] for c in doc["comparisons"])
    assert (claude["a"], claude["b"], claude["fixed"], claude["broken"]) == (0.5, 0.75, 1, 0)
    assert (mistral["a"], mistral["b"], mistral["fixed"], mistral["broken"]) == (0.5, 0.5, 1, 1)
    chosen = run_json(
        path, "-o", tmp_path / "b.html", "--baseline", "mistral:large", "--n-boot", 100
    )
    assert [r["label"] for r in chosen["runs"]] == [labels[2], labels[0], labels[1]]
    own = run_json(path, "-o", tmp_path / "l.html", "--label", "x", "--label", "y", "--label", "z",
                   "--n-boot", 100)  # fmt: skip
    assert [r["label"] for r in own["runs"]] == ["x", "y", "z"]


def test_one_promptfoo_file_of_several_prompts_is_labelled_by_prompt(tmp_path):
    prompts = [
        dict(row, prompt={"raw": raw, "label": label}, provider={"id": "openai:gpt-4o"})
        for label, raw in (("terse", "Answer: {{question}}"), ("cited", "Cite: {{question}}"))
        for row in THREE_PROVIDERS[:4]
    ]
    doc = run_json(promptfoo_file(tmp_path / "out.json", prompts), "-o", tmp_path / "r.html",
                   "--n-boot", 100)  # fmt: skip
    assert [r["label"] for r in doc["runs"]] == ["terse", "cited"]


def test_run_filter_still_picks_one_run_of_a_file(tmp_path):
    path = promptfoo_file(tmp_path / "out.json", THREE_PROVIDERS)
    line = fail("compare", path, "-o", tmp_path / "r.html", "--run-filter", "mistral:large")
    assert line.endswith("give a baseline log and at least one candidate log")
    line = fail("compare", path, "-o", tmp_path / "r.html", "--baseline", "nope")
    assert "--baseline nope: no run has that label; name one of openai:gpt-4o-mini" in line


def test_promptfoo_without_description_pairs_on_vars(tmp_path, compare):
    rows = [result("p", "refund", 0, True), result("p", "change", 1, True)]
    for row in rows:
        del row["testCase"]["description"]
    a = promptfoo_file(tmp_path / "a.json", rows)
    b = promptfoo_file(tmp_path / "b.json", [dict(rows[1], success=False), rows[0]])
    out = compare(a, b, tmp_path / "o", "--n-boot", 100)
    assert out["metrics"]["correct"]["broken"] == 1
    assert out["per_question"][0]["question_id"].startswith("vars-")
    older = tmp_path / "older.json"  # older promptfoo versions: results as a top-level list
    older.write_text(json.dumps({"version": 2, "results": rows}))
    assert compare(older, a, tmp_path / "o2", "--n-boot", 100)["metrics"]["correct"]["n"] == 2
    dup = promptfoo_file(tmp_path / "dup.json", [rows[0], rows[0]])
    line = fail("compare", dup, dup, "-o", tmp_path / "r.html")
    # the same vars twice: one test run twice, as promptfoo eval --repeat 2 writes it
    assert (
        "has 2 results with the same vars in run 'p | qa', as `promptfoo eval --repeat 2`" in line
    )


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_ragas_table_of_before_0_2_is_read_as_one_of_today(tmp_path, compare, suffix):
    """RAGAS before 0.2 named its columns question, answer, contexts, ground_truth: such a
    table was refused and sent to --map, which then applied to both logs, so a pair of an
    older and a newer table could not be compared at all. It is read under today's names."""
    new = ragas_frame([1.0, 0.5, 0.25], False).drop(columns="reference_contexts")
    renamed = {"user_input": "question", "response": "answer", "retrieved_contexts": "contexts"}
    old = new.rename(columns={**renamed, "reference": "ground_truth"})
    old["faithfulness"] = [1.0, 0.25, 0.0]
    paths = {}
    for name, frame in (("new", new), ("old", old)):
        paths[name] = tmp_path / f"{name}.{suffix}"
        getattr(frame, "to_csv" if suffix == "csv" else "to_parquet")(paths[name], index=False)
    out = compare(paths["old"], paths["new"], tmp_path / "o", "--n-boot", 100)
    faithfulness = out["metrics"]["faithfulness"]
    assert (faithfulness["a"], faithfulness["b"]) == (
        pytest.approx(1.25 / 3),
        pytest.approx(1.75 / 3),
    )
    assert faithfulness["n"] == 3  # paired on the question texts across the two namings
    assert {
        "Run A: Columns named as RAGAS before 0.2 (question, answer, contexts, ground_truth) read "
        "as user_input, response, retrieved_contexts, reference",
        "Run A: contexts are texts: a passage is identified by a hash of its text",
        "Run A: Questions paired on a hash of question (RAGAS rows carry no id)",
    } <= set(out["warnings"])
    maps = ("--map", "user_input=question", "--map", "response=answer",
            "--map", "retrieved_contexts=contexts", "--map", "reference=ground_truth")  # fmt: skip
    mapped = compare(paths["old"], paths["old"], tmp_path / "m", "--n-boot", 100, "--format",
                     "ragas", *maps)  # fmt: skip
    plain = compare(paths["old"], paths["old"], tmp_path / "p", "--n-boot", 100)
    assert mapped["metrics"] == plain["metrics"] and "faithfulness" in plain["metrics"]


def test_what_a_tool_s_runs_lack_is_said_in_the_tool_s_words(tmp_path, compare):
    """ "Retrieval metrics: log relevant_ids with context_ids" told a RAGAS user about columns
    RAGAS does not write; the page says which RAGAS column, promptfoo test var or --map would
    give the section, that a TREC run holds no answers, and keeps the run log's words when the
    runs come from different tools."""
    from test_diag_pages import page_text

    ragas = tmp_path / "ragas.csv"
    ragas_frame([1.0, 0.5, 0.25], False).drop(columns="reference_contexts").to_csv(ragas)
    compare(ragas, ragas, tmp_path / "r")
    text = page_text(tmp_path / "r" / "report.html")
    assert "Retrieval metrics: add reference_context_ids (or reference_contexts)." in text
    assert "Answer correctness and the retrieval-by-answer table: add a column as correct " \
        "(--map correct=COLUMN)." in text  # fmt: skip
    assert "judge agreement (add a column as human_correct (--map human_correct=COLUMN) and a " \
        "column as human_faithful (--map human_faithful=COLUMN))" in text  # fmt: skip
    assert "log relevant_ids" not in text and "log correct" not in text
    unretrieved = tmp_path / "unretrieved.parquet"
    frame = ragas_frame([1.0, 0.5, 0.25], False)
    frame.loc[1, "retrieved_contexts"] = None
    frame.to_parquet(unretrieved)
    warnings = compare(unretrieved, unretrieved, tmp_path / "u")["warnings"]
    assert (
        "1 paired question has context_ids null in one run or both, so its retrieval metrics are "
        "unknown and left out; add retrieved_context_ids (or retrieved_contexts) for every "
        "question (an empty list when there was none)"
    ) in warnings

    rows = [result("openai:gpt-4o", f"case {i}", i, i % 2 == 0) for i in range(4)]
    promptfoo = promptfoo_file(tmp_path / "out.json", rows)
    compare(promptfoo, promptfoo, tmp_path / "p")
    text = page_text(tmp_path / "p" / "report.html")
    assert "Retrieval metrics: give each test the vars relevant_ids and context_ids." in text
    # faithfulness judges each answer: a var holds one value for every provider, B - A 0
    assert "Faithfulness: score each answer with an assertion and pass --map " \
        "faithfulness=score_NAME (this file's: score_accuracy)." in text  # fmt: skip
    assert "judge agreement (log human_correct and human_faithful in a run log: promptfoo's " \
        "output holds none)" in text  # fmt: skip
    assert "give each test the var faithfulness" not in text
    assert "log faithfulness" not in text

    run, qrels = tmp_path / "a.run", tmp_path / "qrels"
    run.write_text("".join(f"q{q} Q0 d{d} {d} {9 - d} r\n" for q in range(4) for d in range(3)))
    qrels.write_text("".join(f"q{q} 0 d{q % 3} 1\n" for q in range(4)))
    compare(run, run, tmp_path / "t", "--qrels", qrels, "--k", 2)
    text = page_text(tmp_path / "t" / "report.html")
    # the reason alone read "To see this table, a TREC run holds rankings only."
    since = "in a run log converted from the run, since a TREC run holds rankings only"
    assert f"Faithfulness: log faithfulness {since}." in text
    assert f"cells (log correct {since})" in text
    assert f"To see this table, log correct {since}." in text
    assert f"To see which questions a difference comes from, log slice {since}." in text

    log = tmp_path / "log.parquet"
    pd.DataFrame({"question_id": [f"q{q}" for q in range(4)],
                  "retrieved_ids": [["d0", "d1"]] * 4,
                  "relevant_ids": [[f"d{q % 3}"] for q in range(4)]}).to_parquet(log)  # fmt: skip
    compare(run, log, tmp_path / "m", "--qrels", qrels, "--k", 2, "--format", "trec",
            "--format", "parquet")  # fmt: skip
    text = page_text(tmp_path / "m" / "report.html")
    assert "Faithfulness: log faithfulness." in text and "rankings only" not in text
