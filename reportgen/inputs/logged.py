"""What would give a run a column it lacks, said in the words of the tool that wrote the run: a
RAGAS user adds a RAGAS column, a promptfoo user a test var; a run log logs the column."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby

from .load import RunFile
from .readers.ragas import CONTEXTS, RENAMED

# run-log column -> the RAGAS column it is read from (readers/ragas.py; context_ids is
# retrieved_ids there)
_RAGAS = {target: source for source, target in RENAMED.items()} | {
    target: f"{ids} (or {texts})" for target, (ids, texts) in CONTEXTS.items()
}
_RAGAS["context_ids"] = _RAGAS["retrieved_ids"]
_RANKINGS_ONLY = ("trec", "beir")  # their runs hold rankings and their qrels labels, no answer


def tool_of(runs: Iterable[RunFile]) -> str | None:
    """The tool that wrote every run (RAGAS, promptfoo, TREC, BEIR), else None: runs read from
    different tools, or run logs, are advised in the run log's own columns."""
    tools = {run.tool for run in runs}
    return tools.pop() if len(tools) == 1 else None


def log(columns: Iterable[str], runs: Iterable[RunFile]) -> str:
    """'log correct and faithfulness', or what gives those columns in the output of the tool
    that wrote ``runs``; columns every run has are left out of a tool's advice (its columns
    come in pairs: RAGAS' retrieved contexts without their references). A column some run logs
    is asked of the runs that lack it ('log correct in b.parquet'): "log correct" would read
    as if no run had it."""
    runs = list(runs)
    tool = tool_of(runs)
    columns = list(columns)
    if tool is not None:
        columns = [c for c in columns if not all(c in r.columns for r in runs)] or columns
    if tool == "ragas":
        added = (_RAGAS.get(c, f"a column as {c} (--map {c}=COLUMN)") for c in columns)
        return "add " + " and ".join(added)
    if tool == "promptfoo":
        return _promptfoo(columns, runs)
    if tool in _RANKINGS_ONLY:  # its file cannot hold them: a run log converted from it can
        return (
            f"log {' and '.join(columns)} in a run log converted from the run, since a "
            f"{tool.upper()} run holds rankings only"
        )
    # columns lacking from the same logs share one "in": 'log relevant_ids and context_ids in
    # b.parquet'; beside such a column, one no log has is asked of all: 'log cited_ids in both
    # logs and context_ids in b.parquet' (the "in" read as both's)
    wheres = {column: _where_lacking(column, runs) for column in columns}
    every = " in both logs" if len(runs) == 2 else " in every log"
    if any(wheres.values()):
        wheres = {column: where or every for column, where in wheres.items()}
    lacked = groupby(columns, key=wheres.__getitem__)
    return "log " + " and ".join(" and ".join(named) + where for where, named in lacked)


_IDS = ("relevant_ids", "context_ids", "retrieved_ids")
_SPANS = ("relevant_spans", "context_spans", "retrieved_spans")


def log_retrieval(runs: Iterable[RunFile]) -> str:
    """What run logs that both lack retrieval metrics would log for them: the labels where
    every log ranks, the prompt where every log labels, else both, in ids or spans as the logs
    have them ("log relevant_ids with context_ids" asked of logs of context_ids was half
    wrong); the labels asked of the log that lacks them where the other has them ("log
    relevant_ids" read as if neither had)."""
    runs = list(runs)
    spans = in_spans(runs)
    label, prompt, ranking = _SPANS if spans else _IDS
    if all({prompt, ranking} & r.columns for r in runs):
        return log([label], runs)
    if all(label in r.columns for r in runs):
        return f"log {prompt} (or {ranking} and pass --k)"
    return (
        f"log {label} with {prompt} (or {ranking} and pass --k)"
        if spans
        else "log relevant_ids with context_ids (or retrieved_ids and pass --k), or "
        "relevant_spans with context_spans (or retrieved_spans and pass --k)"
    )


def in_spans(runs: Iterable[RunFile]) -> bool:
    """Whether every log locates its evidence in spans and none in passage ids: the columns it
    is asked to log are then the spans'."""
    return all(set(_SPANS) & r.columns and not set(_IDS) & r.columns for r in runs)


def log_curve(runs: Iterable[RunFile]) -> str:
    """What run logs without the metric-vs-k curve would log for it: rankings and labels, in
    ids or spans, those every log has left out."""
    runs = list(runs)
    spans = in_spans(runs)
    label, _, ranking = _SPANS if spans else _IDS
    wanted = [c for c in (ranking, label) if not all(c in r.columns for r in runs)]
    if len(wanted) == 1 or spans:
        return log(wanted or [ranking, label], runs)
    return "log retrieved_ids and relevant_ids (or retrieved_spans and relevant_spans)"


# columns of each answer, not of the test: a promptfoo var holds one value for every provider
_JUDGED = ("faithfulness", "answer_relevance")  # a per-answer score an assertion can give
_ANSWERED = ("cited_ids", "abstained", "human_correct", "human_faithful")


def _promptfoo(columns: list[str], runs: list[RunFile]) -> str:
    """What gives a promptfoo run the columns: a test's var for what belongs to the test (its
    labels, its context), an assertion's score mapped to the column for a judgement of each
    answer (a var, the same for every provider, would make B - A 0), and a run log for what
    promptfoo's output does not hold."""
    tested = [c for c in columns if c not in (*_JUDGED, *_ANSWERED)]
    judged = [c for c in columns if c in _JUDGED]
    answered = [c for c in columns if c in _ANSWERED]
    scores = sorted({s for r in runs for s in r.scores if s.startswith("score_")})
    parts = []
    if tested:
        parts.append(
            f"give each test the var{'s' if len(tested) > 1 else ''} {' and '.join(tested)}"
        )
    if judged:
        mapped = " and ".join(f"--map {c}=score_NAME" for c in judged)
        have = f" (this file's: {', '.join(scores)})" if scores else ""
        parts.append(f"score each answer with an assertion and pass {mapped}{have}")
    if answered:
        parts.append(f"log {' and '.join(answered)} in a run log: promptfoo's output holds none")
    return "; ".join(parts)


def lacking(runs: Iterable[RunFile], *columns: str) -> str:
    """The logs of ``runs`` that have none of ``columns``, as a message names them
    ("b.parquet", "a.parquet and b.parquet"; a log paired with itself once)."""
    return " and ".join(dict.fromkeys(str(r.path) for r in runs if not set(columns) & r.columns))


def _where_lacking(column: str, runs: list[RunFile]) -> str:
    """' in b.parquet' when some of ``runs`` log ``column`` and b.parquet does not, else ''."""
    logged = any(column in run.columns for run in runs)
    missing = lacking(runs, column)
    return f" in {missing}" if logged and missing else ""
