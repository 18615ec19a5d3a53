"""Writing the report files: checked before any computing, all or nothing, never over an input.

Regular files are written to a temporary sibling and renamed into place once every output is
complete; a failure while renaming puts back what was there. A device or a pipe (``-o
/dev/stdout``) is written directly, and last: renaming over it would replace it with a regular
file, and what it was given cannot be taken back.
Each output records the id of the run that made it, so a pair mixed by a kill between two
renames is detectable.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from .errors import OutputError

_SIGNALS = (signal.SIGTERM, signal.SIGHUP)  # SIGINT already raises KeyboardInterrupt
NAME_MAX = 255  # bytes of a file name on Linux's file systems (ext4, xfs, tmpfs), macOS' too
HIDDEN_BYTES = 200  # of an output's name in its staged copy's and backup's (_hidden)
# Bytes of a report JSON that holds its per-question rows (candidates x paired questions), as
# json_report.json_bytes estimates them (the rows from 1,000 of them, within about 1%), so that
# it stays under 50 MB: about 90,000 rows of ten metrics (500 bytes each), fewer of more
# metrics, longer values or a larger rest (8 runs of 20 metrics and 3 slice columns: 15 MB).
# Past it the rows go to a Parquet file beside it (SIDECAR_SUFFIX). A count of rows let 100,000
# rows of 17 metrics make 99 MB; the rows' bytes alone, 8 such runs 51 MB.
MAX_JSON_BYTES = 45_000_000
SIDECAR_SUFFIX = ".per-question.parquet"  # report.json -> report.per-question.parquet


def new_run_id(source_date_epoch: str | None, *parts: str) -> str:
    """A fresh id per run; with SOURCE_DATE_EPOCH (reproducible builds) one derived from
    ``parts`` (input hashes, options) alone, so the same inputs give the same bytes and the JSON
    does not depend on the clock."""
    if source_date_epoch is None:
        return uuid.uuid4().hex
    return uuid.uuid5(uuid.NAMESPACE_URL, "\n".join(parts)).hex


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and a.samefile(b)
    except OSError:
        return False


def _among_shards(target: Path, source: Path) -> bool:
    """``target`` is a Parquet file a folder or glob log would read as one of its shards (every
    *.parquet under the folder, or the glob's matches)."""
    if target.suffix.lower() != ".parquet":
        return False
    if source.is_dir():
        return source.resolve() in target.resolve().parents
    return "*" in str(source) and fnmatch.fnmatch(
        str(target.resolve()), str(source.parent.resolve() / source.name)
    )


# a report's default JSON beside -o /dev/stdout (or /dev/fd/1) would be a file among these (not
# in /dev/shm, a folder of files)
DEVICE_FOLDERS = (Path("/dev"), Path("/dev/fd"), Path("/proc/self/fd"))


def onto_stdout(paths: list[Path]) -> bool:
    """Whether one of ``paths`` is the command's standard output as a pipe or a file (``-o
    /dev/stdout``): the command's own lines then go to stderr. On stdout they trailed the
    report into the pipe, and in a file the report, written through its own descriptor from
    the start, overwrote them, so a failing gate exited 1 without a line saying why."""
    try:
        out = os.fstat(1)
    except OSError:  # no standard output
        return False
    if stat.S_ISCHR(out.st_mode):  # a terminal or /dev/null: both are shown, or neither
        return False
    for path in paths:
        try:
            found = os.stat(path)
        except OSError:
            continue
        if (found.st_dev, found.st_ino) == (out.st_dev, out.st_ino):
            return True
    return False


def unnamed(text: str) -> str | None:
    """Why the text of an output path names no file: it is empty, or ends with a slash (which a
    Path drops: ``-o report/`` would write a file ``report``), or names a folder by its text
    alone (``.``, ``..``, ``/``: the Python API's ``to_html('.')`` raised a ValueError)."""
    if not text:
        return "an empty path; give the path of a file"
    if text.endswith(("/", os.sep)) or not Path(text).name:
        return f"{text} names a folder; give the path of a file inside it"
    return None


def _where(path: Path) -> tuple[Path, str]:
    return path.parent.resolve(), path.name


def _is_special(path: Path) -> bool:
    """An existing path that is not a regular file or a folder (a device, a pipe, a socket), or
    one that names a descriptor the command was given (inherited)."""
    if inherited(path) is not None:
        return True
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


_STANDARD = {Path("/dev/stdout"): 1, Path("/dev/stderr"): 2}


def inherited(path: Path) -> int | None:
    """The descriptor ``path`` names (/dev/stdout, /dev/fd/3, /proc/self/fd/1), open in this
    process, or None. Such an output is written to the descriptor as the shell opened it:
    reopened, or replaced when it is a file, `--markdown /dev/stdout >> summary.md` (GitHub's
    job summary) emptied the file it was to append to."""
    path = Path(os.path.normpath(path))
    number = _STANDARD.get(path)
    if number is None and path.parent in DEVICE_FOLDERS[1:] and path.name.isdigit():
        number = int(path.name)
    if number is None:
        return None
    try:
        os.fstat(number)
    except OSError:  # not open here: the path as any other
        return None
    return number


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_parquet_name(path: Path, option: str, writes: str) -> None:
    """Refuse an output of Parquet bytes under another suffix: ``compare`` and the readers tell a
    file's format by its suffix, so ``m.csv`` would later be read as CSV."""
    if path.suffix.lower() != ".parquet":
        raise OutputError(f"{option} {path}: {writes}; give a path ending in .parquet")


def check_outputs(
    outputs: list[Path],
    inputs: list[Path],
    defaults: dict[Path, str] | None = None,
    read: Mapping[Path, str] | None = None,
) -> list[Path]:
    """Refuse output paths that cannot be written, before anything is computed.

    ``inputs``: the run logs. ``defaults``: the paths the user did not give, each with the
    option that names another (the JSON beside the report: --json), so that an error says where
    the path came from. ``read``: the other files the command reads, each with its option
    (--gate, --map, --qrels, --passages), which an output would overwrite as well.
    Returns the paths to write: a symbolic link is followed, so the file it points to is
    replaced and the link kept.
    """
    targets: list[Path] = []
    for path in outputs:
        if len(os.fsencode(path.name)) > NAME_MAX:  # before any look at it raises ENAMETOOLONG
            raise OutputError(
                f"{path}: its name is {len(os.fsencode(path.name))} bytes, more than the "
                f"{NAME_MAX} a file name may have; choose a shorter name"
            )
        option = (defaults or {}).get(path)
        if option and path.absolute().parent in DEVICE_FOLDERS:
            raise OutputError(
                f"{path}: the default path of {option} (the report's path with .json) would be "
                f"a file among the devices, beside a report written to a device or a pipe; give "
                f"{option} PATH"
            )
        # A link to a device or pipe (/dev/stdout into a pipe resolves to no real path) is
        # written through; a link to a file is followed, so the file is replaced, the link kept.
        special = _is_special(path)
        target = Path(os.path.realpath(path)) if path.is_symlink() and not special else path
        shards = next((source for source in inputs if _among_shards(target, source)), None)
        if shards is not None:
            raise OutputError(
                f"{path}: lies among the shards of input {shards}, so a later run would read it "
                "as part of that log; choose another output path"
            )
        if any(_same_file(target, source) for source in inputs):
            raise OutputError(
                f"{path}: the default path of {option} (the report's path with .json) is one "
                f"of the input run logs; give another with {option}"
                if option
                else f"{path}: is one of the input run logs; choose another output path"
            )
        option = next((o for source, o in (read or {}).items() if _same_file(target, source)), "")
        if option:
            raise OutputError(f"{path}: is the file {option} reads; choose another output path")
        # A path takes one output, /dev/null several (-o /dev/null --json /dev/null: a gate's
        # Markdown alone): --markdown /dev/stdout --junit /dev/stdout wrote the XML alone, and
        # said it wrote both. Two device paths on one file (/dev/stdout and /dev/stderr into
        # one pipe) are written each in turn, so they may meet.
        shared = (
            _where(target) == _where(other) or (not special and _same_file(target, other))
            for other in targets
        )
        if any(shared) and not (special and os.path.realpath(target) == os.devnull):
            raise OutputError(
                f"{path}: two outputs share one path; give each output its own path"
                + (" (only /dev/null takes several)" if special else "")
            )
        if target.is_dir():
            raise OutputError(f"{path}: is a folder; give the path of a file inside it")
        if not special:
            _check_folder(path, target.parent)
        targets.append(target)
    return targets


def _check_folder(path: Path, folder: Path) -> None:
    if not folder.exists():
        raise OutputError(f"{path}: folder {folder} does not exist; create it first")
    if not folder.is_dir():
        raise OutputError(f"{path}: {folder} is not a folder; choose another output path")
    try:  # the only test of writability that holds for root and read-only file systems
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".ragreport-check."):
            pass
    except OSError as exc:
        raise OutputError(f"{path}: cannot write in {folder} ({exc.strerror})") from None


