"""The outputs are sibling reporters: each module ``reporters/*_report.py`` has one
``render(report: Report)`` (text; bytes for the Parquet of per-question rows), and the pipeline
writes each requested one through it."""

from __future__ import annotations

import gc
import importlib
import inspect
import json
import subprocess
import sys
import weakref
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import get_type_hints

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reportgen.analysis.metrics import Options
from reportgen.comparison.study import run_study
from reportgen.errors import InputError
from reportgen.pipeline import Outputs, make_report
from reportgen.reporters.report import Report

REPORTERS = sorted(
    p.stem for p in (Path(__file__).parent.parent / "reportgen" / "reporters").glob("*_report.py")
)


def test_the_five_formats_are_reporters():
    assert REPORTERS == [
        "html_report",
        "json_report",
        "junit_report",
        "markdown_report",
        "per_question_report",
    ]


@pytest.mark.parametrize("name", REPORTERS)
def test_each_reporter_renders_one_report_to_its_file(name):
    render = importlib.import_module(f"reportgen.reporters.{name}").render
    assert list(inspect.signature(render).parameters) == ["report"]
    kind = bytes if name == "per_question_report" else str
    assert get_type_hints(render) == {"report": Report, "return": kind}


def test_each_requested_output_is_written_by_its_reporter(tmp_path):
    rows = [
        {"question_id": f"q{i}", "correct": i % 3 == 0, "faithfulness": (i % 4) / 3}
        for i in range(24)
    ]
    logs = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    for path, shift in zip(logs, (0, 1), strict=True):
        pd.DataFrame(rows).assign(correct=[(i + shift) % 3 == 0 for i in range(24)]).to_parquet(
            path
        )
    outputs = Outputs(
        tmp_path / "r.html",
        tmp_path / "r.json",
        tmp_path / "r.md",
        tmp_path / "r.xml",
        tmp_path / "r.parquet",
    )
    used = {reporter.__module__ for _, reporter in outputs.requested()}
    assert used == {f"reportgen.reporters.{name}" for name in REPORTERS}
    make_report(logs, Options(n_boot=200), outputs)
    document = json.loads(outputs.json.read_text())
    run_id = document["run_id"]
    assert f'<meta name="ragreport-run-id" content="{run_id}">' in outputs.html.read_text()
    assert outputs.markdown.read_text().startswith("## ragreport: a.parquet vs b.parquet")
    assert "attached HTML, r.html" in outputs.markdown.read_text()
    assert ET.parse(outputs.junit).getroot().get("tests") == "0"  # no rule given
    assert document["per_question"] == []  # asked for as Parquet, so not in the JSON
    assert document["per_question_file"] == {"path": str(outputs.per_question), "rows": 24}
    rows = pd.read_parquet(outputs.per_question)
    assert set(rows["question_id"]) == {f"q{i}" for i in range(24)}


def test_optional_outputs_are_written_only_when_asked():
    outputs = Outputs(Path("r.html"), Path("r.json"))
    assert [path.name for path, _ in outputs.requested()] == ["r.html", "r.json"]


def test_a_refused_log_is_reported_before_the_page_libraries_load(tmp_path):
    """Altair, vl-convert and Jinja load only to render the page, so a log refused on reading
    costs their start-up no more."""
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"question_id": ["q1"]}), bad)
    sample = Path(__file__).parent.parent / "sample_runs" / "fare_rules_a_baseline.parquet"
    out = tmp_path / "r.html"
    script = (
        "import sys\n"
        "from reportgen.cli import main\n"
        "try:\n"
        f"    main(['compare', {str(bad)!r}, {str(sample)!r}, '-o', {str(out)!r}])\n"
        "except SystemExit as exc:\n"
        "    print(exc.code, sorted({'altair', 'vl_convert', 'jinja2'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.split("\n")[0] == "2 []", done.stdout + done.stderr
    assert "no metric can be computed" in done.stderr
    assert not out.exists()


def test_a_report_without_clusters_never_loads_scipy_optimize(tmp_path):
    """scipy.optimize (with SciPy's linear algebra and geometry) serves only --cluster's power
    sentence; loading it on every report cost 0.1-0.3 s of each run's start."""
    sample = Path(__file__).parent.parent / "sample_runs"
    logs = [str(sample / f"fare_rules_{name}.parquet") for name in ("a_baseline", "b_reranker")]
    out = tmp_path / "r.html"
    script = (
        "import sys\n"
        "from reportgen.cli import main\n"
        "args = ['compare', *sys.argv[1:3], '-o', sys.argv[3], '--n-boot', '200', '--quiet']\n"
        "for extra in ([], ['--cluster', 'slice']):\n"
        "    try:\n"
        "        main(args + extra)\n"
        "    except SystemExit as exc:\n"
        "        print('exit', exc.code, 'scipy.optimize' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *logs, str(out)], capture_output=True, text=True
    )
    exits = [line for line in done.stdout.split("\n") if line.startswith("exit ")]
    assert exits == ["exit 0 False", "exit 0 True"], done.stdout + done.stderr


def test_the_page_libraries_start_loading_once_each_pair_is_accepted(tmp_path):
    """``accepted`` runs once per pair, after the checks: never for a refused log."""
    sample = Path(__file__).parent.parent / "sample_runs"
    names = ("a_baseline", "b_reranker", "c_prompt")
    logs = [sample / f"fare_rules_{name}.parquet" for name in names]
    calls: list[str] = []
    run_study(logs, Options(n_boot=200), accepted=lambda: calls.append("accepted"))
    assert calls == ["accepted", "accepted"]
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"question_id": ["q1"]}), bad)
    with pytest.raises(InputError, match="no metric can be computed"):
        run_study([bad, logs[0]], Options(n_boot=200), accepted=lambda: calls.append("bad"))
    assert calls == ["accepted", "accepted"]


