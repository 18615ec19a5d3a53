"""promptfoo output: JSON (``promptfoo eval -o out.json``) or JSON Lines (``-o out.jsonl``, one
result a line).

One file can hold several providers and prompts; each (provider, prompt) pair is a run, chosen
with ``--run-filter``, or all of them compared at once when the file is given alone. Results
are paired on the test case (its description, else a hash of its vars), not on ``testIdx``,
which changes when tests are added or reordered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import InputError, not_utf8
from ...formatting import fmt_count
from ..contract import BY_NAME
from .columns import Columns, text_id

_FAILED_BY_ERROR = 2  # promptfoo's ResultFailureReason.ERROR (1 is ASSERT)


class SeveralRuns(InputError):
    """A promptfoo file of several runs read as one log and no ``--run-filter``. Its message is
    compare's advice; another command words its own with ``advice``."""

    def __init__(self, path: Path, names: list[str]) -> None:
        self.path, self.names = path, names
        super().__init__(
            self.advice("choose one with --run-filter, or give the file alone to compare them all")
        )

    def advice(self, what: str) -> str:
        """The error, ending with ``what`` to do."""
        return f"{self.path}: holds {len(self.names)} runs ({'; '.join(self.names)}); {what}"


def looks_like_promptfoo(data: Any) -> bool:
    """promptfoo output: an ``evalId``, or ``results`` as a list (older versions) or as an object
    holding a ``results`` list; BEIR results map every key to an object of scores."""
    if not isinstance(data, dict):
        return False
    results = data.get("results")
    nested = isinstance(results, dict) and isinstance(results.get("results"), list)
    return "evalId" in data or isinstance(results, list) or nested


def looks_like_promptfoo_result(record: Any) -> bool:
    """One result of promptfoo's JSON Lines output: its provider, prompt and outcome, and no
    question_id (a run log's line)."""
    return (
        isinstance(record, dict)
        and "question_id" not in record
        and {"provider", "prompt", "success"} <= record.keys()
    )


def results_of_lines(path: Path) -> dict[str, Any]:
    """promptfoo's JSON Lines output as the JSON output holds it: ``{"results": [...]}``.
    Versions that wrote the results batch by batch without a newline after each batch put one
    batch's last result and the next one's first on a line: both are read."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(not_utf8(path)) from None
    decoder, results = json.JSONDecoder(), []
    for number, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 is text
        line, at = line.strip(), 0
        while at < len(line):
            try:
                result, at = decoder.raw_decode(line, at)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"{path}: line {number} is not JSON ({exc.msg} at column {exc.colno}); pass "
                    "the file `promptfoo eval -o out.jsonl` writes"
                ) from None
            if not isinstance(result, dict):
                raise InputError(
                    f"{path}: line {number} holds no promptfoo result (a JSON object); pass the "
                    "file `promptfoo eval -o out.jsonl` writes"
                )
            results.append(result)
            at = len(line) - len(line[at:].lstrip())
    return {"results": results}


_RUN_HEADER = re.compile(r"\[[^\]]+\] .+", re.DOTALL)  # "[provider] prompt label"
_OUTCOME = re.compile(r"\[(PASS|FAIL|ERROR)\]")


# the columns promptfoo's table export writes after each run's column, since it put the outcome
# in a column of its own (Status) rather than before each answer ([PASS])
_EXPORT_COLUMNS = frozenset({"Grader Reason", "Comment"})
TABLE_EXPORT = (
    "{path}: is promptfoo's table export (a column of answers per run, their outcomes as "
    "text), not a run log; pass the JSON that `promptfoo eval -o out.json` writes"
)


def is_table_export(names: Sequence[str]) -> bool:
    """Whether a table's header is that of promptfoo's table export of today: a column per run
    headed ``[provider] prompt``, each followed by Status, Score, ..., Grader Reason and
    Comment (so, with two runs, those names twice); a run log has a question_id."""
    return (
        "question_id" not in names
        and set(names) >= _EXPORT_COLUMNS
        and any(_RUN_HEADER.fullmatch(name) for name in names)
    )


def refuse_promptfoo_table(path: Path, columns: Columns) -> None:
    """InputError for promptfoo's table export (``promptfoo eval -o out.csv``), read as a log:
    by its header (is_table_export), or, as older versions wrote it, a column per run headed
    ``[provider] prompt``, each answer starting [PASS], [FAIL] or [ERROR], without a test id,
    latency or cost."""
    if "question_id" in columns:
        return
    if is_table_export(list(columns)):
        raise InputError(TABLE_EXPORT.format(path=path))
    for name, values in columns.items():
        answers = [v for v in values if v is not None and v != ""]
        if (
            _RUN_HEADER.fullmatch(name)
            and answers
            and all(isinstance(v, str) and _OUTCOME.match(v) for v in answers)
        ):
            raise InputError(TABLE_EXPORT.format(path=path))


def _results(path: Path, data: Any) -> list[dict[str, Any]]:
    results = data.get("results") if isinstance(data, dict) else None
    if isinstance(results, dict):
        results = results.get("results")
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        raise InputError(
            f"{path}: no results list; pass the JSON that `promptfoo eval -o out.json` writes"
        )
    # a result names its provider or prompt, and its outcome: a run log's row (one forced to
    # --format promptfoo) names neither, and read as one, every row was one test, "repeated"
    odd = next((n for n, r in enumerate(results, 1) if not _RESULT_KEYS & r.keys()), None)
    if odd is not None:
        raise InputError(
            f"{path}: result {odd} is no promptfoo result (it has none of "
            f"{', '.join(sorted(_RESULT_KEYS))}); check --format, or pass the file "
            "`promptfoo eval -o out.json` writes"
        )
    return results


_RESULT_KEYS = frozenset({"provider", "prompt", "success", "response", "testCase"})


def _run_name(result: dict[str, Any]) -> str:
    provider = result.get("provider") or {}
    if isinstance(provider, dict):
        provider = provider.get("label") or provider.get("id") or "provider"
    prompt = result.get("prompt")
    # promptfoo before labels (2023) named a prompt by its display text; raw has the vars filled in
    named = ("label", "display", "raw")
    label = (
        next((str(prompt[k]) for k in named if prompt.get(k)), "")
        if isinstance(prompt, dict)
        else ""
    )
    return f"{provider} | {label}" if label else str(provider)


def _names(result: dict[str, Any]) -> set[str]:
    """What --run-filter may call a result's run: its full name, its provider's label and id,
    its prompt's label (the id of a labelled provider is in no name)."""
    name = _run_name(result)
    provider = result.get("provider")
    ids = [provider.get("id"), provider.get("label")] if isinstance(provider, dict) else []
    return {name, *name.split(" | "), *(str(i) for i in ids if i)}


