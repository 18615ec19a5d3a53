"""The ``ragreport`` command line: thin commands that call into the package."""

from __future__ import annotations

import copy
import functools
import re
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import fields
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from . import __version__
from .epoch import source_date_epoch
from .errors import InputError, RagreportError
from .formatting import fmt_count, fmt_diff, fmt_interval, metric_label, one_line
from .limits import MAX_N_BOOT
from .output import MAX_JSON_BYTES, onto_stdout, unnamed
from .progress import SHOW_AFTER, shown

if TYPE_CHECKING:
    from .analysis.gates import Requirements
    from .analysis.metrics import Options
    from .inputs.load import Source
    from .inputs.readers import ReadOptions

_Reading = Callable[[Sequence[Path | None]], "tuple[ReadOptions, ...]"]  # of these run logs
# Paths are checked by the package (load.open_run, output.check_outputs), so that a folder or an
# unreadable file gets the tool's one-line error rather than click's usage block.
_PATH = click.Path(path_type=Path)


class _OutputPath(click.Path):
    """A path to write: refused where its text alone names no file (output.unnamed);
    ``-`` is standard output, as other tools read it (it wrote a file named ``-``)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "-":
            return Path("/dev/stdout")
        if isinstance(value, str) and (problem := unnamed(value)):
            self.fail(problem, param, ctx)
        return super().convert(value, param, ctx)


_OUTPUT = _OutputPath(path_type=Path)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _echo(line: str, err: bool = False) -> None:
    """Print one line: the labels, slice values, paths and rules it holds stay on it, and no
    label makes it a CI workflow command: GitHub's runner reads one in a line whose first
    non-blank characters are ``::`` (a study's candidate begins its verdict line, and its
    indented regression lines), and in ``##[`` anywhere. The first colon, or the second ``#``,
    is written as its escape, as a control character is."""
    line = _COMMAND_START.sub(r"\1\\x3a", one_line(line)).replace("##[", "#\\x23[")
    click.echo(line, err=err)


_COMMAND_START = re.compile(r"^(\s*):(?=:)")


class _Finite(click.FloatRange):
    """A FloatRange that also refuses nan (which every comparison lets through)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if number != number:
            self.fail(f"{value!r} is not a number.", param, ctx)
        return number


class _Once(click.Option):
    """An option of one value that refuses a second: click keeps the last silently, so
    ``--inconclusive fail --inconclusive pass`` passed the job. The parser collects every value
    given; more than one is bad input, naming the option and each value. Flags and repeatable
    options are click's own."""

    @property
    def _one_value(self) -> bool:
        return not (self.multiple or self.is_flag or self.count)

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        if not self._one_value:
            return super().add_to_parser(parser, ctx)
        parser.add_option(
            obj=self, opts=self.opts, dest=self.name, action="append", nargs=self.nargs
        )

    def consume_value(self, ctx: click.Context, opts: Any) -> Any:
        given = opts.get(self.name)
        if self._one_value and isinstance(given, list):  # each value the command line gave
            if len(given) > 1:
                times = "twice" if len(given) == 2 else f"{len(given)} times"
                raise InputError(
                    f"{self.opts[-1]} given {times} ({', '.join(map(str, given))}): give it once"
                )
            opts = {**opts, self.name: given[0]}
        return super().consume_value(ctx, opts)


_option = functools.partial(click.option, cls=_Once)  # every option of every command


class _UserError(click.ClickException):
    """A RagreportError as click shows it: one line on stderr, its exit code, no traceback."""

    exit_code = RagreportError.exit_code

    def show(self, file: IO[Any] | None = None) -> None:
        _echo(f"ragreport: error: {self.message}", err=True)


