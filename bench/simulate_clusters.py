"""Check --cluster's interval against known truth when clusters are few: simulated data sets of
G documents, thousands per cell.

Usage: ``python bench/simulate_clusters.py [--reps 1000] [--groups 2,3,4,5,8,20,50]
[--effect 0.1] [--share 0.5] [--seed 0] [--checks intervals,estimates,power]
[--estimate-reps 10000] [--power-reps 1000]``; ``--checks many --groups 1000,5000,11000``

Each data set has G documents: *equal* (10 questions each), *unequal* (sizes spread evenly from
2 to 18, 10 on average; at G = 2, 2 and 18) or *singletons* (a quarter of them, at least one,
of 10 questions, the rest of one question: the questions a log gives no document). B - A = 0.3
(u_g + e_q) + truth, u_g shared by a document's questions and e_q a question's own, normal with
``share`` and 1 - ``share`` of the variance (simulate.py's clusters check). Truth 0 (null) and
``effect``. Per cell: coverage of the 95% interval the report gives (stats.compare_metric with
clusters), and of the cluster bootstrap's expanded percentile interval alone, which the report
gave before (from the same resamples); the share of sets whose interval excludes 0 (under the
null, what the verdict calls "B better" or "B worse"; under the effect, what finds it); the
median of the report's width over the bootstrap's; and the share of sets where Student's t over
clusters set a bound.

The estimates check (``--checks estimates``) compares the candidate standard errors of the t
side alone on unequal sizes and singletons (normal data, truth 0, ``--estimate-reps`` sets a
cell): CR2, the size-weighted spread of the cluster means, the larger of both (the report's
before), a random-effects moment estimate (the weighted spread less the within-document noise
that small documents add) floored at CR2, each with G - 1 degrees of freedom; and the report's
(stats.cluster_standard_error with stats.cluster_degrees: the moment estimate with
Satterthwaite's degrees of freedom, the larger at 2 documents); under four models: questions
independent, half or 90% of the variance shared by a document, and a document's shift with a
spread in proportion to its size.

The many-clusters check (``--checks many``, ``--groups 1000,5000,11000``) asks whether Student's
t over the clusters alone covers where stats.in_normal_limit takes it instead of the cluster
bootstrap (from 10,000 clusters whose sums differ from the commonest, or 1,000 with a skewness of
the clusters' residuals S_g - n_g mean of at most SKEW_BOUND sqrt(G)): documents of 1 to 5
questions (3 on average), B - A = 0.3 (u_g + e_q), truth 0, the document's shift u_g normal,
skewed (exponential less 1, skewness 2) or heavy-tailed (lognormal with sigma 1.5, centred); per
cell: the share of sets in the normal limit, and the misses below and above the truth of the
report's interval and of the wider of the cluster bootstrap and t (what the report gave before,
from --cluster's resamples), with the median of their widths' ratio.

The power check (``--checks power``) asks whether the power sentence's detectable difference X
is found 80% of the time, as simulate.py's power check does without clusters, on POWER_LAYOUTS
(equal and unequal sizes, 2 to 50 documents; B - A as above): a pilot data set with truth 0
states X, and a fresh one with true difference +X (even reps) or -X (odd ones) is compared with
clusters; "found" is the share whose interval excludes zero. X is stated three ways: now
(power_of), "t + t" ((t(1 - alpha/2) + t(0.8)) se over clusters, G - 1 degrees of freedom,
the plug-in the multiplier improves on) and before (the question-level formula with
n / design effect questions, the design effect floored at 1).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulate import CONFIDENCE, N_BOOT, _pct, _table  # noqa: E402

from reportgen.analysis.power import _k, power_of  # noqa: E402
from reportgen.analysis.stats import (  # noqa: E402
    CLUSTERED_NORMAL,
    cluster_covariance,
    cluster_degrees,
    cluster_deviations,
    cluster_interval,
    cluster_means,
    cluster_sides,
    cluster_standard_error,
    compare_metric,
    expanded_confidence,
    percentile_interval,
)

GROUPS = (2, 3, 4, 5, 8, 20, 50)
LAYOUTS = ("equal", "unequal", "singletons")
SIZE = 10  # questions per document, on average
MODELS = ("independent", "half shared", "90% shared", "shift grows with size")
ESTIMATES = ("CR2", "weighted spread", "larger (before)", "random effects", "report")
POWER_LAYOUTS = {
    "equal 2 x 10": [10] * 2,
    "equal 3 x 10": [10] * 3,
    "equal 5 x 4": [4] * 5,
    "equal 20 x 5": [5] * 20,
    "equal 50 x 4": [4] * 50,
    "unequal 17+1+1+1": [17, 1, 1, 1],
    "unequal 10+5+3+2": [10, 5, 3, 2],
    "unequal 40, 1 to 9": np.round(np.linspace(1, 9, 40)).astype(int).tolist(),
    "singletons 6 x 10 + 20 x 1": [10] * 6 + [1] * 20,
}


def sizes_of(layout: str, groups: int) -> np.ndarray:
    """Questions per document: SIZE each, spread evenly from 2 to 18 (SIZE on average), or a
    quarter (at least one) of SIZE and the rest of one question."""
    if layout == "equal":
        return np.full(groups, SIZE)
    if layout == "singletons":
        documents = max(1, round(groups / 4))
        return np.array([SIZE] * documents + [1] * (groups - documents))
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


def _half_widths(d: np.ndarray, sizes: np.ndarray) -> dict[str, float]:
    """The half width of Student's t interval with each of ESTIMATES for one data set ``d``:
    t(G - 1) se, the report's t(stats.cluster_degrees) se."""
    starts = np.cumsum(sizes) - sizes
    sums = np.add.reduceat(d, starts)
    n, share, means = sizes.sum(), sizes / sizes.sum(), sums / sizes
    deviations = np.add.reduceat((d - np.repeat(means, sizes)) ** 2, starts)
    residual = sums - sizes * sums.sum() / n
    cr2 = (residual * residual / (1 - share)).sum() / n**2
    spread = (share * share).sum() * np.var(means, ddof=1)
    moments = spread
    if n > len(sizes):
        within = deviations.sum() / (n - len(sizes))
        moments += within * (1 / n - (share * share).sum() * np.mean(1 / sizes))
    critical = stats.t.ppf(1 - (1 - CONFIDENCE) / 2, len(sizes) - 1)
    report = stats.t.ppf(1 - (1 - CONFIDENCE) / 2, cluster_degrees(sizes))
    return {
        "CR2": critical * np.sqrt(cr2),
        "weighted spread": critical * np.sqrt(spread),
        "larger (before)": critical * np.sqrt(max(cr2, spread)),
        "random effects": critical * np.sqrt(max(cr2, moments)),
        "report": report * cluster_standard_error(sums, sizes, deviations),
    }


