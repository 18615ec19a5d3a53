"""Generate two sample run logs of a fare-rules help assistant (airline and rail fare rules desk).

The story the data tells:

* Variant A (``fare_rules_a_baseline``) is a dense retriever feeding the top 5 passages to the
  generator. Variant B (``fare_rules_b_reranker``) reranks the same retriever's top 50 with a
  cross-encoder and keeps 20; it sends 5 passages, or 6 on ~40% of questions, each with its
  title (a larger budget).
* B wins on average (correct 0.65 -> 0.74, hit@5 0.75 -> 0.88, nDCG@5 up): 32 questions fixed,
  10 broken.
* B loses the ``rule_lookup`` slice: the cross-encoder prefers look-alike rule text of *other*
  fare basis codes and demotes the exact identifier match the dense retriever found.
* Failure classes differ: A mostly fails by ranking misses (evidence among the 20 candidates,
  but below the cutoff); B mostly fails on the generation side (evidence in context, answer
  unfaithful or faithful to a stale passage), worse with its 6-passage contexts. Both runs have
  a few answers "from memory" and some retrieval misses (no evidence among the candidates).
* Data smells for an audit to find: 2 answerable questions without labels, 3 labels edited
  between the runs, 2 rankings with a duplicate passage id (one of them in the prompt), 2
  duplicated question texts, and a few fabricated citations (cited passages that were not in
  the context).

Run ``python sample_runs/make_sample_runs.py``; the output is byte-identical on every run.
"""

# ruff: noqa: E501  (the template tables below keep one template per line)
from __future__ import annotations

import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

