"""Render the report context to one self-contained HTML page.

Charts are drawn twice from the same spec: as static SVG (made here by vl-convert, shown when
scripts are blocked and when printed) and live by the Vega bundle inlined once per page.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from contextlib import suppress
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
import vl_convert

from ...analysis.audit import EXPLORATORY_BELOW
from ...analysis.slices import SMALL_SLICE
from ...formatting import bidi_isolated, fmt_count, fmt_int, fmt_pct
from ...resources import resource_dir
from ..user_text import xml_safe
from . import svg_process
from .charts import Chart
from .context import ReportContext, all_charts
from .study_view import StudyContext


@cache
def vega_bundle() -> str:
    """vega, vega-lite and vega-embed as one script, to inline once in a <script> element.

    vl-convert builds it in about two seconds, always the same for one vl-convert version, so it
    is kept in the user's cache folder (``$XDG_CACHE_HOME/ragreport``, else ``~/.cache``).
    """
    cached = _cache_dir() / f"vega-bundle-{metadata.version('vl-convert-python')}.js"
    try:
        bundle = cached.read_text(encoding="utf-8")
    except OSError:
        bundle = vl_convert.javascript_bundle()  # type: ignore[call-arg]  # stub: snippet optional
        _store(cached, bundle)
    if re.search(r"</script|<!--", bundle, re.IGNORECASE):
        raise RuntimeError("this vl-convert's JavaScript bundle cannot be inlined in HTML")
    return bundle


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ragreport"


def _store(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all; a cache that cannot be written is only slower."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        pass


class _CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """The templates compiled to Python once (about 0.15 s each run otherwise), kept in the
    cache folder beside the Vega bundle; Jinja recompiles a template whose source changed. The
    key also says the code calls ``finalize``, which Jinja builds into the compiled code: a
    template compiled without it (by an earlier version) would print user text unfinalized."""

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        return super().get_cache_key(f"{name}|finalize", filename)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with suppress(OSError):  # a cache that cannot be read or written is only slower
            super().load_bytecode(bucket)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with suppress(OSError):
            super().dump_bytecode(bucket)


@cache
def environment() -> jinja2.Environment:
    compiled = _cache_dir() / "templates"
    with suppress(OSError):
        compiled.mkdir(parents=True, exist_ok=True)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(resource_dir("templates")),
        bytecode_cache=_CompiledTemplates(str(compiled)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        finalize=_bidi_contained,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "separators": (",", ":")}
    env.filters["fmt_count"] = fmt_count  # {{ n | fmt_count("question") }}: 1 question
    env.filters["fmt_int"] = fmt_int  # {{ n | fmt_int }}: 46,533, as fmt_count groups it
    env.filters["fmt_pct"] = fmt_pct  # {{ level | fmt_pct }}: 97.5%, as every other output
    env.filters["breakable"] = breakable  # {{ run | breakable }}: fare_rules_<wbr>b_<wbr>...
    env.globals["thresholds"] = {  # the rules' numbers, written once and quoted by the pages
        "small_slice": SMALL_SLICE,
        "exploratory_below": EXPLORATORY_BELOW,
    }
    return env


_JOINERS = re.compile(r"([_\-/.])(?=.)")  # where a name without spaces may wrap


def breakable(value: str) -> markupsafe.Markup:
    """A name without spaces (a run's file name) as the page prints text, with a line break
    allowed after each _ - / and . in it: in a narrow cell "fare_rules_b_reranker" wrapped
    as "fare_rules_b_rerank" and "er"."""
    escaped = str(markupsafe.escape(_bidi_contained(value)))  # entities hold none of them
    return markupsafe.Markup(_JOINERS.sub(r"\1<wbr>", escaped))


def _bidi_contained(value: Any) -> Any:
    """Each text a template prints isolated (bidi_isolated), so that a right-to-left override
    in a label shows no number after it backwards, and a count after a right-to-left slice
    value stays after it; a character HTML cannot carry shown as the charts show it (xml_safe:
    the browser dropped a NUL, so 'q1\\x00x' read 'q1x'). Markup (a macro's output, an SVG, a
    script) is left as it is: the texts inside it were isolated as they were printed, and
    characters around a table's row would be moved out of the table."""
    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return bidi_isolated(xml_safe(value))
    return value


def static_svgs(charts: list[Chart]) -> dict[str, str]:
    """Each chart's SVG markup by id, drawn by the child process started for this command
    (svg_process) or else here; Vega escapes every text it draws.

    Their element ids (gradients, clip paths) get the chart's id as a prefix: the live chart that
    replaces one draws the same ids, and a ``url(#gradient_0)`` that resolved to the hidden static
    copy would paint nothing (the legend's colour bar went missing that way)."""
    specs = [json.loads(json.dumps(c.spec)) for c in charts]
    svgs = svg_process.drawn(specs) or [vl_convert.vegalite_to_svg(spec) for spec in specs]
    return {c.id: _own_ids(svg, c.id) for c, svg in zip(charts, svgs, strict=True)}


def _own_ids(svg: str, chart_id: str) -> str:
    return _SVG_ID.sub(lambda m: f"{m.group(1)}{chart_id}-{m.group(2)}", svg)


_SVG_ID = re.compile(r'(\sid="|url\(#|\shref="#)([A-Za-z_][\w.-]*)')  # an id and its uses


def _script_hash(code: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode()).digest()).decode() + "'"


def render(context: ReportContext, run_id: str) -> str:
    return _page("report.html", all_charts(context), run_id, ctx=context)


def render_study(study: StudyContext, run_id: str) -> str:
    """The page of a study: the summary, then each candidate's sections as on a two-run page."""
    shown = study.charts + [c for s in study.sections for c in all_charts(s.context)]
    return _page("study.html", shown, run_id, study=study)


def _page(template: str, charts: list[Chart], run_id: str, **context: Any) -> str:
    """The page. Its Content-Security-Policy admits only the page's own scripts (by hash), no
    eval (Vega runs its expression interpreter) and no network, so even text that slipped
    through escaping could neither run nor call out. ``run_id`` is recorded in a <meta> element,
    as in the JSON written beside it."""
    env = environment()
    scripts = [vega_bundle(), env.get_template("_charts.js").render()]
    return env.get_template(template).render(
        **context,
        run_id=run_id,
        svgs=static_svgs(charts),
        scripts=scripts,
        script_hashes=" ".join(_script_hash(code) for code in scripts),
    )
