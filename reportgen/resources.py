"""Where the packaged templates and SQL files live.

A wheel carries them inside the package (``reportgen/templates``, ``reportgen/queries``); a source
checkout keeps them at the top level beside the package.
"""

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def resource_dir(name: str) -> Path:
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"ragreport is installed without its {name}/ folder; reinstall it")


@cache
def query_text(name: str) -> str:
    """The text of ``queries/<name>.sql``."""
    return (resource_dir("queries") / f"{name}.sql").read_text(encoding="utf-8")
