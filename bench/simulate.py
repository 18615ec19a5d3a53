"""Check the statistics against known truth: simulated paired data sets, thousands per cell.

Usage: ``python bench/simulate.py [--reps 2000] [--power-reps 1000] [--slice-reps 1000]
[--large-reps 1000] [--large-changed 1100,5000,11000,100000]
[--needed-reps 400] [--checks coverage,power,needed,clusters,slices,large] [--seed 0]``

Prints one table per check (tests/test_simulation.py runs a quick version of each):

- coverage: share of 95% intervals that contain the true mean difference, for the interval
  the report uses (stats.compare_metric: studentized bootstrap and t for continuous metrics
  under 1,000 questions, else the expanded percentile) and the plain percentile interval it
  replaced; on these additive models coverage is the same at any true difference, so it is
  measured where the truth is 0;
  "verdict size" is the share of null data sets (true difference 0) called "B better" or
  "B worse", and "test size" the share where the paired test's p < 0.05; beside it the
  candidates for continuous metrics (the sign-flip permutation test, and the larger of its p
  and the report's) and the old sign test for contrast;
- power: a pilot data set gives the stated detectable difference X; a fresh data set with true
  difference +X or -X (alternately) is drawn from the same population and the verdict checked
  (80% expected), and the power of the paired tests at that difference;
- clusters: questions asked in groups about one document, half the variance of B - A shared
  within the document; coverage of the naive interval and of --cluster's;
- needed: the size the power sentence states for the observed difference of a 0/1 outcome
  ("takes about N questions"); a pilot of 1,000 questions with a share changed and a true
  difference, then a fresh set of the stated N with the pilot's observed difference and share
  changed, and the verdict checked (80% expected): changes going both ways, and nearly all one
  way, where the changed questions' own spread is smaller than the normal formula takes;
- slices: 5 slices of 40 questions under no true difference; the share of data sets with any
  slice regression in the verdict (slices.is_finding, whatever the overall difference;
  family-wise error, 5% allowed);
- large: where the bootstrap gives way to its normal limit (stats.in_normal_limit: 10,000
  questions off the commonest difference, or 1,000 where the differences' skewness is at most
  0.03 sqrt(n)), sets of 1,100, 5,000, 11,000 and 100,000 such questions under no true
  difference (each outcome type's n is that over its share of changed questions): coverage of
  Student's t interval, of the expanded percentile bootstrap and of the report's interval, and
  the share of sets each misses on either side (a one-sided rule at the margin reads one side);
  how far the t interval's bounds lie from the bootstrap's, beside how far two bootstraps of the
  same set with other seeds lie from each other (the bootstrap's own Monte-Carlo error), both
  as a share of the interval's half-width.

Outcome types (true mean difference ``effect`` in each; for continuous ones every question
shifts by ``effect``, the spread staying the same, as the power sentence assumes):
- binary: a 0/1 outcome, 30% of questions change between A and B (fixed or broken), and in
  the power check also 10% (2 of 20: the counts are small, where the normal formula fails) and,
  from 200 questions, 2% (the stated difference then needs more changes, nearly all one way);
- ties: nDCG-like, with no difference half the questions tie and the others move by a normal
  amount (sd 0.3);
- sparse and carried (the power check only): 20% of the questions move by a normal amount
  (sd 0.3), the rest tie; sparse shifts every question by the difference, as the sentence's
  sets do, carried puts it on the changed questions alone (each moves by difference / 0.2), as
  when a change touches a fifth of the questions and leaves the rest as they were;
- skewed: faithfulness-like, most questions lose a little while a few gain a lot
  (0.2 x (Exp(1) - 1), skewness 2): the case where the median and the mean disagree;
- heavy (the large check only): latency-like, a heavy right tail
  (0.1 x (LogNormal(0, 1.5) - e^1.125), skewness 33); and binary with 1% of questions changed;
- latency (simulate_one_sided.py only): a latency difference in ms with a right tail,
  100 x (LogNormal(0, 1) - e^0.5), skewness 6.2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reportgen.analysis import stats as report_stats  # noqa: E402
from reportgen.analysis.binary_power import EXACT_BELOW  # noqa: E402
from reportgen.analysis.power import power_of  # noqa: E402
from reportgen.analysis.slices import is_finding  # noqa: E402
from reportgen.analysis.stats import (  # noqa: E402
    NORMAL_LIMIT,
    NORMAL_LIMIT_FROM,
    SYMMETRIC_LIMIT_FROM,
    MetricComparison,
    bootstrap_means,
    bound_p,
    compare_metric,
    compare_with_sides,
    expanded_confidence,
    holm,
    percentile_interval,
    permutation_test,
    sign_test,
    significance,
    t_interval,
)

KINDS = ("binary", "ties", "skewed")
SPARSE_KINDS = ("sparse", "carried")  # the power check's: SPARSE of the questions change
SPARSE = 0.2
SIZES = (20, 50, 200, 1000)
CONFIDENCE = 0.95
N_BOOT = 2000  # per data set; the quantiles' Monte-Carlo error averages out over data sets
CHANGED = 0.3  # binary: share of questions that differ between A and B
LOW_CHANGED = 0.1  # binary, the power check's second case: 2 of 20 questions change
FEW_CHANGED_SHARE = 0.02  # binary, its third, from 200 questions (the normal formula's side):
# 4 of 200 change, so the stated difference needs more changes, nearly all one way
LARGE_KINDS = (  # the large check's outcome types: (kind, share of questions that change)
    ("binary", CHANGED),
    ("binary", 0.01),
    ("ties", 0.5),
    ("skewed", 1.0),
    ("heavy", 1.0),
)
LARGE_CHANGED = (
    SYMMETRIC_LIMIT_FROM * 11 // 10,  # the symmetric types take t, the skewed ones the bootstrap
    5 * SYMMETRIC_LIMIT_FROM,  # the skewed type's sqrt(n) past its skewness / SKEW_BOUND
    NORMAL_LIMIT_FROM * 11 // 10,  # every type takes t
    10 * NORMAL_LIMIT_FROM,
)


def draw(kind: str, n: int, effect: float, rng: np.random.Generator, changed: float = CHANGED):
    """Paired scores (a, b) of n questions whose true mean difference B - A is ``effect``."""
    if kind == "binary":
        u = rng.random(n)
        fixed, broken = (changed + effect) / 2, (changed - effect) / 2
        d = np.where(u < fixed, 1.0, np.where(u < fixed + broken, -1.0, 0.0))
        tie = (rng.random(n) < 0.6).astype(float)
        a = np.where(d > 0, 0.0, np.where(d < 0, 1.0, tie))
        return a, a + d
    if kind == "ties":
        d = np.where(rng.random(n) < 0.5, rng.normal(0.0, 0.3, n), 0.0) + effect
    elif kind in SPARSE_KINDS:
        carried = effect / SPARSE if kind == "carried" else 0.0
        d = np.where(rng.random(n) < SPARSE, rng.normal(carried, 0.3, n), 0.0)
        d += effect - carried * SPARSE  # sparse: every question moves by the difference
    elif kind == "heavy":
        d = 0.1 * (rng.lognormal(0.0, 1.5, n) - np.exp(1.125)) + effect
    elif kind == "latency":
        d = 100 * (rng.lognormal(0.0, 1.0, n) - np.exp(0.5)) + effect
    else:
        d = 0.2 * (rng.exponential(1.0, n) - 1) + effect
    a = rng.random(n)
    return a, a + d


def under_rules(
    constant: str, rules: dict[str, int], metric: str, a: np.ndarray, b: np.ndarray,
    n_boot: int, seed: int,
) -> Iterator[tuple[str, MetricComparison]]:  # fmt: skip
    """Each rule's comparison of one set of a continuous metric, as the report compares it with
    reportgen.analysis.stats.``constant`` set to the rule's value (restored after)."""
    kept = getattr(report_stats, constant)
    try:
        for rule, value in rules.items():
            setattr(report_stats, constant, value)
            c, _ = compare_metric(
                metric, a, b, binary=False, n_boot=n_boot, confidence=CONFIDENCE, seed=seed,
                threads=1,
            )  # fmt: skip
            yield rule, c
    finally:
        setattr(report_stats, constant, kept)


