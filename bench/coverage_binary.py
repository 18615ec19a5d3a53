"""Exact coverage of the interval of B - A on a binary outcome, by enumeration.

Usage: ``python bench/coverage_binary.py [--sizes 2,5,10,20,50] [--n-boot 2000] [--seed 0]``

A paired binary outcome on n questions is described by how many were fixed (0 in A, 1 in B)
and how many broken (1 in A, 0 in B): Trinomial(n, p_fixed, p_broken). Every possible outcome is
enumerated with its probability, so a coverage is exact, not simulated: only the bootstrap's own
draws (its seed) are random. For each true (p_fixed, p_broken) and n the script prints the
probability that the 95% interval contains the true difference p_fixed - p_broken, for the
report's interval (compare_metric: the wider on each side of the expanded percentile bootstrap
and Tango's score interval), for the bootstrap alone and for Tango's interval alone, and how
often each has no width (a single point can only cover by luck).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reportgen.analysis.stats import (  # noqa: E402
    bootstrap_moments,
    compare_metric,
    expanded_confidence,
    percentile_interval,
    score_interval,
)

CONFIDENCE = 0.95
# (p_fixed, p_broken): no difference with few or many changes, small and large true gains
TRUTHS = [
    (0.025, 0.025),
    (0.15, 0.15),
    (0.10, 0.0),
    (0.10, 0.05),
    (0.30, 0.10),
    (0.60, 0.0),
    (0.95, 0.0),
]


def outcome(fixed: int, broken: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Runs A and B with ``fixed`` and ``broken`` questions (the rest tie, at 0 and 1 alike)."""
    ties = n - fixed - broken
    a = np.array([0] * fixed + [1] * broken + [0] * (ties // 2) + [1] * (ties - ties // 2))
    b = np.array([1] * fixed + [0] * broken + [0] * (ties // 2) + [1] * (ties - ties // 2))
    return a.astype(float), b.astype(float)


def intervals(fixed: int, broken: int, n: int, n_boot: int, seed: int) -> dict[str, tuple]:
    a, b = outcome(fixed, broken, n)
    report, _ = compare_metric(
        "correct", a, b, binary=True, n_boot=n_boot, confidence=CONFIDENCE, seed=seed
    )
    means, _ = bootstrap_moments(b - a, n_boot, seed, squares=False)
    bootstrap = percentile_interval(means, expanded_confidence(CONFIDENCE, n))
    return {
        "report": (report.ci_low, report.ci_high),
        "bootstrap": bootstrap,
        "score": score_interval(fixed, broken, n, CONFIDENCE),
    }


def coverage(n: int, p_fixed: float, p_broken: float, n_boot: int, seed: int) -> dict:
    truth = p_fixed - p_broken
    out = {name: [0.0, 0.0] for name in ("report", "bootstrap", "score")}
    for fixed in range(n + 1):
        for broken in range(n + 1 - fixed):
            chance = stats.multinomial.pmf(
                [fixed, broken, n - fixed - broken], n, [p_fixed, p_broken, 1 - p_fixed - p_broken]
            )
            if chance < 1e-12:
                continue
            for name, (low, high) in intervals(fixed, broken, n, n_boot, seed).items():
                out[name][0] += chance * (low - 1e-12 <= truth <= high + 1e-12)
                out[name][1] += chance * (high - low < 1e-12)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2,5,10,20,50")
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(
        "| n | p fixed | p broken | report | bootstrap alone | score alone "
        "| no width: report | bootstrap |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in (int(s) for s in args.sizes.split(",")):
        for p_fixed, p_broken in TRUTHS:
            c = coverage(n, p_fixed, p_broken, args.n_boot, args.seed)
            print(
                f"| {n} | {p_fixed:.3f} | {p_broken:.3f} | {c['report'][0]:.1%} "
                f"| {c['bootstrap'][0]:.1%} | {c['score'][0]:.1%} | {c['report'][1]:.1%} "
                f"| {c['bootstrap'][1]:.1%} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
