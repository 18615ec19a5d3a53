"""How much the best of m equally good candidates overstates its gain, against what the page says.

Usage: ``python bench/simulate_winners_curse.py [--sizes 50,200,1000] [--candidates 2,3,5,7]
[--reps 400] [--gain 0.05] [--seed 0] [--cluster-size 0] [--spread 0.15]``

Each data set has n questions of varying difficulty p ~ Beta(2, 2); the baseline answers a
question correctly with probability p, and each of m candidates, independently given the
question, with probability p + gain: every candidate has the same true gain. The truth is the
mean over data sets of (the best candidate's measured difference - gain). Beside it, per cell:

- stated: the mean chance gain the page prints (reportgen.comparison.study.chance_gain, from
  the covariance of the candidates' per-question differences), and its ratio to the truth;
- independent: the expected maximum of m independent standard normals times the candidates'
  mean standard error, the figure the page printed before, which ignores that the candidates'
  differences share the baseline (correlation about 0.5 here), and its ratio to the truth.

With ``--cluster-size S`` the questions come S to a document, and each candidate's gain moves
from document to document (a shift ~ N(0, --spread) per candidate and document, p + gain +
shift clipped to [0, 1]): every candidate still has the same expected gain, but questions of
one document are not independent. A further column, clustered, is the chance gain the page
prints under --cluster (the cluster-robust covariance), beside its ratio to the truth.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reportgen.comparison.study import chance_gain  # noqa: E402

STANDARD_NORMALS = 200_000  # draws behind E[max of m independent standard normals]


def _chances(p: np.ndarray, gain: float, shift: np.ndarray) -> np.ndarray:
    """Each candidate's chance of answering each question: p + gain, moved by its documents'
    shift (n x m)."""
    return np.clip(p[:, None] + gain + shift, 0, 1)


def _true_gain(rng: np.random.Generator, gain: float, spread: float) -> float:
    """The expected gain of every candidate, clipping included (gain itself without shifts)."""
    if spread == 0:
        return gain
    p = rng.beta(2, 2, STANDARD_NORMALS)
    return float((_chances(p, gain, rng.normal(0, spread, (len(p), 1))) - p[:, None]).mean())


def _cell(
    rng: np.random.Generator, n: int, m: int, gain: float, reps: int, size: int, spread: float
) -> tuple[float, ...]:
    e_max = rng.standard_normal((STANDARD_NORMALS, m)).max(axis=1).mean()
    expected = _true_gain(rng, gain, spread if size else 0.0)
    docs = np.arange(n) // size if size else np.arange(n)
    truth, stated, independent, clustered = [], [], [], []
    for rep in range(reps):
        p = rng.beta(2, 2, n)
        baseline = rng.random(n) < p
        shift = rng.normal(0, spread, (docs.max() + 1, m))[docs] if size else np.zeros((n, m))
        candidates = rng.random((n, m)) < _chances(p, gain, shift)
        differences = candidates.astype(float) - baseline[:, None]
        truth.append(differences.mean(axis=0).max() - expected)
        stated.append(chance_gain(differences, seed=rep)[0])
        independent.append(e_max * (differences.std(axis=0, ddof=1) / np.sqrt(n)).mean())
        if size:
            clustered.append(chance_gain(differences, seed=rep, clusters=docs)[0])
    means = [float(np.mean(v)) for v in (truth, stated, independent)]
    return (*means, float(np.mean(clustered)) if size else float("nan"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,200,1000")
    parser.add_argument("--candidates", default="2,3,5,7")
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--gain", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cluster-size", type=int, default=0, help="questions per document")
    parser.add_argument("--spread", type=float, default=0.15)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    size = args.cluster_size
    print(f"true gain {args.gain} for every candidate; {args.reps} data sets per cell")
    if size:
        print(
            f"{size} questions a document; a candidate's gain varies by {args.spread} across them"
        )
    print(
        f"{'n':>6} {'m':>3} {'truth':>8} {'stated':>8} {'ratio':>6} {'indep.':>8} {'ratio':>6}"
        + (f" {'clust.':>8} {'ratio':>6}" if size else "")
    )
    for n in (int(s) for s in args.sizes.split(",")):
        for m in (int(c) for c in args.candidates.split(",")):
            truth, stated, independent, clustered = _cell(
                rng, n, m, args.gain, args.reps, size, args.spread
            )
            print(
                f"{n:>6} {m:>3} {truth:>+8.4f} {stated:>+8.4f} {stated / truth:>6.2f} "
                f"{independent:>+8.4f} {independent / truth:>6.2f}"
                + (f" {clustered:>+8.4f} {clustered / truth:>6.2f}" if size else "")
            )


if __name__ == "__main__":
    main()
