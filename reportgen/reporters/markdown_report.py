"""A GitHub-flavoured Markdown summary for a pull-request comment or ``$GITHUB_STEP_SUMMARY``.

A sibling of the HTML and JSON, fed the same ``Report``. GitHub refuses a comment or a job
summary over MAX_CHARS characters, so every table is cut at a fixed number of rows and every
piece of user text at a fixed length; the whole is cut at a line as a last resort.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from ..analysis.gates import PASS, GateResult
from ..analysis.holdout import Holdout
from ..analysis.registry import base_name
from ..analysis.slices import SMALL_SLICE, SliceResult
from ..analysis.stats import (
    FEW_CHANGED,
    ONE_WAY_BELOW,
    ONE_WAY_RARER,
    STUDENTIZED_BELOW,
    MetricComparison,
    significance,
)
from ..analysis.verdict import regression_caveat
from ..comparison.compare import Comparison, too_fine_note
from ..comparison.study import Study
from ..formatting import (
    NOISE,
    agreeing,
    bidi_isolated,
    fmt_count,
    fmt_diff,
    fmt_interval,
    fmt_num,
    fmt_p,
    fmt_pct,
    metric_label,
    one_line,
    shown_value,
)
from ..inputs.load import RunFile
from .report import Report, row_digits, study_warnings
from .user_text import cut_end, cut_middle

MAX_CHARS = 65_536  # GitHub's limit on a comment and on a job summary
MAX_TEXT = 120  # characters of one piece of user text (a file name, a rule, a slice value)
MAX_DETAIL = 400  # of a rule's numbers: a per-slice rule's reason comes last, after the slice
DETAIL_BUDGET = 24_000  # of all the rules' numbers shown: fewer rules keep more of theirs (a
# per-slice rule's skew caveat runs past 400), MAX_RULE_ROWS rules MAX_DETAIL each
MAX_RULE_ROWS = 60  # gate results shown; the JSON and JUnit hold every one
MAX_SLICE_ROWS = 30  # flagged slices shown
MAX_WARNINGS = 20  # caveats shown from the page's "Read first" box; the JSON holds every one
MAX_REASON = 1_000  # characters of the verdict's reason (the tool's text, naming a metric)
SHA_SHOWN = 12  # hex digits of each input's sha256

_SPECIAL = re.compile(r"([\\`*_\[\]|~#$])")  # $ opens GitHub's math
# What GitHub links or notifies in a comment's rendered text, where a backslash escape is
# gone; a zero-width space after the mark keeps it from doing so. A mention after any
# character but an ASCII word character (not recall@5, but \u00e9@name); an issue reference
# (#5, owner/repo#5, GH-5); a bare web address.
_MENTION = re.compile(r"(?<![A-Za-z0-9_])@(?=[A-Za-z0-9])")
_REFERENCE = re.compile(
    r"(#)(?=\d)|(?<![A-Za-z0-9_])(GH)(?=-\d)|(?<=\w)(:)(?=//)|"
    r"(?<![A-Za-z0-9_.])(www)(?=\.)",
    re.IGNORECASE,
)
# where user text begins a list item ("- 1. x"), a marker would start a nested list and vanish
_LIST_MARKER = re.compile(r"^(\d{1,9}(?=[.)](?:\s|$))|)([-+.)])")
_LONG_WORD = re.compile(rf"\S{{{MAX_TEXT + 1},}}")  # a name without spaces longer than MAX_TEXT
_DROPPED_SPACE = re.compile(r"^ | $| (?= )")
ZERO_WIDTH_SPACE = "&#8203;"  # after an @, it keeps GitHub from notifying the account named


def cut_prose(text: str, limit: int) -> str:
    """Prose cut at its end, after each name in it longer than MAX_TEXT (a slice value that is a
    path, an id) is cut in its middle as a name alone is: a per-slice rule's reason then keeps
    the numbers that follow the slice's name."""
    return cut_end(_LONG_WORD.sub(lambda word: cut_middle(word[0], MAX_TEXT), text), limit)


def prose(text: str, limit: int = MAX_REASON) -> str:
    """A sentence of the tool's (a reason, a warning) as escape makes it, cut as prose."""
    return escape(text, limit, cut_prose)