SEED = 128
OUT = Path(__file__).resolve().parent
SLICES = {"refunds": 66, "changes": 64, "baggage": 55, "rule_lookup": 48, "group_travel": 7}
UNANSWERABLE = {"refunds": 4, "changes": 5, "baggage": 3}  # 12 questions the corpus can't answer
DOCS = {
    "refunds": (100, 200),
    "changes": (200, 300),
    "baggage": (300, 400),
    "rule_lookup": (400, 700),
    "group_travel": (700, 730),
}  # document-number range per slice
FARES = [
    "Saver",
    "Basic",
    "Standard",
    "Flex",
    "Business Flex",
    "Economy Light",
    "Semi-Flex",
    "Premium Economy",
    "Advance",
    "Off-Peak",
    "Anytime",
    "Super Saver",
]
CITIES = [
    "London",
    "Paris",
    "Frankfurt",
    "New York",
    "Madrid",
    "Rome",
    "Amsterdam",
    "Zurich",
    "Lyon",
    "Manchester",
    "Edinburgh",
    "Vienna",
    "Boston",
    "Chicago",
    "Milan",
    "Brussels",
]
BASIS = ["LOW", "SAV", "FLX", "RT", "OW", "NR", "AP14", "X7", "LT", "PX", "EE", "RSTD"]
RULES = {  # ATPCO-style fare rule category: (name, the texts such a rule can have)
    2: ("day/time", ["valid Monday to Thursday only", "valid on all days", "not valid Fridays"]),
    3: ("seasonality", ["high season 15JUN-31AUG", "no seasonal restrictions"]),
    5: ("advance reservation/ticketing", ["ticket {days} days before departure", "no limit"]),
    6: ("minimum stay", ["Saturday-night minimum stay required", "no minimum stay"]),
    7: ("maximum stay", ["maximum stay {n} months", "maximum stay 12 months"]),
    8: ("stopovers", ["no stopovers permitted", "one free stopover each way"]),
    16: (
        "penalties",
        [
            "changes {fee} EUR, refunds not permitted",
            "no penalties",
            "changes and refunds permitted for {fee} EUR",
        ],
    ),
    19: ("children discounts", ["children 2-11 pay 75% of the adult fare", "no child discount"]),
    31: ("voluntary changes", ["changes {fee} EUR plus fare difference", "no changes permitted"]),
    33: ("voluntary refunds", ["refund less {fee} EUR before departure", "taxes only"]),
}
# "question | reference answer | wrong answer"; unanswerable: "question | speculative answer"
TEMPLATES = {
    "refunds": """\
Is the {fare} fare refundable to the original card? | Yes, to the original card less a {fee} EUR fee. | No, {fare} refunds are travel vouchers only.
Can I get a refund on {fare} from {o} to {d} if I cancel {days} days before departure? | Yes, less a {fee} EUR fee. | No, {fare} is non-refundable.
How much is the cancellation fee on the {fare} fare from {o}? | {fee} EUR per passenger per direction. | {fee2} EUR per booking.
If my {fare} flight {o}-{d} is cancelled by the carrier, do I get cash or a voucher? | A cash refund to the original payment method. | A 12-month voucher only.
Are taxes refunded on a non-refundable {fare} ticket from {o}? | Yes, taxes and airport charges are refundable; the fare is not. | No, taxes are forfeited.
How long does a card refund for my {fare} ticket {o}-{d} take? | Within {days} business days. | Up to {n} weeks.
Can I refund only the return leg of my {fare} return {o}-{d}? | Yes, half the return fare less {fee} EUR. | No, part-used tickets have no value.
Is a no-show on the {fare} fare {o}-{d} eligible for any refund? | Only taxes are refunded. | Yes, the fare less {fee2} EUR.""",
    "changes": """\
Can I change my {fare} fare after check-in? | No, after check-in it can only be cancelled and rebooked. | Yes, for {fee2} EUR.
What is the change fee for moving my {fare} ticket {o}-{d} to an earlier date? | {fee} EUR plus any fare difference. | Changes are free on {fare}.
Can I change the passenger name on my {fare} booking from {o}? | No, only spelling fixes of up to 3 letters. | Yes, for {fee2} EUR.
Can I change the departure city on my {fare} ticket from {o}? | Yes, within the same country for {fee} EUR plus fare difference. | Never.
If I move my {fare} ticket {o}-{d} to a pricier date, do I pay the difference? | Yes, plus a {fee} EUR change fee. | No, the fare is honoured on any date.
Can I take an earlier train on the same day with the {fare} fare {o}-{d}? | Only with a paid upgrade. | Yes, any train that day.
Is same-day standby allowed on {fare} fares from {o}? | Yes, free from {days} hours before departure. | No, only on Flex.
How many times can I change the {fare} fare {o}-{d}? | Up to {n} times, {fee} EUR each. | Unlimited free changes.""",
    "baggage": """\
How many checked bags are included with the {fare} fare {o}-{d}? | {bags} bag(s) of up to 23 kg. | {bags2} bag(s).
What is the cabin bag allowance on {fare} from {o}? | One 8 kg cabin bag plus a personal item. | A personal item only.
Can I add a bag to my {fare} booking {o}-{d} after purchase, and what does it cost? | Yes, until 24 hours before departure, {fee} EUR per bag. | Only at the airport.
Is sports equipment included in the {fare} allowance from {o}? | Yes, it counts as one checked bag. | No, it costs {fee2} EUR.
What is the weight limit per checked bag on the {fare} fare {o}-{d}? | 23 kg per bag. | {kg2} kg per bag.
Does the {fare} fare include a bicycle reservation on {o}-{d} trains? | No, bicycles cost {fee} EUR, booked separately. | Yes, one bicycle is included.
Do strollers count against the {fare} allowance from {o}? | No, one stroller per infant is free. | Yes, as a checked bag.""",
    "rule_lookup": """\
What does rule {r} ({rname}) say for fare basis {fb}? | Rule {r} of {fb}: {rt}. | Rule {r} of {fb}: {rt2}.
Quote category {r} ({rname}) of fare basis {fb}. | {fb} cat {r}: {rt}. | {fb} cat {r}: {rt2}.
Under fare basis {fb}, what is the {rname} provision (rule {r})? | {rt}. | {rt2}.
Rule {r} for {fb} {o}-{d}: what applies? | {rt}. | {rt2}.
Does fare basis {fb} have a {rname} restriction in rule {r}? | Rule {r}: {rt}. | Rule {r}: {rt2}.""",
    "group_travel": """\
What is the minimum group size for a group fare {o}-{d}? | {n2} passengers. | 5 passengers.
When must names be submitted for a group booking {o}-{d}? | {days} days before departure. | At check-in.
Is a group deposit refundable if the group {o}-{d} shrinks below {n2}? | Only if cancelled {days}+ days out. | Yes, always.
Do group fares {o}-{d} allow name changes after ticketing? | Yes, 10% of names until {days} days out. | No.
Can a group booking from {o} be split across two departures? | Yes, {fee} EUR per sub-group. | No.""",
}
UNANS = {
    "refunds": """\
Will the {fare} fare become refundable next year? | Yes, from next year.
How long until my refund for booking {pnr} reaches my bank? | About {days} days.""",
    "changes": """\
What will fares cost next summer? | About 8% more than this year.
Will the {o}-{d} {fare} fare be cheaper if I wait a month? | Yes, about {fee2} EUR cheaper.
Is my {o}-{d} flight tomorrow going to be delayed? | No, it is on time.""",
    "baggage": """\
Will the {fare} baggage allowance increase next year? | Yes, to {kg2} kg.
Has my lost bag from {o} been found yet? | Yes, it is on its way to you.
How full will the bins be on tomorrow's {o}-{d} service? | About half full.""",
}
NOT_IN_CORPUS = "Not answerable from the fare rules."
ABSTAIN = "I can't find this in the fare rules; please contact the fare desk."


