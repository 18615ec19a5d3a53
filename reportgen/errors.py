"""The errors a user can cause, each shown as one line and exit code 2 by the CLI."""


class RagreportError(Exception):
    """Base class: the message is a complete sentence that says what to do."""

    exit_code = 2


class InputError(RagreportError):
    """A run log is missing, unreadable, or breaks the run-log contract."""


class OutputError(RagreportError):
    """The report cannot be written where it was asked to go."""
