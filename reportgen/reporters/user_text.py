"""User text (ids, labels, slice values, file names) made safe to place in an output as it is.

XML 1.0 forbids most control characters, so a label or slice value holding one (a stray \\x0b)
would make the JUnit file unreadable, or abort vl-convert while it draws a chart; vl-convert
also takes seconds for each long text it draws. A bidi control left open (U+202E, right-to-left
override) reverses what follows it up to the end of the line, so a label holding one would show
the numbers after it backwards ("+0.025" as "520.0+").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
SHOWN = "\ufffd"  # what stands for a forbidden character: visible, so nothing vanishes silently
MAX_DRAWN = 200  # characters of one text in a chart: vl-convert takes ~3 s per 10,000

_EMBEDDINGS, _POP_EMBEDDING = "\u202a\u202b\u202d\u202e", "\u202c"
_ISOLATES, _POP_ISOLATE = "\u2066\u2067\u2068", "\u2069"
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def xml_safe(value: Any) -> Any:
    """``value`` with SHOWN for each character XML forbids in its strings, in lists and dicts
    (keys included) at any depth; anything else as it is."""
    return _each_string(value, lambda text: _NOT_XML.sub(SHOWN, text))


def drawable(value: Any) -> Any:
    """``value`` (a chart spec) as xml_safe, each string over MAX_DRAWN characters cut in its
    middle: its start and its end ("... (n=20)") stay, so long slice values stay told apart."""
    return _each_string(value, lambda text: _middle_cut(_NOT_XML.sub(SHOWN, text)))


def _middle_cut(text: str) -> str:
    if len(text) <= MAX_DRAWN:
        return text
    half = (MAX_DRAWN - 1) // 2
    return text[:half] + "\u2026" + text[-half:]


def _each_string(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {_each_string(k, change): _each_string(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_each_string(v, change) for v in value]
    return value


def bidi_closed(text: str) -> str:
    """``text`` with the bidi controls it leaves open closed at its end, innermost first
    (invisible), so they reorder nothing around it; its characters are kept as written."""
    if not _BIDI.search(text):
        return text
    open_: list[str] = []  # the closer of each control still open, outermost first
    for char in _BIDI.findall(text):
        if char in _EMBEDDINGS or char in _ISOLATES:
            open_.append(_POP_EMBEDDING if char in _EMBEDDINGS else _POP_ISOLATE)
        elif char == _POP_ISOLATE and _POP_ISOLATE in open_:  # closes the embeddings within
            del open_[len(open_) - 1 - open_[::-1].index(_POP_ISOLATE) :]
        elif char == _POP_EMBEDDING and open_ and open_[-1] == _POP_EMBEDDING:
            open_.pop()
    return text + "".join(reversed(open_))
