"""User text through every written output (the page and its static SVG charts, the JUnit XML,
the Markdown summary): characters XML forbids, what GitHub's Markdown acts on, a right-to-left
override left open, and 100,000 characters of it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import write_run_log
from markdown_it import MarkdownIt

from reportgen.cli import cli
from reportgen.reporters.html.render import breakable
from reportgen.reporters.user_text import MAX_DRAWN

CONTROL = "stray\x0btab\x01"  # XML 1.0 forbids both characters
SHOWN = "stray\ufffdtab\ufffd"


def _logs(folder: Path, slice_name: str = "plain") -> tuple[Path, Path]:
    """40 questions in two slices; B fixes four questions of the first."""

    def rows(run: str) -> list[dict]:
        return [
            {
                "question_id": f"q{i}",
                "slice": slice_name if i < 20 else "other",
                "correct": i % 2 == 0 or (run == "b" and i < 8),
            }
            for i in range(40)
        ]

    folder.mkdir(parents=True, exist_ok=True)
    return write_run_log(folder / "a.parquet", rows("a")), write_run_log(
        folder / "b.parquet", rows("b")
    )


def _moved(log: Path, row: int, name: str) -> Path:
    """``log`` with one question moved to the other slice: a caveat of its own comparison
    (Read first names it by candidate; a caveat every candidate shares is named once)."""
    frame = pd.read_parquet(log)
    frame.loc[row, "slice"] = "other"
    path = log.with_name(name)
    frame.to_parquet(path)
    return path


def test_a_control_character_in_a_slice_value_is_drawn_as_a_replacement(tmp_path):
    # vl-convert aborted the whole process (no message, exit 134) on an SVG text holding \x0b
    a, b = _logs(tmp_path, CONTROL)
    html = tmp_path / "r.html"
    args = ["compare", str(a), str(b), "-o", str(html), "--n-boot", "200", "--quiet"]
    done = subprocess.run(
        [sys.executable, "-m", "reportgen", *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    page = html.read_text(encoding="utf-8")
    svgs = "".join(re.findall(r"<svg.*?</svg>", page, re.DOTALL))
    assert f"{SHOWN} (n=20)" in svgs  # the forest chart's axis label, in the static SVG
    assert "\x0b" not in svgs and "\x01" not in svgs


def test_a_control_character_in_a_question_id_shows_as_a_replacement_on_the_page(tmp_path):
    """A NUL in a question id was written raw into the page's tables, where the browser drops
    it: 'q1\\x00x' read 'q1x' there (and 'q1\ufffdx' in the charts), so two ids that differ by
    it looked alike. Every text the page prints shows a character HTML cannot carry as the
    charts do."""
    a, b = _logs(tmp_path / "logs")
    for log in (a, b):
        frame = pd.read_parquet(log)
        frame.loc[0, "question_id"] = "q0\x00nul"
        frame.loc[1, "question_id"] = "q1\x01soh"
        frame.to_parquet(log)
    html = tmp_path / "r.html"
    args = ["compare", str(a), str(b), "-o", str(html), "--n-boot", "200", "--quiet"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    page = html.read_text(encoding="utf-8")
    assert "\x00" not in page and "\x01" not in page
    assert ">q1\ufffdsoh<" in page  # B fixes q1: a changed question's row


def test_a_line_separator_in_a_slice_value_is_drawn_as_a_replacement(tmp_path):
    """vl-convert's expression parser refused U+2028 in a string ("Unexpected token ILLEGAL"):
    a traceback and exit 1, which CI reads as a failed rule."""
    a, b = _logs(tmp_path, "line\u2028par\u2029end")
    html = tmp_path / "r.html"
    args = ["compare", str(a), str(b), "-o", str(html), "--n-boot", "200", "--quiet"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    svgs = "".join(re.findall(r"<svg.*?</svg>", html.read_text(encoding="utf-8"), re.DOTALL))
    assert "line\ufffdpar\ufffdend (n=20)" in svgs


def _compare(tmp_path: Path, *extra: str) -> tuple[Path, Path]:
    a, b = _logs(tmp_path / "logs")
    md, xml = tmp_path / "s.md", tmp_path / "j.xml"
    args = ["compare", str(a), str(b), "-o", str(tmp_path / "r.html"), "--n-boot", "200"]
    args += ["--markdown", str(md), "--junit", str(xml), "--require", "correct >= -0.5", *extra]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return md, xml


def test_junit_with_a_control_character_in_a_label_parses(tmp_path):
    """Written as the command prints it (an escape), as XML allows; U+FFFD hid which it was."""
    _, xml = _compare(tmp_path, "--label", "A", "--label", CONTROL)
    (case,) = ET.parse(xml).getroot().iter("testcase")
    assert case.get("classname") == "ragreport gate.stray\\x0btab\\x01"
    assert case.get("name") == "correct >= -0.5"


def test_a_label_s_newline_or_escape_starts_no_line_and_moves_no_cursor(tmp_path):
    """A CI log that prints the JUnit file or the Markdown summary read the line a label's
    newline started ("::error::forged") as a workflow command; the Markdown kept a raw ESC,
    which a terminal acts on."""
    label = "c\n::error::forged \x1b[31mred"
    a, b = _logs(tmp_path / "logs")
    md, xml = tmp_path / "s.md", tmp_path / "j.xml"
    args = ["compare", str(a), str(b), "-o", str(tmp_path / "r.html"), "--n-boot", "200"]
    args += ["--markdown", str(md), "--junit", str(xml), "--require", "correct >= 0.5"]
    result = CliRunner().invoke(cli, [*args, "--label", "A", "--label", label])
    assert result.exit_code == 1, result.output  # the rule fails: its text names the label
    for path in (md, xml):
        text = path.read_text()
        assert "\x1b" not in text and not any(line.startswith("::") for line in text.splitlines())
    assert "correct &gt;= 0.5 is fail for c\\n::error::forged \\x1b[31mred:" in xml.read_text()
    # \\ and \[: literal in Markdown; the newline shows as its escape, as the command prints it
    assert "c\\\\n::error::forged \\\\x1b\\[31mred" in md.read_text()


@pytest.mark.parametrize(
    ("value", "shown"),
    [("line\nbreak", "line\\nbreak"), ("tab\there", "tab\\there"), ("cr\rhere", "cr\\rhere")],
)
def test_a_newline_tab_or_return_in_a_slice_value_shows_as_its_escape_in_markdown(
    tmp_path, value, shown
):
    """The summary read 'line break' for 'line\\nbreak', where the command prints the escape: a
    newline, tab or carriage return shows as \\n, \\t, \\r, as every other control does."""
    rows: dict[str, list[dict]] = {"a": [], "b": []}
    for i in range(14):  # B breaks 12 of the slice's 14
        for run in rows:
            correct = run == "a" or i >= 12
            rows[run].append({"question_id": f"s{i}", "slice": value, "correct": correct})
    for i in range(150):  # and fixes all 150 of main
        for run in rows:
            rows[run].append({"question_id": f"m{i}", "slice": "main", "correct": run == "b"})
    a, b = (write_run_log(tmp_path / f"{run}.parquet", rows[run]) for run in rows)
    md = tmp_path / "s.md"
    args = ["compare", str(a), str(b), "-o", str(tmp_path / "r.html"), "--markdown", str(md)]
    result = CliRunner().invoke(cli, [*args, "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    assert f"B regresses on slice = {shown}:" in result.output
    text = MarkdownIt("commonmark").enable("table").render(md.read_text())
    assert f"<li>B regresses on slice = {shown}: \u2212" in text
    assert f"<td>slice</td>\n<td>{shown}</td>" in text


def test_markdown_neither_mentions_nor_typesets_a_label(tmp_path):
    label = "@octocat $x^2$"
    md, _ = _compare(tmp_path, "--label", "A", "--label", label)
    markdown = md.read_text()
    assert "\\$x^2\\$" in markdown and "$x" not in markdown.replace("\\$", "")  # no math
    text = MarkdownIt("commonmark").enable("table").render(markdown)
    assert "@\u200boctocat $x^2$" in text  # shown as written, the @ kept from the name
    assert "@octocat" not in text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # GitHub reads a mention after any character that is not an ASCII word character
        ("\u00e9@torvalds", "\u00e9@\u200btorvalds"),
        ("\u65e5\u672c@torvalds", "\u65e5\u672c@\u200btorvalds"),
        ("recall@5", "recall@5"),  # a word before it: no mention
        # an issue or pull request of the repository, or of another, linked and notified
        ("label #5", "label #\u200b5"),
        ("owner/repo#7", "owner/repo#\u200b7"),
        ("GH-12", "GH\u200b-12"),
        ("see #x", "see #x"),
        # a bare web address, linked
        ("https://example.com/x", "https:\u200b//example.com/x"),
        ("www.example.com", "www\u200b.example.com"),
    ],
)
def test_markdown_links_and_notifies_nothing_in_user_text(text, shown):
    """GitHub finds mentions, issue references and web addresses in the rendered text, where a
    backslash escape is gone: '\\#5' links issue 5 and adds a "mentioned this" to its
    timeline, and '\u00e9@torvalds' (after a letter that is not ASCII) pings the account. A
    zero-width space breaks each, as it does a mention."""
    from reportgen.reporters.markdown_report import escape

    rendered = MarkdownIt("gfm-like").render(escape(text))
    assert re.sub(r"<[^>]+>", "", rendered).strip() == shown
    assert "<a " not in rendered


@pytest.mark.parametrize("text", [" tier", "tier ", "a  b", "  ", "-  1"])
def test_markdown_shows_the_spaces_a_name_holds(text):
    """A table cell drops its first and last spaces and HTML collapses a run of them, so the
    slices ' tier' and 'tier' (or 'a  b' and 'a b') read as one; each such space is a
    no-break space, which the cell shows."""
    from reportgen.reporters.markdown_report import escape

    table = f"| slice |\n|---|\n| {escape(text)} |\n"
    rendered = MarkdownIt("gfm-like").render(table)
    (cell,) = re.findall(r"<td>(.*?)</td>", rendered)
    assert cell.replace("\u00a0", " ") == text


RTL = "\u202eevil"  # a right-to-left override, left open
ISOLATED = "\u2068" + RTL + "\u202c\u2069"  # as every output shows it: closed, in an isolate


def test_a_right_to_left_override_in_a_label_ends_with_the_label(tmp_path):
    # left open, it showed what follows it backwards: "+0.025" as "520.0+"
    md, xml = _compare(tmp_path, "--label", "A", "--label", RTL)
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    text = re.sub(r"<svg.*?</svg>", "", page, flags=re.DOTALL)  # each SVG text closes its own
    assert text.count(RTL) >= 3
    assert text.count(RTL) == text.count(ISOLATED)
    markdown = md.read_text()
    assert markdown.count(RTL) >= 2 and markdown.count(RTL) == markdown.count(ISOLATED)
    (case,) = ET.parse(xml).getroot().iter("testcase")
    assert case.get("classname") == f"ragreport gate.{ISOLATED}"


def test_junit_keeps_a_right_to_left_label_as_written(tmp_path):
    """A CI system keys its test history by these names, as a gate script keys on the JSON's
    label: right-to-left letters without a control stay as written there."""
    hebrew = "\u05d2\u05e8\u05e1\u05d4"
    _, xml = _compare(tmp_path, "--label", "A", "--label", hebrew)
    (case,) = ET.parse(xml).getroot().iter("testcase")
    assert case.get("classname") == f"ragreport gate.{hebrew}"


def test_a_right_to_left_override_ends_with_the_label_inside_sentences(tmp_path):
    """Three runs, one labelled with an override: the winner's curse ("The 2 candidates tie
    on correct (… and other: …") and the Read-first lines name the run inside a sentence, and
    the override ran to the end of the sentence there (a label's own cells closed it)."""
    a, b = _logs(tmp_path / "logs")
    md = tmp_path / "s.md"
    c = _moved(b, 0, "c.parquet")
    args = ["compare", str(a), str(c), str(b), "-o", str(tmp_path / "r.html"), "--n-boot", "200"]
    args += ["--markdown", str(md), "--label", "base", "--label", RTL, "--label", "other"]
    args += ["--baseline", "base"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    page = re.sub(
        r"<svg.*?</svg>", "", (tmp_path / "r.html").read_text(encoding="utf-8"), flags=re.DOTALL
    )
    markdown = md.read_text()
    for text in (page, markdown, result.output):
        assert text.count(RTL) >= 1 and text.count(RTL) == text.count(ISOLATED)
    assert f"- {ISOLATED}: Slice column 'slice' has another value in run {ISOLATED}" in markdown
    assert f"The 2 candidates tie on correct ({ISOLATED} and other: " in markdown


HEBREW = "\u05e6\u05d9\u05d5\u05df"  # a score column named in Hebrew


def test_right_to_left_names_in_a_rule_s_line_are_isolated_one_by_one(tmp_path):
    """A slice value with an override, and a score column named in Hebrew, inside a gate
    rule's line: the rule and the sentence were isolated only as wholes (or on the terminal not
    at all), so the difference 0.01389 read 98310.0 in the page, the summary, the JUnit file
    and the CI log, and a rule's number after a right-to-left name could move before it. Each
    is isolated on its own, an override closed before any number; so are the verdict's
    regression line and the few-resamples caveat that name the slice."""
    a, b = _logs(tmp_path / "logs", RTL)
    for log in (a, b):
        frame = pd.read_parquet(log)
        frame[HEBREW] = [0.5 + 0.01 * (i % 7) + (0.05 if log == b else 0) for i in range(40)]
        if log == b:  # B breaks every answer of the override's slice: the likeliest to fail
            frame.loc[:19, "correct"] = False
        frame.to_parquet(log)
    md, xml, html = tmp_path / "s.md", tmp_path / "j.xml", tmp_path / "r.html"
    rules = ["--require", "correct[slice] >= -0.9", "--require", f'"{HEBREW}" >= -0.5']
    args = ["compare", str(a), str(b), "-o", str(html), "--n-boot", "200", "--metric", HEBREW]
    result = CliRunner().invoke(cli, [*args, *rules, "--markdown", str(md), "--junit", str(xml)])
    assert result.exit_code == 0, result.output
    rule = f'\u2068"{HEBREW}"\u2069 >= -0.5'
    slice_line = f"slice slice = {ISOLATED} is the likeliest below -0.9: difference -0.5"
    page = re.sub(r"<svg.*?</svg>", "", html.read_text(encoding="utf-8"), flags=re.DOTALL)
    junit = "\n".join(f"{e.get('name', '')} {e.text or ''}" for e in ET.parse(xml).getroot().iter())
    for text in (result.output, md.read_text(), junit, page):
        assert text.count(RTL) >= 1
        assert re.search("\u202e[^\u202c]*[0-9]", text) is None, text  # nothing reversed
        assert slice_line in text.replace("\u2212", "-")
    assert f"pass  B  {rule}: difference " in result.output
    assert f"B regresses on slice = {ISOLATED}: " in result.output
    assert f"| B | {rule.replace('>', '&gt;')} | **pass** |" in md.read_text()
    assert f"<code>{rule.replace(chr(34), '&#34;').replace('>', '&gt;')}</code>" in page
    assert f"{rule} is pass for B: difference " in junit


@pytest.mark.parametrize("flag", ["--metric", "--slice", "--lower-is-better", "--cluster"])
def test_a_column_named_with_a_bidi_control_is_refused(tmp_path, flag):
    """The report's sentences name the columns these flags name as they are: the verdict on a
    score column 'judge\u202eevil' read "for judge\u202eevil is [\u22120.074, +0.017]"
    backwards from the name on."""
    a, b = _logs(tmp_path / "logs")
    name = "judge" + RTL
    for log in (a, b):
        pd.read_parquet(log).assign(**{name: 0.5}).to_parquet(log)
    result = CliRunner().invoke(
        cli, ["compare", str(a), str(b), "-o", str(tmp_path / "r.html"), flag, name]
    )
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        f"ragreport: error: {flag} 'judge\\u202eevil': the name holds the bidi control U+202E, "
        "which would reverse the report's sentences that name it; rename the column in the logs"
    )
    assert list(tmp_path.glob("r.*")) == []


@pytest.mark.parametrize(
    ("rule", "name"),
    [("correct[slice\u202e] >= -0.5", "slice\u202e"), ('"judge\u202e" >= -0.5', "judge\u202e")],
)
def test_a_rule_naming_a_column_with_a_bidi_control_says_to_rename_it(tmp_path, rule, name):
    """The refusal advised `--slice 'slice\u202e'` (or `--metric`), which is refused in turn,
    and printed the control raw into the CI log."""
    a, b = _logs(tmp_path / "logs")
    args = ["compare", str(a), str(b), "-o", str(tmp_path / "r.html"), "--require", rule]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "\u202e" not in result.output
    assert result.output.strip() == (
        f"ragreport: error: rule {rule!r}: {name!r}: the name holds the bidi control U+202E, "
        "which would reverse the report's sentences that name it; rename the column in the logs"
    )


def test_bidi_controls_are_closed_innermost_first_inside_an_isolate():
    from reportgen.formatting import bidi_isolated

    fsi, pdi = "\u2068", "\u2069"
    assert bidi_isolated("plain") == "plain"
    assert bidi_isolated("\u202ex") == fsi + "\u202ex\u202c" + pdi
    assert bidi_isolated("\u202e\u2066x") == fsi + "\u202e\u2066x\u2069\u202c" + pdi
    assert bidi_isolated("\u2066\u202ex\u2069") == "\u2066\u202ex\u2069"  # isolated already
    # closed, but a count after it would still move before it
    assert bidi_isolated("\u202ex\u202c\u202c") == fsi + "\u202ex\u202c\u202c" + pdi
    # a PDI the text does not open closes an isolate of its own, not the wrapping one
    assert bidi_isolated("a\u2069\u202eb") == fsi + fsi + "a\u2069\u202eb\u202c" + pdi
    # right-to-left letters: isolated for the page, left as written where only controls are
    assert bidi_isolated("\u05d0\u05d1") == fsi + "\u05d0\u05d1" + pdi
    assert bidi_isolated("\u0627\u0644", letters=False) == "\u0627\u0644"
    for text in ("\u202ex", "a\u2069\u202eb", "\u05d0 1", "x \u202e\u2067y"):
        assert bidi_isolated(bidi_isolated(text)) == bidi_isolated(text)


def test_templates_compiled_without_finalize_are_not_reused(monkeypatch, tmp_path):
    import jinja2

    from reportgen.reporters.html import render

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    render.environment.cache_clear()
    cache = tmp_path / "ragreport" / "templates"
    cache.mkdir(parents=True)
    page = {"runs": ["A", RTL], "n_paired": 3, "gate": "", "verdicts": [], "rows": []}
    try:
        plain = jinja2.Environment(  # as an earlier version compiled it, without finalize
            loader=render.environment().loader,
            bytecode_cache=jinja2.FileSystemBytecodeCache(str(cache)),
            autoescape=True,
        )
        plain.filters.update(render.environment().filters)  # the filters the templates use
        plain.get_template("notebook.html")  # compiled into the cache folder
        render.environment.cache_clear()  # as a new process would
        html = render.environment().get_template("notebook.html").render(**page, adjusted=False)
        assert "\u2068A \u00b7 \u202eevil\u202c\u2069;" in html  # the text printed, isolated
    finally:
        render.environment.cache_clear()


def test_a_label_like_a_list_marker_keeps_its_marker_in_the_read_first_list(tmp_path):
    a, b = _logs(tmp_path / "logs")
    md = tmp_path / "s.md"
    b, c = _moved(b, 0, "b0.parquet"), _moved(b, 1, "b1.parquet")
    args = ["compare", str(a), str(b), str(c), "-o", str(tmp_path / "r.html"), "--markdown"]
    # 2,000 resamples: at the two candidates' 97.5% each, a 19-question slice takes its bounds
    # at the expanded level, where 1,667 leave 10 beyond each; fewer add a caveat of their own
    args += [str(md), "--n-boot", "2000", "--label", "A", "--label", "1. fast"]
    result = CliRunner().invoke(cli, [*args, "--label", "- slow"])
    assert result.exit_code == 0, result.output
    read_first = md.read_text().split("### Read first")[1].split("###")[0]
    tokens = MarkdownIt("commonmark").parse(read_first)
    items = ["".join(c.content for c in t.children or []) for t in tokens if t.type == "inline"]
    assert [i.split(":")[0] for i in items[:3]] == ["all candidates", "1. fast", "- slow"]
    assert [t.type for t in tokens].count("bullet_list_open") == 1  # no list nested in an item


def test_long_slice_values_are_drawn_shortened_and_still_told_apart(tmp_path):
    # vl-convert takes about 3 s per 10,000 characters it draws: 100,000 took minutes
    long = "L" * 100_000
    a, b = _logs(tmp_path / "logs", long + "a")
    frames = [pd.read_parquet(path) for path in (a, b)]
    for frame, path in zip(frames, (a, b), strict=True):
        frame.loc[frame["slice"] == "other", "slice"] = long + "b"
        frame.to_parquet(path)
    html = tmp_path / "r.html"
    args = ["compare", str(a), str(b), "-o", str(html), "--n-boot", "200"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    (block,) = re.findall(
        r'<script type="application/json" id="spec-forest-0">(.*?)</script>', html.read_text()
    )
    datasets = json.loads(block)["datasets"].values()
    labels = {row["label"] for data in datasets for row in data if "label" in row}
    assert {label[-8:] for label in labels} == {"a (n=20)", "b (n=20)"}
    assert all(len(label) <= MAX_DRAWN and "\u2026" in label for label in labels)


def test_two_runs_of_one_file_are_named_by_their_labels_in_the_summary(tmp_path):
    a, _ = _logs(tmp_path / "logs")
    md = tmp_path / "s.md"
    args = ["compare", str(a), str(a), "-o", str(tmp_path / "r.html"), "--markdown", str(md)]
    result = CliRunner().invoke(cli, [*args, "--n-boot", "200", "--label", "gpt", "--label", "@x"])
    assert result.exit_code == 0, result.output
    heading = MarkdownIt("commonmark").renderInline(md.read_text().split("\n")[0][3:])
    assert heading == "ragreport: gpt vs @\u200bx, both of a.parquet"


FORGED = "x\n::error title=forged::gate: pass (0 of 1 rule check failed)\r\n  pass  B  ok\x85y"


def test_no_printed_line_is_started_by_a_slice_value_or_a_label(tmp_path):
    """A slice value and labels holding line breaks: a CI job acts on every line the command
    prints (GitHub runs '::error' as a workflow command), so each stays on its own line, its
    breaks written as escapes, and the lines are the verdicts, the gate and its rule lines."""
    a, b = _logs(tmp_path, FORGED)
    labels = ["--label", "A\n::warning::a", "--label", "B\npass  B"]
    rule = ["--require", "correct[slice] <= 0.5", "--require", "correct >= -0.5"]
    args = ["compare", str(a), str(b), str(b), "-o", str(tmp_path / "r.html"), "--quiet"]
    result = CliRunner().invoke(cli, [*args, *labels, "--label", "C", *rule, "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert not [line for line in lines if line.startswith("::")] and not result.stderr
    assert len(lines) == 8, lines  # two verdicts, the gate, its four rule checks, the files
    assert lines[0].startswith("B\\npass  B: ") and lines[1].startswith("C: ")
    assert lines[2].startswith("gate: pass (0 of 4 rule checks failed")
    assert all(line.startswith("  pass  ") for line in lines[3:7])
    assert lines[7].startswith("wrote ")
    assert (
        "slice slice = x\\n::error title=forged::gate: pass (0 of 1 rule check failed)\\r\\n  "
        in (result.stdout)
    )


def test_right_to_left_values_are_isolated_one_by_one_in_lists_counts_and_charts(tmp_path):
    """A question id holding U+202E reversed every id listed after it (the list was closed once,
    at its end); a count after a right-to-left slice value showed before it ("20 LTR"), and the
    forest chart's label "\u202eRTL (n=20)" read "(02=n) LTR"."""
    arabic = "\u0639\u0631\u0628\u064a"

    def rows(ids: list[str]) -> list[dict]:
        return [
            {"question_id": q, "slice": RTL if i < 20 else arabic, "correct": i % 2 == 0}
            for i, q in enumerate(ids)
        ]

    ids = [f"q{i}" for i in range(40)]
    a = write_run_log(tmp_path / "a.parquet", rows(ids))
    b = write_run_log(tmp_path / "b.parquet", rows(ids) + rows([RTL, "x1", "x2"]))
    html = tmp_path / "r.html"
    args = ["compare", str(a), str(b), "-o", str(html), "--n-boot", "200", "--quiet"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    page = html.read_text(encoding="utf-8")
    assert f"only in run B are not compared: {ISOLATED}, x1, x2" in page  # each id isolated
    assert f"\u2068{arabic}\u2069 20 &middot; {ISOLATED} 20" in page  # each count after its value
    specs = [json.loads(s) for s in re.findall(r'"application/json" id="spec-[^"]*">(.*?)<', page)]
    labels = {row["label"] for spec in specs for row in _rows(spec) if "label" in row}
    assert {f"{ISOLATED} (n=20)", f"\u2068{arabic}\u2069 (n=20)"} <= labels
    drawn = "".join(re.findall(r"<svg.*?</svg>", page, re.DOTALL))
    assert RTL in drawn and drawn.count(RTL) == drawn.count(ISOLATED)


def _rows(spec: dict) -> list[dict]:
    """Every data row of a Vega-Lite spec, whatever its nesting (layers, datasets)."""
    found = [row for data in spec.get("datasets", {}).values() for row in data]
    return found + [row for part in spec.get("layer", []) for row in _rows(part)]


def test_a_run_name_in_a_narrow_cell_wraps_at_its_joiners_and_stays_escaped(tmp_path):
    """The study's summary cell wrapped "fare_rules_b_reranker" as "fare_rules_b_rerank" and
    "er"; a break is now allowed after each _ - / and . of a name, the name escaped as ever."""
    a, b = _logs(tmp_path / "logs")
    labels = ("base", "fare_rules_b.v2", "x<b>_y")
    args = ["compare", str(a), str(b), str(b), "-o", str(tmp_path / "r.html"), "--n-boot", "200"]
    args += ["--require", "correct >= -0.5", *(f for label in labels for f in ("--label", label))]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    summary = page[page.index('id="summary"') : page.index('id="family"')]
    assert ">fare_<wbr>rules_<wbr>b.<wbr>v2</a>" in summary
    assert ">x&lt;b&gt;_<wbr>y</a>" in summary and "x<b>" not in page
    gate = page[page.index('class="gate') :]
    assert '<td class="text">fare_<wbr>rules_<wbr>b.<wbr>v2</td>' in gate
    # a right-to-left name keeps its isolate around the breaks
    assert str(breakable(RTL + "_x")) == f"\u2068{RTL}_<wbr>x\u202c\u2069"
