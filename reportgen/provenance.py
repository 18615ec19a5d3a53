"""What produced a report: tool and library versions, and the downloads an auditor needs."""

from __future__ import annotations

import base64
import gzip
from importlib import metadata

LIBRARIES = ("duckdb", "numpy", "scipy", "pandas", "pyarrow", "altair", "vl-convert-python")


def library_versions() -> dict[str, str]:
    return {name: metadata.version(name) for name in LIBRARIES}


def gzip_data_url(text: str) -> tuple[str, int]:
    """A data: URL of ``text`` gzipped (mtime 0, so the same text gives the same bytes)."""
    packed = gzip.compress(text.encode("utf-8"), compresslevel=3, mtime=0)
    return "data:application/gzip;base64," + base64.b64encode(packed).decode("ascii"), len(packed)
