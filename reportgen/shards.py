"""Past one machine: one run log's per-question metrics (the map stage), its Poisson-bootstrap
partial sums, and the merge of shards' sums into intervals of B - A.

Each shard of questions is scored alone (``ragreport metrics``) with the same SQL as
``compare``; its partial sums (reportgen/analysis/poisson.py) add up with the other shards'
into the sums of the whole run, and the runs' sums subtract into those of B - A
(``ragreport merge``).
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .analysis.poisson import (
    COARSE_BITS,
    FIXED_POINT_BITS,
    MIN_INTERVAL_QUESTIONS,
    Interval,
    PartialSums,
    difference,
    merge,
    partial_sums_by_column,
    percentile_interval,
    same_questions,
)
from .analysis.registry import BY_NAME, base_name, public_name
from .analysis.scoring import Scoring
from .analysis.stats import expanded_confidence
from .comparison.compare import too_few_resamples
from .comparison.scored_log import FINGERPRINTS, METRICS, metrics_of
from .diagnosis.diagnose import COSTS
from .errors import InputError, OutputError, not_a_file
from .formatting import fmt_count
from .inputs.load import RunFile, open_log
from .inputs.readers import ReadOptions, named_format
from .inputs.readers.promptfoo import SeveralRuns
from .inputs.scored_table import (
    LABEL_CHANGES,
    LOG_KEY,
    SCORING_KEY,
    Settings,
)
from .output import check_outputs, write_all

SUMS_SCHEMA = pa.schema(
    [
        ("metric", pa.string()),
        ("k", pa.int64()),
        ("gain", pa.string()),
        ("span_coverage", pa.float64()),
        ("seed", pa.uint64()),
        ("n", pa.int64()),
        ("total", pa.int64()),
        ("key_sum", pa.uint64()),
        ("weighted", pa.list_(pa.int64())),
        ("weights", pa.list_(pa.int64())),
        *((f"{kind}_fingerprint", pa.uint64()) for kind in FINGERPRINTS),
        ("fixed_point_bits", pa.int64()),
    ]
)
OPTION_COLUMNS = ("k", "gain", "span_coverage")  # what sums of an earlier ragreport lack
FINGERPRINT_COLUMNS = tuple(f"{kind}_fingerprint" for kind in FINGERPRINTS)  # and these
REQUIRED = frozenset(SUMS_SCHEMA.names) - {*OPTION_COLUMNS, *FINGERPRINT_COLUMNS}
# the columns summed in coarser units, whose sums pass 2^31 at a million questions (poisson.py)
COARSE = ("latency_ms", "context_tokens")


def fixed_point_bits(metric: str) -> int:
    """The fixed point a metric's sums are kept in: every shard takes it from the name."""
    return COARSE_BITS if metric in COARSE else FIXED_POINT_BITS


@dataclass(frozen=True)
class MetricSums:
    """One metric's partial sums in a shard, with the options it was scored with
    (``Scoring.of``) and the fingerprints of its questions (FINGERPRINTS; None: the log lacks
    the columns, or the sums were written by an earlier ragreport)."""

    scoring: Settings
    sums: PartialSums
    fingerprints: dict[str, int | None]


def added(parts: Sequence[MetricSums], name: str) -> MetricSums:
    """Metric ``name``'s sums of disjoint shards added: sums, and fingerprints mod 2^64 (None
    when a shard has none: the shards' sum would not be the run's)."""
    fingerprints: dict[str, int | None] = {}
    for kind in FINGERPRINTS:
        known = [v for p in parts if (v := p.fingerprints[kind]) is not None]
        fingerprints[kind] = sum(known) % 2**64 if len(known) == len(parts) else None
    return MetricSums(parts[0].scoring, merge([p.sums for p in parts], name), fingerprints)


