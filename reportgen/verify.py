"""``verify``: check an archived report against its logs by re-running it with its options.

The logs' sha256 (and their qrels files') must match the report's; the comparison is then
re-run with the options the report records (``params``, and the gate's rules) and every number
of the new JSON is compared with the archived one, floats to RELATIVE_TOLERANCE, the rows of a
per-question file included. ``tool`` (versions), ``run_id`` (but against that file's) and the
paths of the logs and of that file are not compared: a report may be verified on another
machine, from another folder. Versions that differ from the installed ones are named in a
warning, since the last digits of a number may then differ. The page beside the report is
drawn again from the re-run and compared with the archived one, its text and then its bytes.
"""

from __future__ import annotations

import glob
import json
import math
import os
import re
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from html.parser import HTMLParser
from itertools import zip_longest
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from . import __version__
from .archive import Archived, ArchivedRun, Tool, read_report
from .comparison.study import Study, run_study
from .errors import InputError
from .formatting import fmt_count
from .inputs.load import digest_names, files_sha256, open_source, sha256_of, table_path
from .inputs.readers import ReadOptions, parquet_files
from .pipeline import build_report
from .progress import stage
from .provenance import library_versions
from .reporters import html_report, json_report
from .reporters.html import svg_process

RELATIVE_TOLERANCE = 1e-9  # the last bits of a float may differ across machines
_GENERATED = re.compile(r"generated (\d{4}-\d\d-\d\d \d\d:\d\d) UTC")  # the page's clock
_NOT_COMPARED = ("tool", "run_id")  # versions, and the id of each run, differ by design


@dataclass(frozen=True)
class Verification:
    checked: int  # numbers compared
    difference: str | None  # the first differing value, by JSON path; None when all match
    warnings: tuple[str, ...] = ()  # versions that differ from the report's
    page: Path | None = None  # the page beside the report, compared with the re-run's too


def other_versions(tool: Tool) -> dict[str, tuple[str, str]]:
    """Each of the tool and its libraries whose version recorded in the report differs from
    the installed one: name -> (recorded, installed)."""
    recorded = {"ragreport": tool.version, **tool.libraries}
    installed = {"ragreport": __version__, **library_versions()}
    return {
        name: (version, installed[name])
        for name, version in recorded.items()
        if installed.get(name, version) != version
    }


def version_warnings(differ: Mapping[str, tuple[str, str]]) -> tuple[str, ...]:
    """One warning naming the versions of the report that differ from the installed ones
    (other_versions); none when all agree."""
    if not differ:
        return ()
    made = ", ".join(f"{name} {then}" for name, (then, _) in differ.items())
    now = ", ".join(f"{name} {now}" for name, (_, now) in differ.items())
    return (
        f"the report was made with {made}; installed: {now}; numbers may differ in their last "
        "digits",
    )


def _qrels_difference(i: int, run: ArchivedRun) -> str | None:
    """The JSON path of the qrels file's sha256 when the file is not the one the report read."""
    qrels = run.read.qrels
    if run.qrels_sha256 is None or qrels is None or sha256_of(qrels) == run.qrels_sha256:
        return None
    return f"runs[{i}].read.qrels_sha256: {qrels} is not the qrels file the report read"


def _read_sha256(path: Path, read: ReadOptions, recorded: str) -> str:
    """The sha256 of the log at ``path`` read with ``read``'s options, as the report records it;
    where the log cannot be read, that of its files' bytes: a log cut short, or a table edited
    out of its contract, is another log than the report's (exit 1), not bad input (exit 2) to
    be written again. A log of the report's bytes that cannot be read is refused as read."""
    try:
        return open_source(path, "", read).sha256
    except InputError:
        digest = _bytes_sha256(path, read)
        if digest is None or digest == recorded:
            raise
        return digest


def _bytes_sha256(path: Path, read: ReadOptions) -> str | None:
    """The sha256 of a log's files as bytes, named as load.digest_names names them (a file, the
    Parquet files of a folder or pattern, then its --qrels and --passages files); None when
    they cannot be listed."""
    try:
        files = (*parquet_files(path), *(f for f in (read.qrels, read.passages) if f))
    except InputError:
        return None
    if not all(file.is_file() for file in files):
        return None
    named = digest_names(files, read)
    return files_sha256({named[file]: sha256_of(file) for file in files})