STR, IDS, BOOL, FLOAT, INT = (
    pa.string(),
    pa.list_(pa.string()),
    pa.bool_(),
    pa.float64(),
    pa.int64(),
)
SCHEMA = pa.schema(
    [
        ("question_id", STR),
        ("question", STR),
        ("slice", STR),
        ("retrieved_ids", IDS),
        ("relevant_ids", IDS),
        ("relevant_grades", pa.list_(INT)),
        ("context_ids", IDS),
        ("correct", BOOL),
        ("faithfulness", FLOAT),
        ("answer", STR),
        ("reference_answer", STR),
        ("answer_relevance", FLOAT),
        ("answerable", BOOL),
        ("abstained", BOOL),
        ("cited_ids", IDS),
        ("human_correct", BOOL),
        ("human_faithful", BOOL),
        ("context_tokens", INT),
        ("latency_ms", FLOAT),
        ("cost_usd", FLOAT),
    ]
)


def pid(doc: int, chunk: int) -> str:
    return f"fr-{doc:04d}#{chunk}"


def facts(rng: np.random.Generator) -> dict:
    o, d = rng.choice(CITIES, 2, replace=False)
    fee, fee2 = rng.choice([15, 25, 40, 50, 75, 90, 120], 2, replace=False)
    r = int(rng.choice(list(RULES)))
    rname, texts = RULES[r]
    i, j = rng.choice(len(texts), 2, replace=False)
    f = dict(
        fare=str(rng.choice(FARES)),
        o=str(o),
        d=str(d),
        fee=int(fee),
        fee2=int(fee2),
        days=int(rng.choice([3, 7, 14, 21, 30])),
        n=int(rng.integers(2, 6)),
        n2=int(rng.choice([8, 10, 12, 15])),
        bags=int(rng.integers(0, 2)),
        bags2=2,
        kg2=int(rng.choice([15, 20, 32])),
        r=r,
        rname=rname,
        pnr="".join(rng.choice(list("ABCDEFGHJKLMNPRSTUVWXYZ23456789"), 6)),
        fb=str(rng.choice(list("YBMHKLQTV")))
        + str(rng.choice(BASIS))
        + str(rng.choice(["US", "EU", "UK", "AP", "", str(rng.integers(1, 9))])),
    )
    f["rt"], f["rt2"] = texts[i].format(**f), texts[j].format(**f)
    return f