def run_metrics(
    path: Path, reading: ReadOptions, scoring: Scoring, keep: dict[str, str] | None = None
) -> tuple[pa.Table, list[str]]:
    """One log's per-question metrics, in file order, as ``compare`` computes them (after the
    same row checks); columns: question_id, slice, k, n_relevant, prompt_chars (span labels
    only), the metrics, answerable, passages, evidence_in_context, prompt_sizes and
    unranked_samples (of a question of several samples), then the log's score and
    cost columns (``carried``), the label keys, the columns of ``keep`` (column: the flag that
    asked for it) other than slice in one struct (KEPT), and the answer stage. Its schema
    metadata records the options of every metric (``Scoring.of``) for the partial sums, and
    what compare needs of the log (LoggedAs). With it, the warnings to print: the values left
    out of the log, and the score columns the table leaves out (neither numbers nor
    booleans)."""
    try:
        run = open_log(path, "A", reading)
    except SeveralRuns as error:
        advice = (
            "a metrics table holds one run: score each with --run-filter NAME to its own -o file"
        )
        raise InputError(error.advice(advice)) from None
    for column, flag in (keep or {}).items():
        if column not in run.columns:
            raise InputError(
                f"{path}: no column {column!r} (asked for by {flag}); name a column the log has"
            )
    table = metrics_of(run, scoring, {c: f for c, f in (keep or {}).items() if c != "slice"})
    note = _left_out(run, metric_names(table))
    left_out = json.loads(table.schema.metadata[LOG_KEY.encode()])["left_out"]
    return table, [*left_out, *([note] if note else [])]


def reader_notes(table: pa.Table) -> list[str]:
    """What the reader of the log's format said of it (a RAGAS score that failed, the run of a
    promptfoo file read), as a per-question table records it."""
    return list(json.loads(table.schema.metadata[LOG_KEY.encode()])["notes"])


def _left_out(run: RunFile, held: list[str]) -> str | None:
    """The note on the score columns of the log's tool that the table does not hold."""
    left = [c for c in run.scores if c not in held]
    if not left:
        return None
    several = len(left) > 1
    return (
        f"{run.path}: score column{'s' if several else ''} {', '.join(left)} "
        f"{'hold' if several else 'holds'} no number or true/false value here, so the "
        f"per-question table leaves {'them' if several else 'it'} out"
    )


def metric_names(table: pa.Table) -> list[str]:
    """The metric columns of a per-question table, in report order, then the log's score and
    cost columns it carries (those its scoring metadata names)."""
    carried = (
        json.loads(table.schema.metadata[SCORING_KEY.encode()]) if table.schema.metadata else {}
    )
    return [m for m in METRICS if m in table.column_names] + [
        m for m in carried if m not in METRICS and m in table.column_names
    ]


def sums_table(table: pa.Table, n_boot: int, seed: int, log: Path) -> pa.Table:
    """The partial sums of every metric of a per-question table (of ``metrics_of``), one row
    per metric; a column whose sums pass 64-bit fixed point is refused naming ``log``."""
    names = metric_names(table)
    if not names:
        return SUMS_SCHEMA.empty_table()
    values = np.column_stack([table[m].to_numpy(zero_copy_only=False).astype(float) for m in names])
    ids = table["question_id"].to_pylist()
    bits = [fixed_point_bits(m) for m in names]
    labels = [f"{log}: column {m}" for m in names]
    sums = partial_sums_by_column(ids, values, n_boot, seed, bits, labels)
    settings = json.loads(table.schema.metadata[SCORING_KEY.encode()])
    return sums_rows(
        {
            m: MetricSums(tuple(settings[m]), s, _fingerprints(table, ~np.isnan(values[:, i])))
            for i, (m, s) in enumerate(zip(names, sums, strict=True))
        }
    )


def _fingerprints(table: pa.Table, kept: np.ndarray) -> dict[str, int | None]:
    """The sums mod 2^64 of the keys of the questions ``kept`` (those with a value of the
    metric), by fingerprint: the same whatever the sharding, like the key sum."""
    sums: dict[str, int | None] = {}
    for kind in FINGERPRINTS:
        keys = table[f"{kind}_key"]
        if keys.null_count:  # all null: the log lacks the columns
            sums[kind] = None
            continue
        with np.errstate(over="ignore"):
            own = keys.to_numpy(zero_copy_only=False).astype(np.uint64)[kept]
            sums[kind] = int(own.sum(dtype=np.uint64))
    return sums


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def check_metrics_outputs(
    log: Path, output: Path, sums_path: Path | None, read: Mapping[Path, str]
) -> None:
    """Refuse output paths that cannot be written (check_outputs) before the log is scored:
    ``read`` holds the other files the command reads (--qrels, --passages, a --map file), by
    option, which an output must not overwrite either."""
    given = {"-o": output, **({"--partial-sums": sums_path} if sums_path else {})}
    for option, path in given.items():
        # compare knows the tables by their metadata, whatever their name; other tools do not
        named = named_format(path)
        if named not in (None, "parquet"):
            raise OutputError(
                f"{option} {path}: metrics writes Parquet, which a {path.suffix} name would "
                f"have read as {named}; give a path ending in .parquet"
            )
    # both paths checked together: one path given twice would be a single entry of ``files``
    check_outputs([output, *([sums_path] if sums_path else [])], inputs=[log], read=read)


