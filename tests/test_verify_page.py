"""``ragreport verify`` checks the page beside the report too: a page edited to read "B worse"
verified with its JSON, which is all verify compared."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from test_verify import SAMPLE_A, SAMPLE_B, invoke

from reportgen.provenance import library_versions
from reportgen.verify import page_text


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """The sample pair's report and page, as compare wrote them."""
    folder = tmp_path_factory.mktemp("made")
    code, _, err = invoke("compare", SAMPLE_A, SAMPLE_B, "-o", folder / "r.html", "--n-boot", "500")
    assert code == 0, err
    return folder


@pytest.fixture
def archived(made, tmp_path) -> tuple[Path, Path]:
    """A copy of the report and its page to edit."""
    for name in ("r.json", "r.html"):
        shutil.copy(made / name, tmp_path)
    return tmp_path / "r.json", tmp_path / "r.html"


def _edit(page: Path, old: str, new: str) -> None:
    text = page.read_text(encoding="utf-8")
    assert old in text
    page.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_an_untouched_page_verifies_with_its_report(archived):
    report, page = archived
    code, out, err = invoke("verify", report)
    assert code == 0, err + out
    assert out.endswith(f"numbers and the page {page} match a re-run\n")


def test_a_page_edited_to_read_b_worse_is_named_where_it_differs(archived):
    report, page = archived
    _edit(page, "Is B better than A?", "Is B worse than A?")
    code, out, _ = invoke("verify", report)
    assert code == 1
    assert out == (
        f"{report}: differs at r.html, its text 2: page 'Is B worse than A?', re-run 'Is B "
        "better than A?'\n"
    )


def test_an_interval_edited_on_the_page_is_named_with_both_readings(archived):
    report, page = archived
    _edit(page, "[+0.037, +0.146]", "[+0.047, +0.146]")
    code, out, _ = invoke("verify", report)
    assert code == 1
    assert "page '. The 95% interval of B − A for correct is [+0.047, +0.146]" in out
    assert "re-run '. The 95% interval of B − A for correct is [+0.037, +0.146]" in out


def test_a_chart_s_data_edited_is_found_though_the_text_matches(archived):
    """A value inside a chart's spec (a script, not text a reader sees as such)."""
    report, page = archived
    text = page.read_text(encoding="utf-8")
    value = re.search(r'"diff":(-?\d+\.\d+)', text)
    assert value is not None
    at = value.start(1)
    page.write_text(text[:at] + "0.5" + text[value.end(1) :], encoding="utf-8")
    code, out, _ = invoke("verify", report)
    assert code == 1
    assert out == (
        f"{report}: differs at r.html: its text matches; its markup, charts or downloads "
        f"differ from character {at + 1}\n"
    )


def test_the_page_of_another_run_differs(archived, tmp_path):
    """The same logs compared again: another run id, so another page (its downloads)."""
    report, page = archived
    code, _, err = invoke("compare", SAMPLE_A, SAMPLE_B, "-o", tmp_path / "again.html")
    assert code == 0, err
    shutil.copy(tmp_path / "again.html", page)
    code, out, _ = invoke("verify", report)
    assert code == 1 and "r.html" in out, out


def test_without_a_page_the_numbers_alone_are_checked(archived):
    report, page = archived
    page.unlink()
    code, out, err = invoke("verify", report)
    assert code == 0, err
    assert out == f"{report}: verified, {out.split()[2]} numbers match a re-run\n"


def test_logs_moved_elsewhere_verify_the_page_naming_them_as_it_does(archived, tmp_path):
    """The page names the logs by the paths compare was given; a re-run from other paths
    draws them, and is compared spelled as the page spells them."""
    report, page = archived
    moved = tmp_path / "moved & kept"
    moved.mkdir()
    logs = [Path(shutil.copy(p, moved)) for p in (SAMPLE_A, SAMPLE_B)]
    assert str(SAMPLE_A) in " ".join(page_text(page.read_text(encoding="utf-8")))
    code, out, err = invoke("verify", report, *logs)
    assert code == 0, err + out
    assert f"the page {page}" in out


def test_a_page_that_cannot_be_read_is_bad_input(archived):
    report, page = archived
    page.write_bytes(b"\xff\xfe not utf-8")
    code, out, err = invoke("verify", report)
    assert code == 2
    assert err.startswith(f"ragreport: error: {page}: cannot read the report's page")


def test_a_page_made_with_other_versions_is_compared_by_its_text(archived):
    """The page names the versions it was drawn with, and its charts and script are theirs:
    with other versions installed its text is compared, the versions spelled as it spells
    them, and a warning says so."""
    report, page = archived
    installed = library_versions()["duckdb"]
    report.write_text(report.read_text().replace(f'"duckdb": "{installed}"', '"duckdb": "0.9.0"'))
    _edit(page, f"duckdb {installed}", "duckdb 0.9.0")
    text = page.read_text(encoding="utf-8")
    value = re.search(r'"diff":(-?\d+\.\d+)', text)
    assert value is not None
    page.write_text(text[: value.start(1)] + "0.5" + text[value.end(1) :], encoding="utf-8")
    code, out, err = invoke("verify", report)
    assert code == 0, out + err
    assert err.endswith(
        f"ragreport: warning: {page} is compared by its text alone: its charts and scripts are "
        "drawn by the versions installed\n"
    )
    _edit(page, "Is B better than A?", "Is B worse than A?")
    code, out, _ = invoke("verify", report)
    assert code == 1 and "its text 2: page 'Is B worse than A?'" in out