def _located(report: Path, recorded: Path, what: str, label: str) -> Path:
    """A path the report records: a relative one is looked for beside the report (compare's
    folder is not recorded), then in the current folder; never the report itself (a log
    out.json, compared into reports/out.html, has the report's name beside it)."""
    tried = [recorded] if recorded.is_absolute() else [report.parent / recorded, recorded]
    found = next(
        (p for p in tried if not _same(p, report) and (p.exists() or glob.glob(str(p)))), None
    )
    if found is None:
        looked = " nor ".join(str(p.absolute()) for p in dict.fromkeys(tried))
        # the logs' paths may be passed; a qrels file's or passage table's only found
        passed = ", or pass the logs after the report" if what == "log" else ""
        raise InputError(
            f"{recorded}: no such {what} (run {label} of {report}): not at {looked}; put the "
            f"file the report read there{passed}"
        )
    return found


def _same(path: Path, report: Path) -> bool:
    """Whether ``path`` is the report's file."""
    return path.is_file() and report.is_file() and path.samefile(report)


def _relocated(report: Path, run: ArchivedRun) -> ArchivedRun:
    """``run`` with the qrels file and passage table it names found (see _located)."""
    read = run.read
    qrels, passages = (
        None if p is None else _located(report, p, what, run.label)
        for p, what in ((read.qrels, "qrels file"), (read.passages, "passage table"))
    )
    return replace(run, read=replace(read, qrels=qrels, passages=passages))


def _renamed(
    paths: list[Path], runs: tuple[ArchivedRun, ...], recorded: tuple[ArchivedRun, ...]
) -> dict[str, str]:
    """Each file verify reads (log, qrels file, passage table) whose path differs from the one
    the report records, with that one, and likewise their file names, which a warning may
    give alone, where a name is no path of another and the report names it one way (for
    first_difference, and a piece of the page's text)."""
    pairs = [(path, Path(run.path)) for path, run in zip(paths, recorded, strict=True)]
    for now, then in zip(runs, recorded, strict=True):
        pairs += [
            (getattr(now.read, name), getattr(then.read, name))
            for name in ("qrels", "passages")
            if getattr(then.read, name) is not None
        ]
    named = {str(path): str(was) for path, was in pairs}
    names: dict[str, set[str]] = {}
    for path, was in pairs:
        names.setdefault(path.name, set()).add(was.name)
    # a name stands for its file where it is no path of one and the report names it one way
    named |= {name: was.pop() for name, was in names.items() if name not in named and len(was) == 1}
    return {path: was for path, was in named.items() if path != was}


def _sidecar(report: Path, path: Path) -> tuple[list[dict[str, Any]], str | None]:
    """The rows of the report's per-question Parquet file (looked for beside the report, then
    at the path it records) and the id of the run that wrote it."""
    found = next((p for p in (report.parent / path.name, path) if p.is_file()), None)
    if found is None:
        raise InputError(
            f"{report}: its per-question rows are in {path}, which is missing; put that file "
            "beside the report"
        )
    try:
        table = pq.read_table(found)
    except (OSError, pa.ArrowInvalid) as exc:
        raise InputError(f"{found}: not a per-question Parquet file ({exc})") from None
    run_id = (table.schema.metadata or {}).get(json_report.RUN_ID_KEY, b"").decode() or None
    return table.to_pylist(), run_id


class _Absent:
    """The value at a JSON path that one document lacks."""

    def __repr__(self) -> str:
        return "(absent)"


ABSENT = _Absent()
_QUOTED = frozenset('.[]" ')  # a key holding one is written ["key"] in a path


@dataclass(frozen=True)
class Difference:
    """The first value that differs, with the keys and indices that lead to it."""

    where: tuple[str | int, ...]
    report: Any  # ABSENT when the report lacks the key
    rerun: Any  # ABSENT when the re-run lacks it

    @property
    def path(self) -> str:
        """As in ``comparisons[0].slices["rule.lookup"]``: a key with a dot is quoted."""
        parts = (
            f"[{part}]"
            if isinstance(part, int)
            else f"[{json.dumps(part)}]"
            if _QUOTED & set(part) or not part
            else f".{part}"
            for part in self.where
        )
        return "".join(parts).removeprefix(".")

    def __str__(self) -> str:
        return f"{self.path}: report {self.report!r}, re-run {self.rerun!r}"


