"""How often a rule only a loss can break fails, is inconclusive or passes, on paired 0/1
outcomes of known truth: as the gate judges it (a fail needs the report's test to find the
difference, else the rule is inconclusive) and on the interval alone, as it judged before.

Usage: ``python bench/simulate_loss_rules.py [--reps 400] [--sizes 20,50,200,1000]
[--n-boot 1000] [--seed 0]``

Each set draws every question's change independently: fixed (A wrong, B right) with
probability ``fixed``, broken with ``broken``, else unchanged (30% of those wrong in both). The
truth B - A is ``fixed - broken``: 0 (10% each way), -0.10 (5% fixed, 15% broken) and -0.06
(2%, 8%). Each set is compared as ``compare`` compares a 0/1 metric (stats.compare_metric) and
judged by gates.evaluate on ``correct >= 0`` and ``correct >= -0.05`` at the default 95%. A
fail where the truth is 0 is a false "B worse" the job acts on; the interval alone is
``ci_high`` below the margin.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reportgen.analysis.gates import Candidate, Requirements, evaluate, parse_rule  # noqa: E402
from reportgen.analysis.stats import compare_metric  # noqa: E402

TRUTHS = ((0.10, 0.10), (0.05, 0.15), (0.02, 0.08))  # (fixed, broken) shares
RULES = ("correct >= 0", "correct >= -0.05")


def draw(n: int, fixed: float, broken: float, rng: np.random.Generator) -> tuple:
    u = rng.random(n)
    a, b = np.ones(n), np.ones(n)
    a[u < fixed] = 0
    b[(u >= fixed) & (u < fixed + broken)] = 0
    wrong = (u >= fixed + broken) & (rng.random(n) < 0.3)
    a[wrong], b[wrong] = 0, 0
    return a, b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--sizes", default="20,50,200,1000")
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rules = tuple(map(parse_rule, RULES))
    print("n | fixed, broken | rule | fail | fail on the interval alone | inconclusive | pass")
    for n in map(int, args.sizes.split(",")):
        for fixed, broken in TRUTHS:
            rng = np.random.default_rng([args.seed, n, int(broken * 100)])
            tally = {r.text: np.zeros(4) for r in rules}
            for i in range(args.reps):
                a, b = draw(n, fixed, broken, rng)
                c, _ = compare_metric(
                    "correct", a, b, binary=True, n_boot=args.n_boot, confidence=0.95, seed=i
                )
                judged = evaluate(
                    Requirements(rules), [Candidate("B", {"correct": c}, {}, {})], 0.95
                )
                for rule, r in zip(rules, judged.results, strict=True):
                    kind = ("fail", "inconclusive", "pass").index(r.outcome)
                    tally[rule.text][[0, 2, 3][kind]] += 1
                    tally[rule.text][1] += c.ci_high < rule.margin
            for text, counts in tally.items():
                shares = " | ".join(f"{100 * k / args.reps:.1f}%" for k in counts)
                print(f"{n} | {fixed:.2f}, {broken:.2f} | `{text}` | {shares}", flush=True)


if __name__ == "__main__":
    main()
