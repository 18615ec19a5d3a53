"""The TREC reader against trec_eval's reference outputs, and its handling of broken inputs.

``compare`` reads ``tests/data/trec_eval/results.test`` with ``--format trec --qrels`` (no
conversion by the test) and every per-topic and ``all`` value must equal trec_eval's to the 4
decimals it prints: P_k, recall_k, success_k, map_cut_k and ndcg_cut_k (linear gain is
trec_eval's), and at k = 1000 (beyond the run's 500 documents, so the whole ranking) map and
Rprec; with ``--rel-level 2`` for out.test.aql, which trec_eval wrote with ``-l2``. The metric
curve is checked against every map_cut_k of the ``all`` line.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from test_readers import fail
from test_trec_eval_oracle import DATA, HALF_UNIT, read_output

from reportgen.analysis.registry import base_name
from reportgen.cli import cli
from reportgen.errors import InputError
from reportgen.inputs.readers import ReadOptions, read

MEASURES = {
    "P": "precision",
    "recall": "recall",
    "success": "hit",
    "ndcg_cut": "ndcg",
    "map_cut": "map",
}
WHOLE_RANKING = {"map": "map", "Rprec": "rprec"}  # trec_eval measures without a cutoff
BINARY = ("P", "recall", "success", "map_cut", "map", "Rprec")
CASES = {  # qrels, --rel-level, trec_eval output, measures it ran with that level
    "aq": ("qrels.test", 1, "out.test.aq", (*BINARY, "ndcg_cut")),
    "aql": ("qrels.rel_level", 2, "out.test.aql", BINARY),
}


def trec_measure(measure: str, k: int) -> tuple[str, str] | None:
    """(trec_eval's name, the tool's metric) of a measure at cutoff k, None when not comparable."""
    if measure in WHOLE_RANKING:
        return (measure, f"{WHOLE_RANKING[measure]}@{k}") if k >= 1000 else None
    return f"{measure}_{k}", f"{MEASURES[measure]}@{k}"


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("k", [5, 10, 100, 1000])
def test_trec_reader_matches_trec_eval(tmp_path, compare, case, k):
    qrels, level, expected_name, measures = CASES[case]
    run = DATA / "results.test"
    out = compare(
        run, run, tmp_path, "--qrels", DATA / qrels, "--rel-level", level, "--k", k,
        "--gain", "linear", "--n-boot", 100,
    )  # fmt: skip
    expected = read_output(expected_name)
    per_topic = {r["question_id"]: r for r in out["per_question"]}
    assert sorted(per_topic) == ["301", "302", "303"]
    bad, checked = [], 0
    for measure in measures:
        names = trec_measure(measure, k)
        if names is None or (names[0], "all") not in expected:  # success_k: k in 1, 5, 10
            continue
        trec, metric = names
        checked += 1
        for topic, row in per_topic.items():
            if abs(row[f"{metric}_a"] - expected[(trec, topic)]) > HALF_UNIT:
                bad.append((trec, topic, row[f"{metric}_a"]))
        if abs(out["metrics"][metric]["a"] - expected[(trec, "all")]) > HALF_UNIT:
            bad.append((trec, "all", out["metrics"][metric]["a"]))
    assert checked >= 2
    assert not bad, bad
    curve = {(base_name(r["metric"]), int(r["k"])): r["value"] for r in out["metric_curve"]}
    cuts = [
        int(m.rsplit("_", 1)[1]) for m, q in expected if m.startswith("map_cut_") and q == "all"
    ]
    for cut in (c for c in cuts if c <= 500):  # the curve runs to the ranking's depth
        assert abs(curve[("map", cut)] - expected[(f"map_cut_{cut}", "all")]) <= HALF_UNIT


def compared_run(tmp_path, compare, run_text: str, qrels_text: str, k: int) -> dict:
    """``compare`` of a TREC run with itself, judged by the qrels ``qrels.txt``, at ``k``."""
    run, qrels = tmp_path / "run.trec", tmp_path / "qrels.txt"
    run.write_text(run_text)
    qrels.write_text(qrels_text)
    return compare(run, run, tmp_path / "out", "--qrels", qrels, "--k", k, "--n-boot", 100)


def test_ties_broken_by_docno_descending_and_rank_ignored(tmp_path, compare):
    run = "1 Q0 d1 1 0.5 t\n1 Q0 d3 2 0.5 t\n1 Q0 d2 3 0.9 t\n"
    out = compared_run(tmp_path, compare, run, "1 0 d1 1\n1 0 d3 0\n", 3)
    # order d2 (0.9), d3, d1 (tie at 0.5, docno descending): the relevant d1 is third
    assert out["per_question"][0]["mrr@3_a"] == pytest.approx(1 / 3)


def test_scores_equal_in_single_precision_tie_as_in_trec_eval(tmp_path, compare):
    # 20.000002 and 20.000001 are one float: trec_eval ties them and ranks d2 before d1; a
    # score past the float range ranks first
    run = "1 Q0 d1 1 20.000002 t\n1 Q0 d2 2 20.000001 t\n1 Q0 d0 3 1e39 t\n"
    out = compared_run(tmp_path, compare, run, "1 0 d1 1\n", 3)
    assert out["per_question"][0]["mrr@3_a"] == pytest.approx(1 / 3)  # d0, d2, d1
    assert any("descending in single precision, as trec_eval" in w for w in out["warnings"])
    assert any("document id descending (the rank column is ignored)" in w for w in out["warnings"])


def test_topics_judged_without_a_relevant_document_are_named(tmp_path, compare):
    run = "1 Q0 d1 1 2 t\n1 Q0 d2 2 1 t\n2 Q0 d3 1 2 t\n2 Q0 d4 2 1 t\n"
    out = compared_run(tmp_path, compare, run, "1 0 d2 1\n2 0 d3 0\n2 0 d4 -1\n", 2)
    # topic 2 has judgements but none relevant: trec_eval averages its 0 in (mrr 0.25), the
    # report leaves it out (mrr 0.5 over topic 1) and says so
    assert (out["metrics"]["mrr@2"]["a"], out["metrics"]["mrr@2"]["n"]) == (0.5, 1)
    assert (
        "Run A: 1 topic of the run is judged in qrels.txt with no document at grade >= 1, "
        "and is left out of the retrieval metrics (trec_eval counts them in its means): 2"
    ) in out["warnings"]
    # no labelled evidence: unanswerable, as a log's question labelled with grade 0 only is; the
    # audit says what made it so, where a golden set's "unanswerable" read as a refusal label
    assert out["audit"]["unanswerable"] == 1
    page = (tmp_path / "out" / "report.html").read_text()
    assert "unanswerable: 1 of 2 (50%), judged with no relevant document." in page


def test_several_runs_share_qrels_and_missing_topics_are_listed(tmp_path, compare):
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    a.write_text("1 Q0 d1 1 2 a\n2 Q0 d5 1 2 a\n9 Q0 d1 1 2 a\n")
    b.write_text("1 Q0 d2 1 2 b\n1 Q0 d1 2 1 b\n2 Q0 d5 1 2 b\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n2 0 d5 2\n3 0 d4 1\n4 0 d4 1\n")
    out = compare(a, b, tmp_path / "out", "--qrels", qrels, "--k", 2, "--n-boot", 100)
    assert out["metrics"]["mrr@2"]["a"] == 1.0 and out["metrics"]["mrr@2"]["b"] == 0.75
    warnings = "\n".join(out["warnings"])
    assert "Run A: 1 topic of the run has no judgements in qrels.txt and is not scored: 9" in (
        warnings
    )
    assert "2 judged topics of qrels.txt are absent from the run and not scored: 3, 4" in (warnings)


def test_rel_level_and_negative_grades(tmp_path, compare):
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 d1 1 3 t\n1 Q0 d2 2 2 t\n1 Q0 d3 3 1 t\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 1\n1 0 d2 -1\n1 0 d3 2\n")
    out = compare(run, run, tmp_path / "o", "--qrels", qrels, "--rel-level", 2, "--k", 3)
    # grade 1 is "related", not relevant at level 2; only d3 counts
    assert out["metrics"]["mrr@3"]["a"] == pytest.approx(1 / 3)
    assert out["metrics"]["recall@3"]["a"] == 1.0
    # nDCG then differs from trec_eval's ndcg_cut (which ignores -l): the definitions say so
    said = (
        "The qrels' grades below 2 (--rel-level) are judged not relevant, grade 0: nDCG gains "
        "count only the grades at or above it, where trec_eval's ndcg_cut, which ignores its -l, "
        "counts every positive grade."
    )
    assert said in (tmp_path / "o" / "report.html").read_text().replace("&#39;", "'")
    compare(run, run, tmp_path / "one", "--qrels", qrels, "--k", 3)
    assert "--rel-level" not in (tmp_path / "one" / "report.html").read_text()


def test_repeated_docno_names_both_lines(tmp_path):
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 d1 1 3 t\n1 Q0 d2 2 2 t\n2 Q0 d1 1 3 t\n1 Q0 d1 3 1 t\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 1\n")
    line = fail("compare", run, run, "-o", tmp_path / "r.html", "--qrels", qrels, "--k", 2)
    assert line.endswith(
        f"{run}: line 4: docno 'd1' already ranked for topic '1' at line 1; keep one line per "
        "document and topic"
    )


def test_broken_trec_files(tmp_path):
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 d1 1 3\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 high\n")
    out = ("-o", tmp_path / "r.html", "--k", 2)
    assert "pass --qrels FILE" in fail("compare", run, run, *out)
    line = fail("compare", run, run, *out, "--qrels", qrels)
    assert f"{run}: line 1 has 5 fields; expected 6 (qid Q0 docno rank score tag)" in line
    run.write_text("1 Q0 d1 1 3 t\n")
    line = fail("compare", run, run, *out, "--qrels", qrels)
    assert f"{qrels}: line 1: grade 'high' is not an integer" in line


def test_a_run_without_k_is_said_to_have_no_prompt(tmp_path):
    """It was asked for "the number of passages the generator received" for want of a
    context_ids column, which no TREC or BEIR run has."""
    run, qrels = tmp_path / "run.trec", tmp_path / "qrels"
    run.write_text("1 Q0 d1 1 3 t\n")
    qrels.write_text("1 0 d1 1\n")
    said = (
        "a TREC or BEIR run has no prompt, only a ranking; pass --k, the depth its retrieval "
        "metrics are scored at"
    )
    line = fail("compare", run, run, "-o", tmp_path / "r.html", "--qrels", qrels)
    assert line == f"ragreport: error: {run}: {said}"
    result = CliRunner().invoke(cli, ["validate", str(run), "--qrels", str(qrels)])
    assert f"{run}: ok, 1 row follows the run-log contract; compare: {said}" in result.output


def test_beir_results_with_qrels_tsv(tmp_path, compare):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"q1": {"d1": 0.2, "d2": 0.9}, "q2": {"d3": 0.5}}))
    qrels = tmp_path / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n")
    out = compare(results, results, tmp_path / "o", "--qrels", qrels, "--k", 2)
    assert out["metrics"]["mrr@2"]["a"] == pytest.approx((1 / 2 + 1) / 2)
    # BEIR results have no rank column to ignore
    notes = [w for w in out["warnings"] if "descending in single precision" in w]
    assert notes and all("document id descending; relevant: grade >= 1" in w for w in notes)
    assert not any("rank" in w for w in notes)
    results.write_text(json.dumps({"q1": {"d1": "high"}}))
    line = fail("compare", results, results, "-o", tmp_path / "r.html", "--qrels", qrels)
    assert "query 'q1', document 'd1': score 'high' is not a number" in line


def test_a_beir_query_that_retrieved_nothing_scores_0(tmp_path, compare):
    """``"q2": {}`` (a BM25 query with no term in the corpus) was left out as "absent from the
    run", crediting B with 1.0 where pytrec_eval scores q2 0: recall@3 is 2/3 over 3 queries."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"q1": {"d1": 1, "d3": 2}, "q2": {"e2": 4}, "q3": {"f9": 9, "f1": 8}}))
    b.write_text(json.dumps({"q1": {"d1": 5, "d3": 5}, "q2": {}, "q3": {"f2": 3, "f1": 2}}))
    qrels = tmp_path / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td3\t2\nq2\te2\t1\nq3\tf1\t1\n")
    out = compare(a, b, tmp_path / "o", "--qrels", qrels, "--k", 3)
    assert out["n_paired"] == 3
    assert out["metrics"]["recall@3"]["a"] == pytest.approx(1)
    assert out["metrics"]["recall@3"]["b"] == pytest.approx(2 / 3)
    assert not any("absent from the run" in w for w in out["warnings"])