def write_metrics(
    log: Path,
    table: pa.Table,
    output: Path,
    sums_path: Path | None,
    n_boot: int,
    seed: int,
    read: Mapping[Path, str],
) -> None:
    """Write the per-question table and, when asked, its partial sums (both or neither)."""
    check_metrics_outputs(log, output, sums_path, read)
    files = {output: _parquet(table)}
    if sums_path is not None:
        files[sums_path] = _parquet(sums_table(table, n_boot, seed, log))
    write_all(files, inputs=[log], read=read)


def read_sums(path: Path) -> dict[str, MetricSums]:
    """The partial sums a ``metrics --partial-sums`` file holds, by metric (sums_by_metric)."""
    if not path.is_file():
        raise InputError(
            f"{path}: {not_a_file(path)}; pass a file written by ragreport metrics --partial-sums"
        )
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        raise InputError(f"{path}: cannot be read as partial sums ({error})") from None
    return sums_by_metric(_conformed(path, table), path)


def sums_by_metric(table: pa.Table, source: Path | str) -> dict[str, MetricSums]:
    """The rows of a sums table (SUMS_SCHEMA) by metric, ``source`` naming it in a refusal. A
    table holding a metric in several rows (shards' sums gathered into one file, as DuckDB's
    COPY of their glob or pandas' concat writes them) adds them up as ``merge`` adds files,
    after the same checks: read as the last row of each, the sums of five shards of 20,000
    questions had merged as the last shard's alone (9,997 questions, or in the other order 1)."""
    rows = [(row["metric"], sums_of_row(row)) for row in table.to_pylist()]
    for number, (metric, m) in enumerate(rows, start=1):
        _check_row(f"{source}, row {number} ({metric})", m.sums)
    if len({metric for metric, _ in rows}) == len(rows):
        return dict(rows)
    labels = [f"{source}, row {number}" for number in range(1, len(rows) + 1)]
    shards = [{metric: m} for metric, m in rows]
    _check_shared(labels, shards)
    _check_disjoint(labels, shards)
    return {
        metric: added([m for name, m in rows if name == metric], metric)
        for metric in dict.fromkeys(metric for metric, _ in rows)
    }


def _check_row(where: str, sums: PartialSums) -> None:
    """Refuse a row of partial sums no shard can give (_row_problem)."""
    problem = _row_problem(sums)
    if problem:
        raise InputError(
            f"{where}: {problem}, which no shard's sums can hold; write the file again with "
            "ragreport metrics --partial-sums"
        )


def _row_problem(sums: PartialSums) -> str | None:
    """Replicates counted two ways, a negative weight, no question, or questions no replicate
    drew (probability e^-(n x replicates), under e^-200 for the 100 replicates and 2 questions
    an interval needs): the interval would have indexed past its replicates or divided by 0."""
    if len(sums.weighted) != len(sums.weights):
        return f"weighted holds {len(sums.weighted)} replicates and weights {len(sums.weights)}"
    if (sums.weights < 0).any():
        return "a replicate's weight is negative"
    if sums.n < 1:
        return f"it counts {sums.n} questions"
    if sums.n >= MIN_INTERVAL_QUESTIONS and not sums.weights.any():
        return f"no replicate drew any of its {sums.n} questions (every weight is 0)"
    return None


