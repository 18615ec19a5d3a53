"""Each run of a study keeps one colour on every chart of its page: the summary's swatches, the
chart of every run's mean, and the charts inside each candidate's section."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from reportgen.cli import cli
from reportgen.comparison.study import MAX_RUNS
from reportgen.reporters.html.charts import STUDY_COLOURS

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"
LOGS = ("fare_rules_a_baseline", "fare_rules_b_reranker", "fare_rules_c_prompt")
# Okabe and Ito (2008), "Color Universal Design": distinguishable with every common colour-vision
# deficiency.
OKABE_ITO = {
    "#000000",
    "#E69F00",
    "#56B4E9",
    "#009E73",
    "#F0E442",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
}


def test_every_run_of_the_largest_study_gets_its_own_safe_colour():
    assert MAX_RUNS == len(STUDY_COLOURS) == len(set(STUDY_COLOURS))
    assert set(STUDY_COLOURS) == OKABE_ITO


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("colours") / "three.html"
    logs = [str(SAMPLE / f"{name}.parquet") for name in LOGS]
    result = CliRunner().invoke(cli, ["compare", *logs, "-o", str(out), "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    return out.read_text()


def _specs(html: str) -> list[dict]:
    return [
        json.loads(s)
        for s in re.findall(r'<script type="application/json" id="spec-[^"]*">(.*?)</script>', html)
    ]


def _run_scales(spec: object) -> list[tuple[list, list]]:
    """(domain, range) of every colour scale in the spec whose domain names runs."""
    found = []
    if isinstance(spec, dict):
        scale = spec.get("scale") if spec.get("field") == "run" else None
        if isinstance(scale, dict) and "range" in scale:
            found.append((scale["domain"], scale["range"]))
        for value in spec.values():
            found += _run_scales(value)
    elif isinstance(spec, list):
        for value in spec:
            found += _run_scales(value)
    return found


def test_each_run_keeps_its_colour_on_every_chart(page):
    inputs = re.findall(
        r'<td class="text"><span class="swatch" style="background: (#\w+)"></span>([^<]+)</td>',
        page,
    )
    colour = {label: c for c, label in inputs}
    assert list(colour) == list(LOGS) and len(set(colour.values())) == len(LOGS)
    header = re.search(r'Baseline <span class="swatch" style="background: (#\w+)"></span>', page)
    assert header.group(1) == colour[LOGS[0]]
    shown = page.replace("<wbr>", "")  # the breaks a name may wrap at
    rows = re.findall(r'background: (#\w+)"></span><a href="#candidate-\d">([^<]+)</a>', shown)
    assert rows == [(colour[label], label) for label in LOGS[1:]]

    summary, sections = page.split('<details class="candidate"', 1)
    means = [s for spec in _specs(summary) for s in _run_scales(spec)]
    assert means and all(dict(zip(d, r, strict=True)) == colour for d, r in means)
    for candidate, section in zip(
        LOGS[1:], sections.split('<details class="candidate"'), strict=True
    ):
        a, b = re.match(r' id="[^"]+" style="--run-a: (#\w+); --run-b: (#\w+)"', section).groups()
        assert (a, b) == (colour[LOGS[0]], colour[candidate])
        scales = [s for spec in _specs(section) for s in _run_scales(spec)]
        assert len(scales) >= 2, "the metric curve and the failure classes draw the runs"
        assert all(r == [a, b] and d == ["A", "B"] for d, r in scales)


def test_every_chart_of_the_page_is_valid_vega_lite(page):
    """The specs are built without Altair's validation (it cost a tenth of a second a report), so
    the schema check happens here, on every chart of a study page and its candidates' sections."""
    import altair as alt
    from altair.utils.schemapi import validate_jsonschema

    schema = alt.vegalite.v6.schema.core.load_schema()
    specs = _specs(page)
    assert len(specs) >= 5
    for spec in specs:
        validate_jsonschema(spec, schema)