def _case_id(result: dict[str, Any]) -> str:
    case = result.get("testCase") or {}
    if case.get("description"):
        return str(case["description"])
    variables = case.get("vars", result.get("vars")) or {}
    return text_id("vars-", json.dumps(variables, sort_keys=True, default=str))


def _output(result: dict[str, Any]) -> str | None:
    output = (result.get("response") or {}).get("output")
    return output if output is None or isinstance(output, str) else json.dumps(output)


def run_names(path: Path, data: Any) -> list[str]:
    """The runs of a promptfoo file (``provider | prompt label``), in the file's order."""
    return list(dict.fromkeys(_run_name(r) for r in _results(path, data)))


def short_labels(names: list[str]) -> list[str]:
    """Short labels of a file's runs: what tells them apart (the provider when every run has
    the same prompt, the prompt when every run has the same provider), else the full name."""
    parts = [name.split(" | ", 1) for name in names]
    for side in (0, 1):
        other = 1 - side
        if all(len(p) == 2 for p in parts) and len({p[other] for p in parts}) == 1:
            return [p[side] for p in parts]
    return names


def _ended_in_error(result: dict[str, Any]) -> bool:
    """Whether a result ended in an error (the provider or the grader failed), not in failed
    assertions: promptfoo writes the first failed assertion's reason in ``error`` too, and
    tells the two apart by ``failureReason`` (2 for an error); older versions, which lack it,
    grade no output when the call failed."""
    if "failureReason" in result:
        return result["failureReason"] == _FAILED_BY_ERROR
    response = result.get("response")
    answered = isinstance(response, dict) and not response.get("error")
    return bool(result.get("error")) and not (answered and result.get("gradingResult"))


def _vars(result: dict[str, Any]) -> Any:
    return (result.get("testCase") or {}).get("vars", result.get("vars")) or {}


def _refuse_repeats(path: Path, run: str, rows: list[dict[str, Any]]) -> None:
    """InputError for a test case with several results in one run: the same vars each time is
    the output of ``promptfoo eval --repeat N``; other vars, two tests of one description."""
    first: dict[str, dict[str, Any]] = {}
    for result in rows:
        case = _case_id(result)
        seen = first.setdefault(case, result)
        if seen is result:
            continue
        if seen.get("provider") != result.get("provider"):
            raise InputError(
                f"{path}: run {run!r} holds the results of two providers under one name (test "
                f"case {case!r} twice); give each provider a label in the promptfoo config, so "
                "that each is a run of its own"
            )
        same_prompt = seen.get("prompt") == result.get("prompt")
        if seen.get("promptIdx") != result.get("promptIdx") and same_prompt:
            # one prompt, two columns of promptfoo's table: two providers of one id and no
            # label (a sweep of temperatures), whose results promptfoo writes alike
            raise InputError(
                f"{path}: run {run!r} holds the results of two providers of one id under one "
                f"name (test case {case!r} twice, prompts {seen.get('promptIdx')} and "
                f"{result.get('promptIdx')} of the same text); give each provider a label in the "
                "promptfoo config, so that each is a run of its own"
            )
        if seen.get("promptIdx") != result.get("promptIdx"):
            # two prompt files of one name (a/prompt.txt, b/prompt.txt) share their label
            raise InputError(
                f"{path}: run {run!r} holds the results of two prompts under one label (test "
                f"case {case!r} twice, prompts {seen.get('promptIdx')} and "
                f"{result.get('promptIdx')}); give each prompt a label in the promptfoo config, "
                "so that each is a run of its own"
            )
        if _vars(seen) != _vars(result):
            raise InputError(
                f"{path}: test case {case!r} appears twice in run {run!r}; give each test a "
                "distinct description"
            )
        n = sum(1 for r in rows if _case_id(r) == case)
        raise InputError(
            f"{path}: test case {case!r} has {n} results with the same vars in run {run!r}, as "
            f"`promptfoo eval --repeat {n}` writes; a promptfoo file is read as one answer per "
            "test: pass the output of an eval without --repeat, or log the repeats as a run log "
            "with a sample column"
        )


