"""The HTML reporter: the two-run page, or the page of a study (one baseline, several
candidates), with the per-question table and the JSON offered for download."""

from __future__ import annotations

import importlib
import json
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import replace
from typing import TYPE_CHECKING

from . import json_report
from .report import Report

if TYPE_CHECKING:
    from ..analysis.metrics import MetricTables
    from ..comparison.compare import Comparison, Headline
    from .html.charts import Chart, RunColours

_PAGE = "reportgen.reporters.html.render"  # imports every library of the page
_loading: threading.Thread | None = None
# draw_ahead's charts, each with its colours and a weak reference to its comparison's tables
# (a run that fails before its page holds on to none), until the page takes them
_ahead: list[tuple[weakref.ref[MetricTables], RunColours, list[Chart]]] = []


def preload() -> None:
    """Import the page's libraries (Altair, vl-convert, Jinja: about 0.4 s) on a thread, once.

    Called when the logs have passed their checks, so that a refused log is reported without
    them, and a good one has them load while SQL and numpy run without the GIL."""
    global _loading
    if _loading is None:
        _loading = threading.Thread(target=_import_page)
        _loading.start()


def _import_page() -> None:
    with suppress(ImportError):  # reported by render, which imports them again
        importlib.import_module(_PAGE)


def draw_ahead(part: Headline) -> None:
    """Build a comparison's charts of the headline now, before its slices' intervals, so that
    the SVG child draws them while those run (``compare_runs``' ``drafted``): at 10k questions,
    about half a second the page otherwise waited for."""
    _imported()
    from .html.context import headline_charts

    colours = _colours(*part.place)
    _ahead.append((weakref.ref(part.tables), colours, headline_charts(part, colours)))


def _colours(candidate: int, candidates: int) -> RunColours:
    """The colours of a candidate's charts: the two-run page's, or on a study's page the runs'
    own."""
    from .html.charts import RUN_COLOURS
    from .html.study_view import candidate_colours

    return RUN_COLOURS if candidates == 1 else candidate_colours(candidate)


def _drawn_ahead(
    drawn: list[tuple[weakref.ref[MetricTables], RunColours, list[Chart]]],
    pair: Comparison,
    colours: RunColours,
) -> list[Chart] | None:
    """The charts draw_ahead built for ``pair`` in ``colours``, if it did."""
    found = [c for tables, kept, c in drawn if tables() is pair.tables and kept == colours]
    return found[0] if found else None


def _imported() -> None:
    if _loading is not None:  # the page's modules are not imported by two threads at once
        _loading.join()


def render(report: Report) -> str:
    _imported()
    from .html.context import build_context, download_links
    from .html.render import render as render_pair
    from .html.render import render_study
    from .html.study_view import build_study_context

    study = report.study
    pairs = study.pairs
    colours = [_colours(i, len(pairs)) for i in range(1, len(pairs) + 1)]
    drawn = _ahead.copy()
    _ahead.clear()
    # the downloads on a thread (Arrow's CSV writer and zlib release the GIL) while the charts
    # are built, each starting to draw in the SVG child as it is
    with ThreadPoolExecutor(max_workers=1) as pool:
        links = pool.submit(lambda: download_links(downloads(report)))
        contexts = [
            build_context(pair, report.source_date_epoch, c, _drawn_ahead(drawn, pair, c))
            for pair, c in zip(pairs, colours, strict=True)
        ]
        contexts[0] = replace(contexts[0], downloads=links.result())
    if report.sidecar is not None:  # the JSON holds no rows then
        rows_in = f"the per-question file {report.sidecar}"
        contexts = [replace(c, rows_in=rows_in) for c in contexts]
    if len(pairs) == 1:  # the two-run page, with the held-out check under --holdout: a study's
        # page asked which of one candidate beats the baseline, over a family of none
        holdout = study.holdout.sentence if study.holdout else None
        return render_pair(replace(contexts[0], holdout=holdout), report.run_id)
    return render_study(build_study_context(study, contexts), report.run_id)


def downloads(report: Report) -> dict[str, str]:
    """The files the page offers (name: text): the rows, unless they are in a Parquet file of
    their own, and the JSON without them."""
    files = {"report-summary.json.gz": json.dumps(report.document, allow_nan=False)}
    if report.sidecar is None:
        files = {"per-question.csv.gz": json_report.to_csv(report.per_question), **files}
    return files