def test_trec_qrels_whose_first_line_lost_its_grade_name_that_line(tmp_path):
    """A 3-field first line read the file as BEIR's qrels, and the run was told to be
    converted; the same fault on line 2 named the line."""
    run, qrels = tmp_path / "run.trec", tmp_path / "qrels.txt"
    run.write_text("q1 Q0 d1 1 2 t\nq2 Q0 e2 1 1 t\n")
    qrels.write_text("q1 0 d1\nq1 0 d3 2\nq2 0 e2 1\n")
    line = fail("compare", run, run, "--qrels", qrels, "--k", 1, "-o", tmp_path / "r.html")
    assert line == (
        f"ragreport: error: {qrels}: line 1 has 3 fields; expected 4 (qid iter docno rel) "
        "separated by spaces or tabs"
    )


def test_qrels_of_the_other_kind_name_the_log_that_needs_its_own(tmp_path):
    """BEIR results beside a TREC run, sharing its qrels: the qrels file was named as malformed
    ("line 1 has 4 fields; expected 3"), though the BEIR log is what needs other qrels."""
    run, results = tmp_path / "run.trec", tmp_path / "results.json"
    trec_qrels, beir_qrels = tmp_path / "qrels.txt", tmp_path / "qrels.tsv"
    run.write_text("1 Q0 d1 1 3 t\n")
    results.write_text(json.dumps({"1": {"d1": 0.5}}))
    trec_qrels.write_text("1 0 d1 1\n")
    beir_qrels.write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n")
    convert = "convert one of the two with its own qrels first (ragreport convert LOG --qrels "
    result = CliRunner().invoke(
        cli, ["validate", str(run), str(results), "--qrels", str(trec_qrels)]
    )
    assert result.output.splitlines()[-1] == (
        f"{results}: error: BEIR results are judged by BEIR's qrels (query-id corpus-id score), "
        f"and {trec_qrels} holds TREC qrels (qid iter docno rel); pass BEIR's, or to compare the "
        f"two kinds, {convert}QRELS -o LOG.parquet)"
    )
    line = fail("compare", run, run, "--qrels", beir_qrels, "--k", 1, "-o", tmp_path / "r.html")
    assert line == (
        f"ragreport: error: {run}: a TREC run is judged by TREC qrels (qid iter docno rel), and "
        f"{beir_qrels} holds BEIR's qrels (query-id corpus-id score); pass TREC's, or to compare "
        f"the two kinds, {convert}QRELS -o LOG.parquet)"
    )


