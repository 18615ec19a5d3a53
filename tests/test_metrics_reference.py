"""Retrieval metrics of ``compare`` against the plain-Python reference in ``reference.py``.

(a) hand-worked cases (the arithmetic is in the comments) check the reference and the CLI;
(b) seeded random run logs check every per-question value and every mean to 1e-9;
(c) the context mode (no --k: ranking = context_ids, k = its length);
(d) ``metric_curve`` at every k;
(e) wins / losses / ties and fixed / broken counted by hand.
"""

from __future__ import annotations

import math
import random

import pytest
import reference as ref
from click.testing import CliRunner

from reportgen.analysis.registry import base_name
from reportgen.cli import cli

TOL = 1e-9
L2, L3, L4, L5 = math.log2(2), math.log2(3), math.log2(4), math.log2(5)  # 1, 1.585, 2, 2.322


def close(got, expected, tol=TOL):
    if expected is None:
        return got is None
    return got is not None and abs(got - expected) <= tol


# --------------------------------------------------------------------------- (a) hand-worked
# Each case: question_id -> (ranking, relevant_ids, relevant_grades, expected at k = 5).
# Expected "ndcg" is exponential gain (2^g - 1), "ndcg_lin" linear gain (g).
HAND_K = 5
HAND = {
    # Duplicate in the ranking: d1 counts once, at rank 1; its copy at rank 3 occupies the
    # slot and earns nothing. top5 = d1 d2 d1 d3 d4, rel = {d1, d3}.
    # recall = 2/2, precision = 2/5 (not 3/5), hit = 1, mrr = 1/1.
    # DCG = 1/log2(2) + 1/log2(5) (d3 at rank 4); IDCG = 1/log2(2) + 1/log2(3).
    "dup_relevant": (
        ["d1", "d2", "d1", "d3", "d4"],
        ["d1", "d3"],
        [1, 1],
        {
            "recall": 1.0,
            "precision": 2 / 5,
            "hit": 1.0,
            "mrr": 1.0,
            "ndcg": (1 / L2 + 1 / L5) / (1 / L2 + 1 / L3),  # 1.4307 / 1.6309 = 0.8772
            "ndcg_lin": (1 / L2 + 1 / L5) / (1 / L2 + 1 / L3),  # grade 1: 2^1-1 = 1 = g
            # AP: d1 at 1 (1/1), d3 at 4 (2/4); top R=2 = d1 d2
            "map": (1 / 1 + 2 / 4) / 2,
            "rprec": 1 / 2,
            "all": 1.0,
        },
    ),
    # Duplicates push the relevant passage down: x x x r -> r is at rank 4, not 2.
    # recall = 1/1, precision = 1/5, mrr = 1/4; DCG = 1/log2(5), IDCG = 1/log2(2).
    "dup_occupies_slot": (
        ["x", "x", "x", "r"],
        ["r"],
        [1],
        {
            "recall": 1.0,
            "precision": 1 / 5,
            "hit": 1.0,
            "mrr": 1 / 4,
            "ndcg": (1 / L5) / 1,  # 0.4307
            "ndcg_lin": (1 / L5) / 1,
            # AP: r at 4; top R=1 = x
            "map": 1 / 4,
            "rprec": 0.0,
            "all": 1.0,
        },
    ),
    # Fewer retrieved (2) than k (5): precision still divides by 5.
    # rel = {r1, r2, r3}, top5 = r1 x1. recall = 1/3, precision = 1/5 (not 1/2), mrr = 1.
    # DCG = 1/log2(2) = 1; IDCG = 1/log2(2) + 1/log2(3) + 1/log2(4) = 1 + 0.6309 + 0.5.
    "short_ranking": (
        ["r1", "x1"],
        ["r1", "r2", "r3"],
        [1, 1, 1],
        {
            "recall": 1 / 3,
            "precision": 1 / 5,
            "hit": 1.0,
            "mrr": 1.0,
            "ndcg": 1 / (1 / L2 + 1 / L3 + 1 / L4),  # 1 / 2.1309 = 0.4693
            "ndcg_lin": 1 / (1 / L2 + 1 / L3 + 1 / L4),
            # AP: r1 at 1, over |rel| = 3; top R=3 = r1 x1
            "map": (1 / 1) / 3,
            "rprec": 1 / 3,
            "all": 0.0,
        },
    ),
    # Graded labels; z (grade 2) is never retrieved but is part of the ideal order.
    # top5 = a b c d e, grades a:1 c:3 z:2. recall = 2/3, precision = 2/5, mrr = 1.
    # exponential: DCG = (2^1-1)/log2(2) + (2^3-1)/log2(4) = 1 + 7/2 = 4.5
    #              IDCG (3, 2, 1) = 7/1 + 3/log2(3) + 1/log2(4) = 7 + 1.8928 + 0.5 = 9.3928
    # linear:      DCG = 1/1 + 3/2 = 2.5; IDCG = 3/1 + 2/log2(3) + 1/2 = 4.7619
    "graded_ideal_unretrieved": (
        ["a", "b", "c", "d", "e"],
        ["a", "c", "z"],
        [1, 3, 2],
        {
            "recall": 2 / 3,
            "precision": 2 / 5,
            "hit": 1.0,
            "mrr": 1.0,
            "ndcg": (1 / L2 + 7 / L4) / (7 / L2 + 3 / L3 + 1 / L4),  # 0.4791
            "ndcg_lin": (1 / L2 + 3 / L4) / (3 / L2 + 2 / L3 + 1 / L4),  # 0.5250
            # AP: a at 1, c at 3; top R=3 = a b c; z missing
            "map": (1 / 1 + 2 / 3) / 3,
            "rprec": 2 / 3,
            "all": 0.0,
        },
    ),
    # Exponential vs linear with a single grade-3 passage at rank 2 and a grade-1 at rank 1,
    # labels r3:3 r1:1. exponential: DCG = 1/1 + 7/log2(3); IDCG = 7/1 + 1/log2(3).
    # linear: DCG = 1/1 + 3/log2(3); IDCG = 3/1 + 1/log2(3).
    "exp_vs_linear": (
        ["r1", "r3", "x"],
        ["r3", "r1"],
        [3, 1],
        {
            "recall": 1.0,
            "precision": 2 / 5,
            "hit": 1.0,
            "mrr": 1.0,
            "ndcg": (1 + 7 / L3) / (7 + 1 / L3),  # 5.4165 / 7.6309 = 0.7098
            "ndcg_lin": (1 + 3 / L3) / (3 + 1 / L3),  # 2.8928 / 3.6309 = 0.7967
            # AP: r1 at 1, r3 at 2; top R=2 = r1 r3
            "map": (1 / 1 + 2 / 2) / 2,
            "rprec": 1.0,
            "all": 1.0,
        },
    ),
    # A label with grade 0 is not relevant: n0 (grade 0) at rank 1 earns nothing,
    # rel = {r1} (grade 2) at rank 2. recall = 1, precision = 1/5, mrr = 1/2 (not 1).
    # exponential: DCG = 3/log2(3), IDCG = 3/1 -> 1/log2(3); linear: 2/log2(3) / 2 -> same.
    "grade_zero_not_relevant": (
        ["n0", "r1", "x", "y", "z"],
        ["n0", "r1"],
        [0, 2],
        {
            "recall": 1.0,
            "precision": 1 / 5,
            "hit": 1.0,
            "mrr": 1 / 2,
            "ndcg": 1 / L3,  # 0.6309
            "ndcg_lin": 1 / L3,
            # AP: r1 at 2; top R=1 = n0
            "map": 1 / 2,
            "rprec": 0.0,
            "all": 1.0,
        },
    ),
    # A label listed twice keeps its highest grade: r with grades 1 and 3 -> one label, g = 3.
    # rel = {r}: recall = 1/1 (not 1/2); exponential DCG = 7/log2(3), IDCG = 7 (not
    # 7 + 1/log2(3)) -> 1/log2(3); linear: 3/log2(3) / 3 -> 1/log2(3).
    "label_twice_highest_grade": (
        ["x", "r"],
        ["r", "r"],
        [1, 3],
        {
            "recall": 1.0,
            "precision": 1 / 5,
            "hit": 1.0,
            "mrr": 1 / 2,
            "ndcg": 1 / L3,
            "ndcg_lin": 1 / L3,
            # AP: r at 2; top R=1 = x
            "map": 1 / 2,
            "rprec": 0.0,
            "all": 1.0,
        },
    ),
    # The only relevant passage is at rank 6, beyond k = 5: every metric is 0.
    "relevant_beyond_k": (
        ["x1", "x2", "x3", "x4", "x5", "r"],
        ["r"],
        [2],
        dict.fromkeys((*ref.METRICS, "ndcg_lin"), 0.0),
    ),
    # No relevant passage: no labels at all -> every metric null, left out of the means.
    "no_labels": (
        ["x1", "x2"],
        [],
        [],
        dict.fromkeys((*ref.METRICS, "ndcg_lin")),
    ),
    # Only grade-0 labels: still no relevant passage -> null, left out of the means.
    "only_grade_zero": (
        ["n0", "x"],
        ["n0"],
        [0],
        dict.fromkeys((*ref.METRICS, "ndcg_lin")),
    ),
}
METRICS = ref.METRICS  # recall, precision, hit, mrr, ndcg, map, rprec, all


