"""The errors a user can cause, each shown as one line and exit code 2 by the CLI."""

from __future__ import annotations

from pathlib import Path


class RagreportError(Exception):
    """Base class: the message is a complete sentence that says what to do."""

    exit_code = 2


class InputError(RagreportError):
    """A run log is missing, unreadable, or breaks the run-log contract."""


class OutputError(RagreportError):
    """The report cannot be written where it was asked to go."""


def not_a_file(path: Path) -> str:
    """Why ``path``, which is not a regular file, cannot be read as one: for an error's line."""
    if path.is_dir():
        return "is a folder"
    return "not a regular file" if path.exists() else "no such file"