def estimate_rates(
    model: str, groups: int, reps: int, seed: int, layout: str = "unequal"
) -> dict[str, float]:
    """Coverage of Student's t interval under ``model`` for each of ESTIMATES (the
    random-effects one floored at CR2, as it can go negative); "width": the median of the
    report's half width over the one before."""
    sizes = sizes_of(layout, groups)
    rng = np.random.default_rng((seed, groups, MODELS.index(model), LAYOUTS.index(layout), 6))
    d = _documents(model, sizes, reps, rng)
    hits, widths = dict.fromkeys(ESTIMATES, 0), []
    for row in d:
        mean, half = row.mean(), _half_widths(row, sizes)
        for key in ESTIMATES:
            hits[key] += abs(mean) <= half[key]
        widths.append(half["report"] / half["larger (before)"])
    return {key: value / reps for key, value in hits.items()} | {"width": np.median(widths)}


def _estimates(groups: list[int], reps: int, seed: int) -> None:
    rows = []
    for layout in ("unequal", "singletons"):
        for model in MODELS:
            for g in groups:
                r = estimate_rates(model, g, reps, seed, layout)
                rows.append(
                    [layout, model, str(g), f"{cluster_degrees(sizes_of(layout, g)):.1f}"]
                    + [_pct(r[k]) for k in ESTIMATES]
                    + [f"{r['width']:.2f}"]
                )
    _table(
        f"Student's t over clusters alone, {reps} null data sets per row: coverage with each "
        "standard error",
        ["sizes", "model", "documents", "report's df", *ESTIMATES, "width report / before"],
        rows,
    )