def _hand_rows():
    return [
        {
            "question_id": qid,
            "slice": "hand",
            "retrieved_ids": ranking,
            "relevant_ids": rel,
            "relevant_grades": grades,
            "context_ids": ranking[:HAND_K],
            "correct": True,
            "faithfulness": 1.0,
        }
        for qid, (ranking, rel, grades, _) in HAND.items()
    ]


@pytest.mark.parametrize("qid", list(HAND))
def test_reference_matches_hand_arithmetic(qid):
    ranking, rel, grades, expected = HAND[qid]
    got = ref.all_metrics(ranking, HAND_K, rel, grades, "exponential")
    got["ndcg_lin"] = ref.ndcg(ranking, HAND_K, rel, grades, "linear")
    for name, value in expected.items():
        assert close(got[name], value), (qid, name, got[name], value)


@pytest.fixture(scope="module")
def hand_json(tmp_path_factory, write_log, compare):
    d = tmp_path_factory.mktemp("hand")
    log = write_log(d / "hand.parquet", _hand_rows())
    exp = compare(log, log, d / "exp", "--k", HAND_K, "--n-boot", 100)
    lin = compare(log, log, d / "lin", "--k", HAND_K, "--gain", "linear", "--n-boot", 100)
    return exp, lin


@pytest.mark.parametrize("qid", list(HAND))
def test_cli_hand_cases(hand_json, qid):
    exp, lin = hand_json
    expected = HAND[qid][3]
    row = {r["question_id"]: r for r in exp["per_question"]}[qid]
    row_lin = {r["question_id"]: r for r in lin["per_question"]}[qid]
    for m in METRICS:
        for side in ("a", "b"):
            key = f"{m}@{HAND_K}_{side}"
            assert close(row[key], expected[m]), (qid, key, row[key], expected[m])
    for side in ("a", "b"):
        key = f"ndcg@{HAND_K}_{side}"
        assert close(row_lin[key], expected["ndcg_lin"]), (qid, key, row_lin[key])


