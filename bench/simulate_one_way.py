"""Check the verdict on a continuous metric whose few changes go nearly all one way: how often it
says "B better" or "B worse", with the report's rule (the bounded score interval joins under
stats.ONE_WAY_BELOW changed questions, fewer than stats.ONE_WAY_RARER of them the rarer way) and
without it (only under stats.FEW_CHANGED changed, the rule before).

Usage: ``python bench/simulate_one_way.py [--reps 1000] [--sizes 30,50,100,200]
[--kinds skewed,symmetric,shift,loss] [--n-boot 2000] [--seed 0]``

A is an nDCG-like score: 0 for 30% of questions, 1 for 10%, else Beta(1, 5). B is A except:
- skewed (no true difference): 30% of the questions strictly inside (0, 1) jump to 1 with
  probability A, else to 0, so B - A averages 0 with rare large gains and many small losses
  (a reranker that now and then lifts the evidence to the top and slightly demotes it
  elsewhere; skewness 3.4, 82% ties);
- symmetric (no true difference): half the questions redrawn from A's law;
- shift (true +0.030): half the questions move by N(0.05, 0.15), cut to [0, 1];
- loss (true -0.015): a fifth of the questions lose 0.15, cut at 0.
Each set is compared with stats.compare_metric as the report compares ndcg@5 (on [-1, 1]). Under
no true difference a 95% interval may lie wholly above, or wholly below, 0 in at most 2.5% of
sets each; under a true one the share of sets with the right verdict is the power. Shares have
their binomial (Clopper-Pearson) 95% intervals.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulate import _table, under_rules  # noqa: E402
from simulate_one_sided import share  # noqa: E402

from reportgen.analysis import stats  # noqa: E402

KINDS = ("skewed", "symmetric", "shift", "loss")
SIZES = (30, 50, 100, 200)
RULES = {"one way too (report)": stats.ONE_WAY_BELOW, f"under {stats.FEW_CHANGED} only": 0}


def _a(rng: np.random.Generator, n: int) -> np.ndarray:
    u = rng.random(n)
    return np.where(u < 0.3, 0.0, np.where(u < 0.4, 1.0, rng.beta(1, 5, n)))


def draw(rng: np.random.Generator, kind: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A and B of one set of ``kind``."""
    a = _a(rng, n)
    b = a.copy()
    if kind == "skewed":
        moved = (rng.random(n) < 0.3) & (a > 0) & (a < 1)
        b[moved] = (rng.random(moved.sum()) < a[moved]).astype(float)
    elif kind == "symmetric":
        moved = rng.random(n) < 0.5
        b[moved] = _a(rng, int(moved.sum()))
    elif kind == "shift":
        moved = rng.random(n) < 0.5
        b[moved] = np.clip(a[moved] + rng.normal(0.05, 0.15, moved.sum()), 0.0, 1.0)
    else:
        moved = rng.random(n) < 0.2
        b[moved] = np.maximum(a[moved] - 0.15, 0.0)
    return a, b


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows = []
    for kind in args.kinds.split(","):
        for n in map(int, args.sizes.split(",")):
            counts = {rule: [0, 0] for rule in RULES}  # wholly above 0, wholly below 0
            rng = np.random.default_rng([args.seed, KINDS.index(kind), n])
            for rep in range(args.reps):
                a, b = draw(rng, kind, n)
                compared = under_rules("ONE_WAY_BELOW", RULES, "ndcg@5", a, b, args.n_boot, rep)
                for rule, c in compared:
                    counts[rule][0] += c.ci_low > 0
                    counts[rule][1] += c.ci_high < 0
            for rule, (above, below) in counts.items():
                rows.append(
                    [kind, f"{n:,}", rule, share(above, args.reps), share(below, args.reps)]
                )
            print(f"{kind} n={n} done", file=sys.stderr, flush=True)
    _table(
        f"Verdicts of {args.reps} sets a row ({args.n_boot} resamples)",
        ["kind", "n", "rule", "B better (wholly above 0)", "B worse (wholly below 0)"],
        rows,
    )


if __name__ == "__main__":
    main()
