"""Check each side of the report's interval against known truth: how often it lies wholly
below the true difference, how often wholly above (2.5% each at the default 95%), and how often
a gate rule whose margin is the truth passes.

Usage: ``python bench/simulate_one_sided.py [--reps 4000]
[--types binary,ties,skewed,latency,heavy] [--sizes 10,20,50,200,1000] [--n-boot 2000]
[--seed 0]``

simulate.py's coverage check adds the two sides together; a rule at a margin reads one bound
(README, Gate rules: every rule is judged at the one-sided 97.5% level), so each side must hold
its own 2.5%. Data sets are simulate.py's outcome types (simulate.draw) with true difference
B - A = 0, plus the latency type:

- binary: 30% of questions change, as many fixed as broken (symmetric);
- ties: half the questions unchanged, the others move by a normal amount (symmetric);
- skewed: 0.2 x (Exp(1) - 1), skewness 2 (faithfulness-like: most lose a little);
- latency: 100 x (LogNormal(0, 1) - e^0.5) ms, skewness 6.2;
- heavy: 0.1 x (LogNormal(0, 1.5) - e^1.125), skewness 33.

Each set is compared as ``compare`` compares a metric (stats.compare_metric, which the gate's
rules on B - A read) and judged by gates.evaluate on two rules with the truth as their margin,
``m <= 0`` (a ceiling: passes where the upper bound is at most the truth) and ``m >= 0`` (a
floor, non-inferiority: passes where the lower bound is at least it); a margin of 0 needs no
test of no difference beside the interval. Every continuous type shifts each question by the
truth, so these shares are those of ``latency_ms <= 50`` at a true +50 ms, or of
``faithfulness >= -0.02`` at a true -0.02. Each share has its binomial (Clopper-Pearson) 95%
interval over the sets.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulate import CONFIDENCE, _table, draw  # noqa: E402

from reportgen.analysis.gates import (  # noqa: E402
    PASS,
    Candidate,
    Requirements,
    evaluate,
    parse_rule,
)
from reportgen.analysis.stats import compare_metric  # noqa: E402

TYPES = ("binary", "ties", "skewed", "latency", "heavy")
SIZES = (10, 20, 50, 200, 1000)
SKEWNESS = {"binary": "0", "ties": "0", "skewed": "2", "latency": "6.2", "heavy": "33"}
RULES = ("m <= 0", "m >= 0")  # the truth is the margin
COLUMNS = (
    "outcome",
    "skewness",
    "n",
    "sets",
    "wholly below (2.5%)",
    "wholly above (2.5%)",
    "either side (5%)",
    "`<= truth` passes",
    "`>= truth` passes",
)


def side_counts(kind: str, n: int, reps: int, n_boot: int, seed: int) -> dict[str, int]:
    """Over ``reps`` data sets of n questions with true difference 0, how many intervals lie
    wholly below it ("below") and wholly above ("above"), and how many sets pass each rule of
    RULES (keyed by the rule)."""
    rng = np.random.default_rng((seed, n, TYPES.index(kind), 5))
    rules = [parse_rule(text) for text in RULES]
    counts = dict.fromkeys(("below", "above", *RULES), 0)
    for rep in range(reps):
        a, b = draw(kind, n, 0.0, rng)
        c, _ = compare_metric(
            "m", a, b, binary=kind == "binary", n_boot=n_boot, confidence=CONFIDENCE,
            seed=rep, threads=1,
        )  # fmt: skip
        counts["below"] += c.ci_high < 0
        counts["above"] += c.ci_low > 0
        gate = evaluate(Requirements(tuple(rules)), [Candidate("B", {"m": c}, {}, {})], CONFIDENCE)
        for result in gate.results:
            counts[result.rule] += result.outcome == PASS
    return counts


def share(k: int, reps: int) -> str:
    """'5.5% [4.5, 6.6]': k of reps, with its Clopper-Pearson 95% interval."""
    low = stats.beta.ppf(0.025, k, reps - k + 1) if k > 0 else 0.0
    high = stats.beta.ppf(0.975, k + 1, reps - k) if k < reps else 1.0
    return f"{100 * k / reps:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--types", default=",".join(TYPES), help=f"some of {', '.join(TYPES)}")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    kinds = args.types.split(",")
    unknown = sorted(set(kinds) - set(TYPES))
    if unknown:
        parser.error(f"unknown type(s) {', '.join(unknown)}; pick from {', '.join(TYPES)}")
    rows = []
    for kind in kinds:
        for n in (int(s) for s in args.sizes.split(",")):
            k = side_counts(kind, n, args.reps, args.n_boot, args.seed)
            rows.append(
                [kind, SKEWNESS[kind], str(n), str(args.reps)]
                + [share(k[key], args.reps) for key in ("below", "above")]
                + [share(k["below"] + k["above"], args.reps)]
                + [share(k[rule], args.reps) for rule in RULES]
            )
    _table(
        f"Each side of the {CONFIDENCE:.0%} interval of B - A, true difference 0, "
        f"{args.reps} data sets per row, {args.n_boot} resamples; binomial 95% intervals",
        list(COLUMNS),
        rows,
    )


if __name__ == "__main__":
    main()