class _Command(click.Command):
    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        """The parse; a usage error (an unknown option, a missing log) is one line, as every
        refusal is, not click's usage block of four."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as error:
            raise _UserError(_usage(error, f"ragreport {info_name} --help")) from None

    def invoke(self, ctx: click.Context) -> Any:
        refuse_undecodable(ctx)
        return super().invoke(ctx)


def _usage(error: click.UsageError, helped: str) -> str:
    """A usage error's message and where the usage is: "No such option '--bogus'; see
    'ragreport compare --help'". An option's value keeps its own words (they name the fix)."""
    message = error.format_message()
    if isinstance(error, click.BadParameter):
        return message
    return f"{message.rstrip('.')}; see '{helped}'"


def refuse_undecodable(ctx: click.Context) -> None:
    """Every argument of a parse of ``ctx``'s command checked by ``check_decodable``, named by
    its flag (an argument, such as a log path, by its value alone)."""
    for param in ctx.command.params:
        given = ctx.params.get(param.name or "")
        named = param.opts[-1] if param.opts and param.opts[0].startswith("-") else ""
        for value in given if isinstance(given, tuple | list) else (given,):
            check_decodable(value, named)


def check_decodable(value: object, named: str = "") -> None:
    """An argument (a label, a rule, a column, a path) holding bytes that are not UTF-8 (Python
    reads them as lone surrogates) is bad input: Arrow cannot open such a path and no output
    can record such a text, and either ended in a traceback with exit 1, a rule's failure to
    CI."""
    if isinstance(value, str | Path) and _SURROGATE.search(str(value)):
        fix = "rename the file" if isinstance(value, Path) else "give it as UTF-8 text"
        raise InputError(
            f"{named}{' ' if named else ''}{str(value)!r}: holds bytes that are not UTF-8; {fix}"
        )


class _Group(click.Group):
    command_class = _Command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            source_date_epoch()  # before a command imports scipy, which parses it too
            return super().invoke(ctx)
        except RagreportError as error:
            raise _UserError(str(error)) from None
        except click.UsageError as error:  # an option's value, a command unknown: one line
            raise _UserError(_usage(error, "ragreport --help")) from None


READING = ("log_format", "qrels", "rel_level", "mapping", "run_filters", "passages")  # in order


def reading_from(values: dict[str, Any]) -> _Reading:
    """The ReadOptions of the logs given to it (None: a table in memory), from the reading
    parameters among ``values`` (a parse's)."""
    from .inputs.readers import read_options

    return functools.partial(read_options, *(values[name] for name in READING))


