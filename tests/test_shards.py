"""``ragreport metrics`` (one log's per-question metrics and partial sums) and ``merge``, on a
small log split into shards."""

from __future__ import annotations

import hashlib
import math
import re

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import reference as ref
from click.testing import CliRunner
from scipy import stats as scipy_stats

from reportgen.analysis.poisson import merge, percentile_interval
from reportgen.cli import cli
from reportgen.shards import added, read_sums

N = 60
N_BOOT = 5000  # enough for the 99.5% level the expanded percentile reads on 6 questions


def rows(run: str) -> list[dict]:
    """N questions: B ranks the relevant passage one place higher than A on every third one."""
    out = []
    for i in range(N):
        relevant = [f"r{i}"] if i % 10 else []  # every tenth question has no label
        shift = 1 if run == "b" and i % 3 == 0 else 0
        ranking = [f"x{i}-{j}" for j in range(5)]
        ranking.insert(max(i % 4 - shift, 0), f"r{i}")
        out.append(
            {
                "question_id": f"q{i:03d}",
                "retrieved_ids": ranking,
                "context_ids": ranking[:3],
                "relevant_ids": relevant,
                "relevant_grades": [2] * len(relevant),
                "correct": (i * 7 + (run == "b")) % 3 == 0,
            }
        )
    return out


