"""Coverage of the Poisson bootstrap interval (reportgen/analysis/poisson.py) against known truth.

Usage: ``python bench/simulate_poisson.py [--sizes 1000,10000,100000] [--reps 1000,200,40]
[--n-boot 1000] [--seed 0]``

For each size n, draws ``reps`` paired data sets of each outcome type of simulate.py (binary,
ties, skewed) with true mean difference 0, computes the interval of B - A from per-run partial
sums over 4 shards (merged, then subtracted, as ``ragreport merge`` does) and counts how often
it contains 0. Each data set uses its own seed. Prints the coverage and its Monte-Carlo
standard error; 95% is the target.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from simulate import CONFIDENCE, KINDS, draw  # noqa: E402

from reportgen.analysis.poisson import difference, merge, partial_sums, percentile_interval  # noqa: E402

SHARDS = 4


def sharded_interval(
    ids: list[str], a: np.ndarray, b: np.ndarray, n_boot: int, seed: int
) -> tuple[float, float]:
    """The interval of mean(B - A) from each run's partial sums over SHARDS shards."""
    bounds = np.linspace(0, len(ids), SHARDS + 1).astype(int)
    runs = [
        merge(
            [
                partial_sums(ids[lo:hi], values[lo:hi], n_boot, seed)
                for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
            ]
        )
        for values in (a, b)
    ]
    interval = percentile_interval(difference(*runs), CONFIDENCE)
    return interval.low, interval.high


def coverage(kind: str, n: int, reps: int, n_boot: int, seed: int) -> float:
    """Share of ``reps`` null data sets (true difference 0) whose interval contains 0."""
    rng = np.random.default_rng((seed, n))
    ids = [f"q{i}" for i in range(n)]
    covered = 0
    for rep in range(reps):
        a, b = draw(kind, n, 0.0, rng)
        low, high = sharded_interval(ids, a, b, n_boot, seed * 1_000_003 + rep)
        covered += low <= 0.0 <= high
    return covered / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--reps", default="1000,200,40")
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    reps = [int(r) for r in args.reps.split(",")]
    print(f"| n | reps | {' | '.join(KINDS)} |")
    print("| ---: | ---: |" + " ---: |" * len(KINDS))
    for n, r in zip(sizes, reps, strict=True):
        cells = []
        for kind in KINDS:
            rate = coverage(kind, n, r, args.n_boot, args.seed)
            cells.append(f"{rate:.1%} ± {math.sqrt(rate * (1 - rate) / r):.1%}")
        print(f"| {n:,} | {r} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
