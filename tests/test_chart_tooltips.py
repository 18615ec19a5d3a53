"""Every chart's tooltips name fields its data holds: three charts read a "text" field their
frames lacked, and every hover read "diff: undefined"."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from reportgen.cli import cli

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"
_SPEC = re.compile(r'<script type="application/json" id="spec-[^"]*">(.*?)</script>', re.S)


def _tooltips(node: object) -> Iterator[str]:
    """The fields every tooltip of a Vega-Lite spec reads."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "tooltip":
                for item in value if isinstance(value, list) else [value]:
                    if isinstance(item, dict) and "field" in item:
                        yield item["field"]
            else:
                yield from _tooltips(value)
    elif isinstance(node, list):
        for item in node:
            yield from _tooltips(item)


def _fields(spec: dict) -> set[str]:
    """The fields a spec's rows hold, and those its transforms add."""
    rows = [row for data in spec.get("datasets", {}).values() for row in data]
    made = {m.group(1) for m in re.finditer(r'"as": "([^"]+)"', json.dumps(spec))}
    return {key for row in rows for key in row} | made


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> list[Path]:
    """The sample pair's page, and a study of three runs (its run matrix)."""
    folder = tmp_path_factory.mktemp("pages")
    a, b = SAMPLE / "fare_rules_a_baseline.parquet", SAMPLE / "fare_rules_b_reranker.parquet"
    frame = pd.read_parquet(b)
    third = folder / "c.parquet"
    frame.assign(correct=np.arange(len(frame)) % 4 > 0).to_parquet(third)
    made = []
    for name, logs in (("pair", (a, b)), ("study", (a, b, third))):
        page = folder / f"{name}.html"
        args = ["compare", *map(str, logs), "-o", str(page), "--n-boot", "200"]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        made.append(page)
    return made


def test_every_tooltip_reads_a_field_of_its_chart(pages):
    checked = 0
    for page in pages:
        for text in _SPEC.findall(page.read_text(encoding="utf-8")):
            spec = json.loads(html.unescape(text))
            missing = set(_tooltips(spec)) - _fields(spec)
            assert not missing, (page.name, spec.get("title"), missing)
            checked += 1
    assert checked >= 8  # the pair's charts and the study's


def test_the_slice_chart_s_tooltip_prints_the_difference_as_the_table(pages):
    text = pages[0].read_text(encoding="utf-8")
    specs = [json.loads(html.unescape(t)) for t in _SPEC.findall(text)]
    rows = [
        row
        for spec in specs
        for data in spec.get("datasets", {}).values()
        for row in data
        if "label" in row and "low" in row
    ]
    assert rows and all(row["text"][0] in "+\u22120" for row in rows)


def test_a_long_slice_value_keeps_its_count_on_the_slice_chart(tmp_path):
    """A slice value of 200 characters lost its "(n=20)" on the chart's axis, which Vega cut at
    its end: the axis cuts it in its middle, in the static SVG as live."""
    paths = tmp_path / "a.parquet", tmp_path / "b.parquet"
    long = "x" * 200
    for path, right in zip(paths, (30, 40), strict=True):
        rows = [
            {"question_id": f"q{i}", "correct": i * 7 % 60 < right, "slice": long if i % 2 else "s"}
            for i in range(60)
        ]
        pd.DataFrame(rows).to_parquet(path)
    page = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["compare", *map(str, paths), "-o", str(page)])
    assert result.exit_code == 0, result.output
    text = page.read_text(encoding="utf-8")
    drawn = re.findall(r">(x+\u2026x+ \(n=30\))<", text)  # the static SVG's axis labels
    assert drawn and all(len(label) <= 48 for label in drawn), drawn
