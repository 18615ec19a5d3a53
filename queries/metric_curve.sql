-- Mean retrieval metrics of both runs over retrieved_ids at every cutoff k = 1 .. $depth,
-- over the paired questions that have relevant passages and a ranking (a null retrieved_ids is
-- not logged, so it is not counted as a ranking that found nothing).
-- Reads: table curve_sums (curve_sums.sql: every batch of questions' sums of steps and points,
--   filled by RunDatabase before this query), tables relevant and facts and view paired_ids
--   (the questions counted); macro from_fixed_point (queries/rules.sql).
-- Params: $depth INTEGER (the deepest ranking).
-- Sums are exact (queries/rules.sql), so the same input gives the same bits whatever the batches
-- and without sorting the tens of millions of steps of a large log.
-- Returns: run, metric (recall | precision | hit | mrr | ndcg | map | rprec | all), k, value.
WITH sums AS (
    SELECT run, metric, k, kind, from_fixed_point(sum(total)) AS v FROM curve_sums GROUP BY ALL
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
grid AS (
    SELECT n.run, m.metric, t.k, n.n
    FROM n_questions AS n
    CROSS JOIN (
        VALUES ('recall'), ('precision'), ('hit'), ('mrr'), ('ndcg'), ('map'), ('rprec'), ('all')
    ) AS m(metric)
    CROSS JOIN range(1, $depth + 1) AS t(k)
),
summed AS (
    SELECT g.run, g.metric, g.k, g.n, coalesce(s.v, 0) AS step, coalesce(p.v, 0) AS point
    FROM grid AS g
    LEFT JOIN sums AS s ON s.kind = 'step' AND s.run = g.run AND s.metric = g.metric AND s.k = g.k
    LEFT JOIN sums AS p ON p.kind = 'point' AND p.run = g.run AND p.metric = g.metric AND p.k = g.k
)
SELECT run, metric, k,
       (sum(step) OVER (PARTITION BY run, metric ORDER BY k) + point)
       / n / CASE WHEN metric = 'precision' THEN k ELSE 1 END AS value
FROM summed
ORDER BY run, metric, k
