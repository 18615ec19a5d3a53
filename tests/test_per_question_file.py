"""The per-question rows in a Parquet file beside a smaller JSON: asked for with --per-question,
or written beside the JSON when there are more rows than it holds; verify reads them back."""

from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import reportgen
from reportgen.cli import cli
from reportgen.reporters.json_report import RUN_ID_KEY, json_bytes, json_rows, row_bytes

SAMPLES = Path(__file__).resolve().parent.parent / "sample_runs"
A = SAMPLES / "fare_rules_a_baseline.parquet"
B = SAMPLES / "fare_rules_b_reranker.parquet"
C = SAMPLES / "fare_rules_c_prompt.parquet"
N_PAIRED = 240  # questions of the sample pair


def invoke(*args: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def json_size(*logs: Path) -> int:
    """The bytes of the JSON of ``compare`` of ``logs`` (its defaults), the rows in it."""
    return len(reportgen.compare(*logs).to_json().encode())


@pytest.fixture(scope="module")
def inline(tmp_path_factory) -> list[dict]:
    """The rows as the JSON holds them without a per-question file."""
    folder = tmp_path_factory.mktemp("inline")
    code, _, err = invoke("compare", A, B, "-o", folder / "r.html")
    assert code == 0, err
    return json.loads((folder / "r.json").read_text())["per_question"]


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("sidecar")
    code, out, err = invoke(
        "compare", A, B, "-o", folder / "r.html", "--per-question", folder / "q.parquet"
    )
    assert code == 0, err
    return folder, out


def test_the_parquet_holds_the_rows_the_json_held(inline, sidecar):
    folder, _ = sidecar
    table = pq.read_table(folder / "q.parquet")
    assert len(inline) == N_PAIRED
    assert table.column_names == list(inline[0])
    # equal but for the JSON's 15 digits
    pd.testing.assert_frame_equal(table.to_pandas(), pd.DataFrame(inline), rtol=1e-13)


def test_the_json_names_the_file_and_leaves_the_rows_out(sidecar):
    folder, out = sidecar
    doc = json.loads((folder / "r.json").read_text())
    assert doc["per_question"] == []
    assert doc["per_question_file"] == {"path": str(folder / "q.parquet"), "rows": N_PAIRED}
    metadata = pq.read_schema(folder / "q.parquet").metadata
    assert metadata[b"ragreport-run-id"].decode() == doc["run_id"]
    assert out.endswith(f"wrote {folder / 'r.html'}, {folder / 'r.json'}, {folder / 'q.parquet'}\n")


def test_the_page_embeds_no_per_question_download(sidecar):
    folder, _ = sidecar
    html = (folder / "r.html").read_text()
    assert 'download="report-summary.json.gz"' in html
    assert 'download="per-question.csv.gz"' not in html


def test_the_bytes_of_the_rows_are_those_the_json_gives_them(tmp_path):
    """Up to ROWS_MEASURED rows, each is written and counted; past it, evenly spaced ones stand
    for the rest."""
    assert invoke("compare", A, B, "-o", tmp_path / "r.html")[0] == 0
    text = (tmp_path / "r.json").read_text()
    start = text.index('"per_question": [\n') + len('"per_question": [\n')
    written = len(text[start:].removesuffix("\n]\n}\n").encode()) + 2  # the last row's ",\n"
    result = reportgen.compare(A, B)
    assert row_bytes(result.per_question) == written
    assert json_bytes(result._report) == (tmp_path / "r.json").stat().st_size == json_size(A, B)
    rng = np.random.default_rng(0)
    wide = pd.DataFrame(  # 17 metrics, as a log of judges' scores has: 99 MB at 100,000 rows
        {"question_id": [f"q{i}" for i in range(20_000)]}
        | {f"judge_{m}_{r}": rng.random(20_000) for m in range(17) for r in "ab"}
    )
    exact = sum(len(row.encode()) + 2 for row in json_rows(wide))
    assert row_bytes(wide) == pytest.approx(exact, rel=0.01)


def test_past_max_json_bytes_the_rows_go_beside_the_json(tmp_path, monkeypatch):
    """A count of rows let 100,000 questions of 17 metrics make a JSON of 99 MB, and the rows'
    bytes alone 8 runs of 20 metrics and 3 slice columns one of 51 MB (the rest 15 MB): the
    bytes of the whole JSON decide."""
    monkeypatch.setattr("reportgen.pipeline.MAX_JSON_BYTES", json_size(A, B, C) - 1)
    code, out, err = invoke("compare", A, B, C, "-o", tmp_path / "r.html")
    assert code == 0, err
    beside = tmp_path / "r.per-question.parquet"
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["per_question"] == []
    assert doc["per_question_file"] == {"path": str(beside), "rows": 2 * N_PAIRED}
    rows = pq.read_table(beside).to_pandas()
    counts = rows.groupby("candidate").size().to_dict()
    assert counts == {"fare_rules_b_reranker": N_PAIRED, "fare_rules_c_prompt": N_PAIRED}
    assert str(beside) in out


def test_an_earlier_report_s_rows_beside_the_json_are_removed(tmp_path, monkeypatch):
    """A large report wrote r.per-question.parquet; a smaller one at the same -o kept its rows
    in the JSON and left the other run's file beside it, to be uploaded with the folder. A
    file there that no report wrote, or that another report's JSON names, is left alone."""
    monkeypatch.setattr("reportgen.pipeline.MAX_JSON_BYTES", json_size(A, B) - 1)
    assert invoke("compare", A, B, "-o", tmp_path / "r.html")[0] == 0
    beside = tmp_path / "r.per-question.parquet"
    assert beside.exists()
    monkeypatch.setattr("reportgen.pipeline.MAX_JSON_BYTES", json_size(A, B))
    code, out, err = invoke("compare", A, B, "-o", tmp_path / "r.html")
    assert code == 0, err
    assert not beside.exists()
    assert out.endswith(f"removed {beside}, an earlier report's per-question rows\n")
    pq.write_table(pa.table({"x": [1]}), beside)  # not a report's: no run id
    code, out, err = invoke("compare", A, B, "-o", tmp_path / "r.html")
    assert code == 0 and beside.exists() and "removed" not in out
    # another report's rows, which its JSON names, are not the replaced report's: kept
    beside.unlink()
    named = ("--per-question", beside)
    assert invoke("compare", A, B, "-o", tmp_path / "x.html", *named)[0] == 0
    code, out, err = invoke("compare", A, B, "-o", tmp_path / "r.html")
    assert code == 0 and beside.exists() and "removed" not in out


def test_at_max_json_bytes_the_json_keeps_them(tmp_path, monkeypatch):
    monkeypatch.setattr("reportgen.pipeline.MAX_JSON_BYTES", json_size(A, B))
    code, _, err = invoke("compare", A, B, "-o", tmp_path / "r.html")
    assert code == 0, err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert len(doc["per_question"]) == N_PAIRED and "per_question_file" not in doc
    assert not (tmp_path / "r.per-question.parquet").exists()


@pytest.mark.parametrize(
    "where, message",
    [
        (lambda tmp: tmp, "is a folder"),
        (lambda tmp: tmp / "r.json", "two outputs share one path"),
        (lambda tmp: tmp / "missing" / "q.parquet", "does not exist"),
        (lambda tmp: A, "is one of the input run logs"),
        # a .csv name got Parquet bytes
        (
            lambda tmp: tmp / "pq.csv",
            "the per-question rows are written as Parquet; give a path ending in .parquet",
        ),
    ],
    ids=["folder", "the JSON's path", "missing folder", "an input", "not .parquet"],
)
def test_a_bad_path_is_refused_before_anything_is_written(tmp_path, where, message):
    code, _, err = invoke(
        "compare", A, B, "-o", tmp_path / "r.html", "--per-question", where(tmp_path)
    )
    assert code == 2
    assert err.startswith("ragreport: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "r.html").exists()


def test_verify_reads_the_rows_back_from_the_file(sidecar, tmp_path):
    folder, _ = sidecar
    code, out, err = invoke("verify", folder / "r.json", A, B)
    assert code == 0, err
    assert out.endswith(f"numbers and the page {folder / 'r.html'} match a re-run\n")
    # a changed number in the file is found and named like one in the JSON
    table = pq.read_table(folder / "q.parquet")
    rows = table.to_pandas()
    rows.loc[3, "correct_b"] = 7.0
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "r.json").write_text((folder / "r.json").read_text())
    changed = pa.Table.from_pandas(rows, preserve_index=False)
    pq.write_table(changed.replace_schema_metadata(table.schema.metadata), moved / "q.parquet")
    code, out, _ = invoke("verify", moved / "r.json", A, B)
    assert code == 1
    assert "differs at per_question[3].correct_b" in out


def test_verify_refuses_a_file_of_another_run(sidecar, tmp_path):
    folder, _ = sidecar
    (tmp_path / "r.json").write_text((folder / "r.json").read_text())
    run_id = json.loads((folder / "r.json").read_text())["run_id"]
    table = pq.read_table(folder / "q.parquet")
    other = {**table.schema.metadata, RUN_ID_KEY: b"0" * len(run_id)}
    pq.write_table(table.replace_schema_metadata(other), tmp_path / "q.parquet")
    code, out, _ = invoke("verify", tmp_path / "r.json", A, B)
    assert code == 1
    assert out.endswith(
        f"per_question_file: {folder / 'q.parquet'} is from another run (run id "
        f"{'0' * len(run_id)}, the report's {run_id})\n"
    )


def test_verify_checks_the_rows_of_a_file_written_again_without_its_run_id(sidecar, tmp_path):
    """pandas' to_parquet keeps the rows and drops the run id: verify said the file "is from
    another run", which no row showed. It checks the rows and says the id is missing."""
    folder, _ = sidecar
    (tmp_path / "r.json").write_text((folder / "r.json").read_text())
    rows = pd.read_parquet(folder / "q.parquet")
    rows.to_parquet(tmp_path / "q.parquet")  # no run id
    code, out, err = invoke("verify", tmp_path / "r.json", A, B)
    assert code == 0, out + err
    assert "verified, " in out
    assert (
        f"{folder / 'q.parquet'} records no run id (a copy written again by another tool drops "
        "it): its rows are checked against the re-run's alone"
    ) in err
    rows.loc[3, "correct_b"] = 1 - rows.loc[3, "correct_b"]
    rows.to_parquet(tmp_path / "q.parquet")
    code, out, _ = invoke("verify", tmp_path / "r.json", A, B)
    assert code == 1
    assert "differs at per_question[3].correct_b" in out


def test_verify_names_a_missing_file(sidecar, tmp_path):
    folder, _ = sidecar
    doc = json.loads((folder / "r.json").read_text())
    doc["per_question_file"]["path"] = str(tmp_path / "gone.parquet")
    (tmp_path / "r.json").write_text(json.dumps(doc))
    code, _, err = invoke("verify", tmp_path / "r.json", A, B)
    assert code == 2
    assert "gone.parquet, which is missing" in err


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            lambda d: d["per_question_file"].update(rows=999),
            f"differs at per_question_file.rows: report 999, {{q}} holds {N_PAIRED}",
        ),
        (
            lambda d: d.update(per_question=[{"question_id": "q1"}]),
            "differs at per_question: the report holds rows and names a file of them too",
        ),
    ],
    ids=["rows", "rows in the JSON too"],
)
def test_verify_checks_what_the_json_says_of_the_file(sidecar, tmp_path, change, says):
    """per_question_file was set aside unchecked: rows 999 verified."""
    folder, _ = sidecar
    doc = json.loads((folder / "r.json").read_text())
    change(doc)
    (folder / "edited.json").write_text(json.dumps(doc))
    code, out, _ = invoke("verify", folder / "edited.json", A, B)
    assert code == 1
    assert says.format(q=folder / "q.parquet") in out