def make_questions(rng: np.random.Generator) -> list[dict]:
    qs: list[dict] = []
    seen: set[str] = set()
    for slc, n in SLICES.items():
        for k in range(n):
            unans = k < UNANSWERABLE.get(slc, 0)
            lines = (UNANS if unans else TEMPLATES)[slc].splitlines()
            while True:  # redraw until the question text is new
                f = facts(rng)
                line = lines[rng.integers(len(lines))]
                if slc == "rule_lookup" and k == 0:  # the textbook example, verbatim
                    f.update(
                        r=16,
                        rname="penalties",
                        fb="YLOWUS",
                        rt2="no penalties",
                        rt="changes 75 EUR, refunds not permitted",
                    )
                    line = lines[0]
                parts = [s.format(**f) for s in line.split(" | ")]
                if parts[0] not in seen:
                    break
            seen.add(parts[0])
            q, ref, wrong = [parts[0], NOT_IN_CORPUS, parts[1]] if unans else parts
            lo, hi = DOCS[slc]
            doc, rel = int(rng.integers(lo, hi)), []
            if not unans:  # 1-3 labelled passages: the first answers it, the rest mostly help
                rel = [pid(doc, int(rng.integers(1, 10)))]
                for _ in range(rng.choice(3, p=[0.45, 0.35, 0.2])):
                    other = doc if rng.random() < 0.6 else int(rng.integers(lo, hi))
                    if (cand := pid(other, int(rng.integers(1, 10)))) not in rel:
                        rel.append(cand)
            grades = [2] + [2 if rng.random() < 0.3 else 1 for _ in rel[1:]]
            qs.append(
                dict(
                    slice=slc,
                    question=q,
                    reference_answer=ref,
                    wrong=wrong,
                    answerable=not unans,
                    relevant_ids=rel,
                    relevant_grades=grades[: len(rel)],
                )
            )
    qs = [qs[i] for i in rng.permutation(len(qs))]
    labelled = [i for i, q in enumerate(qs) if q["relevant_ids"]]
    for i in rng.choice(labelled, 2, replace=False):  # smell: answerable, but no labels
        qs[i].update(relevant_ids=[], relevant_grades=[])
    labelled = [i for i, q in enumerate(qs) if q["relevant_ids"] and q["slice"] != "group_travel"]
    src = rng.choice(labelled, 2, replace=False)
    for i in src:  # smell: a golden-set row copied under a new id
        j = rng.choice([j for j in labelled if qs[j]["slice"] == qs[i]["slice"] and j not in src])
        qs[j] = dict(qs[i])
    for n, q in enumerate(qs, 1):
        q["question_id"] = f"q{n:04d}"
    return qs


def dense_pool(rng: np.random.Generator, q: dict, depth: int = 50) -> list[str]:
    """The dense retriever's top 50, with the grade-2 passage at a slice-dependent rank."""
    pool: list[str] = [""] * depth
    bands = [0.88, 0.06, 0.01, 0.05] if q["slice"] == "rule_lookup" else [0.72, 0.2, 0.03, 0.05]
    for n, p in enumerate(q["relevant_ids"]):
        band = rng.choice(4, p=bands) if n == 0 else 4  # helpful passages: anywhere
        r = (
            int(rng.choice(5, p=[0.4, 0.25, 0.15, 0.12, 0.08]))
            if band == 0
            else int(rng.integers(*[(5, 20), (20, 50), (50, 99), (0, 80)][band - 1]))
        )
        while r < depth and pool[r]:
            r += 1
        if r < depth:
            pool[r] = p
    lo, hi = DOCS[q["slice"]]
    used = set(q["relevant_ids"])
    for r in range(depth):
        while not pool[r]:  # distractors: mostly same-topic documents
            doc = int(rng.integers(lo, hi)) if rng.random() < 0.6 else int(rng.integers(100, 730))
            if (cand := pid(doc, int(rng.integers(1, 10)))) not in used:
                pool[r] = cand
                used.add(cand)
    return pool


def rerank(rng: np.random.Generator, q: dict, pool: list[str]) -> list[str]:
    """Cross-encoder: strong on meaning, blind to identifiers (rule look-alikes score high)."""
    grade = dict(zip(q["relevant_ids"], q["relevant_grades"], strict=True))
    lo, hi = DOCS[q["slice"]]
    score = -0.045 * np.arange(len(pool)) + rng.normal(0, 0.7, len(pool))
    for n, p in enumerate(pool):
        if q["slice"] == "rule_lookup":
            score[n] += 0.9 if p in grade else 0.3 * (lo <= int(p[3:7]) < hi)
        elif p in grade:
            score[n] += 1.8 if grade[p] == 2 else 1.1
    return [pool[n] for n in np.argsort(-score, kind="stable")[:20]]