def _conformed(path: Path, table: pa.Table) -> pa.Table:
    """A sums table as SUMS_SCHEMA, from one another tool re-saved: DuckDB marks columns NOT
    NULL, pandas writes large strings and k as double (its integers cannot be empty). A column
    is taken when it casts to its type without loss; k 5.5 is refused, naming the column."""
    have = set(table.column_names)
    for name in FINGERPRINT_COLUMNS:  # sums of an earlier ragreport: merged, unchecked
        if name not in have:
            table = table.append_column(name, pa.nulls(table.num_rows, pa.uint64()))
    if "fixed_point_bits" not in have and {"metric", "weighted"} <= have:  # an earlier one's
        bits = pa.array([FIXED_POINT_BITS] * table.num_rows, pa.int64())
        table = table.append_column("fixed_point_bits", bits)
    missing = [name for name in SUMS_SCHEMA.names if name not in table.column_names]
    if missing and {"metric", "weighted"} <= have and set(missing) <= set(OPTION_COLUMNS):
        raise InputError(
            f"{path}: partial sums without the options they were scored with (no column "
            f"{', '.join(missing)}: an earlier ragreport); write them again with ragreport "
            "metrics --partial-sums"
        )
    if missing:
        raise InputError(
            f"{path}: not a file of partial sums (no column {', '.join(missing)}); write one "
            "with ragreport metrics --partial-sums"
        )
    columns = []
    for field in SUMS_SCHEMA:
        column = table[field.name]
        try:
            columns.append(column.cast(field.type, safe=True))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as error:
            reason = str(error).splitlines()[0]
            raise InputError(
                f"{path}: column {field.name} ({column.type}) does not convert to {field.type} "
                f"without loss ({reason}); write the file with ragreport metrics --partial-sums"
            ) from None
        if field.name in REQUIRED and column.null_count:
            row = column.to_pylist().index(None)
            raise InputError(
                f"{path}: column {field.name} is empty in row {row + 1}; write the file with "
                "ragreport metrics --partial-sums"
            )
    return pa.Table.from_arrays(columns, schema=SUMS_SCHEMA)


def sums_of_row(row: dict[str, Any]) -> MetricSums:
    return MetricSums(
        (row["k"], row["gain"], row["span_coverage"]),
        PartialSums(
            seed=row["seed"],
            n=row["n"],
            total=row["total"],
            key_sum=row["key_sum"],
            weighted=np.array(row["weighted"], dtype=np.int64),
            weights=np.array(row["weights"], dtype=np.int64),
            bits=row["fixed_point_bits"],
        ),
        {kind: row[f"{kind}_fingerprint"] for kind in FINGERPRINTS},
    )


def sums_rows(sums: dict[str, MetricSums]) -> pa.Table:
    """Partial sums by metric as the table a sums file holds."""
    rows = []
    for name, m in sums.items():
        k, gain, coverage = m.scoring
        s = m.sums
        rows.append(
            {
                "metric": name,
                "k": k,
                "gain": gain,
                "span_coverage": coverage,
                "seed": s.seed,
                "n": s.n,
                "total": s.total,
                "key_sum": s.key_sum,
                "weighted": s.weighted.tolist(),
                "weights": s.weights.tolist(),
                **{f"{kind}_fingerprint": m.fingerprints[kind] for kind in FINGERPRINTS},
                "fixed_point_bits": s.bits,
            }
        )
    return pa.Table.from_pylist(rows, schema=SUMS_SCHEMA)


@dataclass(frozen=True)
class MergedMetric:
    """One metric over every shard: each run's mean with its interval, and B - A's (None when
    one run lacks the metric or the runs' sums cover different questions: ``why`` says which)."""

    name: str  # public name: ndcg@5 when scored at --k 5
    a: Interval | None  # None: not in the run's sums
    b: Interval | None
    diff: Interval | None
    why: str  # why there is no difference
    lower_is_better: bool = False  # a cost column (latency_ms, cost_usd, context_tokens)


def compare_gives(name: str) -> str:
    """What compare's interval is where every question has the same B - A, which merge's
    resampling cannot vary: of a 0/1 outcome Tango's, of another metric of known range the
    bound on the questions that could differ unseen (a 0/1 one may be either: its values
    decide), of a cost or a score of unknown range the one value."""
    metric = BY_NAME.get(base_name(name))
    if metric is None or metric.bounds is None:
        return "compare's is that one value too: the range of a cost or score is not known"
    if metric.binary:
        return "compare gives Tango's score interval from the logs or tables"
    return (
        "compare gives one from the logs or tables: Tango's score interval where every value "
        "is 0 or 1, else one as wide as the questions that could differ unseen allow"
    )


def _described(scoring: Settings, other: Settings) -> str:
    """The options of ``scoring`` that differ from ``other``'s, as the flags that set them."""
    k, gain, coverage = scoring
    parts = []
    if k != other[0]:
        parts.append(f"--k {k}" if k is not None else "no --k (each question's context_ids)")
    if gain != other[1]:
        parts.append(f"--gain {gain}")
    if coverage != other[2]:
        parts.append(f"--span-coverage {coverage:g}" if coverage is not None else "no span labels")
    return ", ".join(parts)


