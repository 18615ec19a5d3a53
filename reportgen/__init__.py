"""ragreport: paired, evidence-grade comparison reports for runs of a RAG assistant.

``reportgen.compare(...)`` (reportgen/api.py) compares runs from Python. It is imported on first
use, so that ``import reportgen`` (and with it the command line's start) stays light.
"""

from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name in ("compare", "Result"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'reportgen' has no attribute {name!r}")
