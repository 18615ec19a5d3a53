"""Writing the report files: all or nothing, never over an input."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import OutputError


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and a.samefile(b)
    except OSError:
        return False


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_all(files: dict[Path, str | bytes], inputs: list[Path]) -> None:
    """Write every file to a temporary sibling first, then rename each into place.

    An existing report is replaced only once every new file is complete; on any failure the
    temporaries are removed and what was at the output paths is left as it was.
    """
    for path in files:
        if any(_same_file(path, source) for source in inputs):
            raise OutputError(f"{path}: is one of the input run logs; choose another output path")
        if not path.parent.is_dir():
            raise OutputError(f"{path}: folder {path.parent} does not exist; create it first")
    staged: list[tuple[Path, Path]] = []
    try:
        for path, text in files.items():
            descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
            staged.append((Path(name), path))
            if isinstance(text, bytes):
                with os.fdopen(descriptor, "wb") as binary:
                    binary.write(text)
            else:
                with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                    handle.write(text)
            os.chmod(name, 0o666 & ~_umask())
        for temporary, path in staged:
            os.replace(temporary, path)
    except OSError as exc:
        raise OutputError(f"{exc.filename or 'output'}: cannot write ({exc.strerror})") from None
    finally:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
