-- Unjudged@k of every question: the share of its top k passages that no label judged. A label of
-- any grade is a judgement (grade 0: judged, not relevant), so this is 1 - Judged@k of
-- ir_measures: the top k holds min(k, ranked) passages, and questions without labels are left out.
-- Reads: table facts; when the audit runs it holds each question's first sample only
--   (first_sample.sql), which the label checks read.
-- Params: $k INTEGER: the cutoff over retrieved_ids; NULL: the top k is each question's context_ids.
-- Returns: run, question_id, row_number (the first sample's), unjudged (mean over the question's
--   rows in facts; NULL when it has no label or an empty top k), not_relevant (its labels of
--   grade 0, over those rows).
SELECT
    run,
    question_id,
    min(row_number) AS row_number,
    avg(CASE WHEN len(relevant_ids) > 0 AND n_top > 0 THEN 1 - n_judged_top / n_top END)
        AS unjudged,
    sum(coalesce(len(list_filter(relevant_grades, lambda g: g = 0)), 0)) AS not_relevant
FROM (
    SELECT *, CASE WHEN $k IS NULL THEN n_context ELSE least($k, depth) END AS n_top
    FROM facts
)
GROUP BY run, question_id