# A var of one of these names is a test input, not the column of repeated answers: a promptfoo
# file holds one answer per test (repeats are refused), so it is kept as var_<name>.
REPEATS = ("sample", "epoch")


def _var_column(name: str, derived: set[str]) -> str:
    """The column of a test's var: its own name (a var relevant_ids labels the test), or
    var_<name> where that would not be read as the var: a name of REPEATS, one of the columns
    read from the results in any case (a var Score beside promptfoo's score was refused as two
    names differing in case; a var answer was dropped), or a run-log column in another case."""
    folded = name.lower()
    if name in REPEATS or folded in derived or (folded != name and folded in BY_NAME):
        return f"var_{name}"
    return name


def _paired_on(key: str | None, var_names: Iterable[str]) -> str:
    """What the tests are paired on, for the run's note: the column --map makes question_id, else
    the test case, not a var question_id, which is kept as var_question_id (_var_column): said,
    since a var named so reads as meant to be the key."""
    if key is not None:
        return f"{key} (--map)"
    case = "their description, else a hash of vars"
    if "question_id" not in var_names:
        return case
    return (
        f"{case}, not on the var question_id (kept as var_question_id; --map "
        "question_id=var_question_id pairs on it)"
    )


@dataclass(frozen=True)
class PromptfooRun:
    """The one run chosen of a promptfoo file, as columns."""

    columns: Columns
    notes: list[str]  # how they were read
    sources: dict[str, str]  # where a run-log column read from a var came from: vars.<name>
    results: list[int]  # the place of each row in the file's results list, 1-based


def promptfoo_columns(
    path: Path, data: Any, run_filter: str | None, key: str | None = None
) -> PromptfooRun:
    """The columns of the one run chosen, for messages with where each came from (``key``: the
    column --map makes question_id, which the tests are then paired on)."""
    results = _results(path, data)
    names = run_names(path, data)
    called: dict[str, set[str]] = {name: set() for name in names}
    for r in results:
        called[_run_name(r)] |= _names(r)
    chosen = [n for n in names if run_filter is None or run_filter in called[n]]
    if not names:
        raise InputError(
            f"{path}: its results list is empty, so the eval ran no test; pass the output of "
            "`promptfoo eval -o out.json` run with at least one test and provider"
        )
    listed = "; ".join(names)
    if run_filter is not None and len(chosen) != 1:
        found = "matches none" if not chosen else f"matches {len(chosen)}"
        raise InputError(
            f"{path}: --run-filter {run_filter!r} {found} of the runs in the file ({listed}); "
            "give one run's provider, prompt label or full name"
        )
    if len(chosen) != 1:
        raise SeveralRuns(path, names)
    places = [i for i, r in enumerate(results, start=1) if _run_name(r) == chosen[0]]
    rows = [results[i - 1] for i in places]
    _refuse_repeats(path, chosen[0], rows)
    # a call that ended in an error gave no answer: its milliseconds and zero cost are no
    # answer's, and a provider that failed every call read "-100% latency and -100% cost"
    answered = [not _ended_in_error(r) for r in rows]
    columns: Columns = {
        "question_id": [_case_id(r) for r in rows],
        "correct": [r.get("success") for r in rows],
        "answer": [_output(r) for r in rows],
        "latency_ms": [
            r.get("latencyMs") if ok else None for r, ok in zip(rows, answered, strict=True)
        ],
        "cost_usd": [r.get("cost") if ok else None for r, ok in zip(rows, answered, strict=True)],
        "score": [r.get("score") for r in rows],
    }
    for name in dict.fromkeys(n for r in rows for n in (r.get("namedScores") or {})):
        columns[f"score_{name}"] = [(r.get("namedScores") or {}).get(name) for r in rows]
    variables = [_vars(r) for r in rows]
    derived = {c.lower() for c in columns}
    sources = {}
    var_names = list(dict.fromkeys(n for v in variables for n in v))
    for name in var_names:
        column = _var_column(name, derived)
        columns.setdefault(column, [v.get(name) for v in variables])
        if column in BY_NAME:
            sources[column] = f"vars.{name}"
    shown = " ".join(chosen[0].splitlines())  # a prompt's raw text may span lines
    notes = [f"read as the file's run “{shown}”; tests paired on {_paired_on(key, var_names)}"]
    errors = answered.count(False)
    if errors:
        notes.append(
            f"{fmt_count(errors, 'result')} ended in an error; counted as not correct, as "
            "promptfoo counts them, with no latency or cost (no answer was given)"
        )
    return PromptfooRun(columns, notes, sources, places)
