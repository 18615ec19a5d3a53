-- Question ids present in one run only (never dropped silently: the report lists them).
-- Reads: view runs.
-- Returns: run ('a' = only in A, 'b' = only in B), question_id (once, at its first sample);
--   in file order.
SELECT x.run, x.question_id
FROM runs AS x
WHERE NOT EXISTS (
    SELECT 1 FROM runs AS y WHERE y.question_id = x.question_id AND y.run <> x.run
)
QUALIFY row_number() OVER (PARTITION BY x.run, x.question_id ORDER BY x.row_number) = 1
ORDER BY x.run, x.row_number