@pytest.mark.parametrize("runs", [2, 3])
def test_each_candidates_headline_charts_go_to_the_child_before_its_slices(
    tmp_path, monkeypatch, runs
):
    """The differences, the curve and the bootstrap of each candidate are drawn while its
    slices' intervals (and the next candidate's work) run, and once: the page takes the charts
    built ahead, in the colours it draws that candidate in."""
    import reportgen.comparison.compare as compare
    from reportgen.reporters.html import svg_process
    from reportgen.reporters.html.charts import RUN_COLOURS, STUDY_COLOURS

    sample = Path(__file__).parent.parent / "sample_runs"
    names = ("a_baseline", "b_reranker", "c_prompt")[:runs]
    logs = [sample / f"fare_rules_{name}.parquet" for name in names]
    at_slices: list[list[dict]] = []
    drawn: list[int] = []
    slice_results, finish = compare.slice_results, svg_process._Child.finish

    def slices(*args, **kwargs):
        at_slices.append([json.loads(text) for text in svg_process._child.sent])
        return slice_results(*args, **kwargs)

    def finished(child):
        drawn.append(len(child.sent))
        return finish(child)

    monkeypatch.setattr(compare, "slice_results", slices)
    monkeypatch.setattr(svg_process._Child, "finish", finished)
    out = tmp_path / "r.html"
    make_report(logs, Options(n_boot=200), Outputs(out, tmp_path / "r.json"))
    assert [len(specs) for specs in at_slices] == [3 * k for k in range(1, runs)]
    titles = [spec.get("title") for spec in at_slices[-1]]
    assert titles.count("Per-question difference B − A in correct") == runs - 1
    # each candidate's curve in its page's colours: RUN_COLOURS on the two-run page, else the
    # baseline's and the candidate's own
    curves = [json.dumps(spec) for spec in at_slices[-1] if "facet" in spec]
    pairs = (
        [(RUN_COLOURS.a, RUN_COLOURS.b)]
        if runs == 2
        else [(STUDY_COLOURS[0], c) for c in STUDY_COLOURS[1:runs]]
    )
    assert len(curves) == runs - 1
    for (a, b), curve in zip(pairs, curves, strict=True):
        assert f'"domain": ["A", "B"], "range": ["{a}", "{b}"]' in curve
    assert drawn == [out.read_text().count('<figure class="chart"')]  # every chart drawn once


def test_a_run_that_fails_after_drawing_ahead_holds_on_to_no_table(tmp_path, monkeypatch):
    """The charts drawn ahead wait for the page by a weak reference to their comparison's
    tables: a failure before the page leaves no per-question table alive in the process."""
    import reportgen.comparison.compare as compare

    sample = Path(__file__).parent.parent / "sample_runs"
    logs = [sample / f"fare_rules_{name}.parquet" for name in ("a_baseline", "b_reranker")]
    tables: list[weakref.ref] = []

    def slices(metric_tables, *args, **kwargs):
        tables.append(weakref.ref(metric_tables))
        raise RuntimeError("stopped before the slices")

    monkeypatch.setattr(compare, "slice_results", slices)
    with pytest.raises(RuntimeError, match="stopped"):
        make_report(logs, Options(n_boot=200), Outputs(tmp_path / "r.html", tmp_path / "r.json"))
    gc.collect()
    assert len(tables) == 1 and tables[0]() is None
    assert not (tmp_path / "r.html").exists()
