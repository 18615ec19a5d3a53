-- Mean retrieval metrics of both runs over retrieved_ids at the cutoffs $cutoffs of 1 .. $depth
-- (every k of an ordinary ranking; log-spaced ones past a depth: metrics.curve_cutoffs),
-- over the paired questions that have relevant passages and a ranking (a null retrieved_ids is
-- not logged, so it is not counted as a ranking that found nothing).
-- Reads: table curve_sums (curve_sums.sql: every batch of questions' changes of their scores,
--   filled by RunDatabase before this query), tables relevant and facts and table paired_ids
--   (the questions counted); macro from_fixed_point (queries/rules.sql).
-- Params: $depth INTEGER (the deepest ranking); $cutoffs INTEGER[] (the k returned).
-- Sums are exact (queries/rules.sql), so the same input gives the same bits whatever the batches
-- and without sorting the tens of millions of steps of a large log. The changes up to k add up to
-- the exact sum of the questions' scores at k (nDCG's with ndcg_at, added at k alone), rounded
-- to a double once and divided by n: the mean of question_metrics.sql's scores at k (at the
-- prompt k, the headline metric's questions and scores), within [0, 1]. Precision is its count
-- of relevant passages over n * k, one rounding of the exact mean.
-- Returns: run, metric (recall | precision | hit | mrr | ndcg | map | rprec | all), k, value.
WITH sums AS (
    SELECT run, k, sum(recall) AS recall, sum(precision) AS precision, sum(hit) AS hit,
           sum(mrr) AS mrr, sum(ndcg) AS ndcg, sum(map) AS map, sum(rprec) AS rprec,
           sum("all") AS "all", sum(ndcg_at) AS ndcg_at
    FROM curve_sums
    GROUP BY run, k
),
n_questions AS (
    -- a labelled question's first label (ideal_rank 1) stands for it: a quarter of the rows to
    -- join at four labels a question (1.4 s of the join at 1M questions)
    SELECT run, count(DISTINCT question_id) AS n
    FROM relevant
    SEMI JOIN (SELECT run, question_id, sample FROM facts WHERE has_retrieved)
        USING (run, question_id, sample)
    WHERE ideal_rank = 1 AND question_id IN (SELECT question_id FROM paired_ids)
    GROUP BY run
),
running AS (
    -- the sums through k: a question's changes up to k add up to its score at k
    SELECT n.run, t.k, n.n,
           sum(coalesce(s.recall, 0)) OVER w AS recall,
           sum(coalesce(s.precision, 0)) OVER w AS precision,
           sum(coalesce(s.hit, 0)) OVER w AS hit,
           sum(coalesce(s.mrr, 0)) OVER w AS mrr,
           sum(coalesce(s.ndcg, 0)) OVER w + coalesce(s.ndcg_at, 0) AS ndcg,
           sum(coalesce(s.map, 0)) OVER w AS map,
           sum(coalesce(s.rprec, 0)) OVER w AS rprec,
           sum(coalesce(s."all", 0)) OVER w AS "all"
    FROM n_questions AS n
    CROSS JOIN range(1, $depth + 1) AS t(k)
    LEFT JOIN sums AS s ON s.run = n.run AND s.k = t.k
    WINDOW w AS (PARTITION BY n.run ORDER BY t.k ROWS UNBOUNDED PRECEDING)
),
means AS (
    SELECT run, k,
           from_fixed_point(recall) / n AS recall,
           precision / (n * k) AS precision,
           from_fixed_point(hit) / n AS hit,
           from_fixed_point(mrr) / n AS mrr,
           from_fixed_point(ndcg) / n AS ndcg,
           from_fixed_point(map) / n AS map,
           from_fixed_point(rprec) / n AS rprec,
           from_fixed_point("all") / n AS "all"
    FROM running
    WHERE list_contains($cutoffs, k)
)
SELECT run, metric, k, value
FROM means
UNPIVOT (value FOR metric IN (recall, precision, hit, mrr, ndcg, map, rprec, "all"))
ORDER BY run, metric, k
