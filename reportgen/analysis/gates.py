"""Release gates: rules on candidate - baseline, each judged pass, fail or inconclusive.

A rule is parsed and its metric checked against the metrics the logs give before any bootstrap
runs, so that a typo is a bad rule (exit 2), not a failing gate (exit 1). Evaluation takes a list
of candidates, each compared with the baseline; two runs are a list of one.

A two-sided interval at level c has bounds that are each one-sided bounds at level (1 + c) / 2:
with the default 95% interval, ``correct >= -0.02`` holds at the one-sided 97.5% level.
"""

from __future__ import annotations

import math
import re
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..formatting import (
    RULE_DIGITS,
    agreeing,
    bidi_isolated,
    bidi_named,
    fmt_beside,
    fmt_count,
    fmt_pct,
    listed,
    named_value,
)
from .metrics import MetricTables, Options
from .registry import NAME_PATTERN, difference_range, value_range
from .skew import LOWER, UPPER, caveat
from .slices import SMALL_SLICE, SliceEvidence, bound_past
from .stats import (
    MetricComparison,
    at_target,
    bound_p_floor,
    compare_with_sides,
    holm,
    significance,
)

PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"
OPERATORS = (">=", ">", "<=", "<")
WITHIN = "within"
DIFFERENCE, CANDIDATE, SLICE, EQUIVALENCE = "difference", "candidate", "slice", "equivalence"
EXIT_FAIL = 1  # a rule failed (or was inconclusive under --inconclusive fail)

# a metric of any name (a --metric column 'judge score' or '2nd') in double quotes, a quote in
# it doubled
_QUOTED = r'"(?:[^"]|"")+"'
_TAIL = (
    r"\s*(?:\[\s*(?P<column>[^\]\s](?:[^\]]*[^\]\s])?)\s*\])?"  # a name may hold spaces
    # the minus sign the report prints (U+2212) reads as '-'; ASCII digits only ('٠' is no 0)
    r"\s*(?P<op>>=|<=|>|<|within\b)\s*"
    r"(?P<margin>[-+\u2212]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+\u2212]?[0-9]+)?)\s*$"
)
_RULE = re.compile(rf"^\s*(?P<own>candidate\.)?(?P<metric>{NAME_PATTERN}|{_QUOTED}){_TAIL}")
# a rule whose metric is a name that must be quoted, written bare ('judge score >= 0')
_BARE = re.compile(r"^\s*(?P<own>candidate\.)?(?P<metric>[\w.\-()@][\w .\-()@]*?)" + _TAIL)
_SYNTAX = (
    "write METRIC OP NUMBER (OP one of >=, >, <=, <), candidate.METRIC OP NUMBER, "
    "METRIC[COLUMN] OP NUMBER or METRIC within NUMBER, e.g. 'correct >= -0.02' (a METRIC "
    "that is not a plain word in double quotes, a quote in it doubled: '\"judge score\" >= 0')"
)


def written(metric: str) -> str:
    """``metric`` as a rule names it: as it is, or in double quotes (a quote in it doubled)
    where it is not a plain word ('"judge score"', '"2nd"')."""
    return metric if re.fullmatch(NAME_PATTERN, metric) else '"' + metric.replace('"', '""') + '"'


class RuleError(InputError):
    """A rule that cannot be read, or that names a metric or slice column the logs lack: bad
    input, refused as the other bad inputs are (an InputError from Python too)."""


@dataclass(frozen=True)
class Rule:
    """One requirement. ``kind`` says what interval it reads: the difference candidate -
    baseline (``difference``, ``equivalence``), the candidate's own mean (``candidate``) or the
    difference in every slice of ``column`` (``slice``)."""

    text: str
    kind: str
    metric: str
    op: str  # one of OPERATORS, or WITHIN
    margin: float
    column: str | None = None
    source: str = field(default="", compare=False)  # the --gate file it came from, if one

    @property
    def named(self) -> str:
        """The rule as a refusal names it: with its gate file, where several may hold it."""
        return f"{self.source}: rule {self.text!r}" if self.source else f"rule {self.text!r}"

    @property
    def number(self) -> str:
        """The margin as the rule writes it ('-0.0129668', '1e-3'), for the sentences that
        compare a bound with it: printed with fewer digits it could read as the other side. Its
        minus sign is the one those sentences print their bounds with, whichever it was typed."""
        match = _RULE.match(self.text)
        assert match is not None  # the text parse_rule read
        return match["margin"].replace("\u2212", "-")

    @property
    def margins(self) -> tuple[float, ...]:
        """The margins its numbers are read against: both ends of an equivalence margin."""
        return (-self.margin, self.margin) if self.op == WITHIN else (self.margin,)


