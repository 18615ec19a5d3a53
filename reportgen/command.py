"""The ragreport process around its click command: Ctrl-C's exit code and a fast exit.

It imports nothing heavy before Ctrl-C has its handler: the command line's module reads the
input formats' readers (DuckDB, Arrow) when it is imported, half a second in which Ctrl-C
printed an import's traceback and killed the process by the signal.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from typing import NoReturn

INTERRUPTED = 130  # the exit code of a command Ctrl-C stopped
_interrupts: list[int] = []  # the signals received (_interrupt)


def _interrupt(signum: int, frame: object) -> None:
    """Ctrl-C, as Python's own handler, remembered: click reads KeyboardInterrupt as an abort
    of exit code 1, and a DuckDB query it stops raises RuntimeError instead."""
    _interrupts.append(signum)
    raise KeyboardInterrupt


def _command() -> int:
    """The command's exit code."""
    try:
        from .cli import cli

        cli.main(prog_name="ragreport")
    except SystemExit as stop:  # click ends every command with one ("Aborted!" on Ctrl-C)
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # while the command line's modules load, before click runs
        print("\nAborted!", file=sys.stderr)  # as click says it, past the ^C
    except Exception:
        if not _interrupts:  # else a query Ctrl-C stopped (DuckDB's RuntimeError)
            raise
        print("\nAborted!", file=sys.stderr)
    return INTERRUPTED


def run() -> NoReturn:
    """The ragreport command (its console script and ``python -m reportgen``). The process
    ends as soon as the command has, its output flushed and its exit handlers run (temporary
    folders, logging), without tearing the interpreter down: freeing a report's tables and its
    libraries one by one took about 0.25 s, 7% of a 10k-question comparison (bench/README.md)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when ignored
        signal.signal(signal.SIGINT, _interrupt)
    code = _command()
    if _interrupts:  # not 1, which a CI job reads as a failing rule: the shell's 128 + SIGINT
        code = INTERRUPTED
    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(code)


if __name__ == "__main__":  # python -m reportgen.command, as python -m reportgen
    run()