def test_cli_hand_means_leave_out_questions_without_relevant(hand_json):
    exp, lin = hand_json
    scored = [q for q, case in HAND.items() if case[3]["recall"] is not None]
    assert len(scored) == len(HAND) - 2
    for m in METRICS:
        entry = exp["metrics"][f"{m}@{HAND_K}"]
        expected = sum(HAND[q][3][m] for q in scored) / len(scored)
        assert entry["n"] == len(scored)
        assert close(entry["a"], expected) and close(entry["b"], expected), (m, entry)
        assert close(entry["diff"], 0.0)
    entry = lin["metrics"][f"ndcg@{HAND_K}"]
    expected = sum(HAND[q][3]["ndcg_lin"] for q in scored) / len(scored)
    assert close(entry["a"], expected), entry
    assert lin["params"]["gain"] == "linear" and exp["params"]["gain"] == "exponential"


def test_cli_grades_column_absent_means_grade_one(tmp_path, write_log, compare):
    # No relevant_grades column: every label has grade 1. rel = {r1, r2, r3},
    # ranking x r1 r2 -> DCG = 1/log2(3) + 1/log2(4); IDCG = 1 + 1/log2(3) + 1/log2(4)
    # (exponential and linear agree for grade 1). recall = 2/3, precision = 2/5, mrr = 1/2.
    rows = [
        {
            "question_id": "q1",
            "slice": "s",
            "retrieved_ids": ["x", "r1", "r2"],
            "relevant_ids": ["r1", "r2", "r3"],
            "context_ids": ["x", "r1", "r2"],
            "correct": True,
            "faithfulness": 0.5,
        }
    ]
    log = write_log(tmp_path / "nogrades.parquet", rows)
    out = compare(log, log, tmp_path / "out", "--k", 5, "--n-boot", 100)
    row = out["per_question"][0]
    expected = {
        "recall": 2 / 3,
        "precision": 2 / 5,
        "hit": 1.0,
        "mrr": 1 / 2,
        "ndcg": (1 / L3 + 1 / L4) / (1 + 1 / L3 + 1 / L4),  # 1.1309 / 2.1309 = 0.5307
    }
    assert close(ref.ndcg(["x", "r1", "r2"], 5, ["r1", "r2", "r3"]), expected["ndcg"])
    for m, value in expected.items():
        assert close(row[f"{m}@5_a"], value), (m, row[f"{m}@5_a"], value)