@dataclass(frozen=True)
class Requirements:
    """The rules of one comparison and what an inconclusive rule counts as."""

    rules: tuple[Rule, ...]
    inconclusive: str = FAIL  # PASS or FAIL
    repeated: tuple[str, ...] = ()  # rules given again, as written, checked once

    @property
    def warnings(self) -> list[str]:
        """One per rule given again (the gate is shorter than the rules the user wrote), and
        one per rule that passes whatever the logs hold (it checks nothing)."""
        return [
            f"rule {text!r} is given more than once; it is checked once" for text in self.repeated
        ] + [
            f"{rule.named} passes whatever the logs hold: {what}; give a margin inside that range"
            for rule in self.rules
            if (what := _always_passes(rule)) is not None
        ]


def _always_passes(rule: Rule) -> str | None:
    """Where a rule on a built-in metric holds whatever the logs hold, the range that makes it
    so, in words ('correct >= -1', 'correct within 1': B - A lies in [-1, 1]; an interval is
    cut to that range, so its bounds are in it too); else None."""
    own = rule.kind == CANDIDATE
    span = value_range(rule.metric) if own else difference_range(rule.metric)
    if span is None:
        return None
    low, high = span
    m = rule.margin
    holds = {">=": m <= low, ">": m < low, "<=": m >= high, "<": m > high, WITHIN: m >= high}
    if not holds[rule.op]:
        return None
    what = f"the candidate's mean of {rule.metric}" if own else f"B − A of {rule.metric}"
    return f"{what} lies in [{low:g}, {high:g}]"


@dataclass(frozen=True)
class Candidate:
    """What the rules read about one candidate compared with the baseline."""

    label: str
    differences: dict[str, MetricComparison]  # candidate - baseline, by metric
    own: dict[str, MetricComparison]  # candidate - 0: the candidate's own mean and interval
    # (metric, column) -> per slice; every slice column of a metric a per-slice rule names,
    # since Holm's adjustment runs over them all
    slices: dict[tuple[str, str], list[SliceEvidence]]


@dataclass(frozen=True)
class RuleResult:
    rule: str
    candidate: str
    outcome: str  # PASS, FAIL or INCONCLUSIVE
    counts_as: str  # PASS or FAIL, after --inconclusive
    estimate: float
    low: float
    high: float
    detail: str  # the numbers that decided it, in one sentence

    @property
    def shown(self) -> str:
        """'fail', or 'inconclusive (counts as pass)' when the policy changes it."""
        if self.outcome == self.counts_as:
            return self.outcome
        return f"{self.outcome} (counts as {self.counts_as})"

    @property
    def shown_rule(self) -> str:
        """The rule as the outputs print it (shown_rule); ``rule`` keeps it as written."""
        return shown_rule(self.rule)

    @property
    def line(self) -> str:
        """'fail  B  correct >= -0.02: difference -0.05, interval [...]; ...' for a terminal."""
        return f"{self.shown}  {self.candidate}  {self.shown_rule}: {self.detail}"

    def numbers(self, digits: int = RULE_DIGITS, *, signed: bool = False) -> tuple[str, str]:
        """The estimate and '[low, high]' ('none' without an interval) in the digits of the
        rule's sentence (fmt_beside, against the margins of the rule its text parses to):
        rounded to fixed decimals, a bound could read on the other side of its margin, or on
        it, beside the outcome it decides. ``signed``: a difference with its sign, as tables
        show B - A; a candidate rule's estimate is a mean, unsigned."""
        rule = parse_rule(self.rule)
        signed = signed and rule.kind != CANDIDATE

        def shown(value: float) -> str:
            return fmt_beside(value, rule.margins, digits, signed=signed)

        if math.isnan(self.low) or math.isnan(self.high):
            return shown(self.estimate), "none"
        return shown(self.estimate), f"[{shown(self.low)}, {shown(self.high)}]"


@dataclass(frozen=True)
class GateResult:
    rules: tuple[str, ...]
    inconclusive: str
    confidence: float
    one_sided_level: float
    results: tuple[RuleResult, ...]

    @property
    def passed(self) -> bool:
        return all(r.counts_as == PASS for r in self.results)

    @property
    def outcome(self) -> str:
        return PASS if self.passed else FAIL

    @property
    def headline(self) -> str:
        """'gate: fail (1 of 3 rule checks failed; passing: none; bounds at the one-sided 97.5%
        level)'."""
        return f"gate: {self.outcome} ({self.tally})"

    @property
    def tally(self) -> str:
        """The headline's parenthesis: the checks failed, the candidates passing, the level."""
        failed = sum(r.counts_as != PASS for r in self.results)
        candidates = self.passing_candidates()
        passing = f"passing: {', '.join(candidates) or 'none'}"
        return (
            f"{failed} of {fmt_count(len(self.results), 'rule check')} failed; {passing}; bounds "
            f"at the one-sided {fmt_pct(self.one_sided_level)} level"
        )

    @property
    def slice_levels(self) -> str:
        """What the outputs add to "each bound is one-sided at ..." where a per-slice rule is
        among the rules: its slices are judged at a wider level than the intervals shown, so a
        shown interval past the margin of a rule that passed read as a contradiction."""
        if not any(parse_rule(r.rule).kind == SLICE for r in self.results):
            return ""
        return (
            "; a per-slice rule judges each slice by its p Holm-adjusted over the slice table's "
            "slices, so a slice's interval shown, before that adjustment, can lie past the "
            "margin of a rule that passes"
        )

    def passing_candidates(self) -> list[str]:
        failing = {r.candidate for r in self.results if r.counts_as != PASS}
        return [c for c in dict.fromkeys(r.candidate for r in self.results) if c not in failing]


