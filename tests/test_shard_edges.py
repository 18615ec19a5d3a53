"""``merge`` over shardings a pipeline produces: a shard whose questions have no labels, an
empty shard, shards in any order: the same lines as the whole log's sums."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_shards import N, invoke, rows

N_BOOT = 200


def sums_of(folder, name, run, lo, hi, write_log, seed=5):
    """The sums file of questions lo..hi of ``run`` (an empty slice keeps the log's columns)."""
    shard = folder / f"{name}.parquet"
    pq.write_table(pq.read_table(write_log(shard, rows(run))).slice(lo, hi - lo), shard)
    sums = folder / f"{name}.sums.parquet"
    result = invoke(
        "metrics", shard, "-o", folder / f"{name}.metrics.parquet",
        "--partial-sums", sums, "--n-boot", N_BOOT, "--seed", seed,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return sums


def merged(a_parts, b_parts) -> list[str]:
    result = invoke("merge", *[f"--a={p}" for p in a_parts], *[f"--b={p}" for p in b_parts])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


@pytest.mark.parametrize(
    "cuts",
    [[0, 1, N], [0, 0, 30, N], [0, 30, N, N], [0, 10, 11, 20, 21, N]],
    ids=["unlabelled-question-alone", "empty-first", "empty-last", "unlabelled-shards"],
)
def test_merged_shards_print_the_whole_logs_lines(tmp_path, write_log, cuts):
    whole = [sums_of(tmp_path, run, run, 0, N, write_log) for run in "ab"]
    parts = {
        run: [
            sums_of(tmp_path, f"{run}{s}", run, lo, hi, write_log)
            for s, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:], strict=True))
        ]
        for run in "ab"
    }
    expected = merged([whole[0]], [whole[1]])
    assert [line.split(":")[0] for line in expected][:2] == ["recall", "precision"]
    assert merged(parts["a"], parts["b"][::-1]) == expected


def test_an_empty_shard_writes_an_empty_table(tmp_path, write_log):
    sums = sums_of(tmp_path, "empty", "a", 0, 0, write_log)
    assert pq.read_table(tmp_path / "empty.metrics.parquet").num_rows == 0
    result = invoke("merge", "--a", sums, "--b", sums)
    assert result.exit_code == 2
    assert result.output == (
        "ragreport: error: no metric has partial sums in both runs (A: none; B: none); pass "
        "the sums of shards that hold questions with values\n"
    )


@pytest.fixture
def thirds(tmp_path, write_log):
    """Each run's sums in three shards, and run B's again with another seed."""
    cuts = [(0, 20), (20, 40), (40, N)]
    parts = {
        run: [
            sums_of(tmp_path, f"{run}{s}", run, lo, hi, write_log)
            for s, (lo, hi) in enumerate(cuts)
        ]
        for run in "ab"
    }
    reseeded = sums_of(tmp_path, "b-seed6", "b", 0, N, write_log, seed=6)
    return tmp_path, parts, reseeded


def refusal(*args: object) -> str:
    result = invoke("merge", *args)
    assert result.exit_code == 2
    assert result.output.startswith("ragreport: error: ") and len(result.output.splitlines()) == 1
    return result.output


def test_a_shard_given_twice_is_refused(thirds):
    _, parts, _ = thirds
    a, b = parts["a"], parts["b"]
    args = [f"--a={p}" for p in [*a, a[1]]] + [f"--b={p}" for p in [*b, b[1]]]
    assert f"{a[1]}: holds the same questions as {a[1]}; pass each shard" in refusal(*args)


def test_runs_of_other_seeds_are_named_not_called_other_questions(thirds):
    folder, parts, reseeded = thirds
    args = [f"--a={p}" for p in parts["a"]] + [f"--b={reseeded}"]
    message = refusal(*args)
    assert (
        f"{reseeded}: partial sums of seed 6 with 200 replicates, but {parts['a'][0]} has seed 5 "
        "with 200; compute every shard of both runs with the same --seed and --n-boot"
    ) in message
    assert "different questions" not in message