def _documents_of(sizes: np.ndarray, effect: float, share: float, rng: np.random.Generator):
    """A and B on questions in documents of ``sizes``, B - A = 0.3 (u_g + e_q) + ``effect``."""
    labels = np.repeat(np.arange(len(sizes)), sizes)
    shared = rng.normal(0, np.sqrt(share), len(sizes))[labels]
    d = 0.3 * (shared + rng.normal(0, np.sqrt(1 - share), len(labels))) + effect
    a = rng.random(len(labels))
    return a, a + d, labels


def _clustered(a: np.ndarray, b: np.ndarray, labels: np.ndarray, seed: int):
    """The comparison, its design effect the ratio estimator's (cluster_covariance), which the
    question-level sentence read before the report stated the interval's own (_question_level)."""
    c = compare_metric(
        "m", a, b, binary=False, n_boot=N_BOOT, confidence=CONFIDENCE, seed=seed, clusters=labels
    )[0]
    diff, codes = b - a, np.unique(labels, return_inverse=True)[1]
    ratio = cluster_covariance(diff[:, None], codes)[0, 0] / (diff.var(ddof=1) / len(diff))
    return replace(c, design_effect=float(ratio))


def _question_level(c) -> float:
    """The detectable difference the sentence stated before: k sd / sqrt(effective), with
    effective = n / max(design effect, 1) questions and k = t(1 - alpha/2) + t(POWER) with
    min(effective, G) - 1 degrees of freedom."""
    effective = max(2, int(c.n / max(c.design_effect, 1.0)))
    return float(_k(min(effective, c.clusters), 1 - CONFIDENCE) * c.sd / np.sqrt(effective))


def _plug_in(c) -> float:
    """(t(1 - alpha/2) + t(POWER)) se over clusters, both with G - 1 degrees of freedom."""
    return _k(c.clusters, 1 - CONFIDENCE) * c.cluster_se


STATED = {
    "now": lambda c: power_of(c, CONFIDENCE).min_detectable,
    "t + t": _plug_in,
    "before": _question_level,
}


def power_rates(layout: str, reps: int, seed: int, share: float = 0.5) -> dict[str, float]:
    """Over ``reps`` pilots of POWER_LAYOUTS[layout], for each way of stating X (STATED): the
    share of fresh sets at +-X whose interval excludes zero (keyed by STATED's names) and the
    median X ("x now", ...); "t alone": the share at X now that Student's t over clusters
    alone finds (the interval is the wider of it and the cluster bootstrap); "past 1": the
    share of pilots whose X now is past 1, the largest difference of a score in [0, 1].

    The interval of a fresh set shifted by X is its interval at 0 shifted by X (the cluster
    bootstrap's resamples and the standard error over clusters move with it), so one
    comparison of each fresh set tells which of the stated differences it finds."""
    sizes = np.array(POWER_LAYOUTS[layout])
    rng = np.random.default_rng((seed, list(POWER_LAYOUTS).index(layout), 7))
    found = dict.fromkeys(STATED, 0) | {"t alone": 0}
    stated: dict[str, list[float]] = {key: [] for key in STATED}
    for rep in range(reps):
        pilot = _clustered(*_documents_of(sizes, 0.0, share, rng), rep)
        fresh = _clustered(*_documents_of(sizes, 0.0, share, rng), rep)
        for key, state in STATED.items():
            x = state(pilot) * (1 if rep % 2 == 0 else -1)
            found[key] += fresh.ci_low + x > 0 or fresh.ci_high + x < 0
            stated[key].append(abs(x))
            if key == "now":
                t = stats.t.ppf(1 - (1 - CONFIDENCE) / 2, fresh.cluster_df) * fresh.cluster_se
                found["t alone"] += abs(fresh.diff + x) > t
    return (
        {key: hits / reps for key, hits in found.items()}
        | {f"x {key}": float(np.median(xs)) for key, xs in stated.items()}
        | {"past 1": float(np.mean(np.array(stated["now"]) > 1))}
    )


