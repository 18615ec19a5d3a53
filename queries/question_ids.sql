-- Every question id of run A once, in file order (pairing across the runs of a study).
-- Reads: view runs.
-- Returns: question_id.
SELECT question_id
FROM runs
WHERE run = 'a' AND question_id IS NOT NULL
GROUP BY question_id
ORDER BY min(row_number)
