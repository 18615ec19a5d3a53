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


def not_utf8(path: Path) -> str:
    """The error's line for a text input that is not UTF-8: where its first byte that is not
    UTF-8 is (line and byte in it, from 1), found by reading the file again; an error path only.
    A Parquet file is named as one: "save the file as UTF-8" would send its writer astray."""
    data = path.read_bytes()
    if data[:4] == b"PAR1":  # Parquet's magic bytes: a log saved under a text extension
        return (
            f"{path}: a Parquet file, not text; a Parquet run log is read by its .parquet "
            "extension or --format parquet"
        )
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        where = f"line {line}, byte {exc.start - line_start + 1} (0x{data[exc.start]:02x})"
        return f"{path}: {where} is not UTF-8 text; save the file as UTF-8"
    # the reader's decoder found a byte this one did not
    return f"{path}: not UTF-8 text; save it as UTF-8"