def first_difference(
    actual: Any,
    expected: Any,
    where: tuple[str | int, ...] = (),
    renamed: Mapping[str, str] | None = None,
) -> tuple[Difference | None, int]:
    """The first value of ``actual`` (the re-run) that differs from ``expected`` (the report;
    floats to RELATIVE_TOLERANCE), and how many numbers were compared up to there.

    ``renamed``: paths of the re-run's files, each with the path the report gives the same
    file; a text of the re-run that names one (a warning naming a log) is compared with it
    spelled as in the report, since the paths of the files are not compared."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        checked = 0
        for key in dict.fromkeys([*expected, *actual]):
            if key not in actual or key not in expected:
                mine, theirs = actual.get(key, ABSENT), expected.get(key, ABSENT)
                return Difference((*where, key), theirs, mine), checked
            found, n = first_difference(actual[key], expected[key], (*where, key), renamed)
            checked += n
            if found:
                return found, checked
        return None, checked
    if isinstance(expected, list) and isinstance(actual, list):
        checked = 0
        for i in range(max(len(actual), len(expected))):
            if i >= len(actual) or i >= len(expected):
                mine = actual[i] if i < len(actual) else ABSENT
                theirs = expected[i] if i < len(expected) else ABSENT
                return Difference((*where, i), theirs, mine), checked
            found, n = first_difference(actual[i], expected[i], (*where, i), renamed)
            checked += n
            if found:
                return found, checked
        return None, checked
    difference = Difference(where, expected, actual)
    numbers = (int, float)
    if isinstance(expected, numbers) and isinstance(actual, numbers):
        if isinstance(expected, bool) or isinstance(actual, bool):
            return (None if actual is expected else difference), 1
        same = math.isclose(actual, expected, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-12)
        return (None if same else difference), 1
    if isinstance(actual, str) and renamed and actual != expected:
        actual = _respelled(actual, renamed)
    return (None if actual == expected else difference), 0


def _respelled(text: str, renamed: Mapping[str, str]) -> str:
    """``text`` with every path of ``renamed`` replaced by its counterpart, the longest first
    (a path may begin with another)."""
    pattern = "|".join(re.escape(path) for path in sorted(renamed, key=len, reverse=True))
    return re.sub(pattern, lambda found: renamed[found.group()], text)


class _Page(HTMLParser):
    """A page read as what a reader sees and the rest: ``pieces``, each run of text between
    tags with its whitespace collapsed (scripts and styles are not text); ``markup``,
    everything else as written (tags with their attributes, the scripts and styles, the
    whitespace around the text, a mark where each piece stands). The two together are the
    whole page, entities aside (``&#39;`` reads as the quote it stands for)."""

    def __init__(self) -> None:
        super().__init__()
        self.pieces: list[str] = []
        self.markup: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.markup.append(self.get_starttag_text() or tag)
        self._hidden += tag in ("script", "style")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.markup.append(self.get_starttag_text() or tag)

    def handle_endtag(self, tag: str) -> None:
        self.markup.append(f"</{tag}>")
        self._hidden -= tag in ("script", "style") and self._hidden > 0

    def handle_data(self, data: str) -> None:
        words = " ".join(data.split())
        if words and not self._hidden:
            self.pieces.append(words)
            self.markup.append(_WORDS.sub("\0", data))
        else:
            self.markup.append(data)

    def handle_comment(self, data: str) -> None:
        self.markup.append(f"<!--{data}-->")

    def handle_decl(self, decl: str) -> None:
        self.markup.append(f"<!{decl}>")

    def handle_pi(self, data: str) -> None:
        self.markup.append(f"<?{data}>")

    def unknown_decl(self, data: str) -> None:
        self.markup.append(f"<![{data}]>")


_WORDS = re.compile(r"\S(.*\S)?", re.DOTALL)  # a text's words, between its outer whitespace


def read_page(page: str) -> _Page:
    """``page`` (an HTML document) as _Page reads it."""
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser


def _as_recorded(study: Study, runs: tuple[ArchivedRun, ...]) -> Study:
    """``study`` with each run named by the path the report records (the page gives it)."""
    path = {run.label: Path(run.path) for run in runs}
    renamed = [replace(run, path=path[run.label]) for run in study.runs]
    by_label = {run.label: run for run in renamed}
    pairs = [
        replace(pair, runs={key: by_label[run.label] for key, run in pair.runs.items()})
        for pair in study.pairs
    ]
    return replace(study, runs=renamed, pairs=pairs)


def _page_difference(
    page: Path,
    report: Path,
    study: Study,
    archived: Archived,
    renamed: Mapping[str, str],
    exact: bool,
) -> str | None:
    """Where ``page`` first differs from the page of the re-run ``study``, drawn with the
    report's run id, its clock's minute (read off the page's footer), the page's name and the
    runs' paths as the report records them. The page's download of the JSON is the report's
    own (``report`` without its rows), whose numbers the re-run has matched. Its text is
    compared piece by piece, a piece that differs also as the re-run's with its files'
    paths spelled as the report's (``renamed``: a warning naming a log); then, with
    ``exact``, everything else as written (charts, scripts, downloads, whitespace); without,
    made with other versions, the text alone. Where the page drawn with the re-run's own JSON
    is the page, the report's JSON is named instead: written again after the page, with numbers
    the numbers' check reads as equal. None where they agree."""
    try:
        text = page.read_bytes().decode("utf-8")  # as written: no line endings translated
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{page}: cannot read the report's page ({exc})") from None
    clocks = _GENERATED.findall(text)  # the footer's is the last: a label may hold one too
    epoch = None
    if clocks:
        moment = datetime.strptime(clocks[-1], "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
        epoch = str(int(moment.timestamp()))
    sidecar = None if archived.sidecar is None else Path(archived.sidecar.path)
    fresh = build_report(
        _as_recorded(study, archived.runs), archived.run_id, page.name, sidecar, epoch
    )
    document = json.loads(report.read_text(encoding="utf-8"))
    document.pop("per_question", None)
    drawn, kept = (
        read_page(t) for t in (html_report.render(replace(fresh, document=document)), text)
    )
    for i, (ours, theirs) in enumerate(zip_longest(drawn.pieces, kept.pieces)):
        if ours != theirs and not (ours and renamed and _respelled(ours, renamed) == theirs):
            return (
                f"{page.name}, its text {i + 1}: page {theirs or '(absent)'!r}, re-run "
                f"{ours or '(absent)'!r}"
            )
    if exact and drawn.markup != kept.markup:
        rerun = {k: v for k, v in fresh.document.items() if k != "per_question"}
        if read_page(html_report.render(replace(fresh, document=rerun))).markup == kept.markup:
            # the page is the re-run's, its download the re-run's JSON: the report's JSON was
            # written again, with values the numbers' check reads as equal (19.0 for 19)
            return (
                f"{report.name}: its numbers match, but it is not the JSON the page {page.name} "
                "holds as its download (written again after the page: a whole number as a "
                "float, a change under 1e-9 of one)"
            )
        ours, theirs = next(
            (x or "", y or "") for x, y in zip_longest(drawn.markup, kept.markup) if x != y
        )
        at = len(os.path.commonprefix([ours, theirs]))
        return (
            f"{page.name}: its text matches; its markup, charts or downloads differ: page "
            f"{theirs[max(0, at - 20) : at + 40]!r}, re-run {ours[max(0, at - 20) : at + 40]!r}"
        )
    return None


def verify(report: Path, logs: list[Path], page: Path | None = None) -> Verification:
    """Re-run ``report`` on ``logs`` (default: the paths it records) and compare every number,
    then ``page`` (default: the report's name with .html, where there is one)."""
    if page is not None and not page.is_file():
        raise InputError(f"{page}: no such page (--page); give the path of the report's HTML")
    archived = read_report(report)
    runs, document = archived.runs, archived.document
    if logs and len(logs) != len(runs):
        raise InputError(
            f"{report}: the report compares {fmt_count(len(runs), 'log')}; pass {len(runs)} (the "
            "baseline first, in the report's order) or none to use the recorded paths"
        )
    for run in runs:
        if not logs and Path(run.path) == table_path(run.label):
            raise InputError(
                f"{report}: run {run.label} was a table in memory, which no file "
                "reproduces (its sha256 is of its Arrow stream); write the tables to Parquet "
                "and compare the files for a report that verify can check"
            )
    paths = logs or [_located(report, Path(run.path), "log", run.label) for run in runs]
    recorded = runs
    runs = tuple(_relocated(report, run) for run in runs)
    versions = other_versions(archived.tool)
    warnings = version_warnings(versions)
    for i, (run, path) in enumerate(zip(runs, paths, strict=True)):
        if not path.exists() and not glob.glob(str(path)):
            raise InputError(f"{path}: no such log (run {run.label} of {report}); pass its path")
        qrels = _qrels_difference(i, run)
        if qrels is not None:
            return Verification(0, qrels, warnings)
        if _read_sha256(path, run.read, run.sha256) != run.sha256:
            read_as = (
                f"{path} with its passage table {run.read.passages} (one sha256 covers both)"
                if run.read.passages is not None
                else path
            )
            return Verification(
                0, f"runs[{i}].sha256: {read_as} is not the log the report read", warnings
            )
    document.pop("per_question_file", None)
    if archived.sidecar is not None:
        rows, run_id = _sidecar(report, Path(archived.sidecar.path))
        if run_id is None:  # pandas' to_parquet, say, keeps the rows and drops the metadata
            warnings = (
                *warnings,
                f"{archived.sidecar.path} records no run id (a copy written again by another "
                "tool drops it): its rows are checked against the re-run's alone",
            )
        elif run_id != archived.run_id:
            return Verification(
                0,
                f"per_question_file: {archived.sidecar.path} is from another run (run id "
                f"{run_id}, the report's {archived.run_id})",
                warnings,
            )
        if len(rows) != archived.sidecar.rows:
            return Verification(
                0,
                f"per_question_file.rows: report {archived.sidecar.rows}, "
                f"{archived.sidecar.path} holds {len(rows)}",
                warnings,
            )
        if document.get("per_question", []) != []:
            return Verification(
                0, "per_question: the report holds rows and names a file of them too", warnings
            )
        document["per_question"] = rows
    page = page or report.with_suffix(".html")
    drawn = page.is_file()
    # a page to check is drawn as compare drew it: its SVGs in a child, the headline's while the
    # slices run (an SVG's ids count the gradients its engine drew before)
    with svg_process.started() if drawn else nullcontext():
        try:
            study = run_study(
                paths,
                archived.options,
                archived.requirements,
                reading=tuple(run.read for run in runs),
                labels=tuple(run.label for run in runs),
                accepted=html_report.preload if drawn else None,
                drafted=html_report.draw_ahead if drawn else None,
            )
        except InputError as exc:  # the logs are the report's (sha256): its options were changed
            raise InputError(
                f"{report}: its recorded options (params, the runs' read, the gate's rules) do not "
                f"run on the logs it read, so it was edited or made by another version ({exc})"
            ) from None
        stage("comparing the numbers")
        fresh = json.loads(
            json_report.dumps(json_report.build(study), json_report.per_question(study))
        )
        for name in _NOT_COMPARED:
            fresh.pop(name, None)
            document.pop(name, None)
        for mine, theirs in zip(fresh["runs"], document["runs"], strict=True):
            mine["path"] = theirs["path"]
            for key in ("qrels", "passages"):
                mine["read"][key] = theirs["read"][key]
        renamed = _renamed(paths, runs, recorded)
        found, checked = first_difference(fresh, document, renamed=renamed)
        made = archived.tool.version
        if found is not None and made != __version__ and ABSENT in (found.report, found.rerun):
            lacking = "the report" if found.report is ABSENT else f"ragreport {__version__}'s"
            raise InputError(
                f"{report}: made with ragreport {made}, whose JSON has other keys than "
                f"{__version__}'s ({found.path}: {lacking} lacks it); verify it with "
                f"ragreport {made}"
            )
        if found is not None:
            return Verification(checked, str(found), warnings)
        if not drawn:
            return Verification(checked, None, warnings)
        # the page names the versions it was drawn with; its charts and script may differ by them
        named = {f"{name} {now}": f"{name} {then}" for name, (then, now) in versions.items()}
        stage("drawing and comparing the page")
        difference = _page_difference(
            page, report, study, archived, {**renamed, **named}, exact=not versions
        )
        if versions:
            warnings += (
                f"{page} is compared by its text alone: its charts and scripts are drawn by "
                "the versions installed",
            )
        return Verification(checked, difference, warnings, page)
