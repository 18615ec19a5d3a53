"""``compare`` of the per-question tables ``ragreport metrics`` wrote: the same report as of the
run logs they were scored from (the logs' report is the oracle), but for what only the logs'
rows give, which the report names; and one-line refusals where a table cannot serve."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from conftest import two_run_view
from test_eval_tool_readers import ragas_frame
from test_readers import fail

import reportgen
from reportgen.cli import cli
from reportgen.inputs.scored_table import LOG_KEY

SAMPLES = Path(__file__).resolve().parent.parent / "sample_runs"
RUNS = ("fare_rules_a_baseline", "fare_rules_b_reranker", "fare_rules_c_prompt")
# What only the logs' rows give: the curve and what the diagnosis reads of it (the next
# experiment's depth), the data checks; the warnings gain the note that names them.
LOGS_ONLY = ("metric_curve", "next_experiment", "audit", "warnings", "samples")
NOTE = (
    "Compared from per-question tables (ragreport metrics), which do not carry the question "
    "texts, the worked cases, the data checks, unjudged@k and the metric-vs-k curve: compare "
    "the run logs for them"
)


def invoke(*args: object) -> None:
    outcome = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert outcome.exit_code in (0, 1), outcome.output


def scored(log: Path, out: Path, *options: object) -> Path:
    invoke("metrics", log, "-o", out, *options)
    return out


def report(folder: Path, inputs: list[Path], *options: object) -> dict:
    folder.mkdir()
    labels = [a for i in range(len(inputs)) for a in ("--label", "ABC"[i])]
    invoke("compare", *inputs, "-o", folder / "r.html", "--json", folder / "r.json", *labels,
           *options)  # fmt: skip
    return json.loads((folder / "r.json").read_text())


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("tables")
    return {run: scored(SAMPLES / f"{run}.parquet", folder / f"{run}.parquet") for run in RUNS}


def without(document: dict, keys: tuple[str, ...]) -> dict:
    """The JSON with ``keys`` left out of each comparison, and of the report the runs (paths and
    hashes differ) and the id."""
    out = {k: v for k, v in document.items() if k not in ("runs", "run_id", "tool", "warnings")}
    out["comparisons"] = [
        {k: v for k, v in c.items() if k not in keys} for c in document["comparisons"]
    ]
    return out


def test_tables_give_the_logs_report(tmp_path, tables):
    options = ("--require", "correct >= -0.02", "--require", "ndcg@5 >= 0", "--slice", "slice")
    logs = report(tmp_path / "logs", [SAMPLES / f"{r}.parquet" for r in RUNS[:2]], *options)
    got = report(tmp_path / "tables", [tables[r] for r in RUNS[:2]], *options)
    assert without(got, LOGS_ONLY) == without(logs, LOGS_ONLY)
    pair, logged = two_run_view(got), two_run_view(logs)
    assert pair["metrics"]["correct"]["fixed"] == 32 and pair["metrics"]["correct"]["broken"] == 10
    # the golden set changed on 3 questions: told by the tables' label keys as by the labels
    assert pair["audit"]["label_changes"] == logged["audit"]["label_changes"]
    assert len(pair["audit"]["label_changes"]) == 3
    assert pair["audit"]["smells"] == {} and logged["audit"]["smells"]
    assert pair["metric_curve"] is None
    assert pair["warnings"] == [NOTE, *logged["warnings"]]
    assert [r["scored"] for r in got["runs"]] == [True, True]
    assert [r["scored"] for r in logs["runs"]] == [False, False]
    # labels of their own, not read from qrels: no level to state
    assert [r["labels_rel_level"] for r in got["runs"] + logs["runs"]] == [None] * 4
    # the page's "Not in this report" sends to the logs, which have the rankings and labels
    page, logs_page = ((tmp_path / f / "r.html").read_text() for f in ("tables", "logs"))
    assert "Metric-vs-k chart: compare the run logs; a table of per-question metrics" in page
    assert "Worked cases, question texts and data checks: compare the run logs" in page
    assert "log retrieved_ids" not in page and "Worked cases, question" not in logs_page
    # no question text to show: the changed questions' table has no column for it
    header = '<th class="text">question</th>'
    assert header not in page and header in logs_page


def test_several_tables_with_a_holdout_give_the_logs_study(tmp_path, tables):
    options = ("--holdout", "0.3", "--require", "correct >= -0.02")
    logs = report(tmp_path / "logs", [SAMPLES / f"{r}.parquet" for r in RUNS], *options)
    got = report(tmp_path / "tables", [tables[r] for r in RUNS], *options)
    assert without(got, LOGS_ONLY) == without(logs, LOGS_ONLY)
    assert got["holdout"]["n_held_out"] == logs["holdout"]["n_held_out"] > 0


def test_tables_compare_at_the_options_they_were_scored_with(tmp_path, tables):
    """A TREC run's tables need --k to be scored; compare takes it, and --gain and
    --span-coverage, from the tables when not given, and scores a log beside them alike."""
    scoring = ("--k", 3, "--gain", "linear")
    a, b = (
        scored(SAMPLES / f"{r}.parquet", tmp_path / f"{r}-k3.parquet", *scoring) for r in RUNS[:2]
    )
    logs = report(tmp_path / "logs", [SAMPLES / f"{r}.parquet" for r in RUNS[:2]], *scoring)
    got = report(tmp_path / "tables", [a, b])
    assert without(got, LOGS_ONLY) == without(logs, LOGS_ONLY)
    params = two_run_view(got)["params"]
    assert (params["k"], params["gain"]) == (3, "linear")
    assert "Options: --k 3 &middot; --gain linear" in (tmp_path / "tables" / "r.html").read_text()
    # a log beside a table is scored with the table's options
    mixed = report(tmp_path / "mixed", [a, SAMPLES / f"{RUNS[1]}.parquet"])
    assert two_run_view(mixed)["metrics"] == two_run_view(logs)["metrics"]
    # given, an option is the comparison's: the table is refused, as before
    out = ("-o", tmp_path / "r.html")
    assert fail("compare", a, b, "--gain", "exponential", *out).startswith(
        f"ragreport: error: {a}: its ndcg was scored with --gain linear, and this comparison "
        "asks for --gain exponential;"
    )
    # tables of two cutoffs: no comparison takes both
    assert fail("compare", a, tables[RUNS[1]], *out) == (
        f"ragreport: error: {tables[RUNS[1]]}: its recall was scored with --k unset (each "
        f"question's context_ids), and {a}'s with --k 3; score the logs again with ragreport "
        "metrics at one --k"
    )
    # the Python API takes them alike, an option given as None being not given
    for given in ({}, {"k": None}):
        result = reportgen.compare(a, b, n_boot=1000, **given)
        assert result.study.options.cutoff == 3 and result.study.options.gain == "linear"


def test_a_table_scored_with_k_compares_beside_a_run_with_no_ranking(tmp_path):
    """A TREC-style table scored with --k 3 beside an answer-only run: the --k taken from the
    table made compare refuse the answer-only run ("no ranking ... for --k to cut; drop --k"),
    a --k never given; without it, the table was refused as scored with --k 3. The pair is
    compared as the logs are, on the answers alone; --k cuts the rankings of a third run."""
    answers = ["question_id", "slice", "correct", "faithfulness"]
    cut = tmp_path / "answers.parquet"
    pd.read_parquet(SAMPLES / f"{RUNS[1]}.parquet", columns=answers).to_parquet(cut)
    a = scored(SAMPLES / f"{RUNS[0]}.parquet", tmp_path / "a-k3.parquet", "--k", 3)
    logs = report(tmp_path / "logs", [SAMPLES / f"{RUNS[0]}.parquet", cut])
    assert list(two_run_view(logs)["metrics"]) == ["correct", "faithfulness"]
    for other in (cut, scored(cut, tmp_path / "answers-table.parquet")):
        got = report(tmp_path / other.stem, [a, other])
        assert two_run_view(got)["metrics"] == two_run_view(logs)["metrics"]
        assert two_run_view(got)["params"]["k"] == 3
    # a third run with a ranking is cut at the --k given; the answer-only run's pair is not
    study = report(tmp_path / "three", [SAMPLES / f"{r}.parquet" for r in RUNS[:2]] + [cut],
                   "--k", 3)  # fmt: skip
    assert [list(c["metrics"])[:2] for c in study["comparisons"]] == [
        ["recall@3", "precision@3"],
        ["correct", "faithfulness"],
    ]
    # no run logs a ranking: --k has nothing to cut
    out = ("-o", tmp_path / "r.html", "--k", 3)
    assert fail("compare", cut, cut, *out) == (
        f"ragreport: error: {cut}: no ranking (retrieved_ids or context_ids) for --k to cut; "
        "drop --k"
    )


HERE = (
    "scored from its log here, as ragreport metrics scores one, to be compared with the "
    "per-question tables given for the other runs."
)


def test_a_log_beside_tables_is_scored_and_gives_the_tables_report(tmp_path, tables):
    """A baseline's archived table and a new log in one command: the log is scored as
    ragreport metrics scores it (the oracle: the report of the tables it writes), keeping the
    --slice and --cluster columns the comparison asks for; the report says which run was
    scored here, and verifies."""
    options = ("--slice", "slice", "--cluster", "slice", "--require", "correct >= -0.02")
    logs = [SAMPLES / f"{r}.parquet" for r in RUNS]
    got = report(tmp_path / "mixed", [tables[RUNS[0]], logs[1], logs[2]], *options)
    want = report(tmp_path / "tables", [tables[r] for r in RUNS], *options)
    assert without(got, ("warnings",)) == without(want, ("warnings",))
    assert got["comparisons"][0]["metrics"]["correct"]["clusters"] == 5
    assert [r["scored"] for r in got["runs"]] == [True, False, False]
    assert [w for w in got["warnings"] if w not in want["warnings"]] == [
        f"Run B: {HERE}",
        f"Run C: {HERE}",
    ]
    assert f"Run B: {HERE}" in (tmp_path / "mixed" / "r.html").read_text()
    # the log first, the table second: the same report of the pair
    pair = report(tmp_path / "log-first", [logs[0], tables[RUNS[1]]])
    tables_pair = report(tmp_path / "tables-pair", [tables[r] for r in RUNS[:2]])
    assert without(pair, ("warnings",)) == without(tables_pair, ("warnings",))
    outcome = CliRunner().invoke(cli, ["verify", str(tmp_path / "mixed" / "r.json")])
    assert outcome.exit_code == 0, outcome.output
    assert "verified" in outcome.output


def test_reading_options_given_once_serve_the_logs_beside_tables(tmp_path, tables):
    """--map and a --format given once are for the log among tables (a table is read as
    written); given for the table they are refused for it, and --rel-level without the --qrels
    it applies to is refused."""
    frame = pd.read_parquet(SAMPLES / f"{RUNS[1]}.parquet").rename(columns={"question_id": "id"})
    for column in ("retrieved_ids", "relevant_ids", "relevant_grades", "context_ids", "cited_ids"):
        frame[column] = frame[column].map(lambda v: json.dumps(v.tolist()))
    frame.to_csv(tmp_path / "b.csv", index=False)
    table = tables[RUNS[0]]
    mapped = ("--map", "question_id=id")
    got = report(tmp_path / "csv", [table, tmp_path / "b.csv"], *mapped, "--format", "csv")
    want = report(tmp_path / "tables", [table, tables[RUNS[1]]])
    assert without(got, ("warnings",)) == without(want, ("warnings",))
    assert [r["read"]["mapping"] for r in got["runs"]] == [[], [["question_id", "id"]]]
    out = ("-o", tmp_path / "r.html")
    assert fail("compare", table, tmp_path / "b.csv", "--format", "csv", "--format", "csv",
                *mapped, *out) == (
        f"ragreport: error: {table}: is a table of per-question metrics (as ragreport "
        "metrics writes it), read as written; --format applies to run logs: give it to "
        "ragreport metrics with the log, or drop it"
    )  # fmt: skip
    assert fail("compare", table, tmp_path / "b.csv", "--rel-level", 2, *mapped, *out) == (
        "ragreport: error: --rel-level 2 sets the lowest relevant grade of the --qrels file; "
        "give the qrels with it, or drop it (a log's own relevant_grades are read as logged)"
    )
    assert fail("compare", table, tables[RUNS[1]], *mapped, *out).endswith(
        "--map applies to run logs: give it to ragreport metrics with the log, or drop it"
    )


TREC = Path(__file__).resolve().parent / "data" / "trec_eval"
GRADED = TREC / "qrels.rel_level"  # grades -1 to 4: --rel-level 2 leaves grade 1 out


def test_a_tables_rel_level_is_recorded_and_every_run_is_read_at_one(tmp_path):
    """A table records the --rel-level its TREC run's qrels were read with: a log beside it,
    read at that level, gives the report of the two tables; runs read at two levels (two
    tables, a table and a log, a table's shards) are refused, naming a file of each."""
    lines = (TREC / "results.test").read_text().splitlines()
    reversed_run = tmp_path / "reversed.test"  # each topic's ranking upside down
    reversed_run.write_text(
        "".join(
            f"{t} Q0 {doc} {r} {-float(score)} rev\n"
            for t, _, doc, r, score, _ in map(str.split, lines)
        )
    )
    trec = ("--qrels", GRADED, "--k", 10)
    level_2 = {
        name: scored(run, tmp_path / f"{name}-2.parquet", *trec, "--rel-level", 2)
        for name, run in (("a", TREC / "results.test"), ("b", reversed_run))
    }
    level_1 = scored(TREC / "results.test", tmp_path / "a-1.parquet", *trec)
    recorded = [json.loads(pq.read_schema(t).metadata[LOG_KEY.encode()])["rel_level"]
                for t in (level_2["a"], level_1)]  # fmt: skip
    assert recorded == [2, 1]
    got = report(tmp_path / "mixed", [level_2["a"], reversed_run], *trec, "--rel-level", 2)
    want = report(tmp_path / "tables", [level_2["a"], level_2["b"]], "--k", 10)
    assert without(got, ("warnings",)) == without(want, ("warnings",))
    assert got["comparisons"][0]["metrics"]["ndcg@10"]["diff"] != 0
    # the JSON states each run's level: a table's from its record (its read.rel_level is the
    # default, as the table was given), a log's from the command's option
    for document in (got, want):
        assert [r["labels_rel_level"] for r in document["runs"]] == [2, 2]
    assert [r["read"]["rel_level"] for r in want["runs"]] == [1, 1]
    for folder in ("mixed", "tables"):  # the page says what the level does to nDCG
        page = (tmp_path / folder / "r.html").read_text()
        assert "The qrels&#39; grades below 2 (--rel-level) are judged not relevant" in page
    out = ("-o", tmp_path / "r.html")
    advice = (
        "read every run at one level: a run given with --qrels at this command's --rel-level, "
        "a converted log or a ragreport metrics table at the one it records"
    )
    assert fail("compare", level_2["a"], reversed_run, *trec, *out) == (
        f"ragreport: error: {reversed_run}: its labels were read from qrels with --rel-level 1, "
        f"and {level_2['a']}'s with --rel-level 2; {advice}"
    )
    assert fail("compare", level_2["b"], level_1, "--k", 10, *out) == (
        f"ragreport: error: {level_1}: its labels were read from qrels with --rel-level 1, "
        f"and {level_2['b']}'s with --rel-level 2; {advice}"
    )
    shards = tmp_path / "shards"
    shards.mkdir()
    for name, table in (("0", level_2["a"]), ("1", level_1)):
        frame = pq.read_table(table)
        pq.write_table(
            frame.filter(pa.array([(i % 2 == 0) == (name == "0") for i in range(frame.num_rows)])),
            shards / f"{name}.parquet",
        )
    assert fail("compare", shards, level_2["b"], "--k", 10, *out) == (
        f"ragreport: error: {shards / '1.parquet'}: its labels were read from qrels with "
        f"--rel-level 1, and {shards / '0.parquet'}'s with --rel-level 2; score every shard "
        "at one level"
    )


def test_a_report_of_tables_verifies(tmp_path, tables):
    folder = tmp_path / "r"
    report(folder, [tables[RUNS[0]], tables[RUNS[1]]])
    outcome = CliRunner().invoke(cli, ["verify", str(folder / "r.json")])
    assert outcome.exit_code == 0, outcome.output
    assert "verified" in outcome.output


def sampled_logs(folder: Path) -> list[Path]:
    """Two logs of 40 questions answered three times each: correct a share of samples."""
    rng = np.random.default_rng(3)
    paths = []
    for run, p in (("a", 0.5), ("b", 0.7)):
        rows = [
            {
                "question_id": f"q{q:02d}",
                "sample": s,
                "context_ids": [f"p{q}", f"x{q}"],
                "relevant_ids": [f"p{q}"] if q % 2 else [f"y{q}"],
                "correct": bool(rng.random() < p),
                "doc_id": f"d{q // 4}",
            }
            for q in range(40)
            for s in range(3)
        ]
        paths.append(folder / f"{run}.parquet")
        pd.DataFrame(rows).to_parquet(paths[-1])
    return paths


def test_tables_of_sampled_logs_compare_shares_as_the_logs_do(tmp_path):
    logs = sampled_logs(tmp_path)
    made = [scored(log, tmp_path / f"m{log.name}") for log in logs]
    from_logs = two_run_view(report(tmp_path / "logs", logs))
    got = two_run_view(report(tmp_path / "tables", made))
    # a share of three samples is no 0/1 outcome: no McNemar, no fixed/broken
    assert got["metrics"]["correct"] == from_logs["metrics"]["correct"]
    assert "McNemar" not in got["metrics"]["correct"]["test"]
    assert got["samples"] is None and from_logs["samples"] is not None
    assert got["warnings"][0].endswith(
        "the spread of the samples and which samples an answer score's mean leaves out: compare "
        "the run logs for them"
    )
    # the documents asked about are in the logs, not these tables: they must keep the column
    hint = (
        "Column doc_id looks like the document or conversation each question is about; "
        "questions that share one are not independent: {} (intervals can otherwise be too narrow)"
    )
    assert hint.format("--cluster doc_id resamples them together") in from_logs["warnings"]
    assert (
        hint.format(
            "kept in the tables by ragreport metrics --cluster doc_id, --cluster doc_id "
            "resamples them together"
        )
        in got["warnings"]
    )


def test_columns_metrics_keeps_slice_and_cluster_the_tables_as_the_logs(tmp_path, tables):
    """A column kept by ``metrics --slice`` or ``--cluster`` serves compare's --slice and
    --cluster as the log's column does: the same slices, clustered intervals and tests."""
    logs = sampled_logs(tmp_path)
    made = [scored(log, tmp_path / f"m{log.name}", "--cluster", "doc_id") for log in logs]
    from_logs = report(tmp_path / "logs", logs, "--cluster", "doc_id")
    got = report(tmp_path / "tables", made, "--cluster", "doc_id")
    assert without(got, LOGS_ONLY) == without(from_logs, LOGS_ONLY)
    correct = two_run_view(got)["metrics"]["correct"]
    unclustered = two_run_view(report(tmp_path / "plain", made))["metrics"]["correct"]
    assert correct["clusters"] == 10 and unclustered["clusters"] is None
    assert (correct["ci_low"], correct["ci_high"]) != (
        unclustered["ci_low"],
        unclustered["ci_high"],
    )
    assert not [w for w in got["warnings"] if "looks like the document" in w]
    # slices of a kept column, beside the slice column (kept always), on the sample pair
    pair = [SAMPLES / f"{r}.parquet" for r in RUNS[:2]]
    kept = [scored(log, tmp_path / f"k{i}.parquet", "--slice", "answerable") for i, log in
            enumerate(pair)]  # fmt: skip
    options = ("--slice", "answerable", "--slice", "slice")
    got = two_run_view(report(tmp_path / "kept", kept, *options))
    from_logs = two_run_view(report(tmp_path / "kept-logs", pair, *options))
    assert got["slices"] == from_logs["slices"]
    assert set(got["slices"]) == {"answerable", "slice"}
    # a column whose value differs between a question's samples: refused as compare refuses it
    shifted = pd.read_parquet(logs[0]).assign(shift=lambda f: f["sample"].astype(str))
    shifted.to_parquet(tmp_path / "shifted.parquet")
    refusal = fail("compare", tmp_path / "shifted.parquet", logs[1], "--slice", "shift",
                   "-o", tmp_path / "r.html")  # fmt: skip
    assert refusal == fail("metrics", tmp_path / "shifted.parquet", "--slice", "shift", "-o",
                           tmp_path / "s.parquet")  # fmt: skip
    assert refusal == (
        f"ragreport: error: {tmp_path / 'shifted.parquet'}: column 'shift' (asked for by "
        "--slice) has more than one value for question 'q00' and 39 others; a question's "
        "samples share its slice: give each question one value"
    )


def test_the_answer_stage_is_each_questions_first_answer(tmp_path, write_log):
    rows = [
        {"question_id": "q1", "retrieved_ids": ["d1", "d2", "d3"], "context_ids": ["d1"],
         "relevant_ids": ["d2"], "correct": True},
        {"question_id": "q2", "retrieved_ids": ["d4"], "context_ids": ["d4"],
         "relevant_ids": ["d4"], "correct": False},
    ]  # fmt: skip
    log = write_log(tmp_path / "a.parquet", rows)
    table = pq.read_table(scored(log, tmp_path / "m.parquet"))
    stage = {row["question_id"]: row["answer_stage"] for row in table.to_pylist()}
    # q1: its evidence d2 ranked 2nd, among the candidates but not in the one-passage prompt
    assert (stage["q1"]["evidence_in_candidates"], stage["q1"]["evidence_in_context"]) == (
        True,
        False,
    )
    assert (stage["q1"]["depth"], stage["q1"]["correct"]) == (3, True)
    assert (stage["q2"]["evidence_in_context"], stage["q2"]["correct"]) == (True, False)
    assert table.column("passages").to_pylist() == [1, 1]
    logged = json.loads(table.schema.metadata[LOG_KEY.encode()])
    assert logged == {
        "columns": ["context_ids", "correct", "question_id", "relevant_ids", "retrieved_ids"],
        "tool": None,
        "scores": [],
        "binary": [],
        "sampled": False,
        "carried": [],
        "notes": [],
        "left_out": [],
        "rel_level": None,  # its labels are its own, read from no qrels
    }


def test_what_a_table_cannot_serve_is_refused_in_one_line(tmp_path, tables):
    a, b = tables[RUNS[0]], tables[RUNS[1]]
    out = ("-o", tmp_path / "r.html")
    # a log beside a table is scored with the comparison's options, which the table must share
    log = SAMPLES / f"{RUNS[1]}.parquet"
    assert fail("compare", a, log, "--k", 3, *out) == (
        f"ragreport: error: {a}: its recall was scored with --k unset (each question's "
        "context_ids), and this comparison asks for --k 3; pass the options the tables were "
        "scored with, or score the logs again with ragreport metrics"
    )
    # --strict refuses the changed golden set as it does from the logs, naming run B's input
    logs = [SAMPLES / f"{r}.parquet" for r in RUNS[:2]]
    refusal = fail("compare", *logs, "--strict", *out)
    assert fail("compare", a, b, "--strict", *out) == refusal.replace(str(logs[1]), str(b))
    assert "the golden set changed between the runs on 3 questions" in refusal
    assert fail("compare", a, b, "--k", 3, *out) == (
        f"ragreport: error: {a}: its recall was scored with --k unset (each question's "
        "context_ids), and this comparison asks for --k 3; pass the options the tables were "
        "scored with, or score the logs again with ragreport metrics"
    )
    assert fail("compare", a, b, "--gain", "linear", *out).startswith(
        f"ragreport: error: {a}: its ndcg was scored with --gain exponential, and this "
        "comparison asks for --gain linear;"
    )
    assert fail("compare", a, b, "--map", "correct=ok", *out) == (
        f"ragreport: error: {a}: is a table of per-question metrics (as ragreport metrics "
        "writes it), read as written; --map applies to run logs: give it to ragreport metrics "
        "with the log, or drop it"
    )
    assert fail("compare", a, b, "--cluster", "question", *out) == (
        f"ragreport: error: {a}: a table of per-question metrics that does not keep its log's "
        "column 'question'; score the log again with ragreport metrics --slice question (or "
        "--cluster question), or compare the run logs"
    )
    assert fail("metrics", log, "--slice", "region", "-o", tmp_path / "m.parquet") == (
        f"ragreport: error: {log}: no column 'region' (asked for by --slice); name a column the "
        "log has"
    )
    assert fail("compare", a, b, "--metric", "answer_relevance", *out) == (
        f"ragreport: error: {a}: --metric answer_relevance: the table carries no column "
        "'answer_relevance' (its log's score and cost columns it carries: latency_ms, cost_usd, "
        "context_tokens); compare the run logs, or name a column it carries"
    )


def test_a_table_saved_again_without_what_compare_reads_is_refused(tmp_path, tables):
    written = pq.read_table(tables[RUNS[0]])
    b = tables[RUNS[1]]
    old = tmp_path / "old.parquet"  # an earlier ragreport recorded nothing of the log
    metadata = {k: v for k, v in written.schema.metadata.items() if k != LOG_KEY.encode()}
    pq.write_table(written.replace_schema_metadata(metadata), old)
    assert fail("compare", old, b, "-o", tmp_path / "r.html") == (
        f"ragreport: error: {old}: a table of per-question metrics written by an earlier "
        "ragreport, which did not record what compare needs of its log; write it again with "
        "ragreport metrics, or pass the run log"
    )
    for column in ("correct", "answer_stage", "relevant_key"):
        trimmed = tmp_path / f"no-{column}.parquet"
        pq.write_table(written.drop_columns([column]), trimmed)
        assert fail("compare", trimmed, b, "-o", tmp_path / "r.html") == (
            f"ragreport: error: {trimmed}: a table of per-question metrics without its column "
            f"{column} (saved again by another tool?); write it again with ragreport metrics, "
            "or pass the run log"
        )
    doubled = tmp_path / "doubled.parquet"
    pq.write_table(pa.concat_tables([written, written.slice(5, 1)]), doubled)
    question = written["question_id"][5].as_py()
    assert fail("compare", doubled, b, "-o", tmp_path / "r.html") == (
        f"ragreport: error: {doubled}: question {question!r} has more than one row; a table of "
        "per-question metrics has one row a question: write it again with ragreport metrics"
    )


def test_the_tables_of_a_logs_shards_compare_as_its_one_table(tmp_path, tables):
    """Each shard scored on its own (as on the machine that holds it), then compared as one
    run: the same report, examples in the same file order, as the whole log's table."""
    log = pq.read_table(SAMPLES / f"{RUNS[0]}.parquet")
    for i in range(3):
        shard = tmp_path / f"a-{i}.parquet"
        pq.write_table(log.slice(80 * i, 80), shard)
        scored(shard, tmp_path / f"a-metrics-{i}.parquet")
    one = report(tmp_path / "one", [tables[RUNS[0]], tables[RUNS[1]]])
    sharded = report(tmp_path / "sharded", [tmp_path / "a-metrics-*.parquet", tables[RUNS[1]]])
    assert without(sharded, ()) == without(one, ())
    assert two_run_view(sharded)["broken"][:3] == ["q0018", "q0027", "q0030"]  # file order
    # the same shards' tables beside a run log's shard, or scored with another --k: refused
    pq.write_table(log.slice(0, 10), tmp_path / "a-metrics-3.parquet")
    out = ("-o", tmp_path / "r.html")
    assert fail("compare", tmp_path / "a-metrics-*.parquet", tables[RUNS[1]], *out) == (
        f"ragreport: error: {tmp_path / 'a-metrics-3.parquet'}: not a table of per-question "
        f"metrics, beside {tmp_path / 'a-metrics-0.parquet'}, which is one; pass the tables of a "
        "run's shards alone"
    )
    scored(tmp_path / "a-0.parquet", tmp_path / "a-metrics-3.parquet", "--slice", "answerable")
    assert fail("compare", tmp_path / "a-metrics-*.parquet", tables[RUNS[1]], *out) == (
        f"ragreport: error: {tmp_path / 'a-metrics-3.parquet'}: keeps the column answerable of "
        f"its log, and {tmp_path / 'a-metrics-0.parquet'} keeps no column; score every shard "
        "with the same --slice and --cluster"
    )
    scored(tmp_path / "a-0.parquet", tmp_path / "a-metrics-3.parquet", "--k", 3)
    assert fail("compare", tmp_path / "a-metrics-*.parquet", tables[RUNS[1]], *out) == (
        f"ragreport: error: {tmp_path / 'a-metrics-3.parquet'}: its recall was scored with --k 3, "
        f"and {tmp_path / 'a-metrics-0.parquet'}'s with --k unset (each question's context_ids); "
        "score every shard with the same --k, --gain and --span-coverage"
    )


def test_tables_keep_what_the_reader_and_the_row_checks_said_of_their_logs(tmp_path):
    """The warnings a log's report gives on how it was read (RAGAS before 0.2) and on values
    left out (overlapping span labels merged) are recorded by metrics and repeated by compare,
    and the page's advice stays in the words of the tool that wrote the logs."""
    new = ragas_frame([1.0, 0.5, 0.25], False).drop(columns="reference_contexts")
    renamed = {"user_input": "question", "response": "answer", "retrieved_contexts": "contexts"}
    old = new.rename(columns={**renamed, "reference": "ground_truth"})
    old.to_csv(tmp_path / "old.csv", index=False)
    new.to_csv(tmp_path / "new.csv", index=False)
    logs = [tmp_path / "old.csv", tmp_path / "new.csv"]
    made = [scored(log, tmp_path / f"{log.stem}-metrics.parquet") for log in logs]
    from_logs = report(tmp_path / "logs", logs)
    got = report(tmp_path / "tables", made)
    assert without(got, LOGS_ONLY) == without(from_logs, LOGS_ONLY)
    assert [w for w in got["warnings"] if not w.startswith("Compared from")] == (
        from_logs["warnings"]
    )
    assert (
        "Run A: Columns named as RAGAS before 0.2 (question, answer, contexts, ground_truth) "
        "read as user_input, response, retrieved_contexts, reference" in got["warnings"]
    )
    page = (tmp_path / "tables" / "r.html").read_text()
    assert "Retrieval metrics: add reference_context_ids (or reference_contexts)" in page
    chunkings = [SAMPLES / f"manuals_{c}.parquet" for c in ("a_chunk400", "b_chunk1000")]
    outcome = CliRunner().invoke(cli, ["metrics", str(chunkings[0]), "-o", str(tmp_path / "c.pq")])
    merged = (
        f"9 questions of {chunkings[0].name} have overlapping relevant_spans, merged into one "
        "label each before measuring, first at row 2"
    )
    assert outcome.exit_code == 0 and f"ragreport: warning: {merged}\n" in outcome.output
    made = [tmp_path / "c.pq", scored(chunkings[1], tmp_path / "d.pq")]
    from_logs = report(tmp_path / "chunk-logs", chunkings)
    got = report(tmp_path / "chunk-tables", made)
    note = NOTE.replace("the question texts, ", "").replace(", unjudged@k", "")
    assert [w for w in got["warnings"] if w != note] == from_logs["warnings"]
    assert note in got["warnings"]
    assert merged in got["warnings"]


def test_tables_walk_the_candidates_as_the_logs_do(tmp_path):
    """Tables carry no metric-vs-k curve: the walk skipped the candidates and sent a retrieval
    that found the evidence for 5 questions of 10 to reranking, which cannot bring it."""
    rows = [
        {"question_id": f"q{i}", "relevant_ids": ["e"], "correct": i >= 5,
         "retrieved_ids": ["e", "x1", "x2"] if i >= 5 else ["x1", "x2", "x3"],
         "context_ids": ["e", "x1"] if i >= 5 else ["x1", "x2"]}
        for i in range(10)
    ]  # fmt: skip
    log = tmp_path / "a.parquet"
    pd.DataFrame(rows).to_parquet(log)
    table = scored(log, tmp_path / "ma.parquet")
    walks = []
    for folder, inputs in (("logs", [log, log]), ("tables", [table, table])):
        experiment = report(tmp_path / folder, inputs)["comparisons"][0]["next_experiment"]["a"]
        walks.append((experiment["stage"], experiment["path"][0]["metric"]))
        assert experiment["path"][0]["value"] == 0.5
    assert walks == [("retrieval", "hit@3"), ("retrieval", "hit@3")]


def test_a_table_whose_answer_rows_predate_the_diagnosis_fields_is_refused(tmp_path):
    """A table written before the answer rows carried evidence_ranked_for_prompt (and the
    grade fields) failed compare with a KeyError traceback; it is refused in one line."""
    ids = [f"q{i}" for i in range(20)]
    log = tmp_path / "b.parquet"
    pd.DataFrame({"question_id": ids, "correct": [i % 3 == 0 for i in range(20)]}).to_parquet(log)
    table = pq.read_table(scored(log, tmp_path / "mb.parquet"))
    answers = table["answer_stage"].combine_chunks()
    keep = [answers.type.field(i).name for i in range(answers.type.num_fields)]
    keep = [name for name in keep if name != "evidence_ranked_for_prompt"]
    older = pa.StructArray.from_arrays([answers.field(name) for name in keep], names=keep)
    index = table.schema.get_field_index("answer_stage")
    older_table = table.set_column(index, "answer_stage", older)
    path = tmp_path / "older.parquet"
    pq.write_table(older_table.replace_schema_metadata(table.schema.metadata), path)
    assert fail("compare", path, tmp_path / "mb.parquet", "-o", tmp_path / "r.html") == (
        f"ragreport: error: {path}: a table of per-question metrics written by an earlier "
        "ragreport, whose answer rows lack evidence_ranked_for_prompt; write it again with "
        "ragreport metrics, or pass the run log"
    )
    assert not (tmp_path / "r.html").exists()


def _edited(tmp_path: Path, column: str, value: object, text: bool = False) -> Path:
    """B's table of a 20-question log, its first row's ``column`` set to ``value`` (the column
    as text with ``text``), its metadata kept: a table edited by hand or another tool."""
    ids = [f"q{i}" for i in range(20)]
    log = tmp_path / "b.parquet"
    pd.DataFrame({"question_id": ids, "correct": [i % 3 == 0 for i in range(20)],
                  "faithfulness": 0.6}).to_parquet(log)  # fmt: skip
    table = pq.read_table(scored(log, tmp_path / "mb.parquet"))
    frame = table.to_pandas()
    frame[column] = frame[column].astype(object)
    frame.at[0, column] = value
    if text:
        frame[column] = frame[column].astype(str)
    edited = tmp_path / "edited.parquet"
    written = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(written.replace_schema_metadata(table.schema.metadata), edited)
    return edited


@pytest.mark.parametrize(
    ("column", "value", "text", "problem"),
    [
        ("correct", True, True, "column correct has type large_string, expected numbers"),
        ("correct", 5.0, False, "row 1 (question_id 'q0'): correct is 5.0, outside [0, 1]"),
        ("faithfulness", 2.0, False, "row 1 (question_id 'q0'): faithfulness is 2.0, outside "
         "[0, 1]"),
        ("faithfulness", float("inf"), False, "row 1 (question_id 'q0'): faithfulness is inf, "
         "not a finite number"),
        ("question_id", None, False, "row 1 has no question_id (null or blank)"),
        ("question_id", " ", False, "row 1 has no question_id (null or blank)"),
    ],
)  # fmt: skip
def test_a_table_s_values_are_checked_as_a_log_s(tmp_path, column, value, text, problem):
    """correct as text stopped with a TypeError; correct 5.0 and faithfulness 2.0 or inf were
    compared (B inf, a JSON p of null), and a question without an id dropped: each is refused
    in one line naming the file, the row and the column."""
    b = _edited(tmp_path, column, value, text)
    assert fail("compare", b, b, "-o", tmp_path / "r.html") == (
        f"ragreport: error: {b}: {problem}; write it again with ragreport metrics"
    )
