"""The static SVGs, drawn by vl-convert in a child process started before the statistics.

vl-convert holds the GIL while it draws, and its JavaScript engine takes about half a second to
start on its first chart; in this process both would add to the run. A child started with the
command has its engine up by the time the charts are built, and draws each chart as soon as it
is built (``ahead``), on another core, while the page builds the next. The child reads one
Vega-Lite spec a line (JSON) on stdin and writes each one's SVG a line on stdout; should it fail,
the page draws them here, with the same library and the same specs.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

_WARM_UP = {"mark": "point"}  # the smallest spec: drawing it starts the engine
_ROOT = Path(__file__).resolve().parents[3]  # the folder reportgen is imported from


class _Child:
    """The running child, with a thread writing the specs sent to it (a spec can outgrow the
    pipe while the child draws the one before) and one reading its SVGs."""

    def __init__(self) -> None:
        path = os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": path},
        )
        self.sent: list[str] = []  # each spec's JSON, in the order sent
        self.svgs: list[str] = []  # each one's SVG, as the child answers
        self._lines: queue.Queue[str | None] = queue.Queue()  # None: no more specs
        self._threads = [
            threading.Thread(target=self._write, args=(self.process.stdin,)),
            threading.Thread(target=self._read, args=(self.process.stdout,)),
        ]
        for thread in self._threads:
            thread.start()

    def send(self, text: str) -> None:
        self.sent.append(text)
        self._lines.put(text)

    def finish(self) -> list[str] | None:
        """Every SVG sent for, in order; None when the child failed."""
        self._lines.put(None)
        for thread in self._threads:
            thread.join()
        ok = self.process.wait() == 0 and len(self.svgs) == len(self.sent)
        return self.svgs if ok else None

    def end(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.finish()

    def _write(self, stdin: IO[bytes]) -> None:
        with suppress(OSError), stdin:  # a child that died shows as SVGs missing
            while (line := self._lines.get()) is not None:
                stdin.write(line.encode() + b"\n")
                stdin.flush()

    def _read(self, stdout: IO[bytes]) -> None:
        with suppress(OSError, ValueError), stdout:
            self.svgs.extend(json.loads(line) for line in stdout)


_child: _Child | None = None


@contextmanager
def started() -> Iterator[None]:
    """Start the child for this block (unless an enclosing block has), and end it with the
    block whatever happens."""
    global _child
    if _child is not None:
        yield
        return
    try:
        _child = _Child()
    except OSError:  # no child: the page draws its SVGs itself
        _child = None
    try:
        yield
    finally:
        child, _child = _child, None
        if child is not None:
            child.end()


def ahead(spec: dict[str, Any]) -> None:
    """Have the child draw ``spec`` now, for a later ``drawn``, unless it has been sent already
    (a study's page copies each candidate's charts under ids of its section); nothing without a
    child."""
    if _child is not None and (text := json.dumps(spec)) not in _child.sent:
        _child.send(text)


def drawn(specs: list[dict[str, Any]]) -> list[str] | None:
    """The SVG of each spec, drawn by the child started for this block (those sent ahead are
    not drawn again); None when there is no child, it has drawn already or it failed."""
    global _child
    child, _child = _child, None
    if child is None:
        return None
    texts = [json.dumps(spec) for spec in specs]
    sent = set(child.sent)
    for text in dict.fromkeys(texts):
        if text not in sent:
            child.send(text)
    svgs = child.finish()
    if svgs is None:
        return None
    by_spec = dict(zip(child.sent, svgs, strict=True))
    return [by_spec[text] for text in texts]


def main() -> None:
    import vl_convert

    vl_convert.vegalite_to_svg(_WARM_UP)
    for line in sys.stdin:
        sys.stdout.write(json.dumps(vl_convert.vegalite_to_svg(json.loads(line))) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