@dataclass
class _Stops:
    """What a stopping signal does while the outputs are written, and one held back while a
    file is made and recorded for removal (a stop between the two left the file behind)."""

    actions: dict[int, Callable[[int, FrameType | None], Any]] = field(default_factory=dict)
    holding: bool = False
    held: tuple[int, FrameType | None] | None = None

    def arrived(self, signum: int, frame: FrameType | None) -> None:
        if self.holding:
            self.held = self.held or (signum, frame)
        else:
            self.actions[signum](signum, frame)


_stops = _Stops()


def _exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def _signals_raise() -> Iterator[None]:
    """While writing, SIGTERM and SIGHUP raise SystemExit, so cleanup runs as for Ctrl-C
    (whose handler, Python's or the command's, is kept)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _stops.actions = {s: _exit for s in _SIGNALS}
    interrupt = signal.getsignal(signal.SIGINT)
    if callable(interrupt):  # not ignored
        _stops.actions[signal.SIGINT] = interrupt
    previous = {s: signal.signal(s, _stops.arrived) for s in _stops.actions}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextmanager
def _held() -> Iterator[None]:
    """A stopping signal held back until the block ends (a signal mask would not do: Python
    runs its handlers as soon as any thread, DuckDB's or Arrow's, has received one)."""
    _stops.holding = True
    try:
        yield
    finally:
        _stops.holding = False
    if _stops.held is not None:
        (signum, frame), _stops.held = _stops.held, None
        _stops.actions[signum](signum, frame)


def write_all(
    files: Mapping[Path, str | bytes], inputs: list[Path], read: Mapping[Path, str] | None = None
) -> None:
    """Write every file to a temporary sibling first, then rename each into place.

    An existing report is replaced only once every new file is complete; on any failure (or a
    signal) the temporaries are removed and what was at the output paths is put back.
    """
    with _signals_raise():
        targets = check_outputs(list(files), inputs, read=read)
        _commit(list(zip(files, targets, files.values(), strict=True)))


def _write_through(descriptor: int, data: bytes) -> None:
    """``data`` written whole to an inherited descriptor, at its offset (after what the
    command printed there, appending where the shell opened it so), which stays open."""
    sys.stdout.flush()
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def _write_special(target: Path, data: bytes) -> None:
    """``data`` written to a descriptor the command was given, or to a device or a pipe."""
    descriptor = inherited(target)
    if descriptor is not None:
        _write_through(descriptor, data)
        return
    with target.open("wb") as device:
        device.write(data)


def _encoded(content: str | bytes) -> bytes:
    return content.encode("utf-8") if isinstance(content, str) else content


def _commit(files: list[tuple[Path, Path, str | bytes]]) -> None:
    """Write each (path asked for, path written, content); errors name the path asked for.
    A device or a pipe is written last, once every file is in place: what it was given (a
    job's summary appended to) cannot be taken back, so a full disk that fails a file writes
    nothing to it."""
    staged: list[tuple[Path, Path]] = []  # (temporary, target) of the regular files
    backups: dict[Path, Path | None] = {}  # target -> hard link to its previous file, or None
    renamed: list[Path] = []
    streams = [(path, target, content) for path, target, content in files if _is_special(target)]
    current = files[0][0]  # the path asked for that is being written, for the message
    try:
        for path, target, content in files:
            if _is_special(target):
                continue
            current = path
            with _held():
                descriptor, name = tempfile.mkstemp(dir=target.parent, prefix=_hidden(target) + ".")
                staged.append((Path(name), target))
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(_encoded(content))
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(name, 0o666 & ~_umask())
        asked = {target: path for path, target, _ in files}
        for _, target in staged:
            current = asked[target]
            with _held():
                backups[target] = _backup(target)
        for temporary, target in staged:
            current = asked[target]
            os.replace(temporary, target)
            renamed.append(target)
        for path, target, content in streams:
            current = path
            _write_special(target, _encoded(content))
    except OSError as exc:
        _roll_back(renamed, backups)
        raise OutputError(f"{current}: cannot write ({exc.strerror})") from None
    except BaseException:
        _roll_back(renamed, backups)
        raise
    finally:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
        for backup in backups.values():
            if backup is not None:
                backup.unlink(missing_ok=True)


def _hidden(path: Path) -> str:
    """The start of the name of a file staged or kept beside ``path``: its name hidden, cut to
    HIDDEN_BYTES so that a name the file system takes (up to NAME_MAX) still leaves room for
    the suffixes."""
    return "." + os.fsencode(path.name)[:HIDDEN_BYTES].decode("utf-8", "ignore")


def _backup(path: Path) -> Path | None:
    """A hard link to the file now at ``path`` (None when there is none), to put it back."""
    if not path.exists():
        return None
    backup = path.with_name(f"{_hidden(path)}.{uuid.uuid4().hex[:8]}.previous")
    try:
        os.link(path, backup)
    except OSError:  # a file system without hard links
        shutil.copy2(path, backup)
    return backup


def _roll_back(renamed: list[Path], backups: dict[Path, Path | None]) -> None:
    for path in renamed:
        backup = backups.get(path)
        try:
            if backup is None:
                path.unlink(missing_ok=True)
            else:
                os.replace(backup, path)
        except OSError:
            pass