def _compare(kind: str, a: np.ndarray, b: np.ndarray, seed: int):
    c, means = compare_metric(
        "m", a, b, binary=kind == "binary", n_boot=N_BOOT, confidence=CONFIDENCE, seed=seed
    )
    return c, means


def null_rates(kind: str, n: int, reps: int, seed: int) -> dict[str, float]:
    """Coverage and error rates over ``reps`` data sets with no true difference."""
    rng = np.random.default_rng((seed, n, KINDS.index(kind)))
    hits = {"report": 0, "percentile": 0, "test": 0, "sign-flip": 0, "max": 0, "sign": 0}
    for rep in range(reps):
        a, b = draw(kind, n, 0.0, rng)
        c, means = _compare(kind, a, b, rep)
        low, high = percentile_interval(means, CONFIDENCE)
        flipped = permutation_test(b - a, rep)
        hits["report"] += c.ci_low <= 0 <= c.ci_high
        hits["percentile"] += low <= 0 <= high
        hits["test"] += c.p < 1 - CONFIDENCE
        hits["sign-flip"] += flipped < 1 - CONFIDENCE
        hits["max"] += max(c.p, flipped) < 1 - CONFIDENCE
        hits["sign"] += sign_test(c.wins, c.losses) < 1 - CONFIDENCE
    return {key: value / reps for key, value in hits.items()}


