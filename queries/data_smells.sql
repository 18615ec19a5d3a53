-- Questions that look wrong in a golden set or a log, one row per run, kind and question.
-- Reads: view runs. Params: $k INTEGER: the prompt cutoff the metrics are named for.
-- Returns: run, kind, question_id, row_number; kind is one of
--   short_ranking       retrieved_ids (or, without them, context_ids) holds fewer than $k passages
--   repeated_passage    a passage id appears twice in retrieved_ids or context_ids
--   answerable_unlabelled  marked answerable but has no labelled evidence
--   duplicate_question  the same question text under another question_id in the same run
SELECT run, 'short_ranking' AS kind, question_id, row_number
FROM runs
WHERE len(coalesce(retrieved_ids, context_ids)) < $k
UNION ALL
SELECT run, 'repeated_passage', question_id, row_number
FROM runs
WHERE len(list_distinct(retrieved_ids)) < len(retrieved_ids)
   OR len(list_distinct(context_ids)) < len(context_ids)
UNION ALL
SELECT run, 'answerable_unlabelled', question_id, row_number
FROM runs
WHERE answerable AND coalesce(len(list_filter(relevant_ids, lambda x: x IS NOT NULL)), 0) = 0
UNION ALL
SELECT run, 'duplicate_question', question_id, row_number
FROM (
    SELECT run, question_id, row_number,
           count(*) OVER (PARTITION BY run, question) AS same_text
    FROM runs
    WHERE question IS NOT NULL
)
WHERE same_text > 1
ORDER BY run, kind, row_number