def escape(text: str, limit: int = MAX_TEXT, cut: Callable[[str, int], str] = cut_middle) -> str:
    """User text as literal Markdown: no emphasis, code, link, math, table cell break, HTML tag
    or @-mention, no list marker where it begins a list item, no CI workflow command (``::``)
    where it begins a line, no right-to-left override reaching past it, and no control
    character a terminal acts on when a CI log prints it.
    A name (a slice value, a file, a rule) is cut in its middle, where two of one long prefix
    differ at their ends; prose is cut at its end (``prose``)."""
    # a control as its escape (\x1b, and \n, \r, \t as the command prints them): 'line\nbreak'
    # must not read as 'line break'
    text = cut(one_line(str(text)), limit)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # a space the rendering would drop (first or last in a cell, one after another) kept as a
    # no-break space: slices ' tier' and 'tier', or 'a  b' and 'a b', read as two
    text = _DROPPED_SPACE.sub("&nbsp;", text)
    text = _LIST_MARKER.sub(r"\1\\\2", _SPECIAL.sub(r"\\\1", text))
    text = "\\" + text if text.startswith("::") else text  # a CI workflow command's, where
    # the text begins a line (a study's best candidate); GitHub renders \: as :
    text = _REFERENCE.sub(lambda m: m[0] + ZERO_WIDTH_SPACE, text)
    return bidi_isolated(_MENTION.sub("@" + ZERO_WIDTH_SPACE, text))


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows] + [""]


def _metric_rows(result: Comparison) -> list[list[str]]:
    # a cost the report compares as a metric keeps the metric's row, the JSON's metrics
    costs = {
        n: c.comparison for n, c in result.diagnosis.cost.items() if n not in result.comparisons
    }
    rows = []
    bar = significance(result.options.confidence)  # a p beside it keeps its side (fmt_p)
    for name, c in (result.comparisons | costs).items():
        # a cost is lower-is-better, as a score column named by --lower-is-better is
        higher = name not in costs and result.tables.metric(base_name(name)).higher_is_better
        label = escape(metric_label(name, higher))
        shown = f"**{label}**" if name == result.headline else label
        digits = row_digits(result, name)
        numbers = [fmt_num(c.a, digits), fmt_num(c.b, digits), *_difference(c, digits)]
        rows.append([shown, *numbers, fmt_p(c.p, bar)])
    return rows


def _difference(c: MetricComparison, digits: int) -> list[str]:
    """B - A and its interval, in the metric's digits."""
    return [fmt_diff(c.diff, digits), fmt_interval(c.ci_low, c.ci_high, digits)]