def one_sided_level(confidence: float) -> float:
    """Each bound of a two-sided interval at ``confidence`` is a one-sided bound at this level."""
    return (1 + confidence) / 2


def parse_rule(text: str) -> Rule:
    match = _RULE.match(text)
    if not match:
        raise RuleError(f"rule {text!r}: cannot read it; {_how_to_write(text)}")
    op = match["op"]
    margin = float(match["margin"].replace("\u2212", "-"))
    if not math.isfinite(margin):
        raise RuleError(f"rule {text!r}: the number must be finite")
    own, column = bool(match["own"]), match["column"]
    if own and column:
        raise RuleError(f"rule {text!r}: a candidate rule cannot be per slice; write one or other")
    if op == WITHIN:
        if own or column:
            raise RuleError(f"rule {text!r}: 'within' applies to the overall difference only")
        if margin <= 0:
            raise RuleError(f"rule {text!r}: the equivalence margin must be above 0")
        kind = EQUIVALENCE
    else:
        kind = CANDIDATE if own else SLICE if column else DIFFERENCE
    metric = match["metric"]
    if metric.startswith('"'):
        metric = metric[1:-1].replace('""', '"')
    return Rule(text.strip(), kind, metric, op, margin, column)


def shown_rule(text: str) -> str:
    """A rule's text with its metric and slice column each isolated (bidi_isolated): a
    right-to-left override in a name, isolated only with the whole rule, would reverse the
    number after it ('"judge\u202escore" >= -0.5' read '"judge5.0- =< "erocs')."""
    match = _RULE.match(text)
    if match is None or text.isascii():
        return text
    parts, last = [], 0
    for name in ("metric", "column"):
        if match[name] is not None:
            start, end = match.span(name)
            parts += [text[last:start], bidi_isolated(text[start:end])]
            last = end
    return "".join(parts) + text[last:]


def _how_to_write(text: str) -> str:
    """The rule as it should be written: its metric in double quotes, where it names one that
    is not a plain word bare; else the grammar."""
    bare = _BARE.match(text)
    if bare is None or re.fullmatch(NAME_PATTERN, bare["metric"]):
        return _SYNTAX
    start, end = bare.span("metric")
    quoted = text[:start] + written(bare["metric"]) + text[end:]
    return (
        "a metric whose name is not a plain word (a space, a leading digit) goes in double "
        f"quotes: {quoted.strip()!r}"
    )


