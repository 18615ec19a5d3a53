"""How much the best of m equally good candidates overstates its gain, against what the page says.

Usage: ``python bench/simulate_winners_curse.py [--sizes 50,200,1000] [--candidates 2,3,5,7]
[--reps 400] [--gain 0.05] [--seed 0]``

Each data set has n questions of varying difficulty p ~ Beta(2, 2); the baseline answers a
question correctly with probability p, and each of m candidates, independently given the
question, with probability p + gain: every candidate has the same true gain. The truth is the
mean over data sets of (the best candidate's measured difference - gain). Beside it, per cell:

- stated: the mean chance gain the page prints (reportgen.comparison.study.chance_gain, from
  the covariance of the candidates' per-question differences), and its ratio to the truth;
- independent: the expected maximum of m independent standard normals times the candidates'
  mean standard error, the figure the page printed before, which ignores that the candidates'
  differences share the baseline (correlation about 0.5 here), and its ratio to the truth.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reportgen.comparison.study import chance_gain  # noqa: E402

STANDARD_NORMALS = 200_000  # draws behind E[max of m independent standard normals]


def _cell(rng: np.random.Generator, n: int, m: int, gain: float, reps: int) -> tuple[float, ...]:
    e_max = rng.standard_normal((STANDARD_NORMALS, m)).max(axis=1).mean()
    truth, stated, independent = [], [], []
    for rep in range(reps):
        p = rng.beta(2, 2, n)
        baseline = rng.random(n) < p
        candidates = rng.random((n, m)) < np.clip(p + gain, 0, 1)[:, None]
        differences = candidates.astype(float) - baseline[:, None]
        truth.append(differences.mean(axis=0).max() - gain)
        stated.append(chance_gain(differences, seed=rep)[0])
        independent.append(e_max * (differences.std(axis=0, ddof=1) / np.sqrt(n)).mean())
    return float(np.mean(truth)), float(np.mean(stated)), float(np.mean(independent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,200,1000")
    parser.add_argument("--candidates", default="2,3,5,7")
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--gain", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"true gain {args.gain} for every candidate; {args.reps} data sets per cell")
    print(f"{'n':>6} {'m':>3} {'truth':>8} {'stated':>8} {'ratio':>6} {'indep.':>8} {'ratio':>6}")
    for n in (int(s) for s in args.sizes.split(",")):
        for m in (int(c) for c in args.candidates.split(",")):
            truth, stated, independent = _cell(rng, n, m, args.gain, args.reps)
            print(
                f"{n:>6} {m:>3} {truth:>+8.4f} {stated:>+8.4f} {stated / truth:>6.2f} "
                f"{independent:>+8.4f} {independent / truth:>6.2f}"
            )


if __name__ == "__main__":
    main()
