"""The report as a browser shows it: offline, with scripts blocked, and fed hostile text.

Chromium tests skip when Chromium or chromedriver is missing, and fail instead when
RAGREPORT_REQUIRE_BROWSER=1 (as CI sets it). The raw-HTML check at the end needs no browser.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import browser as br
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from reportgen.cli import cli

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs"

# Attributes whose value a browser fetches or follows as a URL (HTML and SVG).
URL_ATTRIBUTES = {
    "src",
    "href",
    "xlink:href",
    "srcset",
    "action",
    "formaction",
    "poster",
    "data",
    "background",
    "ping",
    "cite",
}
EXTERNAL = re.compile(r"(?i)https?://|^\s*//")  # absolute or protocol-relative URL
CSS_URL = re.compile(r"(?i)url\(\s*['\"]?\s*([^)'\"]*)")
CSS_IMPORT = re.compile(r"(?i)@import\s+(?:url\()?\s*['\"]?\s*([^'\");\s]*)")


# --- fixtures -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory) -> tuple[Path, dict]:
    return br.render_report(
        SAMPLE / "fare_rules_a_baseline.parquet",
        SAMPLE / "fare_rules_b_reranker.parquet",
        tmp_path_factory.mktemp("sample"),
    )


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory) -> tuple[Path, dict, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    run_a, run_b = br.hostile_runs(folder)
    return (*br.render_report(run_a, run_b, folder), run_a)


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    """Chromium with scripts on and the network blocked at the browser (DevTools protocol)."""
    br.require_browser()
    driver = br.start_chromium(tmp_path_factory.mktemp("profile-js"))
    try:
        br.block_network(driver)
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def chromium_no_js(tmp_path_factory):
    """Chromium with JavaScript blocked by content-settings policy, network blocked too."""
    br.require_browser()
    driver = br.start_chromium(tmp_path_factory.mktemp("profile-nojs"), javascript=False)
    try:
        br.block_network(driver)
        yield driver
    finally:
        driver.quit()


# --- helpers ------------------------------------------------------------------------------------


def _expected_mean(value: float | None) -> str | None:
    """The page's 3-decimal mean of ``value``; None where the page writes '< 0.001' and such."""
    if value is None:
        return "n/a"
    text = f"{value:.3f}"
    if (float(text) == 0 and value != 0) or (float(text) == 1 and value != 1):
        return None
    return text


def _external_references(html: str) -> list[str]:
    """Every src/href-like attribute or CSS url()/@import that points at another host."""
    parsed = br.audit(html)
    found = []
    for tag, name, value in parsed.attributes:
        if name == "xmlns" or name.startswith("xmlns:") or value is None:
            continue  # a namespace name is an identifier, never fetched
        if name in URL_ATTRIBUTES and EXTERNAL.search(value):
            found.append(f"<{tag} {name}={value!r}>")
        if name == "style":
            found += [
                f"<{tag} style> url({u})" for u in CSS_URL.findall(value) if EXTERNAL.search(u)
            ]
    for css in parsed.styles:
        found += [f"<style> url({u})" for u in CSS_URL.findall(css) if EXTERNAL.search(u)]
        found += [f"<style> @import {u}" for u in CSS_IMPORT.findall(css)]
    return found