def _gate_lines(gate: GateResult) -> list[str]:
    """The gate's outcome and a row per rule and candidate, in the order given; past
    MAX_RULE_ROWS the rules that count as failing come first, so they are the last cut, and
    the line under the table says how many of those cut fail."""
    results = list(gate.results)
    if len(results) > MAX_RULE_ROWS:
        results.sort(key=lambda r: r.counts_as == PASS)
    shown, hidden = results[:MAX_RULE_ROWS], results[MAX_RULE_ROWS:]
    detail = max(MAX_DETAIL, DETAIL_BUDGET // max(1, len(shown)))
    lines = [
        f"### Gate: {gate.outcome.upper()}",
        "",
        f"Each bound is one-sided at the {fmt_pct(gate.one_sided_level)} level (the "
        f"{fmt_pct(gate.confidence)} two-sided interval){gate.slice_levels}; an inconclusive "
        "rule counts as "
        f"**{gate.inconclusive}**. Candidates passing every rule: "
        f"{', '.join(escape(c) for c in gate.passing_candidates()) or 'none'}.",
        "",
    ]
    rows = [
        [
            escape(r.candidate),
            escape(r.shown_rule),
            f"**{r.shown}**",
            *r.numbers(signed=True),  # the digits of the rule's sentence, which it decides by
            prose(r.detail, detail),
        ]
        for r in shown
    ]
    lines += _table(["Candidate", "Rule", "Result", "Estimate", "Interval", "Numbers"], rows)
    if hidden:
        failing = sum(r.counts_as != PASS for r in hidden)
        passing = agreeing(len(hidden), "it passes", "all pass")
        which = f"{failing} of them failing" if failing else passing
        lines += [_more(len(hidden), "rule result", f"the JSON and the JUnit file ({which})"), ""]
    return lines


def _named_regressions(
    lines: list[str], limit: int = MAX_SLICE_ROWS, indent: str = ""
) -> list[str]:
    """The slice regressions a verdict names (findings on the headline metric), one item each
    under the verdict, as the page and the command's output give them."""
    shown = [f"{indent}- {prose(line)}" for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"{indent}- {_more(len(lines) - limit, 'slice regression', 'the report')}")
    return shown


def _verdicts(study: Study) -> list[str]:
    """Each candidate's verdict sentence, as its section on the page and the command's output
    give it, with the regressions it names: the table's one word per candidate leaves out what
    the sentence adds (a bound the skew of a cost leaves unsure, a test and an interval that
    disagree, what a margin settles)."""
    limit = max(1, MAX_SLICE_ROWS // len(study.pairs))
    lines = []
    for pair in study.pairs:
        verdict = pair.verdict
        lines += [
            f"- {escape(pair.runs['b'].label)}: **{verdict.outcome}** on "
            f"**{escape(pair.headline)}**. {prose(verdict.reason)}",
            *_named_regressions(verdict.regressions, limit, indent="  "),
        ]
    return [*lines, ""]


def _changes(c: MetricComparison) -> str:
    """The metric's changes over the questions it scores in both runs, as the page's table
    counts them: fewer than the paired questions where some have no score (a retrieval metric
    of a question without labelled evidence)."""
    scored = f"{fmt_count(c.n, 'question')} scored in both runs"
    if c.fixed is not None:
        return f"Fixed {c.fixed:,}, broken {c.broken:,} (of {scored})."
    return f"{c.wins:,} better, {c.losses:,} worse, {c.ties:,} unchanged (of {scored})."


def _more(n: int, noun: str, where: str) -> str:
    """The line under a cut list: '3 more caveats are in the report.'"""
    return f"{fmt_count(n, f'more {noun}')} {agreeing(n, 'is', 'are')} in {where}."


def _flagged_slices(result: Comparison) -> list[list[str]]:
    """The rows of the slices flagged on any metric, findings first (a cut list keeps them),
    each group in metric order."""
    flagged = [
        (metric, r)
        for per_metric in result.slices.values()
        for metric, rows in per_metric.items()
        for r in rows
        if r.regression
    ]
    return [
        [
            escape(r.column),
            escape(shown_value(r.value)),
            escape(metric),
            str(r.comparison.n),
            *_difference(r.comparison, row_digits(result, metric)),
            fmt_p(r.p_holm, significance(result.options.confidence)),
            _reads_as(r, result.comparisons.get(metric)),
        ]
        for metric, r in sorted(flagged, key=lambda item: not item[1].finding)
    ]


def _reads_as(r: SliceResult, run: MetricComparison | None) -> str:
    """A flagged slice's reading; a regression resting on a bound its skew leaves unsure says
    so, as its line in the verdict does (the table alone read "regression" beside it)."""
    if not r.finding:
        return "direction, not proof" if r.small else "direction"
    return "regression, skewed" if regression_caveat(r.comparison, run) else "regression"


def render(report: Report) -> str:
    """The two-run summary (one candidate, with its held-out check under --holdout), or for
    several candidates one row per candidate: a family of one has no family to describe, and
    its verdict and metrics are the summary's point."""
    study, html_name = report.study, report.html_name
    if study.family is None:
        return _pair(study.pairs[0], html_name, study_warnings(study), study.holdout)
    lines = [
        f"## ragreport: {fmt_count(len(study.pairs), 'candidate')} against "
        f"{escape(study.baseline.label)}, on the {fmt_count(study.n_paired, 'question')} every "
        "run has",
        "",
        prose(study.family.sentence),
        "",
        # the caveats below read "A" and "B" as each comparison does
        f"In each candidate's lines A is the baseline, {escape(study.baseline.label)}, and B "
        "that candidate.",
        "",
    ]
    lines += _read_first(study_warnings(study))
    if study.gate is not None:
        lines += _gate_lines(study.gate)
    rows = [
        [
            escape(r.candidate),
            escape(r.metric),
            fmt_num(r.baseline_mean),
            fmt_num(r.candidate_mean),
            fmt_diff(r.diff),
            fmt_interval(r.ci_low, r.ci_high),
            fmt_p(r.p_adjusted),
            f"{r.fixed:,} / {r.broken:,}" if r.fixed is not None else "",
            escape(r.reads),
        ]
        for r in study.summary
    ]
    header = ["Candidate", "Metric", "Baseline", "Candidate", "Difference", "Interval"]
    adjusted = f"p ({study.family.adjustment})"
    lines += ["### Candidates", ""]
    lines += _table([*header, adjusted, "Fixed / broken", "Verdict"], rows)
    lines += _verdicts(study)
    for note in (study.curse, study.holdout):
        if note is not None:
            lines += [prose(note.sentence), ""]
    lines += _study_regressions(study)
    lines += ["### Inputs", ""]
    lines += _inputs(study.runs, study.n_questions)
    lines.append(f"The full report is the attached HTML, {escape(html_name)}.")
    return fit("\n".join(lines) + "\n")


def _inputs(runs: list[RunFile], n_questions: list[int]) -> list[str]:
    """Each log with its number of distinct questions (``n_questions``, as ``runs``)."""
    return _table(
        ["Run", "File", "sha256", "Questions"],
        [
            [
                escape(run.label),
                escape(run.path.name),
                f"`{run.sha256[:SHA_SHOWN]}`",
                f"{n:,}",
            ]
            for run, n in zip(runs, n_questions, strict=True)
        ],
    )


def _pair(
    result: Comparison, html_name: str, warnings: list[str], holdout: Holdout | None = None
) -> str:
    runs = result.runs
    headline = result.comparisons[result.headline]
    lines = [
        f"## ragreport: {_runs_named(runs['a'], runs['b'])}",
        "",
        f"**{result.verdict.outcome}** on **{escape(result.headline)}**. "
        f"{prose(result.verdict.reason)}",
        "",
        *_named_regressions(result.verdict.regressions),
    ]
    lines += [""] if result.verdict.regressions else []
    lines += _read_first(warnings)
    if result.gate is not None:
        lines += _gate_lines(result.gate)
    if holdout is not None:
        lines += ["### Held-out check", "", prose(holdout.sentence), ""]
    tests = (
        f"the paired permutation test of the clusters (--cluster {result.options.cluster}: "
        "whole clusters' differences flipped), for every metric; where 1 to "
        f"{FEW_CHANGED - 1} questions changed among ties (or moved off one difference every "
        f"other question shares) on a metric of known range, or under {ONE_WAY_BELOW} with "
        f"fewer than {ONE_WAY_RARER} of them the rarer way, the larger p of that test and the "
        "bounded score test"
        if result.options.cluster
        else "McNemar's exact test for 0/1 outcomes; for continuous ones the bootstrap-t test "
        f"where under {STUDENTIZED_BELOW:,} questions changed, Student's t test where the "
        "interval is t's alone, the paired permutation test from there; where 1 to "
        f"{FEW_CHANGED - 1} questions changed among ties (or moved off one difference every "
        f"other question shares) on a metric of known range, or under {ONE_WAY_BELOW} with "
        f"fewer than {ONE_WAY_RARER} of them the rarer way, the largest p of that test "
        f"(Student's t test where under {FEW_CHANGED} changed or moved), the exact sign flips "
        "and the bounded score test"
    )
    lines += [
        "### Metrics",
        "",
        f"B \u2212 A with its {fmt_pct(result.options.confidence)} interval, over the questions "
        f"scored in both runs; p of the paired test of the same difference ({tests}).",
        "",
        *_table(["Metric", "A", "B", "B \u2212 A", "Interval", "p"], _metric_rows(result)),
        f"{escape(result.headline)}: {_changes(headline)}",
        "",
    ]
    lines += ["### Regressions", "", *_regressions(result, MAX_SLICE_ROWS)]
    lines += ["### Inputs", ""]
    lines += _inputs(list(runs.values()), [result.n_questions[key] for key in runs])
    lines.append(f"The full report is the attached HTML, {escape(html_name)}.")
    return fit("\n".join(lines) + "\n")


def _runs_named(a: RunFile, b: RunFile) -> str:
    """The two files, or the two runs' labels when they are one file (a promptfoo eval of two
    providers), which the file name alone would not tell apart."""
    if a.path != b.path:
        return f"{escape(a.path.name)} vs {escape(b.path.name)}"
    return f"{escape(a.label)} vs {escape(b.label)}, both of {escape(a.path.name)}"


def _read_first(warnings: list[str]) -> list[str]:
    """The caveats of the page's "Read first" box (fewer paired questions than a conclusion
    needs, ids in one run only, ...), in the page's words: the same sentences, not a retelling."""
    if not warnings:
        return []
    lines = ["### Read first", "", *(f"- {prose(w)}" for w in warnings[:MAX_WARNINGS])]
    if len(warnings) > MAX_WARNINGS:
        lines.append(f"- {_more(len(warnings) - MAX_WARNINGS, 'caveat', 'the report')}")
    return [*lines, ""]


def _regressions(result: Comparison, limit: int) -> list[str]:
    """The slices of one comparison where B is worse and flagged (slices.SliceResult), at most
    ``limit`` rows of them, or why there are none."""
    flagged = _flagged_slices(result)
    lines = []
    bar = f"{significance(result.options.confidence):.3g}"  # 0.0167 for 0.05 / 3
    if flagged:
        lines += [
            "Slices where B is worse: a regression where the loss survives Holm's adjustment "
            f"over the slices (adjusted p below {bar}), has {SMALL_SLICE} questions or more and "
            "an interval wholly on the worse side once the adjustment widens it, whatever B "
            "does overall; short of that, a "
            "direction, not a finding, listed where B is ahead on the overall mean (whether or "
            'not the verdict finds that gain); "skewed": a regression whose bound rests on a '
            "skew its questions are too few for, and may miss more often than its level says:",
            "",
        ]
        lines += _table(
            ["Column", "Slice", "Metric", "n", "B \u2212 A", "Interval", "p (Holm)", "Reads as"],
            flagged[:limit],
        )
        if len(flagged) > limit:
            lines += [_more(len(flagged) - limit, "flagged slice", "the report"), ""]
    elif result.slices:
        lines += [_none_flagged(result, bar), ""]
    elif not result.too_fine:
        lines += ["No slices compared: log a slice column (or name one with --slice).", ""]
    for column, n in result.too_fine.items():
        lines += [f"{prose(too_fine_note(column, n))}.", ""]
    return lines


def _none_flagged(result: Comparison, bar: str) -> str:
    """Why no slice is flagged: no slice's loss is a finding, and a loss short of one is listed
    only against a metric on which B is ahead on the overall mean."""
    gains = [
        c.diff if result.tables.metric(base_name(name)).higher_is_better else -c.diff
        for name, c in result.comparisons.items()
    ]
    # a loss can survive Holm's adjustment and be no finding (an interval reaching zero, fewer
    # than SMALL_SLICE questions): the sentence names all three conditions, as the table's does
    found = (
        f"No slice's loss is a finding (Holm-adjusted p below {bar}, {SMALL_SLICE} questions or "
        "more and an interval wholly on the worse side once the adjustment widens it)"
    )
    if all(abs(g) < NOISE or math.isnan(g) for g in gains):  # float noise is no difference
        return f"No overall difference, and {found[0].lower()}{found[1:]}."
    if not any(g > 0 for g in gains):
        return (
            f"{found}; B is not ahead on the overall mean of any metric, so a loss short of one "
            "is not listed."
        )
    return f"{found}, and no slice has B worse where B is ahead on the overall mean."


def _study_regressions(study: Study) -> list[str]:
    """Each candidate's regressions against the baseline; the candidates share the rows one
    comparison has, so the summary stays within GitHub's limit however many there are."""
    pairs = study.pairs
    lines = [
        "### Regressions",
        "",
        f"B \u2212 A is each candidate minus the baseline, {escape(study.baseline.label)}.",
        "",
    ]
    limit = max(1, MAX_SLICE_ROWS // len(pairs))
    for pair in pairs:
        lines += [f"#### {escape(pair.runs['b'].label)}", "", *_regressions(pair, limit)]
    return lines


SECTION_CUT = "(Section cut at GitHub's size limit; the full report is the attached HTML.)"


def fit(text: str) -> str:
    """The text whole when under MAX_CHARS, else its longest sections cut at a line, each ended
    by SECTION_CUT, until it fits. Cutting the whole at its end lost what comes last, the
    candidates' verdicts and the inputs, where user text heavy in escaped characters made a
    table longer than its row caps allow for; each section keeps its heading and first lines."""
    if len(text) < MAX_CHARS:
        return text
    sections = re.split(r"(?m)^(?=#)", text)  # each heading (and the title's) starts one
    note = f"\n{SECTION_CUT}\n\n"
    while (excess := sum(map(len, sections)) - MAX_CHARS + 1) > 0:
        longest = max(range(len(sections)), key=lambda i: len(sections[i]))
        section = sections[longest]
        heading = section.find("\n") + 1 or len(section)
        if len(section) - heading <= len(note):  # every section is down to its heading
            return text[: text.rfind("\n", 0, MAX_CHARS - len(note))] + note
        end = max(heading, section.rfind("\n", heading, len(section) - excess - len(note)) + 1)
        sections[longest] = section[:end] + note
    return "".join(sections)