def power_rate(
    kind: str, n: int, reps: int, seed: int, changed: float = CHANGED
) -> dict[str, float]:
    """How often the stated detectable difference X was found, over ``reps`` pilot data sets
    (binary: ``changed`` of their questions change, in expectation).

    The sentence speaks of "a true difference of X", either way, so the fresh data set's true
    difference is +X in even reps and -X in odd ones (on skewed differences a gain of X is
    found more often than a loss of X). A pilot where nothing changed, or whose X is past the
    largest difference (both sentences then state none), is drawn again. Keys: "found" (the
    verdict, both signs), "up" and "down" (each sign), "test" and "sign-flip" (the report's
    paired test and the sign-flip permutation test at p < 0.05, both signs), "both" (the
    interval excluding zero and the test rejecting, as a gate's superiority rule asks: the
    verdict rule this power would have if it asked the same), "x" (mean stated X).
    """
    kinds = KINDS + SPARSE_KINDS
    rng = np.random.default_rng((seed, n, kinds.index(kind), 1, round(changed * 1000)))
    found = {"up": 0, "down": 0, "test": 0, "sign-flip": 0, "both": 0}
    stated = []
    for rep in range(reps):
        x = None
        while x is None or x > 1:
            pilot, _ = _compare(kind, *draw(kind, n, 0.0, rng, changed=changed), rep)
            x = power_of(pilot, CONFIDENCE).min_detectable
        effect = x if rep % 2 == 0 else -x
        share = (pilot.wins + pilot.losses) / n
        a, b = draw(kind, n, effect, rng, changed=max(share, x))
        c, _ = _compare(kind, a, b, rep)
        excludes = c.ci_low > 0 or c.ci_high < 0
        found["up" if effect > 0 else "down"] += excludes
        found["test"] += c.p < 1 - CONFIDENCE
        found["both"] += excludes and c.p < 1 - CONFIDENCE
        found["sign-flip"] += permutation_test(b - a, rep) < 1 - CONFIDENCE
        stated.append(x)
    ups = (reps + 1) // 2
    return {
        "found": (found["up"] + found["down"]) / reps,
        "up": found["up"] / ups,
        "down": found["down"] / max(reps - ups, 1),
        "test": found["test"] / reps,
        "sign-flip": found["sign-flip"] / reps,
        "both": found["both"] / reps,
        "x": float(np.mean(stated)),
    }


NEEDED_CELLS = (  # (share changed, true difference) of the pilot: both ways, then one way
    (0.30, 0.03),
    (0.05, 0.02),
    (0.02, 0.02),
    (0.01, 0.01),
)


