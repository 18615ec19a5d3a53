"""``ragreport verify``: an archived report re-checked against its logs, end to end."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from reportgen import __version__
from reportgen.cli import cli
from reportgen.provenance import library_versions
from reportgen.verify import first_difference

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_A = ROOT / "sample_runs" / "fare_rules_a_baseline.parquet"
SAMPLE_B = ROOT / "sample_runs" / "fare_rules_b_reranker.parquet"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def tiny_rows(n: int, shift: int) -> list[dict]:
    return [
        {
            "question_id": f"q{i}",
            "slice": "odd" if i % 2 else "even",
            "topic": "t" + str(i % 3),
            "retrieved_ids": ["p1", "p2", "p3", f"p{i}"],
            "relevant_ids": [f"p{(i + shift) % 4 + 1}"],
            "relevant_grades": [1 + i % 2],
            "context_ids": ["p1", "p2"],
            "correct": (i + shift) % 3 != 0,
            "faithfulness": ((i * 7 + shift) % 10) / 10,
        }
        for i in range(30)
    ]


@pytest.fixture
def archived(tmp_path) -> tuple[Path, Path, Path]:
    """A report made with options that are not the defaults, and its two logs."""
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pd.DataFrame(tiny_rows(30, 0)).to_parquet(a)
    pd.DataFrame(tiny_rows(30, 1)).to_parquet(b)
    report = tmp_path / "r.json"
    code, out, err = invoke(
        "compare", a, b, "-o", tmp_path / "r.html", "--k", "3", "--gain", "linear",
        "--n-boot", "300", "--confidence", "0.9", "--seed", "7", "--slice", "topic",
        "--slice", "slice", "--supported-threshold", "0.6", "--require", "correct >= -0.5",
        "--require", "correct[slice] >= -0.9",
    )  # fmt: skip
    assert code == 0, err + out
    return report, a, b


def edit(report: Path, change) -> Path:
    doc = json.loads(report.read_text())
    change(doc)
    out = report.with_name("edited.json")
    out.write_text(json.dumps(doc))
    return out


def test_an_untouched_report_verifies(archived):
    report, _, _ = archived
    code, out, err = invoke("verify", report)
    assert code == 0, err
    assert out.startswith(f"{report}: verified, ")
    assert out.endswith(f"numbers and the page {report.with_suffix('.html')} match a re-run\n")
    assert int(out.split("verified, ")[1].split()[0]) > 500


def test_sample_report_verifies_from_another_folder(tmp_path):
    code, _, err = invoke("compare", SAMPLE_A, SAMPLE_B, "-o", tmp_path / "r.html")
    assert code == 0, err
    moved = tmp_path / "moved"
    moved.mkdir()
    logs = [Path(shutil.copy(p, moved)) for p in (SAMPLE_A, SAMPLE_B)]
    code, out, err = invoke("verify", tmp_path / "r.json", *logs)
    assert code == 0, err + out


def test_relative_log_paths_are_looked_for_beside_the_report(tmp_path, monkeypatch):
    """Recorded relative paths were looked for in the current folder only: verify run from
    another folder said "no such log"."""
    for log in (SAMPLE_A, SAMPLE_B):
        shutil.copy(log, tmp_path)
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(
        "compare", SAMPLE_A.name, SAMPLE_B.name, "-o", "r.html", "--n-boot", "100"
    )
    assert code == 0, err
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out, err = invoke("verify", tmp_path / "r.json")
    assert code == 0, out + err
    (tmp_path / SAMPLE_B.name).unlink()
    code, _, err = invoke("verify", tmp_path / "r.json")
    assert code == 2
    assert err == (
        f"ragreport: error: {SAMPLE_B.name}: no such log (run B of {tmp_path / 'r.json'}): not "
        f"at {tmp_path / SAMPLE_B.name} nor {elsewhere / SAMPLE_B.name}; put the file the "
        "report read there, or pass the logs after the report\n"
    )


@pytest.mark.parametrize(
    ("path", "change"),
    [
        ("comparisons[0].metrics.correct.ci_low", lambda d: d["comparisons"][0]["metrics"]["correct"].update(ci_low=d["comparisons"][0]["metrics"]["correct"]["ci_low"] * (1 + 1e-7))),  # noqa: E501
        ("per_question[3].correct_b", lambda d: d["per_question"][3].update(correct_b=7)),
        ("gate.results[1].outcome", lambda d: d["gate"]["results"][1].update(outcome="fail")),
        ("n_paired", lambda d: d.update(n_paired=29)),
    ],
)  # fmt: skip
def test_the_first_differing_number_is_named(archived, path, change):
    report, _, _ = archived
    code, out, _ = invoke("verify", edit(report, change))
    assert code == 1
    assert f"differs at {path}: report " in out


def test_floats_within_the_tolerance_match(archived):
    report, _, _ = archived

    def nudge(d: dict) -> None:
        d["comparisons"][0]["metrics"]["correct"]["ci_low"] *= 1 + 1e-11

    code, out, err = invoke("verify", edit(report, nudge))
    assert code == 0, out + err


def test_the_recorded_options_are_replayed(archived):
    """Verify passes with the recorded options (previous tests); with another seed recorded,
    the re-run differs, so the options are read, not assumed."""
    report, _, _ = archived
    code, out, _ = invoke("verify", edit(report, lambda d: d["params"].update(seed=8)))
    assert code == 1 and "differs at params.seed" not in out  # params match: a number differs


def test_another_log_fails_on_its_sha256(archived):
    report, a, _ = archived
    code, out, _ = invoke("verify", report, a, a)
    assert code == 1 and "differs at runs[1].sha256" in out and str(a) in out


def _cut_short(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-100])


def _out_of_contract(path: Path) -> None:
    table = pq.read_table(path)
    correct = table["correct"].to_pylist()
    correct[5] = 5.0
    at = table.schema.get_field_index("correct")
    pq.write_table(table.set_column(at, "correct", pa.array(correct, pa.float64())), path)


@pytest.mark.parametrize(
    ("damage", "table"),
    [(_cut_short, False), (_cut_short, True), (_out_of_contract, True)],
    ids=["log cut short", "table cut short", "table holding 5.0 as correct"],
)
def test_a_damaged_log_is_another_log_than_the_report_s(archived, tmp_path, damage, table):
    """A log cut short, or a metrics table holding a value out of its contract, was refused as
    bad input (exit 2) with advice to write it again: the archived evidence is not what the
    report read (exit 1), whatever its reader says of it."""
    report, a, b = archived
    if table:
        tables = []
        for log in (a, b):
            tables.append(tmp_path / f"{log.stem}.table.parquet")
            assert invoke("metrics", log, "-o", tables[-1])[0] == 0
        report = tmp_path / "t.json"
        code, _, err = invoke("compare", *tables, "-o", tmp_path / "t.html", "--n-boot", "300")
        assert code == 0, err
        a, b = tables
    damage(b)
    code, out, err = invoke("verify", report)
    assert code == 1, err
    assert out == f"{report}: differs at runs[1].sha256: {b} is not the log the report read\n"


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda r, a: (r.with_name("r.html"),), "r.html: is the report's page; pass "),
        (
            lambda r, a: (Path(shutil.copy(r.with_name("r.html"), r.with_name("page.txt"))),),
            "page.txt: not a report JSON",
        ),
        (lambda r, a: (edit(r, lambda d: d.pop("params")),), "the report lacks params,"),
        (lambda r, a: (r, a), "pass 2 (the baseline first"),
        (lambda r, a: (r, a, a.with_name("gone.parquet")), "gone.parquet: no such log"),
        (lambda r, a: (r.with_name("absent.json"),), "cannot read the report"),
        (lambda r, a: (edit(r, lambda d: d["runs"][1].pop("path")),), "lacks runs[1].path,"),
        (lambda r, a: (edit(r, lambda d: d["runs"].__setitem__(0, "a")),), 'runs[0] is "a", not'),
        (
            lambda r, a: (edit(r, lambda d: d.update(runs=d["runs"][:1])),),
            "runs holds fewer than two logs",
        ),
        (lambda r, a: (edit(r, lambda d: d.update(runs={})),), "runs is {}, not a list"),
        (lambda r, a: (edit(r, lambda d: d["gate"].pop("rules")),), "the report lacks gate.rules,"),
        (
            lambda r, a: (edit(r, lambda d: d["gate"].update(rules=["correct ~ 1"])),),
            "edited.json: gate: rule 'correct ~ 1': cannot read it",
        ),
    ],
)
def test_bad_input_exits_2(archived, make, needle):
    report, a, _ = archived
    code, out, err = invoke("verify", *make(report, a))
    assert code == 2, out
    assert err.startswith("ragreport: error: ") and needle in err and len(err.splitlines()) == 1


def test_first_difference_walks_dicts_and_lists():
    expected = {"a": 1.0, "b": [{"c": 2, "d": "x"}, {"c": 3}]}
    assert first_difference(expected, expected) == (None, 3)

    def path(actual: dict) -> str | None:
        found, _ = first_difference(actual, expected)
        return None if found is None else found.path

    assert path({"a": 1.0, "b": [{"c": 2, "d": "y"}, {"c": 3}]}) == "b[0].d"
    assert path({"a": 1.0, "b": [{"c": 2, "d": "x"}]}) == "b[1]"
    assert path({"a": 1.0 + 1e-8, "b": []}) == "a"
    assert path({"b": [], "a": 1.0}) == "b[0]"  # key order is irrelevant
    assert path({"a": True, "b": expected["b"]}) == "a"


def test_a_key_with_a_dot_is_quoted_and_both_values_shown():
    """A slice value rule.lookup (or a label v1.0) made the path ambiguous, and both sides read
    "(absent)"."""
    report = {"slices": {"rule.lookup": {"correct": {"b": 0.5}}}}
    rerun = {"slices": {"rule.lookup": {"correct": {"b": 0.25}}}}
    found, _ = first_difference(rerun, report)
    assert str(found) == 'slices["rule.lookup"].correct.b: report 0.5, re-run 0.25'
    found, _ = first_difference({"runs": {}}, {"runs": {"v1.0": 1}})
    assert str(found) == 'runs["v1.0"]: report 1, re-run (absent)'


def test_a_trec_report_is_re_read_with_its_reading_options(tmp_path):
    """A TREC run needs --qrels and --rel-level to be read: verify replays them from the JSON."""
    data = ROOT / "tests" / "data" / "trec_eval"
    run, qrels = data / "results.test", data / "qrels.rel_level"
    report = tmp_path / "r.json"
    code, _, err = invoke(
        "compare", run, run, "-o", tmp_path / "r.html", "--qrels", qrels, "--rel-level", "2",
        "--k", "10", "--n-boot", "100",
    )  # fmt: skip
    assert code == 0, err
    recorded = json.loads(report.read_text())["runs"][1]["read"]
    assert (recorded["format"], recorded["qrels"], recorded["rel_level"]) == (None, str(qrels), 2)
    code, out, err = invoke("verify", report)
    assert code == 0, err
    # read at another level the same log gives other numbers: the recorded level is what counts
    code, out, _ = invoke(
        "verify", edit(report, lambda d: [r["read"].update(rel_level=1) for r in d["runs"]])
    )
    assert code == 1 and "differs at runs[0].labels_rel_level: report 2, re-run 1" in out
    # one run at another level is no comparison compare makes: the record was edited
    code, _, err = invoke(
        "verify", edit(report, lambda d: d["runs"][1]["read"].update(rel_level=1))
    )
    assert code == 2 and "do not run on the logs it read, so it was edited" in err
    assert "read from qrels with --rel-level 1, and" in err


def trec_report(tmp_path: Path, run: Path, qrels: Path) -> Path:
    """The report of ``run`` against itself, judged by ``qrels``, at k = 10."""
    report = tmp_path / "r.json"
    code, _, err = invoke(
        "compare", run, run, "-o", tmp_path / "r.html", "--qrels", qrels, "--k", "10",
        "--n-boot", "100",
    )  # fmt: skip
    assert code == 0, err
    return report


def test_the_qrels_file_is_recorded_and_checked(tmp_path):
    run = ROOT / "tests" / "data" / "trec_eval" / "results.test"
    qrels = Path(shutil.copy(ROOT / "tests" / "data" / "trec_eval" / "qrels.test", tmp_path))
    report = trec_report(tmp_path, run, qrels)
    digest = hashlib.sha256(qrels.read_bytes()).hexdigest()
    assert [r["read"]["qrels_sha256"] for r in json.loads(report.read_text())["runs"]] == [
        digest,
        digest,
    ]
    assert invoke("verify", report)[0] == 0
    qrels.write_text(
        qrels.read_text().replace("301 0 FR940202-2-00150 0", "301 0 FR940202-2-00150 1")
    )
    code, out, _ = invoke("verify", report)
    assert code == 1
    assert (
        f"differs at runs[0].read.qrels_sha256: {qrels} is not the qrels file the report read"
        in out
    )
    qrels.unlink()
    code, _, err = invoke("verify", report)
    assert code == 2 and f"{qrels}: no such qrels file (run A of {report})" in err


def test_a_parquet_report_records_no_qrels(archived):
    report, _, _ = archived
    assert [r["read"]["qrels_sha256"] for r in json.loads(report.read_text())["runs"]] == [
        None,
        None,
    ]


def test_other_versions_are_named_in_a_warning(archived):
    report, _, _ = archived
    assert invoke("verify", report)[2] == ""  # the versions installed: no warning

    def older(d: dict) -> None:
        d["tool"]["version"] = "0.0.1"
        d["tool"]["libraries"]["duckdb"] = "0.9.0"

    code, out, err = invoke("verify", edit(report, older))
    assert code == 0, out + err  # a warning, not a failure
    installed = {"ragreport": __version__, "duckdb": library_versions()["duckdb"]}
    assert err == (
        "ragreport: warning: the report was made with ragreport 0.0.1, duckdb 0.9.0; installed: "
        f"ragreport {installed['ragreport']}, duckdb {installed['duckdb']}; numbers may differ "
        "in their last digits\n"
    )


@pytest.mark.parametrize(
    ("version", "code", "says"),
    [
        ("0.0.1", 2, "made with ragreport 0.0.1, whose JSON has other keys than"),
        (__version__, 1, "differs at comparisons[0].extra: report 1, re-run (absent)"),
    ],
)
def test_keys_of_another_version_name_the_version_to_verify_with(archived, version, code, says):
    """A key the installed version does not write read as tampering (exit 1) in a report of
    another version; from the same version it is one."""
    report, _, _ = archived

    def change(d: dict) -> None:
        d["tool"]["version"] = version
        d["comparisons"][0]["extra"] = 1

    result, out, err = invoke("verify", edit(report, change))
    assert result == code and says in out + err
    if code == 2:
        assert "(comparisons[0].extra: ragreport" in err and err.endswith(
            "lacks it); verify it with ragreport 0.0.1\n"
        )


def test_a_changed_number_in_a_report_of_another_version_still_differs(archived):
    report, _, _ = archived

    def change(d: dict) -> None:
        d["tool"]["version"] = "0.0.1"
        d["n_paired"] = 29

    code, out, _ = invoke("verify", edit(report, change))
    assert code == 1 and "differs at n_paired: report 29, re-run 30" in out


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda d: d["params"].update(n_boot=300.0), "params.n_boot is 300.0, not an integer"),
        (lambda d: d["params"].update(seed=7.0), "params.seed is 7.0, not an integer"),
        (lambda d: d["params"].update(k=3.0), "params.k is 3.0, not an integer or null"),
        (lambda d: d["params"].update(n_boot=True), "params.n_boot is true, not an integer"),
        (lambda d: d.update(params=[]), "params is [], not an object"),
        (lambda d: d.update(params=None), "params is null, not an object"),
        (lambda d: d["params"].update(margins=[["correct", "x"]]), "params.margins is"),
        (lambda d: d["runs"][1].update(label=5), "runs[1].label is 5, not a string"),
        (lambda d: d["runs"][1].update(label="A"), 'runs[1].label "A" is also runs[0]\'s,'),
        (lambda d: d["runs"][0].update(sha256=None), "runs[0].sha256 is null, not a string"),
        (lambda d: d["runs"][0].update(path=""), 'runs[0].path is "", not the path of a log'),
        (lambda d: d["runs"][0]["read"].update(format="xml"), 'runs[0].read.format is "xml"'),
        (lambda d: d["runs"][0]["read"].update(rel_level=0), "runs[0].read.rel_level is 0"),
        (lambda d: d["runs"][0].update(read=None), "runs[0].read is null, not an object"),
        (lambda d: d.update(per_question_file={}), "lacks per_question_file.path,"),
        (lambda d: d.update(per_question_file="x"), 'per_question_file is "x", not an object'),
        (lambda d: d["tool"].update(libraries=["x"]), 'tool.libraries is ["x"], not an object'),
        (lambda d: d["tool"].update(version=1), "tool.version is 1, not a string"),
        (lambda d: d["gate"].update(inconclusive="maybe"), 'gate.inconclusive is "maybe"'),
        (lambda d: d.update(run_id=None), "run_id is null, not a string"),
    ],
)
def test_a_key_verify_reads_of_another_type_is_bad_input(archived, change, key):
    """Each ended the re-run in a traceback, exit 1 (what CI reads as tampering). An integer
    written as a float is refused, not rounded: compare never writes one."""
    report, _, _ = archived
    edited = edit(report, change)
    code, out, err = invoke("verify", edited)
    assert code == 2, out + err
    assert err.startswith(f"ragreport: error: {edited}: ") and key in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("block", "key"),
    [
        (lambda d: d["runs"][0]["read"], "qrels_sha256"),
        (lambda d: d["runs"][1]["read"], "passages"),
        (lambda d: d["params"], "score_columns"),
    ],
)
def test_a_report_lacking_a_key_verify_reads_says_so(archived, block, key):
    """Such a report passed (the re-run's key was dropped). The report's version writes every
    key, so the check cannot be made, and no log is blamed."""
    report, _, _ = archived
    edited = edit(report, lambda d: block(d).pop(key))
    code, out, err = invoke("verify", edited)
    assert code == 2, out + err
    assert f".{key}, so it cannot be checked;" in err and "the report lacks " in err


def test_a_trec_report_lacking_its_qrels_digest_does_not_blame_the_log(tmp_path):
    """A changed qrels file was blamed on the run log ("runs[0].sha256: ... is not the log the
    report read") once the report lacked runs[].read.qrels_sha256."""
    run = ROOT / "tests" / "data" / "trec_eval" / "results.test"
    qrels = Path(shutil.copy(ROOT / "tests" / "data" / "trec_eval" / "qrels.test", tmp_path))
    code, _, err = invoke(
        "compare", run, run, "-o", tmp_path / "r.html", "--qrels", qrels, "--k", "10",
        "--n-boot", "100",
    )  # fmt: skip
    assert code == 0, err
    edited = edit(tmp_path / "r.json", lambda d: d["runs"][0]["read"].pop("qrels_sha256"))
    qrels.write_text(qrels.read_text().replace("FR940202-2-00150 0", "FR940202-2-00150 1"))
    code, out, err = invoke("verify", edited)
    assert code == 2 and "runs[0].sha256" not in out + err
    assert "the report lacks runs[0].read.qrels_sha256, so it cannot be checked" in err


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("confidence", 2, "params.confidence is not a value compare takes"),
        ("seed", -1, "params.seed is not a value compare takes"),
        ("n_boot", "x", 'params.n_boot is "x", not an integer'),
        ("n_boot", 5, "params.n_boot is not a value compare takes"),
        ("k", -1, "params.k is not a value compare takes"),
        ("supported_threshold", "nan", 'params.supported_threshold is "nan", not a number'),
        ("holdout", "zzz", "params.holdout is not a value compare takes"),
        ("slices", "slice", 'params.slices is "slice", not a list'),
        (  # blamed on the log, whose sha256 matched: "a.parquet: no column 'nosuch'"
            "slices",
            ["nosuch"],
            "edited.json: its recorded options (params, the runs' read, the gate's rules) do not "
            "run on the logs it read, so it was edited or made by another version (",
        ),
    ],
)
def test_a_report_edited_past_the_command_s_options_is_bad_input(archived, key, value, says):
    """An edited or foreign JSON ended the re-run in a traceback, exit 1 ("a number
    differs" to CI); n_boot 5 was re-run silently. One line, exit 2."""
    report, _, _ = archived
    code, _, err = invoke("verify", edit(report, lambda d: d["params"].__setitem__(key, value)))
    assert code == 2 and err.count("\n") == 1, err
    assert says in err and "Traceback" not in err


