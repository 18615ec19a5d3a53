"""The ``ragreport`` command line: thin commands that call into the package."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO, Any

import click

from . import __version__
from .errors import RagreportError
from .metrics import Options

_RUN_LOG = click.Path(dir_okay=False, path_type=Path)


class _UserError(click.ClickException):
    """A RagreportError as click shows it: one line on stderr, its exit code, no traceback."""

    exit_code = RagreportError.exit_code

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"ragreport: error: {self.message}", err=True)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RagreportError as error:
            raise _UserError(str(error)) from None


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="ragreport")
def cli() -> None:
    """Decide, with evidence, whether variant B of a RAG assistant is better than variant A."""


_EXIT_CODES = """\b
Exit codes: 0 every rule passes (or no rule is given), 1 a rule fails (all
outputs are written first), 2 bad input or a bad rule (nothing is written)."""


@cli.command(epilog=_EXIT_CODES)
@click.argument("run_a", type=_RUN_LOG)
@click.argument("run_b", type=_RUN_LOG)
@click.option("-o", "--output", required=True, type=_RUN_LOG, help="Path of the HTML report.")
@click.option(
    "--json",
    "json_path",
    type=_RUN_LOG,
    help="Path of the JSON of every number [default: the report's path with .json].",
)
@click.option(
    "--k",
    type=click.IntRange(min=1),
    help="Prompt cutoff: passages of retrieved_ids the generator received "
    "[default: each question's context_ids].",
)
@click.option(
    "--gain",
    type=click.Choice(["exponential", "linear"]),
    default="exponential",
    show_default=True,
    help="nDCG gain of a passage of grade g: 2^g - 1 or g.",
)
@click.option(
    "--n-boot",
    type=click.IntRange(min=100),
    default=5000,
    show_default=True,
    help="Bootstrap resamples for each interval.",
)
@click.option(
    "--confidence",
    type=click.FloatRange(0.5, 1, max_open=True),
    default=0.95,
    show_default=True,
    help="Confidence level of the intervals; each bound is one-sided at (1 + confidence) / 2.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the bootstrap: the same inputs and seed give the same numbers.",
)
@click.option(
    "--slice",
    "slices",
    multiple=True,
    metavar="COLUMN",
    help="Column to break every metric down by; repeatable [default: slice].",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Refuse to compare (exit 2) when the golden labels differ between the runs.",
)
@click.option(
    "--supported-threshold",
    type=click.FloatRange(0, 1),
    default=1.0,
    show_default=True,
    help="Faithfulness from which an answer counts as supported by its context.",
)
@click.option(
    "--require",
    "rules",
    multiple=True,
    metavar="RULE",
    help="Gate rule on B - A, repeatable: 'correct >= -0.02', 'ndcg@5 > 0', "
    "'latency_ms <= 150', 'candidate.correct >= 0.8', 'correct[slice] >= -0.05', "
    "'faithfulness within 0.01'. See README, Use in CI.",
)
@click.option(
    "--gate",
    "gate_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='TOML file of gate rules: require = ["RULE", ...].',
)
@click.option(
    "--inconclusive",
    type=click.Choice(["fail", "pass"]),
    default="fail",
    show_default=True,
    help="What a rule whose interval straddles its margin counts as.",
)
@click.option(
    "--markdown",
    "markdown_path",
    type=_RUN_LOG,
    help="Path of a Markdown summary for a pull request or a CI job page.",
)
@click.option(
    "--junit", "junit_path", type=_RUN_LOG, help="Path of a JUnit XML: one test case per rule."
)
def compare(
    run_a: Path,
    run_b: Path,
    output: Path,
    json_path: Path | None,
    k: int | None,
    gain: str,
    n_boot: int,
    confidence: float,
    seed: int,
    slices: tuple[str, ...],
    strict: bool,
    supported_threshold: float,
    rules: tuple[str, ...],
    gate_file: Path | None,
    inconclusive: str,
    markdown_path: Path | None,
    junit_path: Path | None,
) -> None:
    """Compare run log RUN_A with RUN_B (Parquet, one row per question) into an HTML report."""
    from .gates import EXIT_FAIL, requirements_from
    from .report import Outputs, make_report

    options = Options(
        k=k,
        gain=gain,
        n_boot=n_boot,
        confidence=confidence,
        seed=seed,
        slices=slices,
        strict=strict,
        supported_threshold=supported_threshold,
    )
    requirements = requirements_from(rules, gate_file, inconclusive)
    outputs = Outputs(output, json_path or output.with_suffix(".json"), markdown_path, junit_path)
    result = make_report(run_a, run_b, options, outputs, requirements)
    click.echo(f"{result.verdict.outcome}: {result.verdict.reason}")
    if result.gate is not None:
        click.echo(result.gate.headline)
        for line in result.gate.results:
            click.echo(f"  {line.line}")
    click.echo(f"wrote {', '.join(str(p) for p in outputs.paths)}")
    if result.gate is not None and not result.gate.passed:
        sys.exit(EXIT_FAIL)


_VERIFY_EXIT_CODES = """\b
Exit codes: 0 every number matches, 1 a log or a number differs (the first
is named), 2 bad input."""


@cli.command(epilog=_VERIFY_EXIT_CODES)
@click.argument("report", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("logs", nargs=-1, type=_RUN_LOG)
def verify(report: Path, logs: tuple[Path, ...]) -> None:
    """Check archived REPORT (its JSON) against LOGS (default: the paths it records): the
    logs' sha256, then every number of a re-run with the recorded options."""
    from .verify import verify as check

    result = check(report, list(logs))
    if result.difference is not None:
        click.echo(f"{report}: differs at {result.difference}")
        sys.exit(1)
    click.echo(f"{report}: verified, {result.checked} numbers match a re-run")


main = cli
