"""The static SVGs, drawn by vl-convert in a child process started before the statistics.

vl-convert holds the GIL while it draws, and its JavaScript engine takes about half a second to
start on its first chart; in this process both would add to the run. A child started with the
command has its engine up by the time the charts are built, and draws them on another core.
The child reads a JSON list of Vega-Lite specs on stdin and writes the JSON list of their SVGs
on stdout; should it fail, the page draws them here, with the same library and the same specs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_WARM_UP = {"mark": "point"}  # the smallest spec: drawing it starts the engine
_ROOT = Path(__file__).resolve().parents[3]  # the folder reportgen is imported from

_child: subprocess.Popen[bytes] | None = None


@contextmanager
def started() -> Iterator[None]:
    """Start the child for this block, and end it with the block whatever happens."""
    global _child
    path = os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))
    try:
        _child = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": path},
        )
    except OSError:  # no child: the page draws its SVGs itself
        _child = None
    try:
        yield
    finally:
        child, _child = _child, None
        if child is not None and child.poll() is None:
            child.kill()
            child.wait()


def drawn(specs: list[dict[str, Any]]) -> list[str] | None:
    """The SVG of each spec, drawn by the child started for this block; None when there is no
    child, it has drawn already or it failed."""
    if _child is None or _child.returncode is not None:
        return None
    try:
        out, _ = _child.communicate(json.dumps(specs).encode())
        svgs = json.loads(out) if _child.returncode == 0 else None
    except (OSError, ValueError):
        return None
    return svgs if isinstance(svgs, list) and len(svgs) == len(specs) else None


def main() -> None:
    import vl_convert

    vl_convert.vegalite_to_svg(_WARM_UP)
    specs = json.load(sys.stdin)
    json.dump([vl_convert.vegalite_to_svg(spec) for spec in specs], sys.stdout)


if __name__ == "__main__":
    main()
