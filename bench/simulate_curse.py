"""The winner's curse against known truth: how much the best of m measured candidates overstates
its gain, next to what the several-run page says it could.

Usage: ``python bench/simulate_curse.py [--reps 2000] [--n 1000] [--candidates 2,4,7]
[--shared 0,0.5] [--seed 0]``

Every candidate has the same true gain over the baseline (``GAIN`` in ``correct``), so whichever
is measured best, its measured gain minus GAIN is the overstatement. Each question has a latent
ease z ~ N(0, 1); a run answers it correctly when z + e > t_run, with e ~ N(0, 1) its own noise.
Candidates can also share part of their noise (``--shared`` s: e = sqrt(s) u + sqrt(1 - s) v,
u common to every candidate of the question, v each candidate's own), as variants of one
pipeline (two prompts of one retriever) do. Thresholds are set so that P(correct) is exactly
BASE for the baseline and BASE + GAIN for each candidate.

For each data set, as the page computes it (comparison/study.py): the best candidate's gain
d_best and the page's "were they equally good, the best would still show about" E[max of m
standard normals] x se x sqrt(1 - rho), se the mean over candidates of sd(B - A) / sqrt(n) and
rho the mean correlation between two candidates' per-question differences
(``difference_correlation``; the baseline's noise, in every difference, makes rho about 1/2
even for independent candidates). Prints, per m and s, the mean overstatement d_best - GAIN
(with its Monte-Carlo standard error), the mean of the page's figure, their ratio, the share of
data sets where the overstatement exceeds the page's figure, and the figure without the
correlation (E[max] x se, as the page said before).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reportgen.comparison.study import difference_correlation, expected_max  # noqa: E402

BASE = 0.6  # the baseline's true share of correct answers
GAIN = 0.03  # every candidate's true gain in correct


def threshold(p: float, noise_sd: float = 1.0) -> float:
    """t with P(z + e > t) = p for z ~ N(0, 1) and e ~ N(0, noise_sd^2)."""
    return float(-stats.norm.ppf(p) * np.sqrt(1 + noise_sd**2))


def one_data_set(
    rng: np.random.Generator, n: int, m: int, shared: float, e_max: float
) -> tuple[float, float, float]:
    """(overstatement of the best, the page's figure, the figure without the correlation);
    e_max: E[max of m standard normals]."""
    ease = rng.standard_normal(n)
    base = ease + rng.standard_normal(n) > threshold(BASE)
    common = rng.standard_normal((n, 1))
    own = rng.standard_normal((n, m))
    noise = np.sqrt(shared) * common + np.sqrt(1 - shared) * own
    candidates = ease[:, None] + noise > threshold(BASE + GAIN)
    diffs = candidates.astype(float) - base[:, None].astype(float)  # (n, m) per-question B - A
    gains = diffs.mean(axis=0)
    se = float(np.mean(diffs.std(axis=0, ddof=1) / np.sqrt(n)))
    rho = difference_correlation(diffs)
    return float(gains.max() - GAIN), e_max * se * np.sqrt(1 - rho), e_max * se


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--n", type=int, default=1000, help="questions per data set")
    parser.add_argument("--candidates", default="2,4,7")
    parser.add_argument("--shared", default="0,0.5", help="shares of noise the candidates share")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(
        f"{args.reps} data sets per row, {args.n} questions, baseline {BASE:.0%} correct, every "
        f"candidate +{GAIN:.0%}"
    )
    print(
        "| m | shared | overstatement of the best | page says | ratio | over the page's | "
        "without rho |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for shared in (float(s) for s in args.shared.split(",")):
        for m in (int(c) for c in args.candidates.split(",")):
            e_max = expected_max(m)
            rows = np.array([one_data_set(rng, args.n, m, shared, e_max) for _ in range(args.reps)])
            over, page, before = rows.T
            error = over.std(ddof=1) / np.sqrt(len(over))
            print(
                f"| {m} | {shared:g} | {over.mean():+.4f} ± {error:.4f} | {page.mean():+.4f} | "
                f"{over.mean() / page.mean():.2f} | {np.mean(over > page):.1%} | "
                f"{before.mean():+.4f} |"
            )


if __name__ == "__main__":
    main()
