"""Files given compressed. Every reader takes its file as written, uncompressed; a gzipped one
would be called unreadable in each reader's own terms (not UTF-8, not Parquet), so it is named
for what it is before any reader opens it."""

from __future__ import annotations

from pathlib import Path

from ...errors import InputError

_GZIP = b"\x1f\x8b"  # the first two bytes of a gzip file


def refuse_gzip(path: Path) -> None:
    """InputError when the file at ``path`` is gzip-compressed (what pandas' ``to_csv(
    "run.csv.gz")`` writes), saying to decompress it."""
    with path.open("rb") as handle:
        if handle.read(2) == _GZIP:
            raise InputError(
                f"{path}: gzip-compressed; decompress it (gunzip {path.name}) and pass the file "
                "it gives"
            )