def answer_row(rng, q: dict, ranked: list[str], n_ctx: int, luck, run: str) -> dict:
    """The generator's outcome; `luck` is shared by both runs (common random numbers)."""
    ctx, (u, v, w) = ranked[:n_ctx], luck
    grade = dict(zip(q["relevant_ids"], q["relevant_grades"], strict=True))
    best = max(grade.get(p, 0) for p in ctx)  # best evidence the generator saw
    if not q["answerable"]:
        abstained = correct = u < (0.42 if run == "a" else 0.6)
    elif not q["relevant_ids"]:  # unlabelled: evidence unknown, the model often gets it
        abstained, correct = False, u < 0.6
    else:
        abstained = best == 0 and w < 0.12
        p = {
            2: 0.8 if n_ctx == 6 else 0.86,
            1: 0.4 if n_ctx == 6 else 0.45,
            0: 0.05 if run == "a" else 0.14,
        }[best]  # B's on-topic context helps a guess
        correct = not abstained and u < p
    if abstained or (correct and not q["relevant_ids"]):
        faith = 1.0
    elif correct:
        faith = (
            float(rng.choice([0, 1 / 3]))
            if best == 0
            else float(rng.choice([1, 3 / 4, 2 / 3], p=[0.9, 0.05, 0.05]))
        )
    elif best > 0 or not q["answerable"]:  # hallucination, or faithful to a stale passage
        faith = float(rng.choice([0, 1 / 3, 1 / 2, 2 / 3, 3 / 4])) if v < 0.75 else 1.0
    else:
        faith = 1.0 if v > 0.7 else float(rng.choice([0, 1 / 3, 1 / 2]))
    cited: list[str] = []
    if not abstained:
        cited = [p for p in ctx if p in grade][:2] if correct else []
        cited = cited or [ctx[int(rng.integers(len(ctx)))]]
        if rng.random() < 0.3:
            cited = list(dict.fromkeys(cited + [ctx[int(rng.integers(len(ctx)))]]))
    prefix = str(rng.choice(["", "", "Per the fare rules: ", "In short: "]))
    answer = ABSTAIN if abstained else prefix + (q["reference_answer"] if correct else q["wrong"])
    # fixed size per passage; B's reranker also passes each passage's title (+20 tokens)
    tokens = sum(180 + zlib.crc32(p.encode()) % 81 + (20 if run == "b" else 0) for p in ctx)
    out_tokens = int(len(answer.split()) * 1.4) + 20
    latency = (350 + 0.55 * tokens + 18 * out_tokens) * rng.lognormal(0, 0.15)
    cost = (tokens + 350) * 2.5e-6 + out_tokens * 1e-5
    if run == "b":  # the cross-encoder scores 50 candidates
        latency, cost = latency + rng.normal(560, 70), cost + 2e-4
    relevance = (
        rng.uniform(0.2, 0.45)
        if abstained
        else rng.uniform(0.85, 1.0)
        if correct
        else rng.uniform(0.55, 0.95)
    )
    return dict(
        retrieved_ids=ranked,
        context_ids=ctx,
        correct=bool(correct),
        faithfulness=faith,
        answer=answer,
        answer_relevance=round(float(relevance), 2),
        abstained=bool(abstained),
        cited_ids=cited,
        context_tokens=int(tokens),
        latency_ms=round(float(latency), 1),
        cost_usd=round(float(cost), 6),
    )


