"""The package's folders are stages, and no import runs from an earlier stage to a later one.

Order: shared leaves (errors, formatting, limits, resources, provenance, output, progress) <
inputs < analysis < diagnosis < comparison < reporters < the commands at the top (cli, pipeline,
verify, api, ...) and the package's ``__init__``, which hands out the Python API. Only
``__version__`` may be imported from the package by any module.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "reportgen"
LEAVES = {"errors", "formatting", "limits", "resources", "provenance", "output", "progress"}
STAGES = ("inputs", "analysis", "diagnosis", "comparison", "reporters")


def _layer(module: str) -> int:
    """0 for shared leaves, 1.. for the stage folders in order, and the top for the commands
    and the package itself (its ``compare`` is the Python API's)."""
    head = module.split(".")[1] if module.count(".") else ""
    if head in LEAVES:
        return 0
    if head in STAGES:
        return 1 + STAGES.index(head)
    return 1 + len(STAGES)


def _module_of(path: Path) -> str:
    parts = ("reportgen", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[str]:
    module = _module_of(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            target = ".".join([*base, node.module] if node.module else base)
            found.extend(
                [target] if node.module else [f"{target}.{alias.name}" for alias in node.names]
            )
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("reportgen"):
            found.append(node.module or "")
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_import_runs_upward(path):
    own = _layer(_module_of(path))
    upward = [t for t in _imports(path) if _layer(t) > own and t != "reportgen.__version__"]
    assert not upward, f"{_module_of(path)} (layer {own}) imports a later stage: {upward}"


def test_relative_imports_resolve_to_their_stage():
    """``from ..inputs.database import`` in analysis/metrics.py is read as inputs.database, so a
    reporter imported the same way would be caught as a later stage."""
    assert "reportgen.inputs.database" in _imports(PACKAGE / "analysis" / "metrics.py")
    assert _layer("reportgen.reporters.json_report") > _layer("reportgen.analysis.metrics")
    assert _layer("reportgen.inputs.load") < _layer("reportgen.analysis.metrics")
