"""One cold-process evaluation of both runs by pytrec_eval or ranx, for side_by_side.py.

Usage: ``python bench/library_eval.py pytrec_eval|ranx DICTS.pickle K [again]``

DICTS.pickle holds ``{"qrels": {qid: {doc: grade}}, "runs": [{qid: {doc: score}}, ...]}``.
Prints one JSON line: the seconds spent unpickling and evaluating, and each run's means of the
five metrics at K (recall, precision, hit, reciprocal rank, nDCG with linear gain). With
``again``, the evaluation is repeated in the same process and its seconds printed too (ranx
compiles its metrics with numba on first use in a process).
"""

from __future__ import annotations

import json
import pickle
import sys
import time
from typing import Any


def with_pytrec_eval(qrels: dict[str, Any], runs: list[dict[str, Any]], k: int) -> list[dict]:
    import pytrec_eval

    names = {
        f"recall_{k}": "recall",
        f"P_{k}": "precision",
        f"success_{k}": "hit",
        "recip_rank": "mrr",  # trec_eval has no cutoff for it: over the whole ranking
        f"ndcg_cut_{k}": "ndcg",
    }
    measures = {f"recall.{k}", f"P.{k}", f"success.{k}", "recip_rank", f"ndcg_cut.{k}"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)
    means = []
    for run in runs:
        scores = evaluator.evaluate(run)
        means.append(
            {
                ours: sum(q[theirs] for q in scores.values()) / len(scores)
                for theirs, ours in names.items()
            }
        )
    return means


def with_ranx(qrels: dict[str, Any], runs: list[dict[str, Any]], k: int) -> list[dict]:
    from ranx import Qrels, Run, evaluate

    names = {
        f"recall@{k}": "recall",
        f"precision@{k}": "precision",
        f"hit_rate@{k}": "hit",
        f"mrr@{k}": "mrr",
        f"ndcg@{k}": "ndcg",
    }
    judged = Qrels.from_dict(qrels)
    means = []
    for run in runs:
        scores = evaluate(judged, Run.from_dict(run), list(names))
        means.append({ours: float(scores[theirs]) for theirs, ours in names.items()})
    return means


TOOLS = {"pytrec_eval": with_pytrec_eval, "ranx": with_ranx}


def main() -> None:
    tool, path, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
    started = time.perf_counter()
    with open(path, "rb") as handle:
        dicts = pickle.load(handle)
    loaded = time.perf_counter()
    means = TOOLS[tool](dicts["qrels"], dicts["runs"], k)
    done = time.perf_counter()
    result = {"load_s": loaded - started, "eval_s": done - loaded, "means": means}
    if sys.argv[4:] == ["again"]:
        TOOLS[tool](dicts["qrels"], dicts["runs"], k)
        result["again_s"] = time.perf_counter() - done
    print(json.dumps(result))


if __name__ == "__main__":
    main()
