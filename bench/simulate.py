"""Check the statistics against known truth: simulated paired data sets, thousands per cell.

Usage: ``python bench/simulate.py [--reps 2000] [--power-reps 1000] [--seed 0]``

Prints one table per check (tests/test_simulation.py runs a quick version of each):

- coverage: share of 95% intervals that contain the true mean difference, for the interval
  the report uses (stats.compare_metric: studentized bootstrap and t for continuous metrics
  under 1,000 questions, else the expanded percentile) and the plain percentile interval it
  replaced; on these additive models coverage is the same at any true difference, so it is
  measured where the truth is 0;
  "verdict size" is the share of null data sets (true difference 0) called "B better" or
  "B worse", and "test size" the share where the paired test's p < 0.05 (the old sign test
  beside it for contrast);
- power: a pilot data set gives the stated detectable difference X; a fresh data set with true
  difference X is drawn from the same population and the verdict checked (80% expected);
- slices: 5 slices of 40 questions under no true difference; the share of data sets with any
  slice regression in the verdict (family-wise error, 5% allowed).

Outcome types (true mean difference ``effect`` in each):
- binary: a 0/1 outcome, 30% of questions change between A and B (fixed or broken);
- ties: nDCG-like, half the questions tie, the others move by a normal amount (sd 0.3);
- skewed: faithfulness-like, most questions lose a little while a few gain a lot
  (0.2 x (Exp(1) - 1), skewness 2): the case where the median and the mean disagree.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reportgen.power import power_of  # noqa: E402
from reportgen.stats import (  # noqa: E402
    compare_metric,
    holm,
    percentile_interval,
    sign_test,
)

KINDS = ("binary", "ties", "skewed")
SIZES = (20, 50, 200, 1000)
CONFIDENCE = 0.95
N_BOOT = 2000  # per data set; the quantiles' Monte-Carlo error averages out over data sets
CHANGED = 0.3  # binary: share of questions that differ between A and B


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
        moved = rng.random(n) < 0.5
        d = np.where(moved, rng.normal(effect / 0.5, 0.3, n), 0.0)
    else:
        d = 0.2 * (rng.exponential(1.0, n) - 1) + effect
    a = rng.random(n)
    return a, a + d


def _compare(kind: str, a: np.ndarray, b: np.ndarray, seed: int):
    c, means = compare_metric(
        "m", a, b, binary=kind == "binary", n_boot=N_BOOT, confidence=CONFIDENCE, seed=seed
    )
    return c, means


def null_rates(kind: str, n: int, reps: int, seed: int) -> dict[str, float]:
    """Coverage and error rates over ``reps`` data sets with no true difference."""
    rng = np.random.default_rng((seed, n, KINDS.index(kind)))
    hits = {"report": 0, "percentile": 0, "test": 0, "sign": 0}
    for rep in range(reps):
        a, b = draw(kind, n, 0.0, rng)
        c, means = _compare(kind, a, b, rep)
        low, high = percentile_interval(means, CONFIDENCE)
        hits["report"] += c.ci_low <= 0 <= c.ci_high
        hits["percentile"] += low <= 0 <= high
        hits["test"] += c.p < 1 - CONFIDENCE
        hits["sign"] += sign_test(c.wins, c.losses) < 1 - CONFIDENCE
    return {key: value / reps for key, value in hits.items()}


def power_rate(kind: str, n: int, reps: int, seed: int) -> tuple[float, float]:
    """(share of data sets where the stated detectable difference was found, its mean)."""
    rng = np.random.default_rng((seed, n, KINDS.index(kind), 1))
    found, stated = 0, []
    for rep in range(reps):
        pilot, _ = _compare(kind, *draw(kind, n, 0.0, rng), rep)
        x = power_of(pilot, CONFIDENCE).min_detectable
        assert x is not None
        changed = (pilot.wins + pilot.losses) / n
        a, b = draw(kind, n, x, rng, changed=max(changed, x))
        c, _ = _compare(kind, a, b, rep)
        found += c.ci_low > 0 or c.ci_high < 0
        stated.append(x)
    return found / reps, float(np.mean(stated))


def slice_fwer(kind: str, reps: int, seed: int, slices: int = 5, size: int = 40) -> float:
    """Share of null data sets with any slice regression that survives Holm (the verdict's)."""
    rng = np.random.default_rng((seed, KINDS.index(kind), 2))
    alarms = 0
    for rep in range(reps):
        a, b = draw(kind, slices * size, 0.0, rng)
        overall, _ = _compare(kind, a, b, rep)
        parts = [
            _compare(kind, a[i : i + size], b[i : i + size], rep)[0]
            for i in range(0, slices * size, size)
        ]
        adjusted = holm([c.p for c in parts])
        alarms += any(
            overall.diff > 0 and c.diff < 0 and p < 1 - CONFIDENCE
            for c, p in zip(parts, adjusted, strict=True)
        )
    return alarms / reps


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
    parser.add_argument("--slice-reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    se = np.sqrt(0.95 * 0.05 / args.reps)
    rows = []
    for kind in KINDS:
        for n in SIZES:
            r = null_rates(kind, n, args.reps, args.seed)
            rows.append(
                [kind, str(n)]
                + [_pct(r[k]) for k in ("report", "percentile")]
                + [_pct(1 - r["report"]), _pct(r["test"]), _pct(r["sign"])]
            )
    _table(
        f"Coverage and size, {args.reps} null data sets per row (MC s.e. of a 95% coverage "
        f"{100 * se:.2f} points)",
        ["outcome", "n", "report interval", "percentile", "verdict size", "test size", "sign test"],
        rows,
    )
    rows = []
    for kind in KINDS:
        for n in SIZES:
            rate, stated = power_rate(kind, n, args.power_reps, args.seed)
            rows.append([kind, str(n), f"{stated:.4f}", _pct(rate)])
    _table(
        f"Stated detectable difference, found in {args.power_reps} data sets per row (80% "
        "expected)",
        ["outcome", "n", "mean stated X", "found"],
        rows,
    )
    _table(
        f"Slice regressions in the verdict, 5 slices of 40, {args.slice_reps} null data sets",
        ["outcome", "family-wise error"],
        [[kind, _pct(slice_fwer(kind, args.slice_reps, args.seed))] for kind in KINDS],
    )


if __name__ == "__main__":
    main()
