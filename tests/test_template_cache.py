"""The page's templates are compiled once into the cache folder; a cache folder that cannot be
written costs only time."""

import pytest

from reportgen.reporters.html import render


@pytest.fixture
def fresh_environment(monkeypatch, tmp_path):
    """``render.environment`` built again under a cache folder of this test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    render.environment.cache_clear()
    yield tmp_path / "cache" / "ragreport" / "templates"
    render.environment.cache_clear()


def test_a_template_compiled_once_renders_the_same(fresh_environment):
    first = render.environment().get_template("_charts.js").render()
    assert len(list(fresh_environment.iterdir())) == 1  # _charts.js, compiled and kept
    render.environment.cache_clear()  # as a new process would
    assert render.environment().get_template("_charts.js").render() == first


def test_a_cache_folder_that_cannot_be_written_only_costs_time(fresh_environment):
    fresh_environment.parent.parent.mkdir()
    fresh_environment.parent.write_text("a file where the cache folder goes")
    assert "vegaEmbed" in render.environment().get_template("_charts.js").render()
    assert fresh_environment.parent.is_file()
