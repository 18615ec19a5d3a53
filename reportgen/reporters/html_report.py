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
    from .html.charts import Chart

_PAGE = "reportgen.reporters.html.render"  # imports every library of the page
_loading: threading.Thread | None = None
# draw_ahead's charts by their comparison's tables (a weak reference: a run that fails before
# its page holds on to no table), until the page takes them
_ahead: list[tuple[weakref.ref[MetricTables], list[Chart]]] = []


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
    """Build the two-run page's charts of the headline now, before the slices' intervals, so
    that the SVG child draws them while those run (``compare_runs``' ``drafted``): at 10k
    questions, about half a second the page otherwise waited for."""
    _imported()
    from .html.charts import RUN_COLOURS
    from .html.context import headline_charts

    _ahead.append((weakref.ref(part.tables), headline_charts(part, RUN_COLOURS)))


def _drawn_ahead(pair: Comparison) -> list[Chart] | None:
    """The charts draw_ahead built for ``pair``, if any (none on a study's page, which colours
    each run its own way); every one kept is let go."""
    found = [charts for tables, charts in _ahead if tables() is pair.tables]
    _ahead.clear()
    return found[0] if found else None


def _imported() -> None:
    if _loading is not None:  # the page's modules are not imported by two threads at once
        _loading.join()


def render(report: Report) -> str:
    _imported()
    from .html.charts import RUN_COLOURS
    from .html.context import build_context, download_links
    from .html.render import render as render_pair
    from .html.render import render_study
    from .html.study_view import build_study_context, pair_colours

    study = report.study
    pair_page = study.family is None and study.holdout is None
    pairs, colours = (
        (study.pairs[:1], [RUN_COLOURS]) if pair_page else (study.pairs, pair_colours(study))
    )
    ahead = _drawn_ahead(pairs[0])
    # the downloads on a thread (Arrow's CSV writer and zlib release the GIL) while the charts
    # are built, each starting to draw in the SVG child as it is
    with ThreadPoolExecutor(max_workers=1) as pool:
        links = pool.submit(lambda: download_links(downloads(report)))
        contexts = [
            build_context(pair, report.source_date_epoch, c, ahead)
            for pair, c in zip(pairs, colours, strict=True)
        ]
        contexts[0] = replace(contexts[0], downloads=links.result())
    if pair_page:
        return render_pair(contexts[0], report.run_id)
    return render_study(build_study_context(study, contexts), report.run_id)


def downloads(report: Report) -> dict[str, str]:
    """The files the page offers (name: text): the rows, unless they are in a Parquet file of
    their own, and the JSON without them."""
    files = {"report-summary.json.gz": json.dumps(report.document, allow_nan=False)}
    if report.sidecar is None:
        files = {"per-question.csv.gz": json_report.to_csv(report.per_question), **files}
    return files
