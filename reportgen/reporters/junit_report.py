"""A JUnit XML of the gate: one test case per rule and candidate, for CI test-report viewers.

A failing rule is a ``<failure>`` whose message carries the numbers; every case's
``<system-out>`` names the rule's candidate and outcome, so an inconclusive rule that counts as
a pass says it was inconclusive. Without rules, the suite is empty.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections import Counter

from ..analysis.gates import PASS, RuleResult
from ..formatting import bidi_isolated, one_line
from .report import Report
from .user_text import xml_safe

SUITE = "ragreport gate"
JUNIT_DIGITS = 6  # significant digits of a failure's numbers, at least


def render(report: Report) -> str:
    study = report.study
    results = study.gate.results if study.gate is not None else ()
    failures = sum(r.counts_as != PASS for r in results)
    suite = ET.Element(
        "testsuite",
        name=SUITE,
        tests=str(len(results)),
        failures=str(failures),
        errors="0",
        skipped="0",
    )
    properties = ET.SubElement(suite, "properties")
    for key, run in zip(_keys(len(study.runs)), study.runs, strict=True):
        ET.SubElement(properties, "property", name=f"{key}.path", value=str(run.path))
        ET.SubElement(properties, "property", name=f"{key}.sha256", value=run.sha256)
    classnames = _classnames([run.label for run in study.runs[1:]])
    for r in results:
        case = ET.SubElement(
            suite, "testcase", classname=classnames[r.candidate], name=r.shown_rule, time="0"
        )
        if r.counts_as != PASS:
            failure = ET.SubElement(
                case, "failure", message=f"{r.outcome}: {r.detail}", type=r.outcome
            )
            failure.text = f"{r.shown_rule} is {r.outcome} for {r.candidate}: {_numbers(r)}"
        # a passing case's output names its candidate too: the classname may not spell it
        output = ET.SubElement(case, "system-out")
        output.text = f"{r.shown_rule} is {r.shown} for {r.candidate}: {r.detail}"
    root = ET.Element("testsuites", name=SUITE, tests=str(len(results)), failures=str(failures))
    root.append(suite)
    # ElementTree writes any character, even those XML forbids; a CI page shows the text as is,
    # and a CI log that prints the file would read a line a label starts (a newline, then
    # "::error::") as a workflow command: control characters are written as their escapes, as
    # the command prints them
    for element in root.iter():
        # bidi controls only: names a CI system keys its history by keep right-to-left letters
        # as written, as the JSON keeps a run's label
        element.attrib = {k: _shown(v) for k, v in element.attrib.items()}
        element.text = element.text and _shown(element.text)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _classnames(candidates: list[str]) -> dict[str, str]:
    """Each candidate's classname: the suite's name, a dot and the label with each dot written
    ``_`` (viewers read a classname's dots as packages: "gpt-4.1" would be class "1" of package
    "ragreport gate.gpt-4"). Where two labels come out alike (gpt-4.1 and gpt-4_1, or a control
    character and its escape), a viewer would merge their cases of one rule into one: each of
    them then ends in its number among the candidates, as the suite's properties number its log
    (candidate2.path). Should a label already end so, every classname takes its number, which
    no two share."""
    names = {label: _shown(f"{SUITE}.{label.replace('.', '_')}") for label in candidates}
    shared = Counter(names.values())

    def numbered(every: bool) -> dict[str, str]:
        return {
            label: f"{name} (candidate {i})" if every or shared[name] > 1 else name
            for i, (label, name) in enumerate(names.items(), start=1)
        }

    some = numbered(every=False)
    return some if len(set(some.values())) == len(some) else numbered(every=True)


def _shown(text: str) -> str:
    return bidi_isolated(xml_safe(one_line(text)), letters=False)


def _numbers(r: RuleResult) -> str:
    """The estimate and interval to six digits (or more where six would put a bound on its
    margin's other side, as every output's digits do), then the rule's sentence; without an
    interval (one question, or none scored) the sentence alone, which says why."""
    if math.isnan(r.low) or math.isnan(r.high):
        return r.detail
    estimate, interval = r.numbers(JUNIT_DIGITS)
    return f"estimate {estimate}, interval {interval}; {r.detail}"


def _keys(n: int) -> list[str]:
    """Property prefixes: a and b for two runs (as always), else baseline, candidate1, ..."""
    if n == 2:
        return ["a", "b"]
    return ["baseline", *(f"candidate{i}" for i in range(1, n))]
