-- Each paired question's samples of every score, summarised for the variance decomposition
-- (reportgen/analysis/samples.py).
-- Reads: tables question_metrics and span_chars (one row per sample), table paired_ids.
-- Returns: run, question_id, metric (recall | precision | hit | mrr | ndcg | map | rprec | all |
--   correct | faithfulness | evidence_recall | context_precision | evidence_iou), n (samples
--   with a score), unscored (the question's samples without one, which its mean leaves out),
--   samples (all of the question's), mean, variance (sample variance of the samples, NULL for a
--   single one); questions in both runs only, scores NULL left out.
WITH sampled AS (
    SELECT run, question_id, count(*) AS samples
    FROM question_metrics
    GROUP BY run, question_id
),
long AS (
    SELECT run, question_id, sample, samples,
           unnest(['recall', 'precision', 'hit', 'mrr', 'ndcg', 'map', 'rprec', 'all',
                   'correct', 'faithfulness', 'evidence_recall', 'context_precision',
                   'evidence_iou']) AS metric,
           unnest([recall, precision, hit, mrr, ndcg, map, rprec, "all", correct,
                   faithfulness, evidence_recall, context_precision, evidence_iou]) AS value
    FROM question_metrics
    LEFT JOIN span_chars USING (run, question_id, sample)
    JOIN sampled USING (run, question_id)
    WHERE question_id IN (SELECT question_id FROM paired_ids)
)
SELECT run, question_id, metric, count(*) AS n, any_value(samples) - count(*) AS unscored,
       any_value(samples) AS samples,
       avg(value ORDER BY sample) AS mean,
       var_samp(value ORDER BY sample) AS variance
FROM long
WHERE value IS NOT NULL
GROUP BY run, question_id, metric
ORDER BY run, metric, question_id