def build() -> tuple[list[dict], dict[str, list[dict]]]:
    rng_q, rng_r, rng_g, rng_s = np.random.default_rng(SEED).spawn(4)
    qs = make_questions(rng_q)
    dup = set(rng_s.choice(len(qs), 2, replace=False).tolist())
    runs: dict[str, list[dict]] = {"a": [], "b": []}
    for i, q in enumerate(qs):
        pool = dense_pool(rng_r, q)
        ranked = {"a": pool[:20], "b": rerank(rng_r, q, pool)}
        luck = rng_g.random(3)
        for run in "ab":
            if i in dup:  # smell: a passage listed twice, once in the prompt, once deeper down
                slots = range(3, 5) if i == min(dup) else range(9, 20)
                r = next(r for r in slots if ranked[run][r] not in q["relevant_ids"])
                ranked[run][r] = ranked[run][2]
            n_ctx = 6 if run == "b" and rng_r.random() < 0.4 else 5
            row = answer_row(rng_g, q, ranked[run], n_ctx, luck, run)
            runs[run].append({k: q[k] for k in SCHEMA.names if k in q} | row)
    b = runs["b"]  # golden-set drift: three labels edited between the runs
    i0, i1, i2 = (
        int(i)
        for i in rng_s.choice(
            [i for i, q in enumerate(qs) if 1 in q["relevant_grades"]], 3, replace=False
        )
    )
    b[i0]["relevant_grades"] = [2] * len(qs[i0]["relevant_ids"])  # a grade raised 1 -> 2
    b[i1]["relevant_ids"], b[i1]["relevant_grades"] = qs[i1]["relevant_ids"][:1], [2]  # dropped
    extra = next(p for p in b[i2]["retrieved_ids"] if p not in qs[i2]["relevant_ids"])
    b[i2]["relevant_ids"] = qs[i2]["relevant_ids"] + [extra]  # a passage added
    b[i2]["relevant_grades"] = qs[i2]["relevant_grades"] + [1]
    human = sorted(rng_s.choice(len(qs), 40, replace=False).tolist())
    for run, n_fake in (("a", 7), ("b", 6)):
        rows = runs[run]
        answered = [i for i, r in enumerate(rows) if not r["abstained"]]
        for i in rng_s.choice(answered, n_fake, replace=False):  # cites a passage not sent
            r = rows[i]
            fake = next(p for p in r["retrieved_ids"][10:] if p not in r["context_ids"])
            r["cited_ids"] = r["cited_ids"] + [fake]
        wrong_c = set(rng_s.choice(human, 5, replace=False).tolist())  # 87.5% agreement
        wrong_f = set(rng_s.choice(human, 5, replace=False).tolist())
        for i, r in enumerate(rows):  # null outside the 40 human-labelled questions
            r["human_correct"] = r["correct"] != (i in wrong_c) if i in human else None
            r["human_faithful"] = (r["faithfulness"] == 1) != (i in wrong_f) if i in human else None
    return qs, runs


PROMPT_SEED = 12  # of 200 seeds, one whose chance gain in correct is among the largest (+0.05)


def prompt_variant(qs: list[dict], runs: dict[str, list[dict]], seed: int) -> list[dict]:
    """C: A's retrieval and context with a reworded answer prompt that is, in truth, no better
    than A's: its answers are drawn afresh with A's probabilities. Its measured gain is chance
    alone, which is why the report warns that the best of several candidates overstates its gain
    (the winner's curse). Drawn from its own seed, after A and B, which stay as they were."""
    rng = np.random.default_rng(seed)
    rows = []
    for q, a in zip(qs, runs["a"], strict=True):
        row = answer_row(rng, q, list(a["retrieved_ids"]), 5, rng.random(3), "a")
        rows.append(
            {k: q[k] for k in SCHEMA.names if k in q}
            | row
            | {"human_correct": None, "human_faithful": None}
        )
    return rows


def failure_kind(r: dict) -> str:
    rel = set(r["relevant_ids"])
    in_ctx = bool(rel & set(r["context_ids"]))
    if not r["answerable"]:
        return "ok" if r["correct"] else "answered_unanswerable"  # should have abstained
    if not rel:
        return "ok"  # answerable but unlabelled: nothing to classify against
    if r["correct"]:
        return "ok" if in_ctx else "answered_from_memory"
    if not rel & set(r["retrieved_ids"]):
        return "retrieval_miss"
    if not in_ctx:
        return "ranking_miss"
    return "hallucination" if r["faithfulness"] < 1 else "faithful_but_wrong"


def has_g2(r: dict) -> bool:
    pairs = zip(r["relevant_ids"], r["relevant_grades"], strict=True)
    return any(g == 2 and p in r["context_ids"] for p, g in pairs)


