"""Files given compressed. Every reader takes its file as written, uncompressed; a gzipped one
would be called unreadable in each reader's own terms (not UTF-8, not Parquet), so it is named
for what it is before any reader opens it."""

from __future__ import annotations

from pathlib import Path
from shlex import quote

from ...errors import InputError

_GZIP = b"\x1f\x8b"  # the first two bytes of a gzip file


def refuse_gzip(path: Path) -> None:
    """InputError when the file at ``path`` is gzip-compressed (what pandas' ``to_csv(
    "run.csv.gz")`` writes), saying how to decompress it: ``gunzip`` alone refuses a name
    without .gz ("unknown suffix -- ignored"), so the command writes a file of its own."""
    with path.open("rb") as handle:
        if handle.read(2) == _GZIP:
            name = path.name
            plain = name[:-3] if name.endswith(".gz") else f"{path.stem}.unzipped{path.suffix}"
            # the path as given, so that the command works wherever the command was run
            raise InputError(
                f"{path}: gzip-compressed; decompress it (gunzip -c {quote(str(path))} > "
                f"{quote(str(path.with_name(plain)))}) and pass the file that writes"
            )