# --------------------------------------------------------------------------- (b) random logs
N_QUESTIONS = 200
DEPTH = 30
K = 5


def _random_ranking(rng, pool, labels, depth=None):
    depth = rng.randint(0, DEPTH) if depth is None else depth
    rk = rng.sample(pool, depth)
    if labels and rk and rng.random() < 0.6:  # bring a label near the top
        lab = rng.choice(labels)
        if lab in rk:
            rk.remove(lab)
        rk.insert(rng.randrange(min(len(rk), 6) + 1), lab)
    if rk and rng.random() < 0.3:  # duplicates
        for _ in range(rng.randint(1, 3)):
            rk.insert(rng.randrange(len(rk) + 1), rng.choice(rk[:8]))
    return rk[:DEPTH]


def _random_context(rng, rk, labels):
    cands = list(dict.fromkeys(rk[:10] + labels)) or ["none"]
    ctx = rng.sample(cands, min(len(cands), rng.randint(1, 7)))
    if rng.random() < 0.1:
        ctx.append(ctx[0])  # a duplicate in the context too
    return ctx


def make_random_runs(seed: int = 20240611):
    """Two run logs of the same question set with graded labels, duplicates in rankings,
    questions without relevant passage, questions in one run only, and context_ids that are
    NOT a prefix of retrieved_ids (so that the two ranking modes can be told apart)."""
    rng = random.Random(seed)
    rows_a, rows_b = [], []
    for i in range(N_QUESTIONS):
        qid = f"q{i:04d}"
        pool = [f"{qid}-p{j:02d}" for j in range(45)]
        if rng.random() < 0.12:
            labels, grades = [], []
        else:
            labels = rng.sample(pool, rng.randint(1, 8))
            grades = [rng.choice([0, 1, 1, 2, 3]) for _ in labels]
            if rng.random() < 0.15:  # a label listed twice with another grade
                j = rng.randrange(len(labels))
                labels.append(labels[j])
                grades.append(rng.choice([0, 1, 2, 3]))
        slice_ = rng.choice(["fares", "baggage", "refunds"])
        where = rng.random()
        only = None if i in (1, 2) else "a" if where < 0.03 else "b" if where < 0.06 else None
        depth = DEPTH if i in (1, 2) else None  # full depth reached by paired questions
        for rows, run in ((rows_a, "a"), (rows_b, "b")):
            if only not in (None, run):
                continue
            rk = _random_ranking(rng, pool, labels, depth)
            rows.append(
                {
                    "question_id": qid,
                    "slice": slice_,
                    "retrieved_ids": rk,
                    "relevant_ids": labels,
                    "relevant_grades": grades,
                    "context_ids": _random_context(rng, rk, labels),
                    "correct": rng.random() < 0.6,
                    "faithfulness": round(rng.random(), 3),
                }
            )
    rng.shuffle(rows_b)  # row order must not matter
    return rows_a, rows_b


