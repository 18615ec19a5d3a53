"""ragreport: paired, evidence-grade comparison reports for runs of a RAG assistant.

``reportgen.compare(...)`` (reportgen/api.py) compares runs from Python. It is imported on first
use, so that ``import reportgen`` (and with it the command line's start) stays light.
"""

from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name in ("compare", "Result"):
        from .epoch import source_date_epoch

        source_date_epoch()  # before the API imports scipy, which parses it too
        from . import api

        return getattr(api, name)
    if name in ("InputError", "OutputError", "RagreportError"):  # what the API raises
        from . import errors

        return getattr(errors, name)
    raise AttributeError(f"module 'reportgen' has no attribute {name!r}")