def hit_ndcg(r: dict, k: int = 5) -> tuple[float, float]:
    grade = dict(zip(r["relevant_ids"], r["relevant_grades"], strict=True))
    top = r["retrieved_ids"][:k]
    dcg = sum((2 ** grade.get(p, 0) - 1) / np.log2(n + 2) for n, p in enumerate(top))
    ideal = sorted(grade.values(), reverse=True)[:k]
    idcg = sum((2**g - 1) / np.log2(n + 2) for n, g in enumerate(ideal))
    return float(any(p in grade for p in top)), dcg / idcg


def summary(runs: dict[str, list[dict]]) -> None:
    a, b = runs["a"], runs["b"]
    print(f"{'slice':<13}{'n':>4}  correct A/B  hit@5 A/B    nDCG@5 A/B")
    for slc in [*SLICES, "ALL"]:
        idx = [i for i, r in enumerate(a) if slc in ("ALL", r["slice"])]
        c = [np.mean([runs[run][i]["correct"] for i in idx]) for run in "ab"]
        (h_a, n_a), (h_b, n_b) = (
            np.mean([hit_ndcg(runs[run][i]) for i in idx if runs[run][i]["relevant_ids"]], axis=0)
            for run in "ab"
        )
        print(
            f"{slc:<13}{len(idx):>4}  {c[0]:.2f}/{c[1]:.2f}    {h_a:.2f}/{h_b:.2f}"
            f"    {n_a:.2f}/{n_b:.2f}"
        )
    pairs = list(zip(a, b, strict=True))
    print(
        f"fixed by B {sum(x['correct'] < y['correct'] for x, y in pairs)}, "
        f"broken by B {sum(x['correct'] > y['correct'] for x, y in pairs)}"
    )
    for run, rows in runs.items():
        kinds = Counter(failure_kind(r) for r in rows if failure_kind(r) != "ok")
        print(f"run {run}:", ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
        ev = [[r["correct"] for r in rows if r["relevant_ids"] and has_g2(r) == e] for e in (1, 0)]
        print(
            f"  correct with a grade-2 passage in context {np.mean(ev[0]):.2f} (n={len(ev[0])}),"
            f" without {np.mean(ev[1]):.2f} (n={len(ev[1])})"
        )
        fake = sum(bool(set(r["cited_ids"]) - set(r["context_ids"])) for r in rows)
        hum = [r for r in rows if r["human_correct"] is not None]
        agree = np.mean(
            [
                [
                    r["human_correct"] == r["correct"],
                    r["human_faithful"] == (r["faithfulness"] == 1),
                ]
                for r in hum
            ],
            axis=0,
        )
        print(
            f"  fabricated citations {fake}, human agreement {agree[0]:.3f}/{agree[1]:.3f}, "
            f"6-passage contexts {sum(len(r['context_ids']) == 6 for r in rows)}, latency "
            f"{np.mean([r['latency_ms'] for r in rows]):.0f} ms, "
            f"cost ${np.mean([r['cost_usd'] for r in rows]):.5f}"
        )
    drift = sum(
        (x["relevant_ids"], x["relevant_grades"]) != (y["relevant_ids"], y["relevant_grades"])
        for x, y in pairs
    )
    print(
        f"smells: label drift {drift}, unanswerable {sum(not r['answerable'] for r in a)}, "
        f"answerable without labels {sum(r['answerable'] and not r['relevant_ids'] for r in a)}, "
        f"duplicate texts {len(a) - len({r['question'] for r in a})}, rankings with a "
        f"duplicate id {sum(len(set(r['retrieved_ids'])) < 20 for r in a)}"
    )


def main() -> None:
    qs, runs = build()
    runs["c"] = prompt_variant(qs, runs, PROMPT_SEED)
    names = (
        ("a", "fare_rules_a_baseline"),
        ("b", "fare_rules_b_reranker"),
        ("c", "fare_rules_c_prompt"),
    )
    for run, name in names:
        table = pa.table({c: [r[c] for r in runs[run]] for c in SCHEMA.names}, schema=SCHEMA)
        pq.write_table(table, OUT / f"{name}.parquet", compression="zstd")
    summary({k: v for k, v in runs.items() if k in "ab"})
    gain = np.mean([c["correct"] for c in runs["c"]]) - np.mean([a["correct"] for a in runs["a"]])
    print(f"C (a prompt no better than A's): measured gain in correct {gain:+.3f}")


if __name__ == "__main__":
    main()