def test_average_precision_r_precision_and_all_by_hand(tmp_path, compare):
    run = tmp_path / "run.trec"
    run.write_text(
        "1 Q0 d1 1 4 t\n1 Q0 d2 2 3 t\n1 Q0 d3 3 2 t\n1 Q0 d4 4 1 t\n2 Q0 d1 1 4 t\n2 Q0 d2 2 3 t\n"
    )
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d2 1\n1 0 d4 1\n1 0 d9 1\n1 0 d1 0\n2 0 d1 1\n")
    out = compare(run, run, tmp_path / "o", "--qrels", qrels, "--k", 4, "--n-boot", 100)
    rows = {r["question_id"]: r for r in out["per_question"]}
    # topic 1: relevant d2 (rank 2), d4 (rank 4), d9 (not retrieved): AP = (1/2 + 2/4) / 3;
    # R = 3, top 3 = d1 d2 d3 holds one; d9 is missing, so not all. Topic 2: d1 at rank 1.
    assert rows["1"]["map@4_a"] == pytest.approx(1 / 3)
    assert rows["1"]["rprec@4_a"] == pytest.approx(1 / 3)
    assert rows["1"]["all@4_a"] == 0
    assert (rows["2"]["map@4_a"], rows["2"]["rprec@4_a"], rows["2"]["all@4_a"]) == (1, 1, 1)
    assert out["metrics"]["map@4"]["a"] == pytest.approx(2 / 3)
    assert out["metrics"]["all@4"]["a"] == 0.5