def invoke(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def shards(tmp_path, write_log):
    """Both runs written whole and in three shards of unequal size; per-run partial sums."""
    cuts = [0, 7, 31, N]
    paths: dict[str, list] = {}
    for run in "ab":
        log = rows(run)
        write_log(tmp_path / f"{run}.parquet", log)
        paths[run] = []
        for s, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
            shard = write_log(tmp_path / f"{run}{s}.parquet", log[lo:hi])
            sums = tmp_path / f"{run}{s}.sums.parquet"
            result = invoke(
                "metrics", shard, "-o", tmp_path / f"{run}{s}.metrics.parquet",
                "--partial-sums", sums, "--n-boot", N_BOOT, "--seed", 9,
            )  # fmt: skip
            assert result.exit_code == 0, result.output
            paths[run].append(sums)
    return tmp_path, paths


def test_metrics_match_the_reference_per_question(shards):
    folder, _ = shards
    table = pq.read_table(folder / "a1.metrics.parquet").to_pylist()
    log = rows("a")[7:31]
    assert [r["question_id"] for r in table] == [r["question_id"] for r in log]
    for got, row in zip(table, log, strict=True):
        expected = ref.all_metrics(row["context_ids"], 3, row["relevant_ids"])
        for name, value in expected.items():
            assert got[name] == pytest.approx(value) if value is not None else got[name] is None
        assert got["correct"] == float(row["correct"])
        assert got["k"] == 3


def test_shards_add_up_to_the_whole_log_bit_for_bit(shards):
    folder, paths = shards
    whole = folder / "a.sums.parquet"
    result = invoke(
        "metrics", folder / "a.parquet", "-o", folder / "a.metrics.parquet",
        "--partial-sums", whole, "--n-boot", N_BOOT, "--seed", 9,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    unsharded = {m: s.sums for m, s in read_sums(whole).items()}
    parts = [read_sums(p) for p in paths["a"]]
    for metric, sums in unsharded.items():
        merged = merge([p[metric].sums for p in parts])
        assert np.array_equal(merged.weighted, sums.weighted), metric
        assert np.array_equal(merged.weights, sums.weights), metric
        assert percentile_interval(merged, 0.9) == percentile_interval(sums, 0.9)
    assert unsharded["recall"].n == N - N // 10  # unlabelled questions are left out
    assert unsharded["correct"].n == N


def test_merge_prints_the_difference_and_its_interval(shards):
    _, paths = shards
    args = ["merge"] + [f"--a={p}" for p in paths["a"]] + [f"--b={p}" for p in paths["b"][::-1]]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    labelled = [i for i in range(N) if i % 10]
    a = np.mean(
        [ref.mrr(r["context_ids"], 3, r["relevant_ids"]) for r in rows("a") if r["relevant_ids"]]
    )
    b = np.mean(
        [ref.mrr(r["context_ids"], 3, r["relevant_ids"]) for r in rows("b") if r["relevant_ids"]]
    )
    line = next(line for line in result.output.splitlines() if line.startswith("mrr:"))
    # the report's minus sign, U+2212, as in every table
    numbers = [float(x.replace("\u2212", "-")) for x in re.findall(r"[-+\u2212]?\d+\.\d+", line)]
    assert numbers[:3] == pytest.approx([a, b, b - a], abs=5e-5)
    low, high = numbers[3:5]
    assert low <= b - a <= high and low < high
    assert line.endswith(f"over {len(labelled)} questions")


def sums_of(folder, log, name, *options):
    """``ragreport metrics`` of ``log`` with partial sums (seed 9, N_BOOT replicates)."""
    sums = folder / f"{name}.sums.parquet"
    result = invoke(
        "metrics", log, "-o", folder / f"{name}.metrics.parquet", "--partial-sums", sums,
        "--n-boot", N_BOOT, "--seed", 9, *options,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return sums


def test_merge_names_retrieval_metrics_at_the_k_they_were_scored(shards, write_log):
    folder, _ = shards
    a, b = (sums_of(folder, folder / f"{run}.parquet", f"{run}k2", "--k", 2) for run in "ab")
    result = invoke("merge", "--a", a, "--b", b)
    assert result.exit_code == 0, result.output
    names = [line.split(":")[0] for line in result.output.splitlines()]
    assert names == ["recall@2", "precision@2", "hit@2", "mrr@2", "ndcg@2", "map@2"] + [
        "rprec@2",
        "all@2",
        "correct",
    ]


@pytest.mark.parametrize(
    "options, said",
    [
        (("--k", 2), "recall scored with --k 2, but {first} with no --k (each question's "),
        (("--gain", "linear"), "ndcg scored with --gain linear, but {first} with --gain exp"),
    ],
)
def test_merge_refuses_shards_scored_with_other_options(shards, options, said):
    folder, paths = shards
    other = sums_of(folder, folder / "b2.parquet", "b2-other", *options)
    result = invoke("merge", *[f"--a={p}" for p in paths["a"]], "--b", paths["b"][0],
                    "--b", paths["b"][1], "--b", other)  # fmt: skip
    assert result.exit_code == 2
    assert result.output.startswith(f"ragreport: error: {other}: ")
    assert said.format(first=paths["a"][0]) in result.output
    assert len(result.output.splitlines()) == 1


def test_merge_names_both_files_of_another_seed(shards):
    folder, paths = shards
    other = folder / "b0.seed.parquet"
    result = invoke(
        "metrics", folder / "b0.parquet", "-o", folder / "b0.m.parquet", "--partial-sums",
        other, "--n-boot", N_BOOT, "--seed", 10,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    result = invoke("merge", *[f"--a={p}" for p in paths["a"]], "--b", other,
                    "--b", paths["b"][1], "--b", paths["b"][2])  # fmt: skip
    assert result.exit_code == 2
    assert result.output == (
        f"ragreport: error: {other}: partial sums of seed 10 with {N_BOOT} replicates, but "
        f"{paths['a'][0]} has seed 9 with {N_BOOT}; compute every shard of both runs with the "
        "same --seed and --n-boot\n"
    )


def test_a_metric_over_other_questions_is_printed_without_a_difference(tmp_path, write_log):
    """Faithfulness judged on 19 of B's 20 questions: correct is still compared, faithfulness
    gets each run's mean and the reason it has no B - A."""
    logs = {}
    for run in "ab":
        log = [
            {"question_id": f"q{i}", "correct": (i + (run == "b")) % 2 == 0,
             "faithfulness": None if run == "b" and i == 3 else (i % 4) / 4}
            for i in range(20)
        ]  # fmt: skip
        logs[run] = sums_of(tmp_path, write_log(tmp_path / f"{run}.parquet", log), run)
    result = invoke("merge", "--a", logs["a"], "--b", logs["b"])
    assert result.exit_code == 0, result.output
    correct, faithfulness = result.output.splitlines()
    assert correct.startswith("correct: A 0.5000 B 0.5000 B \u2212 A 0.0000 [")
    a = np.mean([(i % 4) / 4 for i in range(20)])
    b = np.mean([(i % 4) / 4 for i in range(20) if i != 3])
    assert faithfulness == (
        f"faithfulness: A {a:.4f} B {b:.4f}; no B \u2212 A: the runs' sums cover different "
        "questions (20 and 19)"
    )


def test_a_metric_of_one_run_only_is_named(tmp_path, write_log):
    logs = {}
    for run in "ab":
        log = [{"question_id": f"q{i}", "correct": i % 3 == 0} for i in range(12)]
        if run == "a":
            for row in log:
                row["faithfulness"] = 0.5
        logs[run] = sums_of(tmp_path, write_log(tmp_path / f"{run}.parquet", log), run)
    result = invoke("merge", "--a", logs["a"], "--b", logs["b"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1] == (
        "faithfulness: A 0.5000; no B \u2212 A: in run A's sums only"
    )


def test_span_logs_get_the_character_measures_and_the_span_coverage(tmp_path):
    """One label of 100 characters; the prompt holds a passage with 40 of them and 60 others
    (0.4 of the label: relevant at --span-coverage 0.3, not at 0.5)."""
    log = [
        {
            "question_id": "q1",
            "relevant_spans": [{"doc_id": "d", "start": 100, "end": 200, "grade": 1}],
            "context_spans": [{"doc_id": "d", "start": 160, "end": 260}],
        }
    ]
    path = tmp_path / "spans.parquet"
    pd.DataFrame(log).to_parquet(path)
    for coverage, recall in ((0.3, 1.0), (0.5, 0.0)):
        sums = sums_of(tmp_path, path, f"c{coverage}", "--span-coverage", coverage)
        (row,) = pq.read_table(str(sums).replace(".sums.", ".metrics.")).to_pylist()
        assert row["recall"] == recall
        assert (row["evidence_recall"], row["context_precision"]) == (0.4, 0.4)
        assert row["evidence_iou"] == pytest.approx(40 / 160)
        assert row["prompt_chars"] == 100
        scored = {m: s.scoring for m, s in read_sums(sums).items()}
        assert scored["recall"] == (None, None, coverage)
        assert scored["ndcg"] == (None, "exponential", coverage)
        assert scored["evidence_recall"] == (None, None, None)


def test_merge_refuses_sums_written_without_their_options(shards):
    folder, paths = shards
    old = folder / "old.sums.parquet"
    pq.write_table(pq.read_table(paths["a"][0]).drop(["k", "gain", "span_coverage"]), old)
    result = invoke("merge", "--a", old, "--b", paths["b"][0])
    assert result.exit_code == 2
    assert result.output == (
        f"ragreport: error: {old}: partial sums without the options they were scored with (no "
        "column k, gain, span_coverage: an earlier ragreport); write them again with ragreport "
        "metrics --partial-sums\n"
    )


def resaved_by_duckdb(source, target):
    duckdb.sql(f"COPY (SELECT * FROM '{source}') TO '{target}' (FORMAT parquet)")


def resaved_by_pandas(source, target):
    pd.read_parquet(source).to_parquet(target)


@pytest.mark.parametrize("resave", [resaved_by_duckdb, resaved_by_pandas])
def test_merge_reads_sums_resaved_by_another_tool(shards, resave):
    """DuckDB marks the columns NOT NULL; pandas writes large strings and k as double (it has
    no empty integers). The values are the same, so the lines are."""
    folder, paths = shards
    copy = folder / "copy.sums.parquet"
    resave(paths["a"][0], copy)
    assert pq.read_schema(copy) != pq.read_schema(paths["a"][0])
    original = invoke("merge", "--a", paths["a"][0], "--b", paths["b"][0])
    result = invoke("merge", "--a", copy, "--b", paths["b"][0])
    assert result.exit_code == 0, result.output
    assert result.output == original.output


def gathered_by_duckdb(sources, target):
    """The shards' sums in one file, as DuckDB's COPY of their glob writes it."""
    files = ", ".join(f"'{source}'" for source in sources)
    duckdb.sql(f"COPY (SELECT * FROM read_parquet([{files}])) TO '{target}' (FORMAT parquet)")


def gathered_by_pandas(sources, target):
    pd.concat([pd.read_parquet(source) for source in sources]).to_parquet(target)


@pytest.mark.parametrize("gather", [gathered_by_duckdb, gathered_by_pandas])
def test_a_file_of_gathered_shard_sums_merges_as_the_shards(shards, gather):
    """Each metric in several rows, one a shard: added up, as the files are. Read as the last
    row of each metric, the lines had been the last shard's alone."""
    folder, paths = shards
    separate = invoke("merge", *(f"--{run}={p}" for run in "ab" for p in paths[run]))
    assert separate.exit_code == 0, separate.output
    for order in (1, -1):
        gathered = {run: folder / f"{run}_gathered{order}.sums.parquet" for run in "ab"}
        for run in "ab":
            gather(paths[run][::order], gathered[run])
        assert pq.read_metadata(gathered["a"]).num_rows > len(read_sums(paths["a"][0]))
        result = invoke("merge", "--a", gathered["a"], "--b", gathered["b"])
        assert result.exit_code == 0, result.output
        assert result.output == separate.output
    assert f"over {N} questions" in separate.output


def test_a_file_holding_one_shards_sums_twice_is_refused(shards):
    folder, paths = shards
    twice = folder / "twice.sums.parquet"
    gathered_by_pandas([paths["a"][0], paths["a"][1], paths["a"][0]], twice)
    rows_per_shard = pq.read_metadata(paths["a"][0]).num_rows
    result = invoke("merge", "--a", twice, "--b", paths["b"][0])
    assert result.exit_code == 2
    assert result.output == (
        f"ragreport: error: {twice}, row {2 * rows_per_shard + 1}: holds the same questions as "
        f"{twice}, row 1; pass each shard of a run once\n"
    )


@pytest.mark.parametrize(
    "edit, said",
    [
        (
            lambda r: r.update(weighted=r["weighted"][:-1]),
            f"weighted holds {N_BOOT - 1} replicates and weights {N_BOOT}",
        ),
        (lambda r: r.update(weights=[-1, *r["weights"][1:]]), "a replicate's weight is negative"),
        (
            lambda r: r.update(weights=[0] * len(r["weights"])),
            "no replicate drew any of its 7 questions (every weight is 0)",
        ),
        (lambda r: r.update(n=0), "it counts 0 questions"),
    ],
)
def test_a_row_no_shard_can_give_is_refused_naming_it(shards, edit, said):
    """Each ended in a traceback: an index past the replicates, a quantile of no replicate
    mean, or a mean over no question."""
    folder, paths = shards
    rows = pq.read_table(paths["a"][0]).to_pylist()
    at = next(i for i, row in enumerate(rows) if row["metric"] == "correct")
    edit(rows[at])
    bad = folder / "bad_row.sums.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(paths["a"][0])), bad)
    result = invoke("merge", "--a", bad, "--b", paths["b"][0])
    assert result.exit_code == 2
    assert result.output == (
        f"ragreport: error: {bad}, row {at + 1} (correct): {said}, which no shard's sums can "
        "hold; write the file again with ragreport metrics --partial-sums\n"
    )


def test_merge_refuses_a_column_that_does_not_convert_without_loss(shards):
    folder, paths = shards
    frame = pd.read_parquet(paths["a"][0])
    frame.loc[frame["metric"] == "mrr", "k"] = 5.5
    bad = folder / "bad.sums.parquet"
    frame.to_parquet(bad)
    result = invoke("merge", "--a", bad, "--b", paths["b"][0])
    assert result.exit_code == 2
    assert result.output.startswith(
        f"ragreport: error: {bad}: column k (double) does not convert to int64 without loss ("
    )
    assert result.output.endswith("; write the file with ragreport metrics --partial-sums\n")
    assert len(result.output.splitlines()) == 1


def test_merge_refuses_a_file_given_as_a_shard_of_both_runs(shards):
    """One of A's shards passed as B's had merged silently, comparing its questions with
    themselves; the same files for both runs are a run merged with itself, said so."""
    _, paths = shards
    swapped = [*paths["b"][:2], paths["a"][2]]
    result = invoke("merge", *(f"--a={p}" for p in paths["a"]), *(f"--b={p}" for p in swapped))
    assert result.exit_code == 2
    assert result.output == (
        f"ragreport: error: {paths['a'][2]}: given as a shard of both runs (--a and --b); pass "
        "each run its own shards' sums\n"
    )
    itself = CliRunner().invoke(
        cli, ["merge", *(f"--{run}={p}" for run in "ab" for p in paths["a"])]
    )
    assert itself.exit_code == 0, itself.output
    assert "A and B are the same run" in itself.stderr


def test_merge_refuses_runs_over_different_questions(shards):
    _, paths = shards
    result = invoke("merge", "--a", paths["a"][0], "--b", paths["b"][1])
    assert result.exit_code == 2
    assert result.output.startswith("ragreport: error: the runs' partial sums cover different")
    assert len(result.output.splitlines()) == 1
    # a shard of B left out: said so, with the counts as every message writes them (it read
    # "(19003 and 14258 with recall)", naming neither run)
    result = invoke("merge", *(f for p in paths["a"] for f in ("--a", p)), "--b", paths["b"][0],
                    "--b", paths["b"][2])  # fmt: skip
    assert result.exit_code == 2
    n = {run: [read_sums(p)["recall"].sums.n for p in paths[run]] for run in "ab"}
    assert result.output == (
        "ragreport: error: the runs' partial sums cover different questions: recall over "
        f"{sum(n['a'])} in run A and {n['b'][0] + n['b'][2]} in run B (a shard of run B "
        "missing?); pass the sums of every shard of both runs, computed over the same questions\n"
    )


def test_merge_refuses_a_file_that_is_not_partial_sums(shards):
    folder, paths = shards
    result = invoke("merge", "--a", folder / "a0.metrics.parquet", "--b", paths["b"][0])
    assert result.exit_code == 2
    assert "not a file of partial sums" in result.output


def test_metrics_of_a_bad_log_writes_nothing(tmp_path, write_log):
    log = write_log(tmp_path / "bad.parquet", [{"question_id": "q1", "slice": "x"}])
    out, sums = tmp_path / "m.parquet", tmp_path / "s.parquet"
    result = invoke("metrics", log, "-o", out, "--partial-sums", sums)
    assert result.exit_code == 2
    assert result.output.startswith(f"ragreport: error: {log}: no metric can be computed")
    assert not out.exists() and not sums.exists()


def test_metrics_names_the_log_of_a_column_past_the_fixed_point(tmp_path):
    """A cost of a billion dollars a question: 10 of them pass the 2^31 the units of 2^-32
    hold. The refusal named the column alone, which among many shards names no file."""
    log = tmp_path / "costly.parquet"
    rows = [{"question_id": f"q{i}", "correct": True, "cost_usd": 1e9} for i in range(10)]
    pd.DataFrame(rows).to_parquet(log)
    out, sums = tmp_path / "m.parquet", tmp_path / "s.parquet"
    result = invoke("metrics", log, "-o", out, "--partial-sums", sums)
    assert result.exit_code == 2
    assert result.output.startswith(
        f"ragreport: error: {log}: column cost_usd: its weighted sums over 10 questions pass the "
        "range of 64-bit fixed point"
    )
    assert len(result.output.splitlines()) == 1
    assert not out.exists() and not sums.exists()


def hand_fingerprint(texts: dict[str, str]) -> int:
    """The definition in the README: per question the first 8 bytes of the MD5 digest of
    question_id, chr(29) and the text, little-endian, summed mod 2^64."""
    digests = [hashlib.md5(f"{q}\x1d{t}".encode()).digest() for q, t in texts.items()]
    return sum(int.from_bytes(d[:8], "little") for d in digests) % 2**64


def test_fingerprints_add_up_across_shards_to_the_whole_logs(shards):
    folder, paths = shards
    whole = sums_of(folder, folder / "a.parquet", "whole")
    parts = [read_sums(p) for p in paths["a"]]
    for metric, own in read_sums(whole).items():
        assert added([p[metric] for p in parts if metric in p], metric).fingerprints == (
            own.fingerprints
        )
    recall = read_sums(whole)["recall"].fingerprints  # over the labelled questions
    labelled = [r for r in rows("a") if r["relevant_ids"]]
    relevant = {r["question_id"]: f"{r['relevant_ids'][0]}\x1f2" for r in labelled}  # grade 2
    assert recall["relevant"] == hand_fingerprint(relevant)
    assert recall["answerable"] is None and recall["reference"] is None  # not logged
    # One sample per question: retrieved_ids, context_ids, answer, cited_ids, correct,
    # faithfulness, answer_relevance, abstained (the log has no answer, cited_ids, ...).
    outputs = {
        r["question_id"]: "\x1e".join(
            ["\x1f".join(r["retrieved_ids"]), "\x1f".join(r["context_ids"]), "", "",
             str(r["correct"]).lower(), "", "", ""]
        )
        for r in labelled
    }  # fmt: skip
    assert recall["outputs"] == hand_fingerprint(outputs)


def relabelled(run: str) -> list[dict]:
    """Run ``run`` with question q013's passage judged grade 1 instead of 2."""
    log = rows(run)
    log[13]["relevant_grades"] = [1]
    return log


def test_merge_warns_when_the_golden_set_changed_and_strict_refuses(shards, write_log):
    folder, paths = shards
    b = sums_of(folder, write_log(folder / "b_relabelled.parquet", relabelled("b")), "b_rl")
    a = sums_of(folder, folder / "a.parquet", "a_whole")
    result = CliRunner().invoke(cli, ["merge", "--a", str(a), "--b", str(b)])
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "ragreport: warning: The golden set changed between the runs (relevant labels): each "
        "run was scored on its own labels; the sums cannot tell on which questions\n"
    )
    assert result.stdout.startswith("recall: ")
    strict = CliRunner().invoke(cli, ["merge", "--a", str(a), "--b", str(b), "--strict"])
    assert strict.exit_code == 2
    assert strict.output == (
        "ragreport: error: the golden set changed between the runs (relevant labels), in some "
        "shard the sums cannot name; score both runs on one frozen label set, or drop --strict "
        "to see the comparison with a warning\n"
    )
    same_labels = sums_of(folder, folder / "b.parquet", "b_whole")
    quiet = CliRunner().invoke(cli, ["merge", "--a", str(a), "--b", str(same_labels), "--strict"])
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_merge_of_a_run_with_itself_says_so(shards, write_log):
    folder, paths = shards
    copy = sums_of(folder, write_log(folder / "a_copy.parquet", rows("a")), "a_copy")
    result = CliRunner().invoke(cli, ["merge", *[f"--a={p}" for p in paths["a"]], "--b", copy])
    assert result.exit_code == 0, result.output
    assert "B \u2212 A 0.0000" in result.stdout
    assert result.stderr == (
        "ragreport: warning: A and B are the same run: their outputs and labels have the same "
        "fingerprints\n"
    )


def test_sums_without_fingerprints_merge_with_a_note(shards):
    folder, paths = shards
    old = folder / "old.sums.parquet"
    table = pq.read_table(paths["a"][0])
    pq.write_table(table.drop([c for c in table.column_names if c.endswith("_fingerprint")]), old)
    result = CliRunner().invoke(cli, ["merge", "--a", str(old), "--b", str(paths["b"][0])])
    assert result.exit_code == 0, result.output
    assert result.stdout == invoke("merge", "--a", paths["a"][0], "--b", paths["b"][0]).stdout
    assert result.stderr == (
        "ragreport: warning: the partial sums of one run have no fingerprints (an earlier "
        "ragreport), so whether the golden set changed between the runs could not be checked; "
        "write them again with ragreport metrics --partial-sums\n"
    )


def test_merge_warns_when_the_replicates_are_too_few_for_the_level(tmp_path, write_log):
    """The intervals merge prints are expanded percentile intervals (percentile_interval): at
    99.9% on the 54 labelled questions of recall (every tenth of 60 has no label), the fewest
    any interval has, the quantiles are read at 1 - 2 Phi(-sqrt(54 / 53) t(53, 0.9995)), so
    100 replicates leave about 0.022 beyond each bound, which is then the most extreme
    replicate's and moves with --seed. compare warned of this and merge did not."""
    sums = {}
    for run in "ab":
        sums[run] = tmp_path / f"{run}.sums.parquet"
        result = invoke(
            "metrics", write_log(tmp_path / f"{run}.parquet", rows(run)),
            "-o", tmp_path / f"{run}.metrics.parquet", "--partial-sums", sums[run],
            "--n-boot", 100, "--seed", 9,
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    merged = CliRunner().invoke(
        cli, ["merge", "--a", str(sums["a"]), "--b", str(sums["b"]), "--confidence", "0.999"]
    )
    assert merged.exit_code == 0, merged.output
    assert merged.stdout.startswith("recall: ")
    level = 1 - 2 * scipy_stats.norm.cdf(-np.sqrt(54 / 53) * scipy_stats.t.ppf(0.9995, 53))
    beyond, needed = 100 * (1 - level) / 2, math.ceil(20 / (1 - level))
    assert (f"{beyond:.2g}", f"{level:.4%}", needed) == ("0.022", "99.9563%", 45_736)
    assert merged.stderr == (
        "ragreport: warning: --n-boot 100 leaves fewer than 10 resamples (about 0.022) beyond "
        "each bound of the 99.9% interval of B \u2212 A in recall on 54 questions, which takes "
        "its bounds at the 99.96% level of its resamples (the expanded percentile, which "
        "corrects the bootstrap's narrowness on few): a bound is then about the most extreme "
        "resample and moves with --seed; --n-boot 45,736 or more leaves 10\n"
    )

    # at 80% the nominal level leaves 100 * 0.2 / 2 = 10 beyond each bound, the expanded one
    # 9.5: too few; at 75%, 12: enough
    def warned(confidence: str) -> bool:
        args = ["merge", "--a", str(sums["a"]), "--b", str(sums["b"]), "--confidence", confidence]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        return result.stderr != ""

    assert warned("0.8") and not warned("0.75")


def test_metrics_of_a_log_of_samples_scores_each_question_once(tmp_path):
    """Two samples of q0 and q1, one of q2: the table has a row per question, correct the mean
    of its samples. It stopped with a traceback (a fingerprint per row, not per question)."""
    log = tmp_path / "samples.parquet"
    frame = pd.DataFrame({"question_id": ["q0", "q1", "q0", "q1", "q2"], "sample": list("xxyyx"),
                          "correct": [True, True, False, True, False],
                          "relevant_ids": [["p0"], ["p1"], ["p0"], ["p1"], ["p2"]],
                          "context_ids": [["p0"], ["p9"], ["p9"], ["p1"], ["p2"]]})  # fmt: skip
    frame.to_parquet(log)
    result = invoke("metrics", log, "-o", tmp_path / "m.parquet", "--partial-sums", tmp_path / "s")
    assert result.exit_code == 0, result.output
    table = pd.read_parquet(tmp_path / "m.parquet")
    assert table["question_id"].tolist() == ["q0", "q1", "q2"]
    assert table["correct"].tolist() == [0.5, 1.0, 0.0]
    assert table["recall"].tolist() == [0.5, 0.5, 1.0]
    assert table["relevant_key"].notna().all() and table["outputs_key"].notna().all()


def test_metrics_carries_the_score_and_cost_columns_compare_compares(tmp_path):
    """A RAGAS table's answer_relevancy (compared as answer_relevance) and context_recall, and a
    log's latency_ms (the mean of a question's samples, NaN and inf left out, as compare takes
    it), are in the per-question table and the partial sums, and merge prints them after the
    report's own metrics: they were dropped without a word."""
    from test_eval_tool_readers import ragas_frame

    sums = {}
    for run, relevancy in (("a", [0.9, 0.8, 0.7]), ("b", [0.6, 0.8, 1.0])):
        frame = ragas_frame([1.0, 0.5, 0.25], True).assign(answer_relevancy=relevancy)
        frame.to_parquet(tmp_path / f"{run}.parquet")
        sums[run] = tmp_path / f"{run}.sums.parquet"
        result = invoke(
            "metrics", tmp_path / f"{run}.parquet", "-o", tmp_path / f"{run}.m.parquet",
            "--partial-sums", sums[run],
        )  # fmt: skip
        assert result.exit_code == 0 and result.stderr == "", result.output
    table = pd.read_parquet(tmp_path / "a.m.parquet")
    assert table["answer_relevance"].tolist() == [0.9, 0.8, 0.7]
    assert table["context_recall"].tolist() == [1.0, 0.0, 0.0]
    lines = invoke("merge", "--a", sums["a"], "--b", sums["b"]).stdout.splitlines()
    assert [line.split(":")[0] for line in lines[-3:]] == [
        "faithfulness", "answer_relevance", "context_recall"
    ]  # fmt: skip
    assert lines[-2].startswith("answer_relevance: A 0.8000 B 0.8000 B \u2212 A 0.0000 [")

    log = tmp_path / "costs.parquet"
    latency = [100.0, 300.0, math.nan, math.inf, 50.0]  # q0 twice, q1 twice, q2 once
    pd.DataFrame({"question_id": ["q0", "q0", "q1", "q1", "q2"], "sample": list("xyxyx"),
                  "correct": [True, False, True, True, False], "latency_ms": latency,
                  "cost_usd": [0.01] * 5}).to_parquet(log)  # fmt: skip
    result = invoke("metrics", log, "-o", tmp_path / "c.parquet")
    assert result.exit_code == 0, result.output
    costs = pd.read_parquet(tmp_path / "c.parquet").set_index("question_id")
    assert costs["latency_ms"]["q0"] == 200.0 and costs["latency_ms"]["q2"] == 50.0
    assert math.isnan(costs["latency_ms"]["q1"])  # no finite value
    assert costs["cost_usd"].tolist() == pytest.approx([0.01] * 3)
    # merge says which way a cost is better: B - A above 0 is slower here. q1 has no finite
    # latency in either run, so both runs' means are over q0 and q2: A (200 + 50) / 2, B
    # (250 + 100) / 2; both questions are 50 ms slower, which no resample varies: no interval
    slower = tmp_path / "slower.parquet"
    latency = [150.0, 350.0, math.nan, math.nan, 100.0]
    pd.read_parquet(log).assign(latency_ms=latency).to_parquet(slower)
    parts = {}
    for run in (log, slower):
        parts[run] = tmp_path / f"{run.stem}.sums.parquet"
        result = invoke("metrics", run, "-o", tmp_path / "m.parquet", "--partial-sums", parts[run])
        assert result.exit_code == 0, result.output
    lines = invoke("merge", "--a", parts[log], "--b", parts[slower]).stdout.splitlines()
    assert [line for line in lines if line.startswith("latency_ms")][0].startswith(
        "latency_ms (lower is better): A 125.0000 B 175.0000 B \u2212 A +50.0000 over 2 "
        "questions; the same B \u2212 A on every question"
    )
    assert [line for line in lines if line.startswith("correct")][0].startswith("correct: A ")


def test_metrics_names_a_score_column_with_no_value_it_leaves_out(tmp_path):
    from test_eval_tool_readers import ragas_frame

    log = tmp_path / "ragas.parquet"
    ragas_frame([1.0, 0.5, 0.25], True).assign(context_recall=[None] * 3).to_parquet(log)
    result = invoke("metrics", log, "-o", tmp_path / "m.parquet")
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"ragreport: warning: {log}: score column context_recall holds no number or true/false "
        "value here, so the per-question table leaves it out\n"
    )
    assert "context_recall" not in pq.read_schema(tmp_path / "m.parquet").names


def test_long_prompts_counted_in_tokens_merge_past_two_billion(tmp_path, write_log):
    """context_tokens of about a million a question over 3,000 questions sum past 2^31, the
    range of the sums kept in units of 2^-32: metrics --partial-sums refused every metric of
    the run ("rescale the metric or split the questions into more shards"), and shards of it
    were refused by merge. Milliseconds and tokens are summed in units of 2^-16: the shards'
    sums add up to the whole log's, and merge's means are the logs' own."""
    n = 3_000
    tokens = {"a": [1_000_000.0 + (i * 7919) % 1000 for i in range(n)]}
    tokens["b"] = [t - 50 + (i % 3) for i, t in enumerate(tokens["a"])]
    sums: dict[str, list] = {}
    for run in "ab":
        frame = pd.DataFrame(
            {
                "question_id": [f"q{i}" for i in range(n)],
                "correct": [(i + (run == "b")) % 3 == 0 for i in range(n)],
                "context_tokens": tokens[run],
            }
        )
        sums[run] = []
        for part, rows_ in (("whole", frame), ("0", frame[:1000]), ("1", frame[1000:])):
            log = tmp_path / f"{run}-{part}.parquet"
            rows_.to_parquet(log)
            sums[run].append(tmp_path / f"{run}-{part}.sums.parquet")
            result = invoke("metrics", log, "-o", tmp_path / "m.parquet", "--partial-sums",
                            sums[run][-1], "--n-boot", 200)  # fmt: skip
            assert result.exit_code == 0, result.output
    whole = read_sums(sums["a"][0])["context_tokens"].sums
    parts = added([read_sums(path)["context_tokens"] for path in sums["a"][1:]], "x").sums
    assert whole.bits == 16 and read_sums(sums["a"][0])["correct"].sums.bits == 32
    assert whole.total > 2**31 * 2**16 and parts.total == whole.total
    assert np.array_equal(parts.weighted, whole.weighted)
    result = invoke("merge", *(f for r in "ab" for p in sums[r][1:] for f in (f"--{r}", p)))
    assert result.exit_code == 0, result.output
    line = [x for x in result.stdout.splitlines() if x.startswith("context_tokens")][0]
    mean_a, mean_b = np.mean(tokens["a"]), np.mean(tokens["b"])
    assert line.startswith(
        f"context_tokens (lower is better): A {mean_a:.4f} B {mean_b:.4f} B \u2212 A "
        f"{mean_b - mean_a:+.4f} [".replace("-", "\u2212")
    )


def test_sums_of_an_earlier_ragreport_are_in_units_of_2_to_the_minus_32(shards):
    """A sums file without fixed_point_bits was written in units of 2^-32: it merges as
    before, and is refused beside one in other units, which its values would misread."""
    folder, paths = shards
    old = folder / "old.sums.parquet"
    table = pq.read_table(paths["a"][0])
    pq.write_table(table.drop(["fixed_point_bits"]), old)
    result = invoke("merge", "--a", old, "--b", paths["b"][0])
    assert result.stdout == invoke("merge", "--a", paths["a"][0], "--b", paths["b"][0]).stdout
    coarse = folder / "coarse.sums.parquet"  # another shard of the run, in units of 2^-16
    other = pq.read_table(paths["a"][1])
    bits = pa.array([16] * other.num_rows, pa.int64())
    pq.write_table(other.set_column(other.schema.get_field_index("fixed_point_bits"),
                                    "fixed_point_bits", bits), coarse)  # fmt: skip
    result = CliRunner().invoke(cli, ["merge", "--a", str(old), "--a", str(coarse), "--b",
                                      str(paths["b"][0])])  # fmt: skip
    assert result.exit_code == 2
    assert result.output.startswith(  # the file and the metric named, of many shards
        f"ragreport: error: {coarse}: recall summed in units of 2^-16, but {old} in units of "
        "2^-32; write every shard of both runs with the same version of ragreport"
    )


@pytest.mark.parametrize("option", ["-o", "--partial-sums"])
def test_a_table_written_to_stdout_is_the_parquet_file_alone(tmp_path, option):
    """`ragreport metrics log -o - | aws s3 cp - ...`: the "wrote" line followed the Parquet
    bytes on stdout, so no reader could open the table, with exit 0 and nothing on stderr."""
    import subprocess
    import sys
    from pathlib import Path

    log = Path(__file__).parents[1] / "sample_runs" / "fare_rules_a_baseline.parquet"
    other = "--partial-sums" if option == "-o" else "-o"
    command = ["metrics", str(log), option, "/dev/stdout", other, str(tmp_path / "file.parquet")]
    with (tmp_path / "stdout.parquet").open("wb") as out:
        done = subprocess.run(
            [sys.executable, "-m", "reportgen", *command],
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    tables = [pq.read_table(tmp_path / "stdout.parquet"), pq.read_table(tmp_path / "file.parquet")]
    per_question, sums = tables if option == "-o" else tables[::-1]
    assert per_question.num_rows == 240 and "metric" in sums.column_names
    assert done.stderr.startswith("wrote ") and done.stderr.endswith("(240 questions)\n")
