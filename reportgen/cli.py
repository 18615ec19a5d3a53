"""The ``ragreport`` command line: thin commands that call into the package."""

from __future__ import annotations

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


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="ragreport")
def cli() -> None:
    """Decide, with evidence, whether variant B of a RAG assistant is better than variant A."""


@cli.command()
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
    help="Confidence level of the intervals.",
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
    "--margin",
    "margins",
    multiple=True,
    metavar="[METRIC=]M",
    callback=_margins,
    help="Smallest difference that matters, for one metric (correct=0.02) or all (0.02); "
    "the verdict then says whether B is better by at least M, by less, or equivalent "
    "within M; repeatable.",
)
@click.option(
    "--cluster",
    metavar="COLUMN",
    help="Column naming the document or conversation a question is about: questions that "
    "share it are resampled and permuted together.",
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
    margins: tuple[tuple[str, float], ...],
    cluster: str | None,
) -> None:
    """Compare run log RUN_A with RUN_B (Parquet, one row per question) into an HTML report."""
    from .report import make_report

    options = Options(
        k=k,
        gain=gain,
        n_boot=n_boot,
        confidence=confidence,
        seed=seed,
        slices=slices,
        strict=strict,
        supported_threshold=supported_threshold,
        margins=margins,
        cluster=cluster,
    )
    json_path = json_path or output.with_suffix(".json")
    verdict = make_report(run_a, run_b, options, output, json_path)
    click.echo(f"{verdict.outcome}: {verdict.reason}")
    click.echo(f"wrote {output} and {json_path}")


main = cli