def _strings(value: object) -> list[str]:
    """Every string (keys too) inside decoded JSON."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*value, *(s for v in value.values() for s in _strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _assert_no_payload_ran(page) -> None:
    """No payload ran, and no element came out of the data: no <img>, no on* attribute."""
    assert page.execute_script("return typeof window.__pwned;") == "undefined", page.execute_script(
        "return String(window.__pwned);"
    )
    assert page.execute_script("return document.querySelectorAll('img').length;") == 0
    handlers = page.execute_script(
        """
        var out = [];
        document.querySelectorAll('*').forEach(function (el) {
          Array.prototype.forEach.call(el.attributes, function (a) {
            if (/^on/i.test(a.name)) out.push(el.tagName + ' ' + a.name + '=' + a.value);
          });
        });
        return out;
        """
    )
    assert handlers == []


# --- 1. the sample report, offline --------------------------------------------------------------


def test_sample_report_offline_renders_every_chart_and_its_numbers(
    chromium, sample_report, tmp_path
):
    html, doc = sample_report
    url = html.as_uri()
    br.open_clean(chromium, url)
    br.wait_for_live_charts(chromium)

    # Console: nothing at level SEVERE (script errors, blocked loads, CSP violations).
    assert br.severe(chromium.get_log("browser")) == []

    # Network: the page fetched nothing but itself. data: URLs are inline bytes, not requests
    # to anywhere, so they are allowed (Vega and the static SVGs may use them for images).
    requests = br.requested_urls(chromium.get_log("performance"))
    assert url in requests
    assert [u for u in requests if u != url and not u.startswith("data:")] == []

    # Every chart drew live: class live-ok, a visible non-empty <svg> with data marks.
    charts = chromium.execute_script(
        """
        return Array.prototype.map.call(document.querySelectorAll('.chart'), function (f) {
          var svg = f.querySelector('.live svg');
          var box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
          var marks = 0;
          if (svg) svg.querySelectorAll('g.role-mark').forEach(function (g) {
            marks += g.querySelectorAll('path, rect, line, circle, polygon').length;
          });
          return {id: f.id, ok: f.classList.contains('live-ok'), svg: !!svg,
                  width: box.width, height: box.height, marks: marks};
        });
        """
    )
    assert len(charts) >= 2, charts
    for chart in charts:
        assert chart["ok"] and chart["svg"], chart
        assert chart["width"] > 0 and chart["height"] > 0, chart
        assert chart["marks"] > 0, chart

    # Key numbers of report.json are what the page shows.
    text = chromium.execute_script("return document.body.innerText;")
    outcome = chromium.execute_script(
        "return document.querySelector('#verdict .outcome').innerText.trim();"
    )
    assert outcome == doc["verdict"]["outcome"]
    assert doc["verdict"]["reason"] in text
    assert f"{doc['n_paired']} paired questions" in text
    rows = chromium.execute_script(
        """
        return Array.prototype.map.call(document.querySelectorAll('table.metrics tbody tr'),
          function (tr) {
            return Array.prototype.map.call(tr.cells, function (td) {
              return td.innerText.trim(); });
          });
        """
    )
    shown = {r[0]: r for r in rows}
    assert set(shown) == set(doc["metrics"])
    headline = doc["metrics"][doc["headline"]]
    name, n, a, b = shown[doc["headline"]][:4]
    assert (int(n), a, b) == (headline["n"], f"{headline['a']:.3f}", f"{headline['b']:.3f}")
    for metric, numbers in doc["metrics"].items():
        row = shown[metric]
        assert int(row[1]) == numbers["n"], metric
        for value, cell in ((numbers["a"], row[2]), (numbers["b"], row[3])):
            expected = _expected_mean(value)
            if expected is not None:
                assert cell == expected, (metric, value, cell)

    # A full-page screenshot, kept as an artifact of the run.
    shot = br.full_page_screenshot(chromium, br.artifacts_dir(tmp_path) / "screenshot.png")
    assert shot.stat().st_size > 10_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_three_run_page_draws_every_chart_and_folds_each_candidate(chromium, tmp_path):
    html = tmp_path / "three.html"
    logs = [
        SAMPLE / f"fare_rules_{name}.parquet" for name in ("a_baseline", "b_reranker", "c_prompt")
    ]
    args = ["compare", *map(str, logs), "-o", str(html), "--n-boot", "500"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc = json.loads(html.with_suffix(".json").read_text())
    br.open_clean(chromium, html.as_uri())
    br.wait_for_live_charts(chromium)
    assert br.severe(chromium.get_log("browser")) == []
    marks = chromium.execute_script(
        """
        return Array.prototype.map.call(document.querySelectorAll('.chart'), function (f) {
          var n = 0;
          f.querySelectorAll('.live svg g.role-mark').forEach(function (g) {
            n += g.querySelectorAll('path, rect, line, circle, polygon').length; });
          return [f.id, n];
        });
        """
    )
    assert {"chart-run-means", "chart-run-matrix"} <= {m[0] for m in marks}
    assert all(n > 0 for _, n in marks), marks
    rows = chromium.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('table.summary tbody tr'),"
        " function (tr) { return tr.cells[0].innerText.trim() + ' ' + tr.cells[4].innerText; });"
    )
    assert rows == [f"{r['candidate']} {r['diff']:+.3f}" for r in doc["summary"]]
    # inside each candidate's section, A and B are named beside the swatches of the baseline and
    # of that candidate, as in the summary
    swatches = chromium.execute_script(
        """
        var colour = function (el, pseudo) {
          return getComputedStyle(el, pseudo).backgroundColor; };
        var summary = Array.prototype.map.call(
          document.querySelectorAll('table.summary tbody .swatch'), function (s) {
            return colour(s, null); });
        var sections = Array.prototype.map.call(
          document.querySelectorAll('details.candidate'), function (d) {
            return [colour(d.querySelector('.run-a'), '::before'),
                    colour(d.querySelector('.run-b'), '::before')]; });
        var baseline = colour(document.querySelector('header .swatch'), null);
        return [baseline, summary, sections];
        """
    )
    baseline, summary, sections = swatches
    assert sections == [[baseline, c] for c in summary] and len(set(summary + [baseline])) == 3
    # a candidate's section folds with a click on its heading, and its link still finds it
    folded = chromium.execute_script(
        "var d = document.getElementById('candidate-2'); d.querySelector('summary').click();"
        " return [d.open, document.querySelector('a[href=\"#candidate-2\"]') !== null];"
    )
    assert folded == [False, True]
    shot = br.full_page_screenshot(chromium, br.artifacts_dir(tmp_path) / "three-runs.png")
    assert shot.stat().st_size > 10_000


# --- 2. scripts blocked -------------------------------------------------------------------------


def test_long_run_labels_wrap_inside_a_study_page(chromium, tmp_path):
    """Three logs named by 200-character file stems (their labels): the contents, the summary,
    each candidate's gate and the inputs wrap them, and the page never scrolls sideways."""
    frame = pd.read_parquet(SAMPLE / "fare_rules_a_baseline.parquet")
    logs = [tmp_path / f"{name * 200}.parquet" for name in "abc"]
    for n, log in enumerate(logs):
        frame.assign(correct=np.arange(len(frame)) % 3 >= n).to_parquet(log)
    html = tmp_path / "study.html"
    args = ["compare", *map(str, logs), "-o", str(html), "--n-boot", "100"]
    result = CliRunner().invoke(cli, [*args, "--require", "correct >= -1"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    br.open_clean(chromium, html.as_uri())
    width, page, tables = br.widths(chromium, "table.summary, table.inputs, section.gate table")
    assert page <= width, (page, width)
    assert len(tables) == 4 and all(t[1] <= width for t in tables), (tables, width)


def test_scripts_blocked_every_chart_shows_its_static_svg(chromium_no_js, sample_report):
    html, _ = sample_report
    br.open_clean(chromium_no_js, html.as_uri())
    from selenium.webdriver.common.by import By

    # The page's own scripts did not run (the Vega bundle defines vegaEmbed when it runs).
    assert chromium_no_js.execute_script("return typeof window.vegaEmbed;") == "undefined"
    figures = chromium_no_js.find_elements(By.CSS_SELECTOR, "figure.chart")
    assert len(figures) >= 2
    for figure in figures:
        name = figure.get_attribute("id")
        assert "live-ok" not in figure.get_attribute("class").split(), name
        static = figure.find_element(By.CSS_SELECTOR, ".static")
        svg = static.find_element(By.CSS_SELECTOR, "svg")
        assert static.is_displayed() and svg.is_displayed(), name
        assert svg.size["width"] > 0 and svg.size["height"] > 0, (name, svg.size)
        assert not figure.find_element(By.CSS_SELECTOR, ".live").is_displayed(), name


# --- 3. hostile text stays text -----------------------------------------------------------------


def test_hostile_text_stays_text(chromium, hostile_report):
    html, doc, run_a = hostile_report
    page = chromium
    br.open_clean(page, html.as_uri())
    _assert_no_payload_ran(page)  # as parsed, before the charts draw
    br.wait_for_live_charts(page)
    _assert_no_payload_ran(page)  # and once Vega drew the data into the page
    # No <script> element came out of the data (the page's CSP would block one silently).
    scripts = page.execute_script(
        "return Array.prototype.map.call(document.scripts,"
        " function (s) { return [s.type, s.id, s.text]; });"
    )
    n_charts = page.execute_script("return document.querySelectorAll('.chart').length;")
    specs = page.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('.chart .live'),"
        " function (el) { return el.dataset.spec; });"
    )
    assert sorted(i for t, i, _ in scripts if t == "application/json") == sorted(specs)
    assert [t for t, i, text in scripts if t != "application/json" and "__pwned" in text] == []
    assert br.severe(page.get_log("browser")) == []

    # Every payload is shown verbatim, as text, and each changed question's row shows exactly
    # the id, slice and question of the run log.
    text = page.execute_script("return document.body.innerText;")
    for payload in br.PAYLOADS:
        assert payload in text, payload
    logged = pd.read_parquet(run_a).set_index("question_id")
    rows = page.execute_script(
        """
        return Array.prototype.map.call(document.querySelectorAll('table.changed tbody tr'),
          function (tr) {
            return Array.prototype.map.call(tr.cells, function (td) {
              return td.innerText.trim(); });
          });
        """
    )
    assert len(rows) == doc["metrics"]["correct"]["fixed"] + doc["metrics"]["correct"]["broken"]
    assert len(rows) >= 5
    for question_id, slice_name, question, *_ in rows:
        assert question_id in logged.index, question_id
        assert (slice_name, question) == tuple(logged.loc[question_id, ["slice", "question"]])
    # The template payload was not evaluated: 7*7 is shown as written, 49 is nowhere in its place.
    assert "{{ 7*7 }}#q12" in [r[0] for r in rows]  # question 12 changed outcome
    assert "{{ 7*7 }}" in [r[1] for r in rows]  # the slice of questions 12 to 14
    assert "49#q" not in text
    assert not re.search(r"Q\d+ 49\b", text)

    # Raw HTML: each JSON block is whole (not ended early by a payload) and holds the payloads.
    raw = html.read_text(encoding="utf-8")
    parsed = br.audit(raw)
    assert len(parsed.json_blocks) == n_charts
    strings: list[str] = []
    for block in parsed.json_blocks:
        assert not re.search(r"(?i)</script", block)
        assert not re.search(r"(?i)<!--|<script", block)  # either could move the block's end
        strings += _strings(json.loads(block))
    for payload in br.PAYLOADS:
        assert any(payload in s for s in strings), payload
    # ... and no javascript: URL made it into an attribute a browser follows.
    followed = [
        (tag, name, value)
        for tag, name, value in parsed.attributes
        if name in URL_ATTRIBUTES and value and "javascript:" in value.lower()
    ]
    assert followed == []


# --- 4. no reference to another host (no browser) -----------------------------------------------


def test_report_html_references_no_other_host(sample_report, hostile_report):
    for html, *_ in (sample_report, hostile_report):
        raw = html.read_text(encoding="utf-8")
        assert _external_references(raw) == [], html
        assert "xmlns=" in raw  # the SVG namespace, a text mention, is present and allowed


def test_a_long_unbroken_slice_value_wraps_inside_the_page(chromium, tmp_path):
    """A 400-character slice value with no space (an id, a URL) is wrapped where it is listed,
    in the slice tables, the changed questions and a per-slice rule's reason, not drawn past
    the page's right edge: the page never scrolls sideways, nor does the slice table."""
    long = "x" * 400
    frame = pd.DataFrame(
        {
            "question_id": [f"q{i}" for i in range(40)],
            "slice": [long if i % 2 else "short" for i in range(40)],
            "correct": [i % 2 == 1 for i in range(40)],
        }
    )
    run_a, run_b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    frame.to_parquet(run_a)
    # B gets every short question right and breaks half of the long slice: a regression there
    frame.assign(correct=[i % 2 == 0 or i % 4 == 1 for i in range(40)]).to_parquet(run_b)
    rule = ("--require", "correct[slice] >= -1")  # always passes; its reason names the slice
    html, out = br.render_report(run_a, run_b, tmp_path / "out", "--n-boot", "100", *rule)
    assert long in out["gate"]["results"][0]["detail"]
    br.open_clean(chromium, html.as_uri())
    listed = chromium.execute_script(
        "return Array.prototype.filter.call(document.querySelectorAll('li'),"
        " function (li) { return li.innerText.indexOf('Questions per slice') === 0; })"
        ".map(function (li) { var r = li.getBoundingClientRect();"
        " return [r.right, li.scrollWidth, li.clientWidth]; });"
    )
    width = chromium.execute_script("return document.documentElement.clientWidth;")
    assert len(listed) == 1
    right, scroll, client = listed[0]
    assert right <= width and scroll <= client, (listed, width)
    _, page, tables = br.widths(chromium, "table.slices, table.changed, section.gate table")
    assert page <= width, (page, width)
    assert {t[0] for t in tables} == {"slices", "changed", ""}, tables
    assert all(right <= width and scroll <= client for _, right, scroll, client in tables), tables


def test_on_a_phone_the_page_never_scrolls_sideways(chromium, sample_report):
    """At 390 px the metric, stage and changed-question tables widened the page to 1,057 px, its
    intervals and p off the screen: a wide table scrolls inside its own box."""
    html, _ = sample_report
    try:
        chromium.set_window_size(390, 900)
        br.open_clean(chromium, html.as_uri())
        inner = chromium.execute_script("return window.innerWidth;")
        width, page, tables = br.widths(chromium, "table")
        assert page <= inner, (page, inner)
        assert tables and all(t[1] <= width for t in tables), tables
        wide = [t for t in tables if t[2] > t[3]]  # scrollWidth past clientWidth: scrolls
        assert any("metrics" in t[0] for t in wide), tables
    finally:
        chromium.set_window_size(1280, 1000)


_CHART_BOXES = """
var drawn = arguments[0];
return Array.prototype.map.call(document.querySelectorAll('figure.chart'), function (f) {
  var svg = f.querySelector(drawn);
  var box = svg.getBoundingClientRect(), view = svg.viewBox.baseVal;
  return {id: f.id, right: box.right, chart: f.getBoundingClientRect().right,
          scroll: f.scrollWidth, client: f.clientWidth, width: box.width,
          shape: box.width / box.height, drawn: view.width / view.height};
});
"""


@pytest.mark.parametrize("scripts", ["live", "static"])
def test_in_a_window_of_800_px_every_chart_is_whole(
    chromium, chromium_no_js, sample_report, scripts
):
    """At 800 px the curve chart's third panel and the differences chart's legend ("B wir") lay
    past the chart's box, seen only by scrolling it sideways (where a scroll bar shows at all):
    a chart wider than its box is drawn smaller, its shape kept, down to 480 px (at 560 px a
    600 px window's box of 544 px still cut the legends); below that (a phone) it scrolls
    inside its box, as a table does, rather than shrinking its text to nothing."""
    driver = chromium if scripts == "live" else chromium_no_js
    html, _ = sample_report
    try:
        for width in (800, 600):
            driver.set_window_size(width, 1000)
            br.open_clean(driver, html.as_uri())
            if scripts == "live":
                br.wait_for_live_charts(driver)
            charts = driver.execute_script(_CHART_BOXES, f".{scripts} svg")
            assert len(charts) >= 4, charts
            for chart in charts:
                assert chart["right"] <= chart["chart"] + 0.5, (width, chart)
                assert chart["scroll"] <= chart["client"], (width, chart)
                assert chart["shape"] == pytest.approx(chart["drawn"], rel=0.01), chart
        driver.set_window_size(390, 900)
        br.open_clean(driver, html.as_uri())
        if scripts == "live":
            br.wait_for_live_charts(driver)
        charts = driver.execute_script(_CHART_BOXES, f".{scripts} svg")
        wide = [c for c in charts if c["scroll"] > c["client"]]  # scrolls inside its box
        assert wide, charts  # the curve chart, 832 px as drawn
        assert all(c["width"] == pytest.approx(480, abs=1) for c in wide), wide
    finally:
        driver.set_window_size(1280, 1000)


def test_printed_a_folded_section_is_on_paper(chromium, sample_report):
    """An archived PDF left out the slice matrix and 17 of 20 worked cases, which were folded;
    on paper a table wraps to the page rather than scrolling."""
    html, _ = sample_report
    br.open_clean(chromium, html.as_uri())
    folded = (
        "return Array.prototype.map.call(document.querySelectorAll('details:not([open]) table'),"
        " function (t) { return t.checkVisibility(); });"
    )
    assert chromium.execute_script(folded) and not any(chromium.execute_script(folded))
    chromium.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        assert all(chromium.execute_script(folded))
        overflow = "return getComputedStyle(document.querySelector('table.slices')).overflowX;"
        assert chromium.execute_script(overflow) == "visible"
    finally:
        chromium.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