def _check_shared(parts: Sequence[Path | str], shards: Sequence[dict[str, MetricSums]]) -> None:
    """Refuse shards (of either run) computed with another seed, number of replicates, unit of
    the fixed point or scoring option than the first that has the metric: their sums do not add
    up, or add up to a mixture."""
    drawn: tuple[Path | str, PartialSums] | None = None
    scored: dict[str, tuple[Path | str, Settings]] = {}
    units: dict[str, tuple[Path | str, int]] = {}
    for path, shard in zip(parts, shards, strict=True):
        for metric, m in shard.items():
            drawn = drawn or (path, m.sums)
            first, s = drawn
            if (m.sums.seed, m.sums.n_boot) != (s.seed, s.n_boot):
                raise InputError(
                    f"{path}: partial sums of seed {m.sums.seed} with {m.sums.n_boot} "
                    f"replicates, but {first} has seed {s.seed} with {s.n_boot}; compute every "
                    "shard of both runs with the same --seed and --n-boot"
                )
            first, bits = units.setdefault(metric, (path, m.sums.bits))
            if m.sums.bits != bits:  # a file of an earlier ragreport, whose units were 2^-32
                raise InputError(
                    f"{path}: {metric} summed in units of 2^-{m.sums.bits}, but {first} in "
                    f"units of 2^-{bits}; write every shard of both runs with the same version "
                    "of ragreport"
                )
            first, scoring = scored.setdefault(metric, (path, m.scoring))
            if m.scoring != scoring:
                raise InputError(
                    f"{path}: {metric} scored with {_described(m.scoring, scoring)}, but {first} "
                    f"with {_described(scoring, m.scoring)}; score every shard of both runs with "
                    "the same --k, --gain and --span-coverage"
                )


def _check_own(a_parts: Sequence[Path], b_parts: Sequence[Path]) -> None:
    """Refuse a file given as a shard of both runs, unless both runs are the same files (a run
    merged with itself, which the fingerprints then name): one of A's shards passed to B too
    had merged silently, its questions compared with themselves."""
    a_files, b_files = ({p.resolve() for p in parts} for parts in (a_parts, b_parts))
    both = [p for p in b_parts if p.resolve() in a_files]
    if both and a_files != b_files:
        raise InputError(
            f"{both[0]}: given as a shard of both runs (--a and --b); pass each run its own "
            "shards' sums"
        )


def _check_disjoint(parts: Sequence[Path | str], shards: Sequence[dict[str, MetricSums]]) -> None:
    """Refuse a shard given twice (or a copy of one): two shards of distinct questions have
    the same key sum with probability 2^-64. Shards that share only some questions cannot be
    told from their sums."""
    seen: dict[tuple[str, int, int], int] = {}
    for i, shard in enumerate(shards):
        for metric, m in shard.items():
            first = seen.setdefault((metric, m.sums.n, m.sums.key_sum), i)
            if first != i:
                raise InputError(
                    f"{parts[i]}: holds the same questions as {parts[first]}; pass each shard "
                    "of a run once"
                )


@dataclass(frozen=True)
class Merged:
    """What ``merge`` prints: a line per metric, then the warnings about the runs."""

    metrics: list[MergedMetric]
    warnings: list[str]


def merge_runs(
    a_parts: Sequence[Path], b_parts: Sequence[Path], confidence: float, strict: bool = False
) -> Merged:
    """Add each run's shards, then take the intervals of the metrics both runs have. A shard
    without a metric (none of its questions has a value) adds no question to it; a metric whose
    runs cover different questions gets each run's interval, not B - A's. ``strict``: refuse
    runs scored on different golden labels, as ``compare --strict`` does."""
    read = [[read_sums(p) for p in parts] for parts in (a_parts, b_parts)]
    _check_own(a_parts, b_parts)
    _check_shared([*a_parts, *b_parts], [*read[0], *read[1]])
    runs = []
    for parts, shards in zip((a_parts, b_parts), read, strict=True):
        _check_disjoint(parts, shards)
        logged = _in_order(shards)
        runs.append({m: added([s[m] for s in shards if m in s], m) for m in logged})
    a, b = runs
    both = [metric for metric in a if metric in b]
    if not both:
        raise InputError(
            f"no metric has partial sums in both runs (A: {', '.join(a) or 'none'}; B: "
            f"{', '.join(b) or 'none'}); pass the sums of shards that hold questions with values"
        )
    paired = [metric for metric in both if same_questions(a[metric].sums, b[metric].sums)]
    if not paired:
        first = both[0]
        n_a, n_b = a[first].sums.n, b[first].sums.n
        fewer = "" if n_a == n_b else f" (a shard of run {'A' if n_a < n_b else 'B'} missing?)"
        raise InputError(
            f"the runs' partial sums cover different questions: {first} over {n_a:,} in run A "
            f"and {n_b:,} in run B{fewer}; pass the sums of every shard of both runs, computed "
            "over the same questions"
        )
    a_sums, b_sums = ({m: s.sums for m, s in run.items()} for run in runs)
    scoring = {**b, **a}  # the options of every metric, the same in both runs
    metrics = [
        _merged(metric, scoring[metric].scoring[0], a_sums, b_sums, metric in paired, confidence)
        for metric in _in_order([scoring])
    ]
    warnings = [
        *_fingerprint_warnings([(a[m], b[m]) for m in paired], strict),
        # every shard has the same replicates (_check_shared), each interval drawn from them
        *too_few_resamples(a[paired[0]].sums.n_boot, confidence, _resampled(metrics, confidence)),
    ]
    return Merged(metrics, warnings)