def _power(reps: int, share: float, seed: int) -> None:
    rows = []
    for layout in POWER_LAYOUTS:
        r = power_rates(layout, reps, seed, share)
        rows.append(
            [layout]
            + [_pct(r[key]) for key in (*STATED, "t alone")]
            + [f"{r[f'x {key}']:.3f}" for key in STATED]
            + [_pct(r["past 1"])]
        )
        print(" ".join(rows[-1]), file=sys.stderr, flush=True)
    se = np.sqrt(0.8 * 0.2 / reps)
    _table(
        f"The power sentence with --cluster, {reps} pilot and fresh data sets per row, {share:g} "
        f"of the variance shared by a document, sd of B - A 0.3 (MC s.e. of an 80% share "
        f"{100 * se:.2f} points)",
        ["documents"]
        + [f"found at X {key}" for key in STATED]
        + ["found at X now by t alone"]
        + [f"median X {key}" for key in STATED]
        + ["X now past 1"],
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
    parser.add_argument("--power-reps", type=int, default=1000)
    args = parser.parse_args(argv)
    groups = [int(g) for g in args.groups.split(",")]
    if "intervals" in args.checks.split(","):
        _intervals(groups, args.reps, args.effect, args.share, args.seed)
    if "estimates" in args.checks.split(","):
        _estimates(groups, args.estimate_reps, args.seed)
    if "power" in args.checks.split(","):
        _power(args.power_reps, args.share, args.seed)
    if "many" in args.checks.split(","):
        _many(groups, args.reps, args.seed)


SHIFTS = {
    "normal": lambda rng, g: rng.normal(0, 1, g),
    "skewed": lambda rng, g: rng.exponential(1, g) - 1,
    "heavy": lambda rng, g: rng.lognormal(0, 1.5, g) - np.exp(1.5**2 / 2),
}


def many_rates(model: str, groups: int, reps: int, seed: int) -> dict[str, float]:
    """Shares over ``reps`` sets of G = ``groups`` documents (truth 0): in the normal limit
    ("limit"), and the misses of the report's interval and of the one before, by side."""
    rng = np.random.default_rng((seed, groups, len(model)))
    sizes = np.resize(np.arange(1, 6), groups)
    labels = np.repeat(np.arange(groups), sizes)
    keys = ("limit", "now low", "now high", "before low", "before high")
    counts, ratios = dict.fromkeys(keys, 0), []
    for rep in range(reps):
        diff = 0.3 * (SHIFTS[model](rng, groups)[labels] + rng.normal(0, 1, len(labels)))
        a = rng.random(len(labels))
        c = compare_metric(
            "m", a, a + diff, binary=False, n_boot=N_BOOT, confidence=CONFIDENCE, seed=rep,
            clusters=labels,
        )[0]  # fmt: skip
        sums = np.bincount(labels, weights=diff)
        deviations = cluster_deviations(diff, labels, sums, sizes)
        means = cluster_means(sums, sizes, N_BOOT, rep)
        boot = percentile_interval(means, expanded_confidence(CONFIDENCE, groups))
        side = cluster_sides(sums, sizes, deviations).t
        low, high = cluster_interval(boot, side, CONFIDENCE)
        counts["limit"] += c.interval == CLUSTERED_NORMAL
        counts["now low"] += c.ci_low > 0
        counts["now high"] += c.ci_high < 0
        counts["before low"] += low > 0
        counts["before high"] += high < 0
        ratios.append((c.ci_high - c.ci_low) / (high - low))
    return {**{k: v / reps for k, v in counts.items()}, "width": float(np.median(ratios))}


def _many(groups: list[int], reps: int, seed: int) -> None:
    rows = []
    for model in SHIFTS:
        for g in groups:
            r = many_rates(model, g, reps, seed)
            rows.append(
                [model, f"{g:,}", _pct(r["limit"])]
                + [_pct(r[k]) for k in ("now low", "now high", "before low", "before high")]
                + [f"{r['width']:.3f}"]
            )
    se = np.sqrt(0.025 * 0.975 / reps)
    _table(
        f"--cluster's 95% interval with many documents of 1 to 5 questions, truth 0, {reps} "
        f"data sets per row (MC s.e. of a 2.5% miss {100 * se:.2f} points)",
        ["document shift", "documents", "normal limit", "misses below, now", "above, now"]
        + ["below, before", "above, before", "width now / before"],
        rows,
    )


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
