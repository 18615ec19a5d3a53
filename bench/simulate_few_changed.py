"""Check the interval and test of a continuous metric on a large set where only a handful of
questions change: how often each misses a true difference of 0, on each side, with the
interval chosen by the changed questions (the report's rule) and by all questions (the rule
before: from 1,000 questions the expanded percentile interval and the permutation test).

Usage: ``python bench/simulate_few_changed.py [--reps 1000] [--sizes 1000,2000,10000,100000]
[--changed 5,6,8,12,20,50,200,999,1000] [--n-boot 5000] [--seed 0]``

Each set has n questions with faithfulness in A mostly 1.0 (70%), else uniform; K questions,
drawn at random, change: A's value is redrawn from U(0.3, 0.7) and B's is A's plus or minus
|N(0.2, 0.1)| (sign at random), cut to [0, 1]. The rest tie. B is A in distribution, so the
true difference is 0, and a 95% interval may lie wholly above or wholly below it in at most
2.5% of sets each (a gate rule at a margin reads one bound). Each set is compared with
stats.compare_metric as the report compares faithfulness (``--n-boot`` resamples, the report's
default), once as the report does and once with stats.STUDENTIZED_BELOW set to 0, which at
these sizes is the rule that counted every question. Shares have their binomial
(Clopper-Pearson) 95% intervals.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulate import CONFIDENCE, _table, under_rules  # noqa: E402
from simulate_one_sided import share  # noqa: E402

from reportgen.analysis import stats  # noqa: E402

SIZES = (1_000, 2_000, 10_000, 100_000)
CHANGED = (5, 6, 8, 12, 20, 50, 200, 999, 1_000)
RULES = {"changed questions (report)": stats.STUDENTIZED_BELOW, "all questions (before)": 0}


def draw(rng: np.random.Generator, n: int, changed: int) -> tuple[np.ndarray, np.ndarray]:
    """A and B of one set: ``changed`` questions moved up or down, the rest tied."""
    a = np.where(rng.random(n) < 0.7, 1.0, rng.random(n))
    b = a.copy()
    moved = rng.choice(n, changed, replace=False)
    a[moved] = rng.uniform(0.3, 0.7, changed)
    step = rng.choice([-1.0, 1.0], changed) * np.abs(rng.normal(0.2, 0.1, changed))
    b[moved] = np.clip(a[moved] + step, 0.0, 1.0)
    return a, b


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--changed", default=",".join(map(str, CHANGED)))
    parser.add_argument("--n-boot", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows = []
    for n in map(int, args.sizes.split(",")):
        for k in (k for k in map(int, args.changed.split(",")) if k <= n):
            counts = {rule: [0, 0, 0] for rule in RULES}  # above, below, test p < 5%
            methods: dict[str, set[str]] = {rule: set() for rule in RULES}
            rng = np.random.default_rng([args.seed, n, k])
            for rep in range(args.reps):
                a, b = draw(rng, n, k)
                compared = under_rules(
                    "STUDENTIZED_BELOW", RULES, "faithfulness", a, b, args.n_boot, rep
                )
                for rule, c in compared:
                    tally = counts[rule]
                    tally[0] += c.ci_low > 0
                    tally[1] += c.ci_high < 0
                    tally[2] += c.p < 1 - CONFIDENCE
                    methods[rule].add(c.interval.split(",")[0])
            for rule, (above, below, rejected) in counts.items():
                rows.append(
                    [
                        f"{n:,}", f"{k:,}", rule, "; ".join(sorted(methods[rule])),
                        share(above, args.reps), share(below, args.reps),
                        share(above + below, args.reps), share(rejected, args.reps),
                    ]
                )  # fmt: skip
            print(f"n={n} K={k} done", file=sys.stderr, flush=True)
    _table(
        f"A true difference of 0 on n questions, K of them changed ({args.reps} sets a row, "
        f"{args.n_boot} resamples)",
        [
            "n", "changed", "interval chosen by", "interval", "wholly above 0",
            "wholly below 0", "misses (5%)", "test p < 5%",
        ],
        rows,
    )  # fmt: skip


if __name__ == "__main__":
    main()