def _in_order(shards: Sequence[dict[str, Any]]) -> list[str]:
    """The metrics of any of ``shards`` (sums by metric): the report's own in its order, then a
    log's score and cost columns as first met."""
    seen = list(dict.fromkeys(m for shard in shards for m in shard))
    return [m for m in METRICS if m in seen] + [m for m in seen if m not in METRICS]


def _resampled(metrics: list[MergedMetric], confidence: float) -> list[tuple[float, str, str]]:
    """Each interval merge prints, as too_few_resamples reads it: the expanded percentile's
    level at its questions (percentile_interval), its name, its questions in words; one whose
    replicates are all one value has bounds no number of them moves, and is left out."""
    return [
        (expanded_confidence(confidence, interval.n), name, fmt_count(interval.n, "question"))
        for m in metrics
        for name, interval in (
            (f"B − A in {m.name}", m.diff),
            (f"A's {m.name}", m.a),
            (f"B's {m.name}", m.b),
        )
        if interval is not None and interval.low is not None and interval.low != interval.high
    ]


def _fingerprint_warnings(
    paired: Sequence[tuple[MetricSums, MetricSums]], strict: bool
) -> list[str]:
    """Compare the runs' fingerprints over the questions of each metric they share: golden
    labels that changed (compared kind by kind where both runs log them, as ``compare`` does),
    and a run merged with itself. The added sums cannot say which shard's labels changed, so
    the refusal names none (it had named B's first file, whose labels need not be those that
    changed)."""
    if any(s.fingerprints["outputs"] is None for pair in paired for s in pair):
        return [
            "the partial sums of one run have no fingerprints (an earlier ragreport), so "
            "whether the golden set changed between the runs could not be checked; write them "
            "again with ragreport metrics --partial-sums"
        ]
    changed = [
        LABEL_CHANGES[kind]
        for kind in LABEL_CHANGES
        if any(
            None not in (a.fingerprints[kind], b.fingerprints[kind])
            and a.fingerprints[kind] != b.fingerprints[kind]
            for a, b in paired
        )
    ]
    if changed and strict:
        raise InputError(
            f"the golden set changed between the runs ({', '.join(changed)}), in some shard "
            "the sums cannot name; score both runs on one frozen label set, or drop --strict to "
            "see the comparison with a warning"
        )
    if changed:
        return [
            f"The golden set changed between the runs ({', '.join(changed)}): each run was "
            "scored on its own labels; the sums cannot tell on which questions"
        ]
    if all(a.fingerprints == b.fingerprints for a, b in paired):
        return ["A and B are the same run: their outputs and labels have the same fingerprints"]
    return []


def _merged(
    metric: str,
    k: int | None,
    a: dict[str, PartialSums],
    b: dict[str, PartialSums],
    paired: bool,
    confidence: float,
) -> MergedMetric:
    """One metric of the runs' merged sums (``paired``: over the same questions in both)."""
    name = public_name(BY_NAME[metric], k) if k is not None else metric
    a_run, b_run = (
        percentile_interval(run[metric], confidence) if metric in run else None for run in (a, b)
    )
    cost = metric in COSTS
    if paired:
        diff = percentile_interval(difference(a[metric], b[metric]), confidence)
        return MergedMetric(name, a_run, b_run, diff, "", cost)
    if metric in a and metric in b:
        why = f"the runs' sums cover different questions ({a[metric].n:,} and {b[metric].n:,})"
    else:
        why = f"in run {'A' if metric in a else 'B'}'s sums only"
    return MergedMetric(name, a_run, b_run, None, why, cost)