def read_gate_file(path: Path) -> tuple[str, ...]:
    """The rules of a TOML gate file: ``require = ["correct >= -0.02", ...]``.

    Any other key is refused, as is an empty list: a misspelt key (``requires``) or a gate of
    no rule would otherwise check nothing and pass in CI.
    """
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # a BOM or none
    except OSError as exc:
        raise RuleError(f"{path}: cannot read the gate file ({exc.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RuleError(f"{path}: not valid TOML ({exc}); fix the gate file") from None
    for key in document:
        if key != "require":
            raise RuleError(
                f'{path}: unknown key {key!r}; a gate file holds only require = ["RULE", ...] '
                "(options such as --confidence go on the command line): rename or remove it"
            )
    rules = document.get("require")
    if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
        raise RuleError(
            f'{path}: expected require = ["RULE", ...], a list of strings such as '
            '"correct >= -0.02"'
        )
    if not rules:
        raise RuleError(
            f"{path}: require = [] gives no rule, so the gate would check nothing; add a rule "
            'such as "correct >= -0.02", or leave out --gate'
        )
    return tuple(rules)


COST_COLUMNS = ("latency_ms", "cost_usd", "context_tokens")  # the contract's costs: less is better


def rule_costs(requirements: Requirements | None) -> tuple[str, ...]:
    """The cost columns that candidate and per-slice rules name. Those rules read per-question
    values, so the comparison compares these columns as lower-is-better scores (and shows them
    in its table of metrics), as ``--lower-is-better`` would."""
    rules = requirements.rules if requirements else ()
    return tuple(
        dict.fromkeys(
            r.metric for r in rules if r.kind in (CANDIDATE, SLICE) and r.metric in COST_COLUMNS
        )
    )


def requirements_from(
    rules: tuple[str, ...], gate_files: tuple[Path, ...], inconclusive: str
) -> Requirements | None:
    """The rules of ``--require`` and of every ``--gate`` file, in order, parsed, or None when
    there are none (a second file replaced the first, whose rules then went unchecked). A rule
    given again (however spaced) is kept once, where first given: checked twice, it counted
    twice in the gate and made two JUnit cases of one name."""
    texts = [(rule, "") for rule in rules]
    texts += [(rule, str(path)) for path in gate_files for rule in read_gate_file(path)]
    if not texts:
        return None
    kept: dict[Rule, Rule] = {}  # by what the rule checks: its text left out
    repeated = []
    for rule in (_parsed(text, source) for text, source in texts):
        if kept.setdefault(replace(rule, text=""), rule) is not rule:
            repeated.append(rule.text)
    return Requirements(tuple(kept.values()), inconclusive, tuple(repeated))


def _parsed(text: str, source: str) -> Rule:
    """A rule of ``source`` (a gate file; "" for --require), whose refusal names the file."""
    try:
        return replace(parse_rule(text), source=source)
    except RuleError as exc:
        if not source:
            raise
        raise RuleError(f"{source}: {exc}") from None


def check_rule_columns(
    rules: tuple[Rule, ...], columns: list[str], too_fine: dict[str, int]
) -> None:
    """Every rule names its metric and column in characters that read as written, and a slice
    column the report breaks down by: ``columns`` are the slice columns asked for, ``too_fine``
    those of them left out of the slices for their number of values, on which a per-slice rule
    has nothing to be judged. Checked once the slice columns' values are read, before the
    per-question metrics check_rules needs: a rule on a column of 100,000 values was refused
    after them (3 s at 100,000 questions)."""
    for rule in rules:
        for name in (rule.metric, rule.column or ""):
            if (why := bidi_named(name)) is not None:  # as Options refuses the column
                raise RuleError(f"{rule.named}: {name!r}: {why}")
        if rule.column is not None and rule.column not in columns:
            # "(none)" is how a null slice value reads: no column is said in words
            others = f"name one of {', '.join(columns)}" if columns else "log a slice column"
            raise RuleError(
                f"{rule.named}: the report has no slice column {rule.column!r}; "
                f"pass --slice {shlex.quote(rule.column)} or {others}"
            )
        if rule.column in too_fine:
            raise RuleError(
                f"{rule.named}: the report computes no slices of column {rule.column!r}, "
                "which has too many values to slice by; pick a coarser column with --slice"
            )


def check_rules(
    rules: tuple[Rule, ...],
    scores: list[str],
    costs: list[str],
    why_absent: Callable[[str], str | None] = lambda metric: None,
) -> None:
    """Every rule names a metric the report will have, before any bootstrap runs (its columns
    were checked by check_rule_columns).

    ``scores`` are the per-question metrics, ``costs`` the cost columns compared (a paired
    question has a value in both runs): candidate and per-slice rules read per-question scores,
    so they take score metrics only. ``why_absent``: why a metric the logs have is not compared
    (the log that lacks it, or the option that compares it) and what to do, when it is.
    """
    for rule in rules:
        known = scores if rule.kind in (CANDIDATE, SLICE) else scores + costs
        if rule.metric not in known:
            why = why_absent(rule.metric) or _own_unquoted(rule, scores)
            # a candidate or per-slice rule naming a cost compares it as a score too
            names = ", ".join(map(written, dict.fromkeys(scores + costs)))
            raise RuleError(
                f"{rule.named}: {why}"
                if why
                else f"{rule.named}: no metric {rule.metric!r} in these logs; "
                f"name one of {names or '(none)'}"
            )


def _own_unquoted(rule: Rule, scores: list[str]) -> str | None:
    """How to write a candidate rule on a metric that must be quoted, written bare:
    'candidate.2nd >= 0.5' reads as a difference rule on a metric named 'candidate.2nd' (a
    name may hold dots)."""
    own = rule.metric.removeprefix("candidate.")
    if rule.kind != DIFFERENCE or own == rule.metric or own not in scores:
        return None
    quoted = rule.text.replace(rule.metric, f"candidate.{written(own)}", 1)
    return (
        "a metric whose name is not a plain word (a space, a leading digit) goes in double "
        f"quotes after candidate.: {quoted!r}"
    )


def _as_judged(rule: Rule, c: MetricComparison) -> MetricComparison:
    """``c`` with its estimate and each bound of its interval within float noise of one of the
    rule's margins read as that margin, on the scale of the means compared (stats.noise_at): 24
    costs of 0.003 average 0.0030000000000000005, which failed 'candidate.cost_usd <= 0.003'
    though every value equals the margin. Every rule reads the bounds so, the sentence too."""
    scale = max(abs(c.a), abs(c.b))

    def judged(bound: float) -> float:
        for margin in rule.margins:
            bound = at_target(bound, margin, scale)
        return bound

    return replace(c, diff=judged(c.diff), ci_low=judged(c.ci_low), ci_high=judged(c.ci_high))


def _judge(op: str, margin: float, low: float, high: float) -> str:
    """Pass when the interval lies wholly on the rule's side of the margin, fail when it lies
    wholly on the other side, inconclusive when it straddles the margin."""
    if math.isnan(low) or math.isnan(high):
        return INCONCLUSIVE
    holds, breaks = {
        ">=": (low >= margin, high < margin),
        ">": (low > margin, high <= margin),
        "<=": (high <= margin, low > margin),
        "<": (high < margin, low >= margin),
        WITHIN: (-margin <= low and high <= margin, high < -margin or low > margin),
    }[op]
    return PASS if holds else FAIL if breaks else INCONCLUSIVE


def _excludes_zero(op: str, m: float) -> bool:
    """Whether 'B - A op m' holds only where B differs from A ('correct > 0', 'ndcg@5 >=
    0.02'): then the paired test of no difference, the report's, must reject too. A degenerate
    interval, such as [+1, +1] from two questions both fixed, would pass it alone."""
    return {">": m >= 0, ">=": m > 0, "<": m <= 0, "<=": m < 0}.get(op, False)


_BREAKS = {">=": "<", ">": "<=", "<=": ">", "<": ">="}  # the side of the margin a rule breaks on


def _has_interval(c: MetricComparison) -> bool:
    return not (math.isnan(c.ci_low) or math.isnan(c.ci_high))


def _interval(rule: Rule, c: MetricComparison) -> str:
    """'interval [low, high]' in the digits every output shows a rule's numbers in (each bound
    on its own side of the margin), or why there is none: one question (or one cluster of
    --cluster) has no spread to measure."""
    if _has_interval(c):
        low, high = (fmt_beside(bound, rule.margins) for bound in (c.ci_low, c.ci_high))
        return f"interval [{low}, {high}]"
    return f"one {'question' if c.clusters is None else 'cluster'} gives no interval"


def _bound_sentence(rule: Rule, c: MetricComparison, what: str, level: float, outcome: str) -> str:
    """The estimate, the interval and the one-sided bound the outcome rests on, against the
    margin: a pass or an open rule the bound on the rule's side ('lower bound -0.01 vs >=
    -0.02'), a fail the other one, which lies past the margin ('upper bound -0.04 < -0.02'): the
    lower bound of a failing '>= -0.02' is below the margin in an open rule too."""
    estimate = f"{what} {fmt_beside(c.diff, rule.margins)}"
    if rule.kind == CANDIDATE:  # over the candidate's scored questions, which the report's
        # table of B - A narrows to those scored in both runs: its B mean can differ
        estimate += f" over its {fmt_count(c.n, 'scored question')}"
    if rule.op == WITHIN:
        sentence = f"{estimate}, {_interval(rule, c)}, equivalence margin \u00b1{rule.number}"
        if outcome != FAIL:  # a pass rests on both bounds, both in the interval shown
            return sentence
        (bound,) = _resting_bounds(rule, FAIL, c.ci_high)  # the one past a margin
        past = f"< -{rule.number}" if bound == UPPER else f"> {rule.number}"
        value = fmt_beside(c.ci_high if bound == UPPER else c.ci_low, rule.margins)
        return f"{sentence}; one-sided {fmt_pct(level)} {bound} bound {value} {past}"
    if not _has_interval(c):
        bound = "lower" if rule.op in (">=", ">") else "upper"
        return (
            f"{estimate}, {_interval(rule, c)}, so there is no one-sided {fmt_pct(level)} "
            f"{bound} bound to hold to {rule.op} {rule.number}"
        )
    (bound,) = _resting_bounds(rule, outcome if outcome == FAIL else PASS, c.ci_high)
    value = fmt_beside(c.ci_low if bound == LOWER else c.ci_high, rule.margins)
    compared = f"one-sided {fmt_pct(level)} {bound} bound {value}"
    if outcome == FAIL:
        return f"{estimate}, {_interval(rule, c)}; {compared} {_BREAKS[rule.op]} {rule.number}"
    return f"{estimate}, {_interval(rule, c)}; {compared} vs {rule.op} {rule.number}"


def _violation_p(rule: Rule, evidence: SliceEvidence) -> float:
    """One-sided p-value of 'the difference is on the wrong side of the margin': that of the
    slice's interval, as the report prints it, lying wholly past the margin (stats.bound_p), so
    that a slice fails only where its interval at the level Holm's adjustment asks for lies
    past the margin. The share of bootstrap means alone was anti-conservative on small slices
    and few clusters: 10 questions none changed read p 0.0002 against 'correct[slice] >= 0.05',
    where Tango's score interval reaches 0.28 (p 0.23), and a 0/1 slice of 10 questions at the
    margin failed in 60% of sets (bench/simulate_slice_rules.py). A slice without an interval
    (one question) has no spread to resample: it gives no evidence, p 1, as in the slice
    table."""
    upper = rule.op in (">=", ">")  # the bound that lies below the margin when such a rule breaks
    return bound_past(evidence.comparison, evidence.means, evidence.sides, rule.margin, upper)


def _loss_only(rule: Rule) -> bool:
    """Whether the rule's wrong side excludes zero ('correct[slice] >= -0.05': only a loss
    breaks it; 'within' breaks only on a difference past its margin), where a rule such as
    '>= 0.02' breaks without any loss. Then it fails only where the report's own test finds the
    difference too, as the slice table's finding does: 5 of 10 questions broken and none fixed
    lie below -0.05 with one-sided p 0.019 (the interval's upper bound is -0.084), where
    McNemar's exact test, the table's, gives 0.0625, two-sided."""
    return rule.op == WITHIN or _excludes_zero(_BREAKS[rule.op], rule.margin)


def _harmful(rule: Rule, c: MetricComparison) -> bool:
    """Whether the slice's difference lies on the side a loss breaks the rule from."""
    return c.diff < 0 if rule.op in (">=", ">") else c.diff > 0


def _slice_outcome(
    rule: Rule, family: list[tuple[str, SliceEvidence]], alpha: float
) -> tuple[str, SliceEvidence, float, float | None, tuple[SliceEvidence, float] | None]:
    """Fail when some scored slice of the rule's column, of SMALL_SLICE questions or more, is
    credibly on the wrong side of the margin: its one-sided p-value, Holm-adjusted over
    ``family`` (every scored slice of the metric, of every slice column, as the report's slice
    table adjusts), below ``alpha``, and, where only a loss breaks the rule, the slice table's
    own test finding that loss, Holm-adjusted over the same family. Otherwise pass: the rule
    asks for no credible harm in any slice, and a smaller slice, or one the table's test does
    not find worse, gives a direction, not proof, as in the table. The slice returned is the
    one that fails, else a smaller one whose adjusted p is below ``alpha`` (a direction the
    detail names), else the likeliest to fail of those that could (SMALL_SLICE questions or
    more; a wide small slice has the lower p when every estimate is on the right side): the
    lowest p before adjustment (Holm's cap at 1 ties many), then the bound furthest past the
    margin; with it its adjusted p and the test's (None where the rule reads no test). Where the
    one returned is a smaller slice, last the likeliest to fail of those that could, with its
    adjusted p (None when there is none): the pass rests on its p too, not the size alone."""
    raw = [_violation_p(rule, s) for _, s in family]
    adjusted = holm(raw)
    # the slice table's finding: its test's two-sided p, Holm-adjusted over the same family,
    # below 1 - confidence (twice the one-sided alpha), on the losing side
    tested = holm([s.comparison.p for _, s in family]) if _loss_only(rule) else None
    past = np.nan_to_num([_past_margin(rule, s.comparison) for _, s in family], nan=-np.inf)
    own = [i for i, (column, _) in enumerate(family) if column == rule.column]
    failing = [
        i
        for i in own
        if adjusted[i] < alpha
        and family[i][1].comparison.n >= SMALL_SLICE
        and (tested is None or (tested[i] < 2 * alpha and _harmful(rule, family[i][1].comparison)))
    ]
    worst = min(
        failing or own,
        key=lambda i: (
            adjusted[i] >= alpha,
            adjusted[i] if adjusted[i] < alpha else 0.0,
            family[i][1].comparison.n < SMALL_SLICE,
            raw[i],
            -past[i],
        ),
    )
    test_p = None if tested is None else tested[worst]
    could = [i for i in own if family[i][1].comparison.n >= SMALL_SLICE]
    likeliest = None
    if family[worst][1].comparison.n < SMALL_SLICE and could:
        best = min(could, key=lambda i: (raw[i], -past[i]))
        likeliest = family[best][1], adjusted[best]
    outcome = FAIL if failing else PASS
    return outcome, family[worst][1], adjusted[worst], test_p, likeliest


def _past_margin(rule: Rule, c: MetricComparison) -> float:
    """How far the slice's bound on the rule's side lies past the margin (negative when it
    holds): it breaks ties of the adjusted p-value, which Holm's cap at 1 makes common."""
    return rule.margin - c.ci_low if rule.op in (">=", ">") else c.ci_high - rule.margin


_WRONG_SIDE = {">=": "below", ">": "at or below", "<=": "above", "<": "at or above"}


def _unscored(rule: Rule, candidate: Candidate, why: str) -> RuleResult:
    nan = float("nan")
    return RuleResult(rule.text, candidate.label, INCONCLUSIVE, INCONCLUSIVE, nan, nan, nan, why)


def _slice_rule(rule: Rule, candidate: Candidate, level: float) -> RuleResult:
    assert rule.column is not None
    family = [
        (column, s)
        for (metric, column), slices in candidate.slices.items()
        if metric == rule.metric
        for s in slices
        if s.comparison.n
    ]
    scored = [s for column, s in family if column == rule.column]
    if not scored:
        return _unscored(rule, candidate, "no slice has a scored question")
    if not any(_has_interval(s.comparison) for s in scored):
        unit = "question" if scored[0].comparison.clusters is None else "cluster"
        return _unscored(
            rule,
            candidate,
            f"every slice of {bidi_isolated(rule.column)} has one scored {unit}, and one {unit} "
            "gives no interval",
        )
    if all(s.comparison.n < SMALL_SLICE for s in scored):
        # no slice could fail the rule: passing would check nothing
        return _unscored(
            rule,
            candidate,
            f"every slice of {bidi_isolated(rule.column)} has fewer than {SMALL_SLICE} scored "
            "questions, which "
            "give a direction, not proof (as in the slice table): no slice could fail the rule",
        )
    outcome, worst, p, tested, likeliest = _slice_outcome(rule, family, significance(level))
    c = worst.comparison
    columns = listed(dict.fromkeys(column for column, _ in family))
    column = bidi_isolated(rule.column)
    # a p of 0: no resample past the margin; Holm's adjustment multiplies at most by the family
    floor = min(1.0, len(family) * bound_p_floor(worst.sides, worst.means))
    shown_p = f"{p:.4g}" if p > 0 or floor == 0 else f"< {floor:.2g}"
    detail = (
        f"slice {column} = {named_value(worst.value)} is the likeliest "
        f"{_WRONG_SIDE[rule.op]} "
        f"{rule.number}: difference {fmt_beside(c.diff, rule.margins)}, {_interval(rule, c)}; "
        f"one-sided p {shown_p} of its interval ({c.interval}) lying wholly "
        f"{_WRONG_SIDE[rule.op]} {rule.number}, "
        f"Holm-adjusted over {fmt_count(len(family), 'slice')} (of {columns}, as in the slice "
        f"table), vs {1 - level:.4g}"
    )
    if outcome == PASS and p < 1 - level and c.n < SMALL_SLICE:
        detail += (
            f", but its {fmt_count(c.n, 'question')} {agreeing(c.n, 'gives', 'give')} a "
            "direction, not proof (a slice needs "
            f"{SMALL_SLICE} to fail the rule, as in the slice table)"
        )
        if likeliest is not None:
            other, adjusted = likeliest
            detail += (
                f"; of those of {SMALL_SLICE} or more, slice {column} = "
                f"{named_value(other.value)} is the likeliest: "
                f"{_interval(rule, other.comparison)}, Holm-adjusted p {adjusted:.4g} vs "
                f"{1 - level:.4g}"
            )
    elif outcome == PASS and p < 1 - level and tested is not None:
        detail += (
            f", but the slice table's {c.test} test does not find B worse there (p "
            f"{tested:.4g}, Holm-adjusted, vs {2 * (1 - level):.4g}): a direction, not proof"
        )
    elif outcome == PASS and _judge(rule.op, rule.margin, c.ci_low, c.ci_high) == FAIL:
        # the interval shown is the slice table's, before the adjustment that judged it
        detail += (
            f": its interval lies past {rule.number} before Holm's adjustment, and reaches it "
            "once widened for it"
        )
    if outcome == FAIL:
        run = candidate.differences.get(rule.metric)
        detail += _skew_caveats(c, _resting_bounds(rule, FAIL, c.ci_high), run)
    return RuleResult(
        rule.text, candidate.label, outcome, outcome, c.diff, c.ci_low, c.ci_high, detail
    )


def _evaluate_rule(rule: Rule, candidate: Candidate, confidence: float) -> RuleResult:
    level = one_sided_level(confidence)
    if rule.kind == SLICE:
        return _slice_rule(rule, candidate, level)
    if rule.kind == CANDIDATE:
        c, what = candidate.own.get(rule.metric), "candidate mean"
    else:
        c, what = candidate.differences.get(rule.metric), "difference"
    if c is None or c.n == 0:
        return _unscored(rule, candidate, "no question scored")
    c = _as_judged(rule, c)
    outcome = _judge(rule.op, rule.margin, c.ci_low, c.ci_high)
    detail = _bound_sentence(rule, c, what, level, outcome)
    # an outcome only a difference can give (a pass of 'correct > 0', a fail of 'correct >= 0'
    # or of any 'within') needs the report's test of no difference to find one too
    differs = (outcome == PASS and _excludes_zero(rule.op, rule.margin)) or (
        outcome == FAIL and _loss_only(rule)
    )
    if differs and rule.kind != CANDIDATE and c.p >= significance(confidence):
        outcome = INCONCLUSIVE
        detail += (
            f"; but the {c.test} test of no difference gives p = {c.p:.3g} (over "
            f"{fmt_count(c.n, 'question')}), so the interval and the test disagree"
        )
    subject = "the candidate's values" if rule.kind == CANDIDATE else "B \u2212 A"
    detail += _skew_caveats(c, _resting_bounds(rule, outcome, c.ci_high), subject=subject)
    return RuleResult(
        rule.text, candidate.label, outcome, outcome, c.diff, c.ci_low, c.ci_high, detail
    )


def _resting_bounds(rule: Rule, outcome: str, high: float) -> tuple[str, ...]:
    """The bounds of the interval (skew.LOWER, skew.UPPER) that ``outcome`` rests on: a pass
    of '>= m' on the lower bound, its fail on the upper one; none for an inconclusive rule."""
    if outcome == INCONCLUSIVE:
        return ()
    if rule.op == WITHIN:  # a pass needs both bounds inside; a fail one bound past a margin
        return (LOWER, UPPER) if outcome == PASS else (UPPER if high < -rule.margin else LOWER,)
    holds_on_lower = rule.op in (">=", ">")
    return (LOWER if holds_on_lower == (outcome == PASS) else UPPER,)


def _skew_caveats(
    c: MetricComparison,
    bounds: tuple[str, ...],
    run: MetricComparison | None = None,
    subject: str = "B \u2212 A",
) -> str:
    """'; <caveat>' for each of ``bounds`` the skew of ``subject`` leaves unsure (skew.caveat;
    ``run`` the whole run's comparison where ``c`` is a slice's)."""
    return "".join(f"; {text}" for bound in bounds if (text := caveat(c, bound, run, subject)))


def evaluate(
    requirements: Requirements, candidates: list[Candidate], confidence: float
) -> GateResult:
    """Every rule applied to every candidate; an inconclusive rule counts as the policy says."""
    results = []
    for candidate in candidates:
        for rule in requirements.rules:
            r = _evaluate_rule(rule, candidate, confidence)
            if r.outcome == INCONCLUSIVE:
                r = replace(r, counts_as=requirements.inconclusive)
            results.append(r)
    return GateResult(
        rules=tuple(r.text for r in requirements.rules),
        inconclusive=requirements.inconclusive,
        confidence=confidence,
        one_sided_level=one_sided_level(confidence),
        results=tuple(results),
    )


def candidate_evidence(
    label: str,
    rules: tuple[Rule, ...],
    tables: MetricTables,
    slices: dict[tuple[str, str], list[SliceEvidence]],
    differences: dict[str, MetricComparison],
    options: Options,
    clusters: np.ndarray | None = None,
) -> Candidate:
    """What ``rules`` read about run B of ``tables``, computed with the report's bootstrap.

    The candidate's own interval is the interval of B - 0, so it follows the report's interval
    method whatever that is; a per-slice rule reads the slice table's evidence (``slices``,
    slice_results': its seed, its --cluster resampling), which lacks a column too fine to
    slice by, on which check_rule_columns has refused any per-slice rule.
    """
    bases = {tables.name(base): base for base in tables.metrics}

    def own_interval(name: str) -> MetricComparison:
        base = bases[name]
        b = tables.paired[f"{base}_b"].to_numpy(dtype=float)
        return compare_with_sides(
            name,
            np.zeros_like(b),
            b,
            binary=tables.binary(base),
            n_boot=options.n_boot,
            confidence=options.confidence,
            seed=options.seed,
            clusters=clusters,
            span=tables.own_range(base),
            own=True,
        )[0]

    own = {r.metric: own_interval(r.metric) for r in rules if r.kind == CANDIDATE}
    asked = dict.fromkeys(r.metric for r in rules if r.kind == SLICE)
    # the Holm family of a metric: every slice column
    read = {
        (metric, column): found
        for metric in asked
        for (m, column), found in slices.items()
        if m == metric
    }
    return Candidate(label, differences, own, read)