@pytest.mark.parametrize("log", ["folder", "glob"])
def test_a_file_among_an_input_s_shards_is_refused(tmp_path, log):
    """--per-question inside a folder log (or where its glob matches) was written, then read
    as a shard: verify blamed the log and the next compare found every question twice."""
    shards = tmp_path / "a"
    shards.mkdir()
    rows = pd.read_parquet(A)
    rows.iloc[:120].to_parquet(shards / "part-0.parquet")
    rows.iloc[120:].to_parquet(shards / "part-1.parquet")
    source = shards if log == "folder" else shards / "*.parquet"
    inside = shards / "rows.parquet"
    code, _, err = invoke("compare", source, B, "-o", tmp_path / "r.html", "--per-question", inside)
    assert code == 2 and not inside.exists() and not (tmp_path / "r.html").exists()
    assert err == (
        f"ragreport: error: {inside}: lies among the shards of input {source}, so a later run "
        "would read it as part of that log; choose another output path\n"
    )


def test_the_page_says_where_the_changed_questions_it_leaves_out_are(tmp_path):
    """Past 200 changed questions the page shows the first 200 and said "all are in the JSON's
    per_question list", also when the rows were in the per-question file and that list empty."""
    ids = [f"q{i}" for i in range(600)]
    for name, shift in (("a", 0), ("b", 1)):
        correct = [(i + shift) % 2 == 0 for i in range(600)]
        pd.DataFrame({"question_id": ids, "correct": correct}).to_parquet(
            tmp_path / f"{name}.parquet"
        )
    logs = tmp_path / "a.parquet", tmp_path / "b.parquet"
    rows = tmp_path / "q.parquet"
    for out, extra, where in (
        ("inline", (), "the JSON's per_question list"),
        ("file", ("--per-question", rows), f"the per-question file {rows}"),
    ):
        code, _, err = invoke(
            "compare", *logs, "-o", tmp_path / f"{out}.html", "--n-boot", 100, *extra
        )
        assert code == 0, err
        page = (tmp_path / f"{out}.html").read_text()
        assert (
            f"600 questions changed on correct; the first 200 are shown, all are in {where}."
            in " ".join(html.unescape(page).split())
        )