@pytest.fixture(scope="module")
def random_runs(tmp_path_factory, write_log):
    d = tmp_path_factory.mktemp("random")
    rows_a, rows_b = make_random_runs()
    a = write_log(d / "a.parquet", rows_a)
    b = write_log(d / "b.parquet", rows_b)
    return d, rows_a, rows_b, a, b


@pytest.fixture(scope="module")
def random_k_json(random_runs, compare):
    d, _, _, a, b = random_runs
    return compare(a, b, d / "k5", "--k", K, "--n-boot", 200)


def _paired(rows_a, rows_b):
    a = {r["question_id"]: r for r in rows_a}
    b = {r["question_id"]: r for r in rows_b}
    return a, b, sorted(set(a) & set(b))


def _ref_row(row, k=None, ranking="retrieved_ids", kind="exponential"):
    rk = row[ranking]
    return ref.all_metrics(
        rk, len(rk) if k is None else k, row["relevant_ids"], row["relevant_grades"], kind
    )


def test_random_data_covers_the_edge_cases(random_runs):
    _, rows_a, rows_b, _, _ = random_runs
    a, b, paired = _paired(rows_a, rows_b)
    rows = [a[q] for q in paired]
    assert len(set(a) - set(b)) > 0 and len(set(b) - set(a)) > 0
    assert any(not r["relevant_ids"] for r in rows)
    assert any(r["relevant_ids"] and max(r["relevant_grades"]) == 0 for r in rows)
    assert any(len(r["retrieved_ids"]) != len(set(r["retrieved_ids"])) for r in rows)
    assert any(len(r["retrieved_ids"]) < K for r in rows)
    assert any(len(r["relevant_ids"]) != len(set(r["relevant_ids"])) for r in rows)
    assert any(len({g for g in r["relevant_grades"] if g > 0}) > 1 for r in rows)


def test_random_unmatched_and_pairing(random_runs, random_k_json):
    _, rows_a, rows_b, _, _ = random_runs
    a, b, paired = _paired(rows_a, rows_b)
    out = random_k_json
    assert out["schema_version"] == 3
    assert out["n_paired"] == len(paired)
    assert sorted(out["report"]["missing"]["B"]) == sorted(set(a) - set(b))
    assert sorted(out["report"]["missing"]["A"]) == sorted(set(b) - set(a))
    assert sorted(r["question_id"] for r in out["per_question"]) == paired
    assert out["params"]["k"] == K


def test_random_per_question_values(random_runs, random_k_json):
    _, rows_a, rows_b, _, _ = random_runs
    a, b, paired = _paired(rows_a, rows_b)
    per_q = {r["question_id"]: r for r in random_k_json["per_question"]}
    bad = []
    for q in paired:
        for side, row in (("a", a[q]), ("b", b[q])):
            expected = _ref_row(row, K)
            for m in METRICS:
                got = per_q[q][f"{m}@{K}_{side}"]
                if not close(got, expected[m]):
                    bad.append((q, side, m, got, expected[m]))
            assert per_q[q][f"correct_{side}"] == row["correct"]
            assert close(per_q[q][f"faithfulness_{side}"], row["faithfulness"])
        assert per_q[q]["slice"] == a[q]["slice"]
    assert not bad, f"{len(bad)} mismatches, first: {bad[:5]}"


def _expected_entries(a, b, paired, values_a, values_b):
    """Means and hand counts over the paired questions scored in both runs."""
    keep = [q for q in paired if values_a[q] is not None and values_b[q] is not None]
    va = [float(values_a[q]) for q in keep]
    vb = [float(values_b[q]) for q in keep]
    return {
        "n": len(keep),
        "a": sum(va) / len(va),
        "b": sum(vb) / len(vb),
        "diff": sum(y - x for x, y in zip(va, vb, strict=True)) / len(va),
        "wins": sum(y > x for x, y in zip(va, vb, strict=True)),
        "losses": sum(y < x for x, y in zip(va, vb, strict=True)),
        "ties": sum(y == x for x, y in zip(va, vb, strict=True)),
        "fixed": sum(x == 0 and y == 1 for x, y in zip(va, vb, strict=True)),
        "broken": sum(x == 1 and y == 0 for x, y in zip(va, vb, strict=True)),
    }


