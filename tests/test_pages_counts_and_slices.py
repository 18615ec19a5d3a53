"""What the pages say of logged questions and slices: questions counted as questions when
answers are repeated, every slice value of any metric in the table of every metric, an empty
slice value shown, and the element ids of a study's page distinct per candidate."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from reportgen.cli import cli

SLICES = {"": range(0, 4), "x": range(4, 8), "y": range(8, 12), "z": range(12, 16)}


def _rows(run: str, samples: int, extra: bool = False) -> list[dict]:
    """16 questions of ``samples`` repeated answers each (17 with ``extra``, one only this run
    has). B loses correct on two questions of slice "" and wins it on x and y; slice z has no
    correct verdict in either run, and there B loses the evidence from its prompt while it gains
    it on x and y."""
    rows = []
    for slice_, ids in SLICES.items():
        gains = slice_ in ("x", "y")
        for i in ids:
            if slice_ == "z":
                correct, in_prompt = None, run == "a"
            else:
                correct = run == "b" if gains else not (run == "b" and i < 2)
                in_prompt = run == "b" if gains else True
            rows += [
                {
                    "question_id": f"q{i}",
                    "sample": s,
                    "slice": slice_,
                    "relevant_ids": ["p1"],
                    "context_ids": ["p1"] if in_prompt else ["p2"],
                    "correct": correct,
                }
                for s in range(samples)
            ]
    if extra:
        rows += [dict(rows[0], question_id="only-here", sample=s) for s in range(samples)]
    return rows


def _write(path: Path, rows: list[dict]) -> Path:
    pd.DataFrame(rows).astype({"correct": "boolean"}).to_parquet(path)
    return path


def _compare(out: Path, *logs: Path) -> tuple[dict, str, str]:
    html = out / "r.html"
    args = ["compare", *map(str, logs), "-o", str(html), "--markdown", str(out / "r.md")]
    result = CliRunner().invoke(cli, [*args, "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    return (
        json.loads(html.with_suffix(".json").read_text()),
        html.read_text(),
        (out / "r.md").read_text(),
    )


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> tuple[Path, Path, Path]:
    folder = tmp_path_factory.mktemp("logs")
    return (
        _write(folder / "a.parquet", _rows("a", 3, extra=True)),
        _write(folder / "b.parquet", _rows("b", 2)),
        _write(folder / "c.parquet", _rows("b", 1)),
    )


@pytest.fixture(scope="module")
def pair(logs, tmp_path_factory) -> tuple[dict, str, str]:
    return _compare(tmp_path_factory.mktemp("pair"), *logs[:2])


@pytest.fixture(scope="module")
def study(logs, tmp_path_factory) -> tuple[dict, str, str]:
    return _compare(tmp_path_factory.mktemp("study"), *logs)


def _inputs_column(html: str) -> list[str]:
    """The last cell of each row of the page's "What was compared" table."""
    table = html.split('<table class="inputs">')[1].split("</table>")[0]
    return re.findall(r"<td>([^<]*)</td></tr>", table)


def _markdown_inputs(markdown: str) -> list[str]:
    lines = markdown.split("### Inputs")[1].strip().splitlines()[2:]
    return [line.split("|")[-2].strip() for line in lines if line.startswith("|")]


def test_questions_of_a_log_of_repeated_answers_are_its_distinct_questions(pair):
    """51 and 32 rows: 17 and 16 questions (A has one B lacks), in the JSON, the page's inputs
    table and the Markdown's."""
    doc, html, markdown = pair
    assert [r["n_questions"] for r in doc["runs"]] == [17, 16]
    assert _inputs_column(html) == ["17", "16"]
    assert _markdown_inputs(markdown) == ["17", "16"]


def test_a_study_counts_each_logs_own_questions_not_those_every_run_has(study):
    doc, html, markdown = study
    assert doc["n_paired"] == 16
    assert [r["n_questions"] for r in doc["runs"]] == [17, 16, 16]
    assert _inputs_column(html) == ["17", "16", "16"]
    assert _markdown_inputs(markdown) == ["17", "16", "16"]


def _matrix(html: str) -> dict[str, dict[str, str]]:
    """The table of every metric by slice: slice shown -> metric -> its cell."""
    table = html.split('<table class="matrix">')[1].split("</table>")[0]
    heads = re.findall(r"<th>([^<]*)</th>", table)
    rows = re.findall(r'<tr><td class="text">([^<]*)</td>(.*?)</tr>', table)
    return {
        value: dict(zip(heads, re.findall(r"<td[^>]*>([^<]*)</td>", cells), strict=True))
        for value, cells in rows
    }


def test_the_table_of_every_metric_has_a_slice_the_headline_has_no_score_in(pair):
    """Slice z has no correct verdict, and recall falls there: its row shows it."""
    _, html, _ = pair
    matrix = _matrix(html)
    assert list(matrix) == ["(empty)", "x", "y", "z"]
    assert matrix["z"]["correct"] == "n/a"
    assert matrix["z"]["recall@1"] == "\u22121.000"
    row = html.split('<td class="text">z</td>')[1].split("</tr>")[0]
    # 4 questions: a direction, marked as one, not as a regression
    assert '<td class="direction-cell">\u22121.000</td>' in row