def needed_rate(changed: float, effect: float, reps: int, seed: int, n: int = 1000) -> dict:
    """How often a fresh 0/1 set of the size stated for the observed difference finds it: a
    pilot of ``n`` questions (``changed`` of them changed, true difference ``effect``), its
    stated size N, then a set of N questions whose true difference and share changed are the
    pilot's observed ones. A pilot whose sentence states no size is drawn again. Keys: "found"
    (the interval excluding zero), "both" (and the paired test p < 0.05), "n" (median N),
    "one_way" (mean share of the pilots' changes that went the observed way)."""
    rng = np.random.default_rng((seed, n, round(changed * 1000), round(effect * 1000), 7))
    found = both = 0
    sizes, one_way = [], []
    for rep in range(reps):
        needed = None
        while needed is None:
            pilot, _ = _compare("binary", *draw("binary", n, effect, rng, changed=changed), rep)
            needed = power_of(pilot, CONFIDENCE).needed_n
        share, diff = (pilot.wins + pilot.losses) / n, pilot.diff
        a, b = draw("binary", needed, diff, rng, changed=share)
        c, _ = _compare("binary", a, b, rep)
        excludes = c.ci_low > 0 if diff > 0 else c.ci_high < 0
        found += excludes
        both += excludes and c.p < 1 - CONFIDENCE
        sizes.append(needed)
        one_way.append(max(pilot.wins, pilot.losses) / (pilot.wins + pilot.losses))
    return {
        "found": found / reps,
        "both": both / reps,
        "n": float(np.median(sizes)),
        "one_way": float(np.mean(one_way)),
    }


def slice_fwer(kind: str, reps: int, seed: int, slices: int = 5, size: int = 40) -> float:
    """Share of null data sets with any slice regression that survives Holm (the verdict's)."""
    rng = np.random.default_rng((seed, KINDS.index(kind), 2))
    alarms = 0
    for rep in range(reps):
        a, b = draw(kind, slices * size, 0.0, rng)
        parts = [
            compare_with_sides(
                "m",
                a[i : i + size],
                b[i : i + size],
                binary=kind == "binary",
                n_boot=N_BOOT,
                confidence=CONFIDENCE,
                seed=rep,
            )
            for i in range(0, slices * size, size)
        ]
        adjusted = holm([c.p for c, _, _ in parts])
        bounds = holm(
            [bound_p(sides, means, 0.0, True, max(abs(c.a), abs(c.b))) for c, means, sides in parts]
        )
        alarms += any(
            is_finding(c, p, bound, significance(CONFIDENCE), higher_is_better=True)
            for (c, _, _), p, bound in zip(parts, adjusted, bounds, strict=True)
        )
    return alarms / reps


def large_rates(kind: str, changed: float, m: int, reps: int, seed: int) -> dict[str, float]:
    """Coverage and agreement of Student's t interval and the bootstrap on null data sets of
    about ``m`` questions off the commonest difference (n = m / ``changed`` questions).

    Keys: "t", "bootstrap", "report" (coverage); the same with "_below" and "_above" (the share of
    sets whose interval lies wholly below or above the true 0: 2.5% each is exact); "normal"
    (share of sets where the report took the normal limit); "apart" and "reseeded" (median over
    sets of the larger distance between the two intervals' bounds over the t interval's
    half-width: t against the bootstrap, and the bootstrap against itself with another seed).
    """
    n = round(m / changed)
    rng = np.random.default_rng((seed, m, LARGE_KINDS.index((kind, changed)), 4))
    level = expanded_confidence(CONFIDENCE, n)
    hits = {"normal": 0} | {
        f"{name}{side}": 0
        for name in ("t", "bootstrap", "report")
        for side in ("", "_below", "_above")
    }
    apart, reseeded = [], []
    for rep in range(reps):
        a, b = draw(kind, n, 0.0, rng, changed=changed)
        d = b - a
        t = t_interval(d, CONFIDENCE)
        assert t is not None
        boot = percentile_interval(bootstrap_means(d, N_BOOT, rep), level)
        again = percentile_interval(bootstrap_means(d, N_BOOT, rep + reps), level)
        c, _ = _compare("binary" if kind == "binary" else kind, a, b, rep)
        for name, (low, high) in (("t", t), ("bootstrap", boot), ("report", (c.ci_low, c.ci_high))):
            hits[name] += low <= 0 <= high
            hits[f"{name}_below"] += high < 0
            hits[f"{name}_above"] += low > 0
        hits["normal"] += c.interval == NORMAL_LIMIT
        half = (t[1] - t[0]) / 2
        apart.append(max(abs(t[0] - boot[0]), abs(t[1] - boot[1])) / half)
        reseeded.append(max(abs(again[0] - boot[0]), abs(again[1] - boot[1])) / half)
    rates = {key: value / reps for key, value in hits.items()}
    return rates | {"apart": float(np.median(apart)), "reseeded": float(np.median(reseeded))}


