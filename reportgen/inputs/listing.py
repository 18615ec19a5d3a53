"""The files of a folder of shards, as the readers of a log and of a metrics table list them."""

from __future__ import annotations

from pathlib import Path


def files_under(folder: Path, pattern: str) -> list[Path]:
    """The files under ``folder`` matching ``pattern``, in name order, but those whose name or
    folder starts with "." or "_", which Arrow and Spark skip too: macOS' "._part-0.parquet"
    beside a shard, or Spark's "_temporary" of a job still writing, was read as a shard."""
    found = (p for p in folder.rglob(pattern) if p.is_file())
    return sorted(p for p in found if not _hidden(p.relative_to(folder)))


def _hidden(relative: Path) -> bool:
    return any(part.startswith((".", "_")) for part in relative.parts)
