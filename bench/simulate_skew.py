"""Check intervals of a skewed, unbounded B - A (a latency, a cost) against known truth: how often
the bound away from the tail lies past the true mean, how often the report's caveat (skew.py)
stands beside such a claim, and what two remedies would cost in power.

Usage: ``python bench/simulate_skew.py [--reps 500] [--sizes 20,50,200,1000] [--n-boot 2000]
[--seed 0]``

B - A is 40 x (e^(s^2/2) - LogNormal(0, s)) + shift: many small slow-downs and rare large
speed-ups, skewness -1.8, -6.2 and -33 for s = 0.5, 1, 1.5. With shift 0 the true mean is 0,
and a 95% interval wholly above 0 ("B slower") is a false claim, which may happen in at most
2.5% of sets; with shift 0.35 standard deviations B is truly slower and the share of sets
that say so is the power. Each set is compared with stats.compare_metric as the report compares
a cost (no known range). Columns:

- "claims": sets whose interval lies wholly above 0, as the report has it;
- "with the caveat": the share of those whose sentence carries skew.caveat;
- "refused": the rate were a bound the caveat marks refused as proof (the claim dropped);
- "at 99%": the rate were that bound taken at the 99% level instead.

A second table runs per-slice rules (gates.evaluate) with no true difference: 'latency_ms[slice]
<= 0' over 5 slices of 20 questions (s = 1), and 'faithfulness[slice] >= 0' over 200 questions
in 20, 10 and 5 slices, B - A = 0.05 (Exp(1) - 1) (mean 0, skewness 2, a score of known range):
how often it fails, and how often its failing detail carries the caveat judged with the whole
run's skewness.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulate import _pct, _table  # noqa: E402

from reportgen.analysis.gates import (  # noqa: E402
    Candidate,
    Requirements,
    SliceEvidence,
    evaluate,
    parse_rule,
)
from reportgen.analysis.skew import LOWER, caveat  # noqa: E402
from reportgen.analysis.stats import compare_metric, compare_with_sides  # noqa: E402

CONFIDENCE = 0.95
SIGMAS = (0.5, 1.0, 1.5)
POWER_SHIFT = 0.35  # standard deviations of B - A


def law_sd(sigma: float) -> float:
    return 40 * float(np.sqrt((np.exp(sigma**2) - 1) * np.exp(sigma**2)))


def draw(rng: np.random.Generator, sigma: float, n: int, shift: float) -> np.ndarray:
    return 40 * (np.exp(sigma**2 / 2) - rng.lognormal(0, sigma, n)) + shift


def _above(d: np.ndarray, n_boot: int, seed: int, confidence: float):
    c, _ = compare_metric(
        "latency_ms", np.zeros(len(d)), d, binary=False, n_boot=n_boot,
        confidence=confidence, seed=seed, threads=1,
    )  # fmt: skip
    return c


def rates(sigma: float, n: int, shift: float, reps: int, n_boot: int, seed: int) -> list[str]:
    """claims, with the caveat, refused, at 99% for one law, size and shift."""
    rng = np.random.default_rng((seed, n, int(sigma * 10), int(shift)))
    claims = flagged = refused = strict = 0
    for rep in range(reps):
        d = draw(rng, sigma, n, shift)
        c = _above(d, n_boot, rep, CONFIDENCE)
        claim = c.ci_low > 0
        marked = claim and caveat(c, LOWER) is not None
        claims += claim
        flagged += marked
        refused += claim and not marked
        if marked:
            strict += _above(d, n_boot, rep, 0.98).ci_low > 0  # 99% one-sided
        else:
            strict += claim
    share = f"{100 * flagged / claims:.0f}%" if claims else "n/a"
    return [_pct(claims / reps), share, _pct(refused / reps), _pct(strict / reps)]


def _latency(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A and B of a latency-like cost, B - A of s = 1 with mean 0."""
    return np.zeros(n), draw(rng, 1.0, n, 0.0)


def _faithfulness(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A and B of a score in [0, 1], B - A = 0.05 (Exp(1) - 1): mean 0, skewness 2, most
    questions losing a little and a few gaining a lot (B above 1 once in about 8,000)."""
    a = rng.uniform(0.3, 0.6, n)
    return a, np.clip(a + 0.05 * (rng.exponential(1, n) - 1), 0, 1)


LAWS = {  # the rule only a slice's false loss can fail, and the pair's law
    "latency_ms": ("latency_ms[slice] <= 0", _latency),
    "faithfulness": ("faithfulness[slice] >= 0", _faithfulness),
}


def slice_rule(metric: str, reps: int, n_boot: int, seed: int, slices: int, size: int) -> list[str]:
    """Fail rate of the metric's per-slice rule with no true difference, and its share with the
    caveat."""
    text, law = LAWS[metric]
    rule = parse_rule(text)
    rng = np.random.default_rng((seed, slices, size))
    fails = marked = 0
    for rep in range(reps):
        a, b = law(rng, slices * size)
        run, _ = compare_metric(
            metric, a, b, binary=False, n_boot=n_boot, confidence=CONFIDENCE, seed=rep,
            threads=1,
        )  # fmt: skip
        family = []
        for j in range(slices):
            part = slice(j * size, (j + 1) * size)
            evidence = compare_with_sides(
                metric, a[part], b[part], binary=False, n_boot=n_boot,
                confidence=CONFIDENCE, seed=rep, threads=1,
            )  # fmt: skip
            family.append(SliceEvidence(str(j), *evidence))
        candidate = Candidate("B", {metric: run}, {}, {(metric, "slice"): family})
        result = evaluate(Requirements((rule,)), [candidate], CONFIDENCE).results[0]
        failed = result.outcome == "fail"
        fails += failed
        marked += failed and "highly skewed" in result.detail
    share = f"{100 * marked / fails:.0f}%" if fails else "n/a"
    return [text, f"{slices} x {size}", _pct(fails / reps), share]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--sizes", default="20,50,200,1000")
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows = []
    for sigma in SIGMAS:
        for n in (int(s) for s in args.sizes.split(",")):
            for label, shift in (("0", 0.0), (f"{POWER_SHIFT} sd", POWER_SHIFT * law_sd(sigma))):
                cells = rates(sigma, n, shift, args.reps, args.n_boot, args.seed)
                rows.append([f"{sigma:g}", str(n), label, *cells])
    _table(
        f"B slower claimed (interval wholly above 0), {args.reps} sets per row",
        ["s", "n", "true mean", "claims", "with the caveat", "refused", "at 99%"],
        rows,
    )
    layouts = [("latency_ms", 5, 20), *(("faithfulness", k, 200 // k) for k in (20, 10, 5))]
    _table(
        f"Per-slice rules, no true difference, {args.reps} sets per row",
        ["rule", "slices", "rule fails", "with the caveat"],
        [slice_rule(metric, args.reps, args.n_boot, args.seed, k, m) for metric, k, m in layouts],
    )


if __name__ == "__main__":
    main()