def _spans(*spans: tuple[str, int, int]) -> list[dict]:
    return [{"doc_id": d, "start": s, "end": e} for d, s, e in spans]


def test_a_log_with_its_passage_table_renamed_or_moved_verifies(tmp_path):
    """The sha256 of a log read with a passage table named the files by their file names, so a
    renamed copy of the same bytes was "not the log the report read"; a moved passage table is
    looked for and named, with advice that can be followed."""
    passages = tmp_path / "passages.parquet"
    pd.DataFrame(
        {"passage_id": ["x0", "x1", "x2"], "doc_id": ["d1", "d1", "d2"], "start": [10, 200, 0],
         "end": [100, 300, 100]}
    ).to_parquet(passages)  # fmt: skip
    a = pd.DataFrame(
        {"question_id": ["q1", "q2"],
         "relevant_spans": [_spans(("d1", 20, 30)), _spans(("d2", 50, 60))],
         "retrieved_ids": [["x0", "x1"], ["x2", "x0"]], "context_ids": [["x0"], ["x2"]]}
    )  # fmt: skip
    a.to_parquet(tmp_path / "a.parquet")
    a.assign(context_ids=[["x1"], ["x2"]]).to_parquet(tmp_path / "b.parquet")
    report = tmp_path / "out" / "r.json"
    report.parent.mkdir()
    code, _, err = invoke(
        "compare", tmp_path / "a.parquet", tmp_path / "b.parquet",
        "-o", report.with_suffix(".html"), "--passages", passages, "--n-boot", "100",
    )  # fmt: skip
    assert code == 0, err
    renamed = [Path(shutil.copy(tmp_path / f"{run}.parquet", tmp_path / f"renamed_{run}.parquet"))
               for run in "ab"]  # fmt: skip
    code, out, err = invoke("verify", report, *renamed)
    assert code == 0, out + err
    # the same name in another folder verified before, and does now
    code, out, err = invoke("verify", report)
    assert code == 0, out + err
    passages.rename(tmp_path / "moved.parquet")
    code, out, err = invoke("verify", report, *renamed)
    assert code == 2
    assert err == (
        f"ragreport: error: {passages}: no such passage table (run A of {report}): not at "
        f"{passages}; put the file the report read there\n"
    )