def _all_expected(rows_a, rows_b, k=None, ranking="retrieved_ids"):
    a, b, paired = _paired(rows_a, rows_b)
    ra = {q: _ref_row(a[q], k, ranking) for q in paired}
    rb = {q: _ref_row(b[q], k, ranking) for q in paired}
    out = {
        m: _expected_entries(
            a, b, paired, {q: ra[q][m] for q in paired}, {q: rb[q][m] for q in paired}
        )
        for m in METRICS
    }
    for m in ("correct", "faithfulness"):
        out[m] = _expected_entries(
            a, b, paired, {q: a[q][m] for q in paired}, {q: b[q][m] for q in paired}
        )
    return out, ra, rb


def test_random_means(random_runs, random_k_json):
    _, rows_a, rows_b, _, _ = random_runs
    expected, _, _ = _all_expected(rows_a, rows_b, K)
    metrics = random_k_json["metrics"]
    for m, exp in expected.items():
        name = f"{m}@{K}" if m in METRICS else m
        got = metrics[name]
        assert got["n"] == exp["n"], (name, got["n"], exp["n"])
        for field in ("a", "b", "diff"):
            assert close(got[field], exp[field]), (name, field, got[field], exp[field])


# (e) wins / losses / ties, fixed / broken, counted by hand from the reference values
def test_random_wins_losses_ties_fixed_broken(random_runs, random_k_json):
    _, rows_a, rows_b, _, _ = random_runs
    expected, _, _ = _all_expected(rows_a, rows_b, K)
    metrics = random_k_json["metrics"]
    for m, exp in expected.items():
        name = f"{m}@{K}" if m in METRICS else m
        got = metrics[name]
        for field in ("wins", "losses", "ties"):
            assert got[field] == exp[field], (name, field, got[field], exp[field])
        if m in ("hit", "all", "correct"):
            assert (got["fixed"], got["broken"]) == (exp["fixed"], exp["broken"]), name
            # for a 0/1 metric every win is a fix and every loss a break
            assert (exp["fixed"], exp["broken"]) == (exp["wins"], exp["losses"])
        else:
            assert got["fixed"] is None and got["broken"] is None, name


# --------------------------------------------------------------------------- (c) context mode
@pytest.fixture(scope="module")
def random_context_json(random_runs, compare):
    d, _, _, a, b = random_runs
    return compare(a, b, d / "ctx", "--n-boot", 200)


def _context_name(out, m):
    names = [n for n in out["metrics"] if n.startswith(f"{m}@")]
    assert len(names) == 1, names
    return names[0]


def test_context_mode_per_question(random_runs, random_context_json):
    _, rows_a, rows_b, _, _ = random_runs
    a, b, paired = _paired(rows_a, rows_b)
    out = random_context_json
    per_q = {r["question_id"]: r for r in out["per_question"]}
    bad = []
    for q in paired:
        for side, row in (("a", a[q]), ("b", b[q])):
            # ranking = context_ids, k = its length (duplicates included)
            expected = _ref_row(row, None, "context_ids")
            for m in METRICS:
                got = per_q[q][f"{_context_name(out, m)}_{side}"]
                if not close(got, expected[m]):
                    bad.append((q, side, m, got, expected[m]))
    assert not bad, f"{len(bad)} mismatches, first: {bad[:5]}"


def test_context_mode_means_and_counts(random_runs, random_context_json):
    _, rows_a, rows_b, _, _ = random_runs
    expected, _, _ = _all_expected(rows_a, rows_b, None, "context_ids")
    out = random_context_json
    for m in METRICS:
        got, exp = out["metrics"][_context_name(out, m)], expected[m]
        assert got["n"] == exp["n"], m
        for field in ("a", "b", "diff"):
            assert close(got[field], exp[field]), (m, field, got[field], exp[field])
        for field in ("wins", "losses", "ties"):
            assert got[field] == exp[field], (m, field, got[field], exp[field])


def test_context_mode_differs_from_retrieved_prefix(random_runs, random_context_json):
    # Guard: with these logs, scoring the first k of retrieved_ids would give other numbers.
    _, rows_a, rows_b, _, _ = random_runs
    a, _, paired = _paired(rows_a, rows_b)
    differ = 0
    for q in paired:
        k = len(a[q]["context_ids"])
        if _ref_row(a[q], None, "context_ids") != _ref_row(a[q], k, "retrieved_ids"):
            differ += 1
    assert differ > 20