def _read_trec(tmp_path, run_text: str, qrels_text: str, name: str = "run.trec"):
    run, qrels = tmp_path / name, tmp_path / f"{name}.qrels"
    run.write_text(run_text, newline="")
    qrels.write_text(qrels_text, newline="")
    return read(run, ReadOptions(format="trec", qrels=qrels))


def test_fields_separated_by_any_run_of_whitespace(tmp_path):
    plain = _read_trec(tmp_path, "1 Q0 d1 1 3 t\n1 Q0 d2 2 5 t\n2 Q0 d1 1 3 t\n", "1 0 d1 1\n")
    # leading and trailing blanks, tabs, several spaces, CRLF, blank lines, no final newline
    spaced = _read_trec(
        tmp_path,
        "\n  1\tQ0   d1 1 3 t \r\n\r\n1 \t Q0\td2\t2\t5\tt\r\n2 Q0 d1 1 3 t",
        "1\t0\t d1  1\r\n\n",
        "spaced.trec",
    )
    assert spaced.table.to_pylist() == plain.table.to_pylist()
    # one tab or one space between fields, CRLF or not: read by Arrow's CSV reader
    tabs = _read_trec(
        tmp_path, "1\tQ0\td1\t1\t3\tt\r\n1\tQ0\td2\t2\t5\tt\r\n2\tQ0\td1\t1\t3\tt\r\n",
        "1 0 d1 1", "tabs.trec",
    )  # fmt: skip
    assert tabs.table.to_pylist() == plain.table.to_pylist()
    assert plain.table.to_pylist() == [
        {"question_id": "1", "retrieved_ids": ["d2", "d1"], "relevant_ids": ["d1"],
         "relevant_grades": [1]},
        {"question_id": "2", "retrieved_ids": ["d1"], "relevant_ids": None,
         "relevant_grades": None},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("run_text", "message"),
    [
        # the first bad line is named, whatever its problem
        ("1 Q0 d1 1 3 t\n1 Q0 d2 2 x t\n1 Q0 d3 3 1\n", "line 2: score 'x' is not a number"),
        ("1 Q0 d1 1 3 t\n1 Q0 d2 2 x\n1 Q0 d2 3 x t\n", "line 2 has 5 fields; expected 6"),
        ("1 Q0 d1 1 3 t\n1 Q0 d1 2 y t\n", "line 2: docno 'd1' already ranked for topic '1'"),
        ("1 Q0 d1 1 3 t\n1 Q0 d2 2 inf t\n", "line 2: score is inf; give a finite score"),
        ("1 Q0 d1 1 nan t\n", "line 1: score is nan; give a finite score"),
        # read as 10 (a digit separator), where trec_eval's atof reads 1: ranked above a 5
        ("1 Q0 d1 1 5 t\n1 Q0 d2 2 1_0 t\n", "line 2: score '1_0' is not a number"),
    ],
)
def test_the_first_bad_line_of_a_run_is_named(tmp_path, run_text, message):
    with pytest.raises(InputError) as caught:
        _read_trec(tmp_path, run_text, "1 0 d1 1\n")
    assert str(caught.value).startswith(f"{tmp_path / 'run.trec'}: {message}")


