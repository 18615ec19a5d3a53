"""Check the interval of a continuous metric where most questions do not change: how often it
misses the true difference, over every data set, over the sets whose differences happen to
have no spread at all (every question changed by one value, usually none) and over those where
1 to 4 questions changed (under stats.FEW_CHANGED); and what that costs, as how often the
interval lies wholly above 0 (the truth is above it).

Usage: ``python bench/simulate_no_spread.py [--reps 2000] [--sizes 5,10,20,50,200]
[--rates 0.01,0.05,0.2] [--n-boot 1000] [--seed 0] [--few-changed K] [--own] [--shift C]
[--cluster K]``

``--few-changed K`` runs the comparison with stats.FEW_CHANGED set to K, to see what another
threshold would cover and cost (the "1 to 4 changed" columns still count sets of 1 to 4).
``--own`` checks a run's own mean instead: the values are the gains (most 0, as an MRR of a run
that rarely finds its passage), compared as mrr in [0, 1] and as a score of unknown range.
``--shift C`` moves every question's B - A by C (-0.3: a retrieval change that drops one of two
labelled passages from the prompt on most questions): the few that changed then lie off C, not
off 0, and the interval counts them from C. ``--cluster K`` compares with ``clusters``, K
questions a cluster in question order (1: each its own, where the clustered interval must read
as the plain one does).

Each question's B - A is 0, except with probability ``rate`` a gain drawn from U(0.1, 0.6) (a
reranker that lifts nDCG on a few questions and leaves the rest alone): the true difference is
0.35 x rate, and a small set often holds no changed question. Each set is compared twice with
stats.compare_metric, as the report compares a metric: as ``ndcg@5``, whose difference lies in
[-1, 1], where differences without spread take no_spread_interval's bound; and as ``m``, a
score of unknown range, where they keep the bootstrap's one value and, under FEW_CHANGED
changed questions, the bootstrap's interval alone, as every continuous metric did before (the
"bootstrap alone" columns). Each share has its binomial (Clopper-Pearson) 95%
interval over the sets.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulate import CONFIDENCE, _table  # noqa: E402
from simulate_one_sided import share  # noqa: E402

from reportgen.analysis import stats  # noqa: E402
from reportgen.analysis.stats import compare_metric, own_mean  # noqa: E402

SIZES = (5, 10, 20, 50, 200)
RATES = (0.01, 0.05, 0.2)
FEW = stats.FEW_CHANGED  # the sets counted as "1 to 4 changed", whatever --few-changed says
GAIN = (0.1, 0.6)  # a changed question's gain, uniform
COLUMNS = (
    "changed rate",
    "truth",
    "n",
    "sets",
    "sets without spread",
    "misses (5%)",
    "misses, bootstrap alone",
    "misses without spread",
    "misses without spread, bootstrap alone",
    "sets with 1 to 4 changed",
    "misses with 1 to 4 changed",
    "misses with 1 to 4 changed, bootstrap alone",
    "wholly on the truth's side of 0",
    "wholly on the truth's side of 0, bootstrap alone",
)


def misses(
    rate: float,
    n: int,
    reps: int,
    n_boot: int,
    seed: int,
    own: bool,
    shift: float = 0.0,
    cluster: int | None = None,
) -> dict[str, int]:
    """Over ``reps`` sets: how many have no spread ("flat") and how many 1 to 4 changed
    questions ("few"); how many intervals miss the truth, as ndcg@5 ("ranged") and as a score
    of unknown range ("alone"), over all sets, the flat ones and the few ones; and how many lie
    wholly on the truth's side of 0 ("above"; every B - A moved by ``shift``). With ``own`` the
    interval is of a run's own mean of the gains (most 0, as an MRR of a run that rarely finds
    the passage), as mrr in [0, 1] and as a score of unknown range; ``cluster``: questions a
    cluster."""
    clusters = None if cluster is None else np.arange(n) // cluster
    rng = np.random.default_rng((seed, n, int(rate * 1e6)))
    truth = shift + rate * sum(GAIN) / 2
    keys = ("ranged", "alone", "ranged flat", "alone flat", "ranged few", "alone few")
    counts = dict.fromkeys(("flat", "few", *keys, "ranged above", "alone above"), 0)
    for rep in range(reps):
        a = rng.random(n)
        gain = np.where(rng.random(n) < rate, rng.uniform(*GAIN, n), 0.0)
        b = a + shift + gain
        flat = bool(np.ptp(gain) == 0)
        few = 0 < np.count_nonzero(gain) < FEW
        counts["flat"] += flat
        counts["few"] += few
        for name, key in (("mrr" if own else "ndcg@5", "ranged"), ("m", "alone")):
            if own:
                c = own_mean(
                    name, gain, binary=False, n_boot=n_boot, confidence=CONFIDENCE, seed=rep,
                    span=(0.0, 1.0) if key == "ranged" else None, clusters=clusters,
                )  # fmt: skip
            else:
                c, _ = compare_metric(
                    name, a, b, binary=False, n_boot=n_boot, confidence=CONFIDENCE, seed=rep,
                    threads=1, clusters=clusters,
                )  # fmt: skip
            missed = not c.ci_low <= truth <= c.ci_high
            counts[key] += missed
            counts[f"{key} flat"] += missed and flat
            counts[f"{key} few"] += missed and few
            counts[f"{key} above"] += c.ci_low > 0 if truth > 0 else c.ci_high < 0
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--rates", default=",".join(map(str, RATES)))
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--few-changed", type=int, default=stats.FEW_CHANGED)
    parser.add_argument("--own", action="store_true", help="a run's own mean, not B - A")
    parser.add_argument("--shift", type=float, default=0.0, help="B - A of the unchanged")
    parser.add_argument("--cluster", type=int, default=None, help="questions a cluster")
    args = parser.parse_args(argv)
    stats.FEW_CHANGED = args.few_changed
    rows = []
    for rate in (float(r) for r in args.rates.split(",")):
        for n in (int(s) for s in args.sizes.split(",")):
            k = misses(
                rate, n, args.reps, args.n_boot, args.seed, args.own, args.shift, args.cluster
            )
            flat, few = k["flat"], k["few"]
            rows.append(
                [f"{rate:g}", f"{args.shift + rate * sum(GAIN) / 2:.4f}", str(n), str(args.reps)]
                + [share(flat, args.reps), share(k["ranged"], args.reps)]
                + [share(k["alone"], args.reps)]
                + [share(k[f"{key} flat"], flat) if flat else "-" for key in ("ranged", "alone")]
                + [share(few, args.reps)]
                + [share(k[f"{key} few"], few) if few else "-" for key in ("ranged", "alone")]
                + [share(k[f"{key} above"], args.reps) for key in ("ranged", "alone")]
            )
    of = "a run's own mean" if args.own else "B - A"
    of += "" if args.cluster is None else f", {args.cluster} questions a cluster"
    _table(
        f"Misses of the {CONFIDENCE:.0%} interval of {of} where few questions change, "
        f"{args.reps} data sets per row, {args.n_boot} resamples; binomial 95% intervals",
        list(COLUMNS),
        rows,
    )


if __name__ == "__main__":
    main()
