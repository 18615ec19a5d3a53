"""Check per-slice gate rules against known truth: how often a rule fails a slice whose true
difference sits exactly at the margin (a false fail), and how often one clearly past it.

Usage: ``python bench/simulate_slice_rules.py [--reps 1000] [--sizes 10,20,50,200]
[--slices 1] [--n-boot 2000] [--seed 0] [--kinds binary,score,cost,...]``

Each data set is ``--slices`` slices of n questions, all with the same true difference, judged
by gates.evaluate as ``compare`` judges them (Holm's adjustment over the slices, the one-sided
level 97.5% of the default 95% interval). Outcome types and their rules:

- binary, ``correct[slice] >= 0.05``: 5% of questions fixed and none broken at the margin (a
  small slice then often changes nothing at all), 5% fixed and 15% broken past it (-0.10);
- score, ``score[slice] >= 0.05``: B - A normal, sd 0.2, mean 0.05 at the margin, -0.15 past;
- cost, ``latency_ms[slice] <= -20`` (B at least 20 ms faster in every slice): B - A
  right-skewed, 40 x (LogNormal(0, 1) - e^0.5) + mean, mean -20 ms at the margin, +30 past;
- loss-only cost, ``latency_ms[slice] <= 50``: the same with means 50 and 100 ms. Only a loss
  breaks this rule, so a slice fails it only where the slice table's test finds the loss too.

The first three are rules whose wrong side does not exclude zero: the slice's one-sided p alone
decides them.

With clusters (``--cluster``), questions come in documents of 5 (so 2 documents in a slice of
10): for the binary outcome each document's chance of a fix is 0.2 or 1.8 times the average;
for the others half the variance of B - A is a shift the document's questions share.

"gate" is the rule's verdict; "bootstrap alone" is the verdict from the share of bootstrap
means on the rule's side of the margin (with the usual +1), Holm-adjusted: how rules whose
wrong side does not exclude zero were judged before they read the interval the report prints
(a loss-only rule also needed the slice table's test).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulate import CONFIDENCE, _pct, _table  # noqa: E402

from reportgen.analysis.gates import (  # noqa: E402
    Candidate,
    Requirements,
    SliceEvidence,
    evaluate,
    parse_rule,
)
from reportgen.analysis.stats import compare_with_sides, holm  # noqa: E402

DOCUMENT = 5  # questions per document with clusters
CASES = {  # outcome type: (rule, truth at the margin, truth clearly past it)
    "binary": ("correct[slice] >= 0.05", (0.05, 0.0), (0.05, 0.15)),  # (fixed, broken) shares
    "score": ("score[slice] >= 0.05", 0.05, -0.15),
    "cost": ("latency_ms[slice] <= -20", -20.0, 30.0),
    "loss-only cost": ("latency_ms[slice] <= 50", 50.0, 100.0),
}


def documents(n: int, clustered: bool) -> np.ndarray | None:
    return np.arange(n) // DOCUMENT if clustered else None


def outcome(
    kind: str, truth, n: int, clustered: bool, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Runs A and B of one slice of n questions with the true mean difference ``truth``."""
    groups = documents(n, clustered)
    if kind == "binary":
        fixed, broken = truth
        if groups is not None:  # a document's questions are fixed more or less often together
            fixed = fixed * rng.choice([0.2, 1.8], size=groups.max() + 1)[groups]
        u = rng.random(n)
        a = rng.random(n) < 0.5  # unchanged questions right or wrong alike
        a = np.where(u < fixed, False, np.where(u < fixed + broken, True, a))
        b = np.where(u < fixed, True, np.where(u < fixed + broken, False, a))
        return a.astype(float), b.astype(float)
    noise = _noise(kind, n, rng)
    if groups is not None:  # half the variance a shift the document's questions share
        noise = np.sqrt(0.5) * (noise + _noise(kind, groups.max() + 1, rng)[groups])
    return np.zeros(n), truth + noise


def _noise(kind: str, size: int, rng: np.random.Generator) -> np.ndarray:
    """Draws of mean 0: normal for a score, right-skewed for a cost."""
    if kind == "score":
        return rng.normal(0, 0.2, size)
    return 40 * (rng.lognormal(0, 1, size) - np.exp(0.5))


def evidence(
    value: str, a: np.ndarray, b: np.ndarray, kind: str, clusters, n_boot: int, seed: int
) -> SliceEvidence:
    """The slice as a per-slice rule reads it."""
    evidence = compare_with_sides(
        parse_rule(CASES[kind][0]).metric,
        a,
        b,
        binary=kind == "binary",
        n_boot=n_boot,
        confidence=CONFIDENCE,
        seed=seed,
        clusters=clusters,
        threads=1,
    )
    return SliceEvidence(value, *evidence)


def bootstrap_alone(rule, family: list[SliceEvidence]) -> bool:
    """Whether the share of bootstrap means on the rule's side, Holm-adjusted, is below alpha."""
    alpha = 1 - (1 + CONFIDENCE) / 2
    shares = []
    for s in family:
        means = s.means
        side = means >= rule.margin if rule.op == ">=" else means <= rule.margin
        shares.append((side.sum() + 1) / (len(means) + 1) if s.comparison.n > 1 else 1.0)
    return min(holm(shares)) < alpha


def fail_rates(
    kind: str, truth, n: int, clustered: bool, slices: int, reps: int, n_boot: int, seed: int
) -> tuple[float, float]:
    """Share of data sets in which the gate fails the rule, and the bootstrap alone would."""
    rule = parse_rule(CASES[kind][0])
    rng = np.random.default_rng((seed, n, clustered, list(CASES).index(kind)))
    gate = alone = 0
    for rep in range(reps):
        family = [
            evidence(str(j), *outcome(kind, truth, n, clustered, rng), kind,
                     documents(n, clustered), n_boot, rep)
            for j in range(slices)
        ]  # fmt: skip
        candidate = Candidate("B", {}, {}, {(rule.metric, "slice"): family})
        gate += not evaluate(Requirements((rule,)), [candidate], CONFIDENCE).passed
        alone += bootstrap_alone(rule, family)
    return gate / reps, alone / reps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--sizes", default="10,20,50,200")
    parser.add_argument("--slices", type=int, default=1)
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", default="", help=f"some of {', '.join(CASES)} (default all)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    kinds = args.kinds.split(",") if args.kinds else list(CASES)
    for kind in kinds:
        text, at, past = CASES[kind]
        for clustered in (False, True):
            for n in sizes:
                cells = [
                    fail_rates(kind, truth, n, clustered, args.slices, args.reps, args.n_boot,
                               args.seed)
                    for truth in (at, past)
                ]  # fmt: skip
                rows.append(
                    [text, "documents of 5" if clustered else "none", str(n)]
                    + [_pct(rate) for cell in cells for rate in cell]
                )
    se = np.sqrt(0.025 * 0.975 / args.reps)
    _table(
        f"Per-slice rules, {args.reps} data sets per row, {args.slices} slice(s) of n questions "
        f"each, one-sided level 97.5% (MC s.e. of a 2.5% rate {100 * se:.2f} points)",
        [
            "rule",
            "clusters",
            "n",
            "at the margin: gate fails",
            "bootstrap alone fails",
            "past the margin: gate fails",
            "bootstrap alone fails",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