def cluster_coverage(
    groups: int, size: int, reps: int, seed: int, share: float = 0.5
) -> tuple[float, float, float]:
    """(naive coverage, cluster coverage, mean design effect) on clustered data: ``groups``
    documents of ``size`` questions each; ``share`` of the variance of B - A is the document's
    (a retriever change that helps or hurts every question about one document)."""
    rng = np.random.default_rng((seed, groups, size, 3))
    labels = np.repeat(np.arange(groups), size)
    naive = clustered = 0
    effects = []
    for rep in range(reps):
        shared = rng.normal(0, np.sqrt(share), groups)[labels]
        d = 0.3 * (shared + rng.normal(0, np.sqrt(1 - share), groups * size))
        a = rng.random(groups * size)
        c, _ = _compare("ties", a, a + d, rep)
        k, _ = compare_metric(
            "m", a, a + d, binary=False, n_boot=N_BOOT, confidence=CONFIDENCE, seed=rep,
            clusters=labels,
        )  # fmt: skip
        naive += c.ci_low <= 0 <= c.ci_high
        clustered += k.ci_low <= 0 <= k.ci_high
        effects.append(k.design_effect)
    return naive / reps, clustered / reps, float(np.mean(effects))


def _table(title: str, header: list[str], rows: list[list[str]]) -> None:
    print(f"\n{title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--power-reps", type=int, default=1000)
    parser.add_argument(
        "--power-sizes",
        default=",".join(map(str, SIZES)),
        help="the power check's numbers of questions, comma-separated",
    )
    parser.add_argument(
        "--power-kinds",
        default=",".join(KINDS + SPARSE_KINDS),
        help="the power check's outcome types, comma-separated",
    )
    parser.add_argument("--needed-reps", type=int, default=400)
    parser.add_argument("--slice-reps", type=int, default=1000)
    parser.add_argument("--large-reps", type=int, default=1000)
    parser.add_argument(
        "--large-changed",
        default=",".join(map(str, LARGE_CHANGED)),
        help="the large check's numbers of changed questions, comma-separated",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checks", default="coverage,power,needed,clusters,slices,large")
    args = parser.parse_args(argv)
    checks = args.checks.split(",")
    if "coverage" in checks:
        _coverage(args.reps, args.seed)
    if "power" in checks:
        sizes = tuple(int(n) for n in args.power_sizes.split(","))
        _power(args.power_reps, args.seed, args.power_kinds.split(","), sizes)
    if "needed" in checks:
        _needed(args.needed_reps, args.seed)
    if "clusters" in checks:
        rows = []
        for groups, size in ((20, 5), (40, 5), (100, 10)):
            naive, clustered, effect = cluster_coverage(groups, size, args.reps // 2, args.seed)
            rows.append([str(groups), str(size), _pct(naive), _pct(clustered), f"{effect:.1f}"])
        _table(
            f"Clustered questions (half the variance per document), {args.reps // 2} data sets",
            ["documents", "questions each", "naive", "--cluster", "design effect"],
            rows,
        )
    if "slices" in checks:
        _table(
            f"Slice regressions in the verdict, 5 slices of 40, {args.slice_reps} null data sets",
            ["outcome", "family-wise error"],
            [[kind, _pct(slice_fwer(kind, args.slice_reps, args.seed))] for kind in KINDS],
        )
    if "large" in checks:
        _large(args.large_reps, args.seed, tuple(int(m) for m in args.large_changed.split(",")))


def _coverage(reps: int, seed: int) -> None:
    se = np.sqrt(0.95 * 0.05 / reps)
    rows = []
    for kind in KINDS:
        for n in SIZES:
            r = null_rates(kind, n, reps, seed)
            rows.append(
                [kind, str(n)]
                + [_pct(r[k]) for k in ("report", "percentile")]
                + [_pct(1 - r["report"])]
                + [_pct(r[k]) for k in ("test", "sign-flip", "max", "sign")]
            )
    _table(
        f"Coverage and size, {reps} null data sets per row (MC s.e. of a 95% coverage "
        f"{100 * se:.2f} points)",
        ["outcome", "n", "report interval", "percentile", "verdict size", "test size"]
        + ["sign-flip", "max of both", "sign test"],
        rows,
    )


def _needed(reps: int, seed: int) -> None:
    rows = []
    for changed, effect in NEEDED_CELLS:
        r = needed_rate(changed, effect, reps, seed)
        rows.append(
            [f"{changed:.0%}", f"{effect:+.0%}", _pct(r["one_way"]), f"{r['n']:,.0f}"]
            + [_pct(r[k]) for k in ("found", "both")]
        )
    _table(
        f"Stated size for the observed difference of a 0/1 outcome, {reps} pilots of 1,000 "
        "questions per row, each followed by a fresh set of that size (80% expected)",
        ["changed", "true difference", "changes the observed way", "median stated size"]
        + ["found", "interval and test"],
        rows,
    )


def _large(reps: int, seed: int, sizes: tuple[int, ...]) -> None:
    rows = []
    for m in sizes:
        runs = reps if m < 10 * NORMAL_LIMIT_FROM else max(reps // 5, 1)
        for kind, changed in LARGE_KINDS:
            r = large_rates(kind, changed, m, runs, seed)
            rows.append(
                [f"{kind}, {changed:.0%} changed", f"{m:,}", f"{round(m / changed):,}", str(runs)]
                + [_pct(r[k]) for k in ("t", "bootstrap", "report")]
                + [f"{_pct(r[f'{k}_below'])} / {_pct(r[f'{k}_above'])}" for k in ("t", "report")]
                + [_pct(r["normal"])]
                + [f"{r['apart']:.3f}", f"{r['reseeded']:.3f}"]
            )
    _table(
        f"The normal limit against the bootstrap ({N_BOOT} resamples), null data sets; bounds "
        "apart as a share of the half-width, medians over the sets",
        ["outcome", "changed", "n", "sets", "t covers", "bootstrap covers", "report covers"]
        + ["t misses below / above", "report misses below / above", "report took t"]
        + ["t vs bootstrap", "bootstrap vs reseeded"],
        rows,
    )


def _power(reps: int, seed: int, kinds: list[str], sizes: tuple[int, ...] = SIZES) -> None:
    rows = []
    cells = [(kind, n, CHANGED) for kind in KINDS + SPARSE_KINDS for n in sizes]
    cells[len(sizes) : len(sizes)] = [("binary", n, LOW_CHANGED) for n in sizes] + [
        ("binary", n, FEW_CHANGED_SHARE) for n in sizes if n >= EXACT_BELOW
    ]
    for kind, n, changed in cells:
        if kind not in kinds:
            continue
        r = power_rate(kind, n, reps, seed, changed)
        label = f"binary, {changed:.0%} changed" if kind == "binary" else kind
        rows.append(
            [label, str(n), f"{r['x']:.4f}"]
            + [_pct(r[k]) for k in ("found", "up", "down", "test", "sign-flip", "both")]
        )
    _table(
        f"Stated detectable difference, found in {reps} data sets per row (80% expected), "
        "half with true difference +X, half -X",
        ["outcome", "n", "mean stated X", "found", "+X", "-X", "test p < 0.05", "sign-flip"]
        + ["interval and test"],
        rows,
    )


if __name__ == "__main__":
    main()
