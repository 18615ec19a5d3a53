"""The static SVGs drawn in a child process are the ones drawn in this one, and the child never
outlives the command."""

import json
import os
from dataclasses import replace

import pytest
import vl_convert

from reportgen.reporters.html import svg_process
from reportgen.reporters.html.charts import Chart
from reportgen.reporters.html.render import static_svgs

SPEC = {
    "data": {"values": [{"run": "A", "mean": 0.5}, {"run": "<B & 'C'>", "mean": 0.75}]},
    "mark": "bar",
    "encoding": {
        "x": {"field": "run", "type": "nominal"},
        "y": {"field": "mean", "type": "quantitative"},
    },
}


def test_the_child_draws_what_this_process_draws():
    with svg_process.started():
        drawn = svg_process.drawn([SPEC, {"mark": "point"}])
    assert drawn == [
        vl_convert.vegalite_to_svg(SPEC),
        vl_convert.vegalite_to_svg({"mark": "point"}),
    ]
    assert "&lt;B &amp; 'C'&gt;" in drawn[0]  # the run's name, escaped


def test_without_a_child_or_once_it_has_drawn_nothing_is_drawn_there():
    assert svg_process.drawn([SPEC]) is None
    with svg_process.started():
        assert svg_process.drawn([SPEC]) is not None
        assert svg_process.drawn([SPEC]) is None  # one batch per child


def test_a_failed_child_leaves_the_page_drawn_here():
    charts = [Chart("c1", "title", "reading", SPEC)]
    with svg_process.started():
        svg_process._child.process.kill()
        svgs = static_svgs(charts)
    assert svgs == {"c1": vl_convert.vegalite_to_svg(SPEC)}  # the spec has no ids to prefix


def test_the_child_ends_with_the_block_even_on_an_error():
    with pytest.raises(RuntimeError), svg_process.started():
        pid = svg_process._child.process.pid
        raise RuntimeError("a log refused")
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(pid, 0)


def test_a_chart_is_drawn_as_soon_as_it_is_made_and_returned_where_asked():
    point = {"mark": "point"}
    with svg_process.started():
        Chart("c1", "title", "reading", SPEC)
        assert svg_process._child.sent == [json.dumps(SPEC)]
        svgs = svg_process.drawn([point, SPEC, point])
    point_svg = vl_convert.vegalite_to_svg(point)
    assert svgs == [point_svg, vl_convert.vegalite_to_svg(SPEC), point_svg]


def test_a_chart_copied_under_another_id_is_drawn_once():
    """A study's page copies each candidate's charts under ids of its section."""
    with svg_process.started():
        chart = Chart("c1", "title", "reading", SPEC)
        replace(chart, id="candidate-1-c1")
        assert svg_process._child.sent == [json.dumps(SPEC)]
        assert svg_process.drawn([SPEC, SPEC]) == [vl_convert.vegalite_to_svg(SPEC)] * 2


def test_a_block_inside_a_block_keeps_the_outer_child():
    with svg_process.started():
        outer = svg_process._child
        with svg_process.started():
            assert svg_process._child is outer
        assert svg_process._child is outer and outer.process.poll() is None
    assert outer.process.poll() is not None