def test_the_rows_hold_the_slice_cluster_and_cost_columns_the_report_reads(tmp_path):
    """The rows carried the metrics and `slice` only: the cost table, the slices of another
    --slice column and the --cluster intervals could not be recomputed from them."""
    logs = []
    for path in (A, B):
        log = pd.read_parquet(path)
        log["doc_id"] = "d" + (log.index // 4).astype(str)  # four questions a document
        # columns named as the rows' own: each stays the rows', the log's is slice:<name>
        log["candidate"] = ["even", "odd"] * (len(log) // 2)
        log["latency_ms_a"] = "L" + (log.index % 3).astype(str)
        logs.append(log)
        log.to_parquet(tmp_path / path.name)
    options = ("--slice", "slice", "--slice", "answerable", "--cluster", "doc_id",
               "--slice", "candidate", "--slice", "latency_ms_a")  # fmt: skip
    code, _, err = invoke("compare", *(tmp_path / p.name for p in (A, B)), "-o",
                          tmp_path / "r.html", *options)  # fmt: skip
    assert code == 0, err
    doc = json.loads((tmp_path / "r.json").read_text())
    rows = pd.DataFrame(doc["per_question"]).set_index("question_id")
    a, b = (log.set_index("question_id").loc[rows.index] for log in logs)
    # each value as logged (answerable as compare reads a slice value: text)
    assert (rows["cluster:doc_id"] == a["doc_id"]).all()
    assert (rows["slice:answerable"] == a["answerable"].map({True: "true", False: "false"})).all()
    assert (rows["slice:candidate"] == a["candidate"]).all() and (rows["candidate"] == "B").all()
    assert (rows["slice:latency_ms_a"] == a["latency_ms_a"]).all()
    for cost in ("latency_ms", "cost_usd", "context_tokens"):
        assert rows[f"{cost}_a"].tolist() == pytest.approx(a[cost].astype(float).tolist())
        assert rows[f"{cost}_b"].tolist() == pytest.approx(b[cost].astype(float).tolist())
    # the cost table's means and the slice table's sizes, from the rows alone
    (pair,) = doc["comparisons"]
    latency = pair["cost"]["latency_ms"]
    assert (latency["a"], latency["b"]) == pytest.approx(
        (rows["latency_ms_a"].mean(), rows["latency_ms_b"].mean()), rel=1e-12
    )
    by_value = pair["slices"]["answerable"]
    assert {v: m["correct"]["n"] for v, m in by_value.items()} == (
        rows["slice:answerable"].value_counts().to_dict()
    )
    assert pair["metrics"]["correct"]["clusters"] == rows["cluster:doc_id"].nunique()
    assert rows["cluster:doc_id"].nunique() == N_PAIRED // 4
