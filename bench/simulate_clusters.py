"""Check --cluster's interval against known truth when clusters are few: simulated data sets of
G documents, thousands per cell.

Usage: ``python bench/simulate_clusters.py [--reps 1000] [--groups 2,3,4,5,8,20,50]
[--effect 0.1] [--share 0.5] [--seed 0] [--checks intervals,estimates] [--estimate-reps 10000]``

Each data set has G documents of 10 questions on average: *equal* (10 each) or *unequal* (sizes
spread evenly from 2 to 18; at G = 2, 2 and 18). B - A = 0.3 (u_g + e_q) + truth, u_g shared by
a document's questions and e_q a question's own, normal with ``share`` and 1 - ``share`` of the
variance (simulate.py's clusters check). Truth 0 (null) and ``effect``. Per cell: coverage of
the 95% interval the report gives (stats.compare_metric with clusters), and of the cluster
bootstrap's expanded percentile interval alone, which the report gave before (from the same
resamples); the share of sets whose interval excludes 0 (under the null, what the verdict
calls "B better" or "B worse"; under the effect, what finds it); the median of the report's
width over the bootstrap's; and the share of sets where Student's t over clusters set a bound.

The estimates check (``--checks estimates``) compares the candidate standard errors of the t
side alone on unequal sizes (normal data, truth 0, ``--estimate-reps`` sets a cell): CR2, the
size-weighted spread of the cluster means, the larger of both (stats.cluster_standard_error,
the report's) and a random-effects moment estimate (the weighted spread less the within-document
noise that small documents add); under four models: questions independent, half or 90% of the
variance shared by a document, and a document's shift with a spread in proportion to its size.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulate import CONFIDENCE, N_BOOT, _pct, _table  # noqa: E402

from reportgen.analysis.stats import (  # noqa: E402
    cluster_standard_error,
    compare_metric,
    expanded_confidence,
    percentile_interval,
)

GROUPS = (2, 3, 4, 5, 8, 20, 50)
LAYOUTS = ("equal", "unequal")
SIZE = 10  # questions per document, on average
MODELS = ("independent", "half shared", "90% shared", "shift grows with size")
ESTIMATES = ("CR2", "weighted spread", "larger (report)", "random effects")


def sizes_of(layout: str, groups: int) -> np.ndarray:
    """Questions per document: SIZE each, or spread evenly from 2 to 18 (SIZE on average)."""
    if layout == "equal":
        return np.full(groups, SIZE)
    return np.round(np.linspace(2, 2 * SIZE - 2, groups)).astype(int)


def cluster_rates(
    layout: str, groups: int, effect: float, reps: int, seed: int, share: float = 0.5
) -> dict[str, float]:
    """Rates over ``reps`` data sets with true difference ``effect``. Keys: "report" and
    "bootstrap" (coverage), "report excludes" and "bootstrap excludes" (0 outside the interval),
    "width" (median of the report's width over the bootstrap's), "t" (share of sets where the t
    interval set a bound)."""
    sizes = sizes_of(layout, groups)
    labels = np.repeat(np.arange(groups), sizes)
    rng = np.random.default_rng((seed, groups, LAYOUTS.index(layout), round(effect * 1000), 5))
    hits = dict.fromkeys(("report", "bootstrap", "report excludes", "bootstrap excludes", "t"), 0)
    widths = []
    for rep in range(reps):
        shared = rng.normal(0, np.sqrt(share), groups)[labels]
        d = 0.3 * (shared + rng.normal(0, np.sqrt(1 - share), len(labels))) + effect
        a = rng.random(len(labels))
        c, means = compare_metric(
            "m", a, a + d, binary=False, n_boot=N_BOOT, confidence=CONFIDENCE, seed=rep,
            clusters=labels,
        )  # fmt: skip
        low, high = percentile_interval(means, expanded_confidence(CONFIDENCE, groups))
        hits["report"] += c.ci_low <= effect <= c.ci_high
        hits["bootstrap"] += low <= effect <= high
        hits["report excludes"] += c.ci_low > 0 or c.ci_high < 0
        hits["bootstrap excludes"] += low > 0 or high < 0
        hits["t"] += c.ci_low < low or c.ci_high > high
        widths.append((c.ci_high - c.ci_low) / (high - low))
    return {key: value / reps for key, value in hits.items()} | {"width": np.median(widths)}


def _documents(model: str, sizes: np.ndarray, reps: int, rng: np.random.Generator):
    """``reps`` x n differences B - A with truth 0 under ``model`` (MODELS)."""
    labels = np.repeat(np.arange(len(sizes)), sizes)
    if model == "shift grows with size":
        shift = rng.normal(0, 1, (reps, len(sizes))) * sizes / SIZE
        return shift[:, labels] + rng.normal(0, 0.3, (reps, len(labels)))
    share = {"independent": 0.0, "half shared": 0.5, "90% shared": 0.9}[model]
    shift = rng.normal(0, np.sqrt(share), (reps, len(sizes)))
    return shift[:, labels] + rng.normal(0, np.sqrt(1 - share), (reps, len(labels)))


def _standard_errors(d: np.ndarray, sizes: np.ndarray) -> dict[str, float]:
    """Each of ESTIMATES for one data set ``d``."""
    starts = np.cumsum(sizes) - sizes
    sums = np.add.reduceat(d, starts)
    n, share, means = sizes.sum(), sizes / sizes.sum(), sums / sizes
    residual = sums - sizes * sums.sum() / n
    cr2 = (residual * residual / (1 - share)).sum() / n**2
    spread = (share * share).sum() * np.var(means, ddof=1)
    within = (np.add.reduceat(d * d, starts) - sums * means).sum() / (n - len(sizes))
    moments = spread + within * (1 / n - (share * share).sum() * np.mean(1 / sizes))
    return {
        "CR2": np.sqrt(cr2),
        "weighted spread": np.sqrt(spread),
        "larger (report)": cluster_standard_error(sums, sizes),
        "random effects": np.sqrt(max(cr2, moments)),
    }


def estimate_rates(model: str, groups: int, reps: int, seed: int) -> dict[str, float]:
    """Coverage of mean +- t(G - 1) se under ``model`` for each of ESTIMATES (the random-effects
    one floored at CR2, as it can go negative), unequal sizes; "width": the median of the
    report's se over CR2's."""
    sizes = sizes_of("unequal", groups)
    rng = np.random.default_rng((seed, groups, MODELS.index(model), 6))
    d = _documents(model, sizes, reps, rng)
    critical = stats.t.ppf(1 - (1 - CONFIDENCE) / 2, groups - 1)
    hits, widths = dict.fromkeys(ESTIMATES, 0), []
    for row in d:
        mean, se = row.mean(), _standard_errors(row, sizes)
        for key in ESTIMATES:
            hits[key] += abs(mean) <= critical * se[key]
        widths.append(se["larger (report)"] / se["CR2"])
    return {key: value / reps for key, value in hits.items()} | {"width": np.median(widths)}


def _estimates(groups: list[int], reps: int, seed: int) -> None:
    rows = []
    for model in MODELS:
        for g in groups:
            r = estimate_rates(model, g, reps, seed)
            rows.append([model, str(g)] + [_pct(r[k]) for k in ESTIMATES] + [f"{r['width']:.2f}"])
    _table(
        f"Student's t over clusters alone, unequal sizes, {reps} null data sets per row: "
        "coverage with each standard error",
        ["model", "documents", *ESTIMATES, "se report / CR2"],
        rows,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--groups", default=",".join(map(str, GROUPS)))
    parser.add_argument("--effect", type=float, default=0.1)
    parser.add_argument("--share", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checks", default="intervals")
    parser.add_argument("--estimate-reps", type=int, default=10_000)
    args = parser.parse_args(argv)
    groups = [int(g) for g in args.groups.split(",")]
    if "intervals" in args.checks.split(","):
        _intervals(groups, args.reps, args.effect, args.share, args.seed)
    if "estimates" in args.checks.split(","):
        _estimates(groups, args.estimate_reps, args.seed)


def _intervals(groups: list[int], reps: int, effect: float, share: float, seed: int) -> None:
    rows = []
    for truth in (0.0, effect):
        for layout in LAYOUTS:
            for g in groups:
                r = cluster_rates(layout, g, truth, reps, seed, share)
                rows.append(
                    [f"{truth:g}", layout, str(g)]
                    + [_pct(r[k]) for k in ("report", "bootstrap")]
                    + [_pct(r[k]) for k in ("report excludes", "bootstrap excludes")]
                    + [f"{r['width']:.2f}", _pct(r["t"])]
                )
    se = np.sqrt(0.95 * 0.05 / reps)
    _table(
        f"--cluster's 95% interval, {reps} data sets per row, {share:g} of the "
        f"variance shared by a document (MC s.e. of a 95% coverage {100 * se:.2f} points)",
        ["truth", "sizes", "documents", "report covers", "bootstrap covers", "report excludes 0"]
        + ["bootstrap excludes 0", "width report / bootstrap", "t set a bound"],
        rows,
    )


if __name__ == "__main__":
    main()
