"""Number formatting for people: small helpers, tested, used by the templates and the verdict."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence


def fmt_count(n: int, noun: str, plural: str | None = None) -> str:
    """A count and its noun, singular for one: 1 question, 1,240 questions, 2 losses (with
    ``plural`` where the noun takes more than an s)."""
    return f"{fmt_int(n)} {agreeing(n, noun, plural or noun + 's')}"


def fmt_int(n: int) -> str:
    """A count alone, grouped as fmt_count groups it: 46,533, so that every count of a page reads
    one way."""
    return f"{n:,}"


def agreeing(n: int, one: str, many: str) -> str:
    """The word that agrees with a count: agreeing(1, "is", "are") == "is"; a verb after a
    count in words reads as the count's noun does."""
    return one if n == 1 else many


EMPTY = "(empty)"  # an empty-string value (a slice) as text: printed as is it shows nothing


# C0, DEL, C1, the line and paragraph separators, and lone surrogates (bytes that are not UTF-8)
_BREAKING = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def one_line(text: str) -> str:
    """``text`` with each control character written as its escape (``\\n``, ``\\x1b``), for a
    line the command prints: a slice value or label holding a newline would start a line of its
    own, which a CI job reads as a workflow command (``::error``) or as a rule's result (a
    forged ``pass``); a lone surrogate would not print at all."""
    return _BREAKING.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), text)


def shown_value(value: str) -> str:
    """A logged value as a page, summary or verdict prints it: EMPTY for the empty string."""
    return value or EMPTY


def row_named(row: int, question_id: object, place: str | None = None) -> str:
    """A row of a log (1-based) as messages name it, or as ``place`` names where it is in the
    file ("result 4" of a promptfoo file): with its question_id where it has one."""
    where = place or f"row {row}"
    return where + ("" if question_id is None else f" (question_id {question_id!r})")


def fmt_listed(items: list[str], limit: int) -> str:
    """The first ``limit`` items, comma-separated, and how many more there are: a note names a
    few examples and counts the rest, so thousands of ids do not bury it."""
    more = len(items) - limit
    return listed(items[:limit]) + (f" and {more} more" if more > 0 else "")


