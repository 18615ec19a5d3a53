-- Question ids present in one run only (never dropped silently: the report lists them).
-- Reads: view runs and table paired_ids.
-- Returns: run ('a' = only in A, 'b' = only in B), question_id (once, at its first sample);
--   in file order.
SELECT run, question_id
FROM runs
ANTI JOIN paired_ids USING (question_id)
QUALIFY row_number() OVER (PARTITION BY run, question_id ORDER BY row_number) = 1
ORDER BY run, row_number
