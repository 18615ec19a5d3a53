"""``ragreport verify`` checks the page beside the report too: a page edited to read "B worse"
verified with its JSON, which is all verify compared."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from test_verify import SAMPLE_A, SAMPLE_B, invoke

from reportgen.provenance import library_versions
from reportgen.verify import read_page


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
    page.write_text(text[: value.start(1)] + "0.25" + text[value.end(1) :], encoding="utf-8")
    code, out, _ = invoke("verify", report)
    assert code == 1
    assert out.startswith(
        f"{report}: differs at r.html: its text matches; its markup, charts or downloads "
        "differ: page '"
    )
    assert '"diff":0.25' in out and f'"diff":{value.group(1)}' in out


def test_a_json_written_again_with_equal_numbers_is_named_not_its_page(archived):
    """A count written 19.0 for 19 passes the numbers' check, and the page, untouched, failed
    as "its markup, charts or downloads differ" with a piece of base64: its download is the
    JSON as compare wrote it. The JSON is named, and the page a re-run draws with the re-run's
    JSON is the page."""
    report, page = archived
    document = json.loads(report.read_text(encoding="utf-8"))
    assert document["comparisons"][0]["metrics"]["correct"]["fixed"] == 32
    document["comparisons"][0]["metrics"]["correct"]["fixed"] = 32.0
    report.write_text(json.dumps(document), encoding="utf-8")
    code, out, _ = invoke("verify", report)
    assert code == 1
    assert out == (
        f"{report}: differs at r.json: its numbers match, but it is not the JSON the page "
        "r.html holds as its download (written again after the page: a whole number as a "
        "float, a change under 1e-9 of one)\n"
    )


def test_line_endings_changed_are_a_change(archived):
    report, page = archived
    page.write_bytes(page.read_bytes().replace(b"\n", b"\r\n"))
    code, out, _ = invoke("verify", report)
    assert code == 1
    assert out.endswith("differ: page '\\r\\n', re-run '\\n'\n"), out


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
    assert str(SAMPLE_A) in " ".join(read_page(page.read_text(encoding="utf-8")).pieces)
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


@pytest.mark.parametrize(
    ("folder", "names"),
    [
        ('Bob\'s "runs"', ("a.parquet", "b.parquet")),  # quotes, escaped on the page
        ("artifacts", ("baseline/run.parquet", "candidate/run.parquet")),  # one name for both
        ("ci", ("A", "old")),  # names that are words of the page ("than A", "golden")
    ],
)
def test_logs_verified_from_other_paths_read_as_the_page_names_them(tmp_path, folder, names):
    """The page's title, header and inputs name the logs as compare was given them; verify
    draws them so, whatever the paths it reads them from. It replaced every occurrence of
    the paths' and names' strings in the page: a quote escaped otherwise, two logs of one name
    and a folder named "A" each failed an untouched page."""
    made = tmp_path / "made"
    made.mkdir()
    for log in (SAMPLE_A, SAMPLE_B):
        shutil.copy(log, made)
    code, _, err = invoke(
        "compare", made / SAMPLE_A.name, made / SAMPLE_B.name, "-o", made / "r.html",
        "--n-boot", "200",
    )  # fmt: skip
    assert code == 0, err
    moved = [tmp_path / folder / name for name in names]
    for log, target in zip((SAMPLE_A, SAMPLE_B), moved, strict=True):
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.suffix:
            shutil.copy(log, target)
        else:  # a folder of one shard
            target.mkdir()
            shutil.copy(log, target / "part-0.parquet")
    code, out, err = invoke("verify", made / "r.json", *moved)
    assert code == 0, err + out
    assert "and the page" in out


def test_a_label_that_reads_like_the_page_s_clock_is_not_taken_for_it(tmp_path):
    """The page's minute is read off its footer: a run labelled '(generated 2025-01-01 00:00
    UTC)' drew the re-run's page at that minute."""
    code, _, err = invoke(
        "compare", SAMPLE_A, SAMPLE_B, "--label", "nightly (generated 2025-01-01 00:00 UTC)",
        "--label", "B", "-o", tmp_path / "r.html", "--n-boot", "200",
    )  # fmt: skip
    assert code == 0, err
    code, out, err = invoke("verify", tmp_path / "r.json")
    assert code == 0, err + out


@pytest.mark.parametrize(
    "added", ["<!-- approved -->", "<?approved?>", "<![CDATA[approved]]>", "<br/>"]
)
def test_markup_a_reader_does_not_see_is_compared_too(archived, added):
    report, page = archived
    _edit(page, "<main>", f"<main>{added}")
    code, out, _ = invoke("verify", report)
    assert code == 1 and "its text matches; its markup, charts or downloads differ" in out, out


def test_a_page_of_another_name_is_checked_with_page(made, tmp_path):
    """``-o r.htm --json out.json``: no page beside the report has its name with .html, so only
    the numbers were checked and an edited page went unseen; --page names it."""
    code, _, err = invoke(
        "compare", SAMPLE_A, SAMPLE_B, "-o", tmp_path / "r.htm", "--json", tmp_path / "out.json",
        "--n-boot", "500",
    )  # fmt: skip
    assert code == 0, err
    report, page = tmp_path / "out.json", tmp_path / "r.htm"
    code, out, _ = invoke("verify", report)
    assert (code, out) == (0, f"{report}: verified, 8147 numbers match a re-run\n")
    code, out, err = invoke("verify", report, "--page", page)
    assert (code, out) == (
        0,
        f"{report}: verified, 8147 numbers and the page {page} match a re-run\n",
    ), err
    _edit(page, "Is B better than A?", "Is B worse than A?")
    code, out, _ = invoke("verify", report, "--page", page)
    assert code == 1
    assert out.startswith(f"{report}: differs at r.htm, its text 2: page 'Is B worse than A?'")


def test_a_missing_page_named_with_page_is_bad_input(archived, tmp_path):
    report, _ = archived
    code, out, err = invoke("verify", report, "--page", tmp_path / "nope.htm")
    assert (code, out) == (2, "")
    assert err == (
        f"ragreport: error: {tmp_path / 'nope.htm'}: no such page (--page); give the path of the "
        "report's HTML\n"
    )
