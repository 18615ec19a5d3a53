"""DuckDB connections with the project's memory budget and spill folder.

Every reader and the run database open DuckDB here, so a large TREC run or passage table gets
the same budget as the comparison, and spills where the comparison spills instead of failing
at DuckDB's own default of 80% of the machine.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ..errors import InputError

# DuckDB spills what does not fit in memory here, not into ``.tmp`` of the working folder,
# which a run that is killed would leave behind in the user's project.
_SPILL = Path(tempfile.gettempdir()) / f"ragreport-duckdb-{os.getpid()}"  # one per process
MEMORY_ENV = "RAGREPORT_MEMORY_LIMIT"  # DuckDB's memory budget, in DuckDB's words ("4GB")
# DuckDB's own default budget is 80% of the machine, which leaves too little for the
# per-question frames beside it: a 10M-question comparison was killed at the machine's limit.
MEMORY_SHARE = 0.5


def memory_limit() -> str:
    """DuckDB's memory budget: $RAGREPORT_MEMORY_LIMIT, else MEMORY_SHARE of the memory of the
    machine or of its container (cgroup v2), whichever is smaller."""
    if os.environ.get(MEMORY_ENV):
        return os.environ[MEMORY_ENV]
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    cgroup = Path("/sys/fs/cgroup/memory.max")
    limit = cgroup.read_text().strip() if cgroup.is_file() else ""
    if limit.isdigit():  # "max" when the container has no limit
        total = min(total, int(limit))
    return f"{int(total * MEMORY_SHARE) // 2**20}MiB"


# DuckDB 2.0.1 folds isnan(x) to false, and x > 1 too, from a Parquet column's min and max,
# which leave NaN out: a NaN latency_ms passed every check. Without this optimizer each value
# is looked at.
_DISABLED = "statistics_propagation"


def connect() -> duckdb.DuckDBPyConnection:
    limit = memory_limit()
    config: dict[str, str | bool | int | float | list[str]] = {
        "temp_directory": str(_SPILL),
        "memory_limit": limit,
        "disabled_optimizers": _DISABLED,
    }
    try:
        return duckdb.connect(config=config)
    except duckdb.Error as exc:
        if not os.environ.get(MEMORY_ENV):  # not the user's budget: DuckDB's own error
            raise
        reason = str(exc).splitlines()[0]
        raise InputError(
            f"{MEMORY_ENV}={limit}: not a memory size ({reason}); give one such as 4GB or 512MiB"
        ) from None


def return_freed_memory(con: duckdb.DuckDBPyConnection) -> None:
    """Have DuckDB's allocator give the memory a query frees back to the system. By default it
    keeps it for reuse, flushing only after a task that allocated over 128 MiB: flushing from
    16 MiB, and in a background thread, took 0.14 GiB off the peak of a 1M-question comparison
    (bench/README.md). Set for large logs only: at 100k questions it saved nothing and the runs
    took about 6% longer. The settings are DuckDB's, for the whole process."""
    con.execute("SET allocator_flush_threshold = '16MiB'")
    con.execute("SET allocator_background_threads = true")


def over_budget(source: str) -> InputError:
    """The error of a query that outgrew the budget even with spilling, naming what it read."""
    return InputError(
        f"{source}: reading needs more memory than DuckDB's budget of "
        f"{memory_limit()}; set {MEMORY_ENV} higher (such as 8GB), or free memory"
    )


@contextmanager
def connection(source: str | Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection for one reader's queries over ``source``, closed at the end; running out
    of the budget is that file's one-line error."""
    con = connect()
    try:
        yield con
    except duckdb.OutOfMemoryException:
        raise over_budget(str(source)) from None
    finally:
        con.close()
