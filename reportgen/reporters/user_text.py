"""User text (ids, labels, slice values, file names) made safe to place in an output as it is.

XML 1.0 forbids most control characters, so a label or slice value holding one (a stray \\x0b)
would make the JUnit file unreadable, or abort vl-convert while it draws a chart; vl-convert
also takes seconds for each long text it draws. Right-to-left text and bidi controls are
isolated by formatting.bidi_isolated; a line the command prints keeps its user text on that
line (formatting.one_line).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pandas as pd

from ..formatting import bidi_isolated

_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# and the line and paragraph separators, line ends to the expressions vl-convert draws with
_NOT_DRAWN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\u2028\u2029\ud800-\udfff\ufffe\uffff]")
SHOWN = "\ufffd"  # what stands for a forbidden character: visible, so nothing vanishes silently
MAX_DRAWN = 200  # characters of one text in a chart: vl-convert takes ~3 s per 10,000
MAX_SHOWN = 2_000  # characters of one question, answer or reference the page shows


def xml_safe(value: Any) -> Any:
    """``value`` with SHOWN for each character XML forbids in its strings, in lists and dicts
    (keys included) at any depth; anything else as it is."""
    return _each_string(value, lambda text: _NOT_XML.sub(SHOWN, text))


def drawable(value: Any) -> Any:
    """``value`` (a chart spec) as xml_safe, U+2028 and U+2029 too (a slice value holding one
    stopped the report with a traceback, exit 1), each string over MAX_DRAWN characters cut in
    its middle (cut_middle); and each isolated (bidi_isolated), as the page's texts are."""
    return _each_string(value, _drawn)


def shown_text(value: Any) -> str:
    """A question's, answer's or reference's text as the page shows it: "" when NULL (which
    pandas may give as NaN), and past MAX_SHOWN characters cut at its end, saying how many
    more the log holds: 300 answers of 100,000 characters made a page of 31 MB at 20,000
    questions."""
    text = "" if value is None or pd.isna(value) else str(value)
    if len(text) <= MAX_SHOWN:
        return text
    return f"{text[:MAX_SHOWN]}\u2026 ({len(text) - MAX_SHOWN:,} more characters)"


def cut_end(text: str, limit: int) -> str:
    """``text`` at most ``limit`` characters long, cut at its end: for prose, whose start says
    what it is about."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def cut_middle(text: str, limit: int) -> str:
    """``text`` at most ``limit`` characters long, cut in its middle: its start and its end
    stay, so long values that differ at one end only (paths, "... (n=20)") stay told apart."""
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return text[:half] + "\u2026" + text[len(text) - half :]


def _drawn(text: str) -> str:
    """One string of a chart spec, as drawable makes it: one function, since a spec of 100,000
    questions holds hundreds of thousands of strings."""
    text = _NOT_DRAWN.sub(SHOWN, text)
    if len(text) > MAX_DRAWN:  # checked here: most strings are short, and a call costs
        text = cut_middle(text, MAX_DRAWN)
    return text if text.isascii() else bidi_isolated(text)


def _each_string(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {_each_string(k, change): _each_string(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_each_string(v, change) for v in value]
    return value