@pytest.mark.parametrize(
    ("name", "needle"), [("gone.parquet", "no such file"), (".", "is a folder")]
)
def test_a_missing_sums_file_is_named(thirds, name, needle):
    folder, parts, _ = thirds
    message = refusal("--a", folder / name, "--b", parts["b"][0])
    assert f"{folder / name}: {needle}; pass a file written by ragreport metrics" in message


def test_a_shard_of_unlabelled_questions_without_answers_is_scored(tmp_path, write_log):
    """A log without correct: the shard of its unlabelled question has no metric at all, and
    still adds up (no refusal) to the whole log's lines."""
    for run in "ab":
        log = [{k: v for k, v in row.items() if k != "correct"} for row in rows(run)]
        whole = pq.read_table(write_log(tmp_path / f"{run}.parquet", log))
        for name, (lo, hi) in {run: (0, N), f"{run}0": (0, 1), f"{run}1": (1, N)}.items():
            pq.write_table(whole.slice(lo, hi - lo), tmp_path / f"{name}.parquet")
            result = invoke(
                "metrics", tmp_path / f"{name}.parquet", "-o", tmp_path / f"{name}.m.parquet",
                "--partial-sums", tmp_path / f"{name}.s.parquet", "--n-boot", N_BOOT,
            )  # fmt: skip
            assert result.exit_code == 0, result.output
    expected = merged([tmp_path / "a.s.parquet"], [tmp_path / "b.s.parquet"])
    shards = [[tmp_path / f"{run}{s}.s.parquet" for s in "01"] for run in "ab"]
    assert expected[0].startswith("recall:") and merged(*shards) == expected


def test_metrics_and_sums_at_one_path_are_refused(tmp_path, write_log):
    log = write_log(tmp_path / "a.parquet", rows("a"))
    out = tmp_path / "m.parquet"
    result = invoke("metrics", log, "-o", out, "--partial-sums", out)
    assert result.exit_code == 2
    assert (
        result.output
        == f"ragreport: error: {out}: two outputs share one path; give each output its own path\n"
    )
    assert not out.exists()


def test_one_question_gives_no_interval_and_two_give_one(tmp_path, write_log):
    """Question 3: A ranks its passage 4th (mrr@3 0), B 3rd (1/3). Question 6: A 3rd (1/3),
    B 2nd (1/2). One question has no spread, so no interval, as compare says; two have one."""
    one = merged(*[[sums_of(tmp_path, f"{run}1", run, 3, 4, write_log)] for run in "ab"])
    mrr = next(line for line in one if line.startswith("mrr:"))
    assert mrr == (
        "mrr: A 0.0000 B 0.3333 B \u2212 A +0.3333 over 1 question; one question gives no interval"
    )
    a_two, b_two = [
        [sums_of(tmp_path, f"{run}{q}", run, q, q + 1, write_log) for q in (3, 6)] for run in "ab"
    ]
    mrr = next(line for line in merged(a_two, b_two) if line.startswith("mrr:"))
    assert mrr.startswith("mrr: A 0.1667 B 0.4167 B \u2212 A +0.2500 [+0.1667, +0.3333]")
    assert mrr.endswith("over 2 questions")