def test_an_empty_slice_value_is_shown_as_empty_and_kept_in_the_json(pair):
    doc, html, markdown = pair
    assert "B is behind A on correct in: (empty); check each interval" in html
    assert "Questions per slice, by <code>slice</code>: (empty) 4 &middot; x 4" in html
    rows = html.split('<table class="slices">')[1].split("</table>")[0]
    assert re.findall(r'<td class="text">([^<]*)</td><td>4</td>', rows) == ["(empty)", "x", "y"]
    forest = re.search(r'id="spec-forest-0">(.*?)</script>', html)
    assert forest is not None and '"(empty) (n=4)"' in forest.group(1)
    assert '<td class="mono text">q0</td><td class="text">(empty)</td>' in html  # changed
    assert "| slice | (empty) | correct | 4 |" in markdown
    assert set(doc["comparisons"][0]["slices"]["slice"]) == {"", "x", "y", "z"}


class _Ids(HTMLParser):
    """Each element id and each chart's spec id, with where it is: the candidate's section
    (None outside one) and the figure (None outside one); each in-page link."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[tuple[str, str | None]] = []  # open <details> and <figure>, with ids
        self.ids: list[tuple[str, tuple[str | None, str | None]]] = []
        self.specs: list[tuple[str, tuple[str | None, str | None]]] = []
        self.links: list[str] = []

    def _where(self) -> tuple[str | None, str | None]:
        sections = [i for t, i in self.open if t == "details"]
        figures = [i for t, i in self.open if t == "figure"]
        return (sections[0] if sections else None, figures[-1] if figures else None)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.append((str(found["id"]), self._where()))
        if found.get("data-spec"):
            self.specs.append((str(found["data-spec"]), self._where()))
        if (found.get("href") or "").startswith("#"):
            self.links.append(str(found["href"])[1:])
        if tag in ("details", "figure"):
            self.open.append((tag, found.get("id")))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("details", "figure"):
            assert self.open.pop()[0] == tag


def test_a_study_page_gives_each_element_its_own_id_and_each_chart_its_own_spec(study):
    """Each candidate's sections and charts have ids of their own, every in-page link finds
    its target, and the spec each chart draws live is the one in its own figure, in its own
    candidate's section."""
    _, html, _ = study
    parsed = _Ids()
    parsed.feed(html)
    ids = [i for i, _ in parsed.ids]
    assert len(ids) == len(set(ids)), sorted(i for i in set(ids) if ids.count(i) > 1)
    for n in (1, 2):
        assert {f"candidate-{n}-slices", f"candidate-{n}-verdict"} <= set(ids)
    assert parsed.links and set(parsed.links) <= set(ids)
    where = dict(parsed.ids)
    for spec, (section, figure) in parsed.specs:
        assert figure is not None and where[spec] == (section, figure)
    sections = [section for _, (section, _) in parsed.specs]
    assert sections.count("candidate-1") == sections.count("candidate-2") >= 3


def test_the_curve_caption_names_the_spans_the_span_logs_rank(tmp_path):
    """A pair of span logs ranks retrieved_spans: the caption of the metric-vs-k chart names
    them, not retrieved_ids, which these logs do not have."""
    sample = Path(__file__).resolve().parent.parent / "sample_runs"
    out = tmp_path / "r.html"
    result = CliRunner().invoke(
        cli,
        [
            "compare",
            str(sample / "manuals_a_chunk400.parquet"),
            str(sample / "manuals_b_chunk1000.parquet"),
            "-o",
            str(out),
            "--n-boot",
            "200",
        ],
    )
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "Over retrieved_spans at k = 3" in page and "Over retrieved_ids" not in page


@pytest.mark.parametrize("reranked", [True, False])
def test_the_curve_caption_says_why_its_ndcg_at_the_prompt_differs_from_the_table(
    tmp_path, reranked
):
    """Without --k the table scores each prompt as logged; the curve ranks retrieved_ids. B's
    prompt takes p1 from rank 3 of its ranking: its nDCG@2 is 1 in the table (p1 first in the
    prompt) and 0 on the curve (top 2: p2, p3). The caption gives both and says why; where
    every prompt is the top of its ranking the two agree and it says nothing more."""
    prompt_b = ["p1", "p3"] if reranked else ["p2", "p3"]
    paths = []
    for run, ranking, prompt in (
        ("a", ["p1", "p2", "p3"], ["p1", "p2"]),
        ("b", ["p2", "p3", "p1"], prompt_b),
    ):
        rows = {"question_id": [f"q{i}" for i in range(12)], "retrieved_ids": [ranking] * 12}
        rows |= {"relevant_ids": [["p1"]] * 12, "context_ids": [prompt] * 12}
        paths.append(tmp_path / f"{run}.parquet")
        pd.DataFrame(rows).to_parquet(paths[-1])
    out = tmp_path / "r.html"
    args = ["compare", *map(str, paths), "-o", str(out), "--n-boot", "200", "--quiet"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    caption = re.search(r"Over retrieved_ids at k = 2:[^<]*", out.read_text()).group(0)
    # B's prompt holds rank 3 when reranked: the caption no longer says that only the passages
    # up to the cutoff reach the generator
    why = (
        ". The table&#39;s ndcg@2 (A 1.000, B 1.000) scores each prompt as logged (context_ids), "
        "not the top 2 of retrieved_ids."
        if reranked
        else "; only the passages up to the prompt cutoff reach the generator."
    )
    assert caption == "Over retrieved_ids at k = 2: nDCG A 1.000, B 0.000" + why


def test_the_verdict_names_an_empty_slice_value_in_words():
    from reportgen.analysis.slices import SliceResult
    from reportgen.analysis.stats import compare_metric
    from reportgen.analysis.verdict import regression_lines

    a = np.ones(12)
    c, _ = compare_metric("correct", a, a * 0, binary=True, n_boot=200, confidence=0.95, seed=0)
    line = regression_lines([SliceResult("slice", "", c, 0.001, 0.0005, True, True)], 0.05)[0]
    assert line.startswith("B regresses on slice = (empty): \u22121.000")