def _reading_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options that say how to read run logs of other formats (compare and convert), given
    to the command as one ``reading`` argument: the ReadOptions of n logs."""
    from .inputs.readers import FORMATS

    @functools.wraps(command)
    def with_reading(*args: Any, **kwargs: Any) -> Any:
        reading = reading_from(kwargs)
        others = {name: value for name, value in kwargs.items() if name not in READING}
        return command(*args, reading=reading, **others)

    options = [
        _option(
            "--format",
            "log_format",
            multiple=True,
            type=click.Choice(FORMATS),
            help="Format of the run logs, once for every log or once per log, in order "
            "[default: from the extension; .json is promptfoo or BEIR by content; a table "
            "with user_input is RAGAS].",
        ),
        _option(
            "--qrels",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="Relevance judgements of TREC runs (qid iter docno rel) or BEIR results "
            "(query-id corpus-id score); a log beside them with labels of its own keeps its "
            "own.",
        ),
        _option(
            "--rel-level",
            type=click.IntRange(min=1),
            default=1,
            show_default=True,
            help="Lowest grade of the --qrels file that is relevant (trec_eval's -l).",
        ),
        _option(
            "--map",
            "mapping",
            multiple=True,
            metavar="COLUMN=SOURCE",
            help="Read run-log COLUMN from the file's column SOURCE; repeatable, or the path "
            "of a file of such lines.",
        ),
        _option(
            "--run-filter",
            "run_filters",
            multiple=True,
            metavar="NAME",
            help="The run to read from a promptfoo file holding several (provider or prompt "
            "label); once for every log or once per log [default: compare takes every run "
            "of a file given alone; validate and convert need one].",
        ),
        _option(
            "--passages",
            multiple=True,
            type=click.Path(dir_okay=False, path_type=Path),
            metavar="FILE",
            help="Passage table (passage_id, doc_id, start, end; Parquet, CSV or TSV) mapping "
            "a log's retrieved_ids and context_ids to document spans, for relevant_spans "
            "labels; once for every log or once per log, in order.",
        ),
    ]
    for option in reversed(options):
        with_reading = option(with_reading)
    return with_reading


def _margins(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[tuple[str, float], ...]:
    return tuple(_margin(value) for value in values)


def _margin(value: str) -> tuple[str, float]:
    """'0.02' -> ("", 0.02) for every metric; 'ndcg@5=0.02' -> ("ndcg@5", 0.02)."""
    metric, _, number = value.rpartition("=")
    try:
        margin = float(number)
    except ValueError:
        margin = -1.0
    if not margin >= 0 or margin == float("inf"):
        raise click.BadParameter(
            f"{value!r}: give a number >= 0, for all metrics (0.02) or one (correct=0.02)",
            param_hint="'--margin'",
        )
    return metric, margin


def _holdout(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from .analysis.holdout import parse

    try:
        parse(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r}: give COLUMN=VALUE (split=test) or a fraction between 0 and 1 (0.3)",
            param_hint="'--holdout'",
        ) from None
    return value


def settings_from(
    command: click.Command,
    values: dict[str, Any],
    sources: Sequence[Source] = (),
    unset: Collection[str] = (),
) -> tuple[Options, Requirements | None]:
    """The Options and gate rules of a parse of ``compare`` (the command line's, or the Python
    API's), each field of Options read from the parameter of the flag its definition names;
    the scoring options not given (``unset``: parameter names) are those the per-question
    tables among ``sources`` were scored with (``scored_as``)."""
    from .analysis.gates import requirements_from
    from .analysis.metrics import Options
    from .comparison.scored_pairs import scored_as

    by_flag = {flag: str(p.name) for p in command.params for flag in p.opts}
    param = {f.name: by_flag[f.metadata["flag"]] for f in fields(Options)}
    options = Options(**{name: values[p] for name, p in param.items()})
    options = scored_as(options, sources, [name for name, p in param.items() if p in unset])
    requirements = requirements_from(values["rules"], values["gate_file"], values["inconclusive"])
    return options, requirements


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="ragreport")
def cli() -> None:
    """Decide, with evidence, whether variant B of a RAG assistant is better than variant A."""


_quiet = _option(
    "--quiet",
    is_flag=True,
    help=f"Show no progress on stderr (shown on a terminal once a run takes {SHOW_AFTER:g} s).",
)

_EXIT_CODES = """\b
Exit codes: 0 every rule passes (or no rule is given), 1 a rule fails (all
outputs are written first), 2 bad input or a bad rule (nothing is written),
130 stopped by Ctrl-C (nothing is written)."""


@cli.command(epilog=_EXIT_CODES)
@click.argument("runs", nargs=-1, required=True, type=_PATH, metavar="BASELINE CANDIDATE...")
@_option(
    "--label",
    "labels",
    multiple=True,
    metavar="LABEL",
    help="Name of each run, in the order of the logs; repeatable [default: A and B for two "
    "logs, else each file's stem].",
)
@_option(
    "--baseline",
    metavar="LABEL",
    help="The run every other is compared with [default: the first log].",
)
@_option(
    "-o", "--output", required=True, type=_OUTPUT, metavar="FILE", help="Path of the HTML report."
)
@_option(
    "--json",
    "json_path",
    type=_OUTPUT,
    metavar="FILE",
    help="Path of the JSON of every number [default: the report's path with .json].",
)
@_option(
    "--k",
    type=click.IntRange(min=1),
    help="Prompt cutoff: passages of retrieved_ids the generator received "
    "[default: each question's context_ids].",
)
@_option(
    "--gain",
    type=click.Choice(["exponential", "linear"]),
    default="exponential",
    show_default=True,
    help="nDCG gain of a passage of grade g: 2^g - 1 or g.",
)
@_option(
    "--n-boot",
    type=click.IntRange(min=100, max=MAX_N_BOOT),
    default=5000,
    show_default=True,
    help="Bootstrap resamples for each interval: 1000 for a draft, 5000 or more to decide.",
)
@_option(
    "--confidence",
    type=_Finite(0.5, 1, max_open=True),
    default=0.95,
    show_default=True,
    help="Confidence level of the intervals; each bound is one-sided at (1 + confidence) / 2.",
)
@_option(
    "--seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Seed of the bootstrap: the same inputs and seed give the same numbers, whatever the "
    "order of the logs' rows.",
)
@_option(
    "--slice",
    "slices",
    multiple=True,
    metavar="COLUMN",
    help="Column to break every metric down by; repeatable [default: slice].",
)
@_option(
    "--strict",
    is_flag=True,
    help="Refuse to compare (exit 2) when the golden labels differ between the runs.",
)
@_option(
    "--supported-threshold",
    type=_Finite(0, 1),
    default=None,
    help="Faithfulness from which an answer counts as supported by its context "
    "[default: 1 for 0/1 scores, 0.8 for graded ones].",
)
@_option(
    "--margin",
    "margins",
    multiple=True,
    metavar="[METRIC=]M",
    callback=_margins,
    help="Smallest difference that matters, for one metric (correct=0.02) or all (0.02); "
    "the verdict then says whether B is better by at least M, by less, or equivalent "
    "within M; repeatable.",
)
@_option(
    "--cluster",
    metavar="COLUMN",
    help="Column naming the document or conversation a question is about: questions that "
    "share it are resampled and permuted together.",
)
@_option(
    "--span-coverage",
    type=_Finite(0, 1),
    default=0.0,
    show_default=True,
    help="Share of a labelled span (relevant_spans) a passage must cover to count as relevant "
    "to it; 0: any overlap.",
)
@_option(
    "--holdout",
    metavar="COLUMN=VALUE|FRACTION",
    callback=_holdout,
    help="Choose the best candidate on the other questions and report its difference on "
    "these only: those whose COLUMN is VALUE, or a seeded FRACTION drawn within each slice.",
)
@_option(
    "--metric",
    "score_columns",
    multiple=True,
    metavar="COLUMN",
    help="Compare a per-question column every log has as a metric (booleans: fixed/broken; "
    "numbers: continuous); repeatable. RAGAS and promptfoo scores are compared without it.",
)
@_option(
    "--lower-is-better",
    multiple=True,
    metavar="COLUMN",
    help="Compare COLUMN as a metric where less is better (latency_ms, cost_usd, tokens); "
    "repeatable.",
)
@_option(
    "--require",
    "rules",
    multiple=True,
    metavar="RULE",
    help="Gate rule on B - A, repeatable: 'correct >= -0.02', 'ndcg@5 > 0', "
    "'latency_ms <= 150', 'candidate.correct >= 0.8', 'correct[slice] >= -0.05', "
    "'faithfulness within 0.01'. See README, Use in CI.",
)
@_option(
    "--gate",
    "gate_file",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='TOML file of gate rules: require = ["RULE", ...]; repeatable, every file\'s rules '
    "checked.",
)
@_option(
    "--inconclusive",
    type=click.Choice(["fail", "pass"]),
    default="fail",
    show_default=True,
    help="What an inconclusive rule counts as: its interval straddles its margin, or the "
    "paired test does not find the difference its outcome needs.",
)
@_option(
    "--markdown",
    "markdown_path",
    type=_OUTPUT,
    help="Path of a Markdown summary for a pull request or a CI job page.",
)
@_option("--junit", "junit_path", type=_OUTPUT, help="Path of a JUnit XML: one test case per rule.")
@_option(
    "--per-question",
    "per_question_path",
    type=_OUTPUT,
    metavar="PATH",
    help="Path of a Parquet of the per-question rows (each metric of each run, failure "
    "classes), which the JSON then leaves out [default: in the JSON while it stays under "
    f"{MAX_JSON_BYTES // 1_000_000} MB (about 90,000 rows of ten metrics), else beside it as "
    ".per-question.parquet].",
)
@_quiet
@_reading_options
def compare(
    runs: tuple[Path, ...],
    labels: tuple[str, ...],
    baseline: str | None,
    output: Path,
    json_path: Path | None,
    k: int | None,
    gain: str,
    n_boot: int,
    confidence: float,
    seed: int,
    slices: tuple[str, ...],
    strict: bool,
    supported_threshold: float | None,
    margins: tuple[tuple[str, float], ...],
    cluster: str | None,
    span_coverage: float,
    holdout: str | None,
    score_columns: tuple[str, ...],
    lower_is_better: tuple[str, ...],
    rules: tuple[str, ...],
    gate_file: tuple[Path, ...],
    inconclusive: str,
    markdown_path: Path | None,
    junit_path: Path | None,
    per_question_path: Path | None,
    quiet: bool,
    reading: _Reading,
) -> None:
    """Compare a baseline run log with one or more candidate logs (one row per question)
    into an HTML report: BASELINE CANDIDATE [CANDIDATE ...].

    Run logs are Parquet (a file, a folder of shards or a quoted glob), CSV, TSV, JSONL, TREC
    runs, RAGAS results, promptfoo output or BEIR results; see --format. A promptfoo file of
    several providers or prompts, given alone, is all of its runs (the first the baseline).
    Any log may be given instead as the per-question table ragreport metrics wrote of it; the
    logs beside such tables are then scored alike. --k, --gain and --span-coverage, when not
    given, are the ones the tables were scored with.
    """
    from .reporters.html import svg_process

    with svg_process.started():  # vl-convert starts while the statistics' libraries load
        from .analysis.gates import EXIT_FAIL
        from .pipeline import Outputs, files_read, make_report

        context = click.get_current_context()
        default = ParameterSource.DEFAULT
        unset = [n for n in context.params if context.get_parameter_source(n) is default]
        options, requirements = settings_from(context.command, context.params, runs, unset)
        for warning in requirements.warnings if requirements else ():
            _echo(f"ragreport: warning: {warning}", err=True)
        outputs = Outputs(
            output,
            json_path or output.with_suffix(".json"),
            markdown_path,
            junit_path,
            per_question_path,
            json_given=json_path is not None,
        )
        readings = reading(runs)
        replaced = outputs.replaced_run_id()  # its per-question file goes with it
        with shown(sys.stderr, quiet):
            study, sidecar = make_report(
                list(runs),
                options,
                outputs,
                requirements,
                readings,
                labels,
                baseline,
                files_read(context.params, readings),
            )
    for note in dict.fromkeys(note for pair in study.pairs for note in pair.margin_notes):
        _echo(f"ragreport: warning: {note}", err=True)
    err = onto_stdout(outputs.written(sidecar))  # the report is stdout: the lines go beside
    for pair in study.pairs:
        named = f"{pair.runs['b'].label}: " if study.family is not None else ""
        _echo(f"{named}{pair.verdict.outcome}: {pair.verdict.reason}", err)
        for regression in pair.verdict.regressions:  # the slices it names, as the page does
            _echo(f"  {regression}", err)
    if study.gate is not None:
        _echo(study.gate.headline, err)
        for line in study.gate.results:
            _echo(f"  {line.line}", err)
    _echo(f"wrote {', '.join(str(p) for p in outputs.written(sidecar))}", err)
    stale = outputs.stale_sidecar(sidecar, replaced)
    if stale is not None and stale.resolve() not in {Path(p).resolve() for p in runs}:
        stale.unlink(missing_ok=True)
        _echo(f"removed {stale}, an earlier report's per-question rows", err)
    if study.gate is not None and not study.gate.passed:
        sys.exit(EXIT_FAIL)


_VERIFY_EXIT_CODES = """\b
Exit codes: 0 every number matches, 1 a log or a number differs (the first
is named), 2 bad input."""


@cli.command(epilog=_VERIFY_EXIT_CODES)
@click.argument("report", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("logs", nargs=-1, type=_PATH)
@_option(
    "--page",
    type=_PATH,
    metavar="FILE",
    help="The report's HTML page to check [default: REPORT's name with .html, if there is one].",
)
@_quiet
def verify(report: Path, logs: tuple[Path, ...], page: Path | None, quiet: bool) -> None:
    """Check archived REPORT (its JSON) against LOGS (default: the paths it records): the
    logs' sha256, then every number of a re-run with the recorded options, and the report's
    page (--page, or the one beside REPORT with its name and .html) with the re-run's."""
    from .verify import verify as check

    with shown(sys.stderr, quiet):
        result = check(report, list(logs), page)
    for warning in result.warnings:
        _echo(f"ragreport: warning: {warning}", err=True)
    if result.difference is not None:
        _echo(f"{report}: differs at {result.difference}")
        sys.exit(1)
    checked = "" if result.page is None else f" and the page {result.page}"
    _echo(f"{report}: verified, {result.checked} numbers{checked} match a re-run")


@cli.command()
@click.argument("log", type=_PATH)
@_option(
    "-o",
    "--output",
    required=True,
    type=_OUTPUT,
    metavar="FILE",
    help="Path of the Parquet run log to write.",
)
@_reading_options
def convert(
    log: Path,
    output: Path,
    reading: _Reading,
) -> None:
    """Write LOG (any format compare reads) as a Parquet run log, for archiving."""
    from .convert import convert_log

    (options,) = reading((log,))
    n_rows, notes = convert_log(log, options, output)
    for note in notes:
        _echo(note)
    _echo(f"wrote {output} ({fmt_count(n_rows, 'row')})")


@cli.command()
@click.argument("logs", nargs=-1, required=True, type=_PATH)
@_reading_options
@click.pass_context
def validate(ctx: click.Context, logs: tuple[Path, ...], reading: _Reading) -> None:
    """List every problem of each run log LOG: one line per kind, with counts and examples.

    Exit 0 when compare would accept every log (values it leaves out are listed; a ranking
    without context_ids is accepted, and the line says to give compare --k), 2 otherwise.
    """
    from .validate import validate as check

    refused = False
    for path, options in zip(logs, reading(logs), strict=True):
        result = check(path, options)
        for line in result.lines:
            _echo(line)
        refused = refused or result.refused
    ctx.exit(RagreportError.exit_code if refused else 0)


def _option_of(command: click.Command, name: str, **changes: Any) -> Callable[..., Any]:
    """The option ``name`` of ``command`` again, with some attributes changed."""

    def add(function: Callable[..., Any]) -> Callable[..., Any]:
        option = copy.copy(next(p for p in command.params if p.name == name))
        for attribute, value in changes.items():
            setattr(option, attribute, value)
        function.__click_params__ = [*getattr(function, "__click_params__", []), option]  # type: ignore[attr-defined]
        return function

    return add


@cli.command()
@click.argument("log", type=_PATH)
@_option_of(compare, "output", help="Path of the Parquet of per-question metrics.")
@_option_of(compare, "k")
@_option_of(compare, "gain")
@_option_of(compare, "span_coverage")
@_option(
    "--partial-sums",
    "sums_path",
    type=_OUTPUT,
    metavar="FILE",
    help="Also write the Poisson-bootstrap partial sums of every metric, for ragreport merge.",
)
@_option_of(
    compare,
    "slices",
    help="Column of the log to keep, one value a question, so that compare of the tables can "
    "break the metrics down by it (--slice); repeatable [slice is always kept].",
)
@_option_of(
    compare,
    "cluster",
    help="Column of the log to keep, one value a question, so that compare of the tables can "
    "resample by it (--cluster).",
)
@_option_of(compare, "n_boot", default=1000, help="Bootstrap replicates of the partial sums.")
@_option_of(
    compare,
    "seed",
    type=click.IntRange(0, 2**64 - 1),
    help="Seed of the partial sums: every shard of both runs needs the same.",
)
@_reading_options
def metrics(
    log: Path,
    output: Path,
    k: int | None,
    gain: str,
    span_coverage: float,
    sums_path: Path | None,
    slices: tuple[str, ...],
    cluster: str | None,
    n_boot: int,
    seed: int,
    reading: _Reading,
) -> None:
    """Write one run log's (or one shard's) per-question metrics, as compare scores them."""
    from .analysis.scoring import Scoring
    from .comparison.scored_log import asked_columns
    from .inputs.readers import mapping_files
    from .shards import check_metrics_outputs, reader_notes, run_metrics, write_metrics

    (options,) = reading((log,))
    read = {**options.files(), **mapping_files(click.get_current_context().params["mapping"])}
    check_metrics_outputs(log, output, sums_path, read)
    keep = asked_columns(slices, cluster)
    table, warnings = run_metrics(log, options, Scoring(k, gain, span_coverage), keep)
    write_metrics(log, table, output, sums_path, n_boot, seed, read)
    written = [output, *([sums_path] if sums_path else [])]
    err = onto_stdout(written)  # a table is stdout: the lines go beside it
    for note in reader_notes(table):  # as convert prints them
        _echo(note, err)
    _echo(f"wrote {', '.join(map(str, written))} ({fmt_count(table.num_rows, 'question')})", err)
    for warning in warnings:
        _echo(f"ragreport: warning: {warning}", err=True)


@cli.command()
@_option(
    "--a",
    "a_parts",
    multiple=True,
    required=True,
    type=_PATH,
    metavar="FILE",
    help="Partial sums of a shard of run A; repeatable.",
)
@_option(
    "--b",
    "b_parts",
    multiple=True,
    required=True,
    type=_PATH,
    metavar="FILE",
    help="Partial sums of a shard of run B; repeatable.",
)
@_option_of(compare, "confidence")
@_option_of(compare, "strict")
def merge(
    a_parts: tuple[Path, ...], b_parts: tuple[Path, ...], confidence: float, strict: bool
) -> None:
    """Add the partial sums of every shard of runs A and B; print each metric's means and the
    Poisson-bootstrap interval of B - A."""
    from .shards import compare_gives, merge_runs

    merged = merge_runs(a_parts, b_parts, confidence, strict)
    for m in merged.metrics:
        # a B - A above 0 is worse for a cost, better for every other metric
        name = metric_label(m.name, not m.lower_is_better)
        means = " ".join(f"{run} {i.mean:.4f}" for run, i in (("A", m.a), ("B", m.b)) if i)
        if m.diff is None:
            _echo(f"{name}: {means}; no B \u2212 A: {m.why}")
            continue
        if m.diff.flat:
            spread = ""
            note = (
                "; the same B \u2212 A on every question, which resampling cannot vary: no "
                f"interval ({compare_gives(m.name)})"
            )
        elif m.diff.low is None or m.diff.high is None:
            spread, note = "", "; one question gives no interval"
        else:
            spread, note = f" {fmt_interval(m.diff.low, m.diff.high, 4)}", ""
        _echo(
            f"{name}: {means} B \u2212 A {fmt_diff(m.diff.mean, 4)}{spread} over "
            f"{fmt_count(m.diff.n, 'question')}{note}"
        )
    for warning in merged.warnings:
        _echo(f"ragreport: warning: {warning}", err=True)


main = cli

if __name__ == "__main__":  # python -m reportgen.cli, as python -m reportgen
    from .command import run

    run()