@pytest.mark.parametrize("grade", ["1.5", "1e2", "high", "0x1", ".0", "1.01"])
def test_a_qrels_grade_is_an_integer(tmp_path, grade):
    with pytest.raises(InputError) as caught:
        _read_trec(tmp_path, "1 Q0 d1 1 3 t\n", f"1 0 d1 1\n1 0 d2 {grade}\n")
    assert str(caught.value) == (
        f"{tmp_path / 'run.trec.qrels'}: line 2: grade {grade!r} is not an integer; fix the line"
    )


def test_a_qrels_grade_written_as_a_whole_float_is_that_grade(tmp_path, compare):
    """pandas writes an integer column that held a missing value as floats: 1.0 and 2.0, which
    trec_eval reads as 1 and 2 (atol). They were refused; they judge as 1 and 2, the grades'
    nDCG gains included (d3 of grade 2 first, d1 of grade 1 second: ideal order)."""
    run = "1 Q0 d3 1 3 t\n1 Q0 d1 2 2 t\n1 Q0 d2 3 1 t\n"
    (tmp_path / "int").mkdir()
    (tmp_path / "f").mkdir()
    whole = compared_run(tmp_path / "int", compare, run, "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n", 3)
    floats = compared_run(tmp_path / "f", compare, run, "1 0 d1 1.0\n1 0 d2 0.0\n1 0 d3 +2.00\n", 3)
    assert floats["metrics"] == whole["metrics"]
    assert floats["per_question"][0]["ndcg@3_a"] == pytest.approx(1.0)
    assert floats["per_question"][0]["recall@3_a"] == pytest.approx(1.0)