# --------------------------------------------------------------------------- (d) metric_curve
def test_metric_curve(random_runs, random_k_json):
    _, rows_a, rows_b, _, _ = random_runs
    a, b, paired = _paired(rows_a, rows_b)
    depth = max(len(r["retrieved_ids"]) for r in rows_a + rows_b)
    assert depth == DEPTH
    curve = random_k_json["metric_curve"]
    got = {}
    for row in curve:
        base = base_name(row["metric"])
        got[(row["run"], base, int(row["k"]))] = row["value"]
    expected_keys = {(run, m, k) for run in "ab" for m in METRICS for k in range(1, depth + 1)}
    assert set(got) == expected_keys
    bad = []
    for run, rows in (("a", a), ("b", b)):
        for k in range(1, depth + 1):
            values = [_ref_row(rows[q], k) for q in paired]
            for m in METRICS:
                expected = ref.mean(v[m] for v in values)
                if not close(got[(run, m, k)], expected):
                    bad.append((run, m, k, got[(run, m, k)], expected))
    assert not bad, f"{len(bad)} mismatches, first: {bad[:5]}"


# ------------------------------------------------------------------- (f) grades past 2^66 gains
# question -> relevant grades of [hi, lo] (hi ranked third, lo second, after a miss), so nDCG is
# near but not 1/2; exact_sum adds 2^-60ths in 128 bits, so unscaled gains overflowed it from one
# grade of 67 or three of 66, and a double from grade 1024 (queries/rules.sql, macro gain).
BIG_GRADES = {
    "g40": [40, 1],
    "g66": [66, 1],
    "g67": [67, 1],
    "three66": [66, 66, 66, 1],
    "g100": [100, 3],
    "g1024": [1024, 1],
    "g2000": [2000, 1000],
}


def _big_grade_rows(grades: dict[str, list[int]]) -> list[dict]:
    return [
        {
            "question_id": qid,
            "retrieved_ids": ["x", "lo", *[f"hi{i}" for i in range(len(g) - 1)]],
            "relevant_ids": [*[f"hi{i}" for i in range(len(g) - 1)], "lo"],
            "relevant_grades": g,
            "correct": True,
        }
        for qid, g in grades.items()
    ]


@pytest.mark.parametrize(
    ("kind", "grades"),
    [
        ("exponential", BIG_GRADES),
        (
            "linear",
            {"g2_40": [2**40, 1], "g2_63": [2**63 - 1, 7], "g2_63x100": [2**63 - 1] * 100 + [1]},
        ),
    ],
)
def test_ndcg_of_huge_gains_is_the_exact_ratio(tmp_path, write_log, compare, kind, grades):
    rows = _big_grade_rows(grades)
    log = write_log(tmp_path / "big.parquet", rows)
    out = compare(log, log, tmp_path / "out", "--k", 200, "--gain", kind, "--n-boot", 100)
    got = {r["question_id"]: r["ndcg@200_a"] for r in out["per_question"]}
    for row in rows:
        expected = ref.ndcg(
            row["retrieved_ids"], 200, row["relevant_ids"], row["relevant_grades"], kind
        )
        assert 0.4 < expected < 1 and close(got[row["question_id"]], expected, 1e-15), row
    curve = {
        int(r["k"]): r["value"]
        for r in out["metric_curve"]
        if r["run"] == "a" and base_name(r["metric"]) == "ndcg"
    }
    assert len(curve) == max(len(r["retrieved_ids"]) for r in rows)
    for k, value in curve.items():
        expected = ref.mean(
            ref.ndcg(r["retrieved_ids"], k, r["relevant_ids"], r["relevant_grades"], kind)
            for r in rows
        )
        assert close(value, expected, 1e-15), (k, value, expected)


def test_validate_takes_huge_grades(tmp_path, write_log):
    log = write_log(tmp_path / "big.parquet", _big_grade_rows(BIG_GRADES))
    result = CliRunner().invoke(cli, ["validate", str(log)])
    assert result.exit_code == 0 and "ok, 7 rows follow" in result.stdout, result.output
