"""Progress on stderr: which stage a long command is in, shown only on a terminal.

A run shorter than SHOW_AFTER seconds shows nothing; a longer one shows one line, redrawn in
place, that names the stage and the seconds so far, and is erased at the end, so that what the
command prints next (the verdict, an error) starts on a clean line. Nothing is written when
stderr is not a terminal (a CI log, a pipe, a file) or with --quiet.

The stages are named where the work happens (``stage("intervals")``); they are no-ops unless a
command shows progress (``shown``), so library use and tests print nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from .formatting import one_line

SHOW_AFTER = 2.0  # seconds: a run that ends sooner shows no progress at all
REDRAW_EVERY = 0.2  # seconds between redraws of the line
_ERASE = "\r\x1b[K"  # back to the start of the line and clear it


class Progress:
    """The stage a run is in, drawn on ``stream`` once SHOW_AFTER seconds have passed."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self._stream = stream
        self._clock = clock
        self._start = clock()
        self._stage = "starting"
        self._drawn = False
        self._lock = threading.Lock()

    def stage(self, name: str) -> None:
        with self._lock:
            self._stage = one_line(name)  # it names the runs by their labels

    def draw(self) -> None:
        """Redraw the line (from the drawing thread); nothing before SHOW_AFTER seconds."""
        with self._lock:
            elapsed = self._clock() - self._start
            if elapsed < SHOW_AFTER:
                return
            self._stream.write(f"{_ERASE}ragreport: {self._stage} ({elapsed:.0f} s)")
            self._stream.flush()
            self._drawn = True

    def erase(self) -> None:
        with self._lock:
            if self._drawn:
                self._stream.write(_ERASE)
                self._stream.flush()
                self._drawn = False


_current: Progress | None = None


def stage(name: str) -> None:
    """Name the stage the run enters now; shown only inside ``shown``."""
    if _current is not None:
        _current.stage(name)


@contextmanager
def shown(stream: TextIO, quiet: bool = False) -> Iterator[None]:
    """Show the stages named inside this block on ``stream`` when it is a terminal."""
    global _current
    if quiet or not stream.isatty():
        yield
        return
    progress = Progress(stream)
    done = threading.Event()

    def redraw() -> None:
        while not done.wait(REDRAW_EVERY):
            progress.draw()

    drawing = threading.Thread(target=redraw, name="ragreport-progress", daemon=True)
    _current = progress
    drawing.start()
    try:
        yield
    finally:
        done.set()
        drawing.join()
        progress.erase()
        _current = None