def test_a_warning_naming_a_renamed_log_verifies(tmp_path):
    """The chunking sample's warnings name its log ("9 questions of manuals_a_chunk400.parquet
    have overlapping relevant_spans"): a renamed copy differed at that warning."""
    samples = ROOT / "sample_runs"
    a, b = (samples / f"manuals_{name}.parquet" for name in ("a_chunk400", "b_chunk1000"))
    report = tmp_path / "r.json"
    code, _, err = invoke("compare", a, b, "-o", tmp_path / "r.html", "--n-boot", "100")
    assert code == 0, err
    assert any(a.name in w for c in json.loads(report.read_text())["comparisons"]
               for w in c["warnings"])  # fmt: skip
    renamed = Path(shutil.copy(a, tmp_path / "x.parquet"))
    code, out, err = invoke("verify", report, renamed, b)
    assert code == 0, out + err
    # a warning that differs in more than the log's name still differs
    code, out, _ = invoke(
        "verify",
        edit(report, lambda d: d["comparisons"][0]["warnings"].__setitem__(
            0, d["comparisons"][0]["warnings"][0].replace("9 questions", "8 questions"))),
        renamed, b,
    )  # fmt: skip
    assert code == 1 and "differs at comparisons[0].warnings[0]" in out


def test_a_trec_run_renamed_with_its_qrels_verifies(tmp_path):
    """A TREC run's sha256 covers its qrels file: both named by their file names, a renamed
    copy of the run differed."""
    data = ROOT / "tests" / "data" / "trec_eval"
    run = Path(shutil.copy(data / "results.test", tmp_path / "results.test"))
    report = trec_report(tmp_path, run, Path(shutil.copy(data / "qrels.test", tmp_path)))
    renamed = Path(shutil.copy(run, tmp_path / "another.run"))
    code, out, err = invoke("verify", report, renamed, renamed)
    assert code == 0, out + err


def test_a_json_log_named_as_the_report_is_not_read_as_its_report(tmp_path, monkeypatch):
    """compare out.json -o reports/out.html writes reports/out.json: verify looked for the log
    out.json beside the report first, found the report, and refused it as no run log."""
    monkeypatch.chdir(tmp_path)
    rows = [
        {"question_id": f"q{i}", "correct": i % 3 > 0, "model": m} for m in "ab" for i in range(30)
    ]
    frame = pd.DataFrame(rows)
    frame[frame.model == "a"].drop(columns="model").to_json("out.json", orient="records")
    frame[frame.model == "b"].drop(columns="model").to_json("b.json", orient="records")
    (tmp_path / "reports").mkdir()
    code, _, err = invoke(
        "compare", "out.json", "b.json", "-o", "reports/out.html", "--n-boot", "200"
    )
    assert code == 0, err
    code, out, err = invoke("verify", "reports/out.json")
    assert code == 0, err + out
    assert out.startswith("reports/out.json: verified, ")