def test_a_difference_every_question_shares_gets_no_interval(tmp_path):
    """10 of 10 questions fixed, or none changed: every replicate's B - A is the same, so the
    bootstrap's [+1, +1] or [0, 0] would claim certainty that compare (Tango's interval,
    [+0.445, +1] and [-0.278, +0.278]) does not; merge prints the difference without one, and
    what compare gives in its place: it said Tango's of a faithfulness up 0.2 on every question
    (compare's is Wilson's bound on the unseen) and of a latency (compare's is the one value)."""
    ids = [f"q{i}" for i in range(10)]
    sums = {}
    for name, correct, shift in (("a", False, 0.0), ("b", True, 0.2), ("same", False, 0.0)):
        log = tmp_path / f"{name}.parquet"
        table = {
            "question_id": ids,
            "correct": [correct] * 10,
            "faithfulness": [0.5 + shift] * 10,
            "latency_ms": [100 + 500 * shift] * 10,
        }
        pq.write_table(pa.table(table), log)  # fmt: skip
        sums[name] = tmp_path / f"{name}.sums.parquet"
        result = invoke(
            "metrics", log, "-o", tmp_path / f"{name}.m.parquet",
            "--partial-sums", sums[name], "--n-boot", N_BOOT,
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    flat = "over 10 questions; the same B \u2212 A on every question, which resampling cannot vary"
    tango = f"{flat}: no interval (compare gives Tango's score interval from the logs or tables)"
    lines = merged([sums["a"]], [sums["b"]])
    assert f"correct: A 0.0000 B 1.0000 B \u2212 A +1.0000 {tango}" in lines
    assert (
        f"faithfulness: A 0.5000 B 0.7000 B \u2212 A +0.2000 {flat}: no interval (compare gives "
        "one from the logs or tables: Tango's score interval where every value is 0 or 1, else "
        "one as wide as the questions that could differ unseen allow)"
    ) in lines
    assert (
        f"latency_ms (lower is better): A 100.0000 B 200.0000 B \u2212 A +100.0000 {flat}: no "
        "interval (compare's is that one value too: the range of a cost or score is not known)"
    ) in lines
    unchanged = merged([sums["a"]], [sums["same"]])
    assert f"correct: A 0.0000 B 0.0000 B \u2212 A 0.0000 {tango}" in unchanged


@pytest.mark.parametrize("where", ["-o", "--partial-sums"])
def test_metrics_refuses_to_write_over_its_passage_table(tmp_path, where):
    """The passage table is read as much as the log is: an output at its path is refused before
    the log is scored, and the table is left as it was (compare refuses the same)."""
    passages = tmp_path / "passages.parquet"
    pq.write_table(
        pa.table({"passage_id": ["x0", "x1"], "doc_id": ["d1", "d1"], "start": [0, 100],
                  "end": [100, 200]}),
        passages,
    )  # fmt: skip
    log = tmp_path / "a.parquet"
    pq.write_table(
        pa.table({
            "question_id": ["q1"],
            "relevant_spans": [[{"doc_id": "d1", "start": 10, "end": 20}]],
            "retrieved_ids": [["x0", "x1"]],
        }),
        log,
    )  # fmt: skip
    before = passages.read_bytes()
    outputs = {"-o": tmp_path / "m.parquet", "--partial-sums": tmp_path / "s.parquet"}
    outputs[where] = passages
    result = invoke(
        "metrics", log, "--passages", passages,
        "-o", outputs["-o"], "--partial-sums", outputs["--partial-sums"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.output == (
        f"ragreport: error: {passages}: is the file --passages reads; choose another output path\n"
    )
    assert passages.read_bytes() == before
    assert not any(p.exists() for p in outputs.values() if p != passages)


@pytest.mark.parametrize(
    "table, sums, message",
    [
        ("m.csv", "s.parquet", "-o {d}/m.csv: metrics writes Parquet, which a .csv name would "
         "have read as csv"),
        ("m.parquet", "s.json", "--partial-sums {d}/s.json: metrics writes Parquet, which a "
         ".json name would have read as JSON"),
    ],
    ids=["table", "sums"],
)  # fmt: skip
def test_metrics_refuses_a_name_of_another_format(tmp_path, write_log, table, sums, message):
    """Parquet bytes named m.csv: pandas' read_csv and a spreadsheet read them as text."""
    log = write_log(tmp_path / "a.parquet", rows("a"))
    result = invoke(
        "metrics", log, "-o", tmp_path / table, "--partial-sums", tmp_path / sums
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.output == (
        f"ragreport: error: {message.format(d=tmp_path)}; give a path ending in .parquet\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.parquet"]


def test_metrics_writes_under_a_name_of_no_other_format(tmp_path, write_log):
    """.pq, or no extension, names no other format: written, and read by compare."""
    log = write_log(tmp_path / "a.parquet", rows("a"))
    result = invoke("metrics", log, "-o", tmp_path / "m.pq", "--partial-sums", tmp_path / "s")
    assert result.exit_code == 0, result.output
    assert pq.read_table(tmp_path / "m.pq").num_rows == pq.read_table(log).num_rows
    assert pq.read_table(tmp_path / "s").num_rows > 0