def and_joined(items: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def listed(items: Iterable[str]) -> str:
    """Logged values (ids, slice values) comma-separated, each as a sentence names it
    (named_value): a right-to-left id isolated only with the whole list would reorder the ids
    after it."""
    return ", ".join(named_value(item) for item in items)


def named_value(value: str) -> str:
    """A logged value inside a sentence: shown (shown_value) and isolated (bidi_isolated) on
    its own, so that an override in it cannot reverse the numbers the sentence goes on to."""
    return bidi_isolated(shown_value(value))


def _missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def fmt_num(value: float | None, digits: int = 3) -> str:
    """A score such as 0.731; never shows 0 or 1 for a value that is neither."""
    if _missing(value):
        return "n/a"
    assert value is not None
    text = f"{value:.{digits}f}"
    if value != 0 and float(text) == 0:
        return f"< {10**-digits:.{digits}f}" if value > 0 else f"> -{10**-digits:.{digits}f}"
    if value != 1 and float(text) == 1:
        return f"> {1 - 10**-digits:.{digits}f}"
    return text


# A difference smaller than this is float noise: over 40 questions whose means are both 0.45
# the mean of B - A comes out as -5.6e-18 (the statistics likewise treat differences equal to
# 12 decimals as one value).
NOISE = 1e-12


def fmt_diff(value: float | None, digits: int = 3) -> str:
    """A signed difference: +0.042, -0.010, 0.000 for zero (or float noise, under NOISE); a
    difference too small for ``digits`` gets the decimals of its first significant digit
    (+0.0002), never a zero."""
    if _missing(value):
        return "n/a"
    assert value is not None
    if abs(value) < NOISE:
        return f"{0:.{digits}f}"
    return f"{value:+.{decimals(value, digits)}f}".replace("-", "\u2212")


def decimals(value: float, digits: int) -> int:
    """``digits``, or the decimals of the first significant digit of a difference that would
    read as zero with them."""
    if abs(value) < NOISE or float(f"{value:.{digits}f}") != 0:
        return digits
    return math.ceil(-math.log10(abs(value)))


RULE_DIGITS = 4  # significant digits of a gate rule's numbers, unless it takes more (fmt_beside)


def fmt_beside(
    value: float, margins: tuple[float, ...], digits: int = RULE_DIGITS, *, signed: bool = False
) -> str:
    """``value`` to ``digits`` significant digits, or as many more as keep it on its own side of
    each of ``margins`` (or on it): to 4, an upper bound of 0.00070004 would read 0.0007, the
    ceiling it breaks, and -0.012966795 -0.01297, below the margin -0.0129668 it passes. 17
    digits give the float itself. A gate's outputs show a rule's numbers so, beside the margin
    as written. ``signed``: a difference, with the report's signs (+0.0006838, \u22120.02232,
    0); "n/a" when missing."""
    if _missing(value):
        return "n/a"
    shown = (f"{value:.{n}g}" for n in range(digits, 18))
    text = next(s for s in shown if all(_side(float(s), m) == _side(value, m) for m in margins))
    if not signed or value == 0:
        return text
    return "\u2212" + text[1:] if text.startswith("-") else "+" + text


def _side(value: float, margin: float) -> int:
    return (value > margin) - (value < margin)


def fmt_change(share: float) -> str:
    """A relative change as a signed whole percentage, with the report's minus sign: +17%,
    \u221240%, 0% for none; a change too small for a whole percent gets the decimals of its
    first significant digit (+0.3%), never a zero."""
    if abs(share) < NOISE:
        return "0%"
    percent = share * 100
    text = f"{percent:+.0f}"
    if float(text) == 0:
        text = f"{percent:+.{math.ceil(-math.log10(abs(percent)))}f}"
    return f"{text}%".replace("-", "\u2212")


def fmt_interval(low: float | None, high: float | None, digits: int = 3) -> str:
    """A bracketed interval of signed differences: [-0.012, +0.034]; "none" where there is
    none (one question, or none scored)."""
    if _missing(low) and _missing(high):
        return "none"
    # both bounds to the decimals the smaller needs: [-0.00062, +0.00026] read [-0.001, +0.0003]
    shared = max(decimals(v, digits) for v in (low, high) if v is not None and not _missing(v))
    return f"[{fmt_diff(low, shared)}, {fmt_diff(high, shared)}]"


def fmt_p(p: float | None, bar: float | None = None) -> str:
    """A p-value: three decimals, '< 0.001' below that, 'n/a' when missing; beside the ``bar``
    it is read against, as many digits more as keep it on its side of the bar (0.02539 reads
    0.0254 against 0.025, not 0.025, which does not reject)."""
    if _missing(p):
        return "n/a"
    assert p is not None
    if p < 0.001:
        text, clear = "< 0.001", bar is None or bar >= 0.001
    elif p > 0.999 and p < 1:
        text, clear = "> 0.999", bar is None or bar <= 0.999
    else:
        text = f"{p:.3f}"
        clear = bar is None or _side(float(text), bar) == _side(p, bar)
    return text if clear or bar is None else fmt_beside(p, (bar,), 3)


def p_clause(p: float | None, bar: float | None = None) -> str:
    """'p = 0.023', 'p < 0.001': a p-value inside a sentence (fmt_p)."""
    text = fmt_p(p, bar)
    return f"p {text}" if text[0] in "<>" else f"p = {text}"


def fmt_share(share: float) -> str:
    """A share as a whole percentage that never reads 0% or 100% when it is neither."""
    text = f"{share:.0%}"
    if share and text == "0%":
        return "under 1%"
    if share != 1 and text == "100%":
        return "over 99%"
    return text


def metric_label(name: str, higher_is_better: bool) -> str:
    """A metric's name where a table or line shows it: one where lower is better says so, as
    its B - A above 0 is a loss."""
    return name if higher_is_better else f"{name} (lower is better)"


def fmt_pct(share: float) -> str:
    """A confidence level or share as a percentage without trailing zeros: 95%, 99.5%, and
    98.33% for 1 - 0.05 / 3; more digits only where four would round a level under 1 to 100%."""
    for digits in (4, 10):
        text = f"{share * 100:.{digits}g}"
        if share >= 1 or float(text) < 100:
            break
    return f"{text}%"


def interval_side(low: float, high: float, higher_is_better: bool = True) -> str:
    """Where an interval of B - A lies against zero, as the page colours it: 'up' (B gains),
    'down' (B loses) or 'none'; where lower is better, a gain lies below zero."""
    side = "up" if low > 0 else "down" if high < 0 else "none"
    return side if higher_is_better else {"up": "down", "down": "up"}.get(side, side)


_EMBEDDINGS, _POP_EMBEDDING = "\u202a\u202b\u202d\u202e", "\u202c"
_ISOLATES, _POP_ISOLATE = "\u2066\u2067\u2068", "\u2069"
_FIRST_STRONG_ISOLATE = "\u2068"
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
# a bidi control, or a character of a right-to-left script (bidi class R or AL: Hebrew, Arabic,
# Syriac, Thaana, N'Ko and the other blocks Unicode reserves for them, and U+200F)
_REORDERING = re.compile(
    "[\u202a-\u202e\u2066-\u2069\u0590-\u08ff\u200f\ufb1d-\ufdff\ufe70-\ufefc"
    "\U00010800-\U00010fff\U0001e800-\U0001efff]"
)


def bidi_named(column: str) -> str | None:
    """Why a column named ``column`` is refused, or None: its name holds a bidi control (an
    embedding, override or isolate), which would reverse every sentence naming it (the
    verdict's "for judge\u202escore is [-0.074, +0.017]" read backwards from the name on).
    Options, gate rules and a tool's score columns refuse such a name alike."""
    found = None if column.isascii() else _BIDI.search(column)
    if found is None:
        return None
    return (
        f"the name holds the bidi control U+{ord(found[0]):04X}, which would reverse the "
        "report's sentences that name it; rename the column in the logs"
    )


def bidi_isolated(text: str, *, letters: bool = True) -> str:
    """``text`` as one unit of the line it is placed in: where it holds a right-to-left
    character (with ``letters``) or a bidi control outside an isolate it closes itself, wrapped
    in a first-strong isolate (U+2068 ... U+2069) with the controls it leaves open closed
    inside, innermost first (all invisible); else as it is, so isolating twice changes nothing.
    Its characters are kept as written.

    Unisolated, a bidi control left open (U+202E, right-to-left override) reverses what follows
    it ("+0.025" shows as "520.0+"), and a count after a right-to-left value ("48" after a slice
    named in Arabic, or after U+202E even once closed) moves before it. A PDI (U+2069) the text
    does not open would close the wrapping isolate early, so each one gets an isolate of its
    own to close, opened with the wrapping one."""
    pattern = _REORDERING if letters else _BIDI
    # nearly every text (a chart's thousands of ids): ASCII is known without reading it
    if text.isascii() or not pattern.search(text):
        return text
    open_: list[str] = []  # the closer of each control still open, outermost first
    stray = 0  # PDIs the text does not open
    loose = False  # a character that reorders its surroundings, outside the text's isolates
    for char in pattern.findall(text):
        isolates = open_.count(_POP_ISOLATE)
        if char in _EMBEDDINGS or char in _ISOLATES:
            open_.append(_POP_EMBEDDING if char in _EMBEDDINGS else _POP_ISOLATE)
        elif char == _POP_ISOLATE and isolates:  # closes the embeddings within
            del open_[len(open_) - 1 - open_[::-1].index(_POP_ISOLATE) :]
        elif char == _POP_ISOLATE:  # closes an isolate opened before the text, and all within
            stray += 1
            open_.clear()
        elif char == _POP_EMBEDDING and open_ and open_[-1] == _POP_EMBEDDING:
            open_.pop()
        loose = loose or (not isolates and char not in _ISOLATES)
    if not (loose or open_ or stray):
        return text
    opening = _FIRST_STRONG_ISOLATE * (1 + stray)
    return opening + text + "".join(reversed(open_)) + _POP_ISOLATE