def test_beir_qrels_header_is_skipped_and_a_bad_score_named(tmp_path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"q1": {"d1": 0.2, "d2": 0.9}}))
    qrels = tmp_path / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\n")
    source = read(results, ReadOptions(format="beir", qrels=qrels))
    assert source.table.to_pylist() == [
        {"question_id": "q1", "retrieved_ids": ["d2", "d1"], "relevant_ids": ["d1"],
         "relevant_grades": [2]},
    ]  # fmt: skip
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\tmaybe\n")
    with pytest.raises(InputError, match=r"test.tsv: line 3: score 'maybe' is not an integer"):
        read(results, ReadOptions(format="beir", qrels=qrels))


@pytest.mark.parametrize("spacing", [" ", "  "], ids=["one space", "runs of blanks"])
def test_a_byte_order_mark_is_dropped_on_every_reading_path(tmp_path, spacing):
    bom = "\ufeff"
    run = "q1 Q0 d1 1 3 t\n".replace(" ", spacing)
    read_back = _read_trec(tmp_path, bom + run, bom + "q1 0 d1 2\n")
    assert read_back.table.to_pylist() == [
        {"question_id": "q1", "retrieved_ids": ["d1"], "relevant_ids": ["d1"],
         "relevant_grades": [2]},
    ]  # fmt: skip


@pytest.mark.parametrize("spacing", [" ", "\t  "], ids=["one space", "runs of blanks"])
def test_a_document_judged_with_two_grades_is_refused(tmp_path, spacing):
    qrels = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d1 2\nq2 0 d1 1\nq1 0 d1 0\n".replace(" ", spacing)
    with pytest.raises(InputError) as caught:
        _read_trec(tmp_path, "q1 Q0 d1 1 3 t\n", qrels)
    assert str(caught.value) == (
        f"{tmp_path / 'run.trec.qrels'}: line 5: document 'd1' of topic 'q1' is judged 0 here "
        "and 2 at line 1; keep one judgement per topic and document"
    )


def test_a_judgement_repeated_with_its_grade_is_one_judgement(tmp_path):
    source = _read_trec(tmp_path, "q1 Q0 d1 1 3 t\n", "q1 0 d1 2\nq1 0 d1 +2\n")
    assert source.table["relevant_grades"].to_pylist() == [[2]]


def test_a_beir_document_judged_with_two_grades_is_refused(tmp_path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"q1": {"d1": 0.2}}))
    qrels = tmp_path / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t2\n")
    line = fail("compare", results, results, "-o", tmp_path / "r.html", "--qrels", qrels)
    assert line.endswith(
        "test.tsv: line 3: document 'd1' of topic 'q1' is judged 2 here and 1 at line 2; keep one "
        "judgement per topic and document"
    )


@pytest.mark.parametrize(
    ("results", "message"),
    [
        ('{"q1": {"d1": 0.9, "d2": NaN}}', "query 'q1', document 'd2': score is nan"),
        ('{"q1": {"d1": Infinity}}', "query 'q1', document 'd1': score is inf"),
        ('{"q1": {"d1": -Infinity}}', "query 'q1', document 'd1': score is -inf"),
        ("{}", "no ranked document"),
        ('{"q1": {}}', "no ranked document"),
        # JSON keeps a repeated key's last value: q1's first ranking was dropped without a word
        ('{"q1": {"d1": 1}, "q1": {"d2": 1}}', "the key 'q1' appears twice in one object"),
        ('{"q1": {"d1": 1, "d1": 0.5}}', "the key 'd1' appears twice in one object"),
    ],
)
def test_beir_results_without_a_finite_ranking_are_refused(tmp_path, results, message):
    path = tmp_path / "results.json"
    path.write_text(results)
    qrels = tmp_path / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    line = fail("compare", path, path, "-o", tmp_path / "r.html", "--qrels", qrels)
    assert f"{path}: {message}" in line
    assert CliRunner().invoke(cli, ["validate", str(path), "--qrels", str(qrels)]).exit_code == 2


