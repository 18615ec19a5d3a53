-- One row per run and question: the mean over the question's samples of every score in
-- question_metrics (a run without a sample column has one sample, its own scores).
-- Reads: table question_metrics. Labels agree across samples (sample_problems.sql), so
--   n_relevant and answerable are the question's; a 0/1 score becomes the share of samples
--   that scored 1. Sums run in sample order: same input, same bits.
-- Returns (table question_means, made by RunDatabase.execute): run, question_id, row_number
--   (the first sample's), slice, samples (rows averaged), k (the smallest prompt of the
--   samples; NULL when no sample's ranking is logged), n_relevant, answerable,
--   evidence_in_context (in the prompt of any sample), context_tokens, passages and every score
--   of question_metrics, averaged (a NULL score, a sample's unlogged ranking, left out);
--   prompt_sizes (each sample's passages, in sample order, its null prompts left out: the
--   prompts whose most common size names the metrics, which the mean passages is not) and
--   unranked_samples (the samples whose ranking is null, left out of the retrieval metrics),
--   both NULL for a question of one sample.
-- A question of one sample is copied as it is (the mean of one score is that score): ordered
-- aggregates over every question cost several times more than the rest of the scoring.
WITH repeated AS (
    -- the questions of more than one sample, grouped rather than counted by a window over every
    -- row (0.6 s of the 1.5 s of CPU this query took at 1M questions)
    SELECT run, question_id, count(*) AS samples
    FROM question_metrics
    GROUP BY run, question_id
    HAVING count(*) > 1
)
SELECT
    run,
    question_id,
    min(row_number) AS row_number,
    any_value(slice ORDER BY row_number) AS slice,
    any_value(samples) AS samples,
    min(k) AS k,
    list(passages ORDER BY sample) FILTER (WHERE passages IS NOT NULL) AS prompt_sizes,
    list(sample ORDER BY sample) FILTER (WHERE k IS NULL) AS unranked_samples,
    any_value(n_relevant) AS n_relevant,
    any_value(answerable) AS answerable,
    bool_or(evidence_in_context) AS evidence_in_context,
    avg(context_tokens ORDER BY sample) AS context_tokens,
    avg(passages ORDER BY sample) AS passages,
    avg(recall ORDER BY sample) AS recall,
    avg(precision ORDER BY sample) AS precision,
    avg(hit ORDER BY sample) AS hit,
    avg(mrr ORDER BY sample) AS mrr,
    avg(ndcg ORDER BY sample) AS ndcg,
    avg(map ORDER BY sample) AS map,
    avg(rprec ORDER BY sample) AS rprec,
    avg("all" ORDER BY sample) AS "all",
    avg(correct ORDER BY sample) AS correct,
    avg(faithfulness ORDER BY sample) AS faithfulness
FROM question_metrics
JOIN repeated USING (run, question_id)
GROUP BY run, question_id
UNION ALL BY NAME
SELECT * EXCLUDE (sample), 1::BIGINT AS samples
FROM question_metrics
ANTI JOIN repeated USING (run, question_id)