def test_a_run_converted_at_a_rel_level_is_reported_at_it(tmp_path, compare):
    """A TREC run converted with --rel-level 2 was reported with labels_rel_level null (and the
    read options' default 1): its record said nothing of the level its labels were read at.
    convert records it in the Parquet metadata; the report of the converted log states it as
    the original's does, and a Parquet log of its own labels still states none."""
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 d1 1 3 t\n1 Q0 d2 2 2 t\n1 Q0 d3 3 1 t\n2 Q0 d1 1 3 t\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 1\n1 0 d2 -1\n1 0 d3 2\n2 0 d1 2\n")
    log = tmp_path / "run.parquet"
    done = CliRunner().invoke(
        cli, ["convert", str(run), "--qrels", str(qrels), "--rel-level", "2", "-o", str(log)]
    )
    assert done.exit_code == 0, done.output
    original = compare(run, run, tmp_path / "o", "--qrels", qrels, "--rel-level", 2, "--k", 3)
    converted = compare(log, log, tmp_path / "c", "--k", 3)
    assert [r["labels_rel_level"] for r in original["runs"]] == [2, 2]
    assert [r["labels_rel_level"] for r in converted["runs"]] == [2, 2]
    assert converted["metrics"] == original["metrics"]
    said = "The qrels' grades below 2 (--rel-level) are judged not relevant"
    assert said in (tmp_path / "c" / "report.html").read_text().replace("&#39;", "'")
    once = tmp_path / "once.parquet"
    pq.write_table(pq.read_table(log).replace_schema_metadata(None), once)
    plain = compare(once, once, tmp_path / "plain", "--k", 3)
    assert [r["labels_rel_level"] for r in plain["runs"]] == [None, None]


def test_runs_read_at_two_rel_levels_are_refused(tmp_path, compare):
    """Two converted logs, or a TREC run read with --rel-level 2 beside a log converted at 1,
    were compared, where the same runs as metrics tables were refused: B, judged at grade >= 1,
    gained on nDCG from labels A's level 2 called not relevant. Every path refuses them, a study
    too (a baseline of its own labels beside candidates at levels 1 and 2), before any score."""
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 d1 1 3 t\n1 Q0 d2 2 2 t\n1 Q0 d3 3 1 t\n2 Q0 d1 1 3 t\n")
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 1\n1 0 d2 2\n1 0 d3 2\n2 0 d1 2\n")
    logs = {}
    for level in (1, 2):
        logs[level] = tmp_path / f"at{level}.parquet"
        done = CliRunner().invoke(
            cli,
            ["convert", str(run), "--qrels", str(qrels), "--rel-level", str(level)]
            + ["-o", str(logs[level])],
        )
        assert done.exit_code == 0, done.output
    own = tmp_path / "own.parquet"  # the same labels, recorded as the log's own
    pq.write_table(pq.read_table(logs[1]).replace_schema_metadata(None), own)
    out = ("-o", tmp_path / "r.html", "--k", 3)
    advice = (
        "read every run at one level: a run given with --qrels at this command's --rel-level, "
        "a converted log or a ragreport metrics table at the one it records"
    )
    assert fail("compare", logs[2], logs[1], *out) == (
        f"ragreport: error: {logs[1]}: its labels were read from qrels with --rel-level 1, and "
        f"{logs[2]}'s with --rel-level 2; {advice}"
    )
    assert fail("compare", run, logs[1], "--qrels", qrels, "--rel-level", 2, *out) == (
        f"ragreport: error: {logs[1]}: its labels were read from qrels with --rel-level 1, and "
        f"{run}'s with --rel-level 2; {advice}"
    )
    assert fail("compare", own, logs[1], logs[2], *out) == (
        f"ragreport: error: {logs[2]}: its labels were read from qrels with --rel-level 2, and "
        f"{logs[1]}'s with --rel-level 1; {advice}"
    )
    assert not (tmp_path / "r.html").exists()
    # one level, or a log of its own labels beside one, is compared
    assert compare(own, logs[2], tmp_path / "o", "--k", 3)["runs"][1]["labels_rel_level"] == 2
    both = compare(run, logs[2], tmp_path / "t", "--qrels", qrels, "--rel-level", 2, "--k", 3)
    assert [r["labels_rel_level"] for r in both["runs"]] == [2, 2]
